/* Richardson-Lucy on a GPU backend (deconv_gpu.c), typed entry points for
 * the op interface's `gpu` slot and for tests. b is opencl or cuda (cpu and
 * auto are resolved by the public voxa_deconv_rl_on / voxa_rl_plan_execute_on).
 * Same arguments, checks and errors as the CPU functions; results equal the
 * CPU's to float32 round-off of the FFTs (docs/gpu.md states the tolerance),
 * not bit for bit. Not installed. */
#ifndef VOXA_DECONV_GPU_H
#define VOXA_DECONV_GPU_H

#include "internal.h"
#include "voxa/backend.h"
#include "voxa/deconv.h"

/* Run `opt->iterations` RL steps of plan p (its geometry, PSF transforms and
 * border weights, made on the host) with the whole iteration on the device. */
voxa_status voxa__rl_gpu_execute(voxa_backend b, voxa_rl_plan *p, const voxa_array *in,
                                 voxa_array *out, const voxa_rl_options *opt);
/* One-shot: plan (FFTW_ESTIMATE: only the PSF's transform is made on the
 * host), execute on the device, free. */
voxa_status voxa__rl_gpu(voxa_backend b, const voxa_array *in, const voxa_array *psf,
                         voxa_rl_boundary boundary, const voxa_rl_options *opt,
                         voxa_array *out);
/* Device bytes a run of plan p needs (docs/gpu.md), FFT library work space
 * not included (cuFFT/VkFFT: up to one more complex box). */
int64_t voxa__rl_gpu_bytes(const voxa_rl_plan *p, int accelerate);
/* The same from shapes alone (no plan: for the op's device_bytes / --dry-run):
 * *total as above, *largest the largest single buffer. EINVAL on bad shapes. */
voxa_status voxa__rl_gpu_bytes_for(int ndim, const int64_t *shape, const int64_t *psf_shape,
                                   voxa_rl_boundary boundary, int accelerate, int64_t *total,
                                   int64_t *largest);

#endif
