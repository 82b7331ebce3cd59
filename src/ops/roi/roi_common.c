/* roi: arguments, corners and names shared by extraction and paste-back.
 *
 * A patch row holds k int64 coordinates for the first k axes of an array of
 * ndim axes; the other ndim - k axes are taken whole. With centres, the
 * corner is centre - size // 2 (the convention of the W3 workload, so that an
 * odd size puts the centre voxel in the middle and an even one puts it just
 * right of the middle). All corner arithmetic is checked for int64 overflow
 * once, in voxa__roi_validate_rows, before any thread starts: the copy loops
 * then recompute corners without checks.
 *
 * Float coordinates (CLI tables) are turned into int64 here too: corners
 * must be integral, centres are rounded half to even with nearbyint() in the
 * default rounding mode, which is what np.rint does, so the CLI and the
 * Python layer agree bit for bit.
 *
 * Cost: O(n * k) for the checks; nothing is allocated. */
#include "roi_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

static const char *const mode_names[VOXA_ROI_NMODES] = {
    "error", "clip", "constant", "nearest", "reflect", "crop"};
static const char *const op_names[VOXA_PASTE_NOPS] = {"overwrite", "add", "max", "mean"};

voxa_status voxa_roi_mode_from_name(const char *name, voxa_roi_mode *out) {
    VOXA_FAIL_IF(!name || !out, VOXA_EINVAL, "mode: NULL argument");
    for (int m = 0; m < VOXA_ROI_NMODES; m++)
        if (!strcmp(name, mode_names[m])) {
            *out = (voxa_roi_mode)m;
            return VOXA_OK;
        }
    return voxa__error(VOXA_EINVAL,
                       "mode: unknown mode '%s' (expected error, clip, constant, nearest, "
                       "reflect or crop)",
                       name);
}

voxa_status voxa_paste_op_from_name(const char *name, voxa_paste_op *out) {
    VOXA_FAIL_IF(!name || !out, VOXA_EINVAL, "op: NULL argument");
    for (int m = 0; m < VOXA_PASTE_NOPS; m++)
        if (!strcmp(name, op_names[m])) {
            *out = (voxa_paste_op)m;
            return VOXA_OK;
        }
    return voxa__error(VOXA_EINVAL,
                       "op: unknown op '%s' (expected overwrite, add, max or mean)", name);
}

voxa_status voxa_roi_coords_from_doubles(const double *in, int64_t n, int k, int centered,
                                         int64_t *out) {
    VOXA_FAIL_IF(n < 0, VOXA_EINVAL, "coords: negative row count %lld", (long long)n);
    VOXA_FAIL_IF(k < 1 || k > VOXA_MAXDIM, VOXA_EINVAL, "coords: %d columns, expected 1..%d",
                 k, VOXA_MAXDIM);
    VOXA_FAIL_IF(n > 0 && (!in || !out), VOXA_EINVAL, "coords: NULL pointer");
    for (int64_t i = 0; i < n; i++)
        for (int d = 0; d < k; d++) {
            double v = in[i * k + d];
            VOXA_FAIL_IF(!isfinite(v), VOXA_EINVAL, "coords: row %lld, column %d is %g",
                         (long long)i, d, v);
            double r = centered ? nearbyint(v) : v;
            VOXA_FAIL_IF(r != floor(r), VOXA_EINVAL,
                         "coords: row %lld, column %d is %.17g, not an integer (corners "
                         "must be integers; centres are rounded half to even)",
                         (long long)i, d, v);
            /* [-2^63, 2^63) is exactly the doubles that fit int64. */
            VOXA_FAIL_IF(r < -9223372036854775808.0 || r >= 9223372036854775808.0,
                         VOXA_EINVAL, "coords: row %lld, column %d = %g is outside int64",
                         (long long)i, d, v);
            out[i * k + d] = (int64_t)r;
        }
    return VOXA_OK;
}

voxa_status voxa__roi_check(const voxa_array *a, const char *aname, const voxa_roi_params *p,
                            const voxa_array *pat, const char *patname, int paste,
                            int64_t *ext) {
    const char *what = paste ? "paste" : "extract";
    VOXA_FAIL_IF(!p, VOXA_EINVAL, "%s: params is NULL", what);
    VOXA_CHECK(voxa_array_check(a, aname));
    VOXA_FAIL_IF(a->ndim < 1, VOXA_EINVAL, "%s: %s has 0 dimensions", what, aname);
    VOXA_FAIL_IF(p->k < 1 || p->k > a->ndim, VOXA_EINVAL,
                 "%s: coords have %d columns but %s has %d dimensions (need 1..%d columns)",
                 what, p->k, aname, a->ndim, a->ndim);
    VOXA_FAIL_IF(p->n < 0, VOXA_EINVAL, "%s: negative patch count %lld", what,
                 (long long)p->n);
    VOXA_FAIL_IF(p->n > 0 && !p->coords, VOXA_EINVAL, "%s: coords is NULL", what);
    VOXA_FAIL_IF(!p->size, VOXA_EINVAL, "%s: size is NULL", what);
    VOXA_FAIL_IF((unsigned)p->mode >= VOXA_ROI_NMODES, VOXA_EINVAL, "%s: invalid mode %d",
                 what, (int)p->mode);
    if (paste)
        VOXA_FAIL_IF(p->mode != VOXA_ROI_ERROR && p->mode != VOXA_ROI_CLIP &&
                         p->mode != VOXA_ROI_CROP,
                     VOXA_EINVAL, "paste: mode '%s' is not a paste mode (error, clip, crop)",
                     mode_names[p->mode]);
    else
        VOXA_FAIL_IF(p->mode == VOXA_ROI_CROP, VOXA_EINVAL,
                     "extract: mode 'crop' is a paste mode (use error, clip, constant, "
                     "nearest or reflect)");
    for (int d = 0; d < a->ndim; d++) {
        if (d < p->k) {
            VOXA_FAIL_IF(p->size[d] < 0, VOXA_EINVAL, "%s: size[%d] = %lld is negative",
                         what, d, (long long)p->size[d]);
            ext[d] = p->size[d];
        } else {
            ext[d] = a->shape[d];
        }
        if ((p->mode == VOXA_ROI_NEAREST || p->mode == VOXA_ROI_REFLECT) && p->n > 0 &&
            a->shape[d] == 0 && ext[d] > 0)
            return voxa__error(VOXA_EINVAL,
                               "%s: mode '%s' cannot pad axis %d of length 0 (use constant)",
                               what, mode_names[p->mode], d);
    }
    /* The patch array: (n, ext...) in the array's dtype. */
    char want[200], got[200];
    int64_t bytes = (int64_t)voxa_dtype_size(a->dtype);
    for (int d = 0; d < a->ndim; d++) {
        VOXA_FAIL_IF(ext[d] && bytes > INT64_MAX / ext[d], VOXA_EINVAL,
                     "%s: patch shape overflows 64 bits", what);
        bytes *= ext[d];
    }
    VOXA_FAIL_IF(p->n && bytes > INT64_MAX / p->n, VOXA_EINVAL,
                 "%s: patch array size overflows 64 bits", what);
    if (!pat) return VOXA_OK;
    VOXA_CHECK(voxa_array_check(pat, patname));
    VOXA_FAIL_IF(pat->dtype != a->dtype, VOXA_EINVAL, "%s: %s has dtype %s, expected %s",
                 what, patname, voxa_dtype_name(pat->dtype), voxa_dtype_name(a->dtype));
    voxa_array w;
    memset(&w, 0, sizeof w);
    w.dtype = a->dtype;
    w.ndim = a->ndim + 1;
    w.shape[0] = p->n;
    for (int d = 0; d < a->ndim; d++) w.shape[d + 1] = ext[d];
    if (!voxa__same_shape(&w, pat))
        return voxa__error(VOXA_EINVAL, "%s: %s has shape %s, expected %s", what, patname,
                           voxa__shape_str(pat, got, sizeof got),
                           voxa__shape_str(&w, want, sizeof want));
    return VOXA_OK;
}

voxa_status voxa__roi_validate_rows(const voxa_array *a, const voxa_roi_params *p) {
    int k = p->k;
    for (int64_t i = 0; i < p->n; i++) {
        for (int d = 0; d < k; d++) {
            int64_t c = p->coords[i * k + d], s = p->size[d], n = a->shape[d], lo, hi;
            if (__builtin_sub_overflow(c, p->centered ? s / 2 : 0, &lo) ||
                __builtin_add_overflow(lo, s, &hi))
                return voxa__error(VOXA_EOVERFLOW,
                                   "coords: row %lld, column %d = %lld overflows int64 with "
                                   "size %lld",
                                   (long long)i, d, (long long)c, (long long)s);
            if (p->mode == VOXA_ROI_ERROR && (lo < 0 || hi > n))
                return voxa__error(
                    VOXA_EINVAL,
                    "coords: row %lld reaches outside the array on axis %d: %s %lld gives "
                    "[%lld, %lld) but the axis has length %lld (mode 'error'; choose "
                    "another mode to clip or pad)",
                    (long long)i, d, p->centered ? "centre" : "corner", (long long)c,
                    (long long)lo, (long long)hi, (long long)n);
            if (p->mode == VOXA_ROI_CLIP && s > n)
                return voxa__error(VOXA_EINVAL,
                                   "size[%d] = %lld exceeds the array's axis %d of length "
                                   "%lld: mode 'clip' cannot shift the patch of row %lld "
                                   "inside",
                                   d, (long long)s, d, (long long)n, (long long)i);
        }
    }
    return VOXA_OK;
}

int voxa__roi_corner(const voxa_array *a, const voxa_roi_params *p, int64_t i,
                     int64_t *corner) {
    int k = p->k, inside = 1;
    const int64_t *row = p->coords + i * k;
    for (int d = 0; d < k; d++) {
        int64_t s = p->size[d], n = a->shape[d];
        int64_t c = row[d] - (p->centered ? s / 2 : 0);
        if (p->mode == VOXA_ROI_CLIP) {
            if (c > n - s) c = n - s;
            if (c < 0) c = 0;
        }
        if (c < 0 || c > n - s) inside = 0;
        corner[d] = c;
    }
    for (int d = k; d < a->ndim; d++) corner[d] = 0;
    return inside;
}

voxa_status voxa__roi_fill_value(double v, voxa_dtype t, unsigned char *elem) {
    memset(elem, 0, 8);
    if (t == VOXA_F64) {
        memcpy(elem, &v, 8);
        return VOXA_OK;
    }
    if (t == VOXA_F32) {
        VOXA_FAIL_IF(isfinite(v) && fabs(v) > FLT_MAX, VOXA_EINVAL,
                     "cval: %g does not fit float32", v);
        float f = (float)v;
        memcpy(elem, &f, 4);
        return VOXA_OK;
    }
    double lo, hi; /* the exact range as doubles; hi is exclusive */
    switch (t) {
    case VOXA_BOOL: lo = 0; hi = 2; break;
    case VOXA_U8: lo = 0; hi = 256; break;
    case VOXA_I8: lo = -128; hi = 128; break;
    case VOXA_U16: lo = 0; hi = 65536; break;
    case VOXA_I16: lo = -32768; hi = 32768; break;
    case VOXA_U32: lo = 0; hi = 4294967296.0; break;
    case VOXA_I32: lo = -2147483648.0; hi = 2147483648.0; break;
    case VOXA_U64: lo = 0; hi = 18446744073709551616.0; break;
    default: lo = -9223372036854775808.0; hi = 9223372036854775808.0; break;
    }
    VOXA_FAIL_IF(!isfinite(v) || v != floor(v) || v < lo || v >= hi, VOXA_EINVAL,
                 "cval: %.17g cannot be stored exactly as %s", v, voxa_dtype_name(t));
    switch (t) {
    case VOXA_BOOL: case VOXA_U8: { uint8_t x = (uint8_t)v; memcpy(elem, &x, 1); break; }
    case VOXA_I8: { int8_t x = (int8_t)v; memcpy(elem, &x, 1); break; }
    case VOXA_U16: { uint16_t x = (uint16_t)v; memcpy(elem, &x, 2); break; }
    case VOXA_I16: { int16_t x = (int16_t)v; memcpy(elem, &x, 2); break; }
    case VOXA_U32: { uint32_t x = (uint32_t)v; memcpy(elem, &x, 4); break; }
    case VOXA_I32: { int32_t x = (int32_t)v; memcpy(elem, &x, 4); break; }
    case VOXA_U64: { uint64_t x = (uint64_t)v; memcpy(elem, &x, 8); break; }
    default: { int64_t x = (int64_t)v; memcpy(elem, &x, 8); break; }
    }
    return VOXA_OK;
}
