/* Shared by the preview files (not installed). */
#ifndef VOXA_PREVIEW_INTERNAL_H
#define VOXA_PREVIEW_INTERNAL_H

#include "internal.h"
#include "voxa/preview.h"

/* One 2-D view: h x w values (-inf or NaN: no value) and labels (0: none);
 * either array may be NULL. */
typedef struct voxa__pview {
    int64_t h, w;
    double *v;
    int64_t *lab;
} voxa__pview;

/* Low and high contrast limits: the lo/hi percentiles (NumPy's linear
 * definition) of the finite values of n views. Both NaN if there are none. */
voxa_status voxa__preview_limits(const voxa__pview *views, int n, double lo_pct, double hi_pct,
                                 double *lo, double *hi);

/* The grey level of v between lo and hi: 0..255 (NaN and -inf: 0, +inf: 255). */
uint8_t voxa__preview_grey(double v, double lo, double hi);

/* Draw a scale bar of `len_px` pixels with `text` above it, its bottom-left
 * corner at (row, col) of the RGB image (clipped to it). */
void voxa__preview_scale_bar(voxa_array *rgb, int64_t row, int64_t col, int64_t len_px,
                             const char *text);

#endif
