/* The steps of labelling by blocks (voxa/stream.h), for voxa.dask: the same
 * C primitives the chunk executor uses, one call per Dask task. */
#include "common.h"

#include <stdlib.h>

/* A sequence of ndim ints into v; 0 or -1 with an exception. */
static int int64s(PyObject *seq_o, int ndim, int64_t *v, const char *name) {
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

PyObject *vx_py_label_first(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ids", "n", "origin", "whole", "first", NULL};
    PyObject *ids_o, *origin_o, *whole_o, *first_o;
    long long n;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OLOOO", kwlist, &ids_o, &n, &origin_o, &whole_o,
                                     &first_o))
        return NULL;
    vx_bufs b = {0};
    voxa_array ids, first;
    int64_t origin[VOXA_MAXDIM], whole[VOXA_MAXDIM];
    if (vx_array(&b, ids_o, 0, "ids", &ids) == 0 && vx_array(&b, first_o, 1, "first", &first) == 0 &&
        int64s(origin_o, ids.ndim, origin, "origin") == 0 &&
        int64s(whole_o, ids.ndim, whole, "whole") == 0) {
        voxa_status s = VOXA_OK;
        if (first.dtype != VOXA_I64 || voxa_array_size(&first) < n ||
            !voxa_array_is_c_contiguous(&first))
            PyErr_SetString(PyExc_ValueError, "first: expected n contiguous int64 values");
        else {
            Py_BEGIN_ALLOW_THREADS
            s = voxa_label_first(&ids, n, origin, whole, first.data);
            Py_END_ALLOW_THREADS
            if (s != VOXA_OK) vx_raise(s);
        }
    }
    vx_release(&b);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}

PyObject *vx_py_label_face_pairs(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"ids", "axis", "region_lo", "own_lo", "own_hi", "structure", NULL};
    PyObject *ids_o, *rlo_o, *lo_o, *hi_o, *st_o;
    int axis;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OiOOOO", kwlist, &ids_o, &axis, &rlo_o, &lo_o,
                                     &hi_o, &st_o))
        return NULL;
    vx_bufs b = {0};
    voxa_array ids, st;
    int64_t rlo[VOXA_MAXDIM], lo[VOXA_MAXDIM], hi[VOXA_MAXDIM], *pairs = NULL, np = 0;
    PyObject *ret = NULL;
    if (vx_array(&b, ids_o, 0, "ids", &ids) == 0 && vx_array(&b, st_o, 0, "structure", &st) == 0 &&
        int64s(rlo_o, ids.ndim, rlo, "region_lo") == 0 && int64s(lo_o, ids.ndim, lo, "own_lo") == 0 &&
        int64s(hi_o, ids.ndim, hi, "own_hi") == 0) {
        int64_t want = 1;
        for (int d = 0; d < ids.ndim; d++) want *= 3;
        if (st.dtype != VOXA_U8 || voxa_array_size(&st) != want || !voxa_array_is_c_contiguous(&st)) {
            PyErr_SetString(PyExc_ValueError, "structure: expected 3^ndim contiguous uint8");
        } else {
            voxa_status s;
            Py_BEGIN_ALLOW_THREADS
            s = voxa_label_face_pairs(&ids, axis, rlo, lo, hi, st.data, &pairs, &np);
            Py_END_ALLOW_THREADS
            if (s != VOXA_OK) vx_raise(s);
            else ret = PyBytes_FromStringAndSize((const char *)pairs, (Py_ssize_t)(np * 2 * 8));
        }
    }
    free(pairs);
    vx_release(&b);
    return ret;
}

PyObject *vx_py_label_resolve(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"first", "pairs", "final", NULL};
    PyObject *first_o, *pairs_o, *final_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO", kwlist, &first_o, &pairs_o, &final_o))
        return NULL;
    vx_bufs b = {0};
    voxa_array first, pairs, final;
    int64_t ncomp = 0;
    if (vx_array(&b, first_o, 0, "first", &first) == 0 && vx_array(&b, pairs_o, 0, "pairs", &pairs) == 0 &&
        vx_array(&b, final_o, 1, "final", &final) == 0) {
        int64_t n = voxa_array_size(&first), np = voxa_array_size(&pairs) / 2;
        if (first.dtype != VOXA_I64 || pairs.dtype != VOXA_I64 || final.dtype != VOXA_I64 ||
            voxa_array_size(&final) != n || !voxa_array_is_c_contiguous(&first) ||
            !voxa_array_is_c_contiguous(&pairs) || !voxa_array_is_c_contiguous(&final)) {
            PyErr_SetString(PyExc_ValueError, "label_resolve: expected contiguous int64 arrays, "
                            "final as long as first");
        } else {
            voxa_status s;
            Py_BEGIN_ALLOW_THREADS
            s = voxa_label_resolve(n, first.data, pairs.data, np, final.data, &ncomp);
            Py_END_ALLOW_THREADS
            if (s != VOXA_OK) vx_raise(s);
        }
    }
    vx_release(&b);
    return PyErr_Occurred() ? NULL : PyLong_FromLongLong(ncomp);
}
