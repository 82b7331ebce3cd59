/* voxa_fill_holes: scipy.ndimage.binary_fill_holes for any structure, in
 * linear time.
 *
 * scipy defines the result as NOT(the background reachable from outside):
 * it dilates an empty image with border_value 1, masked to the background,
 * until nothing changes (revisiting lists of changed voxels when the
 * structure holds its centre, else one full pass per step of the longest
 * path). With c = shape // 2 and `origin`, a dilation
 * sets background voxel x when x + d is set (or outside the volume) for some
 * offset d = c + origin - j of a true element j of the structure. The fixed
 * point is exactly the set of background voxels from which a chain of such
 * steps through background voxels leaves the volume, so one search finds
 * it:
 *
 *   pad      the volume with r_a = max |d_a| voxels of "outside" on every
 *            side (state 2), background = 1, foreground = 0: bytes, in
 *            parallel over rows; no bounds test is then needed anywhere
 *   seed     background voxels within r of the edge with any x + d in state
 *            2 are reached (one sweep of the shell only)
 *   flood    depth-first over runs along the last axis: a reached voxel
 *            grows into its background run when +-1 along the row are steps
 *            (every connectivity: left for +1, right for -1), the run is
 *            pushed; a popped run [a, b] reaches x = y - d, y in the run: for
 *            the steps that share a leading part (a row offset), columns
 *            [a - dl, b - dl] of one row, merged over their dl, found with
 *            memchr. Each voxel is reached once; each run costs O(length +
 *            1) per distinct row offset: O(N x rows of the structure), with
 *            sequential memory access
 *   write    out = (state != 2), in parallel over rows
 *
 *     step d (connectivity 1, 2-D)     the run [a, b] in row y reaches
 *           . # .                        row y-1: columns a..b
 *           # . #     ->  x = y - d      row y  : a-1 and b+1 (the run grows)
 *           . # .                        row y+1: columns a..b
 *
 * The search follows the steps backwards (x reaches y when y = x + d), so
 * structures that are not centrosymmetric, of any size, with any origin in
 * scipy's range give scipy's voxels too. A step with |d_a| >= n_a (a
 * structure larger than the volume) leaves it from every voxel: then all
 * background is reached, and the padding never exceeds the volume. The
 * result is the least fixed point, unique, so it does not depend on visiting
 * order or thread count. The flood is serial (a stack); padding and writing,
 * the passes that touch every voxel of any dtype and strides, run in
 * parallel. (Labelling the background and keeping the components that touch
 * the edge would give the same voxels for centrosymmetric structures only,
 * and would cost labels of 4+ bytes per voxel.)
 *
 * Memory: prod(n_a + 2 r_a) bytes of states plus the stack, 16 bytes per
 * pending run (it starts at 32k runs and doubles; at most one per background
 * run, as each run is pushed once). */
#include "internal.h"
#include "voxa/morph.h"

#include <stdlib.h>
#include <string.h>

enum { FG = 0, BG = 1, OUT = 2 };

/* A step d split into its leading part (a linear offset of whole rows) and
 * its offset along the last axis. */
typedef struct step {
    int64_t lead, dl;
} step;

typedef struct fill {
    int nd;
    int64_t n[VOXA_MAXDIM];   /* input shape */
    int64_t r[VOXA_MAXDIM];   /* padding per axis */
    int64_t ps[VOXA_MAXDIM];  /* padded strides (elements) */
    int64_t nrows;            /* rows of the padded volume (all axes but the last) */
    uint8_t *st;              /* padded states */
    const voxa_array *in;
    voxa_array *out;
    int64_t nd_off;           /* number of offsets */
    int64_t *off;             /* linear padded offsets d */
    int64_t (*dv)[VOXA_MAXDIM]; /* the offsets per axis */
    uint8_t thr;              /* out = state < thr: 2, or 1 when every voxel sees out */
    step *steps;              /* the offsets sorted by (lead, dl descending) */
    int64_t nsteps, ngroups;
    int64_t *gstart;          /* group g: steps[gstart[g] .. gstart[g + 1]) */
    int left, right;          /* +1 / -1 along the row is a step: runs extend */
} fill;

/* Padded row `row` -> leading padded coordinates; returns 1 when the row lies
 * inside the volume on every leading axis (then idx holds volume indices). */
static int row_coords(const fill *f, int64_t row, int64_t *idx) {
    int inside = 1;
    for (int a = f->nd - 2; a >= 0; a--) {
        int64_t pn = f->n[a] + 2 * f->r[a];
        int64_t c = row % pn;
        row /= pn;
        idx[a] = c - f->r[a];
        inside &= idx[a] >= 0 && idx[a] < f->n[a];
    }
    return inside;
}

#define READ_ROW(T)                                                            \
    for (int64_t i = 0; i < n; i++) {                                          \
        T v_;                                                                  \
        memcpy(&v_, p + i * s, sizeof v_);                                     \
        dst[i] = v_ != 0 ? FG : BG;                                            \
    }                                                                          \
    break;

static voxa_status pad_rows(int64_t begin, int64_t end, int tid, void *ctx) {
    (void)tid;
    const fill *f = ctx;
    const int last = f->nd - 1;
    const int64_t n = f->n[last], r = f->r[last], pn = n + 2 * r;
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t row = begin; row < end; row++) {
        uint8_t *prow = f->st + row * pn;
        if (!row_coords(f, row, idx)) {
            memset(prow, OUT, (size_t)pn);
            continue;
        }
        memset(prow, OUT, (size_t)r);
        memset(prow + r + n, OUT, (size_t)r);
        uint8_t *dst = prow + r;
        const char *p = (const char *)f->in->data + voxa__offset(f->in, idx);
        const int64_t s = f->in->strides[last];
        switch (f->in->dtype) {
        case VOXA_BOOL: case VOXA_U8: case VOXA_I8: READ_ROW(uint8_t)
        case VOXA_U16: case VOXA_I16: READ_ROW(uint16_t)
        case VOXA_U32: case VOXA_I32: READ_ROW(uint32_t)
        case VOXA_U64: case VOXA_I64: READ_ROW(uint64_t)
        case VOXA_F32: READ_ROW(float)
        case VOXA_F64: READ_ROW(double)
        default: return voxa__error(VOXA_EINTERNAL, "in: dtype %d", (int)f->in->dtype);
        }
    }
    return VOXA_OK;
}

#define WRITE_ROW(T)                                                           \
    for (int64_t i = 0; i < n; i++) {                                          \
        T v_ = (T)(src[i] < f->thr);                                             \
        memcpy(p + i * s, &v_, sizeof v_);                                     \
    }                                                                          \
    break;

static voxa_status write_rows(int64_t begin, int64_t end, int tid, void *ctx) {
    (void)tid;
    const fill *f = ctx;
    const int last = f->nd - 1;
    const int64_t n = f->n[last], r = f->r[last], pn = n + 2 * r;
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t row = begin; row < end; row++) {
        if (!row_coords(f, row, idx)) continue;
        const uint8_t *src = f->st + row * pn + r;
        char *p = (char *)f->out->data + voxa__offset(f->out, idx);
        const int64_t s = f->out->strides[last];
        switch (f->out->dtype) {
        case VOXA_BOOL: case VOXA_U8: case VOXA_I8: WRITE_ROW(uint8_t)
        case VOXA_U16: case VOXA_I16: WRITE_ROW(uint16_t)
        case VOXA_U32: case VOXA_I32: WRITE_ROW(uint32_t)
        case VOXA_U64: case VOXA_I64: WRITE_ROW(uint64_t)
        case VOXA_F32: WRITE_ROW(float)
        case VOXA_F64: WRITE_ROW(double)
        default: return voxa__error(VOXA_EINTERNAL, "out: dtype %d", (int)f->out->dtype);
        }
    }
    return VOXA_OK;
}

/* A growing stack of runs: pairs (first, last) of padded indices. Last in,
 * first out: the next run is usually next to the last one (cache-warm). */
typedef struct stack {
    int64_t *q;
    int64_t cap, len; /* in pairs */
} stack;

static int push(stack *q, int64_t a, int64_t b) {
    if (q->len == q->cap) {
        int64_t cap = q->cap ? 2 * q->cap : ((int64_t)1 << 15);
        int64_t *nq = voxa__malloc((size_t)cap, 2 * sizeof *nq);
        if (!nq) return -1;
        if (q->len) memcpy(nq, q->q, (size_t)q->len * 2 * sizeof *nq);
        voxa__free(q->q);
        q->q = nq;
        q->cap = cap;
    }
    q->q[2 * q->len] = a;
    q->q[2 * q->len + 1] = b;
    q->len++;
    return 0;
}

/* Background voxel p is reached: mark it and the background run around it
 * that row steps reach (left when +1 along the row is a step, right for -1),
 * push the run; returns its last index, or -1 when out of memory. */
static int64_t reach(const fill *f, stack *q, int64_t p) {
    uint8_t *s = f->st;
    int64_t a = p, b = p;
    s[p] = OUT;
    if (f->left)
        while (s[a - 1] == BG) s[--a] = OUT;
    if (f->right)
        while (s[b + 1] == BG) s[++b] = OUT;
    return push(q, a, b) < 0 ? -1 : b;
}

/* Reach every background voxel of [lo, hi] (one padded row). */
static int scan(const fill *f, stack *q, int64_t lo, int64_t hi) {
    const uint8_t *s = f->st;
    for (int64_t p = lo; p <= hi; p++) {
        if (hi - p < 32) { /* short: a plain loop beats the call */
            if (s[p] != BG) continue;
        } else {
            const uint8_t *h = memchr(s + p, BG, (size_t)(hi - p + 1));
            if (!h) break;
            p = h - s;
        }
        p = reach(f, q, p);
        if (p < 0) return -1;
    }
    return 0;
}

/* Seeds: background voxels of the shell (within r of an edge) that reach a
 * state-2 voxel in one step; then the flood, run by run (depth first): a run [a, b]
 * reaches x = y - d for y in it, i.e. for the steps sharing a leading part
 * the columns [a - dl, b - dl] of one row, merged over their dl. */
static voxa_status flood(fill *f) {
    voxa_status st = VOXA_OK;
    stack q = {0};
    const int nd = f->nd, last = nd - 1;
    const int64_t n = f->n[last], r = f->r[last];
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t row = 0; row < f->nrows; row++) {
        if (!row_coords(f, row, idx)) continue;
        int shell = 0;
        for (int a = 0; a < last; a++)
            shell |= idx[a] < f->r[a] || idx[a] >= f->n[a] - f->r[a];
        uint8_t *prow = f->st + row * (n + 2 * r) + r;
        int64_t base = (int64_t)(prow - f->st);
        for (int64_t i = 0; i < n; i++) {
            if (!shell && i == r && n - r > r) { /* only the ends can see out */
                i = n - r;
                if (i >= n) break;
            }
            if (prow[i] != BG) continue;
            for (int64_t k = 0; k < f->nsteps; k++) {
                if (prow[i + f->steps[k].lead + f->steps[k].dl] != OUT) continue;
                VOXA_GOTO_IF(reach(f, &q, base + i) < 0, VOXA_ENOMEM, "fill holes: out of "
                             "memory for the search stack");
                break;
            }
        }
    }
    while (q.len) {
        q.len--;
        int64_t a = q.q[2 * q.len], b = q.q[2 * q.len + 1];
        for (int64_t g = 0; g < f->ngroups; g++) {
            const step *sg = f->steps + f->gstart[g];
            const int64_t ns = f->gstart[g + 1] - f->gstart[g], lead = sg[0].lead;
            /* dl descending: the intervals [a - dl, b - dl] start in order */
            int64_t lo = a - lead - sg[0].dl, hi = b - lead - sg[0].dl;
            for (int64_t k = 1; k < ns; k++) {
                int64_t l2 = a - lead - sg[k].dl, h2 = b - lead - sg[k].dl;
                if (l2 <= hi + 1) {
                    hi = h2;
                    continue;
                }
                VOXA_GOTO_IF(scan(f, &q, lo, hi) < 0, VOXA_ENOMEM, "fill holes: out of memory "
                             "for the search stack");
                lo = l2;
                hi = h2;
            }
            VOXA_GOTO_IF(scan(f, &q, lo, hi) < 0, VOXA_ENOMEM, "fill holes: out of memory for "
                         "the search stack");
        }
    }
done:
    voxa__free(q.q);
    return st;
}

static int step_order(const void *x, const void *y) {
    const step *a = x, *b = y;
    if (a->lead != b->lead) return a->lead < b->lead ? -1 : 1;
    return a->dl > b->dl ? -1 : a->dl < b->dl; /* dl descending */
}

/* Steps as (leading part, offset along the row), grouped by leading part. */
static voxa_status group_steps(fill *f) {
    const int last = f->nd - 1;
    f->steps = voxa__malloc((size_t)(f->nd_off ? f->nd_off : 1), sizeof *f->steps);
    f->gstart = voxa__malloc((size_t)f->nd_off + 1, sizeof *f->gstart);
    VOXA_FAIL_IF(!f->steps || !f->gstart, VOXA_ENOMEM, "structure: out of memory");
    for (int64_t k = 0; k < f->nd_off; k++) {
        f->steps[k].dl = f->dv[k][last];
        f->steps[k].lead = f->off[k] - f->dv[k][last];
        f->left |= f->steps[k].lead == 0 && f->steps[k].dl == 1;
        f->right |= f->steps[k].lead == 0 && f->steps[k].dl == -1;
    }
    f->nsteps = f->nd_off;
    qsort(f->steps, (size_t)f->nsteps, sizeof *f->steps, step_order);
    f->ngroups = 0;
    for (int64_t k = 0; k < f->nsteps; k++)
        if (k == 0 || f->steps[k].lead != f->steps[k - 1].lead) f->gstart[f->ngroups++] = k;
    f->gstart[f->ngroups] = f->nsteps;
    return VOXA_OK;
}

/* The offsets d = c + origin - j of the structure's true elements (d != 0). */
static voxa_status offsets(fill *f, const voxa_array *se, int connectivity,
                           const int64_t *origin) {
    const int nd = f->nd;
    int64_t shape[VOXA_MAXDIM], total = 1;
    for (int a = 0; a < nd; a++) {
        shape[a] = se ? se->shape[a] : 3;
        total *= shape[a];
    }
    f->off = voxa__malloc((size_t)total, sizeof *f->off);
    f->dv = voxa__malloc((size_t)total, sizeof *f->dv);
    VOXA_FAIL_IF(!f->off || !f->dv, VOXA_ENOMEM, "structure: out of memory (%lld elements)",
                 (long long)total);
    int64_t j[VOXA_MAXDIM] = {0};
    f->nd_off = 0;
    for (int64_t e = 0; e < total; e++) {
        int on, zero = 1, far = 0;
        for (int a = 0; a < nd; a++) far += j[a] != 1;
        on = se ? voxa_array_get(se, j) != 0 : far <= connectivity;
        int64_t *d = f->dv[f->nd_off];
        for (int a = 0; a < nd; a++) {
            d[a] = shape[a] / 2 + (origin ? origin[a] : 0) - j[a];
            zero &= d[a] == 0;
        }
        int within = 1; /* a step of n_a or more leaves the volume from anywhere */
        for (int a = 0; a < nd; a++) within &= (d[a] < 0 ? -d[a] : d[a]) < f->n[a];
        if (on && !zero && !within) f->thr = 1;
        if (on && !zero && within) f->nd_off++;
        for (int a = nd - 1; a >= 0; a--) {
            if (++j[a] < shape[a]) break;
            j[a] = 0;
        }
    }
    for (int a = 0; a < nd; a++) f->r[a] = 0;
    for (int64_t k = 0; k < f->nd_off; k++)
        for (int a = 0; a < nd; a++) {
            int64_t m = f->dv[k][a] < 0 ? -f->dv[k][a] : f->dv[k][a];
            if (m > f->r[a]) f->r[a] = m;
        }
    return VOXA_OK;
}

static voxa_status check(const voxa_array *in, const voxa_array *se, int connectivity,
                         const int64_t *origin, voxa_array *out) {
    char b1[128], b2[128];
    VOXA_FAIL_IF(!in, VOXA_EINVAL, "in: NULL array");
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "out: NULL array");
    VOXA_CHECK(voxa_array_check(in, "in"));
    VOXA_CHECK(voxa_array_check(out, "out"));
    VOXA_FAIL_IF(in->ndim < 1, VOXA_EINVAL, "in: 0-D array (fill holes needs 1..%d axes)",
                 VOXA_MAXDIM);
    VOXA_FAIL_IF(!voxa__same_shape(in, out), VOXA_EINVAL, "out: shape %s differs from in %s",
                 voxa__shape_str(out, b1, sizeof b1), voxa__shape_str(in, b2, sizeof b2));
    if (se) {
        VOXA_CHECK(voxa_array_check(se, "structure"));
        VOXA_FAIL_IF(se->ndim != in->ndim, VOXA_EINVAL, "structure: %d dimensions, the input "
                     "has %d (they must have equal rank)", se->ndim, in->ndim);
        VOXA_FAIL_IF(voxa_array_size(se) < 1, VOXA_EINVAL, "structure: must not be empty "
                     "(shape %s)", voxa__shape_str(se, b1, sizeof b1));
    } else {
        VOXA_FAIL_IF(connectivity < 1 || connectivity > in->ndim, VOXA_EINVAL,
                     "connectivity: %d is out of range 1..%d for the %d-D input", connectivity,
                     in->ndim, in->ndim);
    }
    /* scipy's range; beyond it scipy reads outside its buffers (it may crash) */
    for (int a = 0; origin && a < in->ndim; a++) {
        int64_t s = se ? se->shape[a] : 3, lo = -(s / 2), hi = (s - 1) / 2;
        VOXA_FAIL_IF(origin[a] < lo || origin[a] > hi, VOXA_EINVAL, "origin: %lld on axis %d "
                     "is out of range %lld..%lld for a structure of size %lld",
                     (long long)origin[a], a, (long long)lo, (long long)hi, (long long)s);
    }
    return VOXA_OK;
}

voxa_status voxa_fill_holes(const voxa_array *in, const voxa_array *structure, int connectivity,
                            const int64_t *origin, voxa_array *out) {
    VOXA_CHECK(check(in, structure, connectivity, origin, out));
    voxa_status st = VOXA_OK;
    fill f;
    memset(&f, 0, sizeof f);
    f.nd = in->ndim;
    f.in = in;
    f.out = out;
    f.thr = OUT;
    if (voxa_array_size(in) == 0) return VOXA_OK;
    for (int a = 0; a < f.nd; a++) f.n[a] = in->shape[a];
    st = offsets(&f, structure, connectivity, origin);
    if (st != VOXA_OK) goto done;
    size_t total = 1;
    f.nrows = 1;
    for (int a = f.nd - 1; a >= 0; a--) {
        f.ps[a] = (int64_t)total;
        VOXA_GOTO_IF(!voxa__mul_size(total, (size_t)(f.n[a] + 2 * f.r[a]), &total) ||
                         total > (size_t)INT64_MAX / 2, VOXA_EINVAL,
                     "in: the padded volume overflows (axis %d)", a);
        if (a < f.nd - 1) f.nrows *= f.n[a] + 2 * f.r[a];
    }
    for (int64_t k = 0; k < f.nd_off; k++) {
        f.off[k] = 0;
        for (int a = 0; a < f.nd; a++) f.off[k] += f.dv[k][a] * f.ps[a];
    }
    f.st = voxa__malloc(total, 1);
    VOXA_GOTO_IF(!f.st, VOXA_ENOMEM, "fill holes: cannot allocate %zu bytes of states", total);
    const int64_t pn = f.n[f.nd - 1] + 2 * f.r[f.nd - 1];
    st = voxa__parallel_for(f.nrows, voxa__grain(pn), pad_rows, &f);
    if (st != VOXA_OK) goto done;
    st = group_steps(&f);
    if (st == VOXA_OK && f.thr == OUT) st = flood(&f);
    if (st != VOXA_OK) goto done;
    st = voxa__parallel_for(f.nrows, voxa__grain(pn), write_rows, &f);
done:
    voxa__free(f.st);
    voxa__free(f.off);
    voxa__free(f.dv);
    voxa__free(f.steps);
    voxa__free(f.gstart);
    return st;
}
