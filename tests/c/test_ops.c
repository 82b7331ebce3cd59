/* The op registry: every descriptor is complete, halos behave, and the
 * generic path (voxa_args + voxa_op_run / voxa_op_run_region) gives what the
 * typed C functions give, on whole volumes and region by region. */
#include "vtest.h"

#include <string.h>

static int param_documented(const voxa_param *p) {
    return p->def || (p->flags & (VOXA_PARAM_REQUIRED | VOXA_PARAM_HIDDEN)) || p->oneof ||
           p->type == VOXA_PARAM_FLAG || strstr(p->help, "default");
}

static void test_registry_metadata(void) {
    int n;
    const voxa_op *const *ops = voxa_ops(&n);
    CHECK(n >= 10);
    for (int i = 0; i < n; i++) {
        const voxa_op *op = ops[i];
        CHECK(op->name && *op->name && op->summary && strlen(op->summary) > 10);
        CHECK(op->python && *op->python);
        CHECK(op->run != NULL);
        CHECK(voxa_op_find(op->name) == op);
        CHECK(((op->flags & VOXA_OP_LOCAL) != 0) + ((op->flags & VOXA_OP_GLOBAL) != 0) == 1);
        CHECK(op->nparams <= VOXA_OP_MAXPARAMS);
        if (i) CHECK(strcmp(ops[i - 1]->name, op->name) < 0);
        for (int k = 0; k < op->nparams; k++) {
            const voxa_param *p = &op->params[k];
            CHECK(p->name && p->help && strlen(p->help) > 5);
            if (!param_documented(p)) fprintf(stderr, "  %s.%s: no default\n", op->name, p->name);
            CHECK(param_documented(p));
            CHECK(voxa_op_param(op, p->name) == k);
        }
        voxa_args a;
        CHECK_OK(voxa_args_init(&a, op)); /* every default parses */
        voxa_args_free(&a);
    }
    CHECK(voxa_op_find("nope") == NULL);
}

static void test_args_parsing(void) {
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("dilate")));
    CHECK(voxa_args_get(&a, "iterations")->i == 1);
    CHECK_OK(voxa_args_parse(&a, "border-value", "1"));
    CHECK(voxa_args_get(&a, "border_value")->i == 1);
    CHECK_STATUS(voxa_args_parse(&a, "border_value", "2"), VOXA_EINVAL);
    CHECK_MSG("border_value: '2'");
    CHECK_STATUS(voxa_args_parse(&a, "iterations", "1.5"), VOXA_EINVAL);
    CHECK_STATUS(voxa_args_parse(&a, "nope", "1"), VOXA_EINVAL);
    CHECK_OK(voxa_args_parse(&a, "box", "3x4x5"));
    CHECK(voxa_args_get(&a, "box")->n == 3 && voxa_args_get(&a, "box")->iv[2] == 5);
    CHECK_OK(voxa_args_parse(&a, "ball", "2"));
    int64_t shape[3] = {4, 5, 6};
    voxa_array in;
    CHECK_OK(voxa_array_new(&in, VOXA_U8, 3, shape));
    CHECK_STATUS(voxa_op_check(&a, &in), VOXA_EINVAL); /* two elements */
    CHECK_MSG("give exactly one of ball, diamond, box, connectivity and footprint");
    CHECK_OK(voxa_args_clear(&a, "ball"));
    CHECK_OK(voxa_op_check(&a, &in));
    CHECK_OK(voxa_args_parse(&a, "box", "3,4"));
    CHECK_STATUS(voxa_op_check(&a, &in), VOXA_EINVAL); /* 2 values for 3 axes */
    CHECK_MSG("expected 3 comma-separated values");
    voxa_args_free(&a);

    CHECK_OK(voxa_args_init(&a, voxa_op_find("edt")));
    CHECK_OK(voxa_args_parse(&a, "metric", "taxicab")); /* an alias */
    CHECK(voxa_args_get(&a, "metric")->i == 1);
    CHECK_STATUS(voxa_args_parse(&a, "metric", "bogus"), VOXA_EINVAL);
    CHECK_MSG("expected euclidean, cityblock or chessboard");
    CHECK_STATUS(voxa_args_parse(&a, "dtype", "int8"), VOXA_EINVAL);
    CHECK_OK(voxa_args_parse(&a, "dtype", "f32"));
    CHECK(voxa_args_get(&a, "dtype")->i == VOXA_F32);
    CHECK_OK(voxa_args_parse(&a, "metric", "chessboard"));
    CHECK_STATUS(voxa_op_check(&a, &in), VOXA_EINVAL);
    CHECK_MSG("euclidean only");
    voxa_args_free(&a);

    CHECK_OK(voxa_args_init(&a, voxa_op_find("roi")));
    CHECK(voxa_op_param(a.op, "centers") == voxa_op_param(a.op, "centres"));
    voxa_args_free(&a);
    voxa_array_free(&in);
}

/* Halo of `op` with `param` set to `v` (and `extra` = `ev` when given). */
static int64_t halo_of(const char *op, const char *param, const char *v, const char *extra,
                       const char *ev, const voxa_array *arr) {
    voxa_args a;
    int64_t lo[3] = {-1, -1, -1}, hi[3] = {-1, -1, -1};
    voxa_args_init(&a, voxa_op_find(op));
    if (arr) voxa_args_set_array(&a, param, arr, NULL);
    else voxa_args_parse(&a, param, v);
    if (extra) voxa_args_parse(&a, extra, ev);
    CHECK_OK(voxa_op_halo(&a, 3, lo, hi));
    voxa_args_free(&a);
    for (int d = 0; d < 3; d++) CHECK(lo[d] >= 0 && hi[d] >= 0);
    return lo[0] + lo[1] + lo[2] + hi[0] + hi[1] + hi[2];
}

static void test_halos(void) {
    const char *morph[] = {"dilate", "erode", "open", "close"};
    for (int i = 0; i < 4; i++) {
        int64_t prev = -1;
        for (int r = 0; r <= 12; r += 3) {
            char rs[8];
            snprintf(rs, sizeof rs, "%d", r);
            int64_t h = halo_of(morph[i], "ball", rs, NULL, NULL, NULL);
            CHECK(h >= prev);
            prev = h;
            CHECK(halo_of(morph[i], "ball", rs, "iterations", "3", NULL) >= h);
        }
        CHECK(halo_of(morph[i], "box", "5", NULL, NULL, NULL) >=
              halo_of(morph[i], "box", "3", NULL, NULL, NULL));
    }
    voxa_args a;
    int64_t lo[3], hi[3];
    CHECK_OK(voxa_args_init(&a, voxa_op_find("label")));
    CHECK_STATUS(voxa_op_halo(&a, 3, lo, hi), VOXA_EUNSUPPORTED); /* global */
    voxa_args_free(&a);
    CHECK_OK(voxa_args_init(&a, voxa_op_find("deconvolve")));
    CHECK_STATUS(voxa_op_halo(&a, 3, lo, hi), VOXA_EINVAL); /* regression: no psf crashed */
    CHECK_MSG("psf: required");
    voxa_args_free(&a);
    int64_t prev = -1;
    for (int s = 1; s <= 9; s += 2) {
        voxa_array psf;
        int64_t shape[3] = {s, s, s};
        voxa_array_new(&psf, VOXA_F32, 3, shape);
        int64_t h = halo_of("deconvolve", "psf", NULL, NULL, NULL, &psf);
        CHECK(h >= prev && h == 6 * (s / 2));
        prev = h;
        voxa_array_free(&psf);
    }
}

static void fill_random(voxa_array *a, double p, unsigned long long seed) {
    uint8_t *d = a->data;
    for (int64_t i = 0; i < voxa_array_size(a); i++) d[i] = (double)(vtest_rand(&seed) % 1000) < p * 1000;
}

static int same_bytes(const voxa_array *x, const voxa_array *y) {
    return x->dtype == y->dtype && voxa_array_size(x) == voxa_array_size(y) &&
           !memcmp(x->data, y->data, (size_t)voxa_array_size(x) * voxa_dtype_size(x->dtype));
}

/* Generic run of `name` (params as name/value text pairs) on `in`. */
static voxa_status generic(const char *name, const char *const *kv, const voxa_array *in,
                           voxa_array *out, int64_t *count) {
    voxa_args a;
    voxa_status st = voxa_args_init(&a, voxa_op_find(name));
    for (int i = 0; st == VOXA_OK && kv && kv[i]; i += 2) st = voxa_args_parse(&a, kv[i], kv[i + 1]);
    voxa_dtype dt;
    int nd;
    int64_t shape[VOXA_MAXDIM];
    if (st == VOXA_OK) st = voxa_op_check(&a, in);
    if (st == VOXA_OK) st = voxa_op_output(&a, in, &dt, &nd, shape);
    if (st == VOXA_OK) st = voxa_array_new(out, dt, nd, shape);
    if (st == VOXA_OK) st = voxa_op_run(&a, in, out, NULL, count);
    voxa_args_free(&a);
    return st;
}

static void test_generic_equals_typed(void) {
    int64_t shape[3] = {9, 10, 11};
    voxa_array in, got, want;
    CHECK_OK(voxa_array_new(&in, VOXA_U8, 3, shape));
    fill_random(&in, 0.2, 7);
    /* label */
    int64_t n1 = 0, n2 = 0;
    CHECK_OK(generic("label", (const char *[]){"connectivity", "2", "dtype", "uint32", NULL}, &in,
                     &got, &n1));
    CHECK_OK(voxa_array_new(&want, VOXA_U32, 3, shape));
    CHECK_OK(voxa_label(&in, NULL, 2, &want, &n2));
    CHECK(n1 == n2 && n1 > 1);
    CHECK(same_bytes(&got, &want));
    voxa_array_free(&got);
    voxa_array_free(&want);
    /* morphology */
    const char *ops[] = {"dilate", "erode", "open", "close"};
    for (int i = 0; i < 4; i++) {
        CHECK_OK(generic(ops[i], (const char *[]){"ball", "2", "border_value", "1", NULL}, &in,
                         &got, NULL));
        CHECK_OK(voxa_array_new(&want, VOXA_BOOL, 3, shape));
        voxa_morph_params p = {.se = {.kind = VOXA_SE_BALL, .radius = 2}, .iterations = 1,
                               .border_value = 1};
        CHECK_OK(voxa_morph((voxa_morph_op)i, &in, &want, &p));
        CHECK(same_bytes(&got, &want));
        voxa_array_free(&got);
        voxa_array_free(&want);
    }
    /* edt: euclidean with spacing, and chessboard */
    CHECK_OK(generic("edt", (const char *[]){"spacing", "2,1,0.5", NULL}, &in, &got, NULL));
    CHECK_OK(voxa_array_new(&want, VOXA_F64, 3, shape));
    voxa_edt_params ep = {.spacing = (const double[]){2, 1, 0.5}};
    CHECK_OK(voxa_edt(&in, &want, &ep));
    CHECK(same_bytes(&got, &want));
    voxa_array_free(&got);
    voxa_array_free(&want);
    CHECK_OK(generic("edt", (const char *[]){"metric", "chessboard", NULL}, &in, &got, NULL));
    CHECK_OK(voxa_array_new(&want, VOXA_I32, 3, shape));
    CHECK_OK(voxa_edt_cdt(&in, &want, VOXA_EDT_CHESSBOARD));
    CHECK(same_bytes(&got, &want));
    voxa_array_free(&got);
    voxa_array_free(&want);
    voxa_array_free(&in);
}

static void test_balls_roi_paste_deconv(void) {
    /* balls from an unnamed table, with a count */
    double pts[6] = {2.5, 3, 4, 6, 7.25, 1};
    voxa_array table, got, want;
    voxa_array_view(&table, pts, VOXA_F64, 2, (const int64_t[]){2, 3});
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("balls")));
    CHECK_OK(voxa_args_parse(&a, "shape", "8,9,10"));
    CHECK_OK(voxa_args_set_array(&a, "points", &table, NULL));
    CHECK_OK(voxa_args_parse(&a, "radius", "2.5"));
    CHECK_OK(voxa_args_parse(&a, "owner", "1"));
    int64_t count = -1, shape[3] = {8, 9, 10};
    CHECK_OK(voxa_op_check(&a, NULL));
    CHECK_OK(voxa_array_new(&got, VOXA_I32, 3, shape));
    CHECK_OK(voxa_op_run(&a, NULL, &got, NULL, &count));
    CHECK_OK(voxa_array_new(&want, VOXA_I32, 3, shape));
    voxa_balls_params bp = {.points = pts, .npoints = 2, .radius = 2.5, .owner = 1};
    CHECK_OK(voxa_balls(&bp, &want));
    CHECK(same_bytes(&got, &want));
    int64_t inside = 0;
    for (int64_t i = 0; i < 720; i++) inside += ((int32_t *)want.data)[i] != 0;
    CHECK(count == inside && inside > 0);
    /* region by region (4 x 3 x 5 blocks): the same owner map */
    voxa_array part = got;
    memset(got.data, 0, 720 * 4);
    for (int64_t z = 0; z < 8; z += 4)
        for (int64_t y = 0; y < 9; y += 3)
            for (int64_t x = 0; x < 10; x += 5) {
                int64_t origin[3] = {z, y, x};
                part.data = (char *)got.data + z * got.strides[0] + y * got.strides[1] + x * 4;
                part.shape[0] = 4, part.shape[1] = 3, part.shape[2] = 5;
                part.owner = NULL;
                CHECK_OK(voxa_op_run_region(&a, NULL, NULL, &part, origin, shape, NULL, NULL));
            }
    CHECK(same_bytes(&got, &want));
    voxa_args_free(&a);
    voxa_array_free(&got);
    voxa_array_free(&want);

    /* roi then paste (overwrite) restores the patches' voxels */
    voxa_array img;
    CHECK_OK(voxa_array_new(&img, VOXA_U16, 2, (const int64_t[]){6, 7}));
    for (int i = 0; i < 42; i++) ((uint16_t *)img.data)[i] = (uint16_t)(i * 7);
    double corners[4] = {0, 0, 3, 4};
    voxa_array_view(&table, corners, VOXA_F64, 2, (const int64_t[]){2, 2});
    CHECK_OK(voxa_args_init(&a, voxa_op_find("roi")));
    CHECK_OK(voxa_args_set_array(&a, "corners", &table, NULL));
    CHECK_OK(voxa_args_parse(&a, "size", "3,3"));
    CHECK_OK(voxa_array_new(&got, VOXA_U16, 3, (const int64_t[]){2, 3, 3}));
    CHECK_OK(voxa_op_run(&a, &img, &got, NULL, NULL));
    CHECK(((uint16_t *)got.data)[9] == 3 * 7 * 7 + 4 * 7);
    voxa_args_free(&a);
    CHECK_OK(voxa_args_init(&a, voxa_op_find("paste")));
    CHECK_OK(voxa_args_set_array(&a, "corners", &table, NULL));
    CHECK_OK(voxa_args_parse(&a, "shape", "6,7"));
    CHECK_OK(voxa_array_new(&want, VOXA_U16, 2, (const int64_t[]){6, 7}));
    memset(want.data, 0xff, 84); /* the op must zero it */
    CHECK_OK(voxa_op_run(&a, &got, &want, NULL, NULL));
    const uint16_t *w = want.data, *im = img.data;
    CHECK(w[0] == im[0] && w[3 * 7 + 4] == im[3 * 7 + 4] && w[5 * 7 + 6] == im[5 * 7 + 6] &&
          w[6] == 0 && w[5 * 7] == 0);
    voxa_args_free(&a);
    voxa_array_free(&got);
    voxa_array_free(&want);

    /* deconvolve: generic == plan/execute */
    voxa_array psf;
    CHECK_OK(voxa_array_new(&psf, VOXA_F32, 2, (const int64_t[]){3, 3}));
    for (int i = 0; i < 9; i++) ((float *)psf.data)[i] = i == 4 ? 0.6f : 0.05f;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("deconvolve")));
    CHECK_OK(voxa_args_set_array(&a, "psf", &psf, NULL));
    CHECK_OK(voxa_args_parse(&a, "iterations", "4"));
    CHECK_OK(voxa_args_parse(&a, "boundary", "periodic"));
    CHECK_OK(voxa_array_new(&got, VOXA_F32, 2, (const int64_t[]){6, 7}));
    CHECK_OK(voxa_op_run(&a, &img, &got, NULL, NULL));
    CHECK_OK(voxa_array_new(&want, VOXA_F32, 2, (const int64_t[]){6, 7}));
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 4;
    CHECK_OK(voxa_deconv_rl(&img, &psf, &want, VOXA_RL_PERIODIC, &o));
    CHECK(same_bytes(&got, &want));
    voxa_args_free(&a);
    voxa_array_free(&got);
    voxa_array_free(&want);
    voxa_array_free(&psf);
    voxa_array_free(&img);
}

/* Local ops region by region, each region read with its halo (clamped at
 * the volume's edge): equal to the whole-volume result. */
static void test_regions_equal_whole(void) {
    int64_t shape[3] = {13, 11, 12};
    voxa_array in, whole, chunked;
    CHECK_OK(voxa_array_new(&in, VOXA_U8, 3, shape));
    fill_random(&in, 0.5, 11);
    const char *cases[][4] = {{"open", "ball", "2", "0"}, {"dilate", "diamond", "2", "1"},
                              {"close", "box", "3,2,4", "1"}, {"erode", "connectivity", "2", "0"}};
    for (int c = 0; c < 4; c++) {
        voxa_args a;
        CHECK_OK(voxa_args_init(&a, voxa_op_find(cases[c][0])));
        CHECK_OK(voxa_args_parse(&a, cases[c][1], cases[c][2]));
        CHECK_OK(voxa_args_parse(&a, "border_value", cases[c][3]));
        CHECK_OK(voxa_args_parse(&a, "iterations", "2"));
        CHECK_OK(voxa_array_new(&whole, VOXA_BOOL, 3, shape));
        CHECK_OK(voxa_array_new(&chunked, VOXA_BOOL, 3, shape));
        CHECK_OK(voxa_op_run(&a, &in, &whole, NULL, NULL));
        int64_t lo[3], hi[3], ch[3] = {5, 4, 7};
        CHECK_OK(voxa_op_halo(&a, 3, lo, hi));
        for (int64_t z = 0; z < shape[0]; z += ch[0])
            for (int64_t y = 0; y < shape[1]; y += ch[1])
                for (int64_t x = 0; x < shape[2]; x += ch[2]) {
                    int64_t o[3] = {z, y, x}, io[3];
                    voxa_array src = in, dst = chunked;
                    for (int d = 0; d < 3; d++) {
                        int64_t e = o[d] + ch[d] < shape[d] ? o[d] + ch[d] : shape[d];
                        io[d] = o[d] - lo[d] > 0 ? o[d] - lo[d] : 0;
                        int64_t ie = e + hi[d] < shape[d] ? e + hi[d] : shape[d];
                        src.data = (char *)src.data + io[d] * in.strides[d];
                        src.shape[d] = ie - io[d];
                        dst.data = (char *)dst.data + o[d] * chunked.strides[d];
                        dst.shape[d] = e - o[d];
                    }
                    src.owner = dst.owner = NULL;
                    CHECK_OK(voxa_op_run_region(&a, &src, io, &dst, o, shape, NULL, NULL));
                }
        CHECK(same_bytes(&whole, &chunked));
        voxa_array_free(&whole);
        voxa_array_free(&chunked);
        voxa_args_free(&a);
    }
    voxa_array_free(&in);
}

int main(void) {
    RUN(test_registry_metadata);
    RUN(test_args_parsing);
    RUN(test_halos);
    RUN(test_generic_equals_typed);
    RUN(test_balls_roi_paste_deconv);
    RUN(test_regions_equal_whole);
    VTEST_END();
}
