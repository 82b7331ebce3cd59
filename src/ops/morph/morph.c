/* voxa_morph: binary dilation/erosion/opening/closing with scipy.ndimage's
 * semantics, running the exact algorithm the element's plan names
 * (morph_plan.c builds and recognises plans):
 *   ball      squared EDT to the foreground <= thr (dilation), squared EDT
 *             to the background > thr (erosion), src/core/sqdt.c
 *   diamond   the same with the city-block distance, morph_box.c
 *   clamped   both of those in 2-D/3-D when the reach is small (ball with
 *             unit spacing and thr <= 32767, diamond r*k <= 253): clamped
 *             small-integer vector passes, morph_clamp.c
 *   box       separable binary interval filter, morph_box.c
 *   footprint run decomposition, morph_general.c
 *   small     any of them with few footprint rows (runs): bit-packed rows,
 *             64 voxels per word, morph_bits.c (plan->bits; not for folded
 *             iterations, which stay one O(N) pass)
 * Outside the volume counts as border_value: for the distance paths that is
 * "the border is a target" (dilation with border_value 1, erosion with 0).
 *
 * Iterations. scipy repeats the operation, resetting the outside to
 * border_value each time. For the diamond and the box (containing its
 * centre) k repetitions equal one application of the k-fold element: every
 * offset of B^k is reached by a path of k steps that is monotone in each
 * coordinate, so it never leaves the volume between two in-volume voxels, and
 * because B holds its centre nothing set outside matters. Those fold into a
 * single pass (r*k, or the box scaled by k); other elements (balls, general
 * footprints, connectivities 2..ndim-1) are applied k times; iterations < 1
 * repeat until the result stops changing.
 *
 * Memory: in + out + the path's scratch (ball: 2 bytes/voxel for R^2 < 65535
 * with unit spacing, else 4 or 8, one buffer for the whole call). */
#include "voxa.h"
#include "morph_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int64_t sat_mul(int64_t a, int64_t k, int64_t cap) {
    if (a == 0) return 0;
    int64_t s = a < 0 ? -1 : 1, m = a < 0 ? -a : a;
    if (m > cap / k) return s * cap;
    return s * m * k;
}

/* One application (k-fold when the plan folds) of dilation or erosion. */
static voxa_status step(const voxa__plan *p, int nd, const int64_t *shape, const uint8_t *src,
                        uint8_t *dst, int dilate, int bv, int64_t k, void **scratch) {
    int64_t ext = 2; /* a radius/box beyond every extent acts like infinity */
    for (int d = 0; d < nd; d++) ext += shape[d];
    if (p->bits && k == 1) { /* small element: bit-packed rows, morph_bits.c */
        if (dilate) return voxa__bits_or(nd, shape, src, 0, p->neg, p->noff, bv, 0, dst);
        return voxa__bits_or(nd, shape, src, 1, p->offs, p->noff, !bv, 1, dst);
    }
    if (voxa__clamp_applies(p, nd, k)) /* 2-D/3-D, small reach: morph_clamp.c */
        return voxa__clamp_threshold(nd, shape, src, dilate ? 1 : 0, dilate ? bv : !bv,
                                     p->kind == VOXA__PATH_BALL,
                                     p->kind == VOXA__PATH_BALL ? (int64_t)p->thr : p->r * k,
                                     !dilate, dst);
    switch (p->kind) {
    case VOXA__PATH_BALL: {
        voxa__sqdt q;
        memset(&q, 0, sizeof q);
        q.ndim = nd;
        memcpy(q.shape, shape, sizeof(int64_t) * (size_t)nd);
        q.src = src;
        q.target = dilate ? 1 : 0;
        q.border = dilate ? bv : !bv;
        q.spacing = p->aniso ? p->spacing : NULL;
        q.mode = VOXA__SQDT_THRESHOLD;
        q.out = dst;
        q.thr = p->thr;
        q.invert = !dilate;
        /* one scratch for every erosion/dilation of the call (no page faults
         * on a fresh buffer each time); freed by the caller */
        size_t bytes = voxa__sqdt_scratch_bytes(&q);
        if (bytes && !*scratch) {
            *scratch = voxa__malloc(bytes, 1);
            VOXA_FAIL_IF(!*scratch, VOXA_ENOMEM, "morph: cannot allocate %zu bytes of scratch", bytes);
        }
        q.scratch = *scratch;
        return voxa__sqdt_run(&q);
    }
    case VOXA__PATH_DIAMOND:
        return voxa__l1_threshold(nd, shape, src, dilate ? 1 : 0, dilate ? bv : !bv,
                                  sat_mul(p->r, k, ext), !dilate, dst);
    case VOXA__PATH_BOX: {
        int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM];
        for (int d = 0; d < nd; d++) {
            int64_t l = sat_mul(p->lo[d], k, shape[d] + 1), h = sat_mul(p->hi[d], k, shape[d] + 1);
            lo[d] = dilate ? -h : l;
            hi[d] = dilate ? -l : h;
        }
        return voxa__box_filter(nd, shape, src, lo, hi, dilate, bv, dst);
    }
    case VOXA__PATH_OFFSETS:
        if (dilate) return voxa__offsets_or(nd, shape, src, 0, p->neg, p->noff, bv, 0, dst);
        return voxa__offsets_or(nd, shape, src, 1, p->offs, p->noff, !bv, 1, dst);
    }
    return voxa__error(VOXA_EINTERNAL, "morph: bad plan");
}

/* Whether the element holds its centre: balls, diamonds and boxes always;
 * a footprint (origin already folded in) when one offset is zero. */
static int has_centre(const voxa__plan *p) {
    if (!p->offs) return 1;
    for (int64_t i = 0; i < p->noff; i++) {
        int zero = 1;
        for (int d = 0; d < p->nd; d++) zero &= p->offs[i * p->nd + d] == 0;
        if (zero) return 1;
    }
    return 0;
}

/* dilate or erode `iterations` times, src -> dst (dst may be src). */
static voxa_status repeat(const voxa__plan *p, int nd, const int64_t *shape, int64_t total,
                          const uint8_t *src, uint8_t *dst, int dilate, int bv, int iterations,
                          const voxa_progress *prog, void **scr) {
    if (iterations >= 1 && p->fold)
        return step(p, nd, shape, src, dst, dilate, bv, iterations, scr);
    if (iterations >= 1) {
        for (int i = 0; i < iterations; i++) {
            VOXA_CHECK(step(p, nd, shape, i ? dst : src, dst, dilate, bv, 1, scr));
            VOXA_CHECK(voxa__progress(prog, i + 1, iterations));
        }
        return VOXA_OK;
    }
    /* Until stable. With its centre an element makes the results grow
     * (dilation) or shrink (erosion), so they settle; without it they may
     * cycle, where scipy loops for ever. Then Brent's cycle detection keeps
     * one earlier result, taken again at every power of two steps: a result
     * equal to it (and not a fixed point) means a cycle, reported instead of
     * a hang. Cost: one comparison more per step, one copy per power of two. */
    int cycles = !has_centre(p);
    uint8_t *prev = voxa__malloc((size_t)total, 1);
    uint8_t *seen = cycles ? voxa__malloc((size_t)total, 1) : NULL;
    voxa_status st = VOXA_OK;
    VOXA_GOTO_IF(!prev || (cycles && !seen), VOXA_ENOMEM, "morph: cannot allocate %lld voxels",
                 (long long)total);
    if ((st = step(p, nd, shape, src, dst, dilate, bv, 1, scr))) goto done;
    if (cycles) memcpy(seen, dst, (size_t)total);
    for (int64_t i = 1, power = 1, lam = 0;; i++) {
        memcpy(prev, dst, (size_t)total);
        if ((st = step(p, nd, shape, dst, dst, dilate, bv, 1, scr))) break;
        if (!memcmp(prev, dst, (size_t)total)) break;
        if ((st = voxa__progress(prog, i, 0))) break;
        if (!cycles) continue;
        lam++;
        VOXA_GOTO_IF(!memcmp(seen, dst, (size_t)total), VOXA_EINVAL,
                     "morph: iterations < 1 (until stable) never settles: the results "
                     "repeat every %lld iterations (the structure, shifted by origin, lacks "
                     "its centre; scipy loops for ever here)", (long long)lam);
        if (lam == power) {
            memcpy(seen, dst, (size_t)total);
            power *= 2;
            lam = 0;
        }
    }
done:
    voxa__free(prev);
    voxa__free(seen);
    return st;
}

VOXA_API voxa_status voxa_morph(voxa_morph_op op, const voxa_array *in, voxa_array *out,
                                const voxa_morph_params *p) {
    VOXA_FAIL_IF(!in || !out || !p, VOXA_EINVAL, "morph: in, out and params must not be NULL");
    VOXA_CHECK(voxa_array_check(in, "input"));
    VOXA_CHECK(voxa_array_check(out, "output"));
    VOXA_FAIL_IF(op < VOXA_MORPH_DILATE || op > VOXA_MORPH_CLOSE, VOXA_EINVAL,
                 "morph: unknown operation %d", (int)op);
    VOXA_FAIL_IF(in->ndim < 1, VOXA_EINVAL, "morph: input must have at least 1 dimension");
    if (!voxa__same_shape(in, out)) {
        char a[128], b[128];
        return voxa__error(VOXA_EINVAL, "morph: output shape %s differs from input shape %s",
                           voxa__shape_str(out, a, sizeof a), voxa__shape_str(in, b, sizeof b));
    }
    VOXA_FAIL_IF(out->dtype != VOXA_BOOL && out->dtype != VOXA_U8, VOXA_EINVAL,
                 "morph: output dtype %s: expected bool or uint8", voxa_dtype_name(out->dtype));
    VOXA_FAIL_IF(p->border_value != 0 && p->border_value != 1, VOXA_EINVAL,
                 "morph: border_value %d must be 0 or 1", p->border_value);
    voxa__plan pl;
    VOXA_CHECK(voxa__plan_make(&p->se, in->ndim, &pl));
    voxa_status st = VOXA_OK;
    int nd = in->ndim;
    int64_t total = voxa_array_size(in);
    const uint8_t *src = NULL;
    uint8_t *owned = NULL, *tmp = NULL;
    void *scr = NULL;
    if (total == 0) goto done;
    if ((st = voxa__binary_view(in, &src, &owned))) goto done;
    int direct = voxa_array_is_c_contiguous(out);
    uint8_t *dst = direct ? out->data : (tmp = voxa__malloc((size_t)total, 1));
    VOXA_GOTO_IF(!dst, VOXA_ENOMEM, "morph: cannot allocate %lld voxels", (long long)total);
    int bv = p->border_value, k = p->iterations;
    const voxa_progress *pr = &p->progress;
    switch (op) {
    case VOXA_MORPH_DILATE: st = repeat(&pl, nd, in->shape, total, src, dst, 1, bv, k, pr, &scr); break;
    case VOXA_MORPH_ERODE: st = repeat(&pl, nd, in->shape, total, src, dst, 0, bv, k, pr, &scr); break;
    case VOXA_MORPH_OPEN:
        st = repeat(&pl, nd, in->shape, total, src, dst, 0, bv, k, pr, &scr);
        if (!st) st = repeat(&pl, nd, in->shape, total, dst, dst, 1, bv, k, pr, &scr);
        break;
    case VOXA_MORPH_CLOSE:
        st = repeat(&pl, nd, in->shape, total, src, dst, 1, bv, k, pr, &scr);
        if (!st) st = repeat(&pl, nd, in->shape, total, dst, dst, 0, bv, k, pr, &scr);
        break;
    }
    if (!st && !direct) voxa__copy_into(dst, out);
done:
    voxa__plan_free(&pl);
    voxa__free(owned);
    voxa__free(tmp);
    voxa__free(scr);
    return st;
}

VOXA_API voxa_status voxa_morph_dilate(const voxa_array *in, voxa_array *out,
                                       const voxa_morph_params *p) {
    return voxa_morph(VOXA_MORPH_DILATE, in, out, p);
}
VOXA_API voxa_status voxa_morph_erode(const voxa_array *in, voxa_array *out,
                                      const voxa_morph_params *p) {
    return voxa_morph(VOXA_MORPH_ERODE, in, out, p);
}
VOXA_API voxa_status voxa_morph_open(const voxa_array *in, voxa_array *out,
                                     const voxa_morph_params *p) {
    return voxa_morph(VOXA_MORPH_OPEN, in, out, p);
}
VOXA_API voxa_status voxa_morph_close(const voxa_array *in, voxa_array *out,
                                      const voxa_morph_params *p) {
    return voxa_morph(VOXA_MORPH_CLOSE, in, out, p);
}

VOXA_API voxa_status voxa_morph_describe(const voxa_morph_element *se, int ndim, int iterations,
                                         char *buf, size_t n) {
    VOXA_FAIL_IF(!buf || n == 0, VOXA_EINVAL, "morph: describe needs a buffer");
    voxa__plan p;
    VOXA_CHECK(voxa__plan_make(se, ndim, &p));
    const char *it = iterations == 1 ? "" : p.fold ? ", iterations folded into one pass"
                                                   : ", applied once per iteration";
    if (p.bits && (iterations == 1 || !p.fold)) {
        static const char *names[] = {"ball", "diamond", "box", "footprint"};
        snprintf(buf, n, "%s: bit-packed rows, %lld runs of %d widths (%lld offsets)%s",
                 names[p.kind], (long long)p.bits_runs, p.bits_widths, (long long)p.noff,
                 iterations == 1 ? "" : ", applied once per iteration");
        voxa__plan_free(&p);
        return VOXA_OK;
    }
    switch (p.kind) {
    case VOXA__PATH_BALL:
        if (voxa__clamp_applies(&p, ndim, 1))
            snprintf(buf, n, "ball: squared Euclidean distance <= %.17g (unit spacing), clamped "
                     "small-integer passes (%s)%s", p.thr, voxa__clamp_kernel_name(), it);
        else
            snprintf(buf, n, "ball: squared Euclidean distance <= %.17g (%s spacing)%s", p.thr,
                     p.aniso ? "anisotropic" : "unit", it);
        break;
    case VOXA__PATH_DIAMOND:
        if (voxa__clamp_applies(&p, ndim, iterations > 1 ? iterations : 1))
            snprintf(buf, n, "diamond: city-block distance <= %lld, clamped small-integer "
                     "passes (%s)%s", (long long)p.r, voxa__clamp_kernel_name(), it);
        else
            snprintf(buf, n, "diamond: city-block distance <= %lld%s", (long long)p.r, it);
        break;
    case VOXA__PATH_BOX: {
        int w = snprintf(buf, n, "box: separable interval filter, offsets");
        for (int d = 0; d < ndim && w > 0 && (size_t)w < n; d++)
            w += snprintf(buf + w, n - (size_t)w, " [%lld,%lld]", (long long)p.lo[d],
                          (long long)p.hi[d]);
        if (w > 0 && (size_t)w < n) snprintf(buf + w, n - (size_t)w, "%s", it);
        break;
    }
    case VOXA__PATH_OFFSETS:
        snprintf(buf, n, "footprint: run decomposition of %lld offsets%s", (long long)p.noff, it);
        break;
    }
    voxa__plan_free(&p);
    return VOXA_OK;
}

VOXA_API voxa_status voxa_morph_halo(const voxa_morph_element *se, int ndim, voxa_morph_op op,
                                     int iterations, int64_t *halo) {
    VOXA_FAIL_IF(!halo, VOXA_EINVAL, "morph: halo must not be NULL");
    VOXA_FAIL_IF(iterations < 1, VOXA_EINVAL,
                 "morph: halo needs iterations >= 1 (until-stable has no finite halo)");
    voxa__plan p;
    VOXA_CHECK(voxa__plan_make(se, ndim, &p));
    int64_t f = (op == VOXA_MORPH_OPEN || op == VOXA_MORPH_CLOSE) ? 2 : 1;
    for (int d = 0; d < ndim; d++) halo[d] = p.reach[d] * iterations * f;
    voxa__plan_free(&p);
    return VOXA_OK;
}
