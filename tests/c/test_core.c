/* Core: status messages, dtypes, array views, contiguity, parallel loops. */
#include "internal.h"
#include "vtest.h"

static void test_dtypes(void) {
    voxa_dtype t;
    CHECK(voxa_dtype_size(VOXA_BOOL) == 1);
    CHECK(voxa_dtype_size(VOXA_I64) == 8);
    CHECK(voxa_dtype_size((voxa_dtype)99) == 0);
    CHECK_OK(voxa_dtype_from_name("uint16", &t));
    CHECK(t == VOXA_U16);
    CHECK_OK(voxa_dtype_from_name("f32", &t));
    CHECK(t == VOXA_F32);
    CHECK_STATUS(voxa_dtype_from_name("complex64", &t), VOXA_EINVAL);
    CHECK_MSG("complex64");
    CHECK(!strcmp(voxa_dtype_name(VOXA_F64), "float64"));
    CHECK(voxa_dtype_is_float(VOXA_F32) && !voxa_dtype_is_float(VOXA_I32));
}

static void test_arrays(void) {
    voxa_array a;
    int64_t shape[3] = {2, 3, 4};
    CHECK_OK(voxa_array_new(&a, VOXA_U16, 3, shape));
    CHECK(a.strides[0] == 24 && a.strides[1] == 8 && a.strides[2] == 2);
    CHECK(voxa_array_size(&a) == 24);
    CHECK(voxa_array_is_c_contiguous(&a));
    CHECK(((uint16_t *)a.data)[23] == 0);
    for (int i = 0; i < 24; i++) ((uint16_t *)a.data)[i] = (uint16_t)i;
    /* A transposed view (swap axes 1 and 2) is not contiguous; copying it
     * gives the transposed values in C order. */
    voxa_array t = a, c;
    t.owner = NULL;
    t.shape[1] = 4; t.shape[2] = 3;
    t.strides[1] = 2; t.strides[2] = 8;
    CHECK(!voxa_array_is_c_contiguous(&t));
    CHECK_OK(voxa__contiguous_copy(&t, &c));
    CHECK(((uint16_t *)c.data)[1] == 4 && ((uint16_t *)c.data)[3] == 1);
    CHECK(((uint16_t *)c.data)[12 + 11] == 23);
    voxa_array_free(&c);
    voxa_array_free(&a);
    voxa_array_free(NULL);

    int64_t bad[2] = {3, -1};
    CHECK_STATUS(voxa_array_new(&a, VOXA_U8, 2, bad), VOXA_EINVAL);
    CHECK_MSG("shape[1] = -1");
    CHECK_STATUS(voxa_array_new(&a, VOXA_U8, 9, shape), VOXA_EINVAL);
    int64_t huge[2] = {INT64_MAX / 2, 4};
    CHECK_STATUS(voxa_array_new(&a, VOXA_U8, 2, huge), VOXA_EINVAL);
    int64_t zero[2] = {0, 5};
    CHECK_OK(voxa_array_new(&a, VOXA_F32, 2, zero));
    CHECK(voxa_array_size(&a) == 0);
    voxa_array_free(&a);
}

static void test_array_get(void) {
    /* every dtype, through a strided (transposed) view */
    for (int t = 0; t < VOXA_NDTYPES; t++) {
        voxa_array a;
        int64_t shape[2] = {2, 3};
        CHECK_OK(voxa_array_new(&a, (voxa_dtype)t, 2, shape));
        size_t es = voxa_dtype_size((voxa_dtype)t);
        unsigned char *p = a.data;
        /* element (1, 2) = 1 (bool) or 7 (others), written as raw bytes */
        double want = t == VOXA_BOOL ? 1 : 7;
        switch ((voxa_dtype)t) {
        case VOXA_F32: { float v = 7; memcpy(p + 5 * es, &v, es); } break;
        case VOXA_F64: { double v = 7; memcpy(p + 5 * es, &v, es); } break;
        default: p[5 * es] = (unsigned char)want; break; /* little-endian low byte */
        }
        voxa_array tr = a;
        tr.owner = NULL;
        tr.shape[0] = 3, tr.shape[1] = 2;
        tr.strides[0] = a.strides[1], tr.strides[1] = a.strides[0];
        CHECK(voxa_array_get(&a, (const int64_t[2]){1, 2}) == want);
        CHECK(voxa_array_get(&tr, (const int64_t[2]){2, 1}) == want);
        CHECK(voxa_array_get(&tr, (const int64_t[2]){0, 0}) == 0);
        voxa_array_free(&a);
    }
    int8_t neg = -5;
    voxa_array s;
    CHECK_OK(voxa_array_view(&s, &neg, VOXA_I8, 0, NULL));
    CHECK(voxa_array_get(&s, NULL) == -5);
}

typedef struct { int64_t *hits; int64_t fail_at; } loop_ctx;

static voxa_status mark(int64_t lo, int64_t hi, int tid, void *p) {
    loop_ctx *c = p;
    for (int64_t i = lo; i < hi; i++) {
        if (i == c->fail_at) return voxa__error(VOXA_EINVAL, "failed at %lld", (long long)i);
        c->hits[i]++;
    }
    return VOXA_OK;
}

static void test_parallel(void) {
    int64_t hits[1000];
    for (int threads = 1; threads <= 4; threads++) {
        voxa_set_threads(threads);
        CHECK(voxa_get_threads() == threads);
        memset(hits, 0, sizeof hits);
        loop_ctx c = {hits, -1};
        CHECK_OK(voxa__parallel_for(1000, 7, mark, &c));
        int all_once = 1;
        for (int i = 0; i < 1000; i++) all_once &= hits[i] == 1;
        CHECK(all_once);
        c.fail_at = 500;
        CHECK_STATUS(voxa__parallel_for(1000, 1, mark, &c), VOXA_EINVAL);
        CHECK_MSG("failed at 500");
    }
    voxa_set_threads(0);
    CHECK(voxa_get_threads() >= 1);
}

static int stop_at_half(int64_t done, int64_t total, void *user) {
    (*(int *)user)++;
    return done * 2 < total;
}

static void test_progress(void) {
    int calls = 0;
    voxa_progress p = {stop_at_half, &calls};
    CHECK_OK(voxa__progress(&p, 1, 10));
    CHECK_STATUS(voxa__progress(&p, 5, 10), VOXA_ECANCELLED);
    CHECK(calls == 2);
    CHECK_OK(voxa__progress(NULL, 5, 10));
}

static void test_status(void) {
    CHECK(!strcmp(voxa_status_name(VOXA_EIO), "EIO"));
    CHECK(!strcmp(voxa_status_name((voxa_status)-100), "EUNKNOWN"));
    voxa__error(VOXA_EINVAL, "x=%d", 3);
    CHECK(!strcmp(voxa_last_error(), "x=3"));
    voxa_clear_error();
    CHECK(voxa_last_error()[0] == '\0');
    CHECK(!strcmp(voxa_version(), VOXA_VERSION_STRING));
}

int main(void) {
    RUN(test_dtypes);
    RUN(test_arrays);
    RUN(test_array_get);
    RUN(test_parallel);
    RUN(test_progress);
    RUN(test_status);
    VTEST_END();
}
