/* Exact binary morphology with an arbitrary footprint, by run decomposition.
 *
 *     out[v] = OR over offsets o in O of X[v + o]   (X outside = `outside`)
 *
 * Erosion is the same with X negated, outside negated and the result
 * negated (AND = NOT OR NOT), so one kernel serves both.
 *
 * The offsets are grouped by their slow-axes prefix (o_0 .. o_{nd-2}) and,
 * within a prefix, merged into maximal runs [a, b] along the fastest axis:
 *
 *        . # # # .        prefix (dz, dy) = (0, -1): run [-1, 1]
 *        # # # # #        prefix (0,  0): run [-2, 2]
 *        . # # # .        prefix (0, +1): run [-1, 1]
 *
 * "Does X have a 1 in [x+a, x+b] of row R" is one comparison once the row is
 * known as last[x] = the last index <= x where X is 1 (-1 if none):
 * last[min(x+b, n-1)] >= max(x+a, 0). last[] is computed once for the whole
 * volume (int32, 4 bytes/voxel), so each run costs one compare per voxel:
 * total O(N * runs), runs ~ (element width)^(ndim-1). For balls, diamonds and
 * boxes the distance/interval paths are used instead (cost independent of
 * size); this path is for everything else and is exact for any footprint.
 * Since last[] is built before any output is written, out may alias src. */
#include "morph_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct run {
    int64_t pre[VOXA_MAXDIM]; /* prefix offsets, axes 0..nd-2 */
    int64_t a, b;
} run;

typedef struct gen_ctx {
    const uint8_t *src;
    int32_t *last;
    uint8_t *out;
    int nd;
    const int64_t *shape;
    int64_t n;
    int negate_in, outside, negate_out;
    const run *runs;
    int64_t nruns;
} gen_ctx;

/* Offsets are sorted as rows of VOXA_MAXDIM values (unused axes 0), so the
 * comparator needs no context. */
static int cmp_off_qsort(const void *pa, const void *pb) {
    const int64_t *a = pa, *b = pb;
    for (int d = 0; d < VOXA_MAXDIM; d++)
        if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
    return 0;
}

static voxa_status last_rows(int64_t lo, int64_t hi, int tid, void *vc) {
    const gen_ctx *c = vc;
    int64_t n = c->n;
    const uint8_t one = (uint8_t)(c->negate_in ? 0 : 1);
    for (int64_t r = lo; r < hi; r++) {
        const uint8_t *s = c->src + r * n;
        int32_t *l = c->last + r * n;
        int32_t p = -1;
        for (int64_t x = 0; x < n; x++) {
            if ((s[x] != 0) == one) p = (int32_t)x;
            l[x] = p;
        }
    }
    return VOXA_OK;
}

static voxa_status out_rows(int64_t lo, int64_t hi, int tid, void *vc) {
    const gen_ctx *c = vc;
    int64_t n = c->n;
    int nd = c->nd;
    for (int64_t r = lo; r < hi; r++) {
        uint8_t *o = c->out + r * n;
        int64_t idx[VOXA_MAXDIM];
        int64_t t = r;
        for (int d = nd - 2; d >= 0; d--) {
            idx[d] = t % c->shape[d];
            t /= c->shape[d];
        }
        memset(o, 0, (size_t)n);
        int full = 0;
        for (int64_t k = 0; k < c->nruns && !full; k++) {
            const run *u = &c->runs[k];
            int64_t srow = 0, inside = 1;
            for (int d = 0; d < nd - 1; d++) {
                int64_t j = idx[d] + u->pre[d];
                if (j < 0 || j >= c->shape[d]) inside = 0;
                srow = srow * c->shape[d] + j;
            }
            if (!inside) {
                if (c->outside) full = 1; /* the whole window is outside = 1 */
                continue;
            }
            const int32_t *l = c->last + srow * n;
            int64_t a = u->a, b = u->b;
            /* x where the window is inside [0, n-1]: x+a >= 0 and x+b <= n-1 */
            int64_t x0 = -a > 0 ? -a : 0, x1 = n - 1 - b < n - 1 ? n - 1 - b : n - 1;
            for (int64_t x = 0; x < n; x++) {
                if (x == x0 && x0 <= x1) {
                    const int32_t *lb = l + b;
                    for (int64_t y = x0; y <= x1; y++) o[y] |= lb[y] >= (int32_t)(y + a);
                    x = x1;
                    continue;
                }
                int64_t lo2 = x + a, hi2 = x + b;
                if (c->outside && (lo2 < 0 || hi2 > n - 1)) {
                    o[x] = 1;
                    continue;
                }
                if (lo2 < 0) lo2 = 0;
                if (hi2 > n - 1) hi2 = n - 1;
                if (lo2 <= hi2 && l[hi2] >= lo2) o[x] = 1;
            }
        }
        if (full) memset(o, 1, (size_t)n);
        if (c->negate_out)
            for (int64_t x = 0; x < n; x++) o[x] ^= 1;
    }
    return VOXA_OK;
}

voxa_status voxa__offsets_or(int ndim, const int64_t *shape, const uint8_t *src,
                             int negate_in, const int64_t *offsets, int64_t noff,
                             int outside, int negate_out, uint8_t *out) {
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) total *= shape[d];
    if (total == 0) return VOXA_OK;
    VOXA_FAIL_IF(noff < 1, VOXA_EINVAL, "morph: empty footprint");
    voxa_status st = VOXA_OK;
    int64_t *sorted = voxa__calloc((size_t)noff, VOXA_MAXDIM * sizeof(int64_t));
    run *runs = voxa__malloc((size_t)noff, sizeof(run));
    int32_t *last = NULL;
    VOXA_GOTO_IF(!sorted || !runs, VOXA_ENOMEM, "morph: cannot allocate %lld offsets",
                 (long long)noff);
    for (int64_t i = 0; i < noff; i++)
        memcpy(sorted + i * VOXA_MAXDIM, offsets + i * ndim, (size_t)ndim * sizeof(int64_t));
    qsort(sorted, (size_t)noff, VOXA_MAXDIM * sizeof(int64_t), cmp_off_qsort);
    int64_t nruns = 0;
    for (int64_t i = 0; i < noff; i++) {
        const int64_t *o = sorted + i * VOXA_MAXDIM;
        run *prev = nruns ? &runs[nruns - 1] : NULL;
        int same = prev != NULL;
        for (int d = 0; same && d < ndim - 1; d++) same = prev->pre[d] == o[d];
        if (same && o[ndim - 1] <= prev->b + 1) {
            if (o[ndim - 1] > prev->b) prev->b = o[ndim - 1];
            continue;
        }
        run *u = &runs[nruns++];
        memset(u, 0, sizeof *u);
        for (int d = 0; d < ndim - 1; d++) u->pre[d] = o[d];
        u->a = u->b = o[ndim - 1];
    }
    VOXA_GOTO_IF(shape[ndim - 1] >= INT32_MAX, VOXA_EUNSUPPORTED,
                 "morph: rows longer than 2^31-1 voxels are not supported by footprint morphology");
    last = voxa__malloc((size_t)total, sizeof(int32_t));
    VOXA_GOTO_IF(!last, VOXA_ENOMEM, "morph: cannot allocate %lld voxels", (long long)total);
    gen_ctx c = {src, last, out, ndim, shape, shape[ndim - 1], negate_in != 0, outside != 0,
                 negate_out != 0, runs, nruns};
    if ((st = voxa__parallel_for(total / c.n, voxa__grain(c.n), last_rows, &c))) goto done;
    st = voxa__parallel_for(total / c.n, voxa__grain(c.n * nruns), out_rows, &c);
done:
    voxa__free(sorted);
    voxa__free(runs);
    voxa__free(last);
    return st;
}
