/* Descriptor of `threshold` (voxa_threshold_otsu, voxa_threshold_apply): a
 * bool mask `image > value`, the value given or Otsu's (skimage's
 * threshold_otsu). Global: Otsu's value depends on the whole image's
 * histogram, so a chunked run reads the volume whole (the executor has no
 * two-pass "reduce, then map" step yet); a given value would be local, but
 * the descriptor's flags cannot depend on the arguments. */
#include <math.h>
#include <stdio.h>

#include "op_args.h"
#include "voxa/threshold.h"

enum { VALUE, METHOD, NBINS, RESULT, NO_MASK, NPARAMS };

static const voxa_param params[NPARAMS] = {
    [VALUE] = {"value", VOXA_PARAM_FLOAT, NULL,
               "foreground = voxels strictly above V (NumPy's image > V: float32 images compare "
               "with V rounded to float32)", NULL, 1, 0, VOXA_PARAM_REQUIRED, "threshold", "V"},
    [METHOD] = {"method", VOXA_PARAM_CHOICE, NULL,
                "otsu: the value skimage.filters.threshold_otsu(image, nbins) returns, from the "
                "whole image's histogram", "otsu", 1, 0, VOXA_PARAM_REQUIRED, "threshold", "M"},
    [NBINS] = {"nbins", VOXA_PARAM_INT, "256",
               "Otsu's bins over [min, max] for float and bool images (integer images: one bin "
               "per value, as skimage)", NULL, 2, 1 << 24, 0, NULL, "N"},
    [RESULT] = {"result", VOXA_PARAM_ARRAY, NULL,
                "float64 array of 4 receiving the threshold, 1 if the image is constant, and "
                "an integer threshold's high and low 32 bits (exact int64)", NULL, 1,
                0, VOXA_PARAM_HIDDEN | VOXA_PARAM_OUTPUT, NULL, NULL},
    [NO_MASK] = {"no_mask", VOXA_PARAM_FLAG, NULL,
                 "with result: compute the threshold only, leave the output unwritten "
                 "(threshold_otsu)", NULL, 1, 0, VOXA_PARAM_HIDDEN, NULL, NULL},
};

static voxa_status check(const voxa_args *a, const voxa_array *in) {
    VOXA_FAIL_IF(voxa__arg_set(a, METHOD) && voxa_array_size(in) < 1, VOXA_EINVAL,
                 "input: empty array (Otsu's threshold needs at least one voxel)");
    const voxa_array *r = voxa__arg_array(a, RESULT);
    if (r)
        VOXA_FAIL_IF(r->dtype != VOXA_F64 || voxa_array_size(r) != 4 || r->ndim != 1,
                     VOXA_EINVAL, "result: a 1-D float64 array of 4 elements");
    VOXA_FAIL_IF(voxa__arg_int(a, NO_MASK) && !r, VOXA_EINVAL,
                 "no_mask: only with result (else nothing is computed)");
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
    const voxa_args *a = c->args;
    voxa_threshold_value t = {0};
    if (voxa__arg_set(a, METHOD)) {
        VOXA_CHECK(voxa_threshold_otsu(c->in, voxa__arg_int(a, NBINS), &t, &c->progress));
    } else {
        t.f = voxa__arg_float(a, VALUE);
        VOXA_CHECK(voxa__progress(&c->progress, 0, 1));
    }
    const voxa_array *r = voxa__arg_array(a, RESULT);
    if (r) {
        double v[4] = {t.f, t.constant, t.integer ? (double)(t.i >> 32) : 0,
                       t.integer ? (double)(t.i & 0xffffffff) : 0};
        for (int k = 0; k < 4; k++) *(double *)((char *)r->data + k * r->strides[0]) = v[k];
    }
    if (!voxa__arg_int(a, NO_MASK)) VOXA_CHECK(voxa_threshold_apply(c->in, &t, c->out));
    return voxa__progress(&c->progress, 1, 1);
}

static voxa_status describe(const voxa_args *a, const voxa_array *in, char *buf, size_t n) {
    int flt = in && (in->dtype == VOXA_F32 || in->dtype == VOXA_F64 || in->dtype == VOXA_BOOL);
    if (!voxa__arg_set(a, METHOD)) snprintf(buf, n, "value: image > %.17g", voxa__arg_float(a, VALUE));
    else if (flt) snprintf(buf, n, "otsu: %lld equal bins over [min, max]",
                           (long long)voxa__arg_int(a, NBINS));
    else snprintf(buf, n, "otsu: one bin per integer value in [min, max]");
    return VOXA_OK;
}

const voxa_op voxa__op_threshold = {
    .name = "threshold",
    .python = "threshold",
    .summary = "Binary mask of the voxels above a value, given or Otsu's "
               "(threshold_otsu).",
    .details = "Output: bool, image > value (NumPy's comparison). --method otsu picks the\n"
               "value skimage.filters.threshold_otsu(image, nbins) returns (a constant image\n"
               "gives its value, so an empty mask; NaN or inf voxels are refused, as skimage\n"
               "refuses them). Chunked runs (--mem-limit) read the whole volume: Otsu's value\n"
               "needs the whole histogram.\n",
    .ninputs = 1,
    .params = params,
    .nparams = NPARAMS,
    .flags = VOXA_OP_GLOBAL | VOXA_OP_SAME_SHAPE,
    .check = check,
    .output = output,
    .run = run,
    .describe = describe,
    .scratch = 0,
};
