/* The allocation-failure sweep's harness, shared by test_failalloc.c and
 * test_failalloc_io.c. In a -DVOXA_FAILALLOC=ON build (the ASan tier,
 * `make test-asan`) the library's own allocations go through counting
 * wrappers (src/core/failalloc_hook.h). sweep() runs a job once unarmed,
 * counting its allocations N and keeping its result, then again with
 * allocation k = 1..N failing (every k, or an even stride over 1..N when N
 * is larger than VOXA_FAILALLOC_RUNS, default 120; 0 = every k). Each
 * armed run must
 *   - fail with VOXA_ENOMEM and a message, or succeed with the unarmed
 *     result (a fallback that needs no memory); never OK with another result;
 *   - leave no temporary file, and no output file at the final path unless
 *     it equals the unarmed one (a Zarr folder may stay, unreadable);
 * and LeakSanitizer checks every error path for leaks at exit. FFTW's own
 * allocations (planner) are not counted: FFTW aborts on them.
 * Switches: VOXA_FAILALLOC_VERBOSE=1 (per job), VOXA_FAILALLOC_ONLY=<part of
 * a job's name>, VOXA_FAILALLOC_K=<k>, VOXA_FAILALLOC_TRACE=1 (the stack of
 * the failing allocation). */
#ifndef VOXA_FAILALLOC_SWEEP_H
#define VOXA_FAILALLOC_SWEEP_H
#include "vtest.h"
#include "failalloc.h"

#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

/* ---- the armed part of a job ---------------------------------------------- */

static int64_t fa_k;    /* allocation to fail, counted over the job's armed calls; 0: none */
static int64_t fa_used; /* allocations counted in this job so far */
static int fa_hit;      /* the failure happened */
static voxa_status armed_st;

static void armed_begin(void) {
    voxa__failalloc_arm(fa_k > 0 && !fa_hit ? fa_k - fa_used : 0);
}
static void armed_end(void) {
    fa_used += voxa__failalloc_count();
    fa_hit |= voxa__failalloc_fired();
    voxa__failalloc_arm(0);
}
/* Run a library call under the armed allocator; evaluates to its status. */
#define ARMED(expr) (armed_begin(), armed_st = (expr), armed_end(), armed_st)
/* In a job: run armed, and on failure leave through the job's `done:`. */
#define TRY(expr)                                                              \
    do {                                                                       \
        if ((st = ARMED(expr)) != VOXA_OK) goto done;                          \
    } while (0)

/* ---- results ------------------------------------------------------------------ */

typedef struct result {
    unsigned char *p;
    size_t n;
} result;

static void res_add(result *r, const void *p, size_t n) {
    unsigned char *q = realloc(r->p, r->n + n + 1);
    if (!q) abort();
    memcpy(q + r->n, p, n);
    r->p = q;
    r->n += n;
}
static void res_array(result *r, const voxa_array *a) {
    int64_t n = voxa_array_size(a);
    res_add(r, &a->dtype, sizeof a->dtype);
    res_add(r, a->shape, sizeof(int64_t) * (size_t)a->ndim);
    if (voxa_array_is_c_contiguous(a)) {
        res_add(r, a->data, (size_t)n * voxa_dtype_size(a->dtype));
        return;
    }
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i++) { /* any strides */
        double v = voxa_array_get(a, idx);
        res_add(r, &v, sizeof v);
        for (int d = a->ndim - 1; d >= 0 && ++idx[d] == a->shape[d]; d--) idx[d] = 0;
    }
}
/* The content of a file (read unarmed): an array, or else its bytes. */
static void res_file(result *r, const char *path) {
    voxa_array a = {0};
    if (strstr(path, ".csv") || strstr(path, ".png") || strstr(path, ".json")) {
        FILE *f = fopen(path, "rb");
        if (!f) return res_add(r, "missing", 7);
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) res_add(r, buf, n);
        fclose(f);
    } else if (voxa_read(path, &a) == VOXA_OK) {
        res_array(r, &a);
        voxa_array_free(&a);
    } else {
        res_add(r, "unreadable", 10);
    }
}

__attribute__((unused)) static char *path_in(const char *name) {
    static char buf[4][512];
    static int i;
    char *p = buf[i++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static int rm_one(const char *p, const struct stat *s, int flag, struct FTW *f) {
    (void)s, (void)flag, (void)f;
    return remove(p);
}
static void rm_rf(const char *p) { nftw(p, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static int ntemps;
static int count_temp(const char *p, const struct stat *s, int flag, struct FTW *f) {
    (void)s, (void)flag;
    if (strstr(p + f->base, ".tmp-") || strstr(p + f->base, "voxa-tmp")) {
        fprintf(stderr, "  temporary left: %s\n", p);
        ntemps++;
        remove(p);
    }
    return 0;
}

/* ---- the sweep -------------------------------------------------------------------- */

typedef voxa_status (*job_fn)(const void *param, result *r);

static int64_t max_runs = 120;
static int64_t total_runs, total_fallbacks;

/* `out`: a file the job writes (removed before each run), or NULL. */
static void sweep(const char *what, job_fn job, const void *param, const char *out_) {
    char outbuf[512], *out = out_ ? outbuf : NULL;
    if (out_) snprintf(outbuf, sizeof outbuf, "%s", out_);
    const char *only = getenv("VOXA_FAILALLOC_ONLY"); /* run only the jobs whose name has this */
    if (only && !strstr(what, only)) return;
    result ref = {0};
    fa_k = fa_used = 0;
    fa_hit = 0;
    if (out) rm_rf(out);
    voxa_status st = job(param, &ref);
    if (st != VOXA_OK) {
        fprintf(stderr, "  %s: unarmed run failed: %s\n", what, voxa_last_error());
        CHECK(0);
        free(ref.p);
        return;
    }
    result reff = {0};
    if (out) res_file(&reff, out);
    int64_t n = fa_used, stride = max_runs > 0 && n > max_runs ? (n + max_runs - 1) / max_runs : 1;
    int64_t runs = 0, fallbacks = 0, bad = 0;
    const char *only_k = getenv("VOXA_FAILALLOC_K"); /* fail only this allocation */
    for (int64_t k = only_k ? atoll(only_k) : 1; k <= n; k += only_k ? n : stride) {
        result got = {0};
        fa_k = k;
        fa_used = 0;
        fa_hit = 0;
        if (out) rm_rf(out);
        voxa_clear_error();
        st = job(param, &got);
        runs++;
        ntemps = 0;
        nftw(dir, count_temp, 16, FTW_PHYS);
        int ok = ntemps == 0;
        if (st != VOXA_OK) {
            ok &= st == VOXA_ENOMEM && voxa_last_error()[0] && fa_hit;
            if (out && access(out, F_OK) == 0) { /* only the complete, right file */
                result f = {0};
                res_file(&f, out);
                struct stat sb;
                int folder = stat(out, &sb) == 0 && S_ISDIR(sb.st_mode); /* Zarr: may stay incomplete */
                ok &= (f.n == reff.n && !memcmp(f.p, reff.p, f.n)) ||
                      (folder && f.n == 10 && !memcmp(f.p, "unreadable", 10));
                if (!ok) fprintf(stderr, "  %s: left at %s after the error\n", what, out);
                free(f.p);
            }
        } else {
            result f = {0};
            if (out) res_file(&f, out);
            ok &= got.n == ref.n && !memcmp(got.p, ref.p, ref.n) && f.n == reff.n &&
                  (!f.n || !memcmp(f.p, reff.p, f.n));
            free(f.p);
            fallbacks += fa_hit;
            if (fa_hit && getenv("VOXA_FAILALLOC_VERBOSE"))
                fprintf(stderr, "  %s: allocation %lld failed, the same result\n", what, (long long)k);
        }
        if (!ok) {
            if (bad++ < 3)
                fprintf(stderr, "  %s: allocation %lld of %lld failed: %s%s (%s)\n", what,
                        (long long)k, (long long)n, voxa_status_name(st),
                        st == VOXA_OK ? " with another result" : "", voxa_last_error());
        }
        CHECK(ok);
        free(got.p);
    }
    if (getenv("VOXA_FAILALLOC_VERBOSE"))
        fprintf(stderr, "  %-44s %5lld allocations, %4lld runs, %lld fallbacks\n", what,
                (long long)n, (long long)runs, (long long)fallbacks);
    total_runs += runs;
    total_fallbacks += fallbacks;
    free(ref.p);
    free(reff.p);
}

/* ---- inputs ----------------------------------------------------------------------- */

static void fill(voxa_array *a, int permille, unsigned long long seed) {
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0; i < n; i++) {
        unsigned v = (unsigned)(vtest_rand(&seed) % 1000);
        switch (a->dtype) {
        case VOXA_F32: ((float *)a->data)[i] = (float)v / 100.0f + 0.5f; break;
        case VOXA_U16: ((uint16_t *)a->data)[i] = (uint16_t)v; break;
        default: ((uint8_t *)a->data)[i] = v < (unsigned)permille; break;
        }
    }
}

static void make(voxa_array *a, voxa_dtype t, int ndim, int permille, unsigned long long seed) {
    static const int64_t s3[3] = {6, 9, 11}, s2[2] = {13, 15};
    CHECK_OK(voxa_array_new(a, t, ndim, ndim == 3 ? s3 : s2));
    fill(a, permille, seed);
}

/* ASan's stack printer (VOXA_FAILALLOC_TRACE=1: the stack of every failed
 * allocation, to find the call site behind a report). */
void __sanitizer_print_stack_trace(void) __attribute__((weak));
static void print_stack(void) {
    if (__sanitizer_print_stack_trace) __sanitizer_print_stack_trace();
}

/* Set up (0) or say the build has no wrappers (1: skip the test). */
static int sweep_begin(const char *name) {
    if (!voxa__failalloc_on()) {
        fprintf(stderr, "skipped: the library was built without -DVOXA_FAILALLOC=ON\n");
        return 1;
    }
    const char *e = getenv("VOXA_FAILALLOC_RUNS");
    if (e) max_runs = atoll(e);
    if (getenv("VOXA_FAILALLOC_TRACE")) voxa__failalloc_on_fire(print_stack);
    snprintf(dir, sizeof dir, "/tmp/voxa-%s-%d", name, (int)getpid());
    mkdir(dir, 0777);
    return 0;
}

static void sweep_end(void) {
    fprintf(stderr, "%lld armed runs, %lld fallbacks\n", (long long)total_runs,
            (long long)total_fallbacks);
    rm_rf(dir);
}

#endif
