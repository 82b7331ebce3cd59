/* Richardson–Lucy in double precision (plans made with VOXA_RL_DOUBLE).
 *
 * The same iteration, rules, starts and acceleration as deconv_rl.c (read
 * its header for them), computed in double on 3-D FFTW double plans. What
 * float32 cannot do: where the blurred estimate b crosses 0 (data with
 * negative values, as noisy data minus a background have), the ratio g / b
 * amplifies b's relative error, and float32's 6e-8 becomes visible in the
 * result (scikit-image's own camera test: 203 of 262,144 pixels beyond its
 * rtol 1e-3 after 5 iterations); in double it stays at 1e-10 and below.
 *
 * This path is kept plain: the estimate lives on the whole box (one array,
 * not window + shell), none of the float path's staging, dead-plane
 * skipping or SIMD kernels. Memory beyond the caller's arrays: the work
 * buffer and H (~2 box sizes in double, +1 for zero mode with an even PSF
 * extent), the estimate (1 box), the data (1 image, unless it is float64
 * C-contiguous: read in place) and, accelerated, 2 boxes more. Every pass
 * is split by box rows, no row's work depends on the split, and the dot
 * products are summed per row, then in row order: the passes do not depend
 * on the thread count (FFTW's plans for other thread counts may round
 * differently). */
#include "deconv_internal.h"

#include <math.h>
#include <string.h>

typedef struct run64 {
    const voxa_rl_plan *p;
    const double *g;          /* the image, C-contiguous */
    double *f;                /* the estimate on the box, rows of L2 */
    double *xprev, *step;     /* acceleration: last estimate, last RL step */
    double *dots;             /* 2 per box row */
    const fftw_complex *h;    /* the transform the complex pass multiplies by */
    double alpha, mean, fe;   /* fe: filter_epsilon, -inf when off */
} run64;

static voxa_status pass_start(int64_t lo, int64_t hi, int tid, void *ctx) {
    run64 *R = ctx;
    const voxa_rl_plan *p = R->p;
    int64_t L2 = p->L[2];
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        double *f = R->f + r * L2;
        int64_t wr = voxa__rl_window_row(p, r);
        if (p->boundary == VOXA_RL_PERIODIC) { /* box == window: f = g */
            memcpy(f, R->g + wr * L2, (size_t)L2 * sizeof(double));
        } else if (p->boundary == VOXA_RL_FREE) {
            const double *w = p->wtab64 + voxa__rl_wrow_at(p, r);
            for (int64_t x = 0; x < L2; x++) f[x] = w[x] > 0 ? R->mean : 0.0;
        } else { /* zero: 0.5 on the window */
            for (int64_t x = 0; x < L2; x++) f[x] = 0.0;
            if (wr >= 0)
                for (int64_t x = 0; x < p->n[2]; x++) f[p->off[2] + x] = 0.5;
        }
    }
    return VOXA_OK;
}

/* buf <- f; with acceleration also x_prev <- f. */
static voxa_status pass_load(int64_t lo, int64_t hi, int tid, void *ctx) {
    run64 *R = ctx;
    const voxa_rl_plan *p = R->p;
    size_t bytes = (size_t)p->L[2] * sizeof(double);
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        memcpy(p->buf64 + r * p->px, R->f + r * p->L[2], bytes);
        if (R->xprev) memcpy(R->xprev + r * p->L[2], R->f + r * p->L[2], bytes);
    }
    return VOXA_OK;
}

/* buf *= h, or conj(h) for the correlation (complex index range). */
static voxa_status pass_mul(int64_t lo, int64_t hi, int conj, void *ctx) {
    run64 *R = ctx;
    fftw_complex *b = (fftw_complex *)R->p->buf64;
    const fftw_complex *h = R->h;
    double s = conj ? -1.0 : 1.0;
    for (int64_t i = lo; i < hi; i++) {
        double hr = h[i][0], hi_ = s * h[i][1];
        double re = b[i][0] * hr - b[i][1] * hi_;
        double im = b[i][0] * hi_ + b[i][1] * hr;
        b[i][0] = re;
        b[i][1] = im;
    }
    return VOXA_OK;
}
static voxa_status pass_mul_fwd(int64_t lo, int64_t hi, int tid, void *ctx) {
    (void)tid;
    return pass_mul(lo, hi, 0, ctx);
}
static voxa_status pass_mul_adj(int64_t lo, int64_t hi, int tid, void *ctx) {
    (void)tid;
    return pass_mul(lo, hi, 1, ctx);
}

/* buf <- the ratio on the window, 0 elsewhere. */
static voxa_status pass_ratio(int64_t lo, int64_t hi, int tid, void *ctx) {
    run64 *R = ctx;
    const voxa_rl_plan *p = R->p;
    int64_t n2 = p->n[2], o2 = p->off[2], L2 = p->L[2];
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        double *b = p->buf64 + r * p->px;
        int64_t wr = voxa__rl_window_row(p, r);
        if (wr < 0) {
            memset(b, 0, (size_t)L2 * sizeof(double));
            continue;
        }
        const double *g = R->g + wr * n2;
        double *bw = b + o2;
        for (int64_t x = 0; x < n2; x++) {
            double c = bw[x];
            if (p->boundary == VOXA_RL_ZERO) {
                c += 1e-12;
                bw[x] = c < R->fe ? 0.0 : g[x] / c;
            } else {
                bw[x] = c > 0 ? g[x] / c : 0.0;
            }
        }
        memset(b, 0, (size_t)o2 * sizeof(double));
        memset(b + o2 + n2, 0, (size_t)(L2 - o2 - n2) * sizeof(double));
    }
    return VOXA_OK;
}

/* f <- update(f, c), buf <- f; accelerated, also the step d = f_new - f
 * (replacing the last one after reading it) and the row's dot products. */
static voxa_status pass_update(int64_t lo, int64_t hi, int tid, void *ctx) {
    run64 *R = ctx;
    const voxa_rl_plan *p = R->p;
    int64_t L2 = p->L[2], o2 = p->off[2], n2 = p->n[2];
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        double *f = R->f + r * L2, *b = p->buf64 + r * p->px;
        double *d = R->step ? R->step + r * L2 : NULL;
        const double *w = p->boundary == VOXA_RL_FREE ? p->wtab64 + voxa__rl_wrow_at(p, r) : NULL;
        int in_window = voxa__rl_window_row(p, r) >= 0;
        double num = 0, den = 0;
        for (int64_t x = 0; x < L2; x++) {
            double v = f[x] * b[x];
            if (w) {
                v *= w[x];
                v = v > 0 ? v : 0.0; /* also maps NaN (0 * inf) to 0 */
            } else if (p->boundary == VOXA_RL_PERIODIC) {
                v = v > 0 ? v : 0.0;
            } else if (!in_window || x < o2 || x >= o2 + n2) { /* zero: unclamped inside */
                v = 0.0;
            }
            if (d) {
                double dx = v - f[x];
                num += dx * d[x];
                den += d[x] * d[x];
                d[x] = dx;
            }
            f[x] = v;
            b[x] = v;
        }
        if (d) {
            R->dots[2 * r] = num;
            R->dots[2 * r + 1] = den;
        }
    }
    return VOXA_OK;
}

/* y = x (x / x_prev)^alpha where both are > 0, else x (the exponent
 * clamped to [-16, 16] as in deconv_rl.c); x_prev <- x; f, buf <- y. */
static voxa_status pass_extrapolate(int64_t lo, int64_t hi, int tid, void *ctx) {
    run64 *R = ctx;
    const voxa_rl_plan *p = R->p;
    int64_t L2 = p->L[2];
    (void)tid;
    for (int64_t r = lo; r < hi; r++) {
        double *f = R->f + r * L2, *xp = R->xprev + r * L2, *b = p->buf64 + r * p->px;
        for (int64_t x = 0; x < L2; x++) {
            double c = f[x], o = xp[x], y = c;
            if (c > 0 && o > 0) {
                double t = R->alpha * (log2(c) - log2(o));
                y = c * exp2(t < -16 ? -16 : t > 16 ? 16 : t);
            }
            xp[x] = c;
            f[x] = y;
            b[x] = y;
        }
    }
    return VOXA_OK;
}

/* The window of the box estimate to `out` (f32/f64, any strides), clipped
 * to [-1, 1] if asked. */
static void store(const voxa_rl_plan *p, const double *f, voxa_array *out, int clip) {
    int nd = out->ndim;
    int64_t s0 = nd == 3 ? out->strides[0] : 0;
    int64_t s1 = nd >= 2 ? out->strides[nd - 2] : 0;
    int64_t s2 = out->strides[nd - 1];
    for (int64_t z = 0; z < p->n[0]; z++)
        for (int64_t y = 0; y < p->n[1]; y++) {
            const double *src =
                f + ((z + p->off[0]) * p->L[1] + y + p->off[1]) * p->L[2] + p->off[2];
            char *dst = (char *)out->data + z * s0 + y * s1;
            for (int64_t x = 0; x < p->n[2]; x++) {
                double v = src[x];
                if (clip) v = v > 1 ? 1.0 : v < -1 ? -1.0 : v;
                if (out->dtype == VOXA_F64) *(double *)(dst + x * s2) = v;
                else *(float *)(dst + x * s2) = (float)v;
            }
        }
}

/* EINVAL naming the first of g[0, n) that is NaN or infinite. */
static voxa_status check_finite(const double *g, int64_t n, const char *name) {
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(g[i]))
            return voxa__error(VOXA_EINVAL, "%s: value at flat index %lld is NaN or infinite",
                               name, (long long)i);
    return VOXA_OK;
}

/* c2r(r2c(buf) * h) in place, h or its conjugate. */
static voxa_status convolve(run64 *R, const fftw_complex *h, voxa__range_fn mul) {
    const voxa_rl_plan *p = R->p;
    fftw_execute_dft_r2c(p->fwd64, p->buf64, (fftw_complex *)p->buf64);
    R->h = h;
    VOXA_CHECK(voxa__parallel_for(p->nc, 16384, mul, R));
    fftw_execute_dft_c2r(p->inv64, (fftw_complex *)p->buf64, p->buf64);
    return VOXA_OK;
}

voxa_status voxa__rl_execute_f64(const voxa_rl_plan *p, const voxa_array *in, voxa_array *out,
                                 const voxa_rl_options *opt) {
    int64_t nwin = p->n[0] * p->n[1] * p->n[2];
    /* a float64 C-contiguous image is read in place (after its check) */
    int direct = in->dtype == VOXA_F64 && voxa_array_is_c_contiguous(in);
    double *gbuf = direct ? NULL : voxa__malloc((size_t)nwin, sizeof(double));
    double *f = voxa__malloc((size_t)p->nbox, sizeof(double));
    double *acc = NULL, *dots = NULL;
    voxa_status st = VOXA_OK;
    VOXA_GOTO_IF((!direct && !gbuf) || !f, VOXA_ENOMEM, "deconvolution: cannot allocate the "
                 "double image and estimate (%lld + %lld doubles)", (long long)nwin,
                 (long long)p->nbox);
    voxa__advise_huge_pages(f, (size_t)p->nbox * sizeof(double));
    if (direct) {
        st = check_finite(in->data, nwin, "image");
    } else {
        voxa__advise_huge_pages(gbuf, (size_t)nwin * sizeof(double));
        st = voxa__deconv_load_f64(in, gbuf, "image");
    }
    if (st != VOXA_OK) goto done;
    const double *g = direct ? (const double *)in->data : gbuf;
    run64 R = {.p = p, .g = g, .f = f,
               .fe = opt->filter_epsilon > 0 ? opt->filter_epsilon : -INFINITY};
    if (opt->accelerate) {
        acc = voxa__calloc((size_t)p->nbox * 2, sizeof(double));
        dots = voxa__calloc((size_t)p->rows * 2, sizeof(double));
        VOXA_GOTO_IF(!acc || !dots, VOXA_ENOMEM,
                     "deconvolution: cannot allocate acceleration buffers");
        R.xprev = acc;
        R.step = acc + p->nbox;
        R.dots = dots;
    }
    if (p->boundary == VOXA_RL_FREE) { /* the flat start: the image's mean */
        double s = 0;
        for (int64_t i = 0; i < nwin; i++) s += g[i];
        R.mean = s / (double)nwin;
    }
    int64_t rgrain = 16384 / p->L[2] + 1;
    st = voxa__parallel_for(p->rows, rgrain, pass_start, &R);
    if (st == VOXA_OK) st = voxa__parallel_for(p->rows, rgrain, pass_load, &R);
    if (st == VOXA_OK) st = voxa__progress(&opt->progress, 0, opt->iterations);
    double a_next = 0; /* the alpha of the next extrapolation: one pass behind
                        * (deconv_rl.c, which extrapolates inside the update) */
    for (int it = 0; st == VOXA_OK && it < opt->iterations; it++) {
        if (opt->accelerate && it > 0) {
            R.alpha = a_next;
            a_next = 0;
            if (it >= 2) { /* two steps made: their dot products are set */
                double num = 0, den = 0;
                for (int64_t r = 0; r < p->rows; r++) {
                    num += dots[2 * r];
                    den += dots[2 * r + 1];
                }
                double a = den > 0 ? num / den : 0;
                a_next = a < 0 ? 0 : a > 1 ? 1 : a;
            }
            st = voxa__parallel_for(p->rows, rgrain, pass_extrapolate, &R);
        }
        if (st == VOXA_OK) st = convolve(&R, p->hf64, pass_mul_fwd);
        if (st == VOXA_OK) st = voxa__parallel_for(p->rows, rgrain, pass_ratio, &R);
        if (st == VOXA_OK) st = convolve(&R, p->hb64, pass_mul_adj);
        if (st == VOXA_OK) st = voxa__parallel_for(p->rows, rgrain, pass_update, &R);
        if (st == VOXA_OK) st = voxa__progress(&opt->progress, it + 1, opt->iterations);
    }
    if (st == VOXA_OK) store(p, f, out, opt->clip);
done:
    voxa__free(gbuf);
    voxa__free(f);
    voxa__free(acc);
    voxa__free(dots);
    return st;
}
