/* The extrapolation step of accelerated Richardson-Lucy (deconv_rl.c), per
 * span of a box row: y = c 2^clamp(alpha (log2 c - log2 o), -16, 16) where
 * c, o > 0, else c; c the current estimate, o the last one.
 *
 * The last estimate is kept as its log2 (-inf where it is not > 0): each
 * extrapolation stores log2 c, which it computes anyway, for the next one.
 * That is one polynomial per voxel less than taking log2 o again, with the
 * same bits (the same function of the same value).
 *
 * The two polynomials per voxel make this pass compute-bound: kernels of 4
 * (SSE2), 8 (AVX2) and 16 (AVX-512) lanes from the same loop. This file is
 * compiled with -ffp-contract=off (CMakeLists.txt), so no width fuses a
 * multiply-add and every kernel gives SSE2's bits (VOXA_RL_KERNEL=c|avx2|
 * avx512 picks one, for tests). */
#include "deconv_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* log2(r) for a positive normal float: exponent plus 2/ln2 atanh(s),
 * s = (m - 1) / (m + 1), m the mantissa folded into [sqrt(1/2), sqrt(2))
 * so |s| <= 0.172 and the odd series to s^9 is within float rounding.
 * Integer selects only, no branch: the loops below vectorise. */
static inline float rl_log2(float r) {
    uint32_t i, mi;
    memcpy(&i, &r, sizeof i);
    mi = (i & 0x7fffffu) | 0x3f800000u;
    uint32_t big = mi > 0x3fb504f3u; /* mantissa > sqrt(2): halve it */
    mi -= big << 23;
    float e = (float)((int32_t)(i >> 23) - 127 + (int32_t)big), m;
    memcpy(&m, &mi, sizeof m);
    float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    return e + s * (2.88539008f + s2 * (0.961796694f + s2 * (0.577078016f +
                    s2 * (0.412198583f + s2 * 0.320598898f))));
}

/* 2^t for t in [-16, 16]: 2^n (exponent bits) times 2^f, f = t - n in
 * [-0.5, 0.5], by its Taylor series in f ln2 to degree 7 (error < 1e-8).
 * n = round(t) without a float-to-int conversion (which would stop the
 * vectoriser): adding 1.5 * 2^23 leaves n in the low mantissa bits. */
static inline float rl_exp2(float t) {
    float k = t + 12582912.0f;
    uint32_t kb, bits;
    memcpy(&kb, &k, sizeof kb);
    float u = (t - (k - 12582912.0f)) * 0.693147181f;
    float p = 1.0f + u * (1.0f + u * (0.5f + u * (0.166666667f + u * (0.0416666667f +
              u * (0.00833333333f + u * (0.00138888889f + u * 0.000198412698f))))));
    bits = (kb - 0x4b400000u + 127u) << 23;
    float sc;
    memcpy(&sc, &bits, sizeof sc);
    return p * sc;
}

/* log2 c where c > 0, else -inf, selected by bit masks (a ?: here becomes a
 * branch, and the loop stays scalar). */
static inline float log_or_minus_inf(float c) {
    float l = rl_log2(c), ninf = -INFINITY;
    uint32_t lb, nb, pos = 0u - (uint32_t)(c > 0);
    memcpy(&lb, &l, sizeof lb);
    memcpy(&nb, &ninf, sizeof nb);
    lb = (lb & pos) | (nb & ~pos);
    memcpy(&l, &lb, sizeof l);
    return l;
}

static inline __attribute__((always_inline)) void log_span(const float *f, float *lx,
                                                           int64_t len) {
    for (int64_t x = 0; x < len; x++) lx[x] = log_or_minus_inf(f[x]);
}

static inline __attribute__((always_inline)) void extrapolate_span(float *f, float *lx, float *bx,
                                                                   int64_t len, float a,
                                                                   float tlo, float thi) {
    for (int64_t x = 0; x < len; x++) {
        float c = f[x], lo = lx[x], lc = log_or_minus_inf(c), v;
        /* (where lo or lc is -inf, t is clamped and y is not taken) */
        float t = a * (lc - lo);
        t = t > tlo ? t : tlo;
        t = t < thi ? t : thi;
        float y = c * rl_exp2(t);
        uint32_t yb, cb, keep = 0u - (uint32_t)((c > 0) & (lo >= -FLT_MAX));
        memcpy(&yb, &y, sizeof yb);
        memcpy(&cb, &c, sizeof cb);
        yb = (yb & keep) | (cb & ~keep);
        memcpy(&v, &yb, sizeof v);
        lx[x] = lc;
        f[x] = v;
        bx[x] = v;
    }
}

/* The RL step d = v - f (v the new estimate, in bx; f the old), its dot
 * products with the last step o (in gx, which d replaces) and f <- v. The
 * sums run in VOXA__RL_LANES fixed lanes, element x of a span in lane
 * (lane0 + x) mod LANES, so that every kernel adds the same numbers in the
 * same order (and the lanes break the chain of dependent adds). */
static inline __attribute__((always_inline)) int step_span(float *f, const float *bx, float *gx,
                                                           int64_t len, int lane0, double *num,
                                                           double *den) {
    enum { L = VOXA__RL_LANES };
    double n[L], d2[L];
    for (int l = 0; l < L; l++) {
        n[l] = num[l];
        d2[l] = den[l];
    }
    int64_t x = 0;
    for (; x < len && lane0 % L; x++, lane0++) { /* up to a lane boundary */
        float d = bx[x] - f[x], o = gx[x];
        n[lane0 % L] += (double)d * o;
        d2[lane0 % L] += (double)o * o;
        gx[x] = d;
        f[x] = bx[x];
    }
    for (; x + L <= len; x += L)
        for (int l = 0; l < L; l++) {
            float d = bx[x + l] - f[x + l], o = gx[x + l];
            n[l] += (double)d * o;
            d2[l] += (double)o * o;
            gx[x + l] = d;
            f[x + l] = bx[x + l];
        }
    for (int l = 0; x < len; x++, l++) {
        float d = bx[x] - f[x], o = gx[x];
        n[l] += (double)d * o;
        d2[l] += (double)o * o;
        gx[x] = d;
        f[x] = bx[x];
        lane0 = l + 1;
    }
    for (int l = 0; l < L; l++) {
        num[l] = n[l];
        den[l] = d2[l];
    }
    return lane0 % L;
}

static void log_c(const float *f, float *lx, int64_t len) { log_span(f, lx, len); }
static int step_c(float *f, const float *bx, float *gx, int64_t len, int lane0, double *num,
                  double *den) {
    return step_span(f, bx, gx, len, lane0, num, den);
}
static void extrapolate_c(float *f, float *lx, float *bx, int64_t len, float a, float tlo,
                          float thi) {
    extrapolate_span(f, lx, bx, len, a, tlo, thi);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RL_AVX2 __attribute__((target("avx2")))
#ifdef __clang__
#define RL_AVX512 __attribute__((target("avx512f")))
#else
#define RL_AVX512 __attribute__((target("avx512f,prefer-vector-width=512")))
#endif
RL_AVX2 static void log_avx2(const float *f, float *lx, int64_t len) { log_span(f, lx, len); }
RL_AVX2 static void extrapolate_avx2(float *f, float *lx, float *bx, int64_t len, float a,
                                     float tlo, float thi) {
    extrapolate_span(f, lx, bx, len, a, tlo, thi);
}
RL_AVX2 static int step_avx2(float *f, const float *bx, float *gx, int64_t len, int lane0,
                             double *num, double *den) {
    return step_span(f, bx, gx, len, lane0, num, den);
}
RL_AVX512 static int step_avx512(float *f, const float *bx, float *gx, int64_t len, int lane0,
                                 double *num, double *den) {
    return step_span(f, bx, gx, len, lane0, num, den);
}
RL_AVX512 static void log_avx512(const float *f, float *lx, int64_t len) {
    log_span(f, lx, len);
}
RL_AVX512 static void extrapolate_avx512(float *f, float *lx, float *bx, int64_t len, float a,
                                         float tlo, float thi) {
    extrapolate_span(f, lx, bx, len, a, tlo, thi);
}
#endif

voxa__rl_accel_kernels voxa__rl_accel_kernels_pick(void) {
    voxa__rl_accel_kernels k = {log_c, extrapolate_c, step_c};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    int want = voxa__simd_level_from_env("VOXA_RL_KERNEL");
    if (want >= VOXA__SIMD_AVX512 && __builtin_cpu_supports("avx512f")) {
        k.log = log_avx512;
        k.extrapolate = extrapolate_avx512;
        k.step = step_avx512;
    } else if (want >= VOXA__SIMD_AVX2 && __builtin_cpu_supports("avx2")) {
        k.log = log_avx2;
        k.extrapolate = extrapolate_avx2;
        k.step = step_avx2;
    }
#endif
    return k;
}
