/* libFuzzer target: Zarr chunk decoding (voxa_zarr_decode_chunk) on
 * arbitrary bytes, for each kind of chain voxa reads: blosc (lz4, zstd,
 * zlib; shuffle and bitshuffle), zstd, gzip, zlib, raw big-endian F order,
 * and v3 shards (index + crc32c, inner chunks zstd or raw). The first byte
 * picks the array; the rest is the chunk/shard file. Decoding must fail
 * cleanly or produce exactly the chunk, never read out of bounds. */
#include "voxa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NARR 9
static voxa_zarr *arrays[NARR];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/voxa-fuzz-zarr-%ld", (long)getpid());
    int64_t shape[3] = {5, 6, 7};
    voxa_zarr_options o[NARR];
    memset(o, 0, sizeof o);
    for (int i = 0; i < NARR; i++) o[i].chunks[0] = 2, o[i].chunks[1] = 3, o[i].chunks[2] = 7;
    o[1].blosc_cname = "zstd", o[1].blosc_shuffle = 2;
    o[2].blosc_cname = "zlib", o[2].blosc_shuffle = 1;
    o[3].codec = VOXA_ZARR_ZSTD;
    o[4].codec = VOXA_ZARR_GZIP;
    o[5].codec = VOXA_ZARR_ZLIB, o[5].format = 2;
    o[6].codec = VOXA_ZARR_RAW, o[6].format = 2, o[6].big_endian = 1, o[6].fortran_order = 1;
    o[7].codec = VOXA_ZARR_ZSTD, o[7].shards[0] = 4, o[7].shards[1] = 6, o[7].shards[2] = 7;
    o[8].codec = VOXA_ZARR_RAW, o[8].shards[0] = 2, o[8].shards[1] = 6, o[8].shards[2] = 7;
    for (int i = 0; i < NARR; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/a%d.zarr", dir, i);
        if (voxa_zarr_create(p, VOXA_U16, 3, shape, &o[i], &arrays[i]) != VOXA_OK) abort();
    }
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 0;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    voxa_zarr *z = arrays[data[0] % NARR];
    voxa_zarr_info info;
    if (voxa_zarr_get_info(z, &info) != VOXA_OK) abort();
    voxa_array out;
    if (voxa_array_new(&out, info.dtype, info.ndim, info.write_unit) != VOXA_OK) return 0;
    voxa_zarr_decode_chunk(z, data + 1, size - 1, &out);
    voxa_array_free(&out);
    return 0;
}
