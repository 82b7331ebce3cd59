/* Recipes: from the TOML tree to checked steps in dependency order.
 *
 * A recipe has an optional [pipeline] table (title, output_dir, mem_limit,
 * report, previews), an [inputs] table (name = path) and [[step]] tables.
 * An op step gives `op`, `name`, `input` (a name), `output` (a path) and
 * the op's parameters under their descriptor names; `measure` and `preview`
 * steps have their own keys. Everything is checked here, before anything
 * runs, and each message names the file, line, column and key: unknown
 * tables, steps, ops and keys; missing keys; a value of the wrong TOML type
 * for the parameter's type; a bad value (voxa_args_parse's and the op's own
 * check message, the latter with the input's dtype and shape, known from the
 * input file or from the producing step's voxa_op_output); unknown names;
 * missing input files; cycles (Kahn's algorithm over the name references;
 * the steps left over form the cycle). This file holds the tables, names,
 * order and fingerprints; the keys of each step are read in recipe_steps.c. */
#include "pipeline_internal.h"
#include "op_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

voxa_status voxa__pl_error(const voxa_pipeline *p, int line, int col, const char *fmt, ...) {
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return voxa__error(VOXA_EINVAL, "%s:%d:%d: %s", p->file, line, col, msg);
}

char *voxa__pl_join(const char *base, const char *rel) {
    if (rel[0] == '/' || !base || !*base || !strcmp(base, ".")) return strdup(rel);
    size_t n = strlen(base) + strlen(rel) + 2;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%s", base, rel);
    return s;
}

int voxa__pl_find_item(const voxa_pipeline *p, const char *name) {
    for (int i = 0; i < p->nitems; i++)
        if (!strcmp(p->items[i].name, name)) return i;
    return -1;
}

/* "a, b or c" of the known names, for messages. */
const char *voxa__pl_known_names(const voxa_pipeline *p, char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->nitems && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", p->items[i].name);
    if (!p->nitems) snprintf(buf, n, "none");
    return buf;
}

static int parse_size(const vt_node *v, int64_t *out) {
    if (v->kind == VT_INT) {
        *out = v->i;
        return v->i > 0;
    }
    if (v->kind != VT_STRING) return 0;
    char *end;
    double x = strtod(v->s, &end), scale = 1;
    switch (*end) {
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1048576.0; end++; break;
    case 'g': case 'G': scale = 1073741824.0; end++; break;
    case 't': case 'T': scale = 1099511627776.0; end++; break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end || !(x > 0) || x * scale > 9e18 || end == v->s) return 0;
    *out = (int64_t)(x * scale);
    return *out > 0;
}

static voxa_status settings(voxa_pipeline *p, const vt_node *t) {
    for (int i = 0; t && i < t->n; i++) {
        const vt_node *v = t->items[i];
        const char *k = v->key;
        if (!strcmp(k, "title") || !strcmp(k, "output_dir")) {
            if (v->kind != VT_STRING || !*v->s)
                return voxa__pl_error(p, v->line, v->col, "[pipeline]: key '%s': expected a non-empty "
                            "string, got %s", k, vt_kind_name(v->kind));
            if (!strcmp(k, "title")) {
                free(p->title);
                p->title = strdup(v->s);
            } else {
                free(p->out_dir);
                p->out_dir = voxa__pl_join(p->base, v->s);
            }
        } else if (!strcmp(k, "mem_limit")) {
            if (!parse_size(v, &p->mem_limit))
                return voxa__pl_error(p, v->line, v->col, "[pipeline]: key 'mem_limit': expected a size "
                            "such as \"512M\" or \"2G\" (or a number of bytes)");
        } else if (!strcmp(k, "report") || !strcmp(k, "previews")) {
            if (v->kind != VT_BOOL)
                return voxa__pl_error(p, v->line, v->col, "[pipeline]: key '%s': expected true or false, "
                            "got %s", k, vt_kind_name(v->kind));
            *(!strcmp(k, "report") ? &p->want_report : &p->want_previews) = (int)v->i;
        } else {
            return voxa__pl_error(p, v->key_line, v->key_col, "[pipeline]: unknown key '%s' (expected "
                        "title, output_dir, mem_limit, report, previews)", k);
        }
    }
    return VOXA_OK;
}

/* Dtype and shape of an existing array file (a store's metadata). */
static void input_meta(pl_item *it) {
    const char *dot = strrchr(it->path, '.');
    it->is_array = !(dot && (!strcmp(dot, ".csv") || !strcmp(dot, ".png")));
    voxa_store *st = NULL;
    if (it->is_array && voxa_store_open(it->path, &st) == VOXA_OK) {
        voxa_store_info(st, &it->dtype, &it->ndim, it->shape);
        it->known = 1;
    }
    voxa_store_close(st);
    voxa_clear_error();
}

static voxa_status inputs(voxa_pipeline *p, const vt_node *t) {
    for (int i = 0; t && i < t->n; i++) {
        const vt_node *v = t->items[i];
        if (v->kind != VT_STRING || !*v->s)
            return voxa__pl_error(p, v->line, v->col, "[inputs]: key '%s': expected a path (a string), "
                        "got %s", v->key, vt_kind_name(v->kind));
        VOXA_FAIL_IF(p->nitems >= PL_MAXITEMS, VOXA_EINVAL, "%s: too many inputs", p->file);
        pl_item *it = &p->items[p->nitems++];
        it->name = strdup(v->key);
        it->path = voxa__pl_join(p->base, v->s);
        it->step = -1;
        it->line = v->line;
        VOXA_FAIL_IF(!it->name || !it->path, VOXA_ENOMEM, "pipeline: out of memory");
        struct stat sb;
        if (stat(it->path, &sb) != 0)
            return voxa__pl_error(p, v->line, v->col, "[inputs]: key '%s': missing input '%s'", v->key,
                        it->path);
        input_meta(it);
    }
    return VOXA_OK;
}

/* Names, kinds and outputs of every step (references come after, so a
 * step may name one defined further down). */
static voxa_status declare_steps(voxa_pipeline *p, const vt_node *arr) {
    for (int i = 0; arr && i < arr->n; i++) {
        const vt_node *t = arr->items[i];
        VOXA_FAIL_IF(p->nsteps >= PL_MAXSTEPS, VOXA_EINVAL, "%s: more than %d steps", p->file,
                     PL_MAXSTEPS);
        pl_step *s = &p->steps[p->nsteps++];
        s->line = t->line;
        s->col = t->col;
        s->input = s->a_item = s->b_item = -1;
        s->count = -1;
        char label[32];
        snprintf(label, sizeof label, "#%d", i + 1);
        const char *opname, *name, *out;
        VOXA_CHECK(voxa__pl_get_string(p, t, label, "op", &opname));
        if (!opname) return voxa__pl_error(p, t->line, t->col, "step %s: missing key 'op'", label);
        VOXA_CHECK(voxa__pl_get_string(p, t, label, "name", &name));
        if (!strcmp(opname, "measure")) s->kind = PL_MEASURE;
        else if (!strcmp(opname, "preview")) s->kind = PL_PREVIEW;
        else if (!(s->op = voxa_op_find(opname))) {
            const vt_node *v = vt_get(t, "op");
            char list[600];
            int n;
            const voxa_op *const *ops = voxa_ops(&n);
            size_t len = 0;
            for (int k = 0; k < n && len < sizeof list; k++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s, ", ops[k]->name);
            return voxa__pl_error(p, v->line, v->col, "step %s: unknown op '%s' (expected %smeasure or "
                        "preview)", name ? name : label, opname, list);
        }
        s->name = strdup(name ? name : opname);
        VOXA_FAIL_IF(!s->name, VOXA_ENOMEM, "pipeline: out of memory");
        int dup = voxa__pl_find_item(p, s->name);
        if (dup >= 0)
            return voxa__pl_error(p, t->line, t->col, "step '%s': the name is already used (line %d)%s",
                        s->name, p->items[dup].line, name ? "" : ": give each step a 'name'");
        VOXA_CHECK(voxa__pl_get_string(p, t, s->name, "output", &out));
        char def[512];
        const char *ext = s->kind == PL_MEASURE ? ".csv" : s->kind == PL_PREVIEW ? ".png" : ".npy";
        snprintf(def, sizeof def, "%s%s", s->name, ext);
        pl_item *it = &p->items[p->nitems];
        it->name = strdup(s->name);
        it->path = out ? voxa__pl_join(p->base, out) : voxa__pl_join(p->out_dir, def);
        it->step = p->nsteps - 1;
        it->line = t->line;
        it->is_array = s->kind == PL_OP;
        s->output = p->nitems++; /* counted first: voxa_pipeline_free frees a half-made item */
        VOXA_FAIL_IF(!it->name || !it->path, VOXA_ENOMEM, "pipeline: out of memory");
        if (out && s->kind != PL_OP) {
            size_t len = strlen(out);
            const vt_node *v = vt_get(t, "output");
            if (len < 4 || strcmp(out + len - 4, ext))
                return voxa__pl_error(p, v->line, v->col, "step '%s': key 'output': a %s step writes a "
                            "%s file, got '%s'", s->name, opname, ext, out);
        }
    }
    return VOXA_OK;
}

/* Kahn's algorithm on the items the steps read; leftovers form a cycle. */
static voxa_status order(voxa_pipeline *p) {
    int indeg[PL_MAXSTEPS] = {0}, done[PL_MAXSTEPS] = {0}, n = 0;
    for (int i = 0; i < p->nsteps; i++)
        for (int k = 0; k < p->steps[i].ndeps; k++)
            indeg[i] += p->items[p->steps[i].deps[k]].step >= 0;
    for (int progress = 1; progress;) {
        progress = 0;
        for (int i = 0; i < p->nsteps; i++) {
            if (done[i] || indeg[i]) continue;
            done[i] = progress = 1;
            p->order[n++] = i;
            for (int j = 0; j < p->nsteps; j++)
                for (int k = 0; k < p->steps[j].ndeps; k++)
                    if (p->items[p->steps[j].deps[k]].step == i) indeg[j]--;
        }
    }
    if (n == p->nsteps) return VOXA_OK;
    char list[600];
    size_t len = 0;
    int first = -1;
    for (int i = 0; i < p->nsteps && len < sizeof list; i++)
        if (!done[i]) {
            if (first < 0) first = i;
            len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s' (line %d)",
                                    len ? ", " : "", p->steps[i].name, p->steps[i].line);
        }
    return voxa__pl_error(p, p->steps[first].line, p->steps[first].col,
                "cycle: these steps depend on each other: %s", list);
}

/* The op's own check, with the input's dtype and shape where they are
 * known at load; the output's metadata for the steps after. */
static const char *rel(const voxa_pipeline *p, const char *path) {
    size_t n = strlen(p->base);
    if (strcmp(p->base, ".") && !strncmp(path, p->base, n) && path[n] == '/') return path + n + 1;
    return path;
}

static voxa_status fingerprint(voxa_pipeline *p, pl_step *s) {
    size_t cap = 256;
    for (int k = 0; k < s->nvals; k++) cap += strlen(s->vals[k].text) + 64;
    cap += strlen(p->items[s->output].path) + (s->properties ? strlen(s->properties) : 0) + 256;
    for (int k = 0; k < s->ndeps; k++) cap += strlen(p->items[s->deps[k]].path) + 16;
    char *f = malloc(cap);
    VOXA_FAIL_IF(!f, VOXA_ENOMEM, "pipeline: out of memory");
    size_t len = (size_t)snprintf(f, cap, "op=%s;out=%s;",
                                  s->op ? s->op->name : s->kind == PL_MEASURE ? "measure" : "preview",
                                  rel(p, p->items[s->output].path));
    if (s->input >= 0)
        len += (size_t)snprintf(f + len, cap - len, "in=%s;", rel(p, p->items[s->input].path));
    for (int k = 0; k < s->nvals; k++)
        len += (size_t)snprintf(f + len, cap - len, "%s=%s;", s->op->params[s->vals[k].param].name,
                                rel(p, s->vals[k].text));
    for (int k = 0; k < 2; k++) {
        int it = k ? s->b_item : s->a_item;
        if (it >= 0)
            len += (size_t)snprintf(f + len, cap - len, "%c=%s;", 'a' + k, rel(p, p->items[it].path));
    }
    for (int k = 0; k < s->nspacing; k++)
        len += (size_t)snprintf(f + len, cap - len, "sp%d=%.17g;", k, s->spacing[k]);
    for (int k = 0; k < s->npoint; k++)
        len += (size_t)snprintf(f + len, cap - len, "pt%d=%lld;", k, (long long)s->point[k]);
    for (int k = 0; k < s->npct; k++)
        len += (size_t)snprintf(f + len, cap - len, "pc%d=%.17g;", k, s->pct[k]);
    if (s->properties) snprintf(f + len, cap - len, "props=%s;", s->properties);
    s->fingerprint = f;
    return VOXA_OK;
}

static voxa_status build(voxa_pipeline *p, const vt_node *root) {
    const vt_node *steps = NULL, *settings_t = NULL, *inputs_t = NULL;
    for (int i = 0; i < root->n; i++) {
        const vt_node *v = root->items[i];
        if (!strcmp(v->key, "step") && v->kind == VT_ARRAY && v->of_tables) steps = v;
        else if (!strcmp(v->key, "pipeline") && v->kind == VT_TABLE) settings_t = v;
        else if (!strcmp(v->key, "inputs") && v->kind == VT_TABLE) inputs_t = v;
        else if (v->kind == VT_TABLE || (v->kind == VT_ARRAY && v->of_tables))
            return voxa__pl_error(p, v->key_line, v->key_col, "unknown table '%s' (expected [pipeline], "
                        "[inputs] and [[step]])", v->key);
        else
            return voxa__pl_error(p, v->key_line, v->key_col, "unknown key '%s' outside a table (expected "
                        "[pipeline], [inputs] and [[step]])", v->key);
    }
    if (!steps) return voxa__pl_error(p, 1, 1, "no [[step]]: a recipe needs at least one step");
    VOXA_CHECK(settings(p, settings_t));
    VOXA_CHECK(inputs(p, inputs_t));
    VOXA_CHECK(declare_steps(p, steps));
    for (int i = 0; i < p->nsteps; i++) {
        pl_step *s = &p->steps[i];
        const vt_node *t = steps->items[i];
        if (s->kind != PL_OP) {
            VOXA_CHECK(voxa__pl_table_step(p, s, t));
            continue;
        }
        if (s->op->ninputs > 0) VOXA_CHECK(voxa__pl_ref(p, t, s->name, "input", 1, &s->input));
        else if (vt_get(t, "input"))
            return voxa__pl_error(p, vt_get(t, "input")->key_line, vt_get(t, "input")->key_col,
                        "step '%s': op '%s' takes no input", s->name, s->op->name);
        if (s->input >= 0) voxa__pl_add_dep(s, s->input);
        VOXA_CHECK(voxa__pl_op_params(p, s, t));
    }
    for (int i = 0; i < p->nsteps; i++)
        for (int k = 0; k < p->steps[i].ndeps; k++)
            if (p->items[p->steps[i].deps[k]].step == i)
                return voxa__pl_error(p, p->steps[i].line, p->steps[i].col,
                            "cycle: step '%s' reads its own output", p->steps[i].name);
    VOXA_CHECK(order(p));
    for (int k = 0; k < p->nsteps; k++) {
        pl_step *s = &p->steps[p->order[k]];
        if (s->input >= 0 && !p->items[s->input].is_array)
            return voxa__pl_error(p, s->line, s->col, "step '%s': input '%s' is not an array", s->name,
                        p->items[s->input].name);
        if (s->kind == PL_OP) VOXA_CHECK(voxa__pl_check_op(p, s, steps->items[p->order[k]]));
        VOXA_CHECK(fingerprint(p, s));
    }
    for (int i = 0; i < p->nitems; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(p->items[i].path, p->items[j].path) && p->items[i].step >= 0)
                return voxa__pl_error(p, p->items[i].line, 1, "step '%s': output '%s' is also %s '%s'",
                            p->items[i].name, p->items[i].path,
                            p->items[j].step >= 0 ? "the output of" : "the input", p->items[j].name);
    return VOXA_OK;
}

void voxa_pipeline_free(voxa_pipeline *p) {
    if (!p) return;
    for (int i = 0; i < p->nitems; i++) {
        free(p->items[i].name);
        free(p->items[i].path);
    }
    for (int i = 0; i < p->nsteps; i++) {
        pl_step *s = &p->steps[i];
        for (int k = 0; k < s->nvals; k++) free(s->vals[k].text);
        free(s->name);
        free(s->properties);
        free(s->fingerprint);
        free(s->preview_in);
        free(s->preview_out);
        free(s->error);
    }
    free(p->file);
    free(p->base);
    free(p->title);
    free(p->out_dir);
    free(p->run_json);
    free(p->report);
    free(p);
}

voxa_status voxa_pipeline_load_text(const char *text, size_t len, const char *name,
                                    const char *base_dir, voxa_pipeline **out) {
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "pipeline: NULL argument");
    *out = NULL;
    VOXA_FAIL_IF(!text, VOXA_EINVAL, "pipeline: NULL recipe text");
    voxa_pipeline *p = calloc(1, sizeof *p);
    VOXA_FAIL_IF(!p, VOXA_ENOMEM, "pipeline: out of memory");
    voxa_status st = VOXA_OK;
    vt_node *root = NULL;
    p->file = strdup(name ? name : "recipe");
    p->base = strdup(base_dir && *base_dir ? base_dir : ".");
    p->out_dir = voxa__pl_join(p->base, "out");
    p->title = strdup(name ? name : "recipe");
    p->want_report = p->want_previews = 1;
    VOXA_GOTO_IF(!p->file || !p->base || !p->out_dir || !p->title, VOXA_ENOMEM,
                 "pipeline: out of memory");
    char err[512];
    if (memchr(text, '\0', len)) {
        st = voxa__error(VOXA_EINVAL, "%s: the recipe holds a NUL byte", p->file);
        goto done;
    }
    int parsed = vt_parse(text, len, &root, err, sizeof err);
    if (parsed < 0) {
        st = voxa__error(parsed == -2 ? VOXA_ENOMEM : VOXA_EINVAL, "%s:%s", p->file, err);
        goto done;
    }
    st = build(p, root);
    if (st == VOXA_OK) {
        p->run_json = voxa__pl_join(p->out_dir, "run.json");
        p->report = voxa__pl_join(p->out_dir, "report.html");
        VOXA_GOTO_IF(!p->run_json || !p->report, VOXA_ENOMEM, "pipeline: out of memory");
    }
done:
    vt_free(root);
    if (st != VOXA_OK) voxa_pipeline_free(p);
    else *out = p;
    return st;
}

voxa_status voxa_pipeline_load(const char *path, voxa_pipeline **out) {
    VOXA_FAIL_IF(!path || !out, VOXA_EINVAL, "pipeline: NULL argument");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    VOXA_FAIL_IF(!f, VOXA_EIO, "%s: cannot open the recipe", path);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    voxa_status st = VOXA_OK;
    for (;;) {
        if (len + 4096 > cap) {
            char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
            VOXA_GOTO_IF(!nb, VOXA_ENOMEM, "%s: out of memory", path);
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
        VOXA_GOTO_IF(len > (64u << 20), VOXA_EINVAL, "%s: a recipe over 64 MiB", path);
    }
    VOXA_GOTO_IF(ferror(f), VOXA_EIO, "%s: cannot read the recipe", path);
    char *dir = strdup(path);
    VOXA_GOTO_IF(!dir, VOXA_ENOMEM, "%s: out of memory", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    st = voxa_pipeline_load_text(buf, len, path, slash ? dir : ".", out);
    free(dir);
done:
    free(buf);
    fclose(f);
    return st;
}
