/* Binding of voxa_measure_with: measure(labels, intensity=None, spacing=None,
 * moments=False, std=False) ->
 * tuple (n, label, num_pixels, area, centroid, bbox, mean, min, max, sum,
 * centroid_weighted, moments2, std): n, then each column as bytes (int64 for
 * label, num_pixels and bbox, float64 otherwise; n x ndim, n x 2ndim or
 * n x ndim x ndim row-major for the per-axis ones), None where absent.
 * voxa/_regionprops_table.py checks the arguments and names the columns. Below it,
 * perimeter_counts and perimeter_of_counts (voxa_measure_perimeter_*) and
 * euler_counts (voxa_measure_euler_counts). */
#include "common.h"

static PyObject *col(const void *p, int64_t n, size_t per) {
    if (!p) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize(p, (Py_ssize_t)((size_t)n * per));
}

PyObject *vx_py_measure(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"labels", "intensity", "spacing", "moments", "std", NULL};
    PyObject *lab_obj, *int_obj = Py_None, *sp_obj = Py_None;
    int moments = 0, std = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOpp", kwlist, &lab_obj, &int_obj, &sp_obj,
                                     &moments, &std))
        return NULL;
    vx_bufs b = {0};
    voxa_array lab, in;
    const double *sp = NULL;
    Py_ssize_t nsp = 0;
    PyObject *res = NULL;
    if (vx_array(&b, lab_obj, 0, "labels", &lab) < 0) goto done;
    if (int_obj != Py_None && vx_array(&b, int_obj, 0, "intensity", &in) < 0) goto done;
    if (sp_obj != Py_None) {
        if (vx_doubles(&b, sp_obj, "spacing", &sp, &nsp) < 0) goto done;
        if (nsp != lab.ndim) {
            PyErr_Format(PyExc_ValueError, "spacing: %zd values for %d-D labels", nsp, lab.ndim);
            goto done;
        }
    }
    voxa_measure_table t;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_measure_with(&lab, int_obj != Py_None ? &in : NULL, sp,
                          (moments ? VOXA_MEASURE_MOMENTS : 0) | (std ? VOXA_MEASURE_STD : 0),
                          &t);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) {
        vx_raise(s);
        goto done;
    }
    int64_t n = t.n, nd = t.ndim;
    res = Py_BuildValue(
        "(LNNNNNNNNNNNN)", (long long)n, col(t.label, n, 8), col(t.num_pixels, n, 8),
        col(t.area, n, 8), col(t.centroid, n * nd, 8), col(t.bbox, n * 2 * nd, 8),
        col(t.intensity_mean, n, 8), col(t.intensity_min, n, 8), col(t.intensity_max, n, 8),
        col(t.intensity_sum, n, 8), col(t.centroid_weighted, n * nd, 8),
        col(t.moments2, n * nd * nd, 8), col(t.intensity_std, n, 8));
    voxa_measure_table_free(&t);
done:
    vx_release(&b);
    return res;
}

typedef voxa_status (*core_count_fn)(const voxa_array *, const int64_t *, const int64_t *,
                                     const int64_t *, int64_t, int64_t *);

/* Parse (labels, rows, core_lo, core_hi), call fn with k int64 counts per
 * label, return them as bytes (rows: int64 labels, ascending; core_lo,
 * core_hi: one int per axis of labels). */
static PyObject *core_counts(PyObject *args, PyObject *kw, core_count_fn fn, int k) {
    static char *kwlist[] = {"labels", "rows", "core_lo", "core_hi", NULL};
    PyObject *lab_obj, *rows_obj, *lo_obj, *hi_obj, *res = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO", kwlist, &lab_obj, &rows_obj, &lo_obj,
                                     &hi_obj))
        return NULL;
    vx_bufs b = {0};
    voxa_array lab, rows;
    int64_t *cnt = NULL, lo[VOXA_MAXDIM], hi[VOXA_MAXDIM];
    if (vx_array(&b, lab_obj, 0, "labels", &lab) < 0) goto done;
    if (vx_array(&b, rows_obj, 0, "rows", &rows) < 0) goto done;
    if (rows.dtype != VOXA_I64 || rows.ndim != 1 || (rows.shape[0] > 1 && rows.strides[0] != 8)) {
        PyErr_SetString(PyExc_TypeError, "rows: a contiguous 1-D int64 array");
        goto done;
    }
    if (vx_int64s(lo_obj, lab.ndim, lo, "core_lo") < 0 ||
        vx_int64s(hi_obj, lab.ndim, hi, "core_hi") < 0)
        goto done;
    int64_t n = rows.shape[0];
    cnt = PyMem_Calloc((size_t)(n > 0 ? n : 1) * (size_t)k, sizeof *cnt);
    if (!cnt) {
        PyErr_NoMemory();
        goto done;
    }
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = fn(&lab, lo, hi, (const int64_t *)rows.data, n, cnt);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) vx_raise(s);
    else res = PyBytes_FromStringAndSize((const char *)cnt, (Py_ssize_t)(n * k * 8));
done:
    PyMem_Free(cnt);
    vx_release(&b);
    return res;
}

/* perimeter_counts(labels, rows, core_lo, core_hi) -> bytes of len(rows) x 3
 * int64 (voxa_measure_perimeter_counts). */
PyObject *vx_py_perimeter_counts(PyObject *self, PyObject *args, PyObject *kw) {
    return core_counts(args, kw, voxa_measure_perimeter_counts, 3);
}

/* euler_counts(labels, rows, core_lo, core_hi) -> bytes of len(rows) int64
 * (voxa_measure_euler_counts). */
PyObject *vx_py_euler_counts(PyObject *self, PyObject *args, PyObject *kw) {
    return core_counts(args, kw, voxa_measure_euler_counts, 1);
}

/* perimeter_of_counts(counts) -> bytes of n float64 (counts: n x 3 int64,
 * contiguous; voxa_measure_perimeter_of_counts). */
PyObject *vx_py_perimeter_of_counts(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"counts", NULL};
    PyObject *obj, *res = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O", kwlist, &obj)) return NULL;
    vx_bufs b = {0};
    voxa_array c;
    if (vx_array(&b, obj, 0, "counts", &c) < 0) goto done;
    if (c.dtype != VOXA_I64 || c.ndim != 2 || c.shape[1] != 3 ||
        (c.shape[0] > 0 && (c.strides[1] != 8 || c.strides[0] != 24))) {
        PyErr_SetString(PyExc_TypeError, "counts: a contiguous (n, 3) int64 array");
        goto done;
    }
    res = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(c.shape[0] * 8));
    if (res)
        voxa_measure_perimeter_of_counts((const int64_t *)c.data, c.shape[0],
                                         (double *)PyBytes_AS_STRING(res));
done:
    vx_release(&b);
    return res;
}
