/* Internal pieces of the morph family (not installed).
 *
 * Everything here works on C-contiguous buffers; the public entry point
 * (morph.c) makes contiguous copies of other views. */
#ifndef VOXA_MORPH_INTERNAL_H
#define VOXA_MORPH_INTERNAL_H

#include "internal.h"
#include "sqdt.h"
#include "voxa/morph.h"

#include <stdint.h>

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

/* ---- clamped small-integer thresholds (morph_clamp.c) --------------------- */

/* Whether voxa__clamp_threshold takes one step of plan p (k: the folded
 * iteration count) on ndim-dimensional input. */
int voxa__clamp_applies(const voxa__plan *p, int nd, int64_t k);
/* The loop set it runs ("AVX-512BW", "AVX2", "portable C", or "none"). */
const char *voxa__clamp_kernel_name(void);
/* out = (a target within the element) ^ invert, targets and border as in
 * voxa__l1_threshold; ball: squared distance <= reach2 (unit spacing),
 * else city-block distance <= reach2. 2-D and 3-D; out may alias src. */
voxa_status voxa__clamp_threshold(int nd, const int64_t *shape, const uint8_t *src, int target,
                                  int border, int ball, int64_t reach2, int invert, uint8_t *out);

#endif
