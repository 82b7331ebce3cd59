/* The chunk executor: walks the output's blocks in raster order; for each,
 * reads the input block grown by the halo (clamped at the volume's edge),
 * runs the op on it through voxa_op_run_region (which keeps the part that
 * covers the block) and writes the block. Buffers are allocated once, at the
 * largest block, and reused. edt, roi, paste and fill holes run their own
 * streamed passes (run_ops.c); labelling goes to label_merge.c.
 * Several blocks are in flight at once (pool.c): the plan's workers each
 * read, run and write a block, the op's threads split among them. */
#include "stream_internal.h"
#include "stream_ops.h"

#include <stdlib.h>
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

/* The input region of the block [lo, lo + shape): the block grown by the
 * halo, clamped at the volume's edge. Where the clamp (or a last, partial
 * block) leaves it narrower than a full grown block, it is widened inwards
 * to that width (or the volume's): an op then never sees a region narrower
 * than its halo's extent, which deconvolve needs (a PSF no larger than the
 * region), and the buffers sized for the grown block still hold it. Ops
 * whose halo is exact give the same block either way. */
void voxa__block_input(const voxa_stream_plan *p, const int64_t *lo, const int64_t *shape,
                       int64_t *ilo, int64_t *ishape) {
    for (int d = 0; d < p->ndim; d++) {
        int64_t want = p->block[d] + p->halo_lo[d] + p->halo_hi[d];
        if (want > p->shape[d]) want = p->shape[d];
        int64_t a = lo[d] - p->halo_lo[d] > 0 ? lo[d] - p->halo_lo[d] : 0;
        int64_t e = lo[d] + shape[d] + p->halo_hi[d];
        if (e > p->shape[d]) e = p->shape[d];
        if (e - a < want) {  /* at most one side was clamped: widen the other */
            if (a == 0) e = want;
            else a = e - want;
        }
        ilo[d] = a;
        ishape[d] = e - a;
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

/* Local ops: each worker owns an input buffer (the largest grown block) and
 * an output buffer (the largest block), reused for every block it takes. */
typedef struct blocks {
    const voxa_args *a;
    const voxa_stream_plan *p;
    voxa__store_io in, out;
    int has_in;
    voxa_array *ibuf, *obuf;   /* one per worker */
    int64_t *counts;           /* per block (ops that count), else NULL */
    voxa_stream_stats *stats;  /* the calling thread's */
} blocks;

static voxa_status one_block(int64_t b, int w, void *ctx) {
    blocks *B = ctx;
    const voxa_stream_plan *p = B->p;
    int nd = p->ndim;
    int64_t lo[VOXA_MAXDIM], shape[VOXA_MAXDIM], ilo[VOXA_MAXDIM], ishape[VOXA_MAXDIM];
    voxa__block_region(p, b, lo, shape);
    voxa__block_input(p, lo, shape, ilo, ishape);
    if (!B->counts && voxa__store_done(B->out.s, lo, shape)) return VOXA_OK; /* resumed */
    voxa_array iv = B->has_in ? voxa__shaped(&B->ibuf[w], nd, ishape) : (voxa_array){0};
    voxa_array ov = voxa__shaped(&B->obuf[w], nd, shape);
    double t0 = voxa__now(), t1, t2;
    if (B->has_in) VOXA_CHECK(voxa__io_read(&B->in, ilo, &iv));
    t1 = voxa__now();
    VOXA_CHECK(voxa_op_run_region(B->a, B->has_in ? &iv : NULL, ilo, &ov, lo, p->shape, NULL,
                                  B->counts ? &B->counts[b] : NULL));
    t2 = voxa__now();
    voxa_status st = voxa__io_write(&B->out, lo, &ov);
    voxa_stream_stats *S = B->stats;
    voxa__stats_add(&S->read, t1 - t0);
    voxa__stats_add(&S->op, t2 - t1);
    voxa__stats_add(&S->write, voxa__now() - t2);
    return st;
}

static voxa_status run_blocks(const voxa_args *a, voxa_store *in, voxa_store *out,
                              const voxa_stream_plan *p, const voxa_progress *progress,
                              int64_t *count) {
    int nd = p->ndim, W = p->workers > 0 ? p->workers : 1;
    int64_t grown[VOXA_MAXDIM];
    for (int d = 0; d < nd; d++) {
        grown[d] = p->block[d] + p->halo_lo[d] + p->halo_hi[d];
        if (grown[d] > p->shape[d]) grown[d] = p->shape[d];
    }
    blocks B;
    memset(&B, 0, sizeof B);
    B.a = a;
    B.p = p;
    B.has_in = in != NULL;
    B.stats = voxa__stream_stats();
    voxa__store_io_init(&B.in, in);
    voxa__store_io_init(&B.out, out);
    voxa_status st = VOXA_OK;
    B.ibuf = calloc((size_t)W, sizeof *B.ibuf);
    B.obuf = calloc((size_t)W, sizeof *B.obuf);
    if (!B.ibuf || !B.obuf) st = voxa__error(VOXA_ENOMEM, "stream: out of memory for %d workers", W);
    if (st == VOXA_OK && (a->op->flags & VOXA_OP_COUNT)) {
        B.counts = calloc((size_t)p->nblocks, sizeof *B.counts);
        if (!B.counts) st = voxa__error(VOXA_ENOMEM, "stream: out of memory for block counts");
    }
    for (int w = 0; st == VOXA_OK && w < W; w++) {
        if (in) st = voxa_array_new(&B.ibuf[w], in->t, nd, grown);
        if (st == VOXA_OK) st = voxa_array_new(&B.obuf[w], p->out_dtype, nd, p->block);
    }
    if (st == VOXA_OK)
        st = voxa__stream_pool(p->nblocks, W, p->op_threads, one_block, &B, progress, 0,
                               p->nblocks);
    if (count) {
        int64_t total = 0;
        for (int64_t b = 0; B.counts && b < p->nblocks; b++)
            if (B.counts[b] > 0) total += B.counts[b];
        *count = B.counts ? total : -1;
    }
    for (int w = 0; w < W && B.ibuf && B.obuf; w++) {
        voxa_array_free(&B.ibuf[w]);
        voxa_array_free(&B.obuf[w]);
    }
    free(B.ibuf);
    free(B.obuf);
    free(B.counts);
    voxa__store_io_free(&B.in);
    voxa__store_io_free(&B.out);
    return st;
}

static _Thread_local voxa_stream_stats last_stats;

voxa_stream_stats *voxa__stream_stats(void) { return &last_stats; }

void voxa_stream_last_stats(voxa_stream_stats *s) {
    if (s) *s = last_stats;
}

static voxa_status dispatch(const voxa_args *a, voxa_store *in, voxa_store *out,
                            const voxa_stream_plan *p, const voxa_progress *progress,
                            int64_t *count) {
    if (p->streamed) return voxa__stream_op(a, p, a->op->ninputs ? in : NULL, out, progress, count);
    if (p->whole) return run_whole(a, a->op->ninputs ? in : NULL, out, p, progress, count);
    if (p->global) return voxa__stream_label(a, p, in, out, progress, count);
    return run_blocks(a, a->op->ninputs ? in : NULL, out, p, progress, count);
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
    memset(&last_stats, 0, sizeof last_stats);
    last_stats.workers = p.workers;
    double t0 = voxa__now();
    voxa_status st = dispatch(a, in, out, &p, progress, count);
    last_stats.wall = voxa__now() - t0;
    return st;
}
