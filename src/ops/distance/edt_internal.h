/* Shared inside the distance family only. */
#ifndef VOXA_EDT_INTERNAL_H
#define VOXA_EDT_INTERNAL_H

#include "internal.h"

#include <stdint.h>

/* scipy's Euclidean feature transform of a C-contiguous 0/non-zero volume
 * (background: 0): feat[k * n + i] = coordinate k of voxel i's nearest
 * background voxel (nd planes of n voxels, scipy's indices layout), chosen
 * among equally near ones as scipy.ndimage does. The volume must have
 * background. spacing: nd values > 0, or NULL. */
voxa_status voxa__edt_feature(const uint8_t *src, int nd, const int64_t *shape,
                              const double *spacing, int32_t *feat);

/* scipy's squared distance at idx for a volume without background: from
 * index (-1, 0, ..., 0). spacing: nd values, or NULL. */
double voxa__edt_nobg_d2(int nd, const int64_t *idx, const double *spacing);

/* A squared distance d2 written at p as voxa_edt writes it: float64 or
 * float32 (sqrt unless squared), uint32 (squared, saturated). */
void voxa__edt_put(char *p, voxa_dtype t, double d2, int squared);

#endif
