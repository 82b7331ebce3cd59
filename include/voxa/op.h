/* voxa op: every op described once, as data.
 *
 * An op (label, dilate, deconvolve, ...) is a `voxa_op` descriptor: its name,
 * a one-line summary, typed parameters with defaults and help text, the input
 * dtypes it accepts, the rule giving its output's dtype and shape, the halo a
 * region of output needs (local ops) or the fact that it needs a merge
 * instead (global ops), and the entry point that runs it on views. The CLI
 * driver, the Python module, the chunk executor, Dask and the GPU backends are
 * generic over these descriptors (in the spirit of libvips, whose operations
 * declare their arguments so that its CLI and bindings need no per-op code).
 *
 * Use: find an op (voxa_op_find), fill a voxa_args from defaults
 * (voxa_args_init), set parameters from text (voxa_args_parse: CLI options,
 * recipe values) or typed values (voxa_args_set_*: bindings), check them
 * against the input (voxa_op_check), ask for the output's dtype and shape
 * (voxa_op_output), run (voxa_op_run), release (voxa_args_free). The typed C
 * functions (voxa_label, voxa_morph, ...) stay the C API; descriptors call
 * them. */
#ifndef VOXA_OP_H
#define VOXA_OP_H

#include "core.h"
#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- parameters ----------------------------------------------------------- */

typedef enum voxa_param_type {
    VOXA_PARAM_FLAG = 0, /* on/off (CLI: --name with no value); default off */
    VOXA_PARAM_INT,      /* a whole number in [min, max] */
    VOXA_PARAM_FLOAT,    /* a finite number in [min, max] */
    VOXA_PARAM_CHOICE,   /* one word of `choices` ("a|b|c"); value = its index */
    VOXA_PARAM_DTYPE,    /* a dtype name among `choices`; value = the voxa_dtype */
    VOXA_PARAM_INTS,     /* comma-separated whole numbers in [min, max] */
    VOXA_PARAM_FLOATS,   /* comma-separated finite numbers in [min, max] */
    VOXA_PARAM_STRING,   /* free text (a path) */
    VOXA_PARAM_ARRAY,    /* an array (CLI: a file read with voxa_read) */
    VOXA_PARAM_TABLE     /* rows of numbers in named columns (CLI: .csv with a
                            header, or an N x k .npy with unnamed columns) */
} voxa_param_type;

/* Parameter flags. */
#define VOXA_PARAM_REQUIRED 1u  /* must be given (for a oneof group: one of it) */
#define VOXA_PARAM_PER_AXIS 2u  /* INTS/FLOATS: one value per input axis, or one
                                   value for every axis */
#define VOXA_PARAM_HIDDEN 4u    /* not offered on the CLI (bindings only) */
#define VOXA_PARAM_OUTPUT 8u    /* ARRAY: a second output the caller provides
                                   and the op writes (edt's indices) */

typedef struct voxa_param {
    const char *name;    /* snake_case: Python keyword and recipe key; the CLI
                            option is --name with '_' written '-' */
    voxa_param_type type;
    const char *def;     /* default as text (parsed like a CLI value); NULL:
                            none (absent unless given) */
    const char *help;    /* one line for `voxa help` and docstrings */
    const char *choices; /* CHOICE/DTYPE: words separated by '|'; a word
                            "a=b" is an alias: "a" is accepted as "b" */
    double min, max;     /* INT/FLOAT/INTS/FLOATS: allowed range (inclusive);
                            min > max means no range */
    unsigned flags;      /* VOXA_PARAM_* */
    const char *oneof;   /* parameters sharing this group name are mutually
                            exclusive; with REQUIRED, exactly one is needed */
    const char *metavar; /* CLI value placeholder ("R", "Z,Y,X", "F.npy") */
    const char *alias;   /* another accepted name ("centers"), or NULL */
} voxa_param;

/** A parameter's value in a voxa_args (fields by type). */
typedef struct voxa_value {
    int set;                     /* given by the caller or by a default */
    int64_t i;                   /* FLAG (0/1), INT, CHOICE index, DTYPE */
    double f;                    /* FLOAT */
    int n;                       /* INTS/FLOATS: count */
    int64_t iv[VOXA_MAXDIM];     /* INTS */
    double fv[VOXA_MAXDIM];      /* FLOATS */
    const char *s;               /* STRING (owned copy) */
    voxa_array array;            /* ARRAY; TABLE: nrows x ncols float64 */
    int owned;                   /* array.owner belongs to the args */
    char **names;                /* TABLE: ncols column names, or NULL */
    int header_lines;            /* TABLE from a CSV: lines before row 0 */
    const char *source;          /* TABLE/ARRAY: file it came from, or NULL */
} voxa_value;

#define VOXA_OP_MAXPARAMS 24

struct voxa_op;

/** Parameter values of one op call. */
typedef struct voxa_args {
    const struct voxa_op *op;
    voxa_value v[VOXA_OP_MAXPARAMS];
    int backend_set;      /* 0: run on voxa_backend_selected() (VOXA_BACKEND) */
    voxa_backend backend; /* with backend_set: cpu, opencl, cuda or auto */
} voxa_args;

/* ---- the op descriptor ------------------------------------------------------ */

/* Op flags. */
#define VOXA_OP_LOCAL 1u       /* an output region needs only the input region
                                  grown by the halo (morphology, balls, RL) */
#define VOXA_OP_GLOBAL 2u      /* an output voxel may depend on any input voxel:
                                  chunked runs merge instead (label) or need the
                                  whole volume (edt) */
#define VOXA_OP_SAME_SHAPE 4u  /* output shape == input shape, voxel for voxel */
#define VOXA_OP_HALO_APPROX 8u /* the halo gives an approximation (RL) */
#define VOXA_OP_COUNT 16u      /* run reports a count (label: components) */

/** Everything one run sees: the arguments, the input region (with its halo)
 *  and the output region, where they lie in the whole volume, progress, and
 *  the result count. */
typedef struct voxa_op_ctx {
    const voxa_args *args;
    const voxa_array *in;         /* NULL for ops without an input (balls) */
    voxa_array *out;              /* same shape as `in` for SAME_SHAPE ops */
    int64_t origin[VOXA_MAXDIM];  /* index in the whole volume of the first
                                     voxel of `out` (and of `in`: runs see
                                     them aligned; voxa_op_run_region crops) */
    int64_t whole[VOXA_MAXDIM];   /* shape of the whole output volume */
    voxa_progress progress;
    int want_count;               /* the caller asked for the count (ops for
                                     which it costs a pass may skip it) */
    int64_t count;                /* out: VOXA_OP_COUNT ops; else -1 */
} voxa_op_ctx;

/** The GPU side of an op (the descriptor's `gpu` slot): every field may be
 *  NULL. How a kernel is added: docs/design.md and docs/gpu.md. */
typedef struct voxa_op_gpu {
    /* Run ctx on GPU backend b (opencl or cuda), same contract and result as
     * the descriptor's run. EUNSUPPORTED (message: why, e.g. "4-D input")
     * when these arguments have no GPU path: `auto` then runs the CPU. */
    voxa_status (*run)(voxa_op_ctx *ctx, voxa_backend b);
    /* Device memory of a run on an input of this dtype and shape (ops
     * without an input: the output's): *total bytes in all, *largest in one
     * buffer. */
    voxa_status (*device_bytes)(const voxa_args *a, voxa_dtype in_dtype, int ndim,
                                const int64_t *shape, int64_t *total, int64_t *largest);
    /* The formula in words for --dry-run and docs ("9 V + V/64"), or NULL. */
    const char *formula;
    /* Optional, GLOBAL ops that tile themselves (label, edt): the number of
     * device tiles under these limits (1: one run, 0: even one tile is too
     * large). With it the router calls run whatever the volume's size. */
    voxa_status (*tiles)(const voxa_args *a, voxa_dtype in_dtype, int ndim, const int64_t *shape,
                         int64_t limit, int64_t largest, int64_t *ntiles);
} voxa_op_gpu;

typedef struct voxa_op {
    const char *name;     /* registry key and recipe step: "dilate" */
    const char *group;    /* CLI command grouping several ops ("morph" for
                             `voxa morph dilate`), or NULL: `voxa <name>` */
    const char *cli_name; /* word after the group ("fill-holes"); NULL: name */
    const char *python;   /* the Python function ("binary_dilation") */
    const char *summary;  /* one line */
    const char *details;  /* more help text (lines end in '\n'), or NULL */
    int ninputs;          /* 0 (balls: the output is generated) or 1 */
    const voxa_param *params;
    int nparams;
    unsigned flags;       /* VOXA_OP_* */
    unsigned in_dtypes;   /* accepted input dtypes: bit (1u << voxa_dtype) */
    /* Check the arguments against the input (NULL for ninputs 0): EINVAL
     * with a message starting "<param>: " for a wrong value. May be NULL. */
    voxa_status (*check)(const voxa_args *a, const voxa_array *in);
    /* Output dtype and shape for the whole input (in NULL for ninputs 0). */
    voxa_status (*output)(const voxa_args *a, const voxa_array *in, voxa_dtype *dtype,
                          int *ndim, int64_t *shape);
    /* LOCAL ops: input voxels needed beyond an output region, per axis. */
    voxa_status (*halo)(const voxa_args *a, int ndim, int64_t *lo, int64_t *hi);
    /* Run on ctx->in into ctx->out (out: the dtype and shape from output). */
    voxa_status (*run)(voxa_op_ctx *ctx);
    /* Optional: name the algorithm the arguments select, into buf. */
    voxa_status (*describe)(const voxa_args *a, const voxa_array *in, char *buf, size_t n);
    const voxa_op_gpu *gpu; /* the GPU backends' entry, or NULL: cpu only */
    double scratch;       /* working bytes per voxel of a region beyond its
                             input and output (for planning memory) */
    /* Optional: the same for an output dtype, where it depends on it
     * (replaces scratch when set). */
    double (*scratch_for)(const voxa_args *a, voxa_dtype out_dtype);
} voxa_op;

/* ---- the registry ----------------------------------------------------------- */

/** Every op, sorted by name; *n receives the count. */
VOXA_API const voxa_op *const *voxa_ops(int *n);
/** The op called `name`, or NULL (no message). */
VOXA_API const voxa_op *voxa_op_find(const char *name);
/** Index of parameter `name` of `op` ('-' and '_' alike), or -1. */
VOXA_API int voxa_op_param(const voxa_op *op, const char *name);

/* ---- arguments ----------------------------------------------------------------- */

/** Start arguments for `op`: every parameter with a default takes it. */
VOXA_API voxa_status voxa_args_init(voxa_args *a, const voxa_op *op);
/** Release what the arguments own (strings, arrays read from files). */
VOXA_API void voxa_args_free(voxa_args *a);
/** Set parameter `name` from text: numbers, comma-separated lists, choice
 *  words, dtype names, strings; ARRAY and TABLE values are file paths (.npy,
 *  .tif, .csv...) read now. EINVAL naming the parameter and the text. */
VOXA_API voxa_status voxa_args_parse(voxa_args *a, const char *name, const char *text);
/** Typed setters (range and choice checked as voxa_args_parse does). */
VOXA_API voxa_status voxa_args_set_int(voxa_args *a, const char *name, int64_t v);
VOXA_API voxa_status voxa_args_set_float(voxa_args *a, const char *name, double v);
VOXA_API voxa_status voxa_args_set_list(voxa_args *a, const char *name, const double *v, int n);
/** ARRAY or TABLE: a borrowed view (TABLE: 2-D float64, C-contiguous, or 1-D
 *  for one column), optional column names (copied). */
VOXA_API voxa_status voxa_args_set_array(voxa_args *a, const char *name, const voxa_array *v,
                                         const char *const *names);
/** Run on backend b (cpu, opencl, cuda, auto) instead of the process
 *  default voxa_backend_selected(). EINVAL for an invalid value. */
VOXA_API voxa_status voxa_args_set_backend(voxa_args *a, voxa_backend b);
/** Unset a parameter (back to absent, even if it has a default). */
VOXA_API voxa_status voxa_args_clear(voxa_args *a, const char *name);
/** The value of parameter `name`, or NULL if the op has no such parameter. */
VOXA_API const voxa_value *voxa_args_get(const voxa_args *a, const char *name);

/* ---- generic calls ----------------------------------------------------------- */

/** Check required parameters, exclusive groups, per-axis list lengths and the
 *  input dtype, then the op's own check. EINVAL for a wrong argument. */
VOXA_API voxa_status voxa_op_check(const voxa_args *a, const voxa_array *in);
/** The output's dtype and shape for the whole input. */
VOXA_API voxa_status voxa_op_output(const voxa_args *a, const voxa_array *in, voxa_dtype *dtype,
                                    int *ndim, int64_t *shape);
/** Halo per axis (0 for ops without one; EUNSUPPORTED for GLOBAL ops). */
VOXA_API voxa_status voxa_op_halo(const voxa_args *a, int ndim, int64_t *lo, int64_t *hi);
/** Check, then run on the whole input into `out` (caller-allocated with the
 *  dtype and shape voxa_op_output gives; any strides). *count (may be NULL:
 *  then ops may skip computing it) receives the op's count, or -1.
 *  Backend: the args' (voxa_args_set_backend) or voxa_backend_selected().
 *  cpu runs `run`; opencl/cuda run the `gpu` slot and fail with
 *  EUNSUPPORTED naming what is missing (runtime, device, the op's GPU path);
 *  auto runs a usable GPU's path, else the CPU (never failing for that).
 *  A volume whose device memory exceeds the device (or VOXA_GPU_TILE_BYTES)
 *  runs in tiles with the op's halo (LOCAL ops). */
VOXA_API voxa_status voxa_op_run(const voxa_args *a, const voxa_array *in, voxa_array *out,
                                 const voxa_progress *progress, int64_t *count);
/** The backend a run of `a` would use now (auto and the default resolved;
 *  ops without a GPU path resolve auto to cpu). Errors as voxa_op_run's. */
VOXA_API voxa_status voxa_op_backend(const voxa_args *a, voxa_backend *out);
/** Device bytes of a GPU run of `a` on an input (or output, ops without
 *  input) of this dtype and shape: total and largest buffer; both 0 and
 *  *formula NULL for ops without a GPU path. *formula may be NULL. */
VOXA_API voxa_status voxa_op_device_bytes(const voxa_args *a, voxa_dtype in_dtype, int ndim,
                                          const int64_t *shape, int64_t *total,
                                          int64_t *largest, const char **formula);
/** Device tiles of a GPU run of these arguments on this input (--dry-run):
 *  *ntiles 1 = one run, N = N tiles, 0 = too large and not tiled; 0 with
 *  *limit 0 when the run would not use a GPU. *limit: the device bytes. */
VOXA_API voxa_status voxa_op_device_tiles(const voxa_args *a, voxa_dtype in_dtype, int ndim,
                                          const int64_t *shape, int64_t *ntiles, int64_t *limit);
/** Run on a region of a larger volume of shape `whole`: `in` is the input
 *  region grown by the halo where the volume allows, its first voxel at
 *  `in_origin`; `out` the output region, first voxel at `out_origin`, inside
 *  `in`'s box (SAME_SHAPE ops: the op runs on `in` and the part covering
 *  `out` is copied; ops without input: in NULL, in_origin ignored). The
 *  border rule of the op thus applies at the volume's edge only when the
 *  halo is whole. No check (the caller checked once). */
VOXA_API voxa_status voxa_op_run_region(const voxa_args *a, const voxa_array *in,
                                        const int64_t *in_origin, voxa_array *out,
                                        const int64_t *out_origin, const int64_t *whole,
                                        const voxa_progress *progress, int64_t *count);

#ifdef __cplusplus
}
#endif
#endif
