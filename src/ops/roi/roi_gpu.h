/* The roi family's GPU entry point(s): b is opencl or cuda; arguments,
 * checks, results and errors as the CPU function. The op interface's `gpu`
 * slot calls these (defined in roi_gpu.c). Not installed. */
#ifndef VOXA_ROI_GPU_H
#define VOXA_ROI_GPU_H

#include "internal.h"
#include "voxa/backend.h"

voxa_status voxa__roi_extract_gpu(voxa_backend b, const voxa_array *in, const voxa_roi_params *p,
                                  voxa_array *out);
voxa_status voxa__roi_paste_gpu(voxa_backend b, voxa_array *vol, const voxa_array *patches,
                                const voxa_roi_params *p, voxa_paste_op op);

#endif
