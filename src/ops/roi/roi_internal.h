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

#endif
