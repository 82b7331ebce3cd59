/* The chunk executor: every op by blocks equals the op on the whole volume
 * (labelling included, with scipy's numbering), for blocks that do not
 * divide the shape, blocks of one voxel along an axis, halos larger than a
 * block; .npy stores by regions; plans that respect the memory limit. */
#include "vtest.h"

#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

static void fill(voxa_array *a, int permille, unsigned long long seed) {
    uint8_t *d = a->data;
    for (int64_t i = 0; i < voxa_array_size(a); i++) d[i] = (int)(vtest_rand(&seed) % 1000) < permille;
}

static int same(const voxa_array *x, const voxa_array *y) {
    return x->dtype == y->dtype && voxa_array_size(x) == voxa_array_size(y) &&
           !memcmp(x->data, y->data, (size_t)voxa_array_size(x) * voxa_dtype_size(x->dtype));
}

/* Run `a` whole and by blocks of `block` (memory stores); compare. */
static void compare(const voxa_args *a, voxa_array *in, const int64_t *block, const char *what) {
    voxa_dtype t;
    int nd;
    int64_t shape[VOXA_MAXDIM], n1 = -2, n2 = -2;
    CHECK_OK(voxa_op_output(a, in, &t, &nd, shape));
    voxa_array whole, blocks;
    CHECK_OK(voxa_array_new(&whole, t, nd, shape));
    CHECK_OK(voxa_array_new(&blocks, t, nd, shape));
    CHECK_OK(voxa_op_run(a, in, &whole, NULL, &n1));
    /* one block at a time, and several in flight (any worker takes any block) */
    for (int w = 1; w <= 5; w += 2) {
        voxa_store *si = NULL, *so = NULL;
        if (in) CHECK_OK(voxa_store_wrap(in, &si));
        memset(blocks.data, 0xA5, (size_t)voxa_array_size(&blocks) * voxa_dtype_size(t));
        CHECK_OK(voxa_store_wrap(&blocks, &so));
        voxa_stream_options o;
        memset(&o, 0, sizeof o);
        memcpy(o.block, block, sizeof(int64_t) * (size_t)nd);
        o.workers = w;
        CHECK_OK(voxa_stream_run(a, si, so, &o, &n2));
        int ok = same(&whole, &blocks) && n1 == n2;
        if (!ok)
            fprintf(stderr, "  %s, %d workers: differs (counts %lld, %lld)\n", what, w,
                    (long long)n1, (long long)n2);
        CHECK(ok);
        voxa_store_close(si);
        voxa_store_close(so);
    }
    voxa_array_free(&whole);
    voxa_array_free(&blocks);
}

static void test_label_blocks(void) {
    int64_t shapes[3][3] = {{23, 17, 19}, {40, 33, 1}, {7, 64, 9}};
    int64_t blocks[4][3] = {{5, 4, 7}, {1, 17, 19}, {23, 1, 3}, {8, 8, 8}};
    for (int s = 0; s < 3; s++)
        for (int conn = 1; conn <= 3; conn++)
            for (int dens = 0; dens < 3; dens++) {
                voxa_array in;
                CHECK_OK(voxa_array_new(&in, VOXA_U8, 3, shapes[s]));
                fill(&in, (int[]){300, 550, 800}[dens], 17u + (unsigned)(s * 9 + conn * 3 + dens));
                voxa_args a;
                CHECK_OK(voxa_args_init(&a, voxa_op_find("label")));
                char cs[4];
                snprintf(cs, sizeof cs, "%d", conn);
                CHECK_OK(voxa_args_parse(&a, "connectivity", cs));
                /* every label dtype: the per-voxel loops are instantiated per type */
                const char *dt = (const char *[]){"int64", "int32", "uint16"}[dens];
                CHECK_OK(voxa_args_parse(&a, "dtype", dt));
                for (int b = 0; b < 4; b++) compare(&a, &in, blocks[b], dt);
                voxa_args_free(&a);
                voxa_array_free(&in);
            }
}

/* A spiral snake through every block: one component, numbered 1. */
static void test_label_spiral(void) {
    int64_t shape[2] = {41, 37};
    voxa_array in;
    CHECK_OK(voxa_array_new(&in, VOXA_U8, 2, shape));
    uint8_t *m = in.data;
    int64_t top = 0, left = 0, bottom = 40, right = 36;
    while (top <= bottom && left <= right) {
        for (int64_t x = left; x <= right; x++) m[top * 37 + x] = 1;
        for (int64_t y = top; y <= bottom; y++) m[y * 37 + right] = 1;
        for (int64_t x = left; x <= right && bottom > top; x++) m[bottom * 37 + x] = 1;
        for (int64_t y = top + 2; y <= bottom; y++) m[y * 37 + left] = 1;
        top += 2, left += 2, bottom -= 2, right -= 2;
        if (left <= right) m[(top - 1) * 37 + left - 2 + 1] = 1;
    }
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("label")));
    int64_t blocks[3][2] = {{3, 3}, {1, 37}, {41, 2}};
    for (int b = 0; b < 3; b++) compare(&a, &in, blocks[b], "spiral");
    /* an explicit structure (diagonals only on one axis pair) */
    unsigned char st[9] = {1, 1, 0, 1, 1, 1, 0, 1, 1};
    voxa_array sv;
    voxa_array_view(&sv, st, VOXA_U8, 2, (const int64_t[]){3, 3});
    fill(&in, 450, 5);
    CHECK_OK(voxa_args_set_array(&a, "structure", &sv, NULL));
    CHECK_OK(voxa_args_clear(&a, "connectivity"));
    for (int b = 0; b < 3; b++) compare(&a, &in, blocks[b], "structure");
    voxa_args_free(&a);
    voxa_array_free(&in);
}

static int cancel_after_two(int64_t done, int64_t total, void *user) {
    (void)total;
    (void)user;
    return done < 2;
}

/* With blocks in flight, a failing run reports the lowest failing block's
 * error whatever the timing, and a cancel stops it. */
static void test_pool_errors(void) {
    int64_t shape[2] = {1040, 520};
    voxa_array in, out;
    CHECK_OK(voxa_array_new(&in, VOXA_U8, 2, shape));
    CHECK_OK(voxa_array_new(&out, VOXA_U16, 2, shape));
    uint8_t *m = in.data;
    for (int64_t i = 0; i < 1040; i++)
        for (int64_t j = 0; j < 520; j++) m[i * 520 + j] = i % 2 == 0 && j % 2 == 0;
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("label")));
    CHECK_OK(voxa_args_parse(&a, "dtype", "uint16"));
    char first[1024] = "";
    for (int w = 1; w <= 3; w += 2) { /* 67600 labels per block: every block fails */
        voxa_store *si, *so;
        CHECK_OK(voxa_store_wrap(&in, &si));
        CHECK_OK(voxa_store_wrap(&out, &so));
        voxa_stream_options o;
        memset(&o, 0, sizeof o);
        o.block[0] = 520, o.block[1] = 520;
        o.workers = w;
        CHECK(voxa_stream_run(&a, si, so, &o, NULL) != VOXA_OK);
        if (w == 1) snprintf(first, sizeof first, "%s", voxa_last_error());
        else CHECK(!strcmp(first, voxa_last_error()));
        CHECK(!strncmp(first, "block 0 of 2: ", 14));
        o.block[0] = 8;
        o.progress = (voxa_progress){cancel_after_two, NULL};
        CHECK_STATUS(voxa_stream_run(&a, si, so, &o, NULL), VOXA_ECANCELLED);
        voxa_store_close(si);
        voxa_store_close(so);
    }
    voxa_args_free(&a);
    voxa_array_free(&in);
    voxa_array_free(&out);
}

static void test_local_blocks(void) {
    int64_t shape[3] = {17, 14, 15};
    voxa_array in;
    CHECK_OK(voxa_array_new(&in, VOXA_U8, 3, shape));
    fill(&in, 500, 3);
    const char *cases[][6] = {{"open", "ball", "3", "border_value", "1"},
                              {"dilate", "diamond", "2", "iterations", "3"},
                              {"close", "box", "4,1,3", "border_value", "0"},
                              {"erode", "connectivity", "3", "iterations", "2"}};
    int64_t blocks[3][3] = {{4, 5, 6}, {1, 14, 15}, {17, 3, 1}}; /* halos larger than blocks */
    for (int c = 0; c < 4; c++) {
        voxa_args a;
        CHECK_OK(voxa_args_init(&a, voxa_op_find(cases[c][0])));
        CHECK_OK(voxa_args_parse(&a, cases[c][1], cases[c][2]));
        CHECK_OK(voxa_args_parse(&a, cases[c][3], cases[c][4]));
        for (int b = 0; b < 3; b++) compare(&a, &in, blocks[b], cases[c][0]);
        voxa_args_free(&a);
    }
    /* balls: no input; owner map */
    double pts[9] = {3.5, 2, 7, 10, 12.5, -1, 16, 0, 14};
    voxa_array table;
    voxa_array_view(&table, pts, VOXA_F64, 2, (const int64_t[]){3, 3});
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("balls")));
    CHECK_OK(voxa_args_parse(&a, "shape", "17,14,15"));
    CHECK_OK(voxa_args_set_array(&a, "points", &table, NULL));
    CHECK_OK(voxa_args_parse(&a, "radius", "4.5"));
    CHECK_OK(voxa_args_parse(&a, "owner", "1"));
    for (int b = 0; b < 3; b++) compare(&a, NULL, blocks[b], "balls");
    voxa_args_free(&a);
    /* edt: streamed passes, equal to the whole-volume result */
    CHECK_OK(voxa_args_init(&a, voxa_op_find("edt")));
    compare(&a, &in, blocks[0], "edt");
    voxa_store *s;
    voxa_stream_plan p;
    CHECK_OK(voxa_store_wrap(&in, &s));
    CHECK_OK(voxa_stream_plan_make(&a, s, NULL, &p));
    CHECK(p.streamed && !p.whole); /* streamed passes (run_edt.c) */
    voxa_store_close(s);
    voxa_args_free(&a);
    voxa_array_free(&in);
}

static void test_plan_memory(void) {
    int64_t shape[3] = {200, 300, 400};
    voxa_array meta;
    CHECK_OK(voxa_array_new(&meta, VOXA_U8, 3, (const int64_t[]){1, 1, 1}));
    meta.shape[0] = 200, meta.shape[1] = 300, meta.shape[2] = 400; /* never read */
    voxa_store *s;
    CHECK_OK(voxa_store_wrap(&meta, &s));
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("open")));
    CHECK_OK(voxa_args_parse(&a, "ball", "5"));
    voxa_stream_options o;
    memset(&o, 0, sizeof o);
    o.mem_limit = 16 << 20;
    voxa_stream_plan p;
    CHECK_OK(voxa_stream_plan_make(&a, s, &o, &p));
    CHECK(p.peak_bytes <= o.mem_limit && p.nblocks > 1 && p.halo_lo[0] == 10);
    /* slabs would be 2x300x400, 11.8x the volume's work with this halo:
     * squat blocks instead, each axis cut */
    CHECK(p.block[0] < 200 && p.block[1] < 300 && p.block[2] < 400);
    CHECK(voxa_stream_plan_overhead(&p) < 1.5);
    char text[768];
    CHECK_OK(voxa_stream_plan_text(&p, text, sizeof text));
    CHECK(strstr(text, "blocks:") && strstr(text, "halo:") && strstr(text, "work:"));
    /* the work figure: blocks grown by the halo, clipped at the edges */
    voxa_stream_plan q = p;
    for (int d = 0; d < 3; d++) q.block[d] = shape[d];
    CHECK(voxa_stream_plan_overhead(&q) == 1.0); /* one block: the halo is outside */
    q.block[0] = 50, q.block[1] = 300, q.block[2] = 400;
    /* axis 0: blocks [0,50) .. [150,200) grown to 60, 70, 70, 60 voxels */
    CHECK(fabs(voxa_stream_plan_overhead(&q) - 260.0 / 200.0) < 1e-12);
    /* a narrow halo keeps slabs along axis 0 (long reads) */
    voxa_args_free(&a);
    CHECK_OK(voxa_args_init(&a, voxa_op_find("open")));
    CHECK_OK(voxa_args_parse(&a, "ball", "1"));
    o.mem_limit = 64 << 20;
    CHECK_OK(voxa_stream_plan_make(&a, s, &o, &p));
    CHECK(p.peak_bytes <= o.mem_limit && p.nblocks > 1 && p.halo_lo[0] == 2);
    CHECK(p.block[1] == 300 && p.block[2] == 400);
    voxa_args_free(&a);
    voxa_store_close(s);
    meta.shape[0] = meta.shape[1] = meta.shape[2] = 1;
    voxa_array_free(&meta);
}

static void test_npy_store(void) {
    char path[] = "stream_store_test.npy";
    unlink(path);
    int64_t shape[3] = {6, 5, 7};
    voxa_array a, back, part;
    CHECK_OK(voxa_array_new(&a, VOXA_I32, 3, shape));
    for (int i = 0; i < 210; i++) ((int32_t *)a.data)[i] = i * 3 - 100;
    voxa_store *s;
    CHECK_OK(voxa_store_create(path, VOXA_I32, 3, shape, NULL, &s));
    CHECK(access(path, F_OK) != 0); /* nothing under the name before commit */
    for (int64_t z = 0; z < 6; z += 4) { /* two slabs */
        int64_t lo[3] = {z, 0, 0}, sh[3] = {z ? 2 : 4, 5, 7};
        voxa_array v = a;
        v.data = (char *)a.data + z * a.strides[0];
        v.shape[0] = sh[0];
        v.owner = NULL;
        CHECK_OK(voxa_store_write(s, lo, &v));
    }
    CHECK_OK(voxa_store_commit(s));
    voxa_store_close(s);
    CHECK_OK(voxa_read(path, &back));
    CHECK(same(&a, &back));
    voxa_array_free(&back);
    /* region reads, into a strided destination */
    CHECK_OK(voxa_store_open(path, &s));
    CHECK_OK(voxa_array_new(&part, VOXA_I32, 3, (const int64_t[]){2, 3, 4}));
    CHECK_OK(voxa_store_read(s, (const int64_t[]){3, 1, 2}, &part));
    CHECK(((int32_t *)part.data)[0] == ((int32_t *)a.data)[3 * 35 + 1 * 7 + 2]);
    CHECK(((int32_t *)part.data)[23] == ((int32_t *)a.data)[4 * 35 + 3 * 7 + 5]);
    CHECK_STATUS(voxa_store_read(s, (const int64_t[]){5, 1, 2}, &part), VOXA_EINVAL);
    CHECK_STATUS(voxa_store_write(s, (const int64_t[]){0, 0, 0}, &part), VOXA_EINVAL);
    voxa_store_close(s);
    voxa_array_free(&part);
    /* an uncommitted output leaves nothing behind */
    unlink(path);
    CHECK_OK(voxa_store_create(path, VOXA_U8, 1, (const int64_t[]){10}, NULL, &s));
    voxa_store_close(s);
    CHECK(access(path, F_OK) != 0);
    voxa_array_free(&a);
}

static void test_label_steps(void) {
    int64_t first[5] = {10, 2, 7, 5, 0}, pairs[6] = {1, 3, 4, 2, 3, 1}, final[5], nc = -1;
    CHECK_OK(voxa_label_resolve(5, first, pairs, 3, final, &nc));
    /* components {1,3} (first 7), {2,4} (first 2), {5} (first 0) */
    CHECK(nc == 3 && final[4] == 1 && final[1] == 2 && final[3] == 2 && final[0] == 3 &&
          final[2] == 3);
    pairs[0] = 9;
    CHECK_STATUS(voxa_label_resolve(5, first, pairs, 3, final, &nc), VOXA_EINVAL);
    CHECK_MSG("outside 1..5");
    /* first voxels of a 2x3 block at (4, 1) of a 10x10 volume */
    int64_t v[6] = {0, 1, 1, 2, 0, 3}, f[3];
    voxa_array ids;
    voxa_array_view(&ids, v, VOXA_I64, 2, (const int64_t[]){2, 3});
    CHECK_OK(voxa_label_first(&ids, 3, (const int64_t[]){4, 1}, (const int64_t[]){10, 10}, f));
    CHECK(f[0] == 42 && f[1] == 51 && f[2] == 53);
    v[1] = 2;
    CHECK_STATUS(voxa_label_first(&ids, 3, (const int64_t[]){4, 1}, (const int64_t[]){10, 10}, f),
                 VOXA_EINVAL);
    /* a face: lower layer ids 1 2 / upper 3 0, full 2-D structure */
    int64_t face[4] = {1, 2, 3, 0}, *pp = NULL, np = 0;
    unsigned char st[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    voxa_array fv;
    voxa_array_view(&fv, face, VOXA_I64, 2, (const int64_t[]){2, 2});
    CHECK_OK(voxa_label_face_pairs(&fv, 0, (const int64_t[]){7, 0}, (const int64_t[]){0, 0},
                                   (const int64_t[]){8, 2}, st, &pp, &np));
    CHECK(np == 2 && pp[0] == 1 && pp[1] == 3 && pp[2] == 2 && pp[3] == 3);
    free(pp);
}

int main(void) {
    RUN(test_label_steps);
    RUN(test_label_blocks);
    RUN(test_label_spiral);
    RUN(test_local_blocks);
    RUN(test_pool_errors);
    RUN(test_plan_memory);
    RUN(test_npy_store);
    VTEST_END();
}
