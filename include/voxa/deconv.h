/* voxa deconv: Richardson–Lucy deconvolution (FFTW, single precision, or
 * double with VOXA_RL_DOUBLE) and point spread function (PSF) helpers.
 *
 * Axes are in NumPy order. A PSF's centre is index psf_shape // 2 on every
 * axis (where scipy.ndimage puts a kernel's centre); the PSF must be
 * non-negative, finite, with a positive sum, and no larger than the image on
 * any axis except in VOXA_RL_ZERO mode (scikit-image's "same" convolution,
 * defined for any extent; CPU only). Work is done in float32 unless a plan
 * asks for double. */
#ifndef VOXA_DECONV_H
#define VOXA_DECONV_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How the image is continued beyond its edges. */
typedef enum voxa_rl_boundary {
    /** Default. Wrap-free (Bertero & Boccacci): the object lives on the
     *  image extended by the PSF extent, the data only on the image window;
     *  each update is normalised by H^T(window), so nothing wraps around and
     *  borders are not darkened. Starts from the flat mean of the image. */
    VOXA_RL_FREE = 0,
    /** Circular convolution on the image itself: the published FFT formula
     *  (W2), PSF centred exactly. Starts from the image. */
    VOXA_RL_PERIODIC = 1,
    /** scikit-image restoration.richardson_lucy: zero outside the image,
     *  flat 0.5 start, eps 1e-12, filter_epsilon, clip. For even PSF extents
     *  the forward convolution is centred at (n-1)//2 and the backward one at
     *  n//2, as scipy.signal.convolve(mode='same') does. */
    VOXA_RL_ZERO = 2
} voxa_rl_boundary;

/** Parse "free" (also "wrap-free"), "periodic" or "zero". EINVAL otherwise. */
VOXA_API voxa_status voxa_rl_boundary_from_name(const char *name, voxa_rl_boundary *out);
/** Name of a boundary mode ("free", "periodic", "zero"; "invalid"). */
VOXA_API const char *voxa_rl_boundary_name(voxa_rl_boundary b);

/** Options of one run. Initialise with voxa_rl_options_init. */
typedef struct voxa_rl_options {
    int iterations;        /**< >= 1 (default 20) */
    int accelerate;        /**< Biggs–Andrews vector extrapolation (default 0) */
    int clip;              /**< clip the result to [-1, 1] at the end, as
                                scikit-image does by default (default 0) */
    double filter_epsilon; /**< zero mode: ratio := 0 where the blurred
                                estimate is below it; 0 = off (default) */
    voxa_progress progress; /**< called once per iteration; may cancel */
} voxa_rl_options;

/** Defaults: 20 iterations, no acceleration, no clip, no filter. */
VOXA_API void voxa_rl_options_init(voxa_rl_options *o);

/** A reusable plan: FFTW plans, the PSF's transform and the border weights
 *  for one image shape, PSF and boundary mode. Executing it on many images
 *  (chunks) of that shape repeats no set-up. One plan may be executed by one
 *  thread at a time; different plans may run concurrently. */
typedef struct voxa_rl_plan voxa_rl_plan;

/** Plan flags: at most one of these three (planning), and VOXA_RL_DOUBLE. */
#define VOXA_RL_MEASURE 1        /**< let FFTW time candidate algorithms for every
                                      transform (seconds to plan a 3-D box) */
#define VOXA_RL_MEASURE_PLANES 2 /**< the default, also with no flag: measure
                                      only the staged path's small per-plane
                                      (and z-tile) plans (1-2 s the first
                                      time a size is seen, then wisdom
                                      and the per-user cache; up to 3x faster
                                      transforms there) and estimate the rest */
#define VOXA_RL_ESTIMATE 4       /**< FFTW_ESTIMATE everywhere: instant, and the
                                      same plans in every process whatever was
                                      planned before, unless measured wisdom
                                      was loaded (the per-user cache, a wisdom
                                      file) */

/** Combine with one of the flags above: work in double precision. Plans
 *  are 3-D FFTW double plans (estimated unless VOXA_RL_MEASURE; their
 *  wisdom is neither cached nor saved), every pass is double, and the PSF
 *  is kept as given (float64 is not rounded to float32). 1.1-1.3x the time
 *  of the float32 path where that one also uses 3-D plans, up to 2.8x where
 *  it is staged (measured, BENCHMARKS.md), and about 2x its memory: for
 *  exact comparisons with float64 code (scikit-image),
 *  and for data where float32 round-off is amplified (the blurred estimate
 *  near 0 on data with negative values). CPU only. */
#define VOXA_RL_DOUBLE 8

/** Create a plan for images of `shape` (ndim 1..3), a PSF (any real dtype,
 *  any strides; copied, not kept), a boundary mode and flags. Uses
 *  voxa_get_threads() threads for the transforms. *plan receives a new plan
 *  (free with voxa_rl_plan_free). Errors: EINVAL (bad shape, PSF larger
 *  than the image, PSF negative / non-finite / zero sum, ndim mismatch),
 *  ENOMEM, EINTERNAL (FFTW refused to plan). */
VOXA_API voxa_status voxa_rl_plan_new(voxa_rl_plan **plan, int ndim, const int64_t *shape,
                                      const voxa_array *psf, voxa_rl_boundary boundary,
                                      int flags);
/** FFTW wisdom (the plans VOXA_RL_MEASURE found) for later processes:
 *  load merges a file saved before (EIO: cannot open, EFORMAT: not FFTW
 *  float wisdom); save writes all wisdom of this process atomically. With
 *  loaded wisdom a MEASURE plan of a known size and thread count takes
 *  milliseconds instead of seconds. */
VOXA_API voxa_status voxa_deconv_wisdom_load(const char *path);
VOXA_API voxa_status voxa_deconv_wisdom_save(const char *path);

/** Free a plan; NULL is allowed. */
VOXA_API void voxa_rl_plan_free(voxa_rl_plan *plan);

/** Bytes of working memory the plan holds (besides the caller's arrays). */
VOXA_API int64_t voxa_rl_plan_bytes(const voxa_rl_plan *plan);

/** Run Richardson–Lucy on `in` (the plan's shape; u8..f64, any strides; no
 *  NaN/inf) writing `out` (same shape, f32 or f64, any strides; may not
 *  overlap `in`). `opt` NULL means defaults. Errors: EINVAL (shape, dtype,
 *  non-finite input, iterations < 1, filter_epsilon < 0 or not finite),
 *  ENOMEM, ECANCELLED (the progress callback said stop; `out` unspecified). */
VOXA_API voxa_status voxa_rl_plan_execute(voxa_rl_plan *plan, const voxa_array *in,
                                          voxa_array *out, const voxa_rl_options *opt);

/** One-shot Richardson–Lucy: plan (default flags), execute, free.
 *  Same arguments and errors as voxa_rl_plan_new + voxa_rl_plan_execute. */
VOXA_API voxa_status voxa_deconv_rl(const voxa_array *in, const voxa_array *psf,
                                    voxa_array *out, voxa_rl_boundary boundary,
                                    const voxa_rl_options *opt);

/** Halo a chunk needs on each side for deconvolution (the PSF extent):
 *  lo[d] = psf_shape[d] // 2, hi[d] = psf_shape[d] - 1 - lo[d]; per
 *  iteration the influence spreads by the PSF extent again, so exact chunked
 *  results need iterations x halo; the usual practice is one PSF extent. */
VOXA_API voxa_status voxa_deconv_halo(const voxa_array *psf, int64_t *lo, int64_t *hi);

/* ---- PSF helpers ------------------------------------------------------- */

/** Fill `out` (f32 or f64, any shape ndim 1..8, any strides) with a Gaussian
 *  exp(-sum_d ((i_d - c_d) / sigma_d)^2 / 2), c_d = shape_d // 2, normalised
 *  to sum 1. sigma has out->ndim entries, each >= 0 and finite (0: a delta
 *  along that axis). Errors: EINVAL. */
VOXA_API voxa_status voxa_psf_gaussian(voxa_array *out, const double *sigma);

/** Check a PSF (finite, non-negative, positive sum); *sum receives the sum
 *  (may be NULL). Errors: EINVAL naming the first bad value. */
VOXA_API voxa_status voxa_psf_check(const voxa_array *psf, double *sum);

/** Divide a float PSF (f32/f64, any strides) by its sum, in place. */
VOXA_API voxa_status voxa_psf_normalize(voxa_array *psf);

/** Check a PSF array (voxa_psf_check), convert it to a new float32 array in
 *  *out (release with voxa_array_free) and, with `normalize`, divide it by
 *  its sum. */
VOXA_API voxa_status voxa_psf_prepare(const voxa_array *psf, int normalize, voxa_array *out);

/** Read a PSF file (.npy, .tif) with voxa_read, convert to a new float32
 *  C-contiguous array (*out owns it), check it, and divide it by its sum if
 *  `normalize`. Errors: those of voxa_read, EINVAL (bad values). */
VOXA_API voxa_status voxa_psf_read(const char *path, int normalize, voxa_array *out);

#ifdef __cplusplus
}
#endif
#endif
