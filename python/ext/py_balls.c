/* Binding of voxa_balls: the Python layer passes float64 C-contiguous points
 * (N x ndim), optional radii (N) and spacing (ndim), and the output array. */
#include "legacy.h"

PyObject *vx_py_balls(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"out", "points", "radius", "radii", "spacing", "owner", NULL};
    PyObject *out_obj, *pts_obj, *radii_obj = Py_None, *sp_obj = Py_None;
    double radius;
    int owner = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOd|OOp", kwlist, &out_obj, &pts_obj, &radius,
                                     &radii_obj, &sp_obj, &owner))
        return NULL;
    Py_buffer outv = {0}, ptsv = {0}, radv = {0}, spv = {0};
    voxa_array out;
    voxa_balls_params p = {.radius = radius, .owner = owner};
    PyObject *ret = NULL;
    Py_ssize_t n;
    if (vx_get_array(out_obj, 1, "out", &outv, &out) < 0) return NULL;
    if (vx_get_doubles(pts_obj, "points", &ptsv, &p.points, &n) < 0) goto done;
    if (out.ndim == 0 || n % out.ndim) {
        PyErr_Format(PyExc_ValueError, "points: %zd values is not a multiple of ndim %d", n,
                     out.ndim);
        goto done;
    }
    p.npoints = n / out.ndim;
    if (radii_obj != Py_None) {
        if (vx_get_doubles(radii_obj, "radii", &radv, &p.radii, &n) < 0) goto done;
        if (n != p.npoints) {
            PyErr_Format(PyExc_ValueError, "radius: %zd values for %lld points", n,
                         (long long)p.npoints);
            goto done;
        }
    }
    if (sp_obj != Py_None) {
        if (vx_get_doubles(sp_obj, "spacing", &spv, &p.spacing, &n) < 0) goto done;
        if (n != out.ndim) {
            PyErr_Format(PyExc_ValueError, "spacing: %zd values for %d axes", n, out.ndim);
            goto done;
        }
    }
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_balls(&p, &out);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) vx_raise(s);
    else ret = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&outv);
    if (ptsv.obj) PyBuffer_Release(&ptsv);
    if (radv.obj) PyBuffer_Release(&radv);
    if (spv.obj) PyBuffer_Release(&spv);
    return ret;
}
