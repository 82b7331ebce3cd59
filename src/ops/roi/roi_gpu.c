/* ROI extraction and paste-back on a GPU backend (kernels: roi.cl).
 *
 * The host part checks everything exactly as the CPU functions do (same
 * helpers, same messages), computes the n x k corners (centring and clip
 * shifts), uploads the array in C order and the corners, runs the kernels
 * and copies the result into the caller's view (any strides).
 *
 * Device memory: extract = array + patches + 8 n k bytes of corners;
 * paste = volume + patches + 4 bytes per volume voxel (the row that wins
 * each voxel) + corners. Paste runs OVERWRITE only on the GPU (add, max
 * and mean depend on the order of rounding or need per-dtype atomics:
 * EUNSUPPORTED, use the cpu backend). */
#include "roi_internal.h"
#include "backend/gpu.h"
#include "roi_gpu.h"

#include <string.h>

static const char *const ext_kernels[9] = {
    [1] = "vx_roi_extract_1", [2] = "vx_roi_extract_2", [4] = "vx_roi_extract_4",
    [8] = "vx_roi_extract_8"};
static const char *const paste_kernels[9] = {
    [1] = "vx_roi_paste_1", [2] = "vx_roi_paste_2", [4] = "vx_roi_paste_4",
    [8] = "vx_roi_paste_8"};

/* geom as documented in roi.cl; corners into a fresh n x k array. */
static voxa_status plan(const voxa_array *a, const voxa_roi_params *p, const int64_t *ext,
                        long mode, int64_t *geom, int64_t **corners) {
    memset(geom, 0, 28 * sizeof *geom);
    geom[0] = a->ndim;
    geom[1] = p->k;
    geom[2] = mode;
    int64_t P = 1, st = 1;
    for (int d = 0; d < a->ndim; d++) P *= ext[d];
    geom[3] = P;
    for (int d = a->ndim - 1; d >= 0; d--) {
        geom[4 + d] = a->shape[d];
        geom[12 + d] = ext[d];
        geom[20 + d] = st;
        st *= a->shape[d];
    }
    *corners = voxa__malloc((size_t)(p->n * p->k + 1), sizeof(int64_t));
    VOXA_FAIL_IF(!*corners, VOXA_ENOMEM, "roi: out of memory for %lld corners",
                 (long long)p->n);
    int64_t c[VOXA_MAXDIM];
    for (int64_t i = 0; i < p->n; i++) {
        voxa__roi_corner(a, p, i, c);
        memcpy(*corners + i * p->k, c, (size_t)p->k * sizeof *c);
    }
    return VOXA_OK;
}

voxa_status voxa__roi_extract_gpu(voxa_backend b, const voxa_array *in, const voxa_roi_params *p,
                                  voxa_array *out) {
    int64_t ext[VOXA_MAXDIM], geom[28], *corners = NULL;
    unsigned char fill[8] = {0};
    VOXA_CHECK(voxa__roi_check(in, "image", p, out, "out", 0, ext));
    if (p->mode == VOXA_ROI_CONSTANT) VOXA_CHECK(voxa__roi_fill_value(p->cval, in->dtype, fill));
    VOXA_CHECK(voxa__roi_validate_rows(in, p));
    int64_t total = voxa_array_size(out);
    size_t es = voxa_dtype_size(in->dtype);
    if (total == 0) return VOXA_OK;
    voxa_status st = VOXA_OK;
    voxa__gpu *g = NULL;
    voxa__buf din = {0}, dout = {0}, dc = {0}, dg = {0};
    voxa_array tmp = {0};
    const void *src;
    uint64_t fillv = 0;
    memcpy(&fillv, fill, 8);
    st = plan(in, p, ext, (long)p->mode, geom, &corners);
    if (st != VOXA_OK) goto done;
    st = voxa__gpu_host_contig(in, &src, &tmp);
    if (st != VOXA_OK) goto done;
    st = voxa__gpu_acquire(b, "extract", &g);
    if (st != VOXA_OK) goto done;
    size_t inb = (size_t)voxa_array_size(in) * es;
    if ((st = voxa__gpu_upload(g, src, inb, "extract: image", &din)) ||
        (st = voxa__gpu_upload(g, corners, (size_t)(p->n * p->k) * 8, "extract: coords", &dc)) ||
        (st = voxa__gpu_upload(g, geom, sizeof geom, "extract", &dg)) ||
        (st = voxa__gpu_alloc(g, (size_t)total * es, "extract: patches", &dout)))
        goto done;
    int64_t lines = total / ext[in->ndim - 1];
    voxa__arg args[] = {VX_ARG(dout.h), VX_ARG(din.h), VX_ARG(dc.h),
                        VX_ARG(dg.h),   VX_ARG(lines), VX_ARG(fillv)};
    if ((st = g->ops->launch(g, ext_kernels[es], lines, 6, args))) goto done;
    st = voxa__gpu_read_into(g, &dout, out);
done:
    voxa__gpu_free(g, &din);
    voxa__gpu_free(g, &dout);
    voxa__gpu_free(g, &dc);
    voxa__gpu_free(g, &dg);
    voxa__gpu_release(g);
    voxa_array_free(&tmp);
    voxa__free(corners);
    return st;
}

voxa_status voxa__roi_paste_gpu(voxa_backend b, voxa_array *vol, const voxa_array *patches,
                                const voxa_roi_params *p, voxa_paste_op op) {
    int64_t ext[VOXA_MAXDIM], geom[28], *corners = NULL;
    VOXA_FAIL_IF((unsigned)op >= VOXA_PASTE_NOPS, VOXA_EINVAL, "paste: invalid op %d", (int)op);
    VOXA_CHECK(voxa__roi_check(vol, "volume", p, patches, "patches", 1, ext));
    VOXA_CHECK(voxa__roi_validate_rows(vol, p));
    VOXA_FAIL_IF(op != VOXA_PASTE_OVERWRITE, VOXA_EUNSUPPORTED,
                 "paste: op %d is not on the GPU yet (overwrite only): use the cpu backend",
                 (int)op);
    VOXA_FAIL_IF(p->n > INT32_MAX, VOXA_EUNSUPPORTED,
                 "paste: %lld patches exceed the GPU path's 2^31 - 1 rows", (long long)p->n);
    int64_t total = voxa_array_size(patches), nvox = voxa_array_size(vol);
    size_t es = voxa_dtype_size(vol->dtype);
    if (total == 0 || nvox == 0) return VOXA_OK;
    voxa_status st = VOXA_OK;
    voxa__gpu *g = NULL;
    voxa__buf dv = {0}, dp = {0}, dw = {0}, dc = {0}, dg = {0};
    voxa_array tv = {0}, tp = {0};
    const void *vsrc, *psrc;
    /* mode 2 (constant) in the kernel: outside voxels map to -1 = skipped. */
    st = plan(vol, p, ext, 2, geom, &corners);
    if (st != VOXA_OK) goto done;
    if ((st = voxa__gpu_host_contig(vol, &vsrc, &tv)) ||
        (st = voxa__gpu_host_contig(patches, &psrc, &tp)))
        goto done;
    if ((st = voxa__gpu_acquire(b, "paste", &g))) goto done;
    if ((st = voxa__gpu_upload(g, vsrc, (size_t)nvox * es, "paste: volume", &dv)) ||
        (st = voxa__gpu_upload(g, psrc, (size_t)total * es, "paste: patches", &dp)) ||
        (st = voxa__gpu_upload(g, corners, (size_t)(p->n * p->k) * 8, "paste: coords", &dc)) ||
        (st = voxa__gpu_upload(g, geom, sizeof geom, "paste", &dg)) ||
        (st = voxa__gpu_alloc(g, (size_t)nvox * 4, "paste: row map", &dw)))
        goto done;
    int minus1 = -1;
    int64_t lines = total / ext[vol->ndim - 1];
    voxa__arg fa[] = {VX_ARG(dw.h), VX_ARG(nvox), VX_ARG(minus1)};
    voxa__arg ca[] = {VX_ARG(dw.h), VX_ARG(dc.h), VX_ARG(dg.h), VX_ARG(lines)};
    voxa__arg pa[] = {VX_ARG(dv.h), VX_ARG(dp.h), VX_ARG(dw.h),
                      VX_ARG(dc.h), VX_ARG(dg.h), VX_ARG(lines)};
    if ((st = g->ops->launch(g, "vx_fill_i32", nvox, 3, fa)) ||
        (st = g->ops->launch(g, "vx_roi_claim", lines, 4, ca)) ||
        (st = g->ops->launch(g, paste_kernels[es], lines, 6, pa)))
        goto done;
    st = voxa__gpu_read_into(g, &dv, vol);
done:
    voxa__gpu_free(g, &dv);
    voxa__gpu_free(g, &dp);
    voxa__gpu_free(g, &dw);
    voxa__gpu_free(g, &dc);
    voxa__gpu_free(g, &dg);
    voxa__gpu_release(g);
    voxa_array_free(&tv);
    voxa_array_free(&tp);
    voxa__free(corners);
    return st;
}

voxa_status voxa_roi_extract_on(voxa_backend b, const voxa_array *in, const voxa_roi_params *p,
                                voxa_array *out) {
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_roi_extract(in, p, out);
    return voxa__roi_extract_gpu(b, in, p, out);
}

voxa_status voxa_roi_paste_on(voxa_backend b, voxa_array *volume, const voxa_array *patches,
                              const voxa_roi_params *p, voxa_paste_op op) {
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_roi_paste(volume, patches, p, op);
    return voxa__roi_paste_gpu(b, volume, patches, p, op);
}
