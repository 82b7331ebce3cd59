/* TIFF region reads: a box of a 2-D image or 3-D page stack, decoding only
 * the strips or tiles that the box touches (no whole-file read), so a TIFF
 * larger than memory can feed a chunked run.
 *
 * voxa_tiff_open scans the directories once (tiff.c's pass 1: every page
 * checked against page 0, plausibility of the byte counts, the ImageJ
 * "raw contiguous" > 4 GB layout). A region read then visits pages lo[0]..
 * (TIFFSetDirectory), and in each page the strips (rows [y0, y1)) or tiles
 * (rows x columns) that intersect the box, decoding each into one scratch
 * buffer and copying the intersection into the (strided) output. ImageJ raw
 * stacks are read with pread, row segment by row segment, swapped when the
 * file is big-endian. Cost: decoding the touched strips/tiles (a strip is
 * decoded whole even when the box needs a few columns of it); memory: one
 * strip or tile.
 *
 * Scope: one sample per pixel, 8..64-bit integers and floats (what
 * microscopy stacks hold); RGB, separate planes and 1-bit pages are refused
 * (EUNSUPPORTED; voxa_tiff_read reads them whole). A libtiff handle is not
 * thread-safe: a handle's reads are serialised by its mutex. */
#include "internal.h"
#include "tiff_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct voxa_tiff {
    char *path;
    reader r;
    pageinfo p0;
    int64_t npages;
    int64_t raw_n;        /* ImageJ raw stack: images, else 0 */
    uint64_t raw_offset;
    int swapped;
    int ndim;
    int64_t shape[3];
    uint8_t *scratch;
    size_t scratch_len;
    pthread_mutex_t lock;
};

void voxa_tiff_close(voxa_tiff *t) {
    if (!t) return;
    if (t->r.tif) TIFFClose(t->r.tif);
    pthread_mutex_destroy(&t->lock);
    free(t->scratch);
    free(t->path);
    free(t);
}

voxa_status voxa_tiff_open(const char *path, voxa_tiff **out) {
    VOXA_FAIL_IF(!path || !out, VOXA_EINVAL, "tiff_open: NULL argument");
    *out = NULL;
    struct stat sb;
    VOXA_FAIL_IF(stat(path, &sb) != 0, VOXA_EIO, "cannot open '%s': %s", path, strerror(errno));
    VOXA_FAIL_IF(!S_ISREG(sb.st_mode), VOXA_EIO, "cannot read '%s': not a regular file", path);
    voxa_tiff *t = calloc(1, sizeof *t);
    VOXA_FAIL_IF(!t, VOXA_ENOMEM, "tiff_open: out of memory");
    pthread_mutex_init(&t->lock, NULL);
    voxa_status st = VOXA_OK;
    t->path = strdup(path);
    VOXA_GOTO_IF(!t->path, VOXA_ENOMEM, "tiff_open: out of memory");
    t->r.path = t->path;
    t->r.file_size = (int64_t)sb.st_size;
    t->r.tif = voxa__tiff_open(t->path, "rm", &t->r.msg);
    VOXA_GOTO_IF(!t->r.tif, VOXA_EFORMAT, "'%s' is not a readable TIFF file: %s", path,
                 tiffmsg_text(&t->r.msg, "libtiff could not open it"));
    if ((st = voxa__tiff_scan(&t->r, &t->p0, &t->npages, &t->raw_offset, &t->raw_n))) goto done;
    VOXA_GOTO_IF(t->p0.spp != 1 || t->p0.bilevel, VOXA_EUNSUPPORTED,
                 "'%s': region reads need one 8..64-bit sample per pixel (this file has %u "
                 "samples of %u bits); read it whole", path, (unsigned)t->p0.spp,
                 (unsigned)t->p0.bps);
    t->swapped = TIFFIsByteSwapped(t->r.tif);
    if (t->raw_n > 1) {
        int64_t pb = (int64_t)t->p0.w * t->p0.h * (int64_t)voxa_dtype_size(t->p0.dtype);
        VOXA_GOTO_IF(t->raw_n > INT64_MAX / pb || (int64_t)t->raw_offset > t->r.file_size ||
                         t->r.file_size - (int64_t)t->raw_offset < pb * t->raw_n,
                     VOXA_EFORMAT, "'%s' is truncated: ImageJ announces %lld images", path,
                     (long long)t->raw_n);
        t->npages = t->raw_n;
    }
    t->ndim = t->npages > 1 ? 3 : 2;
    int k = 0;
    if (t->ndim == 3) t->shape[k++] = t->npages;
    t->shape[k++] = t->p0.h;
    t->shape[k++] = t->p0.w;
    *out = t;
    t = NULL;
done:
    voxa_tiff_close(t);
    return st;
}

voxa_status voxa_tiff_get_shape(const voxa_tiff *t, voxa_dtype *dtype, int *ndim,
                                int64_t *shape) {
    VOXA_FAIL_IF(!t || !dtype || !ndim || !shape, VOXA_EINVAL, "tiff_get_shape: NULL argument");
    *dtype = t->p0.dtype;
    *ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++) shape[d] = t->shape[d];
    return VOXA_OK;
}

static voxa_status grow(voxa_tiff *t, size_t n) {
    if (n <= t->scratch_len) return VOXA_OK;
    uint8_t *p = realloc(t->scratch, n);
    VOXA_FAIL_IF(!p, VOXA_ENOMEM, "out of memory reading '%s' (%zu bytes)", t->path, n);
    t->scratch = p;
    t->scratch_len = n;
    return VOXA_OK;
}

/* Copy rows [y0, y1) x columns [x0, x1) of a decoded block whose top-left
 * pixel is (by, bx) and whose rows are `brow` bytes into page plane `dst`
 * (the output view at page k, origin (ly, lx)). */
static void put_block(const voxa_tiff *t, const uint8_t *blk, int64_t by, int64_t bx,
                      int64_t brow, int64_t y0, int64_t y1, int64_t x0, int64_t x1,
                      char *dst, int64_t ly, int64_t lx, int64_t sy, int64_t sx) {
    size_t es = voxa_dtype_size(t->p0.dtype);
    for (int64_t y = y0; y < y1; y++) {
        const uint8_t *s = blk + (y - by) * brow + (x0 - bx) * (int64_t)es;
        char *d = dst + (y - ly) * sy + (x0 - lx) * sx;
        if (sx == (int64_t)es) memcpy(d, s, (size_t)(x1 - x0) * es);
        else
            for (int64_t x = x0; x < x1; x++, s += es, d += sx) memcpy(d, s, es);
    }
}

static void swap_view_rows(char *dst, int64_t n, int64_t sx, size_t es) {
    for (int64_t i = 0; i < n; i++, dst += sx)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            char c = dst[a];
            dst[a] = dst[b];
            dst[b] = c;
        }
}

/* One page's part of the box: rows [ly, ly+ny), columns [lx, lx+nx). */
static voxa_status read_page_box(voxa_tiff *t, int64_t k, int64_t ly, int64_t ny, int64_t lx,
                                 int64_t nx, char *dst, int64_t sy, int64_t sx) {
    TIFF *tif = t->r.tif;
    const pageinfo *p = &t->p0;
    size_t es = voxa_dtype_size(p->dtype);
    const int64_t row = (int64_t)p->w * (int64_t)es;
    if (t->raw_n > 1) { /* ImageJ raw stack: pread each row segment */
        int fd = open(t->path, O_RDONLY);
        VOXA_FAIL_IF(fd < 0, VOXA_EIO, "cannot open '%s': %s", t->path, strerror(errno));
        voxa_status st = grow(t, (size_t)nx * es);
        for (int64_t y = ly; y < ly + ny && !st; y++) {
            uint64_t off = t->raw_offset + (uint64_t)(k * row * p->h + y * row + lx * (int64_t)es);
            size_t want = (size_t)nx * es, got = 0;
            while (got < want) {
                ssize_t r = pread(fd, t->scratch + got, want - got, (off_t)(off + got));
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) {
                    st = voxa__error(r < 0 ? VOXA_EIO : VOXA_EFORMAT, "cannot read '%s': %s",
                                     t->path, r < 0 ? strerror(errno) : "unexpected end of file");
                    break;
                }
                got += (size_t)r;
            }
            if (!st) put_block(t, t->scratch, y, lx, nx * (int64_t)es, y, y + 1, lx, lx + nx,
                               dst, ly, lx, sy, sx);
            if (!st && t->swapped && es > 1) swap_view_rows(dst + (y - ly) * sy, nx, sx, es);
        }
        close(fd);
        return st;
    }
    tiffmsg_reset(&t->r.msg);
    if (!TIFFSetDirectory(tif, (tdir_t)k))
        return voxa__error(VOXA_EFORMAT, "'%s': cannot go to page %lld: %s", t->path,
                           (long long)k, tiffmsg_text(&t->r.msg, "seek failed"));
    pageinfo pk;
    VOXA_CHECK(voxa__tiff_page_info(&t->r, (tdir_t)k, &pk));
    VOXA_FAIL_IF(pk.w != p->w || pk.h != p->h || pk.dtype != p->dtype || pk.spp != 1,
                 VOXA_EFORMAT, "'%s': page %lld changed on reread", t->path, (long long)k);
    if (!pk.tiled) {
        int64_t strips = ((int64_t)pk.h + pk.rps - 1) / pk.rps;
        VOXA_FAIL_IF((int64_t)TIFFNumberOfStrips(tif) < strips, VOXA_EFORMAT,
                     "'%s': page %lld has %u strips, %lld expected", t->path, (long long)k,
                     (unsigned)TIFFNumberOfStrips(tif), (long long)strips);
        VOXA_CHECK(grow(t, (size_t)(row * pk.rps)));
        for (int64_t j = ly / pk.rps; j * pk.rps < ly + ny; j++) {
            int64_t y0 = j * pk.rps, rows = pk.h - y0 < pk.rps ? pk.h - y0 : pk.rps;
            tmsize_t want = (tmsize_t)(rows * row);
            if (TIFFReadEncodedStrip(tif, (uint32_t)j, t->scratch, want) != want)
                return voxa__error(VOXA_EFORMAT, "'%s': page %lld, strip %lld: %s", t->path,
                                   (long long)k, (long long)j,
                                   tiffmsg_text(&t->r.msg, "truncated or corrupt data"));
            int64_t a = y0 > ly ? y0 : ly, b = y0 + rows < ly + ny ? y0 + rows : ly + ny;
            put_block(t, t->scratch, y0, 0, row, a, b, lx, lx + nx, dst, ly, lx, sy, sx);
        }
        return VOXA_OK;
    }
    int64_t across = ((int64_t)pk.w + pk.tw - 1) / pk.tw, down = ((int64_t)pk.h + pk.th - 1) / pk.th;
    VOXA_FAIL_IF((int64_t)TIFFNumberOfTiles(tif) < across * down, VOXA_EFORMAT,
                 "'%s': page %lld has %u tiles, %lld expected", t->path, (long long)k,
                 (unsigned)TIFFNumberOfTiles(tif), (long long)(across * down));
    const int64_t trow = (int64_t)pk.tw * (int64_t)es, tbytes = trow * pk.th;
    VOXA_CHECK(grow(t, (size_t)tbytes));
    for (int64_t ty = ly / pk.th; ty * pk.th < ly + ny; ty++)
        for (int64_t tx = lx / pk.tw; tx * pk.tw < lx + nx; tx++) {
            int64_t y0 = ty * pk.th, x0 = tx * pk.tw;
            uint32_t tile = TIFFComputeTile(tif, (uint32_t)x0, (uint32_t)y0, 0, 0);
            if (TIFFReadEncodedTile(tif, tile, t->scratch, (tmsize_t)tbytes) != (tmsize_t)tbytes)
                return voxa__error(VOXA_EFORMAT, "'%s': page %lld, tile %u: %s", t->path,
                                   (long long)k, tile,
                                   tiffmsg_text(&t->r.msg, "truncated or corrupt data"));
            int64_t ya = y0 > ly ? y0 : ly, yb = y0 + pk.th < ly + ny ? y0 + pk.th : ly + ny;
            int64_t xa = x0 > lx ? x0 : lx, xb = x0 + pk.tw < lx + nx ? x0 + pk.tw : lx + nx;
            put_block(t, t->scratch, y0, x0, trow, ya, yb, xa, xb, dst, ly, lx, sy, sx);
        }
    return VOXA_OK;
}

voxa_status voxa_tiff_read_region(voxa_tiff *t, const int64_t *lo, voxa_array *out) {
    VOXA_FAIL_IF(!t || !lo || !out, VOXA_EINVAL, "tiff_read_region: NULL argument");
    VOXA_CHECK(voxa_array_check(out, "tiff_read_region"));
    VOXA_FAIL_IF(out->dtype != t->p0.dtype || out->ndim != t->ndim, VOXA_EINVAL,
                 "tiff_read_region: out is %s with %d axes, '%s' is %s with %d",
                 voxa_dtype_name(out->dtype), out->ndim, t->path, voxa_dtype_name(t->p0.dtype),
                 t->ndim);
    for (int d = 0; d < t->ndim; d++)
        VOXA_FAIL_IF(lo[d] < 0 || out->shape[d] > t->shape[d] ||
                         lo[d] > t->shape[d] - out->shape[d],
                     VOXA_EINVAL,
                     "tiff_read_region: region [%lld, %lld) on axis %d is outside '%s' (0..%lld)",
                     (long long)lo[d], (long long)(lo[d] + out->shape[d]), d, t->path,
                     (long long)t->shape[d]);
    if (voxa_array_size(out) == 0) return VOXA_OK;
    int o = t->ndim - 2; /* axis of y */
    int64_t k0 = o ? lo[0] : 0, nk = o ? out->shape[0] : 1, sk = o ? out->strides[0] : 0;
    voxa_status st = VOXA_OK;
    pthread_mutex_lock(&t->lock);
    for (int64_t k = 0; k < nk && !st; k++)
        st = read_page_box(t, k0 + k, lo[o], out->shape[o], lo[o + 1], out->shape[o + 1],
                           (char *)out->data + k * sk, out->strides[o], out->strides[o + 1]);
    pthread_mutex_unlock(&t->lock);
    return st;
}
