/* Descriptors of dilate, erode, open and close (voxa_morph): one parameter
 * table, one element builder, four ops. Local: an output region needs the
 * element's reach times the iterations (twice for open/close) around it. */
#include "op_args.h"
#include "voxa/morph.h"
#include "morph_gpu.h"

#include <string.h>

enum { BALL, DIAMOND, BOX, CONNECTIVITY, FOOTPRINT, ITERATIONS, BORDER_VALUE, SPACING, NPARAMS };

static const voxa_param params[NPARAMS] = {
    [BALL] = {"ball", VOXA_PARAM_FLOAT, NULL,
              "Euclidean ball sum((o*spacing)^2) <= R^2 (distance transform)", NULL, 1, 0,
              VOXA_PARAM_REQUIRED, "element", "R"},
    [DIAMOND] = {"diamond", VOXA_PARAM_FLOAT, NULL, "sum(|o|) <= R (city-block distance)", NULL,
                 1, 0, VOXA_PARAM_REQUIRED, "element", "R"},
    [BOX] = {"box", VOXA_PARAM_INTS, NULL,
             "box of a x b x c voxels (one value: the same on every axis)", NULL, 1, 1e15,
             VOXA_PARAM_PER_AXIS | VOXA_PARAM_REQUIRED, "element", "A,B,C"},
    [CONNECTIVITY] = {"connectivity", VOXA_PARAM_INT, NULL,
                      "scipy generate_binary_structure(ndim, C)", NULL, 1, 64,
                      VOXA_PARAM_REQUIRED, "element", "C"},
    [FOOTPRINT] = {"footprint", VOXA_PARAM_ARRAY, NULL,
                   "any 0/1 array, centre at shape//2 (scipy's origin 0); balls, diamonds and "
                   "boxes given this way are recognised", NULL, 1, 0, VOXA_PARAM_REQUIRED,
                   "element", "F.npy"},
    [ITERATIONS] = {"iterations", VOXA_PARAM_INT, "1",
                    "repeat K times; K < 1: until nothing changes", NULL, -1000000, 1000000, 0,
                    NULL, "K"},
    [BORDER_VALUE] = {"border_value", VOXA_PARAM_INT, "0",
                      "value of voxels outside the volume", NULL, 0, 1, 0, NULL, "V"},
    [SPACING] = {"spacing", VOXA_PARAM_FLOATS, NULL,
                 "voxel size per axis, for --ball (or a --footprint ball); default 1", NULL, 1, 0,
                 VOXA_PARAM_PER_AXIS, NULL, "Z,Y,X"},
};

/* Exactly one element parameter is given (voxa_op_check made sure). */
static void element(const voxa_args *a, int ndim, voxa_morph_element *se, double *sp) {
    memset(se, 0, sizeof *se);
    se->spacing = voxa__arg_axes(a, SPACING, ndim, sp);
    if (voxa__arg_set(a, BALL)) {
        se->kind = VOXA_SE_BALL;
        se->radius = voxa__arg_float(a, BALL);
    } else if (voxa__arg_set(a, DIAMOND)) {
        se->kind = VOXA_SE_DIAMOND;
        se->radius = voxa__arg_float(a, DIAMOND);
    } else if (voxa__arg_set(a, BOX)) {
        se->kind = VOXA_SE_BOX;
        const voxa_value *b = voxa__arg(a, BOX);
        for (int d = 0; d < ndim; d++) se->box[d] = b->iv[b->n == 1 ? 0 : d];
    } else if (voxa__arg_set(a, CONNECTIVITY)) {
        se->kind = VOXA_SE_CONNECTIVITY;
        se->connectivity = (int)voxa__arg_int(a, CONNECTIVITY);
    } else {
        se->kind = VOXA_SE_FOOTPRINT;
        se->footprint = voxa__arg_array(a, FOOTPRINT);
    }
}

static voxa_status check(const voxa_args *a, const voxa_array *in) {
    VOXA_FAIL_IF(voxa__arg_set(a, SPACING) && !voxa__arg_set(a, BALL) &&
                     !voxa__arg_set(a, FOOTPRINT),
                 VOXA_EINVAL, "spacing: applies to --ball (or --footprint) only");
    return VOXA_OK;
}

static voxa_status output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt, int *nd,
                          int64_t *shape) {
    *dt = VOXA_BOOL;
    voxa__output_same_shape(in, nd, shape);
    return VOXA_OK;
}

static voxa_morph_op kind_of(const voxa_op *op);

static voxa_status halo(const voxa_args *a, int ndim, int64_t *lo, int64_t *hi) {
    voxa_morph_element se;
    double sp[VOXA_MAXDIM];
    element(a, ndim, &se, sp);
    int64_t it = voxa__arg_int(a, ITERATIONS);
    VOXA_FAIL_IF(it < 1, VOXA_EUNSUPPORTED,
                 "iterations: %lld (until nothing changes) has no bounded halo", (long long)it);
    VOXA_CHECK(voxa_morph_halo(&se, ndim, kind_of(a->op), (int)it, lo));
    for (int d = 0; d < ndim; d++) hi[d] = lo[d];
    return VOXA_OK;
}

static voxa_status run_on(voxa_op_ctx *c, voxa_backend b) {
    voxa_morph_params p;
    double sp[VOXA_MAXDIM];
    memset(&p, 0, sizeof p);
    element(c->args, c->in->ndim, &p.se, sp);
    p.iterations = (int)voxa__arg_int(c->args, ITERATIONS);
    p.border_value = (int)voxa__arg_int(c->args, BORDER_VALUE);
    p.progress = c->progress;
    if (b == VOXA_BACKEND_CPU) return voxa_morph(kind_of(c->args->op), c->in, c->out, &p);
    return voxa__morph_gpu(b, kind_of(c->args->op), c->in, c->out, &p);
}

static voxa_status run(voxa_op_ctx *c) { return run_on(c, VOXA_BACKEND_CPU); }

/* Device memory of the GPU path (morph_gpu.c). */
static voxa_status device_bytes(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                                int64_t *total, int64_t *largest) {
    voxa_morph_element se;
    double sp[VOXA_MAXDIM];
    element(a, nd, &se, sp);
    return voxa__morph_gpu_bytes(&se, nd, shape, total, largest);
}

static const voxa_op_gpu gpu = {run_on, device_bytes,
                                "2 V, + 8 V + line scratch (<= 256 MiB) for balls, + 4 V for "
                                "diamonds", NULL};

static voxa_status describe(const voxa_args *a, const voxa_array *in, char *buf, size_t n) {
    voxa_morph_element se;
    double sp[VOXA_MAXDIM];
    element(a, in->ndim, &se, sp);
    return voxa_morph_describe(&se, in->ndim, (int)voxa__arg_int(a, ITERATIONS), buf, n);
}

/* What the four ops share; each adds its name, Python name and summary. */
#define MORPH_FIELDS                                                                   \
    .group = "morph", .ninputs = 1, .params = params, .nparams = NPARAMS,               \
    .details = "Exactly one element option. Output: bool, the input's shape.\n",       \
    .flags = VOXA_OP_LOCAL | VOXA_OP_SAME_SHAPE, .check = check, .output = output,      \
    .halo = halo, .run = run, .describe = describe, .gpu = &gpu, .scratch = 4

const voxa_op voxa__op_dilate = {.name = "dilate", .python = "binary_dilation", MORPH_FIELDS,
    .summary = "Binary dilation, equal to scipy.ndimage.binary_dilation."};
const voxa_op voxa__op_erode = {.name = "erode", .python = "binary_erosion", MORPH_FIELDS,
    .summary = "Binary erosion, equal to scipy.ndimage.binary_erosion."};
const voxa_op voxa__op_open = {.name = "open", .python = "binary_opening", MORPH_FIELDS,
    .summary = "Binary opening, equal to scipy.ndimage.binary_opening."};
const voxa_op voxa__op_close = {.name = "close", .python = "binary_closing", MORPH_FIELDS,
    .summary = "Binary closing, equal to scipy.ndimage.binary_closing."};

static voxa_morph_op kind_of(const voxa_op *op) {
    return op == &voxa__op_erode ? VOXA_MORPH_ERODE
           : op == &voxa__op_open ? VOXA_MORPH_OPEN
           : op == &voxa__op_close ? VOXA_MORPH_CLOSE
                                   : VOXA_MORPH_DILATE;
}
