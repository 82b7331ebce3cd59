/* Shared by the Zarr files: zarr_meta.c (metadata JSON), zarr_codec.c (codec
 * chains), zarr_store.c (handles, keys, atomic files), zarr_region.c (region
 * read/write), zarr_shard.c (sharding_indexed), zarr_ome.c (OME-NGFF).
 *
 * A handle is immutable after open/create except for the lock table, so
 * reads need no lock; a write that must read-modify-write a file holds the
 * lock its file index hashes to. */
#ifndef VOXA_ZARR_INTERNAL_H
#define VOXA_ZARR_INTERNAL_H

#include "internal.h"

#include <pthread.h>
#include <stdio.h>

#define ZMAX_BB 6      /* bytes->bytes codecs in one chain */
#define ZLOCKS 64      /* write locks per handle (by file index hash) */
#define ZMAX_META (64 << 20) /* largest metadata file we read */

typedef enum zkind { ZK_BLOSC = 1, ZK_ZSTD, ZK_GZIP, ZK_ZLIB, ZK_CRC32C } zkind;

typedef struct zbb {      /* one bytes->bytes codec */
    zkind kind;
    int level;            /* clevel / level */
    int shuffle;          /* blosc: 0 none, 1 byte, 2 bit */
    int typesize;         /* blosc */
    int blocksize;        /* blosc (0 = automatic) */
    char cname[16];       /* blosc compressor */
} zbb;

typedef struct zchain {   /* array->array, array->bytes, bytes->bytes */
    int fortran;          /* F order (v2 order "F" / v3 transpose reversing the axes) */
    int big_endian;       /* bytes in the file are big endian */
    int nbb;
    zbb bb[ZMAX_BB];
} zchain;

struct voxa_zarr {
    char *path;           /* the array's folder */
    int format;           /* 2 or 3 */
    voxa_dtype dtype;
    size_t es;            /* bytes per element */
    int ndim;
    int64_t shape[VOXA_MAXDIM];
    int64_t chunks[VOXA_MAXDIM]; /* (inner) chunk shape */
    int64_t unit[VOXA_MAXDIM];   /* file unit: shard shape or chunks */
    int64_t grid[VOXA_MAXDIM];   /* files along each axis */
    zchain chain;         /* the chunk codecs (inner chunks when sharded) */
    int sharded;
    zchain index_chain;   /* shard index codecs */
    int index_at_start;
    unsigned char fill[8];/* fill value as native bytes */
    double fillv;
    char sep;             /* key separator */
    int v2_keys;          /* keys without the "c" prefix (v2, or v3 "v2" encoding) */
    int writable, fsync;
    char dim_names[VOXA_MAXDIM][32]; /* v3 dimension_names to write ("" = none) */
    pthread_mutex_t locks[ZLOCKS];
};

/* ---- metadata (zarr_meta.c) ---------------------------------------------- */
/* Parse array metadata (v2 .zarray text or v3 zarr.json text) into z (the
 * fields above except path/writable/fsync/locks). `where` names the file in
 * messages. */
voxa_status voxa__zarr_parse(voxa_zarr *z, const char *text, size_t len, const char *where);
/* Metadata text for z (malloc'd, NUL-terminated). */
voxa_status voxa__zarr_format_meta(const voxa_zarr *z, char **text);
/* Read a whole small file (metadata) into a NUL-terminated buffer; *text is
 * NULL and status OK when the file does not exist and `missing_ok`. */
voxa_status voxa__zarr_slurp(const char *path, char **text, size_t *len, int missing_ok);

/* ---- codecs (zarr_codec.c) ----------------------------------------------- */
/* Decode `len` bytes into `out` (exactly `nbytes` bytes, the chunk in C
 * order of `shape`, native byte order). `name` names the chunk in messages. */
voxa_status voxa__zarr_decode(const voxa_zarr *z, const zchain *c, const void *buf, size_t len,
                              void *out, size_t nbytes, int ndim, const int64_t *shape,
                              const char *name);
/* Encode `nbytes` of native C-order voxels (may be modified in place) into a
 * malloc'd buffer *enc of *enc_len bytes. */
voxa_status voxa__zarr_encode(const voxa_zarr *z, const zchain *c, void *data, size_t nbytes,
                              int ndim, const int64_t *shape, void **enc, size_t *enc_len,
                              const char *name);
uint32_t voxa__crc32c(const void *buf, size_t len);

/* ---- files (zarr_store.c) -------------------------------------------------- */
/* Path of the file with grid index `idx` (the chunk or shard key). */
voxa_status voxa__zarr_key(const voxa_zarr *z, const int64_t *idx, char *buf, size_t n);
/* Read a whole chunk file; *buf NULL (status OK) if it does not exist. */
voxa_status voxa__zarr_read_file(const char *path, void **buf, size_t *len);
/* Write a file atomically (temp + rename), creating parent folders, with
 * fsync of the file and its folder when `sync`. */
voxa_status voxa__zarr_write_file(const char *path, const void *buf, size_t len, int sync);
/* Give a v3 array dimension_names (OME-NGFF 0.5 requires them): rewrites its zarr.json. */
voxa_status voxa__zarr_set_dim_names(voxa_zarr *z, const char *const *names);
/* Create `path`, or empty it when it holds an old Zarr node (see zarr_store.c). */
voxa_status voxa__zarr_clear(const char *path);
/* mkdir -p */
voxa_status voxa__zarr_mkdirs(const char *dir);

/* ---- sharding (zarr_shard.c) ------------------------------------------------ */
/* Split a shard file into inner chunks: offs/lens (n inner chunks, C order of
 * the shard's chunk grid); missing chunks get off = len = UINT64_MAX. */
voxa_status voxa__zarr_shard_index(const voxa_zarr *z, const void *buf, size_t len,
                                   uint64_t *offs, uint64_t *lens, int64_t n, const char *name);
/* The same from the index bytes alone (voxa__zarr_shard_index_bytes(z, n) of
 * them), `len` being the shard file's size. */
voxa_status voxa__zarr_shard_index_at(const voxa_zarr *z, const void *index, size_t len,
                                      uint64_t *offs, uint64_t *lens, int64_t n,
                                      const char *name);
size_t voxa__zarr_shard_index_bytes(const voxa_zarr *z, int64_t n);
/* Assemble a shard from encoded inner chunks (NULL = missing). */
voxa_status voxa__zarr_shard_build(const voxa_zarr *z, void *const *chunks, const size_t *lens,
                                   int64_t n, void **out, size_t *out_len, const char *name);

/* ---- helpers ----------------------------------------------------------------- */
/* Fill a strided view with the fill value. */
void voxa__zarr_fill_view(const voxa_zarr *z, voxa_array *v);
/* Elements in a shape. */
static inline int64_t zprod(int n, const int64_t *s) {
    int64_t p = 1;
    for (int i = 0; i < n; i++) p *= s[i];
    return p;
}

#endif
