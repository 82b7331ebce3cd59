/* Zarr stores for the executor (voxa/zarr.h does the format). An output of
 * 2 or 3 dimensions is an OME-Zarr image: the group metadata of an earlier
 * image at that path is removed first, its dataset "0" is created and
 * written block by block (every chunk file atomically), the pyramid levels
 * (store_pyramid.c) are made from it at commit, and the group's multiscales
 * metadata is written last: a reader (napari, ome-zarr) sees an image only
 * once it is complete. Running the same command again on an incomplete
 * output (dataset "0" present with the same format, dtype, shape and chunks,
 * no group metadata) resumes it: the blocks whose chunk files exist are
 * skipped. Other outputs (1-D, 4-D and more: plain arrays, which have no
 * completion mark) are written in a temporary folder beside the target and
 * renamed over it at commit. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "store_internal.h"
#include "io/atomic.h"
#include "io/zarr_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <ftw.h>
#include <unistd.h>

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
    /* no OME scale is fine; out of memory is not (the output would lose the voxel size) */
    voxa_status st = voxa_zarr_spacing(path, s->ndim, s->spacing, NULL, 0);
    if (st == VOXA_ENOMEM) return st; /* voxa_store_open closes s */
    s->has_spacing = st == VOXA_OK;
    voxa_clear_error();
    return VOXA_OK;
}

static int exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int format_of(const voxa_store *s) {
    return s->opts.zarr_format ? s->opts.zarr_format : 3;
}

/* Whether `path` holds OME group metadata (a complete image). */
static int has_group_meta(const char *path) {
    static const char *const names[] = {"zarr.json", ".zgroup", ".zattrs"};
    char meta[4300];
    for (int i = 0; i < 3; i++) {
        snprintf(meta, sizeof meta, "%s/%s", path, names[i]);
        if (exists(meta)) return 1;
    }
    return 0;
}

/* An earlier run's dataset "0" that this run may continue. */
static int resumable(voxa_store *s, const char *path, const char *array,
                     const int64_t *chunks) {
    if (has_group_meta(path)) return 0; /* the image is complete: start again */
    voxa_zarr *z = NULL;
    if (voxa_zarr_open(array, 1, &z) != VOXA_OK) {
        voxa_clear_error();
        return 0;
    }
    voxa_zarr_info info;
    int same = voxa_zarr_get_info(z, &info) == VOXA_OK && info.dtype == s->t &&
               info.ndim == s->ndim && info.format == format_of(s);
    for (int d = 0; same && d < s->ndim; d++)
        same = info.shape[d] == s->shape[d] && (!chunks || info.chunks[d] == chunks[d]);
    if (same) s->zarr = z;
    else voxa_zarr_close(z);
    return same;
}

static const char *const zyx[3] = {"z", "y", "x"};

void voxa__store_zarr_options(const voxa_store *s, const int64_t *chunks, voxa_zarr_options *o) {
    memset(o, 0, sizeof *o);
    o->format = format_of(s);
    o->codec = VOXA_ZARR_ZSTD;
    o->level = 1;
    o->fsync = voxa_get_fsync(); /* every chunk file flushed before its rename */
    for (int d = 0; chunks && d < s->ndim; d++) o->chunks[d] = chunks[d];
    if (s->ome) o->dimension_names = zyx + 3 - s->ndim;
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
    voxa__store_zarr_options(s, chunks, &o);
    if (s->ome) {
        /* An earlier complete image goes first (its metadata would mark the
         * new, partial one complete); an interrupted run's folder stays. */
        if (has_group_meta(path)) VOXA_CHECK(voxa__zarr_clear(path));
        /* the group folder; voxa_zarr_create refuses a non-Zarr folder */
        int e = mkdir(path, 0777) != 0 ? errno : 0;
        VOXA_FAIL_IF(e && e != EEXIST, VOXA_EIO, "cannot create '%s': %s", path, strerror(e));
    } else {
        voxa__atomic w;
        VOXA_CHECK(voxa__atomic_begin(&w, path));
        snprintf(s->tmp, sizeof s->tmp, "%s", w.tmp);
        snprintf(array, sizeof array, "%s", w.tmp);
    }
    VOXA_CHECK(voxa_zarr_create(array, s->t, s->ndim, s->shape, &o, &s->zarr));
    take_info(s);
    return VOXA_OK;
}

/* Remove a Zarr folder and what it holds (only Zarr: voxa__zarr_clear
 * refuses other folders). */
static voxa_status remove_tree(const char *path) {
    VOXA_CHECK(voxa__zarr_clear(path));
    VOXA_FAIL_IF(rmdir(path) != 0, VOXA_EIO, "cannot remove '%s': %s", path, strerror(errno));
    return VOXA_OK;
}

voxa_status voxa__store_zarr_commit(voxa_store *s) {
    if (!s->ome) {
        if (exists(s->path)) VOXA_CHECK(remove_tree(s->path));
        VOXA_FAIL_IF(rename(s->tmp, s->path) != 0, VOXA_EIO,
                     "cannot rename the output to '%s': %s", s->path, strerror(errno));
        s->tmp[0] = 0;
        return VOXA_OK;
    }
    VOXA_CHECK(voxa__store_pyramid(s));
    return voxa_zarr_write_ome_metadata(s->path, format_of(s), s->ndim,
                                        s->has_spacing ? s->spacing : NULL, NULL,
                                        1 + s->opts.pyramid, voxa_get_fsync());
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    remove(p);
    return 0;
}

void voxa__store_zarr_close(voxa_store *s) {
    voxa_zarr_close(s->zarr);
    s->zarr = NULL;
    /* an uncommitted plain array: its temporary folder goes, silently (the
     * run's own error message stays the one reported) */
    if (s->created && !s->committed && !s->ome && s->tmp[0])
        nftw(s->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void voxa_stream_chunks(const voxa_stream_plan *p, int pyramid, int64_t *chunks) {
    if (!p || !chunks) return;
    int64_t vox = 1, block = 1;
    for (int d = 0; d < p->ndim; d++) {
        int64_t b = p->block[d], k = 1;
        while (b / k > 512 && k < b) k++;
        while (b % k && b / k > 64) k++;
        chunks[d] = b % k ? 512 : b / k;
        vox *= chunks[d];
        block *= b;
    }
    /* a level is made from 2^ndim chunks of the level before: keep those
     * within a block by halving the largest even chunk axis (still a divisor) */
    while (pyramid > 0 && vox << p->ndim > block) {
        int best = -1;
        for (int d = 0; d < p->ndim; d++)
            if (chunks[d] % 2 == 0 && (best < 0 || chunks[d] > chunks[best])) best = d;
        if (best < 0) break;
        chunks[best] /= 2;
        vox /= 2;
    }
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
