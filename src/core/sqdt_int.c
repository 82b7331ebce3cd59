/* Exact squared EDT, the integer path (unit spacing; values stored as
 * uint32, or uint16 below thresholds of 65535): no division anywhere, the
 * envelope split at zeros, 64 columns gathered per tile; for the EDT (no
 * threshold) rows written run by run and column tiles handed to the
 * windowed kernels of sqdt_window.c, the envelope redoing the columns they
 * cannot settle. See sqdt.c's header for the algorithm, the exactness
 * argument and the memory formula. */
#include "sqdt_internal.h"

#include <string.h>

/* Threshold mode, pass 1 along axis 0 instead of the rows: a forward and a
 * backward scan of "distance since the last target", elementwise over a
 * chunk of contiguous positions (vectorisable, no gather). The rows are then
 * free for the last pass, which reads and writes them contiguously. */
voxa_status voxa__sqdt_first_axis0(int64_t lo, int64_t hi, int tid, void *vc) {
    const stage_ctx *c = vc;
    const voxa__sqdt *p = c->p;
    int64_t n = c->n, inner = c->inner;
    uint32_t *run = (uint32_t *)(c->scratch + (size_t)tid * c->per_thread);
    const uint8_t tv = (uint8_t)(p->target != 0);
    const uint32_t start = p->border ? 0 : 65535, big = 65535; /* run at q = -1 */
    const int64_t icap = c->cap >= 4294967294.0 ? 4294967294LL : (int64_t)c->cap;
    for (int64_t it = lo; it < hi; it++) {
        int64_t i0 = it * ACH, w = inner - i0 < ACH ? inner - i0 : ACH;
        for (int64_t j = 0; j < w; j++) run[j] = start;
        for (int64_t q = 0; q < n; q++) {
            const uint8_t *sq = p->src + q * inner + i0;
            if (c->u16) {
                uint16_t *b = (uint16_t *)c->buf + q * inner + i0;
                for (int64_t j = 0; j < w; j++) {
                    uint32_t r = (sq[j] != 0) == tv ? 0 : run[j] + 1;
                    r = r > big ? big : r;
                    run[j] = r;
                    b[j] = (uint16_t)r;
                }
            } else {
                uint32_t *b = (uint32_t *)c->buf + q * inner + i0;
                for (int64_t j = 0; j < w; j++) {
                    uint32_t r = (sq[j] != 0) == tv ? 0 : run[j] + 1;
                    r = r > big ? big : r;
                    run[j] = r;
                    b[j] = r;
                }
            }
        }
        for (int64_t j = 0; j < w; j++) run[j] = start;
        for (int64_t q = n - 1; q >= 0; q--) {
            const uint8_t *sq = p->src + q * inner + i0;
            if (c->u16) {
                uint16_t *b = (uint16_t *)c->buf + q * inner + i0;
                for (int64_t j = 0; j < w; j++) {
                    uint32_t r = (sq[j] != 0) == tv ? 0 : run[j] + 1;
                    r = r > big ? big : r;
                    run[j] = r;
                    int64_t d = r < b[j] ? r : b[j];
                    b[j] = d >= big || d * d > icap ? UINT16_MAX : (uint16_t)(d * d);
                }
            } else {
                uint32_t *b = (uint32_t *)c->buf + q * inner + i0;
                for (int64_t j = 0; j < w; j++) {
                    uint32_t r = (sq[j] != 0) == tv ? 0 : run[j] + 1;
                    r = r > big ? big : r;
                    run[j] = r;
                    int64_t d = r < b[j] ? r : b[j];
                    b[j] = d >= big || d * d > icap ? UINT32_MAX : (uint32_t)(d * d);
                }
            }
        }
    }
    return VOXA_OK;
}

/* ---- pass 1 on rows, integer EDT (no threshold) ------------------------- */

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* The first x >= x0 whose (s[x] != 0) == want, or n: 16 bytes at a time
 * with SSE2 (baseline x86-64), byte by byte for the tail and elsewhere. */
static inline int64_t find_byte(const uint8_t *s, int64_t x, int64_t n, int want) {
#if defined(__SSE2__)
    const __m128i z = _mm_setzero_si128();
    for (; x + 16 <= n; x += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(s + x)), z));
        if (want) m = ~m & 0xFFFFu; /* non-zero bytes */
        if (m) return x + __builtin_ctz(m);
    }
#endif
    while (x < n && (s[x] != 0) != want) x++;
    return x;
}

/* dst[k] = (d0 + k)^2 for k < len, step +1 or -1; UINT32_MAX past 65535. */
static void ramp(uint32_t *dst, int64_t len, int64_t d0, int step) {
    int64_t k = 0;
    if (step > 0) {
        int64_t ok = 65536 - d0; /* d0 + k <= 65535 */
        int64_t m = ok < len ? (ok > 0 ? ok : 0) : len;
        uint32_t d = (uint32_t)d0;
        for (; k < m; k++) dst[k] = (d + (uint32_t)k) * (d + (uint32_t)k);
        for (; k < len; k++) dst[k] = UINT32_MAX;
    } else {
        int64_t far = d0 - 65535; /* d0 - k > 65535 while k < far */
        for (; k < len && k < far; k++) dst[k] = UINT32_MAX;
        uint32_t d = (uint32_t)(d0 - k);
        for (int64_t i = 0; i < len - k; i++) dst[k + i] = (d - (uint32_t)i) * (d - (uint32_t)i);
    }
}

/* Row r of pass 1 into uint32 storage, when no cap applies (icap >= 65535^2):
 * runs of targets are found 16 bytes at a time and written as zeros; each
 * run of non-targets between them is two ramps, (x - last)^2 up to its
 * middle and (next - x)^2 after (d = min(x - last, next - x), the value
 * sqdt.c's row scan writes). */
void voxa__sqdt_row_int(const stage_ctx *c, int64_t r) {
    const voxa__sqdt *p = c->p;
    const int64_t n = c->n;
    const int tv = p->target != 0;
    const uint8_t *s = p->src + r * n;
    uint32_t *dst = (uint32_t *)c->buf + r * n;
    int64_t x = 0, last = p->border ? -1 : INT64_MIN; /* INT64_MIN: none */
    while (x < n) {
        int64_t t = find_byte(s, x, n, tv);
        int64_t next = t < n ? t : (p->border ? n : INT64_MAX); /* INT64_MAX: none */
        if (last == INT64_MIN && next == INT64_MAX) {
            for (int64_t i = x; i < t; i++) dst[i] = UINT32_MAX;
        } else if (last == INT64_MIN) {
            ramp(dst + x, t - x, next - x, -1);
        } else if (next == INT64_MAX) {
            ramp(dst + x, t - x, x - last, 1);
        } else {
            int64_t mid = (last + next) / 2 + 1; /* x < mid: x - last <= next - x */
            int64_t m = mid < x ? x : mid > t ? t : mid;
            ramp(dst + x, m - x, x - last, 1);
            ramp(dst + m, t - m, next - m, -1);
        }
        if (t == n) break;
        int64_t e = find_byte(s, t, n, !tv);
        memset(dst + t, 0, (size_t)(e - t) * 4);
        last = e - 1;
        x = e;
    }
}

/* The lower envelope of one line, split at its zeros: a parabola rooted
 * beyond a zero (a target of this line, g = 0) is above that zero's own
 * parabola everywhere on the near side, so each run of non-zero values
 * between two zeros (or a zero and a border sentinel, or the line's end)
 * is an independent envelope of its own parabolas plus the two zeros. Zeros
 * are written as 0 with no envelope work: on masks with much background most
 * of every line is skipped. f: n values, UINT32_MAX for none or above cap.
 * In integers: parabola q is h(q) = g(q) + q^2 minus the common x terms;
 * the breakpoint of parabolas a < b, (h_b - h_a) / (2 (b - a)), is compared
 * as a fraction (no division, exact). */
static void envelope_runs(const uint32_t *g, int64_t n, int border, int64_t cap, int64_t *v,
                          int64_t *h, uint32_t *f) {
    int64_t x = 0;
    while (x < n) {
        if (g[x] == 0) {
            f[x++] = 0;
            continue;
        }
        int64_t a = x, b = x + 1;
        while (b < n && g[b] != 0) b++;
        int64_t k = -1;
        if (a > 0 || border) { /* the zero (or sentinel) at a - 1 */
            k = 0;
            v[0] = a - 1;
            h[0] = (a - 1) * (a - 1);
        }
        int64_t qhi = (b < n || border) ? b : b - 1;
        for (int64_t q = a; q <= qhi; q++) {
            int64_t gq = 0;
            if (q < b) {
                if (g[q] == UINT32_MAX || (int64_t)g[q] > cap) continue;
                gq = g[q];
            }
            int64_t hq = gq + q * q;
            while (k >= 1 &&
                   (hq - h[k]) * (v[k] - v[k - 1]) <= (h[k] - h[k - 1]) * (q - v[k]))
                k--;
            k++;
            v[k] = q;
            h[k] = hq;
        }
        if (k < 0) {
            for (; x < b; x++) f[x] = UINT32_MAX;
            continue;
        }
        int64_t j = 0;
        for (; x < b; x++) {
            while (j < k && h[j + 1] - h[j] <= 2 * x * (v[j + 1] - v[j])) j++;
            int64_t d = x - v[j];
            int64_t fv = h[j] - v[j] * v[j] + d * d;
            f[x] = fv > cap ? UINT32_MAX : (uint32_t)fv;
        }
    }
}

/* Lanes j0..j0+L-1 of a tile with the envelope (after the window gave up
 * on them, or while the window is backed off): columns from the copy t. */
static void envelope_lanes(const stage_ctx *c, const uint32_t *t, int64_t w, int64_t j0,
                           int64_t L, int64_t cap, char *dst, int f32, int64_t *v, int64_t *h,
                           uint32_t *col, uint32_t *fo) {
    const int64_t n = c->n, inner = c->inner;
    for (int64_t l = 0; l < L; l++) {
        for (int64_t q = 0; q < n; q++) col[q] = t[q * w + j0 + l];
        envelope_runs(col, n, c->p->border, cap, v, h, fo + l * n);
    }
    for (int64_t q = 0; q < n; q++) {
        if (f32) {
            float *d = (float *)dst + q * inner + j0;
            for (int64_t l = 0; l < L; l++) d[l] = voxa__sqdt_sqrt_f32(fo[l * n + q]);
        } else {
            uint32_t *d = (uint32_t *)dst + q * inner + j0;
            for (int64_t l = 0; l < L; l++) d[l] = fo[l * n + q];
        }
    }
}

/* The windowed pass on one tile (sqdt_window.c's kernels, lanes adjacent
 * columns at a time). The tile's rows are copied first, since the pass
 * writes in place; a set of lanes the kernel gives up on (its budget of
 * steps spent, or a column with no target) is redone with envelope_runs
 * from the copy, and the thread's next calls back off to the envelope (ws:
 * after the k-th give-up in a row, the next 2^k - 1 sets of lanes, at most
 * 2^SQDT_BACKOFF_MAX - 1). */
static void window_tile(const stage_ctx *c, int64_t base, int64_t w, int64_t cap, uint32_t *t,
                        int64_t *v, int64_t *h, uint32_t *col, uint32_t *fo,
                        voxa__sqdt_wstate *ws) {
    const voxa__sqdt *p = c->p;
    const int64_t n = c->n, inner = c->inner;
    const uint32_t *src = (const uint32_t *)c->buf + base;
    for (int64_t q = 0; q < n; q++) memcpy(t + q * w, src + q * inner, (size_t)w * 4);
    const int f32 = c->final && p->mode == VOXA__SQDT_F32;
    /* uint32 storage, or the last pass's float32 / uint32 output (4 bytes) */
    char *dst = (char *)(c->final ? p->out : c->buf) + base * 4;
    /* narrower than the lanes: fewer lanes, or one column at a time */
    const voxa__sqdt_wkern *k = w >= c->wk->lanes ? c->wk : voxa__sqdt_window_narrow(c->wk, w);
    int64_t *skip = &ws->skip[k->slot];
    int *level = &ws->level[k->slot];
    const int64_t L = k->lanes;
    const int64_t per = c->wsteps >= 0 ? c->wsteps : k->steps;
    const int64_t budget = per > INT64_MAX / n ? INT64_MAX : per * n;
    for (int64_t j = 0; j < w; j += L) {
        /* the last lanes may overlap the previous call: same values */
        int64_t j0 = j + L <= w ? j : w - L;
        int done = 0;
        if (*skip > 0) {
            --*skip;
        } else if (k->cols(t, n, w, j0, p->border, budget, dst + j0 * 4, inner, f32) == n) {
            *level = 0;
            done = 1;
        } else {
            if (*level < SQDT_BACKOFF_MAX) ++*level;
            *skip = ((int64_t)1 << *level) - 1;
        }
        if (!done) envelope_lanes(c, t, w, j0, L, cap, dst, f32, v, h, col, fo);
    }
}

/* Every value of the tile is "no target" (UINT32_MAX): then so is every
 * result (no border), e.g. most planes of a mask with a few background
 * voxels. Stops at the first finite value, so other tiles pay little. */
static int tile_all_none(const uint32_t *src, int64_t n, int64_t inner, int64_t w) {
    for (int64_t q = 0; q < n; q++) {
        const uint32_t *r = src + q * inner;
        uint32_t all = UINT32_MAX;
        for (int64_t j = 0; j < w; j++) all &= r[j];
        if (all != UINT32_MAX) return 0;
    }
    return 1;
}

voxa_status voxa__sqdt_slow_lines_int(int64_t lo, int64_t hi, int tid, void *vc) {
    voxa__sqdt_wstate ws = {{0, 0, 0}, {0, 0, 0}};
    return voxa__sqdt_slow_lines_int_skip(lo, hi, tid, vc, &ws);
}

/* ws: the window's back-off (window_tile), carried over calls by the fused
 * pass (one call per slab). */
voxa_status voxa__sqdt_slow_lines_int_skip(int64_t lo, int64_t hi, int tid, void *vc,
                                           voxa__sqdt_wstate *ws) {
    const stage_ctx *c = vc;
    const voxa__sqdt *p = c->p;
    int64_t n = c->n, inner = c->inner;
    char *mem = c->scratch + (size_t)tid * c->per_thread;
    const int64_t tw = c->tw;
    uint32_t *g = (uint32_t *)mem;                 /* tw * n */
    /* v: 8-byte aligned (tw may be odd); the pad fits the formula */
    int64_t *v = (int64_t *)(g + ((tw * (n + 2) + 1) & ~(int64_t)1)); /* n + 2 */
    int64_t *h = v + n + 2;                        /* n + 2 */
    int64_t *reach = h + n + 2;                    /* n + 2 */
    uint32_t *fo = (uint32_t *)(reach + n + 2);    /* tw * n */
    uint32_t *buf = c->buf;
    const int64_t cap = c->cap >= 4294967294.0 ? INT64_MAX : (int64_t)c->cap;
    const int thr_mode = c->final && p->mode == VOXA__SQDT_THRESHOLD;
    const int64_t T = thr_mode ? (int64_t)p->thr : 0;
    const uint8_t on = (uint8_t)(p->invert ? 0 : 1), off = (uint8_t)!on;
    const int window = c->wk && !thr_mode && !c->u16;
    for (int64_t it = lo; it < hi; it++) {
        int64_t o = it / c->nti, i0 = (it % c->nti) * tw;
        int64_t w = inner - i0 < tw ? inner - i0 : tw;
        int64_t base = o * n * inner + i0;
        if (p->mode != VOXA__SQDT_THRESHOLD && !p->border && tile_all_none(buf + base, n, inner, w)) {
            /* results = values: in place (storage, or a uint32 output, which
             * is the storage), or +inf into a float32 output */
            if (c->final && p->mode == VOXA__SQDT_F32)
                for (int64_t q = 0; q < n; q++) {
                    float *dst = (float *)p->out + base + q * inner;
                    for (int64_t j = 0; j < w; j++) dst[j] = INFINITY;
                }
            continue;
        }
        if (window) {
            /* sets of lanes in this tile: while the window is backed off for
             * all of them, the whole tile takes the envelope below */
            const voxa__sqdt_wkern *k =
                w >= c->wk->lanes ? c->wk : voxa__sqdt_window_narrow(c->wk, w);
            int64_t L = k->lanes, sets = (w + L - 1) / L;
            if (ws->skip[k->slot] < sets) {
                window_tile(c, base, w, cap, g, v, h, (uint32_t *)reach, fo, ws);
                continue;
            }
            ws->skip[k->slot] -= sets;
        }
        if (c->u16) {
            for (int64_t q = 0; q < n; q++) {
                const uint16_t *src = (const uint16_t *)c->buf + base + q * inner;
                for (int64_t j = 0; j < w; j++)
                    g[j * n + q] = src[j] == UINT16_MAX ? UINT32_MAX : src[j];
            }
        } else {
            for (int64_t q = 0; q < n; q++) {
                const uint32_t *src = buf + base + q * inner;
                for (int64_t j = 0; j < w; j++) g[j * n + q] = src[j];
            }
        }
        for (int64_t j = 0; j < w; j++) {
            const uint32_t *gl = g + j * n;
            if (thr_mode) {
                /* the last pass only asks "is some g(q) + (x-q)^2 <= T":
                 * a union of intervals [q - w, q + w], w = isqrt(T - g(q)) */
                for (int64_t x = 0; x < n; x++) reach[x] = -1;
                int64_t lead = -1; /* reach of the sentinel at q = -1 */
                if (p->border) {
                    int64_t r = isqrt_of(c, T);
                    lead = r - 1;
                    int64_t s0 = n - r < 0 ? 0 : n - r;
                    if (s0 < n) reach[s0] = n;
                }
                for (int64_t q = 0; q < n; q++) {
                    int64_t gq = gl[q];
                    if (gl[q] == UINT32_MAX || gq > T) continue;
                    int64_t r = isqrt_of(c, T - gq);
                    int64_t s0 = q - r < 0 ? 0 : q - r;
                    if (q + r > reach[s0]) reach[s0] = q + r;
                }
                uint8_t *out = (uint8_t *)p->out + base + j;
                int64_t cur = lead;
                for (int64_t x = 0; x < n; x++) {
                    if (reach[x] > cur) cur = reach[x];
                    out[x * inner] = cur >= x ? on : off;
                }
                continue;
            }
        }
        if (thr_mode) continue;
        /* every column's envelope into fo, then written back row by row
         * (contiguous runs of w values instead of w strided scatters) */
        for (int64_t j = 0; j < w; j++)
            envelope_runs(g + j * n, n, p->border, cap, v, h, fo + j * n);
        if (!c->final && c->u16) {
            for (int64_t x = 0; x < n; x++) {
                uint16_t *dst = (uint16_t *)c->buf + base + x * inner;
                for (int64_t j = 0; j < w; j++) {
                    uint32_t fv = fo[j * n + x];
                    dst[j] = fv == UINT32_MAX ? UINT16_MAX : (uint16_t)fv;
                }
            }
        } else if (!c->final || p->mode == VOXA__SQDT_U32_SQ) {
            uint32_t *dst0 = c->final ? (uint32_t *)p->out : buf;
            for (int64_t x = 0; x < n; x++) {
                uint32_t *dst = dst0 + base + x * inner;
                for (int64_t j = 0; j < w; j++) dst[j] = fo[j * n + x];
            }
        } else if (p->mode == VOXA__SQDT_F32) {
            for (int64_t x = 0; x < n; x++) {
                float *dst = (float *)p->out + base + x * inner;
                for (int64_t j = 0; j < w; j++) dst[j] = voxa__sqdt_sqrt_f32(fo[j * n + x]);
            }
        } else {
            for (int64_t x = 0; x < n; x++)
                for (int64_t j = 0; j < w; j++) {
                    uint32_t fv = fo[j * n + x];
                    emit(p, base + x * inner + j, fv == UINT32_MAX ? INFINITY : (double)fv);
                }
        }
    }
    return VOXA_OK;
}

/* Storage choice: 0 none (float64 output holds it), 2/4 integer, 8 double. */
