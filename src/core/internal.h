/* Internal helpers shared across the library (prefix voxa__). Not installed. */
#ifndef VOXA_INTERNAL_H
#define VOXA_INTERNAL_H

#include "voxa.h"
#include <stdarg.h>
#include <stdbool.h>

/* Record a failure: sets the thread-local message and returns `s`. */
voxa_status voxa__error(voxa_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Early return with a message when `cond` holds. */
#define VOXA_FAIL_IF(cond, status, ...)                                        \
    do {                                                                       \
        if (cond) return voxa__error((status), __VA_ARGS__);                  \
    } while (0)

/* Jump to the function's `done:` label with a status and a message. */
#define VOXA_GOTO_IF(cond, status, ...)                                        \
    do {                                                                       \
        if (cond) {                                                            \
            st = voxa__error((status), __VA_ARGS__);                           \
            goto done;                                                         \
        }                                                                      \
    } while (0)

#define VOXA_CHECK(expr)                                                       \
    do {                                                                       \
        voxa_status st_ = (expr);                                              \
        if (st_ != VOXA_OK) return st_;                                        \
    } while (0)

/* Aligned, overflow-checked allocation; NULL on failure (no message). */
void *voxa__malloc(size_t n, size_t size);
void *voxa__calloc(size_t n, size_t size);
void voxa__free(void *p);
/* Ask for transparent huge pages on the 2 MiB-aligned interior of a block of
 * 8 MiB or more (fewer page faults and TLB misses); a hint, never fails. */
void voxa__advise_huge_pages(void *data, size_t bytes);
/* n * size with overflow check: returns false on overflow. */
bool voxa__mul_size(size_t n, size_t size, size_t *out);

/* ---- parallel loops (the one place that runs them) ---------------------- */

/* Body of a parallel loop over [begin, end): returns VOXA_OK or an error
 * (after voxa__error). `tid` is 0..nthreads-1. */
typedef voxa_status (*voxa__range_fn)(int64_t begin, int64_t end, int tid,
                                      void *ctx);

/* Threads for the ops called from this thread only (0: the process's count);
 * the chunk executor's workers split the threads among them this way. */
void voxa__set_local_threads(int n);

/* Number of threads a parallel loop of `n` items would use now. */
int voxa__threads_for(int64_t n);

/* Split [0, n) into contiguous blocks of at least `grain` items, run them in
 * parallel. Blocks are a pure function of (n, grain, threads); every block is
 * run once. The first failing block (lowest begin) wins, and its message is
 * copied to the calling thread. */
voxa_status voxa__parallel_for(int64_t n, int64_t grain, voxa__range_fn fn,
                               void *ctx);
/* The same with at most `nthreads` threads: `tid` < nthreads is guaranteed,
 * so per-thread scratch sized for nthreads is safe even if another thread
 * calls voxa_set_threads meanwhile. */
voxa_status voxa__parallel_for_nt(int64_t n, int64_t grain, int nthreads, voxa__range_fn fn,
                                  void *ctx);
/* Scratch of n x size bytes per thread for the current thread count, stored
 * in *nthreads; pass that count to voxa__parallel_for_nt. NULL on failure. */
void *voxa__thread_scratch(size_t n, size_t size, int *nthreads);

/* ---- progress ------------------------------------------------------------ */

/* Report progress from the calling thread; VOXA_ECANCELLED if the user said
 * stop. NULL progress is allowed. */
voxa_status voxa__progress(const voxa_progress *p, int64_t done, int64_t total);

/* ---- array helpers ------------------------------------------------------- */

/* Byte offset of a multi-index. */
static inline int64_t voxa__offset(const voxa_array *a, const int64_t *idx) {
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++) off += idx[d] * a->strides[d];
    return off;
}

/* True if two arrays have the same ndim and shape. */
bool voxa__same_shape(const voxa_array *a, const voxa_array *b);

/* The view of `a`'s box [lo, lo + shape) (same strides; owns nothing). */
voxa_array voxa__subview(const voxa_array *a, const int64_t *lo, const int64_t *shape);

/* Copy any-strided `in` into a freshly allocated C-contiguous array of the
 * same dtype (used by fast paths that need contiguity). */
voxa_status voxa__contiguous_copy(const voxa_array *in, voxa_array *out);

/* Copy one view into another of the same dtype and shape (any strides). */
voxa_status voxa__copy_view(const voxa_array *src, voxa_array *dst);

/* Number of non-zero elements of a view (NaN counts, -0.0 does not). */
int64_t voxa__count_nonzero(const voxa_array *a);

/* Write a shape as "(a, b, c)" into buf. */
const char *voxa__shape_str(const voxa_array *a, char *buf, size_t n);

/* Grain for voxa__parallel_for when one item covers `voxels` voxels: blocks
 * of at least ~256k voxels, so small volumes run on one thread (waking
 * threads costs more than the work, and far more on a busy machine). */
static inline int64_t voxa__grain(int64_t voxels) {
    int64_t g = ((int64_t)1 << 18) / (voxels > 0 ? voxels : 1);
    return g > 0 ? g : 1;
}

/* ---- binary views ------------------------------------------------------- */

/* A C-contiguous byte view of `in` where non-zero = true: `in` itself when it
 * is a C-contiguous bool/u8/i8 array, else a 0/1 copy in *owned (free it). */
voxa_status voxa__binary_view(const voxa_array *in, const uint8_t **data, uint8_t **owned);

/* Copy C-contiguous data of dst's dtype and shape into the (strided) view. */
void voxa__copy_into(const void *src, voxa_array *dst);

/* SIMD level forced by a test switch (simd_level.c): "envelope" (the
 * family's non-vector fallback), "c", "avx2", "avx512"; else the best. */
enum { VOXA__SIMD_NONE = -1, VOXA__SIMD_C = 0, VOXA__SIMD_AVX2 = 1, VOXA__SIMD_AVX512 = 2,
       VOXA__SIMD_BEST = 3 };
int voxa__simd_level_from_env(const char *var);

#endif
