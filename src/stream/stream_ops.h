/* Streamed runners of the global ops that have no label merge (edt, fill
 * holes, roi, paste): each plans its own passes and never holds the volume.
 * Reached from voxa_stream_plan_make / voxa_stream_run through
 * voxa__plan_streamed / voxa__stream_op (run_ops.c). Not installed. */
#ifndef VOXA_STREAM_OPS_H
#define VOXA_STREAM_OPS_H

#include "store_internal.h"

/* Plan hook: called for a plan marked `whole`; when the op has a streamed
 * runner for these arguments, sets p->streamed, clears p->whole and fills
 * the block, grid, halo and peak memory. Otherwise leaves p alone. */
voxa_status voxa__plan_streamed(const voxa_args *a, voxa_store *in,
                                const voxa_stream_options *o, int64_t limit,
                                voxa_stream_plan *p);
/* Run hook: the streamed runner of a plan with p->streamed set. */
voxa_status voxa__stream_op(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                            voxa_store *out, const voxa_progress *progress, int64_t *count);

/* The runners and their planners (run_edt.c, run_fill.c, run_roi.c). A
 * planner returns 0 when it cannot stream these arguments (the run then
 * reads the whole volume), 1 when it filled p. */
int voxa__edt_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                   int64_t limit, voxa_stream_plan *p);
voxa_status voxa__stream_edt(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                             voxa_store *out, const voxa_progress *progress);
int voxa__fill_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                    int64_t limit, voxa_stream_plan *p);
voxa_status voxa__stream_fill(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                              voxa_store *out, const voxa_progress *progress);
int voxa__roi_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                   int64_t limit, voxa_stream_plan *p);
voxa_status voxa__stream_roi(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                             voxa_store *out, const voxa_progress *progress);
int voxa__paste_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                     int64_t limit, voxa_stream_plan *p);
voxa_status voxa__stream_paste(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                               voxa_store *out, const voxa_progress *progress);

/* Shared helpers (run_ops.c). */
/* Largest block (axis 0 halved first, then 1, ...) starting from `block`
 * whose cost(block) fits limit; cost is bytes for a block. */
typedef int64_t (*voxa__block_cost)(const voxa_stream_plan *p, const int64_t *block, void *u);
void voxa__fit_block(const voxa_stream_plan *p, int64_t *block, int64_t limit,
                     voxa__block_cost cost, void *u);
/* grid and nblocks from p->block. */
void voxa__plan_grid(voxa_stream_plan *p);
/* Whether any o->block entry was given. */
int voxa__blocks_given(const voxa_stream_options *o, int ndim);
/* A scratch .npy store next to the output (or in $TMPDIR): removed at
 * close, never published. `tag` names it. */
voxa_status voxa__scratch_store(const voxa_store *out, const char *tag, voxa_dtype t, int ndim,
                                const int64_t *shape, voxa_store **s);

#endif
