/* libFuzzer target: the .npy header parser (voxa_npy_parse_header) on
 * arbitrary bytes. It must never read past the buffer (ASan), and on
 * success must report a consistent header. */
#include "voxa.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    voxa_dtype t;
    int ndim = -1, fortran = -1, swap = -1;
    int64_t shape[VOXA_MAXDIM];
    size_t offset = 0;
    if (voxa_npy_parse_header(data, size, &t, &ndim, shape, &fortran, &swap, &offset) ==
        VOXA_OK) {
        if (ndim < 0 || ndim > VOXA_MAXDIM || offset > size || offset < 10 ||
            (fortran != 0 && fortran != 1) || (swap != 0 && swap != 1) ||
            voxa_dtype_size(t) == 0)
            abort();
        int64_t bytes = (int64_t)voxa_dtype_size(t);
        for (int d = 0; d < ndim; d++) {
            if (shape[d] < 0) abort();
            if (shape[d] && bytes > INT64_MAX / shape[d]) abort(); /* must be rejected */
            bytes *= shape[d];
        }
    }
    return 0;
}
