/* Deconvolution helpers that are not ops (Richardson–Lucy itself runs
 * through run_op): FFTW wisdom, the Gaussian PSF, and a timing hook for the
 * benchmark's floor (four bare FFTW r2c/c2r transforms). */
#include "common.h"

#include <fftw3.h>
#include <time.h>

/* The library's FFTW planner lock (internal symbol of the static library). */
void voxa__fftw_lock(void);
void voxa__fftw_unlock(void);

/* deconv_wisdom(path, save=False): load (or save) FFTW wisdom. */
PyObject *vx_py_deconv_wisdom(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "save", NULL};
    PyObject *path_obj;
    int save = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|p", kwlist, PyUnicode_FSConverter, &path_obj,
                                     &save))
        return NULL;
    voxa_status s;
    Py_BEGIN_ALLOW_THREADS
    s = save ? voxa_deconv_wisdom_save(PyBytes_AS_STRING(path_obj))
             : voxa_deconv_wisdom_load(PyBytes_AS_STRING(path_obj));
    Py_END_ALLOW_THREADS
    Py_DECREF(path_obj);
    if (s != VOXA_OK) return vx_raise(s);
    Py_RETURN_NONE;
}

/* psf_gaussian(out, sigma) -> None; sigma: float64 buffer, one per axis. */
PyObject *vx_py_psf_gaussian(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"out", "sigma", NULL};
    PyObject *out_o, *sig_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", kwlist, &out_o, &sig_o)) return NULL;
    vx_bufs b = {0};
    voxa_array ao;
    const double *sig;
    Py_ssize_t ns;
    if (vx_array(&b, out_o, 1, "out", &ao) == 0 && vx_doubles(&b, sig_o, "sigma", &sig, &ns) == 0) {
        voxa_status s = VOXA_OK;
        if (ns != ao.ndim)
            PyErr_Format(PyExc_ValueError, "sigma: %zd values for %d axes", ns, ao.ndim);
        else {
            Py_BEGIN_ALLOW_THREADS
            s = voxa_psf_gaussian(&ao, sig);
            Py_END_ALLOW_THREADS
        }
        if (s != VOXA_OK) vx_raise(s);
    }
    vx_release(&b);
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}

/* rl_fft_floor(shape, reps, measure) -> list of seconds per (r2c, c2r, r2c, c2r):
 * the floor of one Richardson–Lucy iteration, timed on in-place float32
 * plans of `shape` with voxa's thread count (benchmark hook). */
PyObject *vx_py_rl_fft_floor(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"shape", "reps", "measure", NULL};
    PyObject *shape_o;
    int reps = 3, measure = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|ip", kwlist, &shape_o, &reps, &measure))
        return NULL;
    PyObject *seq = PySequence_Fast(shape_o, "shape: expected a sequence");
    if (!seq) return NULL;
    int nd = (int)PySequence_Fast_GET_SIZE(seq);
    int dims[3];
    if (nd < 1 || nd > 3) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "shape: %d axes (1..3)", nd);
    }
    size_t rows = 1;
    for (int d = 0; d < nd; d++) {
        dims[d] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, d));
        if (d < nd - 1) rows *= (size_t)dims[d];
    }
    Py_DECREF(seq);
    if (PyErr_Occurred()) return NULL;
    size_t px = 2 * ((size_t)dims[nd - 1] / 2 + 1);
    float *buf = fftwf_malloc(rows * px * sizeof(float));
    if (!buf) return PyErr_NoMemory();
    double times[64];
    if (reps < 1) reps = 1;
    if (reps > 64) reps = 64;
    int ok = 0;
    Py_BEGIN_ALLOW_THREADS
    unsigned fl = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    voxa__fftw_lock();
    fftwf_plan_with_nthreads(voxa_get_threads());
    fftwf_plan f = fftwf_plan_dft_r2c(nd, dims, buf, (fftwf_complex *)buf, fl);
    fftwf_plan i = fftwf_plan_dft_c2r(nd, dims, (fftwf_complex *)buf, buf, fl);
    voxa__fftw_unlock();
    for (size_t k = 0; k < rows * px; k++) buf[k] = (float)(k % 7);
    if (f && i) {
        fftwf_execute(f); /* warm-up */
        fftwf_execute(i);
        ok = 1;
        for (int r = 0; r < reps; r++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            fftwf_execute(f);
            fftwf_execute(i);
            fftwf_execute(f);
            fftwf_execute(i);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double t = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            times[r] = t;
        }
    }
    voxa__fftw_lock();
    if (f) fftwf_destroy_plan(f);
    if (i) fftwf_destroy_plan(i);
    voxa__fftw_unlock();
    Py_END_ALLOW_THREADS
    fftwf_free(buf);
    if (!ok) return PyErr_Format(PyExc_RuntimeError, "FFTW could not plan");
    PyObject *lst = PyList_New(reps);
    for (int r = 0; lst && r < reps; r++) PyList_SET_ITEM(lst, r, PyFloat_FromDouble(times[r]));
    return lst;
}
