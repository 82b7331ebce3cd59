/* The CUDA backend: NVIDIA GPUs through the driver API.
 *
 * libcuda.so.1 (installed with the NVIDIA driver) is opened with dlopen on
 * first use; the handful of driver-API types and entry points used here are
 * declared below, so neither cuda.h nor the toolkit is needed to build
 * libvoxa, and libvoxa loads where no driver exists. The kernels are the
 * same .cl sources as OpenCL's, compiled by nvcc at build time (when nvcc
 * is found) into a fatbin holding sm_75 and sm_90 code and compute_75 PTX
 * (JIT-compiled by the driver for newer GPUs) with --fmad=false, so double
 * arithmetic rounds as the CPU code does; the fatbin is embedded in the
 * library and loaded with cuModuleLoadData on first use.
 *
 * One primary context on device 0, the default stream; copies are
 * synchronous, launches asynchronous (the next copy waits for them). */
#include "gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult; /* 0 = CUDA_SUCCESS */
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef unsigned long long CUdeviceptr;

#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

typedef struct cuapi {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int *);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetName)(char *, int, CUdevice);
    CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree_v2)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuGetErrorString)(CUresult, const char **);
    /* optional (device arrays): NULL when the driver lacks them */
    CUresult (*cuPointerGetAttribute)(void *, int, CUdeviceptr);
    CUresult (*cuMemGetAddressRange_v2)(CUdeviceptr *, size_t *, CUdeviceptr);
} cuapi;

#define CU_POINTER_ATTRIBUTE_MEMORY_TYPE 2
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define CU_MEMORYTYPE_DEVICE 2
#define CU_MEMORYTYPE_UNIFIED 4

static cuapi cu;
static int loaded; /* 1 ok, -1 failed */
static char load_msg[256];

static void load_once(void) {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_msg, sizeof load_msg,
                 "no CUDA driver (libcuda.so.1 not found: the NVIDIA driver is not installed "
                 "or not visible)");
        loaded = -1;
        return;
    }
#define LOAD(f)                                                                   \
    if (!(*(void **)&cu.f = dlsym(h, #f))) {                                      \
        snprintf(load_msg, sizeof load_msg, "libcuda.so.1 lacks %s", #f);         \
        loaded = -1;                                                              \
        return;                                                                   \
    }
    LOAD(cuInit) LOAD(cuDriverGetVersion) LOAD(cuDeviceGetCount) LOAD(cuDeviceGet)
    LOAD(cuDeviceGetName) LOAD(cuDeviceTotalMem_v2) LOAD(cuDeviceGetAttribute)
    LOAD(cuDevicePrimaryCtxRetain) LOAD(cuCtxSetCurrent) LOAD(cuModuleLoadData)
    LOAD(cuModuleGetFunction) LOAD(cuMemAlloc_v2) LOAD(cuMemFree_v2) LOAD(cuMemcpyHtoD_v2)
    LOAD(cuMemcpyDtoH_v2) LOAD(cuLaunchKernel) LOAD(cuCtxSynchronize) LOAD(cuGetErrorString)
#undef LOAD
    *(void **)&cu.cuPointerGetAttribute = dlsym(h, "cuPointerGetAttribute");
    *(void **)&cu.cuMemGetAddressRange_v2 = dlsym(h, "cuMemGetAddressRange_v2");
    CUresult e = cu.cuInit(0);
    if (e != 0) {
        snprintf(load_msg, sizeof load_msg, "cuInit failed (CUDA error %d: no usable GPU or "
                 "driver)", e);
        loaded = -1;
        return;
    }
    loaded = 1;
}

static int load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_once);
    return loaded > 0;
}

static const char *errstr(CUresult e) {
    const char *s = NULL;
    if (loaded > 0) cu.cuGetErrorString(e, &s);
    return s ? s : "unknown error";
}

static void device_info(CUdevice d, voxa_device_info *di) {
    size_t mem = 0;
    int maj = 0, min = 0;
    char name[100] = "";
    cu.cuDeviceGetName(name, sizeof name - 1, d);
    cu.cuDeviceTotalMem_v2(&mem, d);
    cu.cuDeviceGetAttribute(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
    cu.cuDeviceGetAttribute(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
    snprintf(di->name, sizeof di->name, "%s (sm_%d%d)", name, maj, min);
    di->memory = (int64_t)mem;
    di->max_alloc = (int64_t)mem;
}

voxa_status voxa__cuda_query(voxa_backend_info *info) {
    if (voxa__cuda_fatbin_size == 0) {
        snprintf(info->why, sizeof info->why,
                 "not built: nvcc was not found when libvoxa was built");
        return VOXA_OK;
    }
    if (!load()) {
        snprintf(info->why, sizeof info->why, "%s", load_msg);
        return VOXA_OK;
    }
    int n = 0, ver = 0;
    cu.cuDriverGetVersion(&ver);
    snprintf(info->runtime, sizeof info->runtime, "CUDA driver %d.%d", ver / 1000,
             ver % 1000 / 10);
    if (cu.cuDeviceGetCount(&n) != 0 || n == 0) {
        snprintf(info->why, sizeof info->why, "no CUDA device");
        return VOXA_OK;
    }
    info->ndevices = n < VOXA_MAX_DEVICES ? n : VOXA_MAX_DEVICES;
    for (int i = 0; i < info->ndevices; i++) {
        CUdevice d;
        if (cu.cuDeviceGet(&d, i) == 0) device_info(d, &info->devices[i]);
    }
    info->available = 1;
    return VOXA_OK;
}

/* ---- the context -------------------------------------------------------------- */

#define MAX_KERNELS 64

typedef struct cuctx {
    CUcontext ctx;
    CUmodule mod;
    int nk;
    const char *knames[MAX_KERNELS];
    CUfunction fns[MAX_KERNELS];
} cuctx;

static cuctx the_ctx;

#define CU_FAIL_IF(e, status, what) \
    VOXA_FAIL_IF((e) != 0, status, "cuda: %s failed (%s)", what, errstr(e))

static voxa_status cu_alloc(voxa__gpu *g, size_t bytes, voxa__buf *out) {
    cuctx *c = g->impl;
    cu.cuCtxSetCurrent(c->ctx);
    CUdeviceptr p = 0;
    CUresult e = cu.cuMemAlloc_v2(&p, bytes);
    VOXA_FAIL_IF(e != 0, VOXA_ENOMEM, "cuda: cannot allocate %zu bytes on %s (%s)", bytes,
                 g->device, errstr(e));
    out->h = (uintptr_t)p;
    out->bytes = bytes;
    return VOXA_OK;
}

static void cu_free(voxa__gpu *g, voxa__buf *b) {
    cu.cuMemFree_v2((CUdeviceptr)b->h);
}

static voxa_status cu_write(voxa__gpu *g, voxa__buf *b, size_t off, const void *src, size_t n) {
    cu.cuCtxSetCurrent(((cuctx *)g->impl)->ctx);
    double t0 = g->timing ? voxa__gpu_now() : 0;
    CU_FAIL_IF(cu.cuMemcpyHtoD_v2((CUdeviceptr)b->h + off, src, n), VOXA_EIO,
               "copy to the device");
    voxa__gpu_count_transfer(0, n);
    if (g->timing) g->seconds[0] += voxa__gpu_now() - t0;
    return VOXA_OK;
}

static voxa_status cu_read(voxa__gpu *g, const voxa__buf *b, size_t off, void *dst, size_t n) {
    cu.cuCtxSetCurrent(((cuctx *)g->impl)->ctx);
    if (g->timing) cu.cuCtxSynchronize(); /* kernels before the copy count as kernels */
    double t0 = g->timing ? voxa__gpu_now() : 0;
    CU_FAIL_IF(cu.cuMemcpyDtoH_v2(dst, (CUdeviceptr)b->h + off, n), VOXA_EIO,
               "copy from the device (an earlier kernel may have failed)");
    voxa__gpu_count_transfer(1, n);
    if (g->timing) g->seconds[2] += voxa__gpu_now() - t0;
    return VOXA_OK;
}

static voxa_status get_kernel(cuctx *c, const char *name, CUfunction *out) {
    for (int i = 0; i < c->nk; i++)
        if (!strcmp(c->knames[i], name)) {
            *out = c->fns[i];
            return VOXA_OK;
        }
    VOXA_FAIL_IF(c->nk == MAX_KERNELS, VOXA_EINTERNAL, "cuda: kernel table full");
    CUfunction f = NULL;
    CUresult e = cu.cuModuleGetFunction(&f, c->mod, name);
    VOXA_FAIL_IF(e != 0, VOXA_EINTERNAL, "cuda: no kernel '%s' (%s)", name, errstr(e));
    c->knames[c->nk] = name;
    c->fns[c->nk++] = f;
    *out = f;
    return VOXA_OK;
}

static voxa_status cu_launch(voxa__gpu *g, const char *name, int64_t items, int nargs,
                             const voxa__arg *args) {
    cuctx *c = g->impl;
    cu.cuCtxSetCurrent(c->ctx);
    CUfunction f = NULL;
    VOXA_CHECK(get_kernel(c, name, &f));
    void *params[32];
    VOXA_FAIL_IF(nargs > 32, VOXA_EINTERNAL, "cuda: %s: too many arguments", name);
    for (int i = 0; i < nargs; i++) params[i] = (void *)args[i].ptr;
    int64_t cap = (int64_t)1 << 24;
    if (items < 1) items = 1;
    if (items > cap) items = cap;
    unsigned blocks = (unsigned)((items + VOXA__GPU_GROUP - 1) / VOXA__GPU_GROUP);
    double t0 = g->timing ? voxa__gpu_now() : 0;
    CUresult e = cu.cuLaunchKernel(f, blocks, 1, 1, VOXA__GPU_GROUP, 1, 1, 0, NULL, params, NULL);
    VOXA_FAIL_IF(e != 0, VOXA_EINTERNAL, "cuda: launch of %s failed (%s)", name, errstr(e));
    if (g->timing) {
        e = cu.cuCtxSynchronize();
        VOXA_FAIL_IF(e != 0, VOXA_EINTERNAL, "cuda: kernel %s failed (%s)", name, errstr(e));
        g->seconds[1] += voxa__gpu_now() - t0;
    }
    return VOXA_OK;
}

static voxa_status cu_finish(voxa__gpu *g) {
    CU_FAIL_IF(cu.cuCtxSynchronize(), VOXA_EINTERNAL, "a kernel");
    return VOXA_OK;
}

/* A caller's device pointer (CuPy, PyTorch): device (or managed) memory of
 * device 0 holding `bytes` from ptr on. */
static voxa_status cu_check_ptr(voxa__gpu *g, uintptr_t ptr, size_t bytes, const char *what) {
    cu.cuCtxSetCurrent(((cuctx *)g->impl)->ctx);
    VOXA_FAIL_IF(!cu.cuPointerGetAttribute || !cu.cuMemGetAddressRange_v2, VOXA_EUNSUPPORTED,
                 "%s: this CUDA driver cannot check device pointers", what);
    unsigned type = 0;
    int ordinal = -1;
    CUresult e = cu.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr);
    VOXA_FAIL_IF(e != 0 || (type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED),
                 VOXA_EINVAL, "%s: 0x%llx is not CUDA device memory (%s)", what,
                 (unsigned long long)ptr, e ? errstr(e) : "host memory");
    e = cu.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr);
    VOXA_FAIL_IF(e != 0 || ordinal != 0, VOXA_EINVAL, "%s: the array is on CUDA device %d; "
                 "voxa's cuda backend runs on device 0", what, ordinal);
    CUdeviceptr base = 0;
    size_t size = 0;
    e = cu.cuMemGetAddressRange_v2(&base, &size, ptr);
    VOXA_FAIL_IF(e != 0 || ptr + bytes > base + size, VOXA_EINVAL, "%s: %zu bytes from 0x%llx "
                 "run past the end of its allocation", what, bytes, (unsigned long long)ptr);
    return VOXA_OK;
}

static const voxa__gpu_ops cu_ops = {cu_alloc, cu_free, cu_write, cu_read, cu_launch,
                                     cu_finish, cu_check_ptr};

voxa_status voxa__cuda_open(voxa__gpu *g) {
    VOXA_FAIL_IF(voxa__cuda_fatbin_size == 0, VOXA_EUNSUPPORTED,
                 "not built: nvcc was not found when libvoxa was built");
    VOXA_FAIL_IF(!load(), VOXA_EUNSUPPORTED, "%s", load_msg);
    cuctx *c = &the_ctx;
    int n = 0;
    VOXA_FAIL_IF(cu.cuDeviceGetCount(&n) != 0 || n == 0, VOXA_EUNSUPPORTED, "no CUDA device");
    CUdevice d;
    CU_FAIL_IF(cu.cuDeviceGet(&d, 0), VOXA_EUNSUPPORTED, "cuDeviceGet");
    voxa_device_info di;
    memset(&di, 0, sizeof di);
    device_info(d, &di);
    CU_FAIL_IF(cu.cuDevicePrimaryCtxRetain(&c->ctx, d), VOXA_EUNSUPPORTED,
               "cuDevicePrimaryCtxRetain");
    CU_FAIL_IF(cu.cuCtxSetCurrent(c->ctx), VOXA_EUNSUPPORTED, "cuCtxSetCurrent");
    CUresult e = cu.cuModuleLoadData(&c->mod, voxa__cuda_fatbin);
    VOXA_FAIL_IF(e != 0, VOXA_EUNSUPPORTED,
                 "cuda: the embedded kernels do not load on %s (%s; built for sm_75/sm_90 "
                 "and compute_75 PTX)", di.name, errstr(e));
    g->impl = c;
    g->ops = &cu_ops;
    g->memory = di.memory;
    g->max_alloc = di.memory;
    snprintf(g->device, sizeof g->device, "%s", di.name);
    return VOXA_OK;
}
