/* morph_element: the boolean array of a named structuring element (ball,
 * diamond, box, connectivity), for voxa.ball and voxa.diamond. Not an op:
 * the morphology ops themselves run through run_op (py_op.c). */
#include "common.h"

#include <string.h>

/* morph_element(ndim, kind, radius, spacing, box, connectivity)
 *   -> (bytearray of bools, shape); spacing: None or ndim float64 values,
 *   box: None or ndim sizes. */
PyObject *vx_py_morph_element(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ndim", "kind", "radius", "spacing", "box", "connectivity", NULL};
    int ndim, kind, conn;
    double radius;
    PyObject *sp_o, *box_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iidOOi", kwlist, &ndim, &kind, &radius, &sp_o,
                                     &box_o, &conn))
        return NULL;
    if (ndim < 1 || ndim > VOXA_MAXDIM)
        return PyErr_Format(PyExc_ValueError, "ndim %d must be 1..%d", ndim, VOXA_MAXDIM);
    voxa_morph_element se;
    memset(&se, 0, sizeof se);
    se.kind = (voxa_morph_kind)kind;
    se.radius = radius;
    se.connectivity = conn;
    vx_bufs b = {0};
    PyObject *ret = NULL;
    Py_ssize_t n = ndim;
    if (sp_o != Py_None && vx_doubles(&b, sp_o, "spacing", &se.spacing, &n) < 0) goto done;
    if (n != ndim) {
        PyErr_Format(PyExc_ValueError, "spacing has %zd values, the input %d dimensions", n, ndim);
        goto done;
    }
    for (int d = 0; box_o != Py_None && d < ndim; d++) {
        PyObject *x = PySequence_GetItem(box_o, d);
        se.box[d] = x ? PyLong_AsLongLong(x) : -1;
        Py_XDECREF(x);
        if (PyErr_Occurred()) goto done;
    }
    voxa_array a;
    voxa_status s = voxa_morph_element_array(&se, ndim, &a);
    if (s != VOXA_OK) {
        vx_raise(s);
        goto done;
    }
    Py_ssize_t bytes = (Py_ssize_t)voxa_array_size(&a); /* bool: one byte each */
    ret = Py_BuildValue("(NN)", PyByteArray_FromStringAndSize(a.data, bytes),
                        vx_shape(ndim, a.shape));
    voxa_array_free(&a);
done:
    vx_release(&b);
    return ret;
}
