/* voxa_fill_holes against scipy's definition run literally (masked dilation
 * of an empty image with border value 1, repeated until nothing changes,
 * then negated), for ndim 1-8, random structures of any size and symmetry,
 * random origins, every connectivity, edge shapes, dtypes, strides, thread
 * counts, in-place use, bad arguments, the generic (descriptor) path and
 * the chunk executor. */
#include "vtest.h"
#include "voxa/op.h"

#include <math.h>
#include <stdint.h>

/* Reference: m C-contiguous 0/1 mask (1 = foreground), structure st of shape
 * ss (C order), origin o; writes 0/1 into res. */
static void ref_fill(const uint8_t *m, int nd, const int64_t *shape, const uint8_t *st,
                     const int64_t *ss, const int64_t *o, uint8_t *res) {
    int64_t n = 1, ns = 1;
    for (int d = 0; d < nd; d++) {
        n *= shape[d];
        ns *= ss[d];
    }
    uint8_t *cur = calloc((size_t)(n ? n : 1), 1), *nxt = calloc((size_t)(n ? n : 1), 1);
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t v = 0; v < n; v++) {
            int64_t x[8], r = v;
            for (int d = nd - 1; d >= 0; d--) {
                x[d] = r % shape[d];
                r /= shape[d];
            }
            int on = 0;
            for (int64_t k = 0; k < ns && !m[v] && !on; k++) {
                if (!st[k]) continue;
                int64_t rem = k, w = 0, outside = 0;
                for (int d = nd - 1; d >= 0; d--) {
                    int64_t j = rem % ss[d];
                    rem /= ss[d];
                    int64_t y = x[d] + ss[d] / 2 + o[d] - j;
                    if (y < 0 || y >= shape[d]) outside = 1;
                }
                if (outside) {
                    on = 1;
                    break;
                }
                rem = k;
                int64_t mul = 1;
                for (int d = nd - 1; d >= 0; d--) {
                    int64_t j = rem % ss[d];
                    rem /= ss[d];
                    w += (x[d] + ss[d] / 2 + o[d] - j) * mul;
                    mul *= shape[d];
                }
                on = cur[w];
            }
            nxt[v] = (uint8_t)on;
            changed |= nxt[v] != cur[v];
        }
        uint8_t *t = cur;
        cur = nxt;
        nxt = t;
    }
    for (int64_t v = 0; v < n; v++) res[v] = !cur[v];
    free(cur);
    free(nxt);
}

static void conn_structure(int nd, int c, uint8_t *st, int64_t *ss) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        ss[d] = 3;
        n *= 3;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t rem = k;
        int far = 0;
        for (int d = 0; d < nd; d++) {
            far += rem % 3 != 1;
            rem /= 3;
        }
        st[k] = far <= c;
    }
}

static int64_t shape_size(int nd, const int64_t *s) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= s[d];
    return n;
}

static void test_docstring(void) {
    /* scipy's example: the hole is filled, a 5x5 structure fills nothing */
    uint8_t a[25] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0};
    uint8_t o[25], ones[25];
    int64_t sh[2] = {5, 5}, s5[2] = {5, 5};
    memset(ones, 1, sizeof ones);
    voxa_array in, out, st;
    voxa_array_view(&in, a, VOXA_BOOL, 2, sh);
    voxa_array_view(&out, o, VOXA_BOOL, 2, sh);
    voxa_array_view(&st, ones, VOXA_U8, 2, s5);
    CHECK_OK(voxa_fill_holes(&in, NULL, 1, NULL, &out));
    CHECK(o[12] == 1 && o[6] == 1 && o[0] == 0 && o[24] == 0);
    CHECK_OK(voxa_fill_holes(&in, &st, 1, NULL, &out));
    CHECK(!memcmp(o, a, 25));
}

/* Random masks and structures (random sizes 1..4, not symmetric), origins. */
static void test_random(void) {
    unsigned long long seed = 88172645463325252ull;
    int bad = 0;
    for (int it = 0; it < 400; it++) {
        int nd = 1 + (int)(vtest_rand(&seed) % 4);
        int64_t sh[4], ss[4], o[4];
        for (int d = 0; d < nd; d++) {
            sh[d] = 1 + (int64_t)(vtest_rand(&seed) % (nd == 4 ? 5 : nd == 1 ? 40 : 11));
            ss[d] = 1 + (int64_t)(vtest_rand(&seed) % 4);
            int64_t lo = -(ss[d] / 2), hi = (ss[d] - 1) / 2; /* scipy's range */
            o[d] = it % 3 == 2 ? 0 : lo + (int64_t)(vtest_rand(&seed) % (uint64_t)(hi - lo + 1));
        }
        int64_t n = shape_size(nd, sh), ns = shape_size(nd, ss);
        uint8_t *m = malloc((size_t)n), *want = malloc((size_t)n), *got = malloc((size_t)n);
        uint8_t st[256];
        int dens = (int)(vtest_rand(&seed) % 100), sd = 20 + (int)(vtest_rand(&seed) % 80);
        for (int64_t v = 0; v < n; v++) m[v] = (int)(vtest_rand(&seed) % 100) < dens;
        for (int64_t k = 0; k < ns; k++) st[k] = (int)(vtest_rand(&seed) % 100) < sd;
        ref_fill(m, nd, sh, st, ss, o, want);
        voxa_array in, out, sa;
        voxa_array_view(&in, m, VOXA_U8, nd, sh);
        voxa_array_view(&out, got, VOXA_BOOL, nd, sh);
        voxa_array_view(&sa, st, VOXA_U8, nd, ss);
        CHECK_OK(voxa_fill_holes(&in, &sa, 1, o, &out));
        bad += memcmp(want, got, (size_t)n) != 0;
        free(m);
        free(want);
        free(got);
    }
    CHECK(bad == 0);
    /* 5-D to 8-D, every connectivity */
    int64_t holes = 0;
    for (int nd = 5; nd <= 8; nd++)
        for (int c = 1; c <= nd; c += nd - 1 > 2 ? 2 : 1) {
            int64_t sh[8], ss[8], zero[8] = {0};
            for (int d = 0; d < nd; d++) sh[d] = 3 + (int64_t)(nd > 6 ? 0 : vtest_rand(&seed) % 2);
            int64_t n = shape_size(nd, sh);
            uint8_t *m = malloc((size_t)n), *want = malloc((size_t)n), *got = malloc((size_t)n);
            uint8_t *st = malloc(6561);
            for (int64_t v = 0; v < n; v++) { /* a mostly closed skin, a random inside */
                int64_t r = v, inside = 1;
                for (int d = nd - 1; d >= 0; d--) {
                    int64_t x = r % sh[d];
                    r /= sh[d];
                    inside &= x > 0 && x < sh[d] - 1;
                }
                m[v] = inside ? vtest_rand(&seed) % 2 : vtest_rand(&seed) % 100 < 98;
            }
            conn_structure(nd, c, st, ss);
            ref_fill(m, nd, sh, st, ss, zero, want);
            voxa_array in, out;
            voxa_array_view(&in, m, VOXA_U8, nd, sh);
            voxa_array_view(&out, got, VOXA_BOOL, nd, sh);
            CHECK_OK(voxa_fill_holes(&in, NULL, c, NULL, &out));
            CHECK(!memcmp(want, got, (size_t)n));
            for (int64_t v = 0; v < n; v++) holes += want[v] && !m[v];
            free(m);
            free(want);
            free(got);
            free(st);
        }
    CHECK(holes > 0);
}

/* Every connectivity without a structure, thread counts, density sweep. */
static void test_connectivity_threads(void) {
    unsigned long long seed = 12345;
    int64_t sh[3] = {13, 17, 19}, ss[3], zero[3] = {0, 0, 0};
    int64_t n = shape_size(3, sh);
    uint8_t *m = malloc((size_t)n), *want = malloc((size_t)n), *got = malloc((size_t)n);
    uint8_t st[27];
    for (int dens = 30; dens <= 70; dens += 20) {
        for (int64_t v = 0; v < n; v++) m[v] = (int)(vtest_rand(&seed) % 100) < dens;
        for (int c = 1; c <= 3; c++) {
            conn_structure(3, c, st, ss);
            ref_fill(m, 3, sh, st, ss, zero, want);
            voxa_array in, out;
            voxa_array_view(&in, m, VOXA_U8, 3, sh);
            voxa_array_view(&out, got, VOXA_U8, 3, sh);
            for (int t = 1; t <= 4; t++) {
                voxa_set_threads(t);
                memset(got, 7, (size_t)n);
                CHECK_OK(voxa_fill_holes(&in, NULL, c, NULL, &out));
                CHECK(!memcmp(want, got, (size_t)n));
            }
            voxa_set_threads(0);
        }
    }
    free(m);
    free(want);
    free(got);
    /* a volume large enough for several blocks: identical for 1..4 threads */
    int64_t big[3] = {40, 130, 131}, nb = shape_size(3, big);
    uint8_t *bm = malloc((size_t)nb), *b1 = malloc((size_t)nb), *bt = malloc((size_t)nb);
    for (int64_t v = 0; v < nb; v++) bm[v] = (int)(vtest_rand(&seed) % 100) < 55;
    voxa_array in, out;
    voxa_array_view(&in, bm, VOXA_U8, 3, big);
    voxa_array_view(&out, b1, VOXA_BOOL, 3, big);
    voxa_set_threads(1);
    CHECK_OK(voxa_fill_holes(&in, NULL, 1, NULL, &out));
    out.data = bt;
    int64_t filled = 0;
    for (int64_t v = 0; v < nb; v++) filled += b1[v] && !bm[v];
    CHECK(filled > 0);
    for (int t = 2; t <= 4; t++) {
        voxa_set_threads(t);
        memset(bt, 7, (size_t)nb);
        CHECK_OK(voxa_fill_holes(&in, NULL, 1, NULL, &out));
        CHECK(!memcmp(b1, bt, (size_t)nb));
    }
    voxa_set_threads(0);
    free(bm);
    free(b1);
    free(bt);
}

static void test_edges(void) {
    int64_t sh[3] = {4, 5, 6}, zero0[3] = {0, 0, 0};
    uint8_t m[120], o[120];
    voxa_array in, out;
    voxa_array_view(&in, m, VOXA_U8, 3, sh);
    voxa_array_view(&out, o, VOXA_U8, 3, sh);
    memset(m, 0, sizeof m); /* all background: nothing to fill */
    CHECK_OK(voxa_fill_holes(&in, NULL, 1, NULL, &out));
    CHECK(!memchr(o, 1, sizeof o));
    memset(m, 1, sizeof m); /* all foreground stays */
    CHECK_OK(voxa_fill_holes(&in, NULL, 3, NULL, &out));
    CHECK(!memchr(o, 0, sizeof o));
    /* a shell with its cavity touching no edge fills; opened to the edge it does not */
    memset(m, 0, sizeof m);
    for (int z = 0; z < 4; z++)
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 6; x++) m[(z * 5 + y) * 6 + x] = !(z >= 1 && z <= 2 && y >= 1 && y <= 3 && x >= 1 && x <= 4);
    CHECK_OK(voxa_fill_holes(&in, NULL, 1, NULL, &out));
    CHECK(!memchr(o, 0, sizeof o));
    m[(1 * 5 + 2) * 6 + 0] = 0; /* a tunnel to the x = 0 face */
    CHECK_OK(voxa_fill_holes(&in, NULL, 1, NULL, &out));
    CHECK(o[(1 * 5 + 2) * 6 + 2] == 0 && o[(2 * 5 + 3) * 6 + 4] == 0);
    /* empty and one-element arrays */
    int64_t e[2] = {3, 0}, one[1] = {1};
    voxa_array ein, eout;
    voxa_array_view(&ein, m, VOXA_U8, 2, e);
    voxa_array_view(&eout, o, VOXA_U8, 2, e);
    CHECK_OK(voxa_fill_holes(&ein, NULL, 1, NULL, &eout));
    voxa_array_view(&ein, m, VOXA_U8, 1, one);
    voxa_array_view(&eout, o, VOXA_U8, 1, one);
    m[0] = 0;
    o[0] = 9;
    CHECK_OK(voxa_fill_holes(&ein, NULL, 1, NULL, &eout));
    CHECK(o[0] == 0);
    m[0] = 3;
    CHECK_OK(voxa_fill_holes(&ein, NULL, 1, zero0, &eout));
    CHECK(o[0] == 1);
}

/* Float input (NaN is foreground, -0.0 is not), strided F-order views, other
 * output dtypes, in place. */
static void test_dtypes_strides(void) {
    unsigned long long seed = 777;
    int64_t sh[2] = {9, 11}, ss[2], zero[2] = {0, 0};
    const int64_t n = 99;
    uint8_t m[99], want[99], st[9];
    for (int64_t v = 0; v < n; v++) m[v] = vtest_rand(&seed) % 2;
    conn_structure(2, 1, st, ss);
    ref_fill(m, 2, sh, st, ss, zero, want);
    /* float64, Fortran order with a gap of 2 along axis 0 */
    double *buf = calloc((size_t)(2 * n), sizeof(double));
    voxa_array in = {.data = buf, .dtype = VOXA_F64, .ndim = 2, .shape = {9, 11},
                     .strides = {2 * 8, 2 * 9 * 8}};
    for (int y = 0; y < 9; y++)
        for (int x = 0; x < 11; x++)
            buf[2 * (y + 9 * x)] = m[y * 11 + x] ? (x % 2 ? NAN : -3.5) : (y % 2 ? -0.0 : 0.0);
    uint16_t ob[99];
    voxa_array out = {.data = ob + 98, .dtype = VOXA_U16, .ndim = 2, .shape = {9, 11},
                      .strides = {-11 * 2, -2}}; /* reversed */
    CHECK_OK(voxa_fill_holes(&in, NULL, 1, NULL, &out));
    int bad = 0;
    for (int64_t v = 0; v < n; v++) bad += ob[98 - v] != want[v];
    CHECK(bad == 0);
    /* in place: int32 in == out */
    int32_t iv[99];
    for (int64_t v = 0; v < n; v++) iv[v] = m[v] ? -7 : 0;
    voxa_array io;
    voxa_array_view(&io, iv, VOXA_I32, 2, sh);
    CHECK_OK(voxa_fill_holes(&io, NULL, 1, NULL, &io));
    bad = 0;
    for (int64_t v = 0; v < n; v++) bad += iv[v] != want[v];
    CHECK(bad == 0);
    free(buf);
}

static void test_errors(void) {
    uint8_t m[12] = {0}, o[12], s[27] = {0};
    int64_t sh[2] = {3, 4}, sh1[1] = {12}, s3[3] = {3, 3, 3}, s0[2] = {0, 3}, bad_o[2] = {2, 0};
    voxa_array in, out, o1, st, st0;
    voxa_array_view(&in, m, VOXA_U8, 2, sh);
    voxa_array_view(&out, o, VOXA_U8, 2, sh);
    voxa_array_view(&o1, o, VOXA_U8, 1, sh1);
    voxa_array_view(&st, s, VOXA_U8, 3, s3);
    voxa_array_view(&st0, s, VOXA_U8, 2, s0);
    CHECK_STATUS(voxa_fill_holes(NULL, NULL, 1, NULL, &out), VOXA_EINVAL);
    CHECK_MSG("in:");
    CHECK_STATUS(voxa_fill_holes(&in, NULL, 1, NULL, NULL), VOXA_EINVAL);
    CHECK_MSG("out:");
    CHECK_STATUS(voxa_fill_holes(&in, NULL, 1, NULL, &o1), VOXA_EINVAL);
    CHECK_MSG("out: shape");
    CHECK_STATUS(voxa_fill_holes(&in, &st, 1, NULL, &out), VOXA_EINVAL);
    CHECK_MSG("structure: 3 dimensions");
    CHECK_STATUS(voxa_fill_holes(&in, &st0, 1, NULL, &out), VOXA_EINVAL);
    CHECK_MSG("structure: must not be empty");
    CHECK_STATUS(voxa_fill_holes(&in, NULL, 3, NULL, &out), VOXA_EINVAL);
    CHECK_MSG("connectivity: 3");
    CHECK_STATUS(voxa_fill_holes(&in, NULL, 0, NULL, &out), VOXA_EINVAL);
    CHECK_STATUS(voxa_fill_holes(&in, NULL, 1, bad_o, &out), VOXA_EINVAL);
    CHECK_MSG("origin: 2 on axis 0 is out of range -1..1");
    voxa_array z = in;
    z.ndim = 0;
    CHECK_STATUS(voxa_fill_holes(&z, NULL, 1, NULL, &z), VOXA_EINVAL);
    CHECK_MSG("0-D");
}

/* The descriptor: registry entry, text arguments, same voxels as the typed call. */
static void test_generic(void) {
    const voxa_op *op = voxa_op_find("fill_holes");
    CHECK(op && !strcmp(op->group, "morph") && !strcmp(op->cli_name, "fill-holes") &&
          !strcmp(op->python, "binary_fill_holes") && (op->flags & VOXA_OP_GLOBAL));
    if (!op) return;
    unsigned long long seed = 4242;
    int64_t sh[3] = {7, 8, 9}, n = 7 * 8 * 9, org[3] = {0, -1, 1};
    uint8_t *m = malloc((size_t)n), *a = malloc((size_t)n), *b = malloc((size_t)n), st[27];
    for (int64_t v = 0; v < n; v++) m[v] = vtest_rand(&seed) % 3 != 0;
    for (int k = 0; k < 27; k++) st[k] = vtest_rand(&seed) % 2;
    int64_t s3[3] = {3, 3, 3};
    voxa_array in, oa, ob, sa;
    voxa_array_view(&in, m, VOXA_U8, 3, sh);
    voxa_array_view(&oa, a, VOXA_BOOL, 3, sh);
    voxa_array_view(&ob, b, VOXA_BOOL, 3, sh);
    voxa_array_view(&sa, st, VOXA_U8, 3, s3);
    voxa_args args;
    CHECK_OK(voxa_args_init(&args, op));
    CHECK_OK(voxa_args_parse(&args, "connectivity", "2"));
    CHECK_OK(voxa_op_run(&args, &in, &oa, NULL, NULL));
    CHECK_OK(voxa_fill_holes(&in, NULL, 2, NULL, &ob));
    CHECK(!memcmp(a, b, (size_t)n));
    int64_t lo[3], hi[3];
    CHECK_STATUS(voxa_op_halo(&args, 3, lo, hi), VOXA_EUNSUPPORTED);
    CHECK_OK(voxa_args_clear(&args, "connectivity"));
    CHECK_OK(voxa_args_set_array(&args, "structure", &sa, NULL));
    CHECK_OK(voxa_args_parse(&args, "origin", "0,-1,1"));
    CHECK_OK(voxa_op_run(&args, &in, &oa, NULL, NULL));
    CHECK_OK(voxa_fill_holes(&in, &sa, 1, org, &ob));
    CHECK(!memcmp(a, b, (size_t)n));
    /* the chunk executor: fill holes by blocks (src/stream/run_fill.c) */
    voxa_store *si = NULL, *so = NULL;
    voxa_stream_options so_opt;
    voxa_stream_plan plan;
    memset(&so_opt, 0, sizeof so_opt);
    for (int d = 0; d < 3; d++) so_opt.block[d] = 3;
    memset(a, 9, (size_t)n);
    CHECK_OK(voxa_store_wrap(&in, &si));
    CHECK_OK(voxa_store_wrap(&oa, &so));
    CHECK_OK(voxa_stream_plan_make(&args, si, &so_opt, &plan));
    CHECK(plan.streamed && !plan.whole && !plan.global);
    CHECK_OK(voxa_stream_run(&args, si, so, &so_opt, NULL));
    CHECK(!memcmp(a, b, (size_t)n));
    voxa_store_close(si);
    voxa_store_close(so);
    CHECK_OK(voxa_args_parse(&args, "origin", "2"));
    CHECK_STATUS(voxa_op_run(&args, &in, &oa, NULL, NULL), VOXA_EINVAL);
    CHECK_MSG("origin: 2 on axis 0");
    voxa_args_free(&args);
    free(m);
    free(a);
    free(b);
}

int main(void) {
    RUN(test_docstring);
    RUN(test_random);
    RUN(test_connectivity_threads);
    RUN(test_edges);
    RUN(test_dtypes_strides);
    RUN(test_errors);
    RUN(test_generic);
    VTEST_END();
}
