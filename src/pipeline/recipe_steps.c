/* Recipe steps: the keys of one [[step]] table, checked and converted.
 *
 * An op step's keys are the op's parameters: each TOML value must have the
 * type the parameter's type asks for (integer, number, array of numbers,
 * string, true/false), then becomes the text the CLI would pass ("1,3,3") and
 * goes through voxa_args_parse, so a recipe accepts exactly what `voxa <op>`
 * does, with the same messages. Array and table parameters name an input or
 * a step (a dependency) or a file. check_op then runs the op's own check on
 * the input's dtype and shape when they are known at load (an input file's,
 * or the producing step's voxa_op_output), and the halo rule for local ops
 * (the executor needs a bounded halo). measure and preview steps have their
 * own keys. Every message names the file, line, column and key. */
#include "pipeline_internal.h"
#include "op_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define rerr voxa__pl_error
#define find_item voxa__pl_find_item
#define known_names voxa__pl_known_names

static int is_number(const vt_node *v) { return v->kind == VT_INT || v->kind == VT_FLOAT; }

/* A TOML value as CLI text for parameter `pr` (NULL: any scalar list). */
static voxa_status to_text(const voxa_pipeline *p, const char *step, const vt_node *v,
                           const voxa_param *pr, char *buf, size_t n) {
    const char *want = NULL;
    switch (pr->type) {
    case VOXA_PARAM_FLAG:
        if (v->kind != VT_BOOL) want = "true or false";
        else snprintf(buf, n, "%s", v->i ? "true" : "false");
        break;
    case VOXA_PARAM_INT:
        if (v->kind != VT_INT) want = "an integer";
        else snprintf(buf, n, "%lld", (long long)v->i);
        break;
    case VOXA_PARAM_FLOAT:
        if (!is_number(v)) want = "a number";
        else if (v->kind == VT_INT) snprintf(buf, n, "%lld", (long long)v->i);
        else snprintf(buf, n, "%.17g", v->f);
        break;
    case VOXA_PARAM_INTS:
    case VOXA_PARAM_FLOATS: {
        int ints = pr->type == VOXA_PARAM_INTS;
        if (v->kind == VT_ARRAY) {
            size_t len = 0;
            buf[0] = '\0';
            if (v->n == 0) want = ints ? "a non-empty array of integers" : "a non-empty array of numbers";
            for (int k = 0; !want && k < v->n; k++) {
                const vt_node *e = v->items[k];
                if (ints ? e->kind != VT_INT : !is_number(e)) {
                    want = ints ? "an array of integers" : "an array of numbers";
                    break;
                }
                if (e->kind == VT_INT)
                    len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%lld",
                                            k ? "," : "", (long long)e->i);
                else
                    len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%.17g",
                                            k ? "," : "", e->f);
            }
        } else if (ints ? v->kind == VT_INT : is_number(v)) {
            if (v->kind == VT_INT) snprintf(buf, n, "%lld", (long long)v->i);
            else snprintf(buf, n, "%.17g", v->f);
        } else {
            want = ints ? "an integer or an array of integers" : "a number or an array of numbers";
        }
        break;
    }
    default: /* CHOICE, DTYPE, STRING, ARRAY, TABLE */
        if (v->kind != VT_STRING) want = "a string";
        else if (strlen(v->s) >= n) want = "a shorter string";
        else snprintf(buf, n, "%s", v->s);
        break;
    }
    if (want)
        return rerr(p, v->line, v->col, "step '%s': key '%s': expected %s, got %s", step, v->key,
                    want, vt_kind_name(v->kind));
    return VOXA_OK;
}

/* Keys every step may have besides its op's parameters. */
static int common_key(const char *k) {
    return !strcmp(k, "op") || !strcmp(k, "name") || !strcmp(k, "output");
}

voxa_status voxa__pl_get_string(const voxa_pipeline *p, const vt_node *t, const char *step,
                              const char *key, const char **out) {
    const vt_node *v = vt_get(t, key);
    *out = NULL;
    if (!v) return VOXA_OK;
    if (v->kind != VT_STRING)
        return rerr(p, v->line, v->col, "step '%s': key '%s': expected a string, got %s", step,
                    key, vt_kind_name(v->kind));
    *out = v->s;
    return VOXA_OK;
}

/* A name that must be an item: its index in *item. */
voxa_status voxa__pl_ref(const voxa_pipeline *p, const vt_node *t, const char *step,
                       const char *key, int required, int *item) {
    const char *s;
    *item = -1;
    VOXA_CHECK(voxa__pl_get_string(p, t, step, key, &s));
    if (!s) {
        if (required)
            return rerr(p, t->line, t->col, "step '%s': missing key '%s'", step, key);
        return VOXA_OK;
    }
    *item = find_item(p, s);
    char names[600];
    const vt_node *v = vt_get(t, key);
    if (*item < 0)
        return rerr(p, v->line, v->col, "step '%s': key '%s': unknown name '%s' (known: %s)",
                    step, key, s, known_names(p, names, sizeof names));
    return VOXA_OK;
}

voxa_status voxa__pl_add_dep(pl_step *s, int item) {
    for (int k = 0; k < s->ndeps; k++)
        if (s->deps[k] == item) return VOXA_OK;
    s->deps[s->ndeps++] = item;
    return VOXA_OK;
}

/* Numbers (one or an array) into out[], at most max. */
static voxa_status numbers(const voxa_pipeline *p, const vt_node *t, const char *step,
                           const char *key, int integer, double *out, int max, int *n) {
    const vt_node *v = vt_get(t, key);
    *n = 0;
    if (!v) return VOXA_OK;
    int ok = v->kind == VT_ARRAY ? v->n >= 1 && v->n <= max : integer ? v->kind == VT_INT
                                                                       : is_number(v);
    const vt_node *one[1] = {v};
    const vt_node *const *e = v->kind == VT_ARRAY ? (const vt_node *const *)v->items : one;
    int cnt = v->kind == VT_ARRAY ? v->n : 1;
    for (int k = 0; ok && k < cnt; k++) {
        ok = integer ? e[k]->kind == VT_INT : is_number(e[k]);
        if (ok) out[k] = e[k]->kind == VT_INT ? (double)e[k]->i : e[k]->f;
    }
    if (!ok)
        return rerr(p, v->line, v->col, "step '%s': key '%s': expected %s (1 to %d values)",
                    step, key, integer ? "integers" : "numbers", max);
    *n = cnt;
    return VOXA_OK;
}

static voxa_status check_keys(const voxa_pipeline *p, const vt_node *t, const char *step,
                              const char *const *keys) {
    for (int i = 0; i < t->n; i++) {
        const vt_node *v = t->items[i];
        int ok = common_key(v->key);
        for (int k = 0; !ok && keys[k]; k++) ok = !strcmp(keys[k], v->key);
        if (!ok) {
            char list[300];
            size_t len = 0;
            for (int k = 0; keys[k]; k++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s, ", keys[k]);
            return rerr(p, v->key_line, v->key_col,
                        "step '%s': unknown key '%s' (expected %sop, name, output)", step,
                        v->key, list);
        }
    }
    return VOXA_OK;
}

/* measure and preview: their own keys. */
voxa_status voxa__pl_table_step(voxa_pipeline *p, pl_step *s, const vt_node *t) {
    static const char *const mkeys[] = {"labels", "intensity", "spacing", "properties", NULL};
    static const char *const pkeys[] = {"image", "labels", "spacing", "point", "percentiles",
                                        NULL};
    int measure = s->kind == PL_MEASURE;
    VOXA_CHECK(check_keys(p, t, s->name, measure ? mkeys : pkeys));
    if (measure) {
        VOXA_CHECK(voxa__pl_ref(p, t, s->name, "labels", 1, &s->a_item));
        VOXA_CHECK(voxa__pl_ref(p, t, s->name, "intensity", 0, &s->b_item));
        const vt_node *pr = vt_get(t, "properties");
        if (pr) {
            char buf[512];
            size_t len = 0;
            int ok = pr->kind == VT_STRING || pr->kind == VT_ARRAY;
            if (pr->kind == VT_STRING) snprintf(buf, sizeof buf, "%s", pr->s);
            for (int k = 0; ok && pr->kind == VT_ARRAY && k < pr->n; k++) {
                ok = pr->items[k]->kind == VT_STRING;
                if (ok)
                    len += (size_t)snprintf(buf + len, len < sizeof buf ? sizeof buf - len : 0,
                                            "%s%s", k ? "," : "", pr->items[k]->s);
            }
            if (!ok)
                return rerr(p, pr->line, pr->col, "step '%s': key 'properties': expected a "
                            "string or an array of strings", s->name);
            /* names known to the CSV writer (ranks and intensity: when run; the
             * passes the names ask for run then: every flag here) */
            if (voxa_measure_check_properties(buf, 0, VOXA_MEASURE_INTENSITY |
                                                          VOXA_MEASURE_MOMENTS |
                                                          VOXA_MEASURE_STD |
                                                          VOXA_MEASURE_PERIMETER |
                                                          VOXA_MEASURE_EULER) != VOXA_OK)
                return rerr(p, pr->line, pr->col, "step '%s': key 'properties': %s", s->name,
                            voxa_last_error());
            s->properties = strdup(buf);
        }
    } else {
        VOXA_CHECK(voxa__pl_ref(p, t, s->name, "image", 0, &s->a_item));
        VOXA_CHECK(voxa__pl_ref(p, t, s->name, "labels", 0, &s->b_item));
        if (s->a_item < 0 && s->b_item < 0)
            return rerr(p, s->line, s->col, "step '%s': missing key 'image' (or 'labels')",
                        s->name);
        double pt[VOXA_MAXDIM];
        VOXA_CHECK(numbers(p, t, s->name, "point", 1, pt, VOXA_MAXDIM, &s->npoint));
        for (int k = 0; k < s->npoint; k++) s->point[k] = (int64_t)pt[k];
        VOXA_CHECK(numbers(p, t, s->name, "percentiles", 0, s->pct, 2, &s->npct));
        const vt_node *v = vt_get(t, "percentiles");
        if (v && (s->npct != 2 || !(s->pct[0] >= 0 && s->pct[0] < s->pct[1] && s->pct[1] <= 100)))
            return rerr(p, v->line, v->col, "step '%s': key 'percentiles': expected [LO, HI] "
                        "with 0 <= LO < HI <= 100", s->name);
    }
    VOXA_CHECK(numbers(p, t, s->name, "spacing", 0, s->spacing, VOXA_MAXDIM, &s->nspacing));
    for (int k = 0; k < s->nspacing; k++)
        if (!(s->spacing[k] > 0)) {
            const vt_node *v = vt_get(t, "spacing");
            return rerr(p, v->line, v->col, "step '%s': key 'spacing': values must be > 0",
                        s->name);
        }
    for (int k = 0; k < 2; k++) {
        int it = k ? s->b_item : s->a_item;
        if (it >= 0) voxa__pl_add_dep(s, it);
        if (it >= 0 && p->items[it].known && !p->items[it].is_array)
            return rerr(p, s->line, s->col, "step '%s': '%s' is not an array", s->name,
                        p->items[it].name);
    }
    return VOXA_OK;
}

/* An op step's parameters: type, then value (voxa_args_parse). */
voxa_status voxa__pl_op_params(voxa_pipeline *p, pl_step *s, const vt_node *t) {
    const voxa_op *op = s->op;
    for (int i = 0; i < t->n; i++) {
        const vt_node *v = t->items[i];
        if (common_key(v->key) || !strcmp(v->key, "input")) continue;
        int pi = voxa_op_param(op, v->key);
        if (pi < 0 || (op->params[pi].flags & (VOXA_PARAM_HIDDEN | VOXA_PARAM_OUTPUT))) {
            char list[600];
            size_t len = 0;
            for (int k = 0; k < op->nparams && len < sizeof list; k++)
                if (!(op->params[k].flags & (VOXA_PARAM_HIDDEN | VOXA_PARAM_OUTPUT)))
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s, ",
                                            op->params[k].name);
            return rerr(p, v->key_line, v->key_col, "step '%s': unknown key '%s' for op '%s' "
                        "(expected %sop, name, input, output)", s->name, v->key, op->name, list);
        }
        for (int k = 0; k < s->nvals; k++) /* a name and its alias ("centers") */
            if (s->vals[k].param == pi)
                return rerr(p, v->key_line, v->key_col, "step '%s': key '%s' repeats '%s' "
                            "(line %d)", s->name, v->key, op->params[pi].name, s->vals[k].line);
        char buf[4096];
        VOXA_CHECK(to_text(p, s->name, v, &op->params[pi], buf, sizeof buf));
        pl_value *pv = &s->vals[s->nvals++];
        pv->param = pi;
        pv->item = -1;
        pv->line = v->line;
        pv->col = v->col;
        voxa_param_type ty = op->params[pi].type;
        if (ty == VOXA_PARAM_ARRAY || ty == VOXA_PARAM_TABLE) {
            pv->item = find_item(p, buf);
            if (pv->item >= 0) {
                voxa__pl_add_dep(s, pv->item);
                pv->text = strdup(p->items[pv->item].path);
            } else {
                pv->text = voxa__pl_join(p->base, buf);
                if (pv->text && access(pv->text, R_OK) != 0)
                    return rerr(p, v->line, v->col, "step '%s': key '%s': '%s' is neither a "
                                "name nor a readable file (%s)", s->name, v->key, buf, pv->text);
            }
        } else if (ty == VOXA_PARAM_STRING) {
            pv->text = voxa__pl_join(p->base, buf); /* strings are paths (wisdom) */
        } else {
            pv->text = strdup(buf);
        }
        VOXA_FAIL_IF(!pv->text, VOXA_ENOMEM, "pipeline: out of memory");
    }
    return VOXA_OK;
}

/* Byte size from a string ("512M") or an integer. */
voxa_status voxa__pl_check_op(voxa_pipeline *p, pl_step *s, const vt_node *t) {
    const voxa_op *op = s->op;
    voxa_args a;
    voxa_status st = voxa_args_init(&a, op);
    if (st != VOXA_OK) return st;
    int deferred = 0;
    for (int k = 0; k < s->nvals; k++) {
        const pl_value *v = &s->vals[k];
        /* A given parameter replaces its exclusive group's default. */
        for (int j = 0; j < op->nparams; j++)
            if (j != v->param && op->params[j].oneof && op->params[v->param].oneof &&
                !strcmp(op->params[j].oneof, op->params[v->param].oneof))
                voxa_args_clear(&a, op->params[j].name);
    }
    for (int k = 0; k < s->nvals && st == VOXA_OK; k++) {
        const pl_value *v = &s->vals[k];
        if (v->item >= 0 && p->items[v->item].step >= 0) {
            deferred = 1; /* made by an earlier step: read when it has run */
            a.v[v->param].set = 1;
            continue;
        }
        if (voxa_args_parse(&a, op->params[v->param].name, v->text) != VOXA_OK) {
            const char *m = voxa_last_error();
            size_t nl = strlen(op->params[v->param].name);
            if (!strncmp(m, op->params[v->param].name, nl) && !strncmp(m + nl, ": ", 2)) m += nl + 2;
            char msg[700];
            snprintf(msg, sizeof msg, "%s", m);
            st = rerr(p, v->line, v->col, "step '%s': key '%s': %s", s->name,
                      op->params[v->param].name, msg);
        }
    }
    const pl_item *in = s->input >= 0 ? &p->items[s->input] : NULL;
    voxa_array meta;
    memset(&meta, 0, sizeof meta);
    static char dummy;
    if (in && in->known) {
        meta.data = &dummy;
        meta.dtype = in->dtype;
        meta.ndim = in->ndim;
        memcpy(meta.shape, in->shape, sizeof meta.shape);
    }
    int can = (!in || in->known) && !deferred;
    if (st == VOXA_OK && !can) {
        /* Required keys and exclusive groups need no value: check them on
         * a copy of the descriptor without input or op check. */
        voxa_op shadow = *op;
        shadow.ninputs = 0;
        shadow.check = NULL;
        voxa_args g = a;
        g.op = &shadow;
        voxa_status cs = voxa_op_check(&g, NULL);
        if (cs != VOXA_OK) {
            char msg[700];
            snprintf(msg, sizeof msg, "%s", voxa_last_error());
            st = rerr(p, t->line, t->col, "step '%s' (op %s): %s", s->name, op->name, msg);
            if (cs == VOXA_ENOMEM) st = cs; /* not the recipe's fault */
        }
    }
    voxa_status cs = st == VOXA_OK && can ? voxa_op_check(&a, in ? &meta : NULL) : VOXA_OK;
    if (cs != VOXA_OK) {
        char msg[700];
        snprintf(msg, sizeof msg, "%s", voxa_last_error());
        int line = t->line, col = t->col;
        size_t len = strcspn(msg, ":");
        for (int k = 0; k < s->nvals; k++)
            if (strlen(op->params[s->vals[k].param].name) == len &&
                !strncmp(msg, op->params[s->vals[k].param].name, len)) {
                line = s->vals[k].line;
                col = s->vals[k].col;
            }
        if (!strncmp(msg, "input: ", 7) && vt_get(t, "input")) {
            line = vt_get(t, "input")->line;
            col = vt_get(t, "input")->col;
        }
        st = rerr(p, line, col, "step '%s' (op %s): %s", s->name, op->name, msg);
        if (cs == VOXA_ENOMEM) st = cs;
    }
    if (st == VOXA_OK && can && (op->flags & VOXA_OP_LOCAL)) {
        /* The executor needs a bounded halo (morphology: iterations >= 1). */
        int64_t lo[VOXA_MAXDIM], hi[VOXA_MAXDIM];
        int nd = in ? in->ndim : 3;
        voxa_status hs = voxa_op_halo(&a, nd, lo, hi);
        if (hs != VOXA_OK) {
            char msg[700];
            snprintf(msg, sizeof msg, "%s", voxa_last_error());
            st = rerr(p, t->line, t->col, "step '%s' (op %s): %s", s->name, op->name, msg);
            if (hs == VOXA_ENOMEM) st = hs;
        }
    }
    pl_item *out = &p->items[s->output];
    if (st == VOXA_OK && can &&
        voxa_op_output(&a, in ? &meta : NULL, &out->dtype, &out->ndim, out->shape) == VOXA_OK)
        out->known = 1;
    out->labels = (op->flags & VOXA_OP_COUNT) && (op->flags & VOXA_OP_GLOBAL);
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", voxa_last_error());
    voxa_args_free(&a);
    if (st != VOXA_OK) return voxa__error(st, "%s", keep);
    voxa_clear_error();
    return VOXA_OK;
}

/* A path as written relative to the recipe's folder, so a fingerprint does
 * not depend on the folder the run starts from. */
