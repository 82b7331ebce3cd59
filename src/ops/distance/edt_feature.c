/* The Euclidean feature transform (each voxel's nearest background voxel),
 * with scipy.ndimage's choice among equally near ones.
 *
 * Maurer, Qi & Raghavan (PAMI 2003): one pass per axis, in scipy's order
 * (axis 0 first, the last axis last). A pass walks every line along its axis
 * and keeps, from the features the earlier passes found for the line's
 * voxels, the stack of those whose Voronoi cells cross the line; each voxel
 * then takes the first stack entry from which the next is not strictly
 * nearer. Which of two equidistant voxels wins depends on exactly these
 * rules - a site is dropped only when the test below is strictly positive,
 * the walk advances only on a strictly smaller distance - and on the
 * arithmetic: distances are summed axis by axis in double precision from
 * integer differences scaled by the spacing, as scipy does, so the answer
 * is scipy's to the voxel, ties and anisotropic spacing included.
 * Lines are independent: they run in parallel, the answer does not depend
 * on the thread count. Cost: O(ndim N) (O(ndim^2 N) with a spacing);
 * memory: the nd int32 coordinate planes; scratch: one line per thread. */
#include "edt_internal.h"

#include <string.h>

typedef struct ft_pass {
    int nd, axis;
    const int64_t *shape;
    const double *sp;  /* spacing or NULL */
    int32_t *feat;     /* nd planes of n: the feature's coordinates;
                          plane 0 holds -1 where none is known yet */
    int64_t n;
    int64_t len, inner;
    char *scratch;
    size_t per;
} ft_pass;

/* ((a - b) * s)^2 as scipy computes one axis' term. */
static inline double term(int64_t a, int64_t b, const double *sp, int d) {
    double t = (double)(a - b);
    if (sp) t *= sp[d];
    return t * t;
}

/* Squared distance from voxel x of the line to feature s, summed over the
 * axes in order as scipy does (the order matters only with a spacing: with
 * unit spacing every term is an integer and the sum exact, so the off-axis
 * part w computed once per feature gives the same value). */
static inline double dist2(const int64_t *s, double w, const int64_t *coor, int64_t x,
                           const ft_pass *c) {
    if (!c->sp) return w + (double)(s[c->axis] - x) * (double)(s[c->axis] - x);
    double t = 0;
    for (int k = 0; k < c->nd; k++) t += term(s[k], k == c->axis ? x : coor[k], c->sp, k);
    return t;
}

static voxa_status ft_lines(int64_t lo, int64_t hi, int tid, void *vc) {
    const ft_pass *c = vc;
    const int nd = c->nd, d = c->axis;
    const int64_t len = c->len, inner = c->inner;
    const double *sp = c->sp;
    int64_t *f = (int64_t *)(c->scratch + (size_t)tid * c->per); /* len x nd */
    int64_t *g = f + len * nd;                                    /* the stack */
    double *w = (double *)(g + len);                              /* off-axis d2 */
    for (int64_t it = lo; it < hi; it++) {
        int64_t base = (it / inner) * len * inner + it % inner, coor[VOXA_MAXDIM];
        for (int64_t r = base, k = nd - 1; k >= 0; k--) {
            coor[k] = r % c->shape[k];
            r /= c->shape[k];
        }
        int64_t l = -1;
        for (int64_t q = 0; q < len; q++) {
            int64_t at = base + q * inner;
            if (c->feat[at] < 0) continue;
            int64_t *fv = f + q * nd;
            for (int k = 0; k < nd; k++) fv[k] = c->feat[k * c->n + at];
            double wr = 0;
            for (int k = 0; k < nd; k++)
                if (k != d) wr += term(fv[k], coor[k], sp, k);
            w[q] = wr;
            /* drop the top site while the new one and the one below it hide
             * it on the whole line (strictly) */
            while (l >= 1) {
                const int64_t *v = f + g[l] * nd, *u = f + g[l - 1] * nd;
                double a = (double)(v[d] - u[d]), b = (double)(fv[d] - v[d]);
                if (sp) {
                    a *= sp[d];
                    b *= sp[d];
                }
                double cc = a + b;
                if (cc * w[g[l]] - b * w[g[l - 1]] - a * wr - a * b * cc <= 0.0) break;
                --l;
            }
            g[++l] = q;
        }
        if (l < 0) continue; /* no feature on this line yet */
        int64_t maxl = l;
        l = 0;
        for (int64_t x = 0; x < len; x++) {
            double d1 = dist2(f + g[l] * nd, w[g[l]], coor, x, c), d2;
            while (l < maxl && !(d1 <= (d2 = dist2(f + g[l + 1] * nd, w[g[l + 1]], coor, x, c)))) {
                d1 = d2;
                ++l;
            }
            const int64_t *s = f + g[l] * nd;
            for (int k = 0; k < nd; k++) c->feat[k * c->n + base + x * inner] = (int32_t)s[k];
        }
    }
    return VOXA_OK;
}

voxa_status voxa__edt_feature(const uint8_t *src, int nd, const int64_t *shape,
                              const double *spacing, int32_t *feat) {
    int64_t n = 1, maxn = 1;
    for (int d = 0; d < nd; d++) {
        n *= shape[d];
        maxn = shape[d] > maxn ? shape[d] : maxn;
    }
    for (int k = 0; k < nd; k++)
        VOXA_FAIL_IF(shape[k] > INT32_MAX, VOXA_EOVERFLOW,
                     "edt: indices are int32; axis %d has %lld voxels", k, (long long)shape[k]);
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < nd; k++) feat[k * n + i] = (int32_t)idx[k];
        if (src[i]) feat[i] = -1;
        for (int k = nd - 1; k >= 0 && ++idx[k] == shape[k]; k--) idx[k] = 0;
    }
    ft_pass c = {nd, 0, shape, spacing, feat, n, 0, 0, NULL, 0};
    c.per = (size_t)maxn * ((size_t)nd * 8 + 16);
    int nt;
    c.scratch = voxa__thread_scratch(1, c.per, &nt);
    VOXA_FAIL_IF(!c.scratch, VOXA_ENOMEM, "edt: cannot allocate the feature transform's scratch");
    voxa_status st = VOXA_OK;
    for (int d = 0; d < nd && st == VOXA_OK; d++) {
        c.axis = d;
        c.len = shape[d];
        c.inner = 1;
        for (int k = d + 1; k < nd; k++) c.inner *= shape[k];
        st = voxa__parallel_for_nt(n / c.len, voxa__grain(c.len * nd), nt, ft_lines, &c);
    }
    voxa__free(c.scratch);
    return st;
}
