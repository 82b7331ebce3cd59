/* voxa label: connected components, identical to scipy.ndimage.label. */
#ifndef VOXA_LABEL_H
#define VOXA_LABEL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Label the non-zero voxels of `in` (any dtype, any strides, ndim 1..8).
 *
 * Neighbourhood: `structure` (3^ndim bytes, C order, non-zero = neighbour;
 * must be centrosymmetric, as scipy requires) or, when NULL,
 * generate_binary_structure(ndim, connectivity) with 1 <= connectivity <= ndim.
 * `out` (same shape; int32, uint16, uint32 or int64; any strides) receives
 * labels 1..n numbered in raster order of each component's first voxel, 0 for
 * background, exactly as scipy.ndimage.label. *nlabels receives n.
 * Results are identical for every thread count. Errors: EINVAL (shape/dtype),
 * EOVERFLOW (n does not fit out's dtype; out is then unspecified). */
VOXA_API voxa_status voxa_label(const voxa_array *in, const unsigned char *structure,
                                int connectivity, voxa_array *out, int64_t *nlabels);

#ifdef __cplusplus
}
#endif
#endif
