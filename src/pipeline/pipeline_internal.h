/* The pipeline's shared state (not installed): the checked recipe
 * (recipe.c), what the runner decided and measured (run.c), read by the
 * run.json and report writers (runlog.c, report.c). */
#ifndef VOXA_PIPELINE_INTERNAL_H
#define VOXA_PIPELINE_INTERNAL_H

#include "internal.h"
#include "toml.h"
#include "voxa/pipeline.h"

#define PL_MAXSTEPS 256
#define PL_MAXITEMS (2 * PL_MAXSTEPS)

typedef enum pl_kind { PL_OP, PL_MEASURE, PL_PREVIEW } pl_kind;

/* A named file: a recipe input, or the output of a step. */
typedef struct pl_item {
    char *name;
    char *path;            /* resolved against the recipe's folder */
    int step;              /* producing step (index into steps), -1: input */
    int line;
    int known;             /* dtype/ndim/shape known at load */
    int is_array;          /* an array (not a CSV or PNG) */
    int labels;            /* produced by a counting op (label): previewed in colour */
    voxa_dtype dtype;
    int ndim;
    int64_t shape[VOXA_MAXDIM];
} pl_item;

/* One parameter given in a step's entry. */
typedef struct pl_value {
    int param;      /* op parameter index */
    char *text;     /* as voxa_args_parse reads it (refs: the resolved path) */
    int item;       /* ARRAY/TABLE given by name: the item, else -1 */
    int line, col;
} pl_value;

typedef struct pl_step {
    char *name;
    pl_kind kind;
    const voxa_op *op;     /* PL_OP */
    int line, col;
    int input;             /* item read (PL_OP with an input), -1: none */
    int output;            /* item written */
    pl_value vals[VOXA_OP_MAXPARAMS];
    int nvals;
    /* measure: labels, intensity; preview: image, labels (items or -1) */
    int a_item, b_item;
    double spacing[VOXA_MAXDIM];
    int nspacing;
    int64_t point[VOXA_MAXDIM];
    int npoint;
    double pct[2];
    int npct;
    char *properties;
    int deps[PL_MAXITEMS]; /* items this step reads */
    int ndeps;
    char *fingerprint;     /* the entry, canonical: a change reruns the step */
    /* decided and measured by the runner */
    int will_run;
    char why[160];
    int state;             /* 0 pending, 1 ran, 2 skipped, -1 failed */
    double seconds;
    int64_t count;         /* op count (label), objects (measure), or -1 */
    int has_plan;
    voxa_stream_plan plan;
    char *preview_in, *preview_out; /* report previews (paths), or NULL */
    char *error;
} pl_step;

struct voxa_pipeline {
    char *file;           /* for messages */
    char *base;           /* recipe folder */
    char *title;
    char *out_dir, *run_json, *report;
    int64_t mem_limit;
    int want_report, want_previews;
    pl_item items[PL_MAXITEMS];
    int nitems;
    pl_step steps[PL_MAXSTEPS];
    int nsteps;
    int order[PL_MAXSTEPS]; /* run order (dependencies first) */
    double started, seconds;
    int status;            /* 0 not run, 1 complete, -1 failed, 2 dry run */
};

/* recipe.c: EINVAL with "FILE:LINE:COL: message". */
voxa_status voxa__pl_error(const voxa_pipeline *p, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* recipe.c: the item called `name`, or -1; the known names, for messages. */
int voxa__pl_find_item(const voxa_pipeline *p, const char *name);
const char *voxa__pl_known_names(const voxa_pipeline *p, char *buf, size_t n);
/* recipe_steps.c: key `key` of step table t as a string (NULL if absent). */
voxa_status voxa__pl_get_string(const voxa_pipeline *p, const vt_node *t, const char *step,
                                const char *key, const char **out);
/* recipe_steps.c: key `key` naming an item (*item, -1 if absent and optional). */
voxa_status voxa__pl_ref(const voxa_pipeline *p, const vt_node *t, const char *step,
                         const char *key, int required, int *item);
/* recipe_steps.c: step s reads item `item`. */
voxa_status voxa__pl_add_dep(pl_step *s, int item);
/* recipe_steps.c: the keys of a measure or preview step; of an op step. */
voxa_status voxa__pl_table_step(voxa_pipeline *p, pl_step *s, const vt_node *t);
voxa_status voxa__pl_op_params(voxa_pipeline *p, pl_step *s, const vt_node *t);
/* recipe_steps.c: the op's own check and halo where the input is known at
 * load; the output's metadata for the steps after. */
voxa_status voxa__pl_check_op(voxa_pipeline *p, pl_step *s, const vt_node *t);
/* recipe.c: "<base>/<rel>" unless rel is absolute (malloc'ed). */
char *voxa__pl_join(const char *base, const char *rel);
/* run.c: modification time of a file or folder (newest top-level entry of
 * a folder), seconds; -1 if missing. */
double voxa__pl_mtime(const char *path);
/* runlog.c: write run.json atomically. */
voxa_status voxa__pl_write_runlog(const voxa_pipeline *p);
/* runlog.c: the fingerprint run.json recorded for step `name` with state
 * done, malloc'ed, or NULL. */
char *voxa__pl_previous_fingerprint(const voxa_pipeline *p, const char *name);
/* report.c: write report.html atomically. */
voxa_status voxa__pl_write_report(const voxa_pipeline *p);

#endif
