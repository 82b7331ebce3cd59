/* voxa_edt, voxa_edt_indices, voxa_edt_cdt: the public distance transforms.
 *
 * - Euclidean: src/core/sqdt.c (separable lower envelope of parabolas, exact).
 * - Euclidean with indices: scipy's feature transform (edt_feature.c, the
 *   same nearest voxel as scipy among equally near ones); distances are then
 *   recomputed from the indices as scipy does: sqrt(sum_d ((i_d - v_d) s_d)^2).
 * - Taxicab: separable too (the L1 norm is a sum): per axis one forward and
 *   one backward scan f(q) = min(f(q), f(q-1) + 1), vectorised across the
 *   fastest axis. O(ndim N).
 * - Chessboard: two raster scans with the half 3^ndim neighbourhood
 *   (Rosenfeld & Pfaltz 1966: exact for the L-infinity metric). Sequential.
 * scipy conventions kept: background voxels are 0; no background at all
 * gives -1 everywhere for cdt, and for edt distances measured from index
 * (-1, 0, ..., 0) (scipy's feature transform starts from that value). */
#include "edt_internal.h"
#include "sqdt.h"

#include <math.h>
#include <string.h>

/* any_sign: zero or negative spacings allowed (the feature transform follows
 * scipy's arithmetic for them too; the lower envelope needs spacing > 0). */
static voxa_status check_common(const voxa_array *in, const voxa_array *out, const double *sp,
                                const char *who, int any_sign) {
    VOXA_CHECK(voxa_array_check(in, "input"));
    VOXA_FAIL_IF(in->ndim < 1, VOXA_EINVAL, "%s: input must have at least 1 dimension", who);
    if (out) {
        VOXA_CHECK(voxa_array_check(out, "output"));
        if (!voxa__same_shape(in, out)) {
            char a[128], b[128];
            return voxa__error(VOXA_EINVAL, "%s: output shape %s differs from input shape %s", who,
                               voxa__shape_str(out, a, sizeof a), voxa__shape_str(in, b, sizeof b));
        }
    }
    for (int d = 0; sp && d < in->ndim; d++)
        VOXA_FAIL_IF(!isfinite(sp[d]) || (!any_sign && !(sp[d] > 0)), VOXA_EINVAL,
                     "%s: spacing[%d] = %g must be finite%s", who, d, sp[d],
                     any_sign ? "" : " and > 0");
    return VOXA_OK;
}

/* Is there any background voxel? memchr stops at the first one (most masks:
 * within the first bytes) instead of reading the whole input. */
static int has_zero(const uint8_t *b, int64_t n) {
    return memchr(b, 0, (size_t)n) != NULL;
}

double voxa__edt_nobg_d2(int nd, const int64_t *idx, const double *sp) {
    double d2 = 0;
    for (int d = 0; d < nd; d++) {
        double e = (double)(d == 0 ? idx[d] + 1 : idx[d]) * (sp ? sp[d] : 1.0);
        d2 += e * e;
    }
    return d2;
}

void voxa__edt_put(char *p, voxa_dtype t, double d2, int squared) {
    double v = squared ? d2 : sqrt(d2);
    switch (t) {
    case VOXA_F64: memcpy(p, &v, 8); break;
    case VOXA_F32: { float f = (float)v; memcpy(p, &f, 4); } break;
    case VOXA_U32: { uint32_t u = d2 >= 4294967295.0 ? UINT32_MAX : (uint32_t)d2; memcpy(p, &u, 4); } break;
    default: break;
    }
}

VOXA_API voxa_status voxa_edt(const voxa_array *in, voxa_array *out, const voxa_edt_params *p) {
    voxa_edt_params def = {0};
    if (!p) p = &def;
    VOXA_CHECK(check_common(in, out, p->spacing, "edt", 0));
    VOXA_FAIL_IF(out->dtype != VOXA_F64 && out->dtype != VOXA_F32 && out->dtype != VOXA_U32,
                 VOXA_EINVAL, "edt: output dtype %s: expected float64, float32 or uint32",
                 voxa_dtype_name(out->dtype));
    VOXA_FAIL_IF(out->dtype == VOXA_U32 && (!p->squared || p->spacing), VOXA_EINVAL,
                 "edt: uint32 output holds squared distances with unit spacing only");
    voxa_status st = VOXA_OK;
    const uint8_t *src;
    uint8_t *owned = NULL;
    void *tmp = NULL;
    int64_t n = voxa_array_size(in);
    if (n == 0) return VOXA_OK;
    VOXA_CHECK(voxa__binary_view(in, &src, &owned));
    if (!has_zero(src, n)) {
        int64_t idx[VOXA_MAXDIM] = {0};
        for (int64_t i = 0; i < n; i++) {
            voxa__edt_put((char *)out->data + voxa__offset(out, idx), out->dtype,
                          voxa__edt_nobg_d2(in->ndim, idx, p->spacing), p->squared);
            for (int d = in->ndim - 1; d >= 0; d--) {
                if (++idx[d] < in->shape[d]) break;
                idx[d] = 0;
            }
        }
        goto done;
    }
    voxa__sqdt q;
    memset(&q, 0, sizeof q);
    q.ndim = in->ndim;
    memcpy(q.shape, in->shape, sizeof q.shape);
    q.src = src;
    q.target = 0;
    q.spacing = p->spacing;
    q.progress = &p->progress;
    int direct = voxa_array_is_c_contiguous(out);
    /* float32 squared with unit spacing: the exact uint32 squares in the
     * output's own 4 bytes, converted in place ((float) of an integer below
     * 2^32 rounds once, as (float) of the same double does); with spacing,
     * (float) of the double square, written by the last pass itself */
    double maxd2 = 0;
    for (int d = 0; d < in->ndim; d++) maxd2 += ((double)in->shape[d] + 1) * ((double)in->shape[d] + 1);
    int f32sq_int = out->dtype == VOXA_F32 && p->squared && !p->spacing && maxd2 < 4294967295.0;
    if (out->dtype == VOXA_F64) q.mode = p->squared ? VOXA__SQDT_F64_SQ : VOXA__SQDT_F64;
    else if (f32sq_int) q.mode = VOXA__SQDT_U32_SQ;
    else if (out->dtype == VOXA_F32) q.mode = p->squared ? VOXA__SQDT_F32_SQ : VOXA__SQDT_F32;
    else q.mode = VOXA__SQDT_U32_SQ;
    if (!direct) {
        tmp = voxa__malloc((size_t)n, voxa_dtype_size(out->dtype));
        VOXA_GOTO_IF(!tmp, VOXA_ENOMEM, "edt: cannot allocate %lld voxels", (long long)n);
        q.out = tmp;
    } else {
        q.out = out->data;
    }
    if ((st = voxa__sqdt_run(&q))) goto done;
    if (f32sq_int) {
        char *b = q.out;
        for (int64_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, b + 4 * i, 4);
            float f = u == UINT32_MAX ? INFINITY : (float)u;
            memcpy(b + 4 * i, &f, 4);
        }
    }
    if (!direct) voxa__copy_into(tmp, out);
done:
    voxa__free(owned);
    voxa__free(tmp);
    return st;
}

VOXA_API voxa_status voxa_edt_indices(const voxa_array *in, voxa_array *out, voxa_array *indices,
                                      const voxa_edt_params *p) {
    voxa_edt_params def = {0};
    if (!p) p = &def;
    VOXA_CHECK(check_common(in, out, p->spacing, "edt", 1));
    VOXA_FAIL_IF(!indices, VOXA_EINVAL, "edt: indices must not be NULL");
    VOXA_CHECK(voxa_array_check(indices, "indices"));
    int nd = in->ndim;
    VOXA_FAIL_IF(indices->dtype != VOXA_I32 && indices->dtype != VOXA_I64, VOXA_EINVAL,
                 "edt: indices dtype %s: expected int32 or int64", voxa_dtype_name(indices->dtype));
    int okshape = indices->ndim == nd + 1 && indices->shape[0] == nd;
    for (int d = 0; okshape && d < nd; d++) okshape = indices->shape[d + 1] == in->shape[d];
    VOXA_FAIL_IF(!okshape, VOXA_EINVAL, "edt: indices must have shape (ndim, *input.shape)");
    VOXA_FAIL_IF(out && out->dtype != VOXA_F64 && out->dtype != VOXA_F32 &&
                     !(out->dtype == VOXA_U32 && p->squared && !p->spacing),
                 VOXA_EINVAL, "edt: output dtype %s: expected float64, float32 (or uint32 squared)",
                 voxa_dtype_name(out->dtype));
    voxa_status st = VOXA_OK;
    int64_t n = voxa_array_size(in);
    if (n == 0) return VOXA_OK;
    const uint8_t *src;
    uint8_t *owned = NULL;
    int32_t *feat = NULL;
    VOXA_CHECK(voxa__binary_view(in, &src, &owned));
    int nobg = !has_zero(src, n);
    /* int32 C-contiguous indices (scipy's) are filled in place */
    int direct = indices->dtype == VOXA_I32 && voxa_array_is_c_contiguous(indices);
    if (!nobg) {
        feat = direct ? indices->data : voxa__malloc((size_t)n * (size_t)nd, 4);
        VOXA_GOTO_IF(!feat, VOXA_ENOMEM, "edt: cannot allocate %lld voxels", (long long)n);
        if ((st = voxa__edt_feature(src, nd, in->shape, p->spacing, feat))) goto done;
    }
    int64_t idx[VOXA_MAXDIM] = {0}, fidx[VOXA_MAXDIM];
    for (int64_t i = 0; i < n; i++) {
        for (int d = 0; d < nd; d++) fidx[d] = nobg ? -(d == 0) : feat[d * n + i];
        double dd = 0;
        int64_t ioff = 0;
        for (int d = 0; d < nd; d++) {
            double e = (double)(fidx[d] - idx[d]) * (p->spacing ? p->spacing[d] : 1.0);
            dd += e * e;
            ioff += idx[d] * indices->strides[d + 1];
        }
        for (int d = 0; d < nd && !(direct && feat); d++) {
            char *q = (char *)indices->data + ioff + d * indices->strides[0];
            if (indices->dtype == VOXA_I32) {
                int32_t v = (int32_t)fidx[d];
                memcpy(q, &v, 4);
            } else {
                memcpy(q, &fidx[d], 8);
            }
        }
        if (out) voxa__edt_put((char *)out->data + voxa__offset(out, idx), out->dtype, dd,
                              p->squared);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < in->shape[d]) break;
            idx[d] = 0;
        }
    }
done:
    voxa__free(owned);
    if (!direct) voxa__free(feat);
    return st;
}

/* ---- city block and chessboard -------------------------------------------- */

#define CINF INT32_MAX

typedef struct l1_ctx {
    int32_t *f;
    const uint8_t *src;
    int64_t n, inner, nchunk;
} l1_ctx;

static voxa_status l1_rows(int64_t lo, int64_t hi, int tid, void *vc) {
    l1_ctx *c = vc;
    int64_t n = c->n;
    for (int64_t r = lo; r < hi; r++) {
        const uint8_t *s = c->src + r * n;
        int32_t *f = c->f + r * n;
        int64_t last = -(int64_t)CINF;
        for (int64_t x = 0; x < n; x++) {
            if (!s[x]) last = x;
            int64_t d = x - last;
            f[x] = d >= CINF ? CINF : (int32_t)d;
        }
        int64_t next = (int64_t)CINF * 2;
        for (int64_t x = n - 1; x >= 0; x--) {
            if (!s[x]) next = x;
            if (next - x < f[x]) f[x] = (int32_t)(next - x);
        }
    }
    return VOXA_OK;
}

#define L1CHUNK 256
static voxa_status l1_lines(int64_t lo, int64_t hi, int tid, void *vc) {
    l1_ctx *c = vc;
    int64_t n = c->n, inner = c->inner;
    for (int64_t it = lo; it < hi; it++) {
        int64_t o = it / c->nchunk, i0 = (it % c->nchunk) * L1CHUNK;
        int64_t w = inner - i0 < L1CHUNK ? inner - i0 : L1CHUNK;
        int32_t *b = c->f + o * n * inner + i0;
        for (int64_t q = 1; q < n; q++) {
            int32_t *cur = b + q * inner;
            const int32_t *prev = cur - inner;
            for (int64_t j = 0; j < w; j++) {
                int32_t t = prev[j] == CINF ? CINF : prev[j] + 1;
                cur[j] = t < cur[j] ? t : cur[j];
            }
        }
        for (int64_t q = n - 2; q >= 0; q--) {
            int32_t *cur = b + q * inner;
            const int32_t *prev = cur + inner;
            for (int64_t j = 0; j < w; j++) {
                int32_t t = prev[j] == CINF ? CINF : prev[j] + 1;
                cur[j] = t < cur[j] ? t : cur[j];
            }
        }
    }
    return VOXA_OK;
}

static void chessboard(const uint8_t *src, int nd, const int64_t *shape, int32_t *f) {
    int64_t n = 1, stride[VOXA_MAXDIM];
    for (int d = nd - 1; d >= 0; d--) {
        stride[d] = n;
        n *= shape[d];
    }
    /* the half neighbourhood: offsets lexicographically before 0 */
    int64_t offs[1094][VOXA_MAXDIM];
    int noff = 0, total = 1;
    for (int d = 0; d < nd; d++) total *= 3;
    for (int k = 0; k < total / 2; k++) {
        int t = k;
        for (int d = nd - 1; d >= 0; d--) {
            offs[noff][d] = t % 3 - 1;
            t /= 3;
        }
        noff++;
    }
    for (int64_t i = 0; i < n; i++) f[i] = src[i] ? CINF : 0;
    for (int pass = 0; pass < 2; pass++) {
        int sgn = pass ? -1 : 1;
        int64_t idx[VOXA_MAXDIM];
        for (int d = 0; d < nd; d++) idx[d] = pass ? shape[d] - 1 : 0;
        for (int64_t c = 0; c < n; c++) {
            int64_t i = pass ? n - 1 - c : c;
            if (f[i] > 0) {
                int32_t best = f[i];
                for (int k = 0; k < noff; k++) {
                    int64_t off = 0;
                    int ok = 1;
                    for (int d = 0; d < nd && ok; d++) {
                        int64_t j = idx[d] + sgn * offs[k][d];
                        ok = j >= 0 && j < shape[d];
                        off += sgn * offs[k][d] * stride[d];
                    }
                    if (ok && f[i + off] != CINF && f[i + off] + 1 < best) best = f[i + off] + 1;
                }
                f[i] = best;
            }
            for (int d = nd - 1; d >= 0; d--) {
                if (pass == 0) {
                    if (++idx[d] < shape[d]) break;
                    idx[d] = 0;
                } else {
                    if (--idx[d] >= 0) break;
                    idx[d] = shape[d] - 1;
                }
            }
        }
    }
}

VOXA_API voxa_status voxa_edt_cdt(const voxa_array *in, voxa_array *out, voxa_edt_metric metric) {
    VOXA_CHECK(check_common(in, out, NULL, "cdt", 0));
    VOXA_FAIL_IF(metric != VOXA_EDT_TAXICAB && metric != VOXA_EDT_CHESSBOARD, VOXA_EINVAL,
                 "cdt: metric %d: expected taxicab (1) or chessboard (2)", (int)metric);
    VOXA_FAIL_IF(out->dtype != VOXA_I32 && out->dtype != VOXA_I64 && out->dtype != VOXA_F32 &&
                     out->dtype != VOXA_F64,
                 VOXA_EINVAL, "cdt: output dtype %s: expected int32, int64, float32 or float64",
                 voxa_dtype_name(out->dtype));
    VOXA_FAIL_IF(metric == VOXA_EDT_CHESSBOARD && in->ndim > 7, VOXA_EINVAL,
                 "cdt: chessboard supports up to 7 dimensions");
    int64_t n = voxa_array_size(in);
    if (n == 0) return VOXA_OK;
    voxa_status st = VOXA_OK;
    const uint8_t *src;
    uint8_t *owned = NULL;
    int32_t *f = NULL;
    VOXA_CHECK(voxa__binary_view(in, &src, &owned));
    int direct = out->dtype == VOXA_I32 && voxa_array_is_c_contiguous(out);
    f = direct ? out->data : voxa__malloc((size_t)n, 4);
    VOXA_GOTO_IF(!f, VOXA_ENOMEM, "cdt: cannot allocate %lld voxels", (long long)n);
    int nd = in->ndim;
    if (metric == VOXA_EDT_CHESSBOARD) {
        chessboard(src, nd, in->shape, f);
    } else {
        l1_ctx c = {f, src, in->shape[nd - 1], 1, 1};
        if ((st = voxa__parallel_for(n / c.n, voxa__grain(c.n), l1_rows, &c))) goto done;
        int64_t inner = c.n;
        for (int d = nd - 2; d >= 0; d--) {
            c.n = in->shape[d];
            c.inner = inner;
            c.nchunk = (inner + L1CHUNK - 1) / L1CHUNK;
            if ((st = voxa__parallel_for(n / (c.n * inner) * c.nchunk, voxa__grain(c.n * L1CHUNK), l1_lines, &c))) goto done;
            inner *= c.n;
        }
    }
    for (int64_t i = 0; i < n; i++)
        if (f[i] == CINF) f[i] = -1;
    if (!direct) {
        int64_t idx[VOXA_MAXDIM] = {0};
        for (int64_t i = 0; i < n; i++) {
            char *q = (char *)out->data + voxa__offset(out, idx);
            switch (out->dtype) {
            case VOXA_I32: memcpy(q, &f[i], 4); break;
            case VOXA_I64: { int64_t v = f[i]; memcpy(q, &v, 8); } break;
            case VOXA_F32: { float v = (float)f[i]; memcpy(q, &v, 4); } break;
            default: { double v = f[i]; memcpy(q, &v, 8); } break;
            }
            for (int d = nd - 1; d >= 0; d--) {
                if (++idx[d] < in->shape[d]) break;
                idx[d] = 0;
            }
        }
    }
done:
    if (!direct) voxa__free(f);
    voxa__free(owned);
    return st;
}
