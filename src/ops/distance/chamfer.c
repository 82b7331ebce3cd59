/* voxa_edt_chamfer: scipy.ndimage.distance_transform_cdt with any metric
 * array, and the nearest-background indices.
 *
 * scipy's chamfer transform (Rosenfeld & Pfaltz 1966): two raster passes
 * over an int32 map (0 background, -1 not reached yet), the second over the
 * array reversed along every axis. A pass uses the neighbours given by the
 * true elements of the first half (C order) of the (3,)*ndim metric - those
 * already visited - and sets each foreground voxel to 1 + the smallest
 * reached neighbour when that is strictly smaller than its value (the
 * first such neighbour in C order on a tie); the feature (nearest
 * background voxel) follows the winner. Sequential by nature: each voxel
 * depends on the ones before it. O(k N) for k neighbours; memory: 8 bytes a
 * voxel for the features when indices are asked for. */
#include "internal.h"
#include "voxa/edt.h"

#include <string.h>

typedef struct chamfer {
    int nd, k;
    const int64_t *shape;
    int64_t (*off)[VOXA_MAXDIM]; /* the neighbours, at most (3^ndim - 1) / 2 */
    int64_t *delta;              /* their flat steps */
} chamfer;

/* One pass: dir = +1 walks C order with the offsets as they are; dir = -1
 * walks backwards, i.e. C order of the reversed array, whose offset o is -o
 * in memory. */
static void pass(const chamfer *c, int dir, int32_t *dt, int64_t *ft) {
    const int nd = c->nd;
    int64_t n = 1, idx[VOXA_MAXDIM];
    for (int d = 0; d < nd; d++) n *= c->shape[d];
    for (int d = 0; d < nd; d++) idx[d] = dir > 0 ? 0 : c->shape[d] - 1;
    for (int64_t s = 0; s < n; s++) {
        int64_t i = dir > 0 ? s : n - 1 - s;
        if (dt[i] != 0) {
            int inside = 1; /* every neighbour in the volume: no checks */
            for (int d = 0; d < nd && inside; d++) inside = idx[d] > 0 && idx[d] < c->shape[d] - 1;
            int32_t min = dt[i];
            int64_t from = -1;
            for (int j = 0; j < c->k; j++) {
                if (!inside) {
                    int ok = 1;
                    for (int d = 0; d < nd && ok; d++) {
                        int64_t q = idx[d] + dir * c->off[j][d];
                        ok = q >= 0 && q < c->shape[d];
                    }
                    if (!ok) continue;
                }
                int64_t q = i + dir * c->delta[j];
                int32_t t = dt[q];
                if (t >= 0 && (min < 0 || t + 1 < min)) {
                    min = t + 1;
                    from = q;
                }
            }
            dt[i] = min;
            if (ft && from >= 0) ft[i] = ft[from];
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (dir > 0 ? ++idx[d] < c->shape[d] : --idx[d] >= 0) break;
            idx[d] = dir > 0 ? 0 : c->shape[d] - 1;
        }
    }
}

VOXA_API voxa_status voxa_edt_chamfer(const voxa_array *in, voxa_array *out,
                                      const uint8_t *metric, voxa_array *indices) {
    VOXA_CHECK(voxa_array_check(in, "input"));
    int nd = in->ndim;
    VOXA_FAIL_IF(nd < 1, VOXA_EINVAL, "cdt: input must have at least 1 dimension");
    VOXA_FAIL_IF(!metric, VOXA_EINVAL, "cdt: metric must not be NULL");
    VOXA_FAIL_IF(!out && !indices, VOXA_EINVAL, "cdt: give distances, indices or both");
    if (out) {
        VOXA_CHECK(voxa_array_check(out, "output"));
        VOXA_FAIL_IF(!voxa__same_shape(in, out) || out->dtype != VOXA_I32, VOXA_EINVAL,
                     "cdt: the output must be int32 with the input's shape");
    }
    if (indices) {
        VOXA_CHECK(voxa_array_check(indices, "indices"));
        int ok = indices->ndim == nd + 1 && indices->shape[0] == nd &&
                 (indices->dtype == VOXA_I32 || indices->dtype == VOXA_I64);
        for (int d = 0; ok && d < nd; d++) ok = indices->shape[d + 1] == in->shape[d];
        VOXA_FAIL_IF(!ok, VOXA_EINVAL, "cdt: indices must be int32/int64 of shape (ndim, *shape)");
    }
    int64_t n = voxa_array_size(in);
    if (n == 0) return VOXA_OK;
    chamfer c;
    c.nd = nd;
    c.k = 0;
    c.shape = in->shape;
    int64_t m = 1;
    for (int d = 0; d < nd; d++) m *= 3;
    const uint8_t *src;
    uint8_t *owned = NULL;
    voxa_status st = VOXA_OK;
    int direct = out && voxa_array_is_c_contiguous(out);
    int32_t *dt = direct ? out->data : voxa__malloc((size_t)n, 4);
    int64_t *ft = indices ? voxa__malloc((size_t)n, 8) : NULL;
    c.off = voxa__malloc((size_t)(m / 2 + 1), sizeof *c.off);
    c.delta = voxa__malloc((size_t)(m / 2 + 1), sizeof *c.delta);
    VOXA_GOTO_IF(!dt || (indices && !ft) || !c.off || !c.delta, VOXA_ENOMEM,
                 "cdt: cannot allocate %lld voxels", (long long)n);
    for (int64_t e = 0; e < m / 2; e++) {
        if (!metric[e]) continue;
        int64_t r = e, delta = 0, stride = 1;
        for (int d = nd - 1; d >= 0; d--) {
            c.off[c.k][d] = r % 3 - 1;
            r /= 3;
        }
        for (int d = nd - 1; d >= 0; d--) {
            delta += c.off[c.k][d] * stride;
            stride *= in->shape[d];
        }
        c.delta[c.k++] = delta;
    }
    if ((st = voxa__binary_view(in, &src, &owned))) goto done;
    for (int64_t i = 0; i < n; i++) dt[i] = src[i] ? -1 : 0;
    for (int64_t i = 0; ft && i < n; i++) ft[i] = i;
    pass(&c, 1, dt, ft);
    pass(&c, -1, dt, ft);
    if (out && !direct) voxa__copy_into(dt, out);
    if (indices) {
        int64_t idx[VOXA_MAXDIM] = {0};
        for (int64_t i = 0; i < n; i++) {
            int64_t f = ft[i], fi[VOXA_MAXDIM], at = 0;
            for (int d = nd - 1; d >= 0; d--) {
                fi[d] = f % in->shape[d];
                f /= in->shape[d];
                at += idx[d] * indices->strides[d + 1];
            }
            for (int d = 0; d < nd; d++) {
                char *q = (char *)indices->data + at + d * indices->strides[0];
                if (indices->dtype == VOXA_I32) {
                    int32_t v = (int32_t)fi[d];
                    memcpy(q, &v, 4);
                } else {
                    memcpy(q, &fi[d], 8);
                }
            }
            for (int d = nd - 1; d >= 0 && ++idx[d] == in->shape[d]; d--) idx[d] = 0;
        }
    }
done:
    voxa__free(c.off);
    voxa__free(c.delta);
    if (!direct) voxa__free(dt);
    voxa__free(ft);
    voxa__free(owned);
    return st;
}
