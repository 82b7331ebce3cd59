/* Device-call failure injection for the allocation-failure sweep, test
 * builds only (-DVOXA_FAILALLOC=ON, the ASan tier): a context's operations
 * are wrapped so that every allocation, copy, launch and wait takes a ticket
 * from the host allocators' counter (src/core/failalloc.c), and the armed one
 * fails with VOXA_ENOMEM as a real one would fail, without touching the
 * device. Live device buffers are counted, so a test sees one an error path
 * forgot. PoCL never fails these calls on its own: this is how their error
 * paths run at all. Empty without the option. */
#include "gpu.h"

#ifdef VOXA_FAILALLOC

static const voxa__gpu_ops *real[VOXA_NBACKENDS];

#define INJECTED(g, what)                                                                \
    do {                                                                                 \
        if (voxa__fa_device_fails())                                                     \
            return voxa__error(VOXA_ENOMEM, "%s: %s failed (injected by the test build)", \
                               voxa_backend_name((g)->kind), what);                     \
    } while (0)

static voxa_status fi_alloc(voxa__gpu *g, size_t bytes, voxa__buf *out) {
    INJECTED(g, "device allocation");
    voxa_status st = real[g->kind]->alloc(g, bytes, out);
    if (st == VOXA_OK) voxa__fa_device_live_add(1);
    return st;
}

static void fi_free(voxa__gpu *g, voxa__buf *b) {
    real[g->kind]->free(g, b);
    voxa__fa_device_live_add(-1);
}

static voxa_status fi_write(voxa__gpu *g, voxa__buf *b, size_t off, const void *src, size_t n) {
    INJECTED(g, "copy to the device");
    return real[g->kind]->write(g, b, off, src, n);
}

static voxa_status fi_read(voxa__gpu *g, const voxa__buf *b, size_t off, void *dst, size_t n) {
    INJECTED(g, "copy from the device");
    return real[g->kind]->read(g, b, off, dst, n);
}

static voxa_status fi_launch(voxa__gpu *g, const char *name, int64_t items, int nargs,
                             const voxa__arg *args) {
    INJECTED(g, name);
    return real[g->kind]->launch(g, name, items, nargs, args);
}

static voxa_status fi_finish(voxa__gpu *g) {
    INJECTED(g, "waiting for the device");
    return real[g->kind]->finish(g);
}

static voxa_status fi_check_ptr(voxa__gpu *g, uintptr_t ptr, size_t bytes, const char *what) {
    return real[g->kind]->check_ptr(g, ptr, bytes, what);
}

static const voxa__gpu_ops wrapped = {fi_alloc, fi_free, fi_write, fi_read, fi_launch,
                                      fi_finish, fi_check_ptr};
static const voxa__gpu_ops wrapped_no_ptr = {fi_alloc, fi_free,   fi_write, fi_read,
                                             fi_launch, fi_finish, NULL};

void voxa__gpu_inject_failures(voxa__gpu *g) {
    real[g->kind] = g->ops;
    g->ops = g->ops->check_ptr ? &wrapped : &wrapped_no_ptr;
}

#else
typedef int voxa__gpu_failinject_unused; /* ISO C: a translation unit is not empty */
#endif
