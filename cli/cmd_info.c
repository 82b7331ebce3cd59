/* voxa info FILE: shape, dtype, min/max, foreground count. */
#include "cli.h"

#include <math.h>
#include <stdio.h>

const char voxa_cmd_info_help[] =
    "Print shape, dtype, min/max and foreground (non-zero) count of an array file.\n"
    "\n"
    "usage: voxa info FILE\n"
    "  FILE   .npy, .tif/.tiff or .zarr (an array or an OME-Zarr image)\n";

/* Walk every element once in C order, accumulating min/max as doubles and
 * counting non-zeros. Integers above 2^53 lose exactness in min/max only. */
#define STATS(T)                                                               \
    for (int64_t i = 0; i < n; i++) {                                          \
        double v = (double)((const T *)a.data)[i];                             \
        if (v != 0) nz++;                                                      \
        if (v != v) { nan++; continue; }                                       \
        if (v < lo) lo = v;                                                    \
        if (v > hi) hi = v;                                                    \
    }

int voxa_cmd_info(int argc, char **argv) {
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, NULL, 0, voxa_cmd_info_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1) return cli_error("info", CLI_USAGE, "expected one FILE (see voxa help info)");
    voxa_array raw, a;
    voxa_status s = voxa_read(pos[0], &raw);
    if (s != VOXA_OK) return cli_fail("info", s);
    /* Readers may return Fortran-ordered views; stats need only the values. */
    a = raw;
    int64_t n = voxa_array_size(&a), nz = 0, nan = 0;
    double lo = INFINITY, hi = -INFINITY;
    switch (a.dtype) {
    case VOXA_BOOL: case VOXA_U8: STATS(uint8_t) break;
    case VOXA_I8: STATS(int8_t) break;
    case VOXA_U16: STATS(uint16_t) break;
    case VOXA_I16: STATS(int16_t) break;
    case VOXA_U32: STATS(uint32_t) break;
    case VOXA_I32: STATS(int32_t) break;
    case VOXA_U64: STATS(uint64_t) break;
    case VOXA_I64: STATS(int64_t) break;
    case VOXA_F32: STATS(float) break;
    case VOXA_F64: STATS(double) break;
    default: break;
    }
    printf("file:       %s\nshape:      (", pos[0]);
    for (int d = 0; d < a.ndim; d++) printf(d ? ", %lld" : "%lld", (long long)a.shape[d]);
    printf(a.ndim == 1 ? ",)\n" : ")\n");
    printf("dtype:      %s\n", voxa_dtype_name(a.dtype));
    printf("voxels:     %lld\n", (long long)n);
    if (n - nan > 0) printf("min:        %.17g\nmax:        %.17g\n", lo, hi);
    else printf("min:        -\nmax:        -\n");
    if (nan) printf("nan:        %lld\n", (long long)nan);
    printf("foreground: %lld (%.3f%%)\n", (long long)nz, n ? 100.0 * (double)nz / (double)n : 0.0);
    voxa_array_free(&raw);
    return CLI_OK;
}
