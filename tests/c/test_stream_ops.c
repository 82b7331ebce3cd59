/* The streamed runners of edt, fill holes, roi and paste (src/stream/run_*.c)
 * against the same op run in memory: equal voxel for voxel, for blocks that
 * do not divide the shape, blocks one voxel thick, objects crossing many
 * blocks, every metric / structure / mode; plans that stream (no `whole`)
 * and fit the memory limit; scratch files removed. */
#include "vtest.h"

#include <dirent.h>
#include <stdlib.h>
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

/* Scratch files left in $TMPDIR by the edt runner (must stay 0). */
static int scratch_left(void) {
    DIR *d = opendir(getenv("TMPDIR"));
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += !strncmp(e->d_name, "voxa-edt-", 9);
    if (d) closedir(d);
    return n;
}

/* Run `a` whole and streamed with blocks `block`; compare; the plan must
 * stream. Returns whether they were equal. */
static int compare(const voxa_args *a, voxa_array *in, const int64_t *block, const char *what) {
    voxa_dtype t;
    int nd;
    int64_t shape[VOXA_MAXDIM];
    CHECK_OK(voxa_op_output(a, in, &t, &nd, shape));
    voxa_array whole, blocks;
    CHECK_OK(voxa_array_new(&whole, t, nd, shape));
    CHECK_OK(voxa_array_new(&blocks, t, nd, shape));
    memset(blocks.data, 0x5a, (size_t)voxa_array_size(&blocks) * voxa_dtype_size(t));
    CHECK_OK(voxa_op_run(a, in, &whole, NULL, NULL));
    voxa_store *si = NULL, *so = NULL;
    CHECK_OK(voxa_store_wrap(in, &si));
    CHECK_OK(voxa_store_wrap(&blocks, &so));
    voxa_stream_options o;
    memset(&o, 0, sizeof o);
    memcpy(o.block, block, sizeof(int64_t) * (size_t)nd);
    voxa_stream_plan p;
    CHECK_OK(voxa_stream_plan_make(a, si, &o, &p));
    CHECK(p.streamed && !p.whole);
    CHECK_OK(voxa_stream_run(a, si, so, &o, NULL));
    int ok = same(&whole, &blocks);
    if (!ok) fprintf(stderr, "  %s: streamed differs from in memory\n", what);
    CHECK(ok);
    voxa_store_close(si);
    voxa_store_close(so);
    voxa_array_free(&whole);
    voxa_array_free(&blocks);
    return ok;
}

static void test_edt(void) {
    int64_t shapes[4][3] = {{23, 17, 19}, {7, 64, 9}, {40, 33, 1}, {9, 1, 30}};
    int64_t blocks[4][3] = {{5, 4, 7}, {1, 17, 19}, {23, 1, 3}, {8, 8, 8}};
    const char *cases[][4] = {{NULL}, {"spacing", "2,1,0.5"}, {"squared", "1"},
                              {"dtype", "float32"}, {"dtype", "float32", "spacing", "0.3,1.7,1"},
                              {"dtype", "uint32", "squared", "1"}, {"metric", "cityblock"},
                              {"metric", "chessboard"}, {"squared", "1", "spacing", "3"}};
    int ncases = (int)(sizeof cases / sizeof cases[0]);
    for (int s = 0; s < 4; s++)
        for (int dens = 0; dens < 4; dens++) {
            voxa_array in;
            CHECK_OK(voxa_array_new(&in, VOXA_U8, 3, shapes[s]));
            /* dense, sparse background (long distances), none at all */
            fill(&in, (int[]){500, 950, 998, 1000}[dens], 7u + (unsigned)(s * 5 + dens));
            for (int c = 0; c < ncases; c++) {
                voxa_args a;
                CHECK_OK(voxa_args_init(&a, voxa_op_find("edt")));
                for (int k = 0; k < 4 && cases[c][k]; k += 2)
                    CHECK_OK(voxa_args_parse(&a, cases[c][k], cases[c][k + 1]));
                for (int b = 0; b < 4; b++) compare(&a, &in, blocks[b], "edt");
                voxa_args_free(&a);
            }
            voxa_array_free(&in);
        }
    /* 2-D, int16 input, a plan from the memory limit */
    voxa_array in2;
    CHECK_OK(voxa_array_new(&in2, VOXA_I16, 2, (const int64_t[]){61, 47}));
    for (int i = 0; i < 61 * 47; i++) ((int16_t *)in2.data)[i] = (int16_t)(i % 97 ? -3 : 0);
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("edt")));
    compare(&a, &in2, (const int64_t[]){7, 5}, "edt 2-D");
    voxa_store *s;
    CHECK_OK(voxa_store_wrap(&in2, &s));
    voxa_stream_options o;
    memset(&o, 0, sizeof o);
    o.mem_limit = 8 << 10;
    voxa_stream_plan p;
    CHECK_OK(voxa_stream_plan_make(&a, s, &o, &p));
    CHECK(p.streamed && p.peak_bytes <= o.mem_limit && p.block[0] < 61 && p.block[1] < 47);
    voxa_store_close(s);
    voxa_args_free(&a);
    voxa_array_free(&in2);
    CHECK(scratch_left() == 0);
}

/* A structure of random true elements (size 3 or 5 per axis). */
static void random_structure(voxa_array *st, int nd, const int64_t *shape, unsigned long long seed) {
    CHECK_OK(voxa_array_new(st, VOXA_U8, nd, shape));
    fill(st, 350, seed);
}

static void test_fill_holes(void) {
    int64_t shapes[3][3] = {{23, 17, 19}, {31, 29, 1}, {8, 40, 13}};
    int64_t blocks[4][3] = {{5, 4, 7}, {1, 17, 19}, {23, 1, 3}, {3, 3, 3}};
    for (int s = 0; s < 3; s++)
        for (int dens = 0; dens < 3; dens++) {
            voxa_array in;
            CHECK_OK(voxa_array_new(&in, VOXA_U8, 3, shapes[s]));
            fill(&in, (int[]){350, 550, 700}[dens], 31u + (unsigned)(s * 3 + dens));
            for (int c = 0; c < 7; c++) {
                voxa_args a;
                voxa_array st = {0};
                CHECK_OK(voxa_args_init(&a, voxa_op_find("fill_holes")));
                if (c < 3) {
                    char cs[4];
                    snprintf(cs, sizeof cs, "%d", c + 1);
                    CHECK_OK(voxa_args_parse(&a, "connectivity", cs));
                } else if (c == 3) {
                    CHECK_OK(voxa_args_parse(&a, "origin", "1,0,-1"));
                } else {
                    /* not centrosymmetric; 5 wide; with an origin */
                    int64_t ss[3] = {3, c == 5 ? 5 : 3, c == 6 ? 1 : 3};
                    random_structure(&st, 3, ss, 99u + (unsigned)c);
                    CHECK_OK(voxa_args_clear(&a, "connectivity"));
                    CHECK_OK(voxa_args_set_array(&a, "structure", &st, NULL));
                    if (c == 5) CHECK_OK(voxa_args_parse(&a, "origin", "0,-1,1"));
                }
                for (int b = 0; b < 4; b++) compare(&a, &in, blocks[b], "fill holes");
                voxa_args_free(&a);
                voxa_array_free(&st);
            }
            voxa_array_free(&in);
        }
    /* a 2-D maze: a spiral wall whose inside is reached through one long
     * winding corridor crossing every block many times, and a closed room */
    int64_t sh[2] = {45, 41};
    voxa_array m;
    CHECK_OK(voxa_array_new(&m, VOXA_U8, 2, sh));
    uint8_t *v = m.data;
    int64_t top = 1, left = 1, bottom = 43, right = 39;
    while (top + 2 <= bottom && left + 2 <= right) {
        for (int64_t x = left; x <= right; x++) v[top * 41 + x] = v[bottom * 41 + x] = 1;
        for (int64_t y = top; y <= bottom; y++) v[y * 41 + left] = v[y * 41 + right] = 1;
        v[(top + 1) * 41 + left] = 0; /* a door in every ring */
        top += 2, left += 2, bottom -= 2, right -= 2;
    }
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("fill_holes")));
    compare(&a, &m, (const int64_t[]){4, 5}, "fill holes maze");
    compare(&a, &m, (const int64_t[]){1, 41}, "fill holes maze, rows");
    v[2 * 41 + 1] = 1; /* close the outer door: everything inside is a hole */
    compare(&a, &m, (const int64_t[]){6, 6}, "fill holes closed maze");
    CHECK_OK(voxa_args_parse(&a, "connectivity", "2"));
    compare(&a, &m, (const int64_t[]){6, 6}, "fill holes closed maze, diagonal");
    voxa_args_free(&a);
    /* a structure longer than the volume: every background voxel leaves */
    voxa_array big;
    random_structure(&big, 2, (const int64_t[]){3, 91}, 5);
    ((uint8_t *)big.data)[0] = 1;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("fill_holes")));
    CHECK_OK(voxa_args_clear(&a, "connectivity"));
    CHECK_OK(voxa_args_set_array(&a, "structure", &big, NULL));
    compare(&a, &m, (const int64_t[]){7, 9}, "fill holes, huge structure");
    voxa_args_free(&a);
    voxa_array_free(&big);
    voxa_array_free(&m);
}

static void test_roi(void) {
    int64_t shape[3] = {21, 18, 4}; /* the last axis taken whole (k = 2) or cut (k = 3) */
    voxa_array in;
    CHECK_OK(voxa_array_new(&in, VOXA_I16, 3, shape));
    for (int i = 0; i < 21 * 18 * 4; i++) ((int16_t *)in.data)[i] = (int16_t)(i * 7 - 900);
    /* corners inside, crossing every edge, far outside, and wider than the axis */
    double rows[][3] = {{0, 0, 0},   {15, 12, 1}, {-3, 5, 0},  {19, 16, 2}, {-30, -2, 0},
                        {30, 40, 3}, {7, -17, 1}, {10, 10, 0}, {-1, 17, 3}, {20, 0, 0}};
    const char *modes[] = {"constant", "nearest", "reflect", "clip", "error"};
    for (int k = 2; k <= 3; k++)
        for (int md = 0; md < 5; md++) {
            int nrows = md == 4 ? 1 : 10; /* error: the rows inside */
            double t[30];
            for (int r = 0; r < nrows; r++)
                for (int d = 0; d < k; d++) t[r * k + d] = rows[md == 4 ? 7 : r][d];
            voxa_array table;
            voxa_array_view(&table, t, VOXA_F64, 2, (const int64_t[]){nrows, k});
            voxa_args a;
            CHECK_OK(voxa_args_init(&a, voxa_op_find("roi")));
            CHECK_OK(voxa_args_set_array(&a, md % 2 ? "centres" : "corners", &table, NULL));
            CHECK_OK(voxa_args_parse(&a, "size", k == 2 ? "5,6" : "5,6,3"));
            CHECK_OK(voxa_args_parse(&a, "mode", modes[md]));
            if (md == 0) CHECK_OK(voxa_args_parse(&a, "value", "-7"));
            int64_t b1[4] = {3, 5, 6, 3}, b2[4] = {1, 5, 6, 3}, b3[4] = {10, 5, 6, 3};
            compare(&a, &in, b1, "roi");
            compare(&a, &in, b2, "roi, one patch a batch");
            compare(&a, &in, b3, "roi, one batch");
            voxa_args_free(&a);
        }
    /* error mode names the row outside */
    voxa_args a;
    double bad[4] = {1, 1, 19, 2};
    voxa_array table;
    voxa_array_view(&table, bad, VOXA_F64, 2, (const int64_t[]){2, 2});
    CHECK_OK(voxa_args_init(&a, voxa_op_find("roi")));
    CHECK_OK(voxa_args_set_array(&a, "corners", &table, NULL));
    CHECK_OK(voxa_args_parse(&a, "size", "5,6"));
    voxa_store *si, *so;
    voxa_array out;
    CHECK_OK(voxa_array_new(&out, VOXA_I16, 4, (const int64_t[]){2, 5, 6, 4}));
    CHECK_OK(voxa_store_wrap(&in, &si));
    CHECK_OK(voxa_store_wrap(&out, &so));
    CHECK_STATUS(voxa_stream_run(&a, si, so, NULL, NULL), VOXA_EINVAL);
    CHECK_MSG("row 1");
    voxa_store_close(si);
    voxa_store_close(so);
    voxa_array_free(&out);
    voxa_args_free(&a);
    voxa_array_free(&in);
}

static void test_paste(void) {
    int64_t pshape[4] = {9, 5, 4, 3};
    voxa_array patches, vol;
    CHECK_OK(voxa_array_new(&patches, VOXA_F32, 4, pshape));
    for (int i = 0; i < 9 * 5 * 4 * 3; i++) ((float *)patches.data)[i] = (float)((i * 37) % 101) - 50.0f;
    CHECK_OK(voxa_array_new(&vol, VOXA_F32, 3, (const int64_t[]){17, 13, 3}));
    for (int i = 0; i < 17 * 13 * 3; i++) ((float *)vol.data)[i] = (float)(i % 13);
    double rows[9][2] = {{0, 0}, {3, 2}, {4, 3}, {12, 9}, {-2, 1}, {14, 11}, {8, -3}, {3, 2}, {6, 5}};
    voxa_array table;
    voxa_array_view(&table, rows, VOXA_F64, 2, (const int64_t[]){9, 2});
    const char *ops[] = {"overwrite", "add", "max", "mean"};
    const char *modes[] = {"crop", "clip"};
    int64_t blocks[3][3] = {{4, 5, 3}, {1, 13, 3}, {17, 2, 1}};
    for (int op = 0; op < 4; op++)
        for (int md = 0; md < 2; md++)
            for (int target = 0; target < 2; target++) {
                voxa_args a;
                CHECK_OK(voxa_args_init(&a, voxa_op_find("paste")));
                CHECK_OK(voxa_args_set_array(&a, md ? "centres" : "corners", &table, NULL));
                CHECK_OK(voxa_args_parse(&a, "op", ops[op]));
                CHECK_OK(voxa_args_parse(&a, "mode", modes[md]));
                if (target) CHECK_OK(voxa_args_set_array(&a, "volume", &vol, NULL));
                else CHECK_OK(voxa_args_parse(&a, "shape", "17,13,3"));
                for (int b = 0; b < 3; b++) compare(&a, &patches, blocks[b], "paste");
                voxa_args_free(&a);
            }
    voxa_array_free(&patches);
    voxa_array_free(&vol);
}

int main(void) {
    char dir[] = "/tmp/voxa-stream-ops-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    setenv("TMPDIR", dir, 1);
    RUN(test_edt);
    RUN(test_fill_holes);
    RUN(test_roi);
    RUN(test_paste);
    rmdir(dir);
    VTEST_END();
}
