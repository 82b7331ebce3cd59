/* Planning a streamed run: the output's shape, the halo, and the largest
 * blocks whose working set fits the memory limit. Blocks are cut along axis
 * 0 first (slabs keep the reads of C-order files long), then axis 1, ...
 * Working set of one block b grown by the halo to g:
 *     g * (in bytes + out bytes + op scratch) + b * out bytes
 * (the op runs on the grown block, and the block's part is written out).
 * Several workers each hold one block in flight: the peak is workers x that
 * (+ label's face planes), and the plan takes the most workers (up to
 * threads + 1, so one block is read or written while the others compute)
 * whose blocks stay at least half their grown size. A Zarr input's blocks
 * start from its chunks (a block cutting a chunk decodes it twice), and
 * there is at least one block per worker. */
#include "stream_internal.h"
#include "stream_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t working_set(const voxa_stream_plan *p, const int64_t *b, double per_grown,
                           size_t out_es) {
    int64_t g = 1, n = 1;
    for (int d = 0; d < p->ndim; d++) {
        int64_t e = b[d] + p->halo_lo[d] + p->halo_hi[d];
        g *= e < p->shape[d] ? e : p->shape[d];
        n *= b[d];
    }
    return (int64_t)((double)g * per_grown) + n * (int64_t)out_es;
}

static void set_grid(voxa_stream_plan *p) {
    p->nblocks = 1;
    for (int d = 0; d < p->ndim; d++) {
        p->grid[d] = p->shape[d] > 0 ? (p->shape[d] + p->block[d] - 1) / p->block[d] : 0;
        p->nblocks *= p->grid[d];
    }
}

/* workers x one block's working set (label: or one face plane, pass 2), for
 * p->block. Label's face layers wait in a scratch file, not in memory. */
static int64_t peak(voxa_stream_plan *p, double per_grown, size_t out_es, int label) {
    set_grid(p);
    int64_t ws = working_set(p, p->block, per_grown, out_es);
    if (!label) return p->workers * ws;
    int64_t two = voxa__label_pass2_bytes(p);
    return p->workers * (ws > two ? ws : two);
}

/* Slabs (axis 0 cut first) read C-order files in long runs, but with a
 * halo wide against the slab the op redoes the halo many times over (a
 * 1 MiB limit and a ball of radius 9: 1x1x80 blocks, 1352x the volume).
 * The other candidate halves the longest axis from `start` (the whole
 * shape, or a Zarr input's chunk) until the peak fits. It replaces the
 * slabs only where they do more than 4x the volume's work and it does at
 * most half of theirs: its blocks read files in shorter runs (a .npy
 * block of 100x150x200 took 13x the read time of a 25x300x400 slab, and
 * slabs at 3.1x the work ran as fast as it at 1.8x: ball 15, 64 MiB). */
static void balance(voxa_stream_plan *p, const int64_t *start, double per_grown, size_t out_es,
                    int64_t limit) {
    int64_t slab[VOXA_MAXDIM];
    int halo = 0;
    for (int d = 0; d < p->ndim; d++) {
        slab[d] = p->block[d];
        halo |= p->halo_lo[d] > 0 || p->halo_hi[d] > 0;
    }
    if (!halo) return;
    double slab_work = voxa_stream_plan_overhead(p);
    for (int d = 0; d < p->ndim; d++) p->block[d] = start[d];
    while (peak(p, per_grown, out_es, 0) > limit) {
        int longest = -1;
        for (int d = 0; d < p->ndim; d++)
            if (p->block[d] > 1 && (longest < 0 || p->block[d] > p->block[longest])) longest = d;
        if (longest < 0) break;
        p->block[longest] = (p->block[longest] + 1) / 2;
    }
    set_grid(p);
    if (peak(p, per_grown, out_es, 0) <= limit && slab_work > 4 &&
        2 * voxa_stream_plan_overhead(p) <= slab_work)
        return;
    for (int d = 0; d < p->ndim; d++) p->block[d] = slab[d];
    set_grid(p);
}

voxa_status voxa_stream_plan_make(const voxa_args *a, voxa_store *in,
                                  const voxa_stream_options *o, voxa_stream_plan *p) {
    VOXA_FAIL_IF(!a || !a->op || !p, VOXA_EINVAL, "stream: NULL argument");
    const voxa_op *op = a->op;
    VOXA_FAIL_IF(op->ninputs > 0 && !in, VOXA_EINVAL, "%s: no input", op->name);
    memset(p, 0, sizeof *p);
    voxa_array meta = in ? voxa_store_meta(in) : (voxa_array){0};
    const voxa_array *m = in ? &meta : NULL;
    VOXA_CHECK(voxa_op_check(a, m));
    VOXA_CHECK(voxa_op_output(a, m, &p->out_dtype, &p->ndim, p->shape));
    size_t out_es = voxa_dtype_size(p->out_dtype), in_es = in ? voxa_dtype_size(in->t) : 0;
    p->out_bytes = (int64_t)out_es;
    for (int d = 0; d < p->ndim; d++) p->out_bytes *= p->shape[d];
    int label = !strcmp(op->name, "label");
    p->global = label;
    p->whole = (op->flags & VOXA_OP_GLOBAL) && !label;
    int same = (op->flags & VOXA_OP_SAME_SHAPE) || op->ninputs == 0;
    if (!p->whole && !same) p->whole = 1;
    if (!p->whole && !label && op->ninputs > 0)
        VOXA_CHECK(voxa_op_halo(a, p->ndim, p->halo_lo, p->halo_hi));
    int64_t limit = o && o->mem_limit > 0 ? o->mem_limit : (int64_t)1 << 30;
    /* label: the input block + the op's scratch, + the output block (below) */
    double scratch = op->scratch_for ? op->scratch_for(a, p->out_dtype) : op->scratch;
    double per_grown = label ? (double)in_es + scratch
                             : (double)in_es + (double)out_es + scratch;
    int threads = voxa_get_threads();
    const char *env = getenv("VOXA_STREAM_WORKERS"); /* a tuning knob for measurements */
    int want = o && o->workers > 0 ? o->workers : env && atoi(env) > 0 ? atoi(env) : threads + 1;
    if (p->whole) want = 1;
    int given = 0;
    for (int d = 0; o && d < p->ndim; d++) given |= o->block[d] > 0;
    /* the most workers (up to `want`) whose blocks stay at least half as
     * large as their grown blocks (else the halo is read and computed
     * more than the block itself); one worker takes the whole limit */
    for (int w = want; w >= 1; w--) {
        for (int d = 0; d < p->ndim; d++) {
            int64_t b = given ? o->block[d] : 0;
            p->block[d] = b > 0 && b < p->shape[d] ? b : p->shape[d] > 0 ? p->shape[d] : 1;
        }
        p->workers = w;
        if (p->whole) break;
        /* a chunked input: blocks of its chunks, so no chunk is decoded twice */
        for (int d = 0; !given && in && in->kind == STORE_ZARR && d < p->ndim; d++)
            if (in->unit[d] > 0 && in->unit[d] < p->block[d]) p->block[d] = in->unit[d];
        int64_t start[VOXA_MAXDIM];
        memcpy(start, p->block, sizeof start);
        /* label: every block face is written and read once more, so blocks
         * thinner than 32 along an axis are the last resort (round 1) */
        for (int round = label ? 0 : 1; !given && round < 2; round++)
            for (int d = 0; d < p->ndim; d++) {
                int64_t now = peak(p, per_grown, out_es, label), least = round ? 1 : 32;
                while ((p->block[d] + 1) / 2 >= least && p->block[d] > 1 && now > limit) {
                    int64_t was = p->block[d];
                    p->block[d] = (was + 1) / 2;
                    int64_t next = peak(p, per_grown, out_es, label);
                    if (next >= now) { /* label's pass-2 tile grows faster: stop */
                        p->block[d] = was;
                        break;
                    }
                    now = next;
                }
            }
        /* a halo wide against these blocks: shrinking the longest axis
         * instead keeps blocks squat, so far less of the halo is redone */
        if (!given && !label) balance(p, start, per_grown, out_es, limit);
        /* at least one block per worker */
        for (int d = 0; !given && d < p->ndim; d++)
            while (p->block[d] > 1 && (set_grid(p), p->nblocks < w))
                p->block[d] = (p->block[d] + 1) / 2;
        int64_t n = 1, g = 1;
        for (int d = 0; d < p->ndim; d++) {
            int64_t e = p->block[d] + p->halo_lo[d] + p->halo_hi[d];
            n *= p->block[d];
            g *= e < p->shape[d] ? e : p->shape[d];
        }
        if (w == 1 || (peak(p, per_grown, out_es, label) <= limit && 2 * n >= g)) break;
    }
    set_grid(p);
    if (p->workers > p->nblocks) p->workers = (int)(p->nblocks > 0 ? p->nblocks : 1);
    p->op_threads = threads / p->workers > 0 ? threads / p->workers : 1;
    p->block_bytes = working_set(p, p->block, p->whole ? (double)in_es + scratch : per_grown,
                                 out_es);
    if (label) {
        int64_t two = voxa__label_pass2_bytes(p);
        if (two > p->block_bytes) p->block_bytes = two;
        p->table_bytes = 0;
    }
    p->peak_bytes = p->workers * p->block_bytes + p->table_bytes;
    if (p->whole) return voxa__plan_streamed(a, in, o, limit, p); /* edt, fill, roi, paste */
    return VOXA_OK;
}

double voxa_stream_plan_overhead(const voxa_stream_plan *p) {
    if (!p) return 1.0;
    double r = 1.0; /* blocks form a grid: the processed volume is a product over the axes */
    for (int d = 0; d < p->ndim; d++) {
        int64_t n = p->shape[d], b = p->block[d], grown = 0;
        if (n <= 0 || b <= 0) return 1.0;
        for (int64_t s = 0; s < n; s += b) {
            int64_t lo = s - p->halo_lo[d], hi = (s + b < n ? s + b : n) + p->halo_hi[d];
            grown += (hi < n ? hi : n) - (lo > 0 ? lo : 0);
        }
        r *= (double)grown / (double)n;
    }
    return r;
}

static int list(char *buf, size_t n, const int64_t *v, int nd) {
    int k = 0;
    for (int d = 0; d < nd; d++)
        k += snprintf(buf + k, n > (size_t)k ? n - (size_t)k : 0, d ? "x%lld" : "%lld",
                      (long long)v[d]);
    return k;
}

voxa_status voxa_stream_plan_text(const voxa_stream_plan *p, char *buf, size_t n) {
    VOXA_FAIL_IF(!p || !buf || !n, VOXA_EINVAL, "plan text: NULL argument");
    char sh[128], bl[128], gr[128], lo[128], hi[128];
    list(sh, sizeof sh, p->shape, p->ndim);
    list(bl, sizeof bl, p->block, p->ndim);
    list(gr, sizeof gr, p->grid, p->ndim);
    list(lo, sizeof lo, p->halo_lo, p->ndim);
    list(hi, sizeof hi, p->halo_hi, p->ndim);
    char tables[128] = "";
    if (p->global)
        snprintf(tables, sizeof tables, "; face layers: %.2f MiB in a scratch file",
                 voxa__label_face_bytes(p) / 1048576.0);
    char work[128] = "";
    double over = voxa_stream_plan_overhead(p);
    if (over > 1.005)
        snprintf(work, sizeof work, "work:    %.2fx the volume (each block also runs on its halo)\n",
                 over);
    snprintf(buf, n,
             "output:  %s %s, %.1f MiB\n"
             "blocks:  %s voxels, grid %s = %lld blocks\n"
             "halo:    %s before, %s after%s\n%s"
             "workers: %d blocks in flight, %d op thread%s each\n"
             "memory:  about %.2f MiB at peak = %d x %.2f MiB per block%s%s\n",
             sh, voxa_dtype_name(p->out_dtype), (double)p->out_bytes / 1048576.0, bl, gr,
             (long long)p->nblocks, lo, hi,
             p->global     ? " (global: blocks labelled, then merged across faces)"
             : p->streamed ? " (streamed passes: docs/stream.md)"
                           : "",
             work,
             p->workers, p->op_threads, p->op_threads == 1 ? "" : "s",
             (double)p->peak_bytes / 1048576.0, p->workers, (double)p->block_bytes / 1048576.0,
             tables, p->whole ? " (this op needs the whole volume in memory)" : "");
    return VOXA_OK;
}
