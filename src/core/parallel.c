/* The one place that runs parallel loops (OpenMP when available).
 *
 * Work is split into contiguous blocks that depend only on (n, grain,
 * threads), and ops write disjoint outputs per block, so results never depend
 * on scheduling. Errors are collected per block; the lowest block wins so the
 * reported message is deterministic too. */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static atomic_int requested_threads; /* 0 = default; set from any thread */
/* A worker of the chunk executor runs its ops on its share of the threads. */
static _Thread_local int local_threads;

static int default_threads(void) {
    const char *env = getenv("VOXA_NUM_THREADS");
    if (env && *env) {
        int n = atoi(env);
        if (n > 0) return n;
    }
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void voxa_set_threads(int n) { requested_threads = n > 0 ? n : 0; }

void voxa__set_local_threads(int n) { local_threads = n > 0 ? n : 0; }

int voxa_get_threads(void) {
    if (local_threads > 0) return local_threads;
    return requested_threads > 0 ? requested_threads : default_threads();
}

int voxa__threads_for(int64_t n) {
    int t = voxa_get_threads();
    if (n < t) t = (int)(n > 0 ? n : 1);
    return t;
}

void *voxa__thread_scratch(size_t n, size_t size, int *nthreads) {
    int nt = voxa_get_threads();
    *nthreads = nt;
    size_t per;
    if (!voxa__mul_size(n, size, &per)) return NULL;
    return voxa__malloc((size_t)nt, per);
}

voxa_status voxa__parallel_for(int64_t n, int64_t grain, voxa__range_fn fn,
                               void *ctx) {
    return voxa__parallel_for_nt(n, grain, voxa_get_threads(), fn, ctx);
}

voxa_status voxa__parallel_for_nt(int64_t n, int64_t grain, int nt, voxa__range_fn fn,
                                  void *ctx) {
    if (n <= 0) return VOXA_OK;
    if (grain < 1) grain = 1;
    if (nt < 1) nt = 1;
    int64_t nblocks = (n + grain - 1) / grain;
    /* A few blocks per thread balance uneven work without changing results. */
    if (nblocks > (int64_t)nt * 4) nblocks = (int64_t)nt * 4;
    if (nblocks < 1) nblocks = 1;
    if (nt > nblocks) nt = (int)nblocks;
    if (nt <= 1 || nblocks == 1) return fn(0, n, 0, ctx);

    voxa_status first = VOXA_OK;
    int64_t first_block = nblocks;
    char msg[1024] = "";
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
    for (int64_t b = 0; b < nblocks; b++) {
        int64_t lo = n * b / nblocks, hi = n * (b + 1) / nblocks;
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        voxa_status s = fn(lo, hi, tid, ctx);
        if (s != VOXA_OK) {
#ifdef _OPENMP
#pragma omp critical(voxa_parallel_error)
#endif
            if (b < first_block) {
                first_block = b;
                first = s;
                strncpy(msg, voxa_last_error(), sizeof msg - 1);
            }
        }
    }
    if (first != VOXA_OK) return voxa__error(first, "%s", msg);
    return VOXA_OK;
}

voxa_status voxa__progress(const voxa_progress *p, int64_t done, int64_t total) {
    if (!p || !p->fn) return VOXA_OK;
    if (!p->fn(done, total, p->user))
        return voxa__error(VOXA_ECANCELLED, "cancelled by the progress callback");
    return VOXA_OK;
}
