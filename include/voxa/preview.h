/* voxa preview: one picture of a 2-D or 3-D image (and its labels).
 *
 * For a 3-D image (z, y, x) the picture holds two orthogonal views side by
 * side: on the left the maximum-intensity projections along each axis, on the
 * right the slices through a point. Each view is laid out as
 *
 *     +---------+----+
 *     |  x-y    | z-y|      x-y: along z (rows y, columns x)
 *     +---------+----+      z-y: along x (rows y, columns z)
 *     |  x-z    |               x-z: along y (rows z, columns x)
 *     +---------+
 *
 * with z (and y) stretched to the x spacing so the picture has physical
 * proportions. A 2-D image is shown as it is. Grey levels come from
 * percentile contrast (of each view's values); labels are painted over the
 * image in distinct colours (voxa_preview_label_color; projection: the
 * largest label along the ray), half transparent; with a spacing, a scale
 * bar of a round physical length (its value written above it) sits at the
 * bottom left. The volume is read from a store in slabs of whole planes
 * within a memory limit: a projection never loads the volume. */
#ifndef VOXA_PREVIEW_H
#define VOXA_PREVIEW_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

struct voxa_store;

/** Options; zero-initialised means the defaults. */
typedef struct voxa_preview_options {
    const double *spacing; /* ndim values > 0 (z, y, x), or NULL: no scale bar,
                              voxels drawn square */
    const int64_t *point;  /* ndim voxel indices the slices go through; NULL:
                              the centre (shape / 2) */
    double lo_pct, hi_pct; /* contrast percentiles in [0, 100] (lo < hi);
                              both 0: 0.5 and 99.5 */
    int64_t mem_limit;     /* bytes of input slabs in memory (0: 64 MiB) */
    voxa_progress progress;/* after each slab */
} voxa_preview_options;

/** Draw the preview of `image` (any dtype; may be NULL when `labels` is
 *  given: colours over black) with optional `labels` (integer dtype, same
 *  shape, NULL for none) into *rgb, allocated here as a C-contiguous uint8
 *  array (height, width, 3): release with voxa_array_free. 2-D or 3-D
 *  inputs; EINVAL naming the argument otherwise. */
VOXA_API voxa_status voxa_preview(struct voxa_store *image, struct voxa_store *labels,
                                  const voxa_preview_options *o, voxa_array *rgb);

/** The colour of label `label` (> 0) in previews: hue from the golden ratio
 *  (neighbouring labels differ), full value, saturation 0.8. */
VOXA_API void voxa_preview_label_color(int64_t label, uint8_t rgb[3]);

/** Write an 8-bit image as PNG (libpng), atomically: (height, width) grey or
 *  (height, width, 3) RGB, uint8, any strides. */
VOXA_API voxa_status voxa_png_write(const char *path, const voxa_array *img);

#ifdef __cplusplus
}
#endif
#endif
