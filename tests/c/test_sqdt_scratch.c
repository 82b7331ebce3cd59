/* sqdt line scratch: voxa__sqdt_line_bytes against its formula (docs/morph.md,
 * src/core/sqdt.h) on shapes whose longest axis has few lines across it, where
 * the old sizing (176 bytes x the longest axis per thread) reserved gigabytes;
 * and runs on thin shapes (tiles narrower than 16/64 columns; 2-D float32
 * keeping row distances in the output) against a brute-force distance. */
#include "vtest.h"
#include "sqdt.h"

#include <math.h>

static voxa__sqdt desc(int nd, const int64_t *shape, voxa__sqdt_mode mode, const double *sp) {
    voxa__sqdt q;
    memset(&q, 0, sizeof q);
    q.ndim = nd;
    memcpy(q.shape, shape, sizeof(int64_t) * (size_t)nd);
    q.mode = mode;
    q.spacing = sp;
    return q;
}

static size_t ints(int64_t tw, int64_t n) { return (size_t)(8 * tw + 24) * (size_t)(n + 2); }
static size_t dbls(int64_t tw, int64_t n) { return (size_t)8 * (size_t)(tw + 4) * (size_t)(n + 2); }

static void test_formula(void) {
    double sp2[2] = {2.0, 0.5}, sp3[3] = {1.5, 1.0, 0.25};
    int64_t one[1] = {30000000}, wide[2] = {3, 10000000}, tall[2] = {10000000, 3};
    int64_t blobs[3] = {400, 401, 401}, thin[3] = {2, 5, 1000000}, small[3] = {10, 20, 30};
    /* 1-D: pass 1 only, no line scratch (was 176 x 3e7 = 5.3 GB per thread) */
    voxa__sqdt q = desc(1, one, VOXA__SQDT_F64, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == 0);
    q = desc(1, one, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == 0);
    /* (3, 1e7): the pass along axis 0 has lines of 3 (was 1.76 GB per thread);
     * squared distances may pass 2^32, so the values are double */
    q = desc(2, wide, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(16, 3));
    q = desc(2, wide, VOXA__SQDT_F64, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(16, 3));
    q = desc(2, wide, VOXA__SQDT_F32, sp2); /* double storage */
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(16, 3));
    /* (1e7, 3): long lines, only 3 side by side: tw = min(16, 3) */
    q = desc(2, tall, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(3, 10000000));
    /* integer values (max squared distance below 2^32): 64 columns when the
     * axis has <= 8192 voxels, else 16, never more than the lines across */
    int64_t iw[2] = {3, 60000}, it[2] = {60000, 3}, iw2[2] = {60000, 40};
    q = desc(2, iw, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == ints(64, 3));
    q = desc(2, it, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == ints(3, 60000));
    q = desc(2, iw2, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == ints(16, 60000));
    q = desc(2, tall, VOXA__SQDT_U32_SQ, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == ints(3, 10000000));
    q = desc(2, tall, VOXA__SQDT_F64_SQ, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(3, 10000000));
    /* the blobs: as before, 64 columns of the longest axis */
    q = desc(3, blobs, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == ints(64, 401));
    q = desc(3, blobs, VOXA__SQDT_F64, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(16, 401));
    /* anisotropic 3-D: passes along axes 1 (n 5) and 0 (n 2) only */
    q = desc(3, thin, VOXA__SQDT_F32, sp3);
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(16, 5));
    /* threshold order: axis 0 by chunks (2048 bytes), then axes 1 and 2 */
    q = desc(3, small, VOXA__SQDT_THRESHOLD, NULL);
    q.thr = 9;
    CHECK(voxa__sqdt_line_bytes(&q) == ints(30, 20));
    q = desc(3, thin, VOXA__SQDT_THRESHOLD, NULL);
    q.thr = 9;
    CHECK(voxa__sqdt_line_bytes(&q) == ints(1, 1000000));
    q = desc(3, thin, VOXA__SQDT_THRESHOLD, sp3); /* double: the plain order */
    q.thr = 9;
    CHECK(voxa__sqdt_line_bytes(&q) == dbls(16, 5));
    int64_t empty[2] = {0, 10000000};
    q = desc(2, empty, VOXA__SQDT_F32, NULL);
    CHECK(voxa__sqdt_line_bytes(&q) == 0);
}

/* brute-force squared distance (spacing sp) to the nearest zero of a 2-D mask */
static double brute2(const uint8_t *a, const int64_t *sh, int64_t y, int64_t x, const double *sp) {
    double best = INFINITY;
    for (int64_t j = 0; j < sh[0]; j++)
        for (int64_t i = 0; i < sh[1]; i++) {
            if (a[j * sh[1] + i]) continue;
            double dy = (double)(j - y) * sp[0], dx = (double)(i - x) * sp[1];
            if (dy * dy + dx * dx < best) best = dy * dy + dx * dx;
        }
    return best;
}

static void test_thin_runs(void) {
    unsigned long long seed = 0x2545f4914f6cdd1dull;
    int64_t shapes[][2] = {{1, 37}, {50, 1}, {50, 3}, {3, 50}, {9000, 2}, {17, 15}, {2, 70},
                          {2, 70000}, {70000, 2}}; /* squared distances past 2^32 */
    double unit[2] = {1, 1}, aniso[2] = {1.7, 0.6};
    for (int t = 1; t <= 3; t += 2) {
        voxa_set_threads(t);
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int64_t *sh = shapes[s], n = sh[0] * sh[1];
            uint8_t *a = malloc((size_t)n);
            double *d = malloc((size_t)n * 8);
            float *f = malloc((size_t)n * 4);
            for (int64_t i = 0; i < n; i++) a[i] = vtest_rand(&seed) % 100 < 90;
            a[n / 3] = 0;
            for (int k = 0; k < 2; k++) {
                const double *sp = k ? aniso : unit;
                voxa__sqdt q = desc(2, sh, VOXA__SQDT_F64_SQ, k ? aniso : NULL);
                q.src = a;
                q.out = d;
                CHECK_OK(voxa__sqdt_run(&q));
                q.mode = VOXA__SQDT_F32;
                q.out = f;
                CHECK_OK(voxa__sqdt_run(&q));
                int ok = 1;
                /* brute force on a sample of voxels (all of the small shapes) */
                int64_t step = n > 2000 ? 97 : 1;
                for (int64_t i = 0; i < n; i += step) {
                    double b = brute2(a, sh, i / sh[1], i % sh[1], sp);
                    if (fabs(d[i] - b) > 1e-12 * (b + 1) || f[i] != (float)sqrt(d[i])) ok = 0;
                }
                CHECK(ok);
            }
            free(a);
            free(d);
            free(f);
        }
    }
    voxa_set_threads(0);
}

int main(void) {
    RUN(test_formula);
    RUN(test_thin_runs);
    VTEST_END();
}
