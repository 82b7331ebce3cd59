/* Richardson-Lucy on the GPU backends against the CPU (FFTW) result.
 *
 * Tolerance: max |gpu - cpu| <= 1e-4 * max |cpu| after 10 to 50 iterations
 * (the FFTs of VkFFT / cuFFT and FFTW round differently in float32; every
 * element-wise step is the same operation in the same order). Data of the
 * issue's kind: a positive background with bright spots, blurred by a
 * Gaussian PSF (anisotropic, even and odd extents), plus noise. Each check
 * first makes sure the CPU result is far from the input, so a GPU path that
 * did nothing could not pass.
 *
 * Sizes are small, odd and prime (VkFFT compiles its kernels per size: a
 * few seconds each on PoCL; free and zero modes share their FFT box, and the
 * plan cache makes the second one free). Backends: VOXA_TEST_BACKENDS
 * (default "opencl", PoCL under `make test`; gpu-check.sh passes cuda too);
 * a listed backend that cannot run is a failure, not a skip. */
#include "vtest.h"
#include "../../src/ops/deconv/deconv_gpu.h"
#include "../../src/ops/deconv/deconv_internal.h"

#include <math.h>
#include <stdint.h>

static voxa_backend gpus[2];
static int ngpus;

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double urand(void) {
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

/* A microscopy-like scene: background 0.2..0.3, ~3% bright spots of 5..10,
 * 5% multiplicative noise (not blurred: RL then sharpens hard, which makes
 * the most of any round-off difference). */
static void make_image(voxa_array *a) {
    int64_t n = voxa_array_size(a);
    float *v = a->data;
    for (int64_t i = 0; i < n; i++) v[i] = (float)(0.2 + 0.1 * urand());
    for (int64_t i = 0; i < n; i++)
        if (urand() < 0.03) v[i] += (float)(5 + 5 * urand());
    for (int64_t i = 0; i < n; i++) v[i] *= (float)(0.95 + 0.1 * urand());
}

static double max_abs(const voxa_array *a) {
    double m = 0;
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0; i < n; i++) {
        double x = a->dtype == VOXA_F32 ? ((float *)a->data)[i] : ((double *)a->data)[i];
        if (fabs(x) > m) m = fabs(x);
    }
    return m;
}

static double max_diff(const voxa_array *a, const voxa_array *b) {
    double m = 0;
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0; i < n; i++) {
        double x = a->dtype == VOXA_F32 ? ((float *)a->data)[i] : ((double *)a->data)[i];
        double y = b->dtype == VOXA_F32 ? ((float *)b->data)[i] : ((double *)b->data)[i];
        if (!(fabs(x - y) <= m)) m = isnan(x - y) ? INFINITY : fabs(x - y);
    }
    return m;
}

/* RL on cpu and on each GPU; the GPU within tol of the cpu (relative to
 * the cpu's maximum), and the cpu result far from the image. */
static void compare(int ndim, const int64_t *shape, const int64_t *pshape, const double *sigma,
                    voxa_rl_boundary bnd, const voxa_rl_options *opt, const char *what) {
    voxa_array img, psf, ref, got;
    CHECK_OK(voxa_array_new(&img, VOXA_F32, ndim, shape));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, ndim, pshape));
    CHECK_OK(voxa_array_new(&ref, VOXA_F32, ndim, shape));
    CHECK_OK(voxa_array_new(&got, VOXA_F32, ndim, shape));
    make_image(&img);
    CHECK_OK(voxa_psf_gaussian(&psf, sigma));
    CHECK_OK(voxa_deconv_rl(&img, &psf, &ref, bnd, opt));
    double scale = max_abs(&ref);
    CHECK(max_diff(&ref, &img) > 1e-2 * scale); /* RL did something */
    for (int k = 0; k < ngpus; k++) {
        memset(got.data, 0, (size_t)voxa_array_size(&got) * 4);
        CHECK_OK(voxa_deconv_rl_on(gpus[k], &img, &psf, &got, bnd, opt));
        double d = max_diff(&ref, &got) / scale;
        fprintf(stderr, "  %-6s %-8s %-34s max rel diff %.2e\n", voxa_backend_name(gpus[k]),
                voxa_rl_boundary_name(bnd), what, d);
        CHECK(d <= 1e-4);
    }
    voxa_array_free(&img);
    voxa_array_free(&psf);
    voxa_array_free(&ref);
    voxa_array_free(&got);
}

static void test_3d_odd_prime(void) {
    int64_t sh[3] = {7, 11, 13}, ps[3] = {3, 5, 3};
    double sg[3] = {0.8, 1.2, 0.7};
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 10;
    compare(3, sh, ps, sg, VOXA_RL_PERIODIC, &o, "(7,11,13) psf (3,5,3) 10 it");
    compare(3, sh, ps, sg, VOXA_RL_FREE, &o, "(7,11,13) psf (3,5,3) 10 it");
    compare(3, sh, ps, sg, VOXA_RL_ZERO, &o, "(7,11,13) psf (3,5,3) 10 it");
}

static void test_2d_even_psf_accel(void) {
    int64_t sh[2] = {17, 19}, ps[2] = {4, 3};
    double sg[2] = {1.0, 0.8};
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 30;
    compare(2, sh, ps, sg, VOXA_RL_ZERO, &o, "(17,19) psf (4,3) 30 it");
    o.filter_epsilon = 0.3;
    compare(2, sh, ps, sg, VOXA_RL_ZERO, &o, "(17,19) psf (4,3) 30 it eps 0.3");
    o.filter_epsilon = 0;
    o.accelerate = 1;
    compare(2, sh, ps, sg, VOXA_RL_FREE, &o, "(17,19) psf (4,3) 30 it accelerate");
    compare(2, sh, ps, sg, VOXA_RL_PERIODIC, &o, "(17,19) psf (4,3) 30 it accelerate");
}

static void test_1d_long(void) {
    int64_t sh[1] = {31}, ps[1] = {5};
    double sg[1] = {1.1};
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 50;
    compare(1, sh, ps, sg, VOXA_RL_FREE, &o, "(31) psf (5) 50 it");
    compare(1, sh, ps, sg, VOXA_RL_PERIODIC, &o, "(31) psf (5) 50 it");
}

/* Views and dtypes: u16 input (converted), a strided f64 output, clip (also
 * on a C-contiguous f32 output, which the device result is read straight
 * into), a plan executed twice (once per backend) - all against the cpu. */
static void test_views_and_plan(void) {
    int64_t sh[2] = {17, 19}, ps[2] = {4, 3}, big[2] = {17, 38};
    double sg[2] = {1.0, 0.8};
    voxa_array img, u16, psf, ref, full, view, f32;
    CHECK_OK(voxa_array_new(&img, VOXA_F32, 2, sh));
    CHECK_OK(voxa_array_new(&u16, VOXA_U16, 2, sh));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 2, ps));
    CHECK_OK(voxa_array_new(&ref, VOXA_F64, 2, sh));
    CHECK_OK(voxa_array_new(&full, VOXA_F64, 2, big));
    CHECK_OK(voxa_array_new(&f32, VOXA_F32, 2, sh));
    make_image(&img);
    for (int64_t i = 0; i < 17 * 19; i++)
        ((uint16_t *)u16.data)[i] = (uint16_t)(100 * ((float *)img.data)[i]);
    CHECK_OK(voxa_psf_gaussian(&psf, sg));
    view = full;
    view.shape[1] = 19;
    view.strides[1] = 16; /* every other column */
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 12;
    o.clip = 1;
    voxa_rl_plan *p = NULL;
    CHECK_OK(voxa_rl_plan_new(&p, 2, sh, &psf, VOXA_RL_ZERO, 0));
    CHECK_OK(voxa_rl_plan_execute(p, &u16, &ref, &o));
    for (int k = 0; k < ngpus; k++) {
        memset(full.data, 0, 17 * 38 * 8);
        CHECK_OK(voxa_rl_plan_execute_on(gpus[k], p, &u16, &view, &o));
        double m = 0;
        for (int64_t y = 0; y < 17; y++)
            for (int64_t x = 0; x < 19; x++) {
                double a = ((double *)ref.data)[y * 19 + x];
                double b = ((double *)full.data)[y * 38 + 2 * x];
                CHECK(((double *)full.data)[y * 38 + 2 * x + 1] == 0); /* untouched */
                if (fabs(a - b) > m) m = fabs(a - b);
            }
        CHECK(max_abs(&ref) == 1.0); /* clip hit */
        CHECK(m <= 1e-4);
        CHECK_OK(voxa_rl_plan_execute_on(gpus[k], p, &u16, &f32, &o));
        double m32 = 0, top = 0;
        for (int64_t i = 0; i < 17 * 19; i++) {
            double b = ((float *)f32.data)[i];
            m32 = fmax(m32, fabs(((double *)ref.data)[i] - b));
            top = fmax(top, fabs(b));
        }
        CHECK(top == 1.0 && m32 <= 1e-4);
    }
    voxa_rl_plan_free(p);
    voxa_array_free(&img);
    voxa_array_free(&u16);
    voxa_array_free(&psf);
    voxa_array_free(&ref);
    voxa_array_free(&full);
    voxa_array_free(&f32);
}

/* Progress: called 0..iterations in order; returning 0 cancels (ECANCELLED)
 * and the device is left usable for the next run. */
static int64_t seen[64];
static int nseen, stop_at;
static int on_progress(int64_t done, int64_t total, void *user) {
    if (nseen < 64) seen[nseen++] = done;
    return !(stop_at >= 0 && done >= stop_at) && total == 6;
}

static void test_progress(void) {
    int64_t sh[2] = {9, 10}, ps[2] = {3, 3};
    double sg[2] = {1, 1};
    voxa_array img, psf, out;
    CHECK_OK(voxa_array_new(&img, VOXA_F32, 2, sh));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 2, ps));
    CHECK_OK(voxa_array_new(&out, VOXA_F32, 2, sh));
    make_image(&img);
    CHECK_OK(voxa_psf_gaussian(&psf, sg));
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 6;
    o.progress.fn = on_progress;
    for (int k = 0; k < ngpus; k++) {
        nseen = 0;
        stop_at = -1;
        CHECK_OK(voxa_deconv_rl_on(gpus[k], &img, &psf, &out, VOXA_RL_PERIODIC, &o));
        CHECK(nseen == 7);
        for (int i = 0; i < nseen; i++) CHECK(seen[i] == i);
        nseen = 0;
        stop_at = 2;
        CHECK_STATUS(voxa_deconv_rl_on(gpus[k], &img, &psf, &out, VOXA_RL_PERIODIC, &o),
                     VOXA_ECANCELLED);
        CHECK(nseen == 3);
        stop_at = -1;
        CHECK_OK(voxa_deconv_rl_on(gpus[k], &img, &psf, &out, VOXA_RL_PERIODIC, &o));
    }
    voxa_array_free(&img);
    voxa_array_free(&psf);
    voxa_array_free(&out);
}

/* Errors: the CPU's checks and messages; a non-GPU backend for the typed
 * entry is refused; nothing crashes. */
/* The device-memory formula from shapes equals the one from a plan (same
 * box rules), for every mode, odd/even PSFs, with and without acceleration. */
static void test_device_bytes(void) {
    int64_t shapes[3][3] = {{7, 11, 13}, {1, 17, 19}, {1, 1, 31}};
    int64_t psfs[3][3] = {{3, 5, 3}, {1, 4, 3}, {1, 1, 6}};
    for (int c = 0; c < 3; c++) {
        int nd = 3 - c;
        voxa_array psf;
        CHECK_OK(voxa_array_new(&psf, VOXA_F32, nd, psfs[c] + c));
        ((float *)psf.data)[0] = 1;
        for (int mode = 0; mode < 3; mode++)
            for (int acc = 0; acc < 2; acc++) {
                voxa_rl_plan *p = NULL;
                int64_t total = 0, largest = 0;
                CHECK_OK(voxa_rl_plan_new(&p, nd, shapes[c] + c, &psf, (voxa_rl_boundary)mode,
                                          0));
                CHECK_OK(voxa__rl_gpu_bytes_for(nd, shapes[c] + c, psfs[c] + c,
                                                (voxa_rl_boundary)mode, acc, &total, &largest));
                CHECK(total == voxa__rl_gpu_bytes(p, acc));
                CHECK(largest >= 4 * p->nbox && largest < total);
                voxa_rl_plan_free(p);
            }
        voxa_array_free(&psf);
    }
    int64_t total, largest, sh[1] = {5}, big[1] = {6};
    CHECK_STATUS(voxa__rl_gpu_bytes_for(1, sh, big, VOXA_RL_FREE, 0, &total, &largest),
                 VOXA_EINVAL);
}

static void test_errors(void) {
    int64_t sh[2] = {9, 10}, ps[2] = {3, 3}, other[2] = {9, 11};
    double sg[2] = {1, 1};
    voxa_array img, psf, out, bad, i32;
    CHECK_OK(voxa_array_new(&img, VOXA_F32, 2, sh));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 2, ps));
    CHECK_OK(voxa_array_new(&out, VOXA_F32, 2, sh));
    CHECK_OK(voxa_array_new(&bad, VOXA_F32, 2, other));
    CHECK_OK(voxa_array_new(&i32, VOXA_I32, 2, sh));
    make_image(&img);
    CHECK_OK(voxa_psf_gaussian(&psf, sg));
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    for (int k = 0; k < ngpus; k++) {
        voxa_backend b = gpus[k];
        CHECK_STATUS(voxa_deconv_rl_on(b, &img, &psf, &bad, VOXA_RL_FREE, &o), VOXA_EINVAL);
        CHECK_MSG("out: shape");
        CHECK_STATUS(voxa_deconv_rl_on(b, &img, &psf, &i32, VOXA_RL_FREE, &o), VOXA_EINVAL);
        CHECK_MSG("float32 or float64");
        o.iterations = 0;
        CHECK_STATUS(voxa_deconv_rl_on(b, &img, &psf, &out, VOXA_RL_FREE, &o), VOXA_EINVAL);
        CHECK_MSG("iterations");
        o.iterations = 3;
        ((float *)img.data)[7] = NAN;
        CHECK_STATUS(voxa_deconv_rl_on(b, &img, &psf, &out, VOXA_RL_PERIODIC, &o),
                     VOXA_EINVAL);
        CHECK_MSG("flat index 7");
        ((float *)img.data)[7] = 1;
        CHECK_STATUS(voxa_deconv_rl_on(b, &img, &bad, &out, VOXA_RL_FREE, &o), VOXA_EINVAL);
        CHECK_MSG("psf");
        CHECK_STATUS(voxa_deconv_rl_on(b, &img, &psf, &out, (voxa_rl_boundary)7, &o),
                     VOXA_EINVAL);
        CHECK_MSG("boundary");
        CHECK_STATUS(voxa_rl_plan_execute_on(b, NULL, &img, &out, &o), VOXA_EINVAL);
        CHECK_MSG("NULL plan");
    }
    {   /* a size the device FFT may refuse (VkFFT: odd, multi-pass): an error
         * naming it or a result, never a crash */
        int64_t n = 4099, m = 3;
        voxa_array a, h, r;
        CHECK_OK(voxa_array_new(&a, VOXA_F32, 1, &n));
        CHECK_OK(voxa_array_new(&r, VOXA_F32, 1, &n));
        CHECK_OK(voxa_array_new(&h, VOXA_F32, 1, &m));
        ((float *)h.data)[1] = 1;
        for (int64_t i = 0; i < n; i++) ((float *)a.data)[i] = (float)(1 + i % 5);
        for (int k = 0; k < ngpus; k++) {
            voxa_status s = voxa_deconv_rl_on(gpus[k], &a, &h, &r, VOXA_RL_PERIODIC, &o);
            CHECK(s == VOXA_OK || (s == VOXA_EUNSUPPORTED && strstr(voxa_last_error(), "4099")));
            if (s == VOXA_OK) /* a delta PSF gives the image back */
                CHECK(fabsf(((float *)r.data)[4098] - ((float *)a.data)[4098]) < 1e-3f);
        }
        voxa_array_free(&a);
        voxa_array_free(&h);
        voxa_array_free(&r);
    }
    voxa_backend_info ci;
    CHECK_OK(voxa_backend_query(VOXA_BACKEND_CUDA, &ci));
    if (!ci.available) { /* here: a clear EUNSUPPORTED, never a crash */
        CHECK_STATUS(voxa_deconv_rl_on(VOXA_BACKEND_CUDA, &img, &psf, &out, VOXA_RL_FREE, &o),
                     VOXA_EUNSUPPORTED);
        CHECK_MSG("cuda");
    }
    CHECK_STATUS(voxa_deconv_rl_on((voxa_backend)9, &img, &psf, &out, VOXA_RL_FREE, &o),
                 VOXA_EINVAL);
    voxa_array_free(&img);
    voxa_array_free(&psf);
    voxa_array_free(&out);
    voxa_array_free(&bad);
    voxa_array_free(&i32);
}

int main(void) {
    const char *env = getenv("VOXA_TEST_BACKENDS");
    char list[64];
    snprintf(list, sizeof list, "%s", env ? env : "opencl");
    for (char *tok = strtok(list, " ,"); tok && ngpus < 2; tok = strtok(NULL, " ,")) {
        voxa_backend b;
        voxa_backend_info info;
        if (voxa_backend_from_name(tok, &b) != VOXA_OK ||
            (b != VOXA_BACKEND_OPENCL && b != VOXA_BACKEND_CUDA))
            continue;
        CHECK_OK(voxa_backend_query(b, &info));
        CHECK(info.available);
        if (!info.available) {
            fprintf(stderr, "backend %s listed in VOXA_TEST_BACKENDS cannot run: %s\n", tok,
                    info.why);
            continue;
        }
        gpus[ngpus++] = b;
    }
    RUN(test_3d_odd_prime);
    RUN(test_2d_even_psf_accel);
    RUN(test_1d_long);
    RUN(test_views_and_plan);
    RUN(test_device_bytes);
    RUN(test_progress);
    RUN(test_errors);
    VTEST_END();
}
