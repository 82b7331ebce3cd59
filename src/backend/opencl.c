/* The OpenCL backend: any vendor's OpenCL 1.2+ device, PoCL on CPUs here.
 *
 * libOpenCL.so.1 (the ICD loader) is opened with dlopen on first use and the
 * ~20 entry points are looked up by name; the Khronos header is used for
 * types only (no link against libOpenCL), so libvoxa loads without it. The
 * program (vx_portable.h + every op's .cl file, embedded at build time) is
 * built once per process for the first GPU of the first platform that has
 * one, else device 0 of the first platform with any device (PoCL's CPU);
 * kernels are created on first launch and kept in a small table by name.
 *
 * Builds flags: -cl-std=CL1.2 and no fast-math options; vx_portable.h turns
 * FP_CONTRACT off, so double arithmetic rounds exactly as the CPU code does.
 * One in-order queue; reads are blocking, launches are not (the next read
 * waits for them). */
#include "gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if defined(VOXA_HAVE_OPENCL_HEADERS)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define CL_FUNCS(X)                                                                       \
    X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo)          \
    X(clCreateContext) X(clCreateCommandQueue) X(clCreateProgramWithSource)               \
    X(clBuildProgram) X(clGetProgramBuildInfo) X(clCreateKernel) X(clSetKernelArg)        \
    X(clEnqueueNDRangeKernel) X(clCreateBuffer) X(clReleaseMemObject)                     \
    X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clFinish)

typedef struct clapi {
#define DECL(f) __typeof__(f) *f;
    CL_FUNCS(DECL)
#undef DECL
} clapi;

static clapi cl;
static int loaded; /* 0 not tried, 1 ok, -1 failed */
static char load_msg[256];

/* Load the ICD loader once; the process keeps it (never dlclose'd). */
static void load_once(void) {
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_msg, sizeof load_msg,
                 "no OpenCL ICD loader (libOpenCL.so.1 not found; Debian: ocl-icd-libopencl1 "
                 "and a driver such as pocl-opencl-icd)");
        loaded = -1;
        return;
    }
#define LOAD(f)                                                                   \
    if (!(cl.f = (__typeof__(f) *)dlsym(h, #f))) {                                \
        snprintf(load_msg, sizeof load_msg, "libOpenCL.so.1 lacks %s", #f);       \
        loaded = -1;                                                              \
        return;                                                                   \
    }
    CL_FUNCS(LOAD)
#undef LOAD
    loaded = 1;
}

static int load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_once);
    return loaded > 0;
}

/* The first GPU of the first platform that has one (a machine with PoCL
 * beside a GPU driver means the GPU), else device 0 of the first platform
 * with any device (CPU, accelerator); all[] lists that platform's devices
 * of the kind chosen. */
static voxa_status first_device(cl_platform_id *pp, cl_device_id *dd, int *ndev,
                                cl_device_id *all, int maxall) {
    cl_uint np = 0;
    cl_platform_id plats[16];
    cl_int e = cl.clGetPlatformIDs(16, plats, &np);
    VOXA_FAIL_IF(e == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (e == CL_SUCCESS && np == 0),
                 VOXA_EUNSUPPORTED,
                 "no OpenCL platform (the ICD loader found no driver: is an ICD such as "
                 "pocl-opencl-icd installed, and OCL_ICD_VENDORS right?)");
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EUNSUPPORTED, "clGetPlatformIDs failed (error %d)", e);
    const cl_device_type kinds[2] = {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_ALL};
    for (int k = 0; k < 2; k++)
        for (cl_uint p = 0; p < np && p < 16; p++) {
            cl_uint n = 0;
            if (cl.clGetDeviceIDs(plats[p], kinds[k], (cl_uint)maxall, all, &n) != CL_SUCCESS ||
                n == 0)
                continue;
            *pp = plats[p];
            *dd = all[0];
            *ndev = (int)(n < (cl_uint)maxall ? n : (cl_uint)maxall);
            return VOXA_OK;
        }
    return voxa__error(VOXA_EUNSUPPORTED, "no OpenCL device on %u platform(s)", np);
}

static void device_info(cl_device_id d, voxa_device_info *di) {
    cl_ulong mem = 0, maxa = 0;
    cl.clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof di->name - 1, di->name, NULL);
    cl.clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
    cl.clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxa, &maxa, NULL);
    di->memory = (int64_t)mem;
    di->max_alloc = (int64_t)maxa;
}

voxa_status voxa__opencl_query(voxa_backend_info *info) {
    if (!load()) {
        snprintf(info->why, sizeof info->why, "%s", load_msg);
        return VOXA_OK;
    }
    cl_platform_id p;
    cl_device_id d, all[VOXA_MAX_DEVICES];
    int n = 0;
    if (first_device(&p, &d, &n, all, VOXA_MAX_DEVICES) != VOXA_OK) {
        snprintf(info->why, sizeof info->why, "%s", voxa_last_error());
        voxa_clear_error();
        return VOXA_OK;
    }
    cl.clGetPlatformInfo(p, CL_PLATFORM_VERSION, sizeof info->runtime - 1, info->runtime, NULL);
    info->ndevices = n;
    for (int i = 0; i < n; i++) device_info(all[i], &info->devices[i]);
    info->available = 1;
    return VOXA_OK;
}

/* ---- the context -------------------------------------------------------------- */

#define MAX_KERNELS 64

typedef struct clctx {
    cl_context ctx;
    cl_command_queue q;
    cl_device_id dev;
    cl_program prog;
    int nk;
    const char *knames[MAX_KERNELS];
    cl_kernel kernels[MAX_KERNELS];
} clctx;

static clctx the_ctx;

static voxa_status cl_alloc(voxa__gpu *g, size_t bytes, voxa__buf *out) {
    clctx *c = g->impl;
    cl_int e;
    cl_mem m = cl.clCreateBuffer(c->ctx, CL_MEM_READ_WRITE, bytes, NULL, &e);
    VOXA_FAIL_IF(e != CL_SUCCESS || !m, VOXA_ENOMEM,
                 "opencl: cannot allocate %zu bytes on %s (error %d)", bytes, g->device, e);
    out->h = (uintptr_t)m;
    out->bytes = bytes;
    return VOXA_OK;
}

static void cl_free(voxa__gpu *g, voxa__buf *b) {
    cl.clReleaseMemObject((cl_mem)b->h);
}

static voxa_status cl_write(voxa__gpu *g, voxa__buf *b, size_t off, const void *src, size_t n) {
    clctx *c = g->impl;
    double t0 = g->timing ? voxa__gpu_now() : 0;
    cl_int e = cl.clEnqueueWriteBuffer(c->q, (cl_mem)b->h, CL_TRUE, off, n, src, 0, NULL, NULL);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EIO, "opencl: copy of %zu bytes to the device failed "
                 "(error %d)", n, e);
    voxa__gpu_count_transfer(0, n);
    if (g->timing) g->seconds[0] += voxa__gpu_now() - t0;
    return VOXA_OK;
}

static voxa_status cl_read(voxa__gpu *g, const voxa__buf *b, size_t off, void *dst, size_t n) {
    clctx *c = g->impl;
    if (g->timing) cl.clFinish(c->q); /* kernels before the copy count as kernels */
    double t0 = g->timing ? voxa__gpu_now() : 0;
    cl_int e = cl.clEnqueueReadBuffer(c->q, (cl_mem)b->h, CL_TRUE, off, n, dst, 0, NULL, NULL);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EIO, "opencl: copy of %zu bytes from the device failed "
                 "(error %d; an earlier kernel may have failed)", n, e);
    voxa__gpu_count_transfer(1, n);
    if (g->timing) g->seconds[2] += voxa__gpu_now() - t0;
    return VOXA_OK;
}

static voxa_status get_kernel(clctx *c, const char *name, cl_kernel *out) {
    for (int i = 0; i < c->nk; i++)
        if (!strcmp(c->knames[i], name)) {
            *out = c->kernels[i];
            return VOXA_OK;
        }
    VOXA_FAIL_IF(c->nk == MAX_KERNELS, VOXA_EINTERNAL, "opencl: kernel table full");
    cl_int e;
    cl_kernel k = cl.clCreateKernel(c->prog, name, &e);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EINTERNAL, "opencl: no kernel '%s' (error %d)", name, e);
    c->knames[c->nk] = name; /* names are string literals */
    c->kernels[c->nk++] = k;
    *out = k;
    return VOXA_OK;
}

static voxa_status cl_launch(voxa__gpu *g, const char *name, int64_t items, int nargs,
                             const voxa__arg *args) {
    clctx *c = g->impl;
    cl_kernel k = NULL;
    VOXA_CHECK(get_kernel(c, name, &k));
    for (int i = 0; i < nargs; i++) {
        cl_int e = cl.clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].ptr);
        VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EINTERNAL, "opencl: %s: argument %d (error %d)",
                     name, i, e);
    }
    int64_t cap = (int64_t)1 << 22;
    if (items < 1) items = 1;
    if (items > cap) items = cap;
    size_t local = VOXA__GPU_GROUP;
    size_t global = (size_t)((items + VOXA__GPU_GROUP - 1) / VOXA__GPU_GROUP) * local;
    double t0 = g->timing ? voxa__gpu_now() : 0;
    cl_int e = cl.clEnqueueNDRangeKernel(c->q, k, 1, NULL, &global, &local, 0, NULL, NULL);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EINTERNAL, "opencl: launch of %s failed (error %d)",
                 name, e);
    if (g->timing) {
        cl.clFinish(c->q);
        g->seconds[1] += voxa__gpu_now() - t0;
    }
    return VOXA_OK;
}

static voxa_status cl_finish(voxa__gpu *g) {
    clctx *c = g->impl;
    cl_int e = cl.clFinish(c->q);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EINTERNAL, "opencl: a kernel failed (error %d)", e);
    return VOXA_OK;
}

static const voxa__gpu_ops cl_ops = {cl_alloc, cl_free, cl_write, cl_read, cl_launch,
                                     cl_finish, NULL};

voxa_status voxa__opencl_open(voxa__gpu *g) {
    VOXA_FAIL_IF(!load(), VOXA_EUNSUPPORTED, "%s", load_msg);
    clctx *c = &the_ctx;
    cl_platform_id p;
    cl_device_id all[VOXA_MAX_DEVICES];
    int n = 0;
    VOXA_CHECK(first_device(&p, &c->dev, &n, all, VOXA_MAX_DEVICES));
    voxa_device_info di;
    memset(&di, 0, sizeof di);
    device_info(c->dev, &di);
    cl_int e;
    c->ctx = cl.clCreateContext(NULL, 1, &c->dev, NULL, NULL, &e);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EUNSUPPORTED, "opencl: clCreateContext failed (%d)", e);
    c->q = cl.clCreateCommandQueue(c->ctx, c->dev, 0, &e);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EUNSUPPORTED, "opencl: clCreateCommandQueue failed (%d)",
                 e);
    const char *src = voxa__cl_source;
    c->prog = cl.clCreateProgramWithSource(c->ctx, 1, &src, NULL, &e);
    VOXA_FAIL_IF(e != CL_SUCCESS, VOXA_EINTERNAL, "opencl: clCreateProgramWithSource failed (%d)",
                 e);
    e = cl.clBuildProgram(c->prog, 1, &c->dev, "-cl-std=CL1.2", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[4096] = "";
        cl.clGetProgramBuildInfo(c->prog, c->dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log,
                                 NULL);
        const char *first = strstr(log, "error");
        return voxa__error(VOXA_EUNSUPPORTED, "opencl: the kernels do not build on %s "
                           "(error %d): %.300s", di.name, e, first ? first : log);
    }
    g->impl = c;
    g->ops = &cl_ops;
    g->memory = di.memory;
    g->max_alloc = di.max_alloc;
    snprintf(g->device, sizeof g->device, "%s", di.name);
    return VOXA_OK;
}

#else /* built without the OpenCL headers */

voxa_status voxa__opencl_query(voxa_backend_info *info) {
    snprintf(info->why, sizeof info->why,
             "not built: the OpenCL headers were missing at build time (Debian: opencl-headers)");
    return VOXA_OK;
}

voxa_status voxa__opencl_open(voxa__gpu *g) {
    return voxa__error(VOXA_EUNSUPPORTED, "not built: the OpenCL headers were missing at build "
                       "time (Debian: opencl-headers)");
}
#endif
