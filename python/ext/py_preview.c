/* Binding of voxa_preview and voxa_png_write:
 *   preview(image, labels, spacing, point, lo_pct, hi_pct, mem_limit)
 *     -> (bytes, height, width): RGB rows; image and labels are arrays
 *        (buffers, borrowed as stores) or paths (opened as stores: read in
 *        slabs, never loaded whole), either may be None (not both);
 *   png_write(path, array): uint8 (h, w) or (h, w, 3).
 * voxa/preview.py checks the arguments. */
#include "common.h"

/* obj: None, a str path or a buffer -> a store (NULL for None). */
static int get_store(PyObject *obj, const char *name, Py_buffer *view, int *have_view,
                     voxa_array *arr, voxa_store **st) {
    *st = NULL;
    *have_view = 0;
    if (obj == Py_None) return 0;
    voxa_status s;
    if (PyUnicode_Check(obj)) {
        const char *path = PyUnicode_AsUTF8(obj);
        if (!path) return -1;
        Py_BEGIN_ALLOW_THREADS
        s = voxa_store_open(path, st);
        Py_END_ALLOW_THREADS
    } else {
        if (vx_get_array(obj, 0, name, view, arr) < 0) return -1;
        *have_view = 1;
        s = voxa_store_wrap(arr, st);
    }
    if (s != VOXA_OK) {
        vx_raise(s);
        return -1;
    }
    return 0;
}

PyObject *vx_py_preview(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"image", "labels", "spacing", "point", "lo_pct", "hi_pct",
                             "mem_limit", NULL};
    PyObject *img_obj, *lab_obj, *sp_obj = Py_None, *pt_obj = Py_None;
    double lo = 0, hi = 0;
    long long mem = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OOddL", kwlist, &img_obj, &lab_obj, &sp_obj,
                                     &pt_obj, &lo, &hi, &mem))
        return NULL;
    Py_buffer iv, lv, sv;
    int have_iv = 0, have_lv = 0, have_sv = 0;
    voxa_array ia, la, rgb = {0};
    voxa_store *is = NULL, *ls = NULL;
    PyObject *res = NULL;
    double sp[VOXA_MAXDIM];
    int64_t pt[VOXA_MAXDIM];
    voxa_preview_options o = {0};
    if (get_store(img_obj, "image", &iv, &have_iv, &ia, &is) < 0) goto done;
    if (get_store(lab_obj, "labels", &lv, &have_lv, &la, &ls) < 0) goto done;
    if (sp_obj != Py_None) {
        const double *d;
        Py_ssize_t n;
        if (vx_get_doubles(sp_obj, "spacing", &sv, &d, &n) < 0) goto done;
        have_sv = 1;
        if (n > VOXA_MAXDIM) n = VOXA_MAXDIM;
        memcpy(sp, d, (size_t)n * sizeof(double));
        o.spacing = sp;
    }
    if (pt_obj != Py_None) {
        PyObject *seq = PySequence_Fast(pt_obj, "point: expected a sequence of integers");
        if (!seq) goto done;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        for (Py_ssize_t i = 0; i < n && i < VOXA_MAXDIM; i++)
            pt[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        Py_DECREF(seq);
        if (PyErr_Occurred()) goto done;
        o.point = pt;
    }
    o.lo_pct = lo;
    o.hi_pct = hi;
    o.mem_limit = mem;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_preview(is, ls, &o, &rgb);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) {
        vx_raise(s);
        goto done;
    }
    res = Py_BuildValue("(NLL)",
                        PyBytes_FromStringAndSize(rgb.data, (Py_ssize_t)voxa_array_size(&rgb)),
                        (long long)rgb.shape[0], (long long)rgb.shape[1]);
done:
    voxa_array_free(&rgb);
    voxa_store_close(is);
    voxa_store_close(ls);
    if (have_iv) PyBuffer_Release(&iv);
    if (have_lv) PyBuffer_Release(&lv);
    if (have_sv) PyBuffer_Release(&sv);
    return res;
}

PyObject *vx_py_png_write(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "image", NULL};
    const char *path;
    PyObject *obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO", kwlist, &path, &obj)) return NULL;
    Py_buffer v;
    voxa_array a;
    if (vx_get_array(obj, 0, "image", &v, &a) < 0) return NULL;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_png_write(path, &a);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&v);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}
