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
 * table by a kernel of roi_copy.c (software prefetch; streaming stores for
 * outputs past the last-level cache), whole or slab by slab (below). A patch
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
 * Order (roi_order.c): with 256 patches or more they are processed along a
 * Z-order curve of patch-sized image cells, so overlapping patches share
 * cached lines. When a patch also spans a band of the image larger than L2
 * along its slowest axis (W3: 32 planes, 64 MiB), the inside patches are cut
 * into slabs along that axis and the slabs of all patches are copied sorted
 * by image plane: the batch sweeps the image once. Each patch still lands in
 * its own row of `out`.
 *
 * Threads: blocks of consecutive patches (or slabs) of that order
 * (voxa__parallel_for); each writes its own bytes of `out`, so results do not
 * depend on the thread count or the order.
 * Strided inputs are read in place: nothing but the patches is copied.
 *
 * Cost: O(N * k) to validate, then O(output bytes) of copying; the hot path
 * moves each output byte once. Extra memory: 16 bytes per run of one patch
 * (the table), the order (roi_order.c) and, per block with a border patch,
 * sum(extents) int64 for the maps.
 *
 * References: numpy.pad (modes constant, edge, reflect); the W3 workload in
 * WORKLOADS.md. */
#include "roi_internal.h"

#include <stdlib.h>
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
    voxa__roi_tab_fn tab;
    int stream;                 /* tab uses streaming stores: fence each block */
    const voxa__roi_slabs *sl;  /* slab order (inside patches), or NULL */
    int64_t rows;               /* runs per copy unit: a slab, or the patch */
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
    return VOXA_OK;
}

static voxa_status extract_block(int64_t lo, int64_t hi, int tid, void *arg) {
    const ctx *c = arg;
    (void)tid;
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
    if (c->stream) voxa__roi_store_fence();
    return VOXA_OK;
}

/* Slabs of inside patches, in the slab order (roi_order.c): slab s of a
 * patch starts s * ss[0] into its source and s * ds[0] into its output, and
 * its runs are the first `rows` entries of the patch's tables. */
static voxa_status extract_slabs(int64_t lo, int64_t hi, int tid, void *arg) {
    const ctx *c = arg;
    const voxa__roi_slabs *sl = c->sl;
    const char *base = c->in->data;
    int64_t ns = sl->nslab, ss = c->pl.ss[0], ds = c->pl.ds[0], os = c->out->strides[0];
    (void)tid;
    for (int64_t t = lo; t < hi; t++) {
        int64_t u = sl->unit[t], j = u / ns, s = u % ns;
        const char *src = base + sl->off[j] + s * ss, *nxt = NULL;
        char *dst = (char *)c->out->data + sl->patch[j] * os + s * ds;
        if (t + 1 < hi) {
            int64_t v = sl->unit[t + 1];
            nxt = base + sl->off[v / ns] + (v % ns) * ss;
        }
        c->tab(dst, src, nxt, c->soff, c->doff, c->rows, c->pl.run_bytes - 1,
               (size_t)c->pl.run_bytes);
    }
    if (c->stream) voxa__roi_store_fence();
    return VOXA_OK;
}

/* Slab order or patch order (roi_order.c): slabs when the table path runs,
 * a patch has at least two outer axes, and its band along the slowest one
 * does not fit L2 (where the patch order already sweeps the image band by
 * band), with enough patches to sort. VOXA_ROI_ORDER=slabs|patches forces
 * one where it can run (tests, benchmarks). */
static int want_slabs(const ctx *c, const int64_t *order) {
    if (!c->soff || c->pl.nd < 2 || c->pl.ss[0] == 0) return 0;
    const char *e = getenv("VOXA_ROI_ORDER");
    if (e && !strcmp(e, "slabs")) return 1;
    if (e && !strcmp(e, "patches")) return 0;
    return order && !voxa__roi_band_fits(c->in, c->p, c->ext);
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
    voxa__roi_slabs sl;
    memset(&sl, 0, sizeof sl);
    voxa_status st = voxa__roi_order(in, p, c.ext, &order);
    if (st == VOXA_OK && want_slabs(&c, order)) {
        st = voxa__roi_slabs_make(in, p, order, c.pl.ext[0], c.pl.ss[0], &sl);
        if (st == VOXA_OK) c.sl = &sl;
    }
    if (st != VOXA_OK) goto done;
    c.rows = c.sl ? c.pl.nrows / c.pl.ext[0] : c.pl.nrows;
    if (c.soff) {
        int64_t bases[2] = {out->strides[0], c.pl.ds[0]};
        c.stream = voxa__roi_stream_wanted(out->data, c.doff, c.rows, bases, c.sl ? 2 : 1,
                                           c.pl.run_bytes, p->n * pbytes);
        c.tab = voxa__roi_pick_tab(c.pl.run_bytes, c.stream);
    }
    /* Blocks of >= 256 KiB of output: below that a thread costs more than
     * it saves. */
    int64_t grain = pbytes > 0 ? (int64_t)(1 << 18) / pbytes : p->n;
    if (grain < 1) grain = 1;
    if (c.sl) {
        int64_t ubytes = c.rows * c.pl.run_bytes;
        int64_t ugrain = ubytes > 0 ? (int64_t)(1 << 18) / ubytes : sl.n;
        st = voxa__parallel_for(sl.n, ugrain < 1 ? 1 : ugrain, extract_slabs, &c);
        c.order = sl.rest; /* then the patches reaching outside */
        if (st == VOXA_OK && sl.nrest)
            st = voxa__parallel_for(sl.nrest, grain, extract_block, &c);
    } else {
        c.order = order;
        st = voxa__parallel_for(p->n, grain, extract_block, &c);
    }
done:
    voxa__free((void *)c.soff);
    voxa__free(order);
    voxa__roi_slabs_free(&sl);
    return st;
}
