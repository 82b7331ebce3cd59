/* The measure table as CSV (voxa_measure_write_csv): a header row with
 * regionprops_table's column names, one row per label, written to a
 * temporary file renamed when complete (never a partial table under the
 * final name). Doubles use %.17g so they read back to the same bits. */
#include "measure_internal.h"

#include "io/atomic.h"

#include <stdio.h>
#include <string.h>

enum { P_LABEL, P_AREA, P_NUM_PIXELS, P_CENTROID, P_BBOX, P_MEAN, P_MIN, P_MAX, P_SUM, P_WCENTROID,
       P_COUNT };
static const char *const prop_names[P_COUNT] = {
    "label", "area", "num_pixels", "centroid", "bbox", "intensity_mean", "intensity_min",
    "intensity_max", "intensity_sum", "centroid_weighted"};

#define MAXPROPS 32

/* Parse "a,b,c" into property ids; EINVAL naming an unknown word. */
static voxa_status parse_props(const char *text, int with_intensity, int *ids, int *n) {
    *n = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ') p++, len--;
        while (len && p[len - 1] == ' ') len--;
        int id = -1;
        for (int k = 0; k < P_COUNT; k++)
            if (strlen(prop_names[k]) == len && !strncmp(prop_names[k], p, len)) id = k;
        VOXA_FAIL_IF(id < 0, VOXA_EINVAL,
                     "properties: unknown property '%.*s' (known: label, area, num_pixels, "
                     "centroid, bbox, intensity_mean, intensity_min, intensity_max, "
                     "intensity_sum, centroid_weighted)",
                     (int)len, p);
        VOXA_FAIL_IF(id >= P_MEAN && !with_intensity, VOXA_EINVAL,
                     "properties: '%s' needs an intensity image", prop_names[id]);
        VOXA_FAIL_IF(*n >= MAXPROPS, VOXA_EINVAL, "properties: more than %d", MAXPROPS);
        ids[(*n)++] = id;
        if (!e) break;
        p = e + 1;
    }
    VOXA_FAIL_IF(*n == 0, VOXA_EINVAL, "properties: empty list");
    return VOXA_OK;
}

static void put_double(FILE *f, double v) {
    if (v != v) fputs("nan", f);
    else if (isinf(v)) fputs(v > 0 ? "inf" : "-inf", f);
    else fprintf(f, "%.17g", v);
}

voxa_status voxa_measure_write_csv(const voxa_measure_table *t, const char *properties,
                                   const char *path) {
    VOXA_FAIL_IF(!t, VOXA_EINVAL, "table: NULL");
    VOXA_FAIL_IF(!path || !*path, VOXA_EINVAL, "path: empty");
    int ids[MAXPROPS], n = 0;
    if (!properties)
        properties = t->has_intensity
                         ? "label,area,centroid,bbox,intensity_mean,intensity_min,"
                           "intensity_max,intensity_sum,centroid_weighted"
                         : "label,area,centroid,bbox";
    VOXA_CHECK(parse_props(properties, t->has_intensity, ids, &n));
    int nd = t->ndim;
    voxa__atomic w;
    FILE *f = NULL;
    VOXA_CHECK(voxa__atomic_begin(&w, path));
    voxa_status st = voxa__atomic_fopen(&w, &f);
    if (st != VOXA_OK) return voxa__atomic_end(&w, NULL, st);
    /* Header. */
    for (int i = 0; i < n; i++) {
        const char *nm = prop_names[ids[i]];
        int cols = ids[i] == P_CENTROID || ids[i] == P_WCENTROID ? nd
                   : ids[i] == P_BBOX                            ? 2 * nd
                                                                 : 0;
        if (!cols) fprintf(f, "%s%s", i ? "," : "", nm);
        for (int c = 0; c < cols; c++) fprintf(f, "%s%s-%d", i || c ? "," : "", nm, c);
    }
    fputc('\n', f);
    for (int64_t r = 0; r < t->n; r++) {
        for (int i = 0; i < n; i++) {
            if (i) fputc(',', f);
            switch (ids[i]) {
            case P_LABEL: fprintf(f, "%lld", (long long)t->label[r]); break;
            case P_NUM_PIXELS: fprintf(f, "%lld", (long long)t->num_pixels[r]); break;
            case P_AREA: put_double(f, t->area[r]); break;
            case P_MEAN: put_double(f, t->intensity_mean[r]); break;
            case P_MIN: put_double(f, t->intensity_min[r]); break;
            case P_MAX: put_double(f, t->intensity_max[r]); break;
            case P_SUM: put_double(f, t->intensity_sum[r]); break;
            case P_BBOX:
                for (int c = 0; c < 2 * nd; c++)
                    fprintf(f, c ? ",%lld" : "%lld", (long long)t->bbox[r * 2 * nd + c]);
                break;
            case P_CENTROID:
            case P_WCENTROID: {
                const double *v = ids[i] == P_CENTROID ? t->centroid : t->centroid_weighted;
                for (int c = 0; c < nd; c++) {
                    if (c) fputc(',', f);
                    put_double(f, v[r * nd + c]);
                }
                break;
            }
            default: break;
            }
        }
        fputc('\n', f);
    }
    if (ferror(f)) st = voxa__error(VOXA_EIO, "%s: write failed", path);
    return voxa__atomic_end(&w, f, st);
}
