/* A TIFF written by regions (tiff_layout.c): an uncompressed BigTIFF whose
 * pixel data are one C-order array at a known offset, so that any region can
 * be written or read back with pwrite/pread (not installed). */
#ifndef VOXA_TIFF_LAYOUT_H
#define VOXA_TIFF_LAYOUT_H

#include "internal.h"

/* Check that a `ndim`-D array of `shape` fits the layout (2-D one page, 3-D
 * pages along axis 0, no empty axis, pages of at most 2^32-1 rows/columns)
 * and give the byte offset of its data (the size of the header and every
 * directory). Errors: EUNSUPPORTED naming `path`. */
voxa_status voxa__tiff_layout_size(const char *path, voxa_dtype t, int ndim,
                                   const int64_t *shape, int64_t *data_offset);

/* Write the header and every page's directory into `fd` (a new file) with
 * pwrite; the data go at data_offset. EIO naming `path`. */
voxa_status voxa__tiff_layout_write(int fd, const char *path, voxa_dtype t, int ndim,
                                    const int64_t *shape);

#endif
