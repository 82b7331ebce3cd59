/* Structuring-element plans for voxa_morph: validation, recognition of
 * footprint arrays, and the element's exact parameters.
 *
 * Recognition of a 0/1 footprint (centre c = shape // 2):
 *   box      the ones fill their bounding box exactly (any size, off-centre
 *            too): offsets [bmin - c, bmax - c] per axis;
 *   diamond  ones == {|o|_1 <= r} with the array covering r on every side;
 *   ball     with norms w(o) = sum_d (o_d s_d)^2 (s = 1, or the spacing hint):
 *            M = max w over ones, m = min w over zeros and over offsets just
 *            outside the array; M < m means ones == {w <= M}, a ball. Unit
 *            spacing: threshold M (exact integers). Other spacing: threshold
 *            (M + m) / 2, accepted when the relative gap exceeds 1e-9 (the
 *            EDT's rounding is ~1e-15), so no voxel can flip.
 *   else     the offsets list (run decomposition, morph_general.c).
 * Balls given by radius get their threshold the same way: floor(R^2) for
 * unit spacing, else the gap (M, m) over all integer offsets, found by walking
 * the prefix box and solving the last axis (O((2R/s)^(ndim-1))). */
#include "voxa.h"
#include "morph_internal.h"

#include <math.h>
#include <string.h>

#define MAX_RADIUS 1e6
#define MAX_ENUM 50000000.0

void voxa__plan_free(voxa__plan *p) {
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
                      voxa__plan *p) {
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
        p->kind = VOXA__PATH_BOX;
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
        p->kind = VOXA__PATH_DIAMOND;
        p->r = rl1;
        return;
    }
    for (int d = 0; d < nd; d++) {
        int64_t e = c[d] < shape[d] - 1 - c[d] ? c[d] : shape[d] - 1 - c[d];
        double w = (double)(e + 1) * (sp ? sp[d] : 1.0);
        if (w * w < m) m = w * w;
    }
    if (M < m && (!sp || m - M > 1e-9 * m)) {
        p->kind = VOXA__PATH_BALL;
        p->aniso = sp != NULL;
        for (int d = 0; d < nd; d++) p->spacing[d] = sp ? sp[d] : 1.0;
        p->thr = sp ? M + (m - M) / 2 : M;
        return;
    }
    p->kind = VOXA__PATH_OFFSETS;
}

static voxa_status offsets_from(const uint8_t *fp, const int64_t *shape, int nd, voxa__plan *p) {
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
        double v = voxa_array_get(f, idx);
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

static voxa_status plan_inner(const voxa_morph_element *se, int nd, voxa__plan *p) {
    memset(p, 0, sizeof *p);
    p->nd = nd;
    VOXA_FAIL_IF(!se, VOXA_EINVAL, "morph: element is NULL");
    VOXA_FAIL_IF(nd < 1 || nd > VOXA_MAXDIM, VOXA_EINVAL, "morph: %d dimensions", nd);
    switch (se->kind) {
    case VOXA_SE_BALL: {
        VOXA_CHECK(check_radius(se->radius, "ball"));
        VOXA_CHECK(check_spacing(se->spacing, nd));
        double R = se->radius;
        p->kind = VOXA__PATH_BALL;
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
                p->kind = VOXA__PATH_OFFSETS;
            }
        }
        for (int d = 0; d < nd; d++) p->reach[d] = ball_reach(R, p->spacing[d]);
        return VOXA_OK;
    }
    case VOXA_SE_DIAMOND:
        VOXA_CHECK(check_radius(se->radius, "diamond"));
        VOXA_FAIL_IF(se->radius != floor(se->radius), VOXA_EINVAL,
                     "morph: diamond radius %g must be an integer", se->radius);
        p->kind = VOXA__PATH_DIAMOND;
        p->r = (int64_t)se->radius;
        p->fold = 1;
        for (int d = 0; d < nd; d++) p->reach[d] = p->r;
        return VOXA_OK;
    case VOXA_SE_BOX:
        p->kind = VOXA__PATH_BOX;
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
            p->kind = VOXA__PATH_BOX;
            p->fold = 1;
            for (int d = 0; d < nd; d++) { p->lo[d] = -1; p->hi[d] = 1; }
        } else if (se->connectivity == 1) {
            p->kind = VOXA__PATH_DIAMOND;
            p->r = 1;
            p->fold = 1;
        } else {
            voxa_array a;
            VOXA_CHECK(voxa_morph_element_array(se, nd, &a));
            voxa_status st = offsets_from(a.data, a.shape, nd, p);
            voxa_array_free(&a);
            VOXA_CHECK(st);
            p->kind = VOXA__PATH_OFFSETS;
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
        if (p->kind == VOXA__PATH_OFFSETS) st = offsets_from(fp, shape, nd, p);
        if (p->kind == VOXA__PATH_BOX) p->fold = 1;
        for (int d = 0; d < nd; d++) {
            int64_t c = shape[d] / 2;
            p->reach[d] = c > shape[d] - 1 - c ? c : shape[d] - 1 - c;
        }
        if (p->kind == VOXA__PATH_BOX)
            for (int d = 0; d < nd; d++) {
                if (p->lo[d] > 0 || p->hi[d] < 0) p->fold = 0; /* centre not in the box */
                p->reach[d] = -p->lo[d] > p->hi[d] ? -p->lo[d] : p->hi[d];
            }
        if (p->kind == VOXA__PATH_DIAMOND) {
            p->fold = 1;
            for (int d = 0; d < nd; d++) p->reach[d] = p->r;
        }
        voxa__free(fp);
        return st;
    }
    }
    return voxa__error(VOXA_EINVAL, "morph: unknown element kind %d", (int)se->kind);
}

/* Bit-packed rows (morph_bits.c) for elements with few footprint rows.
 * Their cost is ~N/64 * runs word operations; the distance/interval paths
 * cost O(ndim N) with a constant independent of the element. Measured
 * crossovers (opening, 2 threads, (60,61,61) and (200,201,201), see
 * docs/morph.md): balls up to ~250 runs (R <= 9 in 3D), boxes up to ~160
 * runs (11x11x11 wins, 17x17x17 loses), diamonds never (the city-block
 * transform is cheaper than even 61 runs). Footprints that are none of those
 * always take them (the run decomposition costs the same number of runs per
 * voxel instead of per 64 voxels) when their distinct run widths are <=
 * BITS_MAX_WIDTHS (memory ~ widths/8 bytes per voxel, at most the run
 * decomposition's 4). The rule depends only on the element, so
 * voxa_morph_describe can name the path without the input's shape. Balls
 * and boxes given by parameters are materialised only when small. */
#define BITS_MAX_RUNS_BALL 256
#define BITS_MAX_RUNS_BOX 160
#define BITS_MAX_WIDTHS 32
#define BITS_MAX_PREFIX 4096.0

static voxa_status consider_bits(const voxa_morph_element *se, int nd, voxa__plan *p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    /* morph_bits.c packs bytes into words assuming little-endian order; the
     * other paths are exact everywhere. */
    return VOXA_OK;
#endif
    if (p->kind == VOXA__PATH_DIAMOND) return VOXA_OK;
    if (p->kind != VOXA__PATH_OFFSETS) {
        double pre = 1, all = 1;
        for (int d = 0; d < nd; d++) {
            double e = 2.0 * (double)p->reach[d] + 1;
            if (d < nd - 1) pre *= e;
            all *= e;
        }
        if (pre > BITS_MAX_PREFIX || all > 1e6) return VOXA_OK;
        voxa_array a;
        VOXA_CHECK(voxa_morph_element_array(se, nd, &a));
        voxa_status st = offsets_from(a.data, a.shape, nd, p);
        voxa_array_free(&a);
        VOXA_CHECK(st);
    }
    VOXA_CHECK(voxa__bits_stats(nd, p->offs, p->noff, &p->bits_runs, &p->bits_widths));
    int64_t lim = p->kind == VOXA__PATH_BALL ? BITS_MAX_RUNS_BALL
                : p->kind == VOXA__PATH_BOX ? BITS_MAX_RUNS_BOX
                : p->kind == VOXA__PATH_OFFSETS ? INT64_MAX : 0;
    p->bits = p->bits_widths <= BITS_MAX_WIDTHS && p->bits_runs <= lim;
    return VOXA_OK;
}

voxa_status voxa__plan_make(const voxa_morph_element *se, int nd, voxa__plan *p) {
    voxa_status st = plan_inner(se, nd, p); /* zeroes *p first */
    if (st == VOXA_OK) st = consider_bits(se, nd, p);
    if (st) voxa__plan_free(p); /* offsets_from may fail with one of its two arrays */
    return st;
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
