/* voxa_preview: projections and slices of a store, composed into one RGB
 * picture (layout in include/voxa/preview.h).
 *
 * One pass over the volume in blocks - a Zarr input's chunks (each decoded
 * once), else slabs of whole z-planes (as many as fit the memory limit, at
 * least one), the next block read while one is folded: every voxel updates
 * the three projections
 * (max along z into y-x, along y into z-x, along x into y-z) and, when it
 * lies on one of the point's planes, the matching slice. Memory: two blocks
 * plus the six 2-D views (values as double, labels as int64), never the
 * volume; time: one read of the volume and ~3 compares per voxel. Labels are
 * projected by their maximum (labels <= 0 are background). The views are
 * then resampled (nearest voxel) to physical proportions, mapped to grey by
 * percentile contrast (one pair of limits for the projections, one for the
 * slices) and coloured where labelled. */
#include "preview_internal.h"

#include "voxa/stream.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GAP 4       /* between the views of a panel */
#define PANEL_GAP 12 /* between the projection and slice panels */

typedef struct pstate {
    int nd;             /* 2 or 3 */
    int64_t Z, Y, X;    /* Z = 1 for 2-D */
    int64_t pz, py, px; /* slice point */
    int with_v, with_l;
    voxa__pview mip[3], slc[3]; /* 0: y-x, 1: y-z (rows y, columns z), 2: z-x */
    double *rowv;       /* one row of values / labels */
    int64_t *rowl;
} pstate;

static voxa_status view_new(voxa__pview *v, int64_t h, int64_t w, int with_v, int with_l) {
    v->h = h;
    v->w = w;
    size_t n = (size_t)(h * w > 0 ? h * w : 1);
    if (with_v) {
        v->v = voxa__malloc(n, sizeof(double));
        VOXA_FAIL_IF(!v->v, VOXA_ENOMEM, "preview: no memory for a %lld x %lld view",
                     (long long)h, (long long)w);
        for (size_t i = 0; i < n; i++) v->v[i] = -INFINITY; /* below all */
    }
    if (with_l) {
        v->lab = voxa__calloc(n, sizeof(int64_t));
        VOXA_FAIL_IF(!v->lab, VOXA_ENOMEM, "preview: no memory for a %lld x %lld view",
                     (long long)h, (long long)w);
    }
    return VOXA_OK;
}

static void view_free(voxa__pview *v) {
    voxa__free(v->v);
    voxa__free(v->lab);
    memset(v, 0, sizeof *v);
}

/* A row of n elements (inner stride of a) as double / as labels (int64,
 * <= 0: 0): one dtype switch per row, not per voxel. */
#define ROW(T, conv)                                                           \
    for (int64_t i = 0; i < n; i++) dst[i] = conv(*(const T *)(p + i * st));
#define ID(x) (x)
#define POS(x) ((x) > 0 ? (int64_t)(x) : 0)
static void row_v(const voxa_array *a, const char *p, int64_t n, double *dst) {
    int64_t st = a->strides[a->ndim - 1];
    switch (a->dtype) {
    case VOXA_BOOL: case VOXA_U8: ROW(uint8_t, ID) break;
    case VOXA_I8: ROW(int8_t, ID) break;
    case VOXA_U16: ROW(uint16_t, ID) break;
    case VOXA_I16: ROW(int16_t, ID) break;
    case VOXA_U32: ROW(uint32_t, ID) break;
    case VOXA_I32: ROW(int32_t, ID) break;
    case VOXA_U64: ROW(uint64_t, (double)) break;
    case VOXA_I64: ROW(int64_t, (double)) break;
    case VOXA_F32: ROW(float, ID) break;
    default: ROW(double, ID) break;
    }
}

static void row_l(const voxa_array *a, const char *p, int64_t n, int64_t *dst) {
    int64_t st = a->strides[a->ndim - 1];
    switch (a->dtype) {
    case VOXA_U8: ROW(uint8_t, POS) break;
    case VOXA_I8: ROW(int8_t, POS) break;
    case VOXA_U16: ROW(uint16_t, POS) break;
    case VOXA_I16: ROW(int16_t, POS) break;
    case VOXA_U32: ROW(uint32_t, POS) break;
    case VOXA_I32: ROW(int32_t, POS) break;
    case VOXA_U64:
        for (int64_t i = 0; i < n; i++) {
            uint64_t u = *(const uint64_t *)(p + i * st);
            dst[i] = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
        }
        break;
    default: ROW(int64_t, POS) break;
    }
}
#undef ROW
#undef ID
#undef POS

/* Fold rows [y0, y0 + ny) x columns [x0, x0 + nx) of plane z, held as plane
 * zi of the block views img/lab (shape (bz,) ny, nx). */
static void fold_plane(pstate *s, const voxa_array *img, const voxa_array *lab, int64_t zi,
                       int64_t z, int64_t y0, int64_t ny, int64_t x0, int64_t nx) {
    const int64_t X = s->X, Z = s->Z;
    const int has_px = s->px >= x0 && s->px < x0 + nx;
    for (int64_t yi = 0; yi < ny; yi++) {
        int64_t y = y0 + yi;
        if (s->with_v) {
            const char *row = (const char *)img->data + (s->nd == 3 ? zi * img->strides[0] : 0) +
                              yi * img->strides[s->nd - 2];
            double *m0 = s->mip[0].v + y * X + x0;
            double *m2 = s->nd == 3 ? s->mip[2].v + z * X + x0 : NULL;
            double *rv = s->rowv;
            row_v(img, row, nx, rv);
            /* "v > m ? v : m" skips NaN (views start at -inf) and vectorises */
            for (int64_t x = 0; x < nx; x++) m0[x] = rv[x] > m0[x] ? rv[x] : m0[x];
            if (m2)
                for (int64_t x = 0; x < nx; x++) m2[x] = rv[x] > m2[x] ? rv[x] : m2[x];
            if (s->nd == 3) {
                /* the row's maximum, four chains in flight */
                double a[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
                int64_t x = 0;
                for (; x + 4 <= nx; x += 4)
                    for (int k = 0; k < 4; k++) a[k] = rv[x + k] > a[k] ? rv[x + k] : a[k];
                for (; x < nx; x++) a[0] = rv[x] > a[0] ? rv[x] : a[0];
                double m1 = s->mip[1].v[y * Z + z];
                for (int k = 0; k < 4; k++) m1 = a[k] > m1 ? a[k] : m1;
                s->mip[1].v[y * Z + z] = m1;
                if (z == s->pz) memcpy(s->slc[0].v + y * X + x0, rv, (size_t)nx * sizeof *rv);
                if (y == s->py) memcpy(s->slc[2].v + z * X + x0, rv, (size_t)nx * sizeof *rv);
                if (has_px) s->slc[1].v[y * Z + z] = rv[s->px - x0];
            }
        }
        if (s->with_l) {
            const char *row = (const char *)lab->data + (s->nd == 3 ? zi * lab->strides[0] : 0) +
                              yi * lab->strides[s->nd - 2];
            int64_t *m0 = s->mip[0].lab + y * X + x0;
            int64_t *m2 = s->nd == 3 ? s->mip[2].lab + z * X + x0 : NULL;
            int64_t m1 = s->nd == 3 ? s->mip[1].lab[y * Z + z] : 0, *rl = s->rowl;
            row_l(lab, row, nx, rl);
            for (int64_t x = 0; x < nx; x++) m0[x] = rl[x] > m0[x] ? rl[x] : m0[x];
            if (m2)
                for (int64_t x = 0; x < nx; x++) m2[x] = rl[x] > m2[x] ? rl[x] : m2[x];
            for (int64_t x = 0; x < nx; x++) m1 = rl[x] > m1 ? rl[x] : m1;
            if (s->nd == 3) {
                s->mip[1].lab[y * Z + z] = m1;
                if (z == s->pz) memcpy(s->slc[0].lab + y * X + x0, rl, (size_t)nx * sizeof *rl);
                if (y == s->py) memcpy(s->slc[2].lab + z * X + x0, rl, (size_t)nx * sizeof *rl);
                if (has_px) s->slc[1].lab[y * Z + z] = rl[s->px - x0];
            }
        }
    }
}

/* Paint view v (h x w source) into rgb at (r0, c0) as an hh x ww block,
 * nearest source voxel, grey from [lo, hi], labels blended at alpha. */
static void paint(voxa_array *rgb, const voxa__pview *v, int64_t r0, int64_t c0, int64_t hh,
                  int64_t ww, double lo, double hi, double alpha) {
    for (int64_t r = 0; r < hh; r++) {
        int64_t sr = (int64_t)(((double)r + 0.5) * (double)v->h / (double)hh);
        if (sr >= v->h) sr = v->h - 1;
        uint8_t *o = (uint8_t *)rgb->data + (r0 + r) * rgb->strides[0] + c0 * rgb->strides[1];
        for (int64_t c = 0; c < ww; c++, o += rgb->strides[1]) {
            int64_t sc = (int64_t)(((double)c + 0.5) * (double)v->w / (double)ww);
            if (sc >= v->w) sc = v->w - 1;
            int64_t k = sr * v->w + sc;
            uint8_t g = v->v ? voxa__preview_grey(v->v[k], lo, hi) : 0;
            o[0] = o[1] = o[2] = g;
            if (v->lab && v->lab[k] > 0) {
                uint8_t col[3];
                voxa_preview_label_color(v->lab[k], col);
                for (int ch = 0; ch < 3; ch++)
                    o[ch] = (uint8_t)lrint((1 - alpha) * g + alpha * col[ch]);
            }
        }
    }
}

/* A panel (three views, or one for 2-D) at column c0. */
static voxa_status panel(pstate *s, voxa__pview *views, voxa_array *rgb, int64_t c0,
                         int64_t Yp, int64_t Zp, const voxa_preview_options *o) {
    double lo = NAN, hi = NAN;
    int nv = s->nd == 3 ? 3 : 1;
    if (s->with_v) VOXA_CHECK(voxa__preview_limits(views, nv, o->lo_pct, o->hi_pct, &lo, &hi));
    double alpha = s->with_v ? 0.5 : 1.0;
    paint(rgb, &views[0], 0, c0, Yp, s->X, lo, hi, alpha);
    if (s->nd == 3) {
        paint(rgb, &views[1], 0, c0 + s->X + GAP, Yp, Zp, lo, hi, alpha);
        paint(rgb, &views[2], Yp + GAP, c0, Zp, s->X, lo, hi, alpha);
    }
    return VOXA_OK;
}

static int64_t scaled(int64_t n, double f) {
    double v = floor((double)n * f + 0.5);
    return v < 1 ? 1 : (int64_t)v;
}

/* The block walk: blocks in raster order, two buffers each for image and
 * labels (block k in buffer k % 2). */
typedef struct walk {
    pstate *s;
    voxa_store *image, *labels;
    int nd;
    int64_t vol[3], blk[3], grid[3], nblocks, k;
    voxa_array ibuf[2], lbuf[2];
    voxa_array iv[2], lv[2]; /* the views of the blocks read */
    int64_t b0[2][3], n[2][3];
} walk;

static voxa_status read_block(walk *w, int64_t k) {
    int i = (int)(k % 2), nd = w->nd;
    int64_t *b0 = w->b0[i], *n = w->n[i];
    for (int64_t r = k, d = 2; d >= 0; d--) {
        b0[d] = (r % w->grid[d]) * w->blk[d];
        r /= w->grid[d];
        n[d] = w->vol[d] - b0[d] < w->blk[d] ? w->vol[d] - b0[d] : w->blk[d];
    }
    w->iv[i] = w->ibuf[i];
    w->lv[i] = w->lbuf[i];
    w->iv[i].owner = w->lv[i].owner = NULL;
    for (int d = 0; d < nd; d++) w->iv[i].shape[d] = w->lv[i].shape[d] = n[d + 3 - nd];
    if (w->image) VOXA_CHECK(voxa_store_read(w->image, b0 + 3 - nd, &w->iv[i]));
    if (w->labels) VOXA_CHECK(voxa_store_read(w->labels, b0 + 3 - nd, &w->lv[i]));
    return VOXA_OK;
}

/* Item 0 folds block k; item 1 reads block k + 1. */
static voxa_status read_or_fold(int64_t lo, int64_t hi, int tid, void *vw) {
    (void)tid;
    walk *w = vw;
    for (int64_t item = lo; item < hi; item++) {
        if (item == 1) {
            VOXA_CHECK(read_block(w, w->k + 1));
            continue;
        }
        int i = (int)(w->k % 2);
        for (int64_t zi = 0; zi < w->n[i][0]; zi++)
            fold_plane(w->s, &w->iv[i], &w->lv[i], zi, w->b0[i][0] + zi, w->b0[i][1],
                       w->n[i][1], w->b0[i][2], w->n[i][2]);
    }
    return VOXA_OK;
}

voxa_status voxa_preview(voxa_store *image, voxa_store *labels, const voxa_preview_options *opt,
                         voxa_array *rgb) {
    VOXA_FAIL_IF(!rgb, VOXA_EINVAL, "rgb: NULL");
    memset(rgb, 0, sizeof *rgb);
    VOXA_FAIL_IF(!image && !labels, VOXA_EINVAL, "image: neither an image nor labels");
    voxa_preview_options o = {0};
    if (opt) o = *opt;
    if (o.lo_pct == 0 && o.hi_pct == 0) o.lo_pct = 0.5, o.hi_pct = 99.5;
    VOXA_FAIL_IF(!(o.lo_pct >= 0 && o.hi_pct <= 100 && o.lo_pct < o.hi_pct), VOXA_EINVAL,
                 "percentiles: %g, %g (need 0 <= low < high <= 100)", o.lo_pct, o.hi_pct);
    VOXA_FAIL_IF(o.mem_limit < 0, VOXA_EINVAL, "mem_limit: %lld is negative",
                 (long long)o.mem_limit);
    if (o.mem_limit == 0) o.mem_limit = (int64_t)64 << 20;
    voxa_dtype it = VOXA_U8, lt = VOXA_I32;
    int nd = 0, lnd = 0;
    int64_t shape[VOXA_MAXDIM], lshape[VOXA_MAXDIM];
    if (image) voxa_store_info(image, &it, &nd, shape);
    if (labels) {
        voxa_store_info(labels, &lt, &lnd, lshape);
        VOXA_FAIL_IF(lt == VOXA_BOOL || voxa_dtype_is_float(lt), VOXA_EINVAL,
                     "labels: dtype %s is not an integer type", voxa_dtype_name(lt));
        if (!image) {
            nd = lnd;
            memcpy(shape, lshape, sizeof shape);
        }
        int same = lnd == nd;
        for (int d = 0; same && d < nd; d++) same = lshape[d] == shape[d];
        VOXA_FAIL_IF(!same, VOXA_EINVAL, "labels: shape differs from the image's");
    }
    const char *what = image ? "image" : "labels";
    VOXA_FAIL_IF(nd != 2 && nd != 3, VOXA_EINVAL, "%s: %d-D (previews are of 2-D or 3-D arrays)",
                 what, nd);
    for (int d = 0; d < nd; d++)
        VOXA_FAIL_IF(shape[d] < 1, VOXA_EINVAL, "%s: empty (axis %d has length 0)", what, d);
    double sp[3] = {1, 1, 1};
    if (o.spacing)
        for (int d = 0; d < nd; d++) {
            sp[d] = o.spacing[d];
            VOXA_FAIL_IF(!(sp[d] > 0) || !isfinite(sp[d]), VOXA_EINVAL,
                         "spacing[%d]: %g (need a finite value > 0)", d, sp[d]);
        }
    pstate s = {0};
    s.nd = nd;
    s.Z = nd == 3 ? shape[0] : 1;
    s.Y = shape[nd - 2];
    s.X = shape[nd - 1];
    s.with_v = image != NULL;
    s.with_l = labels != NULL;
    int64_t pt[3] = {s.Z / 2, s.Y / 2, s.X / 2};
    if (o.point)
        for (int d = 0; d < nd; d++) {
            int64_t lim = d == nd - 1 ? s.X : d == nd - 2 ? s.Y : s.Z;
            VOXA_FAIL_IF(o.point[d] < 0 || o.point[d] >= lim, VOXA_EINVAL,
                         "point[%d]: %lld is outside 0..%lld", d, (long long)o.point[d],
                         (long long)lim - 1);
            pt[d + 3 - nd] = o.point[d];
        }
    s.pz = pt[0], s.py = pt[1], s.px = pt[2];
    voxa_status st = VOXA_OK;
    /* views */
    st = view_new(&s.mip[0], s.Y, s.X, s.with_v, s.with_l);
    if (st == VOXA_OK && nd == 3) {
        st = view_new(&s.mip[1], s.Y, s.Z, s.with_v, s.with_l);
        if (st == VOXA_OK) st = view_new(&s.mip[2], s.Z, s.X, s.with_v, s.with_l);
        if (st == VOXA_OK) st = view_new(&s.slc[0], s.Y, s.X, s.with_v, s.with_l);
        if (st == VOXA_OK) st = view_new(&s.slc[1], s.Y, s.Z, s.with_v, s.with_l);
        if (st == VOXA_OK) st = view_new(&s.slc[2], s.Z, s.X, s.with_v, s.with_l);
    }
    if (st != VOXA_OK) goto done;
    s.rowv = voxa__malloc((size_t)s.X, sizeof(double));
    s.rowl = voxa__malloc((size_t)s.X, sizeof(int64_t));
    VOXA_GOTO_IF(!s.rowv || !s.rowl, VOXA_ENOMEM, "preview: no memory for a row");
    /* Blocks: a chunked (Zarr) input is read by its chunks, so each chunk is
     * decoded once (a chunk larger than mem_limit is still read whole: the
     * decoder holds it anyway); other stores by slabs of whole planes. */
    int64_t bpv = (image ? (int64_t)voxa_dtype_size(it) : 0) +
                  (labels ? (int64_t)voxa_dtype_size(lt) : 0);
    int64_t vol[3] = {s.Z, s.Y, s.X}, blk[3] = {1, s.Y, s.X}, ch[VOXA_MAXDIM];
    if (voxa_store_chunks(image ? image : labels, ch) == VOXA_OK) {
        for (int d = 3 - nd; d < 3; d++) {
            int64_t c = ch[d - (3 - nd)];
            blk[d] = c < vol[d] ? c : vol[d];
        }
    } else {
        voxa_clear_error();
        blk[0] = o.mem_limit / (2 * s.Y * s.X * bpv); /* two slabs in flight */
        if (blk[0] < 1) blk[0] = 1;
        if (blk[0] > s.Z) blk[0] = s.Z;
    }
    walk w;
    memset(&w, 0, sizeof w);
    w.s = &s, w.image = image, w.labels = labels, w.nd = nd;
    memcpy(w.vol, vol, sizeof vol);
    memcpy(w.blk, blk, sizeof blk);
    for (int d = 0; d < 3; d++) w.grid[d] = (vol[d] + blk[d] - 1) / blk[d];
    w.nblocks = w.grid[0] * w.grid[1] * w.grid[2];
    for (int i = 0; i < 2 && st == VOXA_OK && (i == 0 || w.nblocks > 1); i++) {
        if (image) st = voxa_array_new(&w.ibuf[i], it, nd, blk + 3 - nd);
        if (st == VOXA_OK && labels) st = voxa_array_new(&w.lbuf[i], lt, nd, blk + 3 - nd);
    }
    if (st == VOXA_OK) st = read_block(&w, 0);
    /* block k is folded while block k + 1 is read (two buffers) */
    for (int64_t k = 0; st == VOXA_OK && k < w.nblocks; k++) {
        w.k = k;
        st = voxa__parallel_for(k + 1 < w.nblocks ? 2 : 1, 1, read_or_fold, &w);
        if (st == VOXA_OK) st = voxa__progress(&o.progress, k + 1, w.nblocks);
    }
    for (int i = 0; i < 2; i++) {
        voxa_array_free(&w.ibuf[i]);
        voxa_array_free(&w.lbuf[i]);
    }
    if (st != VOXA_OK) goto done;
    if (nd == 2) s.slc[0] = s.mip[0]; /* not drawn; keeps the free below simple */
    /* compose */
    {
        int64_t Yp = scaled(s.Y, sp[nd - 2] / sp[nd - 1]);
        int64_t Zp = nd == 3 ? scaled(s.Z, sp[0] / sp[2]) : 0;
        int64_t pw = nd == 3 ? s.X + GAP + Zp : s.X;
        int64_t H = nd == 3 ? Yp + GAP + Zp : Yp;
        int64_t W = nd == 3 ? 2 * pw + PANEL_GAP : pw;
        int64_t rs[3] = {H, W, 3};
        st = voxa_array_new(rgb, VOXA_U8, 3, rs);
        if (st != VOXA_OK) goto done;
        st = panel(&s, s.mip, rgb, 0, Yp, Zp, &o);
        if (st == VOXA_OK && nd == 3) st = panel(&s, s.slc, rgb, pw + PANEL_GAP, Yp, Zp, &o);
        if (st != VOXA_OK) goto done;
        if (o.spacing && s.X >= 20 && Yp >= 16) {
            double target = (double)s.X * sp[nd - 1] / 5.0;
            double base = pow(10.0, floor(log10(target)));
            double len = target >= 5 * base ? 5 * base : target >= 2 * base ? 2 * base : base;
            char text[32];
            snprintf(text, sizeof text, "%g", len);
            voxa__preview_scale_bar(rgb, Yp - 4, 4, (int64_t)lrint(len / sp[nd - 1]), text);
        }
    }
done:
    if (nd == 2) memset(&s.slc[0], 0, sizeof s.slc[0]);
    for (int i = 0; i < 3; i++) {
        view_free(&s.mip[i]);
        view_free(&s.slc[i]);
    }
    voxa__free(s.rowv);
    voxa__free(s.rowl);
    if (st != VOXA_OK) voxa_array_free(rgb);
    return st;
}
