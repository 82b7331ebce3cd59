/* The executor's own helpers (not installed): the worker pool that keeps
 * several blocks in flight, and the store locks it needs. */
#ifndef VOXA_STREAM_INTERNAL_H
#define VOXA_STREAM_INTERNAL_H

#include "store_internal.h"

#include <pthread.h>

/* One block's work: `b` is the block's number, `w` the worker (0..workers-1,
 * to pick that worker's buffers). Runs on the worker's thread. */
typedef voxa_status (*voxa__block_fn)(int64_t b, int w, void *ctx);

/* Run fn for blocks 0..n-1 on `workers` threads (the calling thread alone
 * when 1), each taking the next block as it finishes one; the ops they call
 * use `op_threads` threads each. Progress is reported from the calling
 * thread as done0 + blocks done out of `steps`. On failure no new block
 * starts, and the error of the lowest failing block is returned (its
 * message copied to the calling thread), so errors do not depend on timing. */
voxa_status voxa__stream_pool(int64_t n, int workers, int op_threads, voxa__block_fn fn,
                              void *ctx, const voxa_progress *progress, int64_t done0,
                              int64_t steps);

/* Region I/O through a store, serialised by a lock for the store kinds
 * whose calls are not documented thread-safe (the others go straight
 * through). `lock` is created by voxa__store_lock_init. */
typedef struct voxa__store_io {
    voxa_store *s;
    int serial;
    pthread_mutex_t lock;
} voxa__store_io;
void voxa__store_io_init(voxa__store_io *io, voxa_store *s);
void voxa__store_io_free(voxa__store_io *io);
voxa_status voxa__io_read(voxa__store_io *io, const int64_t *lo, voxa_array *dst);
voxa_status voxa__io_write(voxa__store_io *io, const int64_t *lo, const voxa_array *src);

/* This thread's statistics of the run in progress (run.c), and a clock. */
voxa_stream_stats *voxa__stream_stats(void);
double voxa__now(void);
/* Add `seconds` to *field under the stats lock (workers share the stats). */
void voxa__stats_add(double *field, double seconds);

/* Label by blocks, for the plan (label_merge.c): bytes of the face planes
 * kept in memory, and what one worker holds in pass 2 (a plane's two layers
 * as int64) while the blocks' buffers are freed. */
int64_t voxa__label_face_bytes(const voxa_stream_plan *p);
int64_t voxa__label_pass2_bytes(const voxa_stream_plan *p);

#endif
