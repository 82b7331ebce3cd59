/* Distance transforms (the `edt` op: Euclidean with any spacing, city block,
 * chessboard) by blocks, exact: the result equals voxa_op_run on the whole
 * volume bit for bit, and no pass holds more than one block.
 *
 * All three metrics are separable along axis 0. With g(z, .) the transform
 * of slice z alone (distances to the background inside that slice, +inf
 * where the slice has none),
 *     Euclidean   D2(z, .) = min_q g2(q, .) + (s_0 (z - q))^2
 *     city block  D(z, .)  = min_q g(q, .) + |z - q|
 *     chessboard  D(z, .)  = min_q max(g(q, .), |z - q|)
 * so two passes give the whole transform:
 *   pass A  slabs of whole slices (block[0] slices, every other axis whole):
 *           read the input slab, transform each slice (Euclidean:
 *           voxa_edt_slices, squared distances (uint32 with unit spacing
 *           where they fit, else float64), the same passes in the same order
 *           as the whole-volume run; city block and
 *           chessboard: voxa_edt_cdt_slices, int32), write g to a
 *           scratch .npy store;
 *   pass B  pencils spanning axis 0 whole (Z x block[1] x ... ): read g,
 *           run the 1-D pass along axis 0 on every column (Euclidean:
 *           voxa_edt_columns, the core's own lower envelope, so the same
 *           parabola wins; city block: two scans; chessboard: the nearest q
 *           with max(g(q), |z - q|) minimal, searched outwards from z and
 *           stopped at the best value found; voxa_edt_cdt_columns), write the
 *           output.
 * The passes live in src/ops/distance/edt_passes.c, which voxa.dask runs
 * too.
 * The scratch store is removed on success and on failure (it is a created
 * store that is never committed).
 *
 * I/O: input read once, output written once, scratch written and read once:
 * N x (in + out + 2 x G) bytes, G = 4 (uint32 slice values: Euclidean with
 * unit spacing, city block, chessboard) or 8 (float64: Euclidean with a
 * spacing). Memory: pass A one slab (in + G + 1 bytes per voxel), pass B
 * one pencil (G + out bytes per voxel), whichever is larger. A single slice
 * must fit. Cost: O(ndim N) (chessboard's axis-0 pass: O(N x D), D the
 * distances met).
 *
 * Not streamed (the run reads the whole volume): the `indices` output (an
 * in-memory array anyway) and 1-D inputs. An input without any background
 * gets what scipy gives (distances from index (-1, 0, ..., 0); -1 for the
 * city block and chessboard metrics). */
#include "stream_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EUCLIDEAN, CITYBLOCK, CHESSBOARD };

typedef struct edt_job {
    int metric, squared, nd;
    double sp[VOXA_MAXDIM];
    int has_sp;
    voxa_dtype gt, out_t;   /* scratch (float64 / int32) and output dtypes */
} edt_job;

static int64_t iget(const voxa_args *a, const char *name) {
    const voxa_value *v = voxa_args_get(a, name);
    return v && v->set ? v->i : 0;
}

/* The slice transforms' dtype (voxa_edt_slices): uint32 with unit spacing
 * where a slice's squared distances stay below 2^32 - 1 (half the scratch
 * bytes of float64, the same values), else float64. */
static voxa_dtype g_dtype(int nd, const int64_t *shape, int has_sp) {
    double maxd2 = 0;
    for (int d = 1; d < nd; d++) maxd2 += ((double)shape[d] + 1) * ((double)shape[d] + 1);
    return has_sp || maxd2 >= 4294967295.0 ? VOXA_F64 : VOXA_U32;
}

static void job_of(const voxa_args *a, const voxa_stream_plan *p, edt_job *j) {
    memset(j, 0, sizeof *j);
    j->nd = p->ndim;
    j->metric = (int)iget(a, "metric");
    j->squared = (int)iget(a, "squared");
    j->out_t = p->out_dtype;
    const voxa_value *s = voxa_args_get(a, "spacing");
    if (s && s->set) {
        j->has_sp = 1;
        for (int d = 0; d < j->nd; d++) j->sp[d] = s->n == 1 ? s->fv[0] : s->fv[d];
    } else {
        for (int d = 0; d < j->nd; d++) j->sp[d] = 1.0;
    }
    j->gt = j->metric != EUCLIDEAN ? VOXA_I32 : g_dtype(j->nd, p->shape, j->has_sp);
}


/* ---- plan ------------------------------------------------------------------ */

typedef struct cost_ctx {
    size_t in_es, out_es, g_es;
    int pass; /* 0: slab (block[0] slices), 1: pencil */
} cost_ctx;

static int64_t slab_bytes(const voxa_stream_plan *p, int64_t t, const cost_ctx *c) {
    int64_t n = t;
    for (int d = 1; d < p->ndim; d++) n *= p->shape[d];
    return n * (int64_t)(c->in_es + c->g_es + 1);
}

static int64_t pencil_bytes(const voxa_stream_plan *p, const int64_t *b, const cost_ctx *c) {
    int64_t n = p->shape[0];
    for (int d = 1; d < p->ndim; d++) n *= b[d];
    return n * (int64_t)(c->g_es + c->out_es);
}

static int64_t cost(const voxa_stream_plan *p, const int64_t *b, void *u) {
    const cost_ctx *c = u;
    return c->pass == 0 ? slab_bytes(p, b[0], c) : pencil_bytes(p, b, c);
}

int voxa__edt_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                   int64_t limit, voxa_stream_plan *p) {
    const voxa_value *ind = voxa_args_get(a, "indices");
    if (!in || p->ndim < 2 || (ind && ind->set)) return 0;
    const voxa_value *sp = voxa_args_get(a, "spacing");
    voxa_dtype gt = iget(a, "metric") != EUCLIDEAN ? VOXA_I32
                                                  : g_dtype(p->ndim, p->shape, sp && sp->set);
    cost_ctx c = {voxa_dtype_size(in->t), voxa_dtype_size(p->out_dtype), voxa_dtype_size(gt), 0};
    int64_t b[VOXA_MAXDIM];
    for (int d = 0; d < p->ndim; d++) {
        int64_t want = o ? o->block[d] : 0;
        b[d] = want > 0 && want < p->shape[d] ? want : p->shape[d] > 0 ? p->shape[d] : 1;
    }
    if (!voxa__blocks_given(o, p->ndim)) {
        while (b[0] > 1 && slab_bytes(p, b[0], &c) > limit) b[0] = (b[0] + 1) / 2;
        c.pass = 1;
        int64_t keep0 = b[0];
        b[0] = p->shape[0]; /* pencils span axis 0: only axes 1.. are cut */
        for (int d = 1; d < p->ndim; d++)
            while (b[d] > 1 && cost(p, b, &c) > limit) b[d] = (b[d] + 1) / 2;
        b[0] = keep0;
    }
    memcpy(p->block, b, sizeof b);
    voxa__plan_grid(p);
    int64_t pa = slab_bytes(p, b[0], &c), pb = pencil_bytes(p, b, &c);
    p->peak_bytes = pa > pb ? pa : pb;
    memset(p->halo_lo, 0, sizeof p->halo_lo);
    memset(p->halo_hi, 0, sizeof p->halo_hi);
    return 1;
}

static voxa_edt_metric cdt_metric(const edt_job *j) {
    return j->metric == CITYBLOCK ? VOXA_EDT_TAXICAB : VOXA_EDT_CHESSBOARD;
}

/* ---- pass A: slices ------------------------------------------------------------ */

static voxa_status slab_pass(const edt_job *j, const voxa_stream_plan *p, voxa_store *in,
                             voxa_store *g, int *has_bg, const voxa_progress *progress,
                             int64_t steps) {
    int nd = j->nd;
    int64_t t = p->block[0], shape[VOXA_MAXDIM];
    memcpy(shape, p->shape, sizeof shape);
    shape[0] = t;
    voxa_array ibuf = {0}, gbuf = {0};
    voxa_status st = voxa_array_new(&ibuf, in->t, nd, shape);
    if (st == VOXA_OK) st = voxa_array_new(&gbuf, j->gt, nd, shape);
    int64_t nslabs = (p->shape[0] + t - 1) / t;
    for (int64_t k = 0; st == VOXA_OK && k < nslabs; k++) {
        int64_t lo[VOXA_MAXDIM] = {0};
        lo[0] = k * t;
        shape[0] = lo[0] + t <= p->shape[0] ? t : p->shape[0] - lo[0];
        voxa_array iv = voxa__shaped(&ibuf, nd, shape), gv = voxa__shaped(&gbuf, nd, shape);
        st = voxa_store_read(in, lo, &iv);
        if (st == VOXA_OK && j->metric == EUCLIDEAN)
            st = voxa_edt_slices(&iv, j->has_sp ? j->sp : NULL, &gv, has_bg);
        else if (st == VOXA_OK)
            st = voxa_edt_cdt_slices(&iv, cdt_metric(j), &gv);
        if (st == VOXA_OK) st = voxa_store_write(g, lo, &gv);
        if (st == VOXA_OK) st = voxa__progress(progress, k + 1, steps);
    }
    voxa_array_free(&ibuf);
    voxa_array_free(&gbuf);
    return st;
}

/* ---- pass B: columns along axis 0 ------------------------------------------------ */

static voxa_status pencil_pass(const edt_job *j, const voxa_stream_plan *p, voxa_store *g,
                               voxa_store *out, int has_bg, const voxa_progress *progress,
                               int64_t done, int64_t steps) {
    int nd = j->nd;
    int64_t pshape[VOXA_MAXDIM], grid[VOXA_MAXDIM], npencils = 1;
    memcpy(pshape, p->block, sizeof pshape);
    pshape[0] = p->shape[0];
    for (int d = 1; d < nd; d++) {
        grid[d] = (p->shape[d] + pshape[d] - 1) / pshape[d];
        npencils *= grid[d];
    }
    voxa_array gbuf = {0}, obuf = {0};
    voxa_status st = voxa_array_new(&gbuf, j->gt, nd, pshape);
    if (st == VOXA_OK) st = voxa_array_new(&obuf, j->out_t, nd, pshape);
    for (int64_t k = 0; st == VOXA_OK && k < npencils; k++) {
        int64_t lo[VOXA_MAXDIM] = {0}, shape[VOXA_MAXDIM], r = k;
        shape[0] = p->shape[0];
        for (int d = nd - 1; d >= 1; d--) {
            lo[d] = (r % grid[d]) * pshape[d];
            r /= grid[d];
            shape[d] = lo[d] + pshape[d] <= p->shape[d] ? pshape[d] : p->shape[d] - lo[d];
        }
        voxa_array gv = voxa__shaped(&gbuf, nd, shape), ov = voxa__shaped(&obuf, nd, shape);
        if (has_bg || j->metric != EUCLIDEAN) st = voxa_store_read(g, lo, &gv);
        if (st == VOXA_OK && j->metric == EUCLIDEAN) {
            voxa_edt_params ep = {.spacing = j->has_sp ? j->sp : NULL, .squared = j->squared};
            st = voxa_edt_columns(&gv, lo, has_bg, &ep, &ov);
        } else if (st == VOXA_OK) {
            st = voxa_edt_cdt_columns(&gv, cdt_metric(j), &ov);
        }
        if (st == VOXA_OK) st = voxa_store_write(out, lo, &ov);
        if (st == VOXA_OK) st = voxa__progress(progress, done + k + 1, steps);
    }
    voxa_array_free(&gbuf);
    voxa_array_free(&obuf);
    return st;
}

/* The whole-volume run refuses these at run time; refuse them before any
 * pass, with its words. */
static voxa_status check_job(const edt_job *j, const voxa_stream_plan *p) {
    if (j->metric != EUCLIDEAN) return VOXA_OK;
    VOXA_FAIL_IF(j->out_t == VOXA_U32 && (!j->squared || j->has_sp), VOXA_EINVAL,
                 "edt: uint32 output holds squared distances with unit spacing only");
    for (int d = 0; j->has_sp && d < j->nd; d++)
        VOXA_FAIL_IF(!(j->sp[d] > 0) || !isfinite(j->sp[d]), VOXA_EINVAL,
                     "edt: spacing[%d] = %g must be finite and > 0", d, j->sp[d]);
    if (j->out_t == VOXA_U32) {
        double maxd2 = 0;
        for (int d = 0; d < j->nd; d++) maxd2 += ((double)p->shape[d] + 1) * ((double)p->shape[d] + 1);
        VOXA_FAIL_IF(maxd2 >= 4294967295.0, VOXA_EOVERFLOW,
                     "squared distances may exceed uint32 for this shape: use float64");
    }
    return VOXA_OK;
}

voxa_status voxa__stream_edt(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                             voxa_store *out, const voxa_progress *progress) {
    edt_job j;
    job_of(a, p, &j);
    VOXA_CHECK(check_job(&j, p));
    int64_t total = 1;
    for (int d = 0; d < p->ndim; d++) total *= p->shape[d];
    if (total == 0) return VOXA_OK;
    voxa_store *g = NULL;
    VOXA_CHECK(voxa__scratch_store(out, "edt", j.gt, p->ndim, p->shape, &g));
    int has_bg = 0;
    int64_t nslabs = (p->shape[0] + p->block[0] - 1) / p->block[0], npencils = 1;
    for (int d = 1; d < p->ndim; d++) npencils *= p->grid[d];
    int64_t steps = nslabs + npencils;
    voxa_status st = slab_pass(&j, p, in, g, &has_bg, progress, steps);
    if (st == VOXA_OK) st = pencil_pass(&j, p, g, out, has_bg, progress, nslabs, steps);
    voxa_store_close(g); /* removes the scratch file */
    return st;
}
