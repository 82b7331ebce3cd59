/* Richardson–Lucy and PSF helpers: algebraic properties (delta PSF is the
 * identity, flux conservation, constant images are fixed points of the
 * wrap-free mode), plan reuse, cancellation, bad inputs. Parity with the
 * published formula and scikit-image is in tests/python/test_deconv.py. */
#include "vtest.h"

#include <math.h>
#include <stdlib.h>

static uint32_t rng_state = 12345;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f;
}

static double max_rel(const float *a, const float *b, int64_t n) {
    double m = 0, d = 0;
    for (int64_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return m > 0 ? d / m : d;
}

static void test_delta_identity(void) {
    int64_t shape[3] = {9, 12, 7}, ps[3] = {3, 4, 5};
    voxa_array g, psf, out;
    CHECK_OK(voxa_array_new(&g, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&out, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&psf, VOXA_F64, 3, ps));
    float *gv = g.data;
    for (int64_t i = 0; i < voxa_array_size(&g); i++) gv[i] = 0.5f + frand();
    ((double *)psf.data)[(1 * 4 + 2) * 5 + 2] = 1.0; /* centre (1, 2, 2) */
    for (int b = 0; b < 2; b++) { /* free, periodic */
        voxa_rl_options o;
        voxa_rl_options_init(&o);
        o.iterations = 3;
        CHECK_OK(voxa_deconv_rl(&g, &psf, &out, (voxa_rl_boundary)b, &o));
        CHECK(max_rel(out.data, gv, voxa_array_size(&g)) < 1e-5);
    }
    voxa_array_free(&g);
    voxa_array_free(&psf);
    voxa_array_free(&out);
}

static void test_flux_and_flat(void) {
    int64_t shape[2] = {33, 40}, ps[2] = {7, 6};
    voxa_array g, psf, out;
    double sig[2] = {1.5, 1.0};
    CHECK_OK(voxa_array_new(&g, VOXA_U16, 2, shape));
    CHECK_OK(voxa_array_new(&out, VOXA_F64, 2, shape));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 2, ps));
    CHECK_OK(voxa_psf_gaussian(&psf, sig));
    double s = 0;
    CHECK_OK(voxa_psf_check(&psf, &s));
    CHECK(fabs(s - 1) < 1e-6);
    uint16_t *gv = g.data;
    double gs = 0;
    for (int64_t i = 0; i < 33 * 40; i++) gs += gv[i] = (uint16_t)(frand() * 1000);
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 10;
    CHECK_OK(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_PERIODIC, &o));
    double fs = 0, mn = 1;
    for (int64_t i = 0; i < 33 * 40; i++) {
        fs += ((double *)out.data)[i];
        mn = fmin(mn, ((double *)out.data)[i]);
    }
    CHECK(fabs(fs / gs - 1) < 1e-4);
    CHECK(mn >= 0);
    /* a flat image is a fixed point of the wrap-free mode, borders included */
    for (int64_t i = 0; i < 33 * 40; i++) gv[i] = 300;
    o.accelerate = 1;
    CHECK_OK(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_FREE, &o));
    double dev = 0;
    for (int64_t i = 0; i < 33 * 40; i++) dev = fmax(dev, fabs(((double *)out.data)[i] - 300));
    CHECK(dev < 300 * 1e-4);
    voxa_array_free(&g);
    voxa_array_free(&psf);
    voxa_array_free(&out);
}

static int stop_at_two(int64_t done, int64_t total, void *user) {
    *(int *)user += 1;
    return done < 2;
}

static void test_plan_reuse_and_cancel(void) {
    int64_t shape[3] = {6, 16, 18}, ps[3] = {3, 5, 4};
    voxa_array a, b, psf, o1, o2;
    double sig[3] = {0.8, 1.2, 1.0};
    CHECK_OK(voxa_array_new(&a, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&b, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&o1, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&o2, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 3, ps));
    CHECK_OK(voxa_psf_gaussian(&psf, sig));
    for (int64_t i = 0; i < voxa_array_size(&a); i++) {
        ((float *)a.data)[i] = frand();
        ((float *)b.data)[i] = 2 * frand();
    }
    for (int mode = 0; mode < 3; mode++) {
        voxa_rl_plan *p = NULL;
        voxa_rl_options o;
        voxa_rl_options_init(&o);
        o.iterations = 4;
        CHECK_OK(voxa_rl_plan_new(&p, 3, shape, &psf, (voxa_rl_boundary)mode, 0));
        CHECK(voxa_rl_plan_bytes(p) > 0);
        /* a plan is reusable: b then a gives the same a as a fresh call */
        CHECK_OK(voxa_rl_plan_execute(p, &b, &o2, &o));
        CHECK_OK(voxa_rl_plan_execute(p, &a, &o1, &o));
        CHECK_OK(voxa_deconv_rl(&a, &psf, &o2, (voxa_rl_boundary)mode, &o));
        CHECK(memcmp(o1.data, o2.data, (size_t)voxa_array_size(&a) * 4) == 0);
        int calls = 0;
        o.progress.fn = stop_at_two;
        o.progress.user = &calls;
        CHECK_STATUS(voxa_rl_plan_execute(p, &a, &o1, &o), VOXA_ECANCELLED);
        CHECK(calls == 3);
        voxa_rl_plan_free(p);
        /* the planner flags: each alone, two together or unknown bits refused */
        for (int fl = 1; fl <= 4; fl *= 2) {
            CHECK_OK(voxa_rl_plan_new(&p, 3, shape, &psf, (voxa_rl_boundary)mode, fl));
            voxa_rl_plan_free(p);
        }
        p = NULL;
        CHECK_STATUS(voxa_rl_plan_new(&p, 3, shape, &psf, (voxa_rl_boundary)mode,
                                      VOXA_RL_MEASURE | VOXA_RL_MEASURE_PLANES),
                     VOXA_EINVAL);
        CHECK_STATUS(voxa_rl_plan_new(&p, 3, shape, &psf, (voxa_rl_boundary)mode,
                                      VOXA_RL_MEASURE_PLANES | VOXA_RL_ESTIMATE),
                     VOXA_EINVAL);
        CHECK_STATUS(voxa_rl_plan_new(&p, 3, shape, &psf, (voxa_rl_boundary)mode, 16), VOXA_EINVAL);
        CHECK(p == NULL);
    }
    voxa_rl_plan_free(NULL);
    voxa_array_free(&a);
    voxa_array_free(&b);
    voxa_array_free(&o1);
    voxa_array_free(&o2);
    voxa_array_free(&psf);
}

static void test_bad_inputs(void) {
    int64_t shape[2] = {10, 12}, ps[2] = {3, 3}, big[2] = {11, 3}, s3[3] = {3, 3, 1};
    voxa_array g, psf, out, pbig, p3, pu8;
    CHECK_OK(voxa_array_new(&g, VOXA_F32, 2, shape));
    CHECK_OK(voxa_array_new(&out, VOXA_F32, 2, shape));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 2, ps));
    CHECK_OK(voxa_array_new(&pbig, VOXA_F32, 2, big));
    CHECK_OK(voxa_array_new(&p3, VOXA_F32, 3, s3));
    CHECK_OK(voxa_array_new(&pu8, VOXA_U8, 2, ps));
    float *h = psf.data;
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    /* zero sum */
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_FREE, &o), VOXA_EINVAL);
    CHECK_MSG("sum is 0");
    h[4] = 1;
    CHECK_OK(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_FREE, &o));
    h[0] = -0.5f;
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_FREE, &o), VOXA_EINVAL);
    CHECK_MSG("negative");
    h[0] = NAN;
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_FREE, &o), VOXA_EINVAL);
    CHECK_MSG("not finite");
    h[0] = 0;
    ((float *)pbig.data)[0] = 1;
    CHECK_STATUS(voxa_deconv_rl(&g, &pbig, &out, VOXA_RL_FREE, &o), VOXA_EINVAL);
    CHECK_MSG("larger than the image");
    CHECK_STATUS(voxa_deconv_rl(&g, &pbig, &out, VOXA_RL_PERIODIC, &o), VOXA_EINVAL);
    CHECK_MSG("larger than the image");
    CHECK_OK(voxa_deconv_rl(&g, &pbig, &out, VOXA_RL_ZERO, &o)); /* "same": any extent */
    ((float *)p3.data)[4] = 1;
    CHECK_STATUS(voxa_deconv_rl(&g, &p3, &out, VOXA_RL_ZERO, &o), VOXA_EINVAL);
    CHECK_MSG("ndim");
    ((float *)g.data)[17] = INFINITY;
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_PERIODIC, &o), VOXA_EINVAL);
    CHECK_MSG("flat index 17");
    ((float *)g.data)[17] = 0;
    o.iterations = 0;
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_PERIODIC, &o), VOXA_EINVAL);
    CHECK_MSG("iterations");
    o.iterations = 2;
    o.filter_epsilon = -1;
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &out, VOXA_RL_ZERO, &o), VOXA_EINVAL);
    CHECK_MSG("filter_epsilon");
    o.filter_epsilon = 0;
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &out, (voxa_rl_boundary)7, &o), VOXA_EINVAL);
    CHECK_MSG("boundary");
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &pu8, VOXA_RL_FREE, &o), VOXA_EINVAL);
    CHECK_STATUS(voxa_deconv_rl(&g, &psf, &g, VOXA_RL_PERIODIC, &o), VOXA_EINVAL);
    CHECK_MSG("share memory");
    CHECK_STATUS(voxa_deconv_wisdom_load("/nonexistent/voxa-wisdom"), VOXA_EIO);
    voxa_rl_boundary b;
    CHECK_STATUS(voxa_rl_boundary_from_name("reflect", &b), VOXA_EINVAL);
    CHECK_OK(voxa_rl_boundary_from_name("zero", &b));
    CHECK(b == VOXA_RL_ZERO && !strcmp(voxa_rl_boundary_name(b), "zero"));
    /* u8 PSF: can be checked and used, but not normalised in place */
    ((uint8_t *)pu8.data)[4] = 2;
    CHECK_OK(voxa_deconv_rl(&g, &pu8, &out, VOXA_RL_FREE, &o));
    CHECK_STATUS(voxa_psf_normalize(&pu8), VOXA_EINVAL);
    double sig[2] = {1, -1};
    CHECK_STATUS(voxa_psf_gaussian(&psf, sig), VOXA_EINVAL);
    CHECK_MSG("sigma[1]");
    int64_t lo[2], hi[2];
    CHECK_OK(voxa_deconv_halo(&pbig, lo, hi));
    CHECK(lo[0] == 5 && hi[0] == 5 && lo[1] == 1 && hi[1] == 1);
    voxa_array_free(&g);
    voxa_array_free(&out);
    voxa_array_free(&psf);
    voxa_array_free(&pbig);
    voxa_array_free(&p3);
    voxa_array_free(&pu8);
}

/* Free mode's staged 3-D transform (VOXA_RL_STAGED=1, the default for 3-D
 * boxes) against the 3-D FFTW plans (=0): same results to float rounding,
 * plain and accelerated, and the plan smaller by exactly the full PSF
 * transform minus its m0 x-y transformed planes. */
static void test_staged_vs_3d(void) {
    int64_t shape[3] = {6, 16, 18}, ps[3] = {3, 5, 4};
    /* box: fast sizes >= n + m - 1 = (8, 20, 21); 21 / 2 + 1 = 11 complex
     * per row (22 floats), which the staged path pads to 24 floats, 12
     * complex (rows 32-byte aligned) */
    int64_t L0 = 8, L1 = 20, ncp = L1 * 11, ncp_staged = L1 * 12;
    voxa_array g, psf, o0, o1;
    double sig[3] = {0.8, 1.2, 1.0};
    CHECK_OK(voxa_array_new(&g, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&o0, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&o1, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 3, ps));
    CHECK_OK(voxa_psf_gaussian(&psf, sig));
    for (int64_t i = 0; i < voxa_array_size(&g); i++) ((float *)g.data)[i] = 0.2f + frand();
    int64_t bytes[2];
    for (int acc = 0; acc < 2; acc++) {
        for (int staged = 0; staged < 2; staged++) {
            setenv("VOXA_RL_STAGED", staged ? "1" : "0", 1);
            voxa_rl_plan *p = NULL;
            voxa_rl_options o;
            voxa_rl_options_init(&o);
            o.iterations = 6;
            o.accelerate = acc;
            CHECK_OK(voxa_rl_plan_new(&p, 3, shape, &psf, VOXA_RL_FREE, 0));
            bytes[staged] = voxa_rl_plan_bytes(p);
            CHECK_OK(voxa_rl_plan_execute(p, &g, staged ? &o1 : &o0, &o));
            voxa_rl_plan_free(p);
        }
        CHECK(max_rel(o1.data, o0.data, voxa_array_size(&g)) < (acc ? 1e-4 : 2e-5));
        CHECK(memcmp(o1.data, o0.data, (size_t)voxa_array_size(&g) * 4) != 0);
    }
    unsetenv("VOXA_RL_STAGED");
    /* the 3-D path's H against the staged path's x-y PSF planes and padding */
    CHECK(bytes[0] - bytes[1] == L0 * ncp * 8 - ps[0] * ncp_staged * 8 - L0 * L1 * (24 - 22) * 4);
    voxa_array_free(&g);
    voxa_array_free(&psf);
    voxa_array_free(&o0);
    voxa_array_free(&o1);
}

/* Double plans (VOXA_RL_DOUBLE): flags, a delta PSF and a flat image to
 * double round-off where float32 gets 1e-5, agreement with the float plan,
 * either output dtype, the plan's bytes, and the device backends refuse. */
static void test_double_plans(void) {
    int64_t shape[3] = {6, 16, 18}, ps[3] = {3, 5, 4};
    voxa_array g, psf, o32, o64, delta;
    double sig[3] = {0.8, 1.2, 1.0};
    CHECK_OK(voxa_array_new(&g, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&o32, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&o64, VOXA_F64, 3, shape));
    CHECK_OK(voxa_array_new(&psf, VOXA_F64, 3, ps));
    CHECK_OK(voxa_array_new(&delta, VOXA_F64, 3, ps));
    CHECK_OK(voxa_psf_gaussian(&psf, sig));
    ((double *)delta.data)[(1 * 5 + 2) * 4 + 2] = 1.0; /* centre (1, 2, 2) */
    for (int64_t i = 0; i < voxa_array_size(&g); i++) ((float *)g.data)[i] = 0.2f + frand();
    int64_t n = voxa_array_size(&g);
    voxa_rl_plan *p = NULL;
    CHECK_STATUS(voxa_rl_plan_new(&p, 3, shape, &psf, VOXA_RL_FREE,
                                  VOXA_RL_DOUBLE | VOXA_RL_MEASURE | VOXA_RL_ESTIMATE),
                 VOXA_EINVAL);
    CHECK_MSG("exclusive");
    CHECK_STATUS(voxa_rl_plan_new(&p, 3, shape, &psf, VOXA_RL_FREE, 16), VOXA_EINVAL);
    CHECK_MSG("unknown bits");
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 5;
    for (int b = 0; b < 3; b++) {
        /* a delta PSF: f = g after any number of iterations (free, periodic) */
        CHECK_OK(voxa_rl_plan_new(&p, 3, shape, &delta, (voxa_rl_boundary)b,
                                  VOXA_RL_DOUBLE | VOXA_RL_ESTIMATE));
        CHECK_OK(voxa_rl_plan_execute(p, &g, &o64, &o));
        double dev = 0;
        for (int64_t i = 0; i < n; i++)
            dev = fmax(dev, fabs(((double *)o64.data)[i] - ((float *)g.data)[i]));
        CHECK(dev < 1e-13 || b == VOXA_RL_ZERO); /* zero: even extents shift (deconv.h) */
        voxa_rl_plan_free(p);
        /* the Gaussian: double and float plans agree to float round-off */
        double got[2][6 * 16 * 18];
        for (int dbl = 0; dbl < 2; dbl++) {
            CHECK_OK(voxa_rl_plan_new(&p, 3, shape, &psf, (voxa_rl_boundary)b,
                                      dbl ? VOXA_RL_DOUBLE : 0));
            CHECK_OK(voxa_rl_plan_execute(p, &g, &o64, &o));
            memcpy(got[dbl], o64.data, sizeof got[dbl]);
            if (dbl) { /* a float32 output of a double plan: the same numbers, rounded */
                CHECK_OK(voxa_rl_plan_execute(p, &g, &o32, &o));
                for (int64_t i = 0; i < n; i++) CHECK(((float *)o32.data)[i] == (float)got[1][i]);
                /* buffer, H (twice in zero mode: even extent 4), weights (free) */
                int64_t L[3] = {8, 20, 21}, px = 2 * (21 / 2 + 1), nc = 8 * 20 * 11;
                int64_t want = 8 * 20 * px * 8 + nc * 16 * (b == VOXA_RL_ZERO ? 2 : 1);
                if (b == VOXA_RL_PERIODIC) want = 6 * 16 * (2 * (18 / 2 + 1)) * 8 + 6 * 16 * 10 * 16;
                if (b == VOXA_RL_FREE) want += (3 + L[0] - 6) * (5 + L[1] - 16) * L[2] * 8;
                CHECK(voxa_rl_plan_bytes(p) == want);
                voxa_backend dev_b;
                if (voxa_backend_resolve(VOXA_BACKEND_OPENCL, &dev_b) == VOXA_OK) {
                    CHECK_STATUS(voxa_rl_plan_execute_on(VOXA_BACKEND_OPENCL, p, &g, &o64, &o),
                                 VOXA_EUNSUPPORTED);
                    CHECK_MSG("double-precision plans run on the CPU only");
                }
                voxa_clear_error();
            }
            voxa_rl_plan_free(p);
        }
        double d = 0, m = 0;
        for (int64_t i = 0; i < n; i++) {
            d = fmax(d, fabs(got[0][i] - got[1][i]));
            m = fmax(m, fabs(got[1][i]));
        }
        CHECK(d / m < 2e-5 && d > 0);
    }
    /* a flat image is a fixed point of the wrap-free mode: in double to 1e-12 */
    for (int64_t i = 0; i < n; i++) ((float *)g.data)[i] = 300;
    o.accelerate = 1;
    o.iterations = 10;
    CHECK_OK(voxa_rl_plan_new(&p, 3, shape, &psf, VOXA_RL_FREE, VOXA_RL_DOUBLE));
    CHECK_OK(voxa_rl_plan_execute(p, &g, &o64, &o));
    voxa_rl_plan_free(p);
    double dev = 0;
    for (int64_t i = 0; i < n; i++) dev = fmax(dev, fabs(((double *)o64.data)[i] - 300));
    CHECK(dev < 300 * 1e-12);
    voxa_array_free(&g);
    voxa_array_free(&psf);
    voxa_array_free(&delta);
    voxa_array_free(&o32);
    voxa_array_free(&o64);
}

int main(void) {
    setenv("VOXA_FFTW_WISDOM", "off", 1); /* no user wisdom cache in tests */
    RUN(test_delta_identity);
    RUN(test_flux_and_flat);
    RUN(test_plan_reuse_and_cancel);
    RUN(test_bad_inputs);
    RUN(test_staged_vs_3d);
    RUN(test_double_plans);
    VTEST_END();
}
