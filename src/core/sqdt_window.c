/* The windowed column pass of the integer EDT (unit spacing, uint32 values,
 * no threshold): f(y) = min over q of g(q) + (y - q)^2, read as a scan of
 * growing offsets k = 1, 2, ... that stops as soon as k^2 >= f(y), since no
 * farther q can then be lower. On masks whose distances are short (blobs,
 * cells, any mask with much background) that is a few steps per voxel, with
 * no data-dependent stack, and it vectorises across neighbouring columns
 * (16 lanes with AVX-512, 8 with AVX2, chosen at run time; without them the
 * envelope runs, and a portable one-lane C loop serves tiles narrower
 * than 8 columns and tests).
 *
 * Cost, and when the envelope is cheaper: a row costs one step per k until
 * its slowest lane settles (about the distance of its farthest voxel), the
 * envelope a roughly constant amount per voxel. So each call (one set of
 * lanes, all n rows) gets a budget of steps, `steps` per row on average
 * (the kernel's crossover with the envelope, measured: see the kernel
 * table below), and gives up when a row would pass it, or when a lane has
 * no target in its whole column (the envelope fills such a column at once).
 * The budget is a mean over the column, not a cut-off per voxel: a few far
 * voxels (the centre of a large ball) cost their steps, paid for by the
 * near ones. A call that gives up returns the rows it wrote; the caller
 * (sqdt_int.c) redoes its columns with the envelope and keeps the next
 * calls on the envelope for a while. So the cost per voxel stays bounded
 * and the result is exact: a row is written only when every lane has
 * f <= (k)^2 for the next k or has seen its whole column, and both paths
 * compute the same minimum of the same integers.
 *
 * The tile is a copy of n rows of ws columns (row-major, t[y * ws + j]);
 * results go to dst[y * ds + l] for the lanes l of the call, as uint32 or,
 * in the last pass of a float32 EDT, as sqrt_f32 (the value sqdt_int.c
 * writes). VOXA_SQDT_KERNEL=envelope|c|avx2|avx512 forces a path (tests and
 * benchmarks; AVX-512 falls back to AVX2, and either to the envelope, where
 * the CPU lacks it); an unknown value means automatic.
 * VOXA_SQDT_WINDOW_STEPS=N sets the budget per row (tests and benchmarks). */
#include "sqdt_internal.h"

#include <stdlib.h>
#include <string.h>

/* The farthest row from y: a scan that reaches it has seen the column. */
static inline int64_t far_of(int64_t y, int64_t n) { return y > n - 1 - y ? y : n - 1 - y; }

static inline uint32_t border_of(int64_t y, int64_t n) {
    uint64_t a = (uint64_t)(y + 1) * (uint64_t)(y + 1), b = (uint64_t)(n - y) * (uint64_t)(n - y);
    uint64_t m = a < b ? a : b;
    return m >= UINT32_MAX ? UINT32_MAX : (uint32_t)m;
}

static inline uint32_t sat_add(uint32_t g, uint32_t k2) {
    return g > UINT32_MAX - k2 ? UINT32_MAX : g + k2;
}

static inline void put1(void *dst, int64_t i, int f32, uint32_t f) {
    if (f32) ((float *)dst)[i] = voxa__sqdt_sqrt_f32(f);
    else ((uint32_t *)dst)[i] = f;
}

/* (lim + 1)^2 as the uint32 a lane is compared with: lim < n <= 65535 on
 * this path (squared distances fit uint32), so it does not wrap. */
static inline uint32_t next_sq(int64_t lim) { return (uint32_t)((lim + 1) * (lim + 1)); }

/* Portable: one column (lane) at a time. */
static int64_t cols_c(const uint32_t *t, int64_t n, int64_t ws, int64_t j0, int border,
                      int64_t budget, void *dst, int64_t ds, int f32) {
    const uint32_t *col = t + j0;
    int64_t left = budget;
    for (int64_t y = 0; y < n; y++) {
        uint32_t f = col[y * ws];
        if (border) {
            uint32_t b = border_of(y, n);
            f = b < f ? b : f;
        }
        int64_t far = far_of(y, n), lim = far < left ? far : left, k = 1;
        for (; k <= lim; k++) {
            uint32_t k2 = (uint32_t)(k * k);
            if (f <= k2) break;
            if (y >= k) {
                uint32_t s = sat_add(col[(y - k) * ws], k2);
                f = s < f ? s : f;
            }
            if (y + k < n) {
                uint32_t s = sat_add(col[(y + k) * ws], k2);
                f = s < f ? s : f;
            }
        }
        /* not settled: out of budget, or a column with no target */
        if (k > lim && (lim < far ? f > next_sq(lim) : f == UINT32_MAX)) return y;
        left -= k - 1;
        put1(dst, y * ds, f32, f);
    }
    return n;
}

/* steps: crossover with the envelope, measured on this machine (see
 * voxa__sqdt_window_steps) */
const voxa__sqdt_wkern voxa__sqdt_wkern_c = {"portable C", 1, 2, SQDT_STEPS_C, cols_c};

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SQDT_X86 1
#include <immintrin.h>

__attribute__((target("avx2"))) static int64_t cols_avx2(const uint32_t *t, int64_t n,
                                                          int64_t ws, int64_t j0, int border,
                                                          int64_t budget, void *dst, int64_t ds,
                                                          int f32) {
    const uint32_t *col = t + j0;
    const __m256i ones = _mm256_set1_epi32(-1), small = _mm256_set1_epi32((1 << 24) - 1);
    int64_t left = budget;
    for (int64_t y = 0; y < n; y++) {
        __m256i f = _mm256_loadu_si256((const __m256i *)(col + y * ws));
        if (border) f = _mm256_min_epu32(f, _mm256_set1_epi32((int)border_of(y, n)));
        int64_t far = far_of(y, n), lim = far < left ? far : left, k = 1;
        for (; k <= lim; k++) {
            __m256i k2 = _mm256_set1_epi32((int)(k * k));
            /* every lane f <= k^2: done */
            if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_min_epu32(f, k2), f)) == -1) break;
            __m256i lim2 = _mm256_sub_epi32(ones, k2);
            if (y >= k) {
                __m256i g = _mm256_loadu_si256((const __m256i *)(col + (y - k) * ws));
                f = _mm256_min_epu32(f, _mm256_add_epi32(_mm256_min_epu32(g, lim2), k2));
            }
            if (y + k < n) {
                __m256i g = _mm256_loadu_si256((const __m256i *)(col + (y + k) * ws));
                f = _mm256_min_epu32(f, _mm256_add_epi32(_mm256_min_epu32(g, lim2), k2));
            }
        }
        if (k > lim) {
            if (lim < far) {
                __m256i K1 = _mm256_set1_epi32((int)next_sq(lim));
                if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_min_epu32(f, K1), f)) != -1)
                    return y;
            } else if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(f, ones))) {
                return y;
            }
        }
        left -= k - 1;
        if (!f32) {
            _mm256_storeu_si256((__m256i *)((uint32_t *)dst + y * ds), f);
            continue;
        }
        __m256i isinf = _mm256_cmpeq_epi32(f, ones);
        __m256i issmall = _mm256_cmpeq_epi32(_mm256_min_epu32(f, small), f);
        if (_mm256_movemask_epi8(_mm256_or_si256(isinf, issmall)) != -1) {
            uint32_t v[8];
            _mm256_storeu_si256((__m256i *)v, f);
            for (int l = 0; l < 8; l++) ((float *)dst)[y * ds + l] = voxa__sqdt_sqrt_f32(v[l]);
            continue;
        }
        __m256 s = _mm256_sqrt_ps(_mm256_cvtepi32_ps(_mm256_andnot_si256(isinf, f)));
        s = _mm256_blendv_ps(s, _mm256_set1_ps(INFINITY), _mm256_castsi256_ps(isinf));
        _mm256_storeu_ps((float *)dst + y * ds, s);
    }
    return n;
}

__attribute__((target("avx512f"))) static int64_t cols_avx512(const uint32_t *t, int64_t n,
                                                               int64_t ws, int64_t j0,
                                                               int border, int64_t budget,
                                                               void *dst, int64_t ds, int f32) {
    const uint32_t *col = t + j0;
    const __m512i ones = _mm512_set1_epi32(-1), small = _mm512_set1_epi32((1 << 24) - 1);
    int64_t left = budget;
    for (int64_t y = 0; y < n; y++) {
        __m512i f = _mm512_loadu_si512(col + y * ws);
        if (border) f = _mm512_min_epu32(f, _mm512_set1_epi32((int)border_of(y, n)));
        int64_t far = far_of(y, n), lim = far < left ? far : left, k = 1;
        for (; k <= lim; k++) {
            __m512i k2 = _mm512_set1_epi32((int)(k * k));
            if (!_mm512_cmpgt_epu32_mask(f, k2)) break; /* every lane f <= k^2 */
            __m512i lim2 = _mm512_sub_epi32(ones, k2);
            if (y >= k) {
                __m512i g = _mm512_loadu_si512(col + (y - k) * ws);
                f = _mm512_min_epu32(f, _mm512_add_epi32(_mm512_min_epu32(g, lim2), k2));
            }
            if (y + k < n) {
                __m512i g = _mm512_loadu_si512(col + (y + k) * ws);
                f = _mm512_min_epu32(f, _mm512_add_epi32(_mm512_min_epu32(g, lim2), k2));
            }
        }
        if (k > lim) {
            if (lim < far) {
                if (_mm512_cmpgt_epu32_mask(f, _mm512_set1_epi32((int)next_sq(lim)))) return y;
            } else if (_mm512_cmpeq_epu32_mask(f, ones)) {
                return y;
            }
        }
        left -= k - 1;
        if (!f32) {
            _mm512_storeu_si512((uint32_t *)dst + y * ds, f);
            continue;
        }
        __mmask16 isinf = _mm512_cmpeq_epu32_mask(f, ones);
        if ((_mm512_cmpgt_epu32_mask(f, small) & ~isinf) != 0) {
            uint32_t v[16];
            _mm512_storeu_si512(v, f);
            for (int l = 0; l < 16; l++) ((float *)dst)[y * ds + l] = voxa__sqdt_sqrt_f32(v[l]);
            continue;
        }
        __m512 s = _mm512_sqrt_ps(_mm512_cvtepu32_ps(f));
        s = _mm512_mask_blend_ps(isinf, s, _mm512_set1_ps(INFINITY));
        _mm512_storeu_ps((float *)dst + y * ds, s);
    }
    return n;
}

static const voxa__sqdt_wkern wk_avx2 = {"AVX2", 8, 1, SQDT_STEPS_AVX2, cols_avx2};
static const voxa__sqdt_wkern wk_avx512 = {"AVX-512", 16, 0, SQDT_STEPS_AVX512, cols_avx512};
#endif

/* The budget per row VOXA_SQDT_WINDOW_STEPS forces (a non-negative
 * integer), or -1 (unset or not a number): each kernel set's own. */
int64_t voxa__sqdt_window_steps(void) {
    const char *e = getenv("VOXA_SQDT_WINDOW_STEPS");
    if (e && *e) {
        char *end;
        long long v = strtoll(e, &end, 10);
        if (!*end && v >= 0) return v;
    }
    return -1;
}

const voxa__sqdt_wkern *voxa__sqdt_window_pick(void) {
    int want = voxa__simd_level_from_env("VOXA_SQDT_KERNEL");
    if (want == VOXA__SIMD_NONE) return NULL;
#ifdef SQDT_X86
    __builtin_cpu_init();
    if (want >= VOXA__SIMD_AVX512 && __builtin_cpu_supports("avx512f")) return &wk_avx512;
    if (want >= VOXA__SIMD_AVX2 && __builtin_cpu_supports("avx2")) return &wk_avx2;
#endif
    /* one lane at a time is slower than the envelope (3.1 s against 2.4 s on
     * the (400,401,401) blobs here): the C loop runs only when forced, and
     * for tiles narrower than 8 columns (voxa__sqdt_window_narrow) */
    return want == VOXA__SIMD_C ? &voxa__sqdt_wkern_c : NULL;
}

const voxa__sqdt_wkern *voxa__sqdt_window_narrow(const voxa__sqdt_wkern *k, int64_t w) {
#ifdef SQDT_X86
    if (k == &wk_avx512 && w >= wk_avx2.lanes && __builtin_cpu_supports("avx2")) return &wk_avx2;
#endif
    (void)k;
    (void)w;
    return &voxa__sqdt_wkern_c;
}
