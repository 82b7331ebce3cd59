/* Output arrays of the readers. voxa_array_new gets fresh, untouched pages
 * from calloc (mmap) for big arrays; on this kind of machine (a VM) each 4 KiB
 * page fault costs ~2 us, so filling an 80 MiB array page by page costs
 * ~40 ms, more than the read itself. Asking for transparent huge pages on
 * the 2 MiB-aligned interior (as NumPy does for its arrays) makes that
 * ~10 ms. A hint only: ignored where THP is off. Include this header first
 * (it needs _DEFAULT_SOURCE for MADV_HUGEPAGE). */
#ifndef VOXA_IO_ALLOC_H
#define VOXA_IO_ALLOC_H

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <stdint.h>
#include <sys/mman.h>

#include "internal.h"

static inline voxa_status voxa__io_array_new(voxa_array *a, voxa_dtype t, int ndim,
                                             const int64_t *shape) {
    VOXA_CHECK(voxa_array_new(a, t, ndim, shape));
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    size_t bytes = (size_t)voxa_array_size(a) * voxa_dtype_size(t);
    if (bytes >= 4 * huge) {
        uintptr_t lo = ((uintptr_t)a->data + huge - 1) & ~(huge - 1);
        uintptr_t hi = ((uintptr_t)a->data + bytes) & ~(huge - 1);
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return VOXA_OK;
}

#endif
