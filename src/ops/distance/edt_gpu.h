/* The distance family's GPU entry point: b is opencl or cuda; arguments,
 * checks, results and errors as voxa_edt. The op interface's `gpu` slot
 * calls it (defined in edt_gpu.c). Not installed. */
#ifndef VOXA_EDT_GPU_H
#define VOXA_EDT_GPU_H

#include "internal.h"
#include "voxa/backend.h"
#include "voxa/edt.h"

voxa_status voxa__edt_gpu(voxa_backend b, const voxa_array *in, voxa_array *out,
                          const voxa_edt_params *p);

/* Device bytes of voxa__edt_gpu on an input of this shape. */
void voxa__edt_gpu_bytes(int ndim, const int64_t *shape, voxa_dtype out_dtype, int64_t *total,
                         int64_t *largest);

#endif
