/* Connected components on a GPU backend (kernels: label.cl).
 *
 * Same contract as voxa_label: the host checks the arguments with
 * voxa_label itself on an empty view of the same kind (same checks and
 * messages, no work), builds the full 3^ndim structure, pads 1-D and 2-D
 * to 3-D (the padded axes connect nothing), and keeps the 13 neighbours
 * before the centre as a bit mask. The input becomes a C-contiguous 0/1
 * byte mask (voxa__binary_view); the union-find, the root count per chunk,
 * its prefix sum and the numbering run on the device; only the number of
 * labels (8 bytes) comes back before the output. It is known before the
 * output is written, so EOVERFLOW leaves `out` untouched, as on the CPU.
 *
 * Device memory: 1 + 8 bytes per voxel, then 8 + out's element size once the
 * mask is freed, + 8 bytes per CHUNK voxels (the counts; their scan's upper
 * levels add 1/CHUNK of that again). */
#include "label_internal.h"
#include "backend/gpu.h"
#include "label_gpu.h"

#include <string.h>

#define CHUNK 512

int64_t voxa__label_dtype_max(voxa_dtype t) {
    switch (t) {
    case VOXA_I8: return INT8_MAX;
    case VOXA_U8: return UINT8_MAX;
    case VOXA_I16: return INT16_MAX;
    case VOXA_U16: return UINT16_MAX;
    case VOXA_I32: return INT32_MAX;
    case VOXA_U32: return UINT32_MAX;
    default: return INT64_MAX;
    }
}

static const char *const final_kernels[9] = {
    [1] = "vx_label_final_1", [2] = "vx_label_final_2", [4] = "vx_label_final_4",
    [8] = "vx_label_final_8"};

/* Bits 0..12 of the padded 3-D structure (neighbours before the centre). */
static unsigned neighbour_mask(int nd, const unsigned char *structure, int connectivity) {
    unsigned mask = 0;
    int pad = 3 - nd;
    for (int b = 0; b < 13; b++) {
        int off[3] = {b / 9 - 1, (b / 3) % 3 - 1, b % 3 - 1};
        int ok = 1, k = 0, dist = 0;
        for (int d = 0; d < pad; d++) ok &= off[d] == 0;
        if (!ok) continue;
        for (int d = pad; d < 3; d++) {
            k = k * 3 + off[d] + 1;
            dist += off[d] != 0;
        }
        if (structure ? structure[k] != 0 : dist <= connectivity) mask |= 1u << b;
    }
    return mask;
}

/* Label one C-contiguous 3-D mask `bin` of shape sh on the device: union-find,
 * roots counted per chunk, scipy's raster numbering. Without a map the labels
 * go to `out` in its dtype (EOVERFLOW, out untouched, when they do not fit);
 * with one, local label n becomes map[n - 1] (nmap = the tile's count).
 * *count receives the number of labels. */
voxa_status voxa__label_gpu_tile(voxa__gpu *g, const uint8_t *bin, const int64_t sh[3], int mask,
                                 const int64_t *map, int64_t nmap, voxa_array *out,
                                 int64_t *count) {
    return voxa__label_gpu_buffers(g, bin, NULL, sh, mask, map, nmap, out, NULL, count);
}

/* The levels of the device scan of nchunks root counts: level 0 is the
 * counts, level j + 1 the block sums of level j (CHUNK per block), the last
 * a single slot, the total; level j holds len[j] slots from off[j] of the
 * counts buffer. Returns the last level's index. */
static int scan_levels(int64_t nchunks, int64_t off[16], int64_t len[16]) {
    int k = 0;
    off[0] = 0;
    len[0] = nchunks;
    do {
        off[k + 1] = off[k] + len[k];
        len[k + 1] = (len[k] + CHUNK - 1) / CHUNK;
        k++;
    } while (len[k] > 1);
    return k;
}

int64_t voxa__label_gpu_count_bytes(int64_t v) {
    int64_t off[16], len[16];
    int k = scan_levels((v + CHUNK - 1) / CHUNK, off, len);
    return 8 * (off[k] + 1);
}

/* Exclusive prefix sum, on the device, of the nchunks counts at the start
 * of dc (sized by voxa__label_gpu_count_bytes); *total receives their sum. */
static voxa_status scan_counts(voxa__gpu *g, voxa__buf *dc, int64_t nchunks, int64_t *total) {
    int64_t off[16], len[16], block = CHUNK;
    int k = scan_levels(nchunks, off, len);
    voxa_status st;
    for (int j = 0; j < k; j++) { /* up: scan each level's blocks into the next level */
        voxa__arg a[] = {VX_ARG(dc->h), VX_ARG(off[j]), VX_ARG(len[j]), VX_ARG(block),
                         VX_ARG(dc->h), VX_ARG(off[j + 1])};
        if ((st = g->ops->launch(g, "vx_label_scan", len[j + 1], 6, a))) return st;
    }
    for (int j = k - 2; j >= 0; j--) { /* down: add the scanned block sums */
        voxa__arg a[] = {VX_ARG(dc->h), VX_ARG(off[j]), VX_ARG(len[j]), VX_ARG(block),
                         VX_ARG(dc->h), VX_ARG(off[j + 1])};
        if ((st = g->ops->launch(g, "vx_label_scan_add", len[j], 6, a))) return st;
    }
    return g->ops->read(g, dc, (size_t)off[k] * 8, total, 8);
}

voxa_status voxa__label_gpu_buffers(voxa__gpu *g, const uint8_t *bin, const voxa__buf *xmask,
                                    const int64_t sh[3], int mask, const int64_t *map,
                                    int64_t nmap, voxa_array *out, voxa__buf *xout,
                                    int64_t *count) {
    int64_t n = sh[0] * sh[1] * sh[2];
    int64_t chunk = CHUNK, nchunks = (n + CHUNK - 1) / CHUNK, total = 0;
    size_t es = voxa_dtype_size(out->dtype);
    voxa_status st = VOXA_OK;
    voxa__buf dm = {0}, dl = {0}, dc = {0}, dout = {0}, dmap = {0};
    if (xmask) dm = *xmask; /* a device array: borrowed, never freed here */
    if ((!xmask && (st = voxa__gpu_upload(g, bin, (size_t)n, "label: mask", &dm))) ||
        (st = voxa__gpu_alloc(g, (size_t)n * 8, "label: parents", &dl)) ||
        (st = voxa__gpu_alloc(g, (size_t)voxa__label_gpu_count_bytes(n), "label: counts", &dc)))
        goto done;
    voxa__arg ia[] = {VX_ARG(dm.h), VX_ARG(dl.h), VX_ARG(n)};
    voxa__arg ma[] = {VX_ARG(dm.h), VX_ARG(dl.h), VX_ARG(sh[0]), VX_ARG(sh[1]), VX_ARG(sh[2]),
                      VX_ARG(mask)};
    voxa__arg pa[] = {VX_ARG(dl.h), VX_ARG(n)};
    voxa__arg ca[] = {VX_ARG(dl.h), VX_ARG(n), VX_ARG(chunk), VX_ARG(dc.h), VX_ARG(nchunks)};
    if ((st = g->ops->launch(g, "vx_label_init", n, 3, ia)) ||
        (st = g->ops->launch(g, "vx_label_merge", n, 6, ma)) ||
        (st = g->ops->launch(g, "vx_label_compress", n, 2, pa)) ||
        (st = g->ops->launch(g, "vx_label_count", nchunks, 5, ca)) ||
        (st = scan_counts(g, &dc, nchunks, &total)))
        goto done;
    VOXA_GOTO_IF(!map && total > voxa__label_dtype_max(out->dtype), VOXA_EOVERFLOW,
                 "label: %lld labels do not fit the output dtype %s", (long long)total,
                 voxa_dtype_name(out->dtype));
    VOXA_GOTO_IF(map && total != nmap, VOXA_EINTERNAL,
                 "label: a tile gave %lld labels, %lld before", (long long)total,
                 (long long)nmap);
    voxa__arg ra[] = {VX_ARG(dl.h), VX_ARG(n), VX_ARG(chunk), VX_ARG(dc.h), VX_ARG(nchunks)};
    if ((st = g->ops->launch(g, "vx_label_rank", nchunks, 5, ra))) goto done;
    voxa__gpu_free(g, &dm); /* the mask is done with: room for the output */
    if (xout) dout = *xout;
    else if ((st = voxa__gpu_alloc(g, (size_t)n * es, "label: output", &dout))) goto done;
    if (map) {
        if ((st = voxa__gpu_upload(g, map, (size_t)(nmap ? nmap : 1) * 8, "label: tile map",
                                   &dmap)))
            goto done;
        static const char *const mapped[9] = {
            [1] = "vx_label_mapped_1", [2] = "vx_label_mapped_2", [4] = "vx_label_mapped_4",
            [8] = "vx_label_mapped_8"};
        voxa__arg fa[] = {VX_ARG(dl.h), VX_ARG(dmap.h), VX_ARG(dout.h), VX_ARG(n)};
        if ((st = g->ops->launch(g, mapped[es], n, 4, fa))) goto done;
    } else {
        voxa__arg fa[] = {VX_ARG(dl.h), VX_ARG(dout.h), VX_ARG(n)};
        if ((st = g->ops->launch(g, final_kernels[es], n, 3, fa))) goto done;
    }
    st = xout ? g->ops->finish(g) : voxa__gpu_read_into(g, &dout, out);
    if (st == VOXA_OK) *count = total;
done:
    voxa__gpu_free(g, &dm);
    voxa__gpu_free(g, &dl);
    voxa__gpu_free(g, &dc);
    voxa__gpu_free(g, &dout);
    voxa__gpu_free(g, &dmap);
    return st;
}

voxa_status voxa__label_gpu(voxa_backend b, const voxa_array *in, const unsigned char *structure,
                            int connectivity, voxa_array *out, int64_t *nlabels) {
    if (nlabels) *nlabels = 0;
    VOXA_FAIL_IF(!in, VOXA_EINVAL, "label: in is NULL");
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "label: out is NULL");
    VOXA_CHECK(voxa_array_check(in, "label: in"));
    VOXA_CHECK(voxa_array_check(out, "label: out"));
    if (!voxa__same_shape(in, out)) {
        char x[160], y[160];
        return voxa__error(VOXA_EINVAL, "label: out has shape %s, expected the shape of in %s",
                           voxa__shape_str(out, x, sizeof x), voxa__shape_str(in, y, sizeof y));
    }
    {   /* the CPU checks on empty views: dtypes, ndim, connectivity, structure */
        voxa_array ei = *in, eo = *out;
        if (in->ndim >= 1) ei.shape[0] = eo.shape[0] = 0;
        VOXA_CHECK(voxa_label(&ei, structure, connectivity, &eo, NULL));
    }
    VOXA_FAIL_IF(in->ndim > 3, VOXA_EUNSUPPORTED,
                 "label: %d-D input: the GPU path takes 1-D to 3-D (use the cpu backend)",
                 in->ndim);
    int64_t n = voxa_array_size(in);
    if (n == 0) return VOXA_OK;
    int nd = in->ndim, pad = 3 - nd;
    int64_t sh[3] = {1, 1, 1}, tile[3], total = 0, lim, largest;
    for (int d = 0; d < nd; d++) sh[pad + d] = in->shape[d];
    int mask = (int)neighbour_mask(nd, structure, connectivity);
    VOXA_CHECK(voxa__gpu_limits(b, &lim, &largest));
    int64_t ntiles = voxa__label_gpu_tiling(sh, voxa_dtype_size(out->dtype), lim, largest, tile);
    VOXA_FAIL_IF(ntiles < 1, VOXA_EUNSUPPORTED, "label: backend '%s': one voxel needs more "
                 "device memory than the limit (%lld bytes)", voxa_backend_name(b),
                 (long long)lim);
    voxa_status st = VOXA_OK;
    voxa__gpu *g = NULL;
    const uint8_t *bin = NULL;
    uint8_t *owned = NULL;
    if ((st = voxa__binary_view(in, &bin, &owned))) goto done;
    if ((st = voxa__gpu_acquire(b, "label", &g))) goto done;
    if (ntiles == 1)
        st = voxa__label_gpu_tile(g, bin, sh, mask, NULL, 0, out, &total);
    else
        st = voxa__label_gpu_tiled(g, bin, sh, tile, nd, structure, connectivity, mask, out,
                                   &total);
    if (st == VOXA_OK && nlabels) *nlabels = total;
done:
    voxa__gpu_release(g);
    voxa__free(owned);
    return st;
}

static voxa_array host_probe(const voxa_device_array *a) {
    voxa_array v;
    memset(&v, 0, sizeof v);
    v.dtype = a->dtype;
    v.ndim = a->ndim > 0 && a->ndim <= VOXA_MAXDIM ? a->ndim : 0;
    for (int d = 0; d < v.ndim; d++) v.shape[d] = a->shape[d];
    return v;
}

voxa_status voxa_label_device(const voxa_device_array *in, const unsigned char *structure,
                              int connectivity, voxa_device_array *out, int64_t *nlabels) {
    if (nlabels) *nlabels = 0;
    VOXA_FAIL_IF(!in, VOXA_EINVAL, "label: in is NULL");
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "label: out is NULL");
    VOXA_FAIL_IF(in->dtype != VOXA_BOOL && in->dtype != VOXA_U8, VOXA_EUNSUPPORTED,
                 "label: a device input must be bool or uint8 (got %s)",
                 voxa_dtype_name(in->dtype));
    voxa_array hi = host_probe(in), ho = host_probe(out);
    VOXA_FAIL_IF(hi.ndim != in->ndim || ho.ndim != out->ndim, VOXA_EINVAL,
                 "label: device array ndim out of range 1..%d", VOXA_MAXDIM);
    if (!voxa__same_shape(&hi, &ho)) {
        char x[160], y[160];
        return voxa__error(VOXA_EINVAL, "label: out has shape %s, expected the shape of in %s",
                           voxa__shape_str(&ho, x, sizeof x), voxa__shape_str(&hi, y, sizeof y));
    }
    {   /* the CPU checks on empty views: dtypes, ndim, connectivity, structure */
        hi.shape[0] = ho.shape[0] = 0;
        VOXA_CHECK(voxa_label(&hi, structure, connectivity, &ho, NULL));
    }
    VOXA_FAIL_IF(in->ndim > 3, VOXA_EUNSUPPORTED,
                 "label: %d-D input: the GPU path takes 1-D to 3-D", in->ndim);
    VOXA_FAIL_IF(in->backend != VOXA_BACKEND_CUDA || out->backend != VOXA_BACKEND_CUDA,
                 VOXA_EUNSUPPORTED, "label: device arrays are taken on the cuda backend only");
    int nd = in->ndim, pad = 3 - nd;
    int64_t sh[3] = {1, 1, 1}, n = 1, total = 0;
    for (int d = 0; d < nd; d++) n *= sh[pad + d] = in->shape[d];
    voxa__gpu *g = NULL;
    voxa__buf xm, xo;
    voxa_status st = voxa__gpu_acquire(VOXA_BACKEND_CUDA, "label", &g);
    if (st == VOXA_OK && n > 0 && (st = voxa__gpu_borrow(g, in, "label: in", &xm)) == VOXA_OK &&
        (st = voxa__gpu_borrow(g, out, "label: out", &xo)) == VOXA_OK) {
        voxa_array none = host_probe(out); /* dtype and size only: nothing is read back */
        st = voxa__label_gpu_buffers(g, NULL, &xm, sh,
                                     (int)neighbour_mask(nd, structure, connectivity), NULL, 0,
                                     &none, &xo, &total);
    }
    voxa__gpu_release(g);
    if (st == VOXA_OK && nlabels) *nlabels = total;
    return st;
}

voxa_status voxa_label_on(voxa_backend b, const voxa_array *in, const unsigned char *structure,
                          int connectivity, voxa_array *out, int64_t *nlabels) {
    if (nlabels) *nlabels = 0;
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_label(in, structure, connectivity, out, nlabels);
    return voxa__label_gpu(b, in, structure, connectivity, out, nlabels);
}
