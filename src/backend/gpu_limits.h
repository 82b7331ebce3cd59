/* Device limits for tiling (gpu_limits.c). Separate from gpu.h so the
 * registry's router can include it. Not installed. */
#ifndef VOXA_GPU_LIMITS_H
#define VOXA_GPU_LIMITS_H

#include "internal.h"
#include "voxa/backend.h"

/* The bytes one run may use on b's device and the largest buffer: 3/4 of
 * device 0's memory and its largest allocation, each lowered to
 * VOXA_GPU_TILE_BYTES when set; INT64_MAX when unknown. */
voxa_status voxa__gpu_limits(voxa_backend b, int64_t *total, int64_t *largest);

#endif
