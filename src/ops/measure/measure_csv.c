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
       P_STD, P_PERIMETER, P_EULER, P_TENSOR, P_EIGVALS, P_MAJOR, P_MINOR, P_ECCENTRICITY,
       P_ORIENTATION, P_COUNT };
static const char *const prop_names[P_COUNT] = {
    "label", "area", "num_pixels", "centroid", "bbox", "intensity_mean", "intensity_min",
    "intensity_max", "intensity_sum", "centroid_weighted", "intensity_std", "perimeter",
    "euler_number", "inertia_tensor",
    "inertia_tensor_eigvals", "axis_major_length", "axis_minor_length", "eccentricity",
    "orientation"};

#define MAXPROPS 32

/* The id of the property named p[0..len), or -1. */
static int prop_id(const char *p, size_t len) {
    for (int k = 0; k < P_COUNT; k++)
        if (strlen(prop_names[k]) == len && !strncmp(prop_names[k], p, len)) return k;
    return -1;
}

/* Calls f(word, len, ctx) for each comma-separated word of text, trimmed;
 * stops at the first non-OK status. */
typedef voxa_status (*word_fn)(const char *p, size_t len, void *ctx);
static voxa_status each_word(const char *text, word_fn f, void *ctx) {
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ') p++, len--;
        while (len && p[len - 1] == ' ') len--;
        VOXA_CHECK(f(p, len, ctx));
        if (!e) break;
        p = e + 1;
    }
    return VOXA_OK;
}

typedef struct parse {
    int ndim, intensity, moments, std, perimeter, euler; /* what the table has */
    int anisotropic;                              /* its spacing differs between axes */
    int *ids, n;
} parse;

static voxa_status take(const char *p, size_t len, void *ctx) {
    parse *q = ctx;
    int id = prop_id(p, len);
    VOXA_FAIL_IF(id < 0, VOXA_EINVAL,
                 "properties: unknown property '%.*s' (known: label, area, num_pixels, "
                 "centroid, bbox, intensity_mean, intensity_min, intensity_max, "
                 "intensity_sum, centroid_weighted, intensity_std, perimeter, euler_number, "
                 "inertia_tensor, "
                 "inertia_tensor_eigvals, "
                 "axis_major_length, axis_minor_length, eccentricity, orientation)",
                 (int)len, p);
    VOXA_FAIL_IF(id >= P_MEAN && id <= P_STD && !q->intensity, VOXA_EINVAL,
                 "properties: '%s' needs an intensity image", prop_names[id]);
    VOXA_FAIL_IF(id == P_STD && !q->std, VOXA_EINVAL,
                 "properties: 'intensity_std' needs the deviations (VOXA_MEASURE_STD)");
    VOXA_FAIL_IF(id == P_PERIMETER && q->ndim > 0 && q->ndim != 2, VOXA_EINVAL,
                 "properties: 'perimeter' is defined for 2-D labels (these are %d-D)", q->ndim);
    VOXA_FAIL_IF(id == P_PERIMETER && !q->perimeter, VOXA_EINVAL,
                 "properties: 'perimeter' needs its pass (VOXA_MEASURE_PERIMETER)");
    VOXA_FAIL_IF(id == P_PERIMETER && q->anisotropic, VOXA_EINVAL,
                 "properties: 'perimeter' supports isotropic spacings only (as scikit-image)");
    VOXA_FAIL_IF(id == P_EULER && q->ndim > 0 && q->ndim != 2 && q->ndim != 3, VOXA_EINVAL,
                 "properties: 'euler_number' is defined for 2-D and 3-D labels (these are %d-D)",
                 q->ndim);
    VOXA_FAIL_IF(id == P_EULER && !q->euler, VOXA_EINVAL,
                 "properties: 'euler_number' needs its pass (VOXA_MEASURE_EULER)");
    VOXA_FAIL_IF(id >= P_TENSOR && !q->moments, VOXA_EINVAL,
                 "properties: '%s' needs the second moments (VOXA_MEASURE_MOMENTS)",
                 prop_names[id]);
    VOXA_FAIL_IF((id == P_MAJOR || id == P_MINOR) && q->ndim > 0 && q->ndim != 2 && q->ndim != 3,
                 VOXA_EINVAL,
                 "properties: '%s' is defined for 2-D and 3-D labels (these are %d-D)",
                 prop_names[id], q->ndim);
    VOXA_FAIL_IF((id == P_ECCENTRICITY || id == P_ORIENTATION) && q->ndim > 0 && q->ndim != 2,
                 VOXA_EINVAL,
                 "properties: '%s' is defined for 2-D labels (these are %d-D)", prop_names[id],
                 q->ndim);
    VOXA_FAIL_IF(q->n >= MAXPROPS, VOXA_EINVAL, "properties: more than %d", MAXPROPS);
    q->ids[q->n++] = id;
    return VOXA_OK;
}

static voxa_status flag_word(const char *p, size_t len, void *ctx) {
    int id = prop_id(p, len);
    if (id >= P_TENSOR) *(int *)ctx |= VOXA_MEASURE_MOMENTS;
    if (id == P_STD) *(int *)ctx |= VOXA_MEASURE_STD;
    if (id == P_PERIMETER) *(int *)ctx |= VOXA_MEASURE_PERIMETER;
    if (id == P_EULER) *(int *)ctx |= VOXA_MEASURE_EULER;
    return VOXA_OK;
}

voxa_status voxa_measure_check_properties(const char *properties, int ndim, int flags) {
    int ids[MAXPROPS];
    parse q = {ndim, flags & VOXA_MEASURE_INTENSITY, flags & VOXA_MEASURE_MOMENTS,
               flags & VOXA_MEASURE_STD, flags & VOXA_MEASURE_PERIMETER,
               flags & VOXA_MEASURE_EULER, 0, ids, 0};
    if (!properties) return VOXA_OK; /* the default columns */
    VOXA_CHECK(each_word(properties, take, &q));
    VOXA_FAIL_IF(q.n == 0, VOXA_EINVAL, "properties: empty list");
    return VOXA_OK;
}

int voxa_measure_flags_for(const char *properties) {
    int flags = 0;
    if (properties) each_word(properties, flag_word, &flags);
    return flags;
}

/* Columns of property `id` and the value of column c of row r. */
static int ncols_of(int id, int nd) {
    switch (id) {
    case P_CENTROID: case P_WCENTROID: case P_EIGVALS: return nd;
    case P_BBOX: return 2 * nd;
    case P_TENSOR: return nd * nd;
    default: return 1;
    }
}

/* The ncols_of(id) values of property `id` for row r, into v: a row's
 * tensor or eigenvalues are computed once for all their columns. */
static void cells(const voxa_measure_table *t, int id, int64_t r, double *v) {
    int nd = t->ndim;
    switch (id) {
    case P_LABEL: v[0] = (double)t->label[r]; break;
    case P_NUM_PIXELS: v[0] = (double)t->num_pixels[r]; break;
    case P_AREA: v[0] = t->area[r]; break;
    case P_MEAN: v[0] = t->intensity_mean[r]; break;
    case P_MIN: v[0] = t->intensity_min[r]; break;
    case P_MAX: v[0] = t->intensity_max[r]; break;
    case P_SUM: v[0] = t->intensity_sum[r]; break;
    case P_STD: v[0] = t->intensity_std[r]; break;
    case P_PERIMETER: v[0] = t->perimeter[r] * t->spacing[0]; break;
    case P_EULER: v[0] = (double)t->euler_number[r]; break;
    case P_BBOX:
        for (int c = 0; c < 2 * nd; c++) v[c] = (double)t->bbox[r * 2 * nd + c];
        break;
    case P_CENTROID: memcpy(v, t->centroid + r * nd, (size_t)nd * sizeof *v); break;
    case P_WCENTROID: memcpy(v, t->centroid_weighted + r * nd, (size_t)nd * sizeof *v); break;
    case P_TENSOR: voxa__measure_tensor(t, r, v); break;
    case P_EIGVALS: voxa__measure_eigvals(t, r, v); break;
    case P_MAJOR: v[0] = voxa__measure_axis_length(t, r, 1); break;
    case P_MINOR: v[0] = voxa__measure_axis_length(t, r, 0); break;
    case P_ECCENTRICITY: v[0] = voxa__measure_eccentricity(t, r); break;
    default: v[0] = voxa__measure_orientation(t, r); break;
    }
}

/* Column c's name: the property, then its axis (or tensor row and column). */
static void col_name(char *buf, size_t n, int id, int c, int nd) {
    if (ncols_of(id, nd) == 1) snprintf(buf, n, "%s", prop_names[id]);
    else if (id == P_TENSOR) snprintf(buf, n, "%s-%d-%d", prop_names[id], c / nd, c % nd);
    else snprintf(buf, n, "%s-%d", prop_names[id], c);
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
    int aniso = 0;
    for (int d = 1; d < nd; d++) aniso |= t->spacing[d] != t->spacing[0];
    parse q = {nd, t->has_intensity, t->moments2 != NULL, t->intensity_std != NULL,
               t->perimeter != NULL, t->euler_number != NULL, aniso, ids, 0};
    VOXA_CHECK(each_word(properties, take, &q));
    n = q.n;
    VOXA_FAIL_IF(n == 0, VOXA_EINVAL, "properties: empty list");
    voxa_table out = {.nrows = t->n};
    for (int i = 0; i < n; i++) out.ncols += ncols_of(ids[i], nd);
    VOXA_FAIL_IF(out.ncols > MAXPROPS * 2 * VOXA_MAXDIM, VOXA_EINVAL,
                 "properties: %d columns (at most %d)", out.ncols, MAXPROPS * 2 * VOXA_MAXDIM);
    char names[MAXPROPS * 2 * VOXA_MAXDIM][48], *name_ptr[MAXPROPS * 2 * VOXA_MAXDIM];
    out.names = name_ptr;
    out.values = malloc((size_t)(t->n * out.ncols + 1) * sizeof *out.values);
    VOXA_FAIL_IF(!out.values, VOXA_ENOMEM, "table: out of memory for %lld rows",
                 (long long)t->n);
    double v[VOXA_MAXDIM * VOXA_MAXDIM];
    for (int i = 0, col = 0; i < n; col += ncols_of(ids[i], nd), i++) {
        for (int c = 0; c < ncols_of(ids[i], nd); c++) {
            col_name(names[col + c], sizeof names[col + c], ids[i], c, nd);
            name_ptr[col + c] = names[col + c];
        }
        for (int64_t r = 0; r < t->n; r++) {
            cells(t, ids[i], r, v);
            memcpy(out.values + r * out.ncols + col, v, (size_t)ncols_of(ids[i], nd) * sizeof *v);
        }
    }
    voxa_status st = voxa_csv_write(path, &out);
    free(out.values);
    return st;
}
