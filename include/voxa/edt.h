/* voxa edt: exact distance transforms (scipy.ndimage.distance_transform_edt
 * and distance_transform_cdt semantics).
 *
 * Foreground = non-zero input voxels; every foreground voxel gets its
 * distance to the nearest background (zero) voxel inside the array;
 * background voxels get 0. Axes in NumPy order; spacing[d] is the voxel size
 * along axis d. */
#ifndef VOXA_EDT_H
#define VOXA_EDT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct voxa_edt_params {
    const double *spacing; /* ndim voxel sizes (finite, > 0), or NULL for 1 */
    int squared;           /* non-zero: squared distances */
    voxa_progress progress;
} voxa_edt_params;

/** Euclidean distance transform of `in` (any dtype, any strides) into `out`
 *  (same shape, any strides): float64 or float32 (distances, or squared with
 *  p->squared), or uint32 (squared, unit spacing only; EOVERFLOW when the
 *  shape allows squared distances >= 2^32). Equal to
 *  scipy.ndimage.distance_transform_edt(in, sampling=spacing), also when the
 *  input has no background (scipy then measures from index (-1, 0, ..., 0)).
 *  p may be NULL. Cost O(ndim * N), parallel over lines; extra memory 4 or 8
 *  bytes/voxel (none for float64 output). Errors: EINVAL (shape mismatch,
 *  ndim 0, bad spacing, bad out dtype), ENOMEM. */
VOXA_API voxa_status voxa_edt(const voxa_array *in, voxa_array *out,
                              const voxa_edt_params *p);

/** As voxa_edt, also giving for every voxel the index of a nearest background
 *  voxel: `indices` is int32 or int64 with shape (ndim, *in->shape) (scipy's
 *  return_indices layout). `out` may be NULL (indices only). Where several
 *  background voxels are equally near, the one scipy returns (its feature
 *  transform's rules and arithmetic, independent of the thread count). The
 *  spacing may also hold zero or negative values here (scipy accepts them).
 *  Extra memory 4 * ndim bytes/voxel (none for C-contiguous int32 indices). */
VOXA_API voxa_status voxa_edt_indices(const voxa_array *in, voxa_array *out,
                                      voxa_array *indices, const voxa_edt_params *p);

typedef enum voxa_edt_metric {
    VOXA_EDT_TAXICAB = 1,   /* city block, L1 */
    VOXA_EDT_CHESSBOARD = 2 /* L-infinity */
} voxa_edt_metric;

/** City-block or chessboard distance transform, as
 *  scipy.ndimage.distance_transform_cdt(in, metric): `out` int32 (or int64,
 *  float32, float64), same shape; -1 everywhere when there is no background.
 *  Taxicab: separable, O(ndim * N), parallel. Chessboard: two raster passes
 *  over the 3^ndim neighbourhood (exact for this metric), O(3^ndim N / 2). */
VOXA_API voxa_status voxa_edt_cdt(const voxa_array *in, voxa_array *out,
                                  voxa_edt_metric metric);

/** scipy.ndimage.distance_transform_cdt(in, metric) for any metric array:
 *  `metric` holds 3^ndim flags (C order; only the first half is used, as
 *  scipy does). `out` (int32, same shape; may be NULL) receives the
 *  distances, -1 where no background is reached; `indices` (int32/int64,
 *  shape (ndim, *shape); may be NULL) the index of the background voxel each
 *  distance comes from - both exactly scipy's, ties included.
 *  Sequential two raster passes, O(k N) for k true flags. */
VOXA_API voxa_status voxa_edt_chamfer(const voxa_array *in, voxa_array *out,
                                      const uint8_t *metric, voxa_array *indices);

/** The Euclidean transform in two passes, each over part of the volume (the
 *  chunk executor and voxa.dask run it so; together they equal voxa_edt on
 *  the whole volume bit for bit).
 *  Pass 1, voxa_edt_slices: for a block of whole slices `in` (axis 0 cut
 *  anywhere, every other axis whole; any dtype, any strides, ndim >= 2), the
 *  squared distance of every voxel to the background of its own slice
 *  (spacing[1..]), +inf where the slice has none, into `g` (C-contiguous,
 *  in's shape): float64, or uint32 with unit spacing (UINT32_MAX for none;
 *  EOVERFLOW unless the sum over axes 1.. of (n_d + 1)^2 is below 2^32 - 1).
 *  *has_bg becomes 1 if `in` holds background. */
VOXA_API voxa_status voxa_edt_slices(const voxa_array *in, const double *spacing, voxa_array *g,
                                     int *has_bg);

/** Pass 2, voxa_edt_columns: for a block `g` of pass 1's values holding axis
 *  0 whole (other axes cut anywhere; C-contiguous float64 or uint32), the transform
 *  along axis 0 of every column into `out` (C-contiguous, g's shape; dtypes
 *  and p as voxa_edt). `origin`: the block's position in the volume
 *  (origin[0] = 0); `has_bg`: whether the volume has any background (else
 *  scipy's distances from index (-1, 0, ..., 0), as voxa_edt). The uint32
 *  overflow check of voxa_edt needs the volume's shape: the caller's. Extra
 *  memory 40 (n + 1) bytes per thread, n = g->shape[0]. */
VOXA_API voxa_status voxa_edt_columns(const voxa_array *g, const int64_t *origin, int has_bg,
                                      const voxa_edt_params *p, voxa_array *out);

/** The same two passes for voxa_edt_cdt's metrics (taxicab, chessboard):
 *  voxa_edt_cdt_slices: voxa_edt_cdt of every slice of `in` alone into `g`
 *  (C-contiguous int32, in's shape; -1 where a slice has no background);
 *  voxa_edt_cdt_columns: for a block of those values holding axis 0 whole,
 *  min_q g(q) + |z - q| (taxicab) or min_q max(g(q), |z - q|) (chessboard)
 *  along axis 0 into `out` (C-contiguous int32, g's shape; -1 where the
 *  volume has no background). Together equal to voxa_edt_cdt. */
VOXA_API voxa_status voxa_edt_cdt_slices(const voxa_array *in, voxa_edt_metric metric,
                                         voxa_array *g);
VOXA_API voxa_status voxa_edt_cdt_columns(const voxa_array *g, voxa_edt_metric metric,
                                          voxa_array *out);

#ifdef __cplusplus
}
#endif
#endif
