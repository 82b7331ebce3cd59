/* roi extraction's fast copy paths (roi_copy.c, roi_order.c) against a
 * naive per-voxel reference, each forced through VOXA_ROI_ORDER and
 * VOXA_ROI_STORES: slab and patch order, plain, SSE2 streaming and AVX-512
 * streaming stores; output at every 16-byte offset from a cache line and
 * misaligned, guard bytes around it; 1 and 3 threads (so the sanitizer
 * tiers see neighbouring slabs of one patch written by different threads,
 * sharing a cache line at their boundary), and a batch with patches
 * reaching outside (mode constant) mixed in. */
#include "internal.h"
#include "vtest.h"

#include <stdlib.h>

enum { Z = 10, Y = 24, X = 112, N = 700, GUARD = 64 };

static uint16_t img[Z][Y][X];

/* One extraction of N patches of (sz, sy, sx) into a buffer at `offset`
 * bytes past a 64-byte boundary; 0 if every voxel and guard byte is right. */
static int one(const int64_t *coords, int64_t sz, int64_t sy, int64_t sx, size_t offset,
               voxa_roi_mode mode) {
    size_t n = (size_t)(N * sz * sy * sx), bytes = n * 2;
    unsigned char *buf = malloc(bytes + 2 * GUARD + 128);
    if (!buf) return 1;
    memset(buf, 0xA5, bytes + 2 * GUARD + 128);
    size_t start = (size_t)(-(uintptr_t)buf & 63) + GUARD + offset;
    uint16_t *out = (uint16_t *)(void *)(buf + start);
    voxa_array in, o;
    int64_t shape[3] = {Z, Y, X}, oshape[4] = {N, sz, sy, sx}, size[3] = {sz, sy, sx};
    int bad = voxa_array_view(&in, img, VOXA_U16, 3, shape) != VOXA_OK;
    bad |= voxa_array_view(&o, out, VOXA_U16, 4, oshape) != VOXA_OK;
    voxa_roi_params p = {coords, N, 3, size, 0, mode, 9};
    if (!bad && voxa_roi_extract(&in, &p, &o) != VOXA_OK) {
        fprintf(stderr, "extract: %s\n", voxa_last_error());
        bad = 1;
    }
    for (int64_t i = 0; i < N && !bad; i++)
        for (int64_t a = 0; a < sz; a++)
            for (int64_t b = 0; b < sy; b++)
                for (int64_t c = 0; c < sx; c++) {
                    int64_t z = coords[3 * i] + a, y = coords[3 * i + 1] + b;
                    int64_t x = coords[3 * i + 2] + c;
                    int inside = z >= 0 && z < Z && y >= 0 && y < Y && x >= 0 && x < X;
                    uint16_t want = inside ? img[z][y][x] : 9;
                    if (out[((i * sz + a) * sy + b) * sx + c] != want) bad = 1;
                }
    for (size_t k = 0; k < start; k++) bad |= buf[k] != 0xA5;
    for (size_t k = start + bytes; k < bytes + 2 * GUARD + 128; k++) bad |= buf[k] != 0xA5;
    free(buf);
    return bad;
}

static void test_paths(void) {
    unsigned long long seed = 11;
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++) img[z][y][x] = (uint16_t)vtest_rand(&seed);
    /* runs of 8, 24, 32, 64 and 96 voxels: 16, 48, 64, 128, 192 bytes */
    const int64_t sxs[5] = {8, 24, 32, 64, 96};
    const size_t offsets[5] = {0, 16, 32, 48, 2};
    const char *orders[2] = {"slabs", "patches"};
    const char *stores[3] = {"plain", "stream-sse2", "stream"};
    static int64_t coords[3 * N];
    for (int bi = 0; bi < 2; bi++) { /* inside only; then some outside */
        voxa_roi_mode mode = bi ? VOXA_ROI_CONSTANT : VOXA_ROI_ERROR;
        for (int si = 0; si < 5; si++) {
            int64_t sz = 3, sy = 5, sx = sxs[si];
            for (int i = 0; i < N; i++) {
                int64_t m = bi && i % 7 == 0 ? 4 : 0; /* every 7th may reach out */
                coords[3 * i] = (int64_t)(vtest_rand(&seed) % (uint64_t)(Z - sz + 1 + 2 * m)) - m;
                coords[3 * i + 1] =
                    (int64_t)(vtest_rand(&seed) % (uint64_t)(Y - sy + 1 + 2 * m)) - m;
                coords[3 * i + 2] =
                    (int64_t)(vtest_rand(&seed) % (uint64_t)(X - sx + 1 + 2 * m)) - m;
            }
            for (int t = 1; t <= 3; t += 2) {
                voxa_set_threads(t);
                for (int oi = 0; oi < 2; oi++)
                    for (int ti = 0; ti < 3; ti++)
                        for (int fi = 0; fi < 5; fi++) {
                            setenv("VOXA_ROI_ORDER", orders[oi], 1);
                            setenv("VOXA_ROI_STORES", stores[ti], 1);
                            int bad = one(coords, sz, sy, sx, offsets[fi], mode);
                            if (bad)
                                fprintf(stderr, "  wrong: %s %s run %lld offset %zu t %d %s\n",
                                        orders[oi], stores[ti], (long long)sx * 2,
                                        offsets[fi], t, bi ? "constant" : "error");
                            CHECK(!bad);
                        }
            }
        }
    }
    unsetenv("VOXA_ROI_ORDER");
    unsetenv("VOXA_ROI_STORES");
    voxa_set_threads(0);
}

int main(void) {
    RUN(test_paths);
    VTEST_END();
}
