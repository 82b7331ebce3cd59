/* Core bindings: threads, version, file io. */
#include "common.h"

#include <string.h>

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

/* read(path) -> (bytearray, dtype name, shape tuple); the Python layer wraps
 * it as a NumPy array without a copy (np.frombuffer). */
PyObject *vx_py_read(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", NULL};
    PyObject *path_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", kwlist, PyUnicode_FSConverter, &path_obj))
        return NULL;
    voxa_array a;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_read(PyBytes_AS_STRING(path_obj), &a);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (s != VOXA_OK) return vx_raise(s);
    int64_t n = voxa_array_size(&a) * (int64_t)voxa_dtype_size(a.dtype);
    PyObject *buf = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)n);
    if (buf && n) memcpy(PyByteArray_AS_STRING(buf), a.data, (size_t)n);
    PyObject *shape = buf ? PyTuple_New(a.ndim) : NULL;
    for (int d = 0; shape && d < a.ndim; d++)
        PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(a.shape[d]));
    int fortran = !voxa_array_is_c_contiguous(&a);
    const char *dt = voxa_dtype_name(a.dtype);
    voxa_array_free(&a);
    if (!shape) {
        Py_XDECREF(buf);
        return NULL;
    }
    return Py_BuildValue("(NsNi)", buf, dt, shape, fortran);
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
