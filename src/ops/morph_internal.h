/* Internal pieces shared by the edt and morph families (not installed).
 *
 * Everything here works on C-contiguous buffers; the public entry points
 * (edt.c, morph.c) make contiguous copies of other views. */
#ifndef VOXA_MORPH_INTERNAL_H
#define VOXA_MORPH_INTERNAL_H

#include "internal.h"
#include "voxa/morph.h"

#include <stdint.h>

/* ---- squared Euclidean distance to a set of "target" voxels -------------- */

typedef enum voxa__sqdt_mode {
    VOXA__SQDT_THRESHOLD, /* out u8: (d2 <= thr) ^ invert */
    VOXA__SQDT_F64,       /* out f64: sqrt(d2) */
    VOXA__SQDT_F32,       /* out f32: sqrt(d2) */
    VOXA__SQDT_F64_SQ,    /* out f64: d2 */
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

/* Exact separable squared distance transform (Felzenszwalb-Huttenlocher
 * lower envelope per axis). A voxel with no target anywhere gets +inf
 * (UINT32_MAX for u32). Temporary memory: 4 bytes/voxel (unit spacing) or 8
 * (other spacing), none when the output is f64. */
voxa_status voxa__sqdt_run(const voxa__sqdt *p);

/* ---- city-block distance thresholds and box (interval) filters ------------ */

/* out = (L1 distance to the nearest target <= r) ^ invert, with targets as
 * in voxa__sqdt (border: outside counts as target). out may alias src. */
voxa_status voxa__l1_threshold(int ndim, const int64_t *shape, const uint8_t *src,
                               int target, int border, int64_t r, int invert,
                               uint8_t *out);

/* Separable box filter: out[v] = OP over o in prod_d [lo_d, hi_d] of
 * src[v + o] (outside the volume: `outside`), OP = OR (dilate_like = 1) or
 * AND (0). out may alias src. */
voxa_status voxa__box_filter(int ndim, const int64_t *shape, const uint8_t *src,
                             const int64_t *lo, const int64_t *hi, int dilate_like,
                             int outside, uint8_t *out);

/* General footprint: out[v] = OR over offsets o of X[v + o], where
 * X = (src != 0) ^ negate_in and X outside the volume = `outside`; then
 * out ^= negate_out. Offsets are `noff` rows of ndim int64. out must not
 * alias src. */
voxa_status voxa__offsets_or(int ndim, const int64_t *shape, const uint8_t *src,
                             int negate_in, const int64_t *offsets, int64_t noff,
                             int outside, int negate_out, uint8_t *out);

/* The same contract on bit-packed rows (morph_bits.c): 64 voxels per word,
 * cost O(N/64 * runs) + O(N); memory ~ widths/8 bytes per voxel (one bit row
 * per distinct run width). out may alias src. */
voxa_status voxa__bits_or(int ndim, const int64_t *shape, const uint8_t *src, int negate_in,
                          const int64_t *offsets, int64_t noff, int outside, int negate_out,
                          uint8_t *out);
/* Runs (rows of the footprint after merging along the last axis) and
 * distinct run widths of an offset list. */
voxa_status voxa__bits_stats(int ndim, const int64_t *offsets, int64_t noff, int64_t *nruns,
                             int *nwidths);

/* Grain for voxa__parallel_for when one item covers `voxels` voxels: blocks
 * of at least ~256k voxels, so small volumes run on one thread (waking
 * threads costs more than the work, and far more on a busy machine). */
static inline int64_t voxa__grain(int64_t voxels) {
    int64_t g = ((int64_t)1 << 18) / (voxels > 0 ? voxels : 1);
    return g > 0 ? g : 1;
}

/* ---- morphology plans (morph_plan.c) --------------------------------------- */

typedef enum { VOXA__PATH_BALL, VOXA__PATH_DIAMOND, VOXA__PATH_BOX, VOXA__PATH_OFFSETS } voxa__path;

typedef struct voxa__plan {
    voxa__path kind;
    int nd;
    double thr;         /* ball */
    int aniso;
    double spacing[VOXA_MAXDIM];
    int64_t r;          /* diamond */
    int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM]; /* box, relative to the centre */
    int64_t *offs;      /* footprint: b - c, noff rows of nd */
    int64_t *neg;       /* -(b - c) */
    int64_t noff;
    int64_t reach[VOXA_MAXDIM];
    int fold;
    int bits;           /* one application runs voxa__bits_or on offs/neg */
    int64_t bits_runs;  /* its number of runs and distinct widths */
    int bits_widths;
} voxa__plan;

/* Build the plan for an element (validating it) for ndim-dimensional input;
 * release with voxa__plan_free. */
voxa_status voxa__plan_make(const voxa_morph_element *se, int ndim, voxa__plan *p);
void voxa__plan_free(voxa__plan *p);

/* ---- views -------------------------------------------------------------- */

/* A C-contiguous byte view of `in` where non-zero = true: `in` itself when it
 * is a C-contiguous bool/u8/i8 array, else a 0/1 copy in *owned (free it). */
voxa_status voxa__binary_view(const voxa_array *in, const uint8_t **data, uint8_t **owned);

/* Copy C-contiguous data of dst's dtype and shape into the (strided) view. */
void voxa__copy_into(const void *src, voxa_array *dst);

#endif
