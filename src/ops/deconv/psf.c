/* Point spread functions: Gaussian model, checks, normalisation, reading;
 * and the typed loader that turns any real array into float32 for the
 * deconvolution.
 *
 * Gaussian PSF. h(i) = prod_d exp(-((i_d - c_d) / sigma_d)^2 / 2) with the
 * centre c_d = shape_d // 2 (voxa's kernel-centre convention, so an even
 * extent puts the peak on a voxel and deconvolution does not shift). The
 * function is separable: one 1-D table per axis (double), products written
 * in one pass, then divided by the total (also double). sigma_d = 0 makes
 * the axis a delta. Cost O(voxels); no allocation beyond the 1-D tables.
 *
 * Loading. Each dtype has its own row loop (instantiated once by a macro,
 * to float32 and to float64), the dispatch happens once per call. Float
 * inputs are checked for NaN and infinity and, loaded as float32, for
 * float64 values beyond the float32 range. */
#include "deconv_internal.h"
#include "voxa/io.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Walk the rows (last axis) of `a` in C order: `body` sees `src` (the row's
 * first byte), `st` (its byte stride), `len`, and `r` (row number). */
#define FOR_ROWS(a, body)                                                      \
    do {                                                                       \
        int last_ = (a)->ndim - 1;                                             \
        int64_t len = (a)->ndim ? (a)->shape[last_] : 1;                       \
        int64_t st = (a)->ndim ? (a)->strides[last_] : 0;                      \
        int64_t total_ = voxa_array_size(a);                                   \
        int64_t nrows_ = len ? total_ / len : 0;                               \
        int64_t idx_[VOXA_MAXDIM] = {0};                                       \
        for (int64_t r = 0; r < nrows_; r++) {                                 \
            const char *src = (const char *)(a)->data + voxa__offset((a), idx_); \
            body;                                                              \
            for (int d_ = last_ - 1; d_ >= 0; d_--) {                          \
                if (++idx_[d_] < (a)->shape[d_]) break;                        \
                idx_[d_] = 0;                                                  \
            }                                                                  \
        }                                                                      \
    } while (0)

/* load_NAME: T -> float, flagging NaN, infinity and values beyond float32
 * range; load64_NAME: T -> double, flagging NaN and infinity. */
#define DEF_LOAD_TO(T, NAME, CHECK, D, LIMIT)                                  \
    static int64_t NAME(const voxa_array *a, D *dst) {                         \
        int64_t bad = -1;                                                      \
        FOR_ROWS(a, {                                                          \
            D *o = dst + r * len;                                              \
            for (int64_t i = 0; i < len; i++) {                                \
                T v = *(const T *)(src + i * st);                              \
                if (CHECK && bad < 0 && !(fabs((double)v) <= LIMIT))           \
                    bad = r * len + i;                                         \
                o[i] = (D)v;                                                   \
            }                                                                  \
        });                                                                    \
        return bad;                                                            \
    }
#define DEF_LOAD(T, NAME, CHECK)                                               \
    DEF_LOAD_TO(T, load_##NAME, CHECK, float, FLT_MAX)                         \
    DEF_LOAD_TO(T, load64_##NAME, CHECK, double, DBL_MAX)
DEF_LOAD(uint8_t, u8, 0)
DEF_LOAD(int8_t, i8, 0)
DEF_LOAD(uint16_t, u16, 0)
DEF_LOAD(int16_t, i16, 0)
DEF_LOAD(uint32_t, u32, 0)
DEF_LOAD(int32_t, i32, 0)
DEF_LOAD(uint64_t, u64, 0)
DEF_LOAD(int64_t, i64, 0)
DEF_LOAD(float, f32, 1)
DEF_LOAD(double, f64, 1)

#define LOAD_TABLE(P)                                                          \
    {                                                                          \
        [VOXA_BOOL] = P##u8, [VOXA_U8] = P##u8,   [VOXA_I8] = P##i8,           \
        [VOXA_U16] = P##u16, [VOXA_I16] = P##i16, [VOXA_U32] = P##u32,         \
        [VOXA_I32] = P##i32, [VOXA_U64] = P##u64, [VOXA_I64] = P##i64,         \
        [VOXA_F32] = P##f32, [VOXA_F64] = P##f64,                              \
    }
typedef int64_t (*load_fn)(const voxa_array *, float *);
typedef int64_t (*load64_fn)(const voxa_array *, double *);
static const load_fn load_table[VOXA_NDTYPES] = LOAD_TABLE(load_);
static const load64_fn load64_table[VOXA_NDTYPES] = LOAD_TABLE(load64_);

voxa_status voxa__deconv_load_f32(const voxa_array *in, float *dst, const char *name) {
    VOXA_CHECK(voxa_array_check(in, name));
    int64_t bad = load_table[in->dtype](in, dst);
    if (bad >= 0)
        return voxa__error(VOXA_EINVAL,
                           "%s: value at flat index %lld is NaN, infinite or beyond "
                           "float32 range",
                           name, (long long)bad);
    return VOXA_OK;
}

voxa_status voxa__deconv_load_f64(const voxa_array *in, double *dst, const char *name) {
    VOXA_CHECK(voxa_array_check(in, name));
    int64_t bad = load64_table[in->dtype](in, dst);
    if (bad >= 0)
        return voxa__error(VOXA_EINVAL, "%s: value at flat index %lld is NaN or infinite",
                           name, (long long)bad);
    return VOXA_OK;
}

/* ---- PSF helpers ----------------------------------------------------------- */

/* Value of element `i` (C order) of a small array as double. */
static double value_at(const voxa_array *a, int64_t i) {
    int64_t idx[VOXA_MAXDIM];
    for (int d = a->ndim - 1; d >= 0; d--) {
        idx[d] = i % a->shape[d];
        i /= a->shape[d];
    }
    return voxa_array_get(a, idx);
}

voxa_status voxa_psf_check(const voxa_array *psf, double *sum) {
    VOXA_CHECK(voxa_array_check(psf, "psf"));
    int64_t n = voxa_array_size(psf);
    VOXA_FAIL_IF(n == 0, VOXA_EINVAL, "psf: empty (a dimension is 0)");
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = value_at(psf, i);
        VOXA_FAIL_IF(!isfinite(v) || fabs(v) > FLT_MAX, VOXA_EINVAL,
                     "psf: value %g at flat index %lld is not finite (or beyond float32)",
                     v, (long long)i);
        VOXA_FAIL_IF(v < 0, VOXA_EINVAL, "psf: value %g at flat index %lld is negative", v,
                     (long long)i);
        s += v;
    }
    VOXA_FAIL_IF(!(s > 0), VOXA_EINVAL, "psf: sum is 0 (a PSF needs a positive sum)");
    VOXA_FAIL_IF(!isfinite(s), VOXA_EINVAL, "psf: sum overflows");
    if (sum) *sum = s;
    return VOXA_OK;
}

/* Scale every element of a float array by `k` (in place, any strides). */
static void scale_float(voxa_array *a, double k) {
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0, j; i < n; i++) {
        int64_t off = 0;
        j = i;
        for (int d = a->ndim - 1; d >= 0; d--) {
            off += (j % a->shape[d]) * a->strides[d];
            j /= a->shape[d];
        }
        char *p = (char *)a->data + off;
        if (a->dtype == VOXA_F32) *(float *)p = (float)(*(float *)p * k);
        else *(double *)p *= k;
    }
}

voxa_status voxa_psf_normalize(voxa_array *psf) {
    VOXA_CHECK(voxa_array_check(psf, "psf"));
    VOXA_FAIL_IF(!voxa_dtype_is_float(psf->dtype), VOXA_EINVAL,
                 "psf: dtype %s cannot be normalised in place (need float32/float64)",
                 voxa_dtype_name(psf->dtype));
    double s;
    VOXA_CHECK(voxa_psf_check(psf, &s));
    scale_float(psf, 1.0 / s);
    return VOXA_OK;
}

voxa_status voxa_psf_gaussian(voxa_array *out, const double *sigma) {
    VOXA_CHECK(voxa_array_check(out, "psf"));
    VOXA_FAIL_IF(!voxa_dtype_is_float(out->dtype), VOXA_EINVAL,
                 "psf: dtype %s (a Gaussian PSF needs float32 or float64)",
                 voxa_dtype_name(out->dtype));
    VOXA_FAIL_IF(out->ndim < 1, VOXA_EINVAL, "psf: ndim 0 (need 1 or more axes)");
    VOXA_FAIL_IF(!sigma, VOXA_EINVAL, "sigma: NULL");
    int64_t n = voxa_array_size(out);
    VOXA_FAIL_IF(n == 0, VOXA_EINVAL, "psf: shape has a zero extent");
    int64_t tot = 0;
    for (int d = 0; d < out->ndim; d++) {
        VOXA_FAIL_IF(!(sigma[d] >= 0) || !isfinite(sigma[d]), VOXA_EINVAL,
                     "sigma[%d] = %g (must be finite and >= 0)", d, sigma[d]);
        tot += out->shape[d];
    }
    double *tab = voxa__malloc((size_t)tot, sizeof(double));
    if (!tab) return voxa__error(VOXA_ENOMEM, "psf: cannot allocate tables");
    double *t[VOXA_MAXDIM];
    for (int d = 0, o = 0; d < out->ndim; o += (int)out->shape[d], d++) {
        t[d] = tab + o;
        int64_t c = out->shape[d] / 2;
        for (int64_t i = 0; i < out->shape[d]; i++) {
            double u = (double)(i - c);
            t[d][i] = sigma[d] > 0 ? exp(-0.5 * (u / sigma[d]) * (u / sigma[d])) : (i == c);
        }
    }
    double s = 0;
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i++) {
        double v = 1;
        for (int d = 0; d < out->ndim; d++) v *= t[d][idx[d]];
        char *p = (char *)out->data + voxa__offset(out, idx);
        if (out->dtype == VOXA_F32) *(float *)p = (float)v;
        else *(double *)p = v;
        s += v;
        for (int d = out->ndim - 1; d >= 0; d--) {
            if (++idx[d] < out->shape[d]) break;
            idx[d] = 0;
        }
    }
    voxa__free(tab);
    /* The centre voxel is 1, so s >= 1: the division is always defined. */
    scale_float(out, 1.0 / s);
    return VOXA_OK;
}

voxa_status voxa__psf_prepare_as(const voxa_array *raw, int normalize, voxa_dtype dt,
                                 voxa_array *out) {
    VOXA_FAIL_IF(!out || !raw, VOXA_EINVAL, "psf: NULL argument");
    memset(out, 0, sizeof *out);
    voxa_status st = voxa_psf_check(raw, NULL);
    if (st == VOXA_OK) st = voxa_array_new(out, dt, raw->ndim, raw->shape);
    if (st == VOXA_OK)
        st = dt == VOXA_F64 ? voxa__deconv_load_f64(raw, out->data, "psf")
                            : voxa__deconv_load_f32(raw, out->data, "psf");
    if (st == VOXA_OK && normalize) st = voxa_psf_normalize(out);
    if (st != VOXA_OK) voxa_array_free(out);
    return st;
}

voxa_status voxa_psf_prepare(const voxa_array *raw, int normalize, voxa_array *out) {
    return voxa__psf_prepare_as(raw, normalize, VOXA_F32, out);
}

voxa_status voxa_psf_read(const char *path, int normalize, voxa_array *out) {
    voxa_array raw = {0};
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "psf: NULL output");
    memset(out, 0, sizeof *out);
    VOXA_CHECK(voxa_read(path, &raw));
    voxa_status st = voxa_psf_prepare(&raw, normalize, out);
    voxa_array_free(&raw);
    return st;
}
