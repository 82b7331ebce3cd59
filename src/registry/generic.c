/* Generic calls over any op descriptor: the checks every op shares (required
 * parameters, exclusive groups, per-axis list lengths, input dtypes), then
 * the op's own; whole-volume and region runs. A region run of a SAME_SHAPE
 * op runs the op on the input region (grown by the halo) and copies the part
 * that covers the output region: the op's border rule then acts only where
 * the input region stops, which is the volume's edge when the halo is whole. */
#include "op_args.h"
#include "route.h"

#include <stdio.h>
#include <string.h>

static const char *dashed(const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s", name);
    return buf;
}

static voxa_status check_groups(const voxa_args *a) {
    const voxa_op *op = a->op;
    for (int i = 0; i < op->nparams; i++) {
        const voxa_param *p = &op->params[i];
        if (!p->oneof) {
            VOXA_FAIL_IF((p->flags & VOXA_PARAM_REQUIRED) && !a->v[i].set, VOXA_EINVAL,
                         "%s: required", p->name);
            continue;
        }
        int first = -1, given = 0, required = 0;
        for (int j = 0; j < op->nparams; j++) {
            const voxa_param *q = &op->params[j];
            if (!q->oneof || strcmp(q->oneof, p->oneof)) continue;
            if (first < 0) first = j;
            given += a->v[j].set;
            required |= (q->flags & VOXA_PARAM_REQUIRED) != 0;
        }
        if (first != i) continue; /* each group once */
        if (given > 1 || (required && given == 0)) {
            char list[512], b[64];
            size_t len = 0;
            int count = 0, total = 0;
            for (int j = 0; j < op->nparams; j++)
                total += op->params[j].oneof && !strcmp(op->params[j].oneof, p->oneof) &&
                         !(op->params[j].flags & VOXA_PARAM_HIDDEN);
            for (int j = 0; j < op->nparams && len < sizeof list; j++) {
                const voxa_param *q = &op->params[j];
                if (!q->oneof || strcmp(q->oneof, p->oneof) || (q->flags & VOXA_PARAM_HIDDEN))
                    continue;
                count++;
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
                                        count == 1 ? "" : count == total ? " and " : ", ",
                                        dashed(q->name, b, sizeof b));
            }
            return voxa__error(VOXA_EINVAL, "%s: give %s one of %s", p->name,
                               required ? "exactly" : "at most", list);
        }
    }
    return VOXA_OK;
}

voxa_status voxa_op_check(const voxa_args *a, const voxa_array *in) {
    VOXA_FAIL_IF(!a || !a->op, VOXA_EINVAL, "op: NULL arguments");
    const voxa_op *op = a->op;
    VOXA_CHECK(check_groups(a));
    if (op->ninputs > 0) {
        VOXA_FAIL_IF(!in, VOXA_EINVAL, "%s: no input", op->name);
        VOXA_CHECK(voxa_array_check(in, "input"));
        VOXA_FAIL_IF(op->in_dtypes && !(op->in_dtypes & (1u << in->dtype)), VOXA_EINVAL,
                     "input: dtype %s is not supported by %s", voxa_dtype_name(in->dtype),
                     op->name);
        for (int i = 0; i < op->nparams; i++) {
            const voxa_param *p = &op->params[i];
            const voxa_value *v = &a->v[i];
            if (!(p->flags & VOXA_PARAM_PER_AXIS) || !v->set || v->n == 1 || v->n == in->ndim)
                continue;
            return voxa__error(VOXA_EINVAL, "%s: %d values, expected %d comma-separated values "
                               "(one per axis) or one for all", p->name, v->n, in->ndim);
        }
    }
    return op->check ? op->check(a, in) : VOXA_OK;
}

voxa_status voxa_op_output(const voxa_args *a, const voxa_array *in, voxa_dtype *dtype,
                           int *ndim, int64_t *shape) {
    VOXA_FAIL_IF(!a || !a->op || !dtype || !ndim || !shape, VOXA_EINVAL, "op: NULL argument");
    if (a->op->output) return a->op->output(a, in, dtype, ndim, shape);
    VOXA_FAIL_IF(!in, VOXA_EINTERNAL, "%s: no output rule", a->op->name);
    *dtype = in->dtype;
    *ndim = in->ndim;
    memcpy(shape, in->shape, sizeof(int64_t) * (size_t)in->ndim);
    return VOXA_OK;
}

voxa_status voxa_op_halo(const voxa_args *a, int ndim, int64_t *lo, int64_t *hi) {
    VOXA_FAIL_IF(!a || !a->op || !lo || !hi, VOXA_EINVAL, "op: NULL argument");
    VOXA_FAIL_IF(ndim < 0 || ndim > VOXA_MAXDIM, VOXA_EINVAL, "ndim %d out of range", ndim);
    VOXA_FAIL_IF(a->op->flags & VOXA_OP_GLOBAL, VOXA_EUNSUPPORTED,
                 "%s: a global op has no halo (chunks are merged instead)", a->op->name);
    VOXA_CHECK(check_groups(a)); /* halo rules may read required parameters */
    for (int d = 0; d < ndim; d++) lo[d] = hi[d] = 0;
    return a->op->halo ? a->op->halo(a, ndim, lo, hi) : VOXA_OK;
}

static voxa_status run_ctx(const voxa_args *a, const voxa_array *in, voxa_array *out,
                           const int64_t *origin, const int64_t *whole,
                           const voxa_progress *progress, int64_t *count) {
    voxa_op_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.args = a;
    ctx.in = in;
    ctx.out = out;
    ctx.count = -1;
    ctx.want_count = count != NULL;
    for (int d = 0; d < out->ndim; d++) {
        ctx.origin[d] = origin ? origin[d] : 0;
        ctx.whole[d] = whole ? whole[d] : out->shape[d];
    }
    if (progress) ctx.progress = *progress;
    voxa_status st = voxa__route_run(&ctx); /* the backend: route.c */
    if (count) *count = ctx.count;
    return st;
}

voxa_status voxa_op_run(const voxa_args *a, const voxa_array *in, voxa_array *out,
                        const voxa_progress *progress, int64_t *count) {
    VOXA_CHECK(voxa_op_check(a, in));
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "%s: no output", a->op->name);
    VOXA_CHECK(voxa_array_check(out, "output"));
    voxa_dtype dt;
    int nd;
    int64_t shape[VOXA_MAXDIM + 1];
    VOXA_CHECK(voxa_op_output(a, in, &dt, &nd, shape));
    int same = nd == out->ndim;
    for (int d = 0; same && d < nd; d++) same = shape[d] == out->shape[d];
    if (!same) {
        char b1[128], b2[128];
        voxa_array want = {.ndim = nd};
        memcpy(want.shape, shape, sizeof(int64_t) * (size_t)nd);
        return voxa__error(VOXA_EINVAL, "output: shape %s, expected %s", voxa__shape_str(out, b1, sizeof b1),
                           voxa__shape_str(&want, b2, sizeof b2));
    }
    return run_ctx(a, in, out, NULL, NULL, progress, count);
}

voxa_status voxa_op_run_region(const voxa_args *a, const voxa_array *in,
                               const int64_t *in_origin, voxa_array *out,
                               const int64_t *out_origin, const int64_t *whole,
                               const voxa_progress *progress, int64_t *count) {
    VOXA_FAIL_IF(!a || !a->op || !out || !out_origin || !whole, VOXA_EINVAL,
                 "op: NULL argument");
    const voxa_op *op = a->op;
    if (!in || !(op->flags & VOXA_OP_SAME_SHAPE))
        return run_ctx(a, in, out, out_origin, whole, progress, count);
    VOXA_FAIL_IF(!in_origin || in->ndim != out->ndim, VOXA_EINVAL,
                 "%s: input and output regions differ in ndim", op->name);
    int aligned = 1;
    for (int d = 0; d < out->ndim; d++) {
        VOXA_FAIL_IF(out_origin[d] < in_origin[d] ||
                         out_origin[d] + out->shape[d] > in_origin[d] + in->shape[d],
                     VOXA_EINVAL, "%s: the output region is not inside the input region on "
                     "axis %d", op->name, d);
        aligned &= out_origin[d] == in_origin[d] && out->shape[d] == in->shape[d];
    }
    if (aligned) return run_ctx(a, in, out, out_origin, whole, progress, count);
    voxa_array tmp;
    VOXA_CHECK(voxa_array_new(&tmp, out->dtype, in->ndim, in->shape));
    voxa_status st = run_ctx(a, in, &tmp, in_origin, whole, progress, count);
    if (st == VOXA_OK) {
        voxa_array part = tmp;
        for (int d = 0; d < out->ndim; d++) {
            part.data = (char *)part.data + (out_origin[d] - in_origin[d]) * tmp.strides[d];
            part.shape[d] = out->shape[d];
        }
        part.owner = NULL;
        st = voxa__copy_view(&part, out);
    }
    voxa_array_free(&tmp);
    return st;
}
