/* Drawing helpers of previews: percentile contrast, label colours, the scale
 * bar and its digits.
 *
 * Percentiles follow NumPy's default ("linear"): with the n finite values
 * sorted, position h = (n - 1) p / 100 gives a[floor h] + (a[floor h + 1] -
 * a[floor h]) (h - floor h). The two order statistics are found by
 * quickselect (O(n) expected) instead of a sort. Label colours take the hue
 * k x 0.618... (golden ratio conjugate) so that consecutive labels land far
 * apart on the colour wheel. Digits use a 3 x 5 pixel font (no font files:
 * previews must render anywhere). */
#include "preview_internal.h"

#include <math.h>
#include <string.h>

/* k-th smallest of a[0..n) (a is reordered). */
static double select_k(double *a, int64_t n, int64_t k) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = a[lo + (hi - lo) / 2];
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return a[k];
    }
    return a[k];
}

static double percentile(double *a, int64_t n, double p) {
    double h = (double)(n - 1) * p / 100.0;
    int64_t k = (int64_t)floor(h);
    if (k >= n - 1) return select_k(a, n, n - 1);
    double lo = select_k(a, n, k);
    /* the next order statistic: the minimum of what lies above k */
    double next = a[k + 1];
    for (int64_t i = k + 2; i < n; i++)
        if (a[i] < next) next = a[i];
    double t = h - (double)k;
    /* NumPy's _lerp: a + (b - a) t, or b - (b - a) (1 - t) for t >= 0.5 */
    return t >= 0.5 ? next - (next - lo) * (1 - t) : lo + (next - lo) * t;
}

voxa_status voxa__preview_limits(const voxa__pview *views, int n, double lo_pct, double hi_pct,
                                 double *lo, double *hi) {
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += views[i].h * views[i].w;
    double *a = voxa__malloc((size_t)(total > 0 ? total : 1), sizeof(double));
    VOXA_FAIL_IF(!a, VOXA_ENOMEM, "preview: no memory for %lld values", (long long)total);
    int64_t m = 0;
    for (int i = 0; i < n; i++)
        for (int64_t k = 0; k < views[i].h * views[i].w; k++)
            if (isfinite(views[i].v[k])) a[m++] = views[i].v[k];
    if (m == 0) {
        *lo = *hi = NAN;
    } else {
        *lo = percentile(a, m, lo_pct);
        *hi = percentile(a, m, hi_pct);
    }
    voxa__free(a);
    return VOXA_OK;
}

uint8_t voxa__preview_grey(double v, double lo, double hi) {
    if (v != v || v == -INFINITY || lo != lo) return 0;
    if (v == INFINITY) return 255;
    if (!(hi > lo)) return v > lo ? 255 : 0;
    double g = (v - lo) / (hi - lo);
    if (g <= 0) return 0;
    if (g >= 1) return 255;
    return (uint8_t)lrint(g * 255.0);
}

void voxa_preview_label_color(int64_t label, uint8_t rgb[3]) {
    double h = fmod((double)(label % 1000003) * 0.6180339887498949, 1.0) * 6.0;
    double s = 0.8, v = 1.0;
    int i = (int)h;
    double f = h - i, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    double r, g, b;
    switch (i % 6) {
    case 0: r = v, g = t, b = p; break;
    case 1: r = q, g = v, b = p; break;
    case 2: r = p, g = v, b = t; break;
    case 3: r = p, g = q, b = v; break;
    case 4: r = t, g = p, b = v; break;
    default: r = v, g = p, b = q; break;
    }
    rgb[0] = (uint8_t)lrint(r * 255);
    rgb[1] = (uint8_t)lrint(g * 255);
    rgb[2] = (uint8_t)lrint(b * 255);
}

/* 3 x 5 glyphs, one row per entry, bit 2 = left column. */
static const char glyph_chars[] = "0123456789.-e+";
static const uint8_t glyphs[][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
    {0, 0, 0, 0, 2}, {0, 0, 7, 0, 0}, {0, 7, 5, 6, 3}, {0, 2, 7, 2, 0},
};

static void put_white(voxa_array *rgb, int64_t r, int64_t c) {
    if (r < 0 || c < 0 || r >= rgb->shape[0] || c >= rgb->shape[1]) return;
    uint8_t *p = (uint8_t *)rgb->data + r * rgb->strides[0] + c * rgb->strides[1];
    p[0] = p[1] = p[2] = 255;
}

void voxa__preview_scale_bar(voxa_array *rgb, int64_t row, int64_t col, int64_t len_px,
                             const char *text) {
    int64_t bar_h = rgb->shape[0] >= 128 ? 3 : 2, s = rgb->shape[0] >= 128 ? 2 : 1;
    for (int64_t r = row - bar_h + 1; r <= row; r++)
        for (int64_t c = col; c < col + len_px; c++) put_white(rgb, r, c);
    int64_t top = row - bar_h - 1 - 5 * s, x = col;
    for (const char *ch = text; *ch; ch++) {
        const char *k = strchr(glyph_chars, *ch);
        if (k && *ch) {
            const uint8_t *g = glyphs[k - glyph_chars];
            for (int gr = 0; gr < 5; gr++)
                for (int gc = 0; gc < 3; gc++)
                    if (g[gr] & (4 >> gc))
                        for (int64_t dy = 0; dy < s; dy++)
                            for (int64_t dx = 0; dx < s; dx++)
                                put_white(rgb, top + gr * s + dy, x + gc * s + dx);
        }
        x += 4 * s;
    }
}
