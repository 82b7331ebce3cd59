/* Device FFTs on the opencl backend through VkFFT (header-only, Debian
 * libvkfft-dev, VKFFT_BACKEND 3 = OpenCL).
 *
 * VkFFT calls the OpenCL API by name; libvoxa never links libOpenCL (it is
 * dlopen'ed, see opencl.c), so this file maps each cl* call VkFFT makes to a
 * pointer looked up in libOpenCL.so.1 (macros set before the header), and
 * captures VkFFT's printf of kernel build logs into the error it returns
 * (the library never prints).
 *
 * Context, device and queue: VkFFT must enqueue on the backend's own
 * in-order queue, so that its transforms are ordered with the op's kernels
 * without extra waits. opencl.c keeps them as the first three members of its
 * context (cl_context, cl_command_queue, cl_device_id); that layout is
 * checked once at run time against the OpenCL objects themselves (the
 * context of a buffer, the queue's context and device) and a mismatch is an
 * EINTERNAL error, never a wrong call.
 *
 * Plans are out of place (real input not padded, isInputFormatted, the
 * inverse written back to the real buffer), unnormalised, float32. VkFFT
 * compiles kernels for each size when the plan is made (fft_gpu.c caches
 * plans). Limits of VkFFT 1.2: an odd extent of the last axis must fit one
 * upload (a few thousand points); beyond, the plan fails with EUNSUPPORTED
 * naming the size. */
#include "fft_gpu_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>

#if defined(VOXA_HAVE_OPENCL_HEADERS) && defined(__has_include)
#if __has_include(<vkFFT.h>)
#define VOXA_HAVE_VKFFT 1
#endif
#endif

#ifdef VOXA_HAVE_VKFFT
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>

#define VK_CL_FUNCS(X)                                                                      \
    X(clBuildProgram) X(clCreateBuffer) X(clCreateCommandQueue) X(clCreateKernel)           \
    X(clCreateProgramWithBinary) X(clCreateProgramWithSource) X(clEnqueueNDRangeKernel)     \
    X(clEnqueueWriteBuffer) X(clFinish) X(clGetDeviceInfo) X(clGetProgramBuildInfo)         \
    X(clGetProgramInfo) X(clReleaseCommandQueue) X(clReleaseKernel) X(clReleaseMemObject)   \
    X(clReleaseProgram) X(clSetKernelArg) X(clGetMemObjectInfo) X(clGetCommandQueueInfo)

static struct {
#define DECL(f) __typeof__(f) *f;
    VK_CL_FUNCS(DECL)
#undef DECL
} vk;
static int vk_loaded;
static char vk_msg[160];

static void vk_load_once(void) {
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(vk_msg, sizeof vk_msg, "no OpenCL ICD loader (libOpenCL.so.1)");
        vk_loaded = -1;
        return;
    }
#define LOAD(f)                                                                   \
    if (!(vk.f = (__typeof__(f) *)dlsym(h, #f))) {                                \
        snprintf(vk_msg, sizeof vk_msg, "libOpenCL.so.1 lacks %s", #f);           \
        vk_loaded = -1;                                                           \
        return;                                                                   \
    }
    VK_CL_FUNCS(LOAD)
#undef LOAD
    vk_loaded = 1;
}

/* VkFFT sizes its kernels from the device's local memory and work-group
 * limits. PoCL reports 2 MiB and 4096, and the kernels VkFFT then makes for
 * large sizes (a 100003-point Bluestein transform) crash inside PoCL. Capped
 * at GPU-like values (64 KiB, 1024 items; real GPUs report less or equal, so
 * nothing changes there), PoCL runs the plans a GPU would, and a size that
 * needs an unsupported multi-pass real transform fails cleanly instead. */
static cl_int vk_device_info(cl_device_id d, cl_device_info what, size_t n, void *v,
                             size_t *ret) {
    cl_int e = vk.clGetDeviceInfo(d, what, n, v, ret);
    if (e != CL_SUCCESS || !v) return e;
    if (what == CL_DEVICE_LOCAL_MEM_SIZE && n >= sizeof(cl_ulong)) {
        cl_ulong *x = v;
        if (*x > 65536) *x = 65536;
    } else if (what == CL_DEVICE_MAX_WORK_GROUP_SIZE && n >= sizeof(size_t)) {
        size_t *x = v;
        if (*x > 1024) *x = 1024;
    } else if (what == CL_DEVICE_MAX_WORK_ITEM_SIZES) {
        size_t *x = v;
        for (size_t i = 0; i < n / sizeof(size_t); i++)
            if (x[i] > 1024) x[i] = 1024;
    }
    return e;
}

/* VkFFT's calls go through the table. */
#define clBuildProgram (*vk.clBuildProgram)
#define clCreateBuffer (*vk.clCreateBuffer)
#define clCreateCommandQueue (*vk.clCreateCommandQueue)
#define clCreateKernel (*vk.clCreateKernel)
#define clCreateProgramWithBinary (*vk.clCreateProgramWithBinary)
#define clCreateProgramWithSource (*vk.clCreateProgramWithSource)
#define clEnqueueNDRangeKernel (*vk.clEnqueueNDRangeKernel)
#define clEnqueueWriteBuffer (*vk.clEnqueueWriteBuffer)
#define clFinish (*vk.clFinish)
#define clGetDeviceInfo vk_device_info
#define clGetProgramBuildInfo (*vk.clGetProgramBuildInfo)
#define clGetProgramInfo (*vk.clGetProgramInfo)
#define clReleaseCommandQueue (*vk.clReleaseCommandQueue)
#define clReleaseKernel (*vk.clReleaseKernel)
#define clReleaseMemObject (*vk.clReleaseMemObject)
#define clReleaseProgram (*vk.clReleaseProgram)
#define clSetKernelArg (*vk.clSetKernelArg)
/* VkFFT's header prints its diagnostics (e.g. the OpenCL build log when a
 * kernel does not compile) with printf. The library never prints: within
 * this header only (#undef after the include) printf keeps the first message
 * in a per-thread buffer, which the error returned for VkFFT's result code
 * then carries. */
static _Thread_local char vk_said[400];

static int vk_say(const char *fmt, ...) {
    if (vk_said[0]) return 0; /* the first message is the cause */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(vk_said, sizeof vk_said, fmt, ap);
    va_end(ap);
    for (char *c = vk_said; *c; c++)
        if (*c == '\n') *c = ' ';
    return n;
}

#define printf(...) vk_say(__VA_ARGS__)

#define VKFFT_BACKEND 3
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wunused-value"
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wparentheses"
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wempty-body"
#include <vkFFT.h>
#pragma GCC diagnostic pop
#undef printf

/* The head of opencl.c's context (checked at run time, see above). */
typedef struct cl_head {
    cl_context ctx;
    cl_command_queue q;
    cl_device_id dev;
} cl_head;

typedef struct vkplan {
    VkFFTApplication app;
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q;
    uint64_t rbytes, cbytes;
} vkplan;

static voxa_status check_head(voxa__gpu *g, cl_head *out) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, vk_load_once);
    VOXA_FAIL_IF(vk_loaded < 0, VOXA_EUNSUPPORTED, "opencl fft: %s", vk_msg);
    const cl_head *h = g->impl;
    voxa__buf b = {0};
    VOXA_CHECK(g->ops->alloc(g, 4, &b));
    cl_context mc = NULL, qc = NULL;
    cl_device_id qd = NULL;
    vk.clGetMemObjectInfo((cl_mem)b.h, CL_MEM_CONTEXT, sizeof mc, &mc, NULL);
    g->ops->free(g, &b);
    int ok = mc && mc == h->ctx &&
             vk.clGetCommandQueueInfo(h->q, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL) ==
                 CL_SUCCESS &&
             qc == mc &&
             vk.clGetCommandQueueInfo(h->q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL) ==
                 CL_SUCCESS &&
             qd == h->dev;
    VOXA_FAIL_IF(!ok, VOXA_EINTERNAL,
                 "opencl fft: the backend's context does not start with (context, queue, "
                 "device) as fft_vkfft.c expects");
    *out = *h;
    return VOXA_OK;
}

voxa_status voxa__vkfft_plan(voxa__gpu *g, int ndim, const int64_t *L, void **impl) {
    cl_head h = {0};
    VOXA_CHECK(check_head(g, &h));
    vkplan *p = calloc(1, sizeof *p);
    VOXA_FAIL_IF(!p, VOXA_ENOMEM, "opencl fft: cannot allocate a plan");
    p->ctx = h.ctx;
    p->dev = h.dev;
    p->q = h.q;
    VkFFTConfiguration c;
    memset(&c, 0, sizeof c);
    c.FFTdim = (uint64_t)ndim;
    uint64_t rs = 1, cs = 1;
    for (int d = 0; d < ndim; d++) {
        uint64_t n = (uint64_t)L[ndim - 1 - d]; /* VkFFT: axis 0 is the fastest */
        c.size[d] = n;
        rs *= n;
        cs *= d == 0 ? n / 2 + 1 : n;
        c.inputBufferStride[d] = rs;
        c.bufferStride[d] = cs;
    }
    p->rbytes = rs * sizeof(float);
    p->cbytes = cs * 2 * sizeof(float);
    c.device = &p->dev;
    c.context = &p->ctx;
    c.performR2C = 1;
    c.isInputFormatted = 1;
    c.inverseReturnToInputBuffer = 1;
    c.bufferSize = &p->cbytes;
    c.inputBufferSize = &p->rbytes;
    if (p->rbytes >= ((uint64_t)1 << 31)) c.useUint64 = 1;
    vk_said[0] = 0;
    VkFFTResult r = initializeVkFFT(&p->app, c);
    if (r != VKFFT_SUCCESS) {
        deleteVkFFT(&p->app);
        free(p);
        return voxa__error(r == VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C ||
                                   r == VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH ||
                                   r == VKFFT_ERROR_UNSUPPORTED_RADIX
                               ? VOXA_EUNSUPPORTED
                               : VOXA_EINTERNAL,
                           "opencl fft: VkFFT cannot plan a real transform of shape "
                           "(%lld, %lld, %lld) (VkFFT error %d%s%s)",
                           (long long)(ndim > 2 ? L[ndim - 3] : 1),
                           (long long)(ndim > 1 ? L[ndim - 2] : 1), (long long)L[ndim - 1],
                           (int)r, vk_said[0] ? ": " : "", vk_said);
    }
    *impl = p;
    return VOXA_OK;
}

voxa_status voxa__vkfft_run(voxa__gpu *g, void *impl, int inverse, voxa__buf *real,
                            voxa__buf *cplx) {
    vkplan *p = impl;
    cl_mem rm = (cl_mem)real->h, cm = (cl_mem)cplx->h;
    VkFFTLaunchParams lp;
    memset(&lp, 0, sizeof lp);
    lp.commandQueue = &p->q;
    lp.inputBuffer = &rm;
    lp.buffer = &cm;
    vk_said[0] = 0;
    VkFFTResult r = VkFFTAppend(&p->app, inverse ? 1 : -1, &lp);
    VOXA_FAIL_IF(r != VKFFT_SUCCESS, VOXA_EINTERNAL, "opencl fft: VkFFT %s transform failed "
                 "(VkFFT error %d%s%s)", inverse ? "inverse" : "forward", (int)r,
                 vk_said[0] ? ": " : "", vk_said);
    return VOXA_OK;
}

void voxa__vkfft_free(void *impl) {
    vkplan *p = impl;
    if (!p) return;
    deleteVkFFT(&p->app);
    free(p);
}

#else /* no OpenCL headers or no vkFFT.h at build time */

voxa_status voxa__vkfft_plan(voxa__gpu *g, int ndim, const int64_t *L, void **impl) {
    return voxa__error(VOXA_EUNSUPPORTED, "opencl fft: not built (VkFFT's header vkFFT.h or "
                       "the OpenCL headers were missing at build time; Debian: libvkfft-dev)");
}
voxa_status voxa__vkfft_run(voxa__gpu *g, void *impl, int inverse, voxa__buf *real,
                            voxa__buf *cplx) {
    return voxa__error(VOXA_EUNSUPPORTED, "opencl fft: not built");
}
void voxa__vkfft_free(void *impl) {}
#endif
