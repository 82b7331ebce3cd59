/* The .npy layout for readers and writers outside npy.c (the chunk
 * executor's .npy store maps files and needs only the header). */
#ifndef VOXA_NPY_FORMAT_H
#define VOXA_NPY_FORMAT_H

#include "internal.h"

#include <stdio.h>

/* Bytes a header can take (dict up to 512 characters, padded to 64). */
#define VOXA__NPY_HEADER_MAX (10 + 512 + 64)

/* Write the version 1.0 header of a C-order array into head; returns its
 * length (a multiple of 64). */
size_t voxa__npy_header(voxa_dtype t, int ndim, const int64_t *shape, unsigned char *head);

/* Read and check the header of the open file `f` (at its start) of
 * `file_size` bytes: the data must be all there. `path` names it in messages. */
voxa_status voxa__npy_read_header(FILE *f, const char *path, int64_t file_size,
                                  voxa_dtype *t, int *ndim, int64_t *shape, int *fortran,
                                  int *swap, size_t *offset);

#endif
