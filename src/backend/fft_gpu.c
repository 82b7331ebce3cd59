/* Device FFTs for GPU ops (declared in gpu.h): one real<->complex plan per
 * (backend, box extents), made by VkFFT (opencl) or cuFFT (cuda) and kept
 * in a small process-wide cache, because making one is expensive (VkFFT
 * generates and compiles its kernels per size: seconds on PoCL) while an op
 * such as Richardson-Lucy runs the same size many times, often over many
 * calls (chunks). Each backend has its own cache, only touched between
 * voxa__gpu_acquire and voxa__gpu_release, so that backend's context lock
 * protects it; when it is full the oldest plan is freed.
 *
 * With VOXA_GPU_TIMING=1 each transform waits for the device and its time
 * counts as kernel time, as launches do. */
#include "fft_gpu_impl.h"

#include <string.h>

#define FFT_CACHE 8

struct voxa__gpu_fft {
    voxa_backend kind;
    int ndim;
    int64_t L[3];
    void *impl;
};

static voxa__gpu_fft caches[VOXA_NBACKENDS][FFT_CACHE];
static int next_slots[VOXA_NBACKENDS];

voxa_status voxa__gpu_fft_plan(voxa__gpu *g, int ndim, const int64_t *box, voxa__gpu_fft **out) {
    VOXA_FAIL_IF(ndim < 1 || ndim > 3 || !box || !out, VOXA_EINVAL,
                 "gpu fft: bad arguments (ndim %d)", ndim);
    for (int d = 0; d < ndim; d++)
        VOXA_FAIL_IF(box[d] < 1 || box[d] > INT32_MAX, VOXA_EINVAL,
                     "gpu fft: extent %lld on axis %d", (long long)box[d], d);
    /* Axes of one voxel before the last are left out: the transform along
     * them is the identity and neither layout changes (the last axis, halved
     * in the complex layout, stays). VkFFT plans no axis of length 1. */
    int64_t L[3];
    int kept = 0;
    for (int d = 0; d < ndim; d++)
        if (box[d] > 1 || d == ndim - 1) L[kept++] = box[d];
    ndim = kept;
    VOXA_FAIL_IF(g->kind != VOXA_BACKEND_OPENCL && g->kind != VOXA_BACKEND_CUDA, VOXA_EINVAL,
                 "gpu fft: backend %s has no device FFT", voxa_backend_name(g->kind));
    voxa__gpu_fft *cache = caches[g->kind];
    int *next_slot = &next_slots[g->kind];
    for (int i = 0; i < FFT_CACHE; i++) {
        voxa__gpu_fft *c = &cache[i];
        if (c->impl && c->kind == g->kind && c->ndim == ndim &&
            !memcmp(c->L, L, (size_t)ndim * sizeof *L)) {
            *out = c;
            return VOXA_OK;
        }
    }
    void *impl = NULL;
    if (g->kind == VOXA_BACKEND_OPENCL) {
        VOXA_CHECK(voxa__vkfft_plan(g, ndim, L, &impl));
    } else {
        VOXA_CHECK(voxa__cufft_plan(g, ndim, L, &impl));
    }
    voxa__gpu_fft *c = &cache[*next_slot];
    *next_slot = (*next_slot + 1) % FFT_CACHE;
    if (c->impl) {
        if (c->kind == VOXA_BACKEND_OPENCL) voxa__vkfft_free(c->impl);
        else voxa__cufft_free(c->impl);
    }
    c->kind = g->kind;
    c->ndim = ndim;
    memset(c->L, 0, sizeof c->L);
    memcpy(c->L, L, (size_t)ndim * sizeof *L);
    c->impl = impl;
    *out = c;
    return VOXA_OK;
}

voxa_status voxa__gpu_fft_run(voxa__gpu *g, voxa__gpu_fft *p, int inverse, voxa__buf *real,
                              voxa__buf *cplx) {
    VOXA_FAIL_IF(!p || p->kind != g->kind, VOXA_EINTERNAL, "gpu fft: plan of another backend");
    double t0 = g->timing ? voxa__gpu_now() : 0;
    if (g->kind == VOXA_BACKEND_OPENCL) {
        VOXA_CHECK(voxa__vkfft_run(g, p->impl, inverse, real, cplx));
    } else {
        VOXA_CHECK(voxa__cufft_run(g, p->impl, inverse, real, cplx));
    }
    if (g->timing) {
        VOXA_CHECK(g->ops->finish(g));
        g->seconds[1] += voxa__gpu_now() - t0;
    }
    return VOXA_OK;
}
