/* voxa roi: copy many fixed-shape patches out of an N-d array into one
 * contiguous (N, *patch, *trailing) array, and paste them back (workload W3).
 *
 * Coordinates are int64, one row of k values per patch (row-major n x k),
 * axes in NumPy order. They address the first k axes of the array; the
 * remaining ndim - k axes (channels) are taken whole. A row is a corner (the
 * patch covers [c, c + size) on each axis) or, with `centered`, a centre: the
 * corner is then centre - size / 2 (integer division, as Python's size // 2
 * for size >= 0). */
#ifndef VOXA_ROI_H
#define VOXA_ROI_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What happens where a patch reaches outside the array. The padding modes
 *  mean what numpy.pad's modes of the same name mean ('nearest' is pad's
 *  'edge'; 'reflect' mirrors without repeating the edge voxel, period
 *  2 * (n - 1), for any pad width, as np.pad does). */
typedef enum voxa_roi_mode {
    VOXA_ROI_ERROR = 0, /* EINVAL naming the first offending row */
    VOXA_ROI_CLIP,      /* shift the patch inside (EINVAL if it cannot fit) */
    VOXA_ROI_CONSTANT,  /* outside voxels are `cval` */
    VOXA_ROI_NEAREST,   /* outside voxels repeat the nearest edge voxel */
    VOXA_ROI_REFLECT,   /* mirror about the edge voxel (numpy 'reflect') */
    VOXA_ROI_CROP,      /* paste only: write the inside part, drop the rest */
    VOXA_ROI_NMODES
} voxa_roi_mode;

/** How a pasted patch combines with the volume. */
typedef enum voxa_paste_op {
    VOXA_PASTE_OVERWRITE = 0, /* volume = patch; later rows win */
    VOXA_PASTE_ADD,           /* volume += patch (NumPy wrap-around for integers,
                                 logical or for bool) */
    VOXA_PASTE_MAX,           /* volume = maximum(volume, patch), NaN wins */
    VOXA_PASTE_MEAN,          /* covered voxels = mean of the patch values
                                 covering them (float64 sum / count; integers
                                 rounded half to even); others unchanged */
    VOXA_PASTE_NOPS
} voxa_paste_op;

typedef struct voxa_roi_params {
    const int64_t *coords; /* n x k, row-major: corners, or centres if centered */
    int64_t n;             /* number of patches (0 allowed) */
    int k;                 /* coordinate axes, 1..ndim of the array */
    const int64_t *size;   /* k patch extents (>= 0) */
    int centered;          /* non-zero: coords are centres */
    voxa_roi_mode mode;    /* extract: ERROR CLIP CONSTANT NEAREST REFLECT;
                              paste: ERROR CLIP CROP */
    double cval;           /* CONSTANT only; must be representable exactly in
                              the array's dtype (integral and in range for
                              integers, 0 or 1 for bool) */
} voxa_roi_params;

/** Extract patches from `in` (any dtype, any strides: nothing is copied but
 *  the patches) into `out`, which the caller allocates with shape
 *  (n, size[0..k-1], in.shape[k..ndim-1]) and in's dtype (any strides; the
 *  row-wise memcpy fast path needs the last axis contiguous in both).
 *  Patches are written in the order of the rows. Runs on voxa_get_threads()
 *  threads, one block of patches each; patches wholly inside take a row-wise
 *  copy, the others an index-mapped gather.
 *  Errors (EINVAL, message naming the argument): NULL pointers, k outside
 *  1..ndim, a negative size, out of the wrong shape or dtype, a patch
 *  outside the array in ERROR mode (first offending row named), a patch
 *  larger than the array in CLIP mode, NEAREST/REFLECT on an empty axis, a
 *  cval the dtype cannot hold, CROP (a paste mode). EOVERFLOW if a
 *  corner + size overflows int64. */
VOXA_API voxa_status voxa_roi_extract(const voxa_array *in, const voxa_roi_params *p,
                                      voxa_array *out);

/** Paste `patches` (shape (n, size..., volume.shape[k..]), the volume's
 *  dtype, any strides) into `volume` in place with `op`. Result equals
 *  pasting the rows one after another in row order (so with OVERWRITE the
 *  later row wins where patches overlap), whatever the thread count: the
 *  volume is split into slabs along axis 0 and each slab applies, in row
 *  order, the patches that touch it. Mode ERROR (default) rejects a patch
 *  reaching outside (first offending row named), CLIP shifts it inside as
 *  voxa_roi_extract does, CROP writes only its inside part. MEAN uses
 *  12 bytes of scratch per voxel of one slab per thread (MEAN's slabs hold
 *  about 2^18 voxels, e.g. ~3 MiB per thread; at least one axis-0 row). Errors as voxa_roi_extract, plus ENOMEM. */
VOXA_API voxa_status voxa_roi_paste(voxa_array *volume, const voxa_array *patches,
                                    const voxa_roi_params *p, voxa_paste_op op);

/** Turn n x k float coordinates into the int64 ones the calls above take.
 *  Corners (centered = 0) must be integral; centres are rounded half to
 *  even (like NumPy's np.rint: 2.5 -> 2, 3.5 -> 4, -0.5 -> -0). Errors:
 *  EINVAL for NaN/inf, a non-integral corner, or a value outside int64
 *  (message names row and column). */
VOXA_API voxa_status voxa_roi_coords_from_doubles(const double *in, int64_t n, int k,
                                                  int centered, int64_t *out);

/** Parse a mode name ("error", "clip", "constant", "nearest", "reflect",
 *  "crop") or an op name ("overwrite", "add", "max", "mean"); EINVAL naming
 *  the unknown word otherwise. */
VOXA_API voxa_status voxa_roi_mode_from_name(const char *name, voxa_roi_mode *out);
VOXA_API voxa_status voxa_paste_op_from_name(const char *name, voxa_paste_op *out);

#ifdef __cplusplus
}
#endif
#endif
