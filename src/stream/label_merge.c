/* Connected components by blocks, numbered exactly as scipy.ndimage.label.
 *
 * Pass 1 (blocks in parallel, pool.c): label each block alone, straight
 *   into the output's dtype; the block's labels 1..n are written to the
 *   output as they are (local ids), the global raster index of each label's
 *   first voxel is recorded (within a block, raster order of the block is
 *   raster order of the volume), and the block's boundary layers along every
 *   axis (first and last) go to the face file: an unnamed scratch file
 *   beside the output, one slot per (axis, block, side), so the faces never
 *   accumulate in memory, however large the volume. Blocks finish in any
 *   order; nothing here depends on it.
 * Offsets: block b's local id i is global id base[b] + i, base[b] being the
 *   number of labels of the blocks before b in raster order.
 * Pass 2 (tiles in parallel): for each block b and axis d with a block row
 *   after it, the tile is b's last layer along d and, facing it, the next
 *   row's first layers over b's extent grown by one voxel on the other axes
 *   (read from up to 3^(ndim-1) blocks' slots of the face file); its ids
 *   become global and voxa_label_face_pairs lists the pairs the structure
 *   joins from b's layer across the face. Every pair of neighbours in
 *   different blocks is seen: they differ along some axis d by one, so one
 *   lies in the last layer of some block along d and the other within one
 *   voxel of its extent in the next row. Nothing is read back from the
 *   output, and no tile is larger than a block's face.
 * Numbering: union-find keeping as root the id with the smallest first
 *   index; roots ranked by first index (scipy's raster numbering).
 * Pass 3 (blocks in parallel): read each block's local ids, write
 *   final[base[b] + id]. A Zarr output gets pass 1's ids in an unnamed raw
 *   scratch file beside it, so its chunks are compressed once, never decoded.
 * Memory: the workers' blocks (pass 2: one tile per worker), 16 bytes per
 * provisional id and the pairs; never the volume, nor all the faces (they
 * wait on disk). */
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
    int64_t tile0[VOXA_MAXDIM]; /* per axis: its first pass-2 tile (one per block) */
    int faces;                 /* the face file (see the header) */
    int64_t face_at[VOXA_MAXDIM], layer_bytes[VOXA_MAXDIM]; /* per axis: slots, slot size */
    int64_t ntiles;
    int64_t **pairs, *npairs;  /* per tile */
    const int64_t *final;      /* pass 3: scipy label of every provisional id */
    voxa_stream_stats *stats;  /* the calling thread's */
    unsigned char st[6561];
} ctx;

/* Copy src into dst (same shape, any strides), row by row along the last
 * axis (one memcpy per row where both rows are contiguous). */
static void copy_region(voxa_array *dst, const voxa_array *src) {
    int nd = src->ndim;
    int64_t es = (int64_t)voxa_dtype_size(src->dtype), len = src->shape[nd - 1];
    int64_t n = voxa_array_size(src), idx[VOXA_MAXDIM] = {0}, ss = src->strides[nd - 1],
            ds = dst->strides[nd - 1];
    for (int64_t r = 0; len > 0 && r < n / len; r++) {
        int64_t so = 0, dof = 0;
        for (int e = 0; e < nd - 1; e++) {
            so += idx[e] * src->strides[e];
            dof += idx[e] * dst->strides[e];
        }
        char *d = (char *)dst->data + dof;
        const char *s = (const char *)src->data + so;
        if (ss == es && ds == es)
            memcpy(d, s, (size_t)(len * es));
        else
            for (int64_t x = 0; x < len; x++) memcpy(d + x * ds, s + x * ss, (size_t)es);
        for (int e = nd - 2; e >= 0; e--) {
            if (++idx[e] < src->shape[e]) break;
            idx[e] = 0;
        }
    }
}

/* All of n bytes written to / read from fd at `at`. */
static voxa_status file_io(int fd, void *buf, size_t n, off_t at, int write, const char *what,
                           int64_t b) {
    for (size_t done = 0; done < n;) {
        ssize_t k = write ? pwrite(fd, (char *)buf + done, n - done, at + (off_t)done)
                          : pread(fd, (char *)buf + done, n - done, at + (off_t)done);
        VOXA_FAIL_IF(k <= 0, VOXA_EIO, "label: cannot %s the %s of block %lld: %s",
                     write ? "write" : "read", what, (long long)b,
                     k < 0 ? strerror(errno) : "short");
        done += (size_t)k;
    }
    return VOXA_OK;
}

/* Block b's layer along d on `side` (0: its last layer, the lower side of
 * the boundary after it; 1: its first) lives at this offset of the face file. */
static off_t face_slot(const ctx *c, int64_t b, int d, int side) {
    return (off_t)(c->face_at[d] + (2 * b + side) * c->layer_bytes[d]);
}

/* Block b's layer at `at` along d (block-local) to its slot of the face file. */
static voxa_status keep_layer(ctx *c, const voxa_array *ov, int64_t b, int d, int64_t at,
                              int side) {
    int nd = c->p->ndim;
    int64_t sub_lo[VOXA_MAXDIM] = {0}, sub[VOXA_MAXDIM];
    for (int e = 0; e < nd; e++) sub[e] = e == d ? 1 : ov->shape[e];
    sub_lo[d] = at;
    voxa_array src = voxa__subview(ov, sub_lo, sub), layer;
    VOXA_CHECK(voxa_array_new(&layer, ov->dtype, nd, sub));
    copy_region(&layer, &src);
    voxa_status st = file_io(c->faces, layer.data,
                             (size_t)voxa_array_size(&layer) * voxa_dtype_size(layer.dtype),
                             face_slot(c, b, d, side), 1, "face file", b);
    voxa_array_free(&layer);
    return st;
}

/* The scratch file: block b's ids, contiguous, at b x the largest block. */
static voxa_status scratch_io(ctx *c, int64_t b, voxa_array *ov, int write) {
    size_t n = (size_t)voxa_array_size(ov) * voxa_dtype_size(ov->dtype);
    return file_io(c->scratch, ov->data, n, (off_t)(b * c->block_bytes), write, "scratch file",
                   b);
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
    voxa_status st = VOXA_OK;
    for (int d = 0; st == VOXA_OK && d < nd; d++) {
        int64_t k = lo[d] / p->block[d];
        if (k > 0) st = keep_layer(c, &ov, b, d, 0, 1);
        if (st == VOXA_OK && k + 1 < p->grid[d]) st = keep_layer(c, &ov, b, d, shape[d] - 1, 0);
    }
    voxa__stats_add(&c->stats->op, (t0 = voxa__now()) - t1);
    if (st == VOXA_OK)
        st = c->scratch >= 0 ? scratch_io(c, b, &ov, 1) : voxa__io_write(&c->mid, lo, &ov);
    voxa__stats_add(&c->stats->write, voxa__now() - t0);
    return st;
}

/* Global ids of block b's layer on `side` (its slot of the face file),
 * written where it meets the tile `ids` (region [rlo, rlo + ids.shape),
 * `layer` its index along d); tmp holds one slot. */
static voxa_status tile_layer(ctx *c, int64_t b, int d, int side, voxa_array *ids,
                              const int64_t *rlo, int64_t layer, char *tmp) {
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim;
    int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM], a[VOXA_MAXDIM], n[VOXA_MAXDIM], src_at[VOXA_MAXDIM];
    voxa__block_region(p, b, lo, shape);
    shape[d] = 1;
    int64_t count = 1, rows = 1;
    for (int e = 0; e < nd; e++) {
        if (e == d) {
            a[e] = layer, n[e] = 1, src_at[e] = 0;
        } else {
            int64_t from = lo[e] > rlo[e] ? lo[e] : rlo[e];
            int64_t to = lo[e] + shape[e], end = rlo[e] + ids->shape[e];
            if (to > end) to = end;
            if (to <= from) return VOXA_OK; /* misses the tile */
            a[e] = from - rlo[e], n[e] = to - from, src_at[e] = from - lo[e];
        }
        count *= shape[e];
    }
    size_t es = voxa_dtype_size(p->out_dtype);
    VOXA_CHECK(file_io(c->faces, tmp, (size_t)count * es, face_slot(c, b, d, side), 0,
                       "face file", b));
    /* copy the intersection, turning local ids into global ones */
    int64_t sstr[VOXA_MAXDIM], dstr[VOXA_MAXDIM], idx[VOXA_MAXDIM] = {0}, base = c->nlab[b];
    sstr[nd - 1] = dstr[nd - 1] = 1;
    for (int e = nd - 2; e >= 0; e--) {
        sstr[e] = sstr[e + 1] * shape[e + 1];
        dstr[e] = dstr[e + 1] * ids->shape[e + 1];
    }
    for (int e = 0; e < nd - 1; e++) rows *= n[e];
    int64_t *g = ids->data, len = n[nd - 1];
    for (int64_t r = 0; r < rows; r++) {
        int64_t so = 0, dof = 0;
        for (int e = 0; e < nd; e++) {
            so += (src_at[e] + (e < nd - 1 ? idx[e] : 0)) * sstr[e];
            dof += (a[e] + (e < nd - 1 ? idx[e] : 0)) * dstr[e];
        }
        for (int64_t x = 0; x < len; x++) {
            int64_t v = load(tmp, p->out_dtype, so + x);
            g[dof + x] = v ? v + base : 0;
        }
        for (int e = nd - 2; e >= 0; e--) {
            if (++idx[e] < n[e]) break;
            idx[e] = 0;
        }
    }
    return VOXA_OK;
}

/* Pass 2: the pairs joined across the face after block b along axis d. */
static voxa_status tile_pairs(int64_t t, int w, void *arg) {
    ctx *c = arg;
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim, d = 0;
    for (int e = 0; e < nd; e++)
        if (c->tile0[e] >= 0 && t >= c->tile0[e]) d = e; /* axes' tiles in axis order */
    int64_t b = t - c->tile0[d], lo[VOXA_MAXDIM], shape[VOXA_MAXDIM], gi[VOXA_MAXDIM] = {0};
    voxa__block_region(p, b, lo, shape);
    for (int e = 0; e < nd; e++) gi[e] = lo[e] / p->block[e];
    if (gi[d] + 1 >= p->grid[d]) return VOXA_OK; /* the last row: no face after it */
    int64_t rlo[VOXA_MAXDIM], rsh[VOXA_MAXDIM], own_lo[VOXA_MAXDIM], own_hi[VOXA_MAXDIM];
    for (int e = 0; e < nd; e++) {
        if (e == d) {
            rlo[e] = lo[e] + shape[e] - 1, rsh[e] = 2, own_lo[e] = 0, own_hi[e] = p->shape[e];
        } else {
            int64_t hi = lo[e] + shape[e] + 1;
            rlo[e] = lo[e] > 0 ? lo[e] - 1 : 0;
            rsh[e] = (hi < p->shape[e] ? hi : p->shape[e]) - rlo[e];
            own_lo[e] = lo[e], own_hi[e] = lo[e] + shape[e];
        }
    }
    voxa_array ids;
    VOXA_CHECK(voxa_array_new(&ids, VOXA_I64, nd, rsh)); /* zeroed */
    char *tmp = malloc((size_t)c->layer_bytes[d]);
    voxa_status st = tmp ? tile_layer(c, b, d, 0, &ids, rlo, 0, tmp)
                         : voxa__error(VOXA_ENOMEM, "label: out of memory for a face layer");
    /* the next row's blocks within one voxel of b's extent: 3^(nd-1) at most */
    int64_t nb = 1, k[VOXA_MAXDIM] = {0};
    for (int e = 0; e < nd; e++) nb *= e == d ? 1 : 3;
    for (int64_t j = 0; st == VOXA_OK && j < nb; j++) {
        int64_t q = j, o = 0, ok = 1;
        for (int e = nd - 1; e >= 0; e--) {
            if (e == d) {
                k[e] = gi[e] + 1;
            } else {
                k[e] = gi[e] + q % 3 - 1;
                q /= 3;
                ok &= k[e] >= 0 && k[e] < p->grid[e];
            }
        }
        if (!ok) continue;
        for (int e = 0; e < nd; e++) o = o * p->grid[e] + k[e];
        st = tile_layer(c, o, d, 1, &ids, rlo, 1, tmp);
    }
    if (st == VOXA_OK)
        st = voxa_label_face_pairs(&ids, d, rlo, own_lo, own_hi, c->st, &c->pairs[t],
                                   &c->npairs[t]);
    free(tmp);
    voxa_array_free(&ids);
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

int64_t voxa__label_face_bytes(const voxa_stream_plan *p) {
    int64_t bytes = 0, es = (int64_t)voxa_dtype_size(p->out_dtype);
    for (int d = 0; d < p->ndim; d++) {
        int64_t cross = 1;
        for (int e = 0; e < p->ndim; e++) cross *= e == d ? 1 : p->shape[e];
        if (p->grid[d] > 1) bytes += (p->grid[d] - 1) * 2 * cross * es;
    }
    return bytes;
}

int64_t voxa__label_pass2_bytes(const voxa_stream_plan *p) {
    /* one tile: two int64 layers over a block's face grown by one voxel,
     * and one block's layer (output dtype) read from the face file */
    int64_t most = 0, es = (int64_t)voxa_dtype_size(p->out_dtype);
    for (int d = 0; d < p->ndim; d++) {
        int64_t tile = 2 * 8, layer = es;
        for (int e = 0; e < p->ndim; e++) {
            tile *= e == d ? 1 : p->block[e] + 2;
            layer *= e == d ? 1 : p->block[e];
        }
        if (p->grid[d] > 1 && tile + layer > most) most = tile + layer;
    }
    return most;
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
    int64_t *final = NULL, ncomp = 0, total = 0, B = p->nblocks, at = 0;
    size_t es = voxa_dtype_size(p->out_dtype);
    for (int d = 0; d < nd; d++) {
        c.tile0[d] = p->grid[d] > 1 ? c.ntiles : -1;
        c.ntiles += p->grid[d] > 1 ? B : 0;
        c.layer_bytes[d] = (int64_t)es;
        for (int e = 0; e < nd; e++) c.layer_bytes[d] *= e == d ? 1 : p->block[e];
        c.face_at[d] = at;
        if (p->grid[d] > 1) at += 2 * B * c.layer_bytes[d];
    }
    /* the face file: beside the output, or in TMPDIR for in-memory outputs */
    c.faces = -1;
    if (st == VOXA_OK && c.ntiles) {
        const char *tmpdir = getenv("TMPDIR");
        char where[4200];
        snprintf(where, sizeof where, "%s/x", tmpdir && *tmpdir ? tmpdir : "/tmp");
        const char *path = out->path ? out->path : where;
        c.faces = scratch_open(path);
        if (c.faces < 0)
            st = voxa__error(VOXA_EIO, "label: cannot create the face file beside '%s': %s",
                             path, strerror(errno));
    }
    if (st == VOXA_OK) st = voxa_label_structure(a, nd, c.st);
    c.ibuf = calloc((size_t)W, sizeof *c.ibuf);
    c.obuf = calloc((size_t)W, sizeof *c.obuf);
    c.nlab = calloc((size_t)B, sizeof *c.nlab);
    c.first = calloc((size_t)B, sizeof *c.first);
    c.pairs = calloc((size_t)c.ntiles + 1, sizeof *c.pairs);
    c.npairs = calloc((size_t)c.ntiles + 1, sizeof *c.npairs);
    if (st == VOXA_OK && (!c.ibuf || !c.obuf || !c.nlab || !c.first || !c.pairs || !c.npairs))
        st = voxa__error(VOXA_ENOMEM, "label: out of memory for the block tables");
    for (int w = 0; st == VOXA_OK && w < W; w++) {
        st = voxa_array_new(&c.ibuf[w], in->t, nd, p->block);
        if (st == VOXA_OK) st = voxa_array_new(&c.obuf[w], p->out_dtype, nd, p->block);
    }
    int64_t steps = 2 * B + c.ntiles;
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
        st = voxa__stream_pool(c.ntiles, W, 1, tile_pairs, &c, progress, B, steps);
    int64_t np = 0;
    for (int64_t i = 0; st == VOXA_OK && i < c.ntiles; i++) np += c.npairs[i];
    int64_t *pairs = NULL;
    if (st == VOXA_OK && np) {
        pairs = malloc((size_t)np * 2 * sizeof *pairs);
        if (!pairs) st = voxa__error(VOXA_ENOMEM, "label: out of memory for %lld pairs",
                                     (long long)np);
        for (int64_t i = 0, k = 0; pairs && i < c.ntiles; k += c.npairs[i], i++)
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
        st = voxa__stream_pool(B, W, p->op_threads, relabel_block, &c, progress, B + c.ntiles,
                               steps);
    S->label_relabel = voxa__now() - t0;
    if (count) *count = st == VOXA_OK ? ncomp : 0;
    for (int w = 0; w < W && c.obuf; w++) voxa_array_free(&c.obuf[w]);
    for (int64_t b = 0; c.first && b < B; b++) free(c.first[b]);
    for (int64_t i = 0; c.pairs && i < c.ntiles; i++) free(c.pairs[i]);
    free(final);
    free(c.ibuf);
    free(c.obuf);
    free(c.nlab);
    free(c.first);
    free(c.pairs);
    free(c.npairs);
    voxa__store_io_free(&c.in);
    voxa__store_io_free(&c.out);
    voxa__store_io_free(&c.mid);
    if (c.scratch >= 0) close(c.scratch);
    if (c.faces >= 0) close(c.faces);
    return st;
}
