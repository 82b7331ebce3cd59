/* voxa io: .npy and TIFF arrays, CSV tables. Format follows the extension.
 * Writes are atomic: data goes to a temporary file in the destination folder
 * which is renamed over the target only when complete. */
#ifndef VOXA_IO_H
#define VOXA_IO_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read an array from `path` (.npy, .tif/.tiff, .zarr: see voxa/zarr.h) into a newly allocated array
 *  (*out owns its memory; release with voxa_array_free). Errors: EIO (cannot
 *  open/read), EFORMAT (malformed or truncated), EUNSUPPORTED (dtype/layout). */
VOXA_API voxa_status voxa_read(const char *path, voxa_array *out);
/** Write `a` (any strides) to `path`, format by extension, atomically. */
VOXA_API voxa_status voxa_write(const char *path, const voxa_array *a);

VOXA_API voxa_status voxa_npy_read(const char *path, voxa_array *out);
VOXA_API voxa_status voxa_npy_write(const char *path, const voxa_array *a);
/** Parse an in-memory .npy header (magic, version, dict). On success sets
 *  dtype, ndim, shape, *fortran, *swap (data is byte-swapped) and *data_offset.
 *  Never reads past buf[len-1]. */
VOXA_API voxa_status voxa_npy_parse_header(const void *buf, size_t len,
                                           voxa_dtype *dtype, int *ndim,
                                           int64_t *shape, int *fortran,
                                           int *swap, size_t *data_offset);

/** TIFF: 2D (one page) or 3D (pages along axis 0); u8, i8, u16, i16, u32,
 *  i32, u64, i64, f32, f64 (bool written as u8; 1-bit pages read as bool).
 *  Striped or tiled, any libtiff codec, classic or BigTIFF, ImageJ stacks
 *  (also ImageJ's > 4 GB single-IFD "raw contiguous" files). Pages must all
 *  have the same size and type (EFORMAT names the first that differs).
 *  Several samples per pixel add an axis where tifffile puts it: last for
 *  interleaved pixels (..., h, w, s), before (h, w) for separate planes. */
VOXA_API voxa_status voxa_tiff_read(const char *path, voxa_array *out);
/** Write a 2D array as one page or a 3D array as pages along axis 0,
 *  uncompressed, classic TIFF unless the data exceed 2 GiB (then BigTIFF).
 *  Same as voxa_tiff_write_opts(path, a, NULL). */
VOXA_API voxa_status voxa_tiff_write(const char *path, const voxa_array *a);

/** Compression of written TIFF pages. Both are read by tifffile without
 *  imagecodecs. */
typedef enum voxa_tiff_compression {
    VOXA_TIFF_NONE = 0,
    VOXA_TIFF_DEFLATE = 1 /* zlib, TIFF Compression 8 (Adobe deflate) */
} voxa_tiff_compression;

/** Options of voxa_tiff_write_opts; zero-initialised means the defaults. */
typedef struct voxa_tiff_options {
    voxa_tiff_compression compression;
    int level;             /* deflate level 1..9; 0 = 6 */
    int64_t bigtiff_above; /* BigTIFF when the pixel bytes exceed this; 0 = 2 GiB,
                              negative = always BigTIFF */
} voxa_tiff_options;

/** voxa_tiff_write with options (NULL = defaults). Arrays: ndim 2 or 3, no
 *  zero-length axis, any dtype (bool is written as uint8 0/1), any strides.
 *  Errors: EUNSUPPORTED (ndim, empty), EINVAL (options), EIO (cannot create
 *  or write; no file and no temporary is left behind). */
VOXA_API voxa_status voxa_tiff_write_opts(const char *path, const voxa_array *a,
                                          const voxa_tiff_options *opts);

/** TIFF by region (out of core): open once, then read any box, decoding
 *  only the strips/tiles it touches. One sample per pixel (8..64-bit), 2-D
 *  or 3-D (pages along axis 0, ImageJ raw stacks too); reads through one
 *  handle are serialised. Errors as voxa_tiff_read; EUNSUPPORTED for RGB,
 *  planar or 1-bit pages. */
typedef struct voxa_tiff voxa_tiff;
VOXA_API voxa_status voxa_tiff_open(const char *path, voxa_tiff **t);
VOXA_API voxa_status voxa_tiff_get_shape(const voxa_tiff *t, voxa_dtype *dtype, int *ndim,
                                         int64_t *shape);
/** Read the box at `lo` with out->shape into `out` (any strides). */
VOXA_API voxa_status voxa_tiff_read_region(voxa_tiff *t, const int64_t *lo, voxa_array *out);
VOXA_API void voxa_tiff_close(voxa_tiff *t); /* NULL is allowed */

/* ---- CSV tables ----------------------------------------------------------- */

/** A numeric table read from CSV with a header row. Values are row-major
 *  (nrows x ncols); a cell that is not a number is NaN. */
typedef struct voxa_table {
    int64_t nrows;
    int ncols;
    char **names;   /* ncols column names */
    double *values; /* nrows * ncols */
} voxa_table;

/** Parse CSV text (header row, comma separated, optional quotes, \n or \r\n). */
VOXA_API voxa_status voxa_csv_parse(const char *text, size_t len, voxa_table *t);
VOXA_API voxa_status voxa_csv_read(const char *path, voxa_table *t);
/** Write a table as CSV (header, then rows; numbers round-trip through
 *  voxa_csv_parse, integers up to 2^53 print without a decimal point),
 *  atomically. Errors: EINVAL (no columns), EIO. */
VOXA_API voxa_status voxa_csv_write(const char *path, const voxa_table *t);
VOXA_API void voxa_table_free(voxa_table *t);
/** Index of the column called `name` (case-insensitive), or -1. */
VOXA_API int voxa_table_column(const voxa_table *t, const char *name);

#ifdef __cplusplus
}
#endif
#endif
