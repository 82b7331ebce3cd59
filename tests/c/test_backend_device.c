/* Device arrays (include/voxa/device.h), the host-side part that runs
 * without CUDA: argument checks and their messages, that the opencl backend
 * refuses device pointers, what a machine without a CUDA driver says, a
 * host pointer refused where a driver exists, and the transfer counter
 * (voxa_gpu_transfers) counting a host-array GPU run. Parity and "no host
 * copy" on a real device: tools/gpu-check.sh (CuPy). */
#include "vtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "voxa.h"

static voxa_device_array dev(voxa_backend b, void *p, voxa_dtype t, int64_t z, int64_t y,
                             int64_t x) {
    voxa_device_array a;
    memset(&a, 0, sizeof a);
    a.backend = b;
    a.ptr = (uintptr_t)p;
    a.dtype = t;
    a.ndim = 3;
    a.shape[0] = z, a.shape[1] = y, a.shape[2] = x;
    return a;
}

static int cuda_devices(void) {
    voxa_backend_info info;
    return voxa_backend_query(VOXA_BACKEND_CUDA, &info) == VOXA_OK ? info.ndevices : 0;
}

static void test_checks(void) {
    static uint8_t host_in[4 * 5 * 6];
    static int32_t host_out[4 * 5 * 6];
    static double host_d[4 * 5 * 6];
    voxa_device_array in = dev(VOXA_BACKEND_CUDA, host_in, VOXA_U8, 4, 5, 6);
    voxa_device_array out = dev(VOXA_BACKEND_CUDA, host_out, VOXA_I32, 4, 5, 6);
    voxa_device_array d = dev(VOXA_BACKEND_CUDA, host_d, VOXA_F64, 4, 5, 6);
    int64_t n = 5;
    CHECK_STATUS(voxa_label_device(NULL, NULL, 1, &out, &n), VOXA_EINVAL);
    CHECK_MSG("in is NULL");
    CHECK(n == 0);
    voxa_device_array f = in;
    f.dtype = VOXA_F32;
    CHECK_STATUS(voxa_label_device(&f, NULL, 1, &out, &n), VOXA_EUNSUPPORTED);
    CHECK_MSG("bool or uint8");
    voxa_device_array o2 = out;
    o2.shape[2] = 7;
    CHECK_STATUS(voxa_label_device(&in, NULL, 1, &o2, &n), VOXA_EINVAL);
    CHECK_MSG("expected the shape of in");
    CHECK_STATUS(voxa_label_device(&in, NULL, 4, &out, &n), VOXA_EINVAL);
    CHECK_MSG("connectivity");
    voxa_device_array of = out;
    of.dtype = VOXA_F32;
    CHECK(voxa_label_device(&in, NULL, 1, &of, &n) != VOXA_OK);
    /* opencl has no device pointers */
    voxa_device_array ci = in, co = out;
    ci.backend = co.backend = VOXA_BACKEND_OPENCL;
    CHECK_STATUS(voxa_label_device(&ci, NULL, 1, &co, &n), VOXA_EUNSUPPORTED);
    CHECK_MSG("cuda backend only");
    CHECK_STATUS(voxa_edt_device(NULL, &d, NULL), VOXA_EINVAL);
    CHECK_MSG("must not be NULL");
    voxa_device_array d2 = d;
    d2.shape[1] = 4;
    CHECK_STATUS(voxa_edt_device(&in, &d2, NULL), VOXA_EINVAL);
    CHECK_MSG("axis 1");
    voxa_device_array di = d;
    di.backend = VOXA_BACKEND_OPENCL;
    voxa_device_array ii = in;
    ii.backend = VOXA_BACKEND_OPENCL;
    CHECK_STATUS(voxa_edt_device(&ii, &di, NULL), VOXA_EUNSUPPORTED);
    CHECK_MSG("cuda backend only");
    /* host pointers: refused by the driver's pointer check, or no driver */
    voxa_status st = voxa_label_device(&in, NULL, 1, &out, &n);
    voxa_status se = voxa_edt_device(&in, &d, NULL);
    if (cuda_devices() > 0) {
        CHECK(st == VOXA_EINVAL && se == VOXA_EINVAL);
        CHECK_MSG("not CUDA device memory");
    } else {
        CHECK(st == VOXA_EUNSUPPORTED && se == VOXA_EUNSUPPORTED);
        CHECK(strstr(voxa_last_error(), "CUDA") || strstr(voxa_last_error(), "cuda"));
    }
}

static void test_transfer_counter(void) {
    voxa_backend_info info;
    if (voxa_backend_query(VOXA_BACKEND_OPENCL, &info) != VOXA_OK || !info.ndevices) {
        fprintf(stderr, "skip: no opencl device\n");
        return;
    }
    int64_t sh[3] = {6, 7, 8}, to0, from0, to1, from1;
    voxa_array m, l;
    CHECK_OK(voxa_array_new(&m, VOXA_U8, 3, sh));
    CHECK_OK(voxa_array_new(&l, VOXA_I32, 3, sh));
    for (int i = 0; i < 6 * 7 * 8; i++) ((uint8_t *)m.data)[i] = (uint8_t)(i % 3 == 0);
    voxa_gpu_transfers(&to0, &from0);
    int64_t n;
    CHECK_OK(voxa_label_on(VOXA_BACKEND_OPENCL, &m, NULL, 1, &l, &n));
    voxa_gpu_transfers(&to1, &from1);
    CHECK(to1 - to0 >= 6 * 7 * 8);         /* the mask went up */
    CHECK(from1 - from0 >= 6 * 7 * 8 * 4); /* the labels came down */
    voxa_gpu_transfers(NULL, NULL);
    voxa_array_free(&m);
    voxa_array_free(&l);
}

int main(void) {
    RUN(test_checks);
    RUN(test_transfer_counter);
    VTEST_END();
}
