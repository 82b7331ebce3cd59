/* Array views: creation, checks, contiguity, allocation helpers. */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#endif
#include "internal.h"

#include <sys/mman.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool voxa__mul_size(size_t n, size_t size, size_t *out) {
    if (size && n > SIZE_MAX / size) return false;
    *out = n * size;
    return true;
}

/* 64-byte alignment keeps SIMD loads and cache lines happy. */
void *voxa__malloc(size_t n, size_t size) {
    size_t bytes;
    if (!voxa__mul_size(n, size, &bytes)) return NULL;
    if (bytes == 0) bytes = 1;
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes) return NULL;
    return aligned_alloc(64, rounded);
}

void *voxa__calloc(size_t n, size_t size) {
    size_t bytes;
    if (!voxa__mul_size(n, size, &bytes)) return NULL;
    /* calloc gets lazily zeroed pages from the OS for big blocks: cheaper
     * than aligned_alloc + memset, and 16-byte alignment is enough here. */
    return calloc(bytes ? bytes : 1, 1);
}

void voxa__free(void *p) { free(p); }

static voxa_status check_shape(int ndim, const int64_t *shape, size_t esize,
                               const char *what) {
    VOXA_FAIL_IF(ndim < 0 || ndim > VOXA_MAXDIM, VOXA_EINVAL,
                 "%s: ndim %d out of range 0..%d", what, ndim, VOXA_MAXDIM);
    VOXA_FAIL_IF(ndim > 0 && !shape, VOXA_EINVAL, "%s: shape is NULL", what);
    int64_t bytes = (int64_t)esize;
    for (int d = 0; d < ndim; d++) {
        VOXA_FAIL_IF(shape[d] < 0, VOXA_EINVAL, "%s: shape[%d] = %lld is negative",
                     what, d, (long long)shape[d]);
        if (shape[d] && bytes > INT64_MAX / shape[d])
            return voxa__error(VOXA_EINVAL, "%s: shape too large (overflows 64 bits)",
                               what);
        bytes *= shape[d];
    }
    return VOXA_OK;
}

voxa_status voxa_array_view(voxa_array *a, void *data, voxa_dtype t, int ndim,
                            const int64_t *shape) {
    VOXA_FAIL_IF(!a, VOXA_EINVAL, "array view: NULL array");
    size_t es = voxa_dtype_size(t);
    VOXA_FAIL_IF(!es, VOXA_EINVAL, "array view: invalid dtype %d", (int)t);
    VOXA_CHECK(check_shape(ndim, shape, es, "array view"));
    memset(a, 0, sizeof *a);
    a->data = data;
    a->dtype = t;
    a->ndim = ndim;
    int64_t stride = (int64_t)es;
    for (int d = ndim - 1; d >= 0; d--) {
        a->shape[d] = shape[d];
        a->strides[d] = stride;
        stride *= shape[d] ? shape[d] : 1;
    }
    return VOXA_OK;
}

/* Big arrays get fresh, untouched pages from calloc (mmap); on VMs each 4 KiB
 * page fault costs ~2 us, so first-touching an 80 MiB output costs ~40 ms,
 * more than most ops. Asking for transparent huge pages on the 2 MiB-aligned
 * interior (as NumPy does for its arrays) makes that ~10 ms. A hint only:
 * ignored where THP is off. */
void voxa__advise_huge_pages(void *data, size_t bytes) {
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (bytes < 4 * huge) return;
    uintptr_t lo = ((uintptr_t)data + huge - 1) & ~(huge - 1);
    uintptr_t hi = ((uintptr_t)data + bytes) & ~(huge - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
}

voxa_status voxa_array_new(voxa_array *a, voxa_dtype t, int ndim,
                           const int64_t *shape) {
    VOXA_CHECK(voxa_array_view(a, NULL, t, ndim, shape));
    int64_t n = voxa_array_size(a);
    void *p = voxa__calloc((size_t)n, voxa_dtype_size(t));
    if (!p) {
        char buf[128];
        return voxa__error(VOXA_ENOMEM, "cannot allocate %s array of shape %s",
                           voxa_dtype_name(t), voxa__shape_str(a, buf, sizeof buf));
    }
    a->data = a->owner = p;
    voxa__advise_huge_pages(p, (size_t)n * voxa_dtype_size(t));
    return VOXA_OK;
}

void voxa_array_free(voxa_array *a) {
    if (!a) return;
    voxa__free(a->owner);
    memset(a, 0, sizeof *a);
}

int64_t voxa_array_size(const voxa_array *a) {
    int64_t n = 1;
    for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
    return n;
}

int voxa_array_is_c_contiguous(const voxa_array *a) {
    int64_t stride = (int64_t)voxa_dtype_size(a->dtype);
    for (int d = a->ndim - 1; d >= 0; d--) {
        if (a->shape[d] == 0) return 1;
        if (a->shape[d] != 1 && a->strides[d] != stride) return 0;
        stride *= a->shape[d];
    }
    return 1;
}

voxa_status voxa_array_check(const voxa_array *a, const char *name) {
    VOXA_FAIL_IF(!a, VOXA_EINVAL, "%s: NULL array", name);
    VOXA_FAIL_IF(!voxa_dtype_size(a->dtype), VOXA_EINVAL, "%s: invalid dtype %d",
                 name, (int)a->dtype);
    VOXA_CHECK(check_shape(a->ndim, a->shape, voxa_dtype_size(a->dtype), name));
    VOXA_FAIL_IF(!a->data && voxa_array_size(a) > 0, VOXA_EINVAL,
                 "%s: data is NULL", name);
    return VOXA_OK;
}

double voxa_array_get(const voxa_array *a, const int64_t *idx) {
    const char *p = (const char *)a->data + voxa__offset(a, idx);
#define GET(T)                                                                 \
    do {                                                                       \
        T v_;                                                                  \
        memcpy(&v_, p, sizeof v_); /* views may be unaligned */                \
        return (double)v_;                                                     \
    } while (0)
    switch (a->dtype) {
    case VOXA_BOOL: case VOXA_U8: GET(uint8_t);
    case VOXA_I8: GET(int8_t);
    case VOXA_U16: GET(uint16_t);
    case VOXA_I16: GET(int16_t);
    case VOXA_U32: GET(uint32_t);
    case VOXA_I32: GET(int32_t);
    case VOXA_U64: GET(uint64_t);
    case VOXA_I64: GET(int64_t);
    case VOXA_F32: GET(float);
    case VOXA_F64: GET(double);
    default: return NAN;
    }
#undef GET
}

bool voxa__same_shape(const voxa_array *a, const voxa_array *b) {
    if (a->ndim != b->ndim) return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return false;
    return true;
}

voxa_array voxa__subview(const voxa_array *a, const int64_t *lo, const int64_t *shape) {
    voxa_array v = *a;
    v.owner = NULL;
    for (int d = 0; d < a->ndim; d++) {
        v.data = (char *)v.data + lo[d] * a->strides[d];
        v.shape[d] = shape[d];
    }
    return v;
}

const char *voxa__shape_str(const voxa_array *a, char *buf, size_t n) {
    size_t k = 0;
    k += (size_t)snprintf(buf + k, n - k, "(");
    for (int d = 0; d < a->ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, d ? ", %lld" : "%lld",
                              (long long)a->shape[d]);
    if (a->ndim == 1 && k < n) k += (size_t)snprintf(buf + k, n - k, ",");
    if (k < n) snprintf(buf + k, n - k, ")");
    return buf;
}

/* Copy rows along the last axis; the outer index walks the other axes. */
voxa_status voxa__contiguous_copy(const voxa_array *in, voxa_array *out) {
    VOXA_CHECK(voxa_array_new(out, in->dtype, in->ndim, in->shape));
    int64_t n = voxa_array_size(in);
    if (n == 0) return VOXA_OK;
    size_t es = voxa_dtype_size(in->dtype);
    int last = in->ndim - 1;
    int64_t row = in->ndim ? in->shape[last] : 1;
    int64_t rstride = in->ndim ? in->strides[last] : 0;
    int64_t nrows = n / row;
    int64_t idx[VOXA_MAXDIM] = {0};
    char *dst = out->data;
    for (int64_t r = 0; r < nrows; r++) {
        const char *src = (const char *)in->data + voxa__offset(in, idx);
        if (rstride == (int64_t)es) {
            memcpy(dst, src, (size_t)row * es);
            dst += row * (int64_t)es;
        } else {
            for (int64_t i = 0; i < row; i++, dst += es)
                memcpy(dst, src + i * rstride, es);
        }
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < in->shape[d]) break;
            idx[d] = 0;
        }
    }
    return VOXA_OK;
}

/* Row by row along the last axis, memcpy when both rows are contiguous. */
voxa_status voxa__copy_view(const voxa_array *src, voxa_array *dst) {
    VOXA_FAIL_IF(src->dtype != dst->dtype || !voxa__same_shape(src, dst), VOXA_EINVAL,
                 "copy: views differ in dtype or shape");
    int64_t n = voxa_array_size(src);
    if (n == 0) return VOXA_OK;
    size_t es = voxa_dtype_size(src->dtype);
    int last = src->ndim - 1;
    int64_t row = src->ndim ? src->shape[last] : 1;
    int64_t ss = src->ndim ? src->strides[last] : 0, ds = dst->ndim ? dst->strides[last] : 0;
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t r = 0; r < n / row; r++) {
        const char *s = (const char *)src->data + voxa__offset(src, idx);
        char *d = (char *)dst->data + voxa__offset(dst, idx);
        if (ss == (int64_t)es && ds == (int64_t)es) memmove(d, s, (size_t)row * es);
        else
            for (int64_t i = 0; i < row; i++) memmove(d + i * ds, s + i * ss, es);
        for (int k = last - 1; k >= 0; k--) {
            if (++idx[k] < src->shape[k]) break;
            idx[k] = 0;
        }
    }
    return VOXA_OK;
}

/* Contiguous views of 1/2/4/8-byte elements compare whole elements as
 * integers (floats: -0.0 is zero, so they take the slow path); the rest walk
 * the view with voxa_array_get. */
int64_t voxa__count_nonzero(const voxa_array *a) {
    int64_t n = voxa_array_size(a), count = 0;
    if (voxa_array_is_c_contiguous(a) && !voxa_dtype_is_float(a->dtype)) {
        switch (voxa_dtype_size(a->dtype)) {
#define COUNT(T)                                                                       \
    for (int64_t i = 0; i < n; i++) count += ((const T *)a->data)[i] != 0;            \
    return count;
        case 1: COUNT(uint8_t)
        case 2: COUNT(uint16_t)
        case 4: COUNT(uint32_t)
        case 8: COUNT(uint64_t)
#undef COUNT
        }
    }
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i++) {
        count += voxa_array_get(a, idx) != 0;
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (++idx[d] < a->shape[d]) break;
            idx[d] = 0;
        }
    }
    return count;
}
