/* Exact squared Euclidean distance transform, separable (the engine behind
 * voxa_edt and the ball structuring elements of voxa_morph).
 *
 * Algorithm (Felzenszwalb & Huttenlocher, "Distance Transforms of Sampled
 * Functions", Theory of Computing 8, 2012): the squared distance
 *     D(v) = min over targets t of sum_d ((v_d - t_d) s_d)^2
 * is a sum of per-axis terms, so it is computed one axis at a time:
 *   1. along the last (contiguous) axis, a two-scan 1D distance to the
 *      nearest target of the row: f(x) = (s * |x - t|)^2;
 *   2. along every other axis, f_new(p) = min_q f(q) + (s_d (p - q))^2, the
 *      lower envelope of parabolas rooted at (q, f(q)), built in one stack
 *      pass and read back in a second: O(n) per line.
 * Total O(ndim * N) time whatever the distances; lines are independent and
 * run in parallel. Lines along slow axes are gathered tw at a time (tw
 * neighbours along the fastest axis share cache lines) into per-thread
 * scratch, processed, and scattered back.
 *
 * Memory: the storage between passes (voxa__sqdt_scratch_bytes) plus, per
 * thread, the largest line scratch of the passes (voxa__sqdt_line_bytes):
 * for a slow pass along an axis of n voxels with `inner` lines side by side,
 * tw = min(16 or 64, inner) and 8 (tw + 4) (n + 2) bytes (double storage) or
 * (8 tw + 24) (n + 2) (integers); pass 1 (rows) needs none. So a long axis
 * costs its own pass only, and a 1-D input needs no line scratch.
 *
 * Exactness: with unit spacing every value is an integer below 2^53 and the
 * only rounded quantity is the intersection abscissa of two parabolas, a
 * rational with denominator <= 2n: rounding cannot move it across an integer,
 * so the envelope read at integer p is exact. Values are stored between
 * passes as uint32 (unit spacing, 4 bytes/voxel) or double; a 2-D float32
 * output instead keeps pass 1's row distances d (uint32, in the output) and
 * the last pass squares them on load with pass 1's own arithmetic, and a
 * 3-D one keeps (row distance, axis-1 offset) pairs of 16 bits (load_pair).
 *
 * Borders: with `border` set, every voxel outside the volume is a target.
 * That equals one extra target parabola of height 0 at q = -1 and q = n on
 * every line of every pass (after pass 1 the outside lines are all zero).
 *
 * Threshold mode (balls): values above the threshold can never come back
 * below it, so pass 1 stores them as +inf and later passes skip their
 * parabolas; the last pass only asks "is some g(q) + (x-q)^2 <= T", a union
 * of intervals [q - w, q + w] with w = isqrt(T - g(q)), and writes the
 * thresholded bytes directly (the output may be the source: the source is
 * read completely by pass 1). With unit spacing the passes then run in the
 * order axis 0 (two elementwise scans over contiguous rows, vectorised),
 * axes 1..nd-2 (envelopes), last axis (intervals on contiguous rows), and
 * values are stored as uint16 when T < 65535 (2 bytes/voxel).
 *
 * Integer EDT (unit spacing, no threshold): the rows are written run by run
 * (sqdt_int.c), the column passes scan short windows g(y +- k) + k^2 with
 * SIMD while a set of columns' distances are short on average, and fall
 * back to the envelope where they are not (sqdt_window.c), and in 3-D the
 * rows and the next pass are fused slab by slab while the slab is in cache.
 *
 * Files: this one plans the passes and runs the rows and the double
 * envelope; sqdt_int.c the integer path (unit spacing); sqdt_window.c the
 * windowed column kernels. */
#include "sqdt_internal.h"

#include <math.h>
#include <string.h>

/* A pair slot (3-D float32 with spacing, see voxa__sqdt_run): the row
 * distance dx of the voxel's nearest target so far and its offset dy along
 * axis 1, 16 bits each (0xFFFF: none); the value is rebuilt with the very
 * operations the double path stores: dx^2 s2_row, plus dy^2 s2_mid after the
 * middle pass (+ 0.0 before it, which changes nothing). */
static inline double load_pair(const stage_ctx *c, uint32_t u) {
    uint32_t dx = u & 0xFFFFu, dy = u >> 16;
    if (dx == 0xFFFFu || dy == 0xFFFFu) return INFINITY;
    double d = (double)dy;
    return (double)dx * (double)dx * c->s2_row + c->s2_mid * d * d;
}

static inline double load(const stage_ctx *c, int64_t i) {
    if (c->buf_pair) return load_pair(c, ((const uint32_t *)c->buf)[i]);
    if (c->buf_dist) {
        uint32_t u = ((const uint32_t *)c->buf)[i];
        return u == UINT32_MAX ? INFINITY : (double)u * (double)u * c->s2_row;
    }
    if (c->buf_double) return ((const double *)c->buf)[i];
    uint32_t u = ((const uint32_t *)c->buf)[i];
    return u == UINT32_MAX ? INFINITY : (double)u;
}

static inline void store(const stage_ctx *c, int64_t i, double f) {
    if (f > c->cap) f = INFINITY;
    if (c->buf_double) ((double *)c->buf)[i] = f;
    else ((uint32_t *)c->buf)[i] = f == INFINITY ? UINT32_MAX : (uint32_t)f;
}

/* Pass 1: rows along the last axis, from the binary source. Each run of
 * non-targets between two targets (or a border sentinel) is written in one
 * go, d = min(x - previous target, next target - x): no line scratch. */
#define ROW_SCAN(PUT)                                                              \
    do {                                                                           \
        int64_t last = p->border ? -1 : -none, x = 0;                              \
        while (x < n) {                                                            \
            int64_t t = x;                                                         \
            while (t < n && (s[t] != 0) != tv) t++;                                \
            int64_t next = t < n ? t : (p->border ? n : 2 * none);                 \
            for (; x < t; x++) {                                                   \
                int64_t d = x - last, e = next - x;                                \
                if (e < d) d = e;                                                  \
                PUT;                                                               \
            }                                                                      \
            if (t < n) {                                                           \
                int64_t d = 0;                                                     \
                (void)d;                                                           \
                PUT;                                                               \
                last = t;                                                          \
                x = t + 1;                                                         \
            }                                                                      \
        }                                                                          \
    } while (0)

static voxa_status first_rows(int64_t lo, int64_t hi, int tid, void *vc) {
    (void)tid;
    const stage_ctx *c = vc;
    const voxa__sqdt *p = c->p;
    int64_t n = c->n;
    const uint8_t tv = (uint8_t)(p->target != 0);
    const int64_t none = INT64_MAX / 4;
    /* unit spacing into uint32 storage: integers only */
    const int int_path = !c->final && !c->buf_double;
    const int64_t icap = c->cap >= 4294967294.0 ? 4294967294LL : (int64_t)c->cap;
    for (int64_t r = lo; r < hi; r++) {
        const uint8_t *s = p->src + r * n;
        int64_t base = r * n;
        if (int_path && !c->u16 && icap >= 65535LL * 65535LL) {
            voxa__sqdt_row_int(c, r); /* runs found 16 bytes at a time */
        } else if (int_path && c->u16) {
            uint16_t *dst = (uint16_t *)c->buf + base;
            ROW_SCAN(dst[x] = d > 65535 || d * d > icap ? UINT16_MAX : (uint16_t)(d * d));
        } else if (int_path) {
            uint32_t *dst = (uint32_t *)c->buf + base;
            ROW_SCAN(dst[x] = d > 65535 || d * d > icap ? UINT32_MAX : (uint32_t)(d * d));
        } else if (c->buf_dist) { /* the same double as below, on load */
            uint32_t *dst = (uint32_t *)c->buf + base;
            ROW_SCAN(dst[x] = d >= none / 2 ? UINT32_MAX : (uint32_t)d);
        } else if (c->buf_pair) { /* (dx, dy = 0); dx < 0xFFFF (planned) */
            uint32_t *dst = (uint32_t *)c->buf + base;
            ROW_SCAN(dst[x] = d >= none / 2 ? 0xFFFFu : (uint32_t)d);
        } else if (c->final) {
            ROW_SCAN(emit(p, base + x,
                          d >= none / 2 ? INFINITY : (double)d * (double)d * c->s2));
        } else {
            ROW_SCAN(store(c, base + x,
                           d >= none / 2 ? INFINITY : (double)d * (double)d * c->s2));
        }
    }
    return VOXA_OK;
}
#undef ROW_SCAN

/* The envelope of one line; writes the values f, or (f NULL) the row of
 * each voxel's parabola in arg (-1 / n: a border sentinel; INT64_MIN: none). */
static inline void envelope_core(const double *g, int64_t n, double s2, int border, double cap,
                                 double *f, int64_t *arg, int64_t *v, double *gv, double *z) {
    int64_t k = -1;
    int64_t qlo = border ? -1 : 0, qhi = border ? n : n - 1;
    for (int64_t q = qlo; q <= qhi; q++) {
        double gq = (q < 0 || q >= n) ? 0.0 : g[q];
        if (gq == INFINITY || gq > cap) continue;
        double hq = gq + s2 * (double)q * (double)q;
        double s = -INFINITY;
        while (k >= 0) {
            double hk = gv[k] + s2 * (double)v[k] * (double)v[k];
            s = (hq - hk) / (2.0 * s2 * (double)(q - v[k]));
            if (s <= z[k]) k--;
            else break;
        }
        if (k < 0) s = -INFINITY;
        k++;
        v[k] = q;
        gv[k] = gq;
        z[k] = s;
    }
    if (k < 0) {
        for (int64_t x = 0; x < n; x++) {
            if (f) f[x] = INFINITY;
            else arg[x] = INT64_MIN;
        }
        return;
    }
    int64_t j = 0;
    for (int64_t x = 0; x < n; x++) {
        while (j < k && z[j + 1] <= (double)x) j++;
        double d = (double)(x - v[j]);
        if (f) f[x] = gv[j] + s2 * d * d;
        else arg[x] = v[j];
    }
}

void voxa__sqdt_envelope(const double *g, int64_t n, double s2, int border, double cap,
                     double *f, int64_t *v, double *gv, double *z) {
    envelope_core(g, n, s2, border, cap, f, NULL, v, gv, z);
}

/* Passes 2..ndim: lines along a slow axis, tw neighbours at a time. */
static voxa_status slow_lines(int64_t lo, int64_t hi, int tid, void *vc) {
    const stage_ctx *c = vc;
    const voxa__sqdt *p = c->p;
    int64_t n = c->n, inner = c->inner;
    char *mem = c->scratch + (size_t)tid * c->per_thread;
    const int64_t tw = c->tw;
    double *g = (double *)mem;            /* tw * n */
    double *f = g + tw * n;               /* n */
    double *gv = f + n;                   /* n + 2 */
    double *z = gv + n + 2;               /* n + 2 */
    int64_t *v = (int64_t *)(z + n + 2);  /* n + 2 */
    for (int64_t it = lo; it < hi; it++) {
        int64_t o = it / c->nti, i0 = (it % c->nti) * tw;
        int64_t w = inner - i0 < tw ? inner - i0 : tw;
        int64_t base = o * n * inner + i0;
        for (int64_t q = 0; q < n; q++)
            for (int64_t j = 0; j < w; j++) g[j * n + q] = load(c, base + q * inner + j);
        for (int64_t j = 0; j < w; j++) {
            if (c->buf_pair && !c->final) {
                /* the middle pass of pairs: each voxel keeps its parabola's
                 * row distance (read before the column is rewritten; 0 for a
                 * border sentinel) and its offset to it */
                int64_t *arg = (int64_t *)f;
                uint16_t *dxq = (uint16_t *)z; /* free once the envelope is read */
                uint32_t *col = (uint32_t *)c->buf + base + j;
                envelope_core(g + j * n, n, c->s2, p->border, c->cap, NULL, arg, v, gv, z);
                for (int64_t q = 0; q < n; q++) dxq[q] = (uint16_t)(col[q * inner] & 0xFFFFu);
                for (int64_t q = 0; q < n; q++) {
                    int64_t a = arg[q];
                    if (a == INT64_MIN) {
                        col[q * inner] = 0xFFFFFFFFu;
                        continue;
                    }
                    uint32_t dx = a < 0 || a >= n ? 0 : dxq[a];
                    uint32_t dy = (uint32_t)(q > a ? q - a : a - q);
                    col[q * inner] = dx | dy << 16;
                }
                continue;
            }
            voxa__sqdt_envelope(g + j * n, n, c->s2, p->border, c->cap, f, v, gv, z);
            if (c->final)
                for (int64_t q = 0; q < n; q++) emit(p, base + q * inner + j, f[q]);
            else
                for (int64_t q = 0; q < n; q++) store(c, base + q * inner + j, f[q]);
        }
    }
    return VOXA_OK;
}

/* Pass 1 and the pass along axis nd-2 fused, one slab (an index of the
 * axes before nd-2) per item. */
#define FUSE_BYTES (1 << 20) /* largest slab of uint32 values fused */
typedef struct fused_ctx {
    const stage_ctx *rows, *lines;
} fused_ctx;

static voxa_status fused_slabs(int64_t lo, int64_t hi, int tid, void *vf) {
    const fused_ctx *f = vf;
    int64_t per = f->lines->n; /* rows per slab */
    voxa__sqdt_wstate ws = {{0, 0, 0}, {0, 0, 0}}; /* the window's back-off, over the slabs */
    for (int64_t o = lo; o < hi; o++) {
        voxa_status st = first_rows(o * per, (o + 1) * per, tid, (void *)f->rows);
        if (!st) st = voxa__sqdt_slow_lines_int_skip(o * f->lines->nti, (o + 1) * f->lines->nti,
                                                     tid, (void *)f->lines, &ws);
        if (st) return st;
    }
    return VOXA_OK;
}

static int storage_bytes(const voxa__sqdt *p, double maxd2) {
    if (p->mode == VOXA__SQDT_F64 || p->mode == VOXA__SQDT_F64_SQ ||
        p->mode == VOXA__SQDT_U32_SQ || p->ndim == 1)
        return 0;
    if (p->mode == VOXA__SQDT_F32_SQ) return 8; /* the integer passes write uint32 or sqrt */
    double cap = p->mode == VOXA__SQDT_THRESHOLD ? p->thr : INFINITY;
    int u32 = !p->spacing && (cap < 4294967295.0 || maxd2 < 4294967295.0);
    if (!u32) return 8;
    return p->mode == VOXA__SQDT_THRESHOLD && p->thr < 65535.0 ? 2 : 4;
}

static double max_d2(const voxa__sqdt *p) {
    double m = 0;
    for (int d = 0; d < p->ndim; d++) {
        double s = p->spacing ? p->spacing[d] : 1.0;
        m += ((double)p->shape[d] + 1) * ((double)p->shape[d] + 1) * s * s;
    }
    return m;
}

/* Storage between passes is double (else integers). */
static int uses_double(const voxa__sqdt *p, double maxd2) {
    if (p->mode == VOXA__SQDT_F64 || p->mode == VOXA__SQDT_F64_SQ) return 1;
    if (p->mode == VOXA__SQDT_U32_SQ) return 0;
    return storage_bytes(p, maxd2) == 8;
}

/* The threshold order (axis 0 first, rows last) applies. */
static int threshold_order(const voxa__sqdt *p, int dbl) {
    return p->mode == VOXA__SQDT_THRESHOLD && !dbl && p->ndim > 1;
}

/* Columns per tile of the slow pass along axis d (lines of n voxels, inner
 * lines side by side): 16 (double) or 64 (integers, n <= 8192; 16 beyond,
 * to keep the tile small), never more than the inner lines there are. */
static int64_t pass_tw(const voxa__sqdt *p, int dbl, int d) {
    int64_t inner = 1;
    for (int e = d + 1; e < p->ndim; e++) inner *= p->shape[e];
    int64_t tw = !dbl && p->shape[d] <= 8192 ? TILE_INT : TILE;
    return inner < tw ? inner : tw;
}

/* Per-thread bytes of the slow pass along axis d: double, tw lines + the
 * envelope (f, v, gv, z): 8 (tw + 4) (n + 2); integers, tw lines in and
 * out + v, h, reach: (8 tw + 24) (n + 2). */
static size_t pass_bytes(const voxa__sqdt *p, int dbl, int d) {
    size_t n2 = (size_t)p->shape[d] + 2, tw = (size_t)pass_tw(p, dbl, d);
    return dbl ? 8 * (tw + 4) * n2 : (8 * tw + 24) * n2;
}

static size_t line_bytes(const voxa__sqdt *p, double maxd2) {
    int dbl = uses_double(p, maxd2);
    size_t per = 0;
    if (threshold_order(p, dbl)) per = ACH * sizeof(uint32_t); /* voxa__sqdt_first_axis0 */
    int d0 = threshold_order(p, dbl) ? 1 : 0, d1 = threshold_order(p, dbl) ? p->ndim : p->ndim - 1;
    for (int d = d0; d < d1; d++) {
        size_t b = pass_bytes(p, dbl, d);
        if (b > per) per = b;
    }
    return per;
}

size_t voxa__sqdt_line_bytes(const voxa__sqdt *pin) {
    voxa__sqdt local = *pin; /* the same clamp as voxa__sqdt_run */
    if (local.mode == VOXA__SQDT_THRESHOLD && local.thr > max_d2(pin)) local.thr = max_d2(pin);
    for (int d = 0; d < local.ndim; d++)
        if (local.shape[d] == 0) return 0;
    return line_bytes(&local, max_d2(&local));
}

size_t voxa__sqdt_scratch_bytes(const voxa__sqdt *pin) {
    voxa__sqdt local = *pin; /* the same clamp as voxa__sqdt_run */
    if (local.mode == VOXA__SQDT_THRESHOLD && local.thr > max_d2(pin)) local.thr = max_d2(pin);
    size_t n = 1;
    for (int d = 0; d < local.ndim; d++) n *= (size_t)local.shape[d];
    return n * (size_t)storage_bytes(&local, max_d2(&local));
}

voxa_status voxa__sqdt_run(const voxa__sqdt *pin) {
    voxa_status st = VOXA_OK;
    /* A threshold beyond every squared distance the volume can hold decides
     * the same as that maximum, which keeps the storage small for huge R. */
    voxa__sqdt local = *pin;
    const voxa__sqdt *p = &local;
    if (local.mode == VOXA__SQDT_THRESHOLD && local.thr > max_d2(pin))
        local.thr = max_d2(pin);
    int nd = p->ndim;
    int64_t total = 1;
    double maxd2 = 0;
    for (int d = 0; d < nd; d++) {
        total *= p->shape[d];
        double s = p->spacing ? p->spacing[d] : 1.0;
        maxd2 += ((double)p->shape[d] + 1) * ((double)p->shape[d] + 1) * s * s;
    }
    if (total == 0) return VOXA_OK;
    stage_ctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.cap = p->mode == VOXA__SQDT_THRESHOLD ? p->thr : INFINITY;
    void *owned = NULL;
    char *scratch = NULL;
    if (p->mode == VOXA__SQDT_F64 || p->mode == VOXA__SQDT_F64_SQ) {
        c.buf = p->out; /* store in place, the last pass rewrites it */
        c.buf_double = 1;
    } else if (p->mode == VOXA__SQDT_U32_SQ) {
        VOXA_GOTO_IF(p->spacing, VOXA_EINVAL, "squared uint32 output needs unit spacing");
        VOXA_GOTO_IF(maxd2 >= 4294967295.0, VOXA_EOVERFLOW,
                     "squared distances may exceed uint32 for this shape: use float64");
        c.buf = p->out;
        c.buf_double = 0;
    } else {
        /* thresholds below 65535: every stored value fits 16 bits */
        int bytes = storage_bytes(p, maxd2);
        c.buf_double = bytes == 8;
        c.u16 = bytes == 2;
        if (bytes == 8 && (p->mode == VOXA__SQDT_F32 || p->mode == VOXA__SQDT_F32_SQ) &&
            nd == 2 && !p->scratch &&
            p->shape[1] < (int64_t)UINT32_MAX) {
            /* 2-D float32 whose squared distances may pass 2^32 (long axes,
             * or spacing): pass 1 keeps the row distance d itself, which
             * fits the output's 4 bytes, and the only other pass squares it
             * on load exactly as pass 1 would have (no 8 B/voxel storage) */
            c.buf = p->out;
            c.buf_dist = 1;
            c.s2_row = p->spacing ? p->spacing[1] * p->spacing[1] : 1.0;
        } else if (bytes == 8 && (p->mode == VOXA__SQDT_F32 || p->mode == VOXA__SQDT_F32_SQ) &&
                   nd == 3 && !p->scratch && p->shape[2] < 0xFFFF && p->shape[1] < 0xFFFF) {
            /* 3-D float32 with spacing (or squares past 2^32): each voxel's
             * value after a pass is rebuilt from its row distance and its
             * offset along axis 1, which fit the output's 4 bytes as two
             * 16-bit halves (no 8 B/voxel storage; see load_pair) */
            c.buf = p->out;
            c.buf_pair = 1;
            c.s2_row = p->spacing ? p->spacing[2] * p->spacing[2] : 1.0;
            c.s2_mid = p->spacing ? p->spacing[1] * p->spacing[1] : 1.0;
        } else if (bytes == 4 && p->mode == VOXA__SQDT_F32 && !p->scratch) {
            /* float32 output: the uint32 storage can live in the output itself,
             * since every pass reads a whole tile before writing it back */
            c.buf = p->out;
        } else if (bytes && !p->scratch) {
            owned = voxa__malloc((size_t)total, (size_t)bytes);
            VOXA_GOTO_IF(!owned, VOXA_ENOMEM, "edt: cannot allocate %lld voxels of scratch",
                         (long long)total);
        }
        if (!c.buf) c.buf = p->scratch ? p->scratch : owned;
    }
    int nt;
    /* per-thread line scratch, sized by each pass's own lines (pass 1 needs
     * none); integer passes take wider tiles (fewer strided visits of each
     * row, fewer TLB misses on the slow axes) */
    size_t per = line_bytes(p, maxd2);
    if (per < 64) per = 64;
    scratch = voxa__thread_scratch(1, per, &nt);
    VOXA_GOTO_IF(!scratch, VOXA_ENOMEM, "edt: cannot allocate line scratch");
    c.scratch = scratch;
    c.per_thread = per;
    if (p->mode == VOXA__SQDT_THRESHOLD && !c.buf_double && nd > 1 && p->thr < (1 << 22)) {
        int64_t T = (int64_t)p->thr;
        int32_t *tab = voxa__malloc((size_t)T + 1, sizeof(int32_t));
        VOXA_GOTO_IF(!tab, VOXA_ENOMEM, "edt: cannot allocate a square-root table");
        for (int64_t r = 0; r * r <= T; r++)
            for (int64_t i = r * r; i <= T && i < (r + 1) * (r + 1); i++) tab[i] = (int32_t)r;
        c.isqrt = tab;
    }

    if (p->mode == VOXA__SQDT_THRESHOLD && !c.buf_double && nd > 1) {
        /* pass 1 along axis 0 (vectorised), then axes 1..nd-1, the last one
         * (rows, contiguous) being the interval pass that writes the output */
        c.n = p->shape[0];
        c.inner = total / c.n;
        int64_t chunks = (c.inner + ACH - 1) / ACH;
        st = voxa__parallel_for_nt(chunks, voxa__grain(c.n * ACH), nt, voxa__sqdt_first_axis0, &c);
        if (st) goto done;
        if ((st = voxa__progress(p->progress, 1, nd))) goto done;
        for (int d = 1; d < nd; d++) {
            int64_t inner = 1;
            for (int e = d + 1; e < nd; e++) inner *= p->shape[e];
            c.n = p->shape[d];
            c.inner = inner;
            c.tw = pass_tw(p, 0, d);
            c.nti = (inner + c.tw - 1) / c.tw;
            c.s2 = 1.0;
            c.final = d == nd - 1;
            int64_t items = (total / (c.n * inner)) * c.nti;
            st = voxa__parallel_for_nt(items, voxa__grain(c.n * c.tw), nt, voxa__sqdt_slow_lines_int, &c);
            if (st) goto done;
            if ((st = voxa__progress(p->progress, d + 1, nd))) goto done;
        }
        goto done;
    }

    /* pass 1: last axis; the integer passes after it scan short windows
     * where they can (sqdt_window.c) */
    c.wk = p->mode != VOXA__SQDT_THRESHOLD ? voxa__sqdt_window_pick() : NULL;
    c.wsteps = voxa__sqdt_window_steps(); /* -1: each kernel's own */
    c.n = p->shape[nd - 1];
    c.inner = 1;
    c.s2 = p->spacing ? p->spacing[nd - 1] * p->spacing[nd - 1] : 1.0;
    c.final = nd == 1;
    int64_t rows = total / c.n, inner = c.n;
    int d = nd - 2;
    int64_t slab = nd >= 3 ? p->shape[nd - 2] * c.n : 0, slabs = slab ? total / slab : 0;
    if (nd >= 3 && c.wk && !c.buf_double && !c.u16 && !c.buf_dist && slab * 4 <= FUSE_BYTES &&
        slabs >= 4 * nt) {
        /* rows and the pass along axis nd-2 slab by slab, while the slab is
         * in cache (one trip through memory instead of two) */
        stage_ctx c2 = c;
        c2.n = p->shape[nd - 2];
        c2.inner = c.n;
        c2.tw = pass_tw(p, 0, nd - 2);
        c2.nti = (c.n + c2.tw - 1) / c2.tw;
        c2.final = 0;
        fused_ctx f = {&c, &c2};
        st = voxa__parallel_for_nt(slabs, voxa__grain(slab), nt, fused_slabs, &f);
        if (st) goto done;
        if ((st = voxa__progress(p->progress, 2, nd))) goto done;
        inner *= c2.n;
        d--;
    } else {
        st = voxa__parallel_for_nt(rows, voxa__grain(c.n), nt, first_rows, &c);
        if (st) goto done;
        if ((st = voxa__progress(p->progress, 1, nd))) goto done;
    }
    for (; d >= 0; d--) {
        c.n = p->shape[d];
        c.inner = inner;
        int64_t tw = c.tw = pass_tw(p, c.buf_double, d);
        c.nti = (inner + tw - 1) / tw;
        c.s2 = p->spacing ? p->spacing[d] * p->spacing[d] : 1.0;
        c.final = d == 0;
        int64_t items = (total / (c.n * inner)) * c.nti;
        st = voxa__parallel_for_nt(items, voxa__grain(c.n * tw), nt, c.buf_double ? slow_lines : voxa__sqdt_slow_lines_int, &c);
        if (st) goto done;
        if ((st = voxa__progress(p->progress, nd - d, nd))) goto done;
        inner *= c.n;
    }
done:
    voxa__free(owned);
    voxa__free(scratch);
    voxa__free((void *)c.isqrt);
    return st;
}
