/* zarr: round trips (every dtype, format, codec, byte order, memory order,
 * sharding) on edge shapes (0, 1, not divisible by the chunk, chunks of one
 * voxel, chunks larger than the array), region reads/writes against an
 * in-memory reference, concurrent writes into one chunk, crc32c's check
 * value, and bad input: malformed or lying metadata, unknown codecs,
 * corrupt/truncated/wrongly sized chunks, unwritable chunk paths - each a
 * clear error naming the field or the chunk, never a crash.
 * (Interop with zarr-python is in tests/python/test_zarr.py.) */
#include "internal.h"
#include "vtest.h"

#include <dirent.h>
#include <math.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

uint32_t voxa__crc32c(const void *buf, size_t len);

static char dir[256];

static const char *tmp(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    fputs(text, f);
    fclose(f);
}

static void fill(voxa_array *a, unsigned long long seed) {
    size_t es = voxa_dtype_size(a->dtype);
    unsigned char *p = a->data;
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0; i < n * (int64_t)es; i++) p[i] = (unsigned char)vtest_rand(&seed);
    if (a->dtype == VOXA_BOOL)
        for (int64_t i = 0; i < n; i++) p[i] &= 1;
    if (a->dtype == VOXA_F32) /* no NaN payload games: compare bytes */
        for (int64_t i = 0; i < n; i++) ((float *)p)[i] = (float)(i % 977) - 300.5f;
    if (a->dtype == VOXA_F64)
        for (int64_t i = 0; i < n; i++) ((double *)p)[i] = (double)(i % 977) * 1e-3 - 0.25;
}

static int same(const voxa_array *a, const voxa_array *b) {
    if (a->dtype != b->dtype || !voxa__same_shape(a, b)) return 0;
    voxa_array ca, cb;
    if (voxa__contiguous_copy(a, &ca) || voxa__contiguous_copy(b, &cb)) return 0;
    int eq = !memcmp(ca.data, cb.data, (size_t)voxa_array_size(a) * voxa_dtype_size(a->dtype));
    voxa_array_free(&ca);
    voxa_array_free(&cb);
    return eq;
}

static int temporaries(const char *d) {
    DIR *dd = opendir(d);
    int n = 0;
    struct dirent *e;
    while (dd && (e = readdir(dd)))
        if (strstr(e->d_name, ".tmp-")) n++;
    if (dd) closedir(dd);
    return n;
}

/* Save `a` with `o`, read it back whole and in one odd region. */
static void roundtrip(const voxa_array *a, const voxa_zarr_options *o, const char *name) {
    voxa_zarr *z = NULL;
    int64_t lo[VOXA_MAXDIM] = {0};
    CHECK_OK(voxa_zarr_create(tmp(name), a->dtype, a->ndim, a->shape, o, &z));
    if (!z) return;
    CHECK_OK(voxa_zarr_write(z, lo, a));
    voxa_zarr_close(z);
    z = NULL;
    CHECK_OK(voxa_zarr_open(tmp(name), 0, &z));
    if (!z) return;
    voxa_array b;
    CHECK_OK(voxa_array_new(&b, a->dtype, a->ndim, a->shape));
    CHECK_OK(voxa_zarr_read(z, lo, &b));
    CHECK(same(a, &b));
    /* region [1, n-1) on every axis that has room */
    voxa_array r = b, sub = *a;
    r.owner = sub.owner = NULL;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] > 2) {
            lo[d] = 1;
            r.shape[d] = sub.shape[d] = a->shape[d] - 2;
            sub.data = (char *)sub.data + a->strides[d];
        }
    CHECK_OK(voxa_zarr_read(z, lo, &r));
    CHECK(same(&sub, &r));
    voxa_array_free(&b);
    voxa_zarr_close(z);
}

static void test_crc32c(void) {
    CHECK(voxa__crc32c("123456789", 9) == 0xE3069283u);
    CHECK(voxa__crc32c("", 0) == 0);
    unsigned char zeros[32] = {0};
    CHECK(voxa__crc32c(zeros, 32) == 0x8A9136AAu); /* RFC 3720 B.4 */
}

static void test_dtypes_codecs(void) {
    int64_t shape[3] = {7, 10, 9};
    const voxa_zarr_codec codecs[] = {VOXA_ZARR_RAW, VOXA_ZARR_BLOSC, VOXA_ZARR_ZSTD,
                                      VOXA_ZARR_GZIP, VOXA_ZARR_ZLIB};
    for (int t = 0; t < VOXA_NDTYPES; t++) {
        voxa_array a;
        CHECK_OK(voxa_array_new(&a, (voxa_dtype)t, 3, shape));
        fill(&a, 99 + (unsigned)t);
        for (int fmt = 2; fmt <= 3; fmt++)
            for (int c = 0; c < 5; c++) {
                if (fmt == 3 && codecs[c] == VOXA_ZARR_ZLIB) continue;
                voxa_zarr_options o;
                memset(&o, 0, sizeof o);
                o.format = fmt;
                o.codec = codecs[c];
                o.chunks[0] = 3, o.chunks[1] = 4, o.chunks[2] = 9;
                o.big_endian = c & 1;
                o.fortran_order = (c >> 1) & 1;
                o.blosc_shuffle = t % 3;
                roundtrip(&a, &o, "dt.zarr");
            }
        voxa_array_free(&a);
    }
}

static void test_edge_shapes(void) {
    struct { int ndim; int64_t shape[4], chunks[4], shards[4]; } cases[] = {
        {3, {5, 6, 7}, {1, 1, 1}, {0}},        /* chunks of one voxel */
        {3, {5, 6, 7}, {9, 9, 9}, {0}},        /* one chunk larger than the array */
        {3, {5, 6, 7}, {2, 4, 3}, {4, 8, 6}},  /* shards not dividing the shape */
        {3, {5, 6, 7}, {1, 6, 2}, {5, 6, 8}},  /* inner chunks past the edge */
        {2, {0, 4}, {0}, {0}},                 /* empty */
        {1, {1}, {0}, {0}},
        {4, {3, 2, 5, 4}, {2, 1, 2, 3}, {0}},
        {0, {0}, {0}, {0}},                    /* 0-d */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        voxa_array a;
        CHECK_OK(voxa_array_new(&a, VOXA_U16, cases[i].ndim, cases[i].shape));
        fill(&a, 7 + i);
        for (int fmt = 2; fmt <= 3; fmt++) {
            voxa_zarr_options o;
            memset(&o, 0, sizeof o);
            o.format = fmt;
            o.codec = VOXA_ZARR_BLOSC;
            memcpy(o.chunks, cases[i].chunks, sizeof cases[i].chunks);
            if (fmt == 3) memcpy(o.shards, cases[i].shards, sizeof cases[i].shards);
            roundtrip(&a, &o, "edge.zarr");
        }
        voxa_array_free(&a);
    }
}

/* Random region writes against an in-memory reference, sharded or not. */
static void test_regions(void) {
    int64_t shape[3] = {13, 17, 11};
    for (int sharded = 0; sharded < 2; sharded++) {
        voxa_zarr_options o;
        memset(&o, 0, sizeof o);
        o.codec = VOXA_ZARR_ZSTD;
        o.chunks[0] = 3, o.chunks[1] = 5, o.chunks[2] = 4;
        if (sharded) o.shards[0] = 6, o.shards[1] = 10, o.shards[2] = 8;
        o.fill_value = 17;
        voxa_zarr *z = NULL;
        CHECK_OK(voxa_zarr_create(tmp("reg.zarr"), VOXA_I32, 3, shape, &o, &z));
        if (!z) return;
        voxa_array ref, blk, got;
        CHECK_OK(voxa_array_new(&ref, VOXA_I32, 3, shape));
        for (int64_t i = 0; i < voxa_array_size(&ref); i++) ((int32_t *)ref.data)[i] = 17;
        unsigned long long s = 5 + sharded;
        for (int it = 0; it < 40; it++) {
            int64_t lo[3], ext[3];
            for (int d = 0; d < 3; d++) {
                lo[d] = (int64_t)(vtest_rand(&s) % (uint64_t)shape[d]);
                ext[d] = 1 + (int64_t)(vtest_rand(&s) % (uint64_t)(shape[d] - lo[d]));
            }
            CHECK_OK(voxa_array_new(&blk, VOXA_I32, 3, ext));
            fill(&blk, s);
            CHECK_OK(voxa_zarr_write(z, lo, &blk));
            voxa_array dst = ref;
            dst.owner = NULL;
            for (int d = 0; d < 3; d++) {
                dst.shape[d] = ext[d];
                dst.data = (char *)dst.data + lo[d] * ref.strides[d];
            }
            CHECK_OK(voxa__copy_view(&blk, &dst));
            voxa_array_free(&blk);
        }
        int64_t zero[3] = {0};
        CHECK_OK(voxa_array_new(&got, VOXA_I32, 3, shape));
        CHECK_OK(voxa_zarr_read(z, zero, &got));
        CHECK(same(&ref, &got));
        voxa_array_free(&got);
        voxa_array_free(&ref);
        voxa_zarr_close(z);
        CHECK(temporaries(tmp("reg.zarr")) == 0);
    }
}

/* Many threads writing single voxels of the same few chunks through one handle. */
static void test_concurrent_writes(void) {
    int64_t shape[2] = {8, 8};
    for (int sharded = 0; sharded < 2; sharded++) {
        voxa_zarr_options o;
        memset(&o, 0, sizeof o);
        o.codec = VOXA_ZARR_BLOSC;
        o.chunks[0] = o.chunks[1] = 4;
        if (sharded) o.shards[0] = o.shards[1] = 8;
        voxa_zarr *z = NULL;
        CHECK_OK(voxa_zarr_create(tmp("conc.zarr"), VOXA_U8, 2, shape, &o, &z));
        if (!z) return;
        int bad = 0;
#pragma omp parallel for num_threads(4) reduction(+ : bad)
        for (int i = 0; i < 64; i++) {
            uint8_t v = (uint8_t)(i + 1);
            voxa_array one;
            int64_t s1[2] = {1, 1}, lo[2] = {i / 8, i % 8};
            voxa_array_view(&one, &v, VOXA_U8, 2, s1);
            bad += voxa_zarr_write(z, lo, &one) != VOXA_OK;
        }
        CHECK(bad == 0);
        uint8_t out[64];
        voxa_array a;
        int64_t zero[2] = {0};
        voxa_array_view(&a, out, VOXA_U8, 2, shape);
        CHECK_OK(voxa_zarr_read(z, zero, &a));
        int ok = 1;
        for (int i = 0; i < 64; i++) ok &= out[i] == i + 1;
        CHECK(ok);
        voxa_zarr_close(z);
    }
}

/* Resume support: a file exists once written, never before. */
static void test_unit_exists(void) {
    int64_t shape[2] = {5, 8}, zero[2] = {0}, lo[2] = {4, 4}, i11[2] = {1, 1}, i00[2] = {0};
    int64_t out_grid[2] = {2, 0};
    voxa_zarr_options o = {.chunks = {4, 4}};
    voxa_zarr *z = NULL;
    uint8_t v[4] = {1, 2, 3, 4};
    voxa_array a;
    int64_t s[2] = {1, 4};
    voxa_array_view(&a, v, VOXA_U8, 2, s);
    CHECK_OK(voxa_zarr_create(tmp("ex.zarr"), VOXA_U8, 2, shape, &o, &z));
    if (!z) return;
    int e = -1;
    CHECK_OK(voxa_zarr_unit_exists(z, i11, &e));
    CHECK(e == 0);
    CHECK_OK(voxa_zarr_write(z, lo, &a));
    CHECK_OK(voxa_zarr_unit_exists(z, i11, &e));
    CHECK(e == 1);
    CHECK_OK(voxa_zarr_unit_exists(z, i00, &e));
    CHECK(e == 0);
    CHECK_STATUS(voxa_zarr_unit_exists(z, out_grid, &e), VOXA_EINVAL);
    CHECK_MSG("idx[0] = 2");
    (void)zero;
    voxa_zarr_close(z);
}

static void test_bad_metadata(void) {
    static const char *bad[] = {
        "", "[]", "{", "{\"zarr_format\": 4}",
        "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[2],\"dtype\":\"<c8\"}",
        "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[2,2],\"dtype\":\"<u2\"}",
        "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[0],\"dtype\":\"<u2\"}",
        "{\"zarr_format\":2,\"shape\":[-3],\"chunks\":[2],\"dtype\":\"<u2\"}",
        "{\"zarr_format\":2,\"shape\":[3.5],\"chunks\":[2],\"dtype\":\"<u2\"}",
        "{\"zarr_format\":2,\"shape\":[1e300],\"chunks\":[2],\"dtype\":\"<u2\"}",
        "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[2],\"dtype\":\"<u2\",\"order\":\"K\"}",
        "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[2],\"dtype\":\"<u2\",\"compressor\":{\"id\":\"lzma\"}}",
        "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[2],\"dtype\":\"<u2\",\"fill_value\":1.5}",
        "{\"zarr_format\":2,\"shape\":[3],\"chunks\":[2],\"dtype\":\"<u2\",\"fill_value\":\"x\"}",
        "{\"zarr_format\":2,\"shape\":[1000000,1000000,1000000],\"chunks\":[1000000,1000000,1000],"
        "\"dtype\":\"<u2\"}",
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[3],\"data_type\":\"uint16\","
        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
        "\"codecs\":[]}",
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[3],\"data_type\":\"uint16\","
        "\"chunk_grid\":{\"name\":\"rectilinear\"},\"codecs\":[{\"name\":\"bytes\"}]}",
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[4],\"data_type\":\"uint16\","
        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
        "\"codecs\":[{\"name\":\"sharding_indexed\",\"configuration\":{\"chunk_shape\":[3],"
        "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}],"
        "\"index_codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}}]}",
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[3],\"data_type\":\"uint16\","
        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
        "\"codecs\":[{\"name\":\"zstd\"},{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}",
        "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[3],\"data_type\":\"uint16\","
        "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[2]}},"
        "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"
        "{\"name\":\"zstd\"},{\"name\":\"gzip\"}]}",
    };
    voxa_zarr_info info;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        voxa_status st = voxa_zarr_parse_metadata(bad[i], strlen(bad[i]), &info);
        CHECK(st == VOXA_EFORMAT || st == VOXA_EUNSUPPORTED);
        if (st == VOXA_OK) fprintf(stderr, "  accepted: %s\n", bad[i]);
    }
    const char *good = "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[3,5],"
                       "\"data_type\":\"float32\",\"chunk_grid\":{\"name\":\"regular\","
                       "\"configuration\":{\"chunk_shape\":[2,2]}},\"fill_value\":\"0x7fc00000\","
                       "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"big\"}}]}";
    CHECK_OK(voxa_zarr_parse_metadata(good, strlen(good), &info));
    CHECK(info.ndim == 2 && info.shape[1] == 5 && info.big_endian && info.fill_value != info.fill_value);
    /* named fields in messages */
    const char *lie = "{\"zarr_format\":2,\"shape\":[3,4],\"chunks\":[2],\"dtype\":\"<u2\"}";
    CHECK_STATUS(voxa_zarr_parse_metadata(lie, strlen(lie), &info), VOXA_EFORMAT);
    CHECK_MSG("'chunks' has 1 entries, the shape has 2");
}

static void test_bad_chunks(void) {
    int64_t shape[2] = {4, 4};
    voxa_zarr_options o;
    memset(&o, 0, sizeof o);
    o.codec = VOXA_ZARR_ZSTD;
    o.chunks[0] = o.chunks[1] = 2;
    voxa_zarr *z = NULL;
    uint16_t data[16] = {0};
    voxa_array a;
    int64_t zero[2] = {0};
    voxa_array_view(&a, data, VOXA_U16, 2, shape);
    CHECK_OK(voxa_zarr_create(tmp("bad.zarr"), VOXA_U16, 2, shape, &o, &z));
    if (!z) return;
    CHECK_OK(voxa_zarr_write(z, zero, &a));
    write_text(tmp("bad.zarr/c/1/1"), "garbage!");
    CHECK_STATUS(voxa_zarr_read(z, zero, &a), VOXA_EFORMAT);
    CHECK_MSG("bad.zarr/c/1/1");
    /* decode_chunk on every prefix of a valid chunk: errors, no crash */
    uint16_t chunk[4] = {1, 2, 3, 4}, out[4];
    voxa_array c, oc;
    int64_t cs[2] = {2, 2};
    voxa_array_view(&c, chunk, VOXA_U16, 2, cs);
    voxa_array_view(&oc, out, VOXA_U16, 2, cs);
    CHECK_OK(voxa_zarr_write(z, zero, &c));
    FILE *f = fopen(tmp("bad.zarr/c/0/0"), "rb");
    unsigned char enc[256];
    size_t n = f ? fread(enc, 1, sizeof enc, f) : 0;
    if (f) fclose(f);
    CHECK(n > 0);
    CHECK_OK(voxa_zarr_decode_chunk(z, enc, n, &oc));
    CHECK(!memcmp(out, chunk, sizeof chunk));
    for (size_t k = 0; k < n; k++) CHECK(voxa_zarr_decode_chunk(z, enc, k, &oc) != VOXA_OK);
    /* an unwritable chunk path: a file where the folder "c/0" should be */
    voxa_zarr_close(z);
    z = NULL;
    CHECK_OK(voxa_zarr_create(tmp("ro.zarr"), VOXA_U16, 2, shape, &o, &z));
    write_text(tmp("ro.zarr/c"), "not a folder");
    CHECK_STATUS(voxa_zarr_write(z, zero, &a), VOXA_EIO);
    CHECK_MSG("ro.zarr/c/");
    CHECK(temporaries(tmp("ro.zarr")) == 0);
    voxa_zarr_close(z);
    /* read-only handles, regions outside, wrong dtype */
    CHECK_OK(voxa_zarr_open(tmp("bad.zarr"), 0, &z));
    CHECK_STATUS(voxa_zarr_write(z, zero, &a), VOXA_EINVAL);
    CHECK_MSG("read-only");
    int64_t lo[2] = {1, 0};
    CHECK_STATUS(voxa_zarr_read(z, lo, &a), VOXA_EINVAL);
    CHECK_MSG("axis 0");
    voxa_zarr_close(z);
    CHECK_STATUS(voxa_zarr_open(tmp("nothing.zarr"), 0, &z), VOXA_EIO);
    CHECK_STATUS(voxa_zarr_create(tmp("x.zarr"), VOXA_U8, 2, shape, &(voxa_zarr_options){
                     .format = 2, .shards = {2, 2}}, &z), VOXA_EINVAL);
    CHECK_MSG("sharding needs format 3");
    CHECK_STATUS(voxa_zarr_create(tmp("x.zarr"), VOXA_U8, 2, shape, &(voxa_zarr_options){
                     .fill_value = 300}, &z), VOXA_EINVAL);
    CHECK_MSG("fill_value 300 does not fit dtype uint8");
    int64_t huge[3] = {(int64_t)1 << 40, (int64_t)1 << 40, 4};
    CHECK_STATUS(voxa_zarr_create(tmp("x.zarr"), VOXA_U8, 3, huge, NULL, &z), VOXA_EINVAL);
    CHECK_MSG("shape is too large");
    CHECK_STATUS(voxa_zarr_create(tmp("x.zarr"), VOXA_U8, 2, shape, &(voxa_zarr_options){
                     .codec = VOXA_ZARR_BLOSC, .blosc_cname = "brotli"}, &z), VOXA_EINVAL);
    CHECK_MSG("blosc_cname");
}

static void test_voxa_read_write(void) {
    int64_t shape[3] = {4, 5, 6};
    voxa_array a, b;
    CHECK_OK(voxa_array_new(&a, VOXA_F32, 3, shape));
    fill(&a, 3);
    CHECK_OK(voxa_write(tmp("rw.zarr"), &a));
    CHECK_OK(voxa_read(tmp("rw.zarr"), &b));
    CHECK(same(&a, &b));
    voxa_array_free(&b);
    double sp[3];
    char unit[32];
    CHECK_OK(voxa_zarr_spacing(tmp("rw.zarr"), 3, sp, unit, sizeof unit));
    CHECK(sp[0] == 1 && sp[2] == 1 && !strcmp(unit, "micrometer"));
    CHECK_STATUS(voxa_zarr_spacing(tmp("rw.zarr"), 2, sp, NULL, 0), VOXA_EFORMAT);
    voxa_array_free(&a);
}

/* Pyramid step block by block (even offsets) == whole array; metadata alone. */
static void test_downsample(void) {
    int64_t shape[3] = {9, 14, 11}, half[3] = {5, 7, 6};
    voxa_array a, whole, part, sub, blk;
    CHECK_OK(voxa_array_new(&a, VOXA_U16, 3, shape));
    fill(&a, 11);
    CHECK_OK(voxa_array_new(&whole, VOXA_U16, 3, half));
    CHECK_OK(voxa_zarr_downsample(&a, &whole, 0));
    /* voxel (1, 2, 3) of level 1 = rounded mean of the 8 voxels of its block */
    double sum = 0;
    for (int k = 0; k < 8; k++) {
        int64_t i[3] = {2 + (k & 1), 4 + ((k >> 1) & 1), 6 + ((k >> 2) & 1)};
        sum += voxa_array_get(&a, i);
    }
    int64_t j[3] = {1, 2, 3};
    CHECK(voxa_array_get(&whole, j) == rint(sum / 8));
    int64_t lo[3] = {4, 6, 2}, ext[3] = {5, 8, 9}, hext[3] = {3, 4, 5};
    sub = a;
    sub.owner = NULL;
    for (int d = 0; d < 3; d++) {
        sub.shape[d] = ext[d];
        sub.data = (char *)sub.data + lo[d] * a.strides[d];
    }
    CHECK_OK(voxa_array_new(&blk, VOXA_U16, 3, hext));
    CHECK_OK(voxa_zarr_downsample(&sub, &blk, 0));
    part = whole;
    part.owner = NULL;
    for (int d = 0; d < 3; d++) {
        part.shape[d] = hext[d];
        part.data = (char *)part.data + lo[d] / 2 * whole.strides[d];
    }
    CHECK(same(&part, &blk));
    CHECK_STATUS(voxa_zarr_downsample(&a, &a, 0), VOXA_EINVAL);
    CHECK_MSG("out.shape[0] = 9, expected 5");
    double sp[3] = {4, 0.5, 0.5}, got[3];
    CHECK_OK(voxa_zarr_write_ome_metadata(dir, 2, 3, sp, "nanometer", 2, 0));
    char unit[16];
    CHECK_OK(voxa_zarr_spacing(dir, 3, got, unit, sizeof unit));
    CHECK(got[0] == 4 && got[1] == 0.5 && !strcmp(unit, "nanometer"));
    sp[1] = 0;
    CHECK_STATUS(voxa_zarr_write_ome_metadata(dir, 3, 3, sp, NULL, 1, 0), VOXA_EINVAL);
    CHECK_MSG("spacing[1]");
    voxa_array_free(&blk);
    voxa_array_free(&whole);
    voxa_array_free(&a);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/voxa-test-zarr-%ld", (long)getpid());
    mkdir(dir, 0700);
    RUN(test_crc32c);
    RUN(test_dtypes_codecs);
    RUN(test_edge_shapes);
    RUN(test_regions);
    RUN(test_concurrent_writes);
    RUN(test_unit_exists);
    RUN(test_bad_metadata);
    RUN(test_bad_chunks);
    RUN(test_voxa_read_write);
    RUN(test_downsample);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    VTEST_END();
}
