/* Device FFTs on the cuda backend through cuFFT, opened with dlopen
 * (libcufft.so.12, .11, .10: the CUDA toolkit's or a wheel's copy on the
 * library path), like the driver in cuda.c: libvoxa neither links nor needs
 * it, and without it RL on cuda fails with EUNSUPPORTED and the reason.
 *
 * The few types and entry points used are declared here (no cufft.h). cuFFT
 * runs on the CUDA runtime, which adopts the context current on the thread:
 * cuda.c makes its primary context current on every copy and launch, and a
 * plan is made right after a small allocation that does the same. Transforms
 * go to the default (legacy) stream, as cuda.c's launches do, so they are
 * ordered with the op's kernels. 64-bit plans (cufftMakePlanMany64) so boxes
 * beyond 2^31 elements work; unnormalised both ways, as FFTW. */
#include "fft_gpu_impl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef int cufftHandle;
typedef int cufftResult; /* 0 = CUFFT_SUCCESS */
#define CUFFT_R2C 0x2a
#define CUFFT_C2R 0x2c

static struct {
    cufftResult (*cufftCreate)(cufftHandle *);
    cufftResult (*cufftMakePlanMany64)(cufftHandle, int, long long *, long long *, long long,
                                       long long, long long *, long long, long long, int,
                                       long long, size_t *);
    cufftResult (*cufftExecR2C)(cufftHandle, float *, void *);
    cufftResult (*cufftExecC2R)(cufftHandle, void *, float *);
    cufftResult (*cufftDestroy)(cufftHandle);
} cf;
static int cf_loaded;
static char cf_msg[200];

static void cf_load_once(void) {
    static const char *names[] = {"libcufft.so.12", "libcufft.so.11", "libcufft.so.10",
                                  "libcufft.so"};
    void *h = NULL;
    for (int i = 0; i < 4 && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(cf_msg, sizeof cf_msg, "no cuFFT (libcufft.so.12/11/10 not found: install the "
                 "CUDA toolkit's libcufft or add its folder to LD_LIBRARY_PATH)");
        cf_loaded = -1;
        return;
    }
#define LOAD(f)                                                                   \
    if (!(*(void **)&cf.f = dlsym(h, #f))) {                                      \
        snprintf(cf_msg, sizeof cf_msg, "libcufft lacks %s", #f);                 \
        cf_loaded = -1;                                                           \
        return;                                                                   \
    }
    LOAD(cufftCreate) LOAD(cufftMakePlanMany64) LOAD(cufftExecR2C) LOAD(cufftExecC2R)
    LOAD(cufftDestroy)
#undef LOAD
    cf_loaded = 1;
}

typedef struct cuplan {
    cufftHandle fwd, inv;
} cuplan;

voxa_status voxa__cufft_plan(voxa__gpu *g, int ndim, const int64_t *L, void **impl) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, cf_load_once);
    VOXA_FAIL_IF(cf_loaded < 0, VOXA_EUNSUPPORTED, "cuda fft: %s", cf_msg);
    voxa__buf b = {0}; /* makes the backend's context current on this thread */
    VOXA_CHECK(g->ops->alloc(g, 4, &b));
    g->ops->free(g, &b);
    long long n[3];
    for (int d = 0; d < ndim; d++) n[d] = (long long)L[d];
    cuplan *p = calloc(1, sizeof *p);
    VOXA_FAIL_IF(!p, VOXA_ENOMEM, "cuda fft: cannot allocate a plan");
    size_t work = 0;
    cufftResult e = cf.cufftCreate(&p->fwd);
    if (e == 0) e = cf.cufftMakePlanMany64(p->fwd, ndim, n, NULL, 1, 0, NULL, 1, 0, CUFFT_R2C,
                                           1, &work);
    cufftResult e2 = e == 0 ? cf.cufftCreate(&p->inv) : e;
    if (e2 == 0) e2 = cf.cufftMakePlanMany64(p->inv, ndim, n, NULL, 1, 0, NULL, 1, 0,
                                             CUFFT_C2R, 1, &work);
    if (e != 0 || e2 != 0) {
        if (p->fwd) cf.cufftDestroy(p->fwd);
        if (p->inv) cf.cufftDestroy(p->inv);
        free(p);
        return voxa__error(VOXA_EUNSUPPORTED, "cuda fft: cuFFT cannot plan a real transform "
                           "of %d-D shape ending in %lld (cuFFT error %d)", ndim,
                           n[ndim - 1], e != 0 ? e : e2);
    }
    *impl = p;
    return VOXA_OK;
}

voxa_status voxa__cufft_run(voxa__gpu *g, void *impl, int inverse, voxa__buf *real,
                            voxa__buf *cplx) {
    cuplan *p = impl;
    cufftResult e = inverse ? cf.cufftExecC2R(p->inv, (void *)cplx->h, (float *)real->h)
                            : cf.cufftExecR2C(p->fwd, (float *)real->h, (void *)cplx->h);
    VOXA_FAIL_IF(e != 0, VOXA_EINTERNAL, "cuda fft: cuFFT %s transform failed (error %d)",
                 inverse ? "inverse" : "forward", e);
    return VOXA_OK;
}

void voxa__cufft_free(void *impl) {
    cuplan *p = impl;
    if (!p) return;
    cf.cufftDestroy(p->fwd);
    cf.cufftDestroy(p->inv);
    free(p);
}
