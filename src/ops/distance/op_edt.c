/* Descriptor of `edt` (voxa_edt, voxa_edt_indices, voxa_edt_cdt,
 * voxa_edt_chamfer): exact
 * Euclidean, city-block or chessboard distances to the background. Global:
 * a distance may come from anywhere in the volume. */
#include "op_args.h"
#include "voxa/edt.h"
#include "edt_gpu.h"

enum { SPACING, METRIC, SQUARED, DTYPE, INDICES, METRIC_FLAGS, NPARAMS };
enum { EUCLIDEAN, CITYBLOCK, CHESSBOARD };

static const voxa_param params[NPARAMS] = {
    [SPACING] = {"spacing", VOXA_PARAM_FLOATS, NULL, "voxel size per axis (euclidean only), "
                 "default 1", NULL, 1, 0, VOXA_PARAM_PER_AXIS, NULL, "Z,Y,X"},
    [METRIC] = {"metric", VOXA_PARAM_CHOICE, "euclidean",
                "euclidean (= scipy distance_transform_edt), cityblock or chessboard (= scipy "
                "distance_transform_cdt, int32, -1 without background)",
                "euclidean|cityblock|chessboard|taxicab=cityblock", 1, 0, 0, NULL, "M"},
    [SQUARED] = {"squared", VOXA_PARAM_FLAG, NULL, "squared Euclidean distances", NULL, 1, 0, 0,
                 NULL, NULL},
    [DTYPE] = {"dtype", VOXA_PARAM_DTYPE, NULL, "euclidean output type: float64 (default), "
               "float32, or uint32 (squared, unit spacing)", "float64|float32|uint32", 1, 0, 0,
               NULL, "T"},
    [INDICES] = {"indices", VOXA_PARAM_ARRAY, NULL, "int32/int64 array (ndim, *shape) receiving "
                 "the index of a nearest background voxel (euclidean)", NULL, 1, 0,
                 VOXA_PARAM_HIDDEN | VOXA_PARAM_OUTPUT, NULL, NULL},
    [METRIC_FLAGS] = {"metric_flags", VOXA_PARAM_ARRAY, NULL, "(3,)*ndim bool/uint8 array: "
                      "scipy distance_transform_cdt's metric array (chamfer passes, int32)",
                      NULL, 1, 0, VOXA_PARAM_HIDDEN, NULL, NULL},
};

/* A custom cdt metric: (3,)*ndim, one byte a flag, C-contiguous. */
static voxa_status check_flags(const voxa_array *m, int ndim) {
    int ok = m->ndim == ndim && (m->dtype == VOXA_U8 || m->dtype == VOXA_BOOL) &&
             voxa_array_is_c_contiguous(m);
    for (int d = 0; ok && d < ndim; d++) ok = m->shape[d] == 3;
    VOXA_FAIL_IF(!ok, VOXA_EINVAL, "metric_flags: expected a C-contiguous uint8 array of shape "
                 "(3,)*%d", ndim);
    return VOXA_OK;
}

static voxa_status check(const voxa_args *a, const voxa_array *in) {
    if (voxa__arg_set(a, METRIC_FLAGS)) {
        VOXA_FAIL_IF(voxa__arg_set(a, SPACING) || voxa__arg_int(a, SQUARED) ||
                         voxa__arg_set(a, DTYPE) || voxa__arg_int(a, METRIC) != EUCLIDEAN,
                     VOXA_EINVAL, "metric_flags: --spacing, --squared, --dtype and --metric do "
                     "not apply to a metric array");
        return check_flags(voxa__arg_array(a, METRIC_FLAGS), in->ndim);
    }
    if (voxa__arg_int(a, METRIC) != EUCLIDEAN)
        VOXA_FAIL_IF(voxa__arg_set(a, SPACING) || voxa__arg_int(a, SQUARED) ||
                         voxa__arg_set(a, DTYPE) || voxa__arg_set(a, INDICES),
                     VOXA_EINVAL, "metric: --spacing, --squared and --dtype apply to --metric "
                     "euclidean only");
    return VOXA_OK;
}

static voxa_status output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt, int *nd,
                          int64_t *shape) {
    *dt = voxa__arg_int(a, METRIC) != EUCLIDEAN || voxa__arg_set(a, METRIC_FLAGS) ? VOXA_I32
          : voxa__arg_set(a, DTYPE)             ? (voxa_dtype)voxa__arg_int(a, DTYPE)
                                                : VOXA_F64;
    voxa__output_same_shape(in, nd, shape);
    return VOXA_OK;
}

static voxa_status run(voxa_op_ctx *c) {
    const voxa_args *a = c->args;
    int64_t m = voxa__arg_int(a, METRIC);
    if (voxa__arg_set(a, METRIC_FLAGS))
        return voxa_edt_chamfer(c->in, c->out, voxa__arg_array(a, METRIC_FLAGS)->data,
                                voxa__arg_set(a, INDICES)
                                    ? (voxa_array *)voxa__arg_array(a, INDICES) : NULL);
    if (m != EUCLIDEAN)
        return voxa_edt_cdt(c->in, c->out, m == CITYBLOCK ? VOXA_EDT_TAXICAB : VOXA_EDT_CHESSBOARD);
    double sp[VOXA_MAXDIM];
    voxa_edt_params p = {voxa__arg_axes(a, SPACING, c->in->ndim, sp),
                         (int)voxa__arg_int(a, SQUARED), c->progress};
    if (voxa__arg_set(a, INDICES))
        return voxa_edt_indices(c->in, c->out, (voxa_array *)voxa__arg_array(a, INDICES), &p);
    return voxa_edt(c->in, c->out, &p);
}

/* The GPU path: Euclidean distances without indices (edt_gpu.c). */
static voxa_status run_gpu(voxa_op_ctx *c, voxa_backend b) {
    const voxa_args *a = c->args;
    VOXA_FAIL_IF(voxa__arg_int(a, METRIC) != EUCLIDEAN, VOXA_EUNSUPPORTED,
                 "metric: the GPU path computes Euclidean distances only (cityblock and "
                 "chessboard: cpu backend)");
    VOXA_FAIL_IF(voxa__arg_set(a, INDICES), VOXA_EUNSUPPORTED,
                 "indices: the GPU path gives distances only (indices: cpu backend)");
    double sp[VOXA_MAXDIM];
    voxa_edt_params p = {voxa__arg_axes(a, SPACING, c->in->ndim, sp),
                         (int)voxa__arg_int(a, SQUARED), c->progress};
    return voxa__edt_gpu(b, c->in, c->out, &p);
}

static voxa_status device_bytes(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                                int64_t *total, int64_t *largest) {
    voxa_dtype odt;
    int ond;
    int64_t oshape[VOXA_MAXDIM];
    voxa_array probe = {.dtype = dt, .ndim = nd};
    VOXA_CHECK(output(a, &probe, &odt, &ond, oshape));
    voxa__edt_gpu_bytes(nd, shape, odt, total, largest);
    return VOXA_OK;
}

/* Larger than the device: each pass by tiles whole along its axis
 * (edt_gpu_tiled.c); the count is over all passes. */
static voxa_status tiles(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                         int64_t limit, int64_t largest, int64_t *ntiles) {
    voxa_dtype odt;
    int ond;
    int64_t oshape[VOXA_MAXDIM];
    voxa_array probe = {.dtype = dt, .ndim = nd};
    VOXA_CHECK(output(a, &probe, &odt, &ond, oshape));
    *ntiles = voxa__edt_gpu_tiles(nd, shape, odt, limit, largest);
    return VOXA_OK;
}

static const voxa_op_gpu gpu = {run_gpu, device_bytes,
                                "9 V + line scratch (<= 256 MiB); 12 V for float32/uint32 "
                                "(tiles: 9 v per pass + a line)", tiles};

const voxa_op voxa__op_edt = {
    .name = "edt",
    .python = "distance_transform_edt",
    .summary = "Distance of every foreground (non-zero) voxel to the nearest background voxel.",
    .ninputs = 1,
    .params = params,
    .nparams = NPARAMS,
    .flags = VOXA_OP_GLOBAL | VOXA_OP_SAME_SHAPE,
    .check = check,
    .output = output,
    .run = run,
    .gpu = &gpu,
    .scratch = 8,
};
