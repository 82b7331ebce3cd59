/* voxa balls: masks of balls around float points (workload W1).
 *
 * Voxel v is inside the ball of point p iff
 *     sum_d ((v_d - p_d) * s_d)^2 <= r^2
 * evaluated in double precision, summing over axes in order 0..ndim-1. */
#ifndef VOXA_BALLS_H
#define VOXA_BALLS_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct voxa_balls_params {
    const double *points;  /* npoints x ndim, row-major, axis order (z, y, x) */
    int64_t npoints;
    double radius;         /* used when radii is NULL */
    const double *radii;   /* npoints radii, or NULL */
    const double *spacing; /* ndim voxel sizes (> 0), or NULL for all 1 */
    int owner;             /* 0: 0/1 mask; 1: 1-based index of the nearest
                              point within reach (ties: lower index), 0 outside */
    voxa_progress progress;
} voxa_balls_params;

/** Paint balls into `out` (caller-provided, any strides; every voxel is
 *  written). Mask mode: out dtype bool or uint8. Owner mode: int32, uint32 or
 *  int64 (EOVERFLOW if npoints does not fit). Points may lie partly or wholly
 *  outside the volume. Errors: EINVAL for NaN/inf coordinates, negative or
 *  non-finite radii, non-positive spacing. Cost O(npoints * r^(ndim-1)) run
 *  computations + O(output) writes. */
VOXA_API voxa_status voxa_balls(const voxa_balls_params *p, voxa_array *out);

/** Halo a chunk needs per axis for exact results: ceil(max_r / s_d). */
VOXA_API voxa_status voxa_balls_halo(const voxa_balls_params *p, int ndim,
                                     int64_t *halo);

#ifdef __cplusplus
}
#endif
#endif
