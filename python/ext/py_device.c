/* voxa._voxa.run_device: label and edt on arrays in CUDA memory (device
 * pointers from __cuda_array_interface__, parsed in python/voxa/_device.py),
 * through voxa_label_device / voxa_edt_device: nothing is copied through
 * the host. The GIL is released while the device works. */
#include "common.h"

#include <string.h>

static int dtype_of(const char *name, voxa_dtype *t) {
    if (voxa_dtype_from_name(name, t) != VOXA_OK) {
        PyErr_Format(PyExc_TypeError, "device array: unsupported dtype '%s'", name);
        return -1;
    }
    return 0;
}

PyObject *vx_py_run_device(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self;
    static char *kwlist[] = {"name", "in_ptr", "in_dtype", "shape", "out_ptr", "out_dtype",
                             "connectivity", "structure", "spacing", "squared", NULL};
    const char *name, *idt, *odt;
    unsigned long long ip, op;
    PyObject *shape_o, *structure_o = Py_None, *spacing_o = Py_None;
    int connectivity = 1, squared = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sKsOKs|iOOp", kwlist, &name, &ip, &idt, &shape_o,
                                     &op, &odt, &connectivity, &structure_o, &spacing_o,
                                     &squared))
        return NULL;
    voxa_device_array in, out;
    memset(&in, 0, sizeof in);
    Py_ssize_t nd = PySequence_Size(shape_o);
    if (nd < 1 || nd > VOXA_MAXDIM) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "device array: ndim %zd is out of range 1..%d", nd,
                         VOXA_MAXDIM);
        return NULL;
    }
    in.ndim = (int)nd;
    if (vx_int64s(shape_o, in.ndim, in.shape, "shape") || dtype_of(idt, &in.dtype)) return NULL;
    out = in;
    in.backend = out.backend = VOXA_BACKEND_CUDA;
    in.ptr = (uintptr_t)ip;
    out.ptr = (uintptr_t)op;
    if (dtype_of(odt, &out.dtype)) return NULL;
    vx_bufs b = {0};
    voxa_status st;
    int64_t count = 0;
    if (!strcmp(name, "label")) {
        const unsigned char *s = NULL;
        Py_buffer sb = {0};
        if (structure_o != Py_None) {
            if (PyObject_GetBuffer(structure_o, &sb, PyBUF_SIMPLE)) return NULL;
            s = sb.buf;
        }
        Py_BEGIN_ALLOW_THREADS
        st = voxa_label_device(&in, s, connectivity, &out, &count);
        Py_END_ALLOW_THREADS
        if (s) PyBuffer_Release(&sb);
    } else if (!strcmp(name, "edt")) {
        const double *sp = NULL;
        Py_ssize_t n = 0;
        if (spacing_o != Py_None) {
            if (vx_doubles(&b, spacing_o, "sampling", &sp, &n)) return NULL;
            if (n != nd) {
                vx_release(&b);
                return PyErr_Format(PyExc_ValueError, "sampling: %zd values for %zd axes", n,
                                    nd);
            }
        }
        voxa_edt_params p = {0};
        p.spacing = sp;
        p.squared = squared;
        Py_BEGIN_ALLOW_THREADS
        st = voxa_edt_device(&in, &out, &p);
        Py_END_ALLOW_THREADS
    } else {
        return PyErr_Format(PyExc_ValueError, "run_device: '%s' has no device-array path "
                            "(label, edt)", name);
    }
    vx_release(&b);
    if (st != VOXA_OK) return vx_raise(st);
    return PyLong_FromLongLong(count);
}

PyObject *vx_py_gpu_transfers(PyObject *self, PyObject *args, PyObject *kw) {
    (void)self, (void)args, (void)kw;
    int64_t to, from;
    voxa_gpu_transfers(&to, &from);
    return Py_BuildValue("(LL)", (long long)to, (long long)from);
}
