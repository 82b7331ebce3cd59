/* The pyramid of a streamed OME-Zarr output (`--pyramid N`): levels 1..N,
 * each half the level before along every axis (rounded up), made at commit,
 * after level 0 is complete and before the group metadata that marks the
 * image complete (and lists the levels with their scale, 2^k x the voxel
 * spacing).
 *
 * Level k is made from level k-1 one output chunk at a time: the chunk at
 * [lo, lo + c) reads [2 lo, 2 (lo + c)) of level k-1 (clamped at the edge),
 * which with equal chunk shapes on both levels is exactly 2^ndim whole
 * chunks of it, each decoded once, then voxa_zarr_downsample (mean of each
 * 2x..x2 block, rounded half to even for integers, or its first voxel:
 * "stride") and one whole-chunk write. Regions at even offsets downsample
 * exactly as the whole array does, so the levels equal voxa_zarr_write_ome's
 * in-memory pyramid voxel for voxel. Memory: 2^ndim + 1 chunks of the output
 * dtype (voxa_stream_chunks keeps that within a block), never the volume.
 * Cost: reading level 0 once more and 1/7 of it (3-D) for the levels above.
 *
 * Stride rather than the mode for labels: the first voxel of each block is
 * always one of its labels, costs nothing, and is what ome-zarr-py and
 * voxa_zarr_write_ome do; a mode over 8 voxels has ties (4-4, 2-2-2-2) whose
 * arbitrary winner would not be clearer. Making the levels after level 0,
 * rather than while blocks are written, keeps the blocks free of alignment
 * rules (and of partial-chunk rewrites of every level at every block), and
 * works the same for resumed runs, whose skipped blocks are never rewritten. */
#include "store_internal.h"

#include <stdio.h>
#include <string.h>

static int stride_mode(const voxa_store *s) {
    if (s->opts.pyramid_mode == VOXA_PYRAMID_STRIDE) return 1;
    if (s->opts.pyramid_mode == VOXA_PYRAMID_MEAN) return 0;
    return !voxa_dtype_is_float(s->t); /* bool, integers: labels */
}

/* Make level `k` (shape[], chunks[]) from `prev` (level k-1, pshape). */
static voxa_status make_level(voxa_store *s, voxa_zarr *prev, const int64_t *pshape, int k,
                              const int64_t *chunks, voxa_zarr **out) {
    int nd = s->ndim;
    int64_t shape[VOXA_MAXDIM], grid[VOXA_MAXDIM], big[VOXA_MAXDIM], n = 1;
    for (int d = 0; d < nd; d++) {
        shape[d] = (pshape[d] + 1) / 2;
        grid[d] = (shape[d] + chunks[d] - 1) / chunks[d];
        big[d] = 2 * chunks[d];
        n *= grid[d];
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/%d", s->path, k);
    voxa_zarr_options o;
    voxa__store_zarr_options(s, chunks, &o);
    voxa_array ibuf = {0}, obuf = {0};
    VOXA_CHECK(voxa_zarr_create(path, s->t, nd, shape, &o, out));
    voxa_status st = voxa_array_new(&ibuf, s->t, nd, big);
    if (st == VOXA_OK) st = voxa_array_new(&obuf, s->t, nd, chunks);
    int labels = stride_mode(s);
    for (int64_t i = 0; st == VOXA_OK && i < n; i++) {
        int64_t lo[VOXA_MAXDIM], sh[VOXA_MAXDIM], ilo[VOXA_MAXDIM], ish[VOXA_MAXDIM], r = i;
        for (int d = nd - 1; d >= 0; d--) {
            lo[d] = (r % grid[d]) * chunks[d];
            r /= grid[d];
            sh[d] = lo[d] + chunks[d] <= shape[d] ? chunks[d] : shape[d] - lo[d];
            ilo[d] = 2 * lo[d];
            ish[d] = ilo[d] + 2 * sh[d] <= pshape[d] ? 2 * sh[d] : pshape[d] - ilo[d];
        }
        voxa_array iv = voxa__shaped(&ibuf, nd, ish), ov = voxa__shaped(&obuf, nd, sh);
        st = voxa_zarr_read(prev, ilo, &iv);
        if (st == VOXA_OK) st = voxa_zarr_downsample(&iv, &ov, labels);
        if (st == VOXA_OK) st = voxa_zarr_write(*out, lo, &ov);
    }
    voxa_array_free(&ibuf);
    voxa_array_free(&obuf);
    return st;
}

voxa_status voxa__store_pyramid(voxa_store *s) {
    if (s->opts.pyramid <= 0) return VOXA_OK;
    voxa_zarr_info info;
    VOXA_CHECK(voxa_zarr_get_info(s->zarr, &info));
    voxa_zarr *prev = s->zarr, *next = NULL;
    int64_t pshape[VOXA_MAXDIM], chunks[VOXA_MAXDIM];
    memcpy(pshape, s->shape, sizeof pshape);
    voxa_status st = VOXA_OK;
    for (int k = 1; k <= s->opts.pyramid && st == VOXA_OK; k++) {
        for (int d = 0; d < s->ndim; d++) {
            int64_t half = (pshape[d] + 1) / 2;
            chunks[d] = info.chunks[d] < half ? info.chunks[d] : half;
        }
        st = make_level(s, prev, pshape, k, chunks, &next);
        if (prev != s->zarr) voxa_zarr_close(prev);
        prev = next;
        next = NULL;
        for (int d = 0; d < s->ndim; d++) pshape[d] = (pshape[d] + 1) / 2;
    }
    if (prev != s->zarr) voxa_zarr_close(prev);
    return st;
}
