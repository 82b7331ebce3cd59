/* Backend routing of the generic op calls: which backend runs an op, and
 * device tiling.
 *
 * The backend is the args' (voxa_args_set_backend: the CLI's --backend,
 * Python's backend=) or the process default (VOXA_BACKEND). cpu runs the
 * descriptor's `run`. opencl/cuda run its `gpu` slot and fail with
 * EUNSUPPORTED saying what is missing: the runtime or device (the context's
 * message), the op's GPU path ("deconvolve has no GPU path"), or what these
 * arguments need ("4-D input"). auto resolves to a usable GPU and then falls
 * back to `run` for each of those reasons: it never fails for lack of a GPU.
 *
 * Tiling: before a GPU run the slot's device_bytes formula is evaluated for
 * the region. When it exceeds the device (3/4 of its memory, or one buffer
 * above its largest allocation: PoCL's 2 GiB) or VOXA_GPU_TILE_BYTES (a test
 * knob: forces tiles on small volumes), a LOCAL op runs block by block: the
 * block is halved along axis 0, then 1, ... until the grown block fits, and
 * each block runs as voxa_op_run_region does (the input grown by the halo,
 * clamped at the volume's edge, the part covering the block kept), so the
 * border rule acts at the volume's edge only and the result is exact. A
 * GLOBAL op too large for the device fails (auto: runs on the CPU). Cost:
 * the halo is read and computed once per block side, as in the chunk
 * executor. */
#include "op_args.h"
#include "route.h"
#include "backend/gpu_limits.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

voxa_status voxa_args_set_backend(voxa_args *a, voxa_backend b) {
    VOXA_FAIL_IF(!a, VOXA_EINVAL, "backend: NULL arguments");
    VOXA_FAIL_IF((unsigned)b >= VOXA_NBACKENDS, VOXA_EINVAL, "backend: invalid value %d",
                 (int)b);
    a->backend = b;
    a->backend_set = 1;
    return VOXA_OK;
}

static voxa_backend wanted(const voxa_args *a) {
    return a->backend_set ? a->backend : voxa_backend_selected();
}

voxa_status voxa_op_backend(const voxa_args *a, voxa_backend *out) {
    VOXA_FAIL_IF(!a || !a->op || !out, VOXA_EINVAL, "op: NULL argument");
    voxa_backend b = wanted(a);
    *out = VOXA_BACKEND_CPU;
    if (b == VOXA_BACKEND_CPU) return VOXA_OK;
    if (!a->op->gpu || !a->op->gpu->run) {
        if (b == VOXA_BACKEND_AUTO) return VOXA_OK;
        char list[512];
        size_t len = 0;
        int n;
        const voxa_op *const *ops = voxa_ops(&n);
        for (int i = 0; i < n && len < sizeof list; i++)
            if (ops[i]->gpu && ops[i]->gpu->run)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "",
                                        ops[i]->name);
        return voxa__error(VOXA_EUNSUPPORTED, "%s: backend '%s': this op has no GPU path (GPU "
                           "ops: %s); use the cpu or auto backend", a->op->name,
                           voxa_backend_name(b), list);
    }
    return voxa_backend_resolve(b, out);
}

voxa_status voxa_op_device_bytes(const voxa_args *a, voxa_dtype in_dtype, int ndim,
                                 const int64_t *shape, int64_t *total, int64_t *largest,
                                 const char **formula) {
    VOXA_FAIL_IF(!a || !a->op || !total || !largest || !shape, VOXA_EINVAL,
                 "op: NULL argument");
    *total = *largest = 0;
    if (formula) *formula = NULL;
    const voxa_op_gpu *g = a->op->gpu;
    if (!g || !g->device_bytes) return VOXA_OK;
    if (formula) *formula = g->formula;
    return g->device_bytes(a, in_dtype, ndim, shape, total, largest);
}

/* ---- device limits --------------------------------------------------------- */

typedef struct limits {
    int64_t total, largest;
} limits;

static voxa_status device_limits(voxa_backend b, limits *l) {
    return voxa__gpu_limits(b, &l->total, &l->largest);
}

/* Device bytes of a run on an input (ops without one: output) of `shape`. */
static voxa_status needs(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                         int64_t *total, int64_t *largest) {
    *total = *largest = 0;
    if (!a->op->gpu->device_bytes) return VOXA_OK;
    return a->op->gpu->device_bytes(a, dt, nd, shape, total, largest);
}

static int fits(const limits *l, int64_t total, int64_t largest) {
    return total <= l->total && largest <= l->largest;
}

/* ---- tiled runs ------------------------------------------------------------- */

static void grown(const int64_t *lo, const int64_t *hi, const int64_t *whole, int nd,
                  const int64_t *start, const int64_t *len, int64_t *gs, int64_t *gl) {
    for (int d = 0; d < nd; d++) {
        int64_t a = start[d] - lo[d], b = start[d] + len[d] + hi[d];
        if (a < 0) a = 0;
        if (b > whole[d]) b = whole[d];
        gs[d] = a;
        gl[d] = b - a;
    }
}

/* The largest block of a LOCAL op over `box` (halving axis 0 first) whose
 * region grown by the halo (clamped to the box) fits the limits, and the
 * number of blocks; 0 blocks when one voxel with its halo does not fit. */
static voxa_status local_blocks(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *box,
                                int has_in, const int64_t *lo, const int64_t *hi,
                                const limits *l, int64_t *block, int64_t *nblocks) {
    int64_t zero[VOXA_MAXDIM] = {0};
    for (int d = 0; d < nd; d++) block[d] = box[d];
    *nblocks = 0;
    for (int d = 0; d <= nd; d++) {
        for (;;) {
            int64_t gs[VOXA_MAXDIM], gl[VOXA_MAXDIM], t, g;
            grown(lo, hi, box, nd, zero, block, gs, gl);
            VOXA_CHECK(needs(a, dt, nd, has_in ? gl : block, &t, &g));
            if (fits(l, t, g)) goto found;
            if (d == nd || block[d] == 1) break;
            block[d] = (block[d] + 1) / 2;
        }
    }
    return VOXA_OK;
found:
    *nblocks = 1;
    for (int d = 0; d < nd; d++) *nblocks *= (box[d] + block[d] - 1) / block[d];
    return VOXA_OK;
}

/* Run ctx on GPU backend b in blocks. Tiles are cut from ctx's own box
 * (ctx->in and ctx->out are aligned for SAME_SHAPE ops): a block's halo is
 * clamped to that box, where the op run on the whole box applies its border
 * rule too, so the result equals one run on the box. */
static voxa_status gpu_tiles(voxa_op_ctx *ctx, voxa_backend b, const limits *l) {
    const voxa_args *a = ctx->args;
    const voxa_op *op = a->op;
    const voxa_array *in = ctx->in;
    voxa_array *out = ctx->out;
    int nd = out->ndim;
    int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM], block[VOXA_MAXDIM];
    const int64_t *box = out->shape;
    VOXA_CHECK(voxa_op_halo(a, nd, lo, hi));
    voxa_dtype dt = in ? in->dtype : out->dtype;
    int64_t nblocks;
    VOXA_CHECK(local_blocks(a, dt, nd, box, in != NULL, lo, hi, l, block, &nblocks));
    if (!nblocks)
        return voxa__error(VOXA_EUNSUPPORTED, "%s: backend '%s': even one voxel with its halo "
                           "needs more device memory than the limit (%lld bytes)", op->name,
                           voxa_backend_name(b), (long long)l->total);
    int64_t nb[VOXA_MAXDIM], idx[VOXA_MAXDIM] = {0}, count = 0;
    for (int d = 0; d < nd; d++) nb[d] = (out->shape[d] + block[d] - 1) / block[d];
    voxa_status st = VOXA_OK;
    voxa_array tmp = {0};
    for (int64_t k = 0; k < nblocks && st == VOXA_OK; k++) {
        int64_t s[VOXA_MAXDIM], len[VOXA_MAXDIM], gs[VOXA_MAXDIM], gl[VOXA_MAXDIM];
        for (int d = 0; d < nd; d++) {
            s[d] = idx[d] * block[d];
            len[d] = out->shape[d] - s[d] < block[d] ? out->shape[d] - s[d] : block[d];
        }
        voxa_array ob = voxa__subview(out, s, len);
        voxa_op_ctx c = *ctx;
        c.count = -1;
        memset(&c.progress, 0, sizeof c.progress); /* progress counts blocks here */
        if (!in) { /* ops without input (balls): the block alone */
            c.out = &ob;
            for (int d = 0; d < nd; d++) c.origin[d] = ctx->origin[d] + s[d];
            st = op->gpu->run(&c, b);
        } else {
            grown(lo, hi, box, nd, s, len, gs, gl);
            voxa_array ib = voxa__subview(in, gs, gl);
            if ((st = voxa_array_new(&tmp, out->dtype, nd, gl))) break;
            c.in = &ib;
            c.out = &tmp;
            for (int d = 0; d < nd; d++) c.origin[d] = ctx->origin[d] + gs[d];
            st = op->gpu->run(&c, b);
            if (st == VOXA_OK) {
                int64_t rel[VOXA_MAXDIM];
                for (int d = 0; d < nd; d++) rel[d] = s[d] - gs[d];
                voxa_array part = voxa__subview(&tmp, rel, len);
                st = voxa__copy_view(&part, &ob);
            }
            voxa_array_free(&tmp);
        }
        if (count >= 0) count = c.count >= 0 ? count + c.count : -1;
        if (st == VOXA_OK) st = voxa__progress(&ctx->progress, k + 1, nblocks);
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < nb[d]) break;
            idx[d] = 0;
        }
    }
    ctx->count = count;
    return st;
}

/* Run on device b: whole when it fits (or the op tiles itself), else by
 * tiles where tiles keep the result, else EUNSUPPORTED. The memory formula
 * itself may also refuse arguments the device path does not take. */
static voxa_status run_on_device(voxa_op_ctx *ctx, voxa_backend b, const limits *l) {
    const voxa_args *a = ctx->args;
    const voxa_op *op = a->op;
    const voxa_array *region = ctx->in ? ctx->in : ctx->out;
    int64_t t, g;
    VOXA_CHECK(needs(a, ctx->in ? ctx->in->dtype : ctx->out->dtype, region->ndim, region->shape,
                     &t, &g));
    if (fits(l, t, g) || op->gpu->tiles) /* tiles: the op cuts itself (label, edt) */
        return op->gpu->run(ctx, b);
    if ((op->flags & VOXA_OP_LOCAL) && !(op->flags & VOXA_OP_HALO_APPROX) &&
        (!ctx->in || (op->flags & VOXA_OP_SAME_SHAPE)))
        return gpu_tiles(ctx, b, l);
    /* global ops, and RL (tiles with its halo would change the result) */
    return voxa__error(VOXA_EUNSUPPORTED, "%s: backend '%s': needs %lld bytes of device "
                       "memory (largest buffer %lld) but the device takes %lld (%lld per "
                       "buffer), and this op is not tiled in memory (global, or tiles would "
                       "change its result): use --mem-limit or the cpu backend",
                       op->name, voxa_backend_name(b), (long long)t, (long long)g,
                       (long long)l->total, (long long)l->largest);
}

voxa_status voxa__route_run(voxa_op_ctx *ctx) {
    const voxa_args *a = ctx->args;
    const voxa_op *op = a->op;
    voxa_backend want = wanted(a), b;
    if (want == VOXA_BACKEND_CPU) return op->run(ctx);
    voxa_status st = voxa_op_backend(a, &b);
    if (st != VOXA_OK || b == VOXA_BACKEND_CPU) return st == VOXA_OK ? op->run(ctx) : st;
    limits l;
    VOXA_CHECK(device_limits(b, &l));
    st = run_on_device(ctx, b, &l);
    if (st == VOXA_EUNSUPPORTED && want == VOXA_BACKEND_AUTO) {
        voxa_clear_error();
        return op->run(ctx);
    }
    return st;
}

voxa_status voxa_op_device_tiles(const voxa_args *a, voxa_dtype dt, int nd,
                                 const int64_t *shape, int64_t *ntiles, int64_t *limit) {
    VOXA_FAIL_IF(!a || !a->op || !shape || !ntiles || !limit, VOXA_EINVAL, "op: NULL argument");
    *ntiles = *limit = 0;
    const voxa_op *op = a->op;
    voxa_backend b;
    if (wanted(a) == VOXA_BACKEND_CPU || !op->gpu || voxa_op_backend(a, &b) != VOXA_OK ||
        b == VOXA_BACKEND_CPU) {
        voxa_clear_error();
        return VOXA_OK;
    }
    limits l;
    VOXA_CHECK(device_limits(b, &l));
    *limit = l.total;
    int64_t t, g;
    if (op->gpu->tiles) return op->gpu->tiles(a, dt, nd, shape, l.total, l.largest, ntiles);
    VOXA_CHECK(needs(a, dt, nd, shape, &t, &g));
    if (fits(&l, t, g)) {
        *ntiles = 1;
    } else if ((op->flags & VOXA_OP_LOCAL) && !(op->flags & VOXA_OP_HALO_APPROX) &&
               (op->ninputs == 0 || (op->flags & VOXA_OP_SAME_SHAPE))) {
        int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM], block[VOXA_MAXDIM];
        VOXA_CHECK(voxa_op_halo(a, nd, lo, hi));
        VOXA_CHECK(local_blocks(a, dt, nd, shape, op->ninputs > 0, lo, hi, &l, block, ntiles));
    }
    return VOXA_OK;
}
