/* voxa zarr: chunked arrays on disk (Zarr v2 and v3, OME-NGFF metadata).
 *
 * The storage layer of out-of-core runs: open or create an array folder,
 * read any region into a strided view (missing chunks read as the fill
 * value), write any region (whole chunks are encoded directly, partial ones
 * read-modify-write). Every chunk (or shard) file is written atomically: a
 * temporary name in the same folder, renamed when complete, optionally after
 * fsync of the file and its folder. A handle may be used from many threads
 * at once: reads never block each other; writes that touch the same chunk
 * (or shard) are serialised inside one handle. Two handles (or processes)
 * writing parts of the same chunk at once is not supported.
 *
 * Supported: dtypes bool..float64; little and big endian; v2 compressors
 * blosc (lz4, lz4hc, zstd, zlib, blosclz, snappy if c-blosc has it;
 * shuffle none/byte/bit), zstd, gzip, zlib and none, order C and F,
 * dimension_separator "." and "/"; v3 codecs bytes, blosc, zstd, gzip,
 * crc32c, transpose (C or F permutation only), sharding_indexed (index at
 * the start or the end), chunk_key_encoding default and v2. See docs/zarr.md. */
#ifndef VOXA_ZARR_H
#define VOXA_ZARR_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An open Zarr array (opaque). */
typedef struct voxa_zarr voxa_zarr;

typedef enum voxa_zarr_codec {
    VOXA_ZARR_BLOSC = 0, /* c-blosc 1.x (the default); see blosc_cname, shuffle */
    VOXA_ZARR_RAW = 1,   /* no compression */
    VOXA_ZARR_ZSTD = 2,
    VOXA_ZARR_GZIP = 3,
    VOXA_ZARR_ZLIB = 4 /* v2 only (v3 has no zlib codec) */
} voxa_zarr_codec;

/** Options of voxa_zarr_create; all zero means: format 3, chunks of at most
 *  128 per axis in 3-D (1024 in 2-D, 2^20 in 1-D, 32 in 4-D and more; the
 *  whole axis when shorter), blosc lz4 level 5 with byte
 *  shuffle, little endian, C order, fill value 0, no sharding, the format's
 *  default chunk keys ("c/i/j" for v3, "i.j" for v2), no fsync. */
typedef struct voxa_zarr_options {
    int format;                     /* 2 or 3; 0 = 3 */
    int64_t chunks[VOXA_MAXDIM];    /* chunk shape; 0 = default for that axis */
    int64_t shards[VOXA_MAXDIM];    /* v3: shard shape, a multiple of chunks;
                                       all 0 = no sharding */
    voxa_zarr_codec codec;          /* BLOSC (0), RAW, ZSTD, GZIP, ZLIB */
    int level;                      /* compression level; 0 = codec default
                                       (blosc 5, zstd 3, gzip/zlib 6) */
    const char *blosc_cname;        /* "lz4" (NULL), "lz4hc", "zstd", "zlib", "blosclz" */
    int blosc_shuffle;              /* 0 = byte shuffle (default), 1 = none, 2 = bit */
    int big_endian;                 /* store big endian (">u2" / bytes endian big) */
    int fortran_order;              /* v2: order "F"; v3: a transpose codec */
    double fill_value;              /* missing chunks read as this (cast to the dtype) */
    char separator;                 /* '/' or '.'; 0 = the format's default */
    int fsync;                      /* flush every file and its folder before
                                       the rename that publishes it */
    const char *const *dimension_names; /* v3: ndim names (OME-NGFF 0.5 wants the
                                           axes' names); NULL = none */
} voxa_zarr_options;

/** What an open array is. */
typedef struct voxa_zarr_info {
    int format;                      /* 2 or 3 */
    voxa_dtype dtype;
    int ndim;
    int64_t shape[VOXA_MAXDIM];
    int64_t chunks[VOXA_MAXDIM];     /* (inner) chunk shape */
    int64_t write_unit[VOXA_MAXDIM]; /* the file unit: shard shape, else chunks;
                                        regions aligned to it write without reading */
    int sharded;
    int big_endian;
    int fortran_order;
    double fill_value;               /* as a double (exact for <= 2^53) */
} voxa_zarr_info;

/** Open the array at `path`: a folder holding zarr.json (v3) or .zarray (v2).
 *  A group with OME-NGFF multiscales metadata opens its first (full
 *  resolution) dataset. `writable` non-zero allows voxa_zarr_write.
 *  Errors: EIO (no such folder / metadata file), EFORMAT (malformed or
 *  inconsistent metadata, naming the field), EUNSUPPORTED (codec, dtype or
 *  layout this build does not handle, naming it). Close with voxa_zarr_close. */
VOXA_API voxa_status voxa_zarr_open(const char *path, int writable, voxa_zarr **z);

/** Create an array folder at `path` with the given dtype and shape (ndim
 *  0..8). The folder is made if missing; if it holds a Zarr array or group
 *  already, everything in it is removed first (like zarr-python's
 *  overwrite=True); a non-empty folder that is not Zarr is refused (EIO).
 *  opts may be NULL (defaults above). Errors: EINVAL (naming the option),
 *  EIO. */
VOXA_API voxa_status voxa_zarr_create(const char *path, voxa_dtype dtype, int ndim,
                                      const int64_t *shape, const voxa_zarr_options *opts,
                                      voxa_zarr **z);

/** Release a handle (NULL is allowed). Files are already complete. */
VOXA_API void voxa_zarr_close(voxa_zarr *z);

/** Describe an open array. */
VOXA_API voxa_status voxa_zarr_get_info(const voxa_zarr *z, voxa_zarr_info *info);

/** Read the region starting at `lo` (ndim entries) with out->shape into
 *  `out` (any strides, the array's dtype and ndim). Chunks run in parallel.
 *  Errors: EINVAL (region outside the array, dtype/ndim mismatch), EIO,
 *  EFORMAT (a chunk that is corrupt, truncated or of the wrong size: the
 *  message names the chunk file). */
VOXA_API voxa_status voxa_zarr_read(voxa_zarr *z, const int64_t *lo, voxa_array *out);

/** Write `in` (any strides, the array's dtype and ndim) at `lo`. Chunks or
 *  shards that the region covers whole are encoded and written directly;
 *  others are read, updated and rewritten. Each file is replaced atomically.
 *  Errors: EINVAL, EIO (naming the chunk file: read-only or full folder),
 *  EFORMAT (an existing chunk that must be updated is corrupt). */
VOXA_API voxa_status voxa_zarr_write(voxa_zarr *z, const int64_t *lo, const voxa_array *in);

/** Whether the file (chunk, or shard when sharded) with grid index `idx`
 *  (ndim entries; file i covers [i * write_unit, (i + 1) * write_unit)) exists:
 *  for resuming a run, which skips the files already written (a file exists
 *  only once complete: files are renamed into place). */
VOXA_API voxa_status voxa_zarr_unit_exists(voxa_zarr *z, const int64_t *idx, int *exists);

/** Decode one chunk file (a shard file when sharded) for tests and fuzzing:
 *  `buf`/`len` are the file's bytes, `out` (C-contiguous, the dtype, shape =
 *  write_unit) receives the voxels. Never reads past buf[len-1]. */
VOXA_API voxa_status voxa_zarr_decode_chunk(voxa_zarr *z, const void *buf, size_t len,
                                            voxa_array *out);

/** Parse array metadata text (the content of a zarr.json or .zarray) without
 *  touching the disk; fills *info on success. For tests and fuzzing. */
VOXA_API voxa_status voxa_zarr_parse_metadata(const char *text, size_t len,
                                              voxa_zarr_info *info);

/* ---- OME-NGFF ------------------------------------------------------------ */

/** Write an OME-Zarr image: a group at `path` with multiscales metadata
 *  (OME-NGFF 0.4 on format 2, 0.5 on format 3; axes "y x" or "z y x", type
 *  space, unit `unit` (NULL = "micrometer"), scale `spacing` (NULL = 1 per
 *  axis)) and the array `a` as its dataset "0", plus `levels` - 1 further
 *  levels "1", "2", ..., each half the previous along every axis (rounded
 *  up; mean of each 2x..x2 block, rounded half to even for integers, when
 *  `labels` is 0; the block's first voxel (stride) when `labels` is
 *  non-zero). ndim 2 or 3. opts as voxa_zarr_create (NULL = defaults). */
VOXA_API voxa_status voxa_zarr_write_ome(const char *path, const voxa_array *a,
                                         const double *spacing, const char *unit, int levels,
                                         int labels, const voxa_zarr_options *opts);

/** Only the group metadata of an OME-Zarr image (as voxa_zarr_write_ome
 *  writes it), for writers that stream the levels "0".."levels-1"
 *  themselves (voxa_zarr_create on "<path>/<k>"): write it last, it marks the
 *  image complete. */
VOXA_API voxa_status voxa_zarr_write_ome_metadata(const char *path, int format, int ndim,
                                                  const double *spacing, const char *unit,
                                                  int levels, int fsync);

/** One pyramid step: out (C-contiguous, shape ceil(in.shape / 2)) = the
 *  mean of each 2x..x2 block of `in` (any strides), rounded half to even for
 *  integers, or its first voxel when `labels` (and for bool). Done block-wise (regions at
 *  even offsets), it gives the whole-array result. */
VOXA_API voxa_status voxa_zarr_downsample(const voxa_array *in, voxa_array *out, int labels);

/** Voxel spacing (scale of the first multiscales dataset, times any global
 *  scale) of the OME-Zarr image at `path`, axes as the array's (ndim
 *  entries). Returns EFORMAT if `path` has no OME multiscales metadata or
 *  its axes differ from `ndim`; `unit` (may be NULL, `unit_len` bytes)
 *  receives the first spatial axis's unit or "". */
VOXA_API voxa_status voxa_zarr_spacing(const char *path, int ndim, double *spacing, char *unit,
                                       size_t unit_len);

/** Read a whole array (or an OME image's full resolution) from `path` into a
 *  newly allocated array, as voxa_read does for paths ending in .zarr. */
VOXA_API voxa_status voxa_zarr_read_all(const char *path, voxa_array *out);
/** Write `a` as an OME-Zarr image with one level and default options, as
 *  voxa_write does for .zarr paths; arrays of ndim other than 2 or 3 are
 *  written as a plain Zarr v3 array (no OME metadata). */
VOXA_API voxa_status voxa_zarr_write_all(const char *path, const voxa_array *a);

#ifdef __cplusplus
}
#endif
#endif
