/* CSV tables of numbers with a header row (points for `voxa balls`, corner
 * tables for `voxa roi`).
 *
 * One pass over the text, left to right, with a tiny state machine per
 * field: a field is either unquoted (up to the next ',' or end of line) or
 * double-quoted (RFC 4180: "" is a literal quote; commas and newlines may
 * appear inside). Lines end with \n or \r\n; the last one may lack it. A
 * UTF-8 byte-order mark at the very start is skipped, blank lines (only
 * spaces, tabs or \r) are skipped anywhere. The header gives the column names
 * (spaces around them trimmed; looked up case-insensitively by
 * voxa_table_column). Every later line must have exactly as many fields as
 * the header, else EFORMAT names the line (1-based, counting every physical
 * line). A cell is converted, after trimming spaces, by Clinger's exact fast
 * path when its digits fit 2^53 and its power of ten is within 22 (the common
 * case, ~10x cheaper), else by strtod in the "C" locale (whatever the process
 * locale is); both give the correctly rounded double; a cell that is empty, not
 * entirely a number, or hexadecimal becomes NaN: the caller decides what is
 * an error. "nan", "inf" and "infinity" are read as such (like Python's
 * float()). A table with a header and no rows has nrows 0.
 *
 * Cost: O(bytes) time; memory = the values (nrows x ncols doubles, grown
 * geometrically, then trimmed) + the names. voxa_csv_read maps the file
 * (no copy) when it can, else reads it into memory.
 *
 * Fuzzed by fuzz/fuzz_csv.c. */
#include "internal.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_COLS 100000

typedef struct parser {
    const char *p, *end;
    int64_t line; /* 1-based physical line of p */
    char *cell;   /* unquoted copy of a quoted field */
    size_t cell_len, cell_cap;
    const char *f; /* the current field: into the text, or into cell if quoted */
    size_t flen;
    char *num;     /* NUL-terminated copy of a cell for strtod */
    size_t num_cap;
    int nomem;     /* cell_value could not grow num */
} parser;

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* Append n bytes to the current cell. */
static int cell_append(parser *ps, const char *s, size_t n) {
    if (ps->cell_len + n + 1 > ps->cell_cap) {
        size_t cap = ps->cell_cap ? ps->cell_cap : 64;
        while (cap < ps->cell_len + n + 1) cap *= 2;
        char *nc = realloc(ps->cell, cap);
        if (!nc) return 0;
        ps->cell = nc;
        ps->cell_cap = cap;
    }
    memcpy(ps->cell + ps->cell_len, s, n);
    ps->cell_len += n;
    return 1;
}

/* Is the rest of the current line blank? (Leaves p unchanged.) */
static int line_is_blank(const parser *ps) {
    const char *q = ps->p;
    while (q < ps->end && is_blank(*q)) q++;
    return q == ps->end || *q == '\n';
}

/* Skip blank lines. */
static void skip_blank_lines(parser *ps) {
    while (ps->p < ps->end && line_is_blank(ps)) {
        const char *nl = memchr(ps->p, '\n', (size_t)(ps->end - ps->p));
        ps->p = nl ? nl + 1 : ps->end;
        ps->line++;
    }
}

/* Read one field: ps->f/flen (trimmed when unquoted; unquoted fields are not
 * copied). Sets *eol when the field ended the line (or the text). */
static voxa_status read_field(parser *ps, int *eol) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t')) ps->p++;
    if (ps->p < ps->end && *ps->p == '"') {
        int64_t start_line = ps->line;
        ps->cell_len = 0;
        ps->p++;
        for (;;) {
            /* Copy up to the next quote in one go. */
            const char *q = memchr(ps->p, '"', (size_t)(ps->end - ps->p));
            if (!q)
                return voxa__error(VOXA_EFORMAT, "CSV line %lld: unterminated quoted field",
                                   (long long)start_line);
            for (const char *c = ps->p; c < q; c++) ps->line += *c == '\n';
            if (!cell_append(ps, ps->p, (size_t)(q - ps->p)))
                return voxa__error(VOXA_ENOMEM, "out of memory reading CSV");
            ps->p = q + 1;
            if (ps->p < ps->end && *ps->p == '"') { /* "" -> " */
                if (!cell_append(ps, "\"", 1))
                    return voxa__error(VOXA_ENOMEM, "out of memory reading CSV");
                ps->p++;
            } else {
                break;
            }
        }
        while (ps->p < ps->end && is_blank(*ps->p)) ps->p++;
        if (ps->p < ps->end && *ps->p != ',' && *ps->p != '\n')
            return voxa__error(VOXA_EFORMAT,
                               "CSV line %lld: unexpected character '%c' after a quoted field",
                               (long long)ps->line, isprint((unsigned char)*ps->p) ? *ps->p : '?');
        ps->f = ps->cell ? ps->cell : "";
        ps->flen = ps->cell_len;
    } else {
        const char *s = ps->p;
        while (ps->p < ps->end && *ps->p != ',' && *ps->p != '\n') ps->p++;
        const char *e = ps->p;
        while (e > s && is_blank(e[-1])) e--;
        ps->f = s;
        ps->flen = (size_t)(e - s);
    }
    if (ps->p >= ps->end) {
        *eol = 1;
    } else if (*ps->p == '\n') {
        *eol = 1;
        ps->p++;
        ps->line++;
    } else { /* ',' */
        *eol = 0;
        ps->p++;
    }
    return VOXA_OK;
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* Clinger's fast path: a decimal with at most 2^53 as its digits and a
 * power of ten up to 22 converts exactly with one correctly rounded multiply
 * or divide (both operands are exact doubles), i.e. to the same double as
 * strtod. Returns 0 when the cell needs strtod. */
static int fast_number(const char *s, size_t n, double *out) {
    static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const uint64_t lim = (uint64_t)1 << 53;
    size_t i = 0;
    int neg = 0, digits = 0;
    int64_t exp10 = 0;
    uint64_t m = 0;
    if (s[0] == '+' || s[0] == '-') neg = s[i++] == '-';
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        m = m * 10 + (uint64_t)(s[i] - '0');
        if (m > lim) return 0;
    }
    if (i < n && s[i] == '.') {
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
            m = m * 10 + (uint64_t)(s[i] - '0');
            exp10--;
            if (m > lim) return 0;
        }
    }
    if (!digits) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0, edigits = 0;
        int64_t e = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, edigits++) {
            e = e * 10 + (s[i] - '0');
            if (e > 100000) return 0;
        }
        if (!edigits) return 0;
        exp10 += eneg ? -e : e;
    }
    if (i != n) return 0;
    double v = (double)m;
    if (m == 0) v = 0.0;
    else if (exp10 < -22 || exp10 > 22) return 0;
    else v = exp10 < 0 ? v / p10[-exp10] : v * p10[exp10];
    *out = neg ? -v : v;
    return 1;
}

/* The number in a whole cell, or NaN. */
static double cell_value(parser *ps, const char *s, size_t n) {
    /* Spaces may remain inside quotes: trim them here too. */
    while (n && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')) s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    if (n == 0) return NAN;
    double v;
    if (fast_number(s, n, &v)) return v;
    const char *t = s + (*s == '+' || *s == '-');
    if (t < s + n - 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) return NAN; /* no hex */
    if (memchr(s, '\0', n)) return NAN;
    if (n + 1 > ps->num_cap) {
        size_t cap = n + 1 < 64 ? 64 : n + 1;
        char *b = realloc(ps->num, cap);
        if (!b) { /* the caller fails with ENOMEM: a NaN would pass for the cell's value */
            ps->nomem = 1;
            return NAN;
        }
        ps->num = b;
        ps->num_cap = cap;
    }
    memcpy(ps->num, s, n);
    ps->num[n] = '\0';
    char *end;
    v = strtod(ps->num, &end);
    return end == ps->num + n ? v : NAN;
}

void voxa_table_free(voxa_table *t) {
    if (!t) return;
    if (t->names)
        for (int i = 0; i < t->ncols; i++) free(t->names[i]);
    free(t->names);
    free(t->values);
    memset(t, 0, sizeof *t);
}

voxa_status voxa_csv_parse(const char *text, size_t len, voxa_table *t) {
    voxa_status st = VOXA_OK;
    VOXA_FAIL_IF(!t, VOXA_EINVAL, "csv parse: NULL table");
    memset(t, 0, sizeof *t);
    VOXA_FAIL_IF(!text && len, VOXA_EINVAL, "csv parse: NULL text");
    parser ps = {.p = text, .end = text ? text + len : text, .line = 1};
    int64_t cap = 0;
    locale_t old = (locale_t)0;
    pthread_once(&c_locale_once, make_c_locale);
    if (c_locale) old = uselocale(c_locale);

    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) ps.p += 3;
    skip_blank_lines(&ps);
    VOXA_GOTO_IF(ps.p >= ps.end, VOXA_EFORMAT, "CSV has no header row (the text is empty)");

    /* Header. */
    int names_cap = 0, eol = 0;
    while (!eol) {
        int64_t line = ps.line;
        st = read_field(&ps, &eol);
        if (st != VOXA_OK) goto done;
        VOXA_GOTO_IF(t->ncols >= MAX_COLS, VOXA_EFORMAT,
                     "CSV line %lld: more than %d columns", (long long)line, MAX_COLS);
        if (t->ncols == names_cap) {
            int nc = names_cap ? names_cap * 2 : 8;
            char **n = realloc(t->names, (size_t)nc * sizeof *n);
            VOXA_GOTO_IF(!n, VOXA_ENOMEM, "out of memory reading CSV");
            t->names = n;
            names_cap = nc;
        }
        t->names[t->ncols] = malloc(ps.flen + 1);
        VOXA_GOTO_IF(!t->names[t->ncols], VOXA_ENOMEM, "out of memory reading CSV");
        memcpy(t->names[t->ncols], ps.f, ps.flen);
        t->names[t->ncols][ps.flen] = '\0';
        t->ncols++;
    }

    /* Rows. */
    for (;;) {
        skip_blank_lines(&ps);
        if (ps.p >= ps.end) break;
        int64_t line = ps.line;
        if (t->nrows == cap) {
            int64_t nc = cap ? cap * 2 : 64;
            size_t bytes;
            VOXA_GOTO_IF(!voxa__mul_size((size_t)nc * (size_t)t->ncols, sizeof(double), &bytes),
                         VOXA_ENOMEM, "CSV too large");
            double *v = realloc(t->values, bytes);
            VOXA_GOTO_IF(!v, VOXA_ENOMEM, "out of memory reading CSV (%lld rows)",
                         (long long)nc);
            t->values = v;
            cap = nc;
        }
        double *row = t->values + t->nrows * t->ncols;
        int k = 0;
        eol = 0;
        while (!eol) {
            st = read_field(&ps, &eol);
            if (st != VOXA_OK) goto done;
            if (k < t->ncols) row[k] = cell_value(&ps, ps.f, ps.flen);
            VOXA_GOTO_IF(ps.nomem, VOXA_ENOMEM, "out of memory reading CSV line %lld",
                         (long long)line);
            VOXA_GOTO_IF(k == INT_MAX, VOXA_EFORMAT, "CSV line %lld: too many fields",
                         (long long)line);
            k++;
        }
        VOXA_GOTO_IF(k != t->ncols, VOXA_EFORMAT, "CSV line %lld has %d fields, the header has %d",
                     (long long)line, k, t->ncols);
        t->nrows++;
    }
    if (t->nrows && t->nrows < cap) { /* give back the slack */
        double *v = realloc(t->values, (size_t)(t->nrows * t->ncols) * sizeof(double));
        if (v) t->values = v;
    }
done:
    if (c_locale) uselocale(old);
    free(ps.cell);
    free(ps.num);
    if (st != VOXA_OK) voxa_table_free(t);
    return st;
}

voxa_status voxa_csv_read(const char *path, voxa_table *t) {
    VOXA_FAIL_IF(!t, VOXA_EINVAL, "csv read: NULL table");
    memset(t, 0, sizeof *t);
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "csv read: NULL path");
    int fd = open(path, O_RDONLY);
    VOXA_FAIL_IF(fd < 0, VOXA_EIO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return voxa__error(VOXA_EIO, "cannot read '%s': not a regular file", path);
    }
    size_t len = (size_t)sb.st_size;
    char *text = NULL;
    int mapped = 0;
    if (len) {
        text = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (text != MAP_FAILED) {
            mapped = 1;
        } else { /* e.g. a file system without mmap: read it */
            text = malloc(len);
            if (!text) {
                close(fd);
                return voxa__error(VOXA_ENOMEM, "out of memory reading '%s'", path);
            }
            size_t got = 0;
            while (got < len) {
                ssize_t r = read(fd, text + got, len - got);
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) break;
                got += (size_t)r;
            }
            len = got;
        }
    }
    close(fd);
    voxa_status st = voxa_csv_parse(text, len, t);
    if (mapped) munmap(text, (size_t)sb.st_size);
    else free(text);
    if (st != VOXA_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", voxa_last_error());
        return voxa__error(st, "'%s': %s", path, msg);
    }
    return VOXA_OK;
}

int voxa_table_column(const voxa_table *t, const char *name) {
    if (!t || !name || !t->names) return -1;
    for (int i = 0; i < t->ncols; i++)
        if (t->names[i] && !strcasecmp(t->names[i], name)) return i;
    return -1;
}
