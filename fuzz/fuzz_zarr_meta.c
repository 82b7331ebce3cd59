/* libFuzzer target: the Zarr metadata parser (voxa_zarr_parse_metadata: v2
 * .zarray and v3 zarr.json, codec chains, sharding, fill values) on
 * arbitrary bytes. It must never crash or read out of bounds (ASan), and on
 * success must report a consistent array: ndim in range, positive chunks,
 * shard shapes that are multiples of the inner chunks, a valid dtype. */
#include "voxa.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    voxa_zarr_info info;
    if (voxa_zarr_parse_metadata((const char *)data, size, &info) != VOXA_OK) return 0;
    if (info.ndim < 0 || info.ndim > VOXA_MAXDIM || voxa_dtype_size(info.dtype) == 0 ||
        (info.format != 2 && info.format != 3))
        abort();
    for (int d = 0; d < info.ndim; d++) {
        if (info.shape[d] < 0 || info.chunks[d] < 1 || info.write_unit[d] < 1 ||
            info.write_unit[d] % info.chunks[d])
            abort();
        if (!info.sharded && info.write_unit[d] != info.chunks[d]) abort();
    }
    return 0;
}
