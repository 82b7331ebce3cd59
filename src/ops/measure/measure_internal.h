/* Shared by the measure files (not installed): the per-label table. */
#ifndef VOXA_MEASURE_INTERNAL_H
#define VOXA_MEASURE_INTERNAL_H

#include "internal.h"
#include "voxa/measure.h"

#include <math.h>
#include <stdlib.h>

/* Sums of coordinate products: exact integers where the compiler has
 * 128-bit ones (GCC, Clang on 64-bit targets), else long double. */
#ifdef __SIZEOF_INT128__
typedef __int128 voxa__wide;
#else
typedef long double voxa__wide;
#endif

/* Index of the pair (i, j), i <= j, among nd(nd+1)/2 (row-major upper triangle). */
static inline int voxa__pair(int i, int j, int nd) { return i * nd - i * (i - 1) / 2 + (j - i); }

/* Rows of per-label sums (structure of arrays, n rows in first-seen order)
 * and an open-addressing hash table label -> row + 1 (0: empty slot). */
typedef struct voxa__mtable {
    int nd, wi, wq, ws;  /* axes; with intensity; with second moments; with deviations */
    int bits;            /* 2^bits slots */
    int64_t n, cap;      /* rows used, rows allocated */
    int64_t *slot;
    int64_t *label, *count;
    int64_t *lo, *hi;    /* bounding box, inclusive (n x nd) */
    int64_t *csum;       /* sums of coordinates (n x nd) */
    voxa__wide *qsum;    /* sums of coordinate products x_i x_j, i <= j (n x nd(nd+1)/2) */
    double *isum, *imin, *imax;
    double *isq;         /* with ws: sums of squared deviations from the label's mean
                            (merged as Chan et al. merge variances) */
    double *wsum;        /* sums of coordinate x intensity (n x nd) */
} voxa__mtable;

void voxa__mtable_init(voxa__mtable *t, int nd, int wi, int wq, int ws);
void voxa__mtable_free(voxa__mtable *t);
int64_t voxa__mtable_row(voxa__mtable *t, int64_t key);
voxa_status voxa__mtable_merge(voxa__mtable *t, const voxa__mtable *p);

/* Accumulate a checked region (labels, optional intensity of the same
 * shape) whose first voxel is at `origin` into `acc`. */
voxa_status voxa__measure_region(voxa__mtable *acc, const voxa_array *lab, const voxa_array *val,
                                 const int64_t *origin);

/* Shape properties of row r of a table with moments2 (measure_shape.c):
 * the inertia tensor (nd x nd), its eigenvalues (descending, >= 0), the
 * 2-D/3-D axis lengths, the 2-D eccentricity and orientation. */
void voxa__measure_tensor(const voxa_measure_table *t, int64_t r, double *T);
void voxa__measure_eigvals(const voxa_measure_table *t, int64_t r, double *ev);
double voxa__measure_axis_length(const voxa_measure_table *t, int64_t r, int major);
double voxa__measure_eccentricity(const voxa_measure_table *t, int64_t r);
double voxa__measure_orientation(const voxa_measure_table *t, int64_t r);

/* One row of n labels at p (the array's last-axis stride) as int64; EINVAL
 * for uint64 values above 2^63 - 1. */
voxa_status voxa__measure_read_labels(const voxa_array *a, const char *p, int64_t n,
                                      int64_t *dst);

/* Index of label L in the ascending list `rows` (n), or -1 (binary search). */
static inline int64_t voxa__measure_find_label(const int64_t *rows, int64_t n, int64_t L) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (rows[mid] < L) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && rows[lo] == L ? lo : -1;
}

/* The checks of a counting pass over labels (perimeter, euler_number),
 * with `what` in the messages: labels of ndim in [nd_lo, nd_hi], rows
 * ascending, out not NULL and, when core_lo is given, the core box
 * [core_lo, core_hi) inside the array. */
voxa_status voxa__measure_check_counts(const char *what, const voxa_array *labels, int nd_lo,
                                       int nd_hi, const int64_t *rows, int64_t n,
                                       const int64_t *core_lo, const int64_t *core_hi,
                                       const void *out);

/* Voxels per tile of rows (default 2^22; tests lower it). */
extern int64_t voxa__measure_tile_voxels;

struct voxa_measure_acc {
    voxa__mtable t;
    int64_t shape[VOXA_MAXDIM];
};

#endif
