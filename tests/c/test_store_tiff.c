/* TIFF stores: outputs laid out in advance (every dtype, 2-D and 3-D, pages
 * of one and of many strips) written by blocks in any order, read back
 * before commit and from several threads at once, equal to the array after
 * commit (voxa_tiff_read, libtiff); nothing under the name until commit, no
 * temporary after close; inputs read by region read only about the region
 * (bytes counted in /proc/self/io); a streamed label from TIFF to TIFF equals
 * the op in memory; voxa_stream_chunks keeps a pyramid's chunks within a
 * block; bad input (truncated file, strips that lie, shapes TIFF cannot
 * hold) as clear errors. Interop with tifffile: tests/python/test_stream_api.py. */
#include "vtest.h"

#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void fill(voxa_array *a, unsigned long long seed) {
    uint8_t *d = a->data;
    int64_t n = voxa_array_size(a) * (int64_t)voxa_dtype_size(a->dtype);
    for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)vtest_rand(&seed);
    if (a->dtype == VOXA_BOOL)
        for (int64_t i = 0; i < n; i++) d[i] &= 1;
    if (a->dtype == VOXA_F32 || a->dtype == VOXA_F64) /* no NaN payloads: compare bytes */
        for (int64_t i = 0; i < voxa_array_size(a); i++) {
            if (a->dtype == VOXA_F32) ((float *)d)[i] = (float)(i % 977) * 0.25f - 3.0f;
            else ((double *)d)[i] = (double)(i % 1009) * -0.125 + 1e10;
        }
}

static int same_bytes(const voxa_array *x, const voxa_array *y) {
    return voxa_array_size(x) == voxa_array_size(y) &&
           voxa_dtype_size(x->dtype) == voxa_dtype_size(y->dtype) &&
           !memcmp(x->data, y->data, (size_t)voxa_array_size(x) * voxa_dtype_size(x->dtype));
}

static int exists(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0;
}

/* Entries of dir whose name contains "tmp". */
static int temporaries(void) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strstr(e->d_name, "tmp") != NULL;
    if (d) closedir(d);
    return n;
}

/* Write `a` into a created store by blocks of `b` in reverse raster order. */
static void write_blocks(voxa_store *s, const voxa_array *a, const int64_t *b) {
    int64_t grid[3], n = 1;
    for (int d = 0; d < a->ndim; d++) {
        grid[d] = (a->shape[d] + b[d] - 1) / b[d];
        n *= grid[d];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        int64_t lo[3], sh[3], r = i;
        for (int d = a->ndim - 1; d >= 0; d--) {
            lo[d] = (r % grid[d]) * b[d];
            r /= grid[d];
            sh[d] = lo[d] + b[d] <= a->shape[d] ? b[d] : a->shape[d] - lo[d];
        }
        voxa_array part = *a;
        part.owner = NULL;
        for (int d = 0; d < a->ndim; d++) {
            part.data = (char *)part.data + lo[d] * a->strides[d];
            part.shape[d] = sh[d];
        }
        CHECK_OK(voxa_store_write(s, lo, &part));
    }
}

static void test_output_roundtrip(void) {
    static const voxa_dtype types[] = {VOXA_U8, VOXA_I8, VOXA_U16, VOXA_I16, VOXA_U32,
                                       VOXA_I32, VOXA_U64, VOXA_I64, VOXA_F32, VOXA_F64,
                                       VOXA_BOOL};
    static const int64_t shapes[][3] = {{5, 7, 9}, {3, 300, 301}, {1, 1, 1}, {4, 1, 70000}};
    static const int64_t blocks[][3] = {{2, 3, 4}, {1, 128, 64}, {1, 1, 1}, {3, 1, 1000}};
    char path[512];
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
        for (int si = 0; si < 4; si++)
            for (int nd = 2; nd <= 3; nd++) {
                const int64_t *shape = nd == 3 ? shapes[si] : shapes[si] + 1;
                const int64_t *block = nd == 3 ? blocks[si] : blocks[si] + 1;
                voxa_array a, back, part;
                CHECK_OK(voxa_array_new(&a, types[ti], nd, shape));
                fill(&a, 7 + ti * 31 + (unsigned)si);
                snprintf(path, sizeof path, "%s/o%zu_%d_%d.tif", dir, ti, si, nd);
                voxa_store *s = NULL;
                CHECK_OK(voxa_store_create(path, types[ti], nd, shape, NULL, &s));
                if (!s) continue;
                CHECK(!exists(path)); /* published at commit only */
                write_blocks(s, &a, block);
                /* read back before commit (what labelling does between passes) */
                int64_t lo[3] = {0, 0, 0};
                CHECK_OK(voxa_array_new(&part, types[ti], nd, shape));
                CHECK_OK(voxa_store_read(s, lo, &part));
                CHECK(same_bytes(&a, &part));
                voxa_array_free(&part);
                CHECK_OK(voxa_store_commit(s));
                voxa_store_close(s);
                CHECK(exists(path));
                CHECK_OK(voxa_tiff_read(path, &back));
                if (back.data) {
                    /* bool is stored as uint8 0/1, the same bytes; one page
                     * reads back as 2-D (as from voxa_tiff_write) */
                    CHECK(back.ndim == (nd == 3 && shape[0] == 1 ? 2 : nd));
                    CHECK(same_bytes(&a, &back));
                    CHECK(back.dtype == (types[ti] == VOXA_BOOL ? VOXA_U8 : types[ti]));
                }
                voxa_array_free(&back);
                voxa_array_free(&a);
                unlink(path);
            }
    CHECK(temporaries() == 0);
}

static void test_uncommitted_removed(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/gone.tif", dir);
    int64_t shape[3] = {4, 5, 6};
    voxa_store *s = NULL;
    CHECK_OK(voxa_store_create(path, VOXA_U16, 3, shape, NULL, &s));
    voxa_array a;
    CHECK_OK(voxa_array_new(&a, VOXA_U16, 3, shape));
    fill(&a, 3);
    int64_t lo[3] = {0, 0, 0};
    CHECK_OK(voxa_store_write(s, lo, &a));
    CHECK(temporaries() == 1);
    voxa_store_close(s); /* not committed */
    CHECK(!exists(path));
    CHECK(temporaries() == 0);
    voxa_array_free(&a);
    /* shapes TIFF cannot hold: nothing is created */
    int64_t four[4] = {2, 2, 2, 2}, empty[2] = {0, 5};
    CHECK_STATUS(voxa_store_create(path, VOXA_U8, 4, four, NULL, &s), VOXA_EUNSUPPORTED);
    CHECK_MSG("2D or 3D");
    CHECK_STATUS(voxa_store_create(path, VOXA_U8, 2, empty, NULL, &s), VOXA_EUNSUPPORTED);
    CHECK_MSG("empty");
    voxa_store_options o = {.pyramid = 2};
    CHECK_STATUS(voxa_store_create_opts(path, VOXA_U8, 3, shape, &o, &s), VOXA_EINVAL);
    CHECK_MSG("pyramid");
    CHECK(temporaries() == 0 && !exists(path));
}

/* Bytes this process has read so far (rchar of /proc/self/io); -1 if unknown. */
static long long bytes_read(void) {
    FILE *f = fopen("/proc/self/io", "r");
    if (!f) return -1;
    char line[128];
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &v) == 1) break;
    fclose(f);
    return v;
}

static void test_input_reads_only_the_region(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/big.tif", dir);
    int64_t shape[3] = {64, 256, 256}; /* 8 MiB of uint16 */
    voxa_array a;
    CHECK_OK(voxa_array_new(&a, VOXA_U16, 3, shape));
    fill(&a, 11);
    voxa_tiff_options to = {.compression = VOXA_TIFF_DEFLATE, .level = 1};
    CHECK_OK(voxa_tiff_write_opts(path, &a, &to));
    voxa_store *s = NULL;
    CHECK_OK(voxa_store_open(path, &s));
    if (!s) return;
    int64_t lo[3] = {30, 100, 17}, sh[3] = {3, 20, 40};
    voxa_array box;
    CHECK_OK(voxa_array_new(&box, VOXA_U16, 3, sh));
    long long before = bytes_read();
    CHECK_OK(voxa_store_read(s, lo, &box));
    long long used = bytes_read() - before;
    struct stat sb;
    stat(path, &sb);
    if (before >= 0) {
        /* 3 pages of 8 MiB / 64: at most those pages' strips and directories */
        if (used > (long long)sb.st_size / 16)
            fprintf(stderr, "  read %lld bytes of a %lld-byte file\n", used,
                    (long long)sb.st_size);
        CHECK(used > 0 && used <= (long long)sb.st_size / 16);
    }
    int ok = 1;
    for (int64_t z = 0; z < sh[0]; z++)
        for (int64_t y = 0; y < sh[1]; y++)
            for (int64_t x = 0; x < sh[2]; x++) {
                int64_t i[3] = {z, y, x}, j[3] = {lo[0] + z, lo[1] + y, lo[2] + x};
                ok &= voxa_array_get(&box, i) == voxa_array_get(&a, j);
            }
    CHECK(ok);
    /* an input is read-only */
    CHECK_STATUS(voxa_store_write(s, lo, &box), VOXA_EINVAL);
    voxa_store_close(s);
    voxa_array_free(&box);
    voxa_array_free(&a);
    unlink(path);
}

/* Threads reading boxes of one TIFF input and writing them into one TIFF
 * output at once (the executor's parallel blocks). */
typedef struct job {
    voxa_store *in, *out;
    int64_t z0, z1;
    voxa_status st;
} job;

static void *copy_slabs(void *arg) {
    job *j = arg;
    int64_t shape[3];
    voxa_store_info(j->in, NULL, NULL, shape);
    voxa_array buf;
    int64_t sh[3] = {1, shape[1], shape[2]};
    j->st = voxa_array_new(&buf, VOXA_I32, 3, sh);
    for (int64_t z = j->z0; z < j->z1 && !j->st; z++) {
        int64_t lo[3] = {z, 0, 0};
        j->st = voxa_store_read(j->in, lo, &buf);
        if (!j->st) j->st = voxa_store_write(j->out, lo, &buf);
    }
    voxa_array_free(&buf);
    return NULL;
}

static void test_threads(void) {
    char src[512], dst[512];
    snprintf(src, sizeof src, "%s/src.tif", dir);
    snprintf(dst, sizeof dst, "%s/dst.tif", dir);
    int64_t shape[3] = {24, 33, 45};
    voxa_array a, back;
    CHECK_OK(voxa_array_new(&a, VOXA_I32, 3, shape));
    fill(&a, 5);
    CHECK_OK(voxa_tiff_write(src, &a));
    voxa_store *in = NULL, *out = NULL;
    CHECK_OK(voxa_store_open(src, &in));
    CHECK_OK(voxa_store_create(dst, VOXA_I32, 3, shape, NULL, &out));
    if (!in || !out) return;
    pthread_t th[4];
    job jobs[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = (job){in, out, t * 6, t * 6 + 6, VOXA_OK};
        pthread_create(&th[t], NULL, copy_slabs, &jobs[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        CHECK_OK(jobs[t].st);
    }
    CHECK_OK(voxa_store_commit(out));
    voxa_store_close(out);
    voxa_store_close(in);
    CHECK_OK(voxa_tiff_read(dst, &back));
    CHECK(back.data && same_bytes(&a, &back));
    voxa_array_free(&back);
    voxa_array_free(&a);
    unlink(src);
    unlink(dst);
}

/* label from a TIFF into a TIFF by blocks (the output is read back and
 * rewritten between passes) equals label in memory. */
static void test_streamed_label(void) {
    char src[512], dst[512];
    snprintf(src, sizeof src, "%s/mask.tif", dir);
    snprintf(dst, sizeof dst, "%s/labels.tif", dir);
    int64_t shape[3] = {13, 40, 37};
    voxa_array m, whole, back;
    CHECK_OK(voxa_array_new(&m, VOXA_U8, 3, shape));
    unsigned long long seed = 9;
    for (int64_t i = 0; i < voxa_array_size(&m); i++)
        ((uint8_t *)m.data)[i] = vtest_rand(&seed) % 100 < 45;
    CHECK_OK(voxa_tiff_write(src, &m));
    voxa_args a;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("label")));
    CHECK_OK(voxa_args_parse(&a, "connectivity", "2"));
    CHECK_OK(voxa_array_new(&whole, VOXA_I32, 3, shape));
    int64_t n1 = -1, n2 = -2;
    CHECK_OK(voxa_op_run(&a, &m, &whole, NULL, &n1));
    voxa_store *in = NULL, *out = NULL;
    CHECK_OK(voxa_store_open(src, &in));
    CHECK_OK(voxa_store_create(dst, VOXA_I32, 3, shape, NULL, &out));
    voxa_stream_options o;
    memset(&o, 0, sizeof o);
    o.block[0] = 4, o.block[1] = 15, o.block[2] = 11;
    CHECK_OK(voxa_stream_run(&a, in, out, &o, &n2));
    CHECK_OK(voxa_store_commit(out));
    voxa_store_close(out);
    voxa_store_close(in);
    CHECK(n1 == n2);
    CHECK_OK(voxa_tiff_read(dst, &back));
    CHECK(back.data && same_bytes(&whole, &back));
    voxa_array_free(&back);
    voxa_array_free(&whole);
    voxa_array_free(&m);
    voxa_args_free(&a);
    unlink(src);
    unlink(dst);
}

static void test_bad_input(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/bad.tif", dir);
    int64_t shape[3] = {6, 64, 64};
    voxa_array a, box;
    CHECK_OK(voxa_array_new(&a, VOXA_U16, 3, shape));
    fill(&a, 13);
    CHECK_OK(voxa_tiff_write(path, &a));
    struct stat sb;
    stat(path, &sb);
    /* truncated: the last pages' data are gone (the directories come
     * after each page in libtiff's files, so some pages are lost) */
    CHECK(truncate(path, sb.st_size / 2) == 0);
    voxa_store *s = NULL;
    voxa_status st = voxa_store_open(path, &s);
    if (st == VOXA_OK) { /* whatever opens must fail on the missing data */
        int64_t nd_shape[3];
        voxa_store_info(s, NULL, NULL, nd_shape);
        CHECK_OK(voxa_array_new(&box, VOXA_U16, 3, nd_shape));
        int64_t lo[3] = {0, 0, 0};
        CHECK(voxa_store_read(s, lo, &box) == VOXA_EFORMAT || nd_shape[0] < 6);
        voxa_array_free(&box);
        voxa_store_close(s);
    } else {
        CHECK(st == VOXA_EFORMAT);
        CHECK_MSG("bad.tif");
    }
    voxa_array_free(&a);
    unlink(path);
    /* a file that is not a TIFF at all */
    FILE *f = fopen(path, "wb");
    fputs("II*\0junk", f);
    fclose(f);
    CHECK_STATUS(voxa_store_open(path, &s), VOXA_EFORMAT);
    CHECK_MSG("bad.tif");
    unlink(path);
    snprintf(path, sizeof path, "%s/missing.tif", dir);
    CHECK_STATUS(voxa_store_open(path, &s), VOXA_EIO);
    CHECK_MSG("missing.tif");
}

static void test_chunks_for_pyramid(void) {
    voxa_stream_plan p;
    memset(&p, 0, sizeof p);
    p.ndim = 3;
    int64_t blocks[][3] = {{16, 2048, 2048}, {64, 64, 64}, {4, 16, 16}, {7, 9, 1}};
    for (int i = 0; i < 4; i++) {
        memcpy(p.block, blocks[i], sizeof blocks[i]);
        int64_t c0[3], c[3];
        voxa_stream_chunks(&p, 0, c0);
        voxa_stream_chunks(&p, 3, c);
        int64_t vox = 1, block = 1;
        for (int d = 0; d < 3; d++) {
            CHECK(blocks[i][d] % c0[d] == 0 && c0[d] <= 512);
            CHECK(blocks[i][d] % c[d] == 0 && c[d] <= c0[d]);
            vox *= c[d];
            block *= blocks[i][d];
        }
        /* a level reads 8 chunks of the level before: within a block, unless
         * no chunk axis can be halved any more */
        CHECK(vox * 8 <= block || (c[0] % 2 && c[1] % 2 && c[2] % 2));
    }
    memcpy(p.block, blocks[0], sizeof blocks[0]);
    int64_t c[3];
    voxa_stream_chunks(&p, 0, c);
    CHECK(c[0] == 16 && c[1] == 512 && c[2] == 512);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/voxa-test-storetiff-%ld", (long)getpid());
    mkdir(dir, 0700);
    RUN(test_output_roundtrip);
    RUN(test_uncommitted_removed);
    RUN(test_input_reads_only_the_region);
    RUN(test_threads);
    RUN(test_streamed_label);
    RUN(test_bad_input);
    RUN(test_chunks_for_pyramid);
    rmdir(dir);
    VTEST_END();
}
