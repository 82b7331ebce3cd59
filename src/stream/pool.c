/* Several blocks in flight: W worker threads each take the next block
 * number, read it, run the op on it and write it, so one worker's reads and
 * writes (decompression, compression, disk) overlap the others' compute -
 * read-ahead and write-behind without a separate I/O stage. The op's threads
 * are split among the workers (voxa__set_local_threads), so W workers of
 * T/W threads use the machine as one op of T threads would. This was
 * measured against a 3-stage pipeline's shape (one block computing with all
 * threads while the next is read): see docs/stream.md.
 *
 * Determinism: a block's result depends only on its input region, never on
 * which worker runs it or when; the error returned is the lowest failing
 * block's. The calling thread waits and reports progress (voxa_progress
 * promises calls from the calling thread); a cancel stops new blocks. */
#include "stream_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct pool {
    int64_t n, next, done;
    int op_threads;
    voxa__block_fn fn;
    void *ctx;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;             /* an error or a cancel: start no new block */
    voxa_status st;       /* the lowest failing block's error */
    int64_t err_block;
    char msg[1024];
} pool;

static void *worker(void *arg) {
    void **args = arg;
    pool *P = args[0];
    int w = (int)(intptr_t)args[1];
    voxa__set_local_threads(P->op_threads);
    pthread_mutex_lock(&P->mu);
    while (!P->stop && P->next < P->n) {
        int64_t b = P->next++;
        pthread_mutex_unlock(&P->mu);
        voxa_status s = P->fn(b, w, P->ctx);
        pthread_mutex_lock(&P->mu);
        if (s != VOXA_OK) {
            P->stop = 1;
            if (b < P->err_block) {
                P->err_block = b;
                P->st = s;
                snprintf(P->msg, sizeof P->msg, "block %lld of %lld: %s", (long long)b,
                         (long long)P->n, voxa_last_error());
            }
        }
        P->done++;
        pthread_cond_signal(&P->cv);
    }
    pthread_mutex_unlock(&P->mu);
    voxa__set_local_threads(0);
    return NULL;
}

voxa_status voxa__stream_pool(int64_t n, int workers, int op_threads, voxa__block_fn fn,
                              void *ctx, const voxa_progress *progress, int64_t done0,
                              int64_t steps) {
    if (workers > n) workers = (int)(n > 0 ? n : 1);
    if (workers <= 1) { /* on the calling thread: no thread to start */
        for (int64_t b = 0; b < n; b++) {
            voxa_status s = fn(b, 0, ctx);
            if (s != VOXA_OK) {
                char msg[1024];
                snprintf(msg, sizeof msg, "%s", voxa_last_error());
                return voxa__error(s, "block %lld of %lld: %s", (long long)b, (long long)n, msg);
            }
            VOXA_CHECK(voxa__progress(progress, done0 + b + 1, steps));
        }
        return VOXA_OK;
    }
    pool P;
    memset(&P, 0, sizeof P);
    P.n = n;
    P.op_threads = op_threads;
    P.fn = fn;
    P.ctx = ctx;
    P.err_block = n;
    pthread_mutex_init(&P.mu, NULL);
    pthread_cond_init(&P.cv, NULL);
    pthread_t tid[64];
    void *args[64][2];
    if (workers > 64) workers = 64;
    int started = 0;
    for (; started < workers; started++) {
        args[started][0] = &P;
        args[started][1] = (void *)(intptr_t)started;
        if (pthread_create(&tid[started], NULL, worker, args[started]) != 0) break;
    }
    voxa_status cancel = VOXA_OK;
    pthread_mutex_lock(&P.mu);
    if (!started) {
        P.stop = 1;
        P.st = VOXA_ENOMEM;
        snprintf(P.msg, sizeof P.msg, "stream: cannot start a worker thread");
    }
    int64_t reported = 0;
    /* wait for every block taken to finish; report progress meanwhile */
    while (started && P.done < (P.stop ? P.next : P.n)) {
        pthread_cond_wait(&P.cv, &P.mu);
        if (P.done > reported && !P.stop) {
            reported = P.done;
            pthread_mutex_unlock(&P.mu);
            cancel = voxa__progress(progress, done0 + reported, steps);
            pthread_mutex_lock(&P.mu);
            if (cancel != VOXA_OK) P.stop = 1;
        }
    }
    pthread_mutex_unlock(&P.mu);
    for (int i = 0; i < started; i++) pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&P.mu);
    pthread_cond_destroy(&P.cv);
    if (P.st != VOXA_OK) return voxa__error(P.st, "%s", P.msg);
    if (cancel != VOXA_OK) return voxa__error(cancel, "cancelled by the progress callback");
    if (reported < n) VOXA_CHECK(voxa__progress(progress, done0 + n, steps));
    return VOXA_OK;
}

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;

void voxa__stats_add(double *field, double seconds) {
    pthread_mutex_lock(&stats_lock);
    *field += seconds;
    pthread_mutex_unlock(&stats_lock);
}

double voxa__now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void voxa__store_io_init(voxa__store_io *io, voxa_store *s) {
    io->s = s;
    /* views and in-memory arrays take disjoint regions; the .npy (pread,
     * pwrite) and Zarr (per-chunk locks) stores are thread-safe; any other
     * kind is serialised */
    io->serial = s && s->kind != STORE_VIEW && s->kind != STORE_MEMORY && s->kind != STORE_NPY &&
                 s->kind != STORE_ZARR;
    pthread_mutex_init(&io->lock, NULL);
}

void voxa__store_io_free(voxa__store_io *io) { pthread_mutex_destroy(&io->lock); }

voxa_status voxa__io_read(voxa__store_io *io, const int64_t *lo, voxa_array *dst) {
    if (!io->serial) return voxa_store_read(io->s, lo, dst);
    pthread_mutex_lock(&io->lock);
    voxa_status st = voxa_store_read(io->s, lo, dst);
    pthread_mutex_unlock(&io->lock);
    return st;
}

voxa_status voxa__io_write(voxa__store_io *io, const int64_t *lo, const voxa_array *src) {
    if (!io->serial) return voxa_store_write(io->s, lo, src);
    pthread_mutex_lock(&io->lock);
    voxa_status st = voxa_store_write(io->s, lo, src);
    pthread_mutex_unlock(&io->lock);
    return st;
}
