/* voxa morph: exact binary morphology (scipy.ndimage.binary_dilation,
 * binary_erosion, binary_opening, binary_closing semantics) with
 * structuring elements of any size.
 *
 * Semantics, with c = element.shape // 2 (scipy's default origin, also for
 * even sizes) and X outside the volume = border_value:
 *   erosion:  out[v] = AND over b in B of in[v + (b - c)]
 *   dilation: out[v] = OR  over b in B of in[v - (b - c)]
 * iterations k >= 1 repeats the operation k times (each time with the same
 * border rule), k <= 0 repeats until nothing changes (an element without
 * its centre can make the results cycle instead: EINVAL, where scipy loops
 * for ever); opening = erosion^k then dilation^k, closing = dilation^k then
 * erosion^k.
 *
 * The path taken depends on the element (see voxa_morph_describe):
 *   ball      squared Euclidean distance transform threshold, O(N)
 *   diamond   city-block distance threshold, O(N)
 *   box       separable binary interval filter, O(N)
 *   other     run decomposition of the footprint, O(N * runs)
 *   small     balls (<= 256 footprint rows), boxes (<= 160) and other
 *             footprints (<= 32 distinct row widths): bit-packed rows,
 *             O(N/64 * rows + N)
 * Footprint arrays are recognised as box, diamond or ball when they are one. */
#ifndef VOXA_MORPH_H
#define VOXA_MORPH_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum voxa_morph_kind {
    VOXA_SE_FOOTPRINT = 0, /* any 0/1 array `footprint` */
    VOXA_SE_BALL = 1,      /* sum_d (o_d * spacing_d)^2 <= radius^2 */
    VOXA_SE_DIAMOND = 2,   /* sum_d |o_d| <= radius (integer radius) */
    VOXA_SE_BOX = 3,       /* box[d] voxels along axis d */
    VOXA_SE_CONNECTIVITY = 4 /* generate_binary_structure(ndim, connectivity) */
} voxa_morph_kind;

typedef struct voxa_morph_element {
    voxa_morph_kind kind;
    double radius;                /* ball: finite, 0..1e6; diamond: integer 0..1e6 */
    const double *spacing;        /* ball: ndim voxel sizes (> 0) or NULL for 1.
                                     footprint: optional hint, the array is then
                                     also tried as a ball with this spacing */
    int64_t box[VOXA_MAXDIM];     /* box: sizes >= 1 per axis */
    int connectivity;             /* 1..ndim (larger = ndim) */
    const voxa_array *footprint;  /* any dtype, values 0 or 1, same ndim as the
                                     input, at least one 1 */
} voxa_morph_element;

typedef enum voxa_morph_op {
    VOXA_MORPH_DILATE = 0,
    VOXA_MORPH_ERODE = 1,
    VOXA_MORPH_OPEN = 2,
    VOXA_MORPH_CLOSE = 3
} voxa_morph_op;

typedef struct voxa_morph_params {
    voxa_morph_element se;
    int iterations;   /* >= 1; <= 0: until stable (scipy's iterations < 1) */
    int border_value; /* 0 or 1 */
    voxa_progress progress;
} voxa_morph_params;

/** Apply `op` to `in` (any dtype: non-zero = true; any strides) into `out`
 *  (bool or uint8, same shape, any strides; may be `in` itself). Peak extra
 *  memory: 2 bytes/voxel for balls with R^2 < 65535 (4 for larger R, 8 with
 *  non-unit spacing), none for
 *  diamonds with radius*iterations <= 253 and boxes, 4 for footprints,
 *  ~widths/8 for elements on bit-packed rows, plus
 *  a copy when in/out are not C-contiguous bool/uint8; iterations <= 0: 1
 *  byte/voxel more (the last result), 2 when the element lacks its centre
 *  (one result kept to detect a cycle).
 *  Errors: EINVAL (shape mismatch, bad element: negative/huge/non-integer
 *  radius, spacing length or value, non-0/1 or empty footprint, footprint
 *  ndim != input ndim, border_value not 0/1; iterations <= 0 whose results
 *  cycle), ENOMEM, ECANCELLED. */
VOXA_API voxa_status voxa_morph(voxa_morph_op op, const voxa_array *in, voxa_array *out,
                                const voxa_morph_params *p);
VOXA_API voxa_status voxa_morph_dilate(const voxa_array *in, voxa_array *out,
                                       const voxa_morph_params *p);
VOXA_API voxa_status voxa_morph_erode(const voxa_array *in, voxa_array *out,
                                      const voxa_morph_params *p);
VOXA_API voxa_status voxa_morph_open(const voxa_array *in, voxa_array *out,
                                     const voxa_morph_params *p);
VOXA_API voxa_status voxa_morph_close(const voxa_array *in, voxa_array *out,
                                      const voxa_morph_params *p);

/** Materialise an element as a bool array for `ndim` dimensions: *out is
 *  allocated (release with voxa_array_free). Ball: shape 2*r_d+1 with r_d the
 *  largest k with (k*spacing_d)^2 <= radius^2; diamond: 2r+1; box: box[d];
 *  connectivity: 3. Footprint: a 0/1 bool copy. */
VOXA_API voxa_status voxa_morph_element_array(const voxa_morph_element *se, int ndim,
                                              voxa_array *out);

/** Name the path `se` takes for an input of `ndim` dimensions ("ball", "diamond",
 *  "box", "footprint", followed by "bit-packed rows" for small elements)
 *  with its parameters, into buf (NUL-terminated). */
VOXA_API voxa_status voxa_morph_describe(const voxa_morph_element *se, int ndim,
                                         int iterations, char *buf, size_t n);

/** Halo per axis a chunk needs for an exact result of `op` with `iterations`
 *  (>= 1): the element's reach times iterations (times 2 for open/close). */
VOXA_API voxa_status voxa_morph_halo(const voxa_morph_element *se, int ndim, voxa_morph_op op,
                                     int iterations, int64_t *halo);

/** Fill the holes of a binary image, exactly as scipy.ndimage.binary_fill_holes:
 *  out = 1 on the foreground and on every background voxel from which no
 *  chain of structure steps through background voxels leaves the volume;
 *  0 elsewhere. One search from the volume's edge over runs of
 *  background along the last axis: O(N x rows of the structure).
 *
 *  in:        any dtype (non-zero = foreground; NaN is, -0.0 is not), any
 *             strides, ndim 1..8. May alias `out`.
 *  structure: NULL, or an array of any dtype (non-zero = true), the input's
 *             ndim, any size >= 1 per axis, not necessarily centrosymmetric
 *             (as scipy: a step goes from x to x + c + origin - j for each
 *             true element j, c = shape // 2).
 *  connectivity: used when structure is NULL: 1..ndim, meaning
 *             generate_binary_structure(ndim, connectivity).
 *  origin:    NULL (zeros) or ndim shifts, each in -(s/2)..(s-1)/2 for a
 *             structure of size s on that axis (3 without a structure).
 *  out:       same shape, any dtype (receives 0/1), any strides.
 *  Threads: reading and writing run on voxa_get_threads() threads, the
 *  search on one; results are identical for every count.
 *  Memory: prod(n_d + 2 r_d) bytes (r_d the structure's reach on axis d, 1
 *  for 3^ndim structures) plus 16 bytes per pending background run (the
 *  search stack). Nothing is kept after the call.
 *  Errors: EINVAL (NULL or mismatched arrays, 0-D input, structure rank or
 *  empty structure, connectivity or origin out of range: the message names
 *  it), ENOMEM. */
VOXA_API voxa_status voxa_fill_holes(const voxa_array *in, const voxa_array *structure,
                                     int connectivity, const int64_t *origin, voxa_array *out);

#ifdef __cplusplus
}
#endif
#endif
