/* Separable binary filters whose cost does not depend on the element size:
 * boxes (products of intervals) and diamonds (city-block balls).
 *
 * Box. out[v] = OR (dilation) / AND (erosion) over o in prod_d [lo_d, hi_d]
 * of X[v + o], X outside the volume = `outside`. A product of intervals is
 * applied one axis at a time (the outside value stays `outside` after each
 * 1D pass, since OR/AND of a window of outside values is that value). On a
 * line, "is there a voxel equal to t in [q+lo, q+hi]" is answered in O(1)
 * from one forward scan of counters c[q] = distance back to the last t
 * (Gil-Werman/van Herk reduced to the binary case): the window holds a t iff
 * c[min(q+hi, n-1)] <= min(q+hi, n-1) - max(q+lo, 0), or the window leaves
 * the volume and outside == t. Lines along slow axes are processed CH at a
 * time so that every step is a contiguous, vectorisable row operation.
 *
 *      axis 2 (rows)      axis 1              axis 0
 *      ---->              | | | | (CH wide)   slabs of CH columns
 *
 * Diamond. The L1 distance to the nearest target is separable: pass 1 gives
 * the 1D distance along rows, every further axis runs f(q) = min(f(q),
 * f(q-1)+1) forwards and backwards. Values above r are all alike, so they
 * saturate at r+1 and fit in the output bytes themselves when r <= 253:
 * the diamond costs no memory beyond input and output. Targets outside the
 * volume (border) are a height-0 neighbour before q = 0 and after q = n-1.
 *
 * Both: O(ndim N) time, parallel over lines; out may alias src. */
#include "morph_internal.h"

#include <string.h>

#define CH 64
#define BIG (INT32_MAX / 2)

typedef struct box_ctx {
    const uint8_t *src;
    uint8_t *out;
    int64_t n, inner, nchunk;
    int64_t lo, hi;
    int t;        /* the value searched for: 1 for OR, 0 for AND */
    int outside;
    char *scratch;
    size_t per;
} box_ctx;

static voxa_status box_lines(int64_t b0, int64_t b1, int tid, void *vc) {
    const box_ctx *c = vc;
    int64_t n = c->n, inner = c->inner;
    int32_t *cnt = (int32_t *)(c->scratch + (size_t)tid * c->per); /* n * CH */
    const uint8_t t = (uint8_t)c->t;
    for (int64_t it = b0; it < b1; it++) {
        int64_t o = it / c->nchunk, i0 = (it % c->nchunk) * CH;
        int64_t w = inner - i0 < CH ? inner - i0 : CH;
        int64_t base = o * n * inner + i0;
        const uint8_t *s = c->src + base;
        int32_t init = c->outside == c->t ? 1 : BIG;
        for (int64_t j = 0; j < w; j++) cnt[j] = ((s[j] != 0) == t) ? 0 : init;
        for (int64_t q = 1; q < n; q++) {
            const uint8_t *sq = s + q * inner;
            int32_t *cq = cnt + q * CH, *cp = cq - CH;
            for (int64_t j = 0; j < w; j++) {
                int32_t v = cp[j] + 1;
                cq[j] = ((sq[j] != 0) == t) ? 0 : (v > BIG ? BIG : v);
            }
        }
        uint8_t *d = c->out + base;
        for (int64_t q = 0; q < n; q++) {
            int64_t a = q + c->lo, b = q + c->hi;
            int found_out = c->outside == c->t && (a < 0 || b > n - 1);
            if (a < 0) a = 0;
            if (b > n - 1) b = n - 1;
            uint8_t *dq = d + q * inner;
            if (found_out) {
                memset(dq, c->t ? 1 : 0, (size_t)w);
            } else if (a > b) {
                memset(dq, c->t ? 0 : 1, (size_t)w);
            } else {
                const int32_t *cb = cnt + b * CH;
                int32_t span = (int32_t)(b - a);
                if (c->t)
                    for (int64_t j = 0; j < w; j++) dq[j] = cb[j] <= span;
                else
                    for (int64_t j = 0; j < w; j++) dq[j] = cb[j] > span;
            }
        }
    }
    return VOXA_OK;
}

voxa_status voxa__box_filter(int ndim, const int64_t *shape, const uint8_t *src,
                             const int64_t *lo, const int64_t *hi, int dilate_like,
                             int outside, uint8_t *out) {
    int64_t total = 1, maxn = 1;
    for (int d = 0; d < ndim; d++) {
        total *= shape[d];
        if (shape[d] > maxn) maxn = shape[d];
    }
    if (total == 0) return VOXA_OK;
    int nt;
    size_t per = (size_t)maxn * CH * sizeof(int32_t);
    char *scratch = voxa__thread_scratch(1, per, &nt);
    VOXA_FAIL_IF(!scratch, VOXA_ENOMEM, "morph: cannot allocate line scratch");
    voxa_status st = VOXA_OK;
    box_ctx c = {src, out, 0, 0, 0, 0, 0, dilate_like ? 1 : 0, outside ? 1 : 0, scratch, per};
    int first = 1;
    int64_t inner = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        c.n = shape[d];
        c.inner = inner;
        inner *= shape[d];
        if (lo[d] == 0 && hi[d] == 0) continue; /* identity along this axis */
        c.src = first ? src : out;
        c.lo = lo[d];
        c.hi = hi[d];
        c.nchunk = (c.inner + CH - 1) / CH;
        int64_t items = total / (c.n * c.inner) * c.nchunk;
        st = voxa__parallel_for_nt(items, voxa__grain(c.n * (c.inner == 1 ? 1 : CH)), nt, box_lines, &c);
        if (st) break;
        first = 0;
    }
    if (!st && first && out != src) /* 1x1..x1 box: a copy */
        for (int64_t i = 0; i < total; i++) out[i] = src[i] != 0;
    voxa__free(scratch);
    return st;
}

/* ---- city-block thresholds ------------------------------------------------ */

typedef struct l1_ctx {
    const uint8_t *src;
    void *f;           /* uint8 (cap <= 254) or uint32 */
    int wide;
    uint32_t cap;      /* r + 1 */
    int64_t n, inner, nchunk;
    int target, border;
    char *scratch;
    size_t per;
    int final;         /* the last pass: write (d <= r) ^ inv into out */
    uint32_t r;
    uint8_t inv;
    uint8_t *out;
} l1_ctx;

/* Rows: the distance to the previous target, then to the next, saturated
 * at cap = r + 1, straight into the storage (branch-free scans; the storage
 * may be the source: each voxel is read before it is written). The scan is
 * a chain of dependent steps, so RG rows advance together (independent
 * chains the CPU overlaps); a remainder runs one row at a time. */
#define RG 8
#define L1_ROWS(T, G)                                                          \
    do {                                                                       \
        uint32_t run[G];                                                       \
        for (int k = 0; k < (G); k++) run[k] = c->border ? 0 : cap;           \
        for (int64_t x = 0; x < n; x++)                                        \
            for (int k = 0; k < (G); k++) {                                    \
                uint32_t t = run[k] + 1 > cap ? cap : run[k] + 1;              \
                run[k] = ((s[k * n + x] != 0) == tv) ? 0 : t;                  \
                dst[k * n + x] = (T)run[k];                                    \
            }                                                                  \
        /* dst == 0 exactly at targets (s may be dst: out aliases src) */     \
        for (int k = 0; k < (G); k++) run[k] = c->border ? 0 : cap;           \
        for (int64_t x = n - 1; x >= 0; x--)                                   \
            for (int k = 0; k < (G); k++) {                                    \
                T cur = dst[k * n + x];                                        \
                uint32_t t = run[k] + 1 > cap ? cap : run[k] + 1;              \
                run[k] = cur == 0 ? 0 : t;                                     \
                if (run[k] < cur) dst[k * n + x] = (T)run[k];                  \
            }                                                                  \
    } while (0)

static voxa_status l1_first(int64_t lo, int64_t hi, int tid, void *vc) {
    const l1_ctx *c = vc;
    (void)tid;
    int64_t n = c->n;
    const uint8_t tv = (uint8_t)(c->target != 0);
    const uint32_t cap = c->cap;
    int64_t r = lo;
    for (; r + RG <= hi; r += RG) {
        const uint8_t *s = c->src + r * n;
        if (c->wide) {
            uint32_t *dst = (uint32_t *)c->f + r * n;
            L1_ROWS(uint32_t, RG);
        } else {
            uint8_t *dst = (uint8_t *)c->f + r * n;
            L1_ROWS(uint8_t, RG);
        }
    }
    for (; r < hi; r++) {
        const uint8_t *s = c->src + r * n;
        if (c->wide) {
            uint32_t *dst = (uint32_t *)c->f + r * n;
            L1_ROWS(uint32_t, 1);
        } else {
            uint8_t *dst = (uint8_t *)c->f + r * n;
            L1_ROWS(uint8_t, 1);
        }
    }
    return VOXA_OK;
}

/* The forward scan of a group of w columns (after the border clamp). */
#define L1_FORWARD(T)                                                          \
    do {                                                                       \
        if (c->border)                                                         \
            for (int64_t j = 0; j < w; j++) b[j] = b[j] > 1 ? 1 : b[j];         \
        for (int64_t q = 1; q < n; q++) {                                      \
            T *cur = b + q * inner, *prev = cur - inner;                       \
            for (int64_t j = 0; j < w; j++) {                                  \
                T v = (T)(prev[j] + 1 > cap ? cap : prev[j] + 1);              \
                cur[j] = v < cur[j] ? v : cur[j];                              \
            }                                                                  \
        }                                                                      \
    } while (0)

#define L1_SCAN(T)                                                             \
    do {                                                                       \
        T *b = (T *)c->f + base;                                               \
        const T cap = (T)c->cap;                                               \
        L1_FORWARD(T);                                                         \
        if (c->border) {                                                       \
            T *e = b + (n - 1) * inner;                                        \
            for (int64_t j = 0; j < w; j++) e[j] = e[j] > 1 ? 1 : e[j];         \
        }                                                                      \
        for (int64_t q = n - 2; q >= 0; q--) {                                 \
            T *cur = b + q * inner, *prev = cur + inner;                       \
            for (int64_t j = 0; j < w; j++) {                                  \
                T v = (T)(prev[j] + 1 > cap ? cap : prev[j] + 1);              \
                cur[j] = v < cur[j] ? v : cur[j];                              \
            }                                                                  \
        }                                                                      \
    } while (0)

/* The last pass: the backward scan keeps the distances of the row below in
 * `run` and writes (d <= r) ^ inv, so no separate thresholding pass over
 * the volume is needed. */
#define L1_SCAN_FINAL(T)                                                       \
    do {                                                                       \
        T *b = (T *)c->f + base;                                               \
        uint8_t *ob = c->out + base;                                           \
        const T cap = (T)c->cap;                                               \
        L1_FORWARD(T);                                                         \
        T *e = b + (n - 1) * inner;                                            \
        uint8_t *oe = ob + (n - 1) * inner;                                    \
        for (int64_t j = 0; j < w; j++) {                                      \
            T v = c->border && e[j] > 1 ? 1 : e[j];                            \
            run[j] = v;                                                        \
            oe[j] = (uint8_t)((v <= rr) ^ inv);                                \
        }                                                                      \
        for (int64_t q = n - 2; q >= 0; q--) {                                 \
            T *cur = b + q * inner;                                            \
            uint8_t *oc = ob + q * inner;                                      \
            for (int64_t j = 0; j < w; j++) {                                  \
                uint32_t v = run[j] + 1 > c->cap ? c->cap : run[j] + 1;        \
                v = v < cur[j] ? v : cur[j];                                   \
                run[j] = v;                                                    \
                oc[j] = (uint8_t)((v <= rr) ^ inv);                            \
            }                                                                  \
        }                                                                      \
    } while (0)

static voxa_status l1_lines(int64_t lo, int64_t hi, int tid, void *vc) {
    const l1_ctx *c = vc;
    int64_t n = c->n, inner = c->inner;
    uint32_t *run = (uint32_t *)(c->scratch + (size_t)tid * c->per);
    const uint32_t rr = c->r;
    const uint8_t inv = c->inv;
    for (int64_t it = lo; it < hi; it++) {
        int64_t o = it / c->nchunk, i0 = (it % c->nchunk) * 256;
        int64_t w = inner - i0 < 256 ? inner - i0 : 256;
        int64_t base = o * n * inner + i0;
        if (c->final && c->wide) L1_SCAN_FINAL(uint32_t);
        else if (c->final) L1_SCAN_FINAL(uint8_t);
        else if (c->wide) L1_SCAN(uint32_t);
        else L1_SCAN(uint8_t);
    }
    return VOXA_OK;
}

voxa_status voxa__l1_threshold(int ndim, const int64_t *shape, const uint8_t *src,
                               int target, int border, int64_t r, int invert,
                               uint8_t *out) {
    int64_t total = 1, maxn = 1;
    for (int d = 0; d < ndim; d++) {
        total *= shape[d];
        if (shape[d] > maxn) maxn = shape[d];
    }
    if (total == 0) return VOXA_OK;
    voxa_status st = VOXA_OK;
    l1_ctx c;
    memset(&c, 0, sizeof c);
    c.src = src;
    c.target = target;
    c.border = border;
    c.cap = r + 1 > 0x7fffffff ? 0x7fffffff : (uint32_t)(r + 1);
    c.wide = r > 253;
    void *wide = NULL;
    int nt;
    c.per = (size_t)(maxn > 256 ? maxn : 256) * 4;
    c.r = (uint32_t)(r > 0x7ffffffe ? 0x7ffffffe : r);
    c.inv = (uint8_t)(invert != 0);
    c.out = out;
    c.scratch = voxa__thread_scratch(1, c.per, &nt);
    VOXA_GOTO_IF(!c.scratch, VOXA_ENOMEM, "morph: cannot allocate line scratch");
    if (c.wide) {
        wide = voxa__malloc((size_t)total, 4);
        VOXA_GOTO_IF(!wide, VOXA_ENOMEM, "morph: cannot allocate %lld voxels", (long long)total);
        c.f = wide;
    } else {
        c.f = out; /* distances saturate at r+1 <= 254 and live in the output */
    }
    c.n = shape[ndim - 1];
    if ((st = voxa__parallel_for_nt(total / c.n, voxa__grain(c.n), nt, l1_first, &c))) goto done;
    int64_t inner = c.n;
    for (int d = ndim - 2; d >= 0; d--) {
        c.n = shape[d];
        c.inner = inner;
        c.nchunk = (inner + 255) / 256;
        c.final = d == 0;
        if ((st = voxa__parallel_for_nt(total / (c.n * inner) * c.nchunk, voxa__grain(c.n * 256), nt, l1_lines, &c))) goto done;
        inner *= c.n;
    }
    const uint8_t inv = (uint8_t)(invert != 0);
    if (ndim > 1) {
        /* thresholded by the last pass */
    } else if (c.wide) {
        const uint32_t *f = wide, rr = (uint32_t)(r > 0x7ffffffe ? 0x7ffffffe : r);
        for (int64_t i = 0; i < total; i++) out[i] = (uint8_t)((f[i] <= rr) ^ inv);
    } else {
        const uint8_t rr = (uint8_t)r;
        for (int64_t i = 0; i < total; i++) out[i] = (uint8_t)((out[i] <= rr) ^ inv);
    }
done:
    voxa__free(wide);
    voxa__free(c.scratch);
    return st;
}
