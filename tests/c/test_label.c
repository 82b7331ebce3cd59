/* voxa_label: against a flood-fill reference (any ndim, any structure),
 * edge shapes, every thread count and block size, dtypes, strides,
 * overflow and bad arguments. */
#include "vtest.h"

#include <stdint.h>

extern int64_t voxa__label_min_block; /* internal knob: force many blocks */
extern int voxa__label_portable;      /* 1: portable byte kernels (no SSE2 masks) */
extern int voxa__label_one_scan;      /* runs in one scan: 0 never, 1 auto, 2 always */
extern int voxa__label_use_blocks;    /* 0: the run path always */
extern int voxa__label_wide_table;    /* 1: int64 union-find table on any input */
extern _Thread_local int voxa__label_last_wide; /* the table width of the last call */
int voxa__label_table_wide(int64_t nruns);

/* Reference: flood fill in raster order with the full structure `st`
 * (3^nd entries), C-contiguous u8 mask, int64 labels. Returns the count. */
static int64_t ref_label(const uint8_t *m, int nd, const int64_t *shape, const unsigned char *st,
                         int64_t *lab) {
    int64_t n = 1, cstr[8];
    for (int d = nd - 1; d >= 0; d--) {
        cstr[d] = n;
        n *= shape[d];
    }
    int n3 = 1;
    for (int d = 0; d < nd; d++) n3 *= 3;
    int64_t *stack = malloc((size_t)(n > 0 ? n : 1) * sizeof *stack);
    memset(lab, 0, (size_t)n * sizeof *lab);
    int64_t count = 0;
    for (int64_t v = 0; v < n; v++) {
        if (!m[v] || lab[v]) continue;
        lab[v] = ++count;
        int64_t top = 0;
        stack[top++] = v;
        while (top) {
            int64_t u = stack[--top], idx[8], r = u;
            for (int d = nd - 1; d >= 0; d--) {
                idx[d] = r % shape[d];
                r /= shape[d];
            }
            for (int k = 0; k < n3; k++) {
                if (!st[k]) continue;
                int rem = k, ok = 1;
                int64_t w = 0;
                for (int d = nd - 1; d >= 0; d--) {
                    int64_t x = idx[d] + rem % 3 - 1;
                    rem /= 3;
                    if (x < 0 || x >= shape[d]) ok = 0;
                    w += x * cstr[d];
                }
                if (ok && m[w] && !lab[w]) {
                    lab[w] = count;
                    stack[top++] = w;
                }
            }
        }
    }
    free(stack);
    return count;
}

static void random_structure(unsigned long long *seed, int nd, unsigned char *st) {
    int n3 = 1;
    for (int d = 0; d < nd; d++) n3 *= 3;
    int keep = (int)(vtest_rand(seed) % 100);
    for (int k = 0; k < n3; k++) st[k] = (int)(vtest_rand(seed) % 100) < keep;
    for (int k = 0; k < n3; k++) st[n3 - 1 - k] = st[k] = st[k] | st[n3 - 1 - k];
}

static void connectivity_structure(int nd, int c, unsigned char *st) {
    int n3 = 1;
    for (int d = 0; d < nd; d++) n3 *= 3;
    for (int k = 0; k < n3; k++) {
        int rem = k, dist = 0;
        for (int d = 0; d < nd; d++) {
            dist += rem % 3 != 1;
            rem /= 3;
        }
        st[k] = dist <= c;
    }
}

/* Random shapes and densities, random or connectivity structures; labels
 * must equal the reference for 1, 2 and 3 threads and tiny blocks. */
static void test_random_vs_reference(void) {
    unsigned long long seed = 42;
    unsigned char st[81];
    int64_t old_block = voxa__label_min_block;
    for (int trial = 0; trial < 400; trial++) {
        int nd = 1 + (int)(vtest_rand(&seed) % 4);
        int64_t shape[4], n = 1;
        for (int d = 0; d < nd; d++) {
            shape[d] = 1 + (int64_t)(vtest_rand(&seed) % (nd == 1 ? 200 : nd == 2 ? 40 : 6));
            n *= shape[d];
        }
        int dens = (int)(vtest_rand(&seed) % 101);
        uint8_t *m = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++) m[i] = (int)(vtest_rand(&seed) % 100) < dens;
        if (trial % 2) random_structure(&seed, nd, st);
        else connectivity_structure(nd, 1 + (int)(vtest_rand(&seed) % (uint64_t)nd), st);
        int64_t *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
        int64_t wn = ref_label(m, nd, shape, st, want);
        voxa_array in, out;
        voxa_array_view(&in, m, VOXA_U8, nd, shape);
        voxa_array_view(&out, got, VOXA_I64, nd, shape);
        for (int t = 1; t <= 3; t++) {
            voxa_set_threads(t);
            voxa__label_min_block = (trial % 3 == 0) ? 1 : old_block;
            voxa__label_one_scan = (trial / 3 + t) % 3;
            int64_t gn = -1;
            CHECK_OK(voxa_label(&in, st, 0, &out, &gn));
            CHECK(gn == wn);
            CHECK(!memcmp(want, got, (size_t)n * sizeof *got));
            if (gn != wn || memcmp(want, got, (size_t)n * sizeof *got)) {
                fprintf(stderr, "  trial %d threads %d nd %d shape", trial, t, nd);
                for (int d = 0; d < nd; d++) fprintf(stderr, " %lld", (long long)shape[d]);
                fprintf(stderr, " n %lld want %lld\n", (long long)gn, (long long)wn);
            }
        }
        free(m);
        free(want);
        free(got);
    }
    voxa__label_min_block = old_block;
    voxa_set_threads(0);
}

/* A 2-D example worked out by hand, connectivity 1 and 2. */
static void test_known_2d(void) {
    uint8_t m[4 * 5] = {1, 1, 0, 0, 1,
                        0, 0, 1, 0, 1,
                        1, 0, 0, 1, 0,
                        1, 1, 0, 0, 0};
    int32_t want1[20] = {1, 1, 0, 0, 2, 0, 0, 3, 0, 2, 4, 0, 0, 5, 0, 4, 4, 0, 0, 0};
    /* (1,2) touches (0,1) and (2,3), (2,3) touches (1,4): two components */
    int32_t want2[20] = {1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 2, 0, 0, 1, 0, 2, 2, 0, 0, 0};
    int32_t got[20];
    int64_t shape[2] = {4, 5}, n;
    voxa_array in, out;
    voxa_array_view(&in, m, VOXA_U8, 2, shape);
    voxa_array_view(&out, got, VOXA_I32, 2, shape);
    CHECK_OK(voxa_label(&in, NULL, 1, &out, &n));
    CHECK(n == 5 && !memcmp(got, want1, sizeof got));
    CHECK_OK(voxa_label(&in, NULL, 2, &out, &n));
    CHECK(n == 2 && !memcmp(got, want2, sizeof got));
    CHECK_OK(voxa_label(&in, NULL, 2, &out, NULL)); /* nlabels may be NULL */
}

/* Size 0, one voxel, (1,1,N), (N,1,1), lines in every position. */
static void test_edge_shapes(void) {
    int64_t n = -1;
    voxa_array in, out;
    uint8_t one = 1, zero = 0;
    int32_t lab = 77;
    int64_t s0[3] = {3, 0, 4};
    CHECK_OK(voxa_array_view(&in, NULL, VOXA_U8, 3, s0));
    CHECK_OK(voxa_array_view(&out, NULL, VOXA_I32, 3, s0));
    CHECK_OK(voxa_label(&in, NULL, 1, &out, &n));
    CHECK(n == 0);
    int64_t s1[3] = {1, 1, 1};
    voxa_array_view(&in, &one, VOXA_U8, 3, s1);
    voxa_array_view(&out, &lab, VOXA_I32, 3, s1);
    CHECK_OK(voxa_label(&in, NULL, 3, &out, &n));
    CHECK(n == 1 && lab == 1);
    voxa_array_view(&in, &zero, VOXA_U8, 3, s1);
    CHECK_OK(voxa_label(&in, NULL, 1, &out, &n));
    CHECK(n == 0 && lab == 0);
    /* (1,1,N) and (N,1,1) with every other voxel set: N/2 components */
    enum { N = 1001 };
    uint8_t m[N];
    int32_t l[N];
    for (int i = 0; i < N; i++) m[i] = i % 2 == 0;
    int64_t sa[3] = {1, 1, N}, sb[3] = {N, 1, 1};
    for (int k = 0; k < 2; k++) {
        voxa_array_view(&in, m, VOXA_U8, 3, k ? sb : sa);
        voxa_array_view(&out, l, VOXA_I32, 3, k ? sb : sa);
        for (int c = 1; c <= 3; c++) {
            CHECK_OK(voxa_label(&in, NULL, c, &out, &n));
            CHECK(n == (N + 1) / 2);
            CHECK(l[0] == 1 && l[1] == 0 && l[N - 1] == (N + 1) / 2);
        }
    }
}

/* Every input dtype: non-zero is foreground, NaN too, -0.0 not. */
static void test_input_dtypes(void) {
    int64_t shape[1] = {6}, n;
    int32_t got[6];
    voxa_array in, out;
    voxa_array_view(&out, got, VOXA_I32, 1, shape);
    double f64[6] = {0.0, -0.0, 0.0 / 0.0, 0.0, 2.5, -1.0};
    voxa_array_view(&in, f64, VOXA_F64, 1, shape);
    CHECK_OK(voxa_label(&in, NULL, 1, &out, &n));
    CHECK(n == 2 && got[1] == 0 && got[2] == 1 && got[4] == 2 && got[5] == 2);
    float f32[6] = {0.0f, -0.0f, 1e-30f, 0.0f, 0.0f / 0.0f, 0.0f};
    voxa_array_view(&in, f32, VOXA_F32, 1, shape);
    CHECK_OK(voxa_label(&in, NULL, 1, &out, &n));
    CHECK(n == 2 && got[1] == 0 && got[2] == 1 && got[4] == 2);
    for (int t = VOXA_BOOL; t <= VOXA_I64; t++) {
        unsigned char buf[6 * 8] = {0};
        size_t sz = voxa_dtype_size((voxa_dtype)t);
        buf[1 * sz + sz - 1] = 1; /* the high byte of element 1: non-zero */
        buf[2 * sz] = 1;
        buf[5 * sz] = 1;
        voxa_array_view(&in, buf, (voxa_dtype)t, 1, shape);
        CHECK_OK(voxa_label(&in, NULL, 1, &out, &n));
        CHECK(n == 2 && got[0] == 0 && got[1] == 1 && got[2] == 1 && got[5] == 2);
    }
}

/* Reversed, strided input and a strided output (every other element). */
static void test_strides(void) {
    enum { Z = 5, Y = 7, X = 9 };
    uint8_t m[Z * Y * X];
    unsigned long long seed = 7;
    for (int i = 0; i < Z * Y * X; i++) m[i] = vtest_rand(&seed) % 2;
    int64_t shape[3] = {Z, Y, X}, n1, n2;
    unsigned char st[27];
    connectivity_structure(3, 2, st);
    int64_t want[Z * Y * X];
    int64_t wn = ref_label(m, 3, shape, st, want);
    /* the same mask read through a view that walks a reversed copy backwards */
    uint8_t rev[Z * Y * X];
    for (int i = 0; i < Z * Y * X; i++) rev[i] = m[Z * Y * X - 1 - i];
    voxa_array in;
    voxa_array_view(&in, rev + Z * Y * X - 1, VOXA_U8, 3, shape);
    for (int d = 0; d < 3; d++) in.strides[d] = -in.strides[d];
    uint32_t wide[Z * Y * X * 2];
    voxa_array out;
    voxa_array_view(&out, wide, VOXA_U32, 3, shape);
    for (int d = 0; d < 3; d++) out.strides[d] *= 2;
    memset(wide, 0xab, sizeof wide);
    CHECK_OK(voxa_label(&in, NULL, 2, &out, &n1));
    CHECK(n1 == wn);
    int same = 1;
    for (int i = 0; i < Z * Y * X; i++) same &= wide[2 * i] == (uint32_t)want[i];
    for (int i = 0; i < Z * Y * X; i++) same &= wide[2 * i + 1] == 0xabababab;
    CHECK(same);
    /* in-place: int64 input overwritten by its own labels */
    int64_t buf[Z * Y * X];
    for (int i = 0; i < Z * Y * X; i++) buf[i] = m[i] ? -5 : 0;
    voxa_array io;
    voxa_array_view(&io, buf, VOXA_I64, 3, shape);
    CHECK_OK(voxa_label(&io, st, 0, &io, &n2));
    CHECK(n2 == wn && !memcmp(buf, want, sizeof buf));
}

/* The count must fit the output dtype: EOVERFLOW names dtype and count. */
static void test_overflow(void) {
    enum { N = 2 * 65536 + 2 };
    uint8_t *m = malloc(N);
    uint16_t *l16 = malloc(N * sizeof *l16);
    uint8_t *l8 = malloc(N);
    for (int i = 0; i < N; i++) m[i] = i % 2 == 0;
    int64_t shape[1] = {N}, n = -1;
    voxa_array in, out;
    voxa_array_view(&in, m, VOXA_U8, 1, shape);
    voxa_array_view(&out, l16, VOXA_U16, 1, shape);
    CHECK_STATUS(voxa_label(&in, NULL, 1, &out, &n), VOXA_EOVERFLOW);
    CHECK_MSG("uint16");
    CHECK_MSG("65537");
    CHECK(n == 0);
    m[N - 2] = 0; /* 65536 components */
    CHECK_STATUS(voxa_label(&in, NULL, 1, &out, &n), VOXA_EOVERFLOW);
    m[N - 4] = 0; /* 65535: fits */
    CHECK_OK(voxa_label(&in, NULL, 1, &out, &n));
    CHECK(n == 65535 && l16[N - 6] == 65535);
    voxa_array_view(&out, l8, VOXA_U8, 1, shape);
    CHECK_STATUS(voxa_label(&in, NULL, 1, &out, &n), VOXA_EOVERFLOW);
    CHECK_MSG("uint8");
    free(m);
    free(l16);
    free(l8);
}

static void test_bad_args(void) {
    uint8_t m[12] = {1};
    int32_t l[12];
    float f[12];
    int64_t shape[2] = {3, 4}, other[2] = {4, 3}, n;
    voxa_array in, out, bad;
    voxa_array_view(&in, m, VOXA_U8, 2, shape);
    voxa_array_view(&out, l, VOXA_I32, 2, shape);
    CHECK_STATUS(voxa_label(NULL, NULL, 1, &out, &n), VOXA_EINVAL);
    CHECK_STATUS(voxa_label(&in, NULL, 1, NULL, &n), VOXA_EINVAL);
    CHECK_STATUS(voxa_label(&in, NULL, 0, &out, &n), VOXA_EINVAL);
    CHECK_MSG("connectivity 0");
    CHECK_STATUS(voxa_label(&in, NULL, 3, &out, &n), VOXA_EINVAL);
    CHECK_MSG("1..2");
    unsigned char st[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};
    CHECK_STATUS(voxa_label(&in, st, 1, &out, &n), VOXA_EINVAL);
    CHECK_MSG("centrosymmetric");
    voxa_array_view(&bad, f, VOXA_F32, 2, shape);
    CHECK_STATUS(voxa_label(&in, NULL, 1, &bad, &n), VOXA_EINVAL);
    CHECK_MSG("float32");
    voxa_array_view(&bad, l, VOXA_I32, 2, other);
    CHECK_STATUS(voxa_label(&in, NULL, 1, &bad, &n), VOXA_EINVAL);
    CHECK_MSG("(4, 3)");
    voxa_array_view(&bad, l, VOXA_I32, 1, shape);
    CHECK_STATUS(voxa_label(&in, NULL, 1, &bad, &n), VOXA_EINVAL);
    voxa_array zero_d = in;
    zero_d.ndim = 0;
    voxa_array zero_o = out;
    zero_o.ndim = 0;
    CHECK_STATUS(voxa_label(&zero_d, NULL, 1, &zero_o, &n), VOXA_EINVAL);
    CHECK_MSG("dimensions");
    /* a structure whose centre is 0 behaves as if it were 1 (scipy) */
    unsigned char hollow[9] = {0, 1, 0, 1, 0, 1, 0, 1, 0};
    CHECK_OK(voxa_label(&in, hollow, 0, &out, &n));
    CHECK(n == 1);
}

/* 8-D: the largest rank; full connectivity joins diagonal neighbours. */
static void test_8d(void) {
    int64_t shape[8] = {2, 2, 2, 2, 2, 2, 2, 2}, n;
    uint8_t m[256] = {0};
    int32_t l[256];
    m[0] = 1;
    m[255] = 1; /* opposite corners of the 2^8 box: diagonal neighbours */
    voxa_array in, out;
    voxa_array_view(&in, m, VOXA_U8, 8, shape);
    voxa_array_view(&out, l, VOXA_I32, 8, shape);
    CHECK_OK(voxa_label(&in, NULL, 8, &out, &n));
    CHECK(n == 1 && l[255] == 1);
    CHECK_OK(voxa_label(&in, NULL, 7, &out, &n));
    CHECK(n == 2 && l[255] == 2);
}

/* The bitmap union of 3-D byte masks with 18/26-connectivity, where corner
 * lines are pruned by their covers (label.c, plan_corners): line lengths
 * around the 64-bit word size, masks that maximise runs (checker boards,
 * stripes), all ones, random densities, structures where pruning applies
 * and where it must not, blocks cut to single lines (seams on every face),
 * 1-3 threads. Each against the reference. */
static void test_bitmap_corners(void) {
    static const int64_t widths[] = {1, 2, 3, 63, 64, 65, 127, 128, 129};
    unsigned long long seed = 7;
    unsigned char st[27];
    int64_t old_block = voxa__label_min_block;
    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
        for (int pat = 0; pat < 9; pat++) {
            int64_t shape[3] = {2 + pat % 4, 1 + (pat * 5) % 7, widths[wi]}, n = 1;
            for (int d = 0; d < 3; d++) n *= shape[d];
            uint8_t *m = malloc((size_t)n);
            int64_t *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
            for (int64_t i = 0; i < n; i++) {
                int64_t x = i % shape[2], y = i / shape[2] % shape[1], z = i / shape[2] / shape[1];
                switch (pat) {
                case 0: m[i] = 1; break;                       /* all ones */
                case 1: m[i] = (x + y + z) % 2; break;         /* 3-D checker board */
                case 2: m[i] = (x + y) % 2; break;             /* checker columns */
                case 3: m[i] = x % 2; break;                   /* stripes */
                case 4: m[i] = (x + z) % 2 == 0 || y % 3 == 0; break;
                default: m[i] = (int)(vtest_rand(&seed) % 100) < 20 + 15 * (pat - 5);
                }
            }
            for (int sk = 0; sk < 4; sk++) {
                if (sk < 2) connectivity_structure(3, 2 + sk, st);
                else if (sk == 2) { /* 26 without the z axis: no pruning */
                    connectivity_structure(3, 3, st);
                    st[4] = st[22] = 0;
                } else random_structure(&seed, 3, st);
                int64_t wn = ref_label(m, 3, shape, st, want);
                voxa_array in, out;
                voxa_array_view(&in, m, VOXA_U8, 3, shape);
                voxa_array_view(&out, got, VOXA_I64, 3, shape);
                for (int t = 1; t <= 3; t++) {
                    voxa_set_threads(t);
                    voxa__label_min_block = t == 1 ? old_block : 1;
                    int64_t gn = -1;
                    CHECK_OK(voxa_label(&in, st, 0, &out, &gn));
                    CHECK(gn == wn);
                    CHECK(!memcmp(want, got, (size_t)n * sizeof *got));
                    if (gn != wn || memcmp(want, got, (size_t)n * sizeof *got))
                        fprintf(stderr, "  width %lld pattern %d structure %d threads %d\n",
                                (long long)shape[2], pat, sk, t);
                }
            }
            free(m);
            free(want);
            free(got);
        }
    }
    voxa__label_min_block = old_block;
    voxa__label_one_scan = 1;
    voxa_set_threads(0);
}

/* Byte masks with wide lines (runs crossing 64-voxel words, lines not a
 * multiple of 64, runs reaching the line's end), smooth (runs of random
 * length) and noisy, byte values with the high bit set: the SSE2 masks and
 * the bit-count pass against the portable kernels and the reference, on the
 * sweep and the bitmap union, 1 and 2 threads, runs in two scans or one. */
static void test_byte_kernels(void) {
    unsigned long long seed = 7;
    unsigned char st[27];
    int64_t old_block = voxa__label_min_block;
    for (int trial = 0; trial < 120; trial++) {
        int nd = 2 + trial % 2;
        int64_t shape[3], n = 1;
        for (int d = 0; d < nd - 1; d++) shape[d] = 1 + (int64_t)(vtest_rand(&seed) % 7);
        shape[nd - 1] = 1 + (int64_t)(vtest_rand(&seed) % 300);
        for (int d = 0; d < nd; d++) n *= shape[d];
        uint8_t *m = malloc((size_t)n);
        int mean = 1 + (int)(vtest_rand(&seed) % 90); /* mean run/gap length */
        int on = (int)(vtest_rand(&seed) % 2);
        for (int64_t i = 0; i < n; i++) {
            if ((int)(vtest_rand(&seed) % (uint64_t)mean) == 0) on = !on;
            m[i] = on ? (uint8_t)(1 + vtest_rand(&seed) % 255) : 0; /* 128..255 too */
        }
        connectivity_structure(nd, 1 + trial % nd, st);
        int64_t *want = malloc((size_t)n * sizeof *want), *got = malloc((size_t)n * sizeof *got);
        int64_t wn = ref_label(m, nd, shape, st, want);
        voxa_array in, out;
        voxa_array_view(&in, m, VOXA_U8, nd, shape);
        voxa_array_view(&out, got, VOXA_I64, nd, shape);
        for (int k = 0; k < 12; k++) {
            voxa__label_portable = k & 1;
            voxa_set_threads(1 + ((k >> 1) & 1));
            voxa__label_min_block = (k >> 1) & 1 ? 1 : old_block;
            voxa__label_one_scan = k >> 2; /* 0, 1, 2: two scans, auto, one scan */
            int64_t gn = -1;
            memset(got, 0xff, (size_t)n * sizeof *got);
            CHECK_OK(voxa_label(&in, st, 0, &out, &gn));
            CHECK(gn == wn);
            CHECK(!memcmp(want, got, (size_t)n * sizeof *got));
        }
        free(m);
        free(want);
        free(got);
    }
    voxa__label_portable = 0;
    voxa__label_one_scan = 1;
    voxa__label_min_block = old_block;
    voxa_set_threads(0);
}

/* The union-find table's two widths (label_uf.h): uint32 up to UINT32_MAX -
 * 1 runs, int64 past that or when forced. Both must give the same labels,
 * bit for bit and equal to the reference, on random masks in 1-4-D, every
 * connectivity and random structures, byte and uint16 inputs (bitmap union,
 * run sweep), every output width, 1 and 2 threads, tiny blocks (seams). */
static void test_wide_table(void) {
    CHECK(!voxa__label_table_wide(0));
    CHECK(!voxa__label_table_wide((int64_t)UINT32_MAX - 1));
    CHECK(voxa__label_table_wide((int64_t)UINT32_MAX));
    CHECK(voxa__label_table_wide((int64_t)1 << 40));
    voxa__label_wide_table = 1;
    CHECK(voxa__label_table_wide(0));
    voxa__label_wide_table = 0;
    setenv("VOXA_LABEL_WIDE", "1", 1);
    CHECK(voxa__label_table_wide(0));
    unsetenv("VOXA_LABEL_WIDE");
    CHECK(!voxa__label_table_wide(0));

    static const voxa_dtype outs[] = {VOXA_I64, VOXA_U32, VOXA_I16, VOXA_U8};
    unsigned long long seed = 99;
    unsigned char st[81];
    int64_t old_block = voxa__label_min_block;
    voxa__label_use_blocks = 0;
    for (int trial = 0; trial <= 160; trial++) {
        /* the last: 50 % noise, ~80k runs, thousands of components (roots
         * past 2^16: a truncation of indices shows) */
        int nd = trial == 160 ? 3 : 1 + trial % 4;
        int64_t shape[4], n = 1;
        for (int d = 0; d < nd; d++) {
            shape[d] = 1 + (int64_t)(vtest_rand(&seed) % (d == nd - 1 ? 140 : nd == 2 ? 30 : 6));
            if (trial == 160) shape[d] = d ? 200 : 8;
            n *= shape[d];
        }
        int dens = trial == 160 ? 50 : (int)(vtest_rand(&seed) % 101);
        uint8_t *m = malloc((size_t)n);
        uint16_t *m16 = malloc((size_t)n * 2);
        for (int64_t i = 0; i < n; i++) m16[i] = m[i] = (int)(vtest_rand(&seed) % 100) < dens;
        if (trial == 160) connectivity_structure(nd, 1, st); /* thousands of components */
        else if (trial % 3 == 2) random_structure(&seed, nd, st);
        else connectivity_structure(nd, 1 + (int)(vtest_rand(&seed) % (uint64_t)nd), st);
        int64_t *want = malloc((size_t)n * sizeof *want);
        int64_t wn = ref_label(m, nd, shape, st, want);
        voxa_dtype od = trial == 160 ? VOXA_U32 : outs[(trial / 4) % 4];
        size_t es = voxa_dtype_size(od);
        char *got[2] = {malloc((size_t)n * es), malloc((size_t)n * es)};
        voxa_array in, out;
        voxa_array_view(&in, trial & 1 ? (void *)m16 : (void *)m, trial & 1 ? VOXA_U16 : VOXA_U8,
                        nd, shape);
        for (int k = 0; k < 4; k++) {
            voxa_set_threads(1 + (k & 1));
            voxa__label_min_block = k & 2 ? 1 : old_block;
            int64_t gn[2] = {-1, -1};
            voxa_status rc[2];
            for (int wide = 0; wide < 2; wide++) {
                voxa__label_wide_table = wide;
                voxa__label_last_wide = -1;
                memset(got[wide], 0x5a, (size_t)n * es);
                voxa_array_view(&out, got[wide], od, nd, shape);
                rc[wide] = voxa_label(&in, st, 0, &out, &gn[wide]);
                CHECK(voxa__label_last_wide == wide);
            }
            voxa__label_wide_table = 0;
            CHECK(rc[0] == rc[1]);
            if (rc[0] != VOXA_OK) { /* only 8/16-bit outputs may overflow */
                CHECK(rc[0] == VOXA_EOVERFLOW && es <= 2 && wn > (es == 1 ? 255 : 32767));
                continue;
            }
            CHECK(gn[0] == wn && gn[1] == wn);
            CHECK(!memcmp(got[0], got[1], (size_t)n * es));
            int same = 1;
            for (int64_t i = 0; i < n; i++) {
                int64_t v = es == 8 ? ((int64_t *)(void *)got[0])[i]
                          : es == 4 ? (int64_t)((uint32_t *)(void *)got[0])[i]
                          : es == 2 ? (int64_t)((int16_t *)(void *)got[0])[i]
                                    : (int64_t)((uint8_t *)(void *)got[0])[i];
                same &= v == want[i];
            }
            CHECK(same);
        }
        free(m);
        free(m16);
        free(want);
        free(got[0]);
        free(got[1]);
    }
    voxa__label_use_blocks = 1;
    voxa__label_min_block = old_block;
    voxa_set_threads(0);
}

int main(void) {
    RUN(test_known_2d);
    RUN(test_edge_shapes);
    RUN(test_input_dtypes);
    RUN(test_strides);
    RUN(test_overflow);
    RUN(test_bad_args);
    RUN(test_8d);
    RUN(test_random_vs_reference);
    RUN(test_bitmap_corners);
    RUN(test_byte_kernels);
    RUN(test_wide_table);
    VTEST_END();
}
