/* The internal GPU interface every backend implements (opencl.c, cuda.c) and
 * every *_gpu.c op uses: one context per backend (device 0), buffers,
 * copies, and kernel launches by name. Not installed.
 *
 * A buffer handle is a uintptr_t holding a cl_mem or a CUdeviceptr, so a
 * kernel argument is the same {size, pointer} pair on both backends. Kernels
 * are written once in the portable subset (vx_portable.h) and loop over
 * their items with VX_FOR, so the launch size is only a hint: backends round
 * it up to whole groups of VOXA__GPU_GROUP items and cap it.
 *
 * Threads: a context serves one op at a time; voxa__gpu_acquire locks it
 * until voxa__gpu_release, so ops called from several threads queue up. */
#ifndef VOXA_GPU_H
#define VOXA_GPU_H

#include "internal.h"
#include "voxa/backend.h"
#include "voxa/device.h"

#define VOXA__GPU_GROUP 256

typedef struct voxa__buf {
    uintptr_t h; /* cl_mem or CUdeviceptr; 0 = none */
    size_t bytes;
    int borrowed; /* the caller's memory (a device array): never freed here */
} voxa__buf;

typedef struct voxa__arg {
    size_t size;
    const void *ptr;
} voxa__arg;

/* A kernel argument from an lvalue: a scalar (int64_t, double, ...) or a
 * buffer's handle (VX_ARG(buf.h)). */
#define VX_ARG(x) ((voxa__arg){sizeof(x), &(x)})

typedef struct voxa__gpu voxa__gpu;

typedef struct voxa__gpu_ops {
    voxa_status (*alloc)(voxa__gpu *g, size_t bytes, voxa__buf *out);
    void (*free)(voxa__gpu *g, voxa__buf *b);
    voxa_status (*write)(voxa__gpu *g, voxa__buf *b, size_t off, const void *src, size_t n);
    voxa_status (*read)(voxa__gpu *g, const voxa__buf *b, size_t off, void *dst, size_t n);
    /* Run kernel `name` over about `items` work-items (at least one). */
    voxa_status (*launch)(voxa__gpu *g, const char *name, int64_t items, int nargs,
                          const voxa__arg *args);
    voxa_status (*finish)(voxa__gpu *g);
    /* Check a caller's device pointer holds `bytes` on this device (device
     * arrays); NULL: the backend takes none (opencl). */
    voxa_status (*check_ptr)(voxa__gpu *g, uintptr_t ptr, size_t bytes, const char *what);
} voxa__gpu_ops;

struct voxa__gpu {
    voxa_backend kind;
    const voxa__gpu_ops *ops;
    void *impl;
    int64_t max_alloc, memory;
    char device[128];
    /* VOXA_GPU_TIMING=1 when the context opened: launches wait for their
     * kernel, and seconds are summed: [0] to the device, [1] kernels,
     * [2] from the device (voxa_backend_timing). */
    int timing;
    double seconds[3];
};

#ifdef VOXA_FAILALLOC
/* Test builds: the context's calls take the allocation sweep's tickets
 * (gpu_failinject.c). */
void voxa__gpu_inject_failures(voxa__gpu *g);
#endif

/* Monotonic clock in seconds, for the timing above. */
double voxa__gpu_now(void);

/* Backends: probe (fills info, never fails for a missing runtime) and open a
 * context on device 0 (the program is built / the module loaded on first
 * use). Implemented in opencl.c and cuda.c. */
voxa_status voxa__opencl_query(voxa_backend_info *info);
voxa_status voxa__opencl_open(voxa__gpu *g);
voxa_status voxa__cuda_query(voxa_backend_info *info);
voxa_status voxa__cuda_open(voxa__gpu *g);

/* The context of GPU backend `b` (opencl or cuda), opened on first use and
 * kept for the process, locked for the caller. EUNSUPPORTED with the reason
 * when the backend cannot run. `what` names the op in messages. */
voxa_status voxa__gpu_acquire(voxa_backend b, const char *what, voxa__gpu **out);
void voxa__gpu_release(voxa__gpu *g);

#include "gpu_limits.h"

/* Allocation with the size check against the device's largest buffer
 * (EUNSUPPORTED naming `what` and the size). Zero bytes allocate one. */
voxa_status voxa__gpu_alloc(voxa__gpu *g, size_t bytes, const char *what, voxa__buf *out);
/* Allocate and upload `n` bytes. */
voxa_status voxa__gpu_upload(voxa__gpu *g, const void *src, size_t n, const char *what,
                             voxa__buf *out);
void voxa__gpu_free(voxa__gpu *g, voxa__buf *b);

/* A caller's device array as a buffer of context g (borrowed: voxa__gpu_free
 * forgets it), after checking its backend, dtype, shape and pointer (`what`
 * names it in messages). */
voxa_status voxa__gpu_borrow(voxa__gpu *g, const voxa_device_array *a, const char *what,
                             voxa__buf *out);
/* Count n bytes copied to (dir 0) or from (dir 1) a device (voxa_gpu_transfers). */
void voxa__gpu_count_transfer(int dir, size_t n);

/* The data of `a` in C order: a->data when contiguous, else a copy made in
 * *tmp (free it with voxa_array_free; it is zeroed when unused). */
voxa_status voxa__gpu_host_contig(const voxa_array *a, const void **data, voxa_array *tmp);
/* Read buffer b (C-order elements of out's dtype and shape) into view out. */
voxa_status voxa__gpu_read_into(voxa__gpu *g, const voxa__buf *b, voxa_array *out);

/* Real FFTs on the device (fft_gpu.c: VkFFT on opencl, cuFFT on cuda), for a
 * C-order box of extents L[0..ndim-1], out of place: `real` holds prod(L)
 * floats, `cplx` prod(L[:-1]) * (L[-1] / 2 + 1) float pairs; unnormalised
 * both ways, as FFTW. Plans are cached per (backend, extents) for the process. */
typedef struct voxa__gpu_fft voxa__gpu_fft;
voxa_status voxa__gpu_fft_plan(voxa__gpu *g, int ndim, const int64_t *L, voxa__gpu_fft **out);
voxa_status voxa__gpu_fft_run(voxa__gpu *g, voxa__gpu_fft *p, int inverse, voxa__buf *real,
                              voxa__buf *cplx);

/* Embedded kernels (generated at build time by src/backend/embed.cmake):
 * the OpenCL program source (vx_portable.h + every src/ops/<family>/<name>.cl) and the
 * CUDA fatbin nvcc made from the same files (size 0 without nvcc). */
extern const char voxa__cl_source[];
extern const unsigned char voxa__cuda_fatbin[];
extern const size_t voxa__cuda_fatbin_size;

#endif
