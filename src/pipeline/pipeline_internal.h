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
