/* The two device FFT libraries behind voxa__gpu_fft_plan/run (fft_gpu.c):
 * VkFFT for the opencl backend (fft_vkfft.c), cuFFT for cuda (fft_cufft.c).
 * Each makes an out-of-place real<->complex plan for a C-order box and runs
 * it on the backend's queue / stream; `impl` is the library's plan. Without
 * the library (not built, not found at run time) plan returns EUNSUPPORTED
 * with the reason. Not installed. */
#ifndef VOXA_FFT_GPU_IMPL_H
#define VOXA_FFT_GPU_IMPL_H

#include "gpu.h"

voxa_status voxa__vkfft_plan(voxa__gpu *g, int ndim, const int64_t *L, void **impl);
voxa_status voxa__vkfft_run(voxa__gpu *g, void *impl, int inverse, voxa__buf *real,
                            voxa__buf *cplx);
void voxa__vkfft_free(void *impl);

voxa_status voxa__cufft_plan(voxa__gpu *g, int ndim, const int64_t *L, void **impl);
voxa_status voxa__cufft_run(voxa__gpu *g, void *impl, int inverse, voxa__buf *real,
                            voxa__buf *cplx);
void voxa__cufft_free(void *impl);

#endif
