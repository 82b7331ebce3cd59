/* io: .npy and TIFF round trips (every dtype, strides, Fortran order, big
 * endian, 0-d and empty), TIFF files made by libtiff itself with every codec
 * it has, bad files (missing, truncated, corrupt, cyclic, unsupported),
 * output paths that cannot be written, CSV tables. Also checks that libtiff
 * never prints: stderr is redirected to a file around the bad reads. */
#include "internal.h"
#include "vtest.h"

#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <tiffio.h>
#include <unistd.h>
#include <dirent.h>

static char dir[256];

static const char *tmp(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_bytes(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

static unsigned char *read_bytes(const char *path, size_t *n) {
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)sz + 1);
    *n = fread(p, 1, (size_t)sz, f);
    fclose(f);
    return p;
}

/* Count files in `d` whose name contains ".tmp-" (leftover temporaries). */
static int temporaries(const char *d) {
    DIR *dd = opendir(d);
    int n = 0;
    struct dirent *e;
    while (dd && (e = readdir(dd)))
        if (strstr(e->d_name, ".tmp-")) n++;
    if (dd) closedir(dd);
    return n;
}

static void fill(voxa_array *a, unsigned long long seed) {
    size_t es = voxa_dtype_size(a->dtype);
    unsigned char *p = a->data;
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0; i < n * (int64_t)es; i++) p[i] = (unsigned char)vtest_rand(&seed);
    if (a->dtype == VOXA_BOOL)
        for (int64_t i = 0; i < n; i++) p[i] &= 1;
    if (a->dtype == VOXA_F32) /* no NaN patterns: compare bytes anyway */
        for (int64_t i = 0; i < n; i++) ((float *)p)[i] = (float)(i % 1000) - 3.25f;
    if (a->dtype == VOXA_F64)
        for (int64_t i = 0; i < n; i++) ((double *)p)[i] = (double)i * 1e-3 - 7.5;
}

/* Same dtype/shape and same elements (any strides). */
static int equal(const voxa_array *a, const voxa_array *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return 0;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d]) return 0;
    voxa_array ca, cb;
    if (voxa__contiguous_copy(a, &ca) != VOXA_OK) return 0;
    if (voxa__contiguous_copy(b, &cb) != VOXA_OK) return 0;
    size_t bytes = (size_t)voxa_array_size(a) * voxa_dtype_size(a->dtype);
    int ok = !bytes || !memcmp(ca.data, cb.data, bytes);
    voxa_array_free(&ca);
    voxa_array_free(&cb);
    return ok;
}

/* ---- stderr capture: libtiff must never print ------------------------------- */
static int saved_stderr = -1;
static char capture_path[512];

static void capture_begin(void) {
    snprintf(capture_path, sizeof capture_path, "%s/stderr.txt", dir);
    fflush(stderr);
    saved_stderr = dup(2);
    int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
}

static long capture_end(void) {
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    struct stat sb;
    stat(capture_path, &sb);
    unlink(capture_path);
    return (long)sb.st_size;
}

/* ---- .npy ---------------------------------------------------------------------- */

static void test_npy_roundtrip(void) {
    const int64_t shapes[][3] = {{5, 3, 2}, {1, 1, 7}, {0, 3, 2}};
    for (int t = 0; t < VOXA_NDTYPES; t++) {
        for (int s = 0; s < 3; s++) {
            for (int nd = 0; nd <= 3; nd++) {
                voxa_array a, b;
                CHECK_OK(voxa_array_new(&a, (voxa_dtype)t, nd, shapes[s]));
                fill(&a, 7 + (unsigned)t);
                CHECK_OK(voxa_write(tmp("a.npy"), &a));
                CHECK_OK(voxa_read(tmp("a.npy"), &b));
                CHECK(equal(&a, &b));
                voxa_array_free(&b);
                /* A strided view: every other element of the last axis, reversed. */
                if (nd >= 1 && a.shape[nd - 1] > 1) {
                    voxa_array v = a;
                    v.owner = NULL;
                    v.shape[nd - 1] = (a.shape[nd - 1] + 1) / 2;
                    v.strides[nd - 1] = -2 * a.strides[nd - 1];
                    v.data = (char *)a.data + (a.shape[nd - 1] - 1) * a.strides[nd - 1];
                    CHECK_OK(voxa_write(tmp("v.npy"), &v));
                    CHECK_OK(voxa_read(tmp("v.npy"), &b));
                    CHECK(equal(&v, &b));
                    voxa_array_free(&b);
                }
                voxa_array_free(&a);
            }
        }
    }
    CHECK(temporaries(dir) == 0);
}

/* Build a .npy file by hand: header dict + raw bytes. */
static void npy_file(const char *path, const char *dict, const void *data, size_t n) {
    char head[256];
    size_t k = strlen(dict);
    size_t total = 10 + k + 1, padded = (total + 63) / 64 * 64;
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)((padded - 10) & 0xff);
    head[9] = (char)((padded - 10) >> 8);
    memcpy(head + 10, dict, k);
    memset(head + 10 + k, ' ', padded - total);
    head[padded - 1] = '\n';
    FILE *f = fopen(path, "wb");
    fwrite(head, 1, padded, f);
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

static void test_npy_fortran_bigendian(void) {
    /* (2, 3) uint16 in Fortran order, big-endian: column-major data. */
    uint16_t want[2][3] = {{1, 2, 3}, {4, 5, 6}};
    unsigned char be[12];
    int k = 0;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 2; i++) {
            be[k++] = (unsigned char)(want[i][j] >> 8);
            be[k++] = (unsigned char)(want[i][j] & 0xff);
        }
    npy_file(tmp("f.npy"), "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 3), }", be, 12);
    voxa_array a;
    CHECK_OK(voxa_read(tmp("f.npy"), &a));
    CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && a.dtype == VOXA_U16);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            int64_t idx[2] = {i, j};
            CHECK(*(uint16_t *)((char *)a.data + voxa__offset(&a, idx)) == want[i][j]);
        }
    voxa_array_free(&a);
    /* Version 2 header and the 0-d array. */
    double v = 2.5;
    npy_file(tmp("s.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &v, 8);
    CHECK_OK(voxa_read(tmp("s.npy"), &a));
    CHECK(a.ndim == 0 && *(double *)a.data == 2.5);
    voxa_array_free(&a);
}

static void test_npy_bad_files(void) {
    voxa_array a;
    CHECK_STATUS(voxa_read(tmp("missing.npy"), &a), VOXA_EIO);
    CHECK_MSG("missing.npy");
    CHECK(a.data == NULL);
    mkdir(tmp("dir.npy"), 0700);
    CHECK_STATUS(voxa_read(tmp("dir.npy"), &a), VOXA_EIO);
    CHECK_MSG("not a regular file");
    rmdir(tmp("dir.npy"));
    CHECK_STATUS(voxa_read(tmp("a.png"), &a), VOXA_EUNSUPPORTED);
    CHECK_MSG("unknown extension");

    float data[12] = {0};
    npy_file(tmp("g.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", data,
             sizeof data);
    size_t n = 0;
    unsigned char *good = read_bytes(tmp("g.npy"), &n);
    /* Truncated anywhere: in the magic, the header, the data. */
    for (size_t cut = 0; cut < n; cut += (cut < 80 ? 1 : 7)) {
        write_bytes(tmp("t.npy"), good, cut);
        voxa_status s = voxa_read(tmp("t.npy"), &a);
        CHECK(s == VOXA_EFORMAT);
        if (s != VOXA_EFORMAT) fprintf(stderr, "  cut at %zu: %s\n", cut, voxa_last_error());
    }
    CHECK_STATUS(voxa_read(tmp("t.npy"), &a), VOXA_EFORMAT);
    CHECK_MSG("truncated");
    CHECK_MSG("t.npy");
    good[3] = 'X';
    write_bytes(tmp("m.npy"), good, n);
    CHECK_STATUS(voxa_read(tmp("m.npy"), &a), VOXA_EFORMAT);
    CHECK_MSG("bad magic");
    free(good);

    const char *unsupported[] = {"'<c8'", "'<U4'", "'|O'", "'<f2'", "'<M8[s]'",
                                 "[('a', '<f4'), ('b', '<i4')]"};
    for (int i = 0; i < 6; i++) {
        char dict[200];
        snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (3,), }",
                 unsupported[i]);
        npy_file(tmp("u.npy"), dict, data, sizeof data);
        CHECK_STATUS(voxa_read(tmp("u.npy"), &a), VOXA_EUNSUPPORTED);
        CHECK_MSG("unsupported .npy dtype");
    }
    /* A header announcing terabytes: EFORMAT (truncated), not ENOMEM. */
    npy_file(tmp("h.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576), }",
             data, sizeof data);
    CHECK_STATUS(voxa_read(tmp("h.npy"), &a), VOXA_EFORMAT);
    CHECK_MSG("truncated");
    /* Malformed dicts. */
    const char *bad[] = {"{'descr': '<f4', 'shape': (3,), }", "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (3,), }",
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (3,-1), }",
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
                         "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                         "['descr']", "{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}"};
    for (int i = 0; i < 7; i++) {
        npy_file(tmp("d.npy"), bad[i], data, sizeof data);
        CHECK_STATUS(voxa_read(tmp("d.npy"), &a), VOXA_EFORMAT);
    }
}

/* ---- output paths that cannot be written -------------------------------------- */

static void test_output_paths(void) {
    voxa_array a;
    int64_t shape[2] = {4, 5};
    CHECK_OK(voxa_array_new(&a, VOXA_U8, 2, shape));
    const char *exts[] = {"npy", "tif"};
    for (int i = 0; i < 2; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/no/such/folder/out.%s", dir, exts[i]);
        CHECK_STATUS(voxa_write(p, &a), VOXA_EIO);
        CHECK_MSG("out.");
        CHECK_MSG("No such file or directory");
        struct stat sb;
        CHECK(stat(tmp("no"), &sb) != 0);
        /* A read-only location (/sys refuses new files even to root). */
        snprintf(p, sizeof p, "/sys/voxa-test-out.%s", exts[i]);
        CHECK_STATUS(voxa_write(p, &a), VOXA_EIO);
        CHECK_MSG("voxa-test-out");
        CHECK(stat(p, &sb) != 0);
        /* A folder where a file should go. */
        snprintf(p, sizeof p, "%s/isdir.%s", dir, exts[i]);
        mkdir(p, 0700);
        CHECK(voxa_write(p, &a) != VOXA_OK);
        CHECK(stat(p, &sb) == 0 && S_ISDIR(sb.st_mode));
        rmdir(p);
    }
    CHECK(temporaries(dir) == 0);
    voxa_array_free(&a);
}

/* ---- TIFF ------------------------------------------------------------------------ */

static void test_tiff_roundtrip(void) {
    const int64_t shapes[][3] = {{3, 17, 9}, {1, 1, 1}, {2, 300, 1000}, {5, 1, 33}};
    for (int t = 0; t < VOXA_NDTYPES; t++) {
        for (int s = 0; s < 4; s++) {
            for (int nd = 2; nd <= 3; nd++) {
                for (int comp = 0; comp <= 1; comp++) {
                    voxa_array a, b;
                    const int64_t *sh = nd == 3 ? shapes[s] : shapes[s] + 1;
                    CHECK_OK(voxa_array_new(&a, (voxa_dtype)t, nd, sh));
                    fill(&a, 3 + (unsigned)t);
                    voxa_tiff_options o = {.compression = (voxa_tiff_compression)comp};
                    CHECK_OK(voxa_tiff_write_opts(tmp("a.tif"), &a, &o));
                    CHECK_OK(voxa_read(tmp("a.tif"), &b));
                    /* bool comes back as uint8; one page comes back 2D. */
                    voxa_array w = a;
                    if (a.dtype == VOXA_BOOL) w.dtype = VOXA_U8;
                    if (nd == 3 && sh[0] == 1) {
                        w.ndim = 2;
                        w.shape[0] = w.shape[1], w.shape[1] = w.shape[2];
                        w.strides[0] = w.strides[1], w.strides[1] = w.strides[2];
                    }
                    CHECK(equal(&w, &b));
                    voxa_array_free(&b);
                    voxa_array_free(&a);
                }
            }
        }
    }
    CHECK(temporaries(dir) == 0);
}

static void test_tiff_strided_and_bigtiff(void) {
    voxa_array a, b;
    int64_t shape[3] = {4, 30, 20};
    CHECK_OK(voxa_array_new(&a, VOXA_I16, 3, shape));
    fill(&a, 11);
    voxa_array v = a; /* transposed (x, y, z) view, then every other page */
    v.owner = NULL;
    v.shape[0] = 20, v.shape[1] = 30, v.shape[2] = 4;
    v.strides[0] = a.strides[2], v.strides[1] = a.strides[1], v.strides[2] = a.strides[0];
    CHECK_OK(voxa_write(tmp("s.tif"), &v));
    CHECK_OK(voxa_read(tmp("s.tif"), &b));
    CHECK(equal(&v, &b));
    voxa_array_free(&b);
    /* Threshold: data bytes above it -> BigTIFF ("II+"), else classic ("II*"). */
    int64_t bytes = voxa_array_size(&a) * 2;
    voxa_tiff_options o = {.bigtiff_above = bytes - 1};
    size_t n;
    CHECK_OK(voxa_tiff_write_opts(tmp("b.tif"), &a, &o));
    unsigned char *h = read_bytes(tmp("b.tif"), &n);
    CHECK(h && h[2] == 43);
    free(h);
    CHECK_OK(voxa_read(tmp("b.tif"), &b));
    CHECK(equal(&a, &b));
    voxa_array_free(&b);
    o.bigtiff_above = bytes;
    o.compression = VOXA_TIFF_DEFLATE;
    o.level = 9;
    CHECK_OK(voxa_tiff_write_opts(tmp("b.tif"), &a, &o));
    h = read_bytes(tmp("b.tif"), &n);
    CHECK(h && h[2] == 42);
    free(h);
    o.bigtiff_above = -1;
    CHECK_OK(voxa_tiff_write_opts(tmp("b.tif"), &a, &o));
    h = read_bytes(tmp("b.tif"), &n);
    CHECK(h && h[2] == 43);
    free(h);
    /* Bad options and arrays. */
    o.level = 10;
    CHECK_STATUS(voxa_tiff_write_opts(tmp("c.tif"), &a, &o), VOXA_EINVAL);
    o.level = 0;
    o.compression = (voxa_tiff_compression)7;
    CHECK_STATUS(voxa_tiff_write_opts(tmp("c.tif"), &a, &o), VOXA_EINVAL);
    a.ndim = 1;
    CHECK_STATUS(voxa_write(tmp("c.tif"), &a), VOXA_EUNSUPPORTED);
    CHECK_MSG("2D or 3D");
    a.ndim = 3;
    a.shape[1] = 0;
    CHECK_STATUS(voxa_write(tmp("c.tif"), &a), VOXA_EUNSUPPORTED);
    CHECK_MSG("empty");
    a.shape[1] = 30;
    struct stat sb;
    CHECK(stat(tmp("c.tif"), &sb) != 0);
    voxa_array_free(&a);
}

/* Write a TIFF with libtiff directly (codecs voxa does not write). */
typedef struct tspec {
    uint16_t compression, predictor, planar, spp, bps, fmt;
    uint32_t tile; /* 0: strips of 5 rows */
    const char *mode;
} tspec;

static int libtiff_write(const char *path, const tspec *s, uint32_t w, uint32_t h, int pages,
                         const void *data) {
    TIFF *t = TIFFOpen(path, s->mode);
    if (!t) return 0;
    size_t es = s->bps / 8;
    const unsigned char *p = data;
    for (int k = 0; k < pages; k++) {
        TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
        TIFFSetField(t, TIFFTAG_IMAGELENGTH, h);
        TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, s->bps);
        TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, s->fmt);
        TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, s->spp);
        TIFFSetField(t, TIFFTAG_PLANARCONFIG, s->planar);
        TIFFSetField(t, TIFFTAG_PHOTOMETRIC, s->spp == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
        TIFFSetField(t, TIFFTAG_COMPRESSION, s->compression);
        if (s->predictor) TIFFSetField(t, TIFFTAG_PREDICTOR, s->predictor);
        size_t plane = (size_t)w * h * es * (s->planar == PLANARCONFIG_SEPARATE ? 1 : s->spp);
        int nplanes = s->planar == PLANARCONFIG_SEPARATE ? s->spp : 1;
        size_t row = plane / h;
        unsigned char *buf = malloc(plane + (size_t)s->tile * s->tile * 16 + 64);
        if (!s->tile) {
            TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 5);
            for (int pl = 0; pl < nplanes; pl++)
                for (uint32_t y = 0; y < h; y += 5) {
                    uint32_t rows = h - y < 5 ? h - y : 5;
                    memcpy(buf, p + pl * plane + y * row, rows * row);
                    if (TIFFWriteEncodedStrip(t, (uint32_t)pl * ((h + 4) / 5) + y / 5, buf,
                                              (tmsize_t)(rows * row)) < 0)
                        return 0;
                }
        } else {
            TIFFSetField(t, TIFFTAG_TILEWIDTH, s->tile);
            TIFFSetField(t, TIFFTAG_TILELENGTH, s->tile);
            size_t px = row / w;
            for (int pl = 0; pl < nplanes; pl++)
                for (uint32_t ty = 0; ty < h; ty += s->tile)
                    for (uint32_t tx = 0; tx < w; tx += s->tile) {
                        memset(buf, 0, (size_t)s->tile * s->tile * px);
                        for (uint32_t y = ty; y < h && y < ty + s->tile; y++)
                            for (uint32_t x = tx; x < w && x < tx + s->tile; x++)
                                memcpy(buf + ((y - ty) * s->tile + (x - tx)) * px,
                                       p + pl * plane + y * row + x * px, px);
                        if (TIFFWriteTile(t, buf, tx, ty, 0, (uint16_t)pl) < 0) return 0;
                    }
        }
        free(buf);
        p += plane * nplanes;
        if (!TIFFWriteDirectory(t)) return 0;
    }
    TIFFClose(t);
    return 1;
}

static void test_tiff_libtiff_codecs(void) {
    const uint16_t codecs[] = {COMPRESSION_NONE,     COMPRESSION_LZW,  COMPRESSION_PACKBITS,
                               COMPRESSION_ADOBE_DEFLATE, COMPRESSION_ZSTD, COMPRESSION_LZMA,
                               COMPRESSION_WEBP /* lossy by default: only checked for errors */};
    const struct { voxa_dtype t; uint16_t bps, fmt; } types[] = {
        {VOXA_U8, 8, 1}, {VOXA_I16, 16, 2}, {VOXA_U32, 32, 1}, {VOXA_F32, 32, 3}, {VOXA_F64, 64, 3}};
    TIFFErrorHandler eh = TIFFSetErrorHandler(NULL), wh = TIFFSetWarningHandler(NULL);
    int tested = 0;
    for (int c = 0; c < 6; c++) {
        if (!TIFFIsCODECConfigured(codecs[c])) continue;
        for (int ti = 0; ti < 5; ti++) {
            for (int variant = 0; variant < 6; variant++) {
                tspec s = {codecs[c], 0, PLANARCONFIG_CONTIG, 1, types[ti].bps, types[ti].fmt, 0,
                           "w"};
                if (variant == 1) s.tile = 16;
                if (variant == 2) s.mode = "wb"; /* big-endian */
                if (variant == 3) s.mode = "w8";
                if (variant == 4) {
                    if (c == 0 || c == 2) continue; /* predictors need LZW/deflate/zstd/lzma */
                    s.predictor = types[ti].fmt == 3 ? 3 : 2;
                    /* libtiff 4.5.0 does not read back its own big-endian
                     * floating-point predictor files (checked with libtiff
                     * alone): test that one little-endian. */
                    s.mode = s.predictor == 3 ? "w" : "wb";
                }
                if (variant == 5) s.spp = 3, s.planar = PLANARCONFIG_SEPARATE, s.tile = 16;
                int pages = 3;
                int64_t shape[4] = {pages, 37, 45, s.spp};
                if (variant == 5) shape[1] = 3, shape[2] = 37, shape[3] = 45;
                voxa_array a, b;
                CHECK_OK(voxa_array_new(&a, types[ti].t, 4, shape));
                fill(&a, 5 + (unsigned)c);
                if (!libtiff_write(tmp("lt.tif"), &s, 45, 37, pages, a.data)) {
                    fprintf(stderr, "  libtiff could not write codec %u variant %d\n", codecs[c],
                            variant);
                    vtest_failures++;
                    voxa_array_free(&a);
                    continue;
                }
                if (s.spp == 1) a.ndim = 3;
                voxa_status st = voxa_read(tmp("lt.tif"), &b);
                CHECK(st == VOXA_OK);
                if (st != VOXA_OK) fprintf(stderr, "  codec %u variant %d: %s\n", codecs[c], variant, voxa_last_error());
                else CHECK(equal(&a, &b));
                if (st == VOXA_OK && !equal(&a, &b))
                    fprintf(stderr, "  codec %u type %d variant %d differs\n", codecs[c], ti, variant);
                tested++;
                voxa_array_free(&b);
                voxa_array_free(&a);
            }
        }
    }
    CHECK(tested >= 5 * 5); /* at least none, LZW, PackBits, deflate */
    TIFFSetErrorHandler(eh);
    TIFFSetWarningHandler(wh);
}

static void test_tiff_bad_files(void) {
    voxa_array a, b;
    int64_t shape[3] = {3, 40, 50};
    CHECK_OK(voxa_array_new(&a, VOXA_U16, 3, shape));
    fill(&a, 9);
    CHECK_STATUS(voxa_read(tmp("missing.tif"), &b), VOXA_EIO);
    CHECK_MSG("No such file");
    mkdir(tmp("dir.tif"), 0700);
    CHECK_STATUS(voxa_read(tmp("dir.tif"), &b), VOXA_EIO);
    CHECK_MSG("not a regular file");
    rmdir(tmp("dir.tif"));

    capture_begin();
    for (int comp = 0; comp <= 1; comp++) {
        voxa_tiff_options o = {.compression = (voxa_tiff_compression)comp};
        CHECK_OK(voxa_tiff_write_opts(tmp("g.tif"), &a, &o));
        size_t n;
        unsigned char *good = read_bytes(tmp("g.tif"), &n);
        /* Every truncation: an error (or, past the pixel data, a correct
         * array), never a crash or a wrong array. */
        for (size_t cut = 0; cut < n; cut += (cut < 300 ? 1 : 97)) {
            write_bytes(tmp("t.tif"), good, cut);
            voxa_status s = voxa_read(tmp("t.tif"), &b);
            int good_outcome = s == VOXA_EFORMAT || (s == VOXA_OK && equal(&a, &b));
            if (!good_outcome) {
                capture_end();
                fprintf(stderr, "  comp %d cut %zu of %zu: %s %s\n", comp, cut, n,
                        voxa_status_name(s), voxa_last_error());
                capture_begin();
            }
            CHECK(good_outcome);
            if (s == VOXA_OK) voxa_array_free(&b);
        }
        /* Random byte flips: any status, no crash (ASan build checks memory). */
        unsigned long long seed = 42;
        for (int k = 0; k < 300; k++) {
            unsigned char *d = malloc(n);
            memcpy(d, good, n);
            for (int j = 0; j < 4; j++) d[vtest_rand(&seed) % n] = (unsigned char)vtest_rand(&seed);
            write_bytes(tmp("r.tif"), d, n);
            if (voxa_read(tmp("r.tif"), &b) == VOXA_OK) voxa_array_free(&b);
            free(d);
        }
        free(good);
    }
    write_bytes(tmp("x.tif"), "II*\0garbage", 11);
    CHECK_STATUS(voxa_read(tmp("x.tif"), &b), VOXA_EFORMAT);
    CHECK_MSG("not a readable TIFF");
    CHECK_MSG("x.tif");
    write_bytes(tmp("x.tif"), "", 0);
    CHECK_STATUS(voxa_read(tmp("x.tif"), &b), VOXA_EFORMAT);
    long printed = capture_end();
    CHECK(printed == 0);
    if (printed) fprintf(stderr, "  libtiff printed %ld bytes\n", printed);
    voxa_array_free(&a);
}

/* Classic little-endian TIFF: patch the "next IFD" offset of page `from`. */
static void patch_next_ifd(const char *path, int from, uint32_t to_page_offset_of) {
    size_t n;
    unsigned char *d = read_bytes(path, &n);
    uint32_t off = d[4] | d[5] << 8 | d[6] << 16 | (uint32_t)d[7] << 24;
    uint32_t offs[16];
    int k = 0;
    while (off && k < 16) {
        offs[k++] = off;
        uint32_t cnt = d[off] | d[off + 1] << 8;
        uint32_t nx = off + 2 + cnt * 12;
        off = d[nx] | d[nx + 1] << 8 | d[nx + 2] << 16 | (uint32_t)d[nx + 3] << 24;
    }
    uint32_t cnt = d[offs[from]] | d[offs[from] + 1] << 8;
    uint32_t nx = offs[from] + 2 + cnt * 12;
    uint32_t v = offs[to_page_offset_of];
    d[nx] = v & 0xff, d[nx + 1] = (v >> 8) & 0xff, d[nx + 2] = (v >> 16) & 0xff, d[nx + 3] = v >> 24;
    write_bytes(path, d, n);
    free(d);
}

static void test_tiff_cycles_and_mixed_pages(void) {
    voxa_array a, b;
    int64_t shape[3] = {3, 8, 8};
    CHECK_OK(voxa_array_new(&a, VOXA_U8, 3, shape));
    capture_begin();
    CHECK_OK(voxa_write(tmp("c.tif"), &a));
    patch_next_ifd(tmp("c.tif"), 2, 0); /* page 2 -> page 0 */
    CHECK_STATUS(voxa_read(tmp("c.tif"), &b), VOXA_EFORMAT);
    CHECK_MSG("c.tif");
    CHECK_OK(voxa_write(tmp("c.tif"), &a));
    patch_next_ifd(tmp("c.tif"), 1, 1); /* page 1 -> itself */
    CHECK_STATUS(voxa_read(tmp("c.tif"), &b), VOXA_EFORMAT);
    CHECK(capture_end() == 0);
    /* Pages that disagree: EFORMAT naming the page. */
    tspec s = {COMPRESSION_NONE, 0, PLANARCONFIG_CONTIG, 1, 8, 1, 0, "w"};
    TIFF *t = TIFFOpen(tmp("m.tif"), "w");
    for (int k = 0; k < 3; k++) {
        uint32_t w = k == 2 ? 9 : 8;
        TIFFSetField(t, TIFFTAG_IMAGEWIDTH, w);
        TIFFSetField(t, TIFFTAG_IMAGELENGTH, 8);
        TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 8);
        TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 8);
        unsigned char row[72] = {0};
        TIFFWriteEncodedStrip(t, 0, row, 8 * w);
        TIFFWriteDirectory(t);
    }
    TIFFClose(t);
    (void)s;
    CHECK_STATUS(voxa_read(tmp("m.tif"), &b), VOXA_EFORMAT);
    CHECK_MSG("page 2 (9x8");
    voxa_array_free(&a);
}

static void test_tiff_bilevel(void) {
    /* 1-bit page, width 13 (rows padded to 2 bytes). */
    TIFF *t = TIFFOpen(tmp("bits.tif"), "w");
    TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 13);
    TIFFSetField(t, TIFFTAG_IMAGELENGTH, 3);
    TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 1);
    TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 2);
    unsigned char rows[6] = {0xA0, 0x08, 0xFF, 0xF8, 0x01, 0x00};
    TIFFWriteEncodedStrip(t, 0, rows, 4);
    TIFFWriteEncodedStrip(t, 1, rows + 4, 2);
    TIFFClose(t);
    voxa_array b;
    CHECK_OK(voxa_read(tmp("bits.tif"), &b));
    CHECK(b.dtype == VOXA_BOOL && b.ndim == 2 && b.shape[0] == 3 && b.shape[1] == 13);
    const unsigned char *p = b.data;
    CHECK(p[0] == 1 && p[1] == 0 && p[2] == 1 && p[3] == 0 && p[12] == 1 && p[11] == 0);
    int ones = 0;
    for (int i = 13; i < 26; i++) ones += p[i];
    CHECK(ones == 13);
    CHECK(p[26 + 7] == 1 && p[26 + 6] == 0 && p[26 + 12] == 0);
    voxa_array_free(&b);
}

/* ---- CSV ------------------------------------------------------------------------- */

static void test_csv(void) {
    voxa_table t;
    const char *text = "\xEF\xBB\xBFX, y ,\"Z\",radius,name\r\n1,2,3,4,a\r\n\r\n  \n5.5,-6e2,\"7\",nan,\"b,c\"\n";
    CHECK_OK(voxa_csv_parse(text, strlen(text), &t));
    CHECK(t.ncols == 5 && t.nrows == 2);
    CHECK(voxa_table_column(&t, "x") == 0 && voxa_table_column(&t, "Y") == 1);
    CHECK(voxa_table_column(&t, "z") == 2 && voxa_table_column(&t, "RADIUS") == 3);
    CHECK(voxa_table_column(&t, "w") == -1 && voxa_table_column(NULL, "x") == -1);
    CHECK(t.values[0] == 1 && t.values[5] == 5.5 && t.values[6] == -600 && t.values[7] == 7);
    CHECK(isnan(t.values[4]) && isnan(t.values[8]) && isnan(t.values[9]));
    voxa_table_free(&t);
    voxa_table_free(&t); /* idempotent */
    voxa_table_free(NULL);

    /* No trailing newline; header only; empty. */
    CHECK_OK(voxa_csv_parse("a,b\n1,2", 7, &t));
    CHECK(t.nrows == 1 && t.values[1] == 2);
    voxa_table_free(&t);
    CHECK_OK(voxa_csv_parse("a,b\n", 4, &t));
    CHECK(t.nrows == 0 && t.ncols == 2);
    voxa_table_free(&t);
    CHECK_STATUS(voxa_csv_parse("", 0, &t), VOXA_EFORMAT);
    CHECK_MSG("no header");
    CHECK_STATUS(voxa_csv_parse(NULL, 0, &t), VOXA_EFORMAT);
    CHECK_STATUS(voxa_csv_parse("a,b\n1,2\n3\n", 10, &t), VOXA_EFORMAT);
    CHECK_MSG("line 3 has 1 fields, the header has 2");
    CHECK(t.values == NULL && t.names == NULL);
    CHECK_STATUS(voxa_csv_parse("a,b\n\"1,2\n", 9, &t), VOXA_EFORMAT);
    CHECK_MSG("line 2: unterminated");
    /* Not NUL-terminated: the parser must stop at len. */
    char buf[8] = {'a', '\n', '1', '2', '3', '4', '5', '6'};
    CHECK_OK(voxa_csv_parse(buf, 5, &t));
    CHECK(t.nrows == 1 && t.values[0] == 123);
    voxa_table_free(&t);

    /* Files: read, missing, directory. */
    FILE *f = fopen(tmp("p.csv"), "w");
    fprintf(f, "z,y,x\n");
    for (int i = 0; i < 100000; i++) fprintf(f, "%d,%d.5,%.17g\n", i, i, i * 0.25);
    fclose(f);
    CHECK_OK(voxa_csv_read(tmp("p.csv"), &t));
    CHECK(t.nrows == 100000 && t.ncols == 3);
    CHECK(t.values[3 * 99999] == 99999 && t.values[3 * 99999 + 1] == 99999.5 &&
          t.values[3 * 99999 + 2] == 99999 * 0.25);
    voxa_table_free(&t);
    CHECK_STATUS(voxa_csv_read(tmp("none.csv"), &t), VOXA_EIO);
    CHECK_MSG("none.csv");
    CHECK_STATUS(voxa_csv_read(dir, &t), VOXA_EIO);
    CHECK_MSG("not a regular file");
    write_bytes(tmp("e.csv"), "", 0);
    CHECK_STATUS(voxa_csv_read(tmp("e.csv"), &t), VOXA_EFORMAT);
    CHECK_MSG("e.csv");
    write_bytes(tmp("r.csv"), "x,y\n1,2,3\n", 10);
    CHECK_STATUS(voxa_csv_read(tmp("r.csv"), &t), VOXA_EFORMAT);
    CHECK_MSG("r.csv");
    CHECK_MSG("line 2");
}

static void test_csv_write(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/w.csv", dir);
    char *names[3] = {"label", "a,\"b\"", "x"};
    double v[6] = {9007199254740992.0, -0.0, 1.0 / 3.0, NAN, INFINITY, -1e-300};
    voxa_table t = {.nrows = 2, .ncols = 3, .names = names, .values = v}, back;
    CHECK_OK(voxa_csv_write(path, &t));
    CHECK_OK(voxa_csv_read(path, &back));
    CHECK(back.nrows == 2 && back.ncols == 3 && !strcmp(back.names[1], "a,\"b\""));
    CHECK(back.values[0] == 9007199254740992.0 && back.values[2] == 1.0 / 3.0 &&
          back.values[3] != back.values[3] && back.values[4] == INFINITY &&
          back.values[5] == -1e-300 && signbit(back.values[1]));
    voxa_table_free(&back);
    FILE *f = fopen(path, "r");
    char line[128] = "";
    CHECK(f && fgets(line, sizeof line, f) && fgets(line, sizeof line, f));
    CHECK(!strncmp(line, "9007199254740992,", 17)); /* integers without a point */
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/no/such/dir/w.csv", dir);
    CHECK_STATUS(voxa_csv_write(path, &t), VOXA_EIO);
    t.ncols = 0;
    CHECK_STATUS(voxa_csv_write(path, &t), VOXA_EINVAL);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/voxa-test-io-%ld", (long)getpid());
    mkdir(dir, 0700);
    RUN(test_npy_roundtrip);
    RUN(test_csv_write);
    RUN(test_npy_fortran_bigendian);
    RUN(test_npy_bad_files);
    RUN(test_output_paths);
    RUN(test_tiff_roundtrip);
    RUN(test_tiff_strided_and_bigtiff);
    RUN(test_tiff_libtiff_codecs);
    RUN(test_tiff_bad_files);
    RUN(test_tiff_cycles_and_mixed_pages);
    RUN(test_tiff_bilevel);
    RUN(test_csv);
    /* Clean up. */
    DIR *dd = opendir(dir);
    struct dirent *e;
    while (dd && (e = readdir(dd))) {
        if (e->d_name[0] == '.') continue;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        remove(p);
    }
    if (dd) closedir(dd);
    rmdir(dir);
    VTEST_END();
}
