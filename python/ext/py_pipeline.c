/* Binding of the pipeline runner (voxa/pipeline.h):
 *   pipeline_run(path=None, text=None, name=None, base_dir=None, mem_limit=0,
 *                force=False, dry_run=False, progress=None) -> dict
 * runs a recipe file (path) or recipe text (text, with base_dir for its
 * relative paths) through the same C code as `voxa pipeline`, with the GIL
 * released. The dict: run_json, report, output_dir, plan (text) and steps
 * (name, op, state, why, output per step, in run order). A recipe error
 * raises ValueError with the "FILE:LINE:COL: ..." message. voxa/pipeline.py
 * turns dicts into recipe text. */
#include "common.h"

static PyObject *steps_list(const voxa_pipeline *p) {
    int n = voxa_pipeline_nsteps(p);
    PyObject *list = PyList_New(n);
    for (int i = 0; list && i < n; i++) {
        PyObject *d = Py_BuildValue("{s:s,s:s,s:s,s:s,s:s}", "name", voxa_pipeline_step(p, i, "name"),
                                    "op", voxa_pipeline_step(p, i, "op"), "state",
                                    voxa_pipeline_step(p, i, "state"), "why",
                                    voxa_pipeline_step(p, i, "why"), "output",
                                    voxa_pipeline_step(p, i, "output"));
        if (!d) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, d);
    }
    return list;
}

PyObject *vx_py_pipeline_run(PyObject *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"path", "text", "name", "base_dir", "mem_limit", "force", "dry_run",
                             "progress", NULL};
    PyObject *path_o = Py_None, *prog_o = Py_None;
    const char *text = NULL, *name = NULL, *base = NULL;
    Py_ssize_t tlen = 0;
    long long mem = 0;
    int force = 0, dry = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|Oz#zzLppO", kwlist, &path_o, &text, &tlen, &name,
                                     &base, &mem, &force, &dry, &prog_o))
        return NULL;
    vx_bufs b = {0};
    voxa_pipeline *p = NULL;
    PyObject *ret = NULL;
    const char *path = NULL;
    voxa_status s;
    if (path_o != Py_None && vx_path(&b, path_o, &path) < 0) goto done;
    if (!path == !text) {
        PyErr_SetString(PyExc_TypeError, "pipeline_run: give exactly one of path and text");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    s = path ? voxa_pipeline_load(path, &p)
             : voxa_pipeline_load_text(text, (size_t)tlen, name, base, &p);
    Py_END_ALLOW_THREADS
    if (s != VOXA_OK) {
        vx_raise(s);
        goto done;
    }
    vx_progress pp = {prog_o, 0};
    voxa_pipeline_options o = {0};
    o.mem_limit = mem;
    o.force = force;
    o.dry_run = dry;
    o.progress = vx_progress_bridge(&pp);
    Py_BEGIN_ALLOW_THREADS
    s = voxa_pipeline_run(p, &o);
    Py_END_ALLOW_THREADS
    if (pp.failed) goto done;
    if (s != VOXA_OK) {
        /* a failed step is a run failure, not a wrong argument */
        PyErr_SetString(s == VOXA_ECANCELLED ? PyExc_KeyboardInterrupt : PyExc_RuntimeError,
                        voxa_last_error());
        goto done;
    }
    static char plan[1 << 16];
    voxa_pipeline_plan_text(p, plan, sizeof plan);
    ret = Py_BuildValue("{s:s,s:s,s:s,s:s,s:N}", "run_json", voxa_pipeline_path(p, "run.json"),
                        "report", voxa_pipeline_path(p, "report"), "output_dir",
                        voxa_pipeline_path(p, "output_dir"), "plan", plan, "steps",
                        steps_list(p));
done:
    voxa_pipeline_free(p);
    vx_release(&b);
    return ret;
}
