/* Richardson–Lucy plans: geometry, PSF transforms, border weights, FFTW.
 *
 * A plan holds everything that depends only on (image shape, PSF, boundary):
 * the FFT box (see deconv_internal.h), one in-place r2c and one in-place c2r
 * FFTW plan on a shared work buffer, the PSF's transform H (scaled by 1/|box|
 * so that c2r(r2c(x) * H) is the convolution with no extra pass), and, for the
 * wrap-free mode, the border weights 1 / H^T(w) with w the data window mask.
 *
 * PSF placement. The kernel is written into the box with its centre c at
 * the origin: h[k] goes to index (k - c) mod L on every axis. Then
 *   c2r(r2c(f) * H)        = sum_k h[k] f(x - k + c)   (convolution)
 *   c2r(r2c(r) * conj(H))  = sum_k h[k] r(x + k - c)   (correlation, H^T)
 * The published W2 formula pads h to the image (split evenly) and rolls it by
 * n//2, which puts index m//2 at the origin exactly when n and m are even:
 * there both agree; for odd extents voxa stays centred. scikit-image's
 * convolve(mode='same') centres its forward kernel at (m-1)//2 and, because
 * it convolves with the flipped kernel, its backward one at m//2; the zero
 * mode reproduces that with two transforms when some extent is even.
 *
 * Border weights (Bertero & Boccacci 2005, "A simple method for the reduction
 * of boundary effects in the Richardson-Lucy approach to image
 * deconvolution", A&A 437:369). a(x) = sum_k h[k] w(x + k - c) is the PSF
 * mass that object voxel x sends into the data window. The window is a box,
 * so a(x) is the sum of h over a box of k: it comes exactly (double) from a
 * summed-area table of h with 8 look-ups, no FFT noise. Voxels with
 * a < 1e-4 * sum(h) are dropped from the object (weight 0), as the paper
 * suggests, because they are not determined by the data. a depends on each
 * coordinate only through its class (deconv_internal.h), so the plan keeps
 * one row of weights per (class0, class1) pair, not a box.
 *
 * Cost: planning O(|box| log |box|) (ESTIMATE) or seconds (MEASURE, which
 * plans on the work buffer before anything is stored in it; the per-user
 * wisdom cache of deconv_wisdom.c makes that once per shape); memory:
 * work buffer ~|box| floats + H ~|box| floats (+1 for a second H in zero mode
 * with an even PSF extent) + (m0+L0-n0)(m1+L1-n1)L2 floats of weights in
 * free mode. Free mode on a box of several planes, and periodic mode on a
 * big one, are staged (deconv_staged.c): per-plane plans, z-tile plans
 * unless the z stage is direct (deconv_zconv.c), and only the PSF's x-y
 * transform (m0/L0 of H) instead of H. */
#include "deconv_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t fftw_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fftw_once = PTHREAD_ONCE_INIT;
static int fftw_threads_ok;

static int fftw64_threads_ok;

static void fftw_init(void) {
    fftw_threads_ok = fftwf_init_threads() != 0;
    fftw64_threads_ok = fftw_init_threads() != 0;
}

void voxa__fftw_lock(void) {
    pthread_once(&fftw_once, fftw_init);
    pthread_mutex_lock(&fftw_mutex);
}

void voxa__fftw_unlock(void) { pthread_mutex_unlock(&fftw_mutex); }

/* FFTW has no error return for its own allocations: when one fails, it
 * ends the process (alloc.c's assertion). Its planner takes under 3 MiB
 * for the plans voxa makes (measured with a malloc counter: planes up to
 * 2048^2, boxes up to (160, 560, 560), ESTIMATE and MEASURE, 1-2 threads;
 * the staged path's row and column plans of a 560^2 plane 0.7 MiB),
 * so planning starts only when 16 MiB can be allocated, and otherwise fails
 * with ENOMEM. Not airtight (another thread may take that memory in
 * between), but a process at its address-space limit gets an error, not an
 * ended process (tests/python/test_deconv_memory.py walks the limit up). */
voxa_status voxa__fftw_lock_for_planning(void) {
    void *volatile room = malloc((size_t)16 << 20); /* volatile: not elided */
    VOXA_FAIL_IF(!room, VOXA_ENOMEM,
                 "deconvolution: less than 16 MiB of memory left for FFTW's planner");
    free(room);
    voxa__fftw_lock();
    return VOXA_OK;
}

/* ---- names and options -------------------------------------------------- */

static const char *const boundary_names[] = {"free", "periodic", "zero"};

voxa_status voxa_rl_boundary_from_name(const char *name, voxa_rl_boundary *out) {
    VOXA_FAIL_IF(!name || !out, VOXA_EINVAL, "boundary: NULL argument");
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, boundary_names[i])) {
            *out = (voxa_rl_boundary)i;
            return VOXA_OK;
        }
    if (!strcmp(name, "wrap-free")) {
        *out = VOXA_RL_FREE;
        return VOXA_OK;
    }
    return voxa__error(VOXA_EINVAL,
                       "boundary: unknown mode '%s' (expected free, periodic or zero)", name);
}

const char *voxa_rl_boundary_name(voxa_rl_boundary b) {
    return (unsigned)b < 3 ? boundary_names[b] : "invalid";
}

void voxa_rl_options_init(voxa_rl_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->iterations = 20;
}

voxa_status voxa_deconv_halo(const voxa_array *psf, int64_t *lo, int64_t *hi) {
    VOXA_CHECK(voxa_array_check(psf, "psf"));
    VOXA_FAIL_IF(!lo || !hi, VOXA_EINVAL, "halo: NULL lo/hi");
    for (int d = 0; d < psf->ndim; d++) {
        lo[d] = psf->shape[d] / 2;
        hi[d] = psf->shape[d] > 0 ? psf->shape[d] - 1 - lo[d] : 0;
    }
    return VOXA_OK;
}

/* ---- geometry ------------------------------------------------------------- */

/* Smallest 2^a 3^b 5^c 7^d >= n: sizes FFTW transforms fastest. */
static int64_t fast_size(int64_t n) {
    for (int64_t s = n > 1 ? n : 1;; s++) {
        int64_t r = s;
        static const int p[] = {2, 3, 5, 7};
        for (int i = 0; i < 4; i++)
            while (r % p[i] == 0) r /= p[i];
        if (r == 1) return s;
    }
}

/* Write h (C-contiguous 3-D extents m) into a zeroed box in the padded r2c
 * layout with h[c] at the origin, transform, scale by 1/|box|: float32
 * (psf_transform) and double (psf_transform64) plans. */
#define DEF_PSF_TRANSFORM(NAME, T, CT, PLAN, EXEC)                             \
    static void NAME(const voxa_rl_plan *p, PLAN fwd, const T *h, const int64_t *c, CT *dst) { \
        T *b = (T *)dst;                                                       \
        memset(b, 0, (size_t)(p->rows * p->px) * sizeof(T));                   \
        for (int64_t k0 = 0; k0 < p->m[0]; k0++)                               \
            for (int64_t k1 = 0; k1 < p->m[1]; k1++) {                         \
                int64_t i0 = ((k0 - c[0]) % p->L[0] + p->L[0]) % p->L[0];      \
                int64_t i1 = ((k1 - c[1]) % p->L[1] + p->L[1]) % p->L[1];      \
                T *row = b + (i0 * p->L[1] + i1) * p->px;                      \
                const T *src = h + (k0 * p->m[1] + k1) * p->m[2];              \
                for (int64_t k2 = 0; k2 < p->m[2]; k2++)                       \
                    row[((k2 - c[2]) % p->L[2] + p->L[2]) % p->L[2]] = src[k2]; \
            }                                                                  \
        EXEC(fwd, b, dst);                                                     \
        T scale = (T)(1.0 / (double)p->nbox);                                  \
        for (int64_t i = 0; i < p->nc; i++) {                                  \
            dst[i][0] *= scale;                                                \
            dst[i][1] *= scale;                                                \
        }                                                                      \
    }
DEF_PSF_TRANSFORM(psf_transform, float, fftwf_complex, fftwf_plan, fftwf_execute_dft_r2c)
DEF_PSF_TRANSFORM(psf_transform64, double, fftw_complex, fftw_plan, fftw_execute_dft_r2c)

/* The plan's PSF value at flat index i, in double (exact for either copy). */
static inline double psf_at(const voxa_rl_plan *p, int64_t i) {
    return p->psf64 ? p->psf64[i] : (double)p->psf[i];
}

/* Border weights of the wrap-free mode from a summed-area table of h
 * (computed once, serially: it is PSF-sized), then one row class per item:
 * row class (k0, k1) is computed at a representative box row (x0, x1) of
 * that class (deconv_internal.h), so every voxel gets exactly the value
 * the per-voxel formula gives it. */
typedef struct weights_ctx {
    voxa_rl_plan *p;
    const double *S; /* (m0+1) x (m1+1) x (m2+1) summed-area table */
    double thr;
} weights_ctx;

/* A box coordinate of class k along an axis of image extent n, PSF m. */
static int64_t cls_rep(int64_t k, int64_t n, int64_t m) { return k < m ? k : k + n - m; }

static voxa_status weights_rows(int64_t lo, int64_t hi, int tid, void *ctx) {
    weights_ctx *W = ctx;
    voxa_rl_plan *p = W->p;
    const double *S = W->S;
    int64_t b = p->m[1] + 1, cc = p->m[2] + 1;
#define SAT(i, j, k) S[((i) * b + (j)) * cc + (k)]
    for (int64_t r = lo; r < hi; r++) {
        int64_t x0 = cls_rep(r / p->K[1], p->n[0], p->m[0]);
        int64_t x1 = cls_rep(r % p->K[1], p->n[1], p->m[1]);
        /* k range per axis: [off - x + c, off + n - x + c) within [0, m) */
        int64_t l0 = p->off[0] - x0 + p->m[0] / 2, h0 = l0 + p->n[0];
        int64_t l1 = p->off[1] - x1 + p->m[1] / 2, h1 = l1 + p->n[1];
        if (l0 < 0) l0 = 0;
        if (h0 > p->m[0]) h0 = p->m[0];
        if (l1 < 0) l1 = 0;
        if (h1 > p->m[1]) h1 = p->m[1];
        float *out = p->wtab ? p->wtab + r * p->L[2] : NULL;
        for (int64_t x2 = 0; x2 < p->L[2]; x2++) {
            int64_t l2 = p->off[2] - x2 + p->m[2] / 2, h2 = l2 + p->n[2];
            if (l2 < 0) l2 = 0;
            if (h2 > p->m[2]) h2 = p->m[2];
            double s = 0;
            if (l0 < h0 && l1 < h1 && l2 < h2)
                s = SAT(h0, h1, h2) - SAT(l0, h1, h2) - SAT(h0, l1, h2) - SAT(h0, h1, l2) +
                    SAT(l0, l1, h2) + SAT(l0, h1, l2) + SAT(h0, l1, l2) - SAT(l0, l1, l2);
            double w = s > W->thr ? 1.0 / s : 0.0;
            if (p->wtab64) p->wtab64[r * p->L[2] + x2] = w;
            else out[x2] = (float)w;
        }
    }
#undef SAT
    return VOXA_OK;
}

static voxa_status border_weights(voxa_rl_plan *p) {
    int64_t a = p->m[0] + 1, b = p->m[1] + 1, cc = p->m[2] + 1;
    double *S = voxa__calloc((size_t)(a * b * cc), sizeof(double));
    if (!S) return voxa__error(VOXA_ENOMEM, "deconvolution: cannot allocate PSF table");
#define SAT(i, j, k) S[((i) * b + (j)) * cc + (k)]
    for (int64_t i = 1; i < a; i++)
        for (int64_t j = 1; j < b; j++)
            for (int64_t k = 1; k < cc; k++)
                SAT(i, j, k) = psf_at(p, ((i - 1) * p->m[1] + (j - 1)) * p->m[2] + k - 1) +
                               SAT(i - 1, j, k) + SAT(i, j - 1, k) + SAT(i, j, k - 1) -
                               SAT(i - 1, j - 1, k) - SAT(i - 1, j, k - 1) -
                               SAT(i, j - 1, k - 1) + SAT(i - 1, j - 1, k - 1);
#undef SAT
    weights_ctx W = {p, S, 1e-4 * p->psf_sum};
    voxa_status st =
        voxa__parallel_for(p->K[0] * p->K[1], 16384 / p->L[2] + 1, weights_rows, &W);
    voxa__free(S);
    return st;
}

/* Whether any weight of row class (c0, c1) is > 0. */
static int class_live(const voxa_rl_plan *p, int64_t c0, int64_t c1) {
    const float *w = voxa__rl_wclass(p, c0, c1);
    for (int64_t x = 0; x < p->L[2]; x++)
        if (w[x] > 0) return 1;
    return 0;
}

/* The planes, and the rows of any plane, where some weight is > 0 (zlive,
 * ylive). A PSF that fades out (a Gaussian: below 1e-4 of its sum a few
 * sigma out) leaves the box's outer planes and rows, besides those its
 * rounding-up adds, out of the data's reach; the staged path skips them. */
static void live_ranges(voxa_rl_plan *p) {
    int64_t lo[2] = {p->L[0], p->L[1]}, hi[2] = {0, 0};
    for (int64_t c0 = 0; c0 < p->K[0]; c0++)
        for (int64_t c1 = 0; c1 < p->K[1]; c1++) {
            if (!class_live(p, c0, c1)) continue;
            /* the class's coordinates: one, or the interior [m - 1, n) */
            int64_t k[2] = {c0, c1};
            for (int d = 0; d < 2; d++) {
                int64_t a = cls_rep(k[d], p->n[d], p->m[d]);
                int64_t b = k[d] == p->m[d] - 1 ? p->n[d] : a + 1;
                lo[d] = a < lo[d] ? a : lo[d];
                hi[d] = b > hi[d] ? b : hi[d];
            }
        }
    for (int d = 0; d < 2; d++) { /* none live: cannot happen (sum > 0) */
        int64_t *r = d ? p->ylive : p->zlive;
        r[0] = lo[d] < hi[d] ? lo[d] : 0;
        r[1] = lo[d] < hi[d] ? hi[d] : p->L[d];
    }
}

/* ---- plan ------------------------------------------------------------------ */

/* The PSF's centre for the forward (cf) and backward (cb) convolution
 * (deconv.h: zero mode centres the forward one at (m-1)//2); 1 when they
 * differ, so that the backward one needs its own transform. */
static int psf_centres(const voxa_rl_plan *p, int64_t *cf, int64_t *cb) {
    int two = 0;
    for (int d = 0; d < 3; d++) {
        cb[d] = p->m[d] / 2;
        cf[d] = p->boundary == VOXA_RL_ZERO ? (p->m[d] - 1) / 2 : cb[d];
        if (cf[d] != cb[d]) two = 1;
    }
    return two;
}

/* The double-precision plan (VOXA_RL_DOUBLE) once the geometry is set:
 * the PSF in double, the border weights, 3-D plans on a double buffer
 * (aligned by voxa__malloc as FFTW's own allocator would), H. Measured
 * double plans are not put in the wisdom cache, which holds float wisdom. */
static voxa_status plan_f64(voxa_rl_plan *p, const voxa_array *psf, int flags) {
    size_t nreal = (size_t)(p->rows * p->px);
    p->buf64 = voxa__malloc(nreal, sizeof(double));
    p->hf64 = voxa__malloc((size_t)p->nc, sizeof(fftw_complex));
    p->psf64 = voxa__malloc((size_t)(p->m[0] * p->m[1] * p->m[2]), sizeof(double));
    VOXA_FAIL_IF(!p->buf64 || !p->hf64 || !p->psf64, VOXA_ENOMEM,
                 "deconvolution: cannot allocate the double FFT buffers (%lld doubles)",
                 (long long)nreal);
    voxa__advise_huge_pages(p->buf64, nreal * sizeof(double));
    voxa__advise_huge_pages(p->hf64, (size_t)p->nc * sizeof(fftw_complex));
    VOXA_CHECK(voxa__deconv_load_f64(psf, p->psf64, "psf"));
    if (p->boundary == VOXA_RL_FREE) {
        p->wtab64 = voxa__malloc((size_t)(p->K[0] * p->K[1] * p->L[2]), sizeof(double));
        VOXA_FAIL_IF(!p->wtab64, VOXA_ENOMEM, "deconvolution: cannot allocate border weights");
        VOXA_CHECK(border_weights(p));
    }
    int dims[3];
    for (int d = 0; d < p->ndim; d++) dims[d] = (int)p->L[3 - p->ndim + d];
    unsigned fl = (flags & VOXA_RL_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE;
    p->threads = voxa_get_threads();
    VOXA_CHECK(voxa__fftw_lock_for_planning());
    if (fftw64_threads_ok) fftw_plan_with_nthreads(p->threads);
    p->fwd64 = fftw_plan_dft_r2c(p->ndim, dims, p->buf64, (fftw_complex *)p->buf64, fl);
    p->inv64 = fftw_plan_dft_c2r(p->ndim, dims, (fftw_complex *)p->buf64, p->buf64, fl);
    voxa__fftw_unlock();
    VOXA_FAIL_IF(!p->fwd64 || !p->inv64, VOXA_EINTERNAL,
                 "deconvolution: FFTW could not plan a double transform of shape "
                 "(%lld, %lld, %lld)", (long long)p->L[0], (long long)p->L[1], (long long)p->L[2]);
    int64_t cf[3], cb[3];
    int two = psf_centres(p, cf, cb);
    psf_transform64(p, p->fwd64, p->psf64, cf, p->hf64);
    p->hb64 = p->hf64;
    if (two) {
        p->hb64 = voxa__malloc((size_t)p->nc, sizeof(fftw_complex));
        VOXA_FAIL_IF(!p->hb64, VOXA_ENOMEM, "deconvolution: cannot allocate PSF transform");
        psf_transform64(p, p->fwd64, p->psf64, cb, p->hb64);
    }
    return VOXA_OK;
}

void voxa_rl_plan_free(voxa_rl_plan *p) {
    if (!p) return;
    voxa__fftw_lock();
    fftwf_plan pl[7] = {p->fwd, p->inv, p->pfwd, p->cfwd, p->cinv, p->colf, p->coli};
    for (int i = 0; i < 7; i++)
        if (pl[i]) fftwf_destroy_plan(pl[i]);
    for (int k = 0; k < 4; k++) {
        if (p->rowf[k / 2][k % 2]) fftwf_destroy_plan(p->rowf[k / 2][k % 2]);
        if (p->rowi[k / 2][k % 2]) fftwf_destroy_plan(p->rowi[k / 2][k % 2]);
    }
    if (p->fwd64) fftw_destroy_plan(p->fwd64);
    if (p->inv64) fftw_destroy_plan(p->inv64);
    voxa__fftw_unlock();
    if (p->hb64 != p->hf64) voxa__free(p->hb64);
    voxa__free(p->hf64);
    voxa__free(p->buf64);
    voxa__free(p->wtab64);
    voxa__free(p->psf64);
    fftwf_free(p->hxy);
    voxa__free(p->psf);
    if (p->hb != p->hf) fftwf_free(p->hb);
    fftwf_free(p->hf);
    fftwf_free(p->buf);
    voxa__free(p->wtab);
    voxa__free(p);
}

int64_t voxa_rl_plan_bytes(const voxa_rl_plan *p) {
    if (!p) return 0;
    if (p->f64)
        return p->rows * p->px * (int64_t)sizeof(double) +
               p->nc * (int64_t)sizeof(fftw_complex) * (p->hb64 != p->hf64 ? 2 : 1) +
               (p->wtab64 ? p->K[0] * p->K[1] * p->L[2] * (int64_t)sizeof(double) : 0);
    int64_t cplx = p->nc * (int64_t)sizeof(fftwf_complex);
    int64_t nh = !p->hf ? 0 : p->hb != p->hf ? 2 : 1;
    return p->rows * p->px * (int64_t)sizeof(float) + cplx * nh +
           (p->hxy ? p->m[0] * p->ncp * (int64_t)sizeof(fftwf_complex) : 0) +
           (p->wtab ? p->K[0] * p->K[1] * p->L[2] * (int64_t)sizeof(float) : 0);
}

voxa_status voxa_rl_plan_new(voxa_rl_plan **out, int ndim, const int64_t *shape,
                             const voxa_array *psf, voxa_rl_boundary boundary, int flags) {
    voxa_status st = VOXA_OK;
    voxa_rl_plan *p = NULL;
    float *h = NULL;
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "deconvolution: NULL plan pointer");
    *out = NULL;
    VOXA_FAIL_IF(ndim < 1 || ndim > 3, VOXA_EINVAL,
                 "image: ndim %d not supported (1, 2 or 3)", ndim);
    VOXA_FAIL_IF(!shape, VOXA_EINVAL, "image: NULL shape");
    VOXA_FAIL_IF((unsigned)boundary > 2, VOXA_EINVAL, "boundary: invalid mode %d",
                 (int)boundary);
    VOXA_FAIL_IF(flags & ~(VOXA_RL_MEASURE | VOXA_RL_MEASURE_PLANES | VOXA_RL_ESTIMATE |
                           VOXA_RL_DOUBLE),
                 VOXA_EINVAL, "plan flags: unknown bits 0x%x", (unsigned)flags);
    int planner = flags & ~VOXA_RL_DOUBLE;
    VOXA_FAIL_IF(planner & (planner - 1), VOXA_EINVAL,
                 "plan flags: MEASURE, MEASURE_PLANES and ESTIMATE are exclusive");
    VOXA_CHECK(voxa_array_check(psf, "psf"));
    VOXA_FAIL_IF(psf->ndim != ndim, VOXA_EINVAL,
                 "psf: ndim %d does not match the image's ndim %d", psf->ndim, ndim);
    for (int d = 0; d < ndim; d++) {
        VOXA_FAIL_IF(shape[d] < 1, VOXA_EINVAL, "image: shape[%d] = %lld (must be >= 1)",
                     d, (long long)shape[d]);
        VOXA_FAIL_IF(psf->shape[d] < 1, VOXA_EINVAL, "psf: shape[%d] = %lld (must be >= 1)",
                     d, (long long)psf->shape[d]);
        /* zero mode is a linear convolution cut to the image ("same"), which
         * any PSF extent defines (scikit-image accepts one longer than the
         * image: a thin stack under a tall PSF); periodic and free modes
         * need the PSF to fit the image */
        VOXA_FAIL_IF(psf->shape[d] > shape[d] && boundary != VOXA_RL_ZERO, VOXA_EINVAL,
                     "psf: shape[%d] = %lld is larger than the image's %lld (boundary 'zero' "
                     "takes it)", d, (long long)psf->shape[d], (long long)shape[d]);
    }
    double sum;
    VOXA_CHECK(voxa_psf_check(psf, &sum));

    p = voxa__calloc(1, sizeof *p);
    VOXA_GOTO_IF(!p, VOXA_ENOMEM, "deconvolution: cannot allocate plan");
    p->ndim = ndim;
    p->boundary = boundary;
    p->psf_sum = sum;
    for (int d = 0; d < 3; d++) {
        int s = d - (3 - ndim);
        p->n[d] = s >= 0 ? shape[s] : 1;
        p->m[d] = s >= 0 ? psf->shape[s] : 1;
        if (boundary == VOXA_RL_PERIODIC) {
            p->L[d] = p->n[d];
        } else {
            p->L[d] = p->n[d] + p->m[d] - 1 > 1 ? fast_size(p->n[d] + p->m[d] - 1) : 1;
        }
        p->off[d] = boundary == VOXA_RL_FREE ? p->m[d] - 1 - p->m[d] / 2 : 0;
        VOXA_GOTO_IF(p->L[d] > INT32_MAX / 2, VOXA_EINVAL,
                     "image: extent %lld too large for FFTW", (long long)p->n[d]);
    }
    p->px = 2 * (p->L[2] / 2 + 1);
    p->rows = p->L[0] * p->L[1];
    p->nbox = p->rows * p->L[2];
    p->nc = p->rows * (p->L[2] / 2 + 1);
    p->ncp = p->L[1] * (p->L[2] / 2 + 1);
    p->zlive[1] = p->L[0];
    p->ylive[1] = p->L[1];
    p->c0 = p->m[0] / 2;
    p->K[0] = p->m[0] + p->L[0] - p->n[0]; /* row classes (free mode's weights) */
    p->K[1] = p->m[1] + p->L[1] - p->n[1];
    /* Staged 3-D transform (deconv_staged.c): free mode whenever the box has
     * several planes (it also saves H's 1.5x-image memory there); periodic
     * mode from 8 planes and 2^19 voxels, where its plane passes beat one
     * 3-D plan: 1.12-1.57x per iteration from (8, 256, 256) to (128, 512,
     * 512), 1 and 2 threads (BENCHMARKS.md session 15; its plans are
     * measured, 0.1-0.4 s the first time a size is seen, then wisdom).
     * Planes, not voxels, are what it runs in parallel: fewer than 8 keep
     * the 3-D plans, which thread inside each transform. VOXA_RL_STAGED=0 /
     * 1 forces the 3-D plans / the staged path (tests, benchmarks). */
    const char *senv = getenv("VOXA_RL_STAGED");
    int big = p->L[0] >= 8 && p->nbox >= ((int64_t)1 << 19);
    if (senv && !strcmp(senv, "0"))
        p->staged = 0;
    else if (boundary == VOXA_RL_FREE || boundary == VOXA_RL_PERIODIC)
        p->staged = (senv && !strcmp(senv, "1")) || (boundary == VOXA_RL_FREE ? p->L[0] > 1 : big);

    if (flags & VOXA_RL_DOUBLE) {
        p->f64 = 1;
        p->staged = 0;
        st = plan_f64(p, psf, flags);
        goto done;
    }
    /* The staged path's plane transforms run their rows out of place
     * between the plane and a ring (deconv_staged.c): FFTW's SIMD codelets
     * take them unbuffered when every row is 32-byte aligned, so the rows
     * are padded to a multiple of VOXA_RL_ROW_ALIGN floats; the extra
     * complex columns (px/2 - (L2/2+1) per row) hold 0. */
    if (p->staged) {
        p->px = (p->px + VOXA_RL_ROW_ALIGN - 1) / VOXA_RL_ROW_ALIGN * VOXA_RL_ROW_ALIGN;
        p->ncp = p->L[1] * (p->px / 2);
    }
    p->zdirect = p->staged && voxa__rl_zconv_direct(p);

    size_t nreal = (size_t)(p->rows * p->px);
    p->buf = fftwf_malloc(nreal * sizeof(float));
    if (!p->staged) p->hf = fftwf_malloc((size_t)p->nc * sizeof(fftwf_complex));
    VOXA_GOTO_IF(!p->buf || (!p->staged && !p->hf), VOXA_ENOMEM,
                 "deconvolution: cannot allocate FFT buffers (%lld floats)", (long long)nreal);
    /* every pass and FFT sweeps these (the z stage with a plane's stride):
     * huge pages spare the TLB misses, as NumPy's arrays do for the FFT
     * peers */
    voxa__advise_huge_pages(p->buf, nreal * sizeof(float));
    if (p->hf) voxa__advise_huge_pages(p->hf, (size_t)p->nc * sizeof(fftwf_complex));

    /* The PSF as float32, C-contiguous, 3-D. */
    int64_t msize = p->m[0] * p->m[1] * p->m[2];
    h = voxa__malloc((size_t)msize, sizeof(float));
    VOXA_GOTO_IF(!h, VOXA_ENOMEM, "deconvolution: cannot allocate the PSF copy");
    st = voxa__deconv_load_f32(psf, h, "psf");
    if (st != VOXA_OK) goto done;
    p->psf = h;
    h = NULL;

    /* The border weights first: the staged plans transform only the rows
     * they make live. */
    if (boundary == VOXA_RL_FREE) {
        p->wtab = voxa__malloc((size_t)(p->K[0] * p->K[1] * p->L[2]), sizeof(float));
        VOXA_GOTO_IF(!p->wtab, VOXA_ENOMEM, "deconvolution: cannot allocate border weights");
        st = border_weights(p);
        if (st != VOXA_OK) goto done;
        live_ranges(p);
    }

    /* FFTW's planner is not thread-safe: plan under the one lock. MEASURE
     * scribbles on the buffer, which holds nothing yet. */
    int dims[3];
    for (int d = 0; d < ndim; d++) dims[d] = (int)p->L[3 - ndim + d];
    /* The staged path's plans are small (one plane, one z-tile if any), so by
     * default they are measured (0.2-0.5 s more the first time a size is seen,
     * then wisdom), where ESTIMATE picks plans up to ~3x slower (a
     * 512^2 plane, a batch of 160-point columns). So are the plans of a box
     * of one plane (1-D and 2-D images) up to 2^24 voxels: 0.6-4.5 s the
     * first time (512^2 to 4096^2), 1.2-3.5x faster iterations (2048^2
     * periodic 72 -> 29 ms; BENCHMARKS.md session 15); past that, measuring
     * takes longer (6.7 s for a 4200^2 box) and grows with the size. The
     * 3-D plans of the other
     * paths would take seconds to minutes: estimated unless MEASURE. */
    int one_plane = p->L[0] == 1 && p->nbox <= ((int64_t)1 << 24);
    unsigned fl = (flags & VOXA_RL_MEASURE) ||
                          ((p->staged || one_plane) && !(flags & VOXA_RL_ESTIMATE))
                      ? FFTW_MEASURE
                      : FFTW_ESTIMATE;
    p->threads = voxa_get_threads();
    char wpath[4096];
    int cache = voxa__wisdom_cache_path(wpath, sizeof wpath), grew = 0;
    st = voxa__fftw_lock_for_planning();
    if (st != VOXA_OK) goto done;
    if (cache) voxa__wisdom_cache_import(wpath);
    char *w0 = cache && fl == FFTW_MEASURE ? fftwf_export_wisdom_to_string() : NULL;
    int planned;
    if (p->staged) {
        planned = voxa__rl_staged_plans(p, fl);
    } else {
        if (fftw_threads_ok) fftwf_plan_with_nthreads(p->threads);
        p->fwd = fftwf_plan_dft_r2c(ndim, dims, p->buf, (fftwf_complex *)p->buf, fl);
        p->inv = fftwf_plan_dft_c2r(ndim, dims, (fftwf_complex *)p->buf, p->buf, fl);
        planned = p->fwd && p->inv;
    }
    if (w0) { /* save only when measuring taught FFTW something new */
        char *w1 = fftwf_export_wisdom_to_string();
        grew = w1 && strcmp(w0, w1) != 0;
        free(w1); /* FFTW: the caller frees with free() */
        free(w0);
    }
    voxa__fftw_unlock();
    if (grew) voxa__wisdom_cache_save(wpath);
    VOXA_GOTO_IF(planned < 0, VOXA_ENOMEM,
                 "deconvolution: cannot allocate a planning buffer (a ring of %lld floats "
                 "or a z-tile)", (long long)(VOXA_RL_ROW_BLOCK * p->px));
    VOXA_GOTO_IF(!planned, VOXA_EINTERNAL,
                 "deconvolution: FFTW could not plan a transform of shape (%lld, %lld, %lld)",
                 (long long)p->L[0], (long long)p->L[1], (long long)p->L[2]);

    int64_t cf[3], cb[3];
    int two = psf_centres(p, cf, cb);
    if (p->staged) {
        st = voxa__rl_staged_psf(p);
        if (st != VOXA_OK) goto done;
    } else {
        psf_transform(p, p->fwd, p->psf, cf, p->hf);
    }
    if (p->staged) {
        p->hb = NULL;
    } else if (two) {
        p->hb = fftwf_malloc((size_t)p->nc * sizeof(fftwf_complex));
        VOXA_GOTO_IF(!p->hb, VOXA_ENOMEM, "deconvolution: cannot allocate PSF transform");
        psf_transform(p, p->fwd, p->psf, cb, p->hb);
    } else {
        p->hb = p->hf;
    }
done:
    voxa__free(h);
    if (st != VOXA_OK) {
        voxa_rl_plan_free(p);
        return st;
    }
    *out = p;
    return VOXA_OK;
}
