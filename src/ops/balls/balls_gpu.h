/* The balls family's GPU entry point(s): b is opencl or cuda; arguments,
 * checks, results and errors as the CPU function. The op interface's `gpu`
 * slot calls these (defined in balls_gpu.c). Not installed. */
#ifndef VOXA_BALLS_GPU_H
#define VOXA_BALLS_GPU_H

#include "internal.h"
#include "voxa/backend.h"

voxa_status voxa__balls_gpu(voxa_backend b, const voxa_balls_params *p, voxa_array *out);

#endif
