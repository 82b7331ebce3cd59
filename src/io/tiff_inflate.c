/* Parallel decoding of deflate-compressed striped TIFF pages.
 *
 * libtiff decodes strip after strip on one thread. For the commonest
 * compressed layout (Compression 8 or 32946 = zlib streams, no predictor,
 * striped, 8..64-bit samples) the page's raw strips are read in file order
 * with TIFFReadRawStrip into one buffer, then inflated in parallel (by
 * libdeflate, which Debian's libtiff uses too) straight into their rows of
 * the output (voxa__parallel_for over strips: disjoint
 * writes, the same result for any thread count), then byte-swapped if the
 * file's byte order is not the machine's. Every strip must inflate to
 * exactly its size; otherwise the caller falls back to libtiff's own decoder
 * for the page, which produces the proper error message.
 *
 * Cost: time ~ inflate / threads + one sequential read; extra memory = the
 * page's compressed bytes. */
#include "tiff_internal.h"

#include <stdlib.h>
#include <libdeflate.h>

typedef struct ictx {
    const uint8_t *raw;
    const uint64_t *roff, *rlen; /* per strip, into raw */
    uint8_t *dst;
    int64_t rps, row, h, per_plane, plane;
} ictx;

static voxa_status inflate_strips(int64_t begin, int64_t end, int tid, void *arg) {
    (void)tid;
    ictx *c = arg;
    struct libdeflate_decompressor *z = libdeflate_alloc_decompressor();
    if (!z) return voxa__error(VOXA_ENOMEM, "out of memory decompressing TIFF strips");
    voxa_status st = VOXA_OK;
    for (int64_t s = begin; s < end && st == VOXA_OK; s++) {
        int64_t pl = s / c->per_plane, j = s % c->per_plane;
        int64_t y0 = j * c->rps, rows = c->h - y0 < c->rps ? c->h - y0 : c->rps;
        size_t want = (size_t)(rows * c->row), got = 0, used = 0;
        enum libdeflate_result r = libdeflate_zlib_decompress_ex(
            z, c->raw + c->roff[s], (size_t)c->rlen[s], c->dst + pl * c->plane + y0 * c->row,
            want, &used, &got);
        if (r != LIBDEFLATE_SUCCESS || got != want)
            st = voxa__error(VOXA_EFORMAT, "strip %lld does not inflate to %zu bytes",
                             (long long)s, want);
    }
    libdeflate_free_decompressor(z);
    return st;
}

/* 1 if the current page can take this path. */
int voxa__tiff_inflate_ok(TIFF *tif, uint16_t compression, int tiled, uint16_t bps) {
    uint16_t pred = 1, fill = FILLORDER_MSB2LSB;
    if (tiled || (compression != COMPRESSION_ADOBE_DEFLATE && compression != COMPRESSION_DEFLATE))
        return 0;
    if (bps != 8 && bps != 16 && bps != 32 && bps != 64) return 0;
    TIFFGetFieldDefaulted(tif, TIFFTAG_PREDICTOR, &pred);
    TIFFGetFieldDefaulted(tif, TIFFTAG_FILLORDER, &fill);
    return pred == 1 && fill == FILLORDER_MSB2LSB;
}

/* Decode the current page's strips into dst (layout as tiff.c's read_page).
 * Returns VOXA_OK, or an error: the caller then retries with libtiff. */
voxa_status voxa__tiff_inflate_page(TIFF *tif, uint8_t *dst, int64_t h, int64_t rps,
                                    int64_t row, int64_t nplanes, int64_t es, int64_t file_size) {
    voxa_status st = VOXA_OK;
    const int64_t per_plane = (h + rps - 1) / rps, n = per_plane * nplanes;
    uint64_t *counts = NULL;
    uint8_t *raw = NULL;
    uint64_t *roff = malloc((size_t)n * sizeof *roff);
    VOXA_GOTO_IF(!roff, VOXA_ENOMEM, "out of memory");
    VOXA_GOTO_IF(!TIFFGetField(tif, TIFFTAG_STRIPBYTECOUNTS, &counts) || !counts ||
                     (int64_t)TIFFNumberOfStrips(tif) < n,
                 VOXA_EFORMAT, "no strip byte counts");
    uint64_t total = 0;
    for (int64_t s = 0; s < n; s++) {
        VOXA_GOTO_IF(counts[s] > (uint64_t)file_size || total > (uint64_t)file_size, VOXA_EFORMAT,
                     "strip %lld larger than the file", (long long)s);
        roff[s] = total;
        total += counts[s];
    }
    raw = malloc(total ? (size_t)total : 1);
    VOXA_GOTO_IF(!raw, VOXA_ENOMEM, "out of memory");
    for (int64_t s = 0; s < n; s++) {
        tmsize_t got = TIFFReadRawStrip(tif, (uint32_t)s, raw + roff[s], (tmsize_t)counts[s]);
        VOXA_GOTO_IF(got != (tmsize_t)counts[s], VOXA_EFORMAT, "short raw strip %lld",
                     (long long)s);
    }
    ictx c = {raw, roff, counts, dst, rps, row, h, per_plane, row * h};
    /* Small work (a few ms) runs on this thread: a parallel region per page
     * costs a scheduler time slice when the machine is oversubscribed
     * (measured: 20 pages of 160 KB deflate, 28 ms on 1 thread, 155 ms on 2
     * with the CPUs busy). Work ~ compressed bytes + output / 8. */
    if ((int64_t)total + row * h * nplanes / 8 < ((int64_t)2 << 20))
        st = inflate_strips(0, n, 0, &c);
    else
        st = voxa__parallel_for(n, 1, inflate_strips, &c);
    if (st == VOXA_OK && TIFFIsByteSwapped(tif) && es > 1) {
        int64_t count = row * h * nplanes / es;
        if (es == 2) TIFFSwabArrayOfShort((uint16_t *)dst, (tmsize_t)count);
        else if (es == 4) TIFFSwabArrayOfLong((uint32_t *)dst, (tmsize_t)count);
        else TIFFSwabArrayOfLong8((uint64_t *)dst, (tmsize_t)count);
    }
done:
    free(raw);
    free(roff);
    return st;
}
