/* Binding of voxa_threshold_histogram (the other threshold calls go
 * through the op registry, py_op.c). */
#include "common.h"

/* threshold_histogram(image, lo, hi, nbins) -> bytes of nbins int64 counts
 * (voxa_threshold_histogram; voxa.dask.threshold_otsu's per-chunk pass). */
PyObject *vx_py_threshold_histogram(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"image", "lo", "hi", "nbins", NULL};
    PyObject *obj, *res = NULL;
    double lo, hi;
    long long nbins;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OddL", kwlist, &obj, &lo, &hi, &nbins))
        return NULL;
    if (nbins < 1 || nbins > ((long long)1 << 28)) {
        PyErr_Format(PyExc_ValueError, "nbins: %lld is out of range", nbins);
        return NULL;
    }
    vx_bufs b = {0};
    voxa_array a;
    int64_t *hist = NULL;
    if (vx_array(&b, obj, 0, "image", &a) < 0) goto done;
    hist = PyMem_Malloc((size_t)nbins * sizeof *hist);
    if (!hist) {
        PyErr_NoMemory();
        goto done;
    }
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_threshold_histogram(&a, lo, hi, (int64_t)nbins, hist);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) vx_raise(s);
    else res = PyBytes_FromStringAndSize((const char *)hist, (Py_ssize_t)(nbins * 8));
done:
    PyMem_Free(hist);
    vx_release(&b);
    return res;
}
