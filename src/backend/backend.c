/* Backend selection and the GPU contexts.
 *
 * Names <-> enum, the process-wide default (VOXA_BACKEND, read once, or
 * voxa_backend_select), probing for `voxa backends`, and one lazily opened
 * context per GPU backend. Opening a context loads the runtime with dlopen,
 * so nothing here needs libOpenCL or libcuda at link or load time; a failure
 * to open is remembered with its message, so every later call reports the
 * same reason without probing again.
 *
 * Contexts live for the process (drivers clean up at exit); each one has a
 * mutex held from voxa__gpu_acquire to voxa__gpu_release, which is what
 * makes the (single-queue) backends safe to call from several threads. */
#include "gpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const names[VOXA_NBACKENDS] = {"cpu", "opencl", "cuda", "auto"};

const char *voxa_backend_name(voxa_backend b) {
    return (unsigned)b < VOXA_NBACKENDS ? names[b] : "invalid";
}

voxa_status voxa_backend_from_name(const char *name, voxa_backend *out) {
    VOXA_FAIL_IF(!name || !out, VOXA_EINVAL, "backend: NULL argument");
    for (int b = 0; b < VOXA_NBACKENDS; b++)
        if (!strcmp(name, names[b])) {
            *out = (voxa_backend)b;
            return VOXA_OK;
        }
    return voxa__error(VOXA_EINVAL,
                       "backend: unknown backend '%s' (expected cpu, opencl, cuda or auto)",
                       name);
}

/* ---- the default ------------------------------------------------------------ */

static _Atomic int selected = -1; /* -1: not read from the environment yet */

voxa_status voxa_backend_select(voxa_backend b) {
    VOXA_FAIL_IF((unsigned)b >= VOXA_NBACKENDS, VOXA_EINVAL, "backend: invalid value %d",
                 (int)b);
    atomic_store(&selected, (int)b);
    return VOXA_OK;
}

voxa_backend voxa_backend_selected(void) {
    int s = atomic_load(&selected);
    if (s >= 0) return (voxa_backend)s;
    /* An unknown VOXA_BACKEND means cpu here; the CLI and Python check the
     * variable themselves and report the bad name. */
    voxa_backend b = VOXA_BACKEND_CPU;
    const char *env = getenv("VOXA_BACKEND");
    if (env && *env && voxa_backend_from_name(env, &b) != VOXA_OK) {
        voxa_clear_error();
        b = VOXA_BACKEND_CPU;
    }
    int expect = -1;
    atomic_compare_exchange_strong(&selected, &expect, (int)b);
    return (voxa_backend)atomic_load(&selected);
}

/* ---- probing ------------------------------------------------------------------ */

voxa_status voxa_backend_query(voxa_backend b, voxa_backend_info *info) {
    VOXA_FAIL_IF(!info, VOXA_EINVAL, "backend: info is NULL");
    memset(info, 0, sizeof *info);
    info->backend = b;
    switch (b) {
    case VOXA_BACKEND_CPU:
        info->available = 1;
        info->ndevices = 1;
        snprintf(info->devices[0].name, sizeof info->devices[0].name, "host CPU, %d threads",
                 voxa_get_threads());
        snprintf(info->runtime, sizeof info->runtime, "voxa %s", voxa_version());
        return VOXA_OK;
    case VOXA_BACKEND_OPENCL: return voxa__opencl_query(info);
    case VOXA_BACKEND_CUDA: return voxa__cuda_query(info);
    default:
        return voxa__error(VOXA_EINVAL, "backend: cannot query '%s' (cpu, opencl or cuda)",
                           voxa_backend_name(b));
    }
}

/* ---- contexts ------------------------------------------------------------------ */

typedef struct slot {
    pthread_mutex_t lock;
    int state; /* 0 not tried, 1 open, -1 failed (msg says why) */
    voxa_status err;
    char msg[512];
    voxa__gpu g;
} slot;

static slot slots[VOXA_NBACKENDS] = {
    [VOXA_BACKEND_OPENCL] = {.lock = PTHREAD_MUTEX_INITIALIZER},
    [VOXA_BACKEND_CUDA] = {.lock = PTHREAD_MUTEX_INITIALIZER},
};

voxa_status voxa__gpu_acquire(voxa_backend b, const char *what, voxa__gpu **out) {
    *out = NULL;
    VOXA_FAIL_IF(b != VOXA_BACKEND_OPENCL && b != VOXA_BACKEND_CUDA, VOXA_EINVAL,
                 "%s: backend '%s' is not a GPU backend", what, voxa_backend_name(b));
    slot *s = &slots[b];
    pthread_mutex_lock(&s->lock);
    if (s->state == 0) {
        s->g.kind = b;
        const char *t = getenv("VOXA_GPU_TIMING");
        s->g.timing = t && *t && strcmp(t, "0");
        voxa_status st = b == VOXA_BACKEND_OPENCL ? voxa__opencl_open(&s->g)
                                                  : voxa__cuda_open(&s->g);
        s->state = st == VOXA_OK ? 1 : -1;
#ifdef VOXA_FAILALLOC
        if (st == VOXA_OK) voxa__gpu_inject_failures(&s->g);
#endif
        s->err = st;
        if (st != VOXA_OK) snprintf(s->msg, sizeof s->msg, "%s", voxa_last_error());
    }
    if (s->state < 0) {
        voxa_status st = s->err;
        pthread_mutex_unlock(&s->lock);
        return voxa__error(st, "%s%sbackend '%s' cannot run: %s", what, *what ? ": " : "",
                           voxa_backend_name(b), s->msg);
    }
    *out = &s->g;
    return VOXA_OK;
}

void voxa__gpu_release(voxa__gpu *g) {
    if (g) pthread_mutex_unlock(&slots[g->kind].lock);
}

voxa_status voxa_backend_resolve(voxa_backend b, voxa_backend *out) {
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "backend: out is NULL");
    VOXA_FAIL_IF((unsigned)b >= VOXA_NBACKENDS, VOXA_EINVAL, "backend: invalid value %d",
                 (int)b);
    if (b == VOXA_BACKEND_CPU) {
        *out = b;
        return VOXA_OK;
    }
    if (b != VOXA_BACKEND_AUTO) {
        voxa__gpu *g;
        VOXA_CHECK(voxa__gpu_acquire(b, "", &g));
        voxa__gpu_release(g);
        *out = b;
        return VOXA_OK;
    }
    const voxa_backend order[2] = {VOXA_BACKEND_CUDA, VOXA_BACKEND_OPENCL};
    for (int i = 0; i < 2; i++) {
        voxa__gpu *g;
        if (voxa__gpu_acquire(order[i], "", &g) == VOXA_OK) {
            voxa__gpu_release(g);
            *out = order[i];
            return VOXA_OK;
        }
    }
    voxa_clear_error();
    *out = VOXA_BACKEND_CPU;
    return VOXA_OK;
}

double voxa__gpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

voxa_status voxa_backend_timing(voxa_backend b, double seconds[3], int reset) {
    VOXA_FAIL_IF(!seconds, VOXA_EINVAL, "backend timing: seconds is NULL");
    seconds[0] = seconds[1] = seconds[2] = 0;
    if (b != VOXA_BACKEND_OPENCL && b != VOXA_BACKEND_CUDA) return VOXA_OK;
    slot *s = &slots[b];
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < 3; i++) {
        seconds[i] = s->g.seconds[i];
        if (reset) s->g.seconds[i] = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return VOXA_OK;
}

/* ---- buffers ---------------------------------------------------------------------- */

voxa_status voxa__gpu_alloc(voxa__gpu *g, size_t bytes, const char *what, voxa__buf *out) {
    out->h = 0;
    out->bytes = 0;
    if (bytes == 0) bytes = 1;
    VOXA_FAIL_IF(g->max_alloc > 0 && (int64_t)bytes > g->max_alloc, VOXA_EUNSUPPORTED,
                 "%s: needs a device buffer of %zu bytes but %s (%s) allocates at most "
                 "%lld bytes in one buffer (tiling is not built yet: use the cpu backend)",
                 what, bytes, voxa_backend_name(g->kind), g->device, (long long)g->max_alloc);
    return g->ops->alloc(g, bytes, out);
}

voxa_status voxa__gpu_upload(voxa__gpu *g, const void *src, size_t n, const char *what,
                             voxa__buf *out) {
    VOXA_CHECK(voxa__gpu_alloc(g, n, what, out));
    if (n == 0) return VOXA_OK;
    voxa_status st = g->ops->write(g, out, 0, src, n);
    if (st != VOXA_OK) voxa__gpu_free(g, out);
    return st;
}

void voxa__gpu_free(voxa__gpu *g, voxa__buf *b) {
    if (g && b && b->h && !b->borrowed) g->ops->free(g, b);
    if (b) b->h = 0, b->bytes = 0, b->borrowed = 0;
}

/* ---- device arrays and transfer counts ------------------------------------------------ */

static int64_t transfers[2];

void voxa__gpu_count_transfer(int dir, size_t n) {
    __atomic_fetch_add(&transfers[dir != 0], (int64_t)n, __ATOMIC_RELAXED);
}

void voxa_gpu_transfers(int64_t *to_device, int64_t *from_device) {
    if (to_device) *to_device = __atomic_load_n(&transfers[0], __ATOMIC_RELAXED);
    if (from_device) *from_device = __atomic_load_n(&transfers[1], __ATOMIC_RELAXED);
}

voxa_status voxa__gpu_borrow(voxa__gpu *g, const voxa_device_array *a, const char *what,
                             voxa__buf *out) {
    memset(out, 0, sizeof *out);
    VOXA_FAIL_IF(!a, VOXA_EINVAL, "%s: NULL device array", what);
    VOXA_FAIL_IF(a->backend != g->kind, VOXA_EINVAL, "%s: an array of backend '%s', the run "
                 "is on '%s'", what, voxa_backend_name(a->backend), voxa_backend_name(g->kind));
    VOXA_FAIL_IF(!g->ops->check_ptr, VOXA_EUNSUPPORTED, "%s: the %s backend takes host arrays "
                 "only (device arrays: cuda)", what, voxa_backend_name(g->kind));
    VOXA_FAIL_IF(!a->ptr, VOXA_EINVAL, "%s: NULL device pointer", what);
    VOXA_FAIL_IF(a->ndim < 1 || a->ndim > VOXA_MAXDIM, VOXA_EINVAL, "%s: ndim %d is out of "
                 "range 1..%d", what, a->ndim, VOXA_MAXDIM);
    size_t es = voxa_dtype_size(a->dtype), n = 1;
    VOXA_FAIL_IF(!es, VOXA_EINVAL, "%s: invalid dtype %d", what, (int)a->dtype);
    for (int d = 0; d < a->ndim; d++) {
        VOXA_FAIL_IF(a->shape[d] < 0, VOXA_EINVAL, "%s: negative extent %lld on axis %d", what,
                     (long long)a->shape[d], d);
        n *= (size_t)a->shape[d];
    }
    if (n) VOXA_CHECK(g->ops->check_ptr(g, a->ptr, n * es, what));
    out->h = a->ptr;
    out->bytes = n * es;
    out->borrowed = 1;
    return VOXA_OK;
}

/* ---- host views ---------------------------------------------------------------------- */

voxa_status voxa__gpu_host_contig(const voxa_array *a, const void **data, voxa_array *tmp) {
    memset(tmp, 0, sizeof *tmp);
    if (voxa_array_is_c_contiguous(a)) {
        *data = a->data;
        return VOXA_OK;
    }
    VOXA_CHECK(voxa__contiguous_copy(a, tmp));
    *data = tmp->data;
    return VOXA_OK;
}

voxa_status voxa__gpu_read_into(voxa__gpu *g, const voxa__buf *b, voxa_array *out) {
    size_t n = (size_t)voxa_array_size(out) * voxa_dtype_size(out->dtype);
    if (n == 0) return VOXA_OK;
    if (voxa_array_is_c_contiguous(out)) return g->ops->read(g, b, 0, out->data, n);
    void *tmp = voxa__malloc(n, 1);
    VOXA_FAIL_IF(!tmp, VOXA_ENOMEM, "gpu: out of host memory for %zu bytes", n);
    voxa_status st = g->ops->read(g, b, 0, tmp, n);
    if (st == VOXA_OK) voxa__copy_into(tmp, out);
    voxa__free(tmp);
    return st;
}
