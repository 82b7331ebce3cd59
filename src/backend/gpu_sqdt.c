/* Host side of the GPU squared distance transform (kernels: src/core/sqdt.cl).
 *
 * Pass 1 runs one work-item per row of the last axis; every other axis, from
 * the second-last to the first (sqdt.c's order, so the rounding is the
 * same), runs one work-item per line. A line's stack (apexes, heights,
 * breakpoints: 24 bytes per voxel of the line) lives in a scratch buffer of
 * at most VOXA__GPU_SQDT_SCRATCH bytes, so long axes run in batches of
 * lines: the whole transform needs the 8-byte distances plus that scratch. */
#include "gpu_sqdt.h"

#include <math.h>

static int64_t batch_lines(int64_t n, int64_t lines, int64_t cap) {
    int64_t per = 24 * (n + 2);
    int64_t b = (cap > 0 ? cap : VOXA__GPU_SQDT_SCRATCH) / per;
    if (b < 1) b = 1;
    return b < lines ? b : lines;
}

int64_t voxa__gpu_sqdt_scratch(int ndim, const int64_t *shape) {
    int64_t total = 1, most = 0;
    for (int d = 0; d < ndim; d++) total *= shape[d];
    if (total == 0) return 0;
    for (int d = 0; d + 1 < ndim; d++) {
        int64_t b = batch_lines(shape[d], total / shape[d], 0) * 24 * (shape[d] + 2);
        if (b > most) most = b;
    }
    return most;
}

voxa_status voxa__gpu_sqdt_pass(voxa__gpu *g, const voxa__gpu_sqdt *p, voxa__buf *f, int axis,
                                int64_t scratch_cap) {
    int nd = p->ndim;
    int64_t total = 1, inner = 1;
    for (int d = 0; d < nd; d++) total *= p->shape[d];
    for (int d = axis + 1; d < nd; d++) inner *= p->shape[d];
    if (total == 0) return VOXA_OK;
    int target = p->target != 0, border = p->border != 0;
    double cap = p->cap;
    int64_t len = p->shape[axis], lines = total / len;
    double s2 = p->spacing ? p->spacing[axis] * p->spacing[axis] : 1.0;
    if (axis == nd - 1) {
        voxa__arg ra[] = {VX_ARG(p->src->h), VX_ARG(f->h), VX_ARG(len), VX_ARG(lines),
                          VX_ARG(target), VX_ARG(border), VX_ARG(s2), VX_ARG(cap)};
        return g->ops->launch(g, "vx_sqdt_rows", lines, 8, ra);
    }
    int64_t batch = batch_lines(len, lines, scratch_cap);
    voxa__buf scr = {0};
    VOXA_CHECK(voxa__gpu_alloc(g, (size_t)(batch * 24 * (len + 2)),
                               "distance transform: line scratch", &scr));
    voxa_status st = VOXA_OK;
    for (int64_t l0 = 0; l0 < lines && st == VOXA_OK; l0 += batch) {
        int64_t nl = lines - l0 < batch ? lines - l0 : batch;
        voxa__arg la[] = {VX_ARG(f->h), VX_ARG(scr.h), VX_ARG(len), VX_ARG(inner),
                          VX_ARG(l0), VX_ARG(nl), VX_ARG(s2), VX_ARG(border), VX_ARG(cap)};
        st = g->ops->launch(g, "vx_sqdt_lines", nl, 9, la);
    }
    voxa__gpu_free(g, &scr);
    return st;
}

voxa_status voxa__gpu_sqdt_run(voxa__gpu *g, const voxa__gpu_sqdt *p, voxa__buf *f) {
    voxa_status st = VOXA_OK;
    for (int d = p->ndim - 1; d >= 0 && st == VOXA_OK; d--)
        st = voxa__gpu_sqdt_pass(g, p, f, d, 0);
    return st;
}
