/* The Euclidean distance transform on a GPU backend (kernels:
 * src/core/sqdt.cl through src/backend/gpu_sqdt.c).
 *
 * Same contract as voxa_edt: the arguments are checked by voxa_edt itself on
 * empty views (same checks and messages, no work). The input becomes a
 * C-contiguous 0/1 byte mask on the host (voxa__binary_view) and is
 * uploaded; the squared distances to the background are computed on the
 * device in float64 by the same passes, in the same order and with the same
 * rounding as the CPU's double path, then turned into the output dtype on
 * the device and read back into the caller's view (any strides). So the
 * result equals voxa_edt bit for bit, float64, float32 and uint32 alike.
 * An input without background is scipy's special case (distances from
 * index (-1, 0, ..., 0)): the CPU computes it, there is nothing to search.
 *
 * Device memory: V (mask) + 8 V (distances) + the line scratch (at most
 * VOXA__GPU_SQDT_SCRATCH), then 8 V + 4 V for a float32/uint32 output. A
 * volume above the device limits (voxa__gpu_limits) runs its passes by
 * tiles instead (edt_gpu_tiled.c), with the same result. */
#include "edt_gpu.h"
#include "backend/gpu_sqdt.h"

#include <math.h>
#include <string.h>

void voxa__edt_gpu_bytes(int ndim, const int64_t *shape, voxa_dtype out_dtype, int64_t *total,
                         int64_t *largest) {
    int64_t v = 1;
    for (int d = 0; d < ndim; d++) v *= shape[d];
    int64_t scr = voxa__gpu_sqdt_scratch(ndim, shape);
    int64_t first = 9 * v + scr, second = out_dtype == VOXA_F64 ? 0 : 12 * v;
    *total = first > second ? first : second;
    *largest = scr > 8 * v ? scr : 8 * v;
}

/* uint32 squared distances: refused where the largest one could overflow. */
static voxa_status check_u32(int nd, const int64_t *shape, voxa_dtype out,
                             const voxa_edt_params *p) {
    double maxd2 = 0;
    for (int d = 0; d < nd; d++) {
        double s = p->spacing ? p->spacing[d] : 1.0;
        maxd2 += ((double)shape[d] + 1) * ((double)shape[d] + 1) * s * s;
    }
    VOXA_FAIL_IF(out == VOXA_U32 && maxd2 >= 4294967295.0, VOXA_EOVERFLOW,
                 "squared distances may exceed uint32 for this shape: use float64");
    return VOXA_OK;
}

voxa_status voxa__edt_gpu(voxa_backend b, const voxa_array *in, voxa_array *out,
                          const voxa_edt_params *p) {
    voxa_edt_params def = {0};
    if (!p) p = &def;
    VOXA_FAIL_IF(!in || !out, VOXA_EINVAL, "edt: in and out must not be NULL");
    VOXA_CHECK(voxa_array_check(in, "input"));
    VOXA_CHECK(voxa_array_check(out, "output"));
    { /* the CPU's checks on empty views: shapes, dtypes, spacing */
        voxa_array ei = *in, eo = *out;
        if (in->ndim >= 1 && voxa__same_shape(in, out)) ei.shape[0] = eo.shape[0] = 0;
        VOXA_CHECK(voxa_edt(&ei, &eo, p));
    }
    int nd = in->ndim;
    int64_t n = voxa_array_size(in);
    if (n == 0) return VOXA_OK;
    VOXA_CHECK(check_u32(nd, in->shape, out->dtype, p));
    const uint8_t *src;
    uint8_t *owned = NULL;
    VOXA_CHECK(voxa__binary_view(in, &src, &owned));
    int64_t zeros = 0;
    for (int64_t i = 0; i < n && !zeros; i++) zeros += src[i] == 0;
    if (!zeros) { /* no background: scipy's special case, nothing to search */
        voxa__free(owned);
        return voxa_edt(in, out, p);
    }
    voxa_status st = VOXA_OK;
    voxa__gpu *g = NULL;
    voxa__buf dm = {0}, df = {0}, dout = {0};
    int64_t lim, largest, need, need1;
    if ((st = voxa__gpu_limits(b, &lim, &largest))) goto done;
    voxa__edt_gpu_bytes(nd, in->shape, out->dtype, &need, &need1);
    if ((st = voxa__gpu_acquire(b, "edt", &g))) goto done;
    if (need > lim || need1 > largest) { /* larger than the device: passes by tiles */
        st = voxa__edt_gpu_tiled(g, src, out, p, lim, largest);
        goto done;
    }
    if ((st = voxa__gpu_upload(g, src, (size_t)n, "edt: mask", &dm)) ||
        (st = voxa__gpu_alloc(g, (size_t)n * 8, "edt: distances", &df)))
        goto done;
    voxa__gpu_sqdt q;
    memset(&q, 0, sizeof q);
    q.ndim = nd;
    memcpy(q.shape, in->shape, sizeof(int64_t) * (size_t)nd);
    q.src = &dm;
    q.target = 0;
    q.spacing = p->spacing;
    q.cap = INFINITY;
    if ((st = voxa__gpu_sqdt_run(g, &q, &df))) goto done;
    voxa__gpu_free(g, &dm);
    if (out->dtype == VOXA_F64) {
        voxa__arg a[] = {VX_ARG(df.h), VX_ARG(n)};
        if (!p->squared && (st = g->ops->launch(g, "vx_sqdt_emit_f64", n, 2, a))) goto done;
        st = voxa__gpu_read_into(g, &df, out);
        goto done;
    }
    if ((st = voxa__gpu_alloc(g, (size_t)n * 4, "edt: output", &dout))) goto done;
    const char *k = out->dtype == VOXA_U32 ? "vx_sqdt_emit_u32"
                    : p->squared           ? "vx_sqdt_emit_f32sq"
                                           : "vx_sqdt_emit_f32";
    voxa__arg a[] = {VX_ARG(df.h), VX_ARG(dout.h), VX_ARG(n)};
    if ((st = g->ops->launch(g, k, n, 3, a))) goto done;
    st = voxa__gpu_read_into(g, &dout, out);
done:
    voxa__gpu_free(g, &dm);
    voxa__gpu_free(g, &df);
    voxa__gpu_free(g, &dout);
    voxa__gpu_release(g);
    voxa__free(owned);
    return st;
}

/* Device arrays (include/voxa/device.h): the mask and the output stay on the
 * device; a float64 output holds the distances themselves. An input without
 * background (all distances +inf after the passes: voxel 0's tells) is
 * scipy's special case: it goes through the host and the CPU, as above. */
voxa_status voxa_edt_device(const voxa_device_array *in, voxa_device_array *out,
                            const voxa_edt_params *p) {
    voxa_edt_params def = {0};
    if (!p) p = &def;
    VOXA_FAIL_IF(!in || !out, VOXA_EINVAL, "edt: in and out must not be NULL");
    VOXA_FAIL_IF(in->dtype != VOXA_BOOL && in->dtype != VOXA_U8, VOXA_EUNSUPPORTED,
                 "edt: a device input must be bool or uint8 (got %s)", voxa_dtype_name(in->dtype));
    VOXA_FAIL_IF(in->ndim < 1 || in->ndim > VOXA_MAXDIM || out->ndim != in->ndim, VOXA_EINVAL,
                 "edt: device arrays of ndim %d and %d (1..%d, equal)", in->ndim, out->ndim,
                 VOXA_MAXDIM);
    voxa_array hi = {0}, ho = {0};
    hi.dtype = in->dtype;
    ho.dtype = out->dtype;
    hi.ndim = ho.ndim = in->ndim;
    int nd = in->ndim;
    int64_t n = 1;
    for (int d = 0; d < nd; d++) {
        VOXA_FAIL_IF(in->shape[d] != out->shape[d], VOXA_EINVAL, "edt: out's shape differs from "
                     "in's on axis %d (%lld, %lld)", d, (long long)out->shape[d],
                     (long long)in->shape[d]);
        n *= in->shape[d];
    }
    VOXA_CHECK(voxa_edt(&hi, &ho, p)); /* the CPU's checks on empty views */
    VOXA_FAIL_IF(in->backend != VOXA_BACKEND_CUDA || out->backend != VOXA_BACKEND_CUDA,
                 VOXA_EUNSUPPORTED, "edt: device arrays are taken on the cuda backend only");
    VOXA_CHECK(check_u32(nd, in->shape, out->dtype, p));
    if (n == 0) return VOXA_OK;
    voxa__gpu *g = NULL;
    voxa__buf dm, dout, df = {0};
    double first = 0;
    voxa_status st = voxa__gpu_acquire(VOXA_BACKEND_CUDA, "edt", &g);
    if (st || (st = voxa__gpu_borrow(g, in, "edt: in", &dm)) ||
        (st = voxa__gpu_borrow(g, out, "edt: out", &dout)))
        goto done;
    if (out->dtype == VOXA_F64) df = dout;
    else if ((st = voxa__gpu_alloc(g, (size_t)n * 8, "edt: distances", &df))) goto done;
    voxa__gpu_sqdt q;
    memset(&q, 0, sizeof q);
    q.ndim = nd;
    memcpy(q.shape, in->shape, sizeof(int64_t) * (size_t)nd);
    q.src = &dm;
    q.spacing = p->spacing;
    q.cap = INFINITY;
    if ((st = voxa__gpu_sqdt_run(g, &q, &df)) || (st = g->ops->read(g, &df, 0, &first, 8)))
        goto done;
    if (first == INFINITY) { /* no background: scipy's special case on the CPU */
        voxa_array hin, hout;
        if ((st = voxa_array_new(&hin, in->dtype, nd, in->shape))) goto done;
        if ((st = voxa_array_new(&hout, out->dtype, nd, in->shape)) == VOXA_OK &&
            (st = g->ops->read(g, &dm, 0, hin.data, dm.bytes)) == VOXA_OK &&
            (st = voxa_edt(&hin, &hout, p)) == VOXA_OK)
            st = g->ops->write(g, &dout, 0, hout.data, dout.bytes);
        voxa_array_free(&hin);
        voxa_array_free(&hout);
        goto done;
    }
    if (out->dtype == VOXA_F64) {
        voxa__arg a[] = {VX_ARG(df.h), VX_ARG(n)};
        if (!p->squared && (st = g->ops->launch(g, "vx_sqdt_emit_f64", n, 2, a))) goto done;
    } else {
        const char *k = out->dtype == VOXA_U32 ? "vx_sqdt_emit_u32"
                        : p->squared           ? "vx_sqdt_emit_f32sq"
                                               : "vx_sqdt_emit_f32";
        voxa__arg a[] = {VX_ARG(df.h), VX_ARG(dout.h), VX_ARG(n)};
        if ((st = g->ops->launch(g, k, n, 3, a))) goto done;
    }
    st = g->ops->finish(g);
done:
    voxa__gpu_free(g, &df);
    voxa__gpu_release(g);
    return st;
}

voxa_status voxa_edt_on(voxa_backend b, const voxa_array *in, voxa_array *out,
                        const voxa_edt_params *p) {
    VOXA_CHECK(voxa_backend_resolve(b, &b));
    if (b == VOXA_BACKEND_CPU) return voxa_edt(in, out, p);
    return voxa__edt_gpu(b, in, out, p);
}
