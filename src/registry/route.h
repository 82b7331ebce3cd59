/* Backend routing of the generic op calls (route.c). Not installed. */
#ifndef VOXA_ROUTE_H
#define VOXA_ROUTE_H

#include "voxa/op.h"

/* Run ctx on the args' backend: cpu -> op->run; opencl/cuda -> the gpu slot,
 * in tiles when the region exceeds the device; auto -> a usable GPU's path,
 * else op->run. */
voxa_status voxa__route_run(voxa_op_ctx *ctx);

#endif
