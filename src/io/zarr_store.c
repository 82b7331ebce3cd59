/* Zarr handles and files: open, create, close, chunk keys, atomic chunk
 * files.
 *
 * A handle is a parsed copy of the array's metadata plus a table of write
 * locks. Chunk keys follow the metadata: v3 "default" encoding "c/1/2/3"
 * (or "c.1.2.3"), v2 and the v3 "v2" encoding "1.2.3" (or "1/2/3"); a 0-d
 * array's one chunk is "c" or "0". Files are written under a temporary name
 * in the same folder and renamed, so a reader (or a resumed run) sees either
 * the old file or the new one, never part of one; with fsync on, the data
 * and then the folder are flushed before the rename is relied on. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "atomic.h"
#include "zarr_internal.h"

#include <blosc.h>
#include <dirent.h>
#include <ftw.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

voxa_status voxa__zarr_ome_first(const char *group, int format, char *sub, size_t n);

/* ---- files ----------------------------------------------------------------- */

voxa_status voxa__zarr_mkdirs(const char *dir) {
    char buf[4096];
    int n = snprintf(buf, sizeof buf, "%s", dir);
    VOXA_FAIL_IF(n < 0 || (size_t)n >= sizeof buf, VOXA_EINVAL, "path too long: '%s'", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return voxa__error(VOXA_EIO, "cannot create folder '%s': %s", buf,
                                   strerror(errno));
            *p = c;
            if (!c) break;
        }
    }
    struct stat sb;
    VOXA_FAIL_IF(stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode), VOXA_EIO,
                 "'%s' exists and is not a folder", dir);
    return VOXA_OK;
}

static void parent_of(const char *path, char *buf, size_t n) {
    snprintf(buf, n, "%s", path);
    char *s = strrchr(buf, '/');
    if (s && s != buf) *s = 0;
    else snprintf(buf, n, "%s", s ? "/" : ".");
}

static voxa_status fsync_dir(const char *path) {
    char dir[4096];
    parent_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return voxa__error(VOXA_EIO, "cannot open folder '%s': %s", dir, strerror(errno));
    int r = fsync(fd);
    close(fd);
    VOXA_FAIL_IF(r != 0 && errno != EINVAL, VOXA_EIO, "cannot flush folder '%s': %s", dir,
                 strerror(errno));
    return VOXA_OK;
}

voxa_status voxa__zarr_write_file(const char *path, const void *buf, size_t len, int sync) {
    voxa__atomic w;
    VOXA_CHECK(voxa__atomic_begin(&w, path));
    FILE *f = fopen(w.tmp, "wb");
    if (!f && errno == ENOENT) {
        char dir[4096];
        parent_of(path, dir, sizeof dir);
        VOXA_CHECK(voxa__zarr_mkdirs(dir));
        f = fopen(w.tmp, "wb");
    }
    if (!f) return voxa__error(VOXA_EIO, "cannot create '%s': %s", path, strerror(errno));
    voxa_status st = VOXA_OK;
    if (len && fwrite(buf, 1, len, f) != len)
        st = voxa__error(VOXA_EIO, "cannot write '%s': %s", path, strerror(errno));
    if (!st && sync && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        st = voxa__error(VOXA_EIO, "cannot flush '%s': %s", path, strerror(errno));
    st = voxa__atomic_end(&w, f, st);
    if (!st && sync) st = fsync_dir(path);
    return st;
}

voxa_status voxa__zarr_read_file(const char *path, void **buf, size_t *len) {
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) return VOXA_OK;
        return voxa__error(VOXA_EIO, "cannot open chunk '%s': %s", path, strerror(errno));
    }
    voxa_status st = VOXA_OK;
    struct stat sb;
    unsigned char *b = NULL;
    VOXA_GOTO_IF(fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode), VOXA_EIO,
                 "chunk '%s' is not a regular file", path);
    size_t n = (size_t)sb.st_size;
    b = malloc(n ? n : 1);
    VOXA_GOTO_IF(!b, VOXA_ENOMEM, "out of memory reading chunk '%s' (%zu bytes)", path, n);
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, b + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        VOXA_GOTO_IF(r < 0, VOXA_EIO, "cannot read chunk '%s': %s", path, strerror(errno));
        if (r == 0) break;
        got += (size_t)r;
    }
    *buf = b;
    *len = got;
    b = NULL;
done:
    free(b);
    close(fd);
    return st;
}

voxa_status voxa__zarr_key(const voxa_zarr *z, const int64_t *idx, char *buf, size_t n) {
    int k = snprintf(buf, n, "%s/%s", z->path, z->v2_keys ? (z->ndim ? "" : "0") : "c");
    for (int d = 0; d < z->ndim && k >= 0 && (size_t)k < n; d++) {
        int sep = !z->v2_keys || d > 0;
        k += snprintf(buf + k, n - (size_t)k, "%s%lld", sep ? (char[2]){z->sep, 0} : "",
                      (long long)idx[d]);
    }
    VOXA_FAIL_IF(k < 0 || (size_t)k >= n, VOXA_EINVAL, "zarr: chunk path too long under '%s'",
                 z->path);
    return VOXA_OK;
}

/* ---- fill ------------------------------------------------------------------ */

void voxa__zarr_fill_view(const voxa_zarr *z, voxa_array *v) {
    int64_t n = voxa_array_size(v);
    if (n == 0) return;
    size_t es = z->es;
    int zero = 1;
    for (size_t i = 0; i < es; i++) zero &= z->fill[i] == 0;
    int last = v->ndim - 1;
    int64_t row = v->ndim ? v->shape[last] : 1, rs = v->ndim ? v->strides[last] : 0;
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t r = 0; r < n / row; r++) {
        char *d = (char *)v->data + voxa__offset(v, idx);
        if (zero && rs == (int64_t)es) memset(d, 0, (size_t)row * es);
        else
            for (int64_t i = 0; i < row; i++) memcpy(d + i * rs, z->fill, es);
        for (int k = last - 1; k >= 0; k--) {
            if (++idx[k] < v->shape[k]) break;
            idx[k] = 0;
        }
    }
}

/* ---- handles ----------------------------------------------------------------- */

static voxa_status handle_new(const char *path, voxa_zarr **out) {
    voxa_zarr *z = calloc(1, sizeof *z);
    VOXA_FAIL_IF(!z, VOXA_ENOMEM, "zarr: out of memory");
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    z->path = malloc(n + 1);
    if (!z->path) {
        free(z);
        return voxa__error(VOXA_ENOMEM, "zarr: out of memory");
    }
    memcpy(z->path, path, n);
    z->path[n] = 0;
    for (int i = 0; i < ZLOCKS; i++) pthread_mutex_init(&z->locks[i], NULL);
    *out = z;
    return VOXA_OK;
}

void voxa_zarr_close(voxa_zarr *z) {
    if (!z) return;
    for (int i = 0; i < ZLOCKS; i++) pthread_mutex_destroy(&z->locks[i]);
    free(z->path);
    free(z);
}

/* Make `path` an empty folder for a new array or image: create it, or,
 * when it already holds a Zarr node (metadata file at its top), remove what
 * is inside (as zarr-python's overwrite=True), so stale chunks of an
 * earlier array never read as this one's. A non-empty folder that is not a
 * Zarr node is refused, never emptied. */
static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    if (ftw->level == 0) return 0; /* keep the folder itself */
    return remove(p) != 0 ? errno : 0;
}

voxa_status voxa__zarr_clear(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return voxa__zarr_mkdirs(path);
    VOXA_FAIL_IF(!S_ISDIR(sb.st_mode), VOXA_EIO, "'%s' exists and is not a folder", path);
    static const char *meta[] = {"zarr.json", ".zarray", ".zgroup", ".zattrs"};
    int is_zarr = 0, empty = 1;
    char buf[4096];
    for (int i = 0; i < 4; i++) {
        snprintf(buf, sizeof buf, "%s/%s", path, meta[i]);
        is_zarr |= stat(buf, &sb) == 0;
    }
    DIR *d = opendir(path);
    VOXA_FAIL_IF(!d, VOXA_EIO, "cannot open folder '%s': %s", path, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    if (empty) return VOXA_OK;
    VOXA_FAIL_IF(!is_zarr, VOXA_EIO,
                 "'%s' is a folder with files but not a Zarr array or group: not overwriting it",
                 path);
    int r = nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    VOXA_FAIL_IF(r != 0, VOXA_EIO, "cannot clear the old array in '%s': %s", path,
                 strerror(r > 0 ? r : errno));
    return VOXA_OK;
}

static int file_exists(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int is_group(const char *text, size_t len) {
    cJSON *r = cJSON_ParseWithLength(text, len);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "node_type");
    int g = cJSON_IsString(t) && !strcmp(t->valuestring, "group");
    cJSON_Delete(r);
    return g;
}

voxa_status voxa_zarr_open(const char *path, int writable, voxa_zarr **out) {
    VOXA_FAIL_IF(!path || !*path || !out, VOXA_EINVAL, "zarr_open: NULL argument");
    *out = NULL;
    voxa_zarr *z = NULL;
    char *text = NULL;
    size_t len = 0;
    char meta[4096];
    voxa_status st = handle_new(path, &z);
    if (st) return st;
    for (int hop = 0; hop < 2; hop++) {
        snprintf(meta, sizeof meta, "%s/zarr.json", z->path);
        int v3 = file_exists(meta);
        if (!v3) snprintf(meta, sizeof meta, "%s/.zarray", z->path);
        if (!v3 && !file_exists(meta)) {
            char grp[4096];
            snprintf(grp, sizeof grp, "%s/.zgroup", z->path);
            VOXA_GOTO_IF(!file_exists(grp), VOXA_EIO,
                         "'%s' is not a Zarr array (no zarr.json or .zarray)", z->path);
        } else {
            if ((st = voxa__zarr_slurp(meta, &text, &len, 0))) goto done;
            /* A v3 group: follow OME multiscales below. */
            if (!(v3 && is_group(text, len))) break;
            free(text);
            text = NULL;
        }
        VOXA_GOTO_IF(hop, VOXA_EFORMAT, "'%s': the OME dataset is not an array", z->path);
        char sub[512];
        if ((st = voxa__zarr_ome_first(z->path, v3 ? 3 : 2, sub, sizeof sub))) goto done;
        char next[4096];
        int k = snprintf(next, sizeof next, "%s/%s", z->path, sub);
        VOXA_GOTO_IF(k < 0 || (size_t)k >= sizeof next, VOXA_EINVAL, "path too long");
        char *np = strdup(next);
        VOXA_GOTO_IF(!np, VOXA_ENOMEM, "zarr: out of memory");
        free(z->path);
        z->path = np;
    }
    if ((st = voxa__zarr_parse(z, text, len, meta))) goto done;
    z->writable = writable;
    *out = z;
    z = NULL;
done:
    free(text);
    voxa_zarr_close(z);
    return st;
}

static voxa_status set_options(voxa_zarr *z, const voxa_zarr_options *o) {
    z->format = o->format ? o->format : 3;
    VOXA_FAIL_IF(z->format != 2 && z->format != 3, VOXA_EINVAL,
                 "zarr options: format %d (expected 2 or 3)", o->format);
    int64_t dflt = z->ndim == 1 ? (1 << 20) : z->ndim == 2 ? 1024 : z->ndim == 3 ? 128 : 32;
    int any_shard = 0;
    for (int d = 0; d < z->ndim; d++) any_shard |= o->shards[d] != 0;
    VOXA_FAIL_IF(any_shard && z->format == 2, VOXA_EINVAL,
                 "zarr options: sharding needs format 3");
    for (int d = 0; d < z->ndim; d++) {
        int64_t c = o->chunks[d];
        VOXA_FAIL_IF(c < 0, VOXA_EINVAL, "zarr options: chunks[%d] = %lld", d, (long long)c);
        if (!c) c = z->shape[d] < dflt ? (z->shape[d] ? z->shape[d] : 1) : dflt;
        z->chunks[d] = c;
        int64_t s = any_shard ? o->shards[d] : c;
        VOXA_FAIL_IF(s <= 0 || s % c, VOXA_EINVAL,
                     "zarr options: shards[%d] = %lld is not a positive multiple of the chunk %lld",
                     d, (long long)s, (long long)c);
        z->unit[d] = s;
        z->grid[d] = (z->shape[d] + s - 1) / s;
    }
    z->sharded = any_shard;
    zchain *c = &z->chain;
    c->fortran = o->fortran_order && z->ndim > 1;
    c->big_endian = o->big_endian && z->es > 1;
    zbb *b = &c->bb[0];
    memset(b, 0, sizeof *b);
    switch (o->codec) {
    case VOXA_ZARR_RAW: break;
    case VOXA_ZARR_BLOSC:
        b->kind = ZK_BLOSC;
        b->level = o->level ? o->level : 5;
        snprintf(b->cname, sizeof b->cname, "%s", o->blosc_cname ? o->blosc_cname : "lz4");
        VOXA_FAIL_IF(blosc_compname_to_compcode(b->cname) < 0, VOXA_EINVAL,
                     "zarr options: blosc_cname '%s' (expected lz4, lz4hc, zstd, zlib, blosclz)",
                     b->cname);
        VOXA_FAIL_IF(o->blosc_shuffle < 0 || o->blosc_shuffle > 2, VOXA_EINVAL,
                     "zarr options: blosc_shuffle %d", o->blosc_shuffle);
        b->shuffle = o->blosc_shuffle == 0 ? 1 : o->blosc_shuffle == 1 ? 0 : 2;
        b->typesize = (int)z->es;
        break;
    case VOXA_ZARR_ZSTD: b->kind = ZK_ZSTD; b->level = o->level ? o->level : 3; break;
    case VOXA_ZARR_GZIP: b->kind = ZK_GZIP; b->level = o->level ? o->level : 6; break;
    case VOXA_ZARR_ZLIB:
        VOXA_FAIL_IF(z->format == 3, VOXA_EINVAL, "zarr options: zlib is a v2 codec; use gzip");
        b->kind = ZK_ZLIB;
        b->level = o->level ? o->level : 6;
        break;
    default: return voxa__error(VOXA_EINVAL, "zarr options: codec %d", (int)o->codec);
    }
    VOXA_FAIL_IF(o->level < 0 || o->level > (b->kind == ZK_ZSTD ? 22 : 9), VOXA_EINVAL,
                 "zarr options: level %d out of range", o->level);
    c->nbb = o->codec != VOXA_ZARR_RAW;
    if (z->format == 3) { /* the index as zarr-python writes it: little endian + crc32c */
        z->index_chain.nbb = 1;
        z->index_chain.bb[0].kind = ZK_CRC32C;
    }
    VOXA_FAIL_IF(o->separator && o->separator != '/' && o->separator != '.', VOXA_EINVAL,
                 "zarr options: separator '%c' (expected '/' or '.')", o->separator);
    z->v2_keys = z->format == 2;
    z->sep = o->separator ? o->separator : z->format == 2 ? '.' : '/';
    z->fsync = o->fsync;
    if (o->dimension_names && z->format == 3)
        for (int d = 0; d < z->ndim; d++) {
            const char *n = o->dimension_names[d];
            VOXA_FAIL_IF(!n || !*n || strlen(n) >= sizeof z->dim_names[d], VOXA_EINVAL,
                         "zarr options: dimension_names[%d] is empty or longer than %zu", d,
                         sizeof z->dim_names[d] - 1);
            snprintf(z->dim_names[d], sizeof z->dim_names[d], "%s", n);
        }
    /* Round the fill value through the metadata writer and parser, so that
     * it is cast exactly as a reader will cast it. */
    char *text = NULL;
    z->fillv = o->fill_value;
    VOXA_CHECK(voxa__zarr_format_meta(z, &text));
    voxa_zarr tmp;
    memset(&tmp, 0, sizeof tmp);
    voxa_status st = voxa__zarr_parse(&tmp, text, strlen(text), "zarr options");
    free(text);
    if (st) { /* the parser named the field ("zarr options: fill_value ...") */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", voxa_last_error());
        return voxa__error(VOXA_EINVAL, "%s", msg);
    }
    memcpy(z->fill, tmp.fill, sizeof z->fill);
    z->fillv = tmp.fillv;
    return VOXA_OK;
}

voxa_status voxa_zarr_create(const char *path, voxa_dtype dtype, int ndim, const int64_t *shape,
                             const voxa_zarr_options *opts, voxa_zarr **out) {
    VOXA_FAIL_IF(!path || !*path || !out || (ndim && !shape), VOXA_EINVAL,
                 "zarr_create: NULL argument");
    VOXA_FAIL_IF(dtype < 0 || dtype >= VOXA_NDTYPES, VOXA_EINVAL, "zarr_create: dtype %d",
                 (int)dtype);
    VOXA_FAIL_IF(ndim < 0 || ndim > VOXA_MAXDIM, VOXA_EINVAL, "zarr_create: ndim %d", ndim);
    for (int d = 0; d < ndim; d++)
        VOXA_FAIL_IF(shape[d] < 0 || shape[d] > ((int64_t)1 << 50), VOXA_EINVAL,
                     "zarr_create: shape[%d] = %lld", d, (long long)shape[d]);
    *out = NULL;
    voxa_zarr_options dflt;
    memset(&dflt, 0, sizeof dflt);
    if (!opts) opts = &dflt;
    voxa_zarr *z = NULL;
    char *text = NULL;
    voxa_status st = handle_new(path, &z);
    if (st) return st;
    z->dtype = dtype;
    z->es = voxa_dtype_size(dtype);
    z->ndim = ndim;
    for (int d = 0; d < ndim; d++) z->shape[d] = shape[d];
    if ((st = set_options(z, opts))) goto done;
    if ((st = voxa__zarr_clear(z->path))) goto done;
    if ((st = voxa__zarr_format_meta(z, &text))) goto done;
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/%s", z->path, z->format == 3 ? "zarr.json" : ".zarray");
    if ((st = voxa__zarr_write_file(meta, text, strlen(text), z->fsync))) goto done;
    z->writable = 1;
    *out = z;
    z = NULL;
done:
    free(text);
    voxa_zarr_close(z);
    return st;
}

voxa_status voxa_zarr_get_info(const voxa_zarr *z, voxa_zarr_info *info) {
    VOXA_FAIL_IF(!z || !info, VOXA_EINVAL, "zarr_get_info: NULL argument");
    memset(info, 0, sizeof *info);
    info->format = z->format;
    info->dtype = z->dtype;
    info->ndim = z->ndim;
    for (int d = 0; d < z->ndim; d++) {
        info->shape[d] = z->shape[d];
        info->chunks[d] = z->chunks[d];
        info->write_unit[d] = z->unit[d];
    }
    info->sharded = z->sharded;
    info->big_endian = z->chain.big_endian;
    info->fortran_order = z->chain.fortran;
    info->fill_value = z->fillv;
    return VOXA_OK;
}

voxa_status voxa_zarr_parse_metadata(const char *text, size_t len, voxa_zarr_info *info) {
    VOXA_FAIL_IF(!text || !info, VOXA_EINVAL, "zarr_parse_metadata: NULL argument");
    voxa_zarr *z = calloc(1, sizeof *z);
    VOXA_FAIL_IF(!z, VOXA_ENOMEM, "zarr: out of memory");
    voxa_status st = voxa__zarr_parse(z, text, len, "metadata");
    if (!st) st = voxa_zarr_get_info(z, info);
    free(z);
    return st;
}

voxa_status voxa_zarr_unit_exists(voxa_zarr *z, const int64_t *idx, int *exists) {
    VOXA_FAIL_IF(!z || !exists || (z->ndim && !idx), VOXA_EINVAL, "zarr_unit_exists: NULL argument");
    for (int d = 0; d < z->ndim; d++)
        VOXA_FAIL_IF(idx[d] < 0 || idx[d] >= z->grid[d], VOXA_EINVAL,
                     "zarr_unit_exists: idx[%d] = %lld outside the file grid (0..%lld)", d,
                     (long long)idx[d], (long long)z->grid[d] - 1);
    char name[4096];
    VOXA_CHECK(voxa__zarr_key(z, idx, name, sizeof name));
    *exists = file_exists(name);
    return VOXA_OK;
}

voxa_status voxa__zarr_set_dim_names(voxa_zarr *z, const char *const *names) {
    if (z->format != 3) return VOXA_OK;
    for (int d = 0; d < z->ndim; d++)
        snprintf(z->dim_names[d], sizeof z->dim_names[d], "%s", names[d]);
    char *text = NULL, meta[4096];
    VOXA_CHECK(voxa__zarr_format_meta(z, &text));
    snprintf(meta, sizeof meta, "%s/zarr.json", z->path);
    voxa_status st = voxa__zarr_write_file(meta, text, strlen(text), z->fsync);
    free(text);
    return st;
}
