/* Connected components by blocks, numbered exactly as scipy.ndimage.label.
 *
 * Pass 1 (blocks in parallel, pool.c): label each block alone, straight
 *   into the output's dtype; the block's labels 1..n are written to the
 *   output as they are (local ids), the global raster index of each label's
 *   first voxel is recorded (within a block, raster order of the block is
 *   raster order of the volume), and the block's two boundary layers along
 *   every axis are copied into the face planes: for each axis d and each
 *   boundary between block rows k and k+1, the volume's cross-section on
 *   both sides (the lower row's last layer, the upper row's first layer).
 *   Blocks finish in any order; nothing here depends on it.
 * Offsets: block b's local id i is global id base[b] + i, base[b] being the
 *   number of labels of the blocks before b in raster order.
 * Pass 2 (planes in parallel): each plane's two layers become global ids and
 *   voxa_label_face_pairs lists the pairs the structure joins across it.
 *   Every pair of neighbours in different blocks is seen: they differ along
 *   some axis d by one, so they lie on the two sides of a boundary along d.
 *   Nothing is read back from the output: the planes stay in memory.
 * Numbering: union-find keeping as root the id with the smallest first
 *   index; roots ranked by first index (scipy's raster numbering).
 * Pass 3 (blocks in parallel): read each block's local ids, write
 *   final[base[b] + id]. A Zarr output gets pass 1's ids in an unnamed raw
 *   scratch file beside it, so its chunks are compressed once, never decoded.
 * Memory: the workers' blocks, the face planes (2 x cross-section x output
 * bytes per boundary), 16 bytes per provisional id; never the volume. */
#include "stream_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* Integer label dtypes, for the per-voxel loops (one instance per type). */
#define LABEL_TYPES(X)                                                                         \
    X(VOXA_U8, uint8_t) X(VOXA_I8, int8_t) X(VOXA_U16, uint16_t) X(VOXA_I16, int16_t)        \
    X(VOXA_U32, uint32_t) X(VOXA_I32, int32_t) X(VOXA_U64, uint64_t) X(VOXA_I64, int64_t)

static int64_t load(const void *p, voxa_dtype t, int64_t i) {
    switch (t) {
#define LOAD(E, T) case E: return (int64_t)((const T *)p)[i];
    LABEL_TYPES(LOAD)
#undef LOAD
    default: return 0;
    }
}

static int64_t dtype_max(voxa_dtype t) {
    switch (t) {
    case VOXA_U8: return UINT8_MAX;
    case VOXA_I8: return INT8_MAX;
    case VOXA_U16: return UINT16_MAX;
    case VOXA_I16: return INT16_MAX;
    case VOXA_U32: return UINT32_MAX;
    case VOXA_I32: return INT32_MAX;
    default: return INT64_MAX;
    }
}

voxa_status voxa_label_structure(const voxa_args *a, int nd, unsigned char *st) {
    VOXA_FAIL_IF(!a || !a->op || !st || nd < 1 || nd > VOXA_MAXDIM, VOXA_EINVAL,
                 "label structure: bad argument");
    const voxa_value *s = voxa_args_get(a, "structure"), *c = voxa_args_get(a, "connectivity");
    VOXA_FAIL_IF(!c, VOXA_EINVAL, "label structure: %s is not a labelling op", a->op->name);
    VOXA_FAIL_IF(s && s->set && s->array.ndim != nd, VOXA_EINVAL,
                 "structure: %d dimensions, the input has %d", s->array.ndim, nd);
    int64_t n = 1, idx[VOXA_MAXDIM] = {0};
    for (int d = 0; d < nd; d++) n *= 3;
    for (int64_t i = 0; i < n; i++) {
        int nz = 0;
        for (int d = 0; d < nd; d++) nz += idx[d] != 1;
        st[i] = s && s->set ? voxa_array_get(&s->array, idx) != 0 : nz <= c->i;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < 3) break;
            idx[d] = 0;
        }
    }
    return VOXA_OK;
}

typedef struct ctx {
    const voxa_args *a;
    const voxa_stream_plan *p;
    voxa__store_io in, out, mid; /* mid: where pass 1 puts the local ids */
    int scratch;               /* or a raw file, block b at b x block bytes */
    int64_t block_bytes;
    voxa_array *ibuf, *obuf;   /* per worker: input block, output block */
    int64_t *nlab;             /* labels per block, then base per block */
    int64_t **first;           /* per block: first voxel of each label */
    int64_t plane0[VOXA_MAXDIM], cross[VOXA_MAXDIM]; /* per axis: first plane, its voxels */
    char **plane;              /* per plane: lower layer then upper, out dtype */
    int64_t nplanes;
    int64_t **pairs, *npairs;  /* per plane */
    const int64_t *final;      /* pass 3: scipy label of every provisional id */
    voxa_stream_stats *stats;  /* the calling thread's */
    unsigned char st[6561];
} ctx;

/* Shape of the volume with axis d cut to one layer. */
static void layer_shape(const voxa_stream_plan *p, int d, int64_t *sh) {
    for (int e = 0; e < p->ndim; e++) sh[e] = e == d ? 1 : p->shape[e];
}

/* Copy src into dst (same shape, any strides), element by element. */
static void copy_region(voxa_array *dst, const voxa_array *src) {
    int nd = src->ndim;
    size_t es = voxa_dtype_size(src->dtype);
    int64_t n = voxa_array_size(src), idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t so = 0, dof = 0;
        for (int e = 0; e < nd; e++) {
            so += idx[e] * src->strides[e];
            dof += idx[e] * dst->strides[e];
        }
        memcpy((char *)dst->data + dof, (const char *)src->data + so, es);
        for (int e = nd - 1; e >= 0; e--) {
            if (++idx[e] < src->shape[e]) break;
            idx[e] = 0;
        }
    }
}

/* Block b's layer at `at` along d into plane side `side` (0 lower, 1 upper). */
static void keep_layer(ctx *c, const voxa_array *ov, const int64_t *lo, int d, int64_t at,
                       int64_t plane, int side) {
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim;
    int64_t sub_lo[VOXA_MAXDIM] = {0}, sub[VOXA_MAXDIM], lsh[VOXA_MAXDIM], plo[VOXA_MAXDIM];
    for (int e = 0; e < nd; e++) {
        sub[e] = e == d ? 1 : ov->shape[e];
        plo[e] = e == d ? 0 : lo[e];
    }
    sub_lo[d] = at;
    voxa_array src = voxa__subview(ov, sub_lo, sub), whole, dst;
    layer_shape(p, d, lsh);
    size_t es = voxa_dtype_size(p->out_dtype);
    voxa_array_view(&whole, c->plane[plane] + (size_t)side * (size_t)c->cross[d] * es,
                    p->out_dtype, nd, lsh);
    dst = voxa__subview(&whole, plo, sub);
    copy_region(&dst, &src);
}

/* The scratch file: block b's ids, contiguous, at b x the largest block. */
static voxa_status scratch_io(ctx *c, int64_t b, voxa_array *ov, int write) {
    size_t n = (size_t)voxa_array_size(ov) * voxa_dtype_size(ov->dtype);
    off_t at = (off_t)(b * c->block_bytes);
    for (size_t done = 0; done < n;) {
        ssize_t k = write ? pwrite(c->scratch, (char *)ov->data + done, n - done, at + (off_t)done)
                          : pread(c->scratch, (char *)ov->data + done, n - done, at + (off_t)done);
        VOXA_FAIL_IF(k <= 0, VOXA_EIO, "label: cannot %s the scratch file of block %lld: %s",
                     write ? "write" : "read", (long long)b, k < 0 ? strerror(errno) : "short");
        done += (size_t)k;
    }
    return VOXA_OK;
}

/* An unnamed file in the folder of `path` (nothing is left behind, even by
 * kill -9): O_TMPFILE where the file system has it, else a name unlinked at
 * once. -1 on failure. */
static int scratch_open(const char *path) {
    char dir[4400];
    const char *slash = NULL;
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    for (size_t i = 0; i < len; i++)
        if (path[i] == '/') slash = path + i;
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + 1 : 1, slash ? path : ".");
    int fd = -1;
#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
    if (fd < 0) {
        char name[4500];
        snprintf(name, sizeof name, "%s/.voxa-labels-XXXXXX", dir);
        fd = mkstemp(name);
        if (fd >= 0) unlink(name);
    }
    return fd;
}

/* Pass 1: one block. */
static voxa_status label_block(int64_t b, int w, void *arg) {
    ctx *c = arg;
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim;
    int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM], n = 0;
    voxa__block_region(p, b, lo, shape);
    voxa_array iv = voxa__shaped(&c->ibuf[w], nd, shape);
    voxa_array ov = voxa__shaped(&c->obuf[w], nd, shape);
    double t0 = voxa__now(), t1;
    VOXA_CHECK(voxa__io_read(&c->in, lo, &iv));
    voxa__stats_add(&c->stats->read, (t1 = voxa__now()) - t0);
    VOXA_CHECK(voxa_op_run_region(c->a, &iv, lo, &ov, lo, p->shape, NULL, &n));
    if (n > 0) {
        c->first[b] = malloc((size_t)n * sizeof(int64_t));
        VOXA_FAIL_IF(!c->first[b], VOXA_ENOMEM, "label: out of memory for %lld labels",
                     (long long)n);
    }
    c->nlab[b] = n;
    /* first voxels: a new label is the next one in the block's raster order */
    int64_t row = shape[nd - 1], rows = voxa_array_size(&ov) / (row ? row : 1), seen = 0;
    int64_t *first = c->first[b];
    for (int64_t r = 0; r < rows && seen < n; r++) {
        int64_t flat = 0, q = r, idx[VOXA_MAXDIM];
        for (int e = nd - 2; e >= 0; e--) {
            idx[e] = q % shape[e];
            q /= shape[e];
        }
        for (int e = 0; e < nd - 1; e++) flat = flat * p->shape[e] + lo[e] + idx[e];
        flat = flat * p->shape[nd - 1] + lo[nd - 1];
        switch (p->out_dtype) {
#define SCAN(E, T)                                                                             \
    case E: {                                                                                  \
        const T *v = (const T *)ov.data + r * row;                                             \
        for (int64_t x = 0; x < row; x++)                                                      \
            if ((int64_t)v[x] > seen) first[seen++] = flat + x;                                \
        break;                                                                                 \
    }
        LABEL_TYPES(SCAN)
#undef SCAN
        default: break;
        }
    }
    VOXA_FAIL_IF(seen != n, VOXA_EINVAL, "label: block %lld: %lld labels found, %lld counted",
                 (long long)b, (long long)seen, (long long)n);
    for (int d = 0; d < nd; d++) {
        int64_t k = lo[d] / p->block[d];
        if (k > 0) keep_layer(c, &ov, lo, d, 0, c->plane0[d] + k - 1, 1);
        if (k + 1 < p->grid[d]) keep_layer(c, &ov, lo, d, shape[d] - 1, c->plane0[d] + k, 0);
    }
    voxa__stats_add(&c->stats->op, (t0 = voxa__now()) - t1);
    voxa_status st = c->scratch >= 0 ? scratch_io(c, b, &ov, 1) : voxa__io_write(&c->mid, lo, &ov);
    voxa__stats_add(&c->stats->write, voxa__now() - t0);
    return st;
}

/* Pass 2: the pairs joined across one plane. */
static voxa_status plane_pairs(int64_t i, int w, void *arg) {
    ctx *c = arg;
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim, d = 0;
    while (d + 1 < nd && i >= c->plane0[d + 1]) d++;
    int64_t k = i - c->plane0[d], rsh[VOXA_MAXDIM], rlo[VOXA_MAXDIM] = {0}, own[VOXA_MAXDIM];
    int64_t gstride[VOXA_MAXDIM], idx[VOXA_MAXDIM] = {0};
    for (int e = 0; e < nd; e++) {
        rsh[e] = e == d ? 2 : p->shape[e];
        own[e] = p->shape[e];
    }
    rlo[d] = (k + 1) * p->block[d] - 1;
    gstride[nd - 1] = 1;
    for (int e = nd - 2; e >= 0; e--) gstride[e] = gstride[e + 1] * p->grid[e + 1];
    voxa_array ids;
    VOXA_CHECK(voxa_array_new(&ids, VOXA_I64, nd, rsh));
    int64_t *g = ids.data, n = voxa_array_size(&ids);
    /* the plane holds the lower layer's cross-section, then the upper's */
    int64_t cstride[VOXA_MAXDIM], cs = 1;
    for (int e = nd - 1; e >= 0; e--) {
        cstride[e] = e == d ? c->cross[d] : cs;
        if (e != d) cs *= p->shape[e];
    }
    const char *src = c->plane[i];
    for (int64_t j = 0; j < n; j++) {
        int64_t at = 0, blk = 0;
        for (int e = 0; e < nd; e++) at += idx[e] * cstride[e];
        int64_t v = load(src, p->out_dtype, at);
        if (v) {
            for (int e = 0; e < nd; e++)
                blk += (e == d ? k + idx[e] : idx[e] / p->block[e]) * gstride[e];
            v += c->nlab[blk];
        }
        g[j] = v;
        for (int e = nd - 1; e >= 0; e--) {
            if (++idx[e] < rsh[e]) break;
            idx[e] = 0;
        }
    }
    int64_t zero[VOXA_MAXDIM] = {0};
    voxa_status st = voxa_label_face_pairs(&ids, d, rlo, zero, own, c->st, &c->pairs[i],
                                           &c->npairs[i]);
    voxa_array_free(&ids);
    free(c->plane[i]); /* done with this plane */
    c->plane[i] = NULL;
    return st;
}

/* Pass 3: one block's local ids to scipy's labels. */
static voxa_status relabel_block(int64_t b, int w, void *arg) {
    ctx *c = arg;
    const voxa_stream_plan *p = c->p;
    int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM];
    voxa__block_region(p, b, lo, shape);
    voxa_array ov = voxa__shaped(&c->obuf[w], p->ndim, shape);
    VOXA_CHECK(c->scratch >= 0 ? scratch_io(c, b, &ov, 0) : voxa__io_read(&c->mid, lo, &ov));
    int64_t n = voxa_array_size(&ov);
    const int64_t *f = c->final, base = c->nlab[b] - 1; /* id -> final[base + id] */
    switch (p->out_dtype) {
#define MAP(E, T)                                                                              \
    case E: {                                                                                  \
        T *v = ov.data;                                                                        \
        for (int64_t i = 0; i < n; i++)                                                        \
            if (v[i]) v[i] = (T)f[base + (int64_t)v[i]];                                              \
        break;                                                                                 \
    }
        LABEL_TYPES(MAP)
#undef MAP
    default: break;
    }
    return voxa__io_write(&c->out, lo, &ov);
}

int64_t voxa__label_table_bytes(const voxa_stream_plan *p) {
    int64_t bytes = 0, es = (int64_t)voxa_dtype_size(p->out_dtype);
    for (int d = 0; d < p->ndim; d++) {
        int64_t cross = 1;
        for (int e = 0; e < p->ndim; e++) cross *= e == d ? 1 : p->shape[e];
        if (p->grid[d] > 1) bytes += (p->grid[d] - 1) * 2 * cross * es;
    }
    return bytes;
}

int64_t voxa__label_pass2_bytes(const voxa_stream_plan *p) {
    int64_t big = 0;
    for (int d = 0; d < p->ndim; d++) {
        int64_t cross = 1;
        for (int e = 0; e < p->ndim; e++) cross *= e == d ? 1 : p->shape[e];
        if (p->grid[d] > 1 && cross > big) big = cross;
    }
    return 2 * big * 8;
}

voxa_status voxa__stream_label(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                               voxa_store *out, const voxa_progress *progress, int64_t *count) {
    int nd = p->ndim, W = p->workers > 0 ? p->workers : 1;
    VOXA_FAIL_IF(nd < 1 || nd > 8, VOXA_EUNSUPPORTED, "label: %d dimensions by blocks", nd);
    VOXA_FAIL_IF(!in, VOXA_EINVAL, "label: no input");
    ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.p = p;
    c.stats = voxa__stream_stats();
    voxa__store_io_init(&c.in, in);
    voxa__store_io_init(&c.out, out);
    /* A compressed output (Zarr) would be encoded twice and decoded once:
     * pass 1's local ids go to an unnamed raw scratch file beside it
     * instead (one pwrite and one pread per block; no fsync). */
    voxa_status st = VOXA_OK;
    c.scratch = -1;
    c.block_bytes = (int64_t)voxa_dtype_size(p->out_dtype);
    for (int d = 0; d < nd; d++) c.block_bytes *= p->block[d];
    if (out->kind == STORE_ZARR && out->path) {
        c.scratch = scratch_open(out->path);
        if (c.scratch < 0)
            st = voxa__error(VOXA_EIO, "label: cannot create a scratch file beside '%s': %s",
                             out->path, strerror(errno));
    }
    voxa__store_io_init(&c.mid, out);
    int64_t *final = NULL, ncomp = 0, total = 0, B = p->nblocks;
    size_t es = voxa_dtype_size(p->out_dtype);
    for (int d = 0; d < nd; d++) {
        c.plane0[d] = c.nplanes;
        c.nplanes += p->grid[d] > 1 ? p->grid[d] - 1 : 0;
        c.cross[d] = 1;
        for (int e = 0; e < nd; e++) c.cross[d] *= e == d ? 1 : p->shape[e];
    }
    if (st == VOXA_OK) st = voxa_label_structure(a, nd, c.st);
    c.ibuf = calloc((size_t)W, sizeof *c.ibuf);
    c.obuf = calloc((size_t)W, sizeof *c.obuf);
    c.nlab = calloc((size_t)B, sizeof *c.nlab);
    c.first = calloc((size_t)B, sizeof *c.first);
    c.plane = calloc((size_t)c.nplanes + 1, sizeof *c.plane);
    c.pairs = calloc((size_t)c.nplanes + 1, sizeof *c.pairs);
    c.npairs = calloc((size_t)c.nplanes + 1, sizeof *c.npairs);
    if (st == VOXA_OK && (!c.ibuf || !c.obuf || !c.nlab || !c.first || !c.plane || !c.pairs ||
                          !c.npairs))
        st = voxa__error(VOXA_ENOMEM, "label: out of memory for the block tables");
    for (int64_t i = 0, d = 0; st == VOXA_OK && i < c.nplanes; i++) {
        while (d + 1 < nd && i >= c.plane0[d + 1]) d++;
        c.plane[i] = calloc((size_t)(2 * c.cross[d]), es);
        if (!c.plane[i])
            st = voxa__error(VOXA_ENOMEM, "label: out of memory for the face planes");
    }
    for (int w = 0; st == VOXA_OK && w < W; w++) {
        st = voxa_array_new(&c.ibuf[w], in->t, nd, p->block);
        if (st == VOXA_OK) st = voxa_array_new(&c.obuf[w], p->out_dtype, nd, p->block);
    }
    int64_t steps = 2 * B + c.nplanes;
    voxa_stream_stats *S = c.stats;
    double t0 = voxa__now();
    if (st == VOXA_OK)
        st = voxa__stream_pool(B, W, p->op_threads, label_block, &c, progress, 0, steps);
    S->label_blocks = voxa__now() - t0;
    t0 = voxa__now();
    for (int w = 0; w < W && c.ibuf; w++) voxa_array_free(&c.ibuf[w]);
    /* bases in raster order of the blocks; first voxels in global id order */
    int64_t *firsts = NULL;
    for (int64_t b = 0; st == VOXA_OK && b < B; b++) total += c.nlab[b];
    if (st == VOXA_OK) {
        firsts = malloc((size_t)(total + 1) * sizeof *firsts);
        final = malloc((size_t)(total + 1) * sizeof *final);
        if (!firsts || !final)
            st = voxa__error(VOXA_ENOMEM, "label: out of memory for %lld labels",
                             (long long)total);
    }
    for (int64_t b = 0, base = 0; st == VOXA_OK && b < B; b++) {
        int64_t n = c.nlab[b];
        if (n) memcpy(firsts + base, c.first[b], (size_t)n * sizeof *firsts);
        free(c.first[b]);
        c.first[b] = NULL;
        c.nlab[b] = base;
        base += n;
    }
    if (st == VOXA_OK)
        st = voxa__stream_pool(c.nplanes, W, 1, plane_pairs, &c, progress, B, steps);
    int64_t np = 0;
    for (int64_t i = 0; st == VOXA_OK && i < c.nplanes; i++) np += c.npairs[i];
    int64_t *pairs = NULL;
    if (st == VOXA_OK && np) {
        pairs = malloc((size_t)np * 2 * sizeof *pairs);
        if (!pairs) st = voxa__error(VOXA_ENOMEM, "label: out of memory for %lld pairs",
                                     (long long)np);
        for (int64_t i = 0, k = 0; pairs && i < c.nplanes; k += c.npairs[i], i++)
            if (c.npairs[i])
                memcpy(pairs + 2 * k, c.pairs[i], (size_t)c.npairs[i] * 2 * sizeof *pairs);
    }
    if (st == VOXA_OK) st = voxa_label_resolve(total, firsts, pairs, np, final, &ncomp);
    free(pairs);
    free(firsts);
    if (st == VOXA_OK && ncomp > dtype_max(p->out_dtype))
        st = voxa__error(VOXA_EOVERFLOW, "label: %lld components do not fit the output dtype %s",
                         (long long)ncomp, voxa_dtype_name(p->out_dtype));
    c.final = final;
    S->label_merge = voxa__now() - t0;
    t0 = voxa__now();
    if (st == VOXA_OK)
        st = voxa__stream_pool(B, W, p->op_threads, relabel_block, &c, progress, B + c.nplanes,
                               steps);
    S->label_relabel = voxa__now() - t0;
    if (count) *count = st == VOXA_OK ? ncomp : 0;
    for (int w = 0; w < W && c.obuf; w++) voxa_array_free(&c.obuf[w]);
    for (int64_t b = 0; c.first && b < B; b++) free(c.first[b]);
    for (int64_t i = 0; c.plane && i < c.nplanes; i++) free(c.plane[i]);
    for (int64_t i = 0; c.pairs && i < c.nplanes; i++) free(c.pairs[i]);
    free(final);
    free(c.ibuf);
    free(c.obuf);
    free(c.nlab);
    free(c.first);
    free(c.plane);
    free(c.pairs);
    free(c.npairs);
    voxa__store_io_free(&c.in);
    voxa__store_io_free(&c.out);
    voxa__store_io_free(&c.mid);
    if (c.scratch >= 0) close(c.scratch);
    return st;
}
