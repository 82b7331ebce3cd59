/* Core bindings: threads, version, writing arrays (reading: py_io.c). */
#include "common.h"


PyObject *vx_py_set_threads(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"n", NULL};
    int n;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "i", kwlist, &n)) return NULL;
    voxa_set_threads(n);
    Py_RETURN_NONE;
}

PyObject *vx_py_get_threads(PyObject *self, PyObject *args, PyObject *kw) {
    return PyLong_FromLong(voxa_get_threads());
}

PyObject *vx_py_version(PyObject *self, PyObject *args, PyObject *kw) {
    return PyUnicode_FromString(voxa_version());
}

PyObject *vx_py_write(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "array", NULL};
    PyObject *path_obj, *arr_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O", kwlist, PyUnicode_FSConverter, &path_obj,
                                     &arr_obj))
        return NULL;
    Py_buffer view;
    voxa_array a;
    if (vx_get_array(arr_obj, 0, "array", &view, &a) < 0) {
        Py_DECREF(path_obj);
        return NULL;
    }
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_write(PyBytes_AS_STRING(path_obj), &a);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    Py_DECREF(path_obj);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}
