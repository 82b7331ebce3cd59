/* The morph family's GPU entry point: b is opencl or cuda; arguments,
 * checks, results and errors as voxa_morph, for ball, diamond and box
 * elements (EUNSUPPORTED for other footprints and for iterations < 1).
 * The op interface's `gpu` slot calls it (defined in morph_gpu.c). Not
 * installed. */
#ifndef VOXA_MORPH_GPU_H
#define VOXA_MORPH_GPU_H

#include "internal.h"
#include "voxa/backend.h"
#include "voxa/morph.h"

voxa_status voxa__morph_gpu(voxa_backend b, voxa_morph_op op, const voxa_array *in,
                            voxa_array *out, const voxa_morph_params *p);

/* Device bytes of voxa__morph_gpu for this element on an input of `shape`
 * (0 when the element has no GPU path). */
voxa_status voxa__morph_gpu_bytes(const voxa_morph_element *se, int ndim, const int64_t *shape,
                                  int64_t *total, int64_t *largest);

#endif
