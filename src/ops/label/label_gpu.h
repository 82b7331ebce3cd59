/* The label family's GPU entry point(s): b is opencl or cuda; arguments,
 * checks, results and errors as the CPU function. The op interface's `gpu`
 * slot calls these (defined in label_gpu.c; tiles in label_gpu_tiled.c).
 * Not installed. */
#ifndef VOXA_LABEL_GPU_H
#define VOXA_LABEL_GPU_H

#include "internal.h"
typedef struct voxa__gpu voxa__gpu; /* backend/gpu.h (not for descriptors: op_args.h) */
#include "voxa/backend.h"

voxa_status voxa__label_gpu(voxa_backend b, const voxa_array *in, const unsigned char *structure,
                            int connectivity, voxa_array *out, int64_t *nlabels);

/* Device bytes of the root counts of v voxels and their scan's levels
 * (8 per 512 voxels, + 1/512 of that per level above). */
int64_t voxa__label_gpu_count_bytes(int64_t v);

/* Largest value of an integer dtype (label counts). */
int64_t voxa__label_dtype_max(voxa_dtype t);

/* Tiles of the padded 3-D shape sh for output elements of es bytes under
 * the device limits (lim bytes in all, `largest` per buffer): 1 when the
 * whole volume fits, else the tile count with the tile extents in tile[];
 * 0 when even one voxel does not fit. */
int64_t voxa__label_gpu_tiling(const int64_t sh[3], size_t es, int64_t lim, int64_t largest,
                               int64_t tile[3]);

/* One C-contiguous 3-D mask on the device into `out` (its dtype; any view of
 * the same element count), numbered in raster order; with `map`, label n
 * becomes map[n - 1] (nmap labels expected). */
voxa_status voxa__label_gpu_tile(voxa__gpu *g, const uint8_t *bin, const int64_t sh[3], int mask,
                                 const int64_t *map, int64_t nmap, voxa_array *out,
                                 int64_t *count);

/* The same on device buffers: the mask from xmask instead of bin, the
 * result into xout instead of out (then out gives only the dtype), either
 * borrowed (device arrays) or NULL. */
typedef struct voxa__buf voxa__buf;
voxa_status voxa__label_gpu_buffers(voxa__gpu *g, const uint8_t *bin, const voxa__buf *xmask,
                                    const int64_t sh[3], int mask, const int64_t *map,
                                    int64_t nmap, voxa_array *out, voxa__buf *xout,
                                    int64_t *count);

/* The tiled run (label_gpu_tiled.c): tiles of extents tile[] of the padded
 * volume bin (shape sh, nd the caller's rank), into out. */
voxa_status voxa__label_gpu_tiled(voxa__gpu *g, const uint8_t *bin, const int64_t sh[3],
                                  const int64_t tile[3], int nd, const unsigned char *structure,
                                  int connectivity, int mask, voxa_array *out, int64_t *nlabels);

#endif
