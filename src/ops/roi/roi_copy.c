/* roi copy kernels: the hot path of extraction. One unit (a whole patch, or
 * one slab of it, see roi_order.c) wholly inside the image is copied run by
 * run from a table of source and destination offsets built once per call
 * (roi_extract.c), with plain or streaming stores.
 *
 * Prefetch. Random patch corners put consecutive runs a page or more apart,
 * which hardware prefetchers do not follow: without software prefetch each
 * run waits for memory. The run PF_ROWS ahead is prefetched first (its first
 * and last byte): in this unit, or, near its end, in the next one (`nxt`,
 * whose runs have the same offsets). Measured on W3 (32-row slabs, so the
 * distance is one slab): 16 to 128 runs ahead are alike, 0 is far slower.
 *
 * Streaming stores. A plain store to a line not in the cache first reads the
 * line (read-for-ownership), and holds a line fill buffer meanwhile, the
 * resource the source prefetches need. For an output far larger than the
 * last-level cache that read is wasted: the line is evicted before it is
 * used again. Non-temporal stores write whole lines through write-combining
 * buffers without reading them. Measured alone on the 2-vCPU Xeon (655 MB of
 * output in random 64 KB blocks, source in cache): 47 ms with streaming
 * stores against 108 ms plain. They are used when a unit's destination is
 * one contiguous range assembled from its runs (runs a multiple of 16 bytes,
 * 16-byte aligned: SSE2's MOVNTDQ, baseline x86-64, no dispatch needed), and
 * only for the cache lines that range covers whole: its partial first and
 * last lines are shared with the neighbouring unit, written at another time
 * (or by another thread), so they take plain stores, which never leave a
 * partial line to the write-combining buffers. Streaming stores are weakly
 * ordered: each thread ends its block with SFENCE (voxa__roi_store_fence).
 * Runs of 64 q bytes take the AVX-512 kernel below where the CPU has it
 * (__builtin_cpu_supports, a target attribute: the build stays baseline).
 * voxa__roi_stream_wanted decides (outputs past the last-level cache);
 * VOXA_ROI_STORES=plain|stream|stream-sse2 forces one kind (tests,
 * benchmarks; the streaming ones still need the layout). Other CPUs compile
 * the plain kernels only.
 *
 * Common run lengths (16..256 bytes: a 64-voxel u8 row, a 32-voxel u16 row)
 * get their own instance so the copy is a few inlined vector moves. */
#include "roi_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#define HAVE_STREAM 1
#if defined(__GNUC__) || defined(__clang__)
#include <immintrin.h>
#define HAVE_AVX512 1
#endif
#endif

#define PF_ROWS 64

#define TAB_BODY(COPY)                                                         \
    int64_t r = 0, pf = PF_ROWS < nrows ? PF_ROWS : nrows;                     \
    for (; r < nrows - pf; r++) {                                              \
        const char *q = src + soff[r + pf];                                    \
        __builtin_prefetch(q, 0, 3);                                           \
        __builtin_prefetch(q + last, 0, 3);                                    \
        COPY(dst + doff[r], src + soff[r]);                                    \
    }                                                                          \
    for (; r < nrows; r++) {                                                   \
        if (nxt) {                                                             \
            const char *q = nxt + soff[r + pf - nrows];                        \
            __builtin_prefetch(q, 0, 3);                                       \
            __builtin_prefetch(q + last, 0, 3);                                \
        }                                                                      \
        COPY(dst + doff[r], src + soff[r]);                                    \
    }

#define TAB_FN(NAME, SETUP, COPY)                                              \
    static void NAME(char *dst, const char *src, const char *nxt,             \
                     const int64_t *soff, const int64_t *doff, int64_t nrows,  \
                     int64_t last, size_t bytes) {                             \
        (void)bytes;                                                           \
        SETUP                                                                  \
        TAB_BODY(COPY)                                                         \
    }
#define COPY_16(d, s) memcpy(d, s, 16)
#define COPY_32(d, s) memcpy(d, s, 32)
#define COPY_64(d, s) memcpy(d, s, 64)
#define COPY_128(d, s) memcpy(d, s, 128)
#define COPY_256(d, s) memcpy(d, s, 256)
#define COPY_N(d, s) memcpy(d, s, bytes)
TAB_FN(tab_16, , COPY_16)
TAB_FN(tab_32, , COPY_32)
TAB_FN(tab_64, , COPY_64)
TAB_FN(tab_128, , COPY_128)
TAB_FN(tab_256, , COPY_256)
TAB_FN(tab_N, , COPY_N)

#ifdef HAVE_STREAM
/* n 16-byte chunks from s (any alignment) to d (16-byte aligned): streamed
 * where the chunk lies in a whole line of [lo, hi) (64-byte aligned bounds),
 * stored plainly elsewhere. */
static inline void chunks(char *d, const char *s, size_t n, const char *lo, const char *hi) {
    if (d >= lo && d + 16 * n <= hi) {
        for (size_t i = 0; i < n; i++)
            _mm_stream_si128((__m128i *)(void *)(d + 16 * i),
                             _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * i)));
        return;
    }
    for (size_t i = 0; i < n; i++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + 16 * i));
        char *q = d + 16 * i;
        if (q >= lo && q < hi) _mm_stream_si128((__m128i *)(void *)q, v);
        else _mm_storeu_si128((__m128i *)(void *)q, v);
    }
}
/* The unit's destination is dst .. dst + nrows * bytes (doff[r] = r * bytes,
 * checked by voxa__roi_stream_wanted); lo, hi bound its whole lines. */
#define NT_SETUP                                                               \
    const char *lo = (const char *)(((uintptr_t)dst + 63) & ~(uintptr_t)63);  \
    const char *hi =                                                           \
        (const char *)(((uintptr_t)dst + (uintptr_t)nrows * bytes) & ~(uintptr_t)63);
#define NT_16(d, s) chunks(d, s, 1, lo, hi)
#define NT_32(d, s) chunks(d, s, 2, lo, hi)
#define NT_64(d, s) chunks(d, s, 4, lo, hi)
#define NT_128(d, s) chunks(d, s, 8, lo, hi)
#define NT_256(d, s) chunks(d, s, 16, lo, hi)
#define NT_N(d, s) chunks(d, s, bytes / 16, lo, hi)
TAB_FN(nt_16, NT_SETUP, NT_16)
TAB_FN(nt_32, NT_SETUP, NT_32)
TAB_FN(nt_64, NT_SETUP, NT_64)
TAB_FN(nt_128, NT_SETUP, NT_128)
TAB_FN(nt_256, NT_SETUP, NT_256)
TAB_FN(nt_N, NT_SETUP, NT_N)
#endif

#ifdef HAVE_AVX512
/* Runs of 64 q bytes with AVX-512: each whole destination line is one
 * aligned 64-byte streaming store, put together from the two 64-byte source
 * chunks it straddles. The unit's destination starts m bytes before a line
 * boundary (m a multiple of 16); with the chunks numbered in destination
 * order, line j holds chunk j's bytes m..63, then chunk j+1's bytes 0..m-1
 * (one VPERMT2Q); the m bytes before the first line and the 64 - m after the
 * last take plain stores. One load, one permute and one store per 64 bytes,
 * against four of each with SSE2. */
#define AVX_PF(r)                                                              \
    do {                                                                       \
        const char *q_ = (r) + pf < nrows ? src + soff[(r) + pf]               \
                         : nxt ? nxt + soff[(r) + pf - nrows] : NULL;          \
        if (q_) {                                                              \
            __builtin_prefetch(q_, 0, 3);                                      \
            __builtin_prefetch(q_ + last, 0, 3);                               \
        }                                                                      \
    } while (0)

__attribute__((target("avx512f"))) static void nt_avx512(
    char *dst, const char *src, const char *nxt, const int64_t *soff, const int64_t *doff,
    int64_t nrows, int64_t last, size_t bytes) {
    (void)doff;
    int64_t pf = PF_ROWS < nrows ? PF_ROWS : nrows, q = (int64_t)bytes / 64;
    size_t m = (size_t)(-(uintptr_t)dst & 63);
    if (m == 0) {
        for (int64_t r = 0; r < nrows; r++) {
            AVX_PF(r);
            for (int64_t i = 0; i < q; i++)
                _mm512_stream_si512((void *)(dst + (int64_t)bytes * r + 64 * i),
                                    _mm512_loadu_si512(src + soff[r] + 64 * i));
        }
        return;
    }
    for (size_t i = 0; i < m; i += 16) /* the head: chunk 0's first m bytes */
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm_loadu_si128((const __m128i *)(const void *)(src + soff[0] + i)));
    const __m512i idx = _mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
                                         _mm512_set1_epi64((long long)(m / 8)));
    __m512i a = _mm512_loadu_si512(src + soff[0]);
    char *line = dst + m;
    for (int64_t r = 0; r < nrows; r++) {
        AVX_PF(r);
        for (int64_t i = r == 0; i < q; i++, line += 64) {
            __m512i b = _mm512_loadu_si512(src + soff[r] + 64 * i);
            _mm512_stream_si512((void *)line, _mm512_permutex2var_epi64(a, idx, b));
            a = b;
        }
    }
    const char *t = src + soff[nrows - 1] + (int64_t)bytes - 64; /* the last chunk's m.. */
    for (size_t i = m; i < 64; i += 16)
        _mm_storeu_si128((__m128i *)(void *)(line - m + i),
                         _mm_loadu_si128((const __m128i *)(const void *)(t + i)));
}
#endif

#ifdef HAVE_STREAM
/* VOXA_ROI_STORES: plain, stream, stream-sse2 (streaming without AVX-512), or
 * unset (automatic). */
static const char *stores_env(void) { return getenv("VOXA_ROI_STORES"); }
#endif

voxa__roi_tab_fn voxa__roi_pick_tab(int64_t bytes, int stream) {
#ifdef HAVE_AVX512
    const char *e = stores_env();
    if (stream && bytes % 64 == 0 && !(e && !strcmp(e, "stream-sse2")) &&
        __builtin_cpu_supports("avx512f"))
        return nt_avx512;
#endif
#ifdef HAVE_STREAM
    if (stream) switch (bytes) {
        case 16: return nt_16;
        case 32: return nt_32;
        case 64: return nt_64;
        case 128: return nt_128;
        case 256: return nt_256;
        default: return nt_N;
        }
#else
    (void)stream;
#endif
    switch (bytes) {
    case 16: return tab_16;
    case 32: return tab_32;
    case 64: return tab_64;
    case 128: return tab_128;
    case 256: return tab_256;
    default: return tab_N;
    }
}

#ifdef HAVE_STREAM
/* Last-level cache size: glibc reports it through sysconf; elsewhere (or
 * when it says 0) a conservative 32 MiB. */
static int64_t llc_bytes(void) {
    long v = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (v <= 0) v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return v > 0 ? (int64_t)v : (int64_t)32 << 20;
}
#endif

int voxa__roi_stream_wanted(const char *dst, const int64_t *doff, int64_t rows,
                            const int64_t *strides, int nstrides, int64_t run_bytes,
                            int64_t total_bytes) {
#ifdef HAVE_STREAM
    const char *e = stores_env();
    if (e && !strcmp(e, "plain")) return 0;
    if (run_bytes % 16 || (uintptr_t)dst % 16) return 0;
    for (int d = 0; d < nstrides; d++)
        if (strides[d] % 16) return 0;
    for (int64_t r = 0; r < rows; r++)
        if (doff[r] != r * run_bytes) return 0;
    if (e && !strncmp(e, "stream", 6)) return 1;
    return total_bytes > llc_bytes();
#else
    (void)dst; (void)doff; (void)rows; (void)strides; (void)nstrides; (void)run_bytes;
    (void)total_bytes;
    return 0;
#endif
}

void voxa__roi_store_fence(void) {
#ifdef HAVE_STREAM
    _mm_sfence();
#endif
}
