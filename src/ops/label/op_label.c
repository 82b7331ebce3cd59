/* Descriptor of `label` (voxa_label): connected components numbered as
 * scipy.ndimage.label. Global: a chunked run labels chunks and merges them
 * across faces instead of reading a halo. */
#include "op_args.h"
#include "voxa/label.h"
#include "voxa/backend.h"
#include "label_gpu.h"
#include "label_internal.h"

#include <stdlib.h>

enum { CONNECTIVITY, STRUCTURE, DTYPE, ZEROED, NPARAMS };

static const voxa_param params[NPARAMS] = {
    [CONNECTIVITY] = {"connectivity", VOXA_PARAM_INT, "1",
                      "1..ndim: neighbours differ in at most C coordinates (1 = faces, ndim = the "
                      "full 3^ndim box)", NULL, 1, VOXA_MAXDIM, 0, "connectivity", "C"},
    [STRUCTURE] = {"structure", VOXA_PARAM_ARRAY, NULL,
                   "3x..x3 array, non-zero = connected (centrosymmetric), instead of "
                   "--connectivity", NULL, 1, 0, 0, "connectivity", "S.npy"},
    [DTYPE] = {"dtype", VOXA_PARAM_DTYPE, "int32", "label type: int32, uint16, uint32 or int64",
               "int32|uint16|uint32|int64", 1, 0, 0, NULL, "T"},
    [ZEROED] = {"zeroed", VOXA_PARAM_FLAG, NULL, "the output already holds zeros (a fresh "
                "calloc'ed array): only labels are written", NULL, 1, 0, VOXA_PARAM_HIDDEN,
                NULL, NULL},
};

static voxa_status check(const voxa_args *a, const voxa_array *in) {
    int64_t c = voxa__arg_int(a, CONNECTIVITY);
    if (!voxa__arg_set(a, STRUCTURE) && in->ndim >= 1)
        VOXA_FAIL_IF(c > in->ndim, VOXA_EINVAL, "connectivity: %lld is out of range 1..%d for "
                     "the %d-D input", (long long)c, in->ndim, in->ndim);
    const voxa_array *s = voxa__arg_array(a, STRUCTURE);
    if (s) {
        VOXA_FAIL_IF(s->ndim != in->ndim, VOXA_EINVAL, "structure: %d dimensions, the input has "
                     "%d (they must have equal rank)", s->ndim, in->ndim);
        for (int d = 0; d < s->ndim; d++)
            VOXA_FAIL_IF(s->shape[d] != 3, VOXA_EINVAL, "structure: every axis must have size 3");
    }
    return VOXA_OK;
}

static voxa_status output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt, int *nd,
                          int64_t *shape) {
    *dt = (voxa_dtype)voxa__arg_int(a, DTYPE);
    voxa__output_same_shape(in, nd, shape);
    return VOXA_OK;
}

static voxa_status run_on(voxa_op_ctx *c, voxa_backend b) {
    const voxa_array *s = voxa__arg_array(c->args, STRUCTURE);
    unsigned char *bytes = NULL;
    if (s) {
        int64_t n = voxa_array_size(s), idx[VOXA_MAXDIM] = {0};
        bytes = malloc((size_t)n);
        VOXA_FAIL_IF(!bytes, VOXA_ENOMEM, "structure: out of memory");
        for (int64_t i = 0; i < n; i++) {
            bytes[i] = voxa_array_get(s, idx) != 0;
            for (int d = s->ndim - 1; d >= 0; d--) {
                if (++idx[d] < s->shape[d]) break;
                idx[d] = 0;
            }
        }
    }
    /* (bindings only; trusted for a whole-volume call, never for a region
     * of a chunked run, whose buffers are scratch) */
    int whole = 1;
    for (int d = 0; d < c->out->ndim; d++)
        whole = whole && c->origin[d] == 0 && c->whole[d] == c->out->shape[d];
    voxa__label_zeroed = whole && voxa__arg_set(c->args, ZEROED) &&
                         voxa__arg_int(c->args, ZEROED);
    voxa_status st = voxa_label_on(b, c->in, bytes, (int)voxa__arg_int(c->args, CONNECTIVITY), c->out,
                                &c->count);
    voxa__label_zeroed = 0;
    free(bytes);
    return st;
}

static voxa_status run(voxa_op_ctx *c) { return run_on(c, VOXA_BACKEND_CPU); }

/* Device memory (label_gpu.c): mask + parents, then parents + output, and
 * one count per 512 voxels with their scan's levels. */
static voxa_status device_bytes(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                                int64_t *total, int64_t *largest) {
    int64_t v = 1, es = (int64_t)voxa_dtype_size((voxa_dtype)voxa__arg_int(a, DTYPE));
    for (int d = 0; d < nd; d++) v *= shape[d];
    *total = (es > 1 ? 8 * v + es * v : 9 * v) + voxa__label_gpu_count_bytes(v);
    *largest = 8 * v;
    return VOXA_OK;
}

/* Larger than the device: tiles of the padded 3-D volume (label_gpu_tiled.c),
 * 24 v + about v/64 + 64 bytes each. */
static voxa_status tiles(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                         int64_t limit, int64_t largest, int64_t *ntiles) {
    (void)dt;
    int64_t sh[3] = {1, 1, 1}, tile[3];
    *ntiles = 0;
    if (nd < 1 || nd > 3) return VOXA_OK;
    for (int d = 0; d < nd; d++) sh[3 - nd + d] = shape[d];
    *ntiles = voxa__label_gpu_tiling(sh, voxa_dtype_size((voxa_dtype)voxa__arg_int(a, DTYPE)),
                                     limit, largest, tile);
    return VOXA_OK;
}

static const voxa_op_gpu gpu = {run_on, device_bytes,
                                "9 V, then 8 V + es V; + about V/64 (tiles: 24 v + v/64 each)", tiles};

const voxa_op voxa__op_label = {
    .name = "label",
    .python = "label",
    .summary = "Label connected components of the non-zero voxels (as scipy.ndimage.label).",
    .details = "Prints the number of components. Labels are 1..n in raster (C) order of\n"
               "each component's first voxel, 0 is background. Exit 0 ok, 1 failure\n"
               "(e.g. more components than --dtype can hold), 2 usage error.\n",
    .ninputs = 1,
    .params = params,
    .nparams = NPARAMS,
    .flags = VOXA_OP_GLOBAL | VOXA_OP_SAME_SHAPE | VOXA_OP_COUNT,
    .check = check,
    .output = output,
    .run = run,
    .gpu = &gpu,
    .scratch = 8,
};
