/* The pipeline runner: decide which steps are stale, run them in order.
 *
 * Decisions are made for every step before anything runs, from the files
 * on disk and the previous run.json: a step runs when --force is given,
 * when a step it reads reruns, when its output is missing, when one of the
 * files it reads is newer than its output, or when run.json does not record
 * it complete with the same recipe entry (its fingerprint: op, paths and
 * every value given). Otherwise it is skipped, so a stopped run resumes at
 * the first incomplete step. Op steps run through the chunk executor
 * (voxa_stream_plan_make + voxa_stream_run within the memory limit: .npy
 * and .zarr are read and written by blocks; outputs appear only when
 * complete, a killed .zarr output resumes by chunks); measure and preview
 * read their inputs as stores, by slabs. run.json is rewritten atomically
 * before and after each step (a step is recorded complete only once its
 * output is published); report.html at the end. Previews for the report are
 * drawn from the stores (never loading a volume) and redrawn only when
 * their array changed. */
#include "pipeline_internal.h"
#include "op_args.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double stat_time(const struct stat *sb) {
    return (double)sb->st_mtim.tv_sec + 1e-9 * (double)sb->st_mtim.tv_nsec;
}

double voxa__pl_mtime(const char *path) {
    struct stat sb;
    if (stat(path, &sb) != 0) return -1;
    double t = stat_time(&sb);
    if (!S_ISDIR(sb.st_mode)) return t;
    /* A folder (Zarr): its newest top-level entry (the metadata written
     * when the array was completed, or a touched file). */
    DIR *d = opendir(path);
    if (!d) return t;
    struct dirent *e;
    char buf[4096];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(buf, sizeof buf, "%s/%s", path, e->d_name);
        if (stat(buf, &sb) == 0 && stat_time(&sb) > t) t = stat_time(&sb);
    }
    closedir(d);
    return t;
}

/* mkdir -p of the folder holding `path` (or of `path` itself if dir). */
static voxa_status make_dirs(const char *path, int dir) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    if (!dir) {
        char *slash = strrchr(buf, '/');
        if (!slash) return VOXA_OK;
        *slash = '\0';
    }
    for (char *c = buf + 1;; c++) {
        if (*c == '/' || *c == '\0') {
            char keep = *c;
            *c = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return voxa__error(VOXA_EIO, "pipeline: cannot create folder %s: %s", buf,
                                   strerror(errno));
            *c = keep;
            if (!keep) break;
        }
    }
    return VOXA_OK;
}

/* Files a step reads: its dependencies and file-valued parameters. */
static const char *newer_input(const voxa_pipeline *p, const pl_step *s, double out_t) {
    for (int k = 0; k < s->ndeps; k++)
        if (voxa__pl_mtime(p->items[s->deps[k]].path) > out_t) return p->items[s->deps[k]].name;
    for (int k = 0; k < s->nvals; k++) {
        voxa_param_type t = s->op->params[s->vals[k].param].type;
        if ((t == VOXA_PARAM_ARRAY || t == VOXA_PARAM_TABLE) && s->vals[k].item < 0 &&
            voxa__pl_mtime(s->vals[k].text) > out_t)
            return s->op->params[s->vals[k].param].name;
    }
    return NULL;
}

static void decide(voxa_pipeline *p, pl_step *s, int force) {
    s->will_run = 1;
    if (force) {
        snprintf(s->why, sizeof s->why, "forced");
        return;
    }
    for (int k = 0; k < s->ndeps; k++) {
        int from = p->items[s->deps[k]].step;
        if (from >= 0 && p->steps[from].will_run) {
            snprintf(s->why, sizeof s->why, "'%s' reruns", p->steps[from].name);
            return;
        }
    }
    double out_t = voxa__pl_mtime(p->items[s->output].path);
    if (out_t < 0) {
        snprintf(s->why, sizeof s->why, "no output yet");
        return;
    }
    const char *newer = newer_input(p, s, out_t);
    if (newer) {
        snprintf(s->why, sizeof s->why, "'%s' is newer than the output", newer);
        return;
    }
    char *prev = voxa__pl_previous_fingerprint(p, s->name);
    int same = prev && !strcmp(prev, s->fingerprint);
    snprintf(s->why, sizeof s->why, "%s",
             !prev ? "not recorded complete in run.json" : "the recipe entry changed");
    free(prev);
    if (same) {
        s->will_run = 0;
        snprintf(s->why, sizeof s->why, "up to date");
    }
}

/* Arguments of an op step, every file-valued parameter read now. */
static voxa_status op_args(const pl_step *s, voxa_args *a) {
    const voxa_op *op = s->op;
    VOXA_CHECK(voxa_args_init(a, op));
    for (int k = 0; k < s->nvals; k++)
        for (int j = 0; j < op->nparams; j++)
            if (j != s->vals[k].param && op->params[j].oneof && op->params[s->vals[k].param].oneof &&
                !strcmp(op->params[j].oneof, op->params[s->vals[k].param].oneof))
                voxa_args_clear(a, op->params[j].name);
    for (int k = 0; k < s->nvals; k++)
        VOXA_CHECK(voxa_args_parse(a, op->params[s->vals[k].param].name, s->vals[k].text));
    return VOXA_OK;
}

/* Storage chunks (Zarr) that divide the blocks, as the CLI chooses them. */
static void chunks_for(const voxa_stream_plan *pl, int64_t *chunks) {
    for (int d = 0; d < pl->ndim; d++) {
        int64_t k = 1;
        while (pl->block[d] / k > 512 && k < pl->block[d]) k++;
        while (pl->block[d] % k && pl->block[d] / k > 64) k++;
        chunks[d] = pl->block[d] % k ? 512 : pl->block[d] / k;
    }
}

static voxa_status plan_op(const voxa_pipeline *p, pl_step *s, const voxa_args *a,
                           voxa_store *in, voxa_stream_options *so) {
    so->mem_limit = p->mem_limit > 0 ? p->mem_limit : (int64_t)1 << 30;
    voxa_array meta;
    if (in) {
        meta = voxa_store_meta(in);
        VOXA_CHECK(voxa_op_check(a, &meta));
    } else {
        VOXA_CHECK(voxa_op_check(a, NULL));
    }
    VOXA_CHECK(voxa_stream_plan_make(a, in, so, &s->plan));
    s->has_plan = 1;
    VOXA_FAIL_IF(s->plan.peak_bytes > so->mem_limit, VOXA_EINVAL,
                 "mem_limit: the plan needs about %.3g MiB, the limit is %.3g MiB%s",
                 (double)s->plan.peak_bytes / 1048576.0, (double)so->mem_limit / 1048576.0,
                 s->plan.whole ? " (this op reads the whole volume)" : "");
    return VOXA_OK;
}

static voxa_status run_op(voxa_pipeline *p, pl_step *s, const voxa_pipeline_options *o) {
    voxa_args a;
    voxa_store *in = NULL, *out = NULL;
    voxa_stream_options so;
    memset(&so, 0, sizeof so);
    memset(&a, 0, sizeof a);
    so.progress = o->progress;
    voxa_status st = op_args(s, &a);
    if (st == VOXA_OK && s->input >= 0) st = voxa_store_open(p->items[s->input].path, &in);
    if (st == VOXA_OK) st = plan_op(p, s, &a, in, &so);
    const char *path = p->items[s->output].path;
    int64_t chunks[VOXA_MAXDIM];
    if (st == VOXA_OK) {
        chunks_for(&s->plan, chunks);
        st = make_dirs(path, 0);
    }
    if (st == VOXA_OK)
        st = voxa_store_create(path, s->plan.out_dtype, s->plan.ndim, s->plan.shape, chunks, &out);
    double sp[VOXA_MAXDIM];
    if (st == VOXA_OK && in && s->op->flags & VOXA_OP_SAME_SHAPE &&
        voxa_store_spacing(in, sp) == VOXA_OK)
        st = voxa_store_set_spacing(out, sp);
    if (st == VOXA_OK) voxa_clear_error(); /* an input without spacing */
    if (st == VOXA_OK) st = voxa_stream_run(&a, in, out, &so, &s->count);
    if (st == VOXA_OK) st = voxa_store_commit(out);
    voxa_store_close(out);
    voxa_store_close(in);
    voxa_args_free(&a);
    return st;
}

static voxa_status run_table(voxa_pipeline *p, pl_step *s, const voxa_pipeline_options *o) {
    voxa_store *as = NULL, *bs = NULL;
    voxa_status st = VOXA_OK;
    const char *path = p->items[s->output].path;
    voxa_measure_table t = {0};
    voxa_array rgb = {0};
    int64_t mem = p->mem_limit > 0 ? p->mem_limit : 0;
    if (s->a_item >= 0) st = voxa_store_open(p->items[s->a_item].path, &as);
    if (st == VOXA_OK && s->b_item >= 0) st = voxa_store_open(p->items[s->b_item].path, &bs);
    if (st == VOXA_OK) st = make_dirs(path, 0);
    voxa_dtype dt;
    int nd = 0;
    int64_t shape[VOXA_MAXDIM];
    double sp[VOXA_MAXDIM];
    if (st == VOXA_OK) voxa_store_info(as ? as : bs, &dt, &nd, shape);
    if (st == VOXA_OK && s->nspacing) {
        VOXA_GOTO_IF(s->nspacing != 1 && s->nspacing != nd, VOXA_EINVAL,
                     "spacing: %d values for a %d-D input", s->nspacing, nd);
        for (int d = 0; d < nd; d++) sp[d] = s->spacing[s->nspacing == 1 ? 0 : d];
    }
    if (st == VOXA_OK && s->kind == PL_MEASURE) {
        st = voxa_measure_store_with(as, bs, s->nspacing ? sp : NULL, mem,
                                     voxa_measure_flags_for(s->properties), o->progress, &t);
        if (st == VOXA_OK) st = voxa_measure_write_csv(&t, s->properties, path);
        s->count = t.n;
    } else if (st == VOXA_OK) {
        VOXA_GOTO_IF(s->npoint && s->npoint != nd, VOXA_EINVAL,
                     "point: %d values for a %d-D input", s->npoint, nd);
        voxa_preview_options po = {0};
        po.spacing = s->nspacing ? sp : NULL;
        po.point = s->npoint ? s->point : NULL;
        po.lo_pct = s->npct ? s->pct[0] : 0;
        po.hi_pct = s->npct ? s->pct[1] : 0;
        po.mem_limit = mem;
        po.progress = o->progress;
        st = voxa_preview(as, bs, &po, &rgb);
        if (st == VOXA_OK) st = voxa_png_write(path, &rgb);
    }
done:
    voxa_measure_table_free(&t);
    voxa_array_free(&rgb);
    voxa_store_close(as);
    voxa_store_close(bs);
    return st;
}

/* The report's picture of item `it`: previews/<name>.png, redrawn when the
 * array is newer. NULL (no picture) for arrays not 2-D/3-D or on failure:
 * a preview is an extra, never a reason to fail the run. */
static char *preview_of(const voxa_pipeline *p, const pl_item *it) {
    if (!it->is_array) return NULL;
    char rel[600];
    snprintf(rel, sizeof rel, "previews/%s.png", it->name);
    char *png = voxa__pl_join(p->out_dir, rel);
    if (!png) return NULL;
    double t = voxa__pl_mtime(png), src = voxa__pl_mtime(it->path);
    if (src < 0) {
        free(png);
        return NULL;
    }
    if (t >= src) return png;
    voxa_store *s = NULL;
    voxa_array rgb = {0};
    voxa_status st = voxa_store_open(it->path, &s);
    voxa_dtype dt;
    int nd = 0;
    int64_t shape[VOXA_MAXDIM];
    if (st == VOXA_OK) voxa_store_info(s, &dt, &nd, shape);
    if (st == VOXA_OK && (nd == 2 || nd == 3)) {
        voxa_preview_options po = {0};
        po.mem_limit = p->mem_limit > 0 ? p->mem_limit : 0;
        int labels = it->labels && dt != VOXA_BOOL && dt != VOXA_F32 && dt != VOXA_F64;
        st = make_dirs(png, 0);
        if (st == VOXA_OK) st = voxa_preview(labels ? NULL : s, labels ? s : NULL, &po, &rgb);
        if (st == VOXA_OK) st = voxa_png_write(png, &rgb);
    } else {
        st = VOXA_EUNSUPPORTED;
    }
    voxa_array_free(&rgb);
    voxa_store_close(s);
    voxa_clear_error();
    if (st != VOXA_OK) {
        free(png);
        return NULL;
    }
    return png;
}

static voxa_status run_step(voxa_pipeline *p, pl_step *s, const voxa_pipeline_options *o) {
    voxa_status st = s->kind == PL_OP ? run_op(p, s, o) : run_table(p, s, o);
    if (st != VOXA_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", voxa_last_error());
        return voxa__error(st, "step '%s' (%s): %s", s->name,
                           s->op ? s->op->name : s->kind == PL_MEASURE ? "measure" : "preview",
                           msg);
    }
    return VOXA_OK;
}

static void report_previews(voxa_pipeline *p, pl_step *s) {
    if (!p->want_previews || !p->want_report) return;
    if (s->kind == PL_OP) {
        free(s->preview_in);
        free(s->preview_out);
        s->preview_in = s->input >= 0 ? preview_of(p, &p->items[s->input]) : NULL;
        s->preview_out = preview_of(p, &p->items[s->output]);
    }
}

voxa_status voxa_pipeline_run(voxa_pipeline *p, const voxa_pipeline_options *opt) {
    VOXA_FAIL_IF(!p, VOXA_EINVAL, "pipeline: NULL pipeline");
    voxa_pipeline_options o;
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    if (o.mem_limit > 0) p->mem_limit = o.mem_limit;
    for (int i = 0; i < p->nsteps; i++) {
        p->steps[i].state = 0;
        p->steps[i].seconds = 0;
        p->steps[i].has_plan = 0;
    }
    for (int k = 0; k < p->nsteps; k++) decide(p, &p->steps[p->order[k]], o.force);
    voxa_status st = VOXA_OK;
    if (o.dry_run) {
        /* Plans for the steps whose inputs exist now. */
        for (int k = 0; k < p->nsteps; k++) {
            pl_step *s = &p->steps[p->order[k]];
            if (s->kind != PL_OP || !s->will_run) continue;
            if (s->input >= 0 && p->items[s->input].step >= 0 &&
                p->steps[p->items[s->input].step].will_run)
                continue;
            voxa_args a;
            voxa_store *in = NULL;
            voxa_stream_options so;
            memset(&so, 0, sizeof so);
            memset(&a, 0, sizeof a);
            int ready = 1;
            for (int j = 0; j < s->ndeps; j++) {
                int from = p->items[s->deps[j]].step;
                ready &= from < 0 || !p->steps[from].will_run;
            }
            if (ready && op_args(s, &a) == VOXA_OK &&
                (s->input < 0 || voxa_store_open(p->items[s->input].path, &in) == VOXA_OK))
                plan_op(p, s, &a, in, &so);
            voxa_store_close(in);
            voxa_args_free(&a);
            voxa_clear_error();
        }
        p->status = 2;
        return VOXA_OK;
    }
    p->started = now();
    p->status = 0;
    VOXA_CHECK(make_dirs(p->out_dir, 1));
    for (int k = 0; k < p->nsteps && st == VOXA_OK; k++) {
        pl_step *s = &p->steps[p->order[k]];
        const char *opname = s->op ? s->op->name : s->kind == PL_MEASURE ? "measure" : "preview";
        if (o.on_step && o.on_step(k, p->nsteps, s->name, opname, s->will_run ? "run" : "skip", 0,
                                   o.user)) {
            st = voxa__error(VOXA_ECANCELLED, "pipeline: cancelled before step '%s'", s->name);
            break;
        }
        if (!s->will_run) {
            s->state = 2;
            report_previews(p, s);
            continue;
        }
        s->state = 3; /* running: recorded so, its old record no longer counts */
        st = voxa__pl_write_runlog(p);
        if (st != VOXA_OK) break;
        double t0 = now();
        st = run_step(p, s, &o);
        s->seconds = now() - t0;
        s->state = st == VOXA_OK ? 1 : -1;
        if (st != VOXA_OK) {
            free(s->error);
            s->error = strdup(voxa_last_error());
        }
        if (st == VOXA_OK) report_previews(p, s);
        if (st == VOXA_OK && o.on_step &&
            o.on_step(k, p->nsteps, s->name, opname, "done", s->seconds, o.user))
            st = voxa__error(VOXA_ECANCELLED, "pipeline: cancelled after step '%s'", s->name);
        char keep[1024];
        snprintf(keep, sizeof keep, "%s", voxa_last_error());
        voxa_status w = voxa__pl_write_runlog(p);
        if (st == VOXA_OK) st = w;
        else voxa__error(st, "%s", keep);
    }
    p->seconds = now() - p->started;
    p->status = st == VOXA_OK ? 1 : -1;
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", voxa_last_error());
    voxa_status w = voxa__pl_write_runlog(p);
    if (w == VOXA_OK && p->want_report) w = voxa__pl_write_report(p);
    if (st != VOXA_OK) return voxa__error(st, "%s", keep);
    return w;
}

voxa_status voxa_pipeline_plan_text(const voxa_pipeline *p, char *buf, size_t n) {
    VOXA_FAIL_IF(!p || !buf || n == 0, VOXA_EINVAL, "pipeline: NULL argument");
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < p->nsteps && len < n; k++) {
        const pl_step *s = &p->steps[p->order[k]];
        len += (size_t)snprintf(buf + len, n - len, "%d. %s (%s) -> %s: %s (%s)\n", k + 1,
                                s->name,
                                s->op ? s->op->name : s->kind == PL_MEASURE ? "measure" : "preview",
                                p->items[s->output].path, s->will_run ? "run" : "skip", s->why);
        if (s->has_plan && len < n) {
            char plan[1024];
            if (voxa_stream_plan_text(&s->plan, plan, sizeof plan) == VOXA_OK) {
                for (char *line = strtok(plan, "\n"); line && len < n; line = strtok(NULL, "\n"))
                    len += (size_t)snprintf(buf + len, n - len, "     %s\n", line);
            }
        }
    }
    return VOXA_OK;
}

const char *voxa_pipeline_path(const voxa_pipeline *p, const char *which) {
    if (!p || !which) return NULL;
    if (!strcmp(which, "run.json")) return p->run_json;
    if (!strcmp(which, "report")) return p->report;
    if (!strcmp(which, "output_dir")) return p->out_dir;
    return NULL;
}

int voxa_pipeline_nsteps(const voxa_pipeline *p) { return p ? p->nsteps : 0; }

const char *voxa_pipeline_step(const voxa_pipeline *p, int i, const char *what) {
    if (!p || i < 0 || i >= p->nsteps || !what) return NULL;
    const pl_step *s = &p->steps[p->order[i]];
    if (!strcmp(what, "name")) return s->name;
    if (!strcmp(what, "op")) return s->op ? s->op->name : s->kind == PL_MEASURE ? "measure" : "preview";
    if (!strcmp(what, "output")) return p->items[s->output].path;
    if (!strcmp(what, "state"))
        return s->state == 1 ? "done" : s->state == 2 ? "skipped" : s->state == -1 ? "failed"
               : s->state == 3 ? "running" : "pending";
    if (!strcmp(what, "why")) return s->why;
    return NULL;
}
