/* Descriptor of `balls` (voxa_balls): a mask or owner map of balls around a
 * table of points. No input: the output is generated, and a region run
 * shifts the points by the region's origin, so chunks agree with the whole.
 * Its halo is the reach of a ball (points that far outside a region still
 * paint into it), for executors that pick the points near a chunk. */
#include "op_args.h"
#include "voxa/backend.h"
#include "voxa/balls.h"

#include <math.h>
#include <stdlib.h>

enum { SHAPE, POINTS, RADIUS, RADII, SPACING, OWNER, NPARAMS };

static const voxa_param params[NPARAMS] = {
    [SHAPE] = {"shape", VOXA_PARAM_INTS, NULL, "output shape, one size per axis (Y,X or Z,Y,X)",
               NULL, 1, 1e15, VOXA_PARAM_REQUIRED, NULL, "Z,Y,X"},
    [POINTS] = {"points", VOXA_PARAM_TABLE, NULL,
                "points in voxel units: .csv with columns z, y, x (or axis0..; optional "
                "'radius'; others ignored) or an N x ndim .npy", NULL, 1, 0,
                VOXA_PARAM_REQUIRED, NULL, "CSV"},
    [RADIUS] = {"radius", VOXA_PARAM_FLOAT, NULL,
                "radius for every point (default: the table's radius column)", NULL, 0, 1e300, 0,
                NULL, "R"},
    [RADII] = {"radii", VOXA_PARAM_ARRAY, NULL, "one float64 radius per point", NULL, 1, 0,
               VOXA_PARAM_HIDDEN, NULL, NULL},
    [SPACING] = {"spacing", VOXA_PARAM_FLOATS, NULL, "voxel size per axis (anisotropic balls), "
                 "default 1", NULL, 1, 0, 0, NULL, "Z,Y,X"},
    [OWNER] = {"owner", VOXA_PARAM_FLAG, NULL,
               "write int32 owners (1-based row of the nearest point within reach, ties to the "
               "lower row) instead of a bool mask", NULL, 1, 0, 0, NULL, NULL},
};

static int ndim_of(const voxa_args *a) { return voxa__arg(a, SHAPE)->n; }

static voxa_status check(const voxa_args *a, const voxa_array *in) {
    int nd = ndim_of(a);
    const voxa_value *sp = voxa__arg(a, SPACING), *pts = voxa__arg(a, POINTS);
    VOXA_FAIL_IF(sp->set && sp->n != nd, VOXA_EINVAL,
                 "spacing: %d values, expected %d (one per axis of --shape)", sp->n, nd);
    const voxa_array *radii = voxa__arg_array(a, RADII);
    VOXA_FAIL_IF(radii && (radii->dtype != VOXA_F64 || radii->ndim != 1 ||
                           !voxa_array_is_c_contiguous(radii) ||
                           radii->shape[0] != pts->array.shape[0]),
                 VOXA_EINVAL, "radii: expected %lld contiguous float64 values (one per point)",
                 (long long)pts->array.shape[0]);
    VOXA_FAIL_IF(!voxa__arg_set(a, RADIUS) && !radii && voxa__table_column(pts, "radius") < 0,
                 VOXA_EINVAL, "radius: give --radius or a 'radius' column in %s",
                 pts->source ? pts->source : "the points table");
    return VOXA_OK;
}

static voxa_status output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt, int *nd,
                          int64_t *shape) {
    const voxa_value *s = voxa__arg(a, SHAPE);
    int64_t n = voxa__arg(a, POINTS)->array.shape[0];
    *dt = !voxa__arg_int(a, OWNER) ? VOXA_BOOL : n <= INT32_MAX ? VOXA_I32 : VOXA_I64;
    *nd = s->n;
    for (int d = 0; d < s->n; d++) shape[d] = s->iv[d];
    return VOXA_OK;
}

/* Largest radius the arguments give (for the halo). */
static double max_radius(const voxa_args *a) {
    if (voxa__arg_set(a, RADIUS)) return voxa__arg_float(a, RADIUS);
    const voxa_value *pts = voxa__arg(a, POINTS);
    const voxa_array *radii = voxa__arg_array(a, RADII);
    int col = voxa__table_column(pts, "radius");
    int64_t n = pts->array.shape[0], nc = pts->array.ndim == 2 ? pts->array.shape[1] : 1;
    double r = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = radii ? ((const double *)radii->data)[i]
                   : col >= 0 ? ((const double *)pts->array.data)[i * nc + col] : 0;
        if (v > r) r = v;
    }
    return r;
}

static voxa_status halo(const voxa_args *a, int ndim, int64_t *lo, int64_t *hi) {
    double sp[VOXA_MAXDIM];
    voxa_balls_params p = {.radius = max_radius(a), .spacing = voxa__arg_axes(a, SPACING, ndim, sp)};
    VOXA_CHECK(voxa_balls_halo(&p, ndim, lo));
    for (int d = 0; d < ndim; d++) hi[d] = lo[d];
    return VOXA_OK;
}

static voxa_status run_on(voxa_op_ctx *c, voxa_backend b) {
    static const char *zyx = "zyx";
    const voxa_args *a = c->args;
    const voxa_value *tab = voxa__arg(a, POINTS);
    int nd = c->out->ndim;
    double *pts = NULL, *radii = NULL, sp[VOXA_MAXDIM];
    int64_t n = 0;
    char row[48];
    voxa_status st = voxa__table_coords(a, POINTS, nd, &pts, &n);
    if (st != VOXA_OK) return st;
    VOXA_GOTO_IF(n == 0, VOXA_EINVAL, "points: %s: the points table is empty",
                 tab->source ? tab->source : "table");
    for (int64_t k = 0; k < n; k++)
        for (int d = 0; d < nd; d++) {
            VOXA_GOTO_IF(!isfinite(pts[k * nd + d]), VOXA_EINVAL,
                         "points: %s: %s: %c is not a finite number",
                         tab->source ? tab->source : "table", voxa__table_row(tab, k, row, sizeof row),
                         nd <= 3 && tab->names ? zyx[3 - nd + d] : '0' + d);
            pts[k * nd + d] -= (double)c->origin[d];
        }
    const voxa_array *given = voxa__arg_array(a, RADII);
    int col = voxa__table_column(tab, "radius");
    if (!voxa__arg_set(a, RADIUS) && !given && col >= 0) {
        int64_t nc = tab->array.ndim == 2 ? tab->array.shape[1] : 1;
        radii = malloc((size_t)n * sizeof *radii);
        VOXA_GOTO_IF(!radii, VOXA_ENOMEM, "points: out of memory for %lld radii", (long long)n);
        for (int64_t k = 0; k < n; k++) radii[k] = ((const double *)tab->array.data)[k * nc + col];
    }
    voxa_balls_params p = {.points = pts, .npoints = n, .radius = voxa__arg_float(a, RADIUS),
                           .radii = given ? given->data : radii,
                           .spacing = voxa__arg_axes(a, SPACING, nd, sp),
                           .owner = (int)voxa__arg_int(a, OWNER), .progress = c->progress};
    st = voxa_balls_on(b, &p, c->out);
    if (st == VOXA_OK && c->want_count) c->count = voxa__count_nonzero(c->out);
done:
    free(pts);
    free(radii);
    return st;
}

static voxa_status run(voxa_op_ctx *c) { return run_on(c, VOXA_BACKEND_CPU); }

/* Device memory (balls_gpu.c): the output (owner map: int64 plus a 64-bit
 * claim per voxel) and 72 bytes per point. */
static voxa_status device_bytes(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                                int64_t *total, int64_t *largest) {
    int64_t v = 1, n = voxa__arg(a, POINTS)->set ? voxa__arg(a, POINTS)->array.shape[0] : 0;
    for (int d = 0; d < nd; d++) v *= shape[d];
    int owner = (int)voxa__arg_int(a, OWNER);
    *total = (owner ? 16 * v : v) + 72 * n;
    *largest = owner ? 8 * v : v;
    return VOXA_OK;
}

static const voxa_op_gpu gpu = {run_on, device_bytes,
                                "V + 72 per point (owner map: 16 V + 72 per point)", NULL};

const voxa_op voxa__op_balls = {
    .name = "balls",
    .python = "balls",
    .summary = "Paint balls of radius r around points from a table (exact W1 rule).",
    .details = "Voxel v is inside iff sum_d ((v_d - p_d) * s_d)^2 <= r^2 in double precision.\n"
               "Reports the number of voxels inside.\n",
    .ninputs = 0,
    .params = params,
    .nparams = NPARAMS,
    .flags = VOXA_OP_LOCAL | VOXA_OP_COUNT,
    .check = check,
    .output = output,
    .halo = halo,
    .run = run,
    .gpu = &gpu,
};
