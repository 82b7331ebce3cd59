/* The op interface on the GPU backends: voxa_op_run routed by the args'
 * backend (voxa_args_set_backend) equals the CPU run byte for byte for edt
 * and the morphology ops, tiles forced by VOXA_GPU_TILE_BYTES give the same
 * bytes, an op without a GPU path fails with EUNSUPPORTED on opencl/cuda and
 * runs on the CPU with auto, and the device-memory formulas are the
 * documented ones. Backends: VOXA_TEST_BACKENDS (default "opencl"). */
#include "vtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long seed = 0x5851f42d4c957f2dull;

static voxa_backend gpus[2];
static int ngpus;

/* Run op `name` (parameters as text pairs) on backend b into a new array. */
static voxa_status run(const char *name, voxa_backend b, const voxa_array *in,
                       const char *const *kv, voxa_array *out) {
    voxa_args a;
    const voxa_op *op = voxa_op_find(name);
    CHECK(op != NULL);
    CHECK_OK(voxa_args_init(&a, op));
    for (int i = 0; kv && kv[i]; i += 2) CHECK_OK(voxa_args_parse(&a, kv[i], kv[i + 1]));
    CHECK_OK(voxa_args_set_backend(&a, b));
    voxa_dtype dt;
    int nd;
    int64_t shape[VOXA_MAXDIM + 1];
    CHECK_OK(voxa_op_output(&a, in, &dt, &nd, shape));
    CHECK_OK(voxa_array_new(out, dt, nd, shape));
    voxa_status st = voxa_op_run(&a, in, out, NULL, NULL);
    voxa_args_free(&a);
    return st;
}

static void same_bytes(const voxa_array *x, const voxa_array *y) {
    CHECK(x->dtype == y->dtype && voxa_array_size(x) == voxa_array_size(y));
    CHECK(!memcmp(x->data, y->data,
                  (size_t)voxa_array_size(x) * voxa_dtype_size(x->dtype)));
}

static void parity(const char *name, const voxa_array *in, const char *const *kv) {
    voxa_array c, g;
    CHECK_OK(run(name, VOXA_BACKEND_CPU, in, kv, &c));
    for (int k = 0; k < ngpus; k++) {
        CHECK_OK(run(name, gpus[k], in, kv, &g));
        same_bytes(&c, &g);
        voxa_array_free(&g);
    }
    voxa_array_free(&c);
}

static void mask(voxa_array *m, int64_t z, int64_t y, int64_t x, double density) {
    int64_t sh[3] = {z, y, x};
    CHECK_OK(voxa_array_new(m, VOXA_U8, 3, sh));
    for (int64_t i = 0; i < voxa_array_size(m); i++)
        ((uint8_t *)m->data)[i] = (double)(vtest_rand(&seed) >> 11) / 9007199254740992.0 < density;
}

static void test_edt(void) {
    voxa_array m;
    mask(&m, 11, 13, 17, 0.6);
    const char *const plain[] = {NULL};
    const char *const sp[] = {"spacing", "2,1,0.7", NULL};
    const char *const f32[] = {"dtype", "float32", "spacing", "1.5,1,1", NULL};
    const char *const u32[] = {"dtype", "uint32", "squared", "1", NULL};
    parity("edt", &m, plain);
    parity("edt", &m, sp);
    parity("edt", &m, f32);
    parity("edt", &m, u32);
    voxa_array_free(&m);
}

static void test_morph(void) {
    voxa_array m;
    mask(&m, 15, 19, 23, 0.5);
    static const char *const cases[][7] = {
        {"ball", "2.5", NULL},
        {"ball", "3", "spacing", "2,1,1", "border_value", "1", NULL},
        {"diamond", "2", "iterations", "2", NULL},
        {"box", "3,2,5", NULL},
        {"connectivity", "3", "iterations", "3", "border_value", "1", NULL},
    };
    const char *ops[] = {"dilate", "erode", "open", "close"};
    for (int o = 0; o < 4; o++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) parity(ops[o], &m, cases[c]);
    /* tiles: each block with its halo, the same bytes */
    setenv("VOXA_GPU_TILE_BYTES", "40000", 1);
    for (int o = 0; o < 4; o++) {
        parity(ops[o], &m, cases[0]);
        parity(ops[o], &m, cases[3]);
    }
    /* global ops larger than the "device" tile themselves (label, edt):
     * the same bytes as the CPU */
    for (int k = 0; k < ngpus; k++) {
        voxa_array c, g;
        CHECK_OK(run("edt", VOXA_BACKEND_CPU, &m, NULL, &c));
        CHECK_OK(run("edt", gpus[k], &m, NULL, &g));
        same_bytes(&c, &g);
        voxa_array_free(&c);
        voxa_array_free(&g);
    }
    /* not even one line fits: EUNSUPPORTED, auto runs the CPU */
    setenv("VOXA_GPU_TILE_BYTES", "100", 1);
    for (int k = 0; k < ngpus; k++) {
        voxa_array g;
        CHECK_STATUS(run("edt", gpus[k], &m, NULL, &g), VOXA_EUNSUPPORTED);
        CHECK_MSG("needs more device memory than the limit");
        voxa_array_free(&g);
    }
    voxa_array c, g;
    CHECK_OK(run("edt", VOXA_BACKEND_CPU, &m, NULL, &c));
    CHECK_OK(run("edt", VOXA_BACKEND_AUTO, &m, NULL, &g));
    same_bytes(&c, &g);
    voxa_array_free(&c);
    voxa_array_free(&g);
    unsetenv("VOXA_GPU_TILE_BYTES");
    voxa_array_free(&m);
}

static void test_no_gpu_path(void) {
    voxa_array m, c, g;
    mask(&m, 6, 7, 8, 0.5);
    for (int k = 0; k < ngpus; k++) {
        CHECK_STATUS(run("fill_holes", gpus[k], &m, NULL, &g), VOXA_EUNSUPPORTED);
        CHECK_MSG("no GPU path");
        voxa_array_free(&g);
    }
    CHECK_OK(run("fill_holes", VOXA_BACKEND_CPU, &m, NULL, &c));
    CHECK_OK(run("fill_holes", VOXA_BACKEND_AUTO, &m, NULL, &g));
    same_bytes(&c, &g);
    voxa_array_free(&c);
    voxa_array_free(&g);
    voxa_args a;
    voxa_backend b;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("fill_holes")));
    CHECK_OK(voxa_args_set_backend(&a, VOXA_BACKEND_AUTO));
    CHECK_OK(voxa_op_backend(&a, &b));
    CHECK(b == VOXA_BACKEND_CPU);
    CHECK_STATUS(voxa_args_set_backend(&a, (voxa_backend)9), VOXA_EINVAL);
    voxa_args_free(&a);
    voxa_array_free(&m);
}

static void test_device_bytes(void) {
    voxa_args a;
    int64_t sh[3] = {10, 20, 30}, t, l;
    const char *f;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("label")));
    CHECK_OK(voxa_op_device_bytes(&a, VOXA_U8, 3, sh, &t, &l, &f));
    /* parents + int32 output, and 12 root counts (512 voxels each) + their total */
    CHECK(t == 8 * 6000 + 4 * 6000 + 8 * (12 + 1) && l == 8 * 6000 && f && strstr(f, "9 V"));
    voxa_args_free(&a);
    CHECK_OK(voxa_args_init(&a, voxa_op_find("dilate")));
    CHECK_OK(voxa_args_parse(&a, "box", "3"));
    CHECK_OK(voxa_op_device_bytes(&a, VOXA_U8, 3, sh, &t, &l, &f));
    CHECK(t == 2 * 6000 && l == 6000);
    voxa_args_free(&a);
    CHECK_OK(voxa_args_init(&a, voxa_op_find("fill_holes")));
    CHECK_OK(voxa_op_device_bytes(&a, VOXA_U8, 3, sh, &t, &l, &f));
    CHECK(t == 0 && l == 0 && f == NULL);
    voxa_args_free(&a);
}

int main(void) {
    const char *env = getenv("VOXA_TEST_BACKENDS");
    char list[64];
    snprintf(list, sizeof list, "%s", env ? env : "opencl");
    for (char *tok = strtok(list, " ,"); tok && ngpus < 2; tok = strtok(NULL, " ,")) {
        voxa_backend b;
        if (voxa_backend_from_name(tok, &b) == VOXA_OK && (b == VOXA_BACKEND_OPENCL ||
                                                           b == VOXA_BACKEND_CUDA))
            gpus[ngpus++] = b;
    }
    RUN(test_edt);
    RUN(test_morph);
    RUN(test_no_gpu_path);
    RUN(test_device_bytes);
    VTEST_END();
}
