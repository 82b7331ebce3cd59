/* Shared by the measure files (not installed): the per-label table. */
#ifndef VOXA_MEASURE_INTERNAL_H
#define VOXA_MEASURE_INTERNAL_H

#include "internal.h"
#include "voxa/measure.h"

#include <math.h>
#include <stdlib.h>

/* Rows of per-label sums (structure of arrays, n rows in first-seen order)
 * and an open-addressing hash table label -> row + 1 (0: empty slot). */
typedef struct voxa__mtable {
    int nd, wi;          /* axes; with intensity */
    int bits;            /* 2^bits slots */
    int64_t n, cap;      /* rows used, rows allocated */
    int64_t *slot;
    int64_t *label, *count;
    int64_t *lo, *hi;    /* bounding box, inclusive (n x nd) */
    int64_t *csum;       /* sums of coordinates (n x nd) */
    double *isum, *imin, *imax;
    double *wsum;        /* sums of coordinate x intensity (n x nd) */
} voxa__mtable;

void voxa__mtable_init(voxa__mtable *t, int nd, int wi);
void voxa__mtable_free(voxa__mtable *t);
int64_t voxa__mtable_row(voxa__mtable *t, int64_t key);
voxa_status voxa__mtable_merge(voxa__mtable *t, const voxa__mtable *p);

/* Accumulate a checked region (labels, optional intensity of the same
 * shape) whose first voxel is at `origin` into `acc`. */
voxa_status voxa__measure_region(voxa__mtable *acc, const voxa_array *lab, const voxa_array *val,
                                 const int64_t *origin);

/* Voxels per tile of rows (default 2^22; tests lower it). */
extern int64_t voxa__measure_tile_voxels;

struct voxa_measure_acc {
    voxa__mtable t;
    int64_t shape[VOXA_MAXDIM];
};

#endif
