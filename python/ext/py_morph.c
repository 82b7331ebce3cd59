/* Bindings of the edt and morph families. The Python layer
 * (voxa/morphology.py) validates, converts and allocates; these functions take
 * ready buffers and release the GIL around the library call. */
#include "legacy.h"

#include <string.h>

/* Optional float64 sequence (a C-contiguous buffer) of exactly ndim values. */
static int get_spacing(PyObject *obj, int ndim, Py_buffer *view, const double **sp) {
    *sp = NULL;
    view->obj = NULL;
    if (obj == Py_None) return 0;
    Py_ssize_t n;
    if (vx_get_doubles(obj, "spacing", view, sp, &n) < 0) return -1;
    if (n != ndim) {
        PyErr_Format(PyExc_ValueError, "spacing has %zd values, the input %d dimensions", n,
                     ndim);
        PyBuffer_Release(view);
        view->obj = NULL;
        return -1;
    }
    return 0;
}

PyObject *vx_py_edt(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "out", "indices", "spacing", "squared", NULL};
    PyObject *in_o, *out_o, *ind_o, *sp_o;
    int squared;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOp", kwlist, &in_o, &out_o, &ind_o, &sp_o,
                                     &squared))
        return NULL;
    Py_buffer vin, vout = {0}, vind = {0}, vsp = {0};
    voxa_array in, out, ind;
    if (vx_get_array(in_o, 0, "input", &vin, &in) < 0) return NULL;
    int have_out = out_o != Py_None, have_ind = ind_o != Py_None;
    voxa_edt_params p = {0};
    p.squared = squared;
    PyObject *ret = NULL;
    if (have_out && vx_get_array(out_o, 1, "out", &vout, &out) < 0) goto fail_in;
    if (have_ind && vx_get_array(ind_o, 1, "indices", &vind, &ind) < 0) goto fail_out;
    if (get_spacing(sp_o, in.ndim, &vsp, &p.spacing) < 0) goto fail_ind;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    if (have_ind) s = voxa_edt_indices(&in, have_out ? &out : NULL, &ind, &p);
    else s = voxa_edt(&in, &out, &p);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) vx_raise(s);
    else ret = Py_None, Py_INCREF(ret);
    if (vsp.obj) PyBuffer_Release(&vsp);
fail_ind:
    if (have_ind) PyBuffer_Release(&vind);
fail_out:
    if (have_out) PyBuffer_Release(&vout);
fail_in:
    PyBuffer_Release(&vin);
    return ret;
}

PyObject *vx_py_cdt(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "out", "metric", NULL};
    PyObject *in_o, *out_o;
    int metric;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOi", kwlist, &in_o, &out_o, &metric)) return NULL;
    Py_buffer vin, vout;
    voxa_array in, out;
    if (vx_get_array(in_o, 0, "input", &vin, &in) < 0) return NULL;
    if (vx_get_array(out_o, 1, "out", &vout, &out) < 0) {
        PyBuffer_Release(&vin);
        return NULL;
    }
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_edt_cdt(&in, &out, (voxa_edt_metric)metric);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vin);
    PyBuffer_Release(&vout);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}

/* Fill an element from (kind, radius, spacing, box, connectivity, footprint).
 * Buffers acquired are released by release_element. */
typedef struct elem_bufs {
    Py_buffer sp, fp;
    voxa_array fpa;
} elem_bufs;

static int get_element(int ndim, int kind, double radius, PyObject *sp_o, PyObject *box_o,
                       int conn, PyObject *fp_o, voxa_morph_element *se, elem_bufs *b) {
    memset(se, 0, sizeof *se);
    memset(b, 0, sizeof *b);
    se->kind = (voxa_morph_kind)kind;
    se->radius = radius;
    se->connectivity = conn;
    if (box_o != Py_None) {
        PyObject *seq = PySequence_Fast(box_o, "box must be a sequence of sizes");
        if (!seq) return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n != ndim) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "box has %zd sizes, the input %d dimensions", n, ndim);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            se->box[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
            if (se->box[i] == -1 && PyErr_Occurred()) {
                Py_DECREF(seq);
                return -1;
            }
        }
        Py_DECREF(seq);
    }
    if (get_spacing(sp_o, ndim, &b->sp, &se->spacing) < 0) return -1;
    if (fp_o != Py_None) {
        if (vx_get_array(fp_o, 0, "structure", &b->fp, &b->fpa) < 0) {
            if (b->sp.obj) PyBuffer_Release(&b->sp);
            b->sp.obj = NULL;
            return -1;
        }
        se->footprint = &b->fpa;
    }
    return 0;
}

static void release_element(elem_bufs *b) {
    if (b->sp.obj) PyBuffer_Release(&b->sp);
    if (b->fp.obj) PyBuffer_Release(&b->fp);
}

PyObject *vx_py_morph(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"op", "input", "out", "kind", "radius", "spacing", "box",
                             "connectivity", "footprint", "iterations", "border_value", NULL};
    int op, kind, conn, iters, bv;
    double radius;
    PyObject *in_o, *out_o, *sp_o, *box_o, *fp_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iOOidOOiOii", kwlist, &op, &in_o, &out_o, &kind,
                                     &radius, &sp_o, &box_o, &conn, &fp_o, &iters, &bv))
        return NULL;
    Py_buffer vin, vout;
    voxa_array in, out;
    if (vx_get_array(in_o, 0, "input", &vin, &in) < 0) return NULL;
    if (vx_get_array(out_o, 1, "output", &vout, &out) < 0) {
        PyBuffer_Release(&vin);
        return NULL;
    }
    voxa_morph_params p;
    memset(&p, 0, sizeof p);
    elem_bufs eb;
    PyObject *ret = NULL;
    if (get_element(in.ndim, kind, radius, sp_o, box_o, conn, fp_o, &p.se, &eb) == 0) {
        p.iterations = iters;
        p.border_value = bv;
        voxa_status s;
        Py_BEGIN_ALLOW_THREADS
        s = voxa_morph((voxa_morph_op)op, &in, &out, &p);
        Py_END_ALLOW_THREADS
        release_element(&eb);
        if (s != VOXA_OK) vx_raise(s);
        else ret = Py_None, Py_INCREF(ret);
    }
    PyBuffer_Release(&vin);
    PyBuffer_Release(&vout);
    return ret;
}

/* morph_element(ndim, kind, radius, spacing, box, connectivity)
 *   -> (bytearray of bools, shape) */
PyObject *vx_py_morph_element(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ndim", "kind", "radius", "spacing", "box", "connectivity", NULL};
    int ndim, kind, conn;
    double radius;
    PyObject *sp_o, *box_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iidOOi", kwlist, &ndim, &kind, &radius, &sp_o,
                                     &box_o, &conn))
        return NULL;
    if (ndim < 1 || ndim > VOXA_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "ndim %d must be 1..%d", ndim, VOXA_MAXDIM);
        return NULL;
    }
    voxa_morph_element se;
    elem_bufs eb;
    if (get_element(ndim, kind, radius, sp_o, box_o, conn, Py_None, &se, &eb) < 0) return NULL;
    voxa_array a;
    voxa_status s = voxa_morph_element_array(&se, ndim, &a);
    release_element(&eb);
    if (s != VOXA_OK) return vx_raise(s);
    int64_t n = voxa_array_size(&a);
    PyObject *buf = PyByteArray_FromStringAndSize(a.data, (Py_ssize_t)n);
    PyObject *shape = PyTuple_New(ndim);
    for (int d = 0; shape && d < ndim; d++) PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(a.shape[d]));
    voxa_array_free(&a);
    if (!buf || !shape) {
        Py_XDECREF(buf);
        Py_XDECREF(shape);
        return NULL;
    }
    return Py_BuildValue("(NN)", buf, shape);
}

/* morph_describe(ndim, kind, radius, spacing, box, connectivity, footprint,
 *                iterations) -> str */
PyObject *vx_py_morph_describe(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ndim", "kind", "radius", "spacing", "box", "connectivity",
                             "footprint", "iterations", NULL};
    int ndim, kind, conn, iters;
    double radius;
    PyObject *sp_o, *box_o, *fp_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iidOOiOi", kwlist, &ndim, &kind, &radius, &sp_o,
                                     &box_o, &conn, &fp_o, &iters))
        return NULL;
    voxa_morph_element se;
    elem_bufs eb;
    if (get_element(ndim, kind, radius, sp_o, box_o, conn, fp_o, &se, &eb) < 0) return NULL;
    char buf[512];
    voxa_status s = voxa_morph_describe(&se, ndim, iters, buf, sizeof buf);
    release_element(&eb);
    if (s != VOXA_OK) return vx_raise(s);
    return PyUnicode_FromString(buf);
}
