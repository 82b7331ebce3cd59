/* TEMPORARY: the old one-buffer helpers, for bindings whose op has no descriptor yet. */
#include "common.h"
#include <string.h>
static inline int vx_get_array(PyObject *obj, int w, const char *name, Py_buffer *view, voxa_array *arr) {
    vx_bufs b = {0};
    if (vx_array(&b, obj, w, name, arr) < 0) { vx_release(&b); return -1; }
    *view = b.buf[0];
    return 0;
}
static inline int vx_get_doubles(PyObject *obj, const char *name, Py_buffer *view, const double **d, Py_ssize_t *n) {
    vx_bufs b = {0};
    if (vx_doubles(&b, obj, name, d, n) < 0) { vx_release(&b); return -1; }
    *view = b.buf[0];
    return 0;
}
