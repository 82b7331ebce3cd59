/* voxa_morph: binary dilation/erosion/opening/closing with scipy.ndimage's
 * semantics, choosing an exact algorithm per structuring element.
 *
 * Plan (built once per call from the element):
 *   ball      B = {o : sum_d (o_d s_d)^2 <= R^2}. Dilation: v is set iff the
 *             nearest foreground voxel lies within B, i.e. the squared EDT to
 *             the foreground is <= thr. Erosion: v stays iff the nearest
 *             background voxel (outside the volume counts when
 *             border_value = 0) is beyond thr. With unit spacing thr =
 *             floor(R^2) and everything is integer. With other spacings the
 *             norms of integer offsets form a discrete set: M = largest norm
 *             inside B, m = smallest outside; thr = (M + m) / 2 is far (relative
 *             gap, checked >= 1e-9) from any norm, so the rounding of the
 *             transform (~1e-15 relative) cannot flip a voxel.
 *   diamond   B = {|o|_1 <= r}: the same with the city-block distance.
 *   box       product of intervals: separable interval filter.
 *   footprint anything else: run decomposition (morph_general.c).
 * A footprint array is recognised as box (all ones in its bounding box),
 * diamond, or ball (M < m test above, unit spacing or the spacing hint).
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
 * Memory: in + out + the path's scratch (see voxa/morph.h). */
#include "voxa.h"
#include "morph_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_RADIUS 1e6
#define MAX_ENUM 50000000.0

typedef enum { PATH_BALL, PATH_DIAMOND, PATH_BOX, PATH_OFFSETS } path_kind;

typedef struct plan {
    path_kind kind;
    int nd;
    double thr;         /* ball */
    int aniso;
    double spacing[VOXA_MAXDIM];
    int64_t r;          /* diamond */
    int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM]; /* box, relative to the centre */
    int64_t *offs;      /* footprint: b - c, noff rows of nd */
    int64_t *neg;       /* -(b - c) */
    int64_t noff;
    int64_t reach[VOXA_MAXDIM];
    int fold;
} plan;

static void plan_free(plan *p) {
    voxa__free(p->offs);
    voxa__free(p->neg);
    p->offs = p->neg = NULL;
}

static voxa_status check_spacing(const double *sp, int nd) {
    for (int d = 0; sp && d < nd; d++)
        VOXA_FAIL_IF(!(sp[d] > 0) || !isfinite(sp[d]), VOXA_EINVAL,
                     "morph: spacing[%d] = %g must be finite and > 0", d, sp[d]);
    return VOXA_OK;
}

static int is_unit(const double *sp, int nd) {
    for (int d = 0; sp && d < nd; d++)
        if (sp[d] != 1.0) return 0;
    return 1;
}

/* Norm of an offset exactly as voxa_morph_element_array evaluates it. */
static inline double norm2(const int64_t *o, const double *sp, int nd) {
    double s = 0;
    for (int d = 0; d < nd; d++) {
        double e = (double)o[d] * (sp ? sp[d] : 1.0);
        s += e * e;
    }
    return s;
}

static int64_t ball_reach(double R, double s) {
    double R2 = R * R;
    int64_t k = (int64_t)floor(R / s);
    while (k > 0 && ((double)k * s) * ((double)k * s) > R2) k--;
    while (((double)(k + 1) * s) * ((double)(k + 1) * s) <= R2) k++;
    return k;
}

/* M = largest norm <= R^2, m = smallest norm > R^2 over all integer offsets. */
static voxa_status ball_gap(double R, const double *sp, int nd, double *M, double *m) {
    double R2 = R * R, cnt = 1;
    int64_t ext[VOXA_MAXDIM], o[VOXA_MAXDIM];
    for (int d = 0; d < nd; d++) {
        ext[d] = ball_reach(R, sp[d]) + 1;
        if (d < nd - 1) cnt *= (double)(2 * ext[d] + 1);
    }
    VOXA_FAIL_IF(cnt > MAX_ENUM, VOXA_EINVAL,
                 "morph: ball radius %g is too large for this spacing (element too big)", R);
    *M = 0;
    *m = INFINITY;
    for (int d = 0; d < nd; d++) o[d] = -ext[d];
    o[nd - 1] = 0;
    for (;;) {
        /* last axis: largest k with norm <= R2 (norms grow with |k|) */
        int64_t k = 0;
        double base = norm2(o, sp, nd);
        if (base <= R2) {
            k = ball_reach(sqrt(R2 - base) , sp[nd - 1]);
            for (;;) { /* re-evaluate in the element's own summation order */
                o[nd - 1] = k + 1;
                if (norm2(o, sp, nd) <= R2) { k++; continue; }
                o[nd - 1] = k;
                if (k > 0 && norm2(o, sp, nd) > R2) { k--; continue; }
                break;
            }
            o[nd - 1] = k;
            double v = norm2(o, sp, nd);
            if (v > *M) *M = v;
            o[nd - 1] = k + 1;
            v = norm2(o, sp, nd);
            if (v < *m) *m = v;
        } else if (base < *m) {
            *m = base;
        }
        o[nd - 1] = 0;
        int d = nd - 2;
        for (; d >= 0; d--) {
            if (++o[d] <= ext[d]) break;
            o[d] = -ext[d];
        }
        if (d < 0) break;
    }
    return VOXA_OK;
}

/* Try a 0/1 contiguous footprint as box, diamond or ball. */
static void recognise(const uint8_t *fp, const int64_t *shape, int nd, const double *hint,
                      plan *p) {
    int64_t n = 1, c[VOXA_MAXDIM], bmin[VOXA_MAXDIM], bmax[VOXA_MAXDIM], ones = 0;
    for (int d = 0; d < nd; d++) {
        n *= shape[d];
        c[d] = shape[d] / 2;
        bmin[d] = INT64_MAX;
        bmax[d] = -1;
    }
    int64_t idx[VOXA_MAXDIM] = {0}, o[VOXA_MAXDIM], rl1 = 0;
    for (int64_t i = 0; i < n; i++) {
        if (fp[i]) {
            ones++;
            int64_t l1 = 0;
            for (int d = 0; d < nd; d++) {
                if (idx[d] < bmin[d]) bmin[d] = idx[d];
                if (idx[d] > bmax[d]) bmax[d] = idx[d];
                l1 += idx[d] > c[d] ? idx[d] - c[d] : c[d] - idx[d];
            }
            if (l1 > rl1) rl1 = l1;
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    int64_t boxn = 1;
    for (int d = 0; d < nd; d++) boxn *= bmax[d] - bmin[d] + 1;
    if (boxn == ones) {
        p->kind = PATH_BOX;
        for (int d = 0; d < nd; d++) {
            p->lo[d] = bmin[d] - c[d];
            p->hi[d] = bmax[d] - c[d];
        }
        return;
    }
    /* diamond and ball: the array must cover the radius on every side */
    int cover = 1;
    for (int d = 0; d < nd; d++) cover &= c[d] >= rl1 && shape[d] - 1 - c[d] >= rl1;
    int diamond = cover;
    double M = 0, m = INFINITY;
    const double *sp = hint && !is_unit(hint, nd) ? hint : NULL;
    memset(idx, 0, sizeof idx);
    for (int64_t i = 0; i < n; i++) {
        int64_t l1 = 0;
        for (int d = 0; d < nd; d++) {
            o[d] = idx[d] - c[d];
            l1 += o[d] < 0 ? -o[d] : o[d];
        }
        if ((l1 <= rl1) != (fp[i] != 0)) diamond = 0;
        double w = norm2(o, sp, nd);
        if (fp[i] && w > M) M = w;
        if (!fp[i] && w < m) m = w;
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    if (diamond) {
        p->kind = PATH_DIAMOND;
        p->r = rl1;
        return;
    }
    for (int d = 0; d < nd; d++) {
        int64_t e = c[d] < shape[d] - 1 - c[d] ? c[d] : shape[d] - 1 - c[d];
        double w = (double)(e + 1) * (sp ? sp[d] : 1.0);
        if (w * w < m) m = w * w;
    }
    if (M < m && (!sp || m - M > 1e-9 * m)) {
        p->kind = PATH_BALL;
        p->aniso = sp != NULL;
        for (int d = 0; d < nd; d++) p->spacing[d] = sp ? sp[d] : 1.0;
        p->thr = sp ? M + (m - M) / 2 : M;
        return;
    }
    p->kind = PATH_OFFSETS;
}

static voxa_status offsets_from(const uint8_t *fp, const int64_t *shape, int nd, plan *p) {
    int64_t n = 1, cnt = 0;
    for (int d = 0; d < nd; d++) n *= shape[d];
    for (int64_t i = 0; i < n; i++) cnt += fp[i] != 0;
    p->offs = voxa__malloc((size_t)cnt, (size_t)nd * sizeof(int64_t));
    p->neg = voxa__malloc((size_t)cnt, (size_t)nd * sizeof(int64_t));
    VOXA_FAIL_IF(!p->offs || !p->neg, VOXA_ENOMEM, "morph: cannot allocate the footprint");
    int64_t idx[VOXA_MAXDIM] = {0}, k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (fp[i]) {
            for (int d = 0; d < nd; d++) {
                p->offs[k * nd + d] = idx[d] - shape[d] / 2;
                p->neg[k * nd + d] = -(idx[d] - shape[d] / 2);
            }
            k++;
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    p->noff = cnt;
    return VOXA_OK;
}

/* Validate a footprint array into a 0/1 contiguous copy (caller frees). */
static voxa_status footprint_bytes(const voxa_array *f, int nd, uint8_t **out) {
    *out = NULL;
    VOXA_FAIL_IF(!f, VOXA_EINVAL, "morph: footprint element without a footprint array");
    VOXA_CHECK(voxa_array_check(f, "footprint"));
    VOXA_FAIL_IF(f->ndim != nd, VOXA_EINVAL,
                 "morph: footprint has %d dimensions, the input %d: they must match", f->ndim, nd);
    int64_t n = voxa_array_size(f);
    VOXA_FAIL_IF(n == 0, VOXA_EINVAL, "morph: footprint is empty (size 0)");
    VOXA_FAIL_IF(n > 100000000, VOXA_EINVAL, "morph: footprint of %lld voxels is too large",
                 (long long)n);
    uint8_t *b = voxa__malloc((size_t)n, 1);
    VOXA_FAIL_IF(!b, VOXA_ENOMEM, "morph: cannot allocate the footprint");
    int64_t idx[VOXA_MAXDIM] = {0}, ones = 0;
    for (int64_t i = 0; i < n; i++) {
        const char *s = (const char *)f->data + voxa__offset(f, idx);
        double v = 0;
        switch (f->dtype) {
        case VOXA_BOOL: case VOXA_U8: v = *(const uint8_t *)s; break;
        case VOXA_I8: v = *(const int8_t *)s; break;
        case VOXA_U16: { uint16_t t; memcpy(&t, s, 2); v = t; } break;
        case VOXA_I16: { int16_t t; memcpy(&t, s, 2); v = t; } break;
        case VOXA_U32: { uint32_t t; memcpy(&t, s, 4); v = t; } break;
        case VOXA_I32: { int32_t t; memcpy(&t, s, 4); v = t; } break;
        case VOXA_U64: { uint64_t t; memcpy(&t, s, 8); v = t > 1 ? 2 : (double)t; } break;
        case VOXA_I64: { int64_t t; memcpy(&t, s, 8); v = t > 1 || t < 0 ? 2 : (double)t; } break;
        case VOXA_F32: { float t; memcpy(&t, s, 4); v = t; } break;
        case VOXA_F64: memcpy(&v, s, 8); break;
        default: break;
        }
        if (v != 0 && v != 1) {
            voxa__free(b);
            return voxa__error(VOXA_EINVAL,
                               "morph: footprint values must be 0 or 1, found %g at flat index %lld",
                               v, (long long)i);
        }
        b[i] = (uint8_t)(v == 1);
        ones += b[i];
        for (int d = f->ndim - 1; d >= 0; d--) {
            if (++idx[d] < f->shape[d]) break;
            idx[d] = 0;
        }
    }
    if (!ones) {
        voxa__free(b);
        return voxa__error(VOXA_EINVAL, "morph: footprint has no true voxel (empty element)");
    }
    *out = b;
    return VOXA_OK;
}

static voxa_status check_radius(double R, const char *what) {
    VOXA_FAIL_IF(!isfinite(R), VOXA_EINVAL, "morph: %s radius %g is not finite", what, R);
    VOXA_FAIL_IF(R < 0, VOXA_EINVAL, "morph: %s radius %g is negative", what, R);
    VOXA_FAIL_IF(R > MAX_RADIUS, VOXA_EINVAL, "morph: %s radius %g is too large (at most %g)",
                 what, R, MAX_RADIUS);
    return VOXA_OK;
}

static voxa_status make_plan(const voxa_morph_element *se, int nd, plan *p) {
    memset(p, 0, sizeof *p);
    p->nd = nd;
    VOXA_FAIL_IF(!se, VOXA_EINVAL, "morph: element is NULL");
    VOXA_FAIL_IF(nd < 1 || nd > VOXA_MAXDIM, VOXA_EINVAL, "morph: %d dimensions", nd);
    switch (se->kind) {
    case VOXA_SE_BALL: {
        VOXA_CHECK(check_radius(se->radius, "ball"));
        VOXA_CHECK(check_spacing(se->spacing, nd));
        double R = se->radius;
        p->kind = PATH_BALL;
        if (is_unit(se->spacing, nd)) {
            p->thr = floor(R * R);
            for (int d = 0; d < nd; d++) p->spacing[d] = 1.0;
        } else {
            double M = 0, m = 0;
            VOXA_CHECK(ball_gap(R, se->spacing, nd, &M, &m));
            p->aniso = 1;
            for (int d = 0; d < nd; d++) p->spacing[d] = se->spacing[d];
            p->thr = M + (m - M) / 2;
            if (!(m - M > 1e-9 * m)) { /* too close to call: materialise */
                voxa_array a;
                VOXA_CHECK(voxa_morph_element_array(se, nd, &a));
                voxa_status st = offsets_from(a.data, a.shape, nd, p);
                voxa_array_free(&a);
                VOXA_CHECK(st);
                p->kind = PATH_OFFSETS;
            }
        }
        for (int d = 0; d < nd; d++) p->reach[d] = ball_reach(R, p->spacing[d]);
        return VOXA_OK;
    }
    case VOXA_SE_DIAMOND:
        VOXA_CHECK(check_radius(se->radius, "diamond"));
        VOXA_FAIL_IF(se->radius != floor(se->radius), VOXA_EINVAL,
                     "morph: diamond radius %g must be an integer", se->radius);
        p->kind = PATH_DIAMOND;
        p->r = (int64_t)se->radius;
        p->fold = 1;
        for (int d = 0; d < nd; d++) p->reach[d] = p->r;
        return VOXA_OK;
    case VOXA_SE_BOX:
        p->kind = PATH_BOX;
        p->fold = 1;
        for (int d = 0; d < nd; d++) {
            VOXA_FAIL_IF(se->box[d] < 1 || se->box[d] > 100000000, VOXA_EINVAL,
                         "morph: box size %lld along axis %d must be 1..1e8",
                         (long long)se->box[d], d);
            p->lo[d] = -(se->box[d] / 2);
            p->hi[d] = se->box[d] - 1 - se->box[d] / 2;
            p->reach[d] = -p->lo[d] > p->hi[d] ? -p->lo[d] : p->hi[d];
        }
        return VOXA_OK;
    case VOXA_SE_CONNECTIVITY: {
        VOXA_FAIL_IF(se->connectivity < 1, VOXA_EINVAL,
                     "morph: connectivity %d must be >= 1", se->connectivity);
        for (int d = 0; d < nd; d++) p->reach[d] = 1;
        if (se->connectivity >= nd) {
            p->kind = PATH_BOX;
            p->fold = 1;
            for (int d = 0; d < nd; d++) { p->lo[d] = -1; p->hi[d] = 1; }
        } else if (se->connectivity == 1) {
            p->kind = PATH_DIAMOND;
            p->r = 1;
            p->fold = 1;
        } else {
            voxa_array a;
            VOXA_CHECK(voxa_morph_element_array(se, nd, &a));
            voxa_status st = offsets_from(a.data, a.shape, nd, p);
            voxa_array_free(&a);
            VOXA_CHECK(st);
            p->kind = PATH_OFFSETS;
        }
        return VOXA_OK;
    }
    case VOXA_SE_FOOTPRINT: {
        uint8_t *fp;
        VOXA_CHECK(check_spacing(se->spacing, nd));
        VOXA_CHECK(footprint_bytes(se->footprint, nd, &fp));
        const int64_t *shape = se->footprint->shape;
        recognise(fp, shape, nd, se->spacing, p);
        voxa_status st = VOXA_OK;
        if (p->kind == PATH_OFFSETS) st = offsets_from(fp, shape, nd, p);
        if (p->kind == PATH_BOX) p->fold = 1;
        for (int d = 0; d < nd; d++) {
            int64_t c = shape[d] / 2;
            p->reach[d] = c > shape[d] - 1 - c ? c : shape[d] - 1 - c;
        }
        if (p->kind == PATH_BOX)
            for (int d = 0; d < nd; d++) {
                if (p->lo[d] > 0 || p->hi[d] < 0) p->fold = 0; /* centre not in the box */
                p->reach[d] = -p->lo[d] > p->hi[d] ? -p->lo[d] : p->hi[d];
            }
        if (p->kind == PATH_DIAMOND) {
            p->fold = 1;
            for (int d = 0; d < nd; d++) p->reach[d] = p->r;
        }
        voxa__free(fp);
        return st;
    }
    }
    return voxa__error(VOXA_EINVAL, "morph: unknown element kind %d", (int)se->kind);
}

static int64_t sat_mul(int64_t a, int64_t k, int64_t cap) {
    if (a == 0) return 0;
    int64_t s = a < 0 ? -1 : 1, m = a < 0 ? -a : a;
    if (m > cap / k) return s * cap;
    return s * m * k;
}

/* One application (k-fold when the plan folds) of dilation or erosion. */
static voxa_status step(const plan *p, int nd, const int64_t *shape, const uint8_t *src,
                        uint8_t *dst, int dilate, int bv, int64_t k, void **scratch) {
    int64_t ext = 2; /* a radius/box beyond every extent acts like infinity */
    for (int d = 0; d < nd; d++) ext += shape[d];
    switch (p->kind) {
    case PATH_BALL: {
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
    case PATH_DIAMOND:
        return voxa__l1_threshold(nd, shape, src, dilate ? 1 : 0, dilate ? bv : !bv,
                                  sat_mul(p->r, k, ext), !dilate, dst);
    case PATH_BOX: {
        int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM];
        for (int d = 0; d < nd; d++) {
            int64_t l = sat_mul(p->lo[d], k, shape[d] + 1), h = sat_mul(p->hi[d], k, shape[d] + 1);
            lo[d] = dilate ? -h : l;
            hi[d] = dilate ? -l : h;
        }
        return voxa__box_filter(nd, shape, src, lo, hi, dilate, bv, dst);
    }
    case PATH_OFFSETS:
        if (dilate) return voxa__offsets_or(nd, shape, src, 0, p->neg, p->noff, bv, 0, dst);
        return voxa__offsets_or(nd, shape, src, 1, p->offs, p->noff, !bv, 1, dst);
    }
    return voxa__error(VOXA_EINTERNAL, "morph: bad plan");
}

/* dilate or erode `iterations` times, src -> dst (dst may be src). */
static voxa_status repeat(const plan *p, int nd, const int64_t *shape, int64_t total,
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
    uint8_t *prev = voxa__malloc((size_t)total, 1);
    VOXA_FAIL_IF(!prev, VOXA_ENOMEM, "morph: cannot allocate %lld voxels", (long long)total);
    voxa_status st = step(p, nd, shape, src, dst, dilate, bv, 1, scr);
    for (int64_t i = 1; st == VOXA_OK; i++) {
        memcpy(prev, dst, (size_t)total);
        if ((st = step(p, nd, shape, dst, dst, dilate, bv, 1, scr))) break;
        if (!memcmp(prev, dst, (size_t)total)) break;
        if ((st = voxa__progress(prog, i, 0))) break;
    }
    voxa__free(prev);
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
    plan pl;
    VOXA_CHECK(make_plan(&p->se, in->ndim, &pl));
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
    plan_free(&pl);
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

VOXA_API voxa_status voxa_morph_element_array(const voxa_morph_element *se, int ndim,
                                              voxa_array *out) {
    VOXA_FAIL_IF(!se || !out, VOXA_EINVAL, "morph: element and out must not be NULL");
    VOXA_FAIL_IF(ndim < 1 || ndim > VOXA_MAXDIM, VOXA_EINVAL, "morph: ndim %d must be 1..%d",
                 ndim, VOXA_MAXDIM);
    int64_t shape[VOXA_MAXDIM];
    double R = se->radius;
    const double *sp = NULL;
    switch (se->kind) {
    case VOXA_SE_BALL:
        VOXA_CHECK(check_radius(R, "ball"));
        VOXA_CHECK(check_spacing(se->spacing, ndim));
        sp = se->spacing;
        for (int d = 0; d < ndim; d++) shape[d] = 2 * ball_reach(R, sp ? sp[d] : 1.0) + 1;
        break;
    case VOXA_SE_DIAMOND:
        VOXA_CHECK(check_radius(R, "diamond"));
        VOXA_FAIL_IF(R != floor(R), VOXA_EINVAL, "morph: diamond radius %g must be an integer", R);
        for (int d = 0; d < ndim; d++) shape[d] = 2 * (int64_t)R + 1;
        break;
    case VOXA_SE_BOX:
        for (int d = 0; d < ndim; d++) {
            VOXA_FAIL_IF(se->box[d] < 1, VOXA_EINVAL, "morph: box size %lld along axis %d must be >= 1",
                         (long long)se->box[d], d);
            shape[d] = se->box[d];
        }
        break;
    case VOXA_SE_CONNECTIVITY:
        VOXA_FAIL_IF(se->connectivity < 1, VOXA_EINVAL, "morph: connectivity %d must be >= 1",
                     se->connectivity);
        for (int d = 0; d < ndim; d++) shape[d] = 3;
        break;
    case VOXA_SE_FOOTPRINT: {
        uint8_t *fp;
        VOXA_CHECK(footprint_bytes(se->footprint, ndim, &fp));
        voxa_status st = voxa_array_new(out, VOXA_BOOL, ndim, se->footprint->shape);
        if (!st) memcpy(out->data, fp, (size_t)voxa_array_size(out));
        voxa__free(fp);
        return st;
    }
    default:
        return voxa__error(VOXA_EINVAL, "morph: unknown element kind %d", (int)se->kind);
    }
    double n = 1;
    for (int d = 0; d < ndim; d++) n *= (double)shape[d];
    VOXA_FAIL_IF(n > 1e9, VOXA_EINVAL, "morph: element of %.0f voxels is too large to materialise", n);
    VOXA_CHECK(voxa_array_new(out, VOXA_BOOL, ndim, shape));
    uint8_t *b = out->data;
    int64_t idx[VOXA_MAXDIM] = {0}, o[VOXA_MAXDIM];
    for (int64_t i = 0; i < (int64_t)n; i++) {
        int64_t l1 = 0;
        for (int d = 0; d < ndim; d++) {
            o[d] = idx[d] - shape[d] / 2;
            l1 += o[d] < 0 ? -o[d] : o[d];
        }
        switch (se->kind) {
        case VOXA_SE_BALL: b[i] = norm2(o, sp, ndim) <= R * R; break;
        case VOXA_SE_DIAMOND: b[i] = l1 <= (int64_t)R; break;
        case VOXA_SE_CONNECTIVITY: b[i] = l1 <= se->connectivity; break;
        default: b[i] = 1;
        }
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
    return VOXA_OK;
}

VOXA_API voxa_status voxa_morph_describe(const voxa_morph_element *se, int ndim, int iterations,
                                         char *buf, size_t n) {
    VOXA_FAIL_IF(!buf || n == 0, VOXA_EINVAL, "morph: describe needs a buffer");
    plan p;
    VOXA_CHECK(make_plan(se, ndim, &p));
    const char *it = iterations == 1 ? "" : p.fold ? ", iterations folded into one pass"
                                                   : ", applied once per iteration";
    switch (p.kind) {
    case PATH_BALL:
        snprintf(buf, n, "ball: squared Euclidean distance <= %.17g (%s spacing)%s", p.thr,
                 p.aniso ? "anisotropic" : "unit", it);
        break;
    case PATH_DIAMOND:
        snprintf(buf, n, "diamond: city-block distance <= %lld%s", (long long)p.r, it);
        break;
    case PATH_BOX: {
        int w = snprintf(buf, n, "box: separable interval filter, offsets");
        for (int d = 0; d < ndim && w > 0 && (size_t)w < n; d++)
            w += snprintf(buf + w, n - (size_t)w, " [%lld,%lld]", (long long)p.lo[d],
                          (long long)p.hi[d]);
        if (w > 0 && (size_t)w < n) snprintf(buf + w, n - (size_t)w, "%s", it);
        break;
    }
    case PATH_OFFSETS:
        snprintf(buf, n, "footprint: run decomposition of %lld offsets%s", (long long)p.noff, it);
        break;
    }
    plan_free(&p);
    return VOXA_OK;
}

VOXA_API voxa_status voxa_morph_halo(const voxa_morph_element *se, int ndim, voxa_morph_op op,
                                     int iterations, int64_t *halo) {
    VOXA_FAIL_IF(!halo, VOXA_EINVAL, "morph: halo must not be NULL");
    VOXA_FAIL_IF(iterations < 1, VOXA_EINVAL,
                 "morph: halo needs iterations >= 1 (until-stable has no finite halo)");
    plan p;
    VOXA_CHECK(make_plan(se, ndim, &p));
    int64_t f = (op == VOXA_MORPH_OPEN || op == VOXA_MORPH_CLOSE) ? 2 : 1;
    for (int d = 0; d < ndim; d++) halo[d] = p.reach[d] * iterations * f;
    plan_free(&p);
    return VOXA_OK;
}
