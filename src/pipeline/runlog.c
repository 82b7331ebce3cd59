/* run.json: what a pipeline run did, written atomically (cJSON, then a
 * temporary file renamed over the old one) before and after every step, so
 * that a run killed at any moment leaves a valid record of the steps that
 * completed. It holds the voxa version, the recipe, the inputs, and per
 * step its op, state, the reason it ran or was skipped, every parameter
 * after defaults (typed as JSON), the files it read and wrote, its timing,
 * its count (label: objects; measure: rows) and its block plan. The next run
 * reads back the fingerprints of the steps recorded complete to decide what
 * to skip. Schema: docs/pipeline.md. */
#include "pipeline_internal.h"
#include "io/atomic.h"
#include "op_args.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *op_name(const pl_step *s) {
    return s->op ? s->op->name : s->kind == PL_MEASURE ? "measure" : "preview";
}

static const char *state_name(int st) {
    return st == 1 ? "done" : st == 2 ? "skipped" : st == -1 ? "failed" : st == 3 ? "running"
                                                                                  : "pending";
}

static cJSON *value_json(const voxa_param *pr, const voxa_value *v) {
    char buf[64];
    switch (pr->type) {
    case VOXA_PARAM_FLAG: return cJSON_CreateBool(v->i != 0);
    case VOXA_PARAM_INT: return cJSON_CreateNumber((double)v->i);
    case VOXA_PARAM_FLOAT: return cJSON_CreateNumber(v->f);
    case VOXA_PARAM_CHOICE: return cJSON_CreateString(voxa__choice_word(pr, v->i, buf, sizeof buf));
    case VOXA_PARAM_DTYPE: return cJSON_CreateString(voxa_dtype_name((voxa_dtype)v->i));
    case VOXA_PARAM_INTS:
    case VOXA_PARAM_FLOATS: {
        cJSON *a = cJSON_CreateArray();
        for (int k = 0; a && k < v->n; k++)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(pr->type == VOXA_PARAM_INTS
                                                           ? (double)v->iv[k] : v->fv[k]));
        return a;
    }
    case VOXA_PARAM_STRING: return cJSON_CreateString(v->s ? v->s : "");
    default: return cJSON_CreateNull();
    }
}

/* Every parameter of an op step after defaults (a given member of an
 * exclusive group replaces the group's default). */
static cJSON *op_params_json(const pl_step *s) {
    const voxa_op *op = s->op;
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < op->nparams; i++) {
        const voxa_param *pr = &op->params[i];
        if (pr->flags & (VOXA_PARAM_HIDDEN | VOXA_PARAM_OUTPUT)) continue;
        const char *text = NULL;
        int given = 0, group_given = 0;
        for (int k = 0; k < s->nvals; k++) {
            const voxa_param *q = &op->params[s->vals[k].param];
            if (s->vals[k].param == i) {
                text = s->vals[k].text;
                given = 1;
            } else if (pr->oneof && q->oneof && !strcmp(pr->oneof, q->oneof)) {
                group_given = 1;
            }
        }
        if (!given && (group_given || !pr->def)) continue;
        if (!given) text = pr->def;
        if (pr->type == VOXA_PARAM_ARRAY || pr->type == VOXA_PARAM_TABLE) {
            cJSON_AddStringToObject(o, pr->name, text);
            continue;
        }
        voxa_value v;
        memset(&v, 0, sizeof v);
        if (voxa__value_parse(pr, text, &v) == VOXA_OK)
            cJSON_AddItemToObject(o, pr->name, value_json(pr, &v));
        else
            cJSON_AddStringToObject(o, pr->name, text);
        free((void *)v.s);
    }
    voxa_clear_error();
    return o;
}

static cJSON *doubles(const double *v, int n) {
    return cJSON_CreateDoubleArray(v, n);
}

static cJSON *table_params_json(const voxa_pipeline *p, const pl_step *s) {
    cJSON *o = cJSON_CreateObject();
    int m = s->kind == PL_MEASURE;
    if (s->a_item >= 0) cJSON_AddStringToObject(o, m ? "labels" : "image", p->items[s->a_item].path);
    if (s->b_item >= 0) cJSON_AddStringToObject(o, m ? "intensity" : "labels", p->items[s->b_item].path);
    if (s->nspacing) cJSON_AddItemToObject(o, "spacing", doubles(s->spacing, s->nspacing));
    if (m)
        cJSON_AddStringToObject(o, "properties", s->properties ? s->properties : "default");
    if (s->npoint) {
        double pt[VOXA_MAXDIM];
        for (int k = 0; k < s->npoint; k++) pt[k] = (double)s->point[k];
        cJSON_AddItemToObject(o, "point", doubles(pt, s->npoint));
    }
    if (!m) {
        double pc[2] = {s->npct ? s->pct[0] : 0.5, s->npct ? s->pct[1] : 99.5};
        cJSON_AddItemToObject(o, "percentiles", doubles(pc, 2));
    }
    return o;
}

static cJSON *plan_json(const pl_step *s) {
    if (!s->has_plan) return cJSON_CreateNull();
    const voxa_stream_plan *pl = &s->plan;
    cJSON *o = cJSON_CreateObject();
    double b[VOXA_MAXDIM], sh[VOXA_MAXDIM];
    for (int d = 0; d < pl->ndim; d++) {
        b[d] = (double)pl->block[d];
        sh[d] = (double)pl->shape[d];
    }
    cJSON_AddItemToObject(o, "shape", doubles(sh, pl->ndim));
    cJSON_AddStringToObject(o, "dtype", voxa_dtype_name(pl->out_dtype));
    cJSON_AddItemToObject(o, "block", doubles(b, pl->ndim));
    cJSON_AddNumberToObject(o, "blocks", (double)pl->nblocks);
    cJSON_AddNumberToObject(o, "peak_bytes", (double)pl->peak_bytes);
    cJSON_AddStringToObject(o, "kind", pl->whole ? "whole" : pl->global ? "merge" : "local");
    return o;
}

static voxa_status write_text(const char *path, const char *text) {
    voxa__atomic w;
    FILE *f = NULL;
    VOXA_CHECK(voxa__atomic_begin(&w, path));
    voxa_status st = voxa__atomic_fopen(&w, &f);
    if (st == VOXA_OK && fwrite(text, 1, strlen(text), f) != strlen(text))
        st = voxa__error(VOXA_EIO, "%s: write failed", path);
    return voxa__atomic_end(&w, f, st);
}

voxa_status voxa__pl_write_runlog(const voxa_pipeline *p) {
    cJSON *root = cJSON_CreateObject();
    VOXA_FAIL_IF(!root, VOXA_ENOMEM, "run.json: out of memory");
    cJSON_AddStringToObject(root, "voxa_version", voxa_version());
    cJSON_AddStringToObject(root, "recipe", p->file);
    cJSON_AddStringToObject(root, "title", p->title);
    cJSON_AddStringToObject(root, "output_dir", p->out_dir);
    cJSON_AddStringToObject(root, "status", p->status == 1    ? "complete"
                                            : p->status == -1 ? "failed"
                                                              : "running");
    char when[64];
    time_t t0 = (time_t)p->started;
    struct tm tm;
    gmtime_r(&t0, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cJSON_AddStringToObject(root, "started", when);
    cJSON_AddNumberToObject(root, "seconds", p->seconds);
    cJSON_AddNumberToObject(root, "mem_limit", (double)(p->mem_limit > 0 ? p->mem_limit : (int64_t)1 << 30));
    cJSON *ins = cJSON_AddObjectToObject(root, "inputs");
    for (int i = 0; i < p->nitems; i++)
        if (p->items[i].step < 0) cJSON_AddStringToObject(ins, p->items[i].name, p->items[i].path);
    cJSON *steps = cJSON_AddArrayToObject(root, "steps");
    for (int k = 0; k < p->nsteps; k++) {
        const pl_step *s = &p->steps[p->order[k]];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(steps, o);
        cJSON_AddStringToObject(o, "name", s->name);
        cJSON_AddStringToObject(o, "op", op_name(s));
        cJSON_AddStringToObject(o, "state", state_name(s->state));
        cJSON_AddStringToObject(o, "why", s->why);
        /* complete: published by this run, or checked up to date at its start */
        cJSON_AddBoolToObject(o, "complete",
                              s->state == 1 || s->state == 2 || (s->state == 0 && !s->will_run));
        cJSON_AddStringToObject(o, "fingerprint", s->fingerprint);
        cJSON *reads = cJSON_AddObjectToObject(o, "reads");
        for (int j = 0; j < s->ndeps; j++)
            cJSON_AddStringToObject(reads, p->items[s->deps[j]].name, p->items[s->deps[j]].path);
        cJSON_AddStringToObject(o, "output", p->items[s->output].path);
        cJSON_AddItemToObject(o, "params", s->op ? op_params_json(s) : table_params_json(p, s));
        cJSON_AddNumberToObject(o, "seconds", s->seconds);
        if (s->count >= 0) cJSON_AddNumberToObject(o, "count", (double)s->count);
        else cJSON_AddNullToObject(o, "count");
        cJSON_AddItemToObject(o, "plan", plan_json(s));
        if (s->error) cJSON_AddStringToObject(o, "error", s->error);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    VOXA_FAIL_IF(!text, VOXA_ENOMEM, "run.json: out of memory");
    voxa_status st = write_text(p->run_json, text);
    free(text);
    return st;
}

char *voxa__pl_previous_fingerprint(const voxa_pipeline *p, const char *name) {
    FILE *f = fopen(p->run_json, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 > cap) {
            char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (!nb) break;
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0 && len < (16u << 20));
    fclose(f);
    if (!buf) return NULL;
    buf[len] = '\0';
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    char *res = NULL;
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(root, "steps"), *s;
    cJSON_ArrayForEach(s, steps) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(s, "name");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "complete");
        const cJSON *fp = cJSON_GetObjectItemCaseSensitive(s, "fingerprint");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, name) && cJSON_IsTrue(c) &&
            cJSON_IsString(fp))
            res = strdup(fp->valuestring);
    }
    cJSON_Delete(root);
    return res;
}
