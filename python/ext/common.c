/* Buffer-protocol conversion: no NumPy C API, so the extension builds
 * against any NumPy and works with every PEP 3118 exporter. */
#include "common.h"

#include <string.h>

static int format_dtype(const char *fmt, Py_ssize_t itemsize, voxa_dtype *t) {
    if (!fmt) fmt = "B";
    if (*fmt == '<' || *fmt == '=' || *fmt == '@') fmt++;
    else if (*fmt == '>' || *fmt == '!') return -1; /* big-endian data */
    if (fmt[0] == '\0' || fmt[1] != '\0') return -1;
    switch (fmt[0]) {
    case '?': *t = VOXA_BOOL; break;
    case 'B': *t = VOXA_U8; break;
    case 'b': *t = VOXA_I8; break;
    case 'H': *t = VOXA_U16; break;
    case 'h': *t = VOXA_I16; break;
    case 'I': case 'L': case 'Q': case 'N':
        *t = itemsize == 4 ? VOXA_U32 : itemsize == 8 ? VOXA_U64 : VOXA_NDTYPES; break;
    case 'i': case 'l': case 'q': case 'n':
        *t = itemsize == 4 ? VOXA_I32 : itemsize == 8 ? VOXA_I64 : VOXA_NDTYPES; break;
    case 'f': *t = VOXA_F32; break;
    case 'd': *t = VOXA_F64; break;
    default: return -1;
    }
    if (*t == VOXA_NDTYPES || (Py_ssize_t)voxa_dtype_size(*t) != itemsize) return -1;
    return 0;
}

int vx_get_array(PyObject *obj, int writable, const char *argname, Py_buffer *view,
                 voxa_array *arr) {
    int flags = PyBUF_RECORDS_RO | PyBUF_FORMAT;
    if (writable) flags |= PyBUF_WRITABLE;
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    voxa_dtype t;
    if (format_dtype(view->format, view->itemsize, &t) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported element type '%s'", argname,
                     view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    if (view->ndim > VOXA_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions, at most %d supported", argname,
                     view->ndim, VOXA_MAXDIM);
        PyBuffer_Release(view);
        return -1;
    }
    memset(arr, 0, sizeof *arr);
    arr->data = view->buf;
    arr->dtype = t;
    arr->ndim = view->ndim;
    for (int d = 0; d < view->ndim; d++) {
        arr->shape[d] = view->shape[d];
        arr->strides[d] = view->strides[d];
    }
    return 0;
}

int vx_get_doubles(PyObject *obj, const char *argname, Py_buffer *view,
                   const double **data, Py_ssize_t *n) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (strcmp(f, "d") != 0) {
        PyErr_Format(PyExc_TypeError, "%s: expected float64 values", argname);
        PyBuffer_Release(view);
        return -1;
    }
    *data = view->buf;
    *n = view->len / (Py_ssize_t)sizeof(double);
    return 0;
}

PyObject *vx_raise(voxa_status s) {
    PyObject *type;
    switch (s) {
    case VOXA_ENOMEM: type = PyExc_MemoryError; break;
    case VOXA_EIO: type = PyExc_OSError; break;
    case VOXA_EUNSUPPORTED: type = PyExc_TypeError; break;
    case VOXA_ECANCELLED: type = PyExc_KeyboardInterrupt; break;
    case VOXA_EINTERNAL: type = PyExc_RuntimeError; break;
    default: type = PyExc_ValueError; break; /* EINVAL, EFORMAT, EOVERFLOW */
    }
    const char *msg = voxa_last_error();
    PyErr_SetString(type, *msg ? msg : voxa_status_name(s));
    return NULL;
}
