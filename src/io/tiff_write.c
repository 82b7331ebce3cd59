/* TIFF writer (libtiff): a 2D array is one page, a 3D array is pages along
 * axis 0.
 *
 * Each page is written in strips of about STRIP_BYTES (whole rows), one
 * sample per pixel, MinIsBlack, SampleFormat uint/int/float with
 * BitsPerSample 8..64, uncompressed or deflate (Compression 8, no predictor,
 * so tifffile reads it with its built-in zlib). Multi-page files carry
 * SubfileType "page" and PageNumber (i, n) as the TIFF 6 spec asks; tifffile
 * reads them back as one (n, h, w) series. The file is classic TIFF unless
 * the pixel data exceed `bigtiff_above` bytes (default 2 GiB; classic
 * offsets are 32-bit, so a 4 GiB file cannot be classic): then BigTIFF
 * ("w8").
 *
 * Rows of a C-contiguous page go to libtiff without a copy; any other strides
 * are gathered row by row into one strip buffer. bool is written as uint8 0/1.
 *
 * Deflate: the strips of a page are compressed in parallel with libdeflate
 * (the library Debian's libtiff itself uses for deflate: ~4x faster than
 * zlib) by voxa__parallel_for, one zlib stream per strip, exactly what
 * libtiff's codec writes for Compression 8, and handed to libtiff in order as
 * raw strips; the file is the same for every thread count.
 *
 * Atomic (atomic.h): libtiff writes a temporary file in the destination
 * folder that is renamed over the target once libtiff closed it without an
 * error; on any failure the temporary is removed and nothing appears.
 *
 * Cost: one pass over the data; memory = one strip (only for strided input)
 * + libtiff's compressed strip buffer. */
#include "atomic.h"
#include "tiff_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#define STRIP_BYTES ((int64_t)256 << 10)
#define DEFAULT_BIGTIFF_ABOVE ((int64_t)2 << 30)

static void tiff_format(voxa_dtype t, uint16_t *bps, uint16_t *fmt) {
    *bps = (uint16_t)(8 * voxa_dtype_size(t));
    switch (t) {
    case VOXA_I8: case VOXA_I16: case VOXA_I32: case VOXA_I64: *fmt = SAMPLEFORMAT_INT; break;
    case VOXA_F32: case VOXA_F64: *fmt = SAMPLEFORMAT_IEEEFP; break;
    default: *fmt = SAMPLEFORMAT_UINT; break; /* bool, unsigned */
    }
}

typedef struct writer {
    const char *path;
    TIFF *tif;
    tiffmsg msg;
} writer;

static voxa_status wfail(writer *w, const char *what) {
    return voxa__error(VOXA_EIO, "cannot write '%s': %s: %s", w->path, what,
                       tiffmsg_text(&w->msg, "libtiff failed"));
}

/* Copy rows [y0, y0 + rows) of a 2D page view into `dst` (C order). */
static void gather_rows(const voxa_array *pg, int64_t y0, int64_t rows, uint8_t *dst) {
    const int64_t es = (int64_t)voxa_dtype_size(pg->dtype), wd = pg->shape[1], row = wd * es;
    for (int64_t y = 0; y < rows; y++) {
        const uint8_t *in = (const uint8_t *)pg->data + (y0 + y) * pg->strides[0];
        uint8_t *o8 = dst + y * row;
        if (pg->strides[1] == es) {
            memcpy(o8, in, (size_t)row);
        } else {
            for (int64_t x = 0; x < wd; x++) memcpy(o8 + x * es, in + x * pg->strides[1], (size_t)es);
        }
    }
}

/* Parallel deflate of the strips of one page. */
typedef struct zctx {
    const voxa_array *pg;
    int64_t rps, row;
    int contiguous, level;
    uint8_t **out; /* per strip: compressed bytes */
    size_t *len;   /* per strip: their count */
} zctx;

static voxa_status deflate_strips(int64_t begin, int64_t end, int tid, void *arg) {
    (void)tid;
    zctx *c = arg;
    const int64_t h = c->pg->shape[0];
    uint8_t *gather = NULL;
    voxa_status st = VOXA_OK;
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(c->level);
    if (!z) return voxa__error(VOXA_ENOMEM, "out of memory compressing TIFF strips");
    for (int64_t s = begin; s < end; s++) {
        int64_t y0 = s * c->rps, rows = h - y0 < c->rps ? h - y0 : c->rps;
        size_t n = (size_t)(rows * c->row);
        const uint8_t *src;
        if (c->contiguous) {
            src = (const uint8_t *)c->pg->data + y0 * c->row;
        } else {
            if (!gather && !(gather = malloc((size_t)(c->rps * c->row)))) {
                st = voxa__error(VOXA_ENOMEM, "out of memory compressing a TIFF strip");
                break;
            }
            gather_rows(c->pg, y0, rows, gather);
            src = gather;
        }
        size_t cap = libdeflate_zlib_compress_bound(z, n);
        c->out[s] = malloc(cap);
        if (!c->out[s]) {
            st = voxa__error(VOXA_ENOMEM, "out of memory compressing a TIFF strip");
            break;
        }
        c->len[s] = libdeflate_zlib_compress(z, src, n, c->out[s], cap);
        if (!c->len[s]) { /* cannot happen with the bound */
            st = voxa__error(VOXA_EINTERNAL, "libdeflate could not compress a strip");
            break;
        }
    }
    libdeflate_free_compressor(z);
    free(gather);
    return st;
}

static voxa_status write_deflate_page(writer *w, const voxa_array *pg, int64_t rps, int contiguous,
                                      int level) {
    const int64_t h = pg->shape[0];
    const int64_t row = pg->shape[1] * (int64_t)voxa_dtype_size(pg->dtype);
    const int64_t nstrips = (h + rps - 1) / rps;
    voxa_status st = VOXA_OK;
    zctx c = {pg, rps, row, contiguous, level, calloc((size_t)nstrips, sizeof(uint8_t *)),
              calloc((size_t)nstrips, sizeof(size_t))};
    VOXA_GOTO_IF(!c.out || !c.len, VOXA_ENOMEM, "out of memory writing '%s'", w->path);
    st = voxa__parallel_for(nstrips, 1, deflate_strips, &c);
    for (int64_t s = 0; st == VOXA_OK && s < nstrips; s++) {
        tiffmsg_reset(&w->msg);
        if (TIFFWriteRawStrip(w->tif, (uint32_t)s, c.out[s], (tmsize_t)c.len[s]) < 0)
            st = wfail(w, "writing a strip");
    }
done:
    for (int64_t s = 0; c.out && s < nstrips; s++) free(c.out[s]);
    free(c.out);
    free(c.len);
    return st;
}

/* Write page `k` (a 2D view: rows x cols) as the current directory. */
static voxa_status write_page(writer *w, const voxa_array *pg, int64_t k, int64_t npages,
                              const voxa_tiff_options *o, uint8_t **strip_buf) {
    TIFF *tif = w->tif;
    const int64_t h = pg->shape[0], wd = pg->shape[1];
    const int64_t es = (int64_t)voxa_dtype_size(pg->dtype);
    const int64_t row = wd * es;
    int64_t rps = STRIP_BYTES / row;
    if (rps < 1) rps = 1;
    if (rps > h) rps = h;
    uint16_t bps, fmt;
    tiff_format(pg->dtype, &bps, &fmt);
    int ok = 1;
    ok &= TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (uint32_t)wd);
    ok &= TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (uint32_t)h);
    ok &= TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bps);
    ok &= TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, fmt);
    ok &= TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)1);
    ok &= TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    ok &= TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    ok &= TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (uint32_t)rps);
    ok &= TIFFSetField(tif, TIFFTAG_SOFTWARE, "voxa " VOXA_VERSION_STRING);
    if (o->compression == VOXA_TIFF_DEFLATE) {
        ok &= TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_ADOBE_DEFLATE);
        ok &= TIFFSetField(tif, TIFFTAG_ZIPQUALITY, o->level ? o->level : 6);
    } else {
        ok &= TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
    }
    if (npages > 1) {
        ok &= TIFFSetField(tif, TIFFTAG_SUBFILETYPE, (uint32_t)FILETYPE_PAGE);
        if (npages <= 65535)
            ok &= TIFFSetField(tif, TIFFTAG_PAGENUMBER, (uint16_t)k, (uint16_t)npages);
    }
    if (!ok) return wfail(w, "setting the tags");

    const int contiguous = pg->strides[1] == es && pg->strides[0] == row;
    if (o->compression == VOXA_TIFF_DEFLATE) {
        VOXA_CHECK(write_deflate_page(w, pg, rps, contiguous, o->level ? o->level : 6));
        tiffmsg_reset(&w->msg);
        if (!TIFFWriteDirectory(tif)) return wfail(w, "writing a page directory");
        return VOXA_OK;
    }
    if (!contiguous && !*strip_buf) {
        *strip_buf = malloc((size_t)(rps * row));
        if (!*strip_buf)
            return voxa__error(VOXA_ENOMEM, "out of memory writing '%s' (strip of %lld bytes)",
                               w->path, (long long)(rps * row));
    }
    const uint32_t nstrips = (uint32_t)((h + rps - 1) / rps);
    for (uint32_t s = 0; s < nstrips; s++) {
        int64_t y0 = (int64_t)s * rps;
        int64_t rows = h - y0 < rps ? h - y0 : rps;
        uint8_t *src;
        if (contiguous) {
            /* libtiff does not modify the buffer for these codecs (no
             * predictor, native byte order), so the const data is safe. */
            src = (uint8_t *)pg->data + y0 * row;
        } else {
            src = *strip_buf;
            gather_rows(pg, y0, rows, src);
        }
        tiffmsg_reset(&w->msg);
        if (TIFFWriteEncodedStrip(tif, s, src, (tmsize_t)(rows * row)) < 0)
            return wfail(w, "writing a strip");
    }
    tiffmsg_reset(&w->msg);
    if (!TIFFWriteDirectory(tif)) return wfail(w, "writing a page directory");
    return VOXA_OK;
}

voxa_status voxa_tiff_write_opts(const char *path, const voxa_array *a,
                                 const voxa_tiff_options *opts) {
    voxa_status st = VOXA_OK;
    uint8_t *strip_buf = NULL;
    voxa_tiff_options o = {0};
    char sb[128];
    if (opts) o = *opts;
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "tiff write: NULL path");
    VOXA_CHECK(voxa_array_check(a, "tiff write"));
    VOXA_FAIL_IF(o.compression != VOXA_TIFF_NONE && o.compression != VOXA_TIFF_DEFLATE,
                 VOXA_EINVAL, "tiff write: compression %d is not NONE (0) or DEFLATE (1)",
                 (int)o.compression);
    VOXA_FAIL_IF(o.level < 0 || o.level > 9, VOXA_EINVAL,
                 "tiff write: deflate level %d out of range 1..9 (0 = default)", o.level);
    VOXA_FAIL_IF(a->ndim != 2 && a->ndim != 3, VOXA_EUNSUPPORTED,
                 "cannot write '%s': TIFF holds 2D or 3D arrays, got shape %s", path,
                 voxa__shape_str(a, sb, sizeof sb));
    for (int d = 0; d < a->ndim; d++)
        VOXA_FAIL_IF(a->shape[d] == 0, VOXA_EUNSUPPORTED,
                     "cannot write '%s': TIFF cannot hold an empty array (shape %s)", path,
                     voxa__shape_str(a, sb, sizeof sb));
    const int64_t h = a->shape[a->ndim - 2], wd = a->shape[a->ndim - 1];
    const int64_t npages = a->ndim == 3 ? a->shape[0] : 1;
    VOXA_FAIL_IF(h > UINT32_MAX || wd > UINT32_MAX, VOXA_EUNSUPPORTED,
                 "cannot write '%s': page of %lld x %lld exceeds TIFF's 2^32-1 limit", path,
                 (long long)h, (long long)wd);
    const int64_t bytes = voxa_array_size(a) * (int64_t)voxa_dtype_size(a->dtype);
    const int64_t above = o.bigtiff_above ? o.bigtiff_above : DEFAULT_BIGTIFF_ABOVE;
    const int big = bytes > above;

    voxa__atomic at;
    VOXA_CHECK(voxa__atomic_begin(&at, path));
    writer w = {.path = path};
    errno = 0;
    w.tif = voxa__tiff_open(at.tmp, big ? "w8" : "w", &w.msg);
    if (!w.tif) {
        int e = errno;
        /* libtiff names the temporary; the user knows the target. */
        st = voxa__error(VOXA_EIO, "cannot create '%s': %s", path,
                         e ? strerror(e) : tiffmsg_text(&w.msg, "libtiff failed"));
        return voxa__atomic_end(&at, NULL, st);
    }
    for (int64_t k = 0; k < npages && st == VOXA_OK; k++) {
        voxa_array pg = *a;
        pg.owner = NULL;
        pg.ndim = 2;
        pg.data = (uint8_t *)a->data + (a->ndim == 3 ? k * a->strides[0] : 0);
        pg.shape[0] = h, pg.shape[1] = wd;
        pg.strides[0] = a->strides[a->ndim - 2], pg.strides[1] = a->strides[a->ndim - 1];
        st = write_page(&w, &pg, k, npages, &o, &strip_buf);
    }
    if (st == VOXA_OK) {
        tiffmsg_reset(&w.msg);
        if (!TIFFFlush(w.tif)) st = wfail(&w, "flushing");
    }
    tiffmsg_reset(&w.msg);
    TIFFClose(w.tif);
    if (st == VOXA_OK && w.msg.have) st = wfail(&w, "closing");
    free(strip_buf);
    return voxa__atomic_end(&at, NULL, st);
}

voxa_status voxa_tiff_write(const char *path, const voxa_array *a) {
    return voxa_tiff_write_opts(path, a, NULL);
}
