/* Per-label measurements in one pass over the volume (voxa_measure_*).
 *
 * Algorithm. The volume is walked row by row (a row runs along the last,
 * fastest axis); each row's labels are read once into int64 and its
 * intensities into double (one dtype switch per row, not per voxel). Runs of
 * equal labels are folded at once: the count and the coordinate sums of a run
 * are closed forms, so a run costs one hash lookup whatever its length. Per
 * label the accumulator keeps: count, integer coordinate sums, bounding box,
 * and with intensity the sum, min, max and sum of coordinate x intensity.
 * Memory is O(labels present): an open-addressing hash table from label to
 * row (labels may be sparse up to 2^63).
 *
 * Threads. Rows are cut into tiles of a fixed number of rows that depends on
 * the region's shape only; tiles are measured in parallel into partial tables
 * and merged into the accumulator in tile order. So every addition happens in
 * the same order whatever the thread count: floating-point intensity sums are
 * identical for every thread count. Integer quantities (counts, coordinate
 * sums, bounding boxes, integer intensity sums below 2^53) are exact and
 * therefore also identical for any cut of the volume into regions.
 *
 * Cost: one read of the labels (and intensities), O(1) per run plus O(1) per
 * voxel with intensity; merges O(labels per tile). Equality with
 * skimage.measure.regionprops_table is argued in measure_table.c. */
#include "measure_internal.h"

#include <string.h>

/* ---- the hash table of rows -------------------------------------------------- */

static inline uint64_t hash(int64_t key, int bits) {
    return ((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - bits);
}

static voxa_status grow_rows(voxa__mtable *t) {
    int64_t cap = t->cap ? 2 * t->cap : 64;
    int nd = t->nd;
#define GROW(field, type, per)                                                 \
    do {                                                                       \
        type *p = realloc(t->field, (size_t)cap * (per) * sizeof(type));       \
        if (!p) return voxa__error(VOXA_ENOMEM, "measure: no memory for %lld labels", (long long)cap); \
        t->field = p;                                                          \
    } while (0)
    GROW(label, int64_t, 1);
    GROW(count, int64_t, 1);
    GROW(lo, int64_t, nd);
    GROW(hi, int64_t, nd);
    GROW(csum, int64_t, nd);
    if (t->wq) GROW(qsum, voxa__wide, nd * (nd + 1) / 2);
    if (t->wi) {
        GROW(isum, double, 1);
        if (t->ws) GROW(isq, double, 1);
        GROW(imin, double, 1);
        GROW(imax, double, 1);
        GROW(wsum, double, nd);
    }
#undef GROW
    t->cap = cap;
    return VOXA_OK;
}

static voxa_status grow_slots(voxa__mtable *t) {
    int bits = t->bits ? t->bits + 1 : 8;
    VOXA_FAIL_IF(bits > 62, VOXA_ENOMEM, "measure: label table too large");
    int64_t *slot = calloc((size_t)1 << bits, sizeof(int64_t));
    VOXA_FAIL_IF(!slot, VOXA_ENOMEM, "measure: no memory for the label table");
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    for (int64_t r = 0; r < t->n; r++) {
        uint64_t h = hash(t->label[r], bits);
        while (slot[h]) h = (h + 1) & mask;
        slot[h] = r + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->bits = bits;
    return VOXA_OK;
}

void voxa__mtable_init(voxa__mtable *t, int nd, int wi, int wq, int ws) {
    memset(t, 0, sizeof *t);
    t->nd = nd;
    t->wi = wi;
    t->wq = wq;
    t->ws = ws && wi;
}

void voxa__mtable_free(voxa__mtable *t) {
    free(t->slot);
    free(t->label);
    free(t->count);
    free(t->lo);
    free(t->hi);
    free(t->csum);
    free(t->qsum);
    free(t->isum);
    free(t->isq);
    free(t->imin);
    free(t->imax);
    free(t->wsum);
    voxa__mtable_init(t, t->nd, t->wi, t->wq, t->ws);
}

/* Empty the table, keeping its memory: O(rows), not O(slots). */
static void mtable_clear(voxa__mtable *t) {
    uint64_t mask = ((uint64_t)1 << t->bits) - 1;
    for (int64_t r = 0; r < t->n; r++) {
        uint64_t h = hash(t->label[r], t->bits);
        while (t->slot[h] != r + 1) h = (h + 1) & mask;
        t->slot[h] = 0;
    }
    t->n = 0;
}

/* The row of `key`, created empty if new; -1 on ENOMEM (message set). */
int64_t voxa__mtable_row(voxa__mtable *t, int64_t key) {
    if (t->bits == 0 && grow_slots(t) != VOXA_OK) return -1;
    uint64_t mask = ((uint64_t)1 << t->bits) - 1;
    uint64_t h = hash(key, t->bits);
    for (;;) {
        int64_t s = t->slot[h];
        if (!s) break;
        if (t->label[s - 1] == key) return s - 1;
        h = (h + 1) & mask;
    }
    /* New row: keep the load factor at most 1/2. */
    if (2 * (t->n + 1) > ((int64_t)1 << t->bits)) {
        if (grow_slots(t) != VOXA_OK) return -1;
        return voxa__mtable_row(t, key);
    }
    if (t->n == t->cap && grow_rows(t) != VOXA_OK) return -1;
    int64_t r = t->n++, nd = t->nd;
    t->slot[h] = r + 1;
    t->label[r] = key;
    t->count[r] = 0;
    for (int64_t d = 0; d < nd; d++) {
        t->lo[r * nd + d] = INT64_MAX;
        t->hi[r * nd + d] = INT64_MIN;
        t->csum[r * nd + d] = 0;
    }
    for (int64_t q = 0, nq = nd * (nd + 1) / 2; t->wq && q < nq; q++) t->qsum[r * nq + q] = 0;
    if (t->wi) {
        t->isum[r] = 0;
        if (t->ws) t->isq[r] = 0;
        t->imin[r] = INFINITY;
        t->imax[r] = -INFINITY;
        for (int64_t d = 0; d < nd; d++) t->wsum[r * nd + d] = 0;
    }
    return r;
}

/* Squared deviations of two parts (sum of squares about each part's mean,
 * sum, count) about the mean of both: qa + qb + d^2 na nb / (na + nb), d the
 * difference of the means (Chan, Golub & LeVeque): no cancellation, unlike
 * sum(x^2) - n mean^2. */
static inline double merged_sq(double qa, double sa, int64_t na, double qb, double sb,
                               int64_t nb) {
    if (na == 0) return qb;
    if (nb == 0) return qa;
    double d = sb / (double)nb - sa / (double)na;
    return qa + qb + d * d * ((double)na * (double)nb / (double)(na + nb));
}

/* NaN-propagating min/max, as NumPy's np.min/np.max. */
static inline double nmin(double a, double v) { return (v < a || v != v) ? v : a; }
static inline double nmax(double a, double v) { return (v > a || v != v) ? v : a; }

/* Fold partial table `p` into `t`, row by row in p's order. */
voxa_status voxa__mtable_merge(voxa__mtable *t, const voxa__mtable *p) {
    int64_t nd = t->nd;
    for (int64_t i = 0; i < p->n; i++) {
        int64_t r = voxa__mtable_row(t, p->label[i]);
        if (r < 0) return VOXA_ENOMEM;
        t->count[r] += p->count[i];
        for (int64_t d = 0; d < nd; d++) {
            int64_t a = r * nd + d, b = i * nd + d;
            t->csum[a] += p->csum[b];
            if (p->lo[b] < t->lo[a]) t->lo[a] = p->lo[b];
            if (p->hi[b] > t->hi[a]) t->hi[a] = p->hi[b];
        }
        for (int64_t q = 0, nq = nd * (nd + 1) / 2; t->wq && q < nq; q++)
            t->qsum[r * nq + q] += p->qsum[i * nq + q];
        if (t->wi) {
            if (t->ws)
                t->isq[r] = merged_sq(t->isq[r], t->isum[r], t->count[r] - p->count[i],
                                      p->isq[i], p->isum[i], p->count[i]);
            t->isum[r] += p->isum[i];
            t->imin[r] = nmin(t->imin[r], p->imin[i]);
            t->imax[r] = nmax(t->imax[r], p->imax[i]);
            for (int64_t d = 0; d < nd; d++) t->wsum[r * nd + d] += p->wsum[i * nd + d];
        }
    }
    return VOXA_OK;
}

/* ---- rows to int64 / double ----------------------------------------------------- */

/* contiguous rows in their own loop: the compiler vectorises it */
#define READ_ROW(T, dst, conv)                                                 \
    if (st == (int64_t)sizeof(T))                                              \
        for (int64_t i = 0; i < n; i++) dst[i] = (conv)(((const T *)p)[i]);    \
    else                                                                       \
        for (int64_t i = 0; i < n; i++) dst[i] = (conv)(*(const T *)(p + i * st));

voxa_status voxa__measure_read_labels(const voxa_array *a, const char *p, int64_t n,
                                      int64_t *dst) {
    int64_t st = a->strides[a->ndim - 1];
    switch (a->dtype) {
    case VOXA_U8: READ_ROW(uint8_t, dst, int64_t) break;
    case VOXA_I8: READ_ROW(int8_t, dst, int64_t) break;
    case VOXA_U16: READ_ROW(uint16_t, dst, int64_t) break;
    case VOXA_I16: READ_ROW(int16_t, dst, int64_t) break;
    case VOXA_U32: READ_ROW(uint32_t, dst, int64_t) break;
    case VOXA_I32: READ_ROW(int32_t, dst, int64_t) break;
    case VOXA_I64: READ_ROW(int64_t, dst, int64_t) break;
    case VOXA_U64:
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = *(const uint64_t *)(p + i * st);
            VOXA_FAIL_IF(v > (uint64_t)INT64_MAX, VOXA_EINVAL,
                         "labels: value %llu is above the largest label (2^63 - 1)",
                         (unsigned long long)v);
            dst[i] = (int64_t)v;
        }
        break;
    default: return voxa__error(VOXA_EINTERNAL, "measure: label dtype");
    }
    return VOXA_OK;
}

voxa_status voxa__measure_check_counts(const char *what, const voxa_array *labels, int nd_lo,
                                       int nd_hi, const int64_t *rows, int64_t n,
                                       const int64_t *core_lo, const int64_t *core_hi,
                                       const void *out) {
    VOXA_FAIL_IF(!labels || (n > 0 && !rows) || !out, VOXA_EINVAL, "%s: NULL argument", what);
    VOXA_CHECK(voxa_array_check(labels, "labels"));
    VOXA_FAIL_IF(labels->ndim < nd_lo || labels->ndim > nd_hi, VOXA_EINVAL,
                 "%s: %s labels only (these are %d-D)", what,
                 nd_lo == nd_hi ? "2-D" : "2-D or 3-D", labels->ndim);
    for (int64_t i = 1; i < n; i++)
        VOXA_FAIL_IF(rows[i] <= rows[i - 1], VOXA_EINVAL, "%s: labels not ascending", what);
    if (!core_lo) return VOXA_OK;
    VOXA_FAIL_IF(!core_hi, VOXA_EINVAL, "%s: NULL argument", what);
    for (int d = 0; d < labels->ndim; d++)
        VOXA_FAIL_IF(core_lo[d] < 0 || core_hi[d] > labels->shape[d] || core_lo[d] > core_hi[d],
                     VOXA_EINVAL, "%s: core [%lld, %lld) outside axis %d of %lld", what,
                     (long long)core_lo[d], (long long)core_hi[d], d,
                     (long long)labels->shape[d]);
    return VOXA_OK;
}

static void read_values(const voxa_array *a, const char *p, int64_t n, double *dst) {
    int64_t st = a->strides[a->ndim - 1];
    switch (a->dtype) {
    case VOXA_BOOL: case VOXA_U8: READ_ROW(uint8_t, dst, double) break;
    case VOXA_I8: READ_ROW(int8_t, dst, double) break;
    case VOXA_U16: READ_ROW(uint16_t, dst, double) break;
    case VOXA_I16: READ_ROW(int16_t, dst, double) break;
    case VOXA_U32: READ_ROW(uint32_t, dst, double) break;
    case VOXA_I32: READ_ROW(int32_t, dst, double) break;
    case VOXA_U64: READ_ROW(uint64_t, dst, double) break;
    case VOXA_I64: READ_ROW(int64_t, dst, double) break;
    case VOXA_F32: READ_ROW(float, dst, double) break;
    case VOXA_F64: READ_ROW(double, dst, double) break;
    default: break;
    }
}
#undef READ_ROW

/* ---- one row ------------------------------------------------------------------- */

/* 0^2 + 1^2 + ... + k^2 (k >= -1) */
static inline voxa__wide squares(int64_t k) {
    voxa__wide w = k;
    return w * (w + 1) * (2 * w + 1) / 6;
}

/* The run's sums of coordinate products (closed forms): the row's fixed
 * coordinates with each other, with the run's sum s1, and the run's sum of
 * squares. Out of line: only asked-for second moments pay for it. */
static __attribute__((noinline)) void add_products(voxa__mtable *t, int64_t r, const int64_t *c,
                                                   int64_t len, int64_t s1, int64_t X0,
                                                   int64_t X1) {
    const int nd = t->nd, last = nd - 1;
    voxa__wide *q = t->qsum + r * (nd * (nd + 1) / 2);
    for (int d = 0; d < last; d++) {
        for (int k = d; k < last; k++) q[voxa__pair(d, k, nd)] += (voxa__wide)c[d] * c[k] * len;
        q[voxa__pair(d, last, nd)] += (voxa__wide)c[d] * s1;
    }
    q[voxa__pair(last, last, nd)] += squares(X1) - squares(X0 - 1);
}

/* Accumulate the run [x, e) of label L (> 0) of one row; c holds the global
 * coordinates of the row on axes 0..nd-2 and x0 that of its first voxel on
 * the last axis; va/vrow: the intensity view and row (va NULL: none), vb:
 * scratch for the run's values. prev and row cache the last label's row. */
static inline voxa_status add_run(voxa__mtable *t, int64_t L, int64_t *prev, int64_t *row,
                                  int64_t x, int64_t e, const voxa_array *va, const char *vrow,
                                  double *vb, const int64_t *c, int64_t x0) {
    const int64_t nd = t->nd, last = nd - 1;
    if (L != *prev || *row < 0) {
        *row = voxa__mtable_row(t, L);
        if (*row < 0) return VOXA_ENOMEM;
        *prev = L;
    }
    int64_t r = *row, len = e - x, X0 = x0 + x, X1 = x0 + e - 1;
    int64_t *lo = t->lo + r * nd, *hi = t->hi + r * nd, *cs = t->csum + r * nd;
    t->count[r] += len;
    for (int64_t d = 0; d < last; d++) {
        cs[d] += c[d] * len;
        if (c[d] < lo[d]) lo[d] = c[d];
        if (c[d] > hi[d]) hi[d] = c[d];
    }
    /* X0 + ... + X1: (X0 + X1) * len is even (len odd => X0 + X1 even). */
    int64_t s1 = (X0 + X1) * len / 2;
    cs[last] += s1;
    if (__builtin_expect(t->wq, 0)) add_products(t, r, c, len, s1, X0, X1);
    if (X0 < lo[last]) lo[last] = X0;
    if (X1 > hi[last]) hi[last] = X1;
    if (va) {
        /* The run's intensities only (background is never converted). */
        read_values(va, vrow + x * va->strides[va->ndim - 1], len, vb);
        double s = 0, ws = 0, mn = t->imin[r], mx = t->imax[r];
        for (int64_t i = 0; i < len; i++) {
            double v = vb[i];
            s += v;
            ws += (double)(X0 + i) * v;
            mn = nmin(mn, v);
            mx = nmax(mx, v);
        }
        double *w = t->wsum + r * nd;
        if (t->ws) { /* the run's own squared deviations (its values are in vb), merged */
            double mr = s / (double)len, sq = 0;
            for (int64_t i = 0; i < len; i++) sq += (vb[i] - mr) * (vb[i] - mr);
            t->isq[r] = merged_sq(t->isq[r], t->isum[r], t->count[r] - len, sq, s, len);
        }
        t->isum[r] += s;
        t->imin[r] = mn;
        t->imax[r] = mx;
        for (int64_t d = 0; d < last; d++) w[d] += (double)c[d] * s;
        w[last] += ws;
    }
    return VOXA_OK;
}

/* Scan one contiguous row of labels of type T for runs of positive labels
 * (one instance per label dtype: no per-voxel conversion). Background is
 * most voxels: zeros are skipped 8 at a time. */
#define MEASURE_ROW(name, T)                                                   \
    static voxa_status name(voxa__mtable *t, const T *lab, const voxa_array *va,   \
                            const char *vrow, double *vb, int64_t nx,          \
                            const int64_t *c, int64_t x0) {                    \
        int64_t prev = 0, r = -1;                                              \
        for (int64_t x = 0; x < nx;) {                                         \
            while (x + 8 <= nx && !(lab[x] | lab[x + 1] | lab[x + 2] | lab[x + 3] | \
                                    lab[x + 4] | lab[x + 5] | lab[x + 6] | lab[x + 7])) \
                x += 8;                                                        \
            if (x >= nx) break;                                                \
            T v = lab[x];                                                      \
            if ((int64_t)v <= 0) {                                             \
                x++;                                                           \
                continue;                                                      \
            }                                                                  \
            int64_t e = x + 1;                                                 \
            while (e < nx && lab[e] == v) e++;                                 \
            VOXA_CHECK(add_run(t, (int64_t)v, &prev, &r, x, e, va, vrow, vb, c, x0)); \
            x = e;                                                             \
        }                                                                      \
        return VOXA_OK;                                                        \
    }
MEASURE_ROW(row_u8, uint8_t)
MEASURE_ROW(row_i8, int8_t)
MEASURE_ROW(row_u16, uint16_t)
MEASURE_ROW(row_i16, int16_t)
MEASURE_ROW(row_u32, uint32_t)
MEASURE_ROW(row_i32, int32_t)
MEASURE_ROW(row_i64, int64_t)
#undef MEASURE_ROW

/* Measure one row of labels at p: contiguous rows of any dtype but uint64 are
 * scanned in place; others are first read into lb as int64 (uint64 values are
 * checked there). */
static voxa_status measure_row(voxa__mtable *t, const voxa_array *L, const char *p, int64_t *lb,
                               const voxa_array *va, const char *vrow, double *vb, int64_t nx,
                               const int64_t *c, int64_t x0) {
    if (L->strides[L->ndim - 1] == (int64_t)voxa_dtype_size(L->dtype)) {
        switch (L->dtype) {
        case VOXA_U8: return row_u8(t, (const uint8_t *)p, va, vrow, vb, nx, c, x0);
        case VOXA_I8: return row_i8(t, (const int8_t *)p, va, vrow, vb, nx, c, x0);
        case VOXA_U16: return row_u16(t, (const uint16_t *)p, va, vrow, vb, nx, c, x0);
        case VOXA_I16: return row_i16(t, (const int16_t *)p, va, vrow, vb, nx, c, x0);
        case VOXA_U32: return row_u32(t, (const uint32_t *)p, va, vrow, vb, nx, c, x0);
        case VOXA_I32: return row_i32(t, (const int32_t *)p, va, vrow, vb, nx, c, x0);
        case VOXA_I64: return row_i64(t, (const int64_t *)p, va, vrow, vb, nx, c, x0);
        default: break;
        }
    }
    VOXA_CHECK(voxa__measure_read_labels(L, p, nx, lb));
    return row_i64(t, lb, va, vrow, vb, nx, c, x0);
}

/* Voxels per tile (a variable only so that tests can make many tiles). */
int64_t voxa__measure_tile_voxels = (int64_t)1 << 22;

/* ---- tiles in parallel --------------------------------------------------------------- */

typedef struct tile_job {
    const voxa_array *lab, *val;
    const int64_t *origin;
    int64_t nrows, tile_rows, first_tile; /* this wave: tiles first_tile + i */
    voxa__mtable *part;                   /* one per item of the wave */
    int64_t *lbuf;                        /* nx per item */
    double *vbuf;                         /* nx per item, or NULL */
} tile_job;

static voxa_status run_tiles(int64_t begin, int64_t end, int tid, void *vctx) {
    tile_job *j = vctx;
    const voxa_array *L = j->lab;
    int nd = L->ndim;
    int64_t nx = L->shape[nd - 1];
    for (int64_t i = begin; i < end; i++) {
        voxa__mtable *t = &j->part[i];
        int64_t *lb = j->lbuf + i * nx;
        double *vb = j->vbuf ? j->vbuf + i * nx : NULL;
        mtable_clear(t);
        int64_t r0 = (j->first_tile + i) * j->tile_rows;
        int64_t r1 = r0 + j->tile_rows < j->nrows ? r0 + j->tile_rows : j->nrows;
        for (int64_t row = r0; row < r1; row++) {
            int64_t c[VOXA_MAXDIM], rem = row, loff = 0, voff = 0;
            for (int d = nd - 2; d >= 0; d--) {
                int64_t k = rem % L->shape[d];
                rem /= L->shape[d];
                c[d] = j->origin[d] + k;
                loff += k * L->strides[d];
                if (j->val) voff += k * j->val->strides[d];
            }
            const char *vrow = j->val ? (const char *)j->val->data + voff : NULL;
            VOXA_CHECK(measure_row(t, L, (const char *)L->data + loff, lb, j->val, vrow, vb, nx,
                                   c, j->origin[nd - 1]));
        }
    }
    return VOXA_OK;
}

voxa_status voxa__measure_region(voxa__mtable *acc, const voxa_array *lab, const voxa_array *val,
                                 const int64_t *origin) {
    voxa_status st = VOXA_OK;
    int nd = lab->ndim;
    int64_t nx = lab->shape[nd - 1], nrows = 1;
    for (int d = 0; d < nd - 1; d++) nrows *= lab->shape[d];
    if (nx == 0 || nrows == 0) return VOXA_OK;
    /* Tiles of ~4M voxels: a function of the shape only (see the top); large
     * enough that a wave's start and merge cost little next to its work. */
    int64_t tile_rows = voxa__measure_tile_voxels / nx;
    if (tile_rows < 1) tile_rows = 1;
    int64_t ntiles = (nrows + tile_rows - 1) / tile_rows;
    int nt = voxa_get_threads();
    if (nt < 1) nt = 1;
    if (nt > ntiles) nt = (int)ntiles;
    tile_job j = {lab, val, origin, nrows, tile_rows, 0, NULL, NULL, NULL};
    j.part = calloc((size_t)nt, sizeof *j.part);
    j.lbuf = voxa__malloc((size_t)nt * (size_t)nx, sizeof(int64_t));
    if (val) j.vbuf = voxa__malloc((size_t)nt * (size_t)nx, sizeof(double));
    VOXA_GOTO_IF(!j.part || !j.lbuf || (val && !j.vbuf), VOXA_ENOMEM,
                 "measure: no memory for %d row buffers of %lld voxels", nt, (long long)nx);
    for (int i = 0; i < nt; i++) voxa__mtable_init(&j.part[i], nd, val != NULL, acc->wq, acc->ws);
    for (int64_t first = 0; first < ntiles; first += nt) {
        int64_t k = ntiles - first < nt ? ntiles - first : nt;
        j.first_tile = first;
        st = voxa__parallel_for_nt(k, 1, nt, run_tiles, &j);
        if (st != VOXA_OK) goto done;
        for (int64_t i = 0; i < k; i++) {
            st = voxa__mtable_merge(acc, &j.part[i]);
            if (st != VOXA_OK) goto done;
        }
    }
done:
    if (j.part)
        for (int i = 0; i < nt; i++) voxa__mtable_free(&j.part[i]);
    free(j.part);
    voxa__free(j.lbuf);
    voxa__free(j.vbuf);
    return st;
}
