/* voxa pipeline: a whole job from a recipe (TOML), resumable, with a report.
 *
 * A recipe names input files and steps. Each step is an op of the registry
 * (by name, its parameters as the op's descriptor declares them) or one of
 * the non-array steps `measure` (a CSV table) and `preview` (a PNG). Steps
 * refer to inputs and to earlier steps' outputs by name; the order is the
 * dependency order (a cycle is an error). Array steps run through the chunk
 * executor (voxa_stream_run) within a memory limit, so volumes larger than
 * memory work. A step whose outputs exist, are newer than its inputs and
 * were made from the same recipe entry is skipped, so a stopped run resumes.
 * After each step `run.json` is rewritten atomically (every parameter after
 * defaults, version, paths, timings, counts); at the end `report.html`, one
 * self-contained page: previews before/after each step, object table
 * summaries, timings. The format and every key: docs/pipeline.md. */
#ifndef VOXA_PIPELINE_H
#define VOXA_PIPELINE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct voxa_pipeline voxa_pipeline;

/** Read and check the recipe at `path` (relative paths in it are relative
 *  to its folder). Every problem is VOXA_EINVAL with a message
 *  "FILE:LINE:COL: ..." naming the key: syntax, unknown step/op/key,
 *  missing key, wrong type, bad value (the op's own message), unknown
 *  reference, cycle, missing input file. Nothing is written. */
VOXA_API voxa_status voxa_pipeline_load(const char *path, voxa_pipeline **p);
/** The same from recipe text; `name` is used in messages, `base_dir` for
 *  relative paths (NULL: the current folder). */
VOXA_API voxa_status voxa_pipeline_load_text(const char *text, size_t len, const char *name,
                                             const char *base_dir, voxa_pipeline **p);
/** Free (NULL allowed). */
VOXA_API void voxa_pipeline_free(voxa_pipeline *p);

/** Events reported while running (state: "run", "skip", "done"). */
typedef int (*voxa_pipeline_step_fn)(int index, int nsteps, const char *step, const char *op,
                                     const char *state, double seconds, void *user);

/** Options; zero-initialised means the defaults. */
typedef struct voxa_pipeline_options {
    int64_t mem_limit;      /* bytes per step (0: the recipe's, else 1 GiB) */
    int force;              /* rerun every step */
    int dry_run;            /* decide and describe, run nothing (plan_text) */
    voxa_progress progress; /* within a step (blocks); user data as given */
    voxa_pipeline_step_fn on_step; /* NULL: none; non-zero return cancels */
    void *user;             /* for on_step */
} voxa_pipeline_options;

/** Run the steps in order (or, with dry_run, only decide what would run).
 *  Writes run.json after each step and report.html at the end, in the
 *  recipe's output folder. A failing step stops the run (run.json says
 *  which). */
VOXA_API voxa_status voxa_pipeline_run(voxa_pipeline *p, const voxa_pipeline_options *o);

/** After voxa_pipeline_run (dry run or not): one line per step in order,
 *  "name (op): run|skip - why", then the plan of blocks, into buf. */
VOXA_API voxa_status voxa_pipeline_plan_text(const voxa_pipeline *p, char *buf, size_t n);

/** Paths of run.json, report.html and the output folder (absolute or
 *  relative as the recipe's folder was given). */
VOXA_API const char *voxa_pipeline_path(const voxa_pipeline *p, const char *which);

/** Steps in run order: count, then name, op and output path of step i. */
VOXA_API int voxa_pipeline_nsteps(const voxa_pipeline *p);
VOXA_API const char *voxa_pipeline_step(const voxa_pipeline *p, int i, const char *what);

#ifdef __cplusplus
}
#endif
#endif
