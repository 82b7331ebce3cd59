/* voxa_args_parse: text values, where ARRAY and TABLE parameters are file
 * paths read here (this layer sits above io; core parses everything else).
 * A TABLE file is a .csv with a header (named columns) or any array file
 * holding an N x k (or N) array of numbers (unnamed columns). */
#include "op_args.h"
#include "voxa/io.h"

#include <stdlib.h>
#include <string.h>

static voxa_status read_table(voxa_args *a, int i, const char *path) {
    const voxa_param *p = &a->op->params[i];
    const char *dot = strrchr(path, '.');
    if (dot && !strcmp(dot, ".csv")) {
        voxa_table t;
        VOXA_CHECK(voxa_csv_read(path, &t));
        voxa_array arr;
        int64_t shape[2] = {t.nrows, t.ncols};
        voxa_status st = voxa_array_new(&arr, VOXA_F64, 2, shape);
        if (st == VOXA_OK) {
            if (t.nrows > 0 && t.ncols > 0) memcpy(arr.data, t.values, sizeof(double) * (size_t)(t.nrows * t.ncols));
            st = voxa__args_take_array(a, i, &arr, 1, (const char *const *)t.names, 1, path);
            if (st != VOXA_OK) voxa_array_free(&arr);
        }
        voxa_table_free(&t);
        return st;
    }
    voxa_array raw, arr;
    VOXA_CHECK(voxa_read(path, &raw));
    voxa_status st = VOXA_OK;
    if (raw.ndim < 1 || raw.ndim > 2) {
        st = voxa__error(VOXA_EINVAL, "%s: %s: a table must be an N x k array, got %d "
                         "dimensions", p->name, path, raw.ndim);
    } else if ((st = voxa_array_new(&arr, VOXA_F64, raw.ndim, raw.shape)) == VOXA_OK) {
        int64_t nr = raw.shape[0], nc = raw.ndim == 2 ? raw.shape[1] : 1;
        double *v = arr.data;
        for (int64_t r = 0; r < nr; r++)
            for (int64_t c = 0; c < nc; c++)
                v[r * nc + c] = voxa_array_get(&raw, (const int64_t[2]){r, c});
        st = voxa__args_take_array(a, i, &arr, 1, NULL, 0, path);
        if (st != VOXA_OK) voxa_array_free(&arr);
    }
    voxa_array_free(&raw);
    return st;
}

voxa_status voxa_args_parse(voxa_args *a, const char *name, const char *text) {
    VOXA_FAIL_IF(!a || !a->op || !name || !text, VOXA_EINVAL, "args: NULL argument");
    int i = voxa_op_param(a->op, name);
    VOXA_FAIL_IF(i < 0, VOXA_EINVAL, "%s: no parameter '%s'", a->op->name, name);
    const voxa_param *p = &a->op->params[i];
    if (p->type == VOXA_PARAM_TABLE) return read_table(a, i, text);
    if (p->type == VOXA_PARAM_ARRAY) {
        voxa_array arr;
        VOXA_CHECK(voxa_read(text, &arr));
        voxa_status st = voxa__args_take_array(a, i, &arr, 1, NULL, 0, text);
        if (st != VOXA_OK) voxa_array_free(&arr);
        return st;
    }
    return voxa__value_parse(p, text, &a->v[i]);
}
