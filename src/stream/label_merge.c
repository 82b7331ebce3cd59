/* Connected components by blocks, numbered exactly as scipy.ndimage.label.
 *
 * Pass 1: label each block alone (voxa_label through the op); its labels
 *   become global provisional ids base+1..base+n, written to the output, and
 *   each id remembers the global raster index of its first voxel (within a
 *   block, raster order of the block is raster order of the volume, so the
 *   block's first voxel of a component is its smallest index there).
 * Pass 2: for every block and axis with a next block, read the two layers
 *   around the face (one voxel wider on the other axes) and union the ids of
 *   voxels joined by the structure across it. Every pair of neighbours in
 *   different blocks is seen this way: they differ along some axis d; the
 *   block below along d sees the pair with offset +1 on d. A union keeps as
 *   root the id with the smaller first index, so a root knows its
 *   component's first voxel.
 * Pass 3: sort the roots by first index (scipy's numbering is the raster
 *   order of each component's first voxel), relabel every block.
 * Memory: one block of labels + 24 bytes per provisional id; never the
 * volume. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct uf {
    int64_t *parent, *first, n, cap;
} uf;

static int64_t find(uf *u, int64_t x) {
    while (u->parent[x] != x) {
        u->parent[x] = u->parent[u->parent[x]];
        x = u->parent[x];
    }
    return x;
}

static void unite(uf *u, int64_t a, int64_t b) {
    a = find(u, a);
    b = find(u, b);
    if (a == b) return;
    if (u->first[a] < u->first[b]) u->parent[b] = a;
    else u->parent[a] = b;
}

static voxa_status grow(uf *u, int64_t n) {
    if (n <= u->cap) return VOXA_OK;
    int64_t cap = u->cap ? u->cap : 1024;
    while (cap < n) cap *= 2;
    int64_t *p = realloc(u->parent, (size_t)cap * sizeof *p);
    if (p) u->parent = p;
    int64_t *f = p ? realloc(u->first, (size_t)cap * sizeof *f) : NULL;
    if (f) u->first = f;
    VOXA_FAIL_IF(!p || !f, VOXA_ENOMEM, "label: out of memory for %lld provisional labels",
                 (long long)n);
    u->cap = cap;
    return VOXA_OK;
}

/* int64 labels <-> the output's integer dtype (C-contiguous, n values). */
static void to_i64(const voxa_array *src, int64_t *dst, int64_t n) {
    switch (src->dtype) {
#define CASE(E, T) case E: for (int64_t i = 0; i < n; i++) dst[i] = (int64_t)((const T *)src->data)[i]; break;
    CASE(VOXA_U8, uint8_t) CASE(VOXA_I8, int8_t) CASE(VOXA_U16, uint16_t) CASE(VOXA_I16, int16_t)
    CASE(VOXA_U32, uint32_t) CASE(VOXA_I32, int32_t) CASE(VOXA_U64, uint64_t)
    default: memcpy(dst, src->data, (size_t)n * sizeof *dst);
#undef CASE
    }
}

static void from_i64(const int64_t *src, voxa_array *dst, int64_t n) {
    switch (dst->dtype) {
#define CASE(E, T) case E: for (int64_t i = 0; i < n; i++) ((T *)dst->data)[i] = (T)src[i]; break;
    CASE(VOXA_U8, uint8_t) CASE(VOXA_I8, int8_t) CASE(VOXA_U16, uint16_t) CASE(VOXA_I16, int16_t)
    CASE(VOXA_U32, uint32_t) CASE(VOXA_I32, int32_t) CASE(VOXA_U64, uint64_t)
    default: memcpy(dst->data, src, (size_t)n * sizeof *src);
#undef CASE
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

/* The structure as 3^ndim flags: the label op's `structure`, else its
 * connectivity (offsets with at most C non-zero coordinates). */
static void structure_of(const voxa_args *a, int nd, unsigned char *st) {
    const voxa_value *s = voxa_args_get(a, "structure");
    int64_t conn = voxa_args_get(a, "connectivity")->i, n = 1, idx[VOXA_MAXDIM] = {0};
    for (int d = 0; d < nd; d++) n *= 3;
    for (int64_t i = 0; i < n; i++) {
        int nz = 0;
        for (int d = 0; d < nd; d++) nz += idx[d] != 1;
        st[i] = s && s->set ? voxa_array_get(&s->array, idx) != 0 : nz <= conn;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < 3) break;
            idx[d] = 0;
        }
    }
}

typedef struct ctx {
    const voxa_stream_plan *p;
    voxa_store *out;
    uf u;
    voxa_array lab, io;   /* int64 labels, and the output dtype's buffer */
    unsigned char st[6561];
} ctx;

/* Read region [lo, lo + shape) of the output as int64 into c->lab. */
static voxa_status read_ids(ctx *c, const int64_t *lo, const int64_t *shape, int64_t *n) {
    voxa_array io = voxa__shaped(&c->io, c->p->ndim, shape);
    VOXA_CHECK(voxa_store_read(c->out, lo, &io));
    *n = voxa_array_size(&io);
    to_i64(&io, c->lab.data, *n);
    return VOXA_OK;
}

static voxa_status write_ids(ctx *c, const int64_t *lo, const int64_t *shape) {
    voxa_array io = voxa__shaped(&c->io, c->p->ndim, shape);
    from_i64(c->lab.data, &io, voxa_array_size(&io));
    return voxa_store_write(c->out, lo, &io);
}

/* Pass 2 for one face: the layers hi-1 and hi along axis d. */
static voxa_status face(ctx *c, const int64_t *lo, const int64_t *shape, int d) {
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim;
    int64_t rlo[VOXA_MAXDIM], rsh[VOXA_MAXDIM], n;
    for (int e = 0; e < nd; e++) {
        rlo[e] = e == d ? lo[e] + shape[e] - 1 : (lo[e] > 0 ? lo[e] - 1 : 0);
        int64_t end = e == d ? lo[e] + shape[e] + 1 : lo[e] + shape[e] + 1;
        if (end > p->shape[e]) end = p->shape[e];
        rsh[e] = end - rlo[e];
    }
    VOXA_CHECK(read_ids(c, rlo, rsh, &n));
    const int64_t *ids = c->lab.data;
    int64_t str[VOXA_MAXDIM], idx[VOXA_MAXDIM] = {0}, noff = 1;
    str[nd - 1] = 1;
    for (int e = nd - 2; e >= 0; e--) str[e] = str[e + 1] * rsh[e + 1];
    for (int e = 0; e < nd; e++) noff *= 3;
    for (int64_t i = 0; i < n; i++) {
        int own = idx[d] == 0;
        for (int e = 0; own && e < nd; e++)
            if (e != d) own = rlo[e] + idx[e] >= lo[e] && rlo[e] + idx[e] < lo[e] + shape[e];
        if (own && ids[i]) {
            int64_t o[VOXA_MAXDIM] = {0};
            for (int64_t k = 0; k < noff; k++) {
                int ok = c->st[k] && o[d] == 2;
                int64_t j = i;
                for (int e = 0; ok && e < nd; e++) {
                    int64_t w = idx[e] + o[e] - 1;
                    ok = w >= 0 && w < rsh[e];
                    j += (o[e] - 1) * str[e];
                }
                if (ok && ids[j]) unite(&c->u, ids[i] - 1, ids[j] - 1);
                for (int e = nd - 1; e >= 0; e--) {
                    if (++o[e] < 3) break;
                    o[e] = 0;
                }
            }
        }
        for (int e = nd - 1; e >= 0; e--) {
            if (++idx[e] < rsh[e]) break;
            idx[e] = 0;
        }
    }
    return VOXA_OK;
}

static int by_first(const void *x, const void *y) {
    const int64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

voxa_status voxa__stream_label(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                               voxa_store *out, const voxa_progress *progress, int64_t *count) {
    int nd = p->ndim;
    VOXA_FAIL_IF(nd < 1 || nd > 8, VOXA_EUNSUPPORTED, "label: %d dimensions by blocks", nd);
    ctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.out = out;
    structure_of(a, nd, c.st);
    int64_t big[VOXA_MAXDIM], *pairs = NULL, *final = NULL;
    for (int d = 0; d < nd; d++) big[d] = p->block[d] + 2 > p->shape[d] ? p->shape[d] : p->block[d] + 2;
    voxa_array ibuf = {0};
    voxa_status st = voxa_array_new(&c.lab, VOXA_I64, nd, big);
    if (st == VOXA_OK) st = voxa_array_new(&c.io, p->out_dtype, nd, big);
    if (st == VOXA_OK) st = voxa_array_new(&ibuf, in->t, nd, p->block);
    int64_t total = 0, steps = 3 * p->nblocks, done = 0, vmax = dtype_max(p->out_dtype);
    /* pass 1 */
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM], n = 0;
        voxa__block_region(p, b, lo, shape);
        voxa_array iv = voxa__shaped(&ibuf, nd, shape), lv = voxa__shaped(&c.lab, nd, shape);
        st = voxa_store_read(in, lo, &iv);
        if (st == VOXA_OK) st = voxa_op_run_region(a, &iv, lo, &lv, lo, p->shape, NULL, &n);
        if (st == VOXA_OK && total + n > vmax)
            st = voxa__error(VOXA_EOVERFLOW, "label: the blocks hold %lld provisional labels, "
                             "more than the output dtype %s holds; use a wider dtype or larger "
                             "blocks", (long long)(total + n), voxa_dtype_name(p->out_dtype));
        if (st == VOXA_OK) st = grow(&c.u, total + n);
        if (st != VOXA_OK) break;
        int64_t *ids = c.lab.data, m = voxa_array_size(&lv), idx[VOXA_MAXDIM] = {0}, seen = 0;
        for (int64_t i = 0; i < m; i++) {
            if (ids[i]) {
                int64_t g = total + ids[i] - 1;
                if (ids[i] > seen) { /* labels appear in raster order: 1, 2, ... */
                    int64_t flat = 0;
                    for (int d = 0; d < nd; d++) flat = flat * p->shape[d] + lo[d] + idx[d];
                    c.u.first[g] = flat;
                    c.u.parent[g] = g;
                    seen = ids[i];
                }
                ids[i] = g + 1;
            }
            for (int d = nd - 1; d >= 0; d--) {
                if (++idx[d] < shape[d]) break;
                idx[d] = 0;
            }
        }
        total += n;
        st = write_ids(&c, lo, shape);
        if (st == VOXA_OK) st = voxa__progress(progress, ++done, steps);
    }
    c.u.n = total;
    /* pass 2 */
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM];
        voxa__block_region(p, b, lo, shape);
        for (int d = 0; st == VOXA_OK && d < nd; d++)
            if (lo[d] + shape[d] < p->shape[d]) st = face(&c, lo, shape, d);
        if (st == VOXA_OK) st = voxa__progress(progress, ++done, steps);
    }
    /* numbering: roots in order of their first voxel */
    int64_t nroots = 0;
    if (st == VOXA_OK) {
        for (int64_t i = 0; i < total; i++) nroots += c.u.parent[i] == i;
        pairs = malloc((size_t)(2 * nroots + 1) * sizeof *pairs);
        final = malloc((size_t)(total + 1) * sizeof *final);
        if (!pairs || !final) st = voxa__error(VOXA_ENOMEM, "label: out of memory numbering "
                                               "%lld components", (long long)nroots);
    }
    if (st == VOXA_OK) {
        int64_t k = 0;
        for (int64_t i = 0; i < total; i++)
            if (c.u.parent[i] == i) pairs[2 * k] = c.u.first[i], pairs[2 * k + 1] = i, k++;
        qsort(pairs, (size_t)nroots, 2 * sizeof *pairs, by_first);
        for (k = 0; k < nroots; k++) final[pairs[2 * k + 1]] = k + 1;
        for (int64_t i = 0; i < total; i++) final[i] = final[find(&c.u, i)];
    }
    /* pass 3 */
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM], n;
        voxa__block_region(p, b, lo, shape);
        st = read_ids(&c, lo, shape, &n);
        int64_t *ids = c.lab.data;
        for (int64_t i = 0; st == VOXA_OK && i < n; i++)
            if (ids[i]) ids[i] = final[ids[i] - 1];
        if (st == VOXA_OK) st = write_ids(&c, lo, shape);
        if (st == VOXA_OK) st = voxa__progress(progress, ++done, steps);
    }
    if (count) *count = st == VOXA_OK ? nroots : 0;
    free(pairs);
    free(final);
    free(c.u.parent);
    free(c.u.first);
    voxa_array_free(&c.lab);
    voxa_array_free(&c.io);
    voxa_array_free(&ibuf);
    return st;
}
