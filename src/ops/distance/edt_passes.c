/* voxa_edt_slices, voxa_edt_columns: the Euclidean transform in two passes
 * that each need only part of the volume, for runs that never hold it whole
 * (the chunk executor, src/stream/run_edt.c; voxa.dask).
 *
 * The squared distance is separable along axis 0: with g2(q, .) the squared
 * distance of slice q alone (to background inside that slice, +inf where it
 * has none),
 *     D2(z, .) = min_q g2(q, .) + (s_0 (z - q))^2.
 * Pass 1 runs the squared-distance core (src/core/sqdt.c) on each slice, the
 * same passes in the same order as voxa_edt on the whole volume; pass 2 runs
 * the core's own lower envelope along axis 0 on every column, so the same
 * parabola wins and the result equals voxa_edt bit for bit. With unit
 * spacing the slice values are exact integers: uint32 g (half the bytes)
 * holds them where the slice's shape keeps them below 2^32 - 1. */
#include "edt_internal.h"
#include "sqdt.h"

#include <math.h>
#include <string.h>

VOXA_API voxa_status voxa_edt_slices(const voxa_array *in, const double *spacing, voxa_array *g,
                                     int *has_bg) {
    VOXA_CHECK(voxa_array_check(in, "input"));
    VOXA_CHECK(voxa_array_check(g, "g"));
    VOXA_FAIL_IF(in->ndim < 2, VOXA_EINVAL, "edt slices: input must have at least 2 dimensions");
    VOXA_FAIL_IF(!voxa__same_shape(in, g) || (g->dtype != VOXA_F64 && g->dtype != VOXA_U32) ||
                     !voxa_array_is_c_contiguous(g),
                 VOXA_EINVAL, "edt slices: g must be C-contiguous float64 or uint32 of the "
                              "input's shape");
    VOXA_FAIL_IF(g->dtype == VOXA_U32 && spacing, VOXA_EINVAL,
                 "edt slices: uint32 g holds squared distances with unit spacing only");
    VOXA_FAIL_IF(!has_bg, VOXA_EINVAL, "edt slices: has_bg must not be NULL");
    for (int d = 0; spacing && d < in->ndim; d++)
        VOXA_FAIL_IF(!isfinite(spacing[d]) || !(spacing[d] > 0), VOXA_EINVAL,
                     "edt: spacing[%d] = %g must be finite and > 0", d, spacing[d]);
    int nd = in->ndim;
    int64_t slice = 1;
    for (int d = 1; d < nd; d++) slice *= in->shape[d];
    if (voxa_array_size(in) == 0) return VOXA_OK;
    const uint8_t *src;
    uint8_t *owned = NULL;
    VOXA_CHECK(voxa__binary_view(in, &src, &owned));
    voxa_status st = VOXA_OK;
    for (int64_t z = 0; st == VOXA_OK && z < in->shape[0]; z++) {
        const uint8_t *s = src + z * slice;
        if (!*has_bg) *has_bg = memchr(s, 0, (size_t)slice) != NULL;
        voxa__sqdt q;
        memset(&q, 0, sizeof q);
        q.ndim = nd - 1;
        memcpy(q.shape, in->shape + 1, sizeof(int64_t) * (size_t)(nd - 1));
        q.src = s;
        q.target = 0;
        q.spacing = spacing ? spacing + 1 : NULL;
        q.mode = g->dtype == VOXA_U32 ? VOXA__SQDT_U32_SQ : VOXA__SQDT_F64_SQ;
        q.out = (char *)g->data + z * slice * (int64_t)voxa_dtype_size(g->dtype);
        st = voxa__sqdt_run(&q);
    }
    voxa__free(owned);
    return st;
}

/* fn over ncols columns of n values in parallel, each thread with `per`
 * bytes of scratch, published at *scratch (the context's) while fn runs. */
static voxa_status over_columns(int64_t ncols, int64_t n, size_t per, voxa__range_fn fn,
                                void *ctx, char **scratch) {
    int nt = 1;
    *scratch = voxa__thread_scratch(1, per, &nt);
    VOXA_FAIL_IF(!*scratch, VOXA_ENOMEM, "edt: out of memory for columns");
    voxa_status st = voxa__parallel_for_nt(ncols, voxa__grain(n), nt, fn, ctx);
    voxa__free(*scratch);
    *scratch = NULL;
    return st;
}

typedef struct col_ctx {
    const void *g;           /* float64, or uint32 (UINT32_MAX: none) */
    voxa_dtype gt;
    const double *sp;
    void *out;
    voxa_dtype t;
    int squared, has_bg, nd;
    int64_t n, ncols;
    const int64_t *origin, *shape;
    char *scratch;
    size_t per;
} col_ctx;

/* One column's squared distances f[0..n) into the output (stride m values),
 * as voxa_edt writes them; the dtype chosen once per column. */
static void put_column(const col_ctx *c, int64_t col, const double *f) {
    int64_t n = c->n, m = c->ncols;
    if (c->t == VOXA_F64) {
        double *o = (double *)c->out + col;
        for (int64_t x = 0; x < n; x++) o[x * m] = c->squared ? f[x] : sqrt(f[x]);
    } else if (c->t == VOXA_F32) {
        float *o = (float *)c->out + col;
        for (int64_t x = 0; x < n; x++) o[x * m] = (float)(c->squared ? f[x] : sqrt(f[x]));
    } else {
        for (int64_t x = 0; x < n; x++)
            voxa__edt_put((char *)((uint32_t *)c->out + x * m + col), VOXA_U32, f[x], 1);
    }
}

static voxa_status columns(int64_t lo, int64_t hi, int tid, void *vc) {
    const col_ctx *c = vc;
    int64_t n = c->n, m = c->ncols;
    double *g = (double *)(c->scratch + (size_t)tid * c->per);
    double *f = g + n, *gv = f + n, *z = gv + n + 1;
    int64_t *v = (int64_t *)(z + n + 1);
    double s0 = c->sp ? c->sp[0] : 1.0;
    for (int64_t col = lo; col < hi; col++) {
        if (!c->has_bg) { /* scipy: distances from index (-1, 0, ..., 0) */
            int64_t idx[VOXA_MAXDIM], r = col;
            for (int d = c->nd - 1; d >= 1; d--) {
                idx[d] = c->origin[d] + r % c->shape[d];
                r /= c->shape[d];
            }
            for (idx[0] = 0; idx[0] < n; idx[0]++)
                f[idx[0]] = voxa__edt_nobg_d2(c->nd, idx, c->sp);
            put_column(c, col, f);
            continue;
        }
        if (c->gt == VOXA_F64) {
            for (int64_t q = 0; q < n; q++) g[q] = ((const double *)c->g)[q * m + col];
        } else {
            const uint32_t *u = c->g;
            for (int64_t q = 0; q < n; q++)
                g[q] = u[q * m + col] == UINT32_MAX ? INFINITY : (double)u[q * m + col];
        }
        voxa__sqdt_envelope(g, n, s0 * s0, 0, INFINITY, f, v, gv, z);
        put_column(c, col, f);
    }
    return VOXA_OK;
}

VOXA_API voxa_status voxa_edt_columns(const voxa_array *g, const int64_t *origin, int has_bg,
                                      const voxa_edt_params *p, voxa_array *out) {
    voxa_edt_params def = {0};
    if (!p) p = &def;
    VOXA_CHECK(voxa_array_check(g, "g"));
    VOXA_CHECK(voxa_array_check(out, "output"));
    int nd = g->ndim;
    VOXA_FAIL_IF(nd < 2 || (g->dtype != VOXA_F64 && g->dtype != VOXA_U32) ||
                     !voxa_array_is_c_contiguous(g),
                 VOXA_EINVAL, "edt columns: g must be C-contiguous float64 or uint32 with at "
                              "least 2 dimensions");
    VOXA_FAIL_IF(!voxa__same_shape(g, out) || !voxa_array_is_c_contiguous(out), VOXA_EINVAL,
                 "edt columns: output must be C-contiguous, of g's shape");
    VOXA_FAIL_IF(out->dtype != VOXA_F64 && out->dtype != VOXA_F32 && out->dtype != VOXA_U32,
                 VOXA_EINVAL, "edt: output dtype %s: expected float64, float32 or uint32",
                 voxa_dtype_name(out->dtype));
    VOXA_FAIL_IF(out->dtype == VOXA_U32 && (!p->squared || p->spacing), VOXA_EINVAL,
                 "edt: uint32 output holds squared distances with unit spacing only");
    VOXA_FAIL_IF(!origin || origin[0] != 0, VOXA_EINVAL,
                 "edt columns: the block must hold axis 0 whole (origin[0] = 0)");
    for (int d = 0; p->spacing && d < nd; d++)
        VOXA_FAIL_IF(!isfinite(p->spacing[d]) || !(p->spacing[d] > 0), VOXA_EINVAL,
                     "edt: spacing[%d] = %g must be finite and > 0", d, p->spacing[d]);
    col_ctx c;
    memset(&c, 0, sizeof c);
    c.n = g->shape[0];
    c.ncols = c.n ? voxa_array_size(g) / c.n : 0;
    if (c.ncols == 0) return VOXA_OK;
    c.g = g->data;
    c.gt = g->dtype;
    c.sp = p->spacing;
    c.out = out->data;
    c.t = out->dtype;
    c.squared = p->squared;
    c.has_bg = has_bg;
    c.nd = nd;
    c.origin = origin;
    c.shape = g->shape;
    c.per = (size_t)(c.n + 1) * 40; /* g, f, gv, z: doubles; v: int64 */
    return over_columns(c.ncols, c.n, c.per, columns, &c, &c.scratch);
}

/* ---- city block and chessboard (voxa_edt_cdt's metrics) ---------------------------
 * Separable along axis 0 too: with g(q, .) the transform of slice q alone
 * (none: no background in the slice),
 *     city block  D(z, .) = min_q g(q, .) + |z - q|
 *     chessboard  D(z, .) = min_q max(g(q, .), |z - q|). */

VOXA_API voxa_status voxa_edt_cdt_slices(const voxa_array *in, voxa_edt_metric metric,
                                         voxa_array *g) {
    VOXA_CHECK(voxa_array_check(in, "input"));
    VOXA_CHECK(voxa_array_check(g, "g"));
    VOXA_FAIL_IF(in->ndim < 2, VOXA_EINVAL, "cdt slices: input must have at least 2 dimensions");
    VOXA_FAIL_IF(!voxa__same_shape(in, g) || g->dtype != VOXA_I32 ||
                     !voxa_array_is_c_contiguous(g),
                 VOXA_EINVAL, "cdt slices: g must be C-contiguous int32 of the input's shape");
    int64_t slice = voxa_array_size(g) / (in->shape[0] ? in->shape[0] : 1);
    voxa_status st = VOXA_OK;
    for (int64_t z = 0; st == VOXA_OK && z < in->shape[0] && slice; z++) {
        voxa_array si = *in, so;
        si.ndim = in->ndim - 1;
        memmove(si.shape, in->shape + 1, sizeof(int64_t) * (size_t)si.ndim);
        memmove(si.strides, in->strides + 1, sizeof(int64_t) * (size_t)si.ndim);
        si.data = (char *)in->data + z * in->strides[0];
        voxa_array_view(&so, (int32_t *)g->data + z * slice, VOXA_I32, si.ndim, si.shape);
        st = voxa_edt_cdt(&si, &so, metric);
    }
    return st;
}

typedef struct cdt_ctx {
    const int32_t *g;
    int32_t *out;
    voxa_edt_metric metric;
    int64_t n, ncols;
    char *scratch;
    size_t per;
} cdt_ctx;

/* Taxicab on columns [lo, hi): a forward and a backward scan along axis 0,
 * row segment by row segment (contiguous, vectorised across the columns);
 * INT32_MAX stands for "none" and never grows. */
static voxa_status taxicab_columns(int64_t lo, int64_t hi, int tid, void *vc) {
    const cdt_ctx *c = vc;
    int64_t n = c->n, m = c->ncols;
    int32_t *o = c->out;
    (void)tid;
    for (int64_t q = 0; q < n; q++) {
        const int32_t *src = c->g + q * m;
        int32_t *cur = o + q * m, *prev = o + (q - 1) * m;
        for (int64_t col = lo; col < hi; col++) {
            int32_t v = src[col] < 0 ? INT32_MAX : src[col];
            if (q) {
                int32_t p = prev[col] + (prev[col] != INT32_MAX);
                v = p < v ? p : v;
            }
            cur[col] = v;
        }
    }
    for (int64_t q = n - 2; q >= 0; q--) {
        int32_t *cur = o + q * m, *next = o + (q + 1) * m;
        for (int64_t col = lo; col < hi; col++) {
            int32_t p = next[col] + (next[col] != INT32_MAX);
            cur[col] = p < cur[col] ? p : cur[col];
        }
    }
    for (int64_t q = 0; q < n; q++) {
        int32_t *cur = o + q * m;
        for (int64_t col = lo; col < hi; col++) cur[col] = cur[col] == INT32_MAX ? -1 : cur[col];
    }
    return VOXA_OK;
}

static voxa_status cdt_columns(int64_t lo, int64_t hi, int tid, void *vc) {
    const cdt_ctx *c = vc;
    int64_t n = c->n, m = c->ncols;
    int32_t *ig = (int32_t *)(c->scratch + (size_t)tid * c->per);
    for (int64_t col = lo; col < hi; col++) {
        for (int64_t q = 0; q < n; q++) {
            int32_t v = c->g[q * m + col];
            ig[q] = v < 0 ? INT32_MAX : v;
        }
        /* chessboard: min over q of max(g(q), |x - q|), searched outwards and
         * stopped at the best value found: O(n D), D the distances met */
        for (int64_t x = 0; x < n; x++) {
            int64_t best = ig[x];
            for (int64_t d = 1; d < best && (x - d >= 0 || x + d < n); d++) {
                if (x - d >= 0 && ig[x - d] < best) best = ig[x - d] > d ? ig[x - d] : d;
                if (x + d < n && ig[x + d] < best) best = ig[x + d] > d ? ig[x + d] : d;
            }
            c->out[x * m + col] = best == INT32_MAX ? -1 : (int32_t)best;
        }
    }
    return VOXA_OK;
}

VOXA_API voxa_status voxa_edt_cdt_columns(const voxa_array *g, voxa_edt_metric metric,
                                          voxa_array *out) {
    VOXA_CHECK(voxa_array_check(g, "g"));
    VOXA_CHECK(voxa_array_check(out, "output"));
    VOXA_FAIL_IF(metric != VOXA_EDT_TAXICAB && metric != VOXA_EDT_CHESSBOARD, VOXA_EINVAL,
                 "cdt columns: metric %d: expected taxicab (1) or chessboard (2)", (int)metric);
    VOXA_FAIL_IF(g->ndim < 2 || g->dtype != VOXA_I32 || !voxa_array_is_c_contiguous(g),
                 VOXA_EINVAL, "cdt columns: g must be C-contiguous int32 with at least 2 "
                              "dimensions");
    VOXA_FAIL_IF(!voxa__same_shape(g, out) || out->dtype != VOXA_I32 ||
                     !voxa_array_is_c_contiguous(out),
                 VOXA_EINVAL, "cdt columns: output must be C-contiguous int32, of g's shape");
    cdt_ctx c = {g->data, out->data, metric, g->shape[0], 0, NULL, 0};
    c.ncols = c.n ? voxa_array_size(g) / c.n : 0;
    if (c.ncols == 0) return VOXA_OK;
    if (metric == VOXA_EDT_TAXICAB) /* column ranges of at least 256 */
        return voxa__parallel_for(c.ncols, voxa__grain(c.n) > 256 ? voxa__grain(c.n) : 256,
                                  taxicab_columns, &c);
    c.per = (size_t)(c.n + 1) * sizeof(int32_t);
    return over_columns(c.ncols, c.n, c.per, cdt_columns, &c, &c.scratch);
}
