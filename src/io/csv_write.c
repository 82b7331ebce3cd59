/* CSV tables out: a header of the column names (quoted per RFC 4180 when
 * they hold a comma, quote or line break), then one line per row. Numbers
 * are written with %.17g, which round-trips every double through
 * voxa_csv_parse and prints integers up to 2^53 without a decimal point;
 * NaN and infinities as nan, inf, -inf (what the reader and Python's float()
 * accept). Lines are formatted into a buffer and written with fwrite, through
 * the atomic writer: a failure leaves no file. */
#include "atomic.h"
#include "voxa/io.h"

#include <math.h>
#include <string.h>

static size_t put_name(char *buf, size_t n, const char *name) {
    if (!strpbrk(name, ",\"\r\n")) return (size_t)snprintf(buf, n, "%s", name);
    size_t k = 0;
    if (k < n) buf[k] = '"';
    k++;
    for (const char *c = name; *c; c++) {
        if (*c == '"' && ++k <= n) buf[k - 1] = '"';
        if (++k <= n) buf[k - 1] = *c;
    }
    if (++k <= n) buf[k - 1] = '"';
    if (k < n) buf[k] = '\0';
    return k;
}

static size_t put_number(char *buf, size_t n, double v) {
    if (v != v) return (size_t)snprintf(buf, n, "nan");
    if (isinf(v)) return (size_t)snprintf(buf, n, v > 0 ? "inf" : "-inf");
    return (size_t)snprintf(buf, n, "%.17g", v);
}

voxa_status voxa_csv_write(const char *path, const voxa_table *t) {
    VOXA_FAIL_IF(!t || !path, VOXA_EINVAL, "csv write: NULL argument");
    VOXA_FAIL_IF(t->ncols < 1 || t->nrows < 0 || !t->names || (t->nrows && !t->values),
                 VOXA_EINVAL, "csv write: a table needs named columns");
    voxa__atomic w;
    FILE *f = NULL;
    VOXA_CHECK(voxa__atomic_begin(&w, path));
    voxa_status st = voxa__atomic_fopen(&w, &f);
    if (st != VOXA_OK) return voxa__atomic_end(&w, NULL, st);
    char line[1 << 14];
    for (int64_t r = -1; r < t->nrows && st == VOXA_OK; r++) {
        size_t k = 0;
        for (int c = 0; c < t->ncols; c++) {
            if (k + 4096 > sizeof line) { /* flush a long line in pieces */
                if (fwrite(line, 1, k, f) != k) st = VOXA_EIO;
                k = 0;
            }
            if (c) line[k++] = ',';
            size_t room = sizeof line - k - 1;
            size_t m = r < 0 ? put_name(line + k, room, t->names[c])
                             : put_number(line + k, room, t->values[r * t->ncols + c]);
            VOXA_GOTO_IF(m >= room, VOXA_EINVAL, "csv write: column name %d is too long", c);
            k += m;
        }
        line[k++] = '\n';
        if (fwrite(line, 1, k, f) != k) st = VOXA_EIO;
    }
done:
    if (st == VOXA_EIO) st = voxa__error(VOXA_EIO, "cannot write '%s'", path);
    return voxa__atomic_end(&w, f, st);
}
