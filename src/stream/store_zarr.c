/* Zarr stores for the executor (voxa/zarr.h does the format). An output of
 * 2 or 3 dimensions is an OME-Zarr image: its dataset "0" is created first and
 * written block by block (every chunk file atomically), and the group's
 * multiscales metadata is written last, at commit: a reader (napari, ome-zarr)
 * sees an image only once it is complete. Running the same command again on
 * an incomplete output (dataset "0" present with the same dtype, shape and
 * chunks, no group metadata) resumes it: the blocks whose chunk files exist
 * are skipped. */
#include "store_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int voxa__is_zarr_path(const char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    return n >= 5 && !strncmp(path + n - 5, ".zarr", 5);
}

static void take_info(voxa_store *s) {
    voxa_zarr_info info;
    if (voxa_zarr_get_info(s->zarr, &info) != VOXA_OK) return;
    s->t = info.dtype;
    s->ndim = info.ndim;
    memcpy(s->shape, info.shape, sizeof s->shape);
    memcpy(s->unit, info.write_unit, sizeof s->unit);
}

voxa_status voxa__store_zarr_open(voxa_store *s, const char *path) {
    VOXA_CHECK(voxa_zarr_open(path, 0, &s->zarr));
    take_info(s);
    if (voxa_zarr_spacing(path, s->ndim, s->spacing, NULL, 0) == VOXA_OK) s->has_spacing = 1;
    voxa_clear_error();
    return VOXA_OK;
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* An earlier run's dataset "0" that this run may continue. */
static int resumable(voxa_store *s, const char *path, const char *array,
                     const int64_t *chunks) {
    char meta[4300];
    snprintf(meta, sizeof meta, "%s/zarr.json", path);
    if (exists(meta)) return 0; /* the image is complete: start again */
    voxa_zarr *z = NULL;
    if (voxa_zarr_open(array, 1, &z) != VOXA_OK) {
        voxa_clear_error();
        return 0;
    }
    voxa_zarr_info info;
    int same = voxa_zarr_get_info(z, &info) == VOXA_OK && info.dtype == s->t &&
               info.ndim == s->ndim;
    for (int d = 0; same && d < s->ndim; d++)
        same = info.shape[d] == s->shape[d] && (!chunks || info.chunks[d] == chunks[d]);
    if (same) s->zarr = z;
    else voxa_zarr_close(z);
    return same;
}

voxa_status voxa__store_zarr_create(voxa_store *s, const char *path, const int64_t *chunks) {
    s->ome = s->ndim == 2 || s->ndim == 3;
    char array[4200];
    snprintf(array, sizeof array, s->ome ? "%s/0" : "%s", path);
    if (s->ome && exists(path) && resumable(s, path, array, chunks)) {
        take_info(s);
        return VOXA_OK;
    }
    voxa_zarr_options o;
    memset(&o, 0, sizeof o);
    o.format = 3;
    o.codec = VOXA_ZARR_ZSTD;
    o.level = 1;
    o.fsync = voxa_get_fsync(); /* every chunk file flushed before its rename */
    for (int d = 0; chunks && d < s->ndim; d++) o.chunks[d] = chunks[d];
    static const char *const zyx[3] = {"z", "y", "x"};
    if (s->ome) o.dimension_names = zyx + 3 - s->ndim;
    if (s->ome) {
        /* the group folder; voxa_zarr_create refuses a non-Zarr folder */
        VOXA_FAIL_IF(mkdir(path, 0777) != 0 && !exists(path), VOXA_EIO,
                     "cannot create '%s'", path);
    }
    VOXA_CHECK(voxa_zarr_create(array, s->t, s->ndim, s->shape, &o, &s->zarr));
    take_info(s);
    return VOXA_OK;
}

voxa_status voxa__store_zarr_commit(voxa_store *s) {
    if (!s->ome) return VOXA_OK;
    return voxa_zarr_write_ome_metadata(s->path, 3, s->ndim, s->has_spacing ? s->spacing : NULL,
                                        NULL, 1, voxa_get_fsync());
}

int voxa__store_done(voxa_store *s, const int64_t *lo, const int64_t *shape) {
    if (s->kind != STORE_ZARR || !s->created) return 0;
    int64_t first[VOXA_MAXDIM], last[VOXA_MAXDIM], idx[VOXA_MAXDIM];
    for (int d = 0; d < s->ndim; d++) {
        if (lo[d] % s->unit[d]) return 0;
        if ((lo[d] + shape[d]) % s->unit[d] && lo[d] + shape[d] != s->shape[d]) return 0;
        first[d] = idx[d] = lo[d] / s->unit[d];
        last[d] = (lo[d] + shape[d] - 1) / s->unit[d];
    }
    for (;;) {
        int e = 0;
        if (voxa_zarr_unit_exists(s->zarr, idx, &e) != VOXA_OK || !e) return 0;
        int d = s->ndim - 1;
        for (; d >= 0; d--) {
            if (++idx[d] <= last[d]) break;
            idx[d] = first[d];
        }
        if (d < 0) return 1;
    }
}
