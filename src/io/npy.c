/* NumPy .npy files, format versions 1.0, 2.0 and 3.0.
 *
 * Layout: "\x93NUMPY", major, minor, header length (u16 LE for v1, u32 LE
 * for v2/v3), then a Python dict literal {'descr': '<f4', 'fortran_order':
 * False, 'shape': (z, y, x), } padded with spaces to a 64-byte boundary,
 * then the raw data. The header parser is a tiny tokenizer that never reads
 * past the buffer it is given (fuzzed by fuzz/fuzz_npy_header.c). */
#include "atomic.h"
#include "npy_format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_HEADER (1 << 20)

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int accept(cursor *c, char ch) {
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string ('..' or ".."), no escapes (numpy writes none here). */
static int parse_string(cursor *c, char *out, size_t n) {
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        if (k + 1 >= n) return 0;
        out[k++] = *c->p++;
    }
    if (c->p >= c->end) return 0;
    c->p++;
    out[k] = '\0';
    return 1;
}

static int parse_word(cursor *c, const char *w) {
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, w, n)) {
        c->p += n;
        return 1;
    }
    return 0;
}

/* "(a, b, c)" or "(a,)" or "()", non-negative integers, at most MAXDIM. */
static int parse_shape(cursor *c, int *ndim, int64_t *shape) {
    if (!accept(c, '(')) return 0;
    *ndim = 0;
    for (;;) {
        if (accept(c, ')')) return 1;
        skip_ws(c);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9') return 0;
        int64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (INT64_MAX - 9) / 10) return 0;
            v = v * 10 + (*c->p++ - '0');
        }
        if (c->p < c->end && *c->p == 'L') c->p++; /* Python 2 longs */
        if (*ndim >= VOXA_MAXDIM) return 0;
        shape[(*ndim)++] = v;
        if (!accept(c, ',')) return accept(c, ')');
    }
}

static int parse_descr(const char *s, voxa_dtype *t, int *swap) {
    static const struct { const char *code; voxa_dtype t; } codes[] = {
        {"b1", VOXA_BOOL}, {"u1", VOXA_U8},  {"i1", VOXA_I8},  {"u2", VOXA_U16},
        {"i2", VOXA_I16},  {"u4", VOXA_U32}, {"i4", VOXA_I32}, {"u8", VOXA_U64},
        {"i8", VOXA_I64},  {"f4", VOXA_F32}, {"f8", VOXA_F64},
    };
    char order = s[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') return 0;
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        if (!strcmp(s + 1, codes[i].code)) {
            *t = codes[i].t;
            *swap = order == '>' && voxa_dtype_size(*t) > 1;
            return 1;
        }
    }
    return 0;
}

voxa_status voxa_npy_parse_header(const void *buf, size_t len, voxa_dtype *dtype, int *ndim,
                                  int64_t *shape, int *fortran, int *swap,
                                  size_t *data_offset) {
    const unsigned char *b = buf;
    VOXA_FAIL_IF(len < 10 || memcmp(b, "\x93NUMPY", 6) != 0, VOXA_EFORMAT,
                 "not a .npy file (bad magic)");
    int major = b[6];
    VOXA_FAIL_IF(major < 1 || major > 3, VOXA_EFORMAT, "unsupported .npy version %d.%d", major,
                 b[7]);
    size_t hlen, start;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else {
        VOXA_FAIL_IF(len < 12, VOXA_EFORMAT, "truncated .npy header");
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        start = 12;
    }
    VOXA_FAIL_IF(hlen > MAX_HEADER, VOXA_EFORMAT, ".npy header too long (%zu bytes)", hlen);
    VOXA_FAIL_IF(len - start < hlen, VOXA_EFORMAT,
                 "truncated .npy header (%zu bytes announced, %zu present)", hlen, len - start);
    cursor c = {(const char *)b + start, (const char *)b + start + hlen};
    int have_descr = 0, have_order = 0, have_shape = 0;
    char key[32], descr[32];
    VOXA_FAIL_IF(!accept(&c, '{'), VOXA_EFORMAT, "malformed .npy header: expected '{'");
    while (!accept(&c, '}')) {
        VOXA_FAIL_IF(!parse_string(&c, key, sizeof key) || !accept(&c, ':'), VOXA_EFORMAT,
                     "malformed .npy header: expected 'key':");
        if (!strcmp(key, "descr")) {
            skip_ws(&c);
            VOXA_FAIL_IF(c.p < c.end && *c.p == '[', VOXA_EUNSUPPORTED,
                         "unsupported .npy dtype: structured (record) arrays are not "
                         "supported");
            VOXA_FAIL_IF(!parse_string(&c, descr, sizeof descr), VOXA_EFORMAT,
                         "malformed .npy header: bad descr");
            VOXA_FAIL_IF(!parse_descr(descr, dtype, swap), VOXA_EUNSUPPORTED,
                         "unsupported .npy dtype '%s' (voxa reads bool, int8-64, uint8-64, "
                         "float32, float64)",
                         descr);
            have_descr = 1;
        } else if (!strcmp(key, "fortran_order")) {
            if (parse_word(&c, "True")) *fortran = 1;
            else if (parse_word(&c, "False")) *fortran = 0;
            else return voxa__error(VOXA_EFORMAT, "malformed .npy header: bad fortran_order");
            have_order = 1;
        } else if (!strcmp(key, "shape")) {
            VOXA_FAIL_IF(!parse_shape(&c, ndim, shape), VOXA_EFORMAT,
                         "malformed .npy header: bad shape (or more than %d dimensions)",
                         VOXA_MAXDIM);
            have_shape = 1;
        } else {
            return voxa__error(VOXA_EFORMAT, "malformed .npy header: unknown key '%s'", key);
        }
        if (!accept(&c, ',')) {
            VOXA_FAIL_IF(!accept(&c, '}'), VOXA_EFORMAT,
                         "malformed .npy header: expected ',' or '}'");
            break;
        }
    }
    VOXA_FAIL_IF(!have_descr || !have_order || !have_shape, VOXA_EFORMAT,
                 "malformed .npy header: missing %s",
                 !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    /* The shape must describe fewer than 2^63 bytes. */
    int64_t bytes = (int64_t)voxa_dtype_size(*dtype);
    for (int d = 0; d < *ndim; d++) {
        VOXA_FAIL_IF(shape[d] && bytes > INT64_MAX / shape[d], VOXA_EFORMAT,
                     "malformed .npy header: shape too large");
        bytes *= shape[d];
    }
    *data_offset = start + hlen;
    return VOXA_OK;
}

static void byteswap(void *data, int64_t n, size_t es) {
    unsigned char *p = data;
    for (int64_t i = 0; i < n; i++, p += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

voxa_status voxa__npy_read_header(FILE *f, const char *path, int64_t file_size,
                                  voxa_dtype *t, int *ndim, int64_t *shape, int *fortran,
                                  int *swap, size_t *offset) {
    voxa_status st = VOXA_OK;
    char *hdr = NULL;
    unsigned char pre[12];
    size_t got = fread(pre, 1, sizeof pre, f);
    VOXA_GOTO_IF(got < 10, VOXA_EFORMAT, "'%s': not a .npy file (too short)", path);
    size_t hlen = pre[6] == 1 ? ((size_t)pre[8] | (size_t)pre[9] << 8) + 10
                              : got < 12 ? 12
                                         : ((size_t)pre[8] | (size_t)pre[9] << 8 |
                                            (size_t)pre[10] << 16 | (size_t)pre[11] << 24) + 12;
    if (hlen > MAX_HEADER + 12) hlen = MAX_HEADER + 12;
    if ((int64_t)hlen > file_size) hlen = (size_t)file_size;
    hdr = malloc(hlen > got ? hlen : got);
    VOXA_GOTO_IF(!hdr, VOXA_ENOMEM, "out of memory reading '%s'", path);
    memcpy(hdr, pre, got);
    if (hlen > got) hlen = got + fread(hdr + got, 1, hlen - got, f);
    else hlen = got;
    st = voxa_npy_parse_header(hdr, hlen, t, ndim, shape, fortran, swap, offset);
    if (st != VOXA_OK) {
        /* Copy first: the message is formatted into the buffer it reads. */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", voxa_last_error());
        st = voxa__error(st, "'%s': %s", path, msg);
        goto done;
    }
    /* Check the data is there before anyone allocates (a corrupt header may
     * announce terabytes). parse_header guarantees no overflow. */
    int64_t want = (int64_t)voxa_dtype_size(*t);
    for (int d = 0; d < *ndim; d++) want *= shape[d];
    VOXA_GOTO_IF(file_size - (int64_t)*offset < want, VOXA_EFORMAT,
                 "'%s' is truncated: %lld bytes of data expected, %lld present", path,
                 (long long)want, (long long)(file_size - (int64_t)*offset));
done:
    free(hdr);
    return st;
}

voxa_status voxa_npy_read(const char *path, voxa_array *out) {
    voxa_status st = VOXA_OK;
    FILE *f = NULL;
    memset(out, 0, sizeof *out);
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "read: NULL path");
    f = fopen(path, "rb");
    VOXA_GOTO_IF(!f, VOXA_EIO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    VOXA_GOTO_IF(fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode), VOXA_EIO,
                 "cannot read '%s': not a regular file", path);
    voxa_dtype t;
    int ndim = 0, fortran = 0, swap = 0;
    int64_t shape[VOXA_MAXDIM];
    size_t offset;
    st = voxa__npy_read_header(f, path, (int64_t)sb.st_size, &t, &ndim, shape, &fortran, &swap,
                               &offset);
    if (st != VOXA_OK) goto done;
    int64_t want = (int64_t)voxa_dtype_size(t);
    for (int d = 0; d < ndim; d++) want *= shape[d];
    int64_t rev[VOXA_MAXDIM];
    for (int d = 0; d < ndim; d++) rev[d] = shape[ndim - 1 - d];
    st = voxa_array_new(out, t, ndim, fortran ? rev : shape);
    if (st != VOXA_OK) goto done;
    if (fortran) { /* data is the C-order transpose: reverse the view */
        for (int d = 0; d < ndim; d++) {
            rev[d] = out->strides[ndim - 1 - d];
        }
        for (int d = 0; d < ndim; d++) {
            out->shape[d] = shape[d];
            out->strides[d] = rev[d];
        }
    }
    int64_t bytes = want;
    VOXA_GOTO_IF(fseek(f, (long)offset, SEEK_SET) != 0, VOXA_EIO, "cannot seek in '%s'", path);
    VOXA_GOTO_IF(bytes && fread(out->data, 1, (size_t)bytes, f) != (size_t)bytes, VOXA_EIO,
                 "cannot read '%s': %s", path, ferror(f) ? strerror(errno) : "short read");
    if (swap) byteswap(out->data, voxa_array_size(out), voxa_dtype_size(t));
    if (t == VOXA_BOOL) { /* normalise to 0/1 so kernels may rely on it */
        unsigned char *p = out->data;
        for (int64_t i = 0; i < bytes; i++) p[i] = p[i] != 0;
    }
done:
    if (f) fclose(f);
    if (st != VOXA_OK) voxa_array_free(out);
    return st;
}

static const char *descr_of(voxa_dtype t) {
    static const char *const d[VOXA_NDTYPES] = {
        [VOXA_BOOL] = "|b1", [VOXA_U8] = "|u1",  [VOXA_I8] = "|i1",  [VOXA_U16] = "<u2",
        [VOXA_I16] = "<i2",  [VOXA_U32] = "<u4", [VOXA_I32] = "<i4", [VOXA_U64] = "<u8",
        [VOXA_I64] = "<i8",  [VOXA_F32] = "<f4", [VOXA_F64] = "<f8",
    };
    return d[t];
}

/* Write the elements of `a` in C order, whatever its strides. */
static voxa_status write_data(FILE *f, const voxa_array *a) {
    int64_t n = voxa_array_size(a);
    if (n == 0) return VOXA_OK;
    size_t es = voxa_dtype_size(a->dtype);
    if (voxa_array_is_c_contiguous(a))
        return fwrite(a->data, es, (size_t)n, f) == (size_t)n ? VOXA_OK : VOXA_EIO;
    int last = a->ndim - 1;
    int64_t row = a->shape[last];
    char *buf = malloc((size_t)row * es);
    if (!buf) return voxa__error(VOXA_ENOMEM, "out of memory writing .npy");
    int64_t idx[VOXA_MAXDIM] = {0};
    voxa_status st = VOXA_OK;
    for (int64_t r = 0; r < n / row && st == VOXA_OK; r++) {
        const char *src = (const char *)a->data + voxa__offset(a, idx);
        for (int64_t i = 0; i < row; i++) memcpy(buf + i * es, src + i * a->strides[last], es);
        if (fwrite(buf, es, (size_t)row, f) != (size_t)row) st = VOXA_EIO;
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < a->shape[d]) break;
            idx[d] = 0;
        }
    }
    free(buf);
    return st;
}

size_t voxa__npy_header(voxa_dtype t, int ndim, const int64_t *shape, unsigned char *head) {
    char dict[512];
    int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                     descr_of(t));
    for (int d = 0; d < ndim; d++)
        k += snprintf(dict + k, sizeof dict - (size_t)k, d ? ", %lld" : "%lld",
                      (long long)shape[d]);
    k += snprintf(dict + k, sizeof dict - (size_t)k, ndim == 1 ? ",), }" : "), }");
    size_t total = 10 + (size_t)k + 1;
    size_t padded = (total + 63) / 64 * 64;
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    size_t hlen = padded - 10;
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)k);
    memset(head + 10 + k, ' ', padded - total);
    head[padded - 1] = '\n';
    return padded;
}

voxa_status voxa_npy_write(const char *path, const voxa_array *a) {
    VOXA_CHECK(voxa_array_check(a, "npy write"));
    unsigned char head[VOXA__NPY_HEADER_MAX];
    size_t padded = voxa__npy_header(a->dtype, a->ndim, a->shape, head);

    voxa__atomic w;
    FILE *f = NULL;
    VOXA_CHECK(voxa__atomic_begin(&w, path));
    VOXA_CHECK(voxa__atomic_fopen(&w, &f));
    voxa_status st = fwrite(head, 1, padded, f) == padded ? VOXA_OK : VOXA_EIO;
    if (st == VOXA_OK) st = write_data(f, a);
    if (st == VOXA_EIO) st = voxa__error(VOXA_EIO, "cannot write '%s': %s", path, strerror(errno));
    return voxa__atomic_end(&w, f, st);
}
