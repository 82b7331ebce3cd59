/* Exact binary morphology with a small footprint, on bit-packed rows.
 *
 *     out[v] = OR over offsets o in O of X[v + o]   (X outside = `outside`)
 *
 * the same contract as voxa__offsets_or (erosion = NOT OR NOT with the
 * border negated), 64 voxels per machine word instead of one.
 *
 * The offsets are grouped by their slow-axes prefix (o_0 .. o_{nd-2}) and
 * merged into maximal runs [a, a + w - 1] along the fastest axis (as in
 * morph_general.c). Two phases, each parallel over rows with disjoint writes:
 *
 *   1. every input row is packed into an extended bit row
 *          E = [outside x L | X[0 .. n-1] | outside x Rr]
 *      (L = max(0, -min a), Rr = max(0, max b)), and for every distinct run
 *      width w the row D_w[i] = OR_{t<w} E[i + t] is stored. D_w comes from
 *      log-step doubling, D_2p = D_p | (D_p >> p), then D_w = D_p | (D_p >>
 *      (w - p)) with p the largest power of two <= w:
 *
 *          E    . . # . . . . #      w = 3:  D_2 = E | E>>1
 *          D_3  # # # . . # # #              D_3 = D_2 | D_2>>1
 *
 *   2. an output row is OR over the element's runs of D_w of the source row
 *      (prefix applied) read from bit a + L (one funnel shift per word);
 *      a source row outside the volume contributes `outside` everywhere.
 *      The bits are expanded back to bytes (^ negate_out).
 *
 * Cost: phase 1 O(N/64 * (sum over widths of 1 + log2 w)), phase 2
 * O(N/64 * runs) word operations plus O(N) packing/unpacking; runs ~ the
 * element's cross-section (pi R^2 for a 3D ball). Memory: widths * (n + L +
 * Rr + 128) bits per row (~ widths / 8 bytes per voxel for long rows).
 * All of phase 1 is written before phase 2 starts, so out may alias src.
 * Results do not depend on the thread count (every row is a pure function of
 * the packed input). Assumes a little-endian byte order (x86-64, aarch64). */
#include "morph_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct brun {
    int64_t pre[VOXA_MAXDIM]; /* prefix offsets, axes 0..nd-2 */
    int64_t a, b;
    int wi;                   /* index of the width b - a + 1 in widths[] */
} brun;

typedef struct bits_ctx {
    const uint8_t *src;
    uint8_t *out;
    int nd;
    const int64_t *shape;
    int64_t n, nrows;
    int negate_in, outside, negate_out;
    const brun *runs;
    int64_t nruns;
    const int64_t *widths;
    int nwid;
    int64_t L, ne, nwe, nw;
    uint64_t *tab;            /* nwid x nrows x nwe words */
    uint64_t *scratch;        /* per thread: nwe words */
    int64_t *roff;            /* per run: word offset of its source in tab
                                 relative to the output row's (row r: r * nwe) */
    int *rsh;                 /* per run: bit shift within the word */
    int64_t pmin[VOXA_MAXDIM], pmax[VOXA_MAXDIM]; /* prefix range over runs */
} bits_ctx;

#define LOW7 0x7F7F7F7F7F7F7F7FULL
#define HIGH1 0x8080808080808080ULL
#define ONES8 0x0101010101010101ULL

/* 8 bytes (non-zero = 1) -> 8 bits, byte i -> bit i. */
static inline uint64_t pack8(const uint8_t *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    x = (((x & LOW7) + LOW7) | x) & HIGH1; /* high bit of each non-zero byte */
    return ((x >> 7) * 0x0102040810204080ULL) >> 56;
}

/* Bits [0, cnt) of a word from row bytes p[0 .. cnt-1], cnt <= 64. */
static inline uint64_t pack_word(const uint8_t *p, int64_t cnt) {
    uint64_t w = 0;
    int64_t i = 0;
    for (; i + 8 <= cnt; i += 8) w |= pack8(p + i) << i;
    for (; i < cnt; i++) w |= (uint64_t)(p[i] != 0) << i;
    return w;
}

/* Set bits [pos, pos + cnt) of dst to the low cnt bits of v (cnt 1..64). */
static inline void set_bits(uint64_t *dst, int64_t pos, uint64_t v, int64_t cnt) {
    uint64_t m = cnt == 64 ? ~0ULL : (1ULL << cnt) - 1;
    int64_t j = pos >> 6, s = pos & 63;
    v &= m;
    dst[j] = (dst[j] & ~(m << s)) | (v << s);
    if (s && s + cnt > 64) dst[j + 1] = (dst[j + 1] & ~(m >> (64 - s))) | (v >> (64 - s));
}

/* Bits [pos, pos + 64) of row d (nw words); words past the end read `fill`. */
static inline uint64_t get_bits(const uint64_t *d, int64_t nw, int64_t pos, uint64_t fill) {
    int64_t j = pos >> 6, s = pos & 63;
    uint64_t lo = j < nw ? d[j] : fill;
    if (!s) return lo;
    uint64_t hi = j + 1 < nw ? d[j + 1] : fill;
    return (lo >> s) | (hi << (64 - s));
}

/* Phase 1: pack rows and store D_w for every distinct width. */
static voxa_status width_rows(int64_t lo, int64_t hi, int tid, void *vc) {
    const bits_ctx *c = vc;
    int64_t n = c->n, nwe = c->nwe;
    uint64_t fill = c->outside ? ~0ULL : 0;
    uint64_t inv = c->negate_in ? ~0ULL : 0;
    uint64_t *cur = c->scratch + (size_t)tid * (size_t)nwe;
    for (int64_t r = lo; r < hi; r++) {
        const uint8_t *s = c->src + r * n;
        for (int64_t j = 0; j < nwe; j++) cur[j] = fill;
        for (int64_t x = 0; x < n; x += 64) {
            int64_t cnt = n - x < 64 ? n - x : 64;
            set_bits(cur, c->L + x, pack_word(s + x, cnt) ^ inv, cnt);
        }
        int64_t p = 1;
        for (int k = 0; k < c->nwid; k++) {
            int64_t w = c->widths[k];
            while (2 * p <= w) { /* in place, ascending: reads words >= j only */
                for (int64_t j = 0; j < nwe; j++) cur[j] |= get_bits(cur, nwe, j * 64 + p, fill);
                p *= 2;
            }
            uint64_t *d = c->tab + ((size_t)k * (size_t)c->nrows + (size_t)r) * (size_t)nwe;
            int64_t sh = w - p;
            if (!sh) memcpy(d, cur, (size_t)nwe * sizeof *d);
            else
                for (int64_t j = 0; j < nwe; j++) d[j] = cur[j] | get_bits(cur, nwe, j * 64 + sh, fill);
        }
    }
    return VOXA_OK;
}

/* Phase 2: OR the runs' shifted width rows into each output row. */
static voxa_status out_rows(int64_t lo, int64_t hi, int tid, void *vc) {
    const bits_ctx *c = vc;
    int64_t n = c->n, nw = c->nw, nwe = c->nwe;
    int nd = c->nd;
    uint64_t *acc = c->scratch + (size_t)tid * (size_t)nwe; /* nw <= nwe */
    const uint64_t flip = c->negate_out ? ONES8 : 0;
    for (int64_t r = lo; r < hi; r++) {
        int64_t idx[VOXA_MAXDIM];
        int64_t t = r;
        for (int d = nd - 2; d >= 0; d--) {
            idx[d] = t % c->shape[d];
            t /= c->shape[d];
        }
        for (int64_t j = 0; j < nw; j++) acc[j] = 0;
        int full = 0, interior = 1;
        for (int d = 0; d < nd - 1; d++)
            interior &= idx[d] + c->pmin[d] >= 0 && idx[d] + c->pmax[d] < c->shape[d];
        const uint64_t *base = c->tab + r * nwe;
        if (interior) { /* the common case: no bounds, accumulate in a register */
            for (int64_t j = 0; j < nw; j++) {
                uint64_t a0 = 0;
                for (int64_t k = 0; k < c->nruns; k++) {
                    const uint64_t *dr = base + c->roff[k] + j;
                    int b = c->rsh[k];
                    a0 |= b ? (dr[0] >> b) | (dr[1] << (64 - b)) : dr[0];
                }
                acc[j] = a0;
            }
        }
        for (int64_t k = 0; k < c->nruns && !full && !interior; k++) {
            const brun *u = &c->runs[k];
            int inside = 1;
            for (int d = 0; d < nd - 1; d++) {
                int64_t j = idx[d] + u->pre[d];
                if (j < 0 || j >= c->shape[d]) inside = 0;
            }
            if (!inside) {
                if (c->outside) full = 1; /* the whole window is outside = 1 */
                continue;
            }
            /* words roff .. roff + nw of the source row are inside it */
            const uint64_t *dr = base + c->roff[k];
            int b = c->rsh[k];
            if (!b)
                for (int64_t j = 0; j < nw; j++) acc[j] |= dr[j];
            else
                for (int64_t j = 0; j < nw; j++) acc[j] |= (dr[j] >> b) | (dr[j + 1] << (64 - b));
        }
        uint8_t *o = c->out + r * n;
        if (full) {
            memset(o, c->negate_out ? 0 : 1, (size_t)n);
            continue;
        }
        int64_t x = 0;
        for (; x + 8 <= n; x += 8) {
            uint64_t b8 = (acc[x >> 6] >> (x & 63)) & 0xFF;
            uint64_t v = ((((b8 * ONES8) & 0x8040201008040201ULL) + LOW7) >> 7) & ONES8;
            v ^= flip;
            memcpy(o + x, &v, 8);
        }
        for (; x < n; x++) o[x] = (uint8_t)(((acc[x >> 6] >> (x & 63)) & 1) ^ (c->negate_out != 0));
    }
    return VOXA_OK;
}

static int cmp_off(const void *pa, const void *pb) {
    const int64_t *a = pa, *b = pb;
    for (int d = 0; d < VOXA_MAXDIM; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return 0;
}

/* Runs (sorted, merged) and distinct widths (ascending) of an offset list.
 * *runs and *widths are allocated (caller frees). */
static voxa_status make_runs(int nd, const int64_t *offsets, int64_t noff, brun **runs_out,
                             int64_t *nruns_out, int64_t **widths_out, int *nwid_out) {
    voxa_status st = VOXA_OK;
    *runs_out = NULL;
    *widths_out = NULL;
    int64_t *sorted = voxa__calloc((size_t)noff, VOXA_MAXDIM * sizeof(int64_t));
    brun *runs = voxa__malloc((size_t)noff, sizeof(brun));
    int64_t *widths = voxa__malloc((size_t)noff, sizeof(int64_t));
    VOXA_GOTO_IF(!sorted || !runs || !widths, VOXA_ENOMEM, "morph: cannot allocate %lld offsets",
                 (long long)noff);
    for (int64_t i = 0; i < noff; i++)
        memcpy(sorted + i * VOXA_MAXDIM, offsets + i * nd, (size_t)nd * sizeof(int64_t));
    qsort(sorted, (size_t)noff, VOXA_MAXDIM * sizeof(int64_t), cmp_off);
    int64_t nruns = 0;
    for (int64_t i = 0; i < noff; i++) {
        const int64_t *o = sorted + i * VOXA_MAXDIM;
        brun *prev = nruns ? &runs[nruns - 1] : NULL;
        int same = prev != NULL;
        for (int d = 0; same && d < nd - 1; d++) same = prev->pre[d] == o[d];
        if (same && o[nd - 1] <= prev->b + 1) {
            if (o[nd - 1] > prev->b) prev->b = o[nd - 1];
            continue;
        }
        brun *u = &runs[nruns++];
        memset(u, 0, sizeof *u);
        for (int d = 0; d < nd - 1; d++) u->pre[d] = o[d];
        u->a = u->b = o[nd - 1];
    }
    int nwid = 0;
    for (int64_t k = 0; k < nruns; k++) {
        int64_t w = runs[k].b - runs[k].a + 1;
        int i = 0;
        while (i < nwid && widths[i] < w) i++;
        if (i == nwid || widths[i] != w) {
            memmove(widths + i + 1, widths + i, (size_t)(nwid - i) * sizeof *widths);
            widths[i] = w;
            nwid++;
        }
    }
    for (int64_t k = 0; k < nruns; k++) {
        int64_t w = runs[k].b - runs[k].a + 1;
        int i = 0;
        while (widths[i] != w) i++;
        runs[k].wi = i;
    }
    *nruns_out = nruns;
    *nwid_out = nwid;
    *runs_out = runs;
    *widths_out = widths;
    runs = NULL;
    widths = NULL;
done:
    voxa__free(sorted);
    voxa__free(runs);
    voxa__free(widths);
    return st;
}

voxa_status voxa__bits_stats(int ndim, const int64_t *offsets, int64_t noff, int64_t *nruns,
                             int *nwidths) {
    brun *runs;
    int64_t *widths;
    VOXA_CHECK(make_runs(ndim, offsets, noff, &runs, nruns, &widths, nwidths));
    voxa__free(runs);
    voxa__free(widths);
    return VOXA_OK;
}

voxa_status voxa__bits_or(int ndim, const int64_t *shape, const uint8_t *src, int negate_in,
                          const int64_t *offsets, int64_t noff, int outside, int negate_out,
                          uint8_t *out) {
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) total *= shape[d];
    if (total == 0) return VOXA_OK;
    VOXA_FAIL_IF(noff < 1, VOXA_EINVAL, "morph: empty footprint");
    voxa_status st = VOXA_OK;
    brun *runs = NULL;
    int64_t *widths = NULL, nruns = 0;
    int nwid = 0, nt = 1;
    uint64_t *tab = NULL, *scr = NULL;
    bits_ctx c;
    memset(&c, 0, sizeof c);
    VOXA_CHECK(make_runs(ndim, offsets, noff, &runs, &nruns, &widths, &nwid));
    int64_t amin = 0, bmax = 0;
    for (int64_t k = 0; k < nruns; k++) {
        if (runs[k].a < amin) amin = runs[k].a;
        if (runs[k].b > bmax) bmax = runs[k].b;
    }
    c.src = src;
    c.out = out;
    c.nd = ndim;
    c.shape = shape;
    c.n = shape[ndim - 1];
    c.nrows = total / c.n;
    c.negate_in = negate_in != 0;
    c.outside = outside != 0;
    c.negate_out = negate_out != 0;
    c.runs = runs;
    c.nruns = nruns;
    c.widths = widths;
    c.nwid = nwid;
    c.L = -amin;
    c.ne = c.L + c.n + bmax;
    /* two spare words: phase 2 reads words up to (L + a + n + 63) / 64 + 1 */
    c.nwe = (c.ne + 63) / 64 + 2;
    c.nw = (c.n + 63) / 64;
    size_t words;
    VOXA_GOTO_IF(!voxa__mul_size((size_t)nwid * (size_t)c.nrows, (size_t)c.nwe, &words),
                 VOXA_ENOMEM, "morph: bit rows too large");
    tab = voxa__malloc(words, sizeof(uint64_t));
    scr = voxa__thread_scratch((size_t)c.nwe, sizeof(uint64_t), &nt);
    VOXA_GOTO_IF(!tab || !scr, VOXA_ENOMEM, "morph: cannot allocate %zu words of bit rows", words);
    c.tab = tab;
    c.scratch = scr;
    c.roff = voxa__malloc((size_t)nruns, sizeof(int64_t));
    c.rsh = voxa__malloc((size_t)nruns, sizeof(int));
    VOXA_GOTO_IF(!c.roff || !c.rsh, VOXA_ENOMEM, "morph: cannot allocate %lld runs", (long long)nruns);
    for (int d = 0; d < ndim - 1; d++) c.pmin[d] = c.pmax[d] = runs[0].pre[d];
    for (int64_t k = 0; k < nruns; k++) {
        int64_t drow = 0;
        for (int d = 0; d < ndim - 1; d++) {
            drow = drow * shape[d] + runs[k].pre[d];
            if (runs[k].pre[d] < c.pmin[d]) c.pmin[d] = runs[k].pre[d];
            if (runs[k].pre[d] > c.pmax[d]) c.pmax[d] = runs[k].pre[d];
        }
        int64_t sbit = runs[k].a + c.L;
        c.roff[k] = ((int64_t)runs[k].wi * c.nrows + drow) * c.nwe + (sbit >> 6);
        c.rsh[k] = (int)(sbit & 63);
    }
    if ((st = voxa__parallel_for_nt(c.nrows, voxa__grain(c.n * nwid), nt, width_rows, &c)))
        goto done;
    st = voxa__parallel_for_nt(c.nrows, voxa__grain(c.n + nruns * c.nw * 16), nt, out_rows, &c);
done:
    voxa__free(c.roff);
    voxa__free(c.rsh);
    voxa__free(runs);
    voxa__free(widths);
    voxa__free(tab);
    voxa__free(scr);
    return st;
}
