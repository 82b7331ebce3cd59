/* Allocation-failure sweep (harness and rules: failalloc_sweep.h) over every
 * op of the registry, 2-D and 3-D, 1 and 2 threads, whole (voxa_op_run,
 * arguments set armed too) and streamed by blocks between memory stores
 * (2 workers); a new op without a case here fails the test. And RL plans:
 * new, two executions, free, on the staged free path with either z stage.
 * The cases on the opencl backend (PoCL in `make test`) also fail GPU device
 * calls, one at a time (allocations, copies, launches, waits:
 * src/backend/gpu_failinject.c), and check that no device buffer outlives
 * its run; CMake runs them a second time in small device tiles
 * (VOXA_GPU_TILE_BYTES, set for the whole process: setenv while PoCL's
 * threads read the environment crashes them). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "failalloc_sweep.h"

/* ---- op cases ---------------------------------------------------------------------- */

enum { IN_NONE, IN_MASK, IN_GRAY, IN_FLOAT, IN_PATCHES };
enum { ARR_NONE, ARR_POINTS, ARR_FOOTPRINT, ARR_CORNERS, ARR_PSF, ARR_STRUCTURE };

typedef struct opcase {
    const char *op;
    int input, arr;
    const char *kv[10]; /* name, value pairs; "shape" is filled per ndim */
} opcase;

static const opcase cases[] = {
    {"balls", IN_NONE, ARR_POINTS, {"radius", "2.5", "owner", "1"}},
    {"balls", IN_NONE, ARR_POINTS, {"radius", "1.5"}},
    {"dilate", IN_MASK, ARR_NONE, {"ball", "1"}},
    {"dilate", IN_MASK, ARR_NONE, {"ball", "4", "border_value", "1"}},
    {"erode", IN_MASK, ARR_NONE, {"box", "3", "iterations", "2"}},
    {"open", IN_MASK, ARR_NONE, {"diamond", "2"}},
    {"close", IN_MASK, ARR_FOOTPRINT, {NULL}},
    {"close", IN_MASK, ARR_NONE, {"ball", "2", "spacing", "2,1,1"}},
    {"close", IN_MASK, ARR_NONE, {"connectivity", "2"}},
    {"dilate", IN_MASK, ARR_NONE, {"ball", "12"}},
    {"erode", IN_MASK, ARR_NONE, {"diamond", "3", "iterations", "2", "border_value", "1"}},
    {"open", IN_MASK, ARR_NONE, {"box", "2"}},
    {"fill_holes", IN_MASK, ARR_NONE, {NULL}},
    {"fill_holes", IN_MASK, ARR_NONE, {"connectivity", "2"}},
    {"label", IN_MASK, ARR_NONE, {"connectivity", "1"}},
    {"label", IN_MASK, ARR_STRUCTURE, {"dtype", "uint16"}},
    {"edt", IN_MASK, ARR_NONE, {NULL}},
    {"edt", IN_MASK, ARR_NONE, {"metric", "taxicab"}},
    {"edt", IN_MASK, ARR_NONE, {"spacing", "2,1,1", "squared", "1", "dtype", "float32"}},
    {"label", IN_MASK, ARR_NONE, {"connectivity", "3", "dtype", "int64", "zeroed", "1"}},
    {"threshold", IN_GRAY, ARR_NONE, {"method", "otsu"}},
    {"threshold", IN_FLOAT, ARR_NONE, {"value", "3.5"}},
    {"roi", IN_GRAY, ARR_CORNERS, {"size", "4,4,4", "mode", "reflect"}},
    {"paste", IN_PATCHES, ARR_CORNERS, {"op", "add", "mode", "clip"}},
    {"paste", IN_PATCHES, ARR_CORNERS, {"op", "mean", "mode", "clip"}},
    {"roi", IN_GRAY, ARR_CORNERS, {"size", "4,4,4", "mode", "constant", "value", "7"}},
    {"dilate", IN_MASK, ARR_NONE, {"ball", "2", "backend", "auto"}}, /* no GPU here: the CPU */
    /* on the GPU: every op with a device path, whole and by device tiles */
    {"balls", IN_NONE, ARR_POINTS, {"radius", "2.5", "owner", "1", "backend", "opencl"}},
    {"dilate", IN_MASK, ARR_NONE, {"ball", "3", "backend", "opencl"}},
    {"open", IN_MASK, ARR_NONE, {"diamond", "2", "backend", "opencl"}},
    {"erode", IN_MASK, ARR_NONE, {"box", "3", "iterations", "2", "backend", "opencl"}},
    {"close", IN_MASK, ARR_NONE, {"ball", "1.5", "spacing", "2,1,1", "backend", "opencl"}},
    {"label", IN_MASK, ARR_NONE, {"connectivity", "2", "backend", "opencl"}},
    {"label", IN_MASK, ARR_STRUCTURE, {"backend", "opencl"}},
    {"edt", IN_MASK, ARR_NONE, {"backend", "opencl"}},
    {"edt", IN_MASK, ARR_NONE, {"squared", "1", "dtype", "float32", "backend", "opencl"}},
    {"roi", IN_GRAY, ARR_CORNERS, {"size", "4,4,4", "mode", "reflect", "backend", "opencl"}},
    {"deconvolve", IN_FLOAT, ARR_PSF, {"iterations", "2", "backend", "opencl"}},
    {"deconvolve", IN_FLOAT, ARR_PSF, {"iterations", "2", "boundary", "periodic", "accelerate", "1",
                                      "backend", "opencl"}},
    {"deconvolve", IN_FLOAT, ARR_PSF, {"iterations", "3"}},
    {"deconvolve", IN_FLOAT, ARR_PSF, {"iterations", "2", "boundary", "periodic", "accelerate", "1"}},
    {"deconvolve", IN_FLOAT, ARR_PSF, {"iterations", "2", "boundary", "zero", "clip", "1"}},
    {"deconvolve", IN_FLOAT, ARR_PSF, {"iterations", "2", "dtype", "float64", "accelerate", "1"}},
};

typedef struct opjob {
    const opcase *c;
    int ndim;
    int stream; /* 0: voxa_op_run; 1: voxa_stream_run on memory stores by small blocks */
} opjob;

static int64_t device_live; /* device buffers alive after the unarmed run (FFT plan caches) */

/* Arrays a case needs (made unarmed, shared by every run of the job). */
typedef struct opdata {
    voxa_array in, arr;
    double table[12];
} opdata;

static void opdata_make(const opjob *j, opdata *d) {
    memset(d, 0, sizeof *d);
    int nd = j->ndim;
    switch (j->c->input) {
    case IN_MASK: make(&d->in, VOXA_U8, nd, 450, 11); break;
    case IN_GRAY: make(&d->in, VOXA_U16, nd, 0, 12); break;
    case IN_FLOAT: make(&d->in, VOXA_F32, nd, 0, 13); break;
    case IN_PATCHES: {
        int64_t s[4] = {3, 4, 4, 4};
        CHECK_OK(voxa_array_new(&d->in, VOXA_U16, nd + 1, s));
        fill(&d->in, 0, 14);
        break;
    }
    default: break;
    }
    static const double pts[12] = {1, 2, 3, 4.5, 6, 1.5, 3, 7, 9, 0, 0, 0};
    static const double corners[12] = {0, 0, 0, 3, 5, 6, -1, 7, 8, 2, 2, 2};
    int64_t rows = 3;
    switch (j->c->arr) {
    case ARR_POINTS:
    case ARR_CORNERS:
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < nd; k++)
                d->table[r * nd + k] = (j->c->arr == ARR_POINTS ? pts : corners)[r * 3 + k];
        voxa_array_view(&d->arr, d->table, VOXA_F64, 2, (const int64_t[]){rows, nd});
        break;
    case ARR_FOOTPRINT:
    case ARR_STRUCTURE: {
        int64_t s[3] = {3, 3, 3};
        CHECK_OK(voxa_array_new(&d->arr, VOXA_U8, nd, s));
        uint8_t *p = d->arr.data;
        int64_t n = voxa_array_size(&d->arr);
        for (int64_t i = 0; i < n; i++) p[i] = j->c->arr == ARR_STRUCTURE ? i != 0 : i % 3 != 1;
        if (j->c->arr == ARR_STRUCTURE) p[n / 2] = 1; /* a symmetric structure: all but corners */
        if (j->c->arr == ARR_STRUCTURE) p[n - 1] = 0;
        break;
    }
    case ARR_PSF: {
        int64_t s[3] = {3, 3, 3};
        CHECK_OK(voxa_array_new(&d->arr, VOXA_F32, nd, s));
        int64_t n = voxa_array_size(&d->arr);
        for (int64_t i = 0; i < n; i++) ((float *)d->arr.data)[i] = i == n / 2 ? 0.5f : 0.5f / (float)(n - 1);
        break;
    }
    default: break;
    }
}

static void opdata_free(opdata *d) {
    voxa_array_free(&d->in);
    voxa_array_free(&d->arr);
}

static const char *arr_param(const opcase *c) {
    switch (c->arr) {
    case ARR_POINTS: return "points";
    case ARR_FOOTPRINT: return "footprint";
    case ARR_CORNERS: return "corners";
    case ARR_PSF: return "psf";
    case ARR_STRUCTURE: return "structure";
    }
    return NULL;
}

static opdata cur; /* the current job's arrays */

static voxa_status op_job(const void *param, result *r) {
    const opjob *j = param;
    const opcase *c = j->c;
    voxa_status st;
    voxa_args a;
    voxa_array out = {0};
    voxa_store *si = NULL, *so = NULL;
    const voxa_array *in = c->input == IN_NONE ? NULL : &cur.in;
    int64_t count = -1;
    int args_ok = 0;
    memset(&a, 0, sizeof a);
    TRY(voxa_args_init(&a, voxa_op_find(c->op)));
    args_ok = 1;
    for (int i = 0; c->kv[i]; i += 2) {
        const char *v = c->kv[i + 1];
        if (!strcmp(c->kv[i], "backend")) {
            voxa_backend b;
            TRY(voxa_backend_from_name(v, &b));
            TRY(voxa_args_set_backend(&a, b));
            continue;
        }
        if (!strcmp(c->kv[i], "spacing") && j->ndim == 2) v = "2,1";
        if (!strcmp(c->kv[i], "size") && j->ndim == 2) v = "4,4";
        if (!strcmp(c->kv[i], "connectivity") && j->ndim == 2 && !strcmp(v, "3")) v = "2";
        TRY(voxa_args_parse(&a, c->kv[i], v));
    }
    if (!strcmp(c->op, "balls")) TRY(voxa_args_parse(&a, "shape", j->ndim == 3 ? "6,9,11" : "13,15"));
    if (!strcmp(c->op, "paste")) TRY(voxa_args_parse(&a, "shape", j->ndim == 3 ? "6,9,11" : "13,15"));
    if (c->arr) TRY(voxa_args_set_array(&a, arr_param(c), &cur.arr, NULL));
    if (c->arr == ARR_STRUCTURE) TRY(voxa_args_clear(&a, "connectivity"));
    TRY(voxa_op_check(&a, in));
    voxa_dtype t;
    int nd;
    int64_t shape[VOXA_MAXDIM];
    TRY(voxa_op_output(&a, in, &t, &nd, shape));
    TRY(voxa_array_new(&out, t, nd, shape));
    if (!j->stream) {
        TRY(voxa_op_run(&a, in, &out, NULL, &count));
    } else {
        voxa_stream_options o;
        memset(&o, 0, sizeof o);
        for (int d = 0; d < nd; d++) o.block[d] = (shape[d] + 1) / 2; /* >= 3: RL's PSF fits */
        o.workers = 2;
        if (in) TRY(voxa_store_wrap((voxa_array *)in, &si));
        TRY(voxa_store_wrap(&out, &so));
        TRY(voxa_stream_run(&a, si, so, &o, &count));
    }
    res_array(r, &out);
    res_add(r, &count, sizeof count);
done:
    voxa_store_close(si);
    voxa_store_close(so);
    voxa_array_free(&out);
    if (args_ok) voxa_args_free(&a);
    if (fa_k == 0) device_live = voxa__failalloc_device_live();
    if (voxa__failalloc_device_live() != device_live) {
        fprintf(stderr, "  %s: %lld device buffers left after failing call %lld\n", c->op,
                (long long)(voxa__failalloc_device_live() - device_live), (long long)fa_k);
        CHECK(0);
        device_live = voxa__failalloc_device_live();
    }
    return st;
}

static void test_ops(void) {
    int n;
    const voxa_op *const *ops = voxa_ops(&n);
    for (int i = 0; i < n; i++) { /* every op of the registry has a case */
        int found = 0;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) found |= !strcmp(cases[c].op, ops[i]->name);
        if (!found) fprintf(stderr, "  op %s: no case in test_failalloc.c\n", ops[i]->name);
        CHECK(found);
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int nd = 2; nd <= 3; nd++)
            for (int stream = 0; stream <= 1; stream++)
                for (int nt = 1; nt <= 2; nt++) {
                    if (stream && nt == 2) continue; /* the stream runs 2 workers */
                    opjob j = {&cases[c], nd, stream};
                    char what[128];
                    int gpu = 0; /* names of GPU cases say so (VOXA_FAILALLOC_ONLY=opencl) */
                    for (int k = 0; cases[c].kv[k]; k += 2) gpu |= !strcmp(cases[c].kv[k], "backend") && !strcmp(cases[c].kv[k + 1], "opencl");
                    /* RL holds the whole image on the device: no tiles to sweep */
                    if (gpu && getenv("VOXA_GPU_TILE_BYTES") && !strcmp(cases[c].op, "deconvolve")) continue;
                    snprintf(what, sizeof what, "%s #%zu %dD %s %dt%s", cases[c].op, c, nd,
                             stream ? "stream" : "run", nt, gpu ? " opencl" : "");
                    voxa_set_threads(nt);
                    opdata_make(&j, &cur);
                    sweep(what, op_job, &j, NULL);
                    opdata_free(&cur);
                }
    voxa_set_threads(0);
}


/* ---- RL plans: new, execute twice (the second run reuses the scratch), free ------------ */

typedef struct rljob {
    int ndim;
    voxa_rl_boundary b;
    const char *zconv; /* VOXA_RL_ZCONV for the staged path's z stage, or NULL */
    int accelerate;
    int flags; /* voxa_rl_plan_new's (VOXA_RL_DOUBLE) */
} rljob;

static voxa_array src, psf; /* the image and PSF of the current RL job */

static voxa_status rl_job(const void *param, result *r) {
    const rljob *j = param;
    voxa_status st;
    voxa_rl_plan *plan = NULL;
    voxa_array out = {0};
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = 2;
    o.accelerate = j->accelerate;
    if (j->zconv) setenv("VOXA_RL_ZCONV", j->zconv, 1);
    TRY(voxa_rl_plan_new(&plan, j->ndim, src.shape, &psf, j->b, j->flags));
    TRY(voxa_array_new(&out, j->flags ? VOXA_F64 : VOXA_F32, j->ndim, src.shape));
    for (int rep = 0; rep < 2; rep++) {
        TRY(voxa_rl_plan_execute(plan, &src, &out, &o));
        res_array(r, &out);
    }
done:
    unsetenv("VOXA_RL_ZCONV");
    voxa_rl_plan_free(plan);
    voxa_array_free(&out);
    return st;
}

static void test_rl_plans(void) {
    static const rljob jobs[] = {
        {3, VOXA_RL_FREE, "direct", 0, 0}, {3, VOXA_RL_FREE, "fft", 1, 0},
        {3, VOXA_RL_PERIODIC, NULL, 0, 0}, {3, VOXA_RL_ZERO, NULL, 1, 0},
        {2, VOXA_RL_FREE, NULL, 1, 0},     {2, VOXA_RL_PERIODIC, NULL, 0, 0},
        {3, VOXA_RL_FREE, NULL, 1, VOXA_RL_DOUBLE}, {2, VOXA_RL_ZERO, NULL, 0, VOXA_RL_DOUBLE},
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++)
        for (int nt = 1; nt <= 2; nt++) {
            const rljob *j = &jobs[i];
            make(&src, VOXA_F32, j->ndim, 0, 40 + i);
            int64_t s[3] = {3, 3, 3};
            CHECK_OK(voxa_array_new(&psf, VOXA_F32, j->ndim, s));
            for (int64_t k = 0; k < voxa_array_size(&psf); k++) ((float *)psf.data)[k] = 1.0f + (float)(k % 4);
            char what[96];
            snprintf(what, sizeof what, "rl plan %dD %s%s%s%s %dt", j->ndim,
                     voxa_rl_boundary_name(j->b), j->zconv ? " z=" : "", j->zconv ? j->zconv : "",
                     j->flags ? " double" : "", nt);
            voxa_set_threads(nt);
            sweep(what, rl_job, j, NULL);
            voxa_array_free(&src);
            voxa_array_free(&psf);
        }
    voxa_set_threads(0);
}

int main(void) {
    if (sweep_begin("failalloc")) return 0;
    RUN(test_ops);
    RUN(test_rl_plans);
    sweep_end();
    VTEST_END();
}
