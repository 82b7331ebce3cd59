/* Descriptor of `fill_holes` (voxa_fill_holes): scipy.ndimage.binary_fill_holes.
 * Global: a hole may span the whole volume, so no halo makes a region exact;
 * a chunked run needs the whole volume (or a merge of the background's
 * components that touch the volume's edge, as labelling merges). */
#include "op_args.h"
#include "voxa/morph.h"

enum { CONNECTIVITY, STRUCTURE, ORIGIN, NPARAMS };

static const voxa_param params[NPARAMS] = {
    [CONNECTIVITY] = {"connectivity", VOXA_PARAM_INT, "1",
                      "1..ndim: a background step changes at most C coordinates by 1 (1 = "
                      "faces, ndim = the full 3^ndim box)", NULL, 1, VOXA_MAXDIM, 0,
                      "connectivity", "C"},
    [STRUCTURE] = {"structure", VOXA_PARAM_ARRAY, NULL,
                   "array of the input's rank, non-zero = a step (any size; scipy's "
                   "structure), instead of --connectivity", NULL, 1, 0, 0, "connectivity",
                   "S.npy"},
    [ORIGIN] = {"origin", VOXA_PARAM_INTS, "0",
                "shift of the structure's centre per axis (scipy's origin), one value for all "
                "axes or one per axis, in -(S/2)..(S-1)/2 for a structure of size S", NULL,
                -1e9, 1e9, VOXA_PARAM_PER_AXIS, NULL, "O"},
};

static voxa_status origin_of(const voxa_args *a, int ndim, int64_t *o) {
    double buf[VOXA_MAXDIM];
    const double *v = voxa__arg_axes(a, ORIGIN, ndim, buf);
    for (int d = 0; d < ndim; d++) o[d] = v ? (int64_t)v[d] : 0;
    return VOXA_OK;
}

static voxa_status check(const voxa_args *a, const voxa_array *in) {
    VOXA_FAIL_IF(in->ndim < 1, VOXA_EINVAL, "input: 0-D array (fill holes needs 1..%d axes)",
                 VOXA_MAXDIM);
    int64_t c = voxa__arg_int(a, CONNECTIVITY);
    const voxa_array *s = voxa__arg_array(a, STRUCTURE);
    if (!s)
        VOXA_FAIL_IF(c > in->ndim, VOXA_EINVAL, "connectivity: %lld is out of range 1..%d for "
                     "the %d-D input", (long long)c, in->ndim, in->ndim);
    else {
        VOXA_FAIL_IF(s->ndim != in->ndim, VOXA_EINVAL, "structure: %d dimensions, the input has "
                     "%d (they must have equal rank)", s->ndim, in->ndim);
        VOXA_FAIL_IF(voxa_array_size(s) < 1, VOXA_EINVAL, "structure: must not be empty");
    }
    int64_t o[VOXA_MAXDIM];
    origin_of(a, in->ndim, o);
    for (int d = 0; d < in->ndim; d++) {
        int64_t n = s ? s->shape[d] : 3, lo = -(n / 2), hi = (n - 1) / 2;
        VOXA_FAIL_IF(o[d] < lo || o[d] > hi, VOXA_EINVAL, "origin: %lld on axis %d is out of "
                     "range %lld..%lld for a structure of size %lld", (long long)o[d], d,
                     (long long)lo, (long long)hi, (long long)n);
    }
    return VOXA_OK;
}

static voxa_status output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt, int *nd,
                          int64_t *shape) {
    (void)a;
    *dt = VOXA_BOOL;
    voxa__output_same_shape(in, nd, shape);
    return VOXA_OK;
}

static voxa_status run(voxa_op_ctx *c) {
    int64_t o[VOXA_MAXDIM];
    origin_of(c->args, c->in->ndim, o);
    return voxa_fill_holes(c->in, voxa__arg_array(c->args, STRUCTURE),
                           (int)voxa__arg_int(c->args, CONNECTIVITY), o, c->out);
}

const voxa_op voxa__op_fill_holes = {
    .name = "fill_holes",
    .group = "morph",
    .cli_name = "fill-holes",
    .python = "binary_fill_holes",
    .summary = "Fill the holes of a binary image (as scipy.ndimage.binary_fill_holes).",
    .details = "A hole is background that no chain of structure steps through background\n"
               "connects to the volume's edge. Output: bool, foreground and holes 1.\n"
               "Linear time (one breadth-first search from the edge), any structure.\n",
    .ninputs = 1,
    .params = params,
    .nparams = NPARAMS,
    .flags = VOXA_OP_GLOBAL | VOXA_OP_SAME_SHAPE,
    .check = check,
    .output = output,
    .run = run,
    .scratch = 1, /* padded states; plus 16 B per pending run of background */
};
