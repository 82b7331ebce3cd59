/* Zarr region read and write: any box of the array <-> a strided view.
 *
 * The box is cut along the file grid (chunks, or shards when sharded); the
 * files run in parallel (voxa__parallel_for, one file per item), each
 * decoded into a scratch buffer of the full chunk shape (edge chunks are
 * stored padded, as Zarr requires) and the intersection copied into the
 * view. A missing file or inner chunk reads as the fill value. A shard is
 * not read whole: its index, then only the inner chunks the box touches.
 *
 * Writing a file the box covers whole encodes straight from the view (the
 * padding of an edge chunk gets the fill value). A file covered in part is
 * read, updated and rewritten. Every file write holds the handle's lock for
 * that file, so two threads writing parts of one chunk through one handle
 * do not lose each other's voxels. Sharded files are rebuilt: touched inner chunks
 * are re-encoded, the others keep their encoded bytes. Every file goes out
 * atomically (zarr_store.c). Cost: one decode + copy per touched chunk for
 * reads, one encode (+ decode for partial chunks) per chunk for writes. */
#include "zarr_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct job {
    voxa_zarr *z;
    const int64_t *lo;
    voxa_array *view;     /* the caller's region (read: out, write: in) */
    int64_t g0[VOXA_MAXDIM], gn[VOXA_MAXDIM]; /* first file index and count per axis */
} job;

/* Intersection of the box [org, org+ext) with the region; 0 if empty. */
static int intersect(const job *j, const int64_t *org, const int64_t *ext, int64_t *a,
                     int64_t *b) {
    for (int d = 0; d < j->z->ndim; d++) {
        int64_t r0 = j->lo[d], r1 = r0 + j->view->shape[d];
        a[d] = org[d] > r0 ? org[d] : r0;
        b[d] = org[d] + ext[d] < r1 ? org[d] + ext[d] : r1;
        if (a[d] >= b[d]) return 0;
    }
    return 1;
}

/* Views of [a, b) inside a C-contiguous buffer of shape `bshape` at `org`,
 * and inside the caller's region view. */
static void sub_views(const job *j, void *buf, const int64_t *org, const int64_t *bshape,
                      const int64_t *a, const int64_t *b, voxa_array *vb, voxa_array *vr) {
    const voxa_zarr *z = j->z;
    *vr = *j->view;
    vr->owner = NULL;
    if (buf) voxa_array_view(vb, buf, z->dtype, z->ndim, bshape);
    char *pr = j->view->data;
    char *pb = buf;
    for (int d = 0; d < z->ndim; d++) {
        vr->shape[d] = b[d] - a[d];
        pr += (a[d] - j->lo[d]) * j->view->strides[d];
        if (buf) {
            vb->shape[d] = b[d] - a[d];
            pb += (a[d] - org[d]) * vb->strides[d];
        }
    }
    vr->data = pr;
    if (buf) vb->data = pb;
}

/* File index (and its linear number) of item `i` of the job. */
static int64_t file_index(const job *j, int64_t i, int64_t *idx) {
    const voxa_zarr *z = j->z;
    int64_t lin = 0;
    for (int d = z->ndim - 1; d >= 0; d--) {
        idx[d] = j->g0[d] + i % j->gn[d];
        i /= j->gn[d];
    }
    for (int d = 0; d < z->ndim; d++) lin = lin * z->grid[d] + idx[d];
    return lin;
}

static void inner_grid(const voxa_zarr *z, int64_t *ig) {
    for (int d = 0; d < z->ndim; d++) ig[d] = z->unit[d] / z->chunks[d];
}

/* Origin of inner chunk number `k` of the shard at `org`. */
static void inner_origin(const voxa_zarr *z, const int64_t *ig, int64_t k, const int64_t *org,
                         int64_t *io) {
    for (int d = z->ndim - 1; d >= 0; d--) {
        io[d] = org[d] + (k % ig[d]) * z->chunks[d];
        k /= ig[d];
    }
}

/* ---- read ------------------------------------------------------------------ */

/* Decode one chunk's bytes (or fill, when enc is NULL) and copy [a, b). */
static voxa_status read_chunk(const job *j, const void *enc, size_t len, const int64_t *org,
                              const int64_t *a, const int64_t *b, void *scratch,
                              const char *name) {
    const voxa_zarr *z = j->z;
    voxa_array vb, vr;
    if (!enc) {
        sub_views(j, NULL, org, z->chunks, a, b, &vb, &vr);
        voxa__zarr_fill_view(z, &vr);
        return VOXA_OK;
    }
    size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es;
    VOXA_CHECK(voxa__zarr_decode(z, &z->chain, enc, len, scratch, nbytes, z->ndim, z->chunks,
                                 name));
    sub_views(j, scratch, org, z->chunks, a, b, &vb, &vr);
    return voxa__copy_view(&vb, &vr);
}

/* pread exactly n bytes at off into *buf (grown as needed). */
static voxa_status pread_all(int fd, uint64_t off, size_t n, void **buf, size_t *cap,
                             const char *name) {
    if (n > *cap) {
        void *nb = realloc(*buf, n);
        VOXA_FAIL_IF(!nb, VOXA_ENOMEM, "out of memory reading '%s' (%zu bytes)", name, n);
        *buf = nb;
        *cap = n;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)*buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        VOXA_FAIL_IF(r < 0, VOXA_EIO, "cannot read shard '%s': %s", name, strerror(errno));
        VOXA_FAIL_IF(r == 0, VOXA_EFORMAT, "shard '%s' is truncated", name);
        got += (size_t)r;
    }
    return VOXA_OK;
}

/* The inner chunks of one shard, run in parallel (they are independent:
 * pread on a shared descriptor, one scratch buffer per block). Inside a
 * parallel loop over files this nests and runs on the calling thread. */
typedef struct inner_ctx {
    const job *j;
    const int64_t *org, *ig;
    int64_t n;
    int fd;               /* read: the shard, or -1 when absent */
    const void *old;      /* write: the old shard's bytes, or NULL */
    const uint64_t *offs; /* offsets [0, n), lengths [n, 2n) */
    void **enc;           /* write: encoded inner chunks */
    size_t *lens;
    const char *name;
} inner_ctx;

static voxa_status read_inner(int64_t begin, int64_t end, int tid, void *ctx) {
    const inner_ctx *c = ctx;
    const voxa_zarr *z = c->j->z;
    size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es, cap = 0;
    void *scratch = malloc(nbytes ? nbytes : 1), *buf = NULL;
    VOXA_FAIL_IF(!scratch, VOXA_ENOMEM, "out of memory reading shard '%s'", c->name);
    voxa_status st = VOXA_OK;
    char iname[4200];
    for (int64_t k = begin; k < end && !st; k++) {
        int64_t io[VOXA_MAXDIM], a[VOXA_MAXDIM], b[VOXA_MAXDIM];
        inner_origin(z, c->ig, k, c->org, io);
        if (!intersect(c->j, io, z->chunks, a, b)) continue;
        int have = c->fd >= 0 && c->offs[k] != UINT64_MAX;
        snprintf(iname, sizeof iname, "%s (inner chunk %lld)", c->name, (long long)k);
        if (have && (st = pread_all(c->fd, c->offs[k], c->offs[c->n + k], &buf, &cap, c->name)))
            break;
        st = read_chunk(c->j, have ? buf : NULL, have ? c->offs[c->n + k] : 0, io, a, b, scratch,
                        iname);
    }
    free(buf);
    free(scratch);
    return st;
}

/* A shard: read its index, then only the inner chunks the region needs. */
static voxa_status read_shard(const job *j, const int64_t *org, void *scratch, uint64_t *offs,
                              void **buf, size_t *cap, const char *name) {
    const voxa_zarr *z = j->z;
    int64_t ig[VOXA_MAXDIM];
    inner_grid(z, ig);
    int64_t n = zprod(z->ndim, ig);
    voxa_status st = VOXA_OK;
    int fd = open(name, O_RDONLY);
    if (fd < 0 && errno != ENOENT)
        return voxa__error(VOXA_EIO, "cannot open shard '%s': %s", name, strerror(errno));
    if (fd >= 0) {
        struct stat sb;
        VOXA_GOTO_IF(fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode), VOXA_EIO,
                     "shard '%s' is not a regular file", name);
        size_t len = (size_t)sb.st_size, ib = voxa__zarr_shard_index_bytes(z, n);
        VOXA_GOTO_IF(len < ib, VOXA_EFORMAT,
                     "shard '%s' has %zu bytes, less than its index (%zu bytes): truncated",
                     name, len, ib);
        if ((st = pread_all(fd, z->index_at_start ? 0 : len - ib, ib, buf, cap, name)))
            goto done;
        if ((st = voxa__zarr_shard_index_at(z, *buf, len, offs, offs + n, n, name))) goto done;
    }
    inner_ctx c = {.j = j, .org = org, .ig = ig, .n = n, .fd = fd, .offs = offs, .name = name};
    st = voxa__parallel_for(n, 1, read_inner, &c);
done:
    if (fd >= 0) close(fd);
    return st;
}

static voxa_status read_file_item(int64_t begin, int64_t end, int tid, void *ctx) {
    const job *j = ctx;
    const voxa_zarr *z = j->z;
    voxa_status st = VOXA_OK;
    void *buf = NULL, *scratch = NULL;
    size_t cap = 0;
    uint64_t *offs = NULL;
    size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es;
    char name[4096];
    scratch = malloc(nbytes ? nbytes : 1);
    VOXA_GOTO_IF(!scratch, VOXA_ENOMEM, "out of memory reading a chunk of %zu bytes", nbytes);
    if (z->sharded) {
        int64_t ig[VOXA_MAXDIM];
        inner_grid(z, ig);
        offs = malloc(2 * (size_t)zprod(z->ndim, ig) * sizeof *offs);
        VOXA_GOTO_IF(!offs, VOXA_ENOMEM, "out of memory for a shard index");
    }
    for (int64_t i = begin; i < end && !st; i++) {
        int64_t idx[VOXA_MAXDIM], org[VOXA_MAXDIM], a[VOXA_MAXDIM], b[VOXA_MAXDIM];
        file_index(j, i, idx);
        for (int d = 0; d < z->ndim; d++) org[d] = idx[d] * z->unit[d];
        if ((st = voxa__zarr_key(z, idx, name, sizeof name))) break;
        if (z->sharded) {
            st = read_shard(j, org, scratch, offs, &buf, &cap, name);
            continue;
        }
        size_t len;
        free(buf);
        buf = NULL;
        if ((st = voxa__zarr_read_file(name, &buf, &len))) break;
        if (intersect(j, org, z->unit, a, b))
            st = read_chunk(j, buf, len, org, a, b, scratch, name);
    }
done:
    free(buf);
    free(scratch);
    free(offs);
    return st;
}

static voxa_status make_job(voxa_zarr *z, const int64_t *lo, const voxa_array *v, job *j,
                            const char *what, int64_t *nfiles) {
    VOXA_FAIL_IF(!z || !v || (z->ndim && !lo), VOXA_EINVAL, "zarr_%s: NULL argument", what);
    VOXA_CHECK(voxa_array_check(v, what));
    VOXA_FAIL_IF(v->dtype != z->dtype, VOXA_EINVAL, "zarr_%s: dtype %s, the array's is %s", what,
                 voxa_dtype_name(v->dtype), voxa_dtype_name(z->dtype));
    VOXA_FAIL_IF(v->ndim != z->ndim, VOXA_EINVAL, "zarr_%s: ndim %d, the array's is %d", what,
                 v->ndim, z->ndim);
    j->z = z;
    j->lo = lo;
    j->view = (voxa_array *)v;
    *nfiles = 1;
    for (int d = 0; d < z->ndim; d++) {
        VOXA_FAIL_IF(lo[d] < 0 || v->shape[d] > z->shape[d] || lo[d] > z->shape[d] - v->shape[d],
                     VOXA_EINVAL,
                     "zarr_%s: region [%lld, %lld) on axis %d is outside the array (0..%lld)",
                     what, (long long)lo[d], (long long)(lo[d] + v->shape[d]), d,
                     (long long)z->shape[d]);
        if (v->shape[d] == 0) *nfiles = 0;
        else {
            j->g0[d] = lo[d] / z->unit[d];
            j->gn[d] = (lo[d] + v->shape[d] - 1) / z->unit[d] - j->g0[d] + 1;
            *nfiles *= j->gn[d];
        }
    }
    return VOXA_OK;
}

voxa_status voxa_zarr_read(voxa_zarr *z, const int64_t *lo, voxa_array *out) {
    job j;
    int64_t n = 0;
    VOXA_CHECK(make_job(z, lo, out, &j, "read", &n));
    return n ? voxa__parallel_for(n, 1, read_file_item, &j) : VOXA_OK;
}

/* ---- write ----------------------------------------------------------------- */

/* Encode the inner chunk / chunk at `org`, from the region (and, when the
 * region covers it in part, from its old encoded bytes or the fill). */
static voxa_status write_chunk(const job *j, const void *old, size_t old_len,
                               const int64_t *org, void *scratch, void **enc, size_t *enc_len,
                               const char *name) {
    const voxa_zarr *z = j->z;
    int64_t a[VOXA_MAXDIM], b[VOXA_MAXDIM];
    size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es;
    intersect(j, org, z->chunks, a, b);
    int whole = 1;
    for (int d = 0; d < z->ndim; d++) {
        int64_t end = org[d] + z->chunks[d] < z->shape[d] ? org[d] + z->chunks[d] : z->shape[d];
        whole &= a[d] == org[d] && b[d] == end;
    }
    if (!whole && old) VOXA_CHECK(voxa__zarr_decode(z, &z->chain, old, old_len, scratch, nbytes,
                                                    z->ndim, z->chunks, name));
    else {
        voxa_array all;
        voxa_array_view(&all, scratch, z->dtype, z->ndim, z->chunks);
        voxa__zarr_fill_view(z, &all);
    }
    voxa_array vb, vr;
    sub_views(j, scratch, org, z->chunks, a, b, &vb, &vr);
    VOXA_CHECK(voxa__copy_view(&vr, &vb));
    return voxa__zarr_encode(z, &z->chain, scratch, nbytes, z->ndim, z->chunks, enc, enc_len,
                             name);
}

static int covers(const job *j, const int64_t *org) {
    const voxa_zarr *z = j->z;
    for (int d = 0; d < z->ndim; d++) {
        int64_t end = org[d] + z->unit[d] < z->shape[d] ? org[d] + z->unit[d] : z->shape[d];
        if (j->lo[d] > org[d] || j->lo[d] + j->view->shape[d] < end) return 0;
    }
    return 1;
}

static voxa_status write_inner(int64_t begin, int64_t end, int tid, void *ctx) {
    const inner_ctx *c = ctx;
    const voxa_zarr *z = c->j->z;
    size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es;
    void *scratch = malloc(nbytes ? nbytes : 1);
    VOXA_FAIL_IF(!scratch, VOXA_ENOMEM, "out of memory writing shard '%s'", c->name);
    voxa_status st = VOXA_OK;
    char iname[4200];
    const uint64_t *offs = c->offs;
    int64_t n = c->n;
    for (int64_t k = begin; k < end && !st; k++) {
        int64_t io[VOXA_MAXDIM], a[VOXA_MAXDIM], b[VOXA_MAXDIM];
        inner_origin(z, c->ig, k, c->org, io);
        int inside = 1;
        for (int d = 0; d < z->ndim; d++) inside &= io[d] < z->shape[d];
        if (!inside) continue; /* past the array's edge: stays absent */
        int have = c->old && offs[k] != UINT64_MAX;
        if (!intersect(c->j, io, z->chunks, a, b)) {
            if (!have) continue;
            c->enc[k] = malloc(offs[n + k] ? offs[n + k] : 1);
            if (!c->enc[k]) {
                st = voxa__error(VOXA_ENOMEM, "out of memory writing shard '%s'", c->name);
                break;
            }
            memcpy(c->enc[k], (const char *)c->old + offs[k], offs[n + k]);
            c->lens[k] = offs[n + k];
            continue;
        }
        snprintf(iname, sizeof iname, "%s (inner chunk %lld)", c->name, (long long)k);
        st = write_chunk(c->j, have ? (const char *)c->old + offs[k] : NULL,
                         have ? offs[n + k] : 0, io, scratch, &c->enc[k], &c->lens[k], iname);
    }
    free(scratch);
    return st;
}

static voxa_status write_one_file(const job *j, const int64_t *idx, void *scratch,
                                  const char *name) {
    const voxa_zarr *z = j->z;
    voxa_status st = VOXA_OK;
    int64_t org[VOXA_MAXDIM], ig[VOXA_MAXDIM], n = 1;
    for (int d = 0; d < z->ndim; d++) org[d] = idx[d] * z->unit[d];
    int whole = covers(j, org);
    void *old = NULL, *out = NULL, **enc = NULL;
    size_t old_len = 0, out_len = 0, *lens = NULL;
    uint64_t *offs = NULL;
    if (!whole) VOXA_CHECK(voxa__zarr_read_file(name, &old, &old_len));
    if (!z->sharded) {
        st = write_chunk(j, old, old_len, org, scratch, &out, &out_len, name);
        if (!st) st = voxa__zarr_write_file(name, out, out_len, z->fsync);
        goto done;
    }
    inner_grid(z, ig);
    n = zprod(z->ndim, ig);
    enc = calloc((size_t)n, sizeof *enc);
    lens = calloc((size_t)n, sizeof *lens);
    offs = malloc(2 * (size_t)n * sizeof *offs);
    VOXA_GOTO_IF(!enc || !lens || !offs, VOXA_ENOMEM, "out of memory writing shard '%s'", name);
    if (old && (st = voxa__zarr_shard_index(z, old, old_len, offs, offs + n, n, name))) goto done;
    inner_ctx c = {.j = j, .org = org, .ig = ig, .n = n, .fd = -1, .old = old, .offs = offs,
                   .enc = enc, .lens = lens, .name = name};
    if ((st = voxa__parallel_for(n, 1, write_inner, &c))) goto done;
    if ((st = voxa__zarr_shard_build(z, enc, lens, n, &out, &out_len, name))) goto done;
    st = voxa__zarr_write_file(name, out, out_len, z->fsync);
done:
    if (enc)
        for (int64_t k = 0; k < n; k++) free(enc[k]);
    free(enc);
    free(lens);
    free(offs);
    free(old);
    free(out);
    return st;
}

static voxa_status write_file_item(int64_t begin, int64_t end, int tid, void *ctx) {
    job *j = ctx;
    voxa_zarr *z = j->z;
    voxa_status st = VOXA_OK;
    size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es;
    void *scratch = malloc(nbytes ? nbytes : 1);
    VOXA_FAIL_IF(!scratch, VOXA_ENOMEM, "out of memory writing a chunk of %zu bytes", nbytes);
    char name[4096];
    for (int64_t i = begin; i < end && !st; i++) {
        int64_t idx[VOXA_MAXDIM];
        int64_t lin = file_index(j, i, idx);
        if ((st = voxa__zarr_key(z, idx, name, sizeof name))) break;
        /* Always lock: a whole-file write racing a partial one on the same
         * file could otherwise be lost by the partial's read-modify-write. */
        pthread_mutex_t *m = &z->locks[lin % ZLOCKS];
        pthread_mutex_lock(m);
        st = write_one_file(j, idx, scratch, name);
        pthread_mutex_unlock(m);
    }
    free(scratch);
    return st;
}

voxa_status voxa_zarr_write(voxa_zarr *z, const int64_t *lo, const voxa_array *in) {
    job j;
    int64_t n = 0;
    VOXA_CHECK(make_job(z, lo, in, &j, "write", &n));
    VOXA_FAIL_IF(!z->writable, VOXA_EINVAL, "zarr_write: '%s' was opened read-only", z->path);
    return n ? voxa__parallel_for(n, 1, write_file_item, &j) : VOXA_OK;
}

/* ---- one chunk, for tests and fuzzing ------------------------------------------ */

voxa_status voxa_zarr_decode_chunk(voxa_zarr *z, const void *buf, size_t len, voxa_array *out) {
    VOXA_FAIL_IF(!z || !buf || !out, VOXA_EINVAL, "zarr_decode_chunk: NULL argument");
    VOXA_FAIL_IF(out->dtype != z->dtype || out->ndim != z->ndim ||
                     !voxa_array_is_c_contiguous(out),
                 VOXA_EINVAL, "zarr_decode_chunk: out must be C-contiguous %s, ndim %d",
                 voxa_dtype_name(z->dtype), z->ndim);
    for (int d = 0; d < z->ndim; d++)
        VOXA_FAIL_IF(out->shape[d] != z->unit[d], VOXA_EINVAL,
                     "zarr_decode_chunk: out.shape[%d] = %lld, the chunk's is %lld", d,
                     (long long)out->shape[d], (long long)z->unit[d]);
    job j;
    int64_t lo[VOXA_MAXDIM] = {0};
    memset(&j, 0, sizeof j);
    j.z = z;
    j.lo = lo;
    j.view = out;
    if (!z->sharded) {
        size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es;
        return voxa__zarr_decode(z, &z->chain, buf, len, out->data, nbytes, z->ndim, z->chunks,
                                 "(buffer)");
    }
    int64_t ig[VOXA_MAXDIM], n;
    inner_grid(z, ig);
    n = zprod(z->ndim, ig);
    size_t nbytes = (size_t)zprod(z->ndim, z->chunks) * z->es;
    uint64_t *offs = malloc(2 * (size_t)n * sizeof *offs);
    void *scratch = malloc(nbytes ? nbytes : 1);
    voxa_status st = VOXA_OK;
    VOXA_GOTO_IF(!offs || !scratch, VOXA_ENOMEM, "zarr_decode_chunk: out of memory");
    if ((st = voxa__zarr_shard_index(z, buf, len, offs, offs + n, n, "(buffer)"))) goto done;
    for (int64_t k = 0; k < n && !st; k++) {
        int64_t io[VOXA_MAXDIM], a[VOXA_MAXDIM], b[VOXA_MAXDIM];
        inner_origin(z, ig, k, lo, io);
        intersect(&j, io, z->chunks, a, b);
        int have = offs[k] != UINT64_MAX;
        st = read_chunk(&j, have ? (const char *)buf + offs[k] : NULL, have ? offs[n + k] : 0, io,
                        a, b, scratch, "(buffer)");
    }
done:
    free(offs);
    free(scratch);
    return st;
}
