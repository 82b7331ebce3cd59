/* Op arguments: defaults, typed setters, text parsing of scalar and list
 * values, lookups. File-valued parameters (ARRAY, TABLE given as paths) are
 * read one layer up, in src/registry/args_files.c, because core does no I/O.
 *
 * Text syntax, shared by the CLI, recipes and defaults: numbers as strtod /
 * strtoll read them (whole string, finite), lists separated by ',' (or 'x':
 * "3x3x3"), choice words exactly as listed, dtype names as
 * voxa_dtype_from_name reads them. */
#include "op_args.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* '-' and '_' compare equal, so CLI spellings find their parameter. */
static int same_name(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;
        if (x != y) return 0;
    }
    return *a == *b;
}

int voxa_op_param(const voxa_op *op, const char *name) {
    if (!op || !name) return -1;
    for (int i = 0; i < op->nparams; i++)
        if (same_name(op->params[i].name, name) ||
            (op->params[i].alias && same_name(op->params[i].alias, name)))
            return i;
    return -1;
}

static void value_free(voxa_value *v) {
    free((void *)v->s);
    if (v->names) {
        for (int64_t c = 0; c < (v->array.ndim == 2 ? v->array.shape[1] : 1); c++) free(v->names[c]);
        free(v->names);
    }
    if (v->owned) voxa_array_free(&v->array);
    memset(v, 0, sizeof *v);
}

void voxa_args_free(voxa_args *a) {
    if (!a || !a->op) return;
    for (int i = 0; i < a->op->nparams; i++) value_free(&a->v[i]);
}

voxa_status voxa_args_init(voxa_args *a, const voxa_op *op) {
    VOXA_FAIL_IF(!a || !op, VOXA_EINVAL, "args: NULL argument");
    memset(a, 0, sizeof *a);
    VOXA_FAIL_IF(op->nparams > VOXA_OP_MAXPARAMS, VOXA_EINTERNAL,
                 "%s: %d parameters, at most %d", op->name, op->nparams, VOXA_OP_MAXPARAMS);
    a->op = op;
    for (int i = 0; i < op->nparams; i++) {
        const voxa_param *p = &op->params[i];
        if (!p->def) continue;
        voxa_status st = voxa__value_parse(p, p->def, &a->v[i]);
        if (st != VOXA_OK) {
            voxa_args_free(a);
            return voxa__error(VOXA_EINTERNAL, "%s: default of %s: %s", op->name, p->name,
                               voxa_last_error());
        }
    }
    return VOXA_OK;
}

static voxa_status find(voxa_args *a, const char *name, int *idx) {
    *idx = -1;
    VOXA_FAIL_IF(!a || !a->op || !name, VOXA_EINVAL, "args: NULL argument");
    *idx = voxa_op_param(a->op, name);
    VOXA_FAIL_IF(*idx < 0, VOXA_EINVAL, "%s: no parameter '%s'", a->op->name, name);
    return VOXA_OK;
}

const voxa_value *voxa_args_get(const voxa_args *a, const char *name) {
    int i = a ? voxa_op_param(a->op, name) : -1;
    return i < 0 ? NULL : &a->v[i];
}

voxa_status voxa_args_clear(voxa_args *a, const char *name) {
    int i;
    VOXA_CHECK(find(a, name, &i));
    value_free(&a->v[i]);
    return VOXA_OK;
}

/* ---- ranges and words ---------------------------------------------------------- */

static voxa_status in_range(const voxa_param *p, double v, const char *text) {
    if (p->min > p->max || (v >= p->min && v <= p->max)) return VOXA_OK;
    if (p->max >= 1e300)
        return voxa__error(VOXA_EINVAL, "%s: '%s': expected a %s >= %g", p->name, text,
                           p->type == VOXA_PARAM_INT || p->type == VOXA_PARAM_INTS ? "whole number"
                                                                                   : "number",
                           p->min);
    return voxa__error(VOXA_EINVAL, "%s: '%s': expected a %s from %g to %g", p->name, text,
                       p->type == VOXA_PARAM_INT || p->type == VOXA_PARAM_INTS ? "whole number"
                                                                               : "number",
                       p->min, p->max);
}

/* The choices list as "a, b or c" (aliases left out), for messages. */
static const char *choice_list(const char *choices, char *buf, size_t n) {
    size_t len = 0;
    int count = 0, total = 0;
    for (const char *c = choices; *c;) {
        size_t w = strcspn(c, "|");
        if (!memchr(c, '=', w)) total++;
        c += w + (c[w] == '|');
    }
    buf[0] = '\0';
    for (const char *c = choices; *c;) {
        size_t w = strcspn(c, "|");
        if (!memchr(c, '=', w)) {
            count++;
            const char *sep = count == 1 ? "" : count == total ? " or " : ", ";
            len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%.*s",
                                    sep, (int)w, c);
        }
        c += w + (c[w] == '|');
    }
    return buf;
}

/* Index of `word` among the choices (aliases resolve to their target). */
static int choice_index(const char *choices, const char *word) {
    int idx = 0;
    for (const char *c = choices; *c;) {
        size_t w = strcspn(c, "|");
        const char *eq = memchr(c, '=', w);
        if (eq) {
            if ((size_t)(eq - c) == strlen(word) && !strncmp(c, word, (size_t)(eq - c))) {
                char target[64];
                snprintf(target, sizeof target, "%.*s", (int)(w - (size_t)(eq - c) - 1), eq + 1);
                return choice_index(choices, target);
            }
        } else {
            if (w == strlen(word) && !strncmp(c, word, w)) return idx;
            idx++;
        }
        c += w + (c[w] == '|');
    }
    return -1;
}

const char *voxa__choice_word(const voxa_param *p, int64_t idx, char *buf, size_t n) {
    int k = 0;
    for (const char *c = p->choices; *c;) {
        size_t w = strcspn(c, "|");
        if (!memchr(c, '=', w) && k++ == idx) {
            snprintf(buf, n, "%.*s", (int)w, c);
            return buf;
        }
        c += w + (c[w] == '|');
    }
    snprintf(buf, n, "?");
    return buf;
}

/* ---- text values ------------------------------------------------------------------ */

static int parse_list(const char *s, double *out, int max, int integer, int64_t *iout) {
    if (!*s) return -1;
    int n = 0;
    for (const char *p = s;;) {
        if (n >= max) return -1;
        char *end;
        errno = 0;
        if (integer) {
            long long v = strtoll(p, &end, 10);
            if (end == p || errno == ERANGE) return -1;
            iout[n] = v;
            out[n++] = (double)v;
        } else {
            double v = strtod(p, &end);
            if (end == p || errno == ERANGE || !isfinite(v)) return -1;
            out[n++] = v;
        }
        while (*end == ' ') end++;
        if (*end == '\0') return n;
        if (*end != ',' && *end != 'x') return -1;
        p = end + 1;
    }
}

voxa_status voxa__value_parse(const voxa_param *p, const char *text, voxa_value *v) {
    VOXA_FAIL_IF(!text, VOXA_EINVAL, "%s: no value", p->name);
    voxa_value nv;
    memset(&nv, 0, sizeof nv);
    nv.set = 1;
    char *end;
    char buf[256];
    switch (p->type) {
    case VOXA_PARAM_FLAG:
        if (!strcmp(text, "1") || !strcmp(text, "true") || !strcmp(text, "on")) nv.i = 1;
        else if (!strcmp(text, "0") || !strcmp(text, "false") || !strcmp(text, "off")) nv.i = 0;
        else return voxa__error(VOXA_EINVAL, "%s: '%s': expected true or false", p->name, text);
        break;
    case VOXA_PARAM_INT: {
        errno = 0;
        long long x = strtoll(text, &end, 10);
        VOXA_FAIL_IF(!*text || *end || errno == ERANGE, VOXA_EINVAL,
                     "%s: '%s': expected a whole number", p->name, text);
        VOXA_CHECK(in_range(p, (double)x, text));
        nv.i = x;
        break;
    }
    case VOXA_PARAM_FLOAT: {
        errno = 0;
        double x = strtod(text, &end);
        VOXA_FAIL_IF(!*text || *end || errno == ERANGE || !isfinite(x), VOXA_EINVAL,
                     "%s: '%s': expected a number", p->name, text);
        VOXA_CHECK(in_range(p, x, text));
        nv.f = x;
        break;
    }
    case VOXA_PARAM_CHOICE: {
        int k = choice_index(p->choices, text);
        VOXA_FAIL_IF(k < 0, VOXA_EINVAL, "%s: '%s': expected %s", p->name, text,
                     choice_list(p->choices, buf, sizeof buf));
        nv.i = k;
        break;
    }
    case VOXA_PARAM_DTYPE: {
        voxa_dtype t;
        char name[32];
        int ok = voxa_dtype_from_name(text, &t) == VOXA_OK;
        if (ok) {
            snprintf(name, sizeof name, "%s", voxa_dtype_name(t));
            ok = choice_index(p->choices, name) >= 0;
        }
        voxa_clear_error();
        VOXA_FAIL_IF(!ok, VOXA_EINVAL, "%s: '%s': expected %s", p->name, text,
                     choice_list(p->choices, buf, sizeof buf));
        nv.i = t;
        break;
    }
    case VOXA_PARAM_INTS:
    case VOXA_PARAM_FLOATS: {
        int integer = p->type == VOXA_PARAM_INTS;
        nv.n = parse_list(text, nv.fv, VOXA_MAXDIM, integer, nv.iv);
        VOXA_FAIL_IF(nv.n < 1, VOXA_EINVAL, "%s: '%s': expected 1 to %d comma-separated %s",
                     p->name, text, VOXA_MAXDIM, integer ? "whole numbers" : "numbers");
        for (int k = 0; k < nv.n; k++) VOXA_CHECK(in_range(p, nv.fv[k], text));
        break;
    }
    case VOXA_PARAM_STRING:
        nv.s = strdup(text);
        VOXA_FAIL_IF(!nv.s, VOXA_ENOMEM, "%s: out of memory", p->name);
        break;
    default:
        return voxa__error(VOXA_EINVAL, "%s: an array parameter is given as a file or an array",
                           p->name);
    }
    value_free(v);
    *v = nv;
    return VOXA_OK;
}

/* ---- typed setters ---------------------------------------------------------------- */

voxa_status voxa_args_set_int(voxa_args *a, const char *name, int64_t x) {
    int i;
    VOXA_CHECK(find(a, name, &i));
    const voxa_param *p = &a->op->params[i];
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)x);
    if (p->type == VOXA_PARAM_FLOAT) return voxa_args_set_float(a, name, (double)x);
    VOXA_FAIL_IF(p->type != VOXA_PARAM_INT && p->type != VOXA_PARAM_FLAG, VOXA_EINVAL,
                 "%s: expected %s, got a whole number", p->name, voxa__param_kind(p));
    if (p->type == VOXA_PARAM_FLAG) snprintf(text, sizeof text, "%d", x != 0);
    return voxa__value_parse(p, text, &a->v[i]);
}

voxa_status voxa_args_set_float(voxa_args *a, const char *name, double x) {
    int i;
    VOXA_CHECK(find(a, name, &i));
    const voxa_param *p = &a->op->params[i];
    VOXA_FAIL_IF(p->type != VOXA_PARAM_FLOAT, VOXA_EINVAL, "%s: expected %s, got a number",
                 p->name, voxa__param_kind(p));
    char text[64];
    snprintf(text, sizeof text, "%.17g", x);
    VOXA_FAIL_IF(!isfinite(x), VOXA_EINVAL, "%s: '%s': expected a finite number", p->name, text);
    VOXA_CHECK(in_range(p, x, text));
    value_free(&a->v[i]);
    a->v[i].set = 1;
    a->v[i].f = x;
    return VOXA_OK;
}

voxa_status voxa_args_set_list(voxa_args *a, const char *name, const double *x, int n) {
    int i;
    VOXA_CHECK(find(a, name, &i));
    const voxa_param *p = &a->op->params[i];
    VOXA_FAIL_IF(p->type != VOXA_PARAM_INTS && p->type != VOXA_PARAM_FLOATS, VOXA_EINVAL,
                 "%s: expected %s, got a list", p->name, voxa__param_kind(p));
    VOXA_FAIL_IF(n < 1 || n > VOXA_MAXDIM, VOXA_EINVAL, "%s: %d values, expected 1 to %d",
                 p->name, n, VOXA_MAXDIM);
    voxa_value nv;
    memset(&nv, 0, sizeof nv);
    nv.set = 1;
    nv.n = n;
    for (int k = 0; k < n; k++) {
        char text[64];
        snprintf(text, sizeof text, "%.17g", x[k]);
        VOXA_FAIL_IF(!isfinite(x[k]), VOXA_EINVAL, "%s: '%s': expected finite numbers", p->name,
                     text);
        VOXA_FAIL_IF(p->type == VOXA_PARAM_INTS && (x[k] != floor(x[k]) || fabs(x[k]) > 9e15),
                     VOXA_EINVAL, "%s: '%s': expected whole numbers", p->name, text);
        VOXA_CHECK(in_range(p, x[k], text));
        nv.fv[k] = x[k];
        nv.iv[k] = (int64_t)x[k];
    }
    value_free(&a->v[i]);
    a->v[i] = nv;
    return VOXA_OK;
}

voxa_status voxa__args_take_array(voxa_args *a, int i, voxa_array *arr, int owned,
                                  const char *const *names, int header_lines,
                                  const char *source) {
    const voxa_param *p = &a->op->params[i];
    VOXA_FAIL_IF(p->type != VOXA_PARAM_ARRAY && p->type != VOXA_PARAM_TABLE, VOXA_EINVAL,
                 "%s: expected %s, got an array", p->name, voxa__param_kind(p));
    VOXA_CHECK(voxa_array_check(arr, p->name));
    if (p->type == VOXA_PARAM_TABLE) {
        VOXA_FAIL_IF(arr->dtype != VOXA_F64 || arr->ndim < 1 || arr->ndim > 2 ||
                         !voxa_array_is_c_contiguous(arr),
                     VOXA_EINVAL, "%s: a table must be a C-contiguous float64 array of 1 or 2 "
                     "dimensions", p->name);
    }
    voxa_value nv;
    memset(&nv, 0, sizeof nv);
    nv.set = 1;
    nv.array = *arr;
    nv.owned = owned;
    nv.header_lines = header_lines;
    if (source) { /* later messages name the file: no silent NULL */
        nv.source = nv.s = strdup(source);
        VOXA_FAIL_IF(!nv.s, VOXA_ENOMEM, "%s: out of memory", p->name);
    }
    if (names) {
        int64_t nc = arr->ndim == 2 ? arr->shape[1] : 1;
        nv.names = calloc((size_t)nc, sizeof *nv.names);
        for (int64_t c = 0; nv.names && c < nc; c++) {
            nv.names[c] = strdup(names[c] ? names[c] : "");
            if (!nv.names[c]) {
                for (int64_t j = 0; j < c; j++) free(nv.names[j]);
                free(nv.names);
                nv.names = NULL;
            }
        }
        if (!nv.names) {
            free((void *)nv.s);
            return voxa__error(VOXA_ENOMEM, "%s: out of memory", p->name);
        }
    }
    value_free(&a->v[i]);
    a->v[i] = nv;
    return VOXA_OK;
}

voxa_status voxa_args_set_array(voxa_args *a, const char *name, const voxa_array *v,
                                const char *const *names) {
    int i;
    VOXA_CHECK(find(a, name, &i));
    VOXA_FAIL_IF(!v, VOXA_EINVAL, "%s: NULL array", name);
    voxa_array view = *v;
    view.owner = NULL;
    return voxa__args_take_array(a, i, &view, 0, names, 0, NULL);
}

const char *voxa__param_kind(const voxa_param *p) {
    switch (p->type) {
    case VOXA_PARAM_FLAG: return "true or false";
    case VOXA_PARAM_INT: return "a whole number";
    case VOXA_PARAM_FLOAT: return "a number";
    case VOXA_PARAM_CHOICE: return "a word";
    case VOXA_PARAM_DTYPE: return "a dtype name";
    case VOXA_PARAM_INTS: return "whole numbers";
    case VOXA_PARAM_FLOATS: return "numbers";
    case VOXA_PARAM_STRING: return "text";
    case VOXA_PARAM_ARRAY: return "an array";
    case VOXA_PARAM_TABLE: return "a table";
    }
    return "?";
}
