/* voxa_balls against a brute-force C reference of the W1 rule, edge shapes,
 * owners, thread counts, bad input and the halo. */
#include "vtest.h"

#include <math.h>

/* Brute force: every voxel against every point, same summation order. */
static void reference(int ndim, const int64_t *shape, const double *pts, int64_t n,
                      const double *radii, double radius, const double *sp, int owner,
                      int32_t *out) {
    int64_t size = 1;
    for (int d = 0; d < ndim; d++) size *= shape[d];
    for (int64_t i = 0; i < size; i++) {
        int64_t idx[VOXA_MAXDIM], rest = i;
        for (int d = ndim - 1; d >= 0; d--) idx[d] = rest % shape[d], rest /= shape[d];
        double best = INFINITY;
        out[i] = 0;
        for (int64_t k = 0; k < n; k++) {
            double r = radii ? radii[k] : radius, sum = 0;
            for (int d = 0; d < ndim; d++) {
                double t = ((double)idx[d] - pts[k * ndim + d]) * (sp ? sp[d] : 1.0);
                sum += t * t;
            }
            if (sum <= r * r && sum < best) best = sum, out[i] = (int32_t)(k + 1);
        }
        if (!owner) out[i] = out[i] != 0;
    }
}

static int compare(int ndim, const int64_t *shape, const double *pts, int64_t n,
                   const double *radii, double radius, const double *sp, int owner) {
    voxa_array got;
    int32_t *want;
    int64_t size = 1;
    for (int d = 0; d < ndim; d++) size *= shape[d];
    want = malloc((size_t)(size ? size : 1) * sizeof *want);
    if (voxa_array_new(&got, owner ? VOXA_I32 : VOXA_BOOL, ndim, shape) != VOXA_OK) return 0;
    memset(got.data, 7, (size_t)size * voxa_dtype_size(got.dtype)); /* every voxel must be written */
    voxa_balls_params p = {.points = pts, .npoints = n, .radius = radius, .radii = radii,
                           .spacing = sp, .owner = owner};
    int same = voxa_balls(&p, &got) == VOXA_OK;
    reference(ndim, shape, pts, n, radii, radius, sp, owner, want);
    for (int64_t i = 0; same && i < size; i++)
        same = (owner ? ((int32_t *)got.data)[i] : ((uint8_t *)got.data)[i]) == want[i];
    voxa_array_free(&got);
    free(want);
    return same;
}

static void random_points(unsigned long long *s, int ndim, const int64_t *shape, int64_t n,
                          double *pts) {
    for (int64_t k = 0; k < n; k++)
        for (int d = 0; d < ndim; d++)
            pts[k * ndim + d] = (double)(vtest_rand(s) % 100000) / 100000.0 *
                                    (double)(shape[d] + 6) - 3.0;
}

static void test_random_parity(void) {
    unsigned long long seed = 12345;
    const int64_t shapes[][4] = {{40, 0, 0, 0}, {13, 17, 0, 0}, {6, 11, 9, 0}, {3, 5, 4, 6},
                                 {1, 1, 25, 0}, {25, 1, 1, 0}};
    const int ndims[] = {1, 2, 3, 4, 3, 3};
    double pts[40 * 4], radii[40];
    for (int c = 0; c < 6; c++) {
        for (int trial = 0; trial < 4; trial++) {
            random_points(&seed, ndims[c], shapes[c], 15, pts);
            for (int k = 0; k < 15; k++) radii[k] = (double)(vtest_rand(&seed) % 500) / 100.0;
            double r = (double)trial * 1.3;
            CHECK(compare(ndims[c], shapes[c], pts, 15, NULL, r, NULL, 0));
            CHECK(compare(ndims[c], shapes[c], pts, 15, radii, 0, NULL, 1));
        }
    }
}

static void test_spacing_and_threads(void) {
    unsigned long long seed = 99;
    int64_t shape[3] = {9, 14, 12};
    double pts[20 * 3], sp[3] = {2.5, 0.7, 1.1};
    random_points(&seed, 3, shape, 20, pts);
    for (int t = 1; t <= 3; t++) {
        voxa_set_threads(t);
        CHECK(compare(3, shape, pts, 20, NULL, 3.3, sp, 0));
        CHECK(compare(3, shape, pts, 20, NULL, 3.3, sp, 1));
    }
    voxa_set_threads(0);
}

static void test_exact_boundary(void) {
    /* Integer centre and radius: the 515 lattice points with |v|^2 <= 25. */
    int64_t shape[3] = {11, 11, 11};
    double pt[3] = {5, 5, 5};
    voxa_array m;
    CHECK_OK(voxa_array_new(&m, VOXA_U8, 3, shape));
    voxa_balls_params p = {.points = pt, .npoints = 1, .radius = 5};
    CHECK_OK(voxa_balls(&p, &m));
    int64_t count = 0;
    for (int64_t i = 0; i < 1331; i++) count += ((uint8_t *)m.data)[i];
    CHECK(count == 515);
    voxa_array_free(&m);
}

static void test_bad_input(void) {
    int64_t shape[2] = {4, 4};
    voxa_array m, f;
    CHECK_OK(voxa_array_new(&m, VOXA_BOOL, 2, shape));
    CHECK_OK(voxa_array_new(&f, VOXA_F32, 2, shape));
    double pts[2] = {1, NAN}, good[2] = {1, 1}, sp[2] = {1, -1}, radii[1] = {-2};
    voxa_balls_params p = {.points = pts, .npoints = 1, .radius = 1};
    CHECK_STATUS(voxa_balls(&p, &m), VOXA_EINVAL);
    CHECK_MSG("non-finite coordinate on axis 1");
    p.points = good;
    p.radius = -1;
    CHECK_STATUS(voxa_balls(&p, &m), VOXA_EINVAL);
    CHECK_MSG("radius");
    p.radius = INFINITY;
    CHECK_STATUS(voxa_balls(&p, &m), VOXA_EINVAL);
    p.radius = 1;
    p.radii = radii;
    CHECK_STATUS(voxa_balls(&p, &m), VOXA_EINVAL);
    CHECK_MSG("point 0");
    p.radii = NULL;
    p.spacing = sp;
    CHECK_STATUS(voxa_balls(&p, &m), VOXA_EINVAL);
    CHECK_MSG("spacing[1]");
    p.spacing = NULL;
    CHECK_STATUS(voxa_balls(&p, &f), VOXA_EINVAL);
    CHECK_MSG("float32");
    p.owner = 1;
    CHECK_STATUS(voxa_balls(&p, &m), VOXA_EINVAL);
    p.npoints = -1;
    p.owner = 0;
    CHECK_STATUS(voxa_balls(&p, &m), VOXA_EINVAL);
    CHECK_STATUS(voxa_balls(NULL, &m), VOXA_EINVAL);
    voxa_array_free(&m);
    voxa_array_free(&f);
}

static int cancel_all(int64_t done, int64_t total, void *user) { return 0; }

static void test_halo_and_cancel(void) {
    double radii[2] = {2.0, 7.5}, sp[3] = {2.0, 1.0, 0.5};
    int64_t halo[3];
    voxa_balls_params p = {.npoints = 2, .radii = radii, .spacing = sp};
    CHECK_OK(voxa_balls_halo(&p, 3, halo));
    CHECK(halo[0] == 4 && halo[1] == 8 && halo[2] == 15);
    int64_t shape[2] = {3, 3};
    voxa_array m;
    CHECK_OK(voxa_array_new(&m, VOXA_BOOL, 2, shape));
    double pt[2] = {1, 1};
    voxa_balls_params q = {.points = pt, .npoints = 1, .radius = 1, .progress = {cancel_all, NULL}};
    CHECK_STATUS(voxa_balls(&q, &m), VOXA_ECANCELLED);
    voxa_array_free(&m);
}

int main(void) {
    RUN(test_random_parity);
    RUN(test_spacing_and_threads);
    RUN(test_exact_boundary);
    RUN(test_bad_input);
    RUN(test_halo_and_cancel);
    VTEST_END();
}
