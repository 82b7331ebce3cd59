/* Shared pieces of the voxa._voxa extension: buffers <-> voxa_array views
 * (every acquired buffer and reference kept in one vx_bufs, released once),
 * status -> Python exception, the progress bridge. The Python layer
 * (python/voxa/ modules) converts and allocates with NumPy; C functions here
 * receive ready buffers and release the GIL while the library works. */
#ifndef VOXA_PY_COMMON_H
#define VOXA_PY_COMMON_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "voxa.h"

/* Everything one call acquires: buffers and owned references (paths as
 * bytes). Start it zeroed (`vx_bufs b = {0};`), acquire through the vx_*
 * functions below, and call vx_release(&b) once on every way out. */
#define VX_MAXBUFS 28 /* an op's VOXA_OP_MAXPARAMS arrays, its input and output */
#define VX_MAXREFS 32
typedef struct vx_bufs {
    Py_buffer buf[VX_MAXBUFS];
    int nbuf;
    PyObject *ref[VX_MAXREFS];
    int nref;
} vx_bufs;

/* Release every buffer and reference in b (it may be used again). */
void vx_release(vx_bufs *b);

/* Get a buffer (writable or not) of any strides and describe it as a
 * voxa_array. Returns 0, or -1 with a Python exception set (TypeError for an
 * unsupported element type). */
int vx_array(vx_bufs *b, PyObject *obj, int writable, const char *argname, voxa_array *arr);

/* A C-contiguous buffer of float64 values; *n receives the count. */
int vx_doubles(vx_bufs *b, PyObject *obj, const char *argname, const double **data,
               Py_ssize_t *n);

/* Keep a new reference (stolen; NULL: an exception is set) until
 * vx_release. Returns 0 or -1. */
int vx_keep(vx_bufs *b, PyObject *owned);

/* A path (str, bytes or os.PathLike) as a file-system encoded C string that
 * lives until vx_release. */
int vx_path(vx_bufs *b, PyObject *obj, const char **path);

/* A tuple of ndim Python ints (a shape, a halo), or NULL with an exception. */
PyObject *vx_shape(int ndim, const int64_t *shape);
/* A sequence of ndim ints into v: 0, or -1 with an exception (ValueError
 * naming `name` when the length is wrong). */
int vx_int64s(PyObject *seq_o, int ndim, int64_t *v, const char *name);

/* Raise the Python exception that matches `s`, with voxa_last_error(). */
PyObject *vx_raise(voxa_status s);

/* Progress from a library thread: take the GIL, check for Ctrl-C, call the
 * Python callable fn(done, total) if any; an exception or a False result
 * cancels. After the run, `failed` says an exception is pending. */
typedef struct vx_progress {
    PyObject *fn;
    int failed;
} vx_progress;
voxa_progress vx_progress_bridge(vx_progress *pp);

#endif
