/* The measure table as CSV (voxa_measure_write_csv): the selected
 * properties become a voxa_table with regionprops_table's column names,
 * written by the io layer's voxa_csv_write (atomic; %.17g, so values read
 * back to the same bits; integers exact up to 2^53). */
#include "measure_internal.h"
#include "voxa/io.h"

#include <stdio.h>
#include <stdlib.h>
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

/* Columns of property `id` and the value of column c of row r. */
static int ncols_of(int id, int nd) {
    return id == P_CENTROID || id == P_WCENTROID ? nd : id == P_BBOX ? 2 * nd : 1;
}

static double cell(const voxa_measure_table *t, int id, int64_t r, int c) {
    int nd = t->ndim;
    switch (id) {
    case P_LABEL: return (double)t->label[r];
    case P_NUM_PIXELS: return (double)t->num_pixels[r];
    case P_AREA: return t->area[r];
    case P_MEAN: return t->intensity_mean[r];
    case P_MIN: return t->intensity_min[r];
    case P_MAX: return t->intensity_max[r];
    case P_SUM: return t->intensity_sum[r];
    case P_BBOX: return (double)t->bbox[r * 2 * nd + c];
    case P_CENTROID: return t->centroid[r * nd + c];
    default: return t->centroid_weighted[r * nd + c];
    }
}

/* The selected columns as a voxa_table (labels and counts are exact up to
 * 2^53 as doubles), written by the io layer's CSV writer. */
voxa_status voxa_measure_write_csv(const voxa_measure_table *t, const char *properties,
                                   const char *path) {
    VOXA_FAIL_IF(!t, VOXA_EINVAL, "table: NULL");
    VOXA_FAIL_IF(!path || !*path, VOXA_EINVAL, "path: empty");
    int ids[MAXPROPS], n = 0, nd = t->ndim;
    if (!properties)
        properties = t->has_intensity
                         ? "label,area,centroid,bbox,intensity_mean,intensity_min,"
                           "intensity_max,intensity_sum,centroid_weighted"
                         : "label,area,centroid,bbox";
    VOXA_CHECK(parse_props(properties, t->has_intensity, ids, &n));
    voxa_table out = {.nrows = t->n};
    for (int i = 0; i < n; i++) out.ncols += ncols_of(ids[i], nd);
    char names[MAXPROPS * 2 * VOXA_MAXDIM][40], *name_ptr[MAXPROPS * 2 * VOXA_MAXDIM];
    out.names = name_ptr;
    out.values = malloc((size_t)(t->n * out.ncols + 1) * sizeof *out.values);
    VOXA_FAIL_IF(!out.values, VOXA_ENOMEM, "table: out of memory for %lld rows",
                 (long long)t->n);
    for (int i = 0, col = 0; i < n; i++)
        for (int c = 0; c < ncols_of(ids[i], nd); c++, col++) {
            if (ncols_of(ids[i], nd) == 1) snprintf(names[col], 40, "%s", prop_names[ids[i]]);
            else snprintf(names[col], 40, "%s-%d", prop_names[ids[i]], c);
            name_ptr[col] = names[col];
            for (int64_t r = 0; r < t->n; r++)
                out.values[r * out.ncols + col] = cell(t, ids[i], r, c);
        }
    voxa_status st = voxa_csv_write(path, &out);
    free(out.values);
    return st;
}
