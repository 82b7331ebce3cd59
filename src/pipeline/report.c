/* report.html: one self-contained page about a pipeline run.
 *
 * Everything is inside the file, so it opens offline and can be mailed:
 * PNG previews as base64 data: URIs, CSS inline, the histogram as inline SVG
 * (no xmlns needed in HTML5), no scripts, fonts or links to anything
 * outside. It shows the run (title, version, when, total time, status), the
 * steps with their state, reason, time and count, timings as bars, for each
 * op step the preview of its input beside the preview of its output, the
 * pictures of preview steps, and for each measure step the object count,
 * volume statistics and a histogram of the volumes (the `area` column of
 * its CSV, else `num_pixels`). Text from the recipe is HTML-escaped. */
#include "pipeline_internal.h"
#include "io/atomic.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_grow(sbuf *b, size_t more) {
    if (b->oom || b->len + more + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + more + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->oom = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sb_grow(b, (size_t)n);
    if (b->oom) return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* Text with &, <, >, " escaped. */
static void sb_text(sbuf *b, const char *t) {
    for (; t && *t; t++) {
        switch (*t) {
        case '&': sb_printf(b, "&amp;"); break;
        case '<': sb_printf(b, "&lt;"); break;
        case '>': sb_printf(b, "&gt;"); break;
        case '"': sb_printf(b, "&quot;"); break;
        default: sb_printf(b, "%c", *t);
        }
    }
}

/* <img> of a PNG file as a data: URI; a note if it cannot be read. */
static void sb_png(sbuf *b, const char *path, const char *alt) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) {
        sb_printf(b, "<div class=\"none\">no preview</div>");
        return;
    }
    sb_printf(b, "<img alt=\"");
    sb_text(b, alt);
    sb_printf(b, "\" src=\"data:image/png;base64,");
    unsigned char in[3 * 4096];
    size_t n;
    while ((n = fread(in, 1, sizeof in, f)) > 0) {
        sb_grow(b, (n + 2) / 3 * 4);
        if (b->oom) break;
        for (size_t i = 0; i < n; i += 3) {
            uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
                         (i + 2 < n ? in[i + 2] : 0);
            b->s[b->len++] = b64[v >> 18 & 63];
            b->s[b->len++] = b64[v >> 12 & 63];
            b->s[b->len++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
            b->s[b->len++] = i + 2 < n ? b64[v & 63] : '=';
        }
        if (n < sizeof in) break;
    }
    fclose(f);
    sb_printf(b, "\">");
}

static const char *op_name(const pl_step *s) {
    return s->op ? s->op->name : s->kind == PL_MEASURE ? "measure" : "preview";
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Object count, volume statistics and an SVG histogram of one CSV. */
static void measure_section(sbuf *b, const char *csv) {
    voxa_table t = {0};
    voxa_status st = voxa_csv_read(csv, &t);
    if (st == VOXA_ENOMEM) { /* the report fails: a page without the table would look complete */
        b->oom = 1;
        return;
    }
    if (st != VOXA_OK) {
        voxa_clear_error();
        sb_printf(b, "<p class=\"none\">table not readable</p>");
        return;
    }
    int col = voxa_table_column(&t, "area");
    if (col < 0) col = voxa_table_column(&t, "num_pixels");
    sb_printf(b, "<p><b>%lld objects</b>", (long long)t.nrows);
    if (col < 0 || t.nrows == 0) {
        sb_printf(b, "</p>");
        voxa_table_free(&t);
        return;
    }
    double *v = malloc((size_t)t.nrows * sizeof *v);
    if (!v) {
        sb_printf(b, "</p>");
        voxa_table_free(&t);
        return;
    }
    double sum = 0;
    for (int64_t r = 0; r < t.nrows; r++) sum += v[r] = t.values[r * t.ncols + col];
    qsort(v, (size_t)t.nrows, sizeof *v, cmp_double);
    double lo = v[0], hi = v[t.nrows - 1], med = v[t.nrows / 2];
    if (t.nrows % 2 == 0) med = 0.5 * (v[t.nrows / 2 - 1] + v[t.nrows / 2]);
    sb_printf(b, "; %s: min %.6g, median %.6g, mean %.6g, max %.6g</p>\n", t.names[col], lo, med,
              sum / (double)t.nrows, hi);
    enum { BINS = 24, W = 480, H = 160 };
    int64_t count[BINS] = {0}, top = 1;
    double width = hi > lo ? (hi - lo) / BINS : 1;
    for (int64_t r = 0; r < t.nrows; r++) {
        int k = hi > lo ? (int)((v[r] - lo) / width) : 0;
        if (k >= BINS) k = BINS - 1;
        if (k < 0) k = 0;
        if (++count[k] > top) top = count[k];
    }
    sb_printf(b, "<svg class=\"hist\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "role=\"img\" aria-label=\"histogram of %s\">\n",
              W, H + 30, W, H + 30, t.names[col]);
    for (int k = 0; k < BINS; k++) {
        double h = (double)H * (double)count[k] / (double)top;
        sb_printf(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\"><title>%.6g - %.6g: "
                     "%lld</title></rect>\n",
                  k * (W / BINS) + 1, (double)H - h, W / BINS - 2, h, lo + k * width,
                  lo + (k + 1) * width, (long long)count[k]);
    }
    sb_printf(b, "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>"
                 "<text x=\"0\" y=\"%d\">%.6g</text><text x=\"%d\" y=\"%d\" "
                 "text-anchor=\"end\">%.6g</text><text x=\"%d\" y=\"%d\" text-anchor=\"middle\">"
                 "%s (%lld objects, tallest bar %lld)</text></svg>\n",
              H, W, H, H + 14, lo, W, H + 14, hi, W / 2, H + 28, t.names[col],
              (long long)t.nrows, (long long)top);
    free(v);
    voxa_table_free(&t);
}

static const char css[] =
    "body{font:14px/1.4 sans-serif;margin:2em;color:#222;background:#fff}"
    "h1{font-size:1.6em;margin-bottom:0}.meta{color:#666}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:left;vertical-align:top}th{background:#f0f0f0}"
    ".bar{display:inline-block;height:10px;background:#4a7fb5}"
    ".pair{display:flex;gap:1em;flex-wrap:wrap}.pair figure{margin:0}"
    "img{width:440px;max-width:100%;image-rendering:pixelated;border:1px solid #ccc}"
    ".none{color:#999;font-style:italic}.failed{color:#b00}.skipped{color:#777}"
    ".hist rect{fill:#4a7fb5}.hist line{stroke:#333}.hist text{font-size:11px;fill:#333}"
    "section{border-top:1px solid #ddd;margin-top:1.5em}code{background:#f5f5f5}";

voxa_status voxa__pl_write_report(const voxa_pipeline *p) {
    sbuf b = {0};
    sb_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                  "<title>");
    sb_text(&b, p->title);
    sb_printf(&b, "</title><style>%s</style></head><body>\n<h1>", css);
    sb_text(&b, p->title);
    char when[64];
    time_t t0 = (time_t)p->started;
    struct tm tm;
    gmtime_r(&t0, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    sb_printf(&b, "</h1>\n<p class=\"meta\">voxa %s &middot; recipe <code>", voxa_version());
    sb_text(&b, p->file);
    sb_printf(&b, "</code> &middot; started %s &middot; %.2f s &middot; %s</p>\n", when,
              p->seconds, p->status == 1 ? "complete" : p->status == -1 ? "FAILED" : "running");
    double longest = 1e-9;
    for (int i = 0; i < p->nsteps; i++)
        if (p->steps[i].seconds > longest) longest = p->steps[i].seconds;
    sb_printf(&b, "<h2>Steps</h2>\n<table><tr><th>#</th><th>step</th><th>op</th><th>state</th>"
                  "<th>why</th><th>time</th><th>count</th><th>output</th></tr>\n");
    for (int k = 0; k < p->nsteps; k++) {
        const pl_step *s = &p->steps[p->order[k]];
        const char *state = s->state == 1 ? "ran" : s->state == 2 ? "skipped"
                            : s->state == -1 ? "failed" : "not run";
        sb_printf(&b, "<tr class=\"%s\"><td>%d</td><td>", state, k + 1);
        sb_text(&b, s->name);
        sb_printf(&b, "</td><td>%s</td><td>%s</td><td>", op_name(s), state);
        sb_text(&b, s->error ? s->error : s->why);
        sb_printf(&b, "</td><td><span class=\"bar\" style=\"width:%dpx\"></span> %.3f s</td><td>",
                  (int)(120 * s->seconds / longest), s->seconds);
        if (s->count >= 0) sb_printf(&b, "%lld", (long long)s->count);
        sb_printf(&b, "</td><td><code>");
        sb_text(&b, p->items[s->output].path);
        sb_printf(&b, "</code></td></tr>\n");
    }
    sb_printf(&b, "</table>\n");
    for (int k = 0; k < p->nsteps; k++) {
        const pl_step *s = &p->steps[p->order[k]];
        sb_printf(&b, "<section><h2>%d. ", k + 1);
        sb_text(&b, s->name);
        sb_printf(&b, " <small>(%s)</small></h2>\n", op_name(s));
        if (s->kind == PL_OP) {
            sb_printf(&b, "<p>");
            for (int j = 0; j < s->nvals; j++) {
                sb_printf(&b, "%s<code>%s = ", j ? ", " : "", s->op->params[s->vals[j].param].name);
                sb_text(&b, s->vals[j].text);
                sb_printf(&b, "</code>");
            }
            sb_printf(&b, "</p>\n<div class=\"pair\">");
            if (s->input >= 0) {
                sb_printf(&b, "<figure>");
                sb_png(&b, s->preview_in, "before");
                sb_printf(&b, "<figcaption>before: ");
                sb_text(&b, p->items[s->input].name);
                sb_printf(&b, "</figcaption></figure>");
            }
            sb_printf(&b, "<figure>");
            sb_png(&b, s->preview_out, "after");
            sb_printf(&b, "<figcaption>after: ");
            sb_text(&b, s->name);
            sb_printf(&b, "</figcaption></figure></div>\n");
        } else if (s->kind == PL_PREVIEW) {
            sb_png(&b, s->state == 1 || s->state == 2 ? p->items[s->output].path : NULL, s->name);
        } else if (s->state == 1 || s->state == 2) {
            measure_section(&b, p->items[s->output].path);
        } else {
            sb_printf(&b, "<p class=\"none\">not run</p>");
        }
        sb_printf(&b, "</section>\n");
    }
    sb_printf(&b, "</body></html>\n");
    if (b.oom) {
        free(b.s);
        return voxa__error(VOXA_ENOMEM, "report.html: out of memory");
    }
    voxa__atomic w;
    FILE *f = NULL;
    voxa_status st = voxa__atomic_begin(&w, p->report);
    if (st == VOXA_OK) st = voxa__atomic_fopen(&w, &f);
    if (st == VOXA_OK && fwrite(b.s, 1, b.len, f) != b.len)
        st = voxa__error(VOXA_EIO, "%s: write failed", p->report);
    if (st == VOXA_OK || f) st = voxa__atomic_end(&w, f, st);
    free(b.s);
    return st;
}
