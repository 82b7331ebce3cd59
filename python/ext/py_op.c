/* The generic call: any op of the registry (include/voxa/op.h) from Python,
 * with its parameters as keyword arguments converted by their declared type.
 * This replaces one binding per op: the public functions in python/voxa/
 * keep their scipy/scikit-image signatures, validate and allocate with
 * NumPy, then call
 *
 *     run_op(name, input, output, progress=None, count=True, backend=None, **params)
 *         -> the op's count (count=False: ops may skip it), or None
 *     op_output(name, input, **params) -> (dtype name, shape)
 *     op_halo(name, ndim, **params) -> (lo, hi)
 *     op_describe(name, input, **params) -> str or None
 *
 * Conversions (None leaves a parameter absent, even one with a default):
 *   flag -> truth value; int -> an integer (__index__); float -> a number;
 *   choice, dtype -> a word (dtype: also np.dtype objects and scalar types);
 *   string -> str or os.PathLike; ints/floats -> a number (every axis) or a
 *   sequence; array -> any buffer; table -> a 1-D/2-D C-contiguous float64
 *   buffer, or (buffer, column names).
 * Buffers are held in one vx_bufs and released once; the GIL is released
 * around the run, and `progress` (and Ctrl-C) can cancel it. `progress` and
 * `count` are run_op's own keywords, so no op may name a parameter so. */
#include "py_call.h"

#include <math.h>
#include <string.h>

static void call_free(call *c) {
    if (c->args_ready) voxa_args_free(&c->args);
    c->args_ready = 0;
    vx_release(&c->bufs);
}

/* Non-zero, with a ValueError naming the parameter, if x (from v) is NaN or
 * infinite. */
static int not_finite(const voxa_param *p, double x, PyObject *v) {
    if (isfinite(x)) return 0;
    PyErr_Format(PyExc_ValueError, "%s: %R is not finite", p->name, v);
    return 1;
}

/* A Python value as the list of one INTS/FLOATS parameter. */
static int get_list(const voxa_param *p, PyObject *v, double *x, int *n) {
    if (PyNumber_Check(v) && !PySequence_Check(v)) {
        x[0] = PyFloat_AsDouble(v);
        *n = 1;
        if (x[0] == -1.0 && PyErr_Occurred()) return -1;
        return not_finite(p, x[0], v) ? -1 : 0;
    }
    PyObject *seq = PySequence_Fast(v, "");
    if (!seq) {
        PyErr_Format(PyExc_TypeError, "%s: expected a number or a sequence of numbers",
                     p->name);
        return -1;
    }
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (k < 1 || k > VOXA_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "%s: %zd values, expected 1 to %d", p->name, k,
                     VOXA_MAXDIM);
        rc = -1;
    }
    for (Py_ssize_t i = 0; rc == 0 && i < k; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        x[i] = PyFloat_AsDouble(item);
        if (x[i] == -1.0 && PyErr_Occurred()) rc = -1;
        else if (not_finite(p, x[i], item)) rc = -1;
    }
    Py_DECREF(seq);
    *n = (int)k;
    return rc;
}

/* A table: a buffer, or (buffer, names). Returns 0, or -1 with an exception. */
static int set_table(call *c, const voxa_param *p, PyObject *v) {
    PyObject *data = v, *names = NULL;
    if (PyTuple_Check(v) && PyTuple_GET_SIZE(v) == 2) {
        data = PyTuple_GET_ITEM(v, 0);
        names = PyTuple_GET_ITEM(v, 1) == Py_None ? NULL : PyTuple_GET_ITEM(v, 1);
    }
    voxa_array arr;
    if (vx_array(&c->bufs, data, 0, p->name, &arr) < 0) return -1;
    const char *cols[1024];
    Py_ssize_t ncols = arr.ndim == 2 ? arr.shape[1] : 1;
    if (names) {
        PyObject *seq = PySequence_Fast(names, "");
        if (!seq || PySequence_Fast_GET_SIZE(seq) != ncols || ncols > 1024) {
            Py_XDECREF(seq);
            PyErr_Format(PyExc_ValueError, "%s: expected %zd column names (at most 1024)",
                         p->name, ncols);
            return -1;
        }
        if (vx_keep(&c->bufs, seq) < 0) return -1; /* keeps the names' UTF-8 */
        for (Py_ssize_t i = 0; i < ncols; i++)
            if (!(cols[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(seq, i)))) return -1;
    }
    voxa_status s = voxa_args_set_array(&c->args, p->name, &arr, names ? cols : NULL);
    return s == VOXA_OK ? 0 : (vx_raise(s), -1);
}

/* Set parameter p from v. Returns 0, or -1 with a Python exception. */
static int set_param(call *c, const voxa_param *p, PyObject *v) {
    voxa_args *a = &c->args;
    voxa_status s = VOXA_OK;
    switch (v == Py_None ? -1 : (int)p->type) {
    case -1:
        s = voxa_args_clear(a, p->name);
        break;
    case VOXA_PARAM_FLAG: {
        int t = PyObject_IsTrue(v);
        if (t < 0) return -1;
        s = voxa_args_set_int(a, p->name, t);
        break;
    }
    case VOXA_PARAM_INT: {
        PyObject *i = PyNumber_Index(v);
        long long x = i ? PyLong_AsLongLong(i) : -1;
        Py_XDECREF(i);
        if (x == -1 && PyErr_Occurred()) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "%s: expected an integer, got %R", p->name, v);
            }
            return -1;
        }
        s = voxa_args_set_int(a, p->name, x);
        break;
    }
    case VOXA_PARAM_FLOAT: {
        double x = PyFloat_AsDouble(v);
        if (x == -1.0 && PyErr_Occurred()) return -1;
        if (not_finite(p, x, v)) return -1;
        s = voxa_args_set_float(a, p->name, x);
        break;
    }
    case VOXA_PARAM_INTS:
    case VOXA_PARAM_FLOATS: {
        double x[VOXA_MAXDIM];
        int n;
        if (get_list(p, v, x, &n) < 0) return -1;
        s = voxa_args_set_list(a, p->name, x, n);
        break;
    }
    case VOXA_PARAM_CHOICE:
    case VOXA_PARAM_DTYPE:
    case VOXA_PARAM_STRING: {
        const char *text;
        if (p->type == VOXA_PARAM_STRING && !PyUnicode_Check(v)) {
            if (vx_path(&c->bufs, v, &text) < 0) return -1;
        } else {
            PyObject *str = p->type == VOXA_PARAM_DTYPE && PyType_Check(v) /* np.uint16 */
                                ? PyObject_GetAttrString(v, "__name__")
                                : PyObject_Str(v);
            if (vx_keep(&c->bufs, str) < 0 || !(text = PyUnicode_AsUTF8(str))) return -1;
        }
        s = voxa_args_parse(a, p->name, text);
        break;
    }
    case VOXA_PARAM_ARRAY: {
        voxa_array arr;
        int writable = (p->flags & VOXA_PARAM_OUTPUT) != 0; /* a second output */
        if (vx_array(&c->bufs, v, writable, p->name, &arr) < 0) return -1;
        s = voxa_args_set_array(a, p->name, &arr, NULL);
        break;
    }
    case VOXA_PARAM_TABLE:
        return set_table(c, p, v);
    }
    return s == VOXA_OK ? 0 : (vx_raise(s), -1);
}

/* A parameter given in a group of exclusive ones ("oneof") replaces the
 * defaults of the others (label: structure= drops connectivity's default);
 * two given still conflict. */
static void drop_group_defaults(call *c, const char *given) {
    const voxa_op *op = c->op;
    for (int i = 0; i < op->nparams; i++) {
        if (!given[i] || !op->params[i].oneof) continue;
        for (int j = 0; j < op->nparams; j++) {
            const char *g = op->params[j].oneof;
            if (!given[j] && g && !strcmp(g, op->params[i].oneof))
                voxa_args_clear(&c->args, op->params[j].name);
        }
    }
}

/* Fill c from (name, input, **kwargs); `input_obj` NULL: no input (op_halo).
 * Keywords listed in `skip` are not parameters. Returns 0 or -1 with an
 * exception; call_free(c) either way. */
static int call_init(call *c, const char *fname, PyObject *name_obj, PyObject *input_obj,
                     PyObject *kwargs, const char *const *skip) {
    memset(c, 0, sizeof *c);
    const char *name = PyUnicode_AsUTF8(name_obj);
    if (!name) return -1;
    if (!(c->op = voxa_op_find(name))) {
        PyErr_Format(PyExc_ValueError, "%s: no op named '%s'", fname, name);
        return -1;
    }
    voxa_status s = voxa_args_init(&c->args, c->op);
    if (s != VOXA_OK) return vx_raise(s), -1;
    c->args_ready = 1;
    if (input_obj && input_obj != Py_None) {
        if (vx_array(&c->bufs, input_obj, 0, "input", &c->in) < 0) return -1;
        c->has_in = 1;
    } else if (input_obj && c->op->ninputs > 0) {
        PyErr_Format(PyExc_TypeError, "%s: %s needs an input array", fname, c->op->name);
        return -1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    char given[VOXA_OP_MAXPARAMS] = {0};
    while (kwargs && PyDict_Next(kwargs, &pos, &key, &value)) {
        const char *k = PyUnicode_AsUTF8(key);
        if (!k) return -1;
        int skipped = 0;
        for (int j = 0; skip && skip[j]; j++) skipped |= !strcmp(k, skip[j]);
        if (skipped) continue;
        int i = voxa_op_param(c->op, k);
        if (i < 0) {
            PyErr_Format(PyExc_TypeError, "%s: %s has no parameter '%s'", fname, c->op->name, k);
            return -1;
        }
        if (set_param(c, &c->op->params[i], value) < 0) return -1;
        given[i] = value != Py_None;
    }
    drop_group_defaults(c, given);
    return 0;
}

/* backend="cpu"|"opencl"|"cuda"|"auto" (None: VOXA_BACKEND, else cpu). */
static int set_backend(call *c, PyObject *kw) {
    PyObject *v = kw ? PyDict_GetItemString(kw, "backend") : NULL;
    if (!v || v == Py_None) return 0;
    const char *name = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    voxa_backend b;
    if (!name || voxa_backend_from_name(name, &b) != VOXA_OK) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "backend: %R: expected 'cpu', 'opencl', 'cuda' or 'auto'",
                     v);
        return -1;
    }
    voxa_args_set_backend(&c->args, b);
    return 0;
}

/* run_op's own keywords: progress=callable, count=False (skip the count of
 * ops where it costs a pass), backend= (set_backend). */
static int run_options(PyObject *kw, PyObject **progress, int *want_count) {
    PyObject *p = kw ? PyDict_GetItemString(kw, "progress") : NULL;
    PyObject *c = kw ? PyDict_GetItemString(kw, "count") : NULL;
    *progress = p;
    *want_count = c ? PyObject_IsTrue(c) : 1;
    return *want_count < 0 ? -1 : 0;
}

PyObject *vx_py_run_op(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *name, *in_o, *out_o, *prog_o;
    int want_count;
    if (!PyArg_ParseTuple(args, "UOO", &name, &in_o, &out_o)) return NULL;
    if (run_options(kw, &prog_o, &want_count) < 0) return NULL;
    static const char *const skip[] = {"progress", "count", "backend", NULL};
    call c;
    PyObject *ret = NULL;
    voxa_array out;
    if (call_init(&c, "run_op", name, in_o, kw, skip) < 0 || set_backend(&c, kw) < 0) goto done;
    if (vx_array(&c.bufs, out_o, 1, "output", &out) < 0) goto done;
    vx_progress pp = {prog_o, 0};
    voxa_progress prog = vx_progress_bridge(&pp);
    int64_t count = -1;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_op_run(&c.args, c.has_in ? &c.in : NULL, &out, &prog, want_count ? &count : NULL);
    Py_END_ALLOW_THREADS
    if (pp.failed) goto done; /* the callback's own exception */
    if (s != VOXA_OK) vx_raise(s);
    else if ((c.op->flags & VOXA_OP_COUNT) && count >= 0) ret = PyLong_FromLongLong(count);
    else ret = Py_NewRef(Py_None);
done:
    call_free(&c);
    return ret;
}

/* op_output and op_describe: check the arguments against the input, then
 * ask for the output's dtype and shape, or the algorithm's description. */
static PyObject *query(PyObject *args, PyObject *kw, const char *fname, int describe) {
    PyObject *name, *in_o, *ret = NULL;
    if (!PyArg_ParseTuple(args, "UO", &name, &in_o)) return NULL;
    call c;
    if (call_init(&c, fname, name, in_o, kw, NULL) == 0) {
        const voxa_array *in = c.has_in ? &c.in : NULL;
        const voxa_op *op = c.op;
        char buf[512];
        voxa_dtype dt;
        int nd;
        int64_t shape[VOXA_MAXDIM + 1];
        voxa_status s = voxa_op_check(&c.args, in);
        if (s == VOXA_OK && !describe) s = voxa_op_output(&c.args, in, &dt, &nd, shape);
        if (s == VOXA_OK && describe && op->describe)
            s = op->describe(&c.args, in, buf, sizeof buf);
        if (s != VOXA_OK) vx_raise(s);
        else if (!describe) ret = Py_BuildValue("(sN)", voxa_dtype_name(dt), vx_shape(nd, shape));
        else ret = op->describe ? PyUnicode_FromString(buf) : Py_NewRef(Py_None);
    }
    call_free(&c);
    return ret;
}

PyObject *vx_py_op_output(PyObject *self, PyObject *args, PyObject *kw) {
    return query(args, kw, "op_output", 0);
}

PyObject *vx_py_op_describe(PyObject *self, PyObject *args, PyObject *kw) {
    return query(args, kw, "op_describe", 1);
}

PyObject *vx_py_op_halo(PyObject *self, PyObject *args, PyObject *kw) {
    PyObject *name, *ret = NULL;
    int ndim;
    if (!PyArg_ParseTuple(args, "Ui", &name, &ndim)) return NULL;
    call c;
    if (call_init(&c, "op_halo", name, NULL, kw, NULL) == 0) {
        int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM];
        /* Halo functions read their parameters unchecked: check them first,
         * against a one-voxel probe of ndim axes (no data is read). */
        static uint64_t cell;
        voxa_array probe = {.data = &cell, .ndim = ndim};
        while (c.op->in_dtypes && probe.dtype + 1 < VOXA_NDTYPES &&
               !(c.op->in_dtypes & (1u << probe.dtype)))
            probe.dtype++;
        for (int d = 0; d < ndim && d < VOXA_MAXDIM; d++) probe.shape[d] = 1;
        voxa_status s = ndim < 0 || ndim > VOXA_MAXDIM ? VOXA_OK
                        : voxa_op_check(&c.args, c.op->ninputs ? &probe : NULL);
        if (s == VOXA_OK) s = voxa_op_halo(&c.args, ndim, lo, hi);
        if (s != VOXA_OK) vx_raise(s);
        else ret = Py_BuildValue("(NN)", vx_shape(ndim, lo), vx_shape(ndim, hi));
    }
    call_free(&c);
    return ret;
}

/* For py_stream.c (py_call.h). */
int vx_call_init(call *c, const char *fname, PyObject *name_obj, PyObject *input_obj,
                 PyObject *kwargs, const char *const *skip) {
    return call_init(c, fname, name_obj, input_obj, kwargs, skip);
}

void vx_call_free(call *c) { call_free(c); }
