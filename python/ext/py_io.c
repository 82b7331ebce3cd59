/* io bindings: arrays read without a copy, TIFF writing with options, CSV
 * tables (plain writing: py_core.c). */
#include "common.h"

#include <string.h>

/* tiff_write(path, array, compression=0, level=0, bigtiff_above=0) */
PyObject *vx_py_tiff_write(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "array", "compression", "level", "bigtiff_above", NULL};
    PyObject *path_o, *arr_o;
    int compression = 0, level = 0;
    long long above = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|iiL", kwlist, &path_o, &arr_o, &compression,
                                     &level, &above))
        return NULL;
    vx_bufs b = {0};
    const char *path;
    voxa_array a;
    voxa_tiff_options o = {(voxa_tiff_compression)compression, level, (int64_t)above};
    if (vx_path(&b, path_o, &path) == 0 && vx_array(&b, arr_o, 0, "array", &a) == 0) {
        voxa_status s;
        Py_BEGIN_ALLOW_THREADS
        s = voxa_tiff_write_opts(path, &a, &o);
        Py_END_ALLOW_THREADS
        if (s != VOXA_OK) vx_raise(s);
    }
    vx_release(&b);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
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
    PyBuffer_Release(&buf); /* the one buffer, taken by the argument parser */
    if (s != VOXA_OK) return vx_raise(s);
    return table_result(&t);
}

/* Parse the one argument, a path, and run fn(path, result) with the GIL
 * released. Returns 0, or -1 with an exception. */
typedef voxa_status (*reader)(const char *path, void *result);
static voxa_status csv_reader(const char *path, void *t) { return voxa_csv_read(path, t); }
static voxa_status array_reader(const char *path, void *a) { return voxa_read(path, a); }

static int read_path(PyObject *args, PyObject *kw, reader fn, void *result) {
    static char *kwlist[] = {"path", NULL};
    PyObject *path_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&", kwlist, PyUnicode_FSConverter, &path_obj))
        return -1;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = fn(PyBytes_AS_STRING(path_obj), result);
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    return s == VOXA_OK ? 0 : (vx_raise(s), -1);
}

/* csv_read(path) -> (names, values bytearray, nrows) */
PyObject *vx_py_csv_read(PyObject *self, PyObject *args, PyObject *kw) {
    voxa_table t;
    return read_path(args, kw, csv_reader, &t) < 0 ? NULL : table_result(&t);
}

/* ---- zero-copy read ---------------------------------------------------------
 * read_array(path) -> (buffer, dtype name, shape, fortran): the buffer object
 * owns the array voxa_read allocated and exports it through the buffer
 * protocol, so np.frombuffer wraps it without a copy (peak memory = the
 * array once, not twice). */
typedef struct {
    PyObject_HEAD
    voxa_array a;
    Py_ssize_t nbytes;
} vx_owned;

static int owned_getbuffer(PyObject *self, Py_buffer *view, int flags) {
    vx_owned *o = (vx_owned *)self;
    return PyBuffer_FillInfo(view, self, o->a.data, o->nbytes, 0, flags);
}

static void owned_dealloc(PyObject *self) {
    voxa_array_free(&((vx_owned *)self)->a);
    Py_TYPE(self)->tp_free(self);
}

static PyBufferProcs owned_as_buffer = {owned_getbuffer, NULL};

static PyTypeObject owned_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "voxa._voxa.ArrayBuffer",
    .tp_basicsize = sizeof(vx_owned),
    .tp_dealloc = owned_dealloc,
    .tp_as_buffer = &owned_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory of an array read by voxa (buffer protocol, bytes).",
};

PyObject *vx_py_read_array(PyObject *self, PyObject *args, PyObject *kw) {
    voxa_array a;
    if (!(owned_type.tp_flags & Py_TPFLAGS_READY) && PyType_Ready(&owned_type) < 0) return NULL;
    if (read_path(args, kw, array_reader, &a) < 0) return NULL;
    vx_owned *o = PyObject_New(vx_owned, &owned_type);
    if (!o) {
        voxa_array_free(&a);
        return NULL;
    }
    o->a = a;
    o->nbytes = (Py_ssize_t)(voxa_array_size(&a) * (int64_t)voxa_dtype_size(a.dtype));
    PyObject *shape = vx_shape(a.ndim, a.shape);
    if (!shape) {
        Py_DECREF(o);
        return NULL;
    }
    int fortran = !voxa_array_is_c_contiguous(&a);
    return Py_BuildValue("(NsNi)", (PyObject *)o, voxa_dtype_name(a.dtype), shape, fortran);
}
