/* The device limits that decide tiling: how many bytes one GPU run may use
 * and how large one buffer may be, for backend b's device 0.
 *
 * Probed once per backend (voxa_backend_query): 3/4 of the device memory
 * (room for the runtime and other users) and the device's largest
 * allocation (PoCL: 2-4 GiB; CUDA: the memory). VOXA_GPU_TILE_BYTES=N lowers
 * both to N bytes: tests force tiles on small volumes with it, and a user
 * can keep room on a shared device. Used by the router (local ops in
 * blocks) and by global ops that tile themselves (label, edt). */
#include "gpu_limits.h"

#include <pthread.h>
#include <stdlib.h>

voxa_status voxa__gpu_limits(voxa_backend b, int64_t *total, int64_t *largest) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int64_t mem[VOXA_NBACKENDS], maxa[VOXA_NBACKENDS];
    static int probed[VOXA_NBACKENDS];
    VOXA_FAIL_IF((unsigned)b >= VOXA_NBACKENDS || !total || !largest, VOXA_EINVAL,
                 "device limits: bad argument");
    voxa_status st = VOXA_OK;
    pthread_mutex_lock(&lock);
    if (!probed[b]) {
        voxa_backend_info info;
        st = voxa_backend_query(b, &info);
        mem[b] = st == VOXA_OK && info.ndevices ? info.devices[0].memory : 0;
        maxa[b] = st == VOXA_OK && info.ndevices ? info.devices[0].max_alloc : 0;
        probed[b] = st == VOXA_OK;
    }
    pthread_mutex_unlock(&lock);
    VOXA_CHECK(st);
    *total = mem[b] > 0 ? mem[b] / 4 * 3 : INT64_MAX;
    *largest = maxa[b] > 0 ? maxa[b] : INT64_MAX;
    const char *env = getenv("VOXA_GPU_TILE_BYTES");
    if (env && *env) {
        char *end;
        long long v = strtoll(env, &end, 10);
        VOXA_FAIL_IF(*end || v < 1, VOXA_EINVAL,
                     "VOXA_GPU_TILE_BYTES: '%s' is not a positive number of bytes", env);
        if (v < *total) *total = v;
        if (v < *largest) *largest = v;
    }
    return VOXA_OK;
}
