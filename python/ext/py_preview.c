/* Binding of voxa_preview and voxa_png_write:
 *   preview(image, labels, spacing, point, lo_pct, hi_pct, mem_limit)
 *     -> (bytes, height, width): RGB rows; image and labels are arrays
 *        (buffers, borrowed as stores) or paths (opened as stores: read in
 *        slabs, never loaded whole), either may be None (not both);
 *   png_write(path, array): uint8 (h, w) or (h, w, 3).
 * voxa/preview.py checks the arguments. */
#include "common.h"

/* obj: None, a path (str, bytes, os.PathLike) or a buffer -> a store
 * (NULL for None); the buffer stays in b. */
static int get_store(vx_bufs *b, PyObject *obj, const char *name, voxa_array *arr,
                     voxa_store **st) {
    *st = NULL;
    if (obj == Py_None) return 0;
    voxa_status s;
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyObject_HasAttrString(obj, "__fspath__")) {
        const char *path;
        if (vx_path(b, obj, &path) < 0) return -1;
        Py_BEGIN_ALLOW_THREADS
        s = voxa_store_open(path, st);
        Py_END_ALLOW_THREADS
    } else {
        if (vx_array(b, obj, 0, name, arr) < 0) return -1;
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
    vx_bufs b = {0};
    voxa_array ia, la, rgb = {0};
    voxa_store *is = NULL, *ls = NULL;
    PyObject *res = NULL;
    double sp[VOXA_MAXDIM];
    int64_t pt[VOXA_MAXDIM];
    voxa_preview_options o = {0};
    if (get_store(&b, img_obj, "image", &ia, &is) < 0) goto done;
    if (get_store(&b, lab_obj, "labels", &la, &ls) < 0) goto done;
    if (sp_obj != Py_None) {
        const double *d;
        Py_ssize_t n;
        if (vx_doubles(&b, sp_obj, "spacing", &d, &n) < 0) goto done;
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
    vx_release(&b);
    return res;
}

PyObject *vx_py_png_write(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "image", NULL};
    const char *path;
    PyObject *obj;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sO", kwlist, &path, &obj)) return NULL;
    vx_bufs b = {0};
    voxa_array a;
    if (vx_array(&b, obj, 0, "image", &a) < 0) return NULL;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = voxa_png_write(path, &a);
    Py_END_ALLOW_THREADS
    vx_release(&b);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}
