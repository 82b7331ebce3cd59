/* edt: separable transforms against brute force on small random volumes,
 * no-background input, strided views, thread counts, bad arguments. */
#include "vtest.h"

#include <math.h>
#include <string.h>

static unsigned long long seed = 0x9e3779b97f4a7c15ull;

static void fill(uint8_t *a, int64_t n, int pct) {
    for (int64_t i = 0; i < n; i++) a[i] = (int)(vtest_rand(&seed) % 100) < pct;
}

/* brute force squared distance to the nearest zero (3D shape, any zeros) */
static double brute(const uint8_t *a, const int64_t *sh, int64_t z, int64_t y, int64_t x,
                    const double *sp, int metric) {
    double best = INFINITY;
    for (int64_t k = 0; k < sh[0]; k++)
        for (int64_t j = 0; j < sh[1]; j++)
            for (int64_t i = 0; i < sh[2]; i++) {
                if (a[(k * sh[1] + j) * sh[2] + i]) continue;
                double dz = fabs((double)(k - z)), dy = fabs((double)(j - y)), dx = fabs((double)(i - x));
                double d;
                if (metric == 0) {
                    dz *= sp[0]; dy *= sp[1]; dx *= sp[2];
                    d = dz * dz + dy * dy + dx * dx;
                } else if (metric == 1) {
                    d = dz + dy + dx;
                } else {
                    d = fmax(dz, fmax(dy, dx));
                }
                if (d < best) best = d;
            }
    return best;
}

static void test_random(void) {
    int64_t shapes[][3] = {{1, 1, 9}, {4, 5, 6}, {7, 1, 3}, {3, 8, 2}, {6, 6, 6}};
    double sps[][3] = {{1, 1, 1}, {2, 1, 0.5}, {0.3, 1.7, 1.1}};
    for (int t = 1; t <= 3; t += 2) {
        voxa_set_threads(t);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t *sh = shapes[s], n = sh[0] * sh[1] * sh[2];
            uint8_t *a = malloc((size_t)n);
            double *d = malloc((size_t)n * 8);
            int32_t *c = malloc((size_t)n * 4);
            fill(a, n, 70);
            a[n / 2] = 0; /* at least one background voxel */
            voxa_array in, out, cout;
            voxa_array_view(&in, a, VOXA_BOOL, 3, sh);
            voxa_array_view(&out, d, VOXA_F64, 3, sh);
            voxa_array_view(&cout, c, VOXA_I32, 3, sh);
            for (int k = 0; k < 3; k++) {
                voxa_edt_params p = {sps[k], 1, {0}};
                CHECK_OK(voxa_edt(&in, &out, &p));
                int ok = 1;
                for (int64_t i = 0; i < n; i++) {
                    int64_t z = i / (sh[1] * sh[2]), y = (i / sh[2]) % sh[1], x = i % sh[2];
                    double b = brute(a, sh, z, y, x, sps[k], 0);
                    if (fabs(d[i] - b) > 1e-12 * (b + 1)) ok = 0;
                }
                CHECK(ok);
            }
            for (int m = 1; m <= 2; m++) {
                CHECK_OK(voxa_edt_cdt(&in, &cout, (voxa_edt_metric)m));
                int ok = 1;
                for (int64_t i = 0; i < n; i++) {
                    int64_t z = i / (sh[1] * sh[2]), y = (i / sh[2]) % sh[1], x = i % sh[2];
                    if (c[i] != (int32_t)brute(a, sh, z, y, x, NULL, m)) ok = 0;
                }
                CHECK(ok);
            }
            free(a);
            free(d);
            free(c);
        }
    }
    voxa_set_threads(0);
}

static void test_no_background_and_views(void) {
    int64_t sh[2] = {3, 4};
    uint8_t a[12];
    memset(a, 1, sizeof a);
    double d[12];
    voxa_array in, out;
    voxa_array_view(&in, a, VOXA_BOOL, 2, sh);
    voxa_array_view(&out, d, VOXA_F64, 2, sh);
    CHECK_OK(voxa_edt(&in, &out, NULL));
    /* scipy measures from (-1, 0): d(1, 2) = sqrt(4 + 4) */
    CHECK(fabs(d[1 * 4 + 2] - sqrt(8.0)) < 1e-15 && d[0] == 1.0);
    int32_t c[12];
    voxa_array co;
    voxa_array_view(&co, c, VOXA_I32, 2, sh);
    CHECK_OK(voxa_edt_cdt(&in, &co, VOXA_EDT_TAXICAB));
    CHECK(c[0] == -1 && c[11] == -1);
    /* a transposed (strided) input gives the transposed answer */
    a[5] = 0;
    CHECK_OK(voxa_edt(&in, &out, NULL));
    voxa_array t = in;
    t.shape[0] = 4; t.shape[1] = 3; t.strides[0] = 1; t.strides[1] = 4;
    double e[12];
    voxa_array eo;
    int64_t tsh[2] = {4, 3};
    voxa_array_view(&eo, e, VOXA_F64, 2, tsh);
    CHECK_OK(voxa_edt(&t, &eo, NULL));
    int ok = 1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) ok &= e[j * 3 + i] == d[i * 4 + j];
    CHECK(ok);
    /* indices: the nearest background is the only one, (1, 1) */
    int32_t ind[24];
    int64_t ish[3] = {2, 3, 4};
    voxa_array io;
    voxa_array_view(&io, ind, VOXA_I32, 3, ish);
    CHECK_OK(voxa_edt_indices(&in, &out, &io, NULL));
    CHECK(ind[0] == 1 && ind[12] == 1 && ind[11] == 1 && ind[23] == 1);
}

static void test_errors(void) {
    int64_t sh[2] = {3, 4}, sh2[2] = {4, 3};
    uint8_t a[12] = {0};
    double d[12];
    voxa_array in, out, bad;
    voxa_array_view(&in, a, VOXA_BOOL, 2, sh);
    voxa_array_view(&out, d, VOXA_F64, 2, sh);
    voxa_array_view(&bad, d, VOXA_F64, 2, sh2);
    CHECK_STATUS(voxa_edt(&in, &bad, NULL), VOXA_EINVAL);
    CHECK_MSG("output shape");
    double sp[2] = {1, 0};
    voxa_edt_params p = {sp, 0, {0}};
    CHECK_STATUS(voxa_edt(&in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("spacing[1]");
    voxa_array u8 = out;
    u8.dtype = VOXA_U8;
    CHECK_STATUS(voxa_edt(&in, &u8, NULL), VOXA_EINVAL);
    CHECK_MSG("uint8");
    CHECK_STATUS(voxa_edt_cdt(&in, &out, (voxa_edt_metric)7), VOXA_EINVAL);
    CHECK_MSG("metric");
}

/* voxa_edt_slices + voxa_edt_columns on blocks (slabs of whole slices, then
 * pencils holding axis 0 whole) equal voxa_edt on the volume bit for bit:
 * float64 and uint32 slice values, spacing, every output dtype, squared, a
 * volume without background; and their argument checks. */
static void test_two_passes(void) {
    enum { Z = 9, Y = 7, X = 6, N = Z * Y * X };
    int64_t sh[3] = {Z, Y, X};
    static uint8_t a[N];
    static double g64[N];
    static uint32_t g32[N];
    static unsigned char want[8 * N], got[8 * N];
    double sp[3] = {1.7, 0.6, 1.1};
    voxa_dtype outs[3] = {VOXA_F64, VOXA_F32, VOXA_U32};
    for (int pct = 40; pct <= 100; pct += 60) {
        fill(a, N, pct);
        for (int o = 0; o < 3; o++)
            for (int squared = 0; squared <= 1; squared++)
                for (int with_sp = 0; with_sp <= 1; with_sp++) {
                    if (outs[o] == VOXA_U32 && (!squared || with_sp)) continue;
                    voxa_edt_params p = {with_sp ? sp : NULL, squared, {0}};
                    voxa_array in, w, gv, pv, ov;
                    voxa_array_view(&in, a, VOXA_BOOL, 3, sh);
                    voxa_array_view(&w, want, outs[o], 3, sh);
                    CHECK_OK(voxa_edt(&in, &w, &p));
                    voxa_dtype gt = with_sp ? VOXA_F64 : VOXA_U32;
                    void *g = gt == VOXA_F64 ? (void *)g64 : (void *)g32;
                    size_t ge = gt == VOXA_F64 ? 8 : 4, oe = voxa_dtype_size(outs[o]);
                    int has_bg = 0;
                    for (int64_t z0 = 0; z0 < Z; z0 += 4) { /* slabs of 4 slices */
                        int64_t s[3] = {Z - z0 < 4 ? Z - z0 : 4, Y, X};
                        voxa_array_view(&in, a + z0 * Y * X, VOXA_BOOL, 3, s);
                        voxa_array_view(&gv, (char *)g + z0 * Y * X * ge, gt, 3, s);
                        CHECK_OK(voxa_edt_slices(&in, p.spacing, &gv, &has_bg));
                    }
                    CHECK(has_bg == (pct < 100));
                    for (int64_t y0 = 0; y0 < Y; y0 += 3) /* pencils (Z, 3, 4), packed */
                        for (int64_t x0 = 0; x0 < X; x0 += 4) {
                            int64_t s[3] = {Z, Y - y0 < 3 ? Y - y0 : 3, X - x0 < 4 ? X - x0 : 4};
                            int64_t org[3] = {0, y0, x0};
                            static unsigned char gp[8 * N], op[8 * N];
                            for (int64_t z = 0; z < Z; z++)
                                for (int64_t y = 0; y < s[1]; y++)
                                    memcpy(gp + ((z * s[1] + y) * s[2]) * ge,
                                           (char *)g + ((z * Y + y0 + y) * X + x0) * ge,
                                           (size_t)s[2] * ge);
                            voxa_array_view(&pv, gp, gt, 3, s);
                            voxa_array_view(&ov, op, outs[o], 3, s);
                            CHECK_OK(voxa_edt_columns(&pv, org, has_bg, &p, &ov));
                            for (int64_t z = 0; z < Z; z++)
                                for (int64_t y = 0; y < s[1]; y++)
                                    memcpy(got + ((z * Y + y0 + y) * X + x0) * oe,
                                           op + ((z * s[1] + y) * s[2]) * oe, (size_t)s[2] * oe);
                        }
                    CHECK(memcmp(got, want, (size_t)N * oe) == 0);
                }
    }
    /* arguments */
    voxa_array in, gv, ov;
    int64_t s2[2] = {Y, X}, org[3] = {1, 0, 0};
    int has_bg = 0;
    voxa_array_view(&in, a, VOXA_BOOL, 2, s2);
    voxa_array_view(&gv, g32, VOXA_U32, 2, s2);
    CHECK_STATUS(voxa_edt_slices(&in, sp, &gv, &has_bg), VOXA_EINVAL);
    CHECK_MSG("unit spacing");
    voxa_array_view(&gv, g64, VOXA_F32, 2, s2);
    CHECK_STATUS(voxa_edt_slices(&in, NULL, &gv, &has_bg), VOXA_EINVAL);
    CHECK_MSG("float64 or uint32");
    voxa_array_view(&gv, g64, VOXA_F64, 2, s2);
    voxa_array_view(&ov, got, VOXA_F64, 2, s2);
    CHECK_STATUS(voxa_edt_columns(&gv, org, 1, NULL, &ov), VOXA_EINVAL);
    CHECK_MSG("axis 0 whole");
    int64_t one[1] = {5};
    voxa_array_view(&in, a, VOXA_BOOL, 1, one);
    voxa_array_view(&gv, g64, VOXA_F64, 1, one);
    CHECK_STATUS(voxa_edt_slices(&in, NULL, &gv, &has_bg), VOXA_EINVAL);
    CHECK_MSG("at least 2 dimensions");
}

/* The cdt passes over the whole volume (one slab, one pencil; blocks are
 * the chunk executor's tests) equal voxa_edt_cdt, with and without
 * background; their argument checks. */
static void test_cdt_passes(void) {
    enum { Z = 7, Y = 6, X = 9, N = Z * Y * X };
    int64_t sh[3] = {Z, Y, X};
    static uint8_t a[N];
    static int32_t g[N], got[N], want[N];
    voxa_array in, gv, ov, wv;
    voxa_array_view(&in, a, VOXA_BOOL, 3, sh);
    voxa_array_view(&gv, g, VOXA_I32, 3, sh);
    voxa_array_view(&ov, got, VOXA_I32, 3, sh);
    voxa_array_view(&wv, want, VOXA_I32, 3, sh);
    for (int pct = 70; pct <= 100; pct += 30)
        for (int m = VOXA_EDT_TAXICAB; m <= VOXA_EDT_CHESSBOARD; m++) {
            fill(a, N, pct);
            CHECK_OK(voxa_edt_cdt(&in, &wv, (voxa_edt_metric)m));
            CHECK_OK(voxa_edt_cdt_slices(&in, (voxa_edt_metric)m, &gv));
            CHECK_OK(voxa_edt_cdt_columns(&gv, (voxa_edt_metric)m, &ov));
            CHECK(memcmp(got, want, sizeof got) == 0);
        }
    CHECK_STATUS(voxa_edt_cdt_columns(&gv, (voxa_edt_metric)3, &ov), VOXA_EINVAL);
    CHECK_MSG("metric 3");
    voxa_array f = ov;
    f.dtype = VOXA_F32;
    CHECK_STATUS(voxa_edt_cdt_columns(&gv, VOXA_EDT_TAXICAB, &f), VOXA_EINVAL);
    CHECK_MSG("int32");
    CHECK_STATUS(voxa_edt_cdt_slices(&in, VOXA_EDT_TAXICAB, &f), VOXA_EINVAL);
    CHECK_MSG("int32");
}

int main(void) {
    RUN(test_random);
    RUN(test_no_background_and_views);
    RUN(test_errors);
    RUN(test_two_passes);
    RUN(test_cdt_passes);
    VTEST_END();
}
