/* The Euler characteristic of every object of a 2-D or 3-D label image in
 * one pass (voxa_measure_euler), as skimage.measure.euler_number(object,
 * connectivity=ndim) gives it object by object (regionprops' `euler_number`:
 * 8-connected objects and 4-connected holes in 2-D, 26- and 6- in 3-D).
 *
 * An object is taken as the union of its voxels as closed unit cubes: two
 * voxels that share only a corner touch, so the union's components are the
 * 26- (8-) connected components, and the holes of the complement are 6- (4-)
 * connected. Its Euler characteristic is V - E + F - C over the cells of
 * that cubical complex: the lattice points, edges, faces and cubes that
 * touch at least one of its voxels. Every cell is named by its lowest
 * lattice point p and touches voxels p - d with d in {0, 1}^3:
 *   the vertex p         all 8;
 *   the edge along a     the 4 with d_a = 0;
 *   the face across a    the 2 with d_b = d_c = 0 (b, c != a);
 *   the cube             d = 0 only.
 * So one 2x2x2 window of labels per lattice point gives every cell named by
 * it, and each distinct label in a cell's voxels gets that cell's sign. A
 * window of one label adds 1 - 3 + 3 - 1 = 0 and is skipped: the work is at
 * the objects' borders. A 2-D image is one plane of cubes: X x [0, 1] has
 * the Euler characteristic of X, and one plane's 26-neighbours are its 8.
 * Counts are integers, exact for any size.
 *
 * voxa_measure_euler_counts counts the lattice points of a core box of a
 * larger array (the rest is context, of which the cells read one voxel
 * before the core; beyond the array is outside the image, so the lattice
 * points at its far end belong to a core that reaches it), so chunks with a
 * voxel of their neighbours on each side add up to the whole (voxa.dask).
 * Memory: 4 rows of labels (int64). */
#include "measure_internal.h"

#include <string.h>

/* Index of label L in the ascending list `rows` (n), or -1. */
static int64_t find_label(const int64_t *rows, int64_t n, int64_t L) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rows[mid] < L) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && rows[lo] == L ? lo : -1;
}

typedef struct tally {
    const int64_t *rows;
    int64_t n;
    int64_t *chi;
    int64_t last, last_row; /* the last label looked up */
} tally;

/* Add s to every distinct label > 0 among v[0, k). */
static void add_distinct(tally *t, const int64_t *v, int k, int s) {
    for (int i = 0; i < k; i++) {
        int64_t L = v[i];
        if (L <= 0) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = v[j] == L;
        if (seen) continue;
        if (L != t->last) t->last = L, t->last_row = find_label(t->rows, t->n, L);
        if (t->last_row >= 0) t->chi[t->last_row] += s;
    }
}

/* The cells named by one lattice point, from its window w[d0 d1 d2] (bit
 * d0 = 4, d1 = 2, d2 = 1: the voxel p - d). */
static void window(tally *t, const int64_t *w) {
    int64_t v[4];
    add_distinct(t, w, 8, +1); /* the vertex */
    for (int a = 0; a < 3; a++) { /* edges along a: d_a = 0 */
        int bit = 4 >> a, k = 0;
        for (int i = 0; i < 8; i++)
            if (!(i & bit)) v[k++] = w[i];
        add_distinct(t, v, 4, -1);
    }
    for (int a = 0; a < 3; a++) { /* faces across a: d = 0 or d = e_a */
        v[0] = w[0];
        v[1] = w[4 >> a];
        add_distinct(t, v, 2, +1);
    }
    if (w[0] > 0) add_distinct(t, w, 1, -1); /* the cube */
}

/* Label row y of plane z into dst[1 .. nx] (dst[0] = dst[nx + 1] = 0); a row
 * outside the array is all 0. a is 3-D (a 2-D image comes as one plane). */
static voxa_status read_row(const voxa_array *a, int64_t z, int64_t y, int64_t *dst) {
    int64_t nx = a->shape[2];
    if (z < 0 || z >= a->shape[0] || y < 0 || y >= a->shape[1]) {
        memset(dst, 0, (size_t)(nx + 2) * sizeof *dst);
        return VOXA_OK;
    }
    dst[0] = dst[nx + 1] = 0;
    const char *p = (const char *)a->data + z * a->strides[0] + y * a->strides[1];
    return voxa__measure_read_labels(a, p, nx, dst + 1);
}

/* The lattice points [lo, hi] of one axis that a core [clo, chi) of an axis
 * of extent n names: its own, and the far end when the core reaches it. */
static int64_t last_point(int64_t chi, int64_t n) { return chi == n ? n : chi - 1; }

static voxa_status count_core(const voxa_array *a, const int64_t *clo, const int64_t *chi,
                              tally *t) {
    int64_t nx = a->shape[2];
    int64_t *buf = voxa__malloc((size_t)(nx + 2) * 4, sizeof *buf);
    VOXA_FAIL_IF(!buf, VOXA_ENOMEM, "euler_number: no memory for rows of %lld", (long long)nx);
    /* r[d0 * 2 + d1]: the row (z - d0, y - d1), padded: voxel x - d2 at x - d2 + 1 */
    int64_t *r[4] = {buf, buf + (nx + 2), buf + 2 * (nx + 2), buf + 3 * (nx + 2)};
    voxa_status st = VOXA_OK;
    int64_t z1 = last_point(chi[0], a->shape[0]), y1 = last_point(chi[1], a->shape[1]);
    int64_t x1 = last_point(chi[2], nx);
    for (int64_t z = clo[0]; z <= z1 && st == VOXA_OK; z++)
        for (int64_t y = clo[1]; y <= y1 && st == VOXA_OK; y++) {
            for (int k = 0; k < 4 && st == VOXA_OK; k++)
                st = read_row(a, z - (k >> 1), y - (k & 1), r[k]);
            for (int64_t x = clo[2]; x <= x1 && st == VOXA_OK; x++) {
                int64_t w[8];
                for (int k = 0; k < 4; k++) { /* bits d0 d1 from k, d2 the column */
                    w[(k << 1)] = r[k][x + 1];
                    w[(k << 1) | 1] = r[k][x];
                }
                int same = 1;
                for (int i = 1; i < 8 && same; i++) same = w[i] == w[0];
                if (!same) window(t, w);
            }
        }
    voxa__free(buf);
    return st;
}

static voxa_status check_args(const voxa_array *labels, const int64_t *rows, int64_t n) {
    VOXA_FAIL_IF(!labels || (n > 0 && !rows), VOXA_EINVAL, "euler_number: NULL argument");
    VOXA_CHECK(voxa_array_check(labels, "labels"));
    VOXA_FAIL_IF(labels->ndim != 2 && labels->ndim != 3, VOXA_EINVAL,
                 "euler_number: 2-D or 3-D labels only (these are %d-D)", labels->ndim);
    for (int64_t i = 1; i < n; i++)
        VOXA_FAIL_IF(rows[i] <= rows[i - 1], VOXA_EINVAL, "euler_number: labels not ascending");
    return VOXA_OK;
}

voxa_status voxa_measure_euler_counts(const voxa_array *labels, const int64_t *core_lo,
                                      const int64_t *core_hi, const int64_t *rows, int64_t n,
                                      int64_t *chi) {
    VOXA_CHECK(check_args(labels, rows, n));
    VOXA_FAIL_IF(!core_lo || !core_hi || !chi, VOXA_EINVAL, "euler_number: NULL argument");
    voxa_array a = *labels; /* as 3-D: a 2-D image is one plane */
    int64_t lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    int off = 3 - labels->ndim;
    if (off) {
        a.ndim = 3;
        a.shape[0] = 1;
        a.strides[0] = 0;
        for (int d = 0; d < 2; d++) {
            a.shape[d + 1] = labels->shape[d];
            a.strides[d + 1] = labels->strides[d];
        }
    }
    for (int d = 0; d < labels->ndim; d++) {
        VOXA_FAIL_IF(core_lo[d] < 0 || core_hi[d] > labels->shape[d] || core_lo[d] > core_hi[d],
                     VOXA_EINVAL, "euler_number: core [%lld, %lld) outside axis %d of %lld",
                     (long long)core_lo[d], (long long)core_hi[d], d,
                     (long long)labels->shape[d]);
        lo[d + off] = core_lo[d];
        hi[d + off] = core_hi[d];
    }
    for (int d = 0; d < 3; d++)
        if (lo[d] == hi[d]) return VOXA_OK; /* an empty core names nothing */
    tally t = {rows, n, chi, 0, -1};
    return count_core(&a, lo, hi, &t);
}

voxa_status voxa_measure_euler(const voxa_array *labels, const int64_t *rows, int64_t n,
                               int64_t *out) {
    VOXA_CHECK(check_args(labels, rows, n));
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "euler_number: NULL argument");
    int64_t lo[3] = {0, 0, 0};
    memset(out, 0, (size_t)n * sizeof *out);
    return voxa_measure_euler_counts(labels, lo, labels->shape, rows, n, out);
}
