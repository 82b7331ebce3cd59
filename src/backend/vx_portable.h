/* vx_portable.h: the one header every GPU kernel includes, so that a kernel
 * is written once and compiled as OpenCL C 1.2 (PoCL, any vendor) and as
 * CUDA C++ (nvcc). Kernels live next to their op's CPU code as
 * src/ops/<family>/<name>.cl and use only what is mapped here:
 *
 *   VX_KERNEL name(args)    a kernel (extern "C" under CUDA: unmangled name)
 *   VX_FUNC                 a device helper function
 *   VX_GLOBAL               pointer to device memory (__global in OpenCL)
 *   VX_FOR(i, n)            grid-stride loop: every i in [0, n) once, any launch size
 *   vx_cas64(p, cmp, v)     64-bit compare-and-swap, returns the old value
 *   vx_max32(p, v)          32-bit atomic max on int, returns the old value
 *   vx_min64(p, v)          64-bit atomic min on long (by compare-and-swap)
 *   vx_dbits(d)             the bits of a double as a long
 *   long / ulong / uint / ushort / uchar   64/64/32/16/8-bit integers
 *
 * Exactness: double arithmetic must round as the CPU reference does, so no
 * fused multiply-add: FP_CONTRACT OFF here, --fmad=false for nvcc. Indices
 * are 64-bit (long) everywhere: volumes beyond 2^31 voxels are expected. */
#ifndef VX_PORTABLE_H
#define VX_PORTABLE_H

#ifdef __CUDACC__
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#define VX_KERNEL extern "C" __global__ void
#define VX_FUNC static __device__ inline
#define VX_GLOBAL
#define vx_gid() ((long)blockIdx.x * (long)blockDim.x + (long)threadIdx.x)
#define vx_gsize() ((long)gridDim.x * (long)blockDim.x)
#define vx_cas64(p, cmp, v)                                                     \
    ((long)atomicCAS((unsigned long long *)(p), (unsigned long long)(cmp),      \
                     (unsigned long long)(v)))
#define vx_max32(p, v) atomicMax((int *)(p), (int)(v))
#define vx_dbits(d) ((long)__double_as_longlong(d))
#else
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL FP_CONTRACT OFF
#define VX_KERNEL __kernel void
#define VX_FUNC static inline
#define VX_GLOBAL __global
#define vx_gid() ((long)get_global_id(0))
#define vx_gsize() ((long)get_global_size(0))
#define vx_cas64(p, cmp, v) atom_cmpxchg((volatile __global long *)(p), (long)(cmp), (long)(v))
#define vx_max32(p, v) atomic_max((volatile __global int *)(p), (int)(v))
#define vx_dbits(d) as_long(d)
#endif

#define VX_FOR(i, n) for (long i = vx_gid(); i < (long)(n); i += vx_gsize())

/* Atomic 64-bit minimum by compare-and-swap (64-bit atomic_min is an
 * optional OpenCL extension); returns the value seen before. */
VX_FUNC long vx_min64(VX_GLOBAL long *p, long v) {
    long old = *(volatile VX_GLOBAL long *)p;
    while (old > v) {
        long prev = vx_cas64(p, old, v);
        if (prev == old) break;
        old = prev;
    }
    return old;
}

/* Fill kernels used by several ops. */
VX_KERNEL vx_fill_u8(VX_GLOBAL uchar *p, long n, int v) {
    VX_FOR(i, n) p[i] = (uchar)v;
}
VX_KERNEL vx_fill_i64(VX_GLOBAL long *p, long n, long v) {
    VX_FOR(i, n) p[i] = v;
}
VX_KERNEL vx_fill_i32(VX_GLOBAL int *p, long n, int v) {
    VX_FOR(i, n) p[i] = v;
}

#endif
