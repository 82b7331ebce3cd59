/* Richardson-Lucy on a GPU backend, the whole iteration resident on the
 * device (kernels: deconv.cl; FFTs: VkFFT on opencl, cuFFT on cuda through
 * backend/fft_gpu.c).
 *
 * The host plan (deconv_plan.c) fixes what does not change per image: the
 * FFT box and window offset (same padding and size rules as the CPU), the
 * PSF's transform(s), scaled by 1/|box|, and the border weights 1/H^T(w) of
 * the free mode (exact, from a summed-area table, one row per row class).
 * They are uploaded once per run, the weights as their class table, expanded
 * on the device; a staged plan (free mode) has no 3-D transform of the PSF,
 * so the device makes it with its own FFT (float32 round-off apart, the
 * CPU's psf_transform). Then each iteration is, on the device and without a copy:
 *   r2c(b) -> c;  c *= Hf;  c2r -> b      (blurred estimate)
 *   ratio(b, g)                           (mode rules of deconv_rl.c)
 *   r2c(b) -> c;  c *= conj(Hb);  c2r -> b
 *   update(f, b): f, b <- f * b (* 1/a), clamped as the CPU does
 * i.e. the CPU's four FFTs and four fused passes. With acceleration the
 * update kernel also keeps the step and extrapolates the next start with the
 * CPU's alpha (one step behind the paper's, deconv_rl.c), and a kernel makes
 * the per-row dot products in double, read back (2 per box row) and summed
 * in row order on the host, as the CPU does. Only the
 * result window comes back, straight into a C-contiguous float32 `out`. Results equal the CPU's to the FFTs' float32
 * round-off (tests/c/test_deconv_gpu.c).
 *
 * Device memory (floats; B box voxels, C = B / L2 * (L2 / 2 + 1) complex
 * coefficients, n image voxels): work B + 2C, PSF transform 2C (x2 for zero
 * mode with an even PSF extent), estimate B, image n, weights B (free; and
 * while they and H are made, the PSF and the weights' class table),
 * acceleration 3B floats + 2 doubles per box row; plus the FFT library's
 * work space. voxa__rl_gpu_bytes computes it. */
#include "deconv_gpu.h"
#include "backend/gpu.h"
#include "deconv_internal.h"

#include <math.h>
#include <string.h>

/* Free mode's transients while H and the weights are made on the device:
 * the PSF and the weights' class table (K_d = m_d + L_d - n_d row classes). */
static int64_t free_transients(const int64_t m[3], const int64_t L[3], const int64_t n[3]) {
    return m[0] * m[1] * m[2] + (m[0] + L[0] - n[0]) * (m[1] + L[1] - n[1]) * L[2];
}

int64_t voxa__rl_gpu_bytes(const voxa_rl_plan *p, int accelerate) {
    if (!p) return 0;
    int64_t B = p->nbox, C2 = 2 * p->nc, n = p->n[0] * p->n[1] * p->n[2];
    int64_t floats = B + C2 + C2 * (p->hb != p->hf ? 2 : 1) + B + n +
                     (p->boundary == VOXA_RL_FREE ? B + free_transients(p->m, p->L, p->n) : 0) +
                     (accelerate ? 3 * B : 0);
    return 4 * floats + (accelerate ? 16 * p->rows : 0);
}

/* Smallest 2^a 3^b 5^c 7^d >= n, as deconv_plan.c sizes the FFT box. */
static int64_t fast_size(int64_t n) {
    for (int64_t s = n > 1 ? n : 1;; s++) {
        int64_t r = s;
        static const int p[] = {2, 3, 5, 7};
        for (int i = 0; i < 4; i++)
            while (r % p[i] == 0) r /= p[i];
        if (r == 1) return s;
    }
}

voxa_status voxa__rl_gpu_bytes_for(int ndim, const int64_t *shape, const int64_t *psf_shape,
                                   voxa_rl_boundary boundary, int accelerate, int64_t *total,
                                   int64_t *largest) {
    VOXA_FAIL_IF(ndim < 1 || ndim > 3 || !shape || !psf_shape || !total || !largest,
                 VOXA_EINVAL, "deconvolution: bad arguments for the device memory");
    VOXA_FAIL_IF((unsigned)boundary > 2, VOXA_EINVAL, "boundary: invalid mode %d",
                 (int)boundary);
    int64_t L[3] = {1, 1, 1}, M[3] = {1, 1, 1}, N[3] = {1, 1, 1}, n = 1;
    int even = 0;
    for (int d = 0; d < ndim; d++) {
        int64_t a = shape[d], m = psf_shape[d];
        M[3 - ndim + d] = m;
        N[3 - ndim + d] = a;
        VOXA_FAIL_IF(a < 1 || m < 1, VOXA_EINVAL,
                     "deconvolution: image extent %lld, PSF extent %lld on axis %d",
                     (long long)a, (long long)m, d);
        /* a PSF longer than the image: zero mode only, and on the CPU */
        VOXA_FAIL_IF(m > a, boundary == VOXA_RL_ZERO ? VOXA_EUNSUPPORTED : VOXA_EINVAL,
                     "psf: shape[%d] = %lld is larger than the image's %lld%s", d,
                     (long long)m, (long long)a,
                     boundary == VOXA_RL_ZERO ? " (boundary 'zero' runs it on the cpu backend)"
                                              : "");
        L[3 - ndim + d] = boundary == VOXA_RL_PERIODIC ? a : a + m - 1 > 1 ? fast_size(a + m - 1)
                                                                             : 1;
        n *= a;
        if (m % 2 == 0) even = 1;
    }
    int64_t rows = L[0] * L[1], B = rows * L[2], C2 = 2 * rows * (L[2] / 2 + 1);
    int64_t floats = 2 * B + n + C2 * ((boundary == VOXA_RL_ZERO && even) ? 3 : 2) +
                     (boundary == VOXA_RL_FREE ? B + free_transients(M, L, N) : 0) +
                     (accelerate ? 3 * B : 0);
    *total = 4 * floats + (accelerate ? 16 * rows : 0);
    *largest = 4 * (C2 > B ? C2 : B);
    return VOXA_OK;
}

/* The C-order float window w into out (f32/f64, any strides), clipped to
 * [-1, 1] if asked. */
static void store(const float *w, voxa_array *out, int clip) {
    int64_t n = voxa_array_size(out), idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i++) {
        float v = w[i];
        if (clip) v = v > 1 ? 1.0f : v < -1 ? -1.0f : v;
        char *dst = (char *)out->data + voxa__offset(out, idx);
        if (out->dtype == VOXA_F32) *(float *)dst = v;
        else *(double *)dst = (double)v;
        for (int d = out->ndim - 1; d >= 0; d--) {
            if (++idx[d] < out->shape[d]) break;
            idx[d] = 0;
        }
    }
}

#define NBUF 11
enum { BR, BC, HF, HB, EST, IMG, INVA, XPREV, DNEW, DOLD, DOTS };

/* A staged plan (free mode) keeps no 3-D PSF transform: make it on the
 * device into buf[HF], as deconv_plan.c's psf_transform does on the CPU
 * (the PSF with its centre voxel at the origin, r2c, scaled by 1/nbox),
 * which spares the host a box-sized FFT and the upload of its result. */
static voxa_status device_h(voxa__gpu *g, const voxa_rl_plan *p, voxa__gpu_fft *fft,
                            voxa__buf *buf) {
    voxa__buf dh = {0};
    const int64_t *L = p->L, *m = p->m;
    int64_t c[3] = {m[0] / 2, m[1] / 2, m[2] / 2}, n2 = 2 * p->nc;
    float s = (float)(1.0 / (double)p->nbox);
    voxa_status st = voxa__gpu_upload(g, p->psf, (size_t)(m[0] * m[1] * m[2]) * sizeof(float),
                                      "PSF", &dh);
    if (st == VOXA_OK) {
        voxa__arg a[] = {VX_ARG(buf[BR].h), VX_ARG(dh.h), VX_ARG(L[0]), VX_ARG(L[1]),
                         VX_ARG(L[2]), VX_ARG(m[0]), VX_ARG(m[1]), VX_ARG(m[2]),
                         VX_ARG(c[0]), VX_ARG(c[1]), VX_ARG(c[2])};
        st = g->ops->launch(g, "vx_rl_place_psf", p->nbox, 11, a);
    }
    if (st == VOXA_OK) st = voxa__gpu_fft_run(g, fft, 0, &buf[BR], &buf[BC]);
    if (st == VOXA_OK)
        st = voxa__gpu_alloc(g, (size_t)n2 * sizeof(float), "PSF transform", &buf[HF]);
    if (st == VOXA_OK) {
        voxa__arg a[] = {VX_ARG(buf[HF].h), VX_ARG(buf[BC].h), VX_ARG(n2), VX_ARG(s)};
        st = g->ops->launch(g, "vx_rl_scale", n2, 4, a);
    }
    if (dh.h) voxa__gpu_free(g, &dh);
    return st;
}

/* Free mode's border weights for the whole box into w, expanded on the
 * device from the plan's table of row classes (K0 x K1 rows). */
static voxa_status device_weights(voxa__gpu *g, const voxa_rl_plan *p, voxa__buf *w) {
    voxa__buf dt = {0};
    int64_t B = p->nbox, L1 = p->L[1], L2 = p->L[2], K1 = p->K[1];
    voxa_status st = voxa__gpu_upload(g, p->wtab, (size_t)(p->K[0] * K1 * L2) * sizeof(float),
                                      "border weights", &dt);
    if (st == VOXA_OK) st = voxa__gpu_alloc(g, (size_t)B * sizeof(float), "border weights", w);
    if (st == VOXA_OK) {
        voxa__arg a[] = {VX_ARG(w->h),    VX_ARG(dt.h),   VX_ARG(B),      VX_ARG(L1),
                         VX_ARG(L2),      VX_ARG(p->n[0]), VX_ARG(p->n[1]), VX_ARG(p->m[0]),
                         VX_ARG(p->m[1]), VX_ARG(K1)};
        st = g->ops->launch(g, "vx_rl_weights", B, 10, a);
    }
    if (dt.h) voxa__gpu_free(g, &dt);
    return st;
}

voxa_status voxa__rl_gpu_execute(voxa_backend b, voxa_rl_plan *p, const voxa_array *in,
                                 voxa_array *out, const voxa_rl_options *opt) {
    voxa_status st = VOXA_OK;
    voxa_rl_options defaults;
    voxa__gpu *g = NULL;
    voxa__buf buf[NBUF];
    float *gbuf = NULL, *win = NULL;
    double *dots = NULL;
    memset(buf, 0, sizeof buf);
    if (!opt) {
        voxa_rl_options_init(&defaults);
        opt = &defaults;
    }
    VOXA_FAIL_IF(p && p->f64, VOXA_EUNSUPPORTED,
                 "deconvolution: backend '%s': double-precision plans run on the CPU only",
                 voxa_backend_name(b));
    VOXA_CHECK(voxa__rl_check_args(p, in, out, opt));

    int64_t nwin = p->n[0] * p->n[1] * p->n[2], B = p->nbox, nc = p->nc;
    const float *gi;
    double gsum = 0; /* free mode's start is the image's mean, as on the CPU */
    if (in->dtype == VOXA_F32 && voxa_array_is_c_contiguous(in)) {
        VOXA_CHECK(voxa__rl_image_sum(in->data, nwin, 1, &gsum));
        gi = in->data;
    } else {
        gbuf = voxa__malloc((size_t)nwin, sizeof(float));
        VOXA_FAIL_IF(!gbuf, VOXA_ENOMEM, "deconvolution: cannot allocate the image copy");
        st = voxa__deconv_load_f32(in, gbuf, "image");
        if (st == VOXA_OK) st = voxa__rl_image_sum(gbuf, nwin, 0, &gsum);
        if (st != VOXA_OK) goto done;
        gi = gbuf;
    }
    /* a C-contiguous float32 result is read straight into out */
    int direct = out->dtype == VOXA_F32 && voxa_array_is_c_contiguous(out);
    if (!direct) {
        win = voxa__malloc((size_t)nwin, sizeof(float));
        VOXA_GOTO_IF(!win, VOXA_ENOMEM, "deconvolution: cannot allocate the result copy");
    }
    int acc = opt->accelerate != 0;
    if (acc) {
        dots = voxa__malloc((size_t)p->rows * 2, sizeof(double));
        VOXA_GOTO_IF(!dots, VOXA_ENOMEM, "deconvolution: cannot allocate the dot products");
    }

    st = voxa__gpu_acquire(b, "deconvolution", &g);
    if (st != VOXA_OK) goto done;
    int64_t need = voxa__rl_gpu_bytes(p, acc);
    VOXA_GOTO_IF(g->memory > 0 && need > g->memory, VOXA_EUNSUPPORTED,
                 "deconvolution: needs %lld bytes of device memory, %s has %lld (FFT box "
                 "(%lld, %lld, %lld); use the cpu backend or smaller chunks)",
                 (long long)need, g->device, (long long)g->memory, (long long)p->L[0],
                 (long long)p->L[1], (long long)p->L[2]);
    voxa__gpu_fft *fft = NULL;
    int64_t Lf[3];
    for (int d = 0; d < p->ndim; d++) Lf[d] = p->L[3 - p->ndim + d];
    st = voxa__gpu_fft_plan(g, p->ndim, Lf, &fft);
    if (st != VOXA_OK) goto done;

    size_t fb = sizeof(float);
    int mode = (int)p->boundary; /* 0 free, 1 periodic, 2 zero (as deconv.cl) */
    st = voxa__gpu_alloc(g, (size_t)B * fb, "deconvolution work", &buf[BR]);
    if (st == VOXA_OK) st = voxa__gpu_alloc(g, (size_t)nc * 2 * fb, "deconvolution work",
                                            &buf[BC]);
    if (st == VOXA_OK && !p->hf) st = device_h(g, p, fft, buf);
    else if (st == VOXA_OK)
        st = voxa__gpu_upload(g, p->hf, (size_t)nc * 2 * fb, "PSF transform", &buf[HF]);
    if (st == VOXA_OK && p->hb != p->hf)
        st = voxa__gpu_upload(g, p->hb, (size_t)nc * 2 * fb, "PSF transform", &buf[HB]);
    if (st == VOXA_OK) st = voxa__gpu_alloc(g, (size_t)B * fb, "estimate", &buf[EST]);
    if (st == VOXA_OK) st = voxa__gpu_upload(g, gi, (size_t)nwin * fb, "image", &buf[IMG]);
    if (st == VOXA_OK && p->wtab) st = device_weights(g, p, &buf[INVA]);
    for (int k = XPREV; acc && k <= DOLD && st == VOXA_OK; k++)
        st = voxa__gpu_alloc(g, (size_t)B * fb, "acceleration", &buf[k]);
    if (st == VOXA_OK && acc)
        st = voxa__gpu_alloc(g, (size_t)p->rows * 2 * sizeof(double), "dot products",
                             &buf[DOTS]);
    if (st != VOXA_OK) goto done;
    uintptr_t hb = p->hb != p->hf ? buf[HB].h : buf[HF].h;
    uintptr_t inva = p->wtab ? buf[INVA].h : buf[EST].h; /* unread unless free */
    uintptr_t dn = acc ? buf[DNEW].h : buf[EST].h, dold = acc ? buf[DOLD].h : buf[EST].h;
    int64_t L1 = p->L[1], L2 = p->L[2], n0 = p->n[0], n1 = p->n[1], n2 = p->n[2];
    int64_t o0 = p->off[0], o1 = p->off[1], o2 = p->off[2], rows = p->rows;
    int zero = 0, one = 1;

    float mean = p->boundary == VOXA_RL_FREE ? (float)(gsum / (double)nwin) : 0;
    {
        voxa__arg a[] = {VX_ARG(buf[EST].h), VX_ARG(buf[BR].h), VX_ARG(buf[IMG].h),
                         VX_ARG(inva), VX_ARG(B), VX_ARG(L1), VX_ARG(L2), VX_ARG(n0),
                         VX_ARG(n1), VX_ARG(n2), VX_ARG(mode), VX_ARG(mean)};
        st = g->ops->launch(g, "vx_rl_start", B, 12, a);
        if (st != VOXA_OK) goto done;
    }
    st = voxa__progress(&opt->progress, 0, opt->iterations);
    if (st != VOXA_OK) goto done;
    float fe = opt->filter_epsilon > 0 ? (float)opt->filter_epsilon : -INFINITY;
    int have_gold = 0;
    if (acc) { /* x_prev <- the start */
        voxa__arg a[] = {VX_ARG(buf[XPREV].h), VX_ARG(buf[EST].h), VX_ARG(B)};
        st = g->ops->launch(g, "vx_rl_copy", B, 3, a);
        if (st != VOXA_OK) goto done;
    }
    for (int it = 0; it < opt->iterations; it++) {
        /* the update's extrapolation takes the last pass's alpha (deconv_rl.c) */
        float alpha = 0;
        int ext = acc && it + 1 < opt->iterations;
        if (acc && have_gold >= 2) {
            st = g->ops->read(g, &buf[DOTS], 0, dots, (size_t)rows * 2 * sizeof(double));
            if (st != VOXA_OK) goto done;
            double num = 0, den = 0;
            for (int64_t r = 0; r < rows; r++) {
                num += dots[2 * r];
                den += dots[2 * r + 1];
            }
            double a = den > 0 ? num / den : 0;
            alpha = (float)(a < 0 ? 0 : a > 1 ? 1 : a);
        }
        voxa__arg mf[] = {VX_ARG(buf[BC].h), VX_ARG(buf[HF].h), VX_ARG(nc), VX_ARG(zero)};
        voxa__arg mb[] = {VX_ARG(buf[BC].h), VX_ARG(hb), VX_ARG(nc), VX_ARG(one)};
        voxa__arg ra[] = {VX_ARG(buf[BR].h), VX_ARG(buf[IMG].h), VX_ARG(B), VX_ARG(L1),
                          VX_ARG(L2), VX_ARG(n0), VX_ARG(n1), VX_ARG(n2), VX_ARG(o0),
                          VX_ARG(o1), VX_ARG(o2), VX_ARG(mode), VX_ARG(fe)};
        uintptr_t xp = acc ? buf[XPREV].h : buf[EST].h; /* unread without acc */
        voxa__arg up[] = {VX_ARG(buf[BR].h), VX_ARG(buf[EST].h), VX_ARG(inva), VX_ARG(dn),
                          VX_ARG(xp), VX_ARG(B), VX_ARG(L1), VX_ARG(L2), VX_ARG(n0),
                          VX_ARG(n1), VX_ARG(n2), VX_ARG(mode), VX_ARG(acc), VX_ARG(ext),
                          VX_ARG(alpha)};
        if ((st = voxa__gpu_fft_run(g, fft, 0, &buf[BR], &buf[BC])) != VOXA_OK ||
            (st = g->ops->launch(g, "vx_rl_mul", nc, 4, mf)) != VOXA_OK ||
            (st = voxa__gpu_fft_run(g, fft, 1, &buf[BR], &buf[BC])) != VOXA_OK ||
            (st = g->ops->launch(g, "vx_rl_ratio", B, 13, ra)) != VOXA_OK ||
            (st = voxa__gpu_fft_run(g, fft, 0, &buf[BR], &buf[BC])) != VOXA_OK ||
            (st = g->ops->launch(g, "vx_rl_mul", nc, 4, mb)) != VOXA_OK ||
            (st = voxa__gpu_fft_run(g, fft, 1, &buf[BR], &buf[BC])) != VOXA_OK ||
            (st = g->ops->launch(g, "vx_rl_update", B, 15, up)) != VOXA_OK)
            goto done;
        if (acc) {
            if (have_gold >= 1 && it + 1 < opt->iterations) {
                voxa__arg a[] = {VX_ARG(dn), VX_ARG(dold), VX_ARG(buf[DOTS].h), VX_ARG(rows),
                                 VX_ARG(L2)};
                st = g->ops->launch(g, "vx_rl_dots", rows, 5, a);
                if (st != VOXA_OK) goto done;
            }
            uintptr_t t = dn;
            dn = dold;
            dold = t;
            have_gold++;
        }
        if (opt->progress.fn && (st = g->ops->finish(g)) != VOXA_OK) goto done;
        st = voxa__progress(&opt->progress, it + 1, opt->iterations);
        if (st != VOXA_OK) goto done;
    }
    {
        voxa__arg a[] = {VX_ARG(buf[BC].h), VX_ARG(buf[EST].h), VX_ARG(nwin), VX_ARG(L1),
                         VX_ARG(L2), VX_ARG(n1), VX_ARG(n2), VX_ARG(o0), VX_ARG(o1),
                         VX_ARG(o2)};
        st = g->ops->launch(g, "vx_rl_window", nwin, 10, a);
        if (st == VOXA_OK)
            st = g->ops->read(g, &buf[BC], 0, direct ? out->data : (void *)win, (size_t)nwin * fb);
        if (st != VOXA_OK) goto done;
    }
    if (direct && opt->clip) {
        float *o = out->data;
        for (int64_t i = 0; i < nwin; i++) o[i] = o[i] > 1 ? 1.0f : o[i] < -1 ? -1.0f : o[i];
    } else if (!direct) {
        store(win, out, opt->clip);
    }
done:
    if (g) {
        for (int k = 0; k < NBUF; k++)
            if (buf[k].h) voxa__gpu_free(g, &buf[k]);
        voxa__gpu_release(g);
    }
    voxa__free(gbuf);
    voxa__free(win);
    voxa__free(dots);
    return st;
}

voxa_status voxa__rl_gpu(voxa_backend b, const voxa_array *in, const voxa_array *psf,
                         voxa_rl_boundary boundary, const voxa_rl_options *opt,
                         voxa_array *out) {
    VOXA_CHECK(voxa_array_check(in, "image"));
    VOXA_FAIL_IF(in->ndim < 1 || in->ndim > 3, VOXA_EINVAL,
                 "image: ndim %d not supported (1, 2 or 3)", in->ndim);
    voxa_rl_plan *p = NULL;
    /* the host plans run once, for H: not worth measuring */
    VOXA_CHECK(voxa_rl_plan_new(&p, in->ndim, in->shape, psf, boundary, VOXA_RL_ESTIMATE));
    voxa_status st = voxa__rl_gpu_execute(b, p, in, out, opt);
    voxa_rl_plan_free(p);
    return st;
}

voxa_status voxa_rl_plan_execute_on(voxa_backend b, voxa_rl_plan *p, const voxa_array *in,
                                    voxa_array *out, const voxa_rl_options *opt) {
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_rl_plan_execute(p, in, out, opt);
    return voxa__rl_gpu_execute(b, p, in, out, opt);
}

voxa_status voxa_deconv_rl_on(voxa_backend b, const voxa_array *in, const voxa_array *psf,
                              voxa_array *out, voxa_rl_boundary boundary,
                              const voxa_rl_options *opt) {
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_deconv_rl(in, psf, out, boundary, opt);
    return voxa__rl_gpu(b, in, psf, boundary, opt, out);
}
