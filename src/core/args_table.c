/* Reading op arguments: per-axis lists and coordinate tables. The column
 * rule (axis0.. names, else the last k of z, y, x) is the one every table
 * input follows: points for balls, corners and centres for roi and paste. */
#include "op_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

const double *voxa__arg_axes(const voxa_args *a, int i, int ndim, double *buf) {
    const voxa_value *v = &a->v[i];
    if (!v->set) return NULL;
    for (int d = 0; d < ndim; d++) buf[d] = v->fv[v->n == 1 ? 0 : d];
    return buf;
}

int voxa__table_column(const voxa_value *t, const char *name) {
    if (!t->names) return -1;
    int64_t nc = t->array.ndim == 2 ? t->array.shape[1] : 1;
    for (int64_t c = 0; c < nc; c++)
        if (!strcasecmp(t->names[c], name)) return (int)c;
    return -1;
}

int voxa__table_ncoords(const voxa_value *t) {
    if (!t->names) return t->array.ndim == 2 ? (int)t->array.shape[1] : 1;
    char name[16];
    int na = 0;
    while (na < VOXA_MAXDIM) {
        snprintf(name, sizeof name, "axis%d", na);
        if (voxa__table_column(t, name) < 0) break;
        na++;
    }
    while (!na || (na < VOXA_MAXDIM && voxa__table_column(t, "axis0") < 0)) {
        /* a measure table: centroid-0, centroid-1, ... */
        snprintf(name, sizeof name, "centroid-%d", na);
        if (voxa__table_column(t, name) < 0) break;
        na++;
    }
    return na ? na : voxa__table_column(t, "z") >= 0 ? 3 : voxa__table_column(t, "y") >= 0 ? 2 : 1;
}

const char *voxa__table_row(const voxa_value *t, int64_t r, char *buf, size_t n) {
    if (t->header_lines > 0) snprintf(buf, n, "line %lld", (long long)(r + 1 + t->header_lines));
    else snprintf(buf, n, "row %lld", (long long)r);
    return buf;
}

voxa_status voxa__table_coords(const voxa_args *a, int i, int k, double **out, int64_t *n) {
    static const char *zyx[3] = {"z", "y", "x"};
    const voxa_param *p = &a->op->params[i];
    const voxa_value *t = &a->v[i];
    *out = NULL;
    VOXA_FAIL_IF(!t->set, VOXA_EINVAL, "%s: no table given", p->name);
    VOXA_FAIL_IF(k < 1 || k > VOXA_MAXDIM, VOXA_EINVAL, "%s: %d coordinate columns wanted",
                 p->name, k);
    int64_t nrows = t->array.shape[0];
    int64_t ncols = t->array.ndim == 2 ? t->array.shape[1] : 1;
    int cols[VOXA_MAXDIM];
    const char *where = t->source ? t->source : p->name;
    if (t->names) {
        int na = 0;
        char name[16];
        while (na < VOXA_MAXDIM) {
            snprintf(name, sizeof name, "axis%d", na);
            if (voxa__table_column(t, name) < 0) break;
            cols[na++] = voxa__table_column(t, name);
        }
        if (na < k) { /* a measure table (skimage's names): centroid-0, centroid-1, ... */
            na = 0;
            while (na < k) {
                snprintf(name, sizeof name, "centroid-%d", na);
                if ((cols[na] = voxa__table_column(t, name)) < 0) break;
                na++;
            }
        }
        if (na < k) {
            VOXA_FAIL_IF(k > 3, VOXA_EINVAL, "%s: no column 'axis%d' (a %d-axis table needs "
                         "columns axis0..axis%d)", where, na, k, k - 1);
            for (int d = 0; d < k; d++) {
                cols[d] = voxa__table_column(t, zyx[3 - k + d]);
                VOXA_FAIL_IF(cols[d] < 0, VOXA_EINVAL, "%s: no column '%s' (%d axes need "
                             "columns %s, axis0..axis%d or centroid-0..centroid-%d)", where,
                             zyx[3 - k + d], k, k == 3 ? "z, y, x" : k == 2 ? "y, x" : "x",
                             k - 1, k - 1);
            }
        }
    } else {
        VOXA_FAIL_IF(ncols != k, VOXA_EINVAL, "%s: %lld columns, expected %d (one per axis)",
                     where, (long long)ncols, k);
        for (int d = 0; d < k; d++) cols[d] = d;
    }
    double *c = malloc((size_t)(nrows * k + 1) * sizeof *c);
    VOXA_FAIL_IF(!c, VOXA_ENOMEM, "%s: out of memory for %lld rows", p->name, (long long)nrows);
    const double *v = t->array.data;
    for (int64_t r = 0; r < nrows; r++)
        for (int d = 0; d < k; d++) c[r * k + d] = v[r * ncols + cols[d]];
    *out = c;
    *n = nrows;
    return VOXA_OK;
}
