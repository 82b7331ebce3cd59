/* voxa threshold: a binary mask from an intensity image, by a given value or
 * by Otsu's method (skimage.filters.threshold_otsu, value for value). */
#ifndef VOXA_THRESHOLD_H
#define VOXA_THRESHOLD_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A threshold as the image's own type would hold it. */
typedef struct voxa_threshold_value {
    double f;      /* the value (exact for floats, and integers up to 2^53) */
    int64_t i;     /* integer inputs: the value exactly */
    int integer;   /* non-zero: `i` is the value (integer inputs) */
    int constant;  /* the image holds one value only: that value is returned
                      (as skimage does; image > value is then all false) */
} voxa_threshold_value;

/** Otsu's threshold of `in` (any dtype, any strides, at least one voxel),
 *  equal to skimage.filters.threshold_otsu(in, nbins): the histogram has one
 *  bin per integer value for integer inputs (nbins ignored; at most 2^28
 *  values in the range), `nbins` equal bins over [min, max] as np.histogram
 *  makes them for float and bool inputs; the same float32 sums and the same
 *  first maximum. A constant image gives its value. EINVAL: empty input,
 *  nbins outside 2..2^24, a NaN or infinite voxel (unless every voxel equals
 *  the first), a range too narrow for nbins distinct edges, uint64 values
 *  above 2^63 - 1. Identical for any thread count. */
VOXA_API voxa_status voxa_threshold_otsu(const voxa_array *in, int64_t nbins,
                                         voxa_threshold_value *t, const voxa_progress *progress);

/** The histogram voxa_threshold_otsu makes, over a given range, so that a
 *  chunked caller can add its chunks' histograms over the whole image's
 *  range (voxa.dask.threshold_otsu). Float and bool inputs: `nbins` bins,
 *  np.histogram(in, nbins, range=(lo, hi)) with the edges in the image's
 *  float type (bool: float64); integer inputs: one bin per value lo..hi,
 *  nbins = hi - lo + 1 (integer ends below 2^53). Voxels outside the range,
 *  and NaN, are left out, as np.histogram leaves them. `hist`: nbins
 *  int64 counts. EINVAL: lo >= hi, non-finite ends, nbins out of range,
 *  edges not distinct. */
VOXA_API voxa_status voxa_threshold_histogram(const voxa_array *in, double lo, double hi,
                                              int64_t nbins, int64_t *hist);

/** out = in > t (NumPy's comparison: float32 inputs compare with t rounded
 *  to float32, integer inputs with `value` as float64 unless t->integer).
 *  `out`: bool (or uint8) of in's shape, any strides. */
VOXA_API voxa_status voxa_threshold_apply(const voxa_array *in, const voxa_threshold_value *t,
                                          voxa_array *out);

#ifdef __cplusplus
}
#endif
#endif
