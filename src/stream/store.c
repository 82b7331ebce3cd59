/* Stores (see voxa/stream.h): a caller's view, an array held in memory
 * (TIFF pages the region reader refuses, read whole), a .npy file or a TIFF
 * output accessed by pread/pwrite (store_npy.c), a TIFF input read by strips
 * or tiles (store_tiff.c), a Zarr array by chunks (store_zarr.c). This file
 * chooses the kind by the path and dispatches. */
#include "store_internal.h"
#include "voxa/io.h"

#include <stdlib.h>
#include <string.h>

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
    } else if (voxa__is_tiff_path(path)) {
        st = voxa__store_tiff_open(s, path);
    } else {
        st = voxa__error(VOXA_EUNSUPPORTED, "cannot read '%s': unknown extension (expected "
                         ".npy, .tif, .tiff or .zarr)", path);
    }
    if (st != VOXA_OK) voxa_store_close(s);
    else *out = s;
    return st;
}

static voxa_status check_options(const char *path, int ndim, const voxa_store_options *o) {
    for (int d = 0; d < ndim; d++)
        VOXA_FAIL_IF(o->chunks[d] < 0, VOXA_EINVAL, "chunks: axis %d is %lld, expected >= 1", d,
                     (long long)o->chunks[d]);
    VOXA_FAIL_IF(o->zarr_format != 0 && o->zarr_format != 2 && o->zarr_format != 3, VOXA_EINVAL,
                 "zarr_format: %d, expected 2 or 3", o->zarr_format);
    VOXA_FAIL_IF(o->pyramid < 0 || o->pyramid > 16, VOXA_EINVAL,
                 "pyramid: %d levels, expected 0 to 16", o->pyramid);
    VOXA_FAIL_IF(o->pyramid_mode < VOXA_PYRAMID_AUTO || o->pyramid_mode > VOXA_PYRAMID_STRIDE,
                 VOXA_EINVAL, "pyramid_mode: %d, expected auto (0), mean (1) or stride (2)",
                 (int)o->pyramid_mode);
    VOXA_FAIL_IF(o->pyramid && (!voxa__is_zarr_path(path) || (ndim != 2 && ndim != 3)),
                 VOXA_EINVAL, "pyramid: '%s' is not a 2-D or 3-D .zarr output (%d-D); only "
                 "OME-Zarr images hold levels", path, ndim);
    return VOXA_OK;
}

voxa_status voxa_store_create_opts(const char *path, voxa_dtype t, int ndim,
                                   const int64_t *shape, const voxa_store_options *o,
                                   voxa_store **out) {
    VOXA_FAIL_IF(!path || !out || !shape, VOXA_EINVAL, "store: NULL argument");
    VOXA_FAIL_IF(ndim < 0 || ndim > VOXA_MAXDIM, VOXA_EINVAL, "store: ndim %d", ndim);
    *out = NULL;
    voxa_store_options none;
    memset(&none, 0, sizeof none);
    if (!o) o = &none;
    VOXA_CHECK(check_options(path, ndim, o));
    voxa_store *s = NULL;
    VOXA_CHECK(make(&s, path));
    s->t = t;
    s->ndim = ndim;
    memcpy(s->shape, shape, sizeof(int64_t) * (size_t)ndim);
    s->created = 1;
    s->opts = *o;
    voxa_status st;
    if (is_npy(path)) {
        s->kind = STORE_NPY;
        st = voxa__store_npy_create(s, path);
    } else if (voxa__is_zarr_path(path)) {
        s->kind = STORE_ZARR;
        int given = 0;
        for (int d = 0; d < ndim; d++) given |= o->chunks[d] > 0;
        st = voxa__store_zarr_create(s, path, given ? o->chunks : NULL);
    } else if (voxa__is_tiff_path(path)) {
        st = voxa__store_tiff_create(s, path);
    } else {
        st = voxa__error(VOXA_EUNSUPPORTED, "cannot write '%s': unknown extension (expected "
                         ".npy, .tif, .tiff or .zarr)", path);
    }
    if (st != VOXA_OK) voxa_store_close(s);
    else *out = s;
    return st;
}

voxa_status voxa_store_create(const char *path, voxa_dtype t, int ndim, const int64_t *shape,
                              const int64_t *chunks, voxa_store **out) {
    voxa_store_options o;
    memset(&o, 0, sizeof o);
    for (int d = 0; chunks && d < ndim && d < VOXA_MAXDIM; d++) o.chunks[d] = chunks[d];
    return voxa_store_create_opts(path, t, ndim, shape, &o, out);
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

voxa_status voxa_store_chunks(const voxa_store *s, int64_t *chunks) {
    VOXA_FAIL_IF(!s || !chunks, VOXA_EINVAL, "store chunks: NULL argument");
    if (s->kind != STORE_ZARR) return VOXA_EUNSUPPORTED;
    memcpy(chunks, s->unit, sizeof(int64_t) * (size_t)s->ndim);
    return VOXA_OK;
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
    if (s->kind == STORE_TIFF) return voxa_tiff_read_region(s->tiff, lo, dst);
    voxa_array part = voxa__subview(&s->view, lo, dst->shape);
    return voxa__copy_view(&part, dst);
}

voxa_status voxa_store_write(voxa_store *s, const int64_t *lo, const voxa_array *src) {
    VOXA_FAIL_IF(!s, VOXA_EINVAL, "store write: NULL store");
    VOXA_CHECK(check_region(s, lo, src, "write"));
    if (s->kind == STORE_NPY) return voxa__store_npy_write(s, lo, src);
    if (s->kind == STORE_ZARR) return voxa_zarr_write(s->zarr, lo, src);
    VOXA_FAIL_IF(s->kind == STORE_TIFF || (s->kind == STORE_MEMORY && !s->created), VOXA_EINVAL,
                 "store: '%s' was opened for reading", s->path);
    voxa_array part = voxa__subview(&s->view, lo, src->shape);
    return voxa__copy_view(src, &part);
}

voxa_status voxa_store_commit(voxa_store *s) {
    VOXA_FAIL_IF(!s, VOXA_EINVAL, "store commit: NULL store");
    if (!s->created || s->committed) return VOXA_OK;
    voxa_status st = s->kind == STORE_NPY    ? voxa__store_npy_commit(s)
                     : s->kind == STORE_ZARR ? voxa__store_zarr_commit(s)
                                             : VOXA_OK;
    if (st == VOXA_OK) s->committed = 1;
    return st;
}

void voxa_store_close(voxa_store *s) {
    if (!s) return;
    if (s->kind == STORE_NPY) voxa__store_npy_close(s);
    if (s->kind == STORE_MEMORY) voxa_array_free(&s->view);
    if (s->kind == STORE_ZARR) voxa__store_zarr_close(s);
    voxa_tiff_close(s->tiff);
    free(s->path);
    free(s);
}
