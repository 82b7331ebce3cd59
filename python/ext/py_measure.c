/* Binding of voxa_measure: measure(labels, intensity=None, spacing=None) ->
 * tuple of column buffers (bytes): label, num_pixels (int64), area,
 * centroid (n x ndim float64), bbox (n x 2ndim int64) and, with intensity,
 * mean, min, max, sum, centroid_weighted (float64); None where absent.
 * voxa/regionprops.py checks the arguments and names the columns. */
#include "common.h"

static PyObject *col(const void *p, int64_t n, size_t per) {
    if (!p) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(p, (Py_ssize_t)((size_t)n * per));
}

PyObject *vx_py_measure(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"labels", "intensity", "spacing", NULL};
    PyObject *lab_obj, *int_obj = Py_None, *sp_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO", kwlist, &lab_obj, &int_obj, &sp_obj))
        return NULL;
    Py_buffer lv, iv, sv;
    voxa_array lab, in;
    const double *sp = NULL;
    Py_ssize_t nsp = 0;
    int have_i = int_obj != Py_None, have_s = sp_obj != Py_None;
    if (vx_get_array(lab_obj, 0, "labels", &lv, &lab) < 0) return NULL;
    if (have_i && vx_get_array(int_obj, 0, "intensity", &iv, &in) < 0) {
        PyBuffer_Release(&lv);
        return NULL;
    }
    if (have_s) {
        if (vx_get_doubles(sp_obj, "spacing", &sv, &sp, &nsp) < 0) goto fail;
        if (nsp != lab.ndim) {
            PyErr_Format(PyExc_ValueError, "spacing: %zd values for %d-D labels", nsp, lab.ndim);
            PyBuffer_Release(&sv);
            goto fail;
        }
    }
    voxa_measure_table t;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_measure(&lab, have_i ? &in : NULL, sp, &t);
    Py_END_ALLOW_THREADS
    if (have_s) PyBuffer_Release(&sv);
    if (have_i) PyBuffer_Release(&iv);
    PyBuffer_Release(&lv);
    if (s != VOXA_OK) return vx_raise(s);
    int64_t n = t.n, nd = t.ndim;
    PyObject *r = Py_BuildValue(
        "(LNNNNNNNNNN)", (long long)n, col(t.label, n, 8), col(t.num_pixels, n, 8),
        col(t.area, n, 8), col(t.centroid, n * nd, 8), col(t.bbox, n * 2 * nd, 8),
        col(t.intensity_mean, n, 8), col(t.intensity_min, n, 8), col(t.intensity_max, n, 8),
        col(t.intensity_sum, n, 8), col(t.centroid_weighted, n * nd, 8));
    voxa_measure_table_free(&t);
    return r;
fail:
    if (have_i) PyBuffer_Release(&iv);
    PyBuffer_Release(&lv);
    return NULL;
}
