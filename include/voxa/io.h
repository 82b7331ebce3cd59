/* voxa io: .npy and TIFF arrays, CSV tables. Format follows the extension.
 * Writes are atomic: data goes to a temporary file in the destination folder
 * which is renamed over the target only when complete. */
#ifndef VOXA_IO_H
#define VOXA_IO_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read an array from `path` (.npy, .tif/.tiff) into a newly allocated array
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
 *  i32, f32, f64 (bool written as u8). Striped or tiled, any libtiff codec;
 *  BigTIFF written when the data exceed 2 GiB. */
VOXA_API voxa_status voxa_tiff_read(const char *path, voxa_array *out);
VOXA_API voxa_status voxa_tiff_write(const char *path, const voxa_array *a);

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
VOXA_API void voxa_table_free(voxa_table *t);
/** Index of the column called `name` (case-insensitive), or -1. */
VOXA_API int voxa_table_column(const voxa_table *t, const char *name);

#ifdef __cplusplus
}
#endif
#endif
