/* TIFF stores for the executor.
 *
 * Inputs are read by region through voxa_tiff_read_region: only the strips
 * or tiles a block touches are read and decoded (any libtiff codec, striped
 * or tiled, classic or BigTIFF, ImageJ raw stacks), one strip or tile of
 * scratch at a time, so a TIFF larger than memory can feed a run. The region
 * reader holds one libtiff handle behind a mutex: blocks read from several
 * threads take turns. Pages the region reader does not handle (several
 * samples per pixel, 1-bit) are read whole, as before.
 *
 * Outputs are uncompressed BigTIFF files laid out in advance
 * (src/io/tiff_layout.c): the header and every page's directory are written
 * at create into a temporary file in the destination folder, the pixels then
 * go to their place by pwrite, block by block, in any order and from any
 * thread (labelling reads its provisional ids back and rewrites them), and
 * commit flushes the file, renames it over the target and flushes the
 * folder, as for .npy (store_npy.c moves the data). So any block shape
 * works: nothing is buffered, no plane or strip is waited for. A run that
 * fails or is killed leaves no file under the output's name. */
#include "store_internal.h"
#include "io/tiff_layout.h"

#include <string.h>
#include <strings.h>

int voxa__is_tiff_path(const char *path) {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && slash > dot)) return 0;
    return !strcasecmp(dot, ".tif") || !strcasecmp(dot, ".tiff");
}

voxa_status voxa__store_tiff_open(voxa_store *s, const char *path) {
    voxa_status st = voxa_tiff_open(path, &s->tiff);
    if (st == VOXA_OK) {
        s->kind = STORE_TIFF;
        return voxa_tiff_get_shape(s->tiff, &s->t, &s->ndim, s->shape);
    }
    if (st != VOXA_EUNSUPPORTED) return st;
    /* RGB, separate planes, 1-bit pages: the whole-file reader handles them */
    voxa_clear_error();
    s->kind = STORE_MEMORY;
    VOXA_CHECK(voxa_read(path, &s->view));
    s->t = s->view.dtype;
    s->ndim = s->view.ndim;
    memcpy(s->shape, s->view.shape, sizeof s->shape);
    return VOXA_OK;
}

voxa_status voxa__store_tiff_create(voxa_store *s, const char *path) {
    int64_t offset;
    VOXA_CHECK(voxa__tiff_layout_size(path, s->t, s->ndim, s->shape, &offset));
    s->kind = STORE_NPY; /* the pixels are moved like .npy data */
    VOXA_CHECK(voxa__store_raw_begin(s, path, offset));
    return voxa__tiff_layout_write(s->fd, path, s->t, s->ndim, s->shape);
}
