/* voxa label: connected components, identical to scipy.ndimage.label. */
#ifndef VOXA_LABEL_H
#define VOXA_LABEL_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Label the connected components of the non-zero voxels of `in`, exactly as
 * scipy.ndimage.label does (same components, numbering and count).
 *
 * in:        any dtype (non-zero is foreground; NaN is, -0.0 is not), any
 *            strides (negative and zero included), ndim 1..8. Not modified
 *            (unless it aliases `out`: in-place labelling is allowed).
 * structure: NULL, or 3^ndim bytes in C order, non-zero = connected. Must be
 *            centrosymmetric (as scipy requires); its centre is ignored.
 * connectivity: used when structure is NULL: 1..ndim, meaning
 *            generate_binary_structure(ndim, connectivity) (1 = faces,
 *            ndim = the full 3^ndim box).
 * out:       same shape as `in`, any integer dtype (int32 is scipy's default;
 *            uint16, uint32, int64, int8, uint8, int16, uint64), any strides.
 *            Receives labels 1..n in raster (C) order of each component's
 *            first voxel, 0 for background. Every element is written once.
 * nlabels:   receives n (may be NULL).
 *
 * Threads: voxa_get_threads(); results are identical for every count.
 * Memory: besides in/out, 16 bytes per run of foreground voxels along the
 * last axis + 8 bytes per line (+ 5/16 byte per voxel for byte masks with
 * more than one run per 64 voxels). Nothing is kept after the call.
 * Errors: EINVAL (NULL or mismatched arrays, bad dtype, connectivity out of
 * range, structure not centrosymmetric; the message names the value),
 * EOVERFLOW (n does not fit out's dtype: nothing is written to out),
 * EUNSUPPORTED (last non-unit axis of 2^32 voxels or more), ENOMEM.
 * On error *nlabels is 0. */
VOXA_API voxa_status voxa_label(const voxa_array *in, const unsigned char *structure,
                                int connectivity, voxa_array *out, int64_t *nlabels);

#ifdef __cplusplus
}
#endif
#endif
