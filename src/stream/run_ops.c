/* The hooks that take edt, fill holes, roi and paste off the whole-volume
 * path of the executor: the planner asks each op's streamed runner whether
 * it handles the arguments, the executor calls it. Also the helpers those
 * runners share (block fitting, scratch stores). */
#include "stream_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

voxa_status voxa__plan_streamed(const voxa_args *a, voxa_store *in,
                                const voxa_stream_options *o, int64_t limit,
                                voxa_stream_plan *p) {
    const char *name = a->op->name;
    voxa_stream_plan q = *p;
    int ok = !strcmp(name, "edt")          ? voxa__edt_plan(a, in, o, limit, &q)
             : !strcmp(name, "fill_holes") ? voxa__fill_plan(a, in, o, limit, &q)
             : !strcmp(name, "roi")        ? voxa__roi_plan(a, in, o, limit, &q)
             : !strcmp(name, "paste")      ? voxa__paste_plan(a, in, o, limit, &q)
                                           : 0;
    if (ok) {
        q.whole = 0;
        q.streamed = 1;
        *p = q;
    }
    return VOXA_OK;
}

voxa_status voxa__stream_op(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                            voxa_store *out, const voxa_progress *progress, int64_t *count) {
    const char *name = a->op->name;
    if (count) *count = -1;
    if (!strcmp(name, "edt")) return voxa__stream_edt(a, p, in, out, progress);
    if (!strcmp(name, "fill_holes")) return voxa__stream_fill(a, p, in, out, progress);
    if (!strcmp(name, "roi")) return voxa__stream_roi(a, p, in, out, progress);
    if (!strcmp(name, "paste")) return voxa__stream_paste(a, p, in, out, progress);
    return voxa__error(VOXA_EUNSUPPORTED, "stream: %s has no streamed runner", name);
}

void voxa__fit_block(const voxa_stream_plan *p, int64_t *block, int64_t limit,
                     voxa__block_cost cost, void *u) {
    for (int d = 0; d < p->ndim; d++)
        while (block[d] > 1 && cost(p, block, u) > limit) block[d] = (block[d] + 1) / 2;
}

void voxa__plan_grid(voxa_stream_plan *p) {
    p->nblocks = 1;
    for (int d = 0; d < p->ndim; d++) {
        if (p->block[d] < 1) p->block[d] = 1;
        p->grid[d] = p->shape[d] > 0 ? (p->shape[d] + p->block[d] - 1) / p->block[d] : 0;
        p->nblocks *= p->grid[d];
    }
}

int voxa__blocks_given(const voxa_stream_options *o, int ndim) {
    for (int d = 0; o && d < ndim; d++)
        if (o->block[d] > 0) return 1;
    return 0;
}

voxa_status voxa__scratch_store(const voxa_store *out, const char *tag, voxa_dtype t, int ndim,
                                const int64_t *shape, voxa_store **s) {
    static int serial;
    char path[4300];
    const char *base = out->path;
    if (base) {
        size_t n = strlen(base);
        while (n > 1 && base[n - 1] == '/') n--; /* a .zarr folder's path */
        snprintf(path, sizeof path, "%.*s.%s-%ld-%d.npy", (int)n, base, tag, (long)getpid(),
                 serial++);
    } else {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/voxa-%s-%ld-%d.npy", dir && *dir ? dir : "/tmp", tag,
                 (long)getpid(), serial++);
    }
    /* A created store that is never committed is removed at close: the
     * scratch file goes away on success and on failure alike. */
    return voxa_store_create(path, t, ndim, shape, NULL, s);
}
