/* Allocation-failure injection, test builds only (CMake -DVOXA_FAILALLOC=ON,
 * the ASan tier). CMake force-includes this header (-include) into every
 * library source, so voxa's own calls to the C allocators (and to
 * fftwf_malloc) go through counting wrappers in failalloc.c; the libraries
 * voxa uses (FFTW's planner, libgomp, libtiff, zlib, blosc, zstd) are not
 * counted. Object-like macros, so taking an allocator's address works too;
 * the system headers' declarations are renamed with them, which declares
 * the wrappers with the libc prototypes. tests/c/test_failalloc.c arms the
 * wrappers (failalloc.h) to fail the k-th allocation from now. Without the
 * option nothing here is compiled. */
#ifndef VOXA_FAILALLOC_HOOK_H
#define VOXA_FAILALLOC_HOOK_H
#ifdef VOXA_FAILALLOC

#include <stddef.h>

void *voxa__fa_malloc(size_t n);
void *voxa__fa_calloc(size_t n, size_t size);
void *voxa__fa_realloc(void *p, size_t n);
int voxa__fa_posix_memalign(void **p, size_t align, size_t n);
void *voxa__fa_aligned_alloc(size_t align, size_t n);
char *voxa__fa_strdup(const char *s);
char *voxa__fa_strndup(const char *s, size_t n);
void *voxa__fa_fftwf_malloc(size_t n);
/* GPU device calls (backend.c): 1 when this one is to fail; live buffers. */
int voxa__fa_device_fails(void);
void voxa__fa_device_live_add(long long d); /* no <stdint.h>: force-included first */

#define malloc voxa__fa_malloc
#define calloc voxa__fa_calloc
#define realloc voxa__fa_realloc
#define posix_memalign voxa__fa_posix_memalign
#define aligned_alloc voxa__fa_aligned_alloc
#define strdup voxa__fa_strdup
#define strndup voxa__fa_strndup
#define fftwf_malloc voxa__fa_fftwf_malloc

#endif
#endif
