/* Per-chunk helpers of voxa.dask's labelling (python/voxa/dask/_label.py):
 * one pass each over a chunk's labels, with the GIL released, so no int64
 * copy of a chunk is ever made.
 *   dask_firsts:  first voxel (raster index in the whole volume) of each label
 *                 of a chunk labelled alone (labels 1..n appear in order);
 *   dask_relabel: out[i] = table[labels[i]] (the final numbering), out of
 *                 the table's dtype.
 * Labels are int32 or int64, C-contiguous. */
#include "common.h"

#include <string.h>


static int labels_ok(const voxa_array *a) {
    if ((a->dtype == VOXA_I32 || a->dtype == VOXA_I64) && voxa_array_is_c_contiguous(a)) return 1;
    PyErr_SetString(PyExc_ValueError, "labels: expected a C-contiguous int32 or int64 array");
    return 0;
}

/* One row of labels p[0 .. inner) of type T, its first voxel at raster
 * index `row`: records the first voxels of the labels seen + 1, seen + 2,
 * ... met in it. Blocks of 16 with no label above `seen` hold no first
 * voxel and are skipped (compares over a fixed block, which vectorise with
 * SSE2 for int32: most of a chunk is background or labels already met). -1:
 * a label out of order. (seen <= n fits T: int32 labels count at most
 * 2^31 - 1.) */
#define FIRSTS_ROW(T)                                                          \
    do {                                                                       \
        const T *p = (const T *)lab->data + i;                                 \
        for (int64_t x = 0; x < inner && seen < n;) {                          \
            for (; x + 16 <= inner; x += 16) {                                 \
                int any = 0;                                                   \
                for (int k = 0; k < 16; k++) any |= p[x + k] > (T)seen;        \
                if (any) break;                                                \
            }                                                                  \
            int64_t end = x + 16 < inner ? x + 16 : inner;                     \
            for (; x < end && seen < n; x++) {                                 \
                int64_t v = p[x];                                              \
                if (v > seen) {                                                \
                    if (v != seen + 1) return -1;                              \
                    first[seen++] = row + x;                                   \
                }                                                              \
            }                                                                  \
        }                                                                      \
    } while (0)

/* first[k] = raster index (shape `whole`) of label k+1's first voxel; the
 * chunk starts at `origin`. -1: a label out of order (not a chunk labelled
 * in raster order). */
static int firsts(const voxa_array *lab, int64_t n, const int64_t *origin, const int64_t *whole,
                  int64_t *first) {
    int nd = lab->ndim;
    int64_t m = voxa_array_size(lab), idx[VOXA_MAXDIM] = {0}, seen = 0, inner = 1;
    if (nd > 0) inner = lab->shape[nd - 1];
    for (int64_t i = 0; i < m && seen < n; i += inner) { /* one row at a time */
        int64_t row = 0;
        for (int d = 0; d < nd - 1; d++) row = row * whole[d] + origin[d] + idx[d];
        row = nd > 0 ? row * whole[nd - 1] + origin[nd - 1] : 0;
        if (lab->dtype == VOXA_I32) FIRSTS_ROW(int32_t);
        else FIRSTS_ROW(int64_t);
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < lab->shape[d]) break;
            idx[d] = 0;
        }
    }
    return seen == n ? 0 : -1;
}

PyObject *vx_py_dask_firsts(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"labels", "n", "origin", "whole", "first", NULL};
    PyObject *lab_o, *origin_o, *whole_o, *first_o;
    long long n;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OLOOO", kwlist, &lab_o, &n, &origin_o, &whole_o,
                                     &first_o))
        return NULL;
    vx_bufs b = {0};
    voxa_array lab, first;
    int64_t origin[VOXA_MAXDIM], whole[VOXA_MAXDIM];
    if (vx_array(&b, lab_o, 0, "labels", &lab) == 0 && labels_ok(&lab) &&
        vx_array(&b, first_o, 1, "first", &first) == 0 &&
        vx_int64s(origin_o, lab.ndim, origin, "origin") == 0 &&
        vx_int64s(whole_o, lab.ndim, whole, "whole") == 0) {
        if (n < 0 || first.dtype != VOXA_I64 || voxa_array_size(&first) != n ||
            !voxa_array_is_c_contiguous(&first)) {
            PyErr_SetString(PyExc_ValueError, "first: expected n contiguous int64 values");
        } else {
            int r;
            Py_BEGIN_ALLOW_THREADS
            r = firsts(&lab, n, origin, whole, first.data);
            Py_END_ALLOW_THREADS
            if (r) PyErr_Format(PyExc_ValueError, "labels: not labels 1..%lld in raster order", n);
        }
    }
    vx_release(&b);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}

/* out[i] = table[labels[i]], checked as it goes: -1 if a label is outside
 * the table (out is then partly written). */
#define GATHER(T, L)                                                                             \
    do {                                                                                         \
        const T *t = table->data;                                                                \
        const L *l = lab->data;                                                                  \
        T *o = out->data;                                                                        \
        for (int64_t i = 0; i < m; i++) {                                                        \
            if ((uint64_t)l[i] >= (uint64_t)nt) return -1;                                       \
            o[i] = t[l[i]];                                                                      \
        }                                                                                        \
    } while (0)

#define GATHER_ANY(L)                                                                            \
    switch (voxa_dtype_size(table->dtype)) {                                                     \
    case 1: GATHER(uint8_t, L); break;                                                           \
    case 2: GATHER(uint16_t, L); break;                                                          \
    case 4: GATHER(uint32_t, L); break;                                                          \
    default: GATHER(uint64_t, L); break;                                                         \
    }

static int gather(const voxa_array *lab, const voxa_array *table, voxa_array *out) {
    int64_t m = voxa_array_size(lab), nt = voxa_array_size(table);
    if (lab->dtype == VOXA_I32) {
        GATHER_ANY(int32_t)
    } else {
        GATHER_ANY(int64_t)
    }
    return 0;
}

PyObject *vx_py_dask_relabel(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"labels", "table", "out", NULL};
    PyObject *lab_o, *table_o, *out_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO", kwlist, &lab_o, &table_o, &out_o)) return NULL;
    vx_bufs b = {0};
    voxa_array lab, table, out;
    if (vx_array(&b, lab_o, 0, "labels", &lab) == 0 && labels_ok(&lab) &&
        vx_array(&b, table_o, 0, "table", &table) == 0 && vx_array(&b, out_o, 1, "out", &out) == 0) {
        int same = out.ndim == lab.ndim;
        for (int d = 0; same && d < lab.ndim; d++) same = out.shape[d] == lab.shape[d];
        if (!same || out.dtype != table.dtype || !voxa_array_is_c_contiguous(&out) ||
            !voxa_array_is_c_contiguous(&table) || table.ndim != 1) {
            PyErr_SetString(PyExc_ValueError, "relabel: out must be C-contiguous, shaped as labels, "
                            "of the 1-D contiguous table's dtype");
        } else {
            int r;
            Py_BEGIN_ALLOW_THREADS
            r = gather(&lab, &table, &out);
            Py_END_ALLOW_THREADS
            if (r) PyErr_SetString(PyExc_ValueError, "labels: a label is outside the table");
        }
    }
    vx_release(&b);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}
