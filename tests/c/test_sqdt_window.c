/* sqdt's windowed column passes (src/core/sqdt_window.c) against a brute-force
 * squared distance, for every kernel set (VOXA_SQDT_KERNEL = envelope, c,
 * avx2, avx512; a set the CPU lacks falls back to the next one), at the places
 * where the path switches:
 * - tile widths around the SIMD lanes (1, 7-9, 15-17, 31-33, 63-65): vector
 *   calls, the overlapping last vector, the portable tail;
 * - the budget of steps: each kernel called directly with exactly the steps
 *   its column needs and one fewer (finishes / gives up at the right row,
 *   with the rows before it written), budgets forced from 0 to unlimited on
 *   whole transforms, columns with no target, and a volume whose every tile
 *   is far (the window backs off to the envelope);
 * - all-target and no-target lines, lines of 1 and 2, border sentinels;
 * - float32 output at squared distances >= 2^24 (the scalar sqrt route);
 * - rows fused with the next pass per slab, and not (small / large slabs);
 * - uint32 (squared) and float32 outputs, 1 and 3 threads. */
#include "vtest.h"
#include "sqdt_internal.h"

#include <math.h>
#include <stdlib.h>

static const char *KERNELS[] = {"envelope", "c", "avx2", "avx512"};

/* brute-force squared distance of voxel i of an nd <= 3 mask to the nearest
 * target (src == 0), or to the outside of the volume when border */
static uint64_t brute(const uint8_t *a, int nd, const int64_t *sh, int64_t i, int border,
                      const int64_t *tg, int64_t ntg) {
    int64_t c[3], s3[3] = {1, 1, 1};
    for (int d = 0; d < nd; d++) s3[3 - nd + d] = sh[d];
    c[2] = i % s3[2];
    c[1] = i / s3[2] % s3[1];
    c[0] = i / (s3[2] * s3[1]);
    uint64_t best = UINT64_MAX;
    for (int64_t k = 0; k < ntg; k++) {
        int64_t t = tg[k], e[3] = {t / (s3[2] * s3[1]) - c[0], t / s3[2] % s3[1] - c[1],
                                   t % s3[2] - c[2]};
        uint64_t d2 = (uint64_t)(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
        if (d2 < best) best = d2;
    }
    for (int d = 0; border && d < 3; d++) {
        if (s3[d] == 1 && 3 - nd > d) continue; /* padded axis: no outside */
        int64_t m = c[d] + 1 < s3[d] - c[d] ? c[d] + 1 : s3[d] - c[d];
        if ((uint64_t)(m * m) < best) best = (uint64_t)(m * m);
    }
    (void)a;
    return best;
}

/* runs every kernel set and both outputs on mask a; checks all voxels */
static void check_mask(const uint8_t *a, int nd, const int64_t *sh, int border) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= sh[d];
    int64_t *tg = malloc((size_t)n * sizeof(int64_t)), ntg = 0;
    uint64_t *want = malloc((size_t)n * 8);
    uint32_t *u = malloc((size_t)n * 4);
    float *f = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        if (!a[i]) tg[ntg++] = i;
    for (int64_t i = 0; i < n; i++) want[i] = brute(a, nd, sh, i, border, tg, ntg);
    for (size_t k = 0; k < sizeof KERNELS / sizeof KERNELS[0]; k++) {
        setenv("VOXA_SQDT_KERNEL", KERNELS[k], 1);
        for (int t = 1; t <= 3; t += 2) {
            voxa_set_threads(t);
            voxa__sqdt q;
            memset(&q, 0, sizeof q);
            q.ndim = nd;
            memcpy(q.shape, sh, sizeof(int64_t) * (size_t)nd);
            q.src = a;
            q.target = 0;
            q.border = border;
            q.mode = VOXA__SQDT_U32_SQ;
            q.out = u;
            CHECK_OK(voxa__sqdt_run(&q));
            q.mode = VOXA__SQDT_F32;
            q.out = f;
            CHECK_OK(voxa__sqdt_run(&q));
            int64_t bad = 0;
            for (int64_t i = 0; i < n; i++) {
                uint32_t w32 = want[i] == UINT64_MAX ? UINT32_MAX : (uint32_t)want[i];
                float wf = voxa__sqdt_sqrt_f32(w32);
                if (u[i] != w32 || memcmp(&f[i], &wf, 4) != 0) bad++;
            }
            if (bad)
                fprintf(stderr, "  %s, %d threads, border %d, shape %lld x %lld: %lld wrong\n",
                        KERNELS[k], t, border, (long long)sh[0], (long long)sh[nd - 1],
                        (long long)bad);
            CHECK(bad == 0);
        }
    }
    unsetenv("VOXA_SQDT_KERNEL");
    voxa_set_threads(0);
    free(tg);
    free(want);
    free(u);
    free(f);
}

static void test_widths(void) {
    unsigned long long seed = 0x9e3779b97f4a7c15ull;
    int64_t widths[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65};
    int pct[] = {0, 50, 90, 99, 100}; /* % of non-targets */
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++)
        for (size_t p = 0; p < sizeof pct / sizeof pct[0]; p++) {
            int64_t sh3[3] = {6, 5, widths[w]}, sh2[2] = {23, widths[w]};
            uint8_t a[6 * 5 * 65];
            for (int64_t i = 0; i < 6 * 5 * widths[w]; i++)
                a[i] = (int)(vtest_rand(&seed) % 100) < pct[p];
            check_mask(a, 3, sh3, (int)(w & 1));
            check_mask(a, 2, sh2, (int)(p & 1));
        }
}

/* a line of targets at row r0 of an (n, w) slab, with the budget per row
 * forced (VOXA_SQDT_WINDOW_STEPS) from 0 (every set of lanes gives up at
 * once) to unlimited (the window scans every column to its end) */
static void test_budget_env(void) {
    const char *budgets[] = {"0", "1", "2", "5", "40", "1000000000000"};
    int64_t ns[] = {1, 2, 39, 41, 81, 120};
    for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
        setenv("VOXA_SQDT_WINDOW_STEPS", budgets[b], 1);
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
            for (int r = 0; r < 3; r++) {
                int64_t sh[2] = {ns[s], 19};
                uint8_t *a = malloc((size_t)(sh[0] * sh[1]));
                memset(a, 1, (size_t)(sh[0] * sh[1]));
                int64_t r0 = r == 0 ? 0 : r == 1 ? sh[0] / 2 : sh[0] - 1;
                for (int64_t j = 0; j < sh[1]; j += 1 + (j % 3)) a[r0 * sh[1] + j] = 0;
                check_mask(a, 2, sh, 0);
                check_mask(a, 2, sh, 1);
                free(a);
            }
    }
    unsetenv("VOXA_SQDT_WINDOW_STEPS");
}

/* The kernels called directly on one tile of L lanes: with a budget of
 * exactly the steps the column needs they finish (return n) and write
 * every row exactly; with one step less they give up at the row where the
 * budget runs out, having written exactly the rows before it. The steps are
 * counted here by the same rule, lane by lane: a row scans k = 1, 2, ...
 * until every lane's partial minimum is <= k^2 or k passes its farthest
 * row; a lane whose whole column has no target makes the call give up. */
static void run_kernel(const voxa__sqdt_wkern *k, const uint32_t *t, int64_t n, int64_t ws,
                       int border) {
    const int64_t L = k->lanes;
    uint32_t *want = malloc((size_t)(n * L) * 4), *got = malloc((size_t)(n * L) * 4);
    int64_t *stop = malloc((size_t)n * 8); /* budget needed to finish row y */
    int64_t need = 0, giveup = -1;
    for (int64_t y = 0; y < n; y++) {
        int64_t far = y > n - 1 - y ? y : n - 1 - y, kk = 1;
        uint64_t f[16];
        for (int64_t l = 0; l < L; l++) {
            f[l] = t[y * ws + l];
            uint64_t b = (uint64_t)((y + 1) < (n - y) ? (y + 1) * (y + 1) : (n - y) * (n - y));
            if (border && b < f[l]) f[l] = b;
        }
        for (; kk <= far; kk++) {
            int all = 1;
            for (int64_t l = 0; l < L; l++) all &= f[l] <= (uint64_t)(kk * kk);
            if (all) break;
            for (int64_t l = 0; l < L; l++) {
                if (y >= kk && t[(y - kk) * ws + l] + (uint64_t)(kk * kk) < f[l])
                    f[l] = t[(y - kk) * ws + l] + (uint64_t)(kk * kk);
                if (y + kk < n && t[(y + kk) * ws + l] + (uint64_t)(kk * kk) < f[l])
                    f[l] = t[(y + kk) * ws + l] + (uint64_t)(kk * kk);
            }
        }
        for (int64_t l = 0; l < L; l++) {
            want[y * L + l] = f[l] >= UINT32_MAX ? UINT32_MAX : (uint32_t)f[l];
            if (kk > far && want[y * L + l] == UINT32_MAX && giveup < 0) giveup = y;
        }
        need += kk - 1;
        stop[y] = need;
    }
    for (int64_t extra = -1; extra <= 0; extra++) {
        int64_t budget = need + extra;
        if (budget < 0) continue;
        memset(got, 0xab, (size_t)(n * L) * 4);
        int64_t r = k->cols(t, n, ws, 0, border, budget, got, L, 0);
        int64_t expect = giveup >= 0 ? giveup : n; /* a targetless lane: gives up there */
        for (int64_t y = 0; y < expect && budget < need; y++)
            if (stop[y] > budget) {
                expect = y;
                break;
            }
        if (r != expect)
            fprintf(stderr, "  %s: n %lld, budget %lld of %lld: rows %lld, want %lld\n", k->name,
                    (long long)n, (long long)budget, (long long)need, (long long)r,
                    (long long)expect);
        CHECK(r == expect);
        for (int64_t i = 0; i < r * L && i < n * L; i++) CHECK(got[i] == want[i]);
        if (r < n) CHECK(got[r * L] == 0xababababu); /* the row it gave up on: unwritten */
    }
    free(want);
    free(got);
    free(stop);
}

static void test_kernel_budget(void) {
    unsigned long long seed = 0x243f6a8885a308d3ull;
    for (size_t ki = 1; ki < sizeof KERNELS / sizeof KERNELS[0]; ki++) {
        setenv("VOXA_SQDT_KERNEL", KERNELS[ki], 1);
        const voxa__sqdt_wkern *k = voxa__sqdt_window_pick();
        CHECK(k != NULL);
        int64_t ns[] = {1, 2, 3, 17, 64, 200};
        for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
            for (int kind = 0; kind < 4; kind++)
                for (int border = 0; border < 2; border++) {
                    int64_t n = ns[s], ws = k->lanes + 3;
                    uint32_t *t = malloc((size_t)(n * ws) * 4);
                    for (int64_t i = 0; i < n * ws; i++) {
                        unsigned r = (unsigned)(vtest_rand(&seed) % 1000);
                        /* 0: sparse zeros; 1: dense zeros; 2: one lane with no
                         * target; 3: large finite values, no zero */
                        uint32_t big = (uint32_t)(vtest_rand(&seed) % 40000);
                        t[i] = kind == 0 ? (r < 20 ? 0 : UINT32_MAX)
                             : kind == 1 ? (r < 300 ? 0 : big)
                             : kind == 2 ? (i % ws == 2 ? UINT32_MAX : r < 100 ? 0 : big)
                                         : big + 1;
                    }
                    run_kernel(k, t, n, ws, border);
                    free(t);
                }
    }
    unsetenv("VOXA_SQDT_KERNEL");
}

/* one target in a volume: every tile is far (the fallback, then tiles left
 * on the envelope); and squared distances past 2^24 in float32 */
static void test_far(void) {
    int64_t sh[3] = {70, 9, 130};
    uint8_t *a = malloc(70 * 9 * 130);
    memset(a, 1, 70 * 9 * 130);
    a[(3 * 9 + 4) * 130 + 7] = 0;
    check_mask(a, 3, sh, 0);
    free(a);
    int64_t big[3] = {3, 17, 5000}; /* column passes of 3 and 17: range-limited */
    a = malloc(3 * 17 * 5000);
    memset(a, 1, 3 * 17 * 5000);
    a[5000 + 2] = 0;
    a[(2 * 17 + 16) * 5000] = 0;
    check_mask(a, 3, big, 0);
    free(a);
}

/* rows and the pass along axis nd-2 fused per slab (3-D and more, slabs of
 * at most 1 MiB, at least 4 slabs per thread) and not */
static void test_fused(void) {
    unsigned long long seed = 0x2545f4914f6cdd1dull;
    int64_t shapes[][3] = {{12, 5, 9}, {11, 5, 9}, {4, 5, 9}, {13, 1, 40}, {30, 17, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t n = shapes[s][0] * shapes[s][1] * shapes[s][2];
        uint8_t *a = malloc((size_t)n);
        for (int64_t i = 0; i < n; i++) a[i] = vtest_rand(&seed) % 100 < 85;
        check_mask(a, 3, shapes[s], 0);
        check_mask(a, 3, shapes[s], 1);
        free(a);
    }
    int64_t wide[3] = {5, 257, 1025}; /* slabs of 1.005 MiB: not fused */
    int64_t n = wide[0] * wide[1] * wide[2];
    uint8_t *a = malloc((size_t)n);
    memset(a, 1, (size_t)n);
    for (int k = 0; k < 4; k++) a[vtest_rand(&seed) % (unsigned long long)n] = 0;
    check_mask(a, 3, wide, 0);
    free(a);
}

int main(void) {
    RUN(test_widths);
    RUN(test_budget_env);
    RUN(test_kernel_budget);
    RUN(test_far);
    RUN(test_fused);
    VTEST_END();
}
