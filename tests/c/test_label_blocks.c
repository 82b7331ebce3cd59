/* The block path of voxa_label (label_blocks.c: full connectivity by 2x2x2
 * blocks) against a flood-fill reference, and against the run path, at the
 * boundaries where the block path differs from it: odd and even extents in
 * every axis, voxels at block corners touching diagonally across blocks,
 * components whose first voxel lies in a block's second plane or row,
 * checker boards, all ones and zeros, 2-D (8-connected) and 3-D with unit
 * axes, many union slabs (seams inside planes and between them), 1-3
 * threads, output dtypes and the count overflow; and both paths writing
 * only the labels into an output that already holds zeros. */
#include "vtest.h"

#include <stdint.h>

extern int64_t voxa__label_min_block; /* tiny: many union slabs */
extern int voxa__label_use_blocks;     /* 0: run path, 2: block path always */
extern _Thread_local int voxa__label_zeroed; /* out holds zeros: labels only */

/* Reference: flood fill with every neighbour (26 in 3-D) in raster order. */
static int64_t ref26(const uint8_t *m, const int64_t *sh, int64_t *lab) {
    int64_t n = sh[0] * sh[1] * sh[2], count = 0, *stack = malloc((size_t)(n + 1) * 8);
    memset(lab, 0, (size_t)n * sizeof *lab);
    for (int64_t v = 0; v < n; v++) {
        if (!m[v] || lab[v]) continue;
        lab[v] = ++count;
        int64_t top = 0;
        stack[top++] = v;
        while (top) {
            int64_t u = stack[--top];
            int64_t z = u / (sh[1] * sh[2]), y = u / sh[2] % sh[1], x = u % sh[2];
            for (int64_t dz = -1; dz <= 1; dz++)
                for (int64_t dy = -1; dy <= 1; dy++)
                    for (int64_t dx = -1; dx <= 1; dx++) {
                        int64_t a = z + dz, b = y + dy, c = x + dx;
                        if (a < 0 || b < 0 || c < 0 || a >= sh[0] || b >= sh[1] || c >= sh[2])
                            continue;
                        int64_t w = (a * sh[1] + b) * sh[2] + c;
                        if (m[w] && !lab[w]) {
                            lab[w] = count;
                            stack[top++] = w;
                        }
                    }
        }
    }
    free(stack);
    return count;
}

/* Label `m` (shape sh, viewed with nd = 2 or 3 dims: 2 drops sh[0] == 1)
 * with the block path and the run path, for 1-3 threads and two slab
 * sizes, into int64; all must equal the reference. */
static void check_mask(const uint8_t *m, const int64_t *sh, int nd, const char *what) {
    int64_t n = sh[0] * sh[1] * sh[2], want_n;
    int64_t *want = malloc((size_t)n * 8), *got = malloc((size_t)n * 8);
    want_n = ref26(m, sh, want);
    voxa_array in, out;
    voxa_array_view(&in, (void *)m, VOXA_U8, nd, sh + 3 - nd);
    voxa_array_view(&out, got, VOXA_I64, nd, sh + 3 - nd);
    int64_t old_block = voxa__label_min_block;
    for (int mode = 0; mode <= 2; mode += 2)
        for (int t = 1; t <= 3; t++)
            for (int tiny = 0; tiny < 3; tiny++) {
                /* tiny 2: default slabs, the output already zero, so only
                 * the labels are written (the zeroed hint) */
                voxa__label_use_blocks = mode;
                voxa__label_min_block = tiny == 1 ? 1 : old_block;
                voxa__label_zeroed = tiny == 2;
                voxa_set_threads(t);
                int64_t gn = -1;
                memset(got, tiny == 2 ? 0 : 0x5a, (size_t)n * 8);
                CHECK_OK(voxa_label(&in, NULL, nd, &out, &gn));
                int same = gn == want_n && !memcmp(want, got, (size_t)n * 8);
                CHECK(same);
                if (!same)
                    fprintf(stderr, "  %s (%lld,%lld,%lld) mode %d threads %d tiny %d: %lld "
                            "components, want %lld\n", what, (long long)sh[0], (long long)sh[1],
                            (long long)sh[2], mode, t, tiny, (long long)gn, (long long)want_n);
            }
    voxa__label_zeroed = 0;
    voxa__label_use_blocks = 1;
    voxa__label_min_block = old_block;
    voxa_set_threads(0);
    free(want);
    free(got);
}

/* Every extent 1..5 (odd and even) in each axis, several densities and
 * patterns: random, checker board (3-D parity), all ones, all zeros. */
static void test_extents(void) {
    unsigned long long seed = 7;
    for (int64_t z = 1; z <= 5; z++)
        for (int64_t y = 1; y <= 5; y++)
            for (int64_t x = 1; x <= 5; x++) {
                int64_t sh[3] = {z, y, x}, n = z * y * x;
                uint8_t *m = malloc((size_t)n);
                for (int pat = 0; pat < 6; pat++) {
                    for (int64_t i = 0; i < n; i++) {
                        int64_t a = i / (y * x), b = i / x % y, c = i % x;
                        m[i] = pat == 0 ? 1 : pat == 1 ? 0 : pat == 2 ? (a + b + c) % 2 == 0
                             : (int)(vtest_rand(&seed) % 100) < 20 * pat - 40;
                    }
                    check_mask(m, sh, 3, "extents");
                }
                free(m);
            }
}

/* Bigger random masks (several slabs, seams inside and between planes),
 * every density, odd and even extents. */
static void test_random(void) {
    unsigned long long seed = 99;
    const int64_t shapes[][3] = {{9, 17, 33}, {8, 16, 64}, {13, 6, 71}, {2, 40, 41}, {17, 3, 2}};
    for (int s = 0; s < 5; s++)
        for (int dens = 5; dens <= 95; dens += 15) {
            const int64_t *sh = shapes[s];
            int64_t n = sh[0] * sh[1] * sh[2];
            uint8_t *m = malloc((size_t)n);
            for (int64_t i = 0; i < n; i++) m[i] = (int)(vtest_rand(&seed) % 100) < dens;
            check_mask(m, sh, 3, "random");
            free(m);
        }
}

/* Single voxels at block corners: pairs touching across a block corner,
 * an edge and a face (one component each), and pairs two apart (two). */
static void test_corners(void) {
    int64_t sh[3] = {6, 6, 6};
    uint8_t m[216];
    const int pairs[][6] = {
        {1, 1, 1, 2, 2, 2}, {1, 1, 2, 2, 2, 1}, {1, 2, 1, 2, 1, 2}, {2, 1, 1, 1, 2, 2},
        {1, 1, 1, 2, 1, 2}, {1, 1, 1, 1, 2, 2}, {1, 1, 1, 2, 2, 1}, {3, 3, 3, 4, 4, 4},
        {1, 1, 1, 3, 1, 1}, {1, 1, 1, 1, 1, 3}, {1, 1, 1, 3, 3, 3}, {0, 0, 0, 5, 5, 5}};
    for (int k = 0; k < 12; k++) {
        memset(m, 0, sizeof m);
        m[(pairs[k][0] * 6 + pairs[k][1]) * 6 + pairs[k][2]] = 1;
        m[(pairs[k][3] * 6 + pairs[k][4]) * 6 + pairs[k][5]] = 1;
        check_mask(m, sh, 3, "corner pair");
    }
    /* every voxel of one block alone, and with one voxel of each neighbour
     * block on the far side (not touching: two components) */
    for (int b = 0; b < 8; b++) {
        memset(m, 0, sizeof m);
        m[((2 + (b >> 2)) * 6 + 2 + ((b >> 1) & 1)) * 6 + 2 + (b & 1)] = 1;
        m[0] = 1;
        check_mask(m, sh, 3, "one voxel per block");
    }
}

/* A component whose first voxel lies in the second plane of its first
 * block comes after one starting in the first plane of a later block:
 * (1,0,0) [block 0, dz 1] and (0,0,2) [block 1, dz 0]: labels 2 and 1. */
static void test_numbering(void) {
    int64_t sh[3] = {2, 2, 4}, n;
    uint8_t m[16] = {0};
    int32_t got[16];
    m[1 * 8 + 0] = 1;  /* (1,0,0) */
    m[0 * 8 + 3] = 1;  /* (0,0,3): not adjacent to (1,0,0) */
    m[0 * 8 + 4 + 1] = 1; /* (0,1,1): second row of block 0, touches (1,0,0) */
    voxa_array in, out;
    voxa_array_view(&in, m, VOXA_U8, 3, sh);
    voxa_array_view(&out, got, VOXA_I32, 3, sh);
    voxa__label_use_blocks = 2;
    CHECK_OK(voxa_label(&in, NULL, 3, &out, &n));
    voxa__label_use_blocks = 1;
    CHECK(n == 2 && got[3] == 1 && got[5] == 2 && got[8] == 2);
    check_mask(m, sh, 3, "numbering");
}

/* 2-D masks (8-connectivity) and 3-D masks with a unit axis. */
static void test_2d(void) {
    unsigned long long seed = 5;
    const int64_t shapes[][3] = {{1, 1, 7}, {1, 2, 2}, {1, 3, 5}, {1, 33, 65}, {1, 64, 3},
                                 {1, 7, 1}};
    for (int s = 0; s < 6; s++)
        for (int dens = 10; dens <= 90; dens += 40) {
            const int64_t *sh = shapes[s];
            int64_t n = sh[0] * sh[1] * sh[2];
            uint8_t *m = malloc((size_t)n);
            for (int64_t i = 0; i < n; i++) m[i] = (int)(vtest_rand(&seed) % 100) < dens;
            check_mask(m, sh, 2, "2-D");
            check_mask(m, sh, 3, "3-D with a unit axis");
            free(m);
        }
}

/* Output dtypes (uint8/16, int32/64: same labels) and the count overflow:
 * voxels on every second coordinate are isolated, 41^3 > 65535 of them. */
static void test_dtypes_overflow(void) {
    enum { S = 82 };
    int64_t sh[3] = {S, S, S}, n = (int64_t)S * S * S, cnt;
    uint8_t *m = calloc((size_t)n, 1);
    for (int64_t i = 0; i < n; i++) m[i] = (i / (S * S)) % 2 == 0 && (i / S) % S % 2 == 0 && i % 2 == 0;
    uint16_t *l16 = malloc((size_t)n * 2);
    voxa_array in, out;
    voxa_array_view(&in, m, VOXA_U8, 3, sh);
    voxa_array_view(&out, l16, VOXA_U16, 3, sh);
    for (int mode = 0; mode <= 2; mode += 2) {
        voxa__label_use_blocks = mode;
        l16[5] = 77;
        CHECK_STATUS(voxa_label(&in, NULL, 3, &out, &cnt), VOXA_EOVERFLOW);
        CHECK_MSG("68921 components do not fit the output dtype uint16");
        CHECK(cnt == 0 && l16[5] == 77); /* nothing written */
    }
    free(l16);
    /* a smaller volume fits every dtype: all equal */
    int64_t sm[3] = {10, 12, 14}, ns = 10 * 12 * 14;
    unsigned long long seed = 3;
    for (int64_t i = 0; i < ns; i++) m[i] = vtest_rand(&seed) % 4 == 0;
    int64_t want[10 * 12 * 14], wn = ref26(m, sm, want);
    const voxa_dtype dts[] = {VOXA_U8, VOXA_I8, VOXA_U16, VOXA_I32, VOXA_U32, VOXA_I64};
    unsigned char buf[10 * 12 * 14 * 8];
    voxa_array_view(&in, m, VOXA_U8, 3, sm);
    voxa__label_use_blocks = 2;
    for (int k = 0; k < 6; k++) {
        voxa_array_view(&out, buf, dts[k], 3, sm);
        int64_t gn = -1;
        CHECK_OK(voxa_label(&in, NULL, 3, &out, &gn));
        CHECK(gn == wn);
        int ok = 1;
        int64_t idx[3];
        for (int64_t i = 0; i < ns; i++) {
            idx[0] = i / (12 * 14);
            idx[1] = i / 14 % 12;
            idx[2] = i % 14;
            ok &= (int64_t)voxa_array_get(&out, idx) == want[i];
        }
        CHECK(ok);
    }
    voxa__label_use_blocks = 1;
    free(m);
}

int main(void) {
    RUN(test_extents);
    RUN(test_random);
    RUN(test_corners);
    RUN(test_numbering);
    RUN(test_2d);
    RUN(test_dtypes_overflow);
    VTEST_END();
}
