/* The op registry as Python data: ops() -> list of dicts, one per op, for
 * the callers that are generic over ops (tests, the future Dask layer and
 * napari plugin: widgets and docstrings from the same text as `voxa help`).
 *
 *   {"name", "python", "group", "cli_name", "summary", "details",
 *    "ninputs", "flags": ["local"|"global"|"same_shape"|"halo_approx"|"count"],
 *    "in_dtypes": [dtype names] (empty: any), "has_halo", "has_describe",
 *    "scratch": working bytes per voxel beyond input and output (planners),
 *    "params": [{"name", "type", "default", "help", "choices", "min", "max",
 *                "flags": ["required"|"per_axis"|"hidden"|"output"], "oneof",
 *                "metavar", "alias"}]}
 *
 * "type" is flag, int, float, choice, dtype, ints, floats, string, array or
 * table; "default" is the parsed default as a Python value (None: absent);
 * "choices" a list of words (aliases "a=b" as written) or None; min/max None
 * when the parameter has no range. The halo itself: op_halo (py_op.c). */
#include "common.h"

#include <string.h>

static const char *const type_names[] = {"flag", "int", "float", "choice", "dtype",
                                         "ints", "floats", "string", "array", "table"};

/* Append item (a new reference, or NULL) to *l; on failure *l is cleared. */
static void append(PyObject **l, PyObject *item) {
    if (*l && (!item || PyList_Append(*l, item) < 0)) Py_CLEAR(*l);
    Py_XDECREF(item);
}

/* A list of the names whose bit is set in `bits`. */
static PyObject *bit_names(unsigned bits, const char *const *names, int n) {
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < n; i++)
        if ((bits & (1u << i)) && names[i]) append(&l, PyUnicode_FromString(names[i]));
    return l;
}

/* "a|b|c" -> ["a", "b", "c"]; NULL -> None. */
static PyObject *split_words(const char *choices) {
    if (!choices) return Py_NewRef(Py_None);
    PyObject *all = PyUnicode_FromString(choices), *sep = PyUnicode_FromString("|");
    PyObject *l = all && sep ? PyUnicode_Split(all, sep, -1) : NULL;
    Py_XDECREF(all);
    Py_XDECREF(sep);
    return l;
}

static PyObject *text_or_none(const char *s) {
    return s ? PyUnicode_FromString(s) : Py_NewRef(Py_None);
}

/* The default of parameter p (its value after voxa_args_init) in Python. */
static PyObject *default_value(const voxa_param *p, const voxa_value *v) {
    if (!v->set) return Py_NewRef(Py_None);
    switch (p->type) {
    case VOXA_PARAM_FLAG: return PyBool_FromLong((long)v->i);
    case VOXA_PARAM_INT: return PyLong_FromLongLong(v->i);
    case VOXA_PARAM_FLOAT: return PyFloat_FromDouble(v->f);
    case VOXA_PARAM_DTYPE: return PyUnicode_FromString(voxa_dtype_name((voxa_dtype)v->i));
    case VOXA_PARAM_INTS:
    case VOXA_PARAM_FLOATS: {
        PyObject *t = PyTuple_New(v->n);
        for (int k = 0; t && k < v->n; k++) {
            PyObject *x = p->type == VOXA_PARAM_INTS ? PyLong_FromLongLong(v->iv[k])
                                                     : PyFloat_FromDouble(v->fv[k]);
            if (!x) Py_CLEAR(t);
            else PyTuple_SET_ITEM(t, k, x);
        }
        return t;
    }
    default: /* choice, string: the default as written */
        return text_or_none(p->def);
    }
}

static PyObject *param_dict(const voxa_param *p, const voxa_value *v) {
    static const char *const flag_names[] = {"required", "per_axis", "hidden", "output"};
    int ranged = p->min <= p->max && p->type != VOXA_PARAM_CHOICE &&
                 p->type != VOXA_PARAM_DTYPE && p->type <= VOXA_PARAM_FLOATS;
    return Py_BuildValue("{s:s,s:s,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N}", "name", p->name, "type",
                         type_names[p->type], "default", default_value(p, v), "help",
                         text_or_none(p->help), "choices", split_words(p->choices), "min",
                         ranged ? PyFloat_FromDouble(p->min) : Py_NewRef(Py_None), "max",
                         ranged ? PyFloat_FromDouble(p->max) : Py_NewRef(Py_None), "flags",
                         bit_names(p->flags, flag_names, 4), "oneof", text_or_none(p->oneof),
                         "metavar", text_or_none(p->metavar), "alias", text_or_none(p->alias));
}

static PyObject *op_dict(const voxa_op *op) {
    static const char *const flag_names[] = {"local", "global", "same_shape", "halo_approx",
                                             "count"};
    const char *dtypes[VOXA_NDTYPES];
    for (int t = 0; t < VOXA_NDTYPES; t++) dtypes[t] = voxa_dtype_name((voxa_dtype)t);
    voxa_args a;
    voxa_status s = voxa_args_init(&a, op);
    if (s != VOXA_OK) return vx_raise(s);
    PyObject *params = PyList_New(0);
    for (int i = 0; params && i < op->nparams; i++)
        append(&params, param_dict(&op->params[i], &a.v[i]));
    voxa_args_free(&a);
    if (!params) return NULL;
    return Py_BuildValue("{s:s,s:N,s:N,s:N,s:N,s:N,s:i,s:N,s:N,s:O,s:O,s:d,s:N}", "name",
                         op->name,
                         "python", text_or_none(op->python), "group", text_or_none(op->group),
                         "cli_name", text_or_none(op->cli_name ? op->cli_name : op->name),
                         "summary", text_or_none(op->summary), "details",
                         text_or_none(op->details), "ninputs", op->ninputs, "flags",
                         bit_names(op->flags, flag_names, 5), "in_dtypes",
                         bit_names(op->in_dtypes, dtypes, VOXA_NDTYPES), "has_halo",
                         op->halo ? Py_True : Py_False, "has_describe",
                         op->describe ? Py_True : Py_False, "scratch", op->scratch, "params",
                         params);
}

PyObject *vx_py_ops(PyObject *self, PyObject *args, PyObject *kw) {
    int n;
    const voxa_op *const *ops = voxa_ops(&n);
    PyObject *l = PyList_New(0);
    for (int i = 0; l && i < n; i++) append(&l, op_dict(ops[i]));
    return l;
}
