/* The Euclidean distance transform on a GPU backend for a volume larger
 * than the device (or than VOXA_GPU_TILE_BYTES): separable passes by tiles,
 * equal to voxa_edt bit for bit.
 *
 * The transform is separable: the rows pass (last axis) reads the mask and
 * writes squared distances along each row, then each other axis, from the
 * second-last to the first, rewrites every line along that axis from the
 * values of the same line only. So a pass needs whole lines along its own
 * axis and nothing else: for each pass the volume is cut into tiles that
 * are whole along the pass's axis and halved along the other axes (axis 0
 * first) until a tile fits the device. Each tile is uploaded (the mask for
 * the rows pass, the float64 distances for the others), the pass runs on
 * the device with the same kernels as the one-run path (src/core/sqdt.cl
 * through voxa__gpu_sqdt_pass), and the tile is read back. Every line is
 * computed by the same kernel with the same operations in the same order,
 * so the result is the untiled result bit for bit. The last pass converts
 * on the device (sqrt, float32, uint32) and reads each tile straight into
 * the caller's view.
 *
 * Device memory per tile of v voxels: rows pass v + 8 v, lines pass 8 v +
 * at least one line of scratch (24 bytes per voxel of the line), + 4 v in
 * the last pass for a float32/uint32 output. Host: 8 bytes per voxel for
 * the distances between passes (the output itself when it is a C-ordered
 * float64 array). Cost: 8 V up and 8 V down per pass besides the kernels. */
#include "edt_gpu.h"
#include "backend/gpu_sqdt.h"

#include <math.h>
#include <string.h>

/* Device bytes of one tile of v voxels for the pass along `axis` (line
 * length len), and the scratch it may use. */
static void tile_bytes(int nd, int axis, int64_t v, int64_t len, voxa_dtype odt, int last,
                       int64_t *total, int64_t *largest) {
    int64_t emit = last && odt != VOXA_F64 ? 4 * v : 0, line = 24 * (len + 2);
    *total = axis == nd - 1 ? 9 * v + emit : 8 * v + line + emit;
    *largest = axis == nd - 1 || line < 8 * v ? 8 * v : line;
}

int64_t voxa__edt_gpu_pass_tiles(int nd, const int64_t *shape, voxa_dtype odt, int64_t lim,
                                 int64_t largest, int axis, int64_t *tile) {
    int last = axis == 0;
    for (int d = 0; d < nd; d++) tile[d] = shape[d];
    for (int d = 0; d <= nd; d++) {
        if (d == axis) continue;
        for (;;) {
            int64_t v = 1, t, l;
            for (int k = 0; k < nd; k++) v *= tile[k];
            tile_bytes(nd, axis, v, shape[axis], odt, last, &t, &l);
            if (t <= lim && l <= largest) goto found;
            if (d == nd || tile[d] == 1) break;
            tile[d] = (tile[d] + 1) / 2;
        }
    }
    return 0;
found:;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) n *= (shape[d] + tile[d] - 1) / tile[d];
    return n;
}

int64_t voxa__edt_gpu_tiles(int nd, const int64_t *shape, voxa_dtype odt, int64_t lim,
                            int64_t largest) {
    int64_t t, l, tile[VOXA_MAXDIM], n = 0;
    voxa__edt_gpu_bytes(nd, shape, odt, &t, &l);
    if (t <= lim && l <= largest) return 1;
    for (int axis = 0; axis < nd; axis++) {
        int64_t k = voxa__edt_gpu_pass_tiles(nd, shape, odt, lim, largest, axis, tile);
        if (!k) return 0;
        n += k;
    }
    return n;
}

/* Upload view `part` (any strides) into a new device buffer. */
static voxa_status upload_view(voxa__gpu *g, const voxa_array *part, const char *what,
                               voxa__buf *out) {
    const void *data;
    voxa_array tmp = {0};
    VOXA_CHECK(voxa__gpu_host_contig(part, &data, &tmp));
    voxa_status st = voxa__gpu_upload(
        g, data, (size_t)voxa_array_size(part) * voxa_dtype_size(part->dtype), what, out);
    voxa_array_free(&tmp);
    return st;
}

/* The last pass's conversion of tile buffer df (n voxels) into view ov. */
static voxa_status emit(voxa__gpu *g, voxa__buf *df, int64_t n, int squared, voxa_array *ov) {
    if (ov->dtype == VOXA_F64) {
        voxa__arg a[] = {VX_ARG(df->h), VX_ARG(n)};
        if (!squared) VOXA_CHECK(g->ops->launch(g, "vx_sqdt_emit_f64", n, 2, a));
        return voxa__gpu_read_into(g, df, ov);
    }
    voxa__buf dout = {0};
    VOXA_CHECK(voxa__gpu_alloc(g, (size_t)n * 4, "edt: output", &dout));
    const char *k = ov->dtype == VOXA_U32 ? "vx_sqdt_emit_u32"
                    : squared             ? "vx_sqdt_emit_f32sq"
                                          : "vx_sqdt_emit_f32";
    voxa__arg a[] = {VX_ARG(df->h), VX_ARG(dout.h), VX_ARG(n)};
    voxa_status st = g->ops->launch(g, k, n, 3, a);
    if (st == VOXA_OK) st = voxa__gpu_read_into(g, &dout, ov);
    voxa__gpu_free(g, &dout);
    return st;
}

voxa_status voxa__edt_gpu_tiled(voxa__gpu *g, const uint8_t *mask, voxa_array *out,
                                const voxa_edt_params *p, int64_t lim, int64_t largest) {
    int nd = out->ndim;
    const int64_t *shape = out->shape;
    int64_t n = voxa_array_size(out), tile[VOXA_MAXDIM];
    voxa_status st = VOXA_OK;
    double *host = NULL, *f;
    voxa__buf dm = {0}, df = {0};
    if (out->dtype == VOXA_F64 && voxa_array_is_c_contiguous(out)) {
        f = out->data; /* the distances between passes live in the output */
    } else {
        f = host = voxa__malloc((size_t)n, 8);
        VOXA_FAIL_IF(!f, VOXA_ENOMEM, "edt: out of host memory for %lld distances",
                     (long long)n);
    }
    voxa_array mv, fv;
    if ((st = voxa_array_view(&mv, (void *)mask, VOXA_U8, nd, shape)) ||
        (st = voxa_array_view(&fv, f, VOXA_F64, nd, shape)))
        goto done;
    for (int axis = nd - 1; axis >= 0 && st == VOXA_OK; axis--) {
        int64_t nt = voxa__edt_gpu_pass_tiles(nd, shape, out->dtype, lim, largest, axis, tile);
        VOXA_GOTO_IF(!nt, VOXA_EUNSUPPORTED, "edt: one line of %lld voxels along axis %d "
                     "needs more device memory than the limit (%lld bytes)",
                     (long long)shape[axis], axis, (long long)lim);
        int64_t nb[VOXA_MAXDIM], idx[VOXA_MAXDIM] = {0};
        for (int d = 0; d < nd; d++) nb[d] = (shape[d] + tile[d] - 1) / tile[d];
        for (int64_t k = 0; k < nt; k++) {
            int64_t s[VOXA_MAXDIM], len[VOXA_MAXDIM], v = 1;
            for (int d = 0; d < nd; d++) {
                s[d] = idx[d] * tile[d];
                len[d] = shape[d] - s[d] < tile[d] ? shape[d] - s[d] : tile[d];
                v *= len[d];
            }
            voxa__gpu_sqdt q;
            memset(&q, 0, sizeof q);
            q.ndim = nd;
            memcpy(q.shape, len, sizeof(int64_t) * (size_t)nd);
            q.src = &dm;
            q.spacing = p->spacing;
            q.cap = INFINITY;
            voxa_array fpart = voxa__subview(&fv, s, len);
            if (axis == nd - 1) {
                voxa_array mpart = voxa__subview(&mv, s, len);
                if ((st = upload_view(g, &mpart, "edt: mask", &dm)) ||
                    (st = voxa__gpu_alloc(g, (size_t)v * 8, "edt: distances", &df)))
                    goto done;
            } else if ((st = upload_view(g, &fpart, "edt: distances", &df))) {
                goto done;
            }
            int64_t t, l;
            tile_bytes(nd, axis, v, len[axis], out->dtype, axis == 0, &t, &l);
            int64_t cap = lim - (t - 24 * (len[axis] + 2));
            if (cap > largest) cap = largest;
            if ((st = voxa__gpu_sqdt_pass(g, &q, &df, axis, cap))) goto done;
            voxa__gpu_free(g, &dm);
            if (axis == 0) {
                voxa_array opart = voxa__subview(out, s, len);
                st = emit(g, &df, v, p->squared, &opart);
            } else {
                st = voxa__gpu_read_into(g, &df, &fpart);
            }
            voxa__gpu_free(g, &df);
            if (st) goto done;
            for (int d = nd - 1; d >= 0; d--) {
                if (++idx[d] < nb[d]) break;
                idx[d] = 0;
            }
        }
    }
done:
    voxa__gpu_free(g, &dm);
    voxa__gpu_free(g, &df);
    voxa__free(host);
    return st;
}
