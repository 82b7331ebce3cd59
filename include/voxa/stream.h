/* voxa stream: run any op on volumes larger than memory, block by block.
 *
 * A store is an array on disk (or in memory) read and written by regions:
 * .npy files by pread/pwrite of the region's rows, TIFF inputs by strips or
 * tiles and TIFF outputs as BigTIFF written in place, Zarr arrays by chunks
 * (outputs of 2-3 dimensions as OME-Zarr images with optional pyramid levels,
 * marked complete at commit; a rerun resumes an interrupted one). The
 * executor walks the output in blocks; for each it reads the input block
 * grown by the op's halo (clamped at the volume's edge, so the op's border
 * rule acts at the true edge only), runs the op through the op interface and
 * writes the block. Labelling, a global op, runs in three passes instead: label
 * each block, union the labels that touch across block faces, renumber in
 * scipy's raster order of each component's first voxel. Peak memory is set by
 * the block, the halo and the label tables, never by the volume. */
#ifndef VOXA_STREAM_H
#define VOXA_STREAM_H

#include "core.h"
#include "op.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct voxa_store voxa_store;

/** Open an array file for reading by regions (.npy by pread, .zarr by
 *  chunks, TIFF by strips or tiles; TIFF pages of several samples or 1 bit
 *  are read whole into memory). */
VOXA_API voxa_status voxa_store_open(const char *path, voxa_store **s);
/** Create an output array at `path` (.npy: a temporary file written by
 *  regions, published under `path` by voxa_store_commit; .zarr: chunks
 *  written as they come, each atomically, the OME group metadata at commit -
 *  an incomplete output of the same dtype, shape and chunks is resumed, not
 *  overwritten; .tif/.tiff: an uncompressed BigTIFF written in place, see
 *  voxa_store_create_opts). `chunks` (may be NULL) is the storage chunking. */
VOXA_API voxa_status voxa_store_create(const char *path, voxa_dtype t, int ndim,
                                       const int64_t *shape, const int64_t *chunks,
                                       voxa_store **s);
/** How voxa_store_create_opts makes an output; zero-initialised means the
 *  defaults. Zarr outputs of 2-3 dimensions are OME-Zarr images; with
 *  `pyramid` N > 0 their levels 1..N (each half the previous per axis,
 *  rounded up) are written at commit, block by block from the level before,
 *  before the metadata that marks the image complete. */
typedef enum voxa_pyramid_mode {
    VOXA_PYRAMID_AUTO = 0,  /* STRIDE for bool and integer outputs, else MEAN */
    VOXA_PYRAMID_MEAN = 1,  /* mean of each 2x..x2 block (integers: rounded half to even) */
    VOXA_PYRAMID_STRIDE = 2 /* the block's first voxel (labels stay labels) */
} voxa_pyramid_mode;
typedef struct voxa_store_options {
    int64_t chunks[VOXA_MAXDIM]; /* Zarr storage chunks; 0 on an axis: the default */
    int zarr_format;             /* 2 (OME-NGFF 0.4) or 3 (0.5); 0 = 3 */
    int pyramid;                 /* Zarr 2-3-D outputs: levels after "0" (0..16) */
    voxa_pyramid_mode pyramid_mode;
} voxa_store_options;
/** voxa_store_create with options (NULL = defaults). A .tif/.tiff output is
 *  an uncompressed BigTIFF written by regions in place (temporary file,
 *  renamed at commit). Errors: EINVAL (an option, naming it; a pyramid on a
 *  file that is not a 2-3-D Zarr output), EIO, EUNSUPPORTED. */
VOXA_API voxa_status voxa_store_create_opts(const char *path, voxa_dtype t, int ndim,
                                            const int64_t *shape, const voxa_store_options *o,
                                            voxa_store **s);
/** A store over a caller's array view (borrowed; nothing is copied). */
VOXA_API voxa_status voxa_store_wrap(voxa_array *a, voxa_store **s);
/** Dtype, ndim and shape of a store. */
VOXA_API void voxa_store_info(const voxa_store *s, voxa_dtype *t, int *ndim, int64_t *shape);
/** A view with the store's dtype, ndim and shape whose data must not be
 *  read: for voxa_op_check / voxa_op_output before a streamed run. */
VOXA_API voxa_array voxa_store_meta(const voxa_store *s);
/** The unit a chunked store (Zarr) decodes whole, chunk or shard: regions
 *  aligned to it decode each unit once. EUNSUPPORTED for stores read by
 *  rows (.npy, TIFF, memory). */
VOXA_API voxa_status voxa_store_chunks(const voxa_store *s, int64_t *chunks);
/** Voxel spacing of a store (an OME-Zarr input's scale): EUNSUPPORTED when
 *  it has none. */
VOXA_API voxa_status voxa_store_spacing(const voxa_store *s, double *spacing);
/** Spacing an output records (OME-Zarr scale), e.g. the input's. */
VOXA_API voxa_status voxa_store_set_spacing(voxa_store *s, const double *spacing);
/** Copy the region starting at `lo` with dst's shape into dst (any strides). */
VOXA_API voxa_status voxa_store_read(voxa_store *s, const int64_t *lo, voxa_array *dst);
/** Write src (any strides) at region start `lo`. */
VOXA_API voxa_status voxa_store_write(voxa_store *s, const int64_t *lo, const voxa_array *src);
/** Publish a created store under its path (flushed to disk first). */
VOXA_API voxa_status voxa_store_commit(voxa_store *s);
/** Close; a created store that was not committed is removed. NULL is allowed. */
VOXA_API void voxa_store_close(voxa_store *s);

/** How a streamed run is cut. Zero-initialised means the defaults. */
typedef struct voxa_stream_options {
    int64_t block[VOXA_MAXDIM]; /* output block shape; 0 on an axis: chosen */
    int64_t mem_limit;          /* bytes for blocks in flight (0: 1 GiB) */
    voxa_progress progress;     /* called after each block */
    int workers;                /* blocks in flight at once (0: chosen) */
} voxa_stream_options;

/** What a run will do (voxa_stream_plan) or did. */
typedef struct voxa_stream_plan {
    int ndim;
    int64_t shape[VOXA_MAXDIM];  /* the output's shape */
    int64_t block[VOXA_MAXDIM];  /* output block shape */
    int64_t grid[VOXA_MAXDIM];   /* blocks per axis */
    int64_t nblocks;
    int64_t halo_lo[VOXA_MAXDIM], halo_hi[VOXA_MAXDIM];
    int global;                  /* labelled by blocks and merged (no halo) */
    int whole;                   /* the op needs the whole volume in memory
                                    (a global op without a merge: edt, roi) */
    int streamed;                /* run by the op's own streamed passes (edt,
                                    fill holes, roi, paste; docs/stream.md) */
    int workers;                 /* blocks in flight, each read, run, written
                                    by its own thread */
    int op_threads;              /* threads of the op inside each worker */
    int64_t block_bytes;         /* working set of one block in flight */
    int64_t table_bytes;         /* held besides the blocks (0 today: label keeps
                                    its face layers in a scratch file) */
    int64_t peak_bytes;          /* estimated working memory:
                                    workers x block_bytes + table_bytes */
    int64_t out_bytes;           /* size of the output */
    voxa_dtype out_dtype;
} voxa_stream_plan;

/** Plan a run of `a` on the input store (NULL for ops without input):
 *  the output's shape, the block shape (from options: the largest blocks
 *  whose input + halo + output fit mem_limit), the halo, the peak memory. */
VOXA_API voxa_status voxa_stream_plan_make(const voxa_args *a, voxa_store *in,
                                           const voxa_stream_options *o, voxa_stream_plan *p);
/** Voxels the op processes per output voxel: the blocks grown by their halo
 *  (clipped at the volume's edges) over the output; 1 without a halo. A
 *  small mem_limit with a wide halo (big structuring elements, PSFs) can
 *  make it large: the halo is read and processed again by every block. */
VOXA_API double voxa_stream_plan_overhead(const voxa_stream_plan *p);
/** Describe a plan in a few lines of text (for --dry-run). */
VOXA_API voxa_status voxa_stream_plan_text(const voxa_stream_plan *p, char *buf, size_t n);
/** Storage chunks for a plan's output (Zarr): each divides the block
 *  along its axis (so every block writes whole chunks and a rerun can skip
 *  the blocks written), at most 512 voxels per axis where a divisor allows;
 *  with a pyramid, at most a 2^ndim-th of a block, so making a level
 *  (2^ndim chunks of the level before + one chunk) stays within a block. */
VOXA_API void voxa_stream_chunks(const voxa_stream_plan *p, int pyramid, int64_t *chunks);
/** Run `a` from `in` (NULL for ops without input) into `out` (created with
 *  the plan's dtype and shape), block by block. The result equals
 *  voxa_op_run on the whole volume (RL: up to its approximate halo). *count
 *  (may be NULL) receives the op's count. Does not commit `out`. */
VOXA_API voxa_status voxa_stream_run(const voxa_args *a, voxa_store *in, voxa_store *out,
                                     const voxa_stream_options *o, int64_t *count);

/** Where the last voxa_stream_run on this thread spent its time (seconds of
 *  wall clock; read/op/write are summed over the workers, so with W workers
 *  they add up to about W x the wall time). Label: pass 1 (label blocks),
 *  merge (face pairs and numbering), pass 3 (relabel blocks). */
typedef struct voxa_stream_stats {
    double wall, read, op, write;
    double label_blocks, label_merge, label_relabel;
    int workers;
} voxa_stream_stats;
VOXA_API void voxa_stream_last_stats(voxa_stream_stats *s);

/* ---- labelling by blocks: the steps, for schedulers (Dask) ---------------- */

/** Structure flags (3^ndim bytes, C order) of a `label` op's arguments: its
 *  `structure`, else generate_binary_structure(ndim, connectivity). */
VOXA_API voxa_status voxa_label_structure(const voxa_args *a, int ndim, unsigned char *st);

/** First voxel of every label of a block labelled alone (`ids`: int64,
 *  C-contiguous, labels 1..n in the block's raster order, 0 background):
 *  first[k] = raster index in the whole volume of shape `whole` of label
 *  k+1's first voxel; the block starts at `origin`. */
VOXA_API voxa_status voxa_label_first(const voxa_array *ids, int64_t n, const int64_t *origin,
                                      const int64_t *whole, int64_t *first);

/** Pairs of ids joined across a face. `ids`: int64 C-contiguous region of
 *  global ids (0 background) holding two layers along `axis` (the last
 *  layer of the lower block, then the first of the upper one) and, on the
 *  other axes, the lower block's extent [own_lo, own_hi) grown by one voxel
 *  where the volume allows; region_lo is the region's first voxel in the
 *  block-independent coordinates used by own_lo/own_hi. Every voxel of the
 *  lower layer inside [own_lo, own_hi) is joined to its neighbours in the
 *  upper layer by the structure `st`. *pairs (malloc'ed, free() it) receives
 *  *npairs rows (a, b) of ids, duplicates removed. */
VOXA_API voxa_status voxa_label_face_pairs(const voxa_array *ids, int axis,
                                           const int64_t *region_lo, const int64_t *own_lo,
                                           const int64_t *own_hi, const unsigned char *st,
                                           int64_t **pairs, int64_t *npairs);

/** Number the components: ids 1..n with first voxels first[0..n-1], joined
 *  by `npairs` pairs (a, b); final[k] (n entries) receives the scipy label
 *  of id k+1: components numbered in raster order of their first voxel.
 *  *ncomponents receives the count. Memory: 16 bytes per id. */
VOXA_API voxa_status voxa_label_resolve(int64_t n, const int64_t *first, const int64_t *pairs,
                                        int64_t npairs, int64_t *final, int64_t *ncomponents);

#ifdef __cplusplus
}
#endif
#endif
