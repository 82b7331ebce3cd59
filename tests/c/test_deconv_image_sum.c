/* voxa__rl_image_sum, the one pass over the image before an RL run (CPU and
 * GPU paths): the sum that free mode's starting mean comes from, and the
 * check that names the first NaN or infinite value. Checked: the sum against
 * a long double reference, the same bits for 1, 2 and 3 threads, the first
 * bad index wherever it lies (first voxel, past a block boundary, last voxel,
 * with a later bad value too), check = 0 passing a NaN through, n = 0. */
#include "vtest.h"
#include "../../src/ops/deconv/deconv_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N (3 * 65536 + 123) /* three whole blocks and a partial one */

static void test_sum_and_threads(void) {
    float *g = malloc(N * sizeof *g);
    unsigned s = 12345;
    long double ref = 0;
    for (int64_t i = 0; i < N; i++) {
        s = s * 1103515245u + 12345u;
        g[i] = (float)((s >> 8) % 100000) * 1e-3f + (i % 1000 == 0 ? 3e6f : 0);
        ref += g[i];
    }
    double sums[3];
    for (int t = 1; t <= 3; t++) {
        voxa_set_threads(t);
        CHECK_OK(voxa__rl_image_sum(g, N, 1, &sums[t - 1]));
    }
    voxa_set_threads(0);
    CHECK(fabsl((long double)sums[0] - ref) <= 1e-12L * ref);
    CHECK(!memcmp(&sums[0], &sums[1], sizeof(double)) && !memcmp(&sums[0], &sums[2], sizeof(double)));
    free(g);
}

static void test_first_bad_index(void) {
    float *g = calloc(N, sizeof *g);
    const int64_t at[] = {0, 65536 + 5, N - 1};
    char want[64];
    double sum;
    for (int k = 0; k < 3; k++) {
        memset(g, 0, N * sizeof *g);
        g[at[k]] = k == 1 ? -INFINITY : NAN;
        if (k == 1) g[2 * 65536 + 7] = NAN; /* a later one: the first is named */
        CHECK_STATUS(voxa__rl_image_sum(g, N, 1, &sum), VOXA_EINVAL);
        snprintf(want, sizeof want, "flat index %lld is NaN or infinite", (long long)at[k]);
        CHECK_MSG(want);
    }
    CHECK_OK(voxa__rl_image_sum(g, N, 0, &sum)); /* no check: the NaN is summed */
    CHECK(isnan(sum));
    CHECK_OK(voxa__rl_image_sum(g, 0, 1, &sum));
    CHECK(sum == 0);
    free(g);
}

int main(void) {
    RUN(test_sum_and_threads);
    RUN(test_first_bad_index);
    VTEST_END();
}
