/* Zarr codec chains: chunk bytes <-> voxels.
 *
 * Encoding runs the chain forward: transpose (F order) -> bytes (byte order)
 * -> bytes->bytes codecs (blosc, zstd, gzip, zlib, crc32c); decoding runs it
 * backwards. A chain holds at most one compressor, so the size of every
 * intermediate is known (the chunk's bytes, plus 4 per crc32c applied before
 * the compressor), and the last decompression writes straight into the
 * caller's buffer when nothing follows it. Every decoder is told the exact
 * size it must produce and fails, naming the chunk, on anything else: a
 * truncated, corrupt or wrongly sized chunk never yields voxels.
 *
 * The codec libraries are thread-safe as called here: blosc through its
 * _ctx functions (no global state), zstd and zlib with per-call contexts.
 * crc32c is the Castagnoli CRC (reflected polynomial 0x82F63B78), table
 * driven, as the Zarr v3 crc32c codec (little-endian, appended). */
#include "zarr_internal.h"

#include <blosc.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

/* ---- crc32c ------------------------------------------------------------- */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t voxa__crc32c(const void *buf, size_t len) {
    pthread_once(&crc_once, crc_init);
    const unsigned char *p = buf;
    uint32_t c = 0xffffffffu;
    while (len >= 8) { /* slicing by 8 (little-endian load order, byte by byte) */
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                           (uint32_t)p[3] << 24);
        c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
            crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^
            crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
        p += 8;
        len -= 8;
    }
    while (len--) c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
    return c ^ 0xffffffffu;
}

/* ---- helpers ------------------------------------------------------------- */

static void byteswap(void *data, size_t n, size_t es) {
    unsigned char *p = data;
    if (es == 2)
        for (size_t i = 0; i < n; i++, p += 2) { unsigned char t = p[0]; p[0] = p[1]; p[1] = t; }
    else if (es == 4)
        for (size_t i = 0; i < n; i++, p += 4) {
            uint32_t v;
            memcpy(&v, p, 4);
            v = __builtin_bswap32(v);
            memcpy(p, &v, 4);
        }
    else if (es == 8)
        for (size_t i = 0; i < n; i++, p += 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            v = __builtin_bswap64(v);
            memcpy(p, &v, 8);
        }
}

/* Copy between C order and F order of `shape` (to_f: C -> F). */
static voxa_status transpose(const voxa_zarr *z, const void *src, void *dst, int ndim,
                             const int64_t *shape, int to_f) {
    voxa_array c, f;
    VOXA_CHECK(voxa_array_view(&c, (void *)(to_f ? src : dst), z->dtype, ndim, shape));
    f = c;
    f.data = to_f ? dst : (void *)src;
    int64_t s = (int64_t)z->es;
    for (int d = 0; d < ndim; d++) {
        f.strides[d] = s;
        s *= shape[d];
    }
    return to_f ? voxa__copy_view(&c, &f) : voxa__copy_view(&f, &c);
}

static size_t crc_before(const zchain *c, int k) {
    size_t n = 0;
    for (int i = 0; i < k; i++) n += c->bb[i].kind == ZK_CRC32C;
    return n * 4;
}

/* zlib/gzip inflate of exactly `want` bytes. */
static voxa_status inflate_exact(const void *src, size_t n, void *dst, size_t want,
                                 const char *name) {
    z_stream s;
    memset(&s, 0, sizeof s);
    VOXA_FAIL_IF(inflateInit2(&s, 15 + 32) != Z_OK, VOXA_ENOMEM, "zarr: zlib init failed");
    s.next_in = (Bytef *)src;
    s.next_out = dst;
    size_t in_left = n, out_left = want;
    int r;
    do {
        uInt ai = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
        uInt ao = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
        s.avail_in = ai;
        s.avail_out = ao;
        r = inflate(&s, Z_NO_FLUSH);
        in_left -= ai - s.avail_in;
        out_left -= ao - s.avail_out;
    } while (r == Z_OK && (s.avail_out == 0 ? out_left > 0 : in_left > 0));
    int extra = r == Z_OK && out_left == 0 && in_left > 0;
    inflateEnd(&s);
    VOXA_FAIL_IF(r != Z_STREAM_END || out_left || extra, VOXA_EFORMAT,
                 "chunk '%s': corrupt or truncated deflate data, or not %zu bytes when decoded",
                 name, want);
    return VOXA_OK;
}

static voxa_status deflate_all(const void *src, size_t n, int level, int gzip, void **out,
                               size_t *out_len, const char *name) {
    z_stream s;
    memset(&s, 0, sizeof s);
    VOXA_FAIL_IF(deflateInit2(&s, level, Z_DEFLATED, gzip ? 31 : 15, 8, Z_DEFAULT_STRATEGY) !=
                     Z_OK,
                 VOXA_ENOMEM, "zarr: zlib init failed");
    size_t cap = deflateBound(&s, (uLong)n) + 64;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&s);
        return voxa__error(VOXA_ENOMEM, "out of memory compressing chunk '%s'", name);
    }
    s.next_in = (Bytef *)src;
    s.next_out = buf;
    size_t in_left = n, out_left = cap;
    int r;
    do {
        uInt ai = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
        uInt ao = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
        s.avail_in = ai;
        s.avail_out = ao;
        r = deflate(&s, ai == in_left ? Z_FINISH : Z_NO_FLUSH);
        in_left -= ai - s.avail_in;
        out_left -= ao - s.avail_out;
    } while (r == Z_OK || (r == Z_BUF_ERROR && in_left));
    deflateEnd(&s);
    if (r != Z_STREAM_END) {
        free(buf);
        return voxa__error(VOXA_EINTERNAL, "chunk '%s': deflate failed (%d)", name, r);
    }
    *out = buf;
    *out_len = cap - out_left;
    return VOXA_OK;
}

/* ---- decode -------------------------------------------------------------- */

static voxa_status decode_one(const zbb *b, const void *src, size_t n, void *dst, size_t want,
                              const char *name) {
    switch (b->kind) {
    case ZK_BLOSC: {
        size_t nb = 0;
        VOXA_FAIL_IF(blosc_cbuffer_validate(src, n, &nb) < 0, VOXA_EFORMAT,
                     "chunk '%s': corrupt or truncated blosc data (%zu bytes)", name, n);
        VOXA_FAIL_IF(nb != want, VOXA_EFORMAT,
                     "chunk '%s': blosc data holds %zu bytes, the chunk needs %zu", name, nb,
                     want);
        int r = blosc_decompress_ctx(src, dst, want, 1);
        VOXA_FAIL_IF(r < 0 || (size_t)r != want, VOXA_EFORMAT,
                     "chunk '%s': corrupt blosc data (decoder returned %d)", name, r);
        return VOXA_OK;
    }
    case ZK_ZSTD: {
        unsigned long long fs = ZSTD_getFrameContentSize(src, n);
        VOXA_FAIL_IF(fs == ZSTD_CONTENTSIZE_ERROR, VOXA_EFORMAT,
                     "chunk '%s': not zstd data (%zu bytes)", name, n);
        VOXA_FAIL_IF(fs != ZSTD_CONTENTSIZE_UNKNOWN && fs != want, VOXA_EFORMAT,
                     "chunk '%s': zstd data holds %llu bytes, the chunk needs %zu", name, fs,
                     want);
        size_t r = ZSTD_decompress(dst, want, src, n);
        VOXA_FAIL_IF(ZSTD_isError(r), VOXA_EFORMAT, "chunk '%s': corrupt zstd data (%s)", name,
                     ZSTD_getErrorName(r));
        VOXA_FAIL_IF(r != want, VOXA_EFORMAT,
                     "chunk '%s': zstd data holds %zu bytes, the chunk needs %zu", name, r, want);
        return VOXA_OK;
    }
    case ZK_GZIP:
    case ZK_ZLIB: return inflate_exact(src, n, dst, want, name);
    default: return voxa__error(VOXA_EINTERNAL, "chunk '%s': bad codec", name);
    }
}

voxa_status voxa__zarr_decode(const voxa_zarr *z, const zchain *c, const void *buf, size_t len,
                              void *out, size_t nbytes, int ndim, const int64_t *shape,
                              const char *name) {
    voxa_status st = VOXA_OK;
    const unsigned char *cur = buf;
    size_t n = len;
    void *owned = NULL;
    int direct = !c->fortran || ndim < 2;
    for (int k = c->nbb - 1; k >= 0; k--) {
        const zbb *b = &c->bb[k];
        if (b->kind == ZK_CRC32C) {
            VOXA_GOTO_IF(n < 4, VOXA_EFORMAT, "chunk '%s': too short for its crc32c", name);
            n -= 4;
            uint32_t want = (uint32_t)cur[n] | (uint32_t)cur[n + 1] << 8 |
                            (uint32_t)cur[n + 2] << 16 | (uint32_t)cur[n + 3] << 24;
            VOXA_GOTO_IF(voxa__crc32c(cur, n) != want, VOXA_EFORMAT,
                         "chunk '%s': crc32c checksum mismatch (corrupt chunk)", name);
            continue;
        }
        size_t want = nbytes + crc_before(c, k);
        void *dst = want == nbytes && direct ? out : malloc(want ? want : 1);
        VOXA_GOTO_IF(!dst, VOXA_ENOMEM, "out of memory decoding chunk '%s'", name);
        st = decode_one(b, cur, n, dst, want, name);
        free(owned);
        owned = dst == out ? NULL : dst;
        if (st) goto done;
        cur = dst;
        n = want;
    }
    VOXA_GOTO_IF(n != nbytes, VOXA_EFORMAT, "chunk '%s' has %zu bytes, expected %zu", name, n,
                 nbytes);
    if (cur != out) {
        if (direct) memcpy(out, cur, nbytes);
        else if ((st = transpose(z, cur, out, ndim, shape, 0))) goto done;
    }
    if (c->big_endian) byteswap(out, nbytes / z->es, z->es);
    if (z->dtype == VOXA_BOOL) {
        unsigned char *p = out;
        for (size_t i = 0; i < nbytes; i++) p[i] = p[i] != 0;
    }
done:
    free(owned);
    return st;
}

/* ---- encode -------------------------------------------------------------- */

static voxa_status encode_one(const zbb *b, const void *src, size_t n, void **out,
                              size_t *out_len, const char *name) {
    *out = NULL;
    switch (b->kind) {
    case ZK_BLOSC: {
        VOXA_FAIL_IF(n > BLOSC_MAX_BUFFERSIZE, VOXA_EUNSUPPORTED,
                     "chunk '%s': %zu bytes is more than blosc can hold", name, n);
        size_t cap = n + BLOSC_MAX_OVERHEAD;
        void *buf = malloc(cap);
        VOXA_FAIL_IF(!buf, VOXA_ENOMEM, "out of memory compressing chunk '%s'", name);
        int r = blosc_compress_ctx(b->level, b->shuffle, (size_t)b->typesize, n, src, buf, cap,
                                   b->cname, (size_t)b->blocksize, 1);
        if (r <= 0) {
            free(buf);
            return voxa__error(VOXA_EUNSUPPORTED, "chunk '%s': blosc compression failed (%d; "
                               "is cname '%s' built into c-blosc?)", name, r, b->cname);
        }
        *out = buf;
        *out_len = (size_t)r;
        return VOXA_OK;
    }
    case ZK_ZSTD: {
        size_t cap = ZSTD_compressBound(n);
        void *buf = malloc(cap ? cap : 1);
        VOXA_FAIL_IF(!buf, VOXA_ENOMEM, "out of memory compressing chunk '%s'", name);
        size_t r = ZSTD_compress(buf, cap, src, n, b->level);
        if (ZSTD_isError(r)) {
            free(buf);
            return voxa__error(VOXA_EINTERNAL, "chunk '%s': zstd failed (%s)", name,
                               ZSTD_getErrorName(r));
        }
        *out = buf;
        *out_len = r;
        return VOXA_OK;
    }
    case ZK_GZIP:
    case ZK_ZLIB: return deflate_all(src, n, b->level, b->kind == ZK_GZIP, out, out_len, name);
    case ZK_CRC32C: {
        unsigned char *buf = malloc(n + 4);
        VOXA_FAIL_IF(!buf, VOXA_ENOMEM, "out of memory encoding chunk '%s'", name);
        memcpy(buf, src, n);
        uint32_t v = voxa__crc32c(src, n);
        for (int i = 0; i < 4; i++) buf[n + i] = (unsigned char)(v >> (8 * i));
        *out = buf;
        *out_len = n + 4;
        return VOXA_OK;
    }
    }
    return voxa__error(VOXA_EINTERNAL, "chunk '%s': bad codec", name);
}

voxa_status voxa__zarr_encode(const voxa_zarr *z, const zchain *c, void *data, size_t nbytes,
                              int ndim, const int64_t *shape, void **enc, size_t *enc_len,
                              const char *name) {
    voxa_status st = VOXA_OK;
    void *owned = NULL;
    const void *cur = data;
    size_t n = nbytes;
    *enc = NULL;
    if (c->fortran && ndim > 1) {
        owned = malloc(nbytes ? nbytes : 1);
        VOXA_GOTO_IF(!owned, VOXA_ENOMEM, "out of memory encoding chunk '%s'", name);
        if ((st = transpose(z, data, owned, ndim, shape, 1))) goto done;
        cur = owned;
    }
    if (c->big_endian) byteswap((void *)cur, nbytes / z->es, z->es);
    for (int k = 0; k < c->nbb; k++) {
        void *next;
        size_t nn = 0;
        if ((st = encode_one(&c->bb[k], cur, n, &next, &nn, name))) goto done;
        free(owned);
        owned = next;
        cur = next;
        n = nn;
    }
    if (!owned) {
        owned = malloc(n ? n : 1);
        VOXA_GOTO_IF(!owned, VOXA_ENOMEM, "out of memory encoding chunk '%s'", name);
        memcpy(owned, cur, n);
    }
    *enc = owned;
    *enc_len = n;
    owned = NULL;
done:
    free(owned);
    return st;
}
