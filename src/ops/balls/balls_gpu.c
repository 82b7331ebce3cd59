/* Balls (mask and owner map) on a GPU backend (kernels: balls.cl).
 *
 * The host checks the arguments by running voxa_balls itself on an empty
 * output of the same dtype and rank (the same checks and messages as the
 * CPU path, no work), pads 1-D and 2-D arrays to 3-D, computes each point's
 * box on axes 0 and 1 with the exact per-axis test (as balls.c's make_box)
 * and the prefix sum of the boxes' line counts, then launches one work-item
 * per line. The result is read back into the caller's view (any strides).
 *
 * Device memory: mask = 1 byte per voxel; owner = 16 bytes per voxel (the
 * best distance and the owner, both 64-bit); plus 72 bytes per point. */
#include "balls_internal.h"
#include "backend/gpu.h"
#include "balls_gpu.h"

#include <math.h>
#include <string.h>

/* Owner values back to the output dtype: INT64_MAX (no owner) -> 0, k -> k + 1. */
static void write_owner(const int64_t *own, voxa_array *out) {
    int64_t n = voxa_array_size(out), idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t v = own[i] == INT64_MAX ? 0 : own[i] + 1;
        char *p = (char *)out->data + voxa__offset(out, idx);
        if (out->dtype == VOXA_I32) *(int32_t *)p = (int32_t)v;
        else if (out->dtype == VOXA_U32) *(uint32_t *)p = (uint32_t)v;
        else *(int64_t *)p = v;
        for (int d = out->ndim - 1; d >= 0; d--) {
            if (++idx[d] < out->shape[d]) break;
            idx[d] = 0;
        }
    }
}

voxa_status voxa__balls_gpu(voxa_backend b, const voxa_balls_params *p, voxa_array *out) {
    VOXA_FAIL_IF(!p, VOXA_EINVAL, "balls: NULL parameters");
    VOXA_CHECK(voxa_array_check(out, "balls output"));
    {   /* the CPU checks, on an empty output of the same kind */
        voxa_array empty = *out;
        empty.shape[0] = 0;
        voxa_balls_params q = *p;
        q.progress.fn = NULL;
        VOXA_CHECK(voxa_balls(&q, &empty));
    }
    VOXA_FAIL_IF(out->ndim > 3, VOXA_EUNSUPPORTED,
                 "balls: %d-D output: the GPU path takes 1-D to 3-D (use the cpu backend)",
                 out->ndim);
    VOXA_CHECK(voxa__progress(&p->progress, 0, 1));
    int64_t nvox = voxa_array_size(out), np = p->npoints;
    if (nvox == 0) return voxa__progress(&p->progress, 1, 1);
    /* padded geometry: shape sh[3], spacing sp[3], point coordinates */
    int nd = out->ndim, pad = 3 - nd;
    int64_t sh[3] = {1, 1, 1};
    double sp[3] = {1, 1, 1};
    for (int d = 0; d < nd; d++) {
        sh[pad + d] = out->shape[d];
        sp[pad + d] = p->spacing ? p->spacing[d] : 1.0;
    }
    voxa_status st = VOXA_OK;
    voxa__gpu *g = NULL;
    voxa__buf dout = {0}, down = {0}, doff = {0}, dbox = {0}, dpts = {0}, dr2 = {0}, dsp = {0};
    int64_t *off = voxa__malloc((size_t)np + 1, sizeof(int64_t));
    int64_t *box = voxa__malloc((size_t)np + 1, 4 * sizeof(int64_t));
    double *pts = voxa__malloc((size_t)np + 1, 3 * sizeof(double));
    double *r2s = voxa__malloc((size_t)np + 1, sizeof(double));
    int64_t *own = NULL;
    VOXA_GOTO_IF(!off || !box || !pts || !r2s, VOXA_ENOMEM,
                 "balls: out of memory for %lld points", (long long)np);
    off[0] = 0;
    for (int64_t k = 0; k < np; k++) {
        double r = p->radii ? p->radii[k] : p->radius;
        r2s[k] = r * r;
        for (int d = 0; d < 3; d++) pts[3 * k + d] = d < pad ? 0.0 : p->points[k * nd + d - pad];
        int64_t lo[3], hi[3], lines = 1;
        for (int d = 0; d < 3; d++) {
            voxa__balls_run_bounds(0, pts[3 * k + d], sp[d], r2s[k], sh[d], &lo[d], &hi[d]);
            if (lo[d] > hi[d]) lines = 0;
        }
        if (lines) lines = (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1);
        box[4 * k] = lo[0], box[4 * k + 1] = hi[0], box[4 * k + 2] = lo[1], box[4 * k + 3] = hi[1];
        off[k + 1] = off[k] + lines;
    }
    int64_t lines = off[np];
    if ((st = voxa__gpu_acquire(b, "balls", &g))) goto done;
    if ((st = voxa__gpu_upload(g, off, (size_t)(np + 1) * 8, "balls: points", &doff)) ||
        (st = voxa__gpu_upload(g, box, (size_t)(np + 1) * 32, "balls: points", &dbox)) ||
        (st = voxa__gpu_upload(g, pts, (size_t)(np + 1) * 24, "balls: points", &dpts)) ||
        (st = voxa__gpu_upload(g, r2s, (size_t)(np + 1) * 8, "balls: radii", &dr2)) ||
        (st = voxa__gpu_upload(g, sp, sizeof sp, "balls: spacing", &dsp)))
        goto done;
    if (!p->owner) {
        if ((st = voxa__gpu_alloc(g, (size_t)nvox, "balls: mask", &dout))) goto done;
        int zero = 0;
        voxa__arg fa[] = {VX_ARG(dout.h), VX_ARG(nvox), VX_ARG(zero)};
        voxa__arg ka[] = {VX_ARG(dout.h), VX_ARG(doff.h), VX_ARG(np),     VX_ARG(dbox.h),
                          VX_ARG(dpts.h), VX_ARG(dr2.h),  VX_ARG(dsp.h),  VX_ARG(sh[1]),
                          VX_ARG(sh[2]),  VX_ARG(lines)};
        if ((st = g->ops->launch(g, "vx_fill_u8", nvox, 3, fa))) goto done;
        if (lines && (st = g->ops->launch(g, "vx_balls_mask", lines, 10, ka))) goto done;
        st = voxa__gpu_read_into(g, &dout, out);
    } else {
        if ((st = voxa__gpu_alloc(g, (size_t)nvox * 8, "balls: distances", &dout)) ||
            (st = voxa__gpu_alloc(g, (size_t)nvox * 8, "balls: owners", &down)))
            goto done;
        int64_t none = INT64_MAX, pass0 = 0, pass1 = 1;
        voxa__arg f1[] = {VX_ARG(dout.h), VX_ARG(nvox), VX_ARG(none)};
        voxa__arg f2[] = {VX_ARG(down.h), VX_ARG(nvox), VX_ARG(none)};
        voxa__arg ka[] = {VX_ARG(dout.h), VX_ARG(down.h), VX_ARG(doff.h), VX_ARG(np),
                          VX_ARG(dbox.h), VX_ARG(dpts.h), VX_ARG(dr2.h),  VX_ARG(dsp.h),
                          VX_ARG(sh[1]),  VX_ARG(sh[2]),  VX_ARG(lines),  VX_ARG(pass0)};
        if ((st = g->ops->launch(g, "vx_fill_i64", nvox, 3, f1)) ||
            (st = g->ops->launch(g, "vx_fill_i64", nvox, 3, f2)))
            goto done;
        if (lines) {
            if ((st = g->ops->launch(g, "vx_balls_owner", lines, 12, ka))) goto done;
            ka[11] = VX_ARG(pass1);
            if ((st = g->ops->launch(g, "vx_balls_owner", lines, 12, ka))) goto done;
        }
        own = voxa__malloc((size_t)nvox, sizeof(int64_t));
        VOXA_GOTO_IF(!own, VOXA_ENOMEM, "balls: out of host memory for the owner map");
        if ((st = g->ops->read(g, &down, 0, own, (size_t)nvox * 8))) goto done;
        write_owner(own, out);
    }
    if (st == VOXA_OK) st = voxa__progress(&p->progress, 1, 1);
done:
    voxa__gpu_free(g, &dout);
    voxa__gpu_free(g, &down);
    voxa__gpu_free(g, &doff);
    voxa__gpu_free(g, &dbox);
    voxa__gpu_free(g, &dpts);
    voxa__gpu_free(g, &dr2);
    voxa__gpu_free(g, &dsp);
    voxa__gpu_release(g);
    voxa__free(off);
    voxa__free(box);
    voxa__free(pts);
    voxa__free(r2s);
    voxa__free(own);
    return st;
}

voxa_status voxa_balls_on(voxa_backend b, const voxa_balls_params *p, voxa_array *out) {
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_balls(p, out);
    return voxa__balls_gpu(b, p, out);
}
