/* Bindings of the roi family: patch extraction and paste-back. The Python
 * layer (python/voxa/roi.py) validates, rounds coordinates to a C-ordered
 * int64 (n, k) array and allocates `out`; here buffers become views and the
 * library runs with the GIL released. */
#include "legacy.h"

#include <string.h>

/* size: a sequence of k Python ints. */
static int get_size(PyObject *obj, int64_t *size, int *k) {
    PyObject *seq = PySequence_Fast(obj, "size: expected a sequence of integers");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    if (n < 1 || n > VOXA_MAXDIM) {
        PyErr_Format(PyExc_ValueError, "size: %zd entries, expected 1..%d", n, VOXA_MAXDIM);
        Py_DECREF(seq);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        size[i] = v;
    }
    *k = (int)n;
    Py_DECREF(seq);
    return 0;
}

/* coords: a C-contiguous int64 (n, k) buffer. */
static int get_coords(PyObject *obj, int k, Py_buffer *view, voxa_array *a) {
    if (vx_get_array(obj, 0, "coords", view, a) < 0) return -1;
    if (a->dtype != VOXA_I64 || a->ndim != 2 || !voxa_array_is_c_contiguous(a) ||
        a->shape[1] != k) {
        PyErr_Format(PyExc_ValueError,
                     "coords: expected a C-contiguous int64 array of shape (n, %d)", k);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

PyObject *vx_py_roi_extract(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"image", "coords", "size", "centered", "mode", "cval", "out", NULL};
    PyObject *img_obj, *coords_obj, *size_obj, *out_obj;
    int centered;
    const char *mode_name;
    double cval;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOpsdO", kwlist, &img_obj, &coords_obj,
                                     &size_obj, &centered, &mode_name, &cval, &out_obj))
        return NULL;
    voxa_roi_params p;
    memset(&p, 0, sizeof p);
    int64_t size[VOXA_MAXDIM];
    voxa_roi_mode mode;
    voxa_status s = voxa_roi_mode_from_name(mode_name, &mode);
    if (s != VOXA_OK) return vx_raise(s);
    if (get_size(size_obj, size, &p.k) < 0) return NULL;
    Py_buffer vi, vc, vo;
    voxa_array img, coords, out;
    if (vx_get_array(img_obj, 0, "image", &vi, &img) < 0) return NULL;
    if (get_coords(coords_obj, p.k, &vc, &coords) < 0) {
        PyBuffer_Release(&vi);
        return NULL;
    }
    if (vx_get_array(out_obj, 1, "out", &vo, &out) < 0) {
        PyBuffer_Release(&vi);
        PyBuffer_Release(&vc);
        return NULL;
    }
    p.coords = coords.data;
    p.n = coords.shape[0];
    p.size = size;
    p.centered = centered;
    p.mode = mode;
    p.cval = cval;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_roi_extract(&img, &p, &out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vi);
    PyBuffer_Release(&vc);
    PyBuffer_Release(&vo);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}

PyObject *vx_py_roi_paste(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"volume", "patches", "coords", "size", "centered", "mode", "op",
                             NULL};
    PyObject *vol_obj, *pat_obj, *coords_obj, *size_obj;
    int centered;
    const char *mode_name, *op_name;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOpss", kwlist, &vol_obj, &pat_obj,
                                     &coords_obj, &size_obj, &centered, &mode_name, &op_name))
        return NULL;
    voxa_roi_params p;
    memset(&p, 0, sizeof p);
    int64_t size[VOXA_MAXDIM];
    voxa_roi_mode mode;
    voxa_paste_op op;
    voxa_status s = voxa_roi_mode_from_name(mode_name, &mode);
    if (s == VOXA_OK) s = voxa_paste_op_from_name(op_name, &op);
    if (s != VOXA_OK) return vx_raise(s);
    if (get_size(size_obj, size, &p.k) < 0) return NULL;
    Py_buffer vv, vp, vc;
    voxa_array vol, pat, coords;
    if (vx_get_array(vol_obj, 1, "volume", &vv, &vol) < 0) return NULL;
    if (vx_get_array(pat_obj, 0, "patches", &vp, &pat) < 0) {
        PyBuffer_Release(&vv);
        return NULL;
    }
    if (get_coords(coords_obj, p.k, &vc, &coords) < 0) {
        PyBuffer_Release(&vv);
        PyBuffer_Release(&vp);
        return NULL;
    }
    p.coords = coords.data;
    p.n = coords.shape[0];
    p.size = size;
    p.centered = centered;
    p.mode = mode;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_roi_paste(&vol, &pat, &p, op);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vv);
    PyBuffer_Release(&vp);
    PyBuffer_Release(&vc);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}
