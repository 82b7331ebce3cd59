/* The steps of labelling by blocks, shared by the executor (label_merge.c)
 * and by schedulers that run them as tasks (voxa.dask): first voxels of a
 * block's labels, pairs of ids joined across a face, and the final numbering
 * (union-find whose roots keep their component's smallest first index, then
 * the components sorted by it: scipy.ndimage.label's raster numbering). */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

voxa_status voxa_label_first(const voxa_array *ids, int64_t n, const int64_t *origin,
                             const int64_t *whole, int64_t *first) {
    VOXA_FAIL_IF(!ids || !origin || !whole || (n > 0 && !first), VOXA_EINVAL,
                 "label first: NULL argument");
    VOXA_FAIL_IF(ids->dtype != VOXA_I64 || !voxa_array_is_c_contiguous(ids), VOXA_EINVAL,
                 "label first: ids must be C-contiguous int64");
    const int64_t *v = ids->data;
    int64_t m = voxa_array_size(ids), idx[VOXA_MAXDIM] = {0}, seen = 0;
    int nd = ids->ndim;
    for (int64_t i = 0; i < m && seen < n; i++) {
        if (v[i] > seen) { /* a block's labels first appear in order 1, 2, ... */
            VOXA_FAIL_IF(v[i] != seen + 1, VOXA_EINVAL, "label first: label %lld appears before "
                         "%lld (not a block labelled in raster order)", (long long)v[i],
                         (long long)(seen + 1));
            int64_t flat = 0;
            for (int d = 0; d < nd; d++) flat = flat * whole[d] + origin[d] + idx[d];
            first[seen++] = flat;
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < ids->shape[d]) break;
            idx[d] = 0;
        }
    }
    VOXA_FAIL_IF(seen < n, VOXA_EINVAL, "label first: %lld labels found, %lld expected",
                 (long long)seen, (long long)n);
    return VOXA_OK;
}

static int cmp_pair(const void *x, const void *y) {
    const int64_t *a = x, *b = y;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

voxa_status voxa_label_face_pairs(const voxa_array *ids, int axis, const int64_t *region_lo,
                                  const int64_t *own_lo, const int64_t *own_hi,
                                  const unsigned char *st, int64_t **pairs, int64_t *npairs) {
    VOXA_FAIL_IF(!ids || !region_lo || !own_lo || !own_hi || !st || !pairs || !npairs,
                 VOXA_EINVAL, "label face: NULL argument");
    VOXA_FAIL_IF(ids->dtype != VOXA_I64 || !voxa_array_is_c_contiguous(ids), VOXA_EINVAL,
                 "label face: ids must be C-contiguous int64");
    int nd = ids->ndim;
    VOXA_FAIL_IF(axis < 0 || axis >= nd, VOXA_EINVAL, "label face: axis %d of %d", axis, nd);
    *pairs = NULL;
    *npairs = 0;
    const int64_t *v = ids->data;
    int64_t str[VOXA_MAXDIM], idx[VOXA_MAXDIM] = {0}, noff = 1, n = voxa_array_size(ids);
    int64_t cap = 0, np = 0, *out = NULL;
    str[nd - 1] = 1;
    for (int e = nd - 2; e >= 0; e--) str[e] = str[e + 1] * ids->shape[e + 1];
    for (int e = 0; e < nd; e++) noff *= 3;
    for (int64_t i = 0; i < n; i++) {
        int own = idx[axis] == 0 && v[i] != 0;
        for (int e = 0; own && e < nd; e++)
            if (e != axis)
                own = region_lo[e] + idx[e] >= own_lo[e] && region_lo[e] + idx[e] < own_hi[e];
        int64_t o[VOXA_MAXDIM] = {0};
        for (int64_t k = 0; own && k < noff; k++) {
            int ok = st[k] && o[axis] == 2;
            int64_t j = i;
            for (int e = 0; ok && e < nd; e++) {
                int64_t w = idx[e] + o[e] - 1;
                ok = w >= 0 && w < ids->shape[e];
                j += (o[e] - 1) * str[e];
            }
            if (ok && v[j] && (np == 0 || out[2 * np - 2] != v[i] || out[2 * np - 1] != v[j])) {
                if (np == cap) {
                    cap = cap ? 2 * cap : 256;
                    int64_t *grown = realloc(out, (size_t)cap * 2 * sizeof *out);
                    if (!grown) {
                        free(out);
                        return voxa__error(VOXA_ENOMEM, "label face: out of memory");
                    }
                    out = grown;
                }
                out[2 * np] = v[i];
                out[2 * np + 1] = v[j];
                np++;
            }
            for (int e = nd - 1; e >= 0; e--) {
                if (++o[e] < 3) break;
                o[e] = 0;
            }
        }
        for (int e = nd - 1; e >= 0; e--) {
            if (++idx[e] < ids->shape[e]) break;
            idx[e] = 0;
        }
    }
    if (np > 1) { /* sort and drop repeats: faces of big objects repeat pairs */
        qsort(out, (size_t)np, 2 * sizeof *out, cmp_pair);
        int64_t k = 1;
        for (int64_t i = 1; i < np; i++)
            if (out[2 * i] != out[2 * k - 2] || out[2 * i + 1] != out[2 * k - 1]) {
                out[2 * k] = out[2 * i];
                out[2 * k + 1] = out[2 * i + 1];
                k++;
            }
        np = k;
    }
    *pairs = out;
    *npairs = np;
    return VOXA_OK;
}

static int64_t find(int64_t *parent, int64_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

voxa_status voxa_label_resolve(int64_t n, const int64_t *first, const int64_t *pairs,
                               int64_t npairs, int64_t *final, int64_t *ncomponents) {
    VOXA_FAIL_IF(n < 0 || npairs < 0 || (n > 0 && (!first || !final)) ||
                     (npairs > 0 && !pairs) || !ncomponents,
                 VOXA_EINVAL, "label resolve: bad argument");
    *ncomponents = 0;
    int64_t *parent = malloc((size_t)(n + 1) * sizeof *parent);
    VOXA_FAIL_IF(!parent, VOXA_ENOMEM, "label resolve: out of memory for %lld ids", (long long)n);
    for (int64_t i = 0; i < n; i++) parent[i] = i;
    for (int64_t k = 0; k < npairs; k++) {
        int64_t a = pairs[2 * k] - 1, b = pairs[2 * k + 1] - 1;
        if (a < 0 || b < 0 || a >= n || b >= n) {
            free(parent);
            return voxa__error(VOXA_EINVAL, "label resolve: pair %lld joins ids %lld and %lld, "
                               "outside 1..%lld", (long long)k, (long long)(a + 1),
                               (long long)(b + 1), (long long)n);
        }
        a = find(parent, a);
        b = find(parent, b);
        if (a == b) continue;
        if (first[a] < first[b] || (first[a] == first[b] && a < b)) parent[b] = a;
        else parent[a] = b;
    }
    /* roots sorted by first voxel: final[root] holds (first, root) pairs
     * briefly, in a scratch table of 2 per root */
    int64_t nroots = 0;
    for (int64_t i = 0; i < n; i++) nroots += parent[i] == i;
    int64_t *order = malloc((size_t)(2 * nroots + 1) * sizeof *order);
    if (!order) {
        free(parent);
        return voxa__error(VOXA_ENOMEM, "label resolve: out of memory for %lld components",
                           (long long)nroots);
    }
    for (int64_t i = 0, k = 0; i < n; i++)
        if (parent[i] == i) order[2 * k] = first[i], order[2 * k + 1] = i, k++;
    qsort(order, (size_t)nroots, 2 * sizeof *order, cmp_pair);
    for (int64_t k = 0; k < nroots; k++) final[order[2 * k + 1]] = k + 1;
    for (int64_t i = 0; i < n; i++) final[i] = final[find(parent, i)];
    free(order);
    free(parent);
    *ncomponents = nroots;
    return VOXA_OK;
}
