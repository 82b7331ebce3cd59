/* Streamed runs on paths (voxa.stream, python/voxa/stream.py) and the steps
 * of labelling by blocks (voxa/stream.h) for voxa.dask.
 *
 *     stream_run(name, input, output, mem_limit=0, chunks=None, pyramid=0,
 *                pyramid_mode=0, zarr_format=0, progress=None, **params)
 *         -> the op's count, or None
 *     stream_plan(name, input, mem_limit=0, chunks=None, **params) -> dict
 *
 * reach the chunk executor exactly as the CLI's --mem-limit does: open the
 * input store (None for ops without input), plan the blocks, refuse a plan
 * above the limit, create the output store (Zarr chunks dividing the
 * blocks, the pyramid), run, commit. The op's keywords are converted as
 * run_op converts them (py_op.c). The GIL is released for the whole run;
 * `progress(done, total)` is called after each block (False or an exception
 * cancels) and Ctrl-C cancels at the next block: the output is then removed
 * (never left as if complete) and the exception propagates.
 *
 * The label steps are the same C primitives the chunk executor uses, one
 * call per Dask task. */
#include "py_call.h"

#include <stdlib.h>
#include <string.h>


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
        vx_int64s(origin_o, ids.ndim, origin, "origin") == 0 &&
        vx_int64s(whole_o, ids.ndim, whole, "whole") == 0) {
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
        vx_int64s(rlo_o, ids.ndim, rlo, "region_lo") == 0 &&
        vx_int64s(lo_o, ids.ndim, lo, "own_lo") == 0 &&
        vx_int64s(hi_o, ids.ndim, hi, "own_hi") == 0) {
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

/* ---- streamed runs on paths --------------------------------------------------- */

typedef struct stream_opts {
    int64_t mem_limit;
    int nchunks;
    voxa_stream_options so;
    voxa_store_options out;
    PyObject *progress;
} stream_opts;

static const char *const stream_keys[] = {"mem_limit", "chunks", "pyramid", "pyramid_mode",
                                          "zarr_format", "progress", NULL};

static int int_option(PyObject *kw, const char *key, long long lo, long long hi, long long *v) {
    PyObject *o = kw ? PyDict_GetItemString(kw, key) : NULL;
    if (!o || o == Py_None) return 0;
    PyObject *i = PyNumber_Index(o);
    long long x = i ? PyLong_AsLongLong(i) : -1;
    Py_XDECREF(i);
    if (x == -1 && PyErr_Occurred()) return -1;
    if (x < lo || x > hi) {
        PyErr_Format(PyExc_ValueError, "%s: %lld, expected %lld to %lld", key, x, lo, hi);
        return -1;
    }
    *v = x;
    return 0;
}

/* The streaming keywords (ints: the Python layer parses sizes and names). */
static int stream_options(PyObject *kw, stream_opts *o) {
    memset(o, 0, sizeof *o);
    long long v = 0;
    if (int_option(kw, "mem_limit", 0, INT64_MAX, &v) < 0) return -1;
    o->mem_limit = o->so.mem_limit = v ? v : (int64_t)1 << 30;
    v = 0;
    if (int_option(kw, "pyramid", 0, 16, &v) < 0) return -1;
    o->out.pyramid = (int)v;
    v = 0;
    if (int_option(kw, "pyramid_mode", 0, 2, &v) < 0) return -1;
    o->out.pyramid_mode = (voxa_pyramid_mode)v;
    v = 0;
    if (int_option(kw, "zarr_format", 0, 3, &v) < 0) return -1;
    o->out.zarr_format = (int)v;
    PyObject *ch = kw ? PyDict_GetItemString(kw, "chunks") : NULL;
    if (ch && ch != Py_None) {
        PyObject *seq = PySequence_Fast(ch, "chunks: expected a sequence of ints");
        if (!seq) return -1;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
        int ok = n >= 1 && n <= VOXA_MAXDIM;
        for (Py_ssize_t d = 0; ok && d < n; d++) {
            PyObject *i = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, d));
            o->so.block[d] = i ? PyLong_AsLongLong(i) : -1;
            Py_XDECREF(i);
            ok = o->so.block[d] >= 1;
        }
        Py_DECREF(seq);
        o->nchunks = (int)n;
        if (!ok) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "chunks: expected 1 to 8 sizes >= 1");
            return -1;
        }
    }
    o->progress = kw ? PyDict_GetItemString(kw, "progress") : NULL;
    return 0;
}

static PyObject *plan_dict(const voxa_stream_plan *p) {
    return Py_BuildValue("{s:s,s:N,s:N,s:N,s:L,s:N,s:N,s:O,s:O,s:O,s:L,s:L,s:i,s:d}", "dtype",
                         voxa_dtype_name(p->out_dtype), "shape", vx_shape(p->ndim, p->shape),
                         "block", vx_shape(p->ndim, p->block), "grid",
                         vx_shape(p->ndim, p->grid), "nblocks", (long long)p->nblocks,
                         "halo_lo", vx_shape(p->ndim, p->halo_lo), "halo_hi",
                         vx_shape(p->ndim, p->halo_hi), "global", p->global ? Py_True : Py_False,
                         "whole", p->whole && !p->streamed ? Py_True : Py_False, "streamed",
                         p->streamed ? Py_True : Py_False, "peak_bytes",
                         (long long)p->peak_bytes, "out_bytes", (long long)p->out_bytes, "workers",
                         p->workers, "overhead", voxa_stream_plan_overhead(p));
}

/* Open the input, plan; with run, create the output, run and commit. */
static PyObject *stream(PyObject *args, PyObject *kw, const char *fname, int run) {
    PyObject *name, *in_o, *out_o = Py_None, *ret = NULL;
    if (!(run ? PyArg_ParseTuple(args, "UOO", &name, &in_o, &out_o)
              : PyArg_ParseTuple(args, "UO", &name, &in_o)))
        return NULL;
    stream_opts o;
    if (stream_options(kw, &o) < 0) return NULL;
    call c;
    const char *in_path = NULL, *out_path = NULL;
    voxa_store *in = NULL, *out = NULL;
    if (vx_call_init(&c, fname, name, NULL, kw, stream_keys) < 0) goto done;
    if (c.op->ninputs > 0 && in_o == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: %s needs an input path", fname, c.op->name);
        goto done;
    }
    if (c.op->ninputs == 0 && in_o != Py_None) {
        PyErr_Format(PyExc_TypeError, "%s: %s takes no input (pass None)", fname, c.op->name);
        goto done;
    }
    if (in_o != Py_None && vx_path(&c.bufs, in_o, &in_path) < 0) goto done;
    if (run && vx_path(&c.bufs, out_o, &out_path) < 0) goto done;
    vx_progress pp = {o.progress, 0};
    o.so.progress = vx_progress_bridge(&pp);
    voxa_stream_plan p;
    int64_t count = -1;
    voxa_status s = VOXA_OK;
    int too_big = 0, bad_chunks = 0;
    Py_BEGIN_ALLOW_THREADS
    if (in_path) s = voxa_store_open(in_path, &in);
    if (s == VOXA_OK) s = voxa_stream_plan_make(&c.args, in, &o.so, &p);
    bad_chunks = s == VOXA_OK && o.nchunks && o.nchunks != p.ndim;
    too_big = s == VOXA_OK && run && p.peak_bytes > o.mem_limit;
    if (s == VOXA_OK && run && !too_big && !bad_chunks) {
        voxa_stream_chunks(&p, o.out.pyramid, o.out.chunks);
        s = voxa_store_create_opts(out_path, p.out_dtype, p.ndim, p.shape, &o.out, &out);
        if (s == VOXA_OK) s = voxa_stream_run(&c.args, in, out, &o.so, &count);
        if (s == VOXA_OK) s = voxa_store_commit(out);
    }
    voxa_store_close(out); /* removed unless committed */
    voxa_store_close(in);
    Py_END_ALLOW_THREADS
    if (pp.failed) goto done; /* the callback's exception, or KeyboardInterrupt */
    if (s != VOXA_OK) {
        vx_raise(s);
    } else if (bad_chunks) {
        PyErr_Format(PyExc_ValueError, "%s: chunks: %d sizes for a %d-D output", fname,
                     o.nchunks, p.ndim);
    } else if (too_big) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: mem_limit %lld bytes: the plan needs about %.3g MiB%s",
                 fname, (long long)o.mem_limit, (double)p.peak_bytes / 1048576.0,
                 p.whole ? " (this op reads the whole volume)" : " with these chunks");
        PyErr_SetString(PyExc_MemoryError, msg);
    } else if (!run) {
        ret = plan_dict(&p);
    } else if ((c.op->flags & VOXA_OP_COUNT) && count >= 0) {
        ret = PyLong_FromLongLong(count);
    } else {
        ret = Py_NewRef(Py_None);
    }
done:
    vx_call_free(&c);
    return ret;
}

PyObject *vx_py_stream_run(PyObject *self, PyObject *args, PyObject *kw) {
    return stream(args, kw, "stream_run", 1);
}

PyObject *vx_py_stream_plan(PyObject *self, PyObject *args, PyObject *kw) {
    return stream(args, kw, "stream_plan", 0);
}
