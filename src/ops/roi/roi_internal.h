/* Shared by the roi family (roi_common.c, roi_extract.c, roi_paste.c):
 * argument checks, corner arithmetic and the fill value. Not installed. */
#ifndef VOXA_ROI_INTERNAL_H
#define VOXA_ROI_INTERNAL_H

#include "internal.h"
#include "voxa/roi.h"

/* Check the array, the parameters and the shape of the patch array (`pat`,
 * may be NULL) against each other; fill ext[0..ndim-1] with the patch extent
 * on every axis of `a` (size for the first k, a's shape for the rest).
 * `what` is "extract" or "paste"; it names the call in messages. */
voxa_status voxa__roi_check(const voxa_array *a, const char *aname, const voxa_roi_params *p,
                            const voxa_array *pat, const char *patname, int paste,
                            int64_t *ext);

/* Corner of row i on the first k axes, after the centre shift and, in CLIP
 * mode, the shift inside. Must be called only after voxa__roi_validate_rows
 * succeeded (which proves the arithmetic cannot overflow). Returns non-zero
 * if the patch lies wholly inside the array. */
int voxa__roi_corner(const voxa_array *a, const voxa_roi_params *p, int64_t i,
                     int64_t *corner);

/* One pass over the rows: int64 overflow, ERROR mode (first offending row),
 * CLIP mode (patch larger than the array). */
voxa_status voxa__roi_validate_rows(const voxa_array *a, const voxa_roi_params *p);

/* Convert cval to one element of dtype t (8 bytes of room). EINVAL if the
 * dtype cannot hold it exactly. */
voxa_status voxa__roi_fill_value(double cval, voxa_dtype t, unsigned char *elem);

/* roi_copy.c: the table-driven copy of one in-bounds patch. Run r goes
 * from src + soff[r] to dst + doff[r] (run_bytes each, `last` = run_bytes -
 * 1); `nxt` is the next patch's source (prefetched near the end), or NULL. */
typedef void (*voxa__roi_tab_fn)(char *dst, const char *src, const char *nxt,
                                 const int64_t *soff, const int64_t *doff, int64_t nrows,
                                 int64_t last, size_t bytes);

/* The kernel for runs of `bytes`, with streaming stores if `stream`. */
voxa__roi_tab_fn voxa__roi_pick_tab(int64_t bytes, int stream);

/* Non-zero if streaming stores should be used for an output at `dst` whose
 * copy units start nstrides `strides` apart (any combination) and have
 * their runs at doff[0..rows), run_bytes each, total_bytes in all: the
 * runs of a unit one contiguous 16-byte aligned range, and the output
 * larger than the last-level cache, or as VOXA_ROI_STORES forces. The
 * kernel from voxa__roi_pick_tab(.., 1) needs the layout this checks. */
int voxa__roi_stream_wanted(const char *dst, const int64_t *doff, int64_t rows,
                            const int64_t *strides, int nstrides, int64_t run_bytes,
                            int64_t total_bytes);

/* roi_order.c. The order patches are copied in: Z-order of patch-sized
 * cells of the first k axes (or by the slowest axis when a patch's band of
 * it fits L2). NULL (and VOXA_OK) when there are too few patches to
 * bother, or one cell; ext: the patch extents on every axis. */
voxa_status voxa__roi_order(const voxa_array *in, const voxa_roi_params *p, const int64_t *ext,
                            int64_t **order);

/* The band one patch spans along its slowest axis fits a core's L2: the
 * order above then sorts by that axis, and slabs are not needed. */
int voxa__roi_band_fits(const voxa_array *in, const voxa_roi_params *p, const int64_t *ext);

/* Slab order: the patches wholly inside, each cut into nslab slabs
 * sstride source bytes apart, the slabs sorted by the image plane they
 * start in. Slab u = unit[t] is slab u % nslab of patch patch[u / nslab],
 * whose first voxel is off[u / nslab] bytes into the image. rest: the
 * patches reaching outside, in `order` (NULL: row order). */
typedef struct voxa__roi_slabs {
    int64_t n, nslab, npatch, nrest;
    int64_t *unit, *patch, *off, *rest;
} voxa__roi_slabs;
voxa_status voxa__roi_slabs_make(const voxa_array *in, const voxa_roi_params *p,
                                 const int64_t *order, int64_t nslab, int64_t sstride,
                                 voxa__roi_slabs *sl);
void voxa__roi_slabs_free(voxa__roi_slabs *sl);

/* Order this thread's streaming stores before its results are read. */
void voxa__roi_store_fence(void);

#endif
