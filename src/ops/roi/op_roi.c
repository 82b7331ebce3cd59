/* Descriptors of `roi` (voxa_roi_extract) and `paste` (voxa_roi_paste):
 * fixed-shape patches at the rows of a coordinate table. Both are global: a
 * patch may come from, or go to, anywhere in the volume. */
#include "op_args.h"
#include "voxa/backend.h"
#include "voxa/roi.h"

#include <stdio.h>
#include <stdlib.h>

/* Coordinates of table parameter `i` as int64 corners (or centres), k columns
 * (0: as many as the table holds). *k and *n receive the counts. */
static voxa_status load_coords(const voxa_args *a, int i, int centered, int *k, int64_t **out,
                               int64_t *n) {
    const voxa_value *t = voxa__arg(a, i);
    if (*k == 0) *k = voxa__table_ncoords(t);
    double *v = NULL;
    *out = NULL;
    VOXA_CHECK(voxa__table_coords(a, i, *k, &v, n));
    voxa_status st = VOXA_OK;
    *out = malloc((size_t)(*n * *k + 1) * sizeof **out);
    if (!*out) st = voxa__error(VOXA_ENOMEM, "%s: out of memory", a->op->params[i].name);
    else if ((st = voxa_roi_coords_from_doubles(v, *n, *k, centered, *out)) != VOXA_OK)
        st = voxa__error(st, "%s: %s", t->source ? t->source : a->op->params[i].name,
                         voxa_last_error());
    free(v);
    if (st != VOXA_OK) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* The table given: corners or centres (voxa_op_check made sure of one). */
static int coords_param(const voxa_args *a, int corners, int *centered) {
    *centered = !voxa__arg_set(a, corners);
    return corners + *centered;
}

/* ---- roi ------------------------------------------------------------------------- */

enum { R_CORNERS, R_CENTRES, R_SIZE, R_MODE, R_VALUE, R_NPARAMS };

static const voxa_param roi_params[R_NPARAMS] = {
    [R_CORNERS] = {"corners", VOXA_PARAM_TABLE, NULL,
                   "patch corners: .npy (N x k numbers) or .csv with a header: columns "
                   "axis0..axis{k-1}, or z,y,x / y,x (other columns ignored); integers",
                   NULL, 1, 0, VOXA_PARAM_REQUIRED, "coords", "COORDS"},
    [R_CENTRES] = {"centres", VOXA_PARAM_TABLE, NULL,
                   "patch centres, as --corners; rounded half to even, corner = centre - "
                   "size // 2", NULL, 1, 0, VOXA_PARAM_REQUIRED, "coords", "COORDS", "centers"},
    [R_SIZE] = {"size", VOXA_PARAM_INTS, NULL,
                "patch extents of the first k axes; the other axes are taken whole", NULL, 0,
                1e15, VOXA_PARAM_REQUIRED, NULL, "A,B,..."},
    [R_MODE] = {"mode", VOXA_PARAM_CHOICE, "error",
                "patches reaching outside: error (names the first such row), clip (shift "
                "inside), or pad like numpy.pad: constant (--value), nearest (pad's 'edge'), "
                "reflect (no edge repeat)", "error|clip|constant|nearest|reflect", 1, 0, 0, NULL,
                "MODE"},
    [R_VALUE] = {"value", VOXA_PARAM_FLOAT, "0", "the constant of --mode constant", NULL, 1, 0, 0,
                 NULL, "V"},
};

static voxa_status roi_check(const voxa_args *a, const voxa_array *in) {
    int k = voxa__arg(a, R_SIZE)->n;
    VOXA_FAIL_IF(k > in->ndim, VOXA_EINVAL, "size: %d entries but the input has %d dimensions",
                 k, in->ndim);
    return VOXA_OK;
}

static voxa_status roi_output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt, int *nd,
                              int64_t *shape) {
    const voxa_value *size = voxa__arg(a, R_SIZE);
    int centered, i = coords_param(a, R_CORNERS, &centered);
    VOXA_FAIL_IF(in->ndim + 1 > VOXA_MAXDIM, VOXA_EINVAL, "input: %d dimensions: the result "
                 "would have more than %d", in->ndim, VOXA_MAXDIM);
    *dt = in->dtype;
    *nd = in->ndim + 1;
    shape[0] = voxa__arg(a, i)->array.shape[0];
    for (int d = 0; d < in->ndim; d++) shape[d + 1] = d < size->n ? size->iv[d] : in->shape[d];
    return VOXA_OK;
}

static voxa_status roi_run_on(voxa_op_ctx *c, voxa_backend b) {
    const voxa_args *a = c->args;
    voxa_roi_params p = {0};
    int centered, i = coords_param(a, R_CORNERS, &centered);
    int64_t *coords;
    p.k = voxa__arg(a, R_SIZE)->n;
    VOXA_CHECK(load_coords(a, i, centered, &p.k, &coords, &p.n));
    p.coords = coords;
    p.size = voxa__arg(a, R_SIZE)->iv;
    p.centered = centered;
    p.mode = (voxa_roi_mode)voxa__arg_int(a, R_MODE);
    p.cval = voxa__arg_float(a, R_VALUE);
    voxa_status st = voxa_roi_extract_on(b, c->in, &p, c->out);
    free(coords);
    return st;
}

static voxa_status roi_run(voxa_op_ctx *c) { return roi_run_on(c, VOXA_BACKEND_CPU); }

/* Rows of the coordinate table and its coordinate columns. */
static void table_rows(const voxa_args *a, int param, int64_t *n, int64_t *k) {
    const voxa_value *v = voxa__arg(a, param);
    *n = v->set ? v->array.shape[0] : 0;
    *k = v->set && v->array.ndim == 2 ? v->array.shape[1] : 1;
}

/* Device memory (roi_gpu.c): the input, the patches, the int64 coordinates. */
static voxa_status roi_device_bytes(const voxa_args *a, voxa_dtype dt, int nd,
                                    const int64_t *shape, int64_t *total, int64_t *largest) {
    int centered, i = coords_param(a, R_CORNERS, &centered);
    const voxa_value *size = voxa__arg(a, R_SIZE);
    int64_t n, k, es = (int64_t)voxa_dtype_size(dt), vin = es, patch = es;
    table_rows(a, i, &n, &k);
    for (int d = 0; d < nd; d++) {
        vin *= shape[d];
        patch *= d < size->n ? size->iv[d] : shape[d];
    }
    *total = vin + n * patch + 8 * n * k;
    *largest = vin > n * patch ? vin : n * patch;
    return VOXA_OK;
}

static const voxa_op_gpu roi_gpu = {roi_run_on, roi_device_bytes,
                                    "input + n x patch x es + 8 n k", NULL};

const voxa_op voxa__op_roi = {
    .name = "roi",
    .python = "extract_patches",
    .summary = "Cut N fixed-shape patches out of an array into one (N, *size, *rest) array.",
    .details = "Row numbers in messages count data rows from 0.\n",
    .ninputs = 1,
    .params = roi_params,
    .nparams = R_NPARAMS,
    .flags = VOXA_OP_GLOBAL,
    .check = roi_check,
    .output = roi_output,
    .run = roi_run,
    .gpu = &roi_gpu,
};

/* ---- paste ----------------------------------------------------------------------- */

enum { P_CORNERS, P_CENTRES, P_VOLUME, P_SHAPE, P_OP, P_MODE, P_NPARAMS };

static const voxa_param paste_params[P_NPARAMS] = {
    [P_CORNERS] = {"corners", VOXA_PARAM_TABLE, NULL,
                   "patch corners, as for voxa roi; k is the .npy column count or the number "
                   "of coordinate columns; the patch size is PATCHES.shape[1:1+k]", NULL, 1, 0,
                   VOXA_PARAM_REQUIRED, "coords", "COORDS"},
    [P_CENTRES] = {"centres", VOXA_PARAM_TABLE, NULL, "patch centres, as for voxa roi", NULL, 1,
                   0, VOXA_PARAM_REQUIRED, "coords", "COORDS", "centers"},
    [P_VOLUME] = {"volume", VOXA_PARAM_ARRAY, NULL,
                  "array to paste into (not changed: the result goes to the output)", NULL, 1, 0,
                  VOXA_PARAM_REQUIRED, "target", "VOL"},
    [P_SHAPE] = {"shape", VOXA_PARAM_INTS, NULL,
                 "or start from zeros of this shape, in the patches' dtype", NULL, 0, 1e15,
                 VOXA_PARAM_REQUIRED, "target", "A,B,..."},
    [P_OP] = {"op", VOXA_PARAM_CHOICE, "overwrite",
              "overwrite (later rows win where patches overlap), add, max, mean (covered voxels "
              "= mean of the patch values covering them, integers rounded half to even)",
              "overwrite|add|max|mean", 1, 0, 0, NULL, "OP"},
    [P_MODE] = {"mode", VOXA_PARAM_CHOICE, "error",
                "patches reaching outside: error, clip (shift inside as voxa roi --mode clip "
                "does), crop (write only the inside part)", "error|clip|crop", 1, 0, 0, NULL,
                "MODE"},
};

static voxa_status paste_output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt,
                                int *nd, int64_t *shape) {
    const voxa_array *vol = voxa__arg_array(a, P_VOLUME);
    const voxa_value *s = voxa__arg(a, P_SHAPE);
    *dt = vol ? vol->dtype : in->dtype;
    *nd = vol ? vol->ndim : s->n;
    for (int d = 0; d < *nd; d++) shape[d] = vol ? vol->shape[d] : s->iv[d];
    return VOXA_OK;
}

static voxa_status paste_run_on(voxa_op_ctx *c, voxa_backend b) {
    const voxa_args *a = c->args;
    const voxa_array *vol = voxa__arg_array(a, P_VOLUME);
    static const uint64_t zero = 0;
    /* The starting volume: a copy of --volume (nothing to do when the output
     * is that very view: in place), or zeros (a view with all strides 0). */
    int same = vol && vol->data == c->out->data && vol->dtype == c->out->dtype;
    for (int d = 0; same && d < vol->ndim; d++) same = vol->strides[d] == c->out->strides[d];
    if (vol && !same) {
        VOXA_CHECK(voxa__copy_view(vol, c->out));
    } else if (!vol) {
        voxa_array z = *c->out;
        z.data = (void *)&zero;
        for (int d = 0; d < z.ndim; d++) z.strides[d] = 0;
        VOXA_CHECK(voxa__copy_view(&z, c->out));
    }
    VOXA_FAIL_IF(c->in->ndim != c->out->ndim + 1, VOXA_EINVAL, "patches: %d dimensions and the "
                 "volume %d: expected (N, *size, *rest) with %d", c->in->ndim, c->out->ndim,
                 c->out->ndim + 1);
    voxa_roi_params p = {0};
    int centered, i = coords_param(a, P_CORNERS, &centered);
    int64_t *coords;
    VOXA_CHECK(load_coords(a, i, centered, &p.k, &coords, &p.n));
    voxa_status st = VOXA_OK;
    if (p.k > c->out->ndim)
        st = voxa__error(VOXA_EINVAL, "%s: %d coordinate columns but the volume has %d "
                         "dimensions", a->op->params[i].name, p.k, c->out->ndim);
    p.coords = coords;
    p.size = c->in->shape + 1;
    p.centered = centered;
    p.mode = (voxa_roi_mode)(voxa__arg_int(a, P_MODE) == 2 ? VOXA_ROI_CROP
                                                           : voxa__arg_int(a, P_MODE));
    if (st == VOXA_OK) st = voxa_roi_paste_on(b, c->out, c->in, &p,
                                                  (voxa_paste_op)voxa__arg_int(a, P_OP));
    free(coords);
    return st;
}

static voxa_status paste_run(voxa_op_ctx *c) { return paste_run_on(c, VOXA_BACKEND_CPU); }

/* Device memory (roi_gpu.c, overwrite): volume + patches + a 4-byte claim
 * per volume voxel + the int64 coordinates. `shape` is the patches'. */
static voxa_status paste_device_bytes(const voxa_args *a, voxa_dtype dt, int nd,
                                      const int64_t *shape, int64_t *total, int64_t *largest) {
    int centered, i = coords_param(a, P_CORNERS, &centered);
    int64_t n, k, es = (int64_t)voxa_dtype_size(dt), pb = es, vol = 1, odt_n = 0;
    int ond;
    int64_t oshape[VOXA_MAXDIM + 1];
    voxa_dtype odt;
    voxa_array probe = {.dtype = dt, .ndim = nd};
    for (int d = 0; d < nd && d < VOXA_MAXDIM; d++) probe.shape[d] = shape[d];
    VOXA_CHECK(paste_output(a, &probe, &odt, &ond, oshape));
    table_rows(a, i, &n, &k);
    for (int d = 0; d < nd; d++) pb *= shape[d];
    for (int d = 0; d < ond; d++) vol *= oshape[d];
    odt_n = vol * (int64_t)voxa_dtype_size(odt);
    *total = odt_n + pb + 4 * vol + 8 * n * k;
    *largest = odt_n > pb ? odt_n : pb;
    if (4 * vol > *largest) *largest = 4 * vol;
    return VOXA_OK;
}

static const voxa_op_gpu paste_gpu = {paste_run_on, paste_device_bytes,
                                      "volume + patches + 4 V + 8 n k (overwrite only)", NULL};

const voxa_op voxa__op_paste = {
    .name = "paste",
    .python = "paste_patches",
    .summary = "Paste N patches back into a volume (overwrite, add, max or mean).",
    .details = "IN (PATCHES): an (N, *size, *rest) array, e.g. from voxa roi.\n",
    .ninputs = 1,
    .params = paste_params,
    .nparams = P_NPARAMS,
    .flags = VOXA_OP_GLOBAL,
    .output = paste_output,
    .run = paste_run,
    .gpu = &paste_gpu,
};
