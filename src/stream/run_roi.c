/* Patches by batches (the `roi` op, extract_patches) and paste-back by
 * output blocks (the `paste` op): neither holds the volume nor the whole
 * patch array, and both equal the in-memory op voxel for voxel.
 *
 * roi: the output (N, *size, *rest) is written in batches of block[0] rows,
 * in the order given. For a batch, each patch needs a source box of the
 * input: the patch itself when inside (or shifted inside, mode clip), its
 * part inside the volume (constant), the nearest edge voxels (nearest), or
 * the span of the mirrored indices, anchored at the edge it crosses
 * (reflect). From a chunked (Zarr) input the batch's boxes are grouped by
 * the storage chunks they touch: every touched chunk is read (decoded) once
 * per batch and copied into each box that needs it; chunks no patch
 * touches are never read. A .npy input is read the same way in slabs of
 * whole rows (about 4 MiB: few, long preads). The patch is then cut from its box by
 * voxa_roi_extract with the same mode: a box reaches the volume's edge on
 * every side where its patch crosses it, so padding gives the same voxels.
 * Memory: a batch of patches and their boxes (about 2 x the batch's output)
 * plus one chunk; I/O: the touched chunks, once per batch that touches them.
 *
 * paste: the output is cut in blocks; for each, the rows whose (clipped)
 * patch meets the block are read from the patch array (row order kept) and
 * pasted by voxa_roi_paste into the block (the --volume's part, or zeros)
 * with corners relative to the block and mode crop: overwrite (later rows
 * win), add, max and mean (per voxel, over the patches covering it) give
 * the in-memory voxels. Memory: one block plus the patches meeting it. */
#include "op_args.h"
#include "stream_ops.h"
#include "voxa/roi.h"

#include <stdlib.h>
#include <string.h>

enum { M_ERROR, M_CLIP, M_CONSTANT, M_NEAREST, M_REFLECT };

#define SLAB ((int64_t)4 << 20) /* bytes of a .npy input read at once */

static const voxa_value *arg(const voxa_args *a, const char *name) {
    const voxa_value *v = voxa_args_get(a, name);
    return v && v->set ? v : NULL;
}

/* n x k int64 coordinates of the table the arguments give (*centered: they
 * are centres); k = 0 on entry: as many columns as the table has. */
static voxa_status load(const voxa_args *a, int *k, int64_t **out, int64_t *n, int *centered) {
    int i = voxa_op_param(a->op, "corners");
    *centered = 0;
    if (!a->v[i].set) {
        i = voxa_op_param(a->op, "centres");
        *centered = 1;
    }
    if (*k == 0) *k = voxa__table_ncoords(&a->v[i]);
    double *v = NULL;
    *out = NULL;
    VOXA_CHECK(voxa__table_coords(a, i, *k, &v, n));
    voxa_status st = VOXA_OK;
    *out = malloc((size_t)(*n * *k + 1) * sizeof **out);
    if (!*out) st = voxa__error(VOXA_ENOMEM, "coords: out of memory");
    if (st == VOXA_OK) st = voxa_roi_coords_from_doubles(v, *n, *k, *centered, *out);
    free(v);
    if (st != VOXA_OK) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* Check the corners against the volume (mode error: inside; clip: shift
 * inside) as the in-memory ops do, and turn them into whole-volume corners
 * on every axis (k..ndim-1: 0). cs: n x nd. */
static voxa_status corners(const int64_t *c, int64_t n, int k, int centered, const int64_t *size,
                           int nd, const int64_t *shape, int mode, int crop_ok, int64_t *cs) {
    for (int64_t r = 0; r < n; r++)
        for (int d = 0; d < nd; d++) {
            int64_t lo = d < k ? c[r * k + d] : 0, s = d < k ? size[d] : shape[d], hi;
            VOXA_FAIL_IF((d < k && centered && __builtin_sub_overflow(lo, s / 2, &lo)) ||
                             __builtin_add_overflow(lo, s, &hi),
                         VOXA_EOVERFLOW,
                         "coords: row %lld, column %d = %lld overflows int64 with size %lld",
                         (long long)r, d, (long long)lo, (long long)s);
            if (mode == M_ERROR && (lo < 0 || hi > shape[d]))
                return voxa__error(VOXA_EINVAL, "coords: row %lld reaches outside the array on "
                                   "axis %d: [%lld, %lld) but the axis has length %lld (mode "
                                   "'error'; choose another mode to %s)", (long long)r, d,
                                   (long long)lo, (long long)hi, (long long)shape[d],
                                   crop_ok ? "clip or crop" : "clip or pad");
            if (mode == M_CLIP) {
                VOXA_FAIL_IF(s > shape[d], VOXA_EINVAL, "size[%d] = %lld exceeds the array's "
                             "axis %d of length %lld: mode 'clip' cannot shift the patch of "
                             "row %lld inside", d, (long long)s, d, (long long)shape[d],
                             (long long)r);
                if (lo > shape[d] - s) lo = shape[d] - s;
                if (lo < 0) lo = 0;
            }
            cs[r * nd + d] = lo;
        }
    return VOXA_OK;
}

/* ---- roi ------------------------------------------------------------------- */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The source box [blo, bhi) of a patch [lo, lo + s) on an axis of length n. */
static void box_axis(int mode, int64_t lo, int64_t s, int64_t n, int64_t *blo, int64_t *bhi) {
    int64_t hi = lo + s;
    if (s == 0 || (lo >= 0 && hi <= n)) {
        *blo = s == 0 ? 0 : lo;
        *bhi = s == 0 ? 0 : hi;
    } else if (mode == M_CONSTANT) {
        *blo = clamp(lo, 0, n);
        *bhi = clamp(hi, *blo, n);
    } else if (mode == M_NEAREST) {
        *blo = clamp(lo, 0, n - 1);
        *bhi = clamp(hi - 1, 0, n - 1) + 1;
    } else if (lo < 0 && hi > n) { /* reflect, both sides */
        *blo = 0;
        *bhi = n;
    } else if (lo < 0) { /* reflect on the low side: indices -1.. map to 1.. */
        *blo = 0;
        *bhi = clamp(hi > 1 - lo ? hi : 1 - lo, 1, n);
    } else { /* reflect on the high side */
        *blo = clamp(lo < 2 * n - 1 - hi ? lo : 2 * n - 1 - hi, 0, n - 1);
        *bhi = n;
    }
}

typedef struct roi_job {
    int nd, k, mode;
    int64_t n, size[VOXA_MAXDIM], ext[VOXA_MAXDIM];
    int64_t *cs;  /* n x nd whole-volume corners */
    double cval;
} roi_job;

static int64_t patch_bytes(const voxa_stream_plan *p) {
    int64_t b = (int64_t)voxa_dtype_size(p->out_dtype);
    for (int d = 1; d < p->ndim; d++) b *= p->shape[d];
    return b;
}

/* Bytes of the buffer one chunk (Zarr) or slab (.npy) of the input takes
 * with batches of `batch` bytes: a slab is at most SLAB and the batch, at
 * least one slice. */
static int64_t unit_bytes(voxa_store *in, int64_t batch) {
    int64_t b = (int64_t)voxa_dtype_size(in->t);
    voxa_zarr_info info;
    if (in->kind == STORE_ZARR && voxa_zarr_get_info(in->zarr, &info) == VOXA_OK) {
        for (int d = 0; d < in->ndim; d++) b *= info.chunks[d];
        return b;
    }
    if (in->kind != STORE_NPY) return 0;
    for (int d = 1; d < in->ndim; d++) b *= in->shape[d];
    int64_t want = batch < SLAB ? batch : SLAB;
    return b > want ? b : want;
}

int voxa__roi_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                   int64_t limit, voxa_stream_plan *p) {
    if (!in) return 0;
    int64_t pb = patch_bytes(p), rows = p->shape[0];
    int64_t fixed = rows * (int64_t)(in->ndim + 1) * 8; /* the corners */
    for (int d = 0; d < p->ndim; d++) p->block[d] = p->shape[d] > 0 ? p->shape[d] : 1;
    int64_t want = o ? o->block[0] : 0;
    p->block[0] = want > 0 && want < rows ? want : rows > 0 ? rows : 1;
#define ROI_COST(B) (2 * (B) * pb + fixed + unit_bytes(in, 2 * (B) * pb))
    if (!voxa__blocks_given(o, p->ndim))
        while (p->block[0] > 1 && ROI_COST(p->block[0]) > limit) p->block[0] = (p->block[0] + 1) / 2;
    voxa__plan_grid(p);
    p->peak_bytes = ROI_COST(p->block[0]);
#undef ROI_COST
    (void)a;
    return 1;
}

/* Copy the part of chunk `cv` (at clo) inside box b (at blo) into the box. */
static voxa_status copy_overlap(const voxa_array *cv, const int64_t *clo, voxa_array *bv,
                                const int64_t *blo) {
    int nd = cv->ndim;
    int64_t a[VOXA_MAXDIM], sh[VOXA_MAXDIM], ca[VOXA_MAXDIM], ba[VOXA_MAXDIM];
    for (int d = 0; d < nd; d++) {
        a[d] = clo[d] > blo[d] ? clo[d] : blo[d];
        int64_t e = clo[d] + cv->shape[d] < blo[d] + bv->shape[d] ? clo[d] + cv->shape[d]
                                                                  : blo[d] + bv->shape[d];
        if (e <= a[d]) return VOXA_OK;
        sh[d] = e - a[d];
        ca[d] = a[d] - clo[d];
        ba[d] = a[d] - blo[d];
    }
    voxa_array src = voxa__subview(cv, ca, sh), dst = voxa__subview(bv, ba, sh);
    return voxa__copy_view(&src, &dst);
}

static int cmp_pair(const void *x, const void *y) {
    const int64_t *a = x, *b = y;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* Fill the batch's boxes: chunk by chunk (Zarr chunks; .npy slabs of whole
 * rows), or box by box (inputs in memory). */
static voxa_status read_boxes(voxa_store *in, int64_t m, const int64_t *blo, const int64_t *bsh,
                              voxa_array *bv, int64_t batch) {
    int nd = in->ndim;
    voxa_zarr_info info;
    if (in->kind == STORE_NPY) {
        /* slabs of whole rows of about SLAB bytes: long preads, each once */
        int64_t slice = (int64_t)voxa_dtype_size(in->t), slab = unit_bytes(in, batch);
        for (int d = 1; d < nd; d++) slice *= in->shape[d];
        memcpy(info.chunks, in->shape, sizeof info.chunks);
        info.chunks[0] = slice > 0 && slab / slice > 1 ? slab / slice : 1;
    } else if (in->kind != STORE_ZARR || voxa_zarr_get_info(in->zarr, &info) != VOXA_OK) {
        for (int64_t i = 0; i < m; i++) /* in memory: copy each box */
            if (voxa_array_size(&bv[i]) > 0) VOXA_CHECK(voxa_store_read(in, blo + i * nd, &bv[i]));
        return VOXA_OK;
    }
    for (int d = 0; d < nd; d++)
        if (info.chunks[d] < 1) info.chunks[d] = 1;
    /* (chunk, box) pairs, sorted by chunk: each chunk read once */
    int64_t npairs = 0, cap = 0, *pairs = NULL;
    voxa_status st = VOXA_OK;
    for (int64_t i = 0; st == VOXA_OK && i < m; i++) {
        if (voxa_array_size(&bv[i]) == 0) continue;
        int64_t c0[VOXA_MAXDIM], c1[VOXA_MAXDIM], c[VOXA_MAXDIM];
        for (int d = 0; d < nd; d++) {
            c[d] = c0[d] = blo[i * nd + d] / info.chunks[d];
            c1[d] = (blo[i * nd + d] + bsh[i * nd + d] - 1) / info.chunks[d];
        }
        for (;;) {
            if (npairs == cap) {
                cap = cap ? 2 * cap : 1024;
                int64_t *np = realloc(pairs, (size_t)cap * 2 * sizeof *np);
                if (!np) {
                    st = voxa__error(VOXA_ENOMEM, "roi: out of memory for the chunk list");
                    break;
                }
                pairs = np;
            }
            int64_t id = 0;
            for (int d = 0; d < nd; d++) {
                int64_t g = (in->shape[d] + info.chunks[d] - 1) / info.chunks[d];
                id = id * g + c[d];
            }
            pairs[2 * npairs] = id;
            pairs[2 * npairs + 1] = i;
            npairs++;
            int d = nd - 1;
            for (; d >= 0; d--) {
                if (++c[d] <= c1[d]) break;
                c[d] = c0[d];
            }
            if (d < 0) break;
        }
    }
    if (st == VOXA_OK && npairs > 1) qsort(pairs, (size_t)npairs, 2 * sizeof *pairs, cmp_pair);
    voxa_array chunk = {0};
    if (st == VOXA_OK && npairs) st = voxa_array_new(&chunk, in->t, nd, info.chunks);
    for (int64_t k = 0; st == VOXA_OK && k < npairs;) {
        int64_t id = pairs[2 * k], clo[VOXA_MAXDIM], csh[VOXA_MAXDIM], r = id;
        for (int d = nd - 1; d >= 0; d--) {
            int64_t g = (in->shape[d] + info.chunks[d] - 1) / info.chunks[d];
            clo[d] = (r % g) * info.chunks[d];
            r /= g;
            csh[d] = clo[d] + info.chunks[d] <= in->shape[d] ? info.chunks[d] : in->shape[d] - clo[d];
        }
        voxa_array cv = voxa__shaped(&chunk, nd, csh);
        st = voxa_store_read(in, clo, &cv);
        for (; st == VOXA_OK && k < npairs && pairs[2 * k] == id; k++) {
            int64_t i = pairs[2 * k + 1];
            st = copy_overlap(&cv, clo, &bv[i], blo + i * nd);
        }
    }
    voxa_array_free(&chunk);
    free(pairs);
    return st;
}

voxa_status voxa__stream_roi(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                             voxa_store *out, const voxa_progress *progress) {
    int nd = in->ndim;
    const voxa_value *size = arg(a, "size");
    roi_job j;
    memset(&j, 0, sizeof j);
    j.nd = nd;
    j.k = size->n;
    j.mode = (int)arg(a, "mode")->i;
    j.cval = arg(a, "value") ? arg(a, "value")->f : 0.0;
    for (int d = 0; d < nd; d++) j.ext[d] = d < j.k ? size->iv[d] : in->shape[d];
    int64_t *c = NULL, *blo = NULL, *bsh = NULL;
    char *boxes = NULL;
    voxa_array *bv = NULL, obuf = {0};
    int centered;
    VOXA_CHECK(load(a, &j.k, &c, &j.n, &centered));
    voxa_status st = VOXA_OK;
    j.cs = malloc((size_t)(j.n * nd + 1) * sizeof *j.cs);
    if (!j.cs) st = voxa__error(VOXA_ENOMEM, "roi: out of memory for %lld rows", (long long)j.n);
    if (st == VOXA_OK)
        st = corners(c, j.n, j.k, centered, size->iv, nd, in->shape, j.mode, 0, j.cs);
    for (int d = 0; st == VOXA_OK && d < nd; d++)
        if ((j.mode == M_NEAREST || j.mode == M_REFLECT) && j.n > 0 && in->shape[d] == 0 &&
            j.ext[d] > 0)
            st = voxa__error(VOXA_EINVAL, "extract: mode '%s' cannot pad axis %d of length 0 "
                             "(use constant)", j.mode == M_NEAREST ? "nearest" : "reflect", d);
    int64_t B = p->block[0], pb = patch_bytes(p), es = (int64_t)voxa_dtype_size(in->t);
    if (st == VOXA_OK) st = voxa_array_new(&obuf, p->out_dtype, p->ndim, p->block);
    blo = malloc((size_t)(B * nd + 1) * sizeof *blo);
    bsh = malloc((size_t)(B * nd + 1) * sizeof *bsh);
    bv = calloc((size_t)B, sizeof *bv);
    boxes = malloc((size_t)(B * pb + 1) * 2); /* reflect boxes may exceed the patch */
    int64_t boxcap = B * pb * 2;
    if (st == VOXA_OK && (!blo || !bsh || !bv || !boxes))
        st = voxa__error(VOXA_ENOMEM, "roi: out of memory for a batch of %lld patches",
                         (long long)B);
    for (int64_t r0 = 0; st == VOXA_OK && r0 < j.n; r0 += B) {
        int64_t m = j.n - r0 < B ? j.n - r0 : B, used = 0;
        for (int64_t i = 0; i < m && st == VOXA_OK; i++) {
            int64_t bytes = es;
            for (int d = 0; d < nd; d++) {
                int64_t lo, hi;
                box_axis(d < j.k ? j.mode : M_ERROR, j.cs[(r0 + i) * nd + d], j.ext[d],
                         in->shape[d], &lo, &hi);
                blo[i * nd + d] = lo;
                bsh[i * nd + d] = hi - lo;
                bytes *= hi - lo;
            }
            if (used + bytes > boxcap) { /* grow (reflect boxes larger than patches) */
                char *nb = realloc(boxes, (size_t)(used + bytes) * 2);
                if (!nb) {
                    st = voxa__error(VOXA_ENOMEM, "roi: out of memory for source boxes");
                    break;
                }
                boxes = nb;
                boxcap = (used + bytes) * 2;
            }
            bv[i].dtype = in->t; /* data set below, once the buffer stops moving */
            used += bytes;
        }
        used = 0;
        for (int64_t i = 0; i < m && st == VOXA_OK; i++) {
            voxa_array_view(&bv[i], boxes + used, in->t, nd, bsh + i * nd);
            used += voxa_array_size(&bv[i]) * es;
        }
        if (st == VOXA_OK) st = read_boxes(in, m, blo, bsh, bv, 2 * B * pb);
        int64_t oshape[VOXA_MAXDIM];
        memcpy(oshape, p->shape, sizeof oshape);
        oshape[0] = m;
        voxa_array ov = voxa__shaped(&obuf, p->ndim, oshape);
        for (int64_t i = 0; i < m && st == VOXA_OK; i++) {
            int64_t rel[VOXA_MAXDIM], one[VOXA_MAXDIM + 1] = {1}, z[VOXA_MAXDIM + 1] = {0};
            for (int d = 0; d < nd; d++) rel[d] = j.cs[(r0 + i) * nd + d] - blo[i * nd + d];
            memcpy(one + 1, j.ext, sizeof(int64_t) * (size_t)nd);
            z[0] = i;
            voxa_array slot = voxa__subview(&ov, z, one);
            voxa_roi_params rp = {rel, 1, nd, j.ext, 0,
                                  j.mode == M_CLIP ? VOXA_ROI_ERROR : (voxa_roi_mode)j.mode,
                                  j.cval};
            st = voxa_roi_extract(&bv[i], &rp, &slot);
        }
        int64_t at[VOXA_MAXDIM] = {0};
        at[0] = r0;
        if (st == VOXA_OK && m > 0) st = voxa_store_write(out, at, &ov);
        if (st == VOXA_OK) st = voxa__progress(progress, r0 + m, j.n);
    }
    free(c);
    free(j.cs);
    free(blo);
    free(bsh);
    free(bv);
    free(boxes);
    voxa_array_free(&obuf);
    return st;
}

/* ---- paste ------------------------------------------------------------------ */

int voxa__paste_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                     int64_t limit, voxa_stream_plan *p) {
    if (!in) return 0;
    (void)a;
    int64_t es = (int64_t)voxa_dtype_size(p->out_dtype);
    for (int d = 0; d < p->ndim; d++) {
        int64_t want = o ? o->block[d] : 0;
        p->block[d] = want > 0 && want < p->shape[d] ? want : p->shape[d] > 0 ? p->shape[d] : 1;
    }
    /* the block, MEAN's 12 bytes per voxel, and as much again for patches */
    int64_t per = 2 * es + 12;
    if (!voxa__blocks_given(o, p->ndim))
        for (int d = 0; d < p->ndim; d++)
            while (p->block[d] > 1) {
                int64_t n = per;
                for (int e = 0; e < p->ndim; e++) n *= p->block[e];
                if (n <= limit) break;
                p->block[d] = (p->block[d] + 1) / 2;
            }
    voxa__plan_grid(p);
    p->peak_bytes = per;
    for (int d = 0; d < p->ndim; d++) p->peak_bytes *= p->block[d];
    return 1;
}

voxa_status voxa__stream_paste(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                               voxa_store *out, const voxa_progress *progress) {
    int nd = p->ndim;
    VOXA_FAIL_IF(in->ndim != nd + 1, VOXA_EINVAL, "patches: %d dimensions and the volume %d: "
                 "expected (N, *size, *rest) with %d", in->ndim, nd, nd + 1);
    const voxa_value *vol = arg(a, "volume");
    int mode = (int)arg(a, "mode")->i; /* error, clip, crop */
    int op = (int)arg(a, "op")->i;
    int k = 0, centered;
    int64_t n = 0, *c = NULL, *cs = NULL;
    VOXA_CHECK(load(a, &k, &c, &n, &centered));
    voxa_status st = VOXA_OK;
    if (k > nd)
        st = voxa__error(VOXA_EINVAL, "coords: %d coordinate columns but the volume has %d "
                         "dimensions", k, nd);
    VOXA_GOTO_IF(st == VOXA_OK && in->shape[0] != n, VOXA_EINVAL,
                 "paste: patches has %lld rows, the coordinates %lld", (long long)in->shape[0],
                 (long long)n);
    int64_t ext[VOXA_MAXDIM], rowshape[VOXA_MAXDIM + 1], rowbytes = 0;
    for (int d = 0; st == VOXA_OK && d < nd; d++) {
        ext[d] = in->shape[d + 1];
        VOXA_GOTO_IF(d >= k && ext[d] != p->shape[d], VOXA_EINVAL,
                     "paste: patches have %lld voxels on axis %d, the volume %lld", (long long)ext[d],
                     d + 1, (long long)p->shape[d]);
    }
    cs = malloc((size_t)(n * nd + 1) * sizeof *cs);
    VOXA_GOTO_IF(!cs, VOXA_ENOMEM, "paste: out of memory for %lld rows", (long long)n);
    if (st == VOXA_OK)
        st = corners(c, n, k, centered, ext, nd, p->shape, mode == 2 ? M_CONSTANT : mode, 1, cs);
    if (st != VOXA_OK) goto done;
    rowshape[0] = 1;
    memcpy(rowshape + 1, ext, sizeof(int64_t) * (size_t)nd);
    rowbytes = (int64_t)voxa_dtype_size(in->t);
    for (int d = 0; d < nd; d++) rowbytes *= ext[d];
    voxa_array blk = {0};
    char *pbuf = NULL;
    int64_t *rel = NULL, pcap = 0;
    static const uint64_t zero = 0;
    st = voxa_array_new(&blk, p->out_dtype, nd, p->block);
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], sh[VOXA_MAXDIM], m = 0;
        voxa__block_region(p, b, lo, sh);
        voxa_array bv = voxa__shaped(&blk, nd, sh);
        if (vol) {
            voxa_array part = voxa__subview(&vol->array, lo, sh);
            st = voxa__copy_view(&part, &bv);
        } else {
            voxa_array zv = bv;
            zv.data = (void *)&zero;
            for (int d = 0; d < nd; d++) zv.strides[d] = 0;
            st = voxa__copy_view(&zv, &bv);
        }
        for (int64_t r = 0; st == VOXA_OK && r < n; r++) {
            int meets = 1;
            for (int d = 0; d < nd && meets; d++)
                meets = ext[d] > 0 && cs[r * nd + d] < lo[d] + sh[d] && cs[r * nd + d] + ext[d] > lo[d];
            if (!meets) continue;
            if (m == pcap) {
                int64_t ncap = pcap ? 2 * pcap : 16;
                char *nb = realloc(pbuf, (size_t)(ncap * rowbytes));
                int64_t *nr = realloc(rel, (size_t)(ncap * nd) * sizeof *nr);
                if (nb) pbuf = nb;
                if (nr) rel = nr;
                if (!nb || !nr) {
                    st = voxa__error(VOXA_ENOMEM, "paste: out of memory for the patches of a block");
                    break;
                }
                pcap = ncap;
            }
            voxa_array row;
            voxa_array_view(&row, pbuf + m * rowbytes, in->t, nd + 1, rowshape);
            int64_t at[VOXA_MAXDIM] = {0};
            at[0] = r;
            st = voxa_store_read(in, at, &row);
            for (int d = 0; d < nd; d++) rel[m * nd + d] = cs[r * nd + d] - lo[d];
            m++;
        }
        if (st == VOXA_OK && m > 0) {
            int64_t pshape[VOXA_MAXDIM + 1];
            memcpy(pshape, rowshape, sizeof pshape);
            pshape[0] = m;
            voxa_array pv;
            voxa_array_view(&pv, pbuf, in->t, nd + 1, pshape);
            voxa_roi_params rp = {rel, m, nd, ext, 0, VOXA_ROI_CROP, 0};
            st = voxa_roi_paste(&bv, &pv, &rp, (voxa_paste_op)op);
        }
        if (st == VOXA_OK) st = voxa_store_write(out, lo, &bv);
        if (st == VOXA_OK) st = voxa__progress(progress, b + 1, p->nblocks);
    }
    voxa_array_free(&blk);
    free(pbuf);
    free(rel);
done:
    free(c);
    free(cs);
    return st;
}
