/* The exact squared distance transform on a GPU backend (kernels:
 * src/core/sqdt.cl), the device twin of src/core/sqdt.h, shared by the
 * distance family (EDT) and the morph family (ball elements). Not
 * installed. */
#ifndef VOXA_GPU_SQDT_H
#define VOXA_GPU_SQDT_H

#include "gpu.h"

typedef struct voxa__gpu_sqdt {
    int ndim;
    int64_t shape[VOXA_MAXDIM];
    const voxa__buf *src;   /* device u8, C order, 0 / non-zero */
    int target;             /* distances TO voxels with (src != 0) == target */
    int border;             /* 1: every voxel outside the volume is a target */
    const double *spacing;  /* ndim values, or NULL for unit spacing */
    double cap;             /* values above become +inf (INFINITY: none) */
} voxa__gpu_sqdt;

/* Squared distances into `f` (device float64, one per voxel), bit for bit
 * those of voxa__sqdt_run's double path. A line scratch of at most
 * VOXA__GPU_SQDT_SCRATCH bytes is allocated and freed here. */
voxa_status voxa__gpu_sqdt_run(voxa__gpu *g, const voxa__gpu_sqdt *p, voxa__buf *f);

/* One pass of voxa__gpu_sqdt_run: axis ndim-1 is the rows pass (src into
 * f), any other axis the lines pass along it (f in place; whole lines along
 * `axis` must be in the box). The line scratch is at most scratch_cap bytes
 * (0: VOXA__GPU_SQDT_SCRATCH; at least one line). Passes run from the last
 * axis to the first give voxa__gpu_sqdt_run's result: a tiled caller may cut
 * the box along every other axis for each pass. */
voxa_status voxa__gpu_sqdt_pass(voxa__gpu *g, const voxa__gpu_sqdt *p, voxa__buf *f, int axis,
                                int64_t scratch_cap);

/* Scratch bytes voxa__gpu_sqdt_run allocates for this shape. */
int64_t voxa__gpu_sqdt_scratch(int ndim, const int64_t *shape);

#define VOXA__GPU_SQDT_SCRATCH ((int64_t)256 << 20)

#endif
