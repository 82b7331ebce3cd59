/* Views that the binary op families share: any array as C-contiguous 0/1
 * bytes, and C-contiguous results copied back into a strided view. */
#include "internal.h"

#include <string.h>

voxa_status voxa__binary_view(const voxa_array *in, const uint8_t **data, uint8_t **owned) {
    *owned = NULL;
    if ((in->dtype == VOXA_BOOL || in->dtype == VOXA_U8 || in->dtype == VOXA_I8) &&
        voxa_array_is_c_contiguous(in)) {
        *data = in->data;
        return VOXA_OK;
    }
    int64_t n = voxa_array_size(in);
    uint8_t *b = voxa__malloc((size_t)(n ? n : 1), 1);
    VOXA_FAIL_IF(!b, VOXA_ENOMEM, "cannot allocate %lld bytes", (long long)n);
    int64_t idx[VOXA_MAXDIM] = {0};
    size_t es = voxa_dtype_size(in->dtype);
    for (int64_t i = 0; i < n; i++) {
        const char *s = (const char *)in->data + voxa__offset(in, idx);
        int nz = 0;
        switch (in->dtype) {
        case VOXA_F32: { float v; memcpy(&v, s, 4); nz = v != 0; } break;
        case VOXA_F64: { double v; memcpy(&v, s, 8); nz = v != 0; } break;
        default:
            for (size_t k = 0; k < es; k++) nz |= s[k] != 0;
        }
        b[i] = (uint8_t)nz;
        for (int d = in->ndim - 1; d >= 0; d--) {
            if (++idx[d] < in->shape[d]) break;
            idx[d] = 0;
        }
    }
    *data = b;
    *owned = b;
    return VOXA_OK;
}

void voxa__copy_into(const void *src, voxa_array *dst) {
    int64_t n = voxa_array_size(dst);
    size_t es = voxa_dtype_size(dst->dtype);
    int64_t idx[VOXA_MAXDIM] = {0};
    const char *s = src;
    for (int64_t i = 0; i < n; i++, s += es) {
        memcpy((char *)dst->data + voxa__offset(dst, idx), s, es);
        for (int d = dst->ndim - 1; d >= 0; d--) {
            if (++idx[d] < dst->shape[d]) break;
            idx[d] = 0;
        }
    }
}
