/* The exact squared-distance core shared by the distance family (EDT) and
 * the morph family (ball elements). Not installed. */
#ifndef VOXA_SQDT_H
#define VOXA_SQDT_H

#include "internal.h"

#include <stdint.h>

/* ---- squared Euclidean distance to a set of "target" voxels -------------- */

typedef enum voxa__sqdt_mode {
    VOXA__SQDT_THRESHOLD, /* out u8: (d2 <= thr) ^ invert */
    VOXA__SQDT_F64,       /* out f64: sqrt(d2) */
    VOXA__SQDT_F32,       /* out f32: sqrt(d2) */
    VOXA__SQDT_F64_SQ,    /* out f64: d2 */
    VOXA__SQDT_F32_SQ,    /* out f32: (float) d2 */
    VOXA__SQDT_U32_SQ     /* out u32: d2 (unit spacing only; EOVERFLOW if it
                             may not fit) */
} voxa__sqdt_mode;

typedef struct voxa__sqdt {
    int ndim;
    int64_t shape[VOXA_MAXDIM];
    const uint8_t *src;     /* C-contiguous, 0 / non-zero */
    int target;             /* distances TO voxels with (src != 0) == target */
    int border;             /* 1: every voxel outside the volume is a target */
    const double *spacing;  /* ndim values > 0, or NULL for unit spacing */
    voxa__sqdt_mode mode;
    void *out;              /* C-contiguous, same shape; may alias src (u8) */
    double thr;             /* threshold mode */
    int invert;             /* threshold mode */
    const voxa_progress *progress;
    void *scratch;          /* optional: voxa__sqdt_scratch_bytes(p) bytes,
                               reused across calls instead of allocating */
} voxa__sqdt;

/* Bytes of intermediate storage voxa__sqdt_run needs for p (0: none). */
size_t voxa__sqdt_scratch_bytes(const voxa__sqdt *p);

/* Bytes of line scratch voxa__sqdt_run allocates per thread for p: the
 * largest over its passes along axes 0..ndim-2 (or 1..ndim-1 in the threshold
 * order) of 8 (tw + 4) (n + 2) for double storage or (8 tw + 24) (n + 2) for
 * integer storage, n the axis length and tw = min(16 or 64, product of the
 * later axes); at least 2048 in the threshold order; 0 for 1-D inputs. */
size_t voxa__sqdt_line_bytes(const voxa__sqdt *p);

/* Exact separable squared distance transform (Felzenszwalb-Huttenlocher
 * lower envelope per axis). A voxel with no target anywhere gets +inf
 * (UINT32_MAX for u32). Temporary memory: the values between passes (none
 * for f64/u32 outputs, nor for f32 with unit spacing, nor for 2-D and 3-D
 * f32 (rows and axis-1 of fewer than 65535 voxels), which keep them in the
 * output; else at most voxa__sqdt_scratch_bytes(p), unless p->scratch is
 * given) plus
 * voxa__sqdt_line_bytes(p) per thread. */
voxa_status voxa__sqdt_run(const voxa__sqdt *p);

/* One line: the lower envelope of the parabolas (q, g[q]) (plus height-0
 * sentinels at -1 and n when border) read at 0..n-1 into f. Parabolas above
 * cap or infinite are left out. Scratch v, gv, z: n + 2 entries each. The
 * passes of voxa__sqdt_run call it; so do streamed runs, to get the same
 * values bit for bit. */
void voxa__sqdt_envelope(const double *g, int64_t n, double s2, int border, double cap,
                         double *f, int64_t *v, double *gv, double *z);

#endif
