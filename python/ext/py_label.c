/* Binding of voxa_label: label(input, output, structure, connectivity) -> n.
 * The Python layer (voxa/measure.py) validates, converts the structure to
 * 3^ndim uint8 bytes (or None) and allocates the output. */
#include "common.h"

PyObject *vx_py_label(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"input", "output", "structure", "connectivity", NULL};
    PyObject *in_obj, *out_obj, *st_obj = Py_None;
    int connectivity = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|Oi", kwlist, &in_obj, &out_obj, &st_obj,
                                     &connectivity))
        return NULL;
    Py_buffer iv, ov, sv;
    voxa_array in, out;
    const unsigned char *structure = NULL;
    if (vx_get_array(in_obj, 0, "input", &iv, &in) < 0) return NULL;
    if (vx_get_array(out_obj, 1, "output", &ov, &out) < 0) {
        PyBuffer_Release(&iv);
        return NULL;
    }
    int have_st = st_obj != Py_None;
    if (have_st) {
        if (PyObject_GetBuffer(st_obj, &sv, PyBUF_C_CONTIGUOUS) < 0) goto fail;
        Py_ssize_t want = 1;
        for (int d = 0; d < in.ndim; d++) want *= 3;
        if (sv.len != want) {
            PyErr_Format(PyExc_ValueError,
                         "structure: %zd bytes, expected 3^ndim = %zd for %d-D input", sv.len,
                         want, in.ndim);
            PyBuffer_Release(&sv);
            goto fail;
        }
        structure = sv.buf;
    }
    int64_t n = 0;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_label(&in, structure, connectivity, &out, &n);
    Py_END_ALLOW_THREADS
    if (have_st) PyBuffer_Release(&sv);
    PyBuffer_Release(&iv);
    PyBuffer_Release(&ov);
    if (s != VOXA_OK) return vx_raise(s);
    return PyLong_FromLongLong(n);
fail:
    PyBuffer_Release(&iv);
    PyBuffer_Release(&ov);
    return NULL;
}
