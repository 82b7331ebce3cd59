/* Richardson–Lucy, staged path: the z stage as a direct convolution.
 *
 * After the per-plane 2-D transforms, the 3-D convolution is, for every
 * x-y frequency column j, a circular convolution along z of the column with
 * the PSF's x-y transform at j (m0 complex taps, hxy[k0][j]):
 *   forward:  out[z] = L0 sum_k hxy[k][j]       in[(z - k + c0) mod L0]
 *   adjoint:  out[z] = L0 sum_k conj(hxy[k][j]) in[(z + k - c0) mod L0]
 * (L0: the z-FFT round trip's factor that hxy's 1/nbox scaling expects).
 * deconv_staged.c computes it with z-FFTs (3 per column: data, H's column,
 * inverse). Directly it costs m0 complex multiply-adds per output instead,
 * but they vectorise across columns straight from the plane-major buffer:
 * no H column to make, no strided FFT, and only the planes that are
 * non-zero in (the ratio's window) or needed out (the window after the
 * forward convolution) are touched. With a 32^3 PSF on (128, 512, 512) the
 * iteration ran 8-18 % faster in free and periodic mode (BENCHMARKS.md,
 * issue 14, session 5); for long PSFs the z-FFTs win, and
 * voxa__rl_zconv_direct decides.
 *
 * A block of ZB columns is copied out of the buffer's planes into scratch
 * (circularly extended, zero planes left 0 and skipped), then each output
 * plane is summed over its taps in a fixed order and written back: every
 * output depends on the same data in the same order for any thread count.
 * Kernels: AVX-512F, AVX2+FMA and plain C (VOXA_RL_ZKERNEL=c / avx2 force
 * the lower sets, for tests); the sets differ by float rounding only (FMA
 * contraction). */
#include "deconv_internal.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#define ZB VOXA_RL_TILE

typedef struct zgeom {
    int64_t L0, m0, c0, ncp;
    int64_t glo, ghi, slo, shi; /* planes non-zero in, planes wanted out */
    int adjoint;
} zgeom;

/* One output row of cnt columns from the two sums (see zconv_c):
 * (a1.re - a2.im, a1.im + a2.re), interleaved like the buffer. */
static inline void zc_store(float *d, const float *a1, const float *a2, int64_t cnt) {
    for (int64_t v = 0; v < cnt; v++) {
        d[2 * v] = a1[2 * v] - a2[2 * v + 1];
        d[2 * v + 1] = a1[2 * v + 1] + a2[2 * v];
    }
}

/* Outputs of one block: out[z] = sum_k t[k] ext[z - slo + k] for z in
 * [slo, shi). ext (E = shi - slo + m0 - 1 rows, + 3 zero rows) holds ZB
 * complex per row interleaved as in the buffer, its non-zero rows in
 * [nzlo, nzhi); the taps are split into tr[k] = (re, re, ...) and
 * ti[k] = (im, im, ...) rows of 2 ZB floats, so that a1 += x tr, a2 += x ti
 * need no shuffles per tap and the product is (a1.re - a2.im, a1.im +
 * a2.re) once per output. Q outputs at a time (2 Q independent chains of
 * multiply-adds). Written to dst (plane stride ncp), cnt columns. Plain C,
 * no FMA; the x86 kernels below do the same sums with FMA. */
static void zconv_c(const zgeom *g, const float *restrict ext, const float *restrict tr,
                    const float *restrict ti, float *restrict dst, int64_t cnt, int64_t nzlo,
                    int64_t nzhi) {
    enum { W = 2 * ZB, Q = 2 };
    int64_t nout = g->shi - g->slo, m0 = g->m0;
    for (int64_t z = 0; z < nout; z += Q) {
        int q1 = nout - z < Q ? (int)(nout - z) : Q;
        /* taps that reach ext's non-zero rows [nzlo, nzhi) from these outputs */
        int64_t k0 = nzlo - z - (Q - 1), k1 = nzhi - z;
        k0 = k0 < 0 ? 0 : k0;
        k1 = k1 > m0 ? m0 : k1;
        float a1[Q][W], a2[Q][W];
        for (int q = 0; q < Q; q++)
            for (int v = 0; v < W; v++) a1[q][v] = a2[q][v] = 0.0f;
        for (int64_t k = k0; k < k1; k++) {
            const float *hr = tr + k * W, *hi = ti + k * W;
            for (int q = 0; q < Q; q++) {
                const float *x = ext + (z + q + k) * W;
                for (int v = 0; v < W; v++) {
                    a1[q][v] += x[v] * hr[v];
                    a2[q][v] += x[v] * hi[v];
                }
            }
        }
        for (int q = 0; q < q1; q++)
            zc_store(dst + (g->slo + z + q) * 2 * g->ncp, a1[q], a2[q], cnt);
    }
}

typedef void (*zconv_fn)(const zgeom *, const float *, const float *, const float *,
                         float *, int64_t, int64_t, int64_t);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same sums with intrinsics and FMA (gcc kept zconv_c's accumulator
 * arrays in memory, and does not fuse in ISO C mode). A row of ZB = 16
 * complex is 4 ymm / 2 zmm. AVX2: one output at a time, 8 chains. */
#define ZC_OUT(STORE, q)                                                       \
    do {                                                                       \
        float o1[2 * ZB], o2[2 * ZB];                                          \
        STORE(o1, a1, q);                                                      \
        STORE(o2, a2, q);                                                      \
        zc_store(dst + (g->slo + z + (q)) * 2 * g->ncp, o1, o2, cnt);          \
    } while (0)

__attribute__((target("avx2,fma"))) static void zconv_avx2(const zgeom *g, const float *ext,
                                                           const float *tr, const float *ti,
                                                           float *dst, int64_t cnt,
                                                           int64_t nzlo, int64_t nzhi) {
    int64_t nout = g->shi - g->slo, m0 = g->m0;
    for (int64_t z = 0; z < nout; z++) {
        int64_t k0 = nzlo - z < 0 ? 0 : nzlo - z, k1 = nzhi - z > m0 ? m0 : nzhi - z;
        __m256 a1[4], a2[4];
        for (int i = 0; i < 4; i++) a1[i] = a2[i] = _mm256_setzero_ps();
        for (int64_t k = k0; k < k1; k++) {
            const float *x = ext + (z + k) * 2 * ZB, *hr = tr + k * 2 * ZB, *hi = ti + k * 2 * ZB;
            for (int i = 0; i < 4; i++) {
                __m256 xv = _mm256_loadu_ps(x + 8 * i);
                a1[i] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(hr + 8 * i), a1[i]);
                a2[i] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(hi + 8 * i), a2[i]);
            }
        }
#define ZC_ST2(o, a, q)                                                        \
    for (int i = 0; i < 4; i++) _mm256_storeu_ps((o) + 8 * i, (a)[i])
        ZC_OUT(ZC_ST2, 0);
#undef ZC_ST2
    }
}

#ifdef __clang__
#define ZC_AVX512 __attribute__((target("avx512f,fma")))
#else
#define ZC_AVX512 __attribute__((target("avx512f,fma,prefer-vector-width=512")))
#endif
/* four outputs at a time: 16 accumulators, 16 independent FMA chains */
ZC_AVX512 static void zconv_avx512(const zgeom *g, const float *ext, const float *tr,
                                   const float *ti, float *dst, int64_t cnt, int64_t nzlo,
                                   int64_t nzhi) {
    int64_t nout = g->shi - g->slo, m0 = g->m0;
    for (int64_t z = 0; z < nout; z += 4) {
        int64_t k0 = nzlo - z - 3 < 0 ? 0 : nzlo - z - 3, k1 = nzhi - z > m0 ? m0 : nzhi - z;
        __m512 a1[4][2], a2[4][2];
        for (int q = 0; q < 4; q++)
            for (int i = 0; i < 2; i++) a1[q][i] = a2[q][i] = _mm512_setzero_ps();
        for (int64_t k = k0; k < k1; k++) {
            const float *hr = tr + k * 2 * ZB, *hi = ti + k * 2 * ZB;
            __m512 r0 = _mm512_loadu_ps(hr), r1 = _mm512_loadu_ps(hr + 16);
            __m512 i0 = _mm512_loadu_ps(hi), i1 = _mm512_loadu_ps(hi + 16);
            for (int q = 0; q < 4; q++) {
                const float *x = ext + (z + q + k) * 2 * ZB;
                __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
                a1[q][0] = _mm512_fmadd_ps(x0, r0, a1[q][0]);
                a1[q][1] = _mm512_fmadd_ps(x1, r1, a1[q][1]);
                a2[q][0] = _mm512_fmadd_ps(x0, i0, a2[q][0]);
                a2[q][1] = _mm512_fmadd_ps(x1, i1, a2[q][1]);
            }
        }
#define ZC_ST5(o, a, q)                                                        \
    for (int i = 0; i < 2; i++) _mm512_storeu_ps((o) + 16 * i, (a)[q][i])
        for (int q = 0; q < 4 && z + q < nout; q++) ZC_OUT(ZC_ST5, q);
#undef ZC_ST5
    }
}
#undef ZC_OUT
#endif

static zconv_fn zconv_kernel(void) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    int lvl = voxa__simd_level_from_env("VOXA_RL_ZKERNEL");
    if (lvl >= VOXA__SIMD_AVX512 && __builtin_cpu_supports("avx512f")) return zconv_avx512;
    if (lvl >= VOXA__SIMD_AVX2 && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return zconv_avx2;
#endif
    return zconv_c;
}

typedef struct zctx {
    const voxa_rl_plan *p;
    float *scr;
    zgeom g;
    zconv_fn fn;
} zctx;

/* ext row i <- plane (base + i) mod L0 of the block when that plane is in
 * [glo, ghi), else 0: the circular convolution without index arithmetic. */
static voxa_status zconv_blocks(int64_t lo, int64_t hi, int tid, void *ctx) {
    enum { W = 2 * ZB };
    const zctx *C = ctx;
    const voxa_rl_plan *p = C->p;
    const zgeom *g = &C->g;
    int64_t L0 = g->L0, m0 = g->m0, nout = g->shi - g->slo;
    int64_t E = nout + m0 - 1, Ep = E + 3; /* + the Q-blocked reads past the end */
    float *ext = C->scr + (int64_t)tid * voxa__rl_staged_scratch(p);
    float *tr = ext + Ep * W, *ti = tr + m0 * W;
    const float *buf = p->buf, *h = (const float *)p->hxy;
    /* forward: out[z] = sum_k h[k] in[z - k + c0], taps reversed so that
     * out[z] = sum_k' t[k'] ext[z - slo + k'] with ext from slo - (m0-1) + c0;
     * adjoint: conj(h[k]) in[z + k - c0], ext from slo - c0. L0 is the z
     * round trip's factor that hxy's 1/nbox scaling expects. */
    int64_t base = g->adjoint ? g->slo - g->c0 : g->slo - (m0 - 1) + g->c0;
    base = ((base % L0) + L0) % L0;
    float sr = (float)L0, si = g->adjoint ? -sr : sr;
    memset(ext + E * W, 0, (size_t)(3 * W) * sizeof(float));
    for (int64_t b = lo; b < hi; b++) {
        int64_t j0 = b * ZB, cnt = p->ncp - j0 < ZB ? p->ncp - j0 : ZB;
        int64_t z = base, nzlo = E, nzhi = 0;
        for (int64_t i = 0; i < E; i++, z = z + 1 == L0 ? 0 : z + 1) {
            float *d = ext + i * W;
            int64_t c = z >= g->glo && z < g->ghi ? 2 * cnt : 0;
            const float *s = buf + 2 * (z * p->ncp + j0);
            /* the next block's row (160 planes are too many streams for
             * the hardware prefetcher) */
            if (b + 1 < hi && c) {
                __builtin_prefetch(s + W);
                __builtin_prefetch(s + W + 16);
            }
            for (int64_t v = 0; v < c; v++) d[v] = s[v];
            for (int64_t v = c; v < W; v++) d[v] = 0.0f;
            if (c) {
                nzlo = i < nzlo ? i : nzlo;
                nzhi = i + 1;
            }
        }
        for (int64_t k = 0; k < m0; k++) {
            const float *s = h + 2 * ((g->adjoint ? k : m0 - 1 - k) * p->ncp + j0);
            float *r = tr + k * W, *i = ti + k * W;
            for (int64_t v = 0; v < ZB; v++) {
                float re = v < cnt ? sr * s[2 * v] : 0.0f, im = v < cnt ? si * s[2 * v + 1] : 0.0f;
                r[2 * v] = r[2 * v + 1] = re;
                i[2 * v] = i[2 * v + 1] = im;
            }
        }
        C->fn(g, ext, tr, ti, (float *)buf + 2 * j0, cnt, nzlo, nzhi);
    }
    return VOXA_OK;
}

int64_t voxa__rl_zconv_scratch(const voxa_rl_plan *p) {
    /* floats per thread: ext rows of 2 ZB for at most L0 + m0 + 2 planes,
     * two tap rows of 2 ZB per PSF plane */
    return (p->L[0] + 3 * p->m[0] + 2) * 2 * ZB;
}

int voxa__rl_zconv_direct(const voxa_rl_plan *p) {
    const char *e = getenv("VOXA_RL_ZCONV");
    if (e && !strcmp(e, "fft")) return 0;
    if (e && !strcmp(e, "direct")) return 1;
    /* cost per column: direct about n0 m0 multiply-adds (vectorised across
     * columns, no copies beyond the block's), FFT 3 z-FFTs of L0 with
     * strided gathers. Measured (iteration time direct / FFT, 1 thread,
     * AVX-512): free (128, 160, 160): m0 8 0.71, 32 0.83, 64 0.92 (ratio
     * 5.3), 128 1.07 (8.0); periodic (64, 256, 256): m0 16 0.79, 64 1.02
     * (10.7). */
    int64_t L0 = p->L[0], lg = 1;
    while (((int64_t)1 << lg) < L0) lg++;
    return p->m[0] * p->n[0] <= VOXA_RL_ZCONV_RATIO * L0 * lg;
}

voxa_status voxa__rl_zconv(const voxa_rl_plan *p, float *scr, int adjoint, int64_t glo,
                           int64_t ghi, int64_t slo, int64_t shi) {
    zctx C = {p, scr, {p->L[0], p->m[0], p->c0, p->ncp, glo, ghi, slo, shi, adjoint},
              zconv_kernel()};
    int64_t blocks = (p->ncp + ZB - 1) / ZB;
    return voxa__parallel_for(blocks, 8, zconv_blocks, &C);
}
