/* roi extraction: N patches of one shape out of an N-d array into one
 * (N, *patch, *trailing) array, in row order (workload W3).
 *
 * Algorithm. All patches share one geometry: the same extents, the same
 * source strides (the input's) and destination strides (out's, less the
 * patch axis). So the copy is planned once per call: axes of extent 1 are
 * dropped, and neighbouring axes that are contiguous in both source and
 * destination are merged (trailing channel axes taken whole merge into the
 * rows; a whole-width patch of a C-ordered image becomes one run). The
 * innermost merged axis is a run; when it is contiguous in both arrays it is
 * one memcpy of a byte count fixed for the call, and common counts (16..512
 * bytes: a 64-voxel u8 row, a 32-voxel u16 row) get their own instance so
 * the compiler inlines the copy as a few vector moves instead of a call.
 * The runs of one patch are listed once per call in a table of source and
 * destination offsets (patches of up to 2^20 runs; bigger ones walk the
 * outer axes with an odometer whose common step is one add).
 *
 * Per patch, only the corner moves: a patch wholly inside (the hot path,
 * decided per patch from its corner: O(k)) is copied run by run from the
 * table, prefetching the run PF_ROWS ahead (in this patch or the next one).
 * Random corners put consecutive rows a page or more apart, which hardware
 * prefetchers do not follow: without it every row waits for memory. A patch
 * reaching outside (modes constant/nearest/reflect; error and clip never get
 * here) takes the slow path: one index map per axis, mapping each patch
 * coordinate to a source index by numpy.pad's rule for the mode, or to -1
 * (the fill value, mode constant); rows are then gathered element by element
 * by element size (the dtype only matters through its size: a copy moves
 * bytes, so types are folded by width).
 *
 *   reflect (numpy 'reflect', period 2(n-1), no edge repeat), n = 4:
 *     index  -4 -3 -2 -1 | 0  1  2  3 | 4  5  6  7
 *     source  2  3  2  1 | 0  1  2  3 | 2  1  0  1
 *   nearest (numpy 'edge'):  0 0 0 0 | 0 1 2 3 | 3 3 3 3
 *
 * Order: with 256 patches or more they are processed sorted by the
 * patch-sized cell of the image their corner falls in, cells along a Z-order
 * curve (counting sort, see make_order), so overlapping patches share cached
 * lines and neighbours share DRAM pages; each still lands in its own row of
 * `out`.
 *
 * Threads: blocks of consecutive patches of that order (voxa__parallel_for);
 * each patch writes its own slice of `out`, so results do not depend on the
 * thread count.
 * Strided inputs are read in place: nothing but the patches is copied.
 *
 * Cost: O(N * k) to validate, then O(output bytes) of copying; the hot path
 * moves each output byte once. Extra memory: 16 bytes per run of one patch
 * (the table) and, per block with a border patch, sum(extents) int64 for the
 * maps. Streaming (non-temporal) stores were tried for outputs past the
 * caches and measured slower here (2-core Zen 5): not used.
 *
 * References: numpy.pad (modes constant, edge, reflect); the W3 workload in
 * WORKLOADS.md. */
#include "roi_internal.h"

#include <string.h>

typedef struct plan {
    int nd;                                          /* outer axes */
    int64_t ext[VOXA_MAXDIM], ss[VOXA_MAXDIM], ds[VOXA_MAXDIM];
    int64_t nrows;                                   /* product of outer extents */
    int64_t inner, iss, ids;                         /* the run: count, strides */
    int64_t run_bytes;                               /* inner * es when contiguous */
} plan;

/* `ahead` is the distance from this patch's source to the next patch's (0:
 * none): while a run is copied, the same run of the next patch is
 * prefetched (its first and last byte), a whole patch ahead. Random patch
 * corners defeat the hardware prefetchers (rows a page apart), so without
 * this each row waits for memory. */
typedef void (*box_fn)(char *dst, const char *src, const plan *pl, size_t es,
                       ptrdiff_t ahead);

#define PREFETCH_RUN                                                           \
    if (ahead) {                                                               \
        __builtin_prefetch(src + ahead, 0, 3);                                 \
        __builtin_prefetch(src + ahead + last, 0, 3);                          \
    }

/* Walk the outer axes; BODY copies one run from src to dst. */
#define BOX_WALK(BODY)                                                         \
    int64_t last = pl->iss * (pl->inner - 1) + (int64_t)es - 1;                \
    if (pl->nd == 1) {                                                         \
        int64_t e = pl->ext[0], s = pl->ss[0], t = pl->ds[0];                  \
        for (int64_t r = 0; r < e; r++, src += s, dst += t) {                  \
            PREFETCH_RUN BODY;                                                 \
        }                                                                      \
        return;                                                                \
    }                                                                          \
    int64_t idx[VOXA_MAXDIM] = {0};                                            \
    for (int64_t r = 0; r < pl->nrows; r++) {                                  \
        PREFETCH_RUN BODY;                                                     \
        for (int d = pl->nd - 1; d >= 0; d--) {                                \
            src += pl->ss[d];                                                  \
            dst += pl->ds[d];                                                  \
            if (++idx[d] < pl->ext[d]) break;                                  \
            src -= pl->ss[d] * pl->ext[d];                                     \
            dst -= pl->ds[d] * pl->ext[d];                                     \
            idx[d] = 0;                                                        \
        }                                                                      \
    }

#define BOX_CONST(B)                                                           \
    static void box_##B(char *dst, const char *src, const plan *pl, size_t es, \
                         ptrdiff_t ahead) {                                    \
        BOX_WALK(memcpy(dst, src, B))                                          \
    }
BOX_CONST(16)
BOX_CONST(32)
BOX_CONST(64)
BOX_CONST(128)
BOX_CONST(256)
BOX_CONST(512)

static void box_memcpy(char *dst, const char *src, const plan *pl, size_t es,
                       ptrdiff_t ahead) {
    size_t b = (size_t)pl->run_bytes;
    BOX_WALK(memcpy(dst, src, b))
}

/* A strided run: element by element, by element width. */
#define BOX_STRIDED(W)                                                         \
    static void box_strided_##W(char *dst, const char *src, const plan *pl,    \
                                size_t es, ptrdiff_t ahead) {                  \
        int64_t n = pl->inner, a = pl->iss, b = pl->ids;                       \
        BOX_WALK(for (int64_t i = 0; i < n; i++) memcpy(dst + i * b, src + i * a, W)) \
    }
BOX_STRIDED(1)
BOX_STRIDED(2)
BOX_STRIDED(4)
BOX_STRIDED(8)

/* Build the plan for extents `ext` with source strides `ss` and destination
 * strides `ds` over nd axes; returns 0 if the box is empty. */
static int make_plan(plan *pl, int nd, const int64_t *ext, const int64_t *ss,
                     const int64_t *ds, size_t es) {
    int64_t e[VOXA_MAXDIM], s[VOXA_MAXDIM], t[VOXA_MAXDIM];
    int m = 0;
    for (int d = 0; d < nd; d++) {
        if (ext[d] == 0) return 0;
        if (ext[d] == 1) continue;
        e[m] = ext[d]; s[m] = ss[d]; t[m] = ds[d];
        m++;
    }
    /* Merge axis j into the group after it when both strides line up. */
    int64_t ge[VOXA_MAXDIM], gs[VOXA_MAXDIM], gt[VOXA_MAXDIM];
    int g = 0;
    for (int j = m - 1; j >= 0; j--) {
        if (g > 0 && s[j] == ge[g - 1] * gs[g - 1] && t[j] == ge[g - 1] * gt[g - 1]) {
            ge[g - 1] *= e[j];
            continue;
        }
        ge[g] = e[j]; gs[g] = s[j]; gt[g] = t[j];
        g++;
    }
    /* Groups are innermost first; group 0 is the run. */
    memset(pl, 0, sizeof *pl);
    if (g == 0) {
        pl->inner = 1; pl->iss = pl->ids = (int64_t)es;
    } else {
        pl->inner = ge[0]; pl->iss = gs[0]; pl->ids = gt[0];
    }
    pl->nd = g > 1 ? g - 1 : 0;
    pl->nrows = 1;
    for (int d = 0; d < pl->nd; d++) {
        pl->ext[d] = ge[g - 1 - d]; pl->ss[d] = gs[g - 1 - d]; pl->ds[d] = gt[g - 1 - d];
        pl->nrows *= pl->ext[d];
    }
    if (pl->nd == 0) { /* one run: still walk one "row" */
        pl->nd = 1; pl->ext[0] = 1; pl->ss[0] = pl->ds[0] = 0;
    }
    pl->run_bytes = pl->inner * (int64_t)es;
    return 1;
}

static box_fn pick_box(const plan *pl, size_t es) {
    if (pl->iss == (int64_t)es && pl->ids == (int64_t)es) {
        switch (pl->run_bytes) {
        case 16: return box_16;
        case 32: return box_32;
        case 64: return box_64;
        case 128: return box_128;
        case 256: return box_256;
        case 512: return box_512;
        default: return box_memcpy;
        }
    }
    switch (es) {
    case 1: return box_strided_1;
    case 2: return box_strided_2;
    case 4: return box_strided_4;
    default: return box_strided_8;
    }
}


/* Table-driven copy of one in-bounds patch: run r goes from src + soff[r] to
 * dst + doff[r]. The run PF_ROWS ahead (in this patch, or at the start of the
 * next one, `nxt`) is prefetched first: random corners defeat the hardware
 * prefetchers (rows a page or more apart), and a fixed distance in runs keeps
 * about that many misses in flight whatever the patch shape. */
#define PF_ROWS 64 /* measured on W3: 0 < 8 < 16 < 32 < 64 ~ 128 ~ 256 */
typedef void (*tab_fn)(char *dst, const char *src, const char *nxt, const int64_t *soff,
                       const int64_t *doff, int64_t nrows, int64_t last, size_t bytes);

#define TAB_BODY(COPY)                                                         \
    int64_t r = 0, pf = PF_ROWS < nrows ? PF_ROWS : nrows;                     \
    for (; r < nrows - pf; r++) {                                              \
        const char *q = src + soff[r + pf];                                    \
        __builtin_prefetch(q, 0, 3);                                           \
        __builtin_prefetch(q + last, 0, 3);                                    \
        COPY(dst + doff[r], src + soff[r]);                                    \
    }                                                                          \
    for (; r < nrows; r++) {                                                   \
        if (nxt) {                                                             \
            const char *q = nxt + soff[r + pf - nrows];                        \
            __builtin_prefetch(q, 0, 3);                                       \
            __builtin_prefetch(q + last, 0, 3);                                \
        }                                                                      \
        COPY(dst + doff[r], src + soff[r]);                                    \
    }

#define TAB_CONST(B)                                                           \
    static void tab_##B(char *dst, const char *src, const char *nxt,          \
                        const int64_t *soff, const int64_t *doff, int64_t nrows, \
                        int64_t last, size_t bytes) {                          \
        TAB_BODY(COPY_##B)                                                     \
    }
#define COPY_16(d, s) memcpy(d, s, 16)
#define COPY_32(d, s) memcpy(d, s, 32)
#define COPY_64(d, s) memcpy(d, s, 64)
#define COPY_128(d, s) memcpy(d, s, 128)
#define COPY_256(d, s) memcpy(d, s, 256)
#define COPY_N(d, s) memcpy(d, s, bytes)
TAB_CONST(16)
TAB_CONST(32)
TAB_CONST(64)
TAB_CONST(128)
TAB_CONST(256)
TAB_CONST(N)

static tab_fn pick_tab(int64_t bytes) {
    switch (bytes) {
    case 16: return tab_16;
    case 32: return tab_32;
    case 64: return tab_64;
    case 128: return tab_128;
    case 256: return tab_256;
    default: return tab_N;
    }
}

typedef struct ctx {
    const voxa_array *in;
    const voxa_roi_params *p;
    voxa_array *out;
    int64_t ext[VOXA_MAXDIM];
    int64_t sumext;
    size_t es;
    plan pl;
    box_fn box;
    int empty;
    unsigned char fill[8];
    const int64_t *soff, *doff; /* run offsets of one patch (NULL: odometer) */
    const int64_t *order;       /* processing order of the patches, or NULL */
    tab_fn tab;
} ctx;

/* Source index of patch coordinate j (= corner + i) on an axis of length n,
 * by numpy.pad's rule for the mode; -1 means the fill value. */
static int64_t map_index(int64_t j, int64_t n, voxa_roi_mode mode) {
    if (j >= 0 && j < n) return j;
    if (mode == VOXA_ROI_CONSTANT) return -1;
    if (mode == VOXA_ROI_NEAREST) return j < 0 ? 0 : n - 1;
    /* reflect */
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    int64_t r = j % period;
    if (r < 0) r += period;
    return r < n ? r : period - r;
}

/* One patch reaching outside: gather through the per-axis maps. */
#define GATHER(W)                                                              \
    static void gather_##W(char *dst, const char *base, const ctx *c,          \
                           int64_t *const *maps) {                             \
        const voxa_array *in = c->in, *out = c->out;                           \
        int D = in->ndim, last = D - 1;                                        \
        int64_t nin = c->ext[last], ss = in->strides[last];                    \
        int64_t ds = out->strides[last + 1];                                   \
        const int64_t *mi = maps[last];                                        \
        int64_t nrows = 1;                                                     \
        for (int d = 0; d < last; d++) nrows *= c->ext[d];                     \
        int64_t idx[VOXA_MAXDIM] = {0};                                        \
        for (int64_t r = 0; r < nrows; r++) {                                  \
            int64_t so = 0, doff = 0;                                          \
            int hole = 0;                                                      \
            for (int d = 0; d < last; d++) {                                   \
                int64_t m = maps[d][idx[d]];                                   \
                if (m < 0) hole = 1;                                           \
                so += m * in->strides[d];                                      \
                doff += idx[d] * out->strides[d + 1];                          \
            }                                                                  \
            char *o = dst + doff;                                              \
            if (hole) {                                                        \
                for (int64_t i = 0; i < nin; i++) memcpy(o + i * ds, c->fill, W); \
            } else {                                                           \
                const char *s = base + so;                                     \
                for (int64_t i = 0; i < nin; i++) {                            \
                    int64_t m = mi[i];                                         \
                    memcpy(o + i * ds, m < 0 ? (const char *)c->fill : s + m * ss, W); \
                }                                                              \
            }                                                                  \
            for (int d = last - 1; d >= 0; d--) {                              \
                if (++idx[d] < c->ext[d]) break;                               \
                idx[d] = 0;                                                    \
            }                                                                  \
        }                                                                      \
    }
GATHER(1)
GATHER(2)
GATHER(4)
GATHER(8)

/* Offsets of every run of one patch (relative to the patch's first voxel),
 * for contiguous runs of patches with at most 2^20 runs; otherwise the
 * odometer walk is used. */
#define MAX_TABLE_ROWS ((int64_t)1 << 20)

static voxa_status make_tables(ctx *c) {
    const plan *pl = &c->pl;
    int64_t n = pl->nrows;
    if (!(pl->iss == (int64_t)c->es && pl->ids == (int64_t)c->es) || n < 2 ||
        n > MAX_TABLE_ROWS)
        return VOXA_OK;
    int64_t *t = voxa__malloc((size_t)(2 * n), sizeof *t);
    if (!t) return voxa__error(VOXA_ENOMEM, "extract: cannot allocate %lld run offsets",
                               (long long)(2 * n));
    int64_t idx[VOXA_MAXDIM] = {0}, so = 0, dof = 0;
    for (int64_t r = 0; r < n; r++) {
        t[r] = so;
        t[n + r] = dof;
        for (int d = pl->nd - 1; d >= 0; d--) {
            so += pl->ss[d];
            dof += pl->ds[d];
            if (++idx[d] < pl->ext[d]) break;
            so -= pl->ss[d] * pl->ext[d];
            dof -= pl->ds[d] * pl->ext[d];
            idx[d] = 0;
        }
    }
    c->soff = t;
    c->doff = t + n;
    c->tab = pick_tab(pl->run_bytes);
    return VOXA_OK;
}

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

static voxa_status make_order(ctx *c, int64_t **order) {
    const voxa_roi_params *p = c->p;
    const voxa_array *in = c->in;
    int k = p->k;
    int64_t n = p->n;
    *order = NULL;
    if (n < SORT_MIN_PATCHES || k < 1) return VOXA_OK;
    /* Axes by decreasing |stride| (insertion sort; ties keep axis order). */
    int ax[VOXA_MAXDIM], bits[VOXA_MAXDIM];
    int64_t tile[VOXA_MAXDIM], cells[VOXA_MAXDIM], len[VOXA_MAXDIM];
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
    /* The band of rows one patch spans along the slowest axis: when it fits
     * a core's L2, sorting by that axis alone keeps every read in the band
     * (tile 1 there, one cell across the other axes). */
    int64_t s0 = in->strides[ax[0]] < 0 ? -in->strides[ax[0]] : in->strides[ax[0]];
    int band_fits = (double)c->ext[ax[0]] * (double)s0 <= SORT_BAND_BYTES;
    int total = 0, maxbits = 0;
    for (int j = 0; j < k; j++) {
        len[j] = in->shape[ax[j]];
        tile[j] = c->ext[ax[j]] > 0 ? c->ext[ax[j]] : 1;
        if (band_fits) tile[j] = j == 0 ? 1 : (len[j] > 1 ? len[j] : 1);
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

static voxa_status extract_block(int64_t lo, int64_t hi, int tid, void *arg) {
    const ctx *c = arg;
    const voxa_array *in = c->in;
    int D = in->ndim;
    int64_t corner[VOXA_MAXDIM];
    int64_t *scratch = NULL, *maps[VOXA_MAXDIM];
    int64_t next[VOXA_MAXDIM];
    const int64_t *ord = c->order;
    int next_inside = lo < hi ? voxa__roi_corner(in, c->p, ord ? ord[lo] : lo, next) : 0;
    for (int64_t j = lo; j < hi; j++) {
        int64_t i = ord ? ord[j] : j;
        int inside = next_inside;
        memcpy(corner, next, sizeof corner);
        if (j + 1 < hi) next_inside = voxa__roi_corner(in, c->p, ord ? ord[j + 1] : j + 1, next);
        else next_inside = 0;
        char *dst = (char *)c->out->data + i * c->out->strides[0];
        if (inside) {
            ptrdiff_t src = 0, ahead = 0;
            for (int d = 0; d < c->p->k; d++) src += corner[d] * in->strides[d];
            if (next_inside) {
                for (int d = 0; d < c->p->k; d++) ahead += next[d] * in->strides[d];
                ahead -= src;
            }
            if (c->tab)
                c->tab(dst, (const char *)in->data + src,
                       next_inside ? (const char *)in->data + src + ahead : NULL, c->soff,
                       c->doff, c->pl.nrows, c->pl.run_bytes - 1, (size_t)c->pl.run_bytes);
            else
                c->box(dst, (const char *)in->data + src, &c->pl, c->es, ahead);
            continue;
        }
        if (!scratch) {
            scratch = voxa__malloc((size_t)c->sumext, sizeof(int64_t));
            if (!scratch)
                return voxa__error(VOXA_ENOMEM, "extract: cannot allocate %lld index maps",
                                   (long long)c->sumext);
        }
        int64_t *m = scratch;
        for (int d = 0; d < D; d++) {
            maps[d] = m;
            for (int64_t j = 0; j < c->ext[d]; j++)
                m[j] = map_index(corner[d] + j, in->shape[d], c->p->mode);
            m += c->ext[d];
        }
        switch (c->es) {
        case 1: gather_1(dst, in->data, c, maps); break;
        case 2: gather_2(dst, in->data, c, maps); break;
        case 4: gather_4(dst, in->data, c, maps); break;
        default: gather_8(dst, in->data, c, maps); break;
        }
    }
    voxa__free(scratch);
    return VOXA_OK;
}

voxa_status voxa_roi_extract(const voxa_array *in, const voxa_roi_params *p,
                             voxa_array *out) {
    ctx c;
    memset(&c, 0, sizeof c);
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "extract: out is NULL");
    VOXA_CHECK(voxa__roi_check(in, "image", p, out, "out", 0, c.ext));
    if (p->mode == VOXA_ROI_CONSTANT) VOXA_CHECK(voxa__roi_fill_value(p->cval, in->dtype, c.fill));
    VOXA_CHECK(voxa__roi_validate_rows(in, p));
    c.in = in;
    c.p = p;
    c.out = out;
    c.es = voxa_dtype_size(in->dtype);
    int D = in->ndim;
    for (int d = 0; d < D; d++) c.sumext += c.ext[d];
    if (p->n == 0 || !make_plan(&c.pl, D, c.ext, in->strides, out->strides + 1, c.es))
        return VOXA_OK; /* nothing to copy */
    int64_t pbytes = c.pl.nrows * c.pl.run_bytes;
    c.box = pick_box(&c.pl, c.es);
    VOXA_CHECK(make_tables(&c));
    int64_t *order = NULL;
    voxa_status so = make_order(&c, &order);
    if (so != VOXA_OK) {
        voxa__free((void *)c.soff);
        return so;
    }
    c.order = order;
    /* Blocks of >= 256 KiB of output: below that a thread costs more than
     * it saves. */
    int64_t grain = pbytes > 0 ? (int64_t)(1 << 18) / pbytes : p->n;
    if (grain < 1) grain = 1;
    voxa_status st = voxa__parallel_for(p->n, grain, extract_block, &c);
    voxa__free((void *)c.soff);
    voxa__free(order);
    return st;
}
