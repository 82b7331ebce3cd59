/* The measure API: accumulators, the final table, whole arrays and stores.
 *
 * The table follows skimage.measure.regionprops_table (0.26) value for value:
 *   area        = num_pixels x prod(spacing)   (np.prod, left to right)
 *   centroid    = sum of (index x spacing) / num_pixels; skimage sums the
 *                 scaled indices one by one, voxa scales the exact integer
 *                 sum once: identical without spacing (and whenever the
 *                 products are exact), within rounding otherwise
 *   bbox        = starts, then stops (exclusive), in voxel indices
 *   intensity_* = mean (sum / num_pixels), min, max of the region's values;
 *                 skimage's np.mean sums integers exactly below 2^53 (then
 *                 they agree exactly) and float32 in float32 (voxa sums in
 *                 double: more exact, equal to ~1e-7 relative)
 *   centroid_weighted = (sum of local index x intensity) / (sum of
 *                 intensity) + start, in skimage's local-moment form, so
 *                 integer intensities give the same bits.
 * Labels <= 0 are background. Blocks of a store are rows of the volume,
 * read in raster order within the memory limit. */
#include "measure_internal.h"

#include "voxa/stream.h"

#include <string.h>

/* Labels are integers (not bool, as in skimage) with at least one axis. */
static voxa_status check_label_type(const voxa_array *a) {
    VOXA_FAIL_IF(a->dtype == VOXA_BOOL, VOXA_EINVAL,
                 "labels: bool is ambiguous (label the mask first, or cast it to uint8 for "
                 "one object)");
    VOXA_FAIL_IF(voxa_dtype_is_float(a->dtype), VOXA_EINVAL,
                 "labels: dtype %s is not an integer type", voxa_dtype_name(a->dtype));
    VOXA_FAIL_IF(a->ndim < 1, VOXA_EINVAL, "labels: 0-D array (need at least one axis)");
    return VOXA_OK;
}

static voxa_status check_labels(const voxa_array *a) {
    VOXA_CHECK(voxa_array_check(a, "labels"));
    return check_label_type(a);
}

voxa_status voxa_measure_acc_new(int ndim, const int64_t *shape, int flags,
                                 voxa_measure_acc **out) {
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "acc: NULL");
    *out = NULL;
    VOXA_FAIL_IF(ndim < 1 || ndim > VOXA_MAXDIM, VOXA_EINVAL, "ndim: %d (need 1..%d)", ndim,
                 VOXA_MAXDIM);
    VOXA_FAIL_IF(!shape, VOXA_EINVAL, "shape: NULL");
    for (int d = 0; d < ndim; d++)
        VOXA_FAIL_IF(shape[d] < 0, VOXA_EINVAL, "shape[%d]: %lld is negative", d,
                     (long long)shape[d]);
    VOXA_FAIL_IF(flags & ~(VOXA_MEASURE_INTENSITY | VOXA_MEASURE_MOMENTS | VOXA_MEASURE_STD),
                 VOXA_EINVAL, "flags: %d (VOXA_MEASURE_INTENSITY | _MOMENTS | _STD)", flags);
    voxa_measure_acc *a = calloc(1, sizeof *a);
    VOXA_FAIL_IF(!a, VOXA_ENOMEM, "measure: no memory for the accumulator");
    voxa__mtable_init(&a->t, ndim, flags & VOXA_MEASURE_INTENSITY,
                      (flags & VOXA_MEASURE_MOMENTS) != 0, (flags & VOXA_MEASURE_STD) != 0);
    memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
    *out = a;
    return VOXA_OK;
}

void voxa_measure_acc_free(voxa_measure_acc *a) {
    if (!a) return;
    voxa__mtable_free(&a->t);
    free(a);
}

voxa_status voxa_measure_add(voxa_measure_acc *a, const voxa_array *labels,
                             const voxa_array *intensity, const int64_t *origin) {
    VOXA_FAIL_IF(!a, VOXA_EINVAL, "acc: NULL");
    VOXA_FAIL_IF(!labels, VOXA_EINVAL, "labels: NULL");
    VOXA_CHECK(check_labels(labels));
    int nd = a->t.nd;
    VOXA_FAIL_IF(labels->ndim != nd, VOXA_EINVAL, "labels: %d-D region for a %d-D volume",
                 labels->ndim, nd);
    VOXA_FAIL_IF(a->t.wi && !intensity, VOXA_EINVAL,
                 "intensity: missing (the accumulator measures intensity)");
    VOXA_FAIL_IF(!a->t.wi && intensity, VOXA_EINVAL,
                 "intensity: given to an accumulator made without intensity");
    if (intensity) {
        VOXA_CHECK(voxa_array_check(intensity, "intensity"));
        char b1[96], b2[96];
        VOXA_FAIL_IF(!voxa__same_shape(labels, intensity), VOXA_EINVAL,
                     "intensity: shape %s differs from the labels' %s",
                     voxa__shape_str(intensity, b1, sizeof b1),
                     voxa__shape_str(labels, b2, sizeof b2));
    }
    int64_t zero[VOXA_MAXDIM] = {0};
    if (!origin) origin = zero;
    for (int d = 0; d < nd; d++)
        VOXA_FAIL_IF(origin[d] < 0 || origin[d] > a->shape[d] - labels->shape[d], VOXA_EINVAL,
                     "origin[%d]: %lld with a region of %lld voxels leaves the volume (%lld)", d,
                     (long long)origin[d], (long long)labels->shape[d], (long long)a->shape[d]);
    return voxa__measure_region(&a->t, labels, intensity, origin);
}

static int cmp_label(const void *x, const void *y) {
    int64_t a = ((const int64_t *)x)[0], b = ((const int64_t *)y)[0];
    return (a > b) - (a < b);
}

/* mu_ij = sum (x_i - m_i)(x_j - m_j) = (n q_ij - s_i s_j) / n: the
 * numerator is exact in 128-bit integers (rounded once to long double). */
static void central_moments(const voxa__mtable *m, int64_t r, double *mu) {
    int nd = m->nd, nq = nd * (nd + 1) / 2;
    int64_t cnt = m->count[r];
    const int64_t *s = m->csum + r * nd;
    for (int i = 0; i < nd; i++)
        for (int j = i; j < nd; j++) {
            voxa__wide num = (voxa__wide)cnt * m->qsum[r * nq + voxa__pair(i, j, nd)] -
                             (voxa__wide)s[i] * s[j];
            mu[i * nd + j] = mu[j * nd + i] = (double)((long double)num / (long double)cnt);
        }
}

void voxa_measure_table_free(voxa_measure_table *t) {
    if (!t) return;
    free(t->label);
    free(t->num_pixels);
    free(t->area);
    free(t->centroid);
    free(t->bbox);
    free(t->intensity_mean);
    free(t->intensity_min);
    free(t->intensity_max);
    free(t->intensity_sum);
    free(t->centroid_weighted);
    free(t->intensity_std);
    free(t->perimeter);
    free(t->euler_number);
    free(t->moments2);
    memset(t, 0, sizeof *t);
}

voxa_status voxa_measure_acc_table(const voxa_measure_acc *a, const double *spacing,
                                   voxa_measure_table *t) {
    VOXA_FAIL_IF(!t, VOXA_EINVAL, "table: NULL");
    memset(t, 0, sizeof *t);
    VOXA_FAIL_IF(!a, VOXA_EINVAL, "acc: NULL");
    const voxa__mtable *m = &a->t;
    int nd = m->nd;
    double sp[VOXA_MAXDIM] = {1, 1, 1, 1, 1, 1, 1, 1};
    for (int d = 0; d < nd; d++) {
        sp[d] = spacing ? spacing[d] : 1.0;
        VOXA_FAIL_IF(!(sp[d] > 0) || !isfinite(sp[d]), VOXA_EINVAL,
                     "spacing[%d]: %g (need a finite value > 0)", d, sp[d]);
    }
    double pixel = sp[0];
    for (int d = 1; d < nd; d++) pixel *= sp[d];
    voxa_status st = VOXA_OK;
    int64_t n = m->n;
    size_t rows = (size_t)(n > 0 ? n : 1);
    int64_t(*order)[2] = malloc(rows * sizeof *order);
    t->ndim = nd;
    for (int d = 0; d < nd; d++) t->spacing[d] = sp[d];
    t->has_intensity = m->wi;
    t->n = n;
    t->label = malloc(rows * sizeof(int64_t));
    t->num_pixels = malloc(rows * sizeof(int64_t));
    t->area = malloc(rows * sizeof(double));
    t->centroid = malloc(rows * (size_t)nd * sizeof(double));
    t->bbox = malloc(rows * 2 * (size_t)nd * sizeof(int64_t));
    if (m->wq) t->moments2 = malloc(rows * (size_t)nd * (size_t)nd * sizeof(double));
    int fail = !order || !t->label || !t->num_pixels || !t->area || !t->centroid || !t->bbox ||
               (m->wq && !t->moments2);
    if (m->wi) {
        t->intensity_mean = malloc(rows * sizeof(double));
        t->intensity_min = malloc(rows * sizeof(double));
        t->intensity_max = malloc(rows * sizeof(double));
        t->intensity_sum = malloc(rows * sizeof(double));
        t->centroid_weighted = malloc(rows * (size_t)nd * sizeof(double));
        if (m->ws) t->intensity_std = malloc(rows * sizeof(double));
        fail = fail || !t->intensity_mean || !t->intensity_min || !t->intensity_max ||
               !t->intensity_sum || !t->centroid_weighted || (m->ws && !t->intensity_std);
    }
    VOXA_GOTO_IF(fail, VOXA_ENOMEM, "measure: no memory for a table of %lld rows", (long long)n);
    for (int64_t i = 0; i < n; i++) {
        order[i][0] = m->label[i];
        order[i][1] = i;
    }
    qsort(order, (size_t)n, sizeof *order, cmp_label);
    for (int64_t k = 0; k < n; k++) {
        int64_t r = order[k][1], cnt = m->count[r];
        t->label[k] = m->label[r];
        t->num_pixels[k] = cnt;
        t->area[k] = (double)cnt * pixel;
        for (int d = 0; d < nd; d++) {
            int64_t lo = m->lo[r * nd + d];
            t->centroid[k * nd + d] = (double)m->csum[r * nd + d] * sp[d] / (double)cnt;
            t->bbox[k * 2 * nd + d] = lo;
            t->bbox[k * 2 * nd + nd + d] = m->hi[r * nd + d] + 1;
        }
        if (m->wq) central_moments(m, r, t->moments2 + k * nd * nd);
        if (m->wi) {
            double s = m->isum[r];
            t->intensity_sum[k] = s;
            t->intensity_mean[k] = s / (double)cnt;
            if (m->ws) t->intensity_std[k] = sqrt(m->isq[r] / (double)cnt);
            t->intensity_min[k] = m->imin[r];
            t->intensity_max[k] = m->imax[r];
            for (int d = 0; d < nd; d++) {
                double lo = (double)m->lo[r * nd + d];
                double local = m->wsum[r * nd + d] - lo * s;
                t->centroid_weighted[k * nd + d] = local * sp[d] / s + lo * sp[d];
            }
        }
    }
done:
    free(order);
    if (st != VOXA_OK) voxa_measure_table_free(t);
    return st;
}

voxa_status voxa_measure(const voxa_array *labels, const voxa_array *intensity,
                         const double *spacing, voxa_measure_table *t) {
    return voxa_measure_with(labels, intensity, spacing, 0, t);
}

voxa_status voxa_measure_with(const voxa_array *labels, const voxa_array *intensity,
                              const double *spacing, int flags, voxa_measure_table *t) {
    VOXA_FAIL_IF(!t, VOXA_EINVAL, "table: NULL");
    memset(t, 0, sizeof *t);
    VOXA_FAIL_IF(!labels, VOXA_EINVAL, "labels: NULL");
    VOXA_CHECK(check_labels(labels));
    VOXA_FAIL_IF(flags & ~(VOXA_MEASURE_MOMENTS | VOXA_MEASURE_STD), VOXA_EINVAL,
                 "flags: %d (VOXA_MEASURE_MOMENTS | _STD; intensity follows the intensity image)",
                 flags);
    voxa_measure_acc *a = NULL;
    VOXA_CHECK(voxa_measure_acc_new(labels->ndim, labels->shape,
                                    flags | (intensity ? VOXA_MEASURE_INTENSITY : 0), &a));
    voxa_status st = voxa_measure_add(a, labels, intensity, NULL);
    if (st == VOXA_OK) st = voxa_measure_acc_table(a, spacing, t);
    voxa_measure_acc_free(a);
    return st;
}

/* ---- stores --------------------------------------------------------------------- */

/* The counting passes after the first one (perimeter, euler_number): slabs
 * along axis 0, each read with `ctx` of its neighbours on each side, whose
 * core's integer counts (k per label) add up to the whole image's. */
typedef voxa_status (*count_fn)(const voxa_array *, const int64_t *, const int64_t *,
                                const int64_t *, int64_t, int64_t *);
typedef struct count_pass {
    count_fn fn;
    int k;              /* counts per label */
    int64_t ctx;        /* context on each side along axis 0 */
    int64_t rows;       /* slab thickness, within the memory limit */
    int64_t blocks;
} count_pass;

static count_pass make_pass(count_fn fn, int k, int64_t ctx, int nd, const int64_t *shape,
                            voxa_dtype lt, int64_t mem_limit) {
    int64_t per = (int64_t)voxa_dtype_size(lt);
    for (int d = 1; d < nd; d++) per *= shape[d] > 0 ? shape[d] : 1;
    int64_t rows = mem_limit / per - 2 * ctx;
    count_pass c = {fn, k, ctx, rows < 1 ? 1 : rows, 0};
    c.blocks = (shape[0] + c.rows - 1) / c.rows;
    return c;
}

/* Run pass c over the label store into cnt (t->n x c->k, zeroed); progress
 * goes on from block *done of `total`. */
static voxa_status run_pass(const count_pass *c, voxa_store *labels, int nd,
                            const int64_t *shape, voxa_dtype lt, const voxa_measure_table *t,
                            int64_t *cnt, voxa_progress *progress, int64_t *done,
                            int64_t total) {
    int64_t n0 = shape[0];
    voxa_array buf = {0};
    int64_t bshape[VOXA_MAXDIM];
    memcpy(bshape, shape, sizeof bshape);
    bshape[0] = c->rows + 2 * c->ctx < n0 ? c->rows + 2 * c->ctx : n0;
    voxa_status st = voxa_array_new(&buf, lt, nd, bshape);
    for (int64_t y0 = 0; st == VOXA_OK && y0 < n0; y0 += c->rows) {
        int64_t y1 = y0 + c->rows < n0 ? y0 + c->rows : n0;
        int64_t a0 = y0 - c->ctx > 0 ? y0 - c->ctx : 0, a1 = y1 + c->ctx < n0 ? y1 + c->ctx : n0;
        voxa_array v = buf;
        v.owner = NULL;
        v.shape[0] = a1 - a0;
        int64_t at[VOXA_MAXDIM] = {a0}, lo[VOXA_MAXDIM] = {y0 - a0}, hi[VOXA_MAXDIM];
        memcpy(hi, shape, sizeof hi);
        hi[0] = y1 - a0;
        st = voxa_store_read(labels, at, &v);
        if (st == VOXA_OK) st = c->fn(&v, lo, hi, t->label, t->n, cnt);
        if (st == VOXA_OK) st = voxa__progress(progress, ++*done, total);
    }
    voxa_array_free(&buf);
    return st;
}

/* t->perimeter and t->euler_number, as flags ask, from their passes. */
static voxa_status count_passes(voxa_store *labels, int nd, const int64_t *shape,
                                voxa_dtype lt, int flags, const count_pass *per,
                                const count_pass *eul, voxa_progress *progress, int64_t done,
                                int64_t total, voxa_measure_table *t) {
    int64_t n = t->n > 0 ? t->n : 1;
    voxa_status st = VOXA_OK;
    if (flags & VOXA_MEASURE_PERIMETER) { /* weight counts (n x 3), then the perimeters */
        int64_t *cnt = calloc((size_t)n * 3, sizeof *cnt);
        t->perimeter = malloc((size_t)n * sizeof *t->perimeter);
        st = cnt && t->perimeter
                 ? run_pass(per, labels, nd, shape, lt, t, cnt, progress, &done, total)
                 : voxa__error(VOXA_ENOMEM, "perimeter: no memory for %lld labels",
                               (long long)t->n);
        if (st == VOXA_OK) voxa_measure_perimeter_of_counts(cnt, t->n, t->perimeter);
        free(cnt);
    }
    if (st == VOXA_OK && (flags & VOXA_MEASURE_EULER)) {
        t->euler_number = calloc((size_t)n, sizeof *t->euler_number);
        st = t->euler_number
                 ? run_pass(eul, labels, nd, shape, lt, t, t->euler_number, progress, &done,
                            total)
                 : voxa__error(VOXA_ENOMEM, "euler_number: no memory for %lld labels",
                               (long long)t->n);
    }
    return st;
}

voxa_status voxa_measure_store(voxa_store *labels, voxa_store *intensity, const double *spacing,
                               int64_t mem_limit, voxa_progress progress,
                               voxa_measure_table *t) {
    return voxa_measure_store_with(labels, intensity, spacing, mem_limit, 0, progress, t);
}

voxa_status voxa_measure_store_with(voxa_store *labels, voxa_store *intensity,
                                    const double *spacing, int64_t mem_limit, int flags,
                                    voxa_progress progress, voxa_measure_table *t) {
    VOXA_FAIL_IF(!t, VOXA_EINVAL, "table: NULL");
    memset(t, 0, sizeof *t);
    VOXA_FAIL_IF(!labels, VOXA_EINVAL, "labels: NULL store");
    VOXA_FAIL_IF(mem_limit < 0, VOXA_EINVAL, "mem_limit: %lld is negative",
                 (long long)mem_limit);
    if (mem_limit == 0) mem_limit = (int64_t)64 << 20;
    voxa_dtype lt, it = VOXA_U8;
    int nd, ind = 0;
    int64_t shape[VOXA_MAXDIM], ishape[VOXA_MAXDIM];
    voxa_store_info(labels, &lt, &nd, shape);
    voxa_array meta = {NULL, lt, nd, {0}, {0}, NULL};
    memcpy(meta.shape, shape, sizeof shape);
    VOXA_CHECK(check_label_type(&meta));
    if (intensity) {
        voxa_store_info(intensity, &it, &ind, ishape);
        int same = ind == nd;
        for (int d = 0; same && d < nd; d++) same = ishape[d] == shape[d];
        VOXA_FAIL_IF(!same, VOXA_EINVAL, "intensity: shape differs from the labels'");
    }
    /* Block: whole trailing axes while they fit, then part of the next. */
    int64_t bpv = (int64_t)voxa_dtype_size(lt) + (intensity ? (int64_t)voxa_dtype_size(it) : 0);
    int64_t room = mem_limit / bpv > 0 ? mem_limit / bpv : 1;
    int64_t block[VOXA_MAXDIM], grid[VOXA_MAXDIM], nblocks = 1;
    for (int d = nd - 1; d >= 0; d--) {
        int64_t e = shape[d] > 0 ? shape[d] : 1;
        block[d] = room >= e ? e : (room > 0 ? room : 1);
        room = block[d] == e ? room / e : 0;
    }
    for (int d = 0; d < nd; d++) {
        grid[d] = shape[d] ? (shape[d] + block[d] - 1) / block[d] : 0;
        nblocks *= grid[d];
    }
    /* the counting passes come after: their blocks count in the progress */
    count_pass per = make_pass(voxa_measure_perimeter_counts, 3, 2, nd, shape, lt, mem_limit);
    count_pass eul = make_pass(voxa_measure_euler_counts, 1, 1, nd, shape, lt, mem_limit);
    int64_t pblocks = (flags & VOXA_MEASURE_PERIMETER ? per.blocks : 0) +
                      (flags & VOXA_MEASURE_EULER ? eul.blocks : 0);
    voxa_status st = VOXA_OK;
    voxa_measure_acc *acc = NULL;
    voxa_array lbuf = {0}, ibuf = {0};
    const int passes = VOXA_MEASURE_PERIMETER | VOXA_MEASURE_EULER;
    VOXA_FAIL_IF(flags & ~(VOXA_MEASURE_MOMENTS | VOXA_MEASURE_STD | passes), VOXA_EINVAL,
                 "flags: %d (VOXA_MEASURE_MOMENTS | _STD | _PERIMETER | _EULER; intensity "
                 "follows the intensity store)", flags);
    VOXA_FAIL_IF((flags & VOXA_MEASURE_PERIMETER) && nd != 2, VOXA_EINVAL,
                 "perimeter: 2-D labels only (these are %d-D)", nd);
    VOXA_FAIL_IF((flags & VOXA_MEASURE_EULER) && nd != 2 && nd != 3, VOXA_EINVAL,
                 "euler_number: 2-D or 3-D labels only (these are %d-D)", nd);
    VOXA_CHECK(voxa_measure_acc_new(nd, shape,
                                    (flags & ~passes) | (intensity ? VOXA_MEASURE_INTENSITY : 0),
                                    &acc));
    st = voxa_array_new(&lbuf, lt, nd, block);
    if (st == VOXA_OK && intensity) st = voxa_array_new(&ibuf, it, nd, block);
    if (st != VOXA_OK) goto done;
    for (int64_t b = 0; b < nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], rem = b;
        voxa_array lv = lbuf, iv = ibuf;
        for (int d = nd - 1; d >= 0; d--) {
            lo[d] = (rem % grid[d]) * block[d];
            rem /= grid[d];
            int64_t e = shape[d] - lo[d] < block[d] ? shape[d] - lo[d] : block[d];
            lv.shape[d] = iv.shape[d] = e;
        }
        lv.owner = iv.owner = NULL;
        st = voxa_store_read(labels, lo, &lv);
        if (st == VOXA_OK && intensity) st = voxa_store_read(intensity, lo, &iv);
        if (st == VOXA_OK) st = voxa_measure_add(acc, &lv, intensity ? &iv : NULL, lo);
        if (st == VOXA_OK) st = voxa__progress(&progress, b + 1, nblocks + pblocks);
        if (st != VOXA_OK) goto done;
    }
    st = voxa_measure_acc_table(acc, spacing, t);
    voxa_array_free(&lbuf); /* the first pass's blocks: not held during the second */
    voxa_array_free(&ibuf);
    if (st == VOXA_OK && (flags & passes))
        st = count_passes(labels, nd, shape, lt, flags, &per, &eul, &progress, nblocks,
                          nblocks + pblocks, t);
done:
    voxa_array_free(&lbuf);
    voxa_array_free(&ibuf);
    voxa_measure_acc_free(acc);
    if (st != VOXA_OK) voxa_measure_table_free(t);
    return st;
}
