/* Stores: the kinds share one struct; each kind's file implements the
 * region read/write it needs (not installed). */
#ifndef VOXA_STORE_INTERNAL_H
#define VOXA_STORE_INTERNAL_H

#include "internal.h"
#include "voxa/stream.h"

/* NPY: a file holding the array at an offset, read and written with
 * pread/pwrite (.npy files, and TIFF outputs laid out by tiff_layout.c);
 * TIFF: a TIFF input read through the region reader. */
typedef enum { STORE_VIEW, STORE_MEMORY, STORE_NPY, STORE_ZARR, STORE_TIFF } store_kind;

struct voxa_store {
    store_kind kind;
    voxa_dtype t;
    int ndim;
    int64_t shape[VOXA_MAXDIM];
    voxa_array view;   /* VIEW, MEMORY: the array (MEMORY owns it) */
    char *path;        /* the file (created stores: where commit publishes) */
    int created;       /* an output: removed unless committed */
    int committed;
    /* NPY */
    int fd;
    int64_t offset;    /* of the data */
    int64_t estride[VOXA_MAXDIM]; /* file layout, in elements */
    int swap;          /* the file's byte order is not native */
    char tmp[4096];    /* created .npy or .tif: the temporary being written */
    /* ZARR */
    voxa_zarr *zarr;
    int ome;           /* an OME-Zarr image: group metadata written at commit */
    int64_t unit[VOXA_MAXDIM]; /* the array's file unit (chunk or shard) */
    double spacing[VOXA_MAXDIM];
    int has_spacing;
    voxa_store_options opts; /* created stores: as given (chunks, pyramid) */
    /* TIFF */
    voxa_tiff *tiff;
};

/* Zarr by chunks (store_zarr.c): outputs of 2 or 3 dimensions are OME-Zarr
 * images whose dataset "0" is written block by block and whose group
 * metadata, written at commit, marks them complete. */
int voxa__is_zarr_path(const char *path);
voxa_status voxa__store_zarr_open(voxa_store *s, const char *path);
voxa_status voxa__store_zarr_create(voxa_store *s, const char *path, const int64_t *chunks);
voxa_status voxa__store_zarr_commit(voxa_store *s);
void voxa__store_zarr_close(voxa_store *s);
/* The Zarr options of this output's arrays (level 0 and the pyramid's). */
void voxa__store_zarr_options(const voxa_store *s, const int64_t *chunks, voxa_zarr_options *o);
/* Levels 1..opts.pyramid of an OME output, each made from the level
 * before, one output chunk at a time (store_pyramid.c). */
voxa_status voxa__store_pyramid(voxa_store *s);
/* Whether the output region [lo, lo + shape) was written by an earlier,
 * interrupted run (every file unit it covers exists): resume skips it. */
int voxa__store_done(voxa_store *s, const int64_t *lo, const int64_t *shape);

/* TIFF (store_tiff.c): inputs read by strips/tiles (voxa_tiff_read_region;
 * whole when the region reader refuses the pixel layout), outputs written
 * as an uncompressed BigTIFF laid out in advance, moved like .npy data. */
int voxa__is_tiff_path(const char *path);
voxa_status voxa__store_tiff_open(voxa_store *s, const char *path);
voxa_status voxa__store_tiff_create(voxa_store *s, const char *path);

/* .npy by regions: pread/pwrite of the runs along the file's contiguous
 * axis (store_npy.c). */
voxa_status voxa__store_npy_open(voxa_store *s, const char *path);
voxa_status voxa__store_npy_create(voxa_store *s, const char *path);
/* The temporary of a created file of this kind: the data (C order) at
 * data_offset, the file sized to hold them; the caller writes the header. */
voxa_status voxa__store_raw_begin(voxa_store *s, const char *path, int64_t data_offset);
voxa_status voxa__store_npy_read(voxa_store *s, const int64_t *lo, voxa_array *dst);
voxa_status voxa__store_npy_write(voxa_store *s, const int64_t *lo, const voxa_array *src);
voxa_status voxa__store_npy_commit(voxa_store *s);
void voxa__store_npy_close(voxa_store *s);

/* Labelling by blocks, merged across faces (label_merge.c). */
voxa_status voxa__stream_label(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                               voxa_store *out, const voxa_progress *progress, int64_t *count);

/* Block number i of a plan: its output region [lo, lo + shape). */
void voxa__block_region(const voxa_stream_plan *p, int64_t i, int64_t *lo, int64_t *shape);
/* Its input region [ilo, ilo + ishape): grown by the halo, clamped at the
 * volume, widened inwards to a full grown block's width where clamped. */
void voxa__block_input(const voxa_stream_plan *p, const int64_t *lo, const int64_t *shape,
                       int64_t *ilo, int64_t *ishape);
/* A C-contiguous view of `shape` over buf's memory (sized for the largest). */
voxa_array voxa__shaped(const voxa_array *buf, int ndim, const int64_t *shape);

#endif
