/* io bindings beyond read/write (py_core.c): TIFF writing with options, CSV
 * tables. */
#include "common.h"

#include <string.h>

/* tiff_write(path, array, compression=0, level=0, bigtiff_above=0) */
PyObject *vx_py_tiff_write(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "array", "compression", "level", "bigtiff_above", NULL};
    PyObject *path_obj, *arr_obj;
    int compression = 0, level = 0;
    long long above = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O|iiL", kwlist, PyUnicode_FSConverter,
                                     &path_obj, &arr_obj, &compression, &level, &above))
        return NULL;
    Py_buffer view;
    voxa_array a;
    if (vx_get_array(arr_obj, 0, "array", &view, &a) < 0) {
        Py_DECREF(path_obj);
        return NULL;
    }
    voxa_tiff_options o = {(voxa_tiff_compression)compression, level, (int64_t)above};
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_tiff_write_opts(PyBytes_AS_STRING(path_obj), &a, &o);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    Py_DECREF(path_obj);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}

/* (names list, float64 values as a bytearray, nrows) from a parsed table. */
static PyObject *table_result(voxa_table *t) {
    PyObject *names = PyList_New(t->ncols);
    for (int i = 0; names && i < t->ncols; i++) {
        PyObject *n = PyUnicode_DecodeUTF8(t->names[i], (Py_ssize_t)strlen(t->names[i]),
                                           "replace");
        if (!n) {
            Py_CLEAR(names);
            break;
        }
        PyList_SET_ITEM(names, i, n);
    }
    Py_ssize_t bytes = (Py_ssize_t)(t->nrows * t->ncols * (int64_t)sizeof(double));
    PyObject *vals = names ? PyByteArray_FromStringAndSize(NULL, bytes) : NULL;
    if (vals && bytes) memcpy(PyByteArray_AS_STRING(vals), t->values, (size_t)bytes);
    int64_t nrows = t->nrows;
    voxa_table_free(t);
    if (!vals) {
        Py_XDECREF(names);
        return NULL;
    }
    return Py_BuildValue("(NNL)", names, vals, (long long)nrows);
}

/* csv_parse(data: bytes-like) -> (names, values bytearray, nrows) */
PyObject *vx_py_csv_parse(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", NULL};
    Py_buffer buf;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*", kwlist, &buf)) return NULL;
    voxa_table t;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_csv_parse(buf.buf, (size_t)buf.len, &t);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    if (s != VOXA_OK) return vx_raise(s);
    return table_result(&t);
}

/* csv_read(path) -> (names, values bytearray, nrows) */
PyObject *vx_py_csv_read(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", NULL};
    PyObject *path_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", kwlist, PyUnicode_FSConverter, &path_obj))
        return NULL;
    voxa_table t;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_csv_read(PyBytes_AS_STRING(path_obj), &t);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (s != VOXA_OK) return vx_raise(s);
    return table_result(&t);
}
