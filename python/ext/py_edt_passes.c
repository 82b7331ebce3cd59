/* voxa.dask's exact EDT by chunks (python/voxa/dask/_edt.py): the two passes
 * of include/voxa/edt.h, with the GIL released.
 *   edt_slices(block, spacing, g) -> has_bg: pass 1 on a block of whole
 *       slices (every axis but 0 whole), squared distances into g (float64,
 *       or uint32 with unit spacing);
 *   edt_columns(g, origin, has_bg, spacing, squared, out): pass 2 on a block
 *       holding axis 0 whole, written as voxa_edt writes (f64, f32, u32);
 *   edt_cdt_slices / edt_cdt_columns: the same for distance_transform_cdt's
 *       taxicab and chessboard metrics (int32).
 * spacing: None or ndim float64 values. */
#include "common.h"

static int spacing_of(vx_bufs *b, PyObject *o, int nd, const double **sp) {
    *sp = NULL;
    if (o == Py_None) return 0;
    Py_ssize_t n;
    if (vx_doubles(b, o, "spacing", sp, &n) < 0) return -1;
    if (n != nd) {
        PyErr_Format(PyExc_ValueError, "spacing: %zd values for %d dimensions", n, nd);
        return -1;
    }
    return 0;
}

PyObject *vx_py_edt_slices(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"block", "spacing", "g", NULL};
    PyObject *in_o, *sp_o, *g_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO", kwlist, &in_o, &sp_o, &g_o)) return NULL;
    vx_bufs b = {0};
    voxa_array in, g;
    const double *sp;
    int has_bg = 0;
    PyObject *ret = NULL;
    if (vx_array(&b, in_o, 0, "block", &in) == 0 && vx_array(&b, g_o, 1, "g", &g) == 0 &&
        spacing_of(&b, sp_o, in.ndim, &sp) == 0) {
        voxa_status s;
        Py_BEGIN_ALLOW_THREADS
        s = voxa_edt_slices(&in, sp, &g, &has_bg);
        Py_END_ALLOW_THREADS
        ret = s == VOXA_OK ? PyBool_FromLong(has_bg) : vx_raise(s);
    }
    vx_release(&b);
    return ret;
}

PyObject *vx_py_edt_columns(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"g", "origin", "has_bg", "spacing", "squared", "out", NULL};
    PyObject *g_o, *origin_o, *sp_o, *out_o;
    int has_bg, squared;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOpOpO", kwlist, &g_o, &origin_o, &has_bg, &sp_o,
                                     &squared, &out_o))
        return NULL;
    vx_bufs b = {0};
    voxa_array g, out;
    int64_t origin[VOXA_MAXDIM];
    voxa_edt_params p = {0};
    PyObject *ret = NULL;
    if (vx_array(&b, g_o, 0, "g", &g) == 0 && vx_array(&b, out_o, 1, "out", &out) == 0 &&
        vx_int64s(origin_o, g.ndim, origin, "origin") == 0 &&
        spacing_of(&b, sp_o, g.ndim, &p.spacing) == 0) {
        p.squared = squared;
        voxa_status s;
        Py_BEGIN_ALLOW_THREADS
        s = voxa_edt_columns(&g, origin, has_bg, &p, &out);
        Py_END_ALLOW_THREADS
        ret = s == VOXA_OK ? Py_NewRef(Py_None) : vx_raise(s);
    }
    vx_release(&b);
    return ret;
}

/* edt_cdt_slices(block, metric, g) and edt_cdt_columns(g, metric, out): the
 * same passes for the city block (metric 1) and chessboard (2) metrics,
 * int32 values; both (array in, metric, array out). */
typedef voxa_status (*cdt_pass)(const voxa_array *, voxa_edt_metric, voxa_array *);

static PyObject *run_cdt_pass(PyObject *args, PyObject *kw, char **kwlist, cdt_pass fn) {
    PyObject *in_o, *out_o;
    int metric;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiO", kwlist, &in_o, &metric, &out_o)) return NULL;
    vx_bufs b = {0};
    voxa_array in, out;
    PyObject *ret = NULL;
    if (vx_array(&b, in_o, 0, kwlist[0], &in) == 0 &&
        vx_array(&b, out_o, 1, kwlist[2], &out) == 0) {
        voxa_status s;
        Py_BEGIN_ALLOW_THREADS
        s = fn(&in, (voxa_edt_metric)metric, &out);
        Py_END_ALLOW_THREADS
        ret = s == VOXA_OK ? Py_NewRef(Py_None) : vx_raise(s);
    }
    vx_release(&b);
    return ret;
}

PyObject *vx_py_edt_cdt_slices(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"block", "metric", "g", NULL};
    return run_cdt_pass(args, kw, kwlist, voxa_edt_cdt_slices);
}

PyObject *vx_py_edt_cdt_columns(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"g", "metric", "out", NULL};
    return run_cdt_pass(args, kw, kwlist, voxa_edt_cdt_columns);
}
