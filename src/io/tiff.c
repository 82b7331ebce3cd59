/* TIFF reader (libtiff): one page -> 2D, several pages -> 3D (pages along
 * axis 0).
 *
 * Two passes over the IFD chain. The first reads only the directories: it
 * checks that every page agrees with page 0 (size, samples, bits, sample
 * format, planar layout) and counts them; libtiff (>= 4.5) refuses IFD chains
 * that loop, so a cyclic file ends in EFORMAT, not in a hang. The output is
 * then allocated once (pages x page bytes) and the second pass decodes every
 * strip or tile straight into it: strips land in place (uncompressed strips
 * are read by libtiff with one read() into our buffer), tiles go through one
 * tile-sized scratch buffer and are copied row by row, cropping the padding
 * of the right and bottom edge tiles. libtiff applies codecs, predictors and
 * byte swapping; any codec this libtiff was built with is read. Deflate
 * strips without a predictor (what voxa and tifffile write) are instead
 * inflated in parallel by tiff_inflate.c.
 *
 * Pixel types: SampleFormat (uint, int, IEEE float; default uint) with
 * BitsPerSample 8/16/32/64 map to voxa dtypes; 1-bit bilevel pages are
 * expanded to bool (the raw bit, like tifffile); float16, complex, void and
 * other bit depths are EUNSUPPORTED. Samples per pixel > 1 (RGB, RGBA, ...)
 * add an axis exactly where tifffile puts it: last for interleaved pixels
 * (PlanarConfig 1, page shape (h, w, s)), first for separate planes
 * (PlanarConfig 2, page shape (s, h, w)). JPEG-compressed YCbCr is decoded
 * to RGB by libtiff; subsampled YCbCr without JPEG is refused.
 *
 * ImageJ writes stacks above 4 GB as one IFD followed by all the pages, raw
 * and contiguous, with "images=N" in its ImageDescription. When a file has a
 * single IFD, an "ImageJ=" description announcing N > 1 images, and an
 * uncompressed, contiguous first page, the N pages are read from there
 * (with pread, swapping bytes for big-endian files), as tifffile does.
 *
 * Cost: time linear in the file (decoding), memory = the output + one tile
 * (or, for bilevel pages, one strip). Errors: EIO (cannot open / not a
 * regular file / read error), EFORMAT (not a TIFF, truncated, corrupt, pages
 * that disagree: the message names the page), EUNSUPPORTED (pixel type or
 * layout). libtiff's messages are captured (tiff_internal.h), never printed. */
#include "internal.h"
#include "tiff_internal.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static voxa_status fail(reader *r, voxa_status s, const char *what, const char *fallback) {
    return voxa__error(s, "'%s': %s: %s", r->path, what, tiffmsg_text(&r->msg, fallback));
}

static const char *type_str(const pageinfo *p, char *buf, size_t n) {
    static const char *const fmts[] = {"?", "uint", "int", "float", "void", "complex-int",
                                       "complex-float"};
    snprintf(buf, n, "%s%u", p->fmt < 7 ? fmts[p->fmt] : "?", (unsigned)p->bps);
    return buf;
}

static voxa_status pixel_dtype(reader *r, tdir_t page, pageinfo *p) {
    char tb[32];
    p->bilevel = 0;
    if (p->fmt == SAMPLEFORMAT_UINT) {
        switch (p->bps) {
        case 1: p->dtype = VOXA_BOOL; p->bilevel = 1; break;
        case 8: p->dtype = VOXA_U8; break;
        case 16: p->dtype = VOXA_U16; break;
        case 32: p->dtype = VOXA_U32; break;
        case 64: p->dtype = VOXA_U64; break;
        default: goto unsupported;
        }
    } else if (p->fmt == SAMPLEFORMAT_INT) {
        switch (p->bps) {
        case 8: p->dtype = VOXA_I8; break;
        case 16: p->dtype = VOXA_I16; break;
        case 32: p->dtype = VOXA_I32; break;
        case 64: p->dtype = VOXA_I64; break;
        default: goto unsupported;
        }
    } else if (p->fmt == SAMPLEFORMAT_IEEEFP) {
        switch (p->bps) {
        case 32: p->dtype = VOXA_F32; break;
        case 64: p->dtype = VOXA_F64; break;
        default: goto unsupported;
        }
    } else {
        goto unsupported;
    }
    if (p->bilevel && p->spp != 1)
        return voxa__error(VOXA_EUNSUPPORTED,
                           "'%s': page %u: 1-bit pixels with %u samples per pixel are not "
                           "supported",
                           r->path, (unsigned)page, (unsigned)p->spp);
    return VOXA_OK;
unsupported:
    return voxa__error(VOXA_EUNSUPPORTED,
                       "'%s': page %u: unsupported pixel type %s (SampleFormat %u, "
                       "BitsPerSample %u); voxa reads 1-bit, 8/16/32/64-bit integers and "
                       "32/64-bit floats",
                       r->path, (unsigned)page, type_str(p, tb, sizeof tb), (unsigned)p->fmt,
                       (unsigned)p->bps);
}

/* Read the current directory's description of the pixels. */
static voxa_status page_info(reader *r, tdir_t page, pageinfo *p) {
    TIFF *tif = r->tif;
    memset(p, 0, sizeof *p);
    uint32_t depth = 1;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &p->w) ||
        !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &p->h) || p->w == 0 || p->h == 0)
        return voxa__error(VOXA_EFORMAT, "'%s': page %u has no (or a zero) image size",
                           r->path, (unsigned)page);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &p->bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &p->fmt);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &p->spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &p->planar);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &p->compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_IMAGEDEPTH, &depth);
    if (!TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &p->photometric)) p->photometric = 0xffff;
    if (p->spp == 0)
        return voxa__error(VOXA_EFORMAT, "'%s': page %u has 0 samples per pixel", r->path,
                           (unsigned)page);
    VOXA_FAIL_IF(depth > 1, VOXA_EUNSUPPORTED,
                 "'%s': page %u is a volumetric tile (ImageDepth %u): not supported", r->path,
                 (unsigned)page, (unsigned)depth);
    if (!TIFFIsCODECConfigured(p->compression)) {
        const TIFFCodec *c = TIFFFindCODEC(p->compression);
        return voxa__error(VOXA_EUNSUPPORTED,
                           "'%s': page %u: compression %u (%s) is not available in this libtiff",
                           r->path, (unsigned)page, (unsigned)p->compression,
                           c && c->name ? c->name : "unknown");
    }
    if (p->photometric == PHOTOMETRIC_YCBCR) {
        if (p->compression == COMPRESSION_JPEG) {
            /* Let libtiff's JPEG codec convert to RGB (and upsample). */
            TIFFSetField(tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        } else {
            uint16_t sh = 1, sv = 1;
            TIFFGetFieldDefaulted(tif, TIFFTAG_YCBCRSUBSAMPLING, &sh, &sv);
            VOXA_FAIL_IF(sh != 1 || sv != 1, VOXA_EUNSUPPORTED,
                         "'%s': page %u: subsampled YCbCr pixels are not supported", r->path,
                         (unsigned)page);
        }
    }
    if (p->spp == 1) p->planar = PLANARCONFIG_CONTIG; /* the same either way */
    VOXA_FAIL_IF(p->planar != PLANARCONFIG_CONTIG && p->planar != PLANARCONFIG_SEPARATE,
                 VOXA_EFORMAT, "'%s': page %u: bad PlanarConfiguration %u", r->path,
                 (unsigned)page, (unsigned)p->planar);
    VOXA_CHECK(pixel_dtype(r, page, p));
    p->tiled = TIFFIsTiled(tif);
    if (p->tiled) {
        if (!TIFFGetField(tif, TIFFTAG_TILEWIDTH, &p->tw) ||
            !TIFFGetField(tif, TIFFTAG_TILELENGTH, &p->th) || p->tw == 0 || p->th == 0)
            return voxa__error(VOXA_EFORMAT, "'%s': page %u: tiled without a tile size",
                               r->path, (unsigned)page);
        /* One tile is decoded into a scratch buffer: refuse absurd tiles
         * (over 1 GiB and over twice the page) before allocating one. */
        double tile = (double)p->tw * p->th * p->spp * p->bps / 8;
        double page_b = (double)p->w * p->h * p->spp * p->bps / 8;
        VOXA_FAIL_IF(tile > (double)(1 << 30) && tile > 2 * page_b, VOXA_EFORMAT,
                     "'%s': page %u: implausible tile size %ux%u for a %ux%u image", r->path,
                     (unsigned)page, (unsigned)p->tw, (unsigned)p->th, (unsigned)p->w,
                     (unsigned)p->h);
    } else {
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &p->rps);
        if (p->rps == 0 || p->rps > p->h) p->rps = p->h;
    }
    return VOXA_OK;
}

/* Bytes of one decoded page (as the output holds it: bilevel -> 1 byte). */
static int64_t page_bytes(const pageinfo *p) {
    return (int64_t)p->w * p->h * p->spp * (int64_t)voxa_dtype_size(p->dtype);
}

static int same_layout(const pageinfo *a, const pageinfo *b) {
    return a->w == b->w && a->h == b->h && a->spp == b->spp && a->dtype == b->dtype &&
           a->bilevel == b->bilevel && (a->spp == 1 || a->planar == b->planar);
}

/* Expand `n` packed bits (MSB first, as FillOrder 1 delivers them after
 * libtiff's bit reversal) to bytes 0/1. */
static void expand_bits(uint8_t *dst, const uint8_t *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = (src[i >> 3] >> (7 - (i & 7))) & 1;
}

/* Decode the current page into `dst` (page_bytes(p) bytes, layout (h, w, s)
 * for interleaved samples, (s, h, w) for separate planes). */
static voxa_status read_page(reader *r, tdir_t page, const pageinfo *p, uint8_t *dst) {
    voxa_status st = VOXA_OK;
    uint8_t *scratch = NULL;
    TIFF *tif = r->tif;
    const int64_t es = (int64_t)voxa_dtype_size(p->dtype);
    const int64_t nplanes = p->planar == PLANARCONFIG_SEPARATE ? p->spp : 1;
    const int64_t pix = (p->planar == PLANARCONFIG_SEPARATE ? 1 : p->spp) * es; /* out bytes */
    const int64_t row = (int64_t)p->w * pix;          /* output bytes of one row of a plane */
    const int64_t plane = row * p->h;                 /* output bytes of one plane */
    tiffmsg_reset(&r->msg);
    if (!p->bilevel && voxa__tiff_inflate_ok(tif, p->compression, p->tiled, p->bps)) {
        /* Deflate strips, decoded in parallel (tiff_inflate.c). On any
         * problem, libtiff decodes the page again and names it. */
        if (voxa__tiff_inflate_page(tif, dst, p->h, p->rps, row, nplanes, es, r->file_size) ==
            VOXA_OK)
            return VOXA_OK;
        tiffmsg_reset(&r->msg);
    }
    if (!p->tiled) {
        const int64_t per_plane = ((int64_t)p->h + p->rps - 1) / p->rps;
        VOXA_GOTO_IF((int64_t)TIFFNumberOfStrips(tif) < per_plane * nplanes, VOXA_EFORMAT,
                     "'%s': page %u has %u strips, %lld expected", r->path, (unsigned)page,
                     (unsigned)TIFFNumberOfStrips(tif), (long long)(per_plane * nplanes));
        /* Bilevel rows are packed: decode a strip aside, then expand. */
        const int64_t packed_row = ((int64_t)p->w + 7) / 8;
        if (p->bilevel) {
            scratch = malloc((size_t)(packed_row * p->rps));
            VOXA_GOTO_IF(!scratch, VOXA_ENOMEM, "out of memory reading '%s'", r->path);
        }
        for (int64_t s = 0; s < nplanes; s++) {
            for (int64_t j = 0; j < per_plane; j++) {
                uint32_t strip = (uint32_t)(s * per_plane + j);
                int64_t y0 = j * p->rps;
                int64_t rows = p->h - y0 < p->rps ? p->h - y0 : p->rps;
                uint8_t *out = dst + s * plane + y0 * row;
                if (!p->bilevel) {
                    tmsize_t want = (tmsize_t)(rows * row);
                    tmsize_t got = TIFFReadEncodedStrip(tif, strip, out, want);
                    if (got != want) {
                        st = voxa__error(VOXA_EFORMAT, "'%s': page %u, strip %u: %s", r->path,
                                         (unsigned)page, strip,
                                         tiffmsg_text(&r->msg, "truncated or corrupt data"));
                        goto done;
                    }
                } else {
                    tmsize_t want = (tmsize_t)(rows * packed_row);
                    tmsize_t got = TIFFReadEncodedStrip(tif, strip, scratch, want);
                    if (got != want) {
                        st = voxa__error(VOXA_EFORMAT, "'%s': page %u, strip %u: %s", r->path,
                                         (unsigned)page, strip,
                                         tiffmsg_text(&r->msg, "truncated or corrupt data"));
                        goto done;
                    }
                    for (int64_t y = 0; y < rows; y++)
                        expand_bits(out + y * row, scratch + y * packed_row, p->w);
                }
            }
        }
    } else {
        const int64_t across = ((int64_t)p->w + p->tw - 1) / p->tw;
        const int64_t down = ((int64_t)p->h + p->th - 1) / p->th;
        VOXA_GOTO_IF((int64_t)TIFFNumberOfTiles(tif) < across * down * nplanes, VOXA_EFORMAT,
                     "'%s': page %u has %u tiles, %lld expected", r->path, (unsigned)page,
                     (unsigned)TIFFNumberOfTiles(tif), (long long)(across * down * nplanes));
        /* Decoded tile rows: tw pixels, packed when bilevel. */
        const int64_t trow = p->bilevel ? ((int64_t)p->tw + 7) / 8 : (int64_t)p->tw * pix;
        const int64_t tbytes = trow * p->th;
        scratch = malloc((size_t)tbytes);
        VOXA_GOTO_IF(!scratch, VOXA_ENOMEM, "out of memory reading '%s' (tile of %lld bytes)",
                     r->path, (long long)tbytes);
        for (int64_t s = 0; s < nplanes; s++) {
            for (int64_t ty = 0; ty < down; ty++) {
                for (int64_t tx = 0; tx < across; tx++) {
                    uint32_t x0 = (uint32_t)(tx * p->tw), y0 = (uint32_t)(ty * p->th);
                    uint32_t tile = TIFFComputeTile(tif, x0, y0, 0, (uint16_t)s);
                    tmsize_t got = TIFFReadEncodedTile(tif, tile, scratch, (tmsize_t)tbytes);
                    if (got != (tmsize_t)tbytes) {
                        st = voxa__error(VOXA_EFORMAT, "'%s': page %u, tile %u: %s", r->path,
                                         (unsigned)page, tile,
                                         tiffmsg_text(&r->msg, "truncated or corrupt data"));
                        goto done;
                    }
                    int64_t cols = p->w - x0 < p->tw ? p->w - x0 : p->tw;
                    int64_t rows = p->h - y0 < p->th ? p->h - y0 : p->th;
                    uint8_t *out = dst + s * plane + (int64_t)y0 * row + (int64_t)x0 * pix;
                    for (int64_t y = 0; y < rows; y++) {
                        if (p->bilevel) expand_bits(out + y * row, scratch + y * trow, cols);
                        else memcpy(out + y * row, scratch + y * trow, (size_t)(cols * pix));
                    }
                }
            }
        }
    }
done:
    free(scratch);
    return st;
}

/* A corrupt directory may announce gigapixels in a 300-byte file. Before
 * anything is allocated, compare the page's decoded size with what its
 * strips/tiles could hold: codecs with a bounded expansion (none 1, PackBits
 * 128 per byte pair, LZW 4096 per 9-bit code, deflate 1032) cannot produce
 * more; other codecs are not bounded here. */
static voxa_status check_plausible(reader *r, tdir_t page, const pageinfo *p) {
    int64_t ratio;
    switch (p->compression) {
    case COMPRESSION_NONE: ratio = 1; break;
    case COMPRESSION_PACKBITS: ratio = 64; break;
    case COMPRESSION_LZW: ratio = 4096; break;
    case COMPRESSION_ADOBE_DEFLATE: case COMPRESSION_DEFLATE: ratio = 1100; break;
    default: return VOXA_OK;
    }
    uint64_t *counts = NULL;
    ttag_t tag = p->tiled ? TIFFTAG_TILEBYTECOUNTS : TIFFTAG_STRIPBYTECOUNTS;
    uint32_t n = p->tiled ? TIFFNumberOfTiles(r->tif) : TIFFNumberOfStrips(r->tif);
    if (!TIFFGetField(r->tif, tag, &counts) || !counts) return VOXA_OK; /* libtiff decides */
    int64_t have = 0;
    for (uint32_t i = 0; i < n; i++)
        have += counts[i] < (uint64_t)r->file_size ? (int64_t)counts[i] : r->file_size;
    /* Bytes the codec must produce, in double (tile sizes are 32-bit each:
     * their product may not fit 64 bits). Tiles are padded to whole tiles. */
    double cols = p->w, rows = p->h;
    if (p->tiled) {
        cols = ceil(cols / p->tw) * p->tw;
        rows = ceil(rows / p->th) * p->th;
    }
    double need = ceil(cols * p->spp * p->bps / 8) * rows;
    if (need <= (double)have * (double)ratio + 4096) return VOXA_OK;
    return voxa__error(VOXA_EFORMAT,
                       "'%s' is truncated or corrupt: page %u announces %lld bytes of pixels, "
                       "its %s data hold %lld bytes",
                       r->path, (unsigned)page, (long long)page_bytes(p),
                       p->compression == COMPRESSION_NONE ? "uncompressed" : "compressed",
                       (long long)have);
}

/* The count N of "images=N" in an ImageJ description, or 0. */
static int64_t imagej_images(const char *desc) {
    if (!desc || strncmp(desc, "ImageJ=", 7) != 0) return 0;
    const char *s = strstr(desc, "\nimages=");
    if (!s) return 0;
    s += 8;
    int64_t n = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (n > (INT64_MAX - 9) / 10) return 0;
        n = n * 10 + (*s - '0');
    }
    return n;
}

static void swap_bytes(uint8_t *p, int64_t n, int64_t es) {
    for (int64_t i = 0; i < n; i++, p += es)
        for (int64_t a = 0, b = es - 1; a < b; a++, b--) {
            uint8_t t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* If the (single-IFD) file is an ImageJ "raw contiguous" stack of more than
 * one image, return the number of images and the data offset of image 0;
 * otherwise 0. */
static int64_t imagej_raw_stack(reader *r, const pageinfo *p, uint64_t *offset) {
    const char *desc = NULL;
    if (!TIFFGetField(r->tif, TIFFTAG_IMAGEDESCRIPTION, &desc)) return 0;
    int64_t n = imagej_images(desc);
    if (n <= 1 || p->tiled || p->bilevel || p->compression != COMPRESSION_NONE) return 0;
    uint64_t *offs = NULL, *counts = NULL;
    if (!TIFFGetField(r->tif, TIFFTAG_STRIPOFFSETS, &offs) ||
        !TIFFGetField(r->tif, TIFFTAG_STRIPBYTECOUNTS, &counts) || !offs || !counts)
        return 0;
    uint32_t ns = TIFFNumberOfStrips(r->tif);
    if (ns == 0) return 0;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < ns; i++) {
        if (offs[i] != offs[0] + sum) return 0; /* not contiguous */
        sum += counts[i];
    }
    if ((int64_t)sum != page_bytes(p)) return 0;
    *offset = offs[0];
    return n;
}

static voxa_status read_raw_stack(reader *r, const pageinfo *p, int64_t n, uint64_t offset,
                                  voxa_array *out) {
    int64_t pb = page_bytes(p);
    VOXA_FAIL_IF(pb && n > INT64_MAX / pb, VOXA_EFORMAT, "'%s': ImageJ image count too large",
                 r->path);
    int64_t total = pb * n;
    VOXA_FAIL_IF((int64_t)offset > r->file_size || r->file_size - (int64_t)offset < total,
                 VOXA_EFORMAT,
                 "'%s' is truncated: ImageJ announces %lld images (%lld bytes from offset "
                 "%llu), the file has %lld bytes",
                 r->path, (long long)n, (long long)total, (unsigned long long)offset,
                 (long long)r->file_size);
    int fd = open(r->path, O_RDONLY);
    VOXA_FAIL_IF(fd < 0, VOXA_EIO, "cannot open '%s': %s", r->path, strerror(errno));
    uint8_t *d = out->data;
    int64_t done = 0;
    while (done < total) {
        size_t chunk = total - done > (1 << 30) ? (size_t)1 << 30 : (size_t)(total - done);
        ssize_t got = pread(fd, d + done, chunk, (off_t)(offset + (uint64_t)done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            int e = got < 0 ? errno : 0;
            close(fd);
            return voxa__error(got < 0 ? VOXA_EIO : VOXA_EFORMAT, "cannot read '%s': %s",
                               r->path, got < 0 ? strerror(e) : "unexpected end of file");
        }
        done += got;
    }
    close(fd);
    int64_t es = (int64_t)voxa_dtype_size(p->dtype);
    if (TIFFIsByteSwapped(r->tif) && es > 1) swap_bytes(d, total / es, es);
    return VOXA_OK;
}

/* libtiff reads a directory whose "next IFD" pointer is cut off by the end
 * of the file as the last one, silently: a file truncated right there would
 * read as fewer pages. Check that the current directory (entry count,
 * entries, next pointer) lies inside the file. */
static voxa_status check_ifd_inside(reader *r) {
    uint64_t off = TIFFCurrentDirOffset(r->tif);
    const int big = TIFFIsBigTIFF(r->tif);
    const int64_t cnt_size = big ? 8 : 2, entry = big ? 20 : 12, next = big ? 8 : 4;
    uint8_t order[2] = {0}, b[8] = {0};
    int fd = open(r->path, O_RDONLY);
    VOXA_FAIL_IF(fd < 0, VOXA_EIO, "cannot open '%s': %s", r->path, strerror(errno));
    ssize_t got = pread(fd, order, 2, 0) == 2 ? pread(fd, b, (size_t)cnt_size, (off_t)off) : -1;
    close(fd);
    uint64_t cnt = 0;
    const int le = order[0] == 'I'; /* "II" little-endian, "MM" big-endian */
    for (int64_t i = 0; i < cnt_size; i++)
        cnt = cnt << 8 | b[le ? cnt_size - 1 - i : i];
    VOXA_FAIL_IF(got != cnt_size || cnt > (uint64_t)r->file_size ||
                     (int64_t)off + cnt_size + (int64_t)cnt * entry + next > r->file_size,
                 VOXA_EFORMAT, "'%s' is truncated: the last page's directory is cut off",
                 r->path);
    return VOXA_OK;
}

/* Shape of the result: [pages,] then the page's (h, w[, s]) or (s, h, w). */
static int result_shape(const pageinfo *p, int64_t npages, int64_t *shape) {
    int nd = 0;
    if (npages > 1) shape[nd++] = npages;
    if (p->spp > 1 && p->planar == PLANARCONFIG_SEPARATE) shape[nd++] = p->spp;
    shape[nd++] = p->h;
    shape[nd++] = p->w;
    if (p->spp > 1 && p->planar == PLANARCONFIG_CONTIG) shape[nd++] = p->spp;
    return nd;
}

/* Pass 1 (see tiff_internal.h). */
voxa_status voxa__tiff_scan(reader *r, pageinfo *p0, int64_t *npages, uint64_t *raw_offset,
                            int64_t *raw_n) {
    pageinfo p;
    char b0[32], b1[32];
    *npages = 0;
    *raw_n = 0;
    for (;;) {
        VOXA_CHECK(page_info(r, (tdir_t)*npages, *npages ? &p : p0));
        if (*npages && !same_layout(p0, &p))
            return voxa__error(VOXA_EFORMAT,
                               "'%s': page %lld (%ux%u, %u samples, %s) differs from page 0 "
                               "(%ux%u, %u samples, %s); voxa reads stacks of equal pages",
                               r->path, (long long)*npages, (unsigned)p.w, (unsigned)p.h,
                               (unsigned)p.spp, type_str(&p, b1, sizeof b1), (unsigned)p0->w,
                               (unsigned)p0->h, (unsigned)p0->spp,
                               type_str(p0, b0, sizeof b0));
        VOXA_CHECK(check_plausible(r, (tdir_t)*npages, *npages ? &p : p0));
        ++*npages;
        if (TIFFLastDirectory(r->tif)) {
            VOXA_CHECK(check_ifd_inside(r));
            break;
        }
        tiffmsg_reset(&r->msg);
        if (!TIFFReadDirectory(r->tif))
            return fail(r, VOXA_EFORMAT, "cannot read the next page's directory",
                        "corrupt IFD chain");
    }
    if (*npages == 1) *raw_n = imagej_raw_stack(r, p0, raw_offset);
    return VOXA_OK;
}

voxa_status voxa__tiff_page_info(reader *r, tdir_t page, pageinfo *p) {
    return page_info(r, page, p);
}

voxa_status voxa_tiff_read(const char *path, voxa_array *out) {
    voxa_status st = VOXA_OK;
    reader r = {.path = path};
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "tiff read: NULL output");
    memset(out, 0, sizeof *out);
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "tiff read: NULL path");
    struct stat sb;
    VOXA_FAIL_IF(stat(path, &sb) != 0, VOXA_EIO, "cannot open '%s': %s", path, strerror(errno));
    VOXA_FAIL_IF(!S_ISREG(sb.st_mode), VOXA_EIO, "cannot read '%s': not a regular file", path);
    r.file_size = (int64_t)sb.st_size;
    /* "m": no memory mapping, so uncompressed strips are read() straight
     * into the output, and a file shrinking under us gives EIO, not SIGBUS. */
    r.tif = voxa__tiff_open(path, "rm", &r.msg);
    if (!r.tif)
        return voxa__error(VOXA_EFORMAT, "'%s' is not a readable TIFF file: %s", path,
                           tiffmsg_text(&r.msg, "libtiff could not open it"));

    /* Pass 1: directories only. */
    pageinfo p0, p;
    int64_t npages = 0, raw_n = 0;
    uint64_t raw_offset = 0;
    st = voxa__tiff_scan(&r, &p0, &npages, &raw_offset, &raw_n);
    if (st != VOXA_OK) goto done;

    int64_t pb = page_bytes(&p0);
    if (raw_n > 1) npages = raw_n;
    VOXA_GOTO_IF(npages > INT64_MAX / pb, VOXA_EFORMAT, "'%s': too many pages", path);
    int64_t shape[VOXA_MAXDIM];
    int nd = result_shape(&p0, npages, shape);
    st = voxa_array_new(out, p0.dtype, nd, shape);
    if (st != VOXA_OK) goto done;

    if (raw_n > 1) {
        st = read_raw_stack(&r, &p0, raw_n, raw_offset, out);
        goto done;
    }
    /* Pass 2: decode every page in place. */
    tiffmsg_reset(&r.msg);
    if (!TIFFSetDirectory(r.tif, 0)) {
        st = fail(&r, VOXA_EFORMAT, "cannot return to page 0", "seek failed");
        goto done;
    }
    for (int64_t k = 0; k < npages; k++) {
        if (k) {
            tiffmsg_reset(&r.msg);
            if (!TIFFReadDirectory(r.tif)) {
                st = fail(&r, VOXA_EFORMAT, "cannot read a page's directory", "corrupt IFD");
                goto done;
            }
        }
        st = page_info(&r, (tdir_t)k, &p);
        if (st != VOXA_OK) goto done;
        VOXA_GOTO_IF(!same_layout(&p0, &p), VOXA_EFORMAT, "'%s': page %lld changed on reread",
                     path, (long long)k);
        st = read_page(&r, (tdir_t)k, &p, (uint8_t *)out->data + k * pb);
        if (st != VOXA_OK) goto done;
    }
done:
    if (r.tif) TIFFClose(r.tif);
    if (st != VOXA_OK) voxa_array_free(out);
    return st;
}
