/* The label family's GPU entry point(s): b is opencl or cuda; arguments,
 * checks, results and errors as the CPU function. The op interface's `gpu`
 * slot calls these (defined in label_gpu.c). Not installed. */
#ifndef VOXA_LABEL_GPU_H
#define VOXA_LABEL_GPU_H

#include "internal.h"
#include "voxa/backend.h"

voxa_status voxa__label_gpu(voxa_backend b, const voxa_array *in, const unsigned char *structure,
                            int connectivity, voxa_array *out, int64_t *nlabels);

#endif
