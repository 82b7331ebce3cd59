/* A TIFF that can be written by regions, in any order, from many threads:
 * the layout of the chunk executor's TIFF outputs (src/stream/store_tiff.c).
 *
 * libtiff writes a file front to back: a page's strips, then its directory,
 * then the next page. The executor instead writes blocks in any order (in
 * parallel, and labelling writes its output twice and reads it back between
 * the passes), so buffering for libtiff would hold up to the whole volume.
 * For uncompressed pixels the whole file is known in advance, so it is laid
 * out once, here, and the pixels then go straight to their place:
 *
 *   header (16 bytes) | directory of page 0, its strip offsets and byte
 *   counts | page 1 ... | the Software string | pixels: the array in C
 *   order, pages one after another
 *
 * Each page is described as strips of about 256 KiB (whole rows), like
 * voxa_tiff_write's pages, so a region reader decodes little more than the
 * rows it wants. The file is always BigTIFF (64-bit offsets: no size limit),
 * in the machine's byte order, with the tags voxa_tiff_write puts on a page
 * (one sample, MinIsBlack, SampleFormat, Compression none; multi-page files
 * with SubfileType "page" and PageNumber), so libtiff, tifffile and ImageJ
 * read it as voxa_tiff_write's stacks; tifffile sees one (n, h, w) series.
 * bool arrays are stored as uint8 0/1.
 *
 * Cost: the directories, about 330 bytes + 16 bytes per strip and page,
 * written with one pwrite per page; nothing is held but one directory. */
#include "tiff_layout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STRIP_BYTES ((int64_t)256 << 10)
#define NTAGS_MAX 14
#define SOFTWARE ("voxa " VOXA_VERSION_STRING)

enum { T_ASCII = 2, T_SHORT = 3, T_LONG = 4, T_LONG8 = 16 };

typedef struct geometry {
    int64_t npages, h, w, es, row, rps, nstrips;
    int ntags;
    int64_t ifd_bytes;  /* one page's directory with its strip arrays */
    int64_t software;   /* offset of the Software string */
    int64_t data;       /* offset of the pixels */
} geometry;

static voxa_status geometry_of(const char *path, voxa_dtype t, int ndim, const int64_t *shape,
                               geometry *g) {
    VOXA_FAIL_IF(ndim != 2 && ndim != 3, VOXA_EUNSUPPORTED,
                 "cannot write '%s': TIFF holds 2D or 3D arrays, got %d dimensions", path, ndim);
    for (int d = 0; d < ndim; d++)
        VOXA_FAIL_IF(shape[d] <= 0, VOXA_EUNSUPPORTED,
                     "cannot write '%s': TIFF cannot hold an empty array (axis %d is %lld)", path,
                     d, (long long)shape[d]);
    g->npages = ndim == 3 ? shape[0] : 1;
    g->h = shape[ndim - 2];
    g->w = shape[ndim - 1];
    VOXA_FAIL_IF(g->h > UINT32_MAX || g->w > UINT32_MAX, VOXA_EUNSUPPORTED,
                 "cannot write '%s': page of %lld x %lld exceeds TIFF's 2^32-1 limit", path,
                 (long long)g->h, (long long)g->w);
    g->es = (int64_t)voxa_dtype_size(t);
    g->row = g->w * g->es;
    g->rps = STRIP_BYTES / g->row;
    if (g->rps < 1) g->rps = 1;
    if (g->rps > g->h) g->rps = g->h;
    g->nstrips = (g->h + g->rps - 1) / g->rps;
    int multi = g->npages > 1;
    g->ntags = 12 + multi + (multi && g->npages <= 65535);
    int64_t arrays = g->nstrips > 1 ? 2 * 8 * g->nstrips : 0;
    g->ifd_bytes = 8 + 20 * (int64_t)g->ntags + 8 + arrays;
    VOXA_FAIL_IF(g->npages > (INT64_MAX / 4 - 64) / g->ifd_bytes, VOXA_EUNSUPPORTED,
                 "cannot write '%s': %lld pages", path, (long long)g->npages);
    g->software = 16 + g->npages * g->ifd_bytes;
    g->data = (g->software + (int64_t)sizeof SOFTWARE + 15) / 16 * 16;
    int64_t page = g->h * g->row;
    VOXA_FAIL_IF(page > (INT64_MAX - g->data) / g->npages, VOXA_EUNSUPPORTED,
                 "cannot write '%s': %lld pages of %lld bytes", path, (long long)g->npages,
                 (long long)page);
    return VOXA_OK;
}

voxa_status voxa__tiff_layout_size(const char *path, voxa_dtype t, int ndim,
                                   const int64_t *shape, int64_t *data_offset) {
    geometry g = {0};
    VOXA_CHECK(geometry_of(path, t, ndim, shape, &g));
    *data_offset = g.data;
    return VOXA_OK;
}

/* One 20-byte BigTIFF entry; a value that fits 8 bytes sits in the entry,
 * left-justified, in the machine's byte order (that of the header). */
static uint8_t *entry(uint8_t *p, uint16_t tag, uint16_t type, uint64_t count, uint64_t value) {
    memcpy(p, &tag, 2);
    memcpy(p + 2, &type, 2);
    memcpy(p + 4, &count, 8);
    memset(p + 12, 0, 8);
    if (type == T_SHORT && count <= 4) {
        uint16_t v[4] = {(uint16_t)value, (uint16_t)(value >> 16), (uint16_t)(value >> 32),
                         (uint16_t)(value >> 48)};
        memcpy(p + 12, v, 2 * (size_t)count);
    } else if (type == T_LONG && count == 1) {
        uint32_t v = (uint32_t)value;
        memcpy(p + 12, &v, 4);
    } else {
        memcpy(p + 12, &value, 8); /* an offset, or one LONG8 */
    }
    return p + 20;
}

static voxa_status put(int fd, const char *path, const void *buf, size_t n, int64_t at) {
    const char *b = buf;
    while (n > 0) {
        ssize_t k = pwrite(fd, b, n, (off_t)at);
        if (k < 0 && errno == EINTR) continue;
        VOXA_FAIL_IF(k <= 0, VOXA_EIO, "cannot write '%s': %s", path,
                     k < 0 ? strerror(errno) : "nothing written");
        b += k;
        n -= (size_t)k;
        at += k;
    }
    return VOXA_OK;
}

static void sample_format(voxa_dtype t, uint16_t *fmt) {
    switch (t) {
    case VOXA_I8: case VOXA_I16: case VOXA_I32: case VOXA_I64: *fmt = 2; break;
    case VOXA_F32: case VOXA_F64: *fmt = 3; break;
    default: *fmt = 1; break; /* bool, unsigned */
    }
}

voxa_status voxa__tiff_layout_write(int fd, const char *path, voxa_dtype t, int ndim,
                                    const int64_t *shape) {
    geometry g = {0};
    VOXA_CHECK(geometry_of(path, t, ndim, shape, &g));
    uint8_t head[16];
    const uint16_t one = 1;
    int little = *(const uint8_t *)&one == 1;
    uint16_t magic = 43, bytesize = 8, zero = 0;
    uint64_t first = 16;
    memcpy(head, little ? "II" : "MM", 2);
    memcpy(head + 2, &magic, 2);
    memcpy(head + 4, &bytesize, 2);
    memcpy(head + 6, &zero, 2);
    memcpy(head + 8, &first, 8);
    VOXA_CHECK(put(fd, path, head, sizeof head, 0));
    VOXA_CHECK(put(fd, path, SOFTWARE, sizeof SOFTWARE, g.software));
    uint8_t *buf = malloc((size_t)g.ifd_bytes);
    VOXA_FAIL_IF(!buf, VOXA_ENOMEM, "cannot write '%s': out of memory", path);
    uint16_t fmt;
    sample_format(t, &fmt);
    const int64_t page = g.h * g.row;
    voxa_status st = VOXA_OK;
    for (int64_t k = 0; k < g.npages && st == VOXA_OK; k++) {
        int64_t at = 16 + k * g.ifd_bytes;
        int64_t arrays = at + 8 + 20 * (int64_t)g.ntags + 8; /* offsets, then counts */
        int64_t pixels = g.data + k * page;
        int64_t last = g.h - (g.nstrips - 1) * g.rps;
        uint64_t n = (uint64_t)g.ntags, next = k + 1 < g.npages ? (uint64_t)(at + g.ifd_bytes) : 0;
        uint64_t offs = g.nstrips > 1 ? (uint64_t)arrays : (uint64_t)pixels;
        uint64_t counts = g.nstrips > 1 ? (uint64_t)(arrays + 8 * g.nstrips) : (uint64_t)page;
        memcpy(buf, &n, 8);
        uint8_t *p = buf + 8;
        if (g.npages > 1) p = entry(p, 254, T_LONG, 1, 2); /* NewSubfileType: page */
        p = entry(p, 256, T_LONG, 1, (uint64_t)g.w);
        p = entry(p, 257, T_LONG, 1, (uint64_t)g.h);
        p = entry(p, 258, T_SHORT, 1, (uint64_t)(8 * g.es));
        p = entry(p, 259, T_SHORT, 1, 1);               /* no compression */
        p = entry(p, 262, T_SHORT, 1, 1);               /* MinIsBlack */
        p = entry(p, 273, T_LONG8, (uint64_t)g.nstrips, offs);
        p = entry(p, 277, T_SHORT, 1, 1);               /* one sample per pixel */
        p = entry(p, 278, T_LONG, 1, (uint64_t)g.rps);
        p = entry(p, 279, T_LONG8, (uint64_t)g.nstrips, counts);
        p = entry(p, 284, T_SHORT, 1, 1);               /* contiguous samples */
        if (g.npages > 1 && g.npages <= 65535)          /* PageNumber (k, n) */
            p = entry(p, 297, T_SHORT, 2, (uint64_t)k | (uint64_t)g.npages << 16);
        p = entry(p, 305, T_ASCII, sizeof SOFTWARE, (uint64_t)g.software);
        p = entry(p, 339, T_SHORT, 1, fmt);
        memcpy(p, &next, 8);
        p += 8;
        for (int64_t j = 0; g.nstrips > 1 && j < g.nstrips; j++) {
            uint64_t o = (uint64_t)(pixels + j * g.rps * g.row);
            memcpy(p + 8 * j, &o, 8);
        }
        for (int64_t j = 0; g.nstrips > 1 && j < g.nstrips; j++) {
            uint64_t c = (uint64_t)((j + 1 < g.nstrips ? g.rps : last) * g.row);
            memcpy(p + 8 * (g.nstrips + j), &c, 8);
        }
        st = put(fd, path, buf, (size_t)g.ifd_bytes, at);
    }
    free(buf);
    return st;
}
