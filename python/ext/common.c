/* Buffer-protocol conversion (no NumPy C API, so the extension builds
 * against any NumPy and works with every PEP 3118 exporter), the one cleanup
 * of what a call acquired, status -> exception, and the progress bridge. */
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

void vx_release(vx_bufs *b) {
    for (int i = 0; i < b->nbuf; i++) PyBuffer_Release(&b->buf[i]);
    for (int i = 0; i < b->nref; i++) Py_DECREF(b->ref[i]);
    b->nbuf = b->nref = 0;
}

/* The next free Py_buffer of b, filled by PyObject_GetBuffer, or NULL. */
static Py_buffer *acquire(vx_bufs *b, PyObject *obj, int flags, const char *argname) {
    if (b->nbuf == VX_MAXBUFS) {
        PyErr_Format(PyExc_RuntimeError, "%s: too many buffers in one call", argname);
        return NULL;
    }
    Py_buffer *v = &b->buf[b->nbuf];
    memset(v, 0, sizeof *v);
    if (PyObject_GetBuffer(obj, v, flags) < 0) return NULL;
    b->nbuf++;
    return v;
}

int vx_array(vx_bufs *b, PyObject *obj, int writable, const char *argname, voxa_array *arr) {
    Py_buffer *v = acquire(b, obj, PyBUF_RECORDS_RO | PyBUF_FORMAT |
                                       (writable ? PyBUF_WRITABLE : 0), argname);
    if (!v) return -1;
    voxa_dtype t;
    if (format_dtype(v->format, v->itemsize, &t) < 0) {
        PyErr_Format(PyExc_TypeError, "%s: unsupported element type '%s'", argname,
                     v->format ? v->format : "B");
        return -1;
    }
    if (v->ndim > VOXA_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "%s: %d dimensions, at most %d supported", argname,
                     v->ndim, VOXA_MAXDIM);
        return -1;
    }
    memset(arr, 0, sizeof *arr);
    arr->data = v->buf;
    arr->dtype = t;
    arr->ndim = v->ndim;
    for (int d = 0; d < v->ndim; d++) {
        arr->shape[d] = v->shape[d];
        arr->strides[d] = v->strides[d];
    }
    return 0;
}

int vx_doubles(vx_bufs *b, PyObject *obj, const char *argname, const double **data,
               Py_ssize_t *n) {
    Py_buffer *v = acquire(b, obj, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, argname);
    if (!v) return -1;
    const char *f = v->format ? v->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (strcmp(f, "d") != 0) {
        PyErr_Format(PyExc_TypeError, "%s: expected float64 values", argname);
        return -1;
    }
    *data = v->buf;
    *n = v->len / (Py_ssize_t)sizeof(double);
    return 0;
}

int vx_keep(vx_bufs *b, PyObject *owned) {
    if (!owned) return -1;
    if (b->nref == VX_MAXREFS) {
        Py_DECREF(owned);
        PyErr_SetString(PyExc_RuntimeError, "too many references in one call");
        return -1;
    }
    b->ref[b->nref++] = owned;
    return 0;
}

int vx_path(vx_bufs *b, PyObject *obj, const char **path) {
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(obj, &bytes) || vx_keep(b, bytes) < 0) return -1;
    *path = PyBytes_AS_STRING(bytes);
    return 0;
}

PyObject *vx_shape(int ndim, const int64_t *shape) {
    PyObject *t = PyTuple_New(ndim);
    for (int d = 0; t && d < ndim; d++) {
        PyObject *x = PyLong_FromLongLong(shape[d]);
        if (!x) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, d, x);
    }
    return t;
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

static int progress_cb(int64_t done, int64_t total, void *user) {
    vx_progress *pp = user;
    PyGILState_STATE gs = PyGILState_Ensure();
    int go = 1;
    if (pp->failed || PyErr_CheckSignals() < 0) {
        go = 0;
    } else if (pp->fn && pp->fn != Py_None) {
        PyObject *r = PyObject_CallFunction(pp->fn, "LL", (long long)done, (long long)total);
        if (!r) go = 0;
        else {
            if (r != Py_None && !PyObject_IsTrue(r)) go = 0;
            Py_DECREF(r);
        }
    }
    if (!go && PyErr_Occurred()) pp->failed = 1;
    PyGILState_Release(gs);
    return go;
}

voxa_progress vx_progress_bridge(vx_progress *pp) {
    voxa_progress p = {progress_cb, pp};
    return p;
}

int vx_int64s(PyObject *seq_o, int ndim, int64_t *v, const char *name) {
    PyObject *seq = PySequence_Fast(seq_o, name);
    if (!seq) return -1;
    int ok = PySequence_Fast_GET_SIZE(seq) == ndim;
    for (int d = 0; ok && d < ndim; d++) {
        v[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, d));
        ok = !(v[d] == -1 && PyErr_Occurred());
    }
    Py_DECREF(seq);
    if (!ok && !PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "%s: expected %d ints", name, ndim);
    return ok ? 0 : -1;
}
