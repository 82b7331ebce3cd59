/* Binding of voxa_fill_holes: fill_holes(input, output, structure, origin).
 * The Python layer (voxa/fill.py) follows scipy's argument rules, expands
 * the structure over `axes`, allocates the output and passes a structure
 * array (or None for connectivity 1) and one origin per axis. The generic
 * op call replaces this file when it lands. */
#include "common.h"

PyObject *vx_py_fill_holes(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"input", "output", "structure", "origin", NULL};
    PyObject *in_obj, *out_obj, *st_obj = Py_None, *or_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO", kwlist, &in_obj, &out_obj, &st_obj,
                                     &or_obj))
        return NULL;
    Py_buffer iv = {0}, ov = {0}, sv = {0};
    voxa_array in, out, st;
    int64_t origin[VOXA_MAXDIM] = {0};
    PyObject *res = NULL;
    if (vx_get_array(in_obj, 0, "input", &iv, &in) < 0) goto done;
    if (vx_get_array(out_obj, 1, "output", &ov, &out) < 0) goto done;
    if (st_obj != Py_None && vx_get_array(st_obj, 0, "structure", &sv, &st) < 0) goto done;
    if (or_obj != Py_None) {
        PyObject *seq = PySequence_Fast(or_obj, "origin: expected a sequence of integers");
        if (!seq) goto done;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        if (n != in.ndim) {
            PyErr_Format(PyExc_ValueError, "origin: %zd values for %d axes", n, in.ndim);
            Py_DECREF(seq);
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            origin[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
            if (origin[i] == -1 && PyErr_Occurred()) break;
        }
        Py_DECREF(seq);
        if (PyErr_Occurred()) goto done;
    }
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_fill_holes(&in, st_obj != Py_None ? &st : NULL, 1, origin, &out);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) vx_raise(s);
    else {
        Py_INCREF(Py_None);
        res = Py_None;
    }
done:
    if (iv.obj) PyBuffer_Release(&iv);
    if (ov.obj) PyBuffer_Release(&ov);
    if (sv.obj) PyBuffer_Release(&sv);
    return res;
}
