/* Shared pieces of the voxa._voxa extension: buffers <-> voxa_array views,
 * status -> Python exception. The Python layer (python/voxa/ modules) converts and
 * allocates with NumPy; C functions here receive ready buffers and release
 * the GIL while the library works. */
#ifndef VOXA_PY_COMMON_H
#define VOXA_PY_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "voxa.h"

/* Get a buffer (writable or not) of any strides and describe it as a
 * voxa_array. Returns 0, or -1 with a Python exception set (TypeError for an
 * unsupported element type). Release with PyBuffer_Release. */
int vx_get_array(PyObject *obj, int writable, const char *argname, Py_buffer *view,
                 voxa_array *arr);

/* Raise the Python exception that matches `s`, with voxa_last_error(). */
PyObject *vx_raise(voxa_status s);

/* Read a buffer of float64 values that must be C-contiguous; *n receives the
 * element count. Returns 0 or -1 with an exception. */
int vx_get_doubles(PyObject *obj, const char *argname, Py_buffer *view,
                   const double **data, Py_ssize_t *n);

/* Every function exposed by the module, declared from methods.h. */
#define VX_METHOD(name, doc) PyObject *vx_py_##name(PyObject *, PyObject *, PyObject *);
#include "methods.h"
#undef VX_METHOD

#endif
