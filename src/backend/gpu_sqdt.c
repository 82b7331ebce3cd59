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

static int64_t batch_lines(int64_t n, int64_t lines) {
    int64_t per = 24 * (n + 2);
    int64_t b = VOXA__GPU_SQDT_SCRATCH / per;
    if (b < 1) b = 1;
    return b < lines ? b : lines;
}

int64_t voxa__gpu_sqdt_scratch(int ndim, const int64_t *shape) {
    int64_t total = 1, most = 0;
    for (int d = 0; d < ndim; d++) total *= shape[d];
    if (total == 0) return 0;
    for (int d = 0; d + 1 < ndim; d++) {
        int64_t b = batch_lines(shape[d], total / shape[d]) * 24 * (shape[d] + 2);
        if (b > most) most = b;
    }
    return most;
}

voxa_status voxa__gpu_sqdt_run(voxa__gpu *g, const voxa__gpu_sqdt *p, voxa__buf *f) {
    int nd = p->ndim;
    int64_t total = 1;
    for (int d = 0; d < nd; d++) total *= p->shape[d];
    if (total == 0) return VOXA_OK;
    int target = p->target != 0, border = p->border != 0;
    double cap = p->cap;
    int64_t n = p->shape[nd - 1], rows = total / n;
    double s2 = p->spacing ? p->spacing[nd - 1] * p->spacing[nd - 1] : 1.0;
    voxa__arg ra[] = {VX_ARG(p->src->h), VX_ARG(f->h), VX_ARG(n), VX_ARG(rows), VX_ARG(target),
                      VX_ARG(border), VX_ARG(s2), VX_ARG(cap)};
    VOXA_CHECK(g->ops->launch(g, "vx_sqdt_rows", rows, 8, ra));
    int64_t bytes = voxa__gpu_sqdt_scratch(nd, p->shape);
    if (nd == 1) return VOXA_OK;
    voxa__buf scr = {0};
    VOXA_CHECK(voxa__gpu_alloc(g, (size_t)bytes, "distance transform: line scratch", &scr));
    voxa_status st = VOXA_OK;
    int64_t inner = n;
    for (int d = nd - 2; d >= 0 && st == VOXA_OK; d--) {
        int64_t len = p->shape[d], lines = total / len;
        int64_t batch = batch_lines(len, lines);
        double sd = p->spacing ? p->spacing[d] * p->spacing[d] : 1.0;
        for (int64_t l0 = 0; l0 < lines && st == VOXA_OK; l0 += batch) {
            int64_t nl = lines - l0 < batch ? lines - l0 : batch;
            voxa__arg la[] = {VX_ARG(f->h), VX_ARG(scr.h), VX_ARG(len), VX_ARG(inner),
                              VX_ARG(l0), VX_ARG(nl), VX_ARG(sd), VX_ARG(border), VX_ARG(cap)};
            st = g->ops->launch(g, "vx_sqdt_lines", nl, 9, la);
        }
        inner *= len;
    }
    voxa__gpu_free(g, &scr);
    return st;
}
