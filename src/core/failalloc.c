/* Counting allocator wrappers for the allocation-failure sweep
 * (failalloc_hook.h redirects the library's calls here in -DVOXA_FAILALLOC
 * builds; tests/c/test_failalloc.c arms them). Every wrapped call takes a
 * ticket from one atomic counter; the armed ticket fails (NULL, or ENOMEM
 * for posix_memalign) and every other one calls the real allocator, so
 * exactly one allocation fails per armed run, whichever thread makes it.
 * GPU device calls (allocate, copy, launch, wait) take tickets too, and
 * device buffers are counted while they live.
 * Built empty (apart from the stubs) without the option. */
#include "failalloc.h"

#ifdef VOXA_FAILALLOC
#undef malloc
#undef calloc
#undef realloc
#undef posix_memalign
#undef aligned_alloc
#undef strdup
#undef strndup
#undef fftwf_malloc

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void *fftwf_malloc(size_t n); /* fftw3.h's prototype, without its complex types */

static _Atomic int64_t fail_at; /* ticket that fails; 0: none */
static _Atomic int64_t tickets;
static _Atomic int fired;
static void (*_Atomic on_fire)(void);

int voxa__failalloc_on(void) { return 1; }

void voxa__failalloc_arm(int64_t k) {
    atomic_store(&fail_at, 0);
    atomic_store(&tickets, 0);
    atomic_store(&fired, 0);
    atomic_store(&fail_at, k);
}

int64_t voxa__failalloc_count(void) { return atomic_load(&tickets); }
int voxa__failalloc_fired(void) { return atomic_load(&fired); }
void voxa__failalloc_on_fire(void (*fn)(void)) { atomic_store(&on_fire, fn); }

/* true: this allocation fails */
static int fail_now(void) {
    int64_t t = atomic_fetch_add(&tickets, 1) + 1;
    if (t != atomic_load(&fail_at)) return 0;
    atomic_store(&fired, 1);
    void (*fn)(void) = atomic_load(&on_fire);
    if (fn) fn();
    return 1;
}

void *voxa__fa_malloc(size_t n) { return fail_now() ? NULL : malloc(n); }
void *voxa__fa_calloc(size_t n, size_t size) { return fail_now() ? NULL : calloc(n, size); }
void *voxa__fa_realloc(void *p, size_t n) { return fail_now() ? NULL : realloc(p, n); }
void *voxa__fa_aligned_alloc(size_t align, size_t n) {
    return fail_now() ? NULL : aligned_alloc(align, n);
}
int voxa__fa_posix_memalign(void **p, size_t align, size_t n) {
    return fail_now() ? ENOMEM : posix_memalign(p, align, n);
}
char *voxa__fa_strdup(const char *s) { return fail_now() ? NULL : strdup(s); }
char *voxa__fa_strndup(const char *s, size_t n) { return fail_now() ? NULL : strndup(s, n); }
void *voxa__fa_fftwf_malloc(size_t n) { return fail_now() ? NULL : fftwf_malloc(n); }

/* Device calls take tickets from the same counter (src/backend/backend.c). */
static _Atomic int64_t device_live;
int voxa__fa_device_fails(void) { return fail_now(); }
void voxa__fa_device_live_add(long long d) { atomic_fetch_add(&device_live, (int64_t)d); }
int64_t voxa__failalloc_device_live(void) { return atomic_load(&device_live); }

#else
int voxa__failalloc_on(void) { return 0; }
void voxa__failalloc_arm(int64_t k) { (void)k; }
int64_t voxa__failalloc_count(void) { return 0; }
int voxa__failalloc_fired(void) { return 0; }
void voxa__failalloc_on_fire(void (*fn)(void)) { (void)fn; }
int64_t voxa__failalloc_device_live(void) { return 0; }
#endif
