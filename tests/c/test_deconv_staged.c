/* Free mode's staged path skips the box's dead planes and rows (zlive,
 * ylive: where every border weight is 0, the estimate is 0 for ever).
 * Checked on plans directly: zlive and ylive equal the planes and rows a
 * brute-force scan of every row's weights finds live, the split plane
 * transforms keep those rows (and the window's for the ratio), a fading PSF
 * does leave dead planes and rows and a random one none but the box's
 * rounding-up, and the run with the plane skip is bit for bit the run
 * without it (the same plan with zlive widened to the whole box), plain
 * and accelerated, with the direct z stage and with z-FFTs. Skipping rows
 * changes the row plans, so its results are checked against the 3-D path
 * (test_deconv_staged.py). */
#include "vtest.h"
#include "../../src/ops/deconv/deconv_internal.h"

#include <stdlib.h>
#include <string.h>

/* The live planes and rows by brute force: box rows with a weight > 0. */
static void scan_live(const voxa_rl_plan *p, int64_t lo[2], int64_t hi[2]) {
    lo[0] = p->L[0];
    lo[1] = p->L[1];
    hi[0] = hi[1] = 0;
    for (int64_t z = 0; z < p->L[0]; z++)
        for (int64_t y = 0; y < p->L[1]; y++) {
            const float *w = voxa__rl_wrow(p, z * p->L[1] + y);
            int any = 0;
            for (int64_t x = 0; x < p->L[2]; x++) any |= w[x] > 0;
            if (any) {
                lo[0] = z < lo[0] ? z : lo[0];
                hi[0] = z + 1 > hi[0] ? z + 1 : hi[0];
                lo[1] = y < lo[1] ? y : lo[1];
                hi[1] = y + 1 > hi[1] ? y + 1 : hi[1];
            }
        }
}

static void run_both(voxa_rl_plan *p, const voxa_array *g, int acc) {
    voxa_array a, b;
    CHECK_OK(voxa_array_new(&a, VOXA_F32, 3, g->shape));
    CHECK_OK(voxa_array_new(&b, VOXA_F32, 3, g->shape));
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 7;
    o.accelerate = acc;
    CHECK_OK(voxa_rl_plan_execute(p, g, &a, &o));
    int64_t keep[2] = {p->zlive[0], p->zlive[1]};
    p->zlive[0] = 0;
    p->zlive[1] = p->L[0];
    CHECK_OK(voxa_rl_plan_execute(p, g, &b, &o));
    p->zlive[0] = keep[0];
    p->zlive[1] = keep[1];
    CHECK(memcmp(a.data, b.data, (size_t)voxa_array_size(g) * sizeof(float)) == 0);
    voxa_array_free(&a);
    voxa_array_free(&b);
}

static void test_dead_planes_skipped(void) {
    int64_t shape[3] = {12, 14, 16}, ps[3] = {11, 9, 6};
    voxa_array g, gauss, rnd;
    CHECK_OK(voxa_array_new(&g, VOXA_F32, 3, shape));
    CHECK_OK(voxa_array_new(&gauss, VOXA_F32, 3, ps));
    CHECK_OK(voxa_array_new(&rnd, VOXA_F32, 3, ps));
    double sig[3] = {0.9, 0.8, 1.0}; /* z and y tails below 1e-4 of the sum */
    CHECK_OK(voxa_psf_gaussian(&gauss, sig));
    uint32_t s = 7;
    for (int64_t i = 0; i < voxa_array_size(&g); i++) {
        s = s * 1664525u + 1013904223u;
        ((float *)g.data)[i] = 0.3f + (float)(s >> 8) / 16777216.0f;
    }
    for (int64_t i = 0; i < voxa_array_size(&rnd); i++) {
        s = s * 1664525u + 1013904223u;
        ((float *)rnd.data)[i] = 0.05f + (float)(s >> 8) / 16777216.0f;
    }
    setenv("VOXA_RL_STAGED", "1", 1);
    const char *zstage[2] = {"direct", "fft"};
    for (int k = 0; k < 2; k++) {
        setenv("VOXA_RL_ZCONV", zstage[k], 1);
        for (int which = 0; which < 2; which++) {
            voxa_rl_plan *p = NULL;
            CHECK_OK(voxa_rl_plan_new(&p, 3, shape, which ? &rnd : &gauss, VOXA_RL_FREE,
                                      VOXA_RL_ESTIMATE));
            CHECK(p->staged && p->zdirect == (k == 0));
            int64_t lo[2], hi[2];
            scan_live(p, lo, hi);
            CHECK(p->zlive[0] == lo[0] && p->zlive[1] == hi[0]);
            CHECK(p->ylive[0] == lo[1] && p->ylive[1] == hi[1]);
            CHECK(p->yrows[1][0] == lo[1] && p->yrows[1][1] == hi[1]);
            CHECK(p->yrows[0][0] == p->off[1] && p->yrows[0][1] == p->off[1] + p->n[1]);
            for (int d = 0; d < 2; d++) {
                if (which) CHECK(lo[d] == 0 && hi[d] == p->m[d] + p->n[d] - 1);
                else CHECK(lo[d] > 0 && hi[d] < p->m[d] + p->n[d] - 1); /* dead both sides */
            }
            for (int acc = 0; acc < 2; acc++) run_both(p, &g, acc);
            voxa_rl_plan_free(p);
        }
    }
    unsetenv("VOXA_RL_ZCONV");
    unsetenv("VOXA_RL_STAGED");
    voxa_array_free(&g);
    voxa_array_free(&gauss);
    voxa_array_free(&rnd);
}

int main(void) {
    setenv("VOXA_FFTW_WISDOM", "off", 1); /* no user wisdom cache in tests */
    RUN(test_dead_planes_skipped);
    VTEST_END();
}
