/* Stores (see voxa/stream.h): a caller's view, an array held in memory
 * (formats without region access, read or written whole), or a .npy file
 * accessed by regions. */
#include "store_internal.h"
#include "voxa/io.h"

#include <stdlib.h>
#include <string.h>

voxa_array voxa__subview(const voxa_array *a, const int64_t *lo, const int64_t *shape) {
    voxa_array v = *a;
    v.owner = NULL;
    for (int d = 0; d < a->ndim; d++) {
        v.data = (char *)v.data + lo[d] * a->strides[d];
        v.shape[d] = shape[d];
    }
    return v;
}

static int is_npy(const char *path) {
    const char *dot = strrchr(path, '.');
    return dot && !strcmp(dot, ".npy");
}

static voxa_status make(voxa_store **out, const char *path) {
    voxa_store *s = calloc(1, sizeof *s);
    VOXA_FAIL_IF(!s, VOXA_ENOMEM, "store: out of memory");
    s->fd = -1;
    if (path && !(s->path = strdup(path))) {
        free(s);
        return voxa__error(VOXA_ENOMEM, "store: out of memory");
    }
    *out = s;
    return VOXA_OK;
}

static void take_shape(voxa_store *s, const voxa_array *a) {
    s->t = a->dtype;
    s->ndim = a->ndim;
    memcpy(s->shape, a->shape, sizeof s->shape);
}

voxa_status voxa_store_wrap(voxa_array *a, voxa_store **out) {
    VOXA_FAIL_IF(!a || !out, VOXA_EINVAL, "store: NULL argument");
    VOXA_CHECK(voxa_array_check(a, "store"));
    VOXA_CHECK(make(out, NULL));
    (*out)->kind = STORE_VIEW;
    (*out)->view = *a;
    (*out)->view.owner = NULL;
    take_shape(*out, a);
    return VOXA_OK;
}

voxa_status voxa_store_open(const char *path, voxa_store **out) {
    VOXA_FAIL_IF(!path || !out, VOXA_EINVAL, "store: NULL argument");
    *out = NULL;
    voxa_store *s = NULL;
    VOXA_CHECK(make(&s, path));
    voxa_status st;
    if (is_npy(path)) {
        s->kind = STORE_NPY;
        st = voxa__store_npy_open(s, path);
    } else if (voxa__is_zarr_path(path)) {
        s->kind = STORE_ZARR;
        st = voxa__store_zarr_open(s, path);
    } else {
        s->kind = STORE_MEMORY;
        st = voxa_read(path, &s->view);
        if (st == VOXA_OK) take_shape(s, &s->view);
    }
    if (st != VOXA_OK) voxa_store_close(s);
    else *out = s;
    return st;
}

voxa_status voxa_store_create(const char *path, voxa_dtype t, int ndim, const int64_t *shape,
                              const int64_t *chunks, voxa_store **out) {
    VOXA_FAIL_IF(!path || !out || !shape, VOXA_EINVAL, "store: NULL argument");
    VOXA_FAIL_IF(ndim < 0 || ndim > VOXA_MAXDIM, VOXA_EINVAL, "store: ndim %d", ndim);
    *out = NULL;
    voxa_store *s = NULL;
    VOXA_CHECK(make(&s, path));
    s->t = t;
    s->ndim = ndim;
    memcpy(s->shape, shape, sizeof(int64_t) * (size_t)ndim);
    s->created = 1;
    voxa_status st;
    if (is_npy(path)) {
        s->kind = STORE_NPY;
        st = voxa__store_npy_create(s, path);
    } else if (voxa__is_zarr_path(path)) {
        s->kind = STORE_ZARR;
        st = voxa__store_zarr_create(s, path, chunks);
    } else {
        s->kind = STORE_MEMORY;
        st = voxa_array_new(&s->view, t, ndim, shape);
    }
    if (st != VOXA_OK) voxa_store_close(s);
    else *out = s;
    return st;
}

voxa_array voxa_store_meta(const voxa_store *s) {
    static char dummy; /* never read: checks look at dtype, ndim and shape only */
    voxa_array a;
    memset(&a, 0, sizeof a);
    a.data = &dummy;
    a.dtype = s->t;
    a.ndim = s->ndim;
    memcpy(a.shape, s->shape, sizeof a.shape);
    return a;
}

voxa_status voxa_store_spacing(const voxa_store *s, double *spacing) {
    VOXA_FAIL_IF(!s || !spacing, VOXA_EINVAL, "store spacing: NULL argument");
    if (!s->has_spacing) return VOXA_EUNSUPPORTED;
    memcpy(spacing, s->spacing, sizeof(double) * (size_t)s->ndim);
    return VOXA_OK;
}

voxa_status voxa_store_set_spacing(voxa_store *s, const double *spacing) {
    VOXA_FAIL_IF(!s || !spacing, VOXA_EINVAL, "store spacing: NULL argument");
    for (int d = 0; d < s->ndim; d++)
        VOXA_FAIL_IF(!(spacing[d] > 0), VOXA_EINVAL, "spacing: axis %d is %g, expected > 0", d,
                     spacing[d]);
    memcpy(s->spacing, spacing, sizeof(double) * (size_t)s->ndim);
    s->has_spacing = 1;
    return VOXA_OK;
}

void voxa_store_info(const voxa_store *s, voxa_dtype *t, int *ndim, int64_t *shape) {
    if (t) *t = s->t;
    if (ndim) *ndim = s->ndim;
    if (shape) memcpy(shape, s->shape, sizeof(int64_t) * (size_t)s->ndim);
}

static voxa_status check_region(const voxa_store *s, const int64_t *lo, const voxa_array *a,
                                const char *what) {
    VOXA_FAIL_IF(!lo || !a, VOXA_EINVAL, "store %s: NULL argument", what);
    VOXA_FAIL_IF(a->ndim != s->ndim || a->dtype != s->t, VOXA_EINVAL,
                 "store %s: a %d-D %s region of a %d-D %s array", what, a->ndim,
                 voxa_dtype_name(a->dtype), s->ndim, voxa_dtype_name(s->t));
    for (int d = 0; d < s->ndim; d++)
        VOXA_FAIL_IF(lo[d] < 0 || a->shape[d] < 0 || lo[d] + a->shape[d] > s->shape[d],
                     VOXA_EINVAL, "store %s: region [%lld, %lld) outside axis %d of size %lld",
                     what, (long long)lo[d], (long long)(lo[d] + a->shape[d]), d,
                     (long long)s->shape[d]);
    return VOXA_OK;
}

voxa_status voxa_store_read(voxa_store *s, const int64_t *lo, voxa_array *dst) {
    VOXA_FAIL_IF(!s, VOXA_EINVAL, "store read: NULL store");
    VOXA_CHECK(check_region(s, lo, dst, "read"));
    if (s->kind == STORE_NPY) return voxa__store_npy_read(s, lo, dst);
    if (s->kind == STORE_ZARR) return voxa_zarr_read(s->zarr, lo, dst);
    voxa_array part = voxa__subview(&s->view, lo, dst->shape);
    return voxa__copy_view(&part, dst);
}

voxa_status voxa_store_write(voxa_store *s, const int64_t *lo, const voxa_array *src) {
    VOXA_FAIL_IF(!s, VOXA_EINVAL, "store write: NULL store");
    VOXA_CHECK(check_region(s, lo, src, "write"));
    if (s->kind == STORE_NPY) return voxa__store_npy_write(s, lo, src);
    if (s->kind == STORE_ZARR) return voxa_zarr_write(s->zarr, lo, src);
    voxa_array part = voxa__subview(&s->view, lo, src->shape);
    return voxa__copy_view(src, &part);
}

voxa_status voxa_store_commit(voxa_store *s) {
    VOXA_FAIL_IF(!s, VOXA_EINVAL, "store commit: NULL store");
    if (!s->created || s->committed) return VOXA_OK;
    voxa_status st = s->kind == STORE_NPY    ? voxa__store_npy_commit(s)
                     : s->kind == STORE_ZARR ? voxa__store_zarr_commit(s)
                                             : voxa_write(s->path, &s->view);
    if (st == VOXA_OK) s->committed = 1;
    return st;
}

void voxa_store_close(voxa_store *s) {
    if (!s) return;
    if (s->kind == STORE_NPY) voxa__store_npy_close(s);
    if (s->kind == STORE_MEMORY) voxa_array_free(&s->view);
    if (s->kind == STORE_ZARR) voxa_zarr_close(s->zarr);
    free(s->path);
    free(s);
}
