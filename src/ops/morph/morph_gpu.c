/* Binary morphology on a GPU backend: the ball, diamond and box elements of
 * voxa_morph, each the same exact algorithm as on the CPU (morph.c):
 *   ball     squared Euclidean distance to the targets <= thr (dilation:
 *            distance to the foreground; erosion: to the background,
 *            inverted), src/core/sqdt.cl through backend/gpu_sqdt.c, in
 *            float64 with the CPU's rounding and threshold;
 *   diamond  city-block distance <= r (morph.cl, separable scans);
 *   box      separable interval OR / AND (morph.cl).
 * Outside the volume counts as border_value, as in scipy: for distances
 * "the border is a target" (dilation with 1, erosion with 0), for boxes the
 * value read outside. Iterations fold for diamonds and boxes (r k, the box
 * scaled by k) exactly where morph.c folds; balls repeat. The plan
 * (morph_plan.c) decides the element, so footprint arrays equal to a ball,
 * diamond or box run here too; other footprints, and iterations < 1 (until
 * stable), are EUNSUPPORTED (the auto backend then runs the CPU).
 *
 * The mask is uploaded once; two byte buffers ping-pong between steps, so
 * opening and closing stay on the device. Device memory: 2 V bytes, plus
 * 8 V + the line scratch for balls, 4 V for diamonds. */
#include "morph_gpu.h"
#include "morph_internal.h"
#include "backend/gpu_sqdt.h"

#include <math.h>
#include <string.h>

typedef struct dev {
    voxa__gpu *g;
    int nd;
    int64_t shape[VOXA_MAXDIM], total;
    voxa__buf b[2], f; /* masks (ping-pong); distances (ball: double, diamond: int) */
    int cur;           /* b[cur] holds the current mask */
} dev;

static int64_t sat_mul(int64_t a, int64_t k, int64_t cap) {
    if (a == 0) return 0;
    int64_t s = a < 0 ? -1 : 1, m = a < 0 ? -a : a;
    if (m > cap / k) return s * cap;
    return s * m * k;
}

/* Lines along axis d: their count, length and stride. */
static void axis_lines(const dev *v, int d, int64_t *n, int64_t *inner, int64_t *lines) {
    *inner = 1;
    for (int e = d + 1; e < v->nd; e++) *inner *= v->shape[e];
    *n = v->shape[d];
    *lines = v->total / *n;
}

static voxa_status ball(dev *v, const voxa__plan *p, int dilate, int bv) {
    voxa__gpu *g = v->g;
    double thr = p->thr, maxd2 = 0;
    for (int d = 0; d < v->nd; d++) { /* sqdt.c's clamp of huge thresholds */
        double s = p->aniso ? p->spacing[d] : 1.0;
        maxd2 += ((double)v->shape[d] + 1) * ((double)v->shape[d] + 1) * s * s;
    }
    if (thr > maxd2) thr = maxd2;
    voxa__gpu_sqdt q;
    memset(&q, 0, sizeof q);
    q.ndim = v->nd;
    memcpy(q.shape, v->shape, sizeof q.shape);
    q.src = &v->b[v->cur];
    q.target = dilate ? 1 : 0;
    q.border = dilate ? bv : !bv;
    q.spacing = p->aniso ? p->spacing : NULL;
    q.cap = thr;
    VOXA_CHECK(voxa__gpu_sqdt_run(g, &q, &v->f));
    int invert = !dilate;
    voxa__arg a[] = {VX_ARG(v->f.h), VX_ARG(v->b[!v->cur].h), VX_ARG(v->total), VX_ARG(thr),
                     VX_ARG(invert)};
    VOXA_CHECK(g->ops->launch(g, "vx_sqdt_emit_thr", v->total, 5, a));
    v->cur = !v->cur;
    return VOXA_OK;
}

static voxa_status diamond(dev *v, int64_t r, int dilate, int bv) {
    voxa__gpu *g = v->g;
    int target = dilate ? 1 : 0, border = dilate ? bv : !bv, invert = !dilate;
    voxa__arg ia[] = {VX_ARG(v->b[v->cur].h), VX_ARG(v->f.h), VX_ARG(v->total), VX_ARG(target)};
    VOXA_CHECK(g->ops->launch(g, "vx_morph_l1_init", v->total, 4, ia));
    for (int d = v->nd - 1; d >= 0; d--) {
        int64_t n, inner, lines;
        axis_lines(v, d, &n, &inner, &lines);
        voxa__arg la[] = {VX_ARG(v->f.h), VX_ARG(n), VX_ARG(inner), VX_ARG(lines),
                          VX_ARG(border)};
        VOXA_CHECK(g->ops->launch(g, "vx_morph_l1_lines", lines, 5, la));
    }
    voxa__arg ta[] = {VX_ARG(v->f.h), VX_ARG(v->b[!v->cur].h), VX_ARG(v->total), VX_ARG(r),
                      VX_ARG(invert)};
    VOXA_CHECK(g->ops->launch(g, "vx_morph_l1_thr", v->total, 5, ta));
    v->cur = !v->cur;
    return VOXA_OK;
}

static voxa_status box(dev *v, const int64_t *lo, const int64_t *hi, int dilate, int bv) {
    voxa__gpu *g = v->g;
    int neg = !dilate, outside = bv;
    for (int d = v->nd - 1; d >= 0; d--) {
        int64_t n, inner, lines, l = lo[d], h = hi[d];
        axis_lines(v, d, &n, &inner, &lines);
        voxa__arg a[] = {VX_ARG(v->b[v->cur].h), VX_ARG(v->b[!v->cur].h), VX_ARG(n),
                         VX_ARG(inner), VX_ARG(lines), VX_ARG(l), VX_ARG(h), VX_ARG(neg),
                         VX_ARG(outside)};
        VOXA_CHECK(g->ops->launch(g, "vx_morph_box_lines", lines, 9, a));
        v->cur = !v->cur;
    }
    return VOXA_OK;
}

/* One application (k-fold when the plan folds), as morph.c's step. */
static voxa_status step(dev *v, const voxa__plan *p, int dilate, int bv, int64_t k) {
    int64_t ext = 2;
    for (int d = 0; d < v->nd; d++) ext += v->shape[d];
    switch (p->kind) {
    case VOXA__PATH_BALL: return ball(v, p, dilate, bv);
    case VOXA__PATH_DIAMOND: return diamond(v, sat_mul(p->r, k, ext), dilate, bv);
    case VOXA__PATH_BOX: {
        int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM];
        for (int d = 0; d < v->nd; d++) {
            int64_t l = sat_mul(p->lo[d], k, v->shape[d] + 1);
            int64_t h = sat_mul(p->hi[d], k, v->shape[d] + 1);
            lo[d] = dilate ? -h : l;
            hi[d] = dilate ? -l : h;
        }
        return box(v, lo, hi, dilate, bv);
    }
    default: return voxa__error(VOXA_EINTERNAL, "morph: bad GPU plan");
    }
}

static voxa_status repeat(dev *v, const voxa__plan *p, int dilate, int bv, int it,
                          const voxa_progress *prog) {
    if (p->fold) return step(v, p, dilate, bv, it);
    for (int i = 0; i < it; i++) {
        VOXA_CHECK(step(v, p, dilate, bv, 1));
        VOXA_CHECK(voxa__progress(prog, i + 1, it));
    }
    return VOXA_OK;
}

static int64_t dist_bytes(const voxa__plan *p, int nd, const int64_t *shape, int64_t v) {
    if (p->kind == VOXA__PATH_BALL) return 8 * v + voxa__gpu_sqdt_scratch(nd, shape);
    return p->kind == VOXA__PATH_DIAMOND ? 4 * v : 0;
}

voxa_status voxa__morph_gpu_bytes(const voxa_morph_element *se, int ndim, const int64_t *shape,
                                  int64_t *total, int64_t *largest) {
    voxa__plan p;
    *total = *largest = 0;
    VOXA_CHECK(voxa__plan_make(se, ndim, &p));
    int64_t v = 1;
    for (int d = 0; d < ndim; d++) v *= shape[d];
    if (p.kind != VOXA__PATH_OFFSETS) {
        *total = 2 * v + dist_bytes(&p, ndim, shape, v);
        *largest = p.kind == VOXA__PATH_BALL ? 8 * v : p.kind == VOXA__PATH_DIAMOND ? 4 * v : v;
        int64_t scr = p.kind == VOXA__PATH_BALL ? voxa__gpu_sqdt_scratch(ndim, shape) : 0;
        if (scr > *largest) *largest = scr;
    }
    voxa__plan_free(&p);
    return VOXA_OK;
}

voxa_status voxa__morph_gpu(voxa_backend b, voxa_morph_op op, const voxa_array *in,
                            voxa_array *out, const voxa_morph_params *p) {
    VOXA_FAIL_IF(!in || !out || !p, VOXA_EINVAL, "morph: in, out and params must not be NULL");
    VOXA_CHECK(voxa_array_check(in, "input"));
    VOXA_CHECK(voxa_array_check(out, "output"));
    { /* the CPU's checks on empty views: op, shapes, dtypes, element */
        voxa_array ei = *in, eo = *out;
        if (in->ndim >= 1 && voxa__same_shape(in, out)) ei.shape[0] = eo.shape[0] = 0;
        VOXA_CHECK(voxa_morph(op, &ei, &eo, p));
    }
    voxa__plan pl;
    VOXA_CHECK(voxa__plan_make(&p->se, in->ndim, &pl));
    voxa_status st = VOXA_OK;
    dev v;
    memset(&v, 0, sizeof v);
    const uint8_t *src;
    uint8_t *owned = NULL;
    VOXA_GOTO_IF(pl.kind == VOXA__PATH_OFFSETS, VOXA_EUNSUPPORTED,
                 "morph: the GPU path takes ball, diamond and box elements (this footprint "
                 "runs on the cpu backend)");
    VOXA_GOTO_IF(p->iterations < 1, VOXA_EUNSUPPORTED,
                 "iterations: %d (until nothing changes) runs on the cpu backend",
                 p->iterations);
    v.nd = in->ndim;
    memcpy(v.shape, in->shape, sizeof(int64_t) * (size_t)v.nd);
    v.total = voxa_array_size(in);
    if (v.total == 0) goto done;
    if ((st = voxa__binary_view(in, &src, &owned))) goto done;
    if ((st = voxa__gpu_acquire(b, "morph", &v.g))) goto done;
    voxa__gpu *g = v.g;
    int64_t fb = pl.kind == VOXA__PATH_BALL ? 8 * v.total
                 : pl.kind == VOXA__PATH_DIAMOND ? 4 * v.total : 0;
    if ((st = voxa__gpu_upload(g, src, (size_t)v.total, "morph: mask", &v.b[0])) ||
        (st = voxa__gpu_alloc(g, (size_t)v.total, "morph: result", &v.b[1])) ||
        (fb && (st = voxa__gpu_alloc(g, (size_t)fb, "morph: distances", &v.f))))
        goto done;
    int bv = p->border_value, k = p->iterations;
    const voxa_progress *pr = &p->progress;
    switch (op) {
    case VOXA_MORPH_DILATE: st = repeat(&v, &pl, 1, bv, k, pr); break;
    case VOXA_MORPH_ERODE: st = repeat(&v, &pl, 0, bv, k, pr); break;
    case VOXA_MORPH_OPEN:
        st = repeat(&v, &pl, 0, bv, k, pr);
        if (!st) st = repeat(&v, &pl, 1, bv, k, pr);
        break;
    case VOXA_MORPH_CLOSE:
        st = repeat(&v, &pl, 1, bv, k, pr);
        if (!st) st = repeat(&v, &pl, 0, bv, k, pr);
        break;
    }
    if (!st) st = voxa__gpu_read_into(g, &v.b[v.cur], out);
done:
    if (v.g) {
        voxa__gpu_free(v.g, &v.b[0]);
        voxa__gpu_free(v.g, &v.b[1]);
        voxa__gpu_free(v.g, &v.f);
        voxa__gpu_release(v.g);
    }
    voxa__plan_free(&pl);
    voxa__free(owned);
    return st;
}

voxa_status voxa_morph_on(voxa_backend b, voxa_morph_op op, const voxa_array *in,
                          voxa_array *out, const voxa_morph_params *p) {
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_morph(op, in, out, p);
    return voxa__morph_gpu(b, op, in, out, p);
}
