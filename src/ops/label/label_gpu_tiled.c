/* Connected components on a GPU backend for a volume larger than the device
 * (or than VOXA_GPU_TILE_BYTES): by tiles on the device, seams united on the
 * host, then scipy's numbering. Equal to voxa_label voxel for voxel.
 *
 * The (padded 3-D) volume is cut into a grid of tiles, halving axis 0, then
 * 1, then 2 until a tile's device memory fits the limits.
 *   Pass 1: each tile is labelled on the device (label_gpu.c: union-find,
 *   64-bit indices, numbered 1..k_t by first voxel in the tile's raster
 *   order) and read back as int64 into a tile-sized host buffer. Tile t's
 *   label n becomes the provisional label off_t + n; the host keeps each
 *   provisional label's first voxel (as a global raster index: a tile's
 *   raster order is the volume's order restricted to the tile) and the two
 *   planes on either side of every cut between tiles.
 *   Seams: every pair of voxels on either side of a cut that the structure
 *   connects is united (host union-find over provisional labels). A pair in
 *   different tiles differs along some axis whose cut lies between them, and
 *   that cut's planes span the whole volume, so pairs across tile edges and
 *   corners are found too.
 *   Numbering: each merged component is numbered by its first voxel in
 *   raster order, which is exactly scipy.ndimage.label's numbering; the
 *   count is checked against the output dtype before anything is written.
 *   Pass 2: each tile is labelled again on the device, and the kernel writes
 *   map[local label] in the output dtype, read straight into the caller's
 *   view of the tile.
 *
 * Device memory per tile of v voxels: at most 24 v + c(v) + 64 bytes (mask
 * and parents; parents and int64 labels; parents, output and the map of up
 * to v labels: a structure with no neighbours makes every voxel one); c(v),
 * about v/64, is the root counts' (voxa__label_gpu_count_bytes).
 * Host: one tile's int64 labels and mask, the cut planes (16 bytes per voxel
 * of each cut's cross-section), 24 bytes per provisional label. Cost: every
 * tile is labelled twice on the device. */
#include "label_internal.h"
#include "backend/gpu.h"
#include "label_gpu.h"

#include <stdlib.h>
#include <string.h>

static int64_t tile_total(int64_t v) { return 24 * v + voxa__label_gpu_count_bytes(v) + 64; }

int64_t voxa__label_gpu_tiling(const int64_t sh[3], size_t es, int64_t lim, int64_t largest,
                               int64_t tile[3]) {
    int64_t v = sh[0] * sh[1] * sh[2];
    int64_t whole = (es > 1 ? 8 * v + (int64_t)es * v : 9 * v) + voxa__label_gpu_count_bytes(v);
    for (int d = 0; d < 3; d++) tile[d] = sh[d];
    if (whole <= lim && 8 * v <= largest) return 1;
    for (int d = 0; d < 3; d++) {
        for (;;) {
            int64_t t = tile[0] * tile[1] * tile[2];
            if (tile_total(t) <= lim && 8 * t <= largest) goto found;
            if (tile[d] == 1) break;
            tile[d] = (tile[d] + 1) / 2;
        }
    }
    return 0;
found:;
    int64_t n = 1;
    for (int d = 0; d < 3; d++) n *= (sh[d] + tile[d] - 1) / tile[d];
    return n;
}

static int64_t find(int64_t *par, int64_t i) {
    while (par[i] != i) {
        par[i] = par[par[i]];
        i = par[i];
    }
    return i;
}

static void unite(int64_t *par, int64_t a, int64_t b) {
    a = find(par, a);
    b = find(par, b);
    if (a < b) par[b] = a;
    else if (b < a) par[a] = b;
}

typedef struct root {
    int64_t first, id;
} root;

static int by_first(const void *x, const void *y) {
    int64_t a = ((const root *)x)->first, b = ((const root *)y)->first;
    return (a > b) - (a < b);
}

/* Offsets k (0..26, index (dz+1)*9 + (dy+1)*3 + dx+1 of the padded 3-D box)
 * that the structure connects (both directions: it is centrosymmetric). */
static void full_offsets(int nd, const unsigned char *structure, int connectivity, int on[27]) {
    int pad = 3 - nd;
    for (int k = 0; k < 27; k++) {
        int off[3] = {k / 9 - 1, (k / 3) % 3 - 1, k % 3 - 1}, ok = k != 13, s = 0, dist = 0;
        for (int d = 0; d < pad; d++) ok &= off[d] == 0;
        for (int d = pad; d < 3; d++) {
            s = s * 3 + off[d] + 1;
            dist += off[d] != 0;
        }
        on[k] = ok && (structure ? structure[s] != 0 : dist <= connectivity);
    }
}

/* The mask of tile (ts, tl) of the volume bin (shape sh), C-contiguous. */
static void tile_mask(const uint8_t *bin, const int64_t sh[3], const int64_t ts[3],
                      const int64_t tl[3], uint8_t *dst) {
    for (int64_t z = 0; z < tl[0]; z++)
        for (int64_t y = 0; y < tl[1]; y++) {
            memcpy(dst, bin + ((ts[0] + z) * sh[1] + ts[1] + y) * sh[2] + ts[2], (size_t)tl[2]);
            dst += tl[2];
        }
}

voxa_status voxa__label_gpu_tiled(voxa__gpu *g, const uint8_t *bin, const int64_t sh[3],
                                  const int64_t tile[3], int nd, const unsigned char *structure,
                                  int connectivity, int mask, voxa_array *out, int64_t *nlabels) {
    int pad = 3 - nd, on[27];
    full_offsets(nd, structure, connectivity, on);
    int64_t nt[3], ntiles = 1, tv = tile[0] * tile[1] * tile[2], ps[3];
    for (int d = 0; d < 3; d++) {
        nt[d] = (sh[d] + tile[d] - 1) / tile[d];
        ntiles *= nt[d];
        ps[d] = sh[0] * sh[1] * sh[2] / sh[d];
    }
    voxa_status st = VOXA_OK;
    int64_t K = 0, cap = 0, R = 0;
    int64_t *planes[3] = {NULL, NULL, NULL}, *firsts = NULL, *par = NULL, *map = NULL;
    int64_t *lab = voxa__malloc((size_t)tv, 8), *koff = voxa__malloc((size_t)ntiles, 16);
    uint8_t *tm = voxa__malloc((size_t)tv, 1);
    root *roots = NULL;
    VOXA_GOTO_IF(!lab || !koff || !tm, VOXA_ENOMEM, "label: out of host memory for a tile of "
                 "%lld voxels", (long long)tv);
    for (int d = 0; d < 3; d++) {
        if (nt[d] < 2) continue;
        planes[d] = voxa__malloc((size_t)((nt[d] - 1) * 2 * ps[d]), 8);
        VOXA_GOTO_IF(!planes[d], VOXA_ENOMEM, "label: out of host memory for the tile faces");
    }
    /* pass 1: provisional labels, first voxels, cut planes */
    for (int64_t t = 0; t < ntiles; t++) {
        int64_t ti[3] = {t / (nt[1] * nt[2]), (t / nt[2]) % nt[1], t % nt[2]}, ts[3], tl[3], k;
        for (int d = 0; d < 3; d++) {
            ts[d] = ti[d] * tile[d];
            tl[d] = sh[d] - ts[d] < tile[d] ? sh[d] - ts[d] : tile[d];
        }
        voxa_array lv;
        tile_mask(bin, sh, ts, tl, tm);
        if ((st = voxa_array_view(&lv, lab, VOXA_I64, 3, tl)) ||
            (st = voxa__label_gpu_tile(g, tm, tl, mask, NULL, 0, &lv, &k)))
            goto done;
        koff[2 * t] = K;
        koff[2 * t + 1] = k;
        if (K + k > cap) {
            int64_t nc = (K + k) * 2 + 64;
            int64_t *f = realloc(firsts, (size_t)nc * 8);
            VOXA_GOTO_IF(!f, VOXA_ENOMEM, "label: out of host memory for %lld labels",
                         (long long)nc);
            firsts = f;
            cap = nc;
        }
        int64_t next = 1, i = 0;
        for (int64_t z = 0; z < tl[0] && next <= k; z++)
            for (int64_t y = 0; y < tl[1]; y++)
                for (int64_t x = 0; x < tl[2]; x++, i++)
                    if (lab[i] == next)
                        firsts[K + next++ - 1] = ((ts[0] + z) * sh[1] + ts[1] + y) * sh[2] +
                                                 ts[2] + x;
        for (int d = 0; d < 3; d++) {
            int a1 = d == 0 ? 1 : 0, a2 = d == 2 ? 1 : 2;
            for (int side = 0; side < 2; side++) { /* 0: high face, 1: low face */
                int64_t cut = side ? ti[d] - 1 : ti[d];
                if (cut < 0 || cut >= nt[d] - 1) continue;
                int64_t *pl = planes[d] + (cut * 2 + side) * ps[d], c[3];
                c[d] = side ? 0 : tl[d] - 1;
                for (c[a1] = 0; c[a1] < tl[a1]; c[a1]++)
                    for (c[a2] = 0; c[a2] < tl[a2]; c[a2]++) {
                        int64_t v = lab[(c[0] * tl[1] + c[1]) * tl[2] + c[2]];
                        pl[(ts[a1] + c[a1]) * sh[a2] + ts[a2] + c[a2]] = v ? K + v : 0;
                    }
            }
        }
        K += k;
    }
    /* seams */
    par = voxa__malloc((size_t)K + 1, 8);
    VOXA_GOTO_IF(!par, VOXA_ENOMEM, "label: out of host memory for %lld labels", (long long)K);
    for (int64_t i = 0; i <= K; i++) par[i] = i;
    for (int d = 0; d < 3; d++) {
        int a1 = d == 0 ? 1 : 0, a2 = d == 2 ? 1 : 2;
        for (int64_t cut = 0; cut + 1 < nt[d]; cut++) {
            const int64_t *lo = planes[d] + cut * 2 * ps[d], *hi = lo + ps[d];
            for (int64_t u = 0; u < sh[a1]; u++)
                for (int64_t w = 0; w < sh[a2]; w++) {
                    int64_t a = hi[u * sh[a2] + w];
                    if (!a) continue;
                    for (int k = 0; k < 27; k++) {
                        int off[3] = {k / 9 - 1, (k / 3) % 3 - 1, k % 3 - 1};
                        if (!on[k] || off[d] != -1) continue;
                        int64_t u2 = u + off[a1], w2 = w + off[a2];
                        if (u2 < 0 || u2 >= sh[a1] || w2 < 0 || w2 >= sh[a2]) continue;
                        int64_t b = lo[u2 * sh[a2] + w2];
                        if (b) unite(par, a, b);
                    }
                }
        }
    }
    /* numbering: components by first voxel in raster order */
    roots = voxa__malloc((size_t)K + 1, sizeof(root));
    map = voxa__malloc((size_t)K + 1, 8);
    VOXA_GOTO_IF(!roots || !map, VOXA_ENOMEM, "label: out of host memory for %lld labels",
                 (long long)K);
    for (int64_t i = 1; i <= K; i++) map[i] = INT64_MAX;
    for (int64_t i = 1; i <= K; i++) {
        int64_t r = find(par, i);
        if (firsts[i - 1] < map[r]) map[r] = firsts[i - 1];
    }
    for (int64_t i = 1; i <= K; i++)
        if (par[i] == i) roots[R++] = (root){map[i], i};
    qsort(roots, (size_t)R, sizeof(root), by_first);
    VOXA_GOTO_IF(R > voxa__label_dtype_max(out->dtype), VOXA_EOVERFLOW,
                 "label: %lld labels do not fit the output dtype %s", (long long)R,
                 voxa_dtype_name(out->dtype));
    for (int64_t j = 0; j < R; j++) map[roots[j].id] = j + 1;
    for (int64_t i = 1; i <= K; i++) map[i] = map[find(par, i)];
    /* pass 2: final numbers written by the device into the caller's view */
    for (int64_t t = 0; t < ntiles; t++) {
        int64_t ti[3] = {t / (nt[1] * nt[2]), (t / nt[2]) % nt[1], t % nt[2]}, ts[3], tl[3], k;
        for (int d = 0; d < 3; d++) {
            ts[d] = ti[d] * tile[d];
            tl[d] = sh[d] - ts[d] < tile[d] ? sh[d] - ts[d] : tile[d];
        }
        voxa_array ov = *out;
        ov.owner = NULL;
        for (int d = 0; d < nd; d++) {
            ov.data = (char *)ov.data + ts[pad + d] * out->strides[d];
            ov.shape[d] = tl[pad + d];
        }
        tile_mask(bin, sh, ts, tl, tm);
        if ((st = voxa__label_gpu_tile(g, tm, tl, mask, map + 1 + koff[2 * t], koff[2 * t + 1],
                                       &ov, &k)))
            goto done;
    }
    *nlabels = R;
done:
    for (int d = 0; d < 3; d++) voxa__free(planes[d]);
    free(firsts);
    voxa__free(par);
    voxa__free(map);
    voxa__free(roots);
    voxa__free(lab);
    voxa__free(koff);
    voxa__free(tm);
    return st;
}
