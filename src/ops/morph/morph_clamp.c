/* Ball (unit spacing) and diamond thresholds on clamped small integers, for
 * 2-D and 3-D inputs: the fast path of voxa_morph's ball and diamond plans.
 *
 * A voxel is set when some target lies within the element: for a ball,
 * squared distance <= T (T = the largest |o|^2 in the ball); for a diamond,
 * city-block distance <= r. Only distances up to the reach R (isqrt(T) or r)
 * matter, so every intermediate value is clamped to a small integer and the
 * passes are plain elementwise vector operations (no lower envelope):
 *   A (axis y, per plane): the 1-D distance to the nearest target along y,
 *     clamped to R + 1, by a forward and a backward scan, elementwise across
 *     the contiguous rows (uint8, in the output bytes themselves);
 *   B (axis x, per row): the row is copied into a buffer padded with the
 *     outside value (diamond: a strip of rows end to end, r pad cells after
 *     each, so one loop runs the whole strip), then
 *       ball     g2(x) = min over |k| <= K of g1(x + k) + k^2 (uint16, g1 =
 *                d^2 or "none" = T + 1): K tap pairs, each two unaligned
 *                loads, min, add, min over a whole vector of voxels;
 *       diamond  g2(x) = min over k of g1(x + k) + |k| (uint8): log2 doubling
 *                steps h = min(h, min(h(x-s), h(x+s)) + s), s = 1, 2, 4, ...
 *                (every offset |k| < 2^steps is a monotone path of exact cost);
 *     2-D: the output is (g2 within the element) ^ invert. 3-D: the row
 *     stores the reach left along z, e = w + 1 with w = isqrt(T - g2) (ball)
 *     or r - g2 (diamond), 0 when nothing is within reach;
 *   C (axis z, 3-D): v is set iff some z' has |z - z'| <= w(z'): a forward
 *     scan a(z) = max(e(z), a(z-1) - 1) and a backward scan of the same on a,
 *     elementwise across the plane, the last one writing the output bytes.
 * With `border`, every voxel outside the volume is a target: the y scans
 * start from distance 0, the row pads hold 0, and the z scans start from
 * the full reach R + 1. The output may alias the source: each plane is read
 * by pass A before it is written.
 *
 * Exactness: integers only, and every value above the element is clamped to
 * a "none" that no addition brings back (ball: T + 1 + k^2 <= 2T + 1 <=
 * 65535 for T <= 32767; diamond: saturating at r + 1 <= 254), so the result
 * is the exact threshold of the exact distances, bit for bit the envelope
 * path's (src/core/sqdt.c) and scipy's. Cost: ball O(N R) cheap vector ops,
 * so each loop set takes balls only up to its measured crossover with the
 * envelope (max_T below: R 181 with AVX-512, 150 with AVX2, 28 in portable
 * C; docs/morph.md), diamond O(N log r); memory: none beyond input and
 * output (per-thread row buffers). Larger balls, other spacings, 1-D and
 * 4-D+ inputs keep the older paths (morph.c).
 *
 * SIMD: the loops are plain C written to vectorise (the ball's square root
 * with intrinsics: compilers keep sqrtf scalar); they are compiled three
 * times (AVX-512BW, AVX2, baseline) and one is picked at run time by the CPU,
 * or by VOXA_MORPH_KERNEL=avx512|avx2|c|envelope (tests force each one;
 * "envelope" disables this path). */
#include "morph_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VB 64       /* voxels per block of the tap loop (a multiple of every vector) */
#define ZCH 1024    /* columns per chunk of the z scans */
#define BALL_MAX_T 32767
#define DIAMOND_MAX_R 253

#if defined(__GNUC__) && !defined(__clang__)
#define IVDEP _Pragma("GCC ivdep")
#elif defined(__clang__)
#define IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define IVDEP
#endif
#if defined(__GNUC__) || defined(__clang__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

/* ---- loop bodies (compiled once per instruction set below) --------------- */

/* forward y step: d = hit ? 0 : min(dp + 1, cap); hit = (s != 0) ^ (flip != 0).
 * s may be d (read before written), dp is another row. */
INLINE void yfwd_body(const uint8_t *s, uint8_t *d, const uint8_t *dp, int64_t n, uint8_t flip,
                      uint8_t cap) {
    IVDEP
    for (int64_t x = 0; x < n; x++) {
        uint8_t h = (uint8_t)((s[x] ? 0xFF : 0) ^ flip);
        uint8_t t = (uint8_t)(dp[x] + 1);
        t = t < cap ? t : cap;
        d[x] = (uint8_t)(t & (uint8_t)~h);
    }
}

/* backward y step: d = min(d, min(dn + 1, cap)). */
INLINE void ybwd_body(uint8_t *d, const uint8_t *dn, int64_t n, uint8_t cap) {
    IVDEP
    for (int64_t x = 0; x < n; x++) {
        uint8_t t = (uint8_t)(dn[x] + 1);
        t = t < cap ? t : cap;
        d[x] = d[x] < t ? d[x] : t;
    }
}

/* ball row: g[x] = d^2 when d^2 <= T, else T + 1 (d <= 255: fits uint16) */
INLINE void square_body(const uint8_t *d, uint16_t *g, int64_t n, uint16_t T) {
    for (int64_t x = 0; x < n; x++) {
        uint16_t v = (uint16_t)((uint16_t)d[x] * (uint16_t)d[x]);
        g[x] = v <= T ? v : (uint16_t)(T + 1);
    }
}

/* ball taps: acc[x] = min over 0 <= k <= K of min(g[x-k], g[x+k]) + k^2 for
 * x < n (n a multiple of VB; g readable on [-K, n + K)). */
INLINE void taps_body(const uint16_t *g, int64_t n, int64_t K, const uint16_t *k2,
                      uint16_t *acc) {
    for (int64_t x0 = 0; x0 < n; x0 += VB) {
        uint16_t a[VB];
        for (int j = 0; j < VB; j++) a[j] = g[x0 + j];
        for (int64_t k = 1; k <= K; k++) {
            const uint16_t *lo = g + x0 - k, *hi = g + x0 + k;
            const uint16_t c = k2[k];
            for (int j = 0; j < VB; j++) {
                uint16_t m = lo[j] < hi[j] ? lo[j] : hi[j];
                m = (uint16_t)(m + c);
                a[j] = a[j] < m ? a[j] : m;
            }
        }
        for (int j = 0; j < VB; j++) acc[x0 + j] = a[j];
    }
}

/* ball row out of pass B: 2-D: o = (acc <= T) ^ inv; 3-D: o = the reach left
 * along z plus one, isqrt(T - acc) + 1, 0 when acc > T. The float square
 * root of an integer m <= 32767 truncates to isqrt(m) exactly: it is
 * correctly rounded, and sqrt(k^2 - 1) < k - 1/(2k) stays more than an ulp
 * (2^-16 near 181) below k, so it never rounds up to k (test_morph_clamp.py
 * checks every m). The compilers do not vectorise sqrtf (errno), so the x86
 * versions are written with intrinsics below. */
static inline uint8_t reach1(uint16_t a, uint16_t T) {
    return (uint8_t)(a <= T ? (int32_t)sqrtf((float)(T - a)) + 1 : 0);
}

INLINE void reach_body(const uint16_t *acc, uint8_t *o, int64_t n, uint16_t T, int thr_only,
                       uint8_t inv) {
    if (thr_only) {
        for (int64_t x = 0; x < n; x++) o[x] = (uint8_t)((acc[x] <= T) ^ inv);
        return;
    }
    for (int64_t x = 0; x < n; x++) o[x] = reach1(acc[x], T);
}

/* diamond doubling step: b[x] = min(a[x], min(min(a[x-s], a[x+s]), cap-s) + s) */
INLINE void dbl_body(const uint8_t *a, uint8_t *b, int64_t n, int64_t s, uint8_t cap) {
    const uint8_t lim = (uint8_t)(cap - s), ss = (uint8_t)s;
    for (int64_t x = 0; x < n; x++) {
        uint8_t m = a[x - s] < a[x + s] ? a[x - s] : a[x + s];
        m = m < lim ? m : lim;
        m = (uint8_t)(m + ss);
        b[x] = a[x] < m ? a[x] : m;
    }
}

/* diamond row out of pass B: 2-D: o = (h <= r) ^ inv; 3-D: the reach left
 * along z plus one, r - h + 1 = cap - h, 0 beyond r. */
INLINE void dfin_body(const uint8_t *h, uint8_t *o, int64_t n, uint8_t cap, int thr_only,
                      uint8_t inv) {
    if (thr_only)
        for (int64_t x = 0; x < n; x++) o[x] = (uint8_t)((h[x] < cap) ^ inv);
    else
        for (int64_t x = 0; x < n; x++) o[x] = (uint8_t)(h[x] < cap ? cap - h[x] : 0);
}

/* forward z step: run = max(e, run - 1 (saturating)); e = run */
INLINE void zfwd_body(uint8_t *e, uint8_t *run, int64_t n) {
    for (int64_t x = 0; x < n; x++) {
        uint8_t r = (uint8_t)(run[x] ? run[x] - 1 : 0);
        r = r > e[x] ? r : e[x];
        run[x] = r;
        e[x] = r;
    }
}

/* backward z step: run = max(a, run - 1); a = (run != 0) ^ inv */
INLINE void zbwd_body(uint8_t *a, uint8_t *run, int64_t n, uint8_t inv) {
    for (int64_t x = 0; x < n; x++) {
        uint8_t r = (uint8_t)(run[x] ? run[x] - 1 : 0);
        r = r > a[x] ? r : a[x];
        run[x] = r;
        a[x] = (uint8_t)((r != 0) ^ inv);
    }
}

typedef struct ck_kern {
    const char *name;
    int64_t max_T; /* the largest ball threshold taken (the measured crossover) */
    void (*yfwd)(const uint8_t *, uint8_t *, const uint8_t *, int64_t, uint8_t, uint8_t);
    void (*ybwd)(uint8_t *, const uint8_t *, int64_t, uint8_t);
    void (*square)(const uint8_t *, uint16_t *, int64_t, uint16_t);
    void (*taps)(const uint16_t *, int64_t, int64_t, const uint16_t *, uint16_t *);
    void (*reach)(const uint16_t *, uint8_t *, int64_t, uint16_t, int, uint8_t);
    void (*dbl)(const uint8_t *, uint8_t *, int64_t, int64_t, uint8_t);
    void (*dfin)(const uint8_t *, uint8_t *, int64_t, uint8_t, int, uint8_t);
    void (*zfwd)(uint8_t *, uint8_t *, int64_t);
    void (*zbwd)(uint8_t *, uint8_t *, int64_t, uint8_t);
} ck_kern;

#define CK_KERNELS(SFX, ATTR, NAME, MAXT)                                                          \
    ATTR static void yfwd_##SFX(const uint8_t *s, uint8_t *d, const uint8_t *dp, int64_t n,      \
                                uint8_t flip, uint8_t cap) {                                     \
        yfwd_body(s, d, dp, n, flip, cap);                                                       \
    }                                                                                            \
    ATTR static void ybwd_##SFX(uint8_t *d, const uint8_t *dn, int64_t n, uint8_t cap) {         \
        ybwd_body(d, dn, n, cap);                                                                \
    }                                                                                            \
    ATTR static void square_##SFX(const uint8_t *d, uint16_t *g, int64_t n, uint16_t T) {        \
        square_body(d, g, n, T);                                                                 \
    }                                                                                            \
    ATTR static void taps_##SFX(const uint16_t *g, int64_t n, int64_t K, const uint16_t *k2,     \
                                uint16_t *acc) {                                                 \
        taps_body(g, n, K, k2, acc);                                                             \
    }                                                                                            \
    ATTR static void dbl_##SFX(const uint8_t *a, uint8_t *b, int64_t n, int64_t s,               \
                               uint8_t cap) {                                                    \
        dbl_body(a, b, n, s, cap);                                                               \
    }                                                                                            \
    ATTR static void dfin_##SFX(const uint8_t *h, uint8_t *o, int64_t n, uint8_t cap,           \
                                int thr_only, uint8_t inv) {                                     \
        dfin_body(h, o, n, cap, thr_only, inv);                                                  \
    }                                                                                            \
    ATTR static void zfwd_##SFX(uint8_t *e, uint8_t *run, int64_t n) { zfwd_body(e, run, n); }   \
    ATTR static void zbwd_##SFX(uint8_t *a, uint8_t *run, int64_t n, uint8_t inv) {              \
        zbwd_body(a, run, n, inv);                                                               \
    }                                                                                            \
    static const ck_kern kern_##SFX = {NAME,        MAXT,      yfwd_##SFX, ybwd_##SFX,          \
                                       square_##SFX, taps_##SFX, reach_##SFX, dbl_##SFX,         \
                                       dfin_##SFX,   zfwd_##SFX, zbwd_##SFX};

static void reach_c(const uint16_t *acc, uint8_t *o, int64_t n, uint16_t T, int thr_only,
                    uint8_t inv) {
    reach_body(acc, o, n, T, thr_only, inv);
}
CK_KERNELS(c, , "portable C", 28 * 28)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CK_X86 1
#include <immintrin.h>
#ifdef __clang__
#define CK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))
#else
#define CK_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,prefer-vector-width=512")))
#endif

__attribute__((target("avx2"))) static void reach_avx2(const uint16_t *acc, uint8_t *o, int64_t n,
                                                        uint16_t T, int thr_only, uint8_t inv) {
    if (thr_only) {
        reach_body(acc, o, n, T, 1, inv);
        return;
    }
    const __m256i t = _mm256_set1_epi32(T), t1 = _mm256_set1_epi32(T + 1),
                  one = _mm256_set1_epi32(1);
    int64_t x = 0;
    for (; x + 8 <= n; x += 8) {
        __m256i a = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(acc + x)));
        __m256i m = _mm256_sub_epi32(t, _mm256_min_epi32(a, t));
        __m256i w = _mm256_cvttps_epi32(_mm256_sqrt_ps(_mm256_cvtepi32_ps(m)));
        __m256i e = _mm256_and_si256(_mm256_add_epi32(w, one), _mm256_cmpgt_epi32(t1, a));
        __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(e, e), _mm256_setzero_si256());
        int32_t lo = _mm_cvtsi128_si32(_mm256_castsi256_si128(p));
        int32_t hi = _mm_cvtsi128_si32(_mm256_extracti128_si256(p, 1));
        memcpy(o + x, &lo, 4);
        memcpy(o + x + 4, &hi, 4);
    }
    for (; x < n; x++) o[x] = reach1(acc[x], T);
}

CK_AVX512 static void reach_avx512(const uint16_t *acc, uint8_t *o, int64_t n, uint16_t T,
                                   int thr_only, uint8_t inv) {
    if (thr_only) {
        reach_body(acc, o, n, T, 1, inv);
        return;
    }
    const __m512i t = _mm512_set1_epi32(T), one = _mm512_set1_epi32(1);
    int64_t x = 0;
    for (; x + 16 <= n; x += 16) {
        __m512i a = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(acc + x)));
        __m512i m = _mm512_sub_epi32(t, _mm512_min_epu32(a, t));
        __m512i w = _mm512_cvttps_epi32(_mm512_sqrt_ps(_mm512_cvtepi32_ps(m)));
        __m512i e = _mm512_maskz_add_epi32(_mm512_cmple_epu32_mask(a, t), w, one);
        _mm_storeu_si128((__m128i *)(o + x), _mm512_cvtepi32_epi8(e));
    }
    for (; x < n; x++) o[x] = reach1(acc[x], T);
}

CK_KERNELS(avx2, __attribute__((target("avx2"))), "AVX2", 150 * 150)
CK_KERNELS(avx512, CK_AVX512, "AVX-512BW", BALL_MAX_T)
#endif

/* The loop set for this CPU, or the one VOXA_MORPH_KERNEL names (falling
 * back to the best supported below it); NULL for "envelope". */
static const ck_kern *pick_kernels(void) {
    int want = voxa__simd_level_from_env("VOXA_MORPH_KERNEL");
    if (want == VOXA__SIMD_NONE) return NULL;
#ifdef CK_X86
    __builtin_cpu_init();
    if (want >= VOXA__SIMD_AVX512 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        return &kern_avx512;
    if (want >= VOXA__SIMD_AVX2 && __builtin_cpu_supports("avx2")) return &kern_avx2;
#endif
    (void)want;
    return &kern_c;
}

/* ---- the passes ------------------------------------------------------------ */

typedef struct ck_ctx {
    const ck_kern *k;
    const uint8_t *src;
    uint8_t *out;
    int64_t nz, ny, nx, nxr; /* nxr: nx rounded up to VB */
    int nd, ball, border;
    uint8_t flip, inv, cap;  /* cap = R + 1 */
    int64_t R, T, K;         /* reach, ball threshold, taps / pads along x */
    int steps;               /* diamond doubling steps */
    int64_t strip;           /* diamond: rows per strip of pass B */
    const uint8_t *row_init; /* nx bytes: the y scan's value before row 0 */
    const uint8_t *row_zero; /* nx zero bytes */
    const uint16_t *k2;      /* ball: k^2 for k <= K */
    char *scratch;
    size_t per;
} ck_ctx;

/* Pass A on columns [x0, x0 + w) of plane z. */
static void pass_y(const ck_ctx *c, int64_t z, int64_t x0, int64_t w) {
    const int64_t nx = c->nx, ny = c->ny;
    const uint8_t *s = c->src + z * ny * nx + x0;
    uint8_t *d = c->out + z * ny * nx + x0;
    c->k->yfwd(s, d, c->row_init + x0, w, c->flip, c->cap);
    for (int64_t y = 1; y < ny; y++)
        c->k->yfwd(s + y * nx, d + y * nx, d + (y - 1) * nx, w, c->flip, c->cap);
    if (c->border) c->k->ybwd(d + (ny - 1) * nx, c->row_zero + x0, w, c->cap);
    for (int64_t y = ny - 2; y >= 0; y--) c->k->ybwd(d + y * nx, d + (y + 1) * nx, w, c->cap);
}

/* Pass B on rows [row0, row0 + nrows) (row = z * ny + y) of the output, with
 * the thread's buffer. */
static void pass_x(const ck_ctx *c, int64_t row0, int64_t nrows, char *mem) {
    const int64_t nx = c->nx, nxr = c->nxr, K = c->K;
    if (c->ball) {
        uint16_t *g = (uint16_t *)mem, *acc = g + K + nxr + K;
        const uint16_t pad = c->border ? 0 : (uint16_t)(c->T + 1);
        for (int64_t x = 0; x < K; x++) g[x] = pad;
        for (int64_t x = K + nx; x < K + nxr + K; x++) g[x] = pad;
        for (int64_t row = row0; row < row0 + nrows; row++) {
            uint8_t *o = c->out + row * nx;
            c->k->square(o, g + K, nx, (uint16_t)c->T);
            c->k->taps(g + K, nxr, K, c->k2, acc);
            c->k->reach(acc, o, nx, (uint16_t)c->T, c->nd == 2, c->inv);
        }
        return;
    }
    /* Diamond: a strip of rows laid end to end, each followed by W = r pad
     * cells, so one doubling step is one loop over the strip. The pads hold
     * the outside value; a value crossing them from another row has cost
     * >= W + 1 > r and saturates at r + 1 = "none", so rows stay separate. */
    const int64_t W = c->R, st = nx + W;
    const uint8_t pad = c->border ? 0 : c->cap;
    for (int64_t r0 = row0; r0 < row0 + nrows; r0 += c->strip) {
        int64_t S = row0 + nrows - r0 < c->strip ? row0 + nrows - r0 : c->strip;
        int64_t len = W + S * st, n = S * st - W; /* n: the cells updated */
        uint8_t *a = (uint8_t *)mem, *b = a + len;
        memset(a, pad, (size_t)len);
        memset(b, pad, (size_t)W); /* b's cells beyond the updated ones */
        memset(b + len - W, pad, (size_t)W);
        for (int64_t y = 0; y < S; y++) memcpy(a + W + y * st, c->out + (r0 + y) * nx, (size_t)nx);
        for (int i = 0; i < c->steps; i++) {
            c->k->dbl(a + W, b + W, n, (int64_t)1 << i, c->cap);
            uint8_t *t = a;
            a = b;
            b = t;
        }
        for (int64_t y = 0; y < S; y++)
            c->k->dfin(a + W + y * st, c->out + (r0 + y) * nx, nx, c->cap, c->nd == 2, c->inv);
    }
}

/* 3-D: passes A and B on whole planes [lo, hi). */
static voxa_status planes_ab(int64_t lo, int64_t hi, int tid, void *vc) {
    const ck_ctx *c = vc;
    char *mem = c->scratch + (size_t)tid * c->per;
    for (int64_t z = lo; z < hi; z++) {
        pass_y(c, z, 0, c->nx);
        pass_x(c, z * c->ny, c->ny, mem);
    }
    return VOXA_OK;
}

/* 2-D: pass A on column chunks, then pass B on rows. */
static voxa_status cols_a(int64_t lo, int64_t hi, int tid, void *vc) {
    const ck_ctx *c = vc;
    (void)tid;
    for (int64_t i = lo; i < hi; i++) {
        int64_t x0 = i * ZCH, w = c->nx - x0 < ZCH ? c->nx - x0 : ZCH;
        pass_y(c, 0, x0, w);
    }
    return VOXA_OK;
}

static voxa_status rows_b(int64_t lo, int64_t hi, int tid, void *vc) {
    const ck_ctx *c = vc;
    char *mem = c->scratch + (size_t)tid * c->per;
    pass_x(c, lo, hi - lo, mem);
    return VOXA_OK;
}

/* 3-D: pass C on column chunks of the flattened plane. */
static voxa_status cols_c(int64_t lo, int64_t hi, int tid, void *vc) {
    const ck_ctx *c = vc;
    uint8_t *run = (uint8_t *)(c->scratch + (size_t)tid * c->per);
    const int64_t plane = c->ny * c->nx;
    const uint8_t start = c->border ? c->cap : 0; /* the outside planes reach R */
    for (int64_t i = lo; i < hi; i++) {
        int64_t j0 = i * ZCH, w = plane - j0 < ZCH ? plane - j0 : ZCH;
        uint8_t *col = c->out + j0;
        memset(run, start, (size_t)w);
        for (int64_t z = 0; z < c->nz; z++) c->k->zfwd(col + z * plane, run, w);
        memset(run, start, (size_t)w);
        for (int64_t z = c->nz - 1; z >= 0; z--) c->k->zbwd(col + z * plane, run, w, c->inv);
    }
    return VOXA_OK;
}

int voxa__clamp_applies(const voxa__plan *p, int nd, int64_t k) {
    const ck_kern *kern = pick_kernels();
    if (nd < 2 || nd > 3 || !kern) return 0;
    if (p->kind == VOXA__PATH_BALL) return k == 1 && !p->aniso && p->thr <= (double)kern->max_T;
    if (p->kind == VOXA__PATH_DIAMOND) return p->r <= DIAMOND_MAX_R / (k > 0 ? k : 1);
    return 0;
}

const char *voxa__clamp_kernel_name(void) {
    const ck_kern *k = pick_kernels();
    return k ? k->name : "none";
}

voxa_status voxa__clamp_threshold(int nd, const int64_t *shape, const uint8_t *src, int target,
                                  int border, int ball, int64_t reach2, int invert, uint8_t *out) {
    const ck_kern *kern = pick_kernels();
    VOXA_FAIL_IF(!kern || nd < 2 || nd > 3, VOXA_EINTERNAL, "morph: clamped path not applicable");
    VOXA_FAIL_IF(ball ? (reach2 < 0 || reach2 > BALL_MAX_T) : (reach2 < 0 || reach2 > DIAMOND_MAX_R),
                 VOXA_EINTERNAL, "morph: clamped path: threshold %lld out of range",
                 (long long)reach2);
    voxa_status st = VOXA_OK;
    ck_ctx c;
    memset(&c, 0, sizeof c);
    c.k = kern;
    c.src = src;
    c.out = out;
    c.nd = nd;
    c.nz = nd == 3 ? shape[0] : 1;
    c.ny = shape[nd - 2];
    c.nx = shape[nd - 1];
    if (c.nz * c.ny * c.nx == 0) return VOXA_OK;
    c.nxr = (c.nx + VB - 1) / VB * VB;
    c.ball = ball != 0;
    c.border = border != 0;
    c.flip = target ? 0 : 0xFF;
    c.inv = (uint8_t)(invert != 0);
    if (ball) {
        c.T = reach2;
        int64_t R = 0;
        while ((R + 1) * (R + 1) <= c.T) R++;
        c.R = R;
    } else {
        c.R = reach2;
    }
    c.cap = (uint8_t)(c.R + 1);
    c.K = c.R < c.nx ? c.R : c.nx;
    if (!ball) /* doubling steps covering min(r, nx): shifts 1 .. 2^(steps-1) <= K */
        while (((int64_t)1 << c.steps) - 1 < c.K) c.steps++;
    uint8_t *rows = NULL;
    uint16_t *k2 = NULL;
    rows = voxa__malloc((size_t)c.nx, 2);
    VOXA_GOTO_IF(!rows, VOXA_ENOMEM, "morph: cannot allocate %lld bytes", (long long)c.nx * 2);
    memset(rows, border ? 0 : c.cap, (size_t)c.nx);
    memset(rows + c.nx, 0, (size_t)c.nx);
    c.row_init = rows;
    c.row_zero = rows + c.nx;
    if (ball) {
        k2 = voxa__malloc((size_t)c.K + 1, sizeof(uint16_t));
        VOXA_GOTO_IF(!k2, VOXA_ENOMEM, "morph: cannot allocate the tap table");
        for (int64_t i = 0; i <= c.K; i++) k2[i] = (uint16_t)(i * i);
        c.k2 = k2;
    }
    c.strip = ((int64_t)1 << 18) / (c.nx + c.R); /* strips of <= 256 KiB */
    if (c.strip < 1) c.strip = 1;
    size_t row = ball ? (size_t)(2 * c.K + 2 * c.nxr) * sizeof(uint16_t)
                      : (size_t)(2 * (c.R + c.strip * (c.nx + c.R)));
    c.per = row > ZCH ? row : ZCH;
    c.per = (c.per + 63) / 64 * 64;
    int nt;
    c.scratch = voxa__thread_scratch(1, c.per, &nt);
    VOXA_GOTO_IF(!c.scratch, VOXA_ENOMEM, "morph: cannot allocate row buffers");
    const int64_t plane = c.ny * c.nx;
    if (nd == 3) {
        st = voxa__parallel_for_nt(c.nz, voxa__grain(plane), nt, planes_ab, &c);
        if (!st)
            st = voxa__parallel_for_nt((plane + ZCH - 1) / ZCH, voxa__grain(c.nz * ZCH), nt,
                                       cols_c, &c);
    } else {
        st = voxa__parallel_for_nt((c.nx + ZCH - 1) / ZCH, voxa__grain(c.ny * ZCH), nt, cols_a,
                                   &c);
        if (!st) st = voxa__parallel_for_nt(c.ny, voxa__grain(c.nx), nt, rows_b, &c);
    }
done:
    voxa__free(rows);
    voxa__free(k2);
    voxa__free(c.scratch);
    return st;
}
