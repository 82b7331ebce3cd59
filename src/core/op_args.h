/* What op descriptors use to read their arguments (not installed). The
 * descriptor files (src/ops/<family>/op_*.c) read values by parameter index
 * (an enum in each file, in the order of its parameter table). */
#ifndef VOXA_OP_ARGS_H
#define VOXA_OP_ARGS_H

#include "internal.h"
#include "voxa/op.h"

/* Parse `text` as a value of parameter p into *v (replacing it). */
voxa_status voxa__value_parse(const voxa_param *p, const char *text, voxa_value *v);
/* Store an array value (TABLE: float64 C-contiguous) at index i; `owned`
 * hands arr->owner to the args. Names and source are copied. */
voxa_status voxa__args_take_array(voxa_args *a, int i, voxa_array *arr, int owned,
                                  const char *const *names, int header_lines,
                                  const char *source);
/* "a whole number", "a table", ...: what a parameter type expects. */
const char *voxa__param_kind(const voxa_param *p);
/* Word number idx of a CHOICE parameter, into buf. */
const char *voxa__choice_word(const voxa_param *p, int64_t idx, char *buf, size_t n);

/* The output rule of the ops whose output has the input's shape: *nd and
 * shape from `in` (the dtype is the op's own choice). */
static inline void voxa__output_same_shape(const voxa_array *in, int *nd, int64_t *shape) {
    *nd = in->ndim;
    for (int d = 0; d < in->ndim; d++) shape[d] = in->shape[d];
}

static inline const voxa_value *voxa__arg(const voxa_args *a, int i) { return &a->v[i]; }
static inline int voxa__arg_set(const voxa_args *a, int i) { return a->v[i].set; }
static inline int64_t voxa__arg_int(const voxa_args *a, int i) { return a->v[i].i; }
static inline double voxa__arg_float(const voxa_args *a, int i) { return a->v[i].f; }
static inline const voxa_array *voxa__arg_array(const voxa_args *a, int i) {
    return a->v[i].set ? &a->v[i].array : NULL;
}

/* Per-axis list of parameter i expanded to ndim values (one value repeats),
 * as doubles; NULL when the parameter is absent. */
const double *voxa__arg_axes(const voxa_args *a, int i, int ndim, double *buf);

/* Coordinates of a TABLE value as an n x k row-major float64 array in *out
 * (malloc'ed, free() it): named columns axis0..axis{k-1} when present, else
 * the last k of z, y, x (k <= 3); an unnamed table must have k columns (or
 * be 1-D when k is 1). EINVAL naming the parameter and the missing column. */
voxa_status voxa__table_coords(const voxa_args *a, int i, int k, double **out, int64_t *n);
/* Coordinate columns a TABLE holds: its column count when unnamed, else the
 * number of axis0.. columns, else 3, 2 or 1 as it has z, y or only x. */
int voxa__table_ncoords(const voxa_value *t);
/* Column `name` of a TABLE value (case-insensitive), or -1. */
int voxa__table_column(const voxa_value *t, const char *name);
/* "line L" (CSV tables: rows counted from the file's first line) or
 * "row R", for messages about row r. */
const char *voxa__table_row(const voxa_value *t, int64_t r, char *buf, size_t n);

#endif
