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
    const voxa_stream_plan *p;
    voxa_store *out;
    int64_t *first, nfirst, capfirst;   /* first voxel of every provisional id */
    int64_t *pairs, npairs, cappairs;   /* ids joined across faces */
    voxa_array lab, io;   /* int64 labels, and the output dtype's buffer */
    unsigned char st[6561];
} ctx;

/* Room for n int64 values in a growing vector. */
static voxa_status reserve(int64_t **v, int64_t *cap, int64_t n) {
    if (n <= *cap && *v) return VOXA_OK;
    int64_t c = *cap ? *cap : 1024;
    while (c < n) c *= 2;
    int64_t *p = realloc(*v, (size_t)c * sizeof *p);
    VOXA_FAIL_IF(!p, VOXA_ENOMEM, "label: out of memory for %lld table entries", (long long)n);
    *v = p;
    *cap = c;
    return VOXA_OK;
}

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
    int64_t rlo[VOXA_MAXDIM], rsh[VOXA_MAXDIM], hi[VOXA_MAXDIM], n, *pairs = NULL, np = 0;
    for (int e = 0; e < nd; e++) {
        hi[e] = lo[e] + shape[e];
        rlo[e] = e == d ? hi[e] - 1 : (lo[e] > 0 ? lo[e] - 1 : 0);
        int64_t end = hi[e] + 1 < p->shape[e] ? hi[e] + 1 : p->shape[e];
        rsh[e] = end - rlo[e];
    }
    VOXA_CHECK(read_ids(c, rlo, rsh, &n));
    voxa_array region = voxa__shaped(&c->lab, nd, rsh);
    VOXA_CHECK(voxa_label_face_pairs(&region, d, rlo, lo, hi, c->st, &pairs, &np));
    voxa_status st = reserve(&c->pairs, &c->cappairs, 2 * (c->npairs + np));
    if (st == VOXA_OK && np > 0) {
        memcpy(c->pairs + 2 * c->npairs, pairs, (size_t)np * 2 * sizeof *pairs);
        c->npairs += np;
    }
    free(pairs);
    return st;
}

voxa_status voxa__stream_label(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                               voxa_store *out, const voxa_progress *progress, int64_t *count) {
    int nd = p->ndim;
    VOXA_FAIL_IF(nd < 1 || nd > 8, VOXA_EUNSUPPORTED, "label: %d dimensions by blocks", nd);
    ctx c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.out = out;
    int64_t big[VOXA_MAXDIM], *final = NULL;
    for (int d = 0; d < nd; d++) big[d] = p->block[d] + 2 > p->shape[d] ? p->shape[d] : p->block[d] + 2;
    voxa_array ibuf = {0};
    voxa_status st = voxa_label_structure(a, nd, c.st);
    if (st == VOXA_OK) st = voxa_array_new(&c.lab, VOXA_I64, nd, big);
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
        if (st == VOXA_OK) st = reserve(&c.first, &c.capfirst, total + n);
        if (st == VOXA_OK) st = voxa_label_first(&lv, n, lo, p->shape, c.first + total);
        if (st != VOXA_OK) break;
        int64_t *ids = c.lab.data, m = voxa_array_size(&lv);
        for (int64_t i = 0; i < m; i++)
            if (ids[i]) ids[i] += total;
        total += n;
        st = write_ids(&c, lo, shape);
        if (st == VOXA_OK) st = voxa__progress(progress, ++done, steps);
    }
    /* pass 2 */
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM];
        voxa__block_region(p, b, lo, shape);
        for (int d = 0; st == VOXA_OK && d < nd; d++)
            if (lo[d] + shape[d] < p->shape[d]) st = face(&c, lo, shape, d);
        if (st == VOXA_OK) st = voxa__progress(progress, ++done, steps);
    }
    /* numbering: components in raster order of their first voxel */
    int64_t ncomp = 0;
    if (st == VOXA_OK) {
        final = malloc((size_t)(total + 1) * sizeof *final);
        st = final ? voxa_label_resolve(total, c.first, c.pairs, c.npairs, final, &ncomp)
                   : voxa__error(VOXA_ENOMEM, "label: out of memory for %lld labels",
                                 (long long)total);
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
    if (count) *count = st == VOXA_OK ? ncomp : 0;
    free(final);
    free(c.first);
    free(c.pairs);
    voxa_array_free(&c.lab);
    voxa_array_free(&c.io);
    voxa_array_free(&ibuf);
    return st;
}
