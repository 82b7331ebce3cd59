/* The distance family's GPU entry point: b is opencl or cuda; arguments,
 * checks, results and errors as voxa_edt. The op interface's `gpu` slot
 * calls it (defined in edt_gpu.c). Not installed. */
#ifndef VOXA_EDT_GPU_H
#define VOXA_EDT_GPU_H

#include "internal.h"
typedef struct voxa__gpu voxa__gpu; /* backend/gpu.h (not for descriptors: op_args.h) */
#include "voxa/backend.h"
#include "voxa/edt.h"

voxa_status voxa__edt_gpu(voxa_backend b, const voxa_array *in, voxa_array *out,
                          const voxa_edt_params *p);

/* Device bytes of voxa__edt_gpu on an input of this shape. */
void voxa__edt_gpu_bytes(int ndim, const int64_t *shape, voxa_dtype out_dtype, int64_t *total,
                         int64_t *largest);

/* Tiles of a GPU run under the device limits (lim bytes, `largest` per
 * buffer): 1 when the whole fits, else the tiles of all passes together;
 * 0 when one line does not fit (edt_gpu_tiled.c). */
int64_t voxa__edt_gpu_tiles(int nd, const int64_t *shape, voxa_dtype odt, int64_t lim,
                            int64_t largest);
/* The tiles of the pass along `axis` (extents in tile[]): their count, or 0. */
int64_t voxa__edt_gpu_pass_tiles(int nd, const int64_t *shape, voxa_dtype odt, int64_t lim,
                                 int64_t largest, int axis, int64_t *tile);
/* The tiled run: the C-ordered 0/1 mask (with some background) into out. */
voxa_status voxa__edt_gpu_tiled(voxa__gpu *g, const uint8_t *mask, voxa_array *out,
                                const voxa_edt_params *p, int64_t lim, int64_t largest);

#endif
