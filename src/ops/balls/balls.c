/* Balls around float points (workload W1).
 *
 * Voxel v is inside the ball of point p (radius r, spacing s) iff
 *     t_0 + t_1 + ... + t_{n-1} <= r*r,   t_d = ((v_d - p_d) * s_d)^2,
 * evaluated in double precision and summed left to right, exactly as a NumPy
 * brute force writes it. Instead of testing every voxel against every point
 * (O(V x N)), each point paints its own ball:
 *
 *   - a bounding box per axis from r / s_d, widened by one voxel and then
 *     shrunk with the exact one-term test (the sum of non-negative terms is
 *     never below any one of them, also after rounding, so this is safe);
 *   - for every line of the ball along the last axis, the partial sum of the
 *     other axes' terms is fixed, and the set of x with
 *     fl(partial + t_x) <= r*r is an interval (rounding is monotone), found
 *     from a sqrt estimate corrected by the exact test at both ends;
 *   - the run is written with memset (mask) or a compare-and-set (owner).
 *
 * Cost: O(N r^(n-1)) run computations + O(ball voxels) writes + O(V) to clear
 * the output. Memory: the output plus O(N) for the sorted point order.
 *
 * Threads: the output is split into slabs along axis 0; a slab visits the
 * points whose box meets it (points are sorted by the box's first plane, so
 * the candidates are a window found by binary search). Writes are disjoint,
 * so results do not depend on the thread count.
 *
 * Owner mode stores the 1-based index of the nearest point within reach, the
 * lower index on ties; the distance to the current owner is recomputed
 * (exactly as above) when balls overlap, so no distance buffer is needed. */
#include "balls_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct box {
    int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM]; /* inclusive, clipped to the volume */
    double r2;
} box;

typedef struct ctx {
    const voxa_balls_params *p;
    voxa_array *out;
    int ndim;
    double sp[VOXA_MAXDIM];
    box *boxes;       /* per point; boxes[k].lo[0] > hi[0] if it misses the volume */
    int64_t *order;   /* points that meet the volume, sorted by lo[0] then index */
    int64_t norder;
    int64_t maxspan;  /* max hi[0] - lo[0] over ordered points */
} ctx;

/* Squared spaced distance from voxel idx to point k, summed as in the header. */
static double dist2(const ctx *c, const int64_t *idx, int64_t k) {
    const double *pt = c->p->points + k * c->ndim;
    double sum = 0;
    for (int d = 0; d < c->ndim; d++)
        sum += voxa__balls_term((double)idx[d], pt[d], c->sp[d]);
    return sum;
}

/* See balls_internal.h: the candidate run from the real root, then the
 * exact test moves each end by whole voxels. */
void voxa__balls_run_bounds(double partial, double p, double s, double r2, int64_t n,
                            int64_t *lo, int64_t *hi) {
    double rem = r2 - partial;
    double half = rem > 0 ? sqrt(rem) / s : 0;
    double flo = ceil(p - half), fhi = floor(p + half);
    /* Clip in double first: coordinates may be huge. */
    if (flo < -1) flo = -1;
    if (fhi > (double)n) fhi = (double)n;
    if (flo > (double)n || fhi < -1 || flo > fhi + 1) {
        *lo = 1, *hi = 0;
        return;
    }
    int64_t a = (int64_t)flo, b = (int64_t)fhi;
#define INSIDE(x) (partial + voxa__balls_term((double)(x), p, s) <= r2)
    while (a - 1 >= 0 && INSIDE(a - 1)) a--;
    while (a <= b && !INSIDE(a)) a++;
    while (b + 1 < n && INSIDE(b + 1)) b++;
    while (b >= a && !INSIDE(b)) b--;
#undef INSIDE
    if (a < 0) a = 0;
    if (b > n - 1) b = n - 1;
    *lo = a, *hi = b;
}

/* ---- writers: one per output kind, chosen once per call -------------------- */

typedef void (*run_writer)(const ctx *c, char *line, int64_t stride, int64_t *idx, int64_t lo,
                           int64_t hi, int64_t k);

static void write_mask(const ctx *c, char *line, int64_t stride, int64_t *idx, int64_t lo,
                       int64_t hi, int64_t k) {
    if (stride == 1) {
        memset(line + lo, 1, (size_t)(hi - lo + 1));
    } else {
        for (int64_t x = lo; x <= hi; x++) line[x * stride] = 1;
    }
}

/* Owner compare-and-set: a voxel goes to point k if it is free, or k is
 * strictly nearer than the current owner, or as near with a lower index. */
#define OWNER_WRITER(T)                                                        \
    static void write_owner_##T(const ctx *c, char *line, int64_t stride,     \
                                int64_t *idx, int64_t lo, int64_t hi,         \
                                int64_t k) {                                   \
        int last = c->ndim - 1;                                                \
        for (int64_t x = lo; x <= hi; x++) {                                   \
            T *v = (T *)(line + x * stride);                                   \
            if (*v != 0) {                                                     \
                int64_t cur = (int64_t)*v - 1;                                 \
                idx[last] = x;                                                 \
                double dk = dist2(c, idx, k), dc = dist2(c, idx, cur);         \
                if (!(dk < dc || (dk == dc && k < cur))) continue;             \
            }                                                                  \
            *v = (T)(k + 1);                                                   \
        }                                                                      \
    }
OWNER_WRITER(int32_t)
OWNER_WRITER(uint32_t)
OWNER_WRITER(int64_t)

typedef struct slab_ctx {
    const ctx *c;
    run_writer write;
} slab_ctx;

static void clear_line(char *line, int64_t n, int64_t stride, size_t es) {
    if (stride == (int64_t)es) memset(line, 0, (size_t)n * es);
    else
        for (int64_t x = 0; x < n; x++) memset(line + x * stride, 0, es);
}

/* Clear the output where the axis-0 index is in [b0, b1). */
static void clear_slab(const voxa_array *o, int64_t b0, int64_t b1) {
    size_t es = voxa_dtype_size(o->dtype);
    int last = o->ndim - 1;
    if (o->ndim == 1) {
        clear_line((char *)o->data + b0 * o->strides[0], b1 - b0, o->strides[0], es);
        return;
    }
    int64_t lines = 1;
    for (int d = 1; d < last; d++) lines *= o->shape[d];
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t z = b0; z < b1; z++) {
        idx[0] = z;
        for (int64_t l = 0; l < lines; l++) {
            clear_line((char *)o->data + voxa__offset(o, idx), o->shape[last], o->strides[last], es);
            for (int d = last - 1; d >= 1; d--) {
                if (++idx[d] < o->shape[d]) break;
                idx[d] = 0;
            }
        }
    }
}

/* Paint point k's lines whose axis-0 index lies in [b0, b1). Axes 0..n-2 are
 * walked by an odometer; the last axis is a run. */
static void paint(const slab_ctx *s, int64_t k, int64_t b0, int64_t b1) {
    const ctx *c = s->c;
    const voxa_array *o = c->out;
    const box *bx = &c->boxes[k];
    const double *pt = c->p->points + k * c->ndim;
    int last = c->ndim - 1;
    int64_t idx[VOXA_MAXDIM];
    double partial[VOXA_MAXDIM + 1];
    partial[0] = 0;
    if (c->ndim == 1) {
        int64_t lo, hi;
        voxa__balls_run_bounds(0, pt[0], c->sp[0], bx->r2, o->shape[0], &lo, &hi);
        if (lo < b0) lo = b0;
        if (hi > b1 - 1) hi = b1 - 1;
        if (lo <= hi) {
            idx[0] = 0;
            s->write(c, (char *)o->data, o->strides[0], idx, lo, hi, k);
        }
        return;
    }
    int64_t first = bx->lo[0] > b0 ? bx->lo[0] : b0;
    int64_t stop = bx->hi[0] < b1 - 1 ? bx->hi[0] : b1 - 1;
    if (first > stop) return;
    idx[0] = first;
    for (int d = 1; d < last; d++) idx[d] = bx->lo[d];
    /* Recompute partial sums from axis `from` on after the odometer moved. */
    int from = 0;
    for (;;) {
        for (int d = from; d < last; d++)
            partial[d + 1] = partial[d] + voxa__balls_term((double)idx[d], pt[d], c->sp[d]);
        if (partial[last] <= bx->r2) {
            int64_t lo, hi;
            voxa__balls_run_bounds(partial[last], pt[last], c->sp[last], bx->r2, o->shape[last],
                                   &lo, &hi);
            if (lo <= hi) {
                idx[last] = 0;
                char *line = (char *)o->data + voxa__offset(o, idx);
                s->write(c, line, o->strides[last], idx, lo, hi, k);
            }
        }
        int d = last - 1;
        for (; d >= 0; d--) {
            int64_t end = d == 0 ? stop : bx->hi[d];
            if (++idx[d] <= end) break;
            idx[d] = d == 0 ? first : bx->lo[d];
        }
        if (d < 0) return;
        from = d;
    }
}

static int64_t lower_bound(const ctx *c, int64_t key) {
    int64_t a = 0, b = c->norder;
    while (a < b) {
        int64_t m = a + (b - a) / 2;
        if (c->boxes[c->order[m]].lo[0] < key) a = m + 1;
        else b = m;
    }
    return a;
}

static voxa_status paint_slab(int64_t b0, int64_t b1, int tid, void *arg) {
    const slab_ctx *s = arg;
    const ctx *c = s->c;
    clear_slab(c->out, b0, b1);
    /* Candidates: boxes starting in [b0 - maxspan, b1). */
    int64_t i = lower_bound(c, b0 - c->maxspan), end = lower_bound(c, b1);
    if (c->ndim == 1) i = 0, end = c->norder;
    for (; i < end; i++) {
        int64_t k = c->order[i];
        if (c->boxes[k].hi[0] < b0) continue;
        paint(s, k, b0, b1);
    }
    return VOXA_OK;
}

typedef struct keyed {
    int64_t lo, k;
} keyed;

static int by_first_plane(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static voxa_status validate(const voxa_balls_params *p, const voxa_array *out) {
    VOXA_FAIL_IF(!p, VOXA_EINVAL, "balls: NULL parameters");
    VOXA_CHECK(voxa_array_check(out, "balls output"));
    VOXA_FAIL_IF(out->ndim < 1, VOXA_EINVAL, "balls: output must have at least 1 dimension");
    VOXA_FAIL_IF(p->npoints < 0, VOXA_EINVAL, "balls: npoints = %lld is negative",
                 (long long)p->npoints);
    VOXA_FAIL_IF(p->npoints > 0 && !p->points, VOXA_EINVAL, "balls: points is NULL");
    if (p->owner) {
        VOXA_FAIL_IF(out->dtype != VOXA_I32 && out->dtype != VOXA_U32 && out->dtype != VOXA_I64,
                     VOXA_EINVAL, "balls: owner output must be int32, uint32 or int64, not %s",
                     voxa_dtype_name(out->dtype));
        VOXA_FAIL_IF(out->dtype != VOXA_I64 && p->npoints > INT32_MAX, VOXA_EOVERFLOW,
                     "balls: %lld points do not fit owner dtype %s", (long long)p->npoints,
                     voxa_dtype_name(out->dtype));
    } else {
        VOXA_FAIL_IF(out->dtype != VOXA_BOOL && out->dtype != VOXA_U8, VOXA_EINVAL,
                     "balls: mask output must be bool or uint8, not %s",
                     voxa_dtype_name(out->dtype));
    }
    int n = out->ndim;
    for (int d = 0; p->spacing && d < n; d++)
        VOXA_FAIL_IF(!(p->spacing[d] > 0) || !isfinite(p->spacing[d]), VOXA_EINVAL,
                     "balls: spacing[%d] = %g must be positive and finite", d, p->spacing[d]);
    if (!p->radii)
        VOXA_FAIL_IF(!(p->radius >= 0) || !isfinite(p->radius), VOXA_EINVAL,
                     "balls: radius = %g must be finite and >= 0", p->radius);
    for (int64_t k = 0; k < p->npoints; k++) {
        for (int d = 0; d < n; d++)
            VOXA_FAIL_IF(!isfinite(p->points[k * n + d]), VOXA_EINVAL,
                         "balls: point %lld has a non-finite coordinate on axis %d (%g)",
                         (long long)k, d, p->points[k * n + d]);
        if (p->radii)
            VOXA_FAIL_IF(!(p->radii[k] >= 0) || !isfinite(p->radii[k]), VOXA_EINVAL,
                         "balls: radius of point %lld = %g must be finite and >= 0",
                         (long long)k, p->radii[k]);
    }
    return VOXA_OK;
}

/* Exact per-axis box: candidates from r/s widened by one, shrunk by the
 * one-term test. Returns false if the box misses the volume. */
static bool make_box(const ctx *c, int64_t k, box *b) {
    double r = c->p->radii ? c->p->radii[k] : c->p->radius;
    b->r2 = r * r;
    const double *pt = c->p->points + k * c->ndim;
    for (int d = 0; d < c->ndim; d++) {
        voxa__balls_run_bounds(0, pt[d], c->sp[d], b->r2, c->out->shape[d], &b->lo[d], &b->hi[d]);
        if (b->lo[d] > b->hi[d]) return false;
    }
    return true;
}

voxa_status voxa_balls(const voxa_balls_params *p, voxa_array *out) {
    VOXA_CHECK(validate(p, out));
    voxa_status st = VOXA_OK;
    keyed *keys = NULL;
    ctx c = {.p = p, .out = out, .ndim = out->ndim};
    for (int d = 0; d < c.ndim; d++) c.sp[d] = p->spacing ? p->spacing[d] : 1.0;
    VOXA_CHECK(voxa__progress(&p->progress, 0, 1));
    if (voxa_array_size(out) == 0) return voxa__progress(&p->progress, 1, 1);
    c.boxes = voxa__malloc((size_t)(p->npoints ? p->npoints : 1), sizeof(box));
    c.order = voxa__malloc((size_t)(p->npoints ? p->npoints : 1), sizeof(int64_t));
    VOXA_GOTO_IF(!c.boxes || !c.order, VOXA_ENOMEM, "balls: out of memory for %lld points",
                 (long long)p->npoints);
    keys = voxa__malloc((size_t)(p->npoints ? p->npoints : 1), sizeof(keyed));
    VOXA_GOTO_IF(!keys, VOXA_ENOMEM, "balls: out of memory for %lld points",
                 (long long)p->npoints);
    for (int64_t k = 0; k < p->npoints; k++) {
        if (!make_box(&c, k, &c.boxes[k])) continue;
        keys[c.norder++] = (keyed){c.boxes[k].lo[0], k};
        int64_t span = c.boxes[k].hi[0] - c.boxes[k].lo[0];
        if (span > c.maxspan) c.maxspan = span;
    }
    qsort(keys, (size_t)c.norder, sizeof(keyed), by_first_plane);
    for (int64_t i = 0; i < c.norder; i++) c.order[i] = keys[i].k;

    slab_ctx s = {.c = &c, .write = write_mask};
    if (p->owner)
        s.write = out->dtype == VOXA_I32 ? write_owner_int32_t
                  : out->dtype == VOXA_U32 ? write_owner_uint32_t
                                           : write_owner_int64_t;
    /* 1D arrays are one line: no slabs. */
    int64_t n0 = c.ndim == 1 ? 1 : out->shape[0];
    st = c.ndim == 1 ? paint_slab(0, out->shape[0], 0, &s) : voxa__parallel_for(n0, 1, paint_slab, &s);
    if (st == VOXA_OK) st = voxa__progress(&p->progress, 1, 1);
done:
    voxa__free(keys);
    voxa__free(c.boxes);
    voxa__free(c.order);
    return st;
}

voxa_status voxa_balls_halo(const voxa_balls_params *p, int ndim, int64_t *halo) {
    VOXA_FAIL_IF(!p || !halo, VOXA_EINVAL, "balls halo: NULL argument");
    VOXA_FAIL_IF(ndim < 1 || ndim > VOXA_MAXDIM, VOXA_EINVAL, "balls halo: ndim %d out of range",
                 ndim);
    double rmax = p->radii ? 0 : p->radius;
    for (int64_t k = 0; p->radii && k < p->npoints; k++)
        if (p->radii[k] > rmax) rmax = p->radii[k];
    for (int d = 0; d < ndim; d++) {
        double s = p->spacing ? p->spacing[d] : 1.0;
        VOXA_FAIL_IF(!(s > 0), VOXA_EINVAL, "balls halo: spacing[%d] = %g must be positive", d, s);
        double h = ceil(rmax / s);
        VOXA_FAIL_IF(!(h < 9e15), VOXA_EINVAL, "balls halo: radius %g too large", rmax);
        halo[d] = (int64_t)h;
    }
    return VOXA_OK;
}
