/* voxa_threshold_otsu / voxa_threshold_apply: values skimage gives for small
 * inputs (written here, computed with skimage 0.26 / NumPy 2.4), a reference
 * of Otsu's selection on an integer histogram in plain double arithmetic
 * (which the float32 sums must agree with on small counts), thread counts,
 * strides, every dtype, errors and the descriptor through voxa_op_run. The
 * full parity with skimage on random inputs is in
 * tests/python/test_threshold.py. */
#include "vtest.h"
#include "voxa/op.h"
#include "voxa/threshold.h"

#include <math.h>

static voxa_array view(void *data, voxa_dtype t, int64_t n) {
    voxa_array a;
    voxa_array_view(&a, data, t, 1, &n);
    return a;
}

static void test_known_values(void) {
    voxa_threshold_value t;
    uint8_t u[4] = {1, 5, 3, 2};
    voxa_array a = view(u, VOXA_U8, 4);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t, NULL));
    CHECK(t.integer && t.i == 3 && !t.constant); /* skimage: 3 */
    float f[4] = {1, 5, 3, 2};
    a = view(f, VOXA_F32, 4);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t, NULL));
    CHECK(!t.integer && t.f == 3.0078125); /* skimage: np.float32(3.0078125) */
    double g[4] = {1, 5, 3, 2};
    a = view(g, VOXA_F64, 4);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t, NULL));
    CHECK(t.f == 3.0078125);
    uint8_t b[4] = {0, 1, 1, 0};
    a = view(b, VOXA_BOOL, 4);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t, NULL));
    CHECK(t.f == 0.001953125); /* skimage on bool: the centre of bin 0 */
    int16_t c[3] = {-7, -7, -7};
    a = view(c, VOXA_I16, 3);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t, NULL));
    CHECK(t.constant && t.integer && t.i == -7);
    double inf[2] = {INFINITY, INFINITY};
    a = view(inf, VOXA_F64, 2);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t, NULL));
    CHECK(t.constant && t.f == INFINITY);
}

/* Otsu on integer data, in long double, without skimage's float32 sums:
 * agrees with the library whenever the maximum is clear (small counts). */
static int64_t ref_otsu_int(const int32_t *v, int64_t n) {
    int32_t mn = v[0], mx = v[0];
    for (int64_t i = 0; i < n; i++) mn = v[i] < mn ? v[i] : mn, mx = v[i] > mx ? v[i] : mx;
    int64_t nb = (int64_t)mx - mn + 1, best_i = 0;
    long double *h = calloc((size_t)nb, sizeof *h), best = -1;
    for (int64_t i = 0; i < n; i++) h[v[i] - mn] += 1;
    for (int64_t k = 0; k + 1 < nb; k++) {
        long double w1 = 0, s1 = 0, w2 = 0, s2 = 0;
        for (int64_t i = 0; i <= k; i++) w1 += h[i], s1 += h[i] * (mn + i);
        for (int64_t i = k + 1; i < nb; i++) w2 += h[i], s2 += h[i] * (mn + i);
        long double d = s1 / w1 - s2 / w2, var = w1 * w2 * d * d;
        if (var > best * (1 + 1e-9L)) best = var, best_i = k;
    }
    free(h);
    return mn + best_i;
}

static void test_bimodal_threads(void) {
    unsigned long long s = 7;
    enum { N = 40000 };
    int32_t *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = (int32_t)((i % 3 ? 40 : 160) + (int)(vtest_rand(&s) % 41) - 20);
    voxa_array a = view(v, VOXA_I32, N);
    voxa_threshold_value t1, t2;
    voxa_set_threads(1);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t1, NULL));
    voxa_set_threads(3);
    CHECK_OK(voxa_threshold_otsu(&a, 256, &t2, NULL));
    voxa_set_threads(0);
    CHECK(t1.i == t2.i && t1.f == t2.f);
    CHECK(t1.i == ref_otsu_int(v, N));
    CHECK(t1.i >= 60 && t1.i < 140); /* between the modes: 20..60 and 140..180 */
    free(v);
}

static void test_apply_strides(void) {
    /* a 2-D view with a transposed, strided layout; value compare */
    float data[6 * 8];
    for (int i = 0; i < 48; i++) data[i] = (float)i * 0.1f;
    voxa_array in = {data, VOXA_F32, 2, {8, 3}, {4, 8 * 2 * 4}, NULL}; /* every other column */
    uint8_t o[24];
    voxa_array out;
    int64_t sh[2] = {8, 3};
    CHECK_OK(voxa_array_view(&out, o, VOXA_BOOL, 2, sh));
    voxa_threshold_value t = {.f = 0.1};
    CHECK_OK(voxa_threshold_apply(&in, &t, &out));
    int bad = 0;
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 3; x++) bad |= o[y * 3 + x] != (data[y + x * 16] > (float)0.1);
    CHECK(!bad);
    /* int64 against an integer threshold: exact beyond 2^53 */
    int64_t big[2] = {((int64_t)1 << 60) + 1, (int64_t)1 << 60};
    voxa_array bi = view(big, VOXA_I64, 2), bo;
    uint8_t ob[2];
    bo = view(ob, VOXA_BOOL, 2);
    voxa_threshold_value ti = {.f = 0x1p60, .i = (int64_t)1 << 60, .integer = 1};
    CHECK_OK(voxa_threshold_apply(&bi, &ti, &bo));
    CHECK(ob[0] == 1 && ob[1] == 0);
}

static void test_errors(void) {
    voxa_threshold_value t;
    double d[3] = {1, NAN, 2};
    voxa_array a = view(d, VOXA_F64, 3);
    CHECK_STATUS(voxa_threshold_otsu(&a, 256, &t, NULL), VOXA_EINVAL);
    CHECK_MSG("NaN or infinite");
    d[1] = INFINITY;
    CHECK_STATUS(voxa_threshold_otsu(&a, 256, &t, NULL), VOXA_EINVAL);
    d[1] = 1.5;
    CHECK_STATUS(voxa_threshold_otsu(&a, 1, &t, NULL), VOXA_EINVAL);
    CHECK_MSG("nbins: 1");
    float tiny[2] = {0, 1e-45f}; /* np.histogram: too many bins */
    voxa_array ta = view(tiny, VOXA_F32, 2);
    CHECK_STATUS(voxa_threshold_otsu(&ta, 256, &t, NULL), VOXA_EINVAL);
    CHECK_MSG("too many bins");
    voxa_array e = view(d, VOXA_F64, 0);
    CHECK_STATUS(voxa_threshold_otsu(&e, 256, &t, NULL), VOXA_EINVAL);
    CHECK_MSG("empty");
    uint64_t u[2] = {0, UINT64_MAX};
    voxa_array ua = view(u, VOXA_U64, 2);
    CHECK_STATUS(voxa_threshold_otsu(&ua, 256, &t, NULL), VOXA_EINVAL);
    int32_t w[2] = {INT32_MIN, INT32_MAX};
    voxa_array wa = view(w, VOXA_I32, 2);
    CHECK_STATUS(voxa_threshold_otsu(&wa, 256, &t, NULL), VOXA_EINVAL);
    CHECK_MSG("2^28 bins");
    CHECK_STATUS(voxa_threshold_otsu(NULL, 256, &t, NULL), VOXA_EINVAL);
}

static int stop_at_one(int64_t done, int64_t total, void *user) {
    (void)total;
    (void)user;
    return done < 1;
}

static void test_generic(void) {
    const voxa_op *op = voxa_op_find("threshold");
    CHECK(op != NULL);
    if (!op) return;
    uint16_t v[64];
    unsigned long long s = 3;
    for (int i = 0; i < 64; i++) v[i] = (uint16_t)(vtest_rand(&s) % 1000);
    voxa_array in = view(v, VOXA_U16, 64), out;
    uint8_t o[64], r[64];
    out = view(o, VOXA_BOOL, 64);
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, op));
    CHECK_STATUS(voxa_op_check(&a, &in), VOXA_EINVAL); /* neither value nor method */
    CHECK_OK(voxa_args_parse(&a, "method", "otsu"));
    CHECK_OK(voxa_op_run(&a, &in, &out, NULL, NULL));
    voxa_threshold_value t;
    CHECK_OK(voxa_threshold_otsu(&in, 256, &t, NULL));
    voxa_array ref = view(r, VOXA_BOOL, 64);
    CHECK_OK(voxa_threshold_apply(&in, &t, &ref));
    CHECK(!memcmp(o, r, 64));
    voxa_progress stop = {stop_at_one, NULL};
    CHECK_STATUS(voxa_op_run(&a, &in, &out, &stop, NULL), VOXA_ECANCELLED);
    CHECK_OK(voxa_args_parse(&a, "value", "500"));
    CHECK_STATUS(voxa_op_check(&a, &in), VOXA_EINVAL); /* both */
    CHECK_OK(voxa_args_clear(&a, "method"));
    CHECK_OK(voxa_op_run(&a, &in, &out, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < 64; i++) bad |= o[i] != (v[i] > 500);
    CHECK(!bad);
    voxa_args_free(&a);
}

int main(void) {
    RUN(test_known_values);
    RUN(test_bimodal_threads);
    RUN(test_apply_strides);
    RUN(test_errors);
    RUN(test_generic);
    VTEST_END();
}
