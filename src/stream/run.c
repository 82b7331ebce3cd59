/* The chunk executor: walks the output's blocks in raster order; for each,
 * reads the input block grown by the halo (clamped at the volume's edge),
 * runs the op on it through voxa_op_run_region (which keeps the part that
 * covers the block) and writes the block. Buffers are allocated once, at the
 * largest block, and reused. Ops that need the whole volume (edt, roi,
 * paste, fill holes) read it whole; labelling goes to label_merge.c.
 * Blocks run one after another, each op using every thread inside. */
#include "stream_ops.h"

#include <string.h>

/* Block number i's output region [lo, lo + shape). */
void voxa__block_region(const voxa_stream_plan *p, int64_t i, int64_t *lo, int64_t *shape) {
    for (int d = p->ndim - 1; d >= 0; d--) {
        int64_t k = i % p->grid[d];
        i /= p->grid[d];
        lo[d] = k * p->block[d];
        shape[d] = lo[d] + p->block[d] <= p->shape[d] ? p->block[d] : p->shape[d] - lo[d];
    }
}

/* A C-contiguous view of `shape` over a buffer (sized for the largest). */
voxa_array voxa__shaped(const voxa_array *buf, int ndim, const int64_t *shape) {
    voxa_array v;
    voxa_array_view(&v, buf->data, buf->dtype, ndim, shape);
    return v;
}

static voxa_status run_whole(const voxa_args *a, voxa_store *in, voxa_store *out,
                             const voxa_stream_plan *p, const voxa_progress *progress,
                             int64_t *count) {
    voxa_array src = {0}, dst = {0};
    voxa_status st = VOXA_OK;
    if (in) {
        st = voxa_array_new(&src, in->t, in->ndim, in->shape);
        if (st == VOXA_OK) st = voxa_store_read(in, (const int64_t[VOXA_MAXDIM]){0}, &src);
    }
    if (st == VOXA_OK) st = voxa_array_new(&dst, p->out_dtype, p->ndim, p->shape);
    if (st == VOXA_OK) st = voxa_op_run(a, in ? &src : NULL, &dst, progress, count);
    if (st == VOXA_OK) st = voxa_store_write(out, (const int64_t[VOXA_MAXDIM]){0}, &dst);
    voxa_array_free(&src);
    voxa_array_free(&dst);
    return st;
}

static voxa_status run_blocks(const voxa_args *a, voxa_store *in, voxa_store *out,
                              const voxa_stream_plan *p, const voxa_progress *progress,
                              int64_t *count) {
    int nd = p->ndim;
    int64_t grown[VOXA_MAXDIM];
    for (int d = 0; d < nd; d++) {
        grown[d] = p->block[d] + p->halo_lo[d] + p->halo_hi[d];
        if (grown[d] > p->shape[d]) grown[d] = p->shape[d];
    }
    voxa_array ibuf = {0}, obuf = {0};
    voxa_status st = VOXA_OK;
    if (in) st = voxa_array_new(&ibuf, in->t, nd, grown);
    if (st == VOXA_OK) st = voxa_array_new(&obuf, p->out_dtype, nd, p->block);
    int64_t total = 0, c;
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM], ilo[VOXA_MAXDIM], ishape[VOXA_MAXDIM];
        voxa__block_region(p, b, lo, shape);
        for (int d = 0; d < nd; d++) {
            ilo[d] = lo[d] - p->halo_lo[d] > 0 ? lo[d] - p->halo_lo[d] : 0;
            int64_t end = lo[d] + shape[d] + p->halo_hi[d];
            ishape[d] = (end < p->shape[d] ? end : p->shape[d]) - ilo[d];
        }
        voxa_array iv = in ? voxa__shaped(&ibuf, nd, ishape) : (voxa_array){0};
        voxa_array ov = voxa__shaped(&obuf, nd, shape);
        if (!(a->op->flags & VOXA_OP_COUNT) && voxa__store_done(out, lo, shape)) { /* resumed */
            st = voxa__progress(progress, b + 1, p->nblocks);
            continue;
        }
        if (in) st = voxa_store_read(in, ilo, &iv);
        if (st == VOXA_OK)
            st = voxa_op_run_region(a, in ? &iv : NULL, ilo, &ov, lo, p->shape, NULL,
                                    count ? &c : NULL);
        if (st == VOXA_OK) st = voxa_store_write(out, lo, &ov);
        if (st == VOXA_OK && count && c > 0) total += c;
        if (st == VOXA_OK) st = voxa__progress(progress, b + 1, p->nblocks);
    }
    if (count) *count = (a->op->flags & VOXA_OP_COUNT) ? total : -1;
    voxa_array_free(&ibuf);
    voxa_array_free(&obuf);
    return st;
}

voxa_status voxa_stream_run(const voxa_args *a, voxa_store *in, voxa_store *out,
                            const voxa_stream_options *o, int64_t *count) {
    VOXA_FAIL_IF(!a || !a->op || !out, VOXA_EINVAL, "stream: NULL argument");
    voxa_stream_plan p;
    VOXA_CHECK(voxa_stream_plan_make(a, in, o, &p));
    VOXA_FAIL_IF(out->t != p.out_dtype || out->ndim != p.ndim, VOXA_EINVAL,
                 "stream: the output store is %d-D %s, the op gives %d-D %s", out->ndim,
                 voxa_dtype_name(out->t), p.ndim, voxa_dtype_name(p.out_dtype));
    for (int d = 0; d < p.ndim; d++)
        VOXA_FAIL_IF(out->shape[d] != p.shape[d], VOXA_EINVAL,
                     "stream: the output store's axis %d has %lld voxels, the op gives %lld", d,
                     (long long)out->shape[d], (long long)p.shape[d]);
    const voxa_progress *progress = o ? &o->progress : NULL;
    if (count) *count = -1;
    double sp[VOXA_MAXDIM];
    if (in && in->ndim == out->ndim && voxa_store_spacing(in, sp) == VOXA_OK)
        VOXA_CHECK(voxa_store_set_spacing(out, sp)); /* OME scale carried over */
    voxa_clear_error();
    if (p.streamed) return voxa__stream_op(a, &p, a->op->ninputs ? in : NULL, out, progress, count);
    if (p.whole) return run_whole(a, a->op->ninputs ? in : NULL, out, &p, progress, count);
    if (p.global) return voxa__stream_label(a, &p, in, out, progress, count);
    return run_blocks(a, a->op->ninputs ? in : NULL, out, &p, progress, count);
}
