/* Arrays that already live on a GPU: CUDA device memory (CuPy, PyTorch,
 * Numba arrays through __cuda_array_interface__), read and written by the
 * op's kernels in place, without a copy through the host (docs/gpu.md,
 * "Device arrays").
 *
 * A voxa_device_array names a C-contiguous block of device memory: the
 * backend that owns the pointer (VOXA_BACKEND_CUDA; its primary context on
 * device 0, which is CuPy's and PyTorch's), the address of element 0, the
 * dtype and the shape. The library never frees it. Calls check that the
 * pointer is device memory of device 0 and that the sizes agree, and fail
 * with EINVAL / EUNSUPPORTED naming the argument otherwise. They return
 * after the device has finished writing `out` (the CUDA default stream:
 * work the caller queued on the legacy default stream comes first; work on
 * other streams must be synchronised by the caller). */
#ifndef VOXA_DEVICE_H
#define VOXA_DEVICE_H

#include "voxa/backend.h"
#include "voxa/edt.h"

typedef struct voxa_device_array {
    voxa_backend backend; /* VOXA_BACKEND_CUDA (opencl: not taken, no pointers) */
    uintptr_t ptr;        /* CUdeviceptr of element 0 */
    voxa_dtype dtype;
    int ndim;
    int64_t shape[VOXA_MAXDIM]; /* C order, contiguous */
} voxa_device_array;

/** voxa_label on device arrays: `in` bool/uint8 (0 / non-zero), `out`
 *  int32, uint16, uint32 or int64 of in's shape, 1-D to 3-D; the result and
 *  *nlabels as voxa_label's. The whole volume must fit the device (no
 *  tiles: the arrays are already there). */
VOXA_API voxa_status voxa_label_device(const voxa_device_array *in,
                                       const unsigned char *structure, int connectivity,
                                       voxa_device_array *out, int64_t *nlabels);
/** voxa_edt on device arrays (no indices): `in` bool/uint8, `out` float64,
 *  float32 or (squared) uint32 of in's shape; equal to voxa_edt bit for
 *  bit. */
VOXA_API voxa_status voxa_edt_device(const voxa_device_array *in, voxa_device_array *out,
                                     const voxa_edt_params *p);

/** Host transfers made by the GPU backends so far in this process (bytes to
 *  and from the device, every backend together): a test that a device
 *  array call copies nothing through the host reads it before and after. */
VOXA_API void voxa_gpu_transfers(int64_t *to_device, int64_t *from_device);

#endif
