/* libFuzzer target: the CSV parser (voxa_csv_parse) on arbitrary bytes.
 * Checks memory safety (ASan/UBSan) and the table's invariants. */
#include "voxa.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    voxa_table t;
    voxa_status s = voxa_csv_parse((const char *)data, size, &t);
    if (s == VOXA_OK) {
        if (t.ncols < 1 || t.nrows < 0 || !t.names || (t.nrows && !t.values)) abort();
        for (int i = 0; i < t.ncols; i++) {
            if (!t.names[i]) abort();
            int k = voxa_table_column(&t, t.names[i]);
            if (k < 0 || k > i) abort(); /* found, at its index or an earlier duplicate */
            (void)strlen(t.names[i]);
        }
        volatile double sum = 0;
        for (int64_t i = 0; i < t.nrows * t.ncols; i++) sum += t.values[i];
        (void)sum;
    } else if (t.names || t.values || t.nrows || t.ncols) {
        abort(); /* a failed parse leaves an empty table */
    }
    voxa_table_free(&t);
    return 0;
}
