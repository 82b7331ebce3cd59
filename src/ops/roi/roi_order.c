/* roi extraction order: in what order the patches (or their slabs) are
 * copied. The result never depends on it (each patch writes its own slice of
 * `out`); the time does, because random corners make the copy a gather whose
 * cost is the source lines it reads from DRAM and how many of those reads are
 * in flight at once.
 *
 * Two orders, chosen by roi_extract.c:
 *  - patches along a Z-order curve of patch-sized image cells (or by the
 *    slowest axis alone when a patch's band fits L2): voxa__roi_order below;
 *  - slabs: every patch wholly inside cut into its slabs along its slowest
 *    axis (for W3, 32 planes of 32 rows), the slabs of all patches sorted by
 *    the image plane they read (stable, so within a plane they keep the
 *    Z-order of their patches): voxa__roi_slabs_make. The whole batch then
 *    sweeps the image once, plane after plane: the lines of one plane that
 *    several patches share are read from DRAM once and hit the cache for the
 *    others (the patches overlapping one slab are a few hundred KiB of
 *    reads apart, not a 64 MiB band of planes apart), and the reads advance
 *    through memory in address order. Patches reaching outside the image keep
 *    the patch order (they take the slow path anyway).
 *
 * Cost: O(N k) for the corners, O(N + 2^16) for the Morton counting sort,
 * O(N * slabs + planes) for the slab sort; memory 24 bytes per patch and
 * 12 bytes per slab. */
#include "roi_internal.h"

#include <string.h>

/* Processing order: patches sorted by the cell of the image their corner
 * falls in, cells visited along a Z-order (Morton) curve: a stable counting
 * sort on the cell's Morton code, O(N + 2^bits). The cells tile the patch
 * axes with one patch extent per axis; the code interleaves the bits of the
 * cell coordinates, axes taken by decreasing |stride| (so for a C-ordered
 * image, z before y before x at every bit level: source-address order within
 * each 2x2x2 block of cells, and of the blocks themselves).
 *
 * Why: every patch still writes its own slice of `out`, so the result does
 * not change; but patches that overlap are now copied close together in time
 * in all three directions, so the lines they share are read from DRAM once.
 * At W3 density (random corners cover each image voxel ~1.2 times) about 65 %
 * of the line reads are repeats. An LRU simulation of W3-3D (10k x 32^3 u16
 * from (256,1024,1024), 2.0e7 line reads, 7.2e6 distinct lines) gives, with
 * a 32 MB cache: z-sorted (the order this replaced) 1.12e7 misses, cells in
 * row-major order 0.96e7, Morton 0.75e7; with 100 MB all three are within
 * 1 % of the 7.2e6 minimum. Neighbouring patches also read neighbouring DRAM
 * pages, and each thread's block of the order is a compact region.
 * When the code needs more than SORT_MAX_BITS bits, tiles double along the
 * axis with the most bits (the fastest one on ties), keeping cells cubic.
 *
 * Except when the band a patch spans along the slowest axis (its extent
 * there times that stride) fits a core's L2 (SORT_BAND_BYTES): then patches
 * are sorted by that axis alone (tile 1, the same code with one axis), which
 * keeps every read inside one L2-sized band of the image. Measured W3-2D
 * (100k x 64x64 u8 from (8192,8192): a 512 KiB band), interleaved in one
 * process on a loaded 2-vCPU Xeon, out=: the Morton order took 1.14x (1.04-
 * 1.43) the time of the sort by rows, while on W3-3D (a 64 MiB band) it took
 * 0.84-0.87x the time of the sort by z (bench_roi.py --before). */
#define SORT_MIN_PATCHES 256
#define SORT_MAX_BITS 16
#define SORT_BAND_BYTES ((double)(2 << 20))

static int bits_for(int64_t cells) { /* smallest b with 2^b >= cells */
    int b = 0;
    while (((int64_t)1 << b) < cells) b++;
    return b;
}

/* The first k axes by decreasing |stride| (insertion sort; ties keep axis
 * order). */
static void stride_axes(const voxa_array *in, int k, int *ax) {
    for (int j = 0; j < k; j++) {
        int64_t sd = in->strides[j] < 0 ? -in->strides[j] : in->strides[j];
        int i = j;
        for (; i > 0; i--) {
            int64_t so = in->strides[ax[i - 1]];
            if ((so < 0 ? -so : so) >= sd) break;
            ax[i] = ax[i - 1];
        }
        ax[i] = j;
    }
}

/* The band of rows one patch spans along the slowest axis: when it fits
 * a core's L2, sorting by that axis alone keeps every read in the band
 * (tile 1 there, one cell across the other axes). */
static int band_fits(const voxa_array *in, const int64_t *ext, const int *ax) {
    int64_t s0 = in->strides[ax[0]] < 0 ? -in->strides[ax[0]] : in->strides[ax[0]];
    return (double)ext[ax[0]] * (double)s0 <= SORT_BAND_BYTES;
}

int voxa__roi_band_fits(const voxa_array *in, const voxa_roi_params *p, const int64_t *ext) {
    int ax[VOXA_MAXDIM];
    if (p->k < 1) return 1;
    stride_axes(in, p->k, ax);
    return band_fits(in, ext, ax);
}

voxa_status voxa__roi_order(const voxa_array *in, const voxa_roi_params *p, const int64_t *ext,
                            int64_t **order) {
    int k = p->k;
    int64_t n = p->n;
    *order = NULL;
    if (n < SORT_MIN_PATCHES || k < 1) return VOXA_OK;
    int ax[VOXA_MAXDIM], bits[VOXA_MAXDIM];
    int64_t tile[VOXA_MAXDIM], cells[VOXA_MAXDIM], len[VOXA_MAXDIM];
    stride_axes(in, k, ax);
    int fits = band_fits(in, ext, ax);
    int total = 0, maxbits = 0;
    for (int j = 0; j < k; j++) {
        len[j] = in->shape[ax[j]];
        tile[j] = ext[ax[j]] > 0 ? ext[ax[j]] : 1;
        if (fits) tile[j] = j == 0 ? 1 : (len[j] > 1 ? len[j] : 1);
        cells[j] = len[j] > tile[j] ? (len[j] + tile[j] - 1) / tile[j] : 1;
        bits[j] = bits_for(cells[j]);
        total += bits[j];
    }
    while (total > SORT_MAX_BITS) { /* doubling a tile drops exactly one bit */
        int w = k - 1;
        for (int j = k - 1; j >= 0; j--)
            if (bits[j] > bits[w]) w = j;
        tile[w] *= 2;
        cells[w] = len[w] > tile[w] ? (len[w] + tile[w] - 1) / tile[w] : 1;
        bits[w] = bits_for(cells[w]);
        total--;
    }
    if (total == 0) return VOXA_OK; /* one cell: keep the input order */
    for (int j = 0; j < k; j++)
        if (bits[j] > maxbits) maxbits = bits[j];
    int64_t nb = (int64_t)1 << total;
    int64_t *ord = voxa__malloc((size_t)n, sizeof *ord);
    int64_t *key = voxa__malloc((size_t)n, sizeof *key);
    int64_t *cnt = voxa__calloc((size_t)nb + 1, sizeof *cnt);
    if (!ord || !key || !cnt) {
        voxa__free(ord);
        voxa__free(key);
        voxa__free(cnt);
        return voxa__error(VOXA_ENOMEM, "extract: cannot allocate the order of %lld patches",
                           (long long)n);
    }
    int64_t corner[VOXA_MAXDIM], cell[VOXA_MAXDIM];
    for (int64_t i = 0; i < n; i++) {
        voxa__roi_corner(in, p, i, corner);
        for (int j = 0; j < k; j++) {
            int64_t x = corner[ax[j]];
            x = x < 0 ? 0 : x >= len[j] ? len[j] - 1 : x; /* outside: nearest cell */
            cell[j] = x > 0 ? x / tile[j] : 0;
        }
        int64_t b = 0;
        for (int l = maxbits - 1; l >= 0; l--)
            for (int j = 0; j < k; j++)
                if (bits[j] > l) b = (b << 1) | ((cell[j] >> l) & 1);
        key[i] = b;
        cnt[b + 1]++;
    }
    for (int64_t b = 0; b < nb; b++) cnt[b + 1] += cnt[b];
    for (int64_t i = 0; i < n; i++) ord[cnt[key[i]]++] = i;
    voxa__free(key);
    voxa__free(cnt);
    *order = ord;
    return VOXA_OK;
}

/* Slab order: the slabs of the patches wholly inside, by image plane (the
 * slab's start address over |sstride|, buckets merged 2 by 2 past 2^16), in
 * a stable counting sort of the slabs listed patch by patch in `order`. */
#define SLAB_MAX_BUCKETS ((int64_t)1 << 16)

void voxa__roi_slabs_free(voxa__roi_slabs *sl) {
    voxa__free(sl->unit);
    voxa__free(sl->patch);
    voxa__free(sl->off);
    voxa__free(sl->rest);
    memset(sl, 0, sizeof *sl);
}

voxa_status voxa__roi_slabs_make(const voxa_array *in, const voxa_roi_params *p,
                                 const int64_t *order, int64_t nslab, int64_t sstride,
                                 voxa__roi_slabs *sl) {
    voxa_status st = VOXA_OK;
    int64_t n = p->n, *cnt = NULL;
    uint32_t *key = NULL;
    memset(sl, 0, sizeof *sl);
    sl->nslab = nslab;
    sl->patch = voxa__malloc((size_t)n, sizeof(int64_t));
    sl->off = voxa__malloc((size_t)n, sizeof(int64_t));
    sl->rest = voxa__malloc((size_t)n, sizeof(int64_t));
    VOXA_GOTO_IF(!sl->patch || !sl->off || !sl->rest, VOXA_ENOMEM,
                 "extract: cannot allocate the slab order of %lld patches", (long long)n);
    int64_t corner[VOXA_MAXDIM], lo = 0, hi = 0;
    for (int64_t j = 0; j < n; j++) {
        int64_t i = order ? order[j] : j;
        if (!voxa__roi_corner(in, p, i, corner)) {
            sl->rest[sl->nrest++] = i;
            continue;
        }
        int64_t a = 0;
        for (int d = 0; d < p->k; d++) a += corner[d] * in->strides[d];
        int64_t a0 = a + (sstride < 0 ? (nslab - 1) * sstride : 0);
        int64_t a1 = a + (sstride > 0 ? (nslab - 1) * sstride : 0);
        if (sl->npatch == 0 || a0 < lo) lo = a0;
        if (sl->npatch == 0 || a1 > hi) hi = a1;
        sl->patch[sl->npatch] = i;
        sl->off[sl->npatch++] = a;
    }
    sl->n = sl->npatch * nslab;
    if (sl->n == 0) goto done;
    int64_t step = sstride < 0 ? -sstride : sstride, nb = (hi - lo) / step + 1;
    int sh = 0;
    while ((nb - 1) >> sh >= SLAB_MAX_BUCKETS) sh++;
    nb = ((nb - 1) >> sh) + 1;
    sl->unit = voxa__malloc((size_t)sl->n, sizeof(int64_t));
    key = voxa__malloc((size_t)sl->n, sizeof *key);
    cnt = voxa__calloc((size_t)nb + 1, sizeof *cnt);
    VOXA_GOTO_IF(!sl->unit || !key || !cnt, VOXA_ENOMEM,
                 "extract: cannot allocate the order of %lld slabs", (long long)sl->n);
    for (int64_t j = 0, u = 0; j < sl->npatch; j++)
        for (int64_t s = 0; s < nslab; s++, u++) {
            int64_t b = ((sl->off[j] + s * sstride - lo) / step) >> sh;
            key[u] = (uint32_t)b;
            cnt[b + 1]++;
        }
    for (int64_t b = 0; b < nb; b++) cnt[b + 1] += cnt[b];
    for (int64_t u = 0; u < sl->n; u++) sl->unit[cnt[key[u]]++] = u;
done:
    voxa__free(key);
    voxa__free(cnt);
    if (st != VOXA_OK) voxa__roi_slabs_free(sl);
    return st;
}
