/* tiff region reads: tiled and striped multi-page files written with libtiff
 * (deflate or none), every box equal to the same box of the whole-file read
 * (voxa_tiff_read), strided outputs, and bad input (truncated file, RGB,
 * boxes outside) as clear errors. Interop with tifffile (ImageJ raw stacks,
 * big-endian, BigTIFF) is in tests/python/test_tiff_region.py. */
#include "internal.h"
#include "vtest.h"

#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>

static char dir[256];

/* pages x h x w uint16, value = f(page, y, x); tiled when tile > 0. */
static int write_tiff(const char *path, int pages, uint32_t h, uint32_t w, uint32_t tile,
                      uint16_t compression) {
    TIFF *t = TIFFOpen(path, "w");
    if (!t) return 0;
    uint16_t *buf = malloc((size_t)(tile ? tile * tile : w * 5) * 2);
    for (int k = 0; k < pages; k++) {
        TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
        TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
        TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 16);
        TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        TIFFSetField(t, TIFFTAG_COMPRESSION, compression);
        if (tile) {
            TIFFSetField(t, TIFFTAG_TILEWIDTH, tile);
            TIFFSetField(t, TIFFTAG_TILELENGTH, tile);
            for (uint32_t y0 = 0; y0 < h; y0 += tile)
                for (uint32_t x0 = 0; x0 < w; x0 += tile) {
                    for (uint32_t y = 0; y < tile; y++)
                        for (uint32_t x = 0; x < tile; x++)
                            buf[y * tile + x] = (uint16_t)(k * 10007 + (y0 + y) * 131 + x0 + x);
                    TIFFWriteTile(t, buf, x0, y0, 0, 0);
                }
        } else {
            TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 5);
            for (uint32_t y0 = 0; y0 < h; y0 += 5) {
                uint32_t rows = h - y0 < 5 ? h - y0 : 5;
                for (uint32_t y = 0; y < rows; y++)
                    for (uint32_t x = 0; x < w; x++)
                        buf[y * w + x] = (uint16_t)(k * 10007 + (y0 + y) * 131 + x);
                TIFFWriteEncodedStrip(t, y0 / 5, buf, (tmsize_t)rows * w * 2);
            }
        }
        TIFFWriteDirectory(t);
    }
    free(buf);
    TIFFClose(t);
    return 1;
}

static void check_boxes(const char *path, int pages) {
    voxa_array whole;
    CHECK_OK(voxa_tiff_read(path, &whole));
    voxa_tiff *t = NULL;
    CHECK_OK(voxa_tiff_open(path, &t));
    if (!t) return;
    voxa_dtype dt;
    int nd;
    int64_t shape[3];
    CHECK_OK(voxa_tiff_get_shape(t, &dt, &nd, shape));
    CHECK(dt == VOXA_U16 && nd == (pages > 1 ? 3 : 2) && nd == whole.ndim);
    unsigned long long s = 42;
    for (int it = 0; it < 30; it++) {
        int64_t lo[3], ext[3], big[3];
        for (int d = 0; d < nd; d++) {
            lo[d] = (int64_t)(vtest_rand(&s) % (uint64_t)shape[d]);
            ext[d] = 1 + (int64_t)(vtest_rand(&s) % (uint64_t)(shape[d] - lo[d]));
            big[d] = 2 * ext[d];
        }
        voxa_array buf, out, ref = whole;
        CHECK_OK(voxa_array_new(&buf, VOXA_U16, nd, big));
        out = buf;
        out.owner = NULL;
        for (int d = 0; d < nd; d++) { /* every other voxel: a strided view */
            out.shape[d] = ext[d];
            out.strides[d] *= 2;
            ref.shape[d] = ext[d];
            ref.data = (char *)ref.data + lo[d] * whole.strides[d];
        }
        ref.owner = NULL;
        CHECK_OK(voxa_tiff_read_region(t, lo, &out));
        voxa_array a, b;
        CHECK_OK(voxa__contiguous_copy(&out, &a));
        CHECK_OK(voxa__contiguous_copy(&ref, &b));
        CHECK(!memcmp(a.data, b.data, (size_t)voxa_array_size(&a) * 2));
        voxa_array_free(&a);
        voxa_array_free(&b);
        voxa_array_free(&buf);
    }
    int64_t lo[3] = {0, 0, 0};
    lo[nd - 1] = 1; /* the whole shape, shifted by one column */
    voxa_array bad;
    CHECK_OK(voxa_array_new(&bad, VOXA_U16, nd, shape));
    CHECK_STATUS(voxa_tiff_read_region(t, lo, &bad), VOXA_EINVAL);
    CHECK_MSG("outside");
    voxa_array_free(&bad);
    voxa_tiff_close(t);
    voxa_array_free(&whole);
}

static void test_layouts(void) {
    char p[300];
    struct { int pages; uint32_t h, w, tile; uint16_t comp; } cases[] = {
        {3, 37, 53, 16, COMPRESSION_ADOBE_DEFLATE}, {3, 37, 53, 0, COMPRESSION_NONE},
        {1, 40, 41, 0, COMPRESSION_ADOBE_DEFLATE}, {2, 16, 16, 16, COMPRESSION_NONE},
        {4, 21, 9, 0, COMPRESSION_LZW}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(p, sizeof p, "%s/l%zu.tif", dir, i);
        CHECK(write_tiff(p, cases[i].pages, cases[i].h, cases[i].w, cases[i].tile,
                         cases[i].comp));
        check_boxes(p, cases[i].pages);
    }
}

static void test_bad_files(void) {
    char p[300];
    snprintf(p, sizeof p, "%s/tr.tif", dir);
    CHECK(write_tiff(p, 3, 37, 53, 16, COMPRESSION_ADOBE_DEFLATE));
    struct stat sb;
    stat(p, &sb);
    /* cut inside the last page's tiles: open may pass or fail; reads must not crash */
    for (off_t cut = 8; cut < sb.st_size; cut += sb.st_size / 13) {
        if (truncate(p, cut) != 0) break;
        voxa_tiff *t = NULL;
        if (voxa_tiff_open(p, &t) == VOXA_OK) {
            voxa_dtype dt;
            int nd;
            int64_t shape[3], lo[3] = {0};
            voxa_tiff_get_shape(t, &dt, &nd, shape);
            voxa_array a;
            if (voxa_array_new(&a, dt, nd, shape) == VOXA_OK) {
                voxa_status st = voxa_tiff_read_region(t, lo, &a);
                CHECK(st == VOXA_OK || st == VOXA_EFORMAT || st == VOXA_EIO);
                voxa_array_free(&a);
            }
            voxa_tiff_close(t);
        }
    }
    voxa_tiff *t = NULL;
    snprintf(p, sizeof p, "%s/none.tif", dir);
    CHECK_STATUS(voxa_tiff_open(p, &t), VOXA_EIO);
    voxa_tiff_close(NULL);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/voxa-test-tiffr-%ld", (long)getpid());
    mkdir(dir, 0700);
    RUN(test_layouts);
    RUN(test_bad_files);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    VTEST_END();
}
