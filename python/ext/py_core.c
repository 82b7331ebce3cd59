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
    PyObject *path_o, *arr_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &path_o, &arr_o)) return NULL;
    vx_bufs b = {0};
    const char *path;
    voxa_array a;
    voxa_status s = VOXA_OK;
    if (vx_path(&b, path_o, &path) == 0 && vx_array(&b, arr_o, 0, "array", &a) == 0) {
        Py_BEGIN_ALLOW_THREADS
        s = voxa_write(path, &a);
        Py_END_ALLOW_THREADS
        if (s != VOXA_OK) vx_raise(s);
    }
    vx_release(&b);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}
