/* Allocation-failure sweep (harness and rules: failalloc_sweep.h) over the
 * entry points that touch files: npy/TIFF/Zarr/CSV/PNG write and read (whole
 * and by region), streamed runs between .npy, .zarr and .tif files (pyramid
 * too), a pipeline (label, dilate, measure, preview, report), measure and
 * preview from stores, arguments read from files, PSF helpers, FFTW wisdom
 * files, and the label merge steps. */
#define _XOPEN_SOURCE 700 /* nftw */
#include "failalloc_sweep.h"
#include "internal.h" /* voxa__error */

static voxa_array src, src2, src3; /* the arrays a job writes or reads */
/* ---- files ------------------------------------------------------------------------- */

enum { F_NPY, F_TIFF, F_TIFF_DEFLATE, F_ZARR, F_ZARR_V2, F_ZARR_SHARD, F_ZARR_OME, F_CSV, F_PNG,
       F_MEASURE };
static const char *const fnames[] = {"a.npy", "a.tif", "d.tif", "a.zarr", "v2.zarr", "sh.zarr",
                                     "ome.zarr", "t.csv", "p.png", "m.csv"};

typedef struct filejob {
    int kind, ndim;
    voxa_dtype t;
} filejob;


/* Write src in the job's format (armed: every call inside may fail). */
static voxa_status write_file(const filejob *j, const char *path) {
    voxa_status st = VOXA_OK;
    switch (j->kind) {
    case F_NPY: case F_TIFF: case F_ZARR: return voxa_write(path, &src);
    case F_TIFF_DEFLATE: {
        voxa_tiff_options o = {VOXA_TIFF_DEFLATE, 3, -1};
        return voxa_tiff_write_opts(path, &src, &o);
    }
    case F_ZARR_V2:
    case F_ZARR_SHARD: {
        voxa_zarr_options o;
        memset(&o, 0, sizeof o);
        o.format = j->kind == F_ZARR_V2 ? 2 : 3;
        o.codec = j->kind == F_ZARR_V2 ? VOXA_ZARR_ZSTD : VOXA_ZARR_GZIP;
        o.chunks[0] = 2;
        o.chunks[1] = o.chunks[2] = 3;
        if (j->kind == F_ZARR_SHARD) o.shards[0] = 4, o.shards[1] = o.shards[2] = 6;
        voxa_zarr *z = NULL;
        st = voxa_zarr_create(path, src.dtype, src.ndim, src.shape, &o, &z);
        if (st == VOXA_OK) st = voxa_zarr_write(z, (const int64_t[]){0, 0, 0}, &src);
        voxa_zarr_close(z);
        return st;
    }
    case F_ZARR_OME: {
        voxa_zarr_options o;
        memset(&o, 0, sizeof o);
        o.chunks[0] = 3;
        o.chunks[1] = 4;
        double sp[3] = {2, 1, 0.5};
        int labels = src.dtype == VOXA_U16; /* labels: strided levels, else means */
        return voxa_zarr_write_ome(path, &src, sp, "micrometer", 1, labels, &o);
    }
    case F_CSV: {
        char n0[] = "x", n1[] = "y y", *names[2] = {n0, n1};
        double v[6] = {1, 2.5, -3, 1e300, 0, 7};
        voxa_table t = {3, 2, names, v};
        return voxa_csv_write(path, &t);
    }
    case F_PNG: return voxa_png_write(path, &src);
    case F_MEASURE: {
        voxa_measure_table t;
        memset(&t, 0, sizeof t);
        st = voxa_measure(&src, NULL, NULL, &t);
        if (st == VOXA_OK) st = voxa_measure_write_csv(&t, NULL, path);
        voxa_measure_table_free(&t);
        return st;
    }
    }
    return st;
}

/* The file is the result: sweep reads it, and checks that a failed write
 * leaves nothing complete; but a Zarr array made by voxa_zarr_create and
 * written by regions exists from its creation on (missing chunks read as
 * the fill value), so that job reads its file itself. */
static voxa_status write_job(const void *param, result *r) {
    const filejob *j = param;
    const char *path = path_in(fnames[j->kind]);
    if (j->kind != F_ZARR_V2 && j->kind != F_ZARR_SHARD) return ARMED(write_file(j, path));
    rm_rf(path);
    voxa_status st = ARMED(write_file(j, path));
    if (st == VOXA_OK) res_file(r, path);
    return st;
}

/* Read the file back (the file was written unarmed). */
static voxa_status read_job(const void *param, result *r) {
    const filejob *j = param;
    const char *path = path_in(fnames[j->kind]);
    voxa_status st;
    voxa_array a = {0};
    voxa_table t = {0};
    voxa_tiff *tf = NULL;
    voxa_zarr *z = NULL;
    if (j->kind == F_CSV || j->kind == F_MEASURE) {
        TRY(voxa_csv_read(path, &t));
        res_add(r, t.values, sizeof(double) * (size_t)(t.nrows * t.ncols));
        for (int c = 0; c < t.ncols; c++) res_add(r, t.names[c], strlen(t.names[c]));
    } else if (j->kind == F_TIFF_DEFLATE) { /* by region */
        int64_t shape[VOXA_MAXDIM], lo[3] = {1, 2, 3};
        voxa_dtype dt;
        int nd;
        TRY(voxa_tiff_open(path, &tf));
        TRY(voxa_tiff_get_shape(tf, &dt, &nd, shape));
        for (int d = 0; d < nd; d++) shape[d] -= lo[d];
        TRY(voxa_array_new(&a, dt, nd, shape));
        TRY(voxa_tiff_read_region(tf, lo, &a));
        res_array(r, &a);
    } else if (j->kind == F_ZARR_V2 || j->kind == F_ZARR_SHARD) { /* by region */
        int64_t lo[3] = {1, 2, 3};
        voxa_zarr_info info;
        TRY(voxa_zarr_open(path, 0, &z));
        TRY(voxa_zarr_get_info(z, &info));
        for (int d = 0; d < info.ndim; d++) info.shape[d] -= lo[d];
        TRY(voxa_array_new(&a, info.dtype, info.ndim, info.shape));
        TRY(voxa_zarr_read(z, lo, &a));
        res_array(r, &a);
    } else {
        TRY(voxa_read(path, &a));
        res_array(r, &a);
    }
done:
    voxa_zarr_close(z);
    voxa_tiff_close(tf);
    voxa_array_free(&a);
    voxa_table_free(&t);
    return st;
}

static void test_files(void) {
    static const filejob jobs[] = {
        {F_NPY, 3, VOXA_U16}, {F_NPY, 2, VOXA_F32}, {F_TIFF, 3, VOXA_U16}, {F_TIFF, 2, VOXA_F32},
        {F_TIFF_DEFLATE, 3, VOXA_U16}, {F_ZARR, 3, VOXA_U16}, {F_ZARR_V2, 3, VOXA_F32},
        {F_ZARR_SHARD, 3, VOXA_U16},
        {F_ZARR_OME, 3, VOXA_U16}, {F_ZARR_OME, 2, VOXA_U8}, {F_ZARR_OME, 3, VOXA_F32}, {F_CSV, 2, VOXA_U8},
        {F_PNG, 2, VOXA_U8}, {F_MEASURE, 3, VOXA_U16}, {F_MEASURE, 2, VOXA_U16},
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        const filejob *j = &jobs[i];
        if (j->kind == F_PNG) {
            int64_t s[3] = {5, 7, 3};
            CHECK_OK(voxa_array_new(&src, VOXA_U8, 3, s));
            fill(&src, 500, 21);
        } else {
            make(&src, j->t, j->ndim, 0, 20 + i);
            if (j->kind == F_MEASURE)
                for (int64_t k = 0; k < voxa_array_size(&src); k++) ((uint16_t *)src.data)[k] %= 5;
        }
        char what[96];
        const char *path = path_in(fnames[j->kind]);
        snprintf(what, sizeof what, "write %s %dD", fnames[j->kind], j->ndim);
        sweep(what, write_job, j, j->kind == F_ZARR_V2 || j->kind == F_ZARR_SHARD ? NULL : path);
        if (j->kind != F_PNG) { /* no PNG reader */
            rm_rf(path);
            CHECK_OK(write_file(j, path));
            snprintf(what, sizeof what, "read %s %dD", fnames[j->kind], j->ndim);
            sweep(what, read_job, j, NULL);
        }
        rm_rf(path);
        voxa_array_free(&src);
    }
}

/* ---- streamed runs between files ------------------------------------------------------ */

typedef struct streamjob {
    const char *op, *param, *value, *in, *out;
    int pyramid;
} streamjob;

static voxa_status stream_run(const streamjob *j, result *r);
static result stream_ref; /* the output file of the unarmed run */

/* A run, and after a failure the same run again, unarmed, over what the
 * failed one left (a .zarr output is resumed: blocks whose chunks all exist
 * are skipped): that must give the unarmed run's file. */
static voxa_status stream_job(const void *param, result *r) {
    const streamjob *j = param;
    voxa_status st = stream_run(j, r);
    if (fa_k == 0 && st == VOXA_OK) {
        free(stream_ref.p);
        memset(&stream_ref, 0, sizeof stream_ref);
        res_file(&stream_ref, path_in(j->out));
    } else if (st != VOXA_OK) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", voxa_last_error());
        if (access(path_in(j->out), F_OK) == 0) { /* what the failed run left (sweep's rule) */
            result left = {0};
            res_file(&left, path_in(j->out));
            int ok = (left.n == stream_ref.n && !memcmp(left.p, stream_ref.p, left.n)) ||
                     (strstr(j->out, ".zarr") && left.n == 10 && !memcmp(left.p, "unreadable", 10));
            if (!ok) fprintf(stderr, "  stream %s -> %s: left after allocation %lld failed\n", j->op, j->out, (long long)fa_k);
            CHECK(ok);
            free(left.p);
        }
        int64_t k = fa_k;
        fa_k = 0; /* the rerun's calls are armed with nothing to fail */
        result again = {0}, f = {0};
        voxa_status st2 = stream_run(j, &again);
        fa_k = k;
        res_file(&f, path_in(j->out));
        int ok = st2 == VOXA_OK && f.n == stream_ref.n && !memcmp(f.p, stream_ref.p, f.n);
        if (!ok)
            fprintf(stderr, "  stream %s -> %s: the rerun after allocation %lld failed differs (%s)\n",
                    j->op, j->out, (long long)k, voxa_status_name(st2));
        CHECK(ok);
        free(again.p);
        free(f.p);
        voxa__error(st, "%s", msg); /* the failed run's message, for sweep */
    }
    return st;
}

static voxa_status stream_run(const streamjob *j, result *r) {
    voxa_status st;
    voxa_store *si = NULL, *so = NULL;
    voxa_args a;
    int args_ok = 0;
    int64_t count = -1;
    TRY(voxa_args_init(&a, voxa_op_find(j->op)));
    args_ok = 1;
    if (j->param) TRY(voxa_args_parse(&a, j->param, j->value));
    TRY(voxa_store_open(path_in(j->in), &si));
    voxa_array meta = voxa_store_meta(si);
    voxa_dtype t;
    int nd;
    int64_t shape[VOXA_MAXDIM];
    TRY(voxa_op_check(&a, &meta));
    TRY(voxa_op_output(&a, &meta, &t, &nd, shape));
    voxa_store_options so_opts;
    memset(&so_opts, 0, sizeof so_opts);
    so_opts.pyramid = j->pyramid;
    for (int d = 0; d < nd; d++) so_opts.chunks[d] = (shape[d] + 1) / 2;
    TRY(voxa_store_create_opts(path_in(j->out), t, nd, shape, &so_opts, &so));
    voxa_stream_options o;
    memset(&o, 0, sizeof o);
    for (int d = 0; d < nd; d++) o.block[d] = (shape[d] + 1) / 2;
    o.workers = 2;
    TRY(voxa_stream_run(&a, si, so, &o, &count));
    TRY(voxa_store_commit(so));
    res_add(r, &count, sizeof count);
done:
    voxa_store_close(si);
    voxa_store_close(so);
    if (args_ok) voxa_args_free(&a);
    return st;
}

static void test_stream_files(void) {
    static const streamjob jobs[] = {
        {"label", "connectivity", "3", "m.npy", "lab.zarr", 0},
        {"dilate", "ball", "1", "m.zarr", "d.npy", 0},
        {"edt", NULL, NULL, "m.npy", "e.zarr", 1},
        {"fill_holes", NULL, NULL, "m.zarr", "f.tif", 0},
        {"erode", "box", "3", "m.npy", "er.zarr", 0},
    };
    make(&src, VOXA_U8, 3, 450, 31);
    CHECK_OK(voxa_write(path_in("m.npy"), &src));
    CHECK_OK(voxa_write(path_in("m.zarr"), &src));
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "stream %s %s -> %s", jobs[i].op, jobs[i].in, jobs[i].out);
        sweep(what, stream_job, &jobs[i], path_in(jobs[i].out));
        rm_rf(path_in(jobs[i].out));
    }
    free(stream_ref.p);
    voxa_array_free(&src);
}

/* ---- the pipeline: load, run (every step forced), outputs read back ---------------------- */

static const char *const pl_outs[] = {"out/lab.npy", "out/t.csv", "out/d.zarr", "out/pv.png"};
static result pl_ref[4]; /* the outputs of the unarmed run */

/* After a failed run: each output is absent, the unarmed run's, or (a Zarr
 * folder) not readable as an image. */
static void pipeline_leftovers(void) {
    for (int i = 0; i < 4; i++) {
        const char *path = path_in(pl_outs[i]);
        if (access(path, F_OK) != 0) continue;
        result f = {0};
        res_file(&f, path);
        int ok = (f.n == pl_ref[i].n && !memcmp(f.p, pl_ref[i].p, f.n)) ||
                 (strstr(path, ".zarr") && f.n == 10 && !memcmp(f.p, "unreadable", 10));
        if (!ok) fprintf(stderr, "  pipeline: %s left after allocation %lld failed\n", path, (long long)fa_k);
        CHECK(ok);
        free(f.p);
    }
}

static voxa_status pipeline_job(const void *param, result *r) {
    const char *text = param;
    voxa_status st;
    voxa_pipeline *p = NULL;
    rm_rf(path_in("out"));
    TRY(voxa_pipeline_load_text(text, strlen(text), "r.toml", dir, &p));
    voxa_pipeline_options o;
    memset(&o, 0, sizeof o);
    TRY(voxa_pipeline_run(p, &o));
    char plan[4096];
    TRY(voxa_pipeline_plan_text(p, plan, sizeof plan));
    for (int i = 0; i < 3; i++) res_file(r, path_in(pl_outs[i])); /* pv.png: a fallback may skip it */
    if (fa_k == 0)
        for (int i = 0; i < 4; i++) res_file(&pl_ref[i], path_in(pl_outs[i]));
done:
    if (st != VOXA_OK) pipeline_leftovers();
    voxa_pipeline_free(p);
    return st;
}

static void test_pipeline(void) {
    make(&src, VOXA_U8, 3, 200, 51);
    CHECK_OK(voxa_write(path_in("m.npy"), &src));
    const char *text = "[pipeline]\nmem_limit = \"4K\"\n[inputs]\nm = \"m.npy\"\n"
                       "[[step]]\nname = \"lab\"\nop = \"label\"\ninput = \"d\"\n"
                       "[[step]]\nname = \"d\"\nop = \"dilate\"\ninput = \"m\"\nbox = [1, 3, 3]\n"
                       "output = \"out/d.zarr\"\n"
                       "[[step]]\nname = \"t\"\nop = \"measure\"\nlabels = \"lab\"\n"
                       "[[step]]\nname = \"pv\"\nop = \"preview\"\nimage = \"m\"\nlabels = \"lab\"\n";
    sweep("pipeline (label, dilate, measure, preview)", pipeline_job, text, NULL);
    for (int i = 0; i < 4; i++) free(pl_ref[i].p);
    rm_rf(path_in("out"));
    voxa_array_free(&src);
}

/* ---- measure and preview from stores, arguments read from files, label merge steps ---------- */

static voxa_status store_job(const void *param, result *r) {
    voxa_status st;
    voxa_store *sl = NULL, *si = NULL;
    voxa_measure_table t;
    voxa_array rgb = {0};
    memset(&t, 0, sizeof t);
    TRY(voxa_store_open(path_in("lab.zarr"), &sl));
    TRY(voxa_store_open(path_in("img.npy"), &si));
    double sp[3] = {2, 1, 1};
    TRY(voxa_measure_store_with(sl, si, sp, 3000, VOXA_MEASURE_MOMENTS | VOXA_MEASURE_STD,
                                (voxa_progress){0}, &t));
    res_add(r, &t.n, sizeof t.n);
    voxa_preview_options po;
    memset(&po, 0, sizeof po);
    po.spacing = sp;
    po.mem_limit = 2000;
    TRY(voxa_preview(si, sl, &po, &rgb));
    res_array(r, &rgb);
    TRY(voxa_measure_write_csv(&t, "label,area,centroid,intensity_mean,centroid_weighted,"
                               "intensity_std,inertia_tensor_eigvals,axis_major_length",
                               path_in("ms.csv")));
    res_file(r, path_in("ms.csv"));
done:
    voxa_array_free(&rgb);
    voxa_measure_table_free(&t);
    voxa_store_close(sl);
    voxa_store_close(si);
    return st;
}

/* The 2-D perimeter's and the Euler number's passes from a store, by blocks
 * of rows, into the CSV. */
static voxa_status perimeter_job(const void *param, result *r) {
    (void)param;
    voxa_status st;
    voxa_store *sl = NULL;
    voxa_measure_table t;
    memset(&t, 0, sizeof t);
    TRY(voxa_store_open(path_in("lab2d.npy"), &sl));
    TRY(voxa_measure_store_with(sl, NULL, NULL, 300, VOXA_MEASURE_PERIMETER | VOXA_MEASURE_EULER,
                                (voxa_progress){0}, &t));
    res_add(r, t.perimeter, (size_t)t.n * sizeof *t.perimeter);
    res_add(r, t.euler_number, (size_t)t.n * sizeof *t.euler_number);
    TRY(voxa_measure_write_csv(&t, "label,perimeter,euler_number", path_in("pm.csv")));
    res_file(r, path_in("pm.csv"));
done:
    voxa_measure_table_free(&t);
    voxa_store_close(sl);
    return st;
}

static voxa_status args_job(const void *param, result *r) {
    (void)param;
    voxa_status st;
    voxa_args a;
    int ok = 0;
    voxa_array out = {0};
    TRY(voxa_args_init(&a, voxa_op_find("balls")));
    ok = 1;
    TRY(voxa_args_parse(&a, "points", path_in("pts.csv")));
    TRY(voxa_args_parse(&a, "shape", "6,9,11"));
    TRY(voxa_args_parse(&a, "radius", "2"));
    TRY(voxa_op_check(&a, NULL));
    TRY(voxa_array_new(&out, VOXA_U8, 3, (const int64_t[]){6, 9, 11}));
    TRY(voxa_op_run(&a, NULL, &out, NULL, NULL));
    res_array(r, &out);
    voxa_args_free(&a);
    ok = 0;
    TRY(voxa_args_init(&a, voxa_op_find("deconvolve")));
    ok = 1;
    TRY(voxa_args_parse(&a, "psf", path_in("psf.npy")));
    TRY(voxa_args_parse(&a, "iterations", "2"));
    TRY(voxa_args_parse(&a, "normalize_psf", "1"));
    TRY(voxa_op_check(&a, &src));
    TRY(voxa_op_run(&a, &src, &src2, NULL, NULL));
    res_array(r, &src2);
done:
    voxa_array_free(&out);
    if (ok) voxa_args_free(&a);
    return st;
}

static voxa_status label_steps_job(const void *param, result *r) {
    (void)param;
    voxa_status st;
    int64_t first[5] = {10, 2, 7, 5, 0}, pairs[6] = {1, 3, 4, 2, 3, 1}, final[5], nc = -1;
    int64_t face[4] = {1, 2, 3, 0}, *pp = NULL, np = 0;
    unsigned char stc[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    voxa_array fv;
    voxa_array_view(&fv, face, VOXA_I64, 2, (const int64_t[]){2, 2});
    TRY(voxa_label_resolve(5, first, pairs, 3, final, &nc));
    res_add(r, final, sizeof final);
    TRY(voxa_label_face_pairs(&fv, 0, (const int64_t[]){7, 0}, (const int64_t[]){0, 0},
                              (const int64_t[]){8, 2}, stc, &pp, &np));
    res_add(r, pp, sizeof(int64_t) * 2 * (size_t)np);
done:
    free(pp);
    return st;
}

static voxa_status psf_job(const void *param, result *r) {
    (void)param;
    voxa_status st;
    voxa_array g = {0}, q = {0}, rd = {0};
    voxa_measure_table t;
    memset(&t, 0, sizeof t);
    double sigma[3] = {1, 1.5, 0.7};
    TRY(voxa_array_new(&g, VOXA_F32, 3, (const int64_t[]){5, 7, 5}));
    TRY(voxa_psf_gaussian(&g, sigma));
    TRY(voxa_psf_prepare(&g, 1, &q));
    res_array(r, &q);
    TRY(voxa_psf_read(path_in("psf.npy"), 1, &rd));
    res_array(r, &rd);
    TRY(voxa_measure(&src3, &src, NULL, &t)); /* labels with intensity, in memory */
    res_add(r, &t.n, sizeof t.n);
    TRY(voxa_measure_write_csv(&t, NULL, path_in("mi.csv")));
    res_file(r, path_in("mi.csv"));
    TRY(voxa_deconv_wisdom_save(path_in("w.fftw")));
    TRY(voxa_deconv_wisdom_load(path_in("w.fftw")));
done:
    voxa_measure_table_free(&t);
    voxa_array_free(&g);
    voxa_array_free(&q);
    voxa_array_free(&rd);
    return st;
}

static void test_misc(void) {
    voxa_array lab;
    make(&src, VOXA_F32, 3, 0, 61);
    make(&lab, VOXA_U8, 3, 0, 62);
    for (int64_t k = 0; k < voxa_array_size(&lab); k++) ((uint8_t *)lab.data)[k] = (uint8_t)(vtest_rand(&(unsigned long long){k + 7}) % 6);
    CHECK_OK(voxa_write(path_in("img.npy"), &src));
    CHECK_OK(voxa_write(path_in("lab.zarr"), &lab));
    sweep("measure + preview from stores, csv", store_job, NULL, NULL);
    voxa_array lab2;
    make(&lab2, VOXA_U8, 2, 0, 63);
    for (int64_t k = 0; k < voxa_array_size(&lab2); k++)
        ((uint8_t *)lab2.data)[k] = (uint8_t)(vtest_rand(&(unsigned long long){k + 11}) % 4);
    CHECK_OK(voxa_write(path_in("lab2d.npy"), &lab2));
    sweep("2-D perimeter and euler_number from a store, csv", perimeter_job, NULL, NULL);
    voxa_array_free(&lab2);
    FILE *f = fopen(path_in("pts.csv"), "w");
    if (f) {
        fputs("z,y,x\n1,2,3\n4.5,6,7\n0,0,0\n", f);
        fclose(f);
    }
    voxa_array p;
    CHECK_OK(voxa_array_new(&p, VOXA_F64, 3, (const int64_t[]){3, 3, 3}));
    for (int k = 0; k < 27; k++) ((double *)p.data)[k] = k == 13 ? 4 : 1;
    CHECK_OK(voxa_write(path_in("psf.npy"), &p));
    CHECK_OK(voxa_array_new(&src2, VOXA_F32, 3, src.shape));
    sweep("args from files (csv points, npy psf)", args_job, NULL, NULL);
    sweep("label merge steps", label_steps_job, NULL, NULL);
    src3 = lab;
    sweep("psf, measure with intensity, wisdom", psf_job, NULL, NULL);
    voxa_array_free(&p);
    voxa_array_free(&lab);
    voxa_array_free(&src);
    voxa_array_free(&src2);
}

int main(void) {
    if (sweep_begin("failalloc-io")) return 0;
    RUN(test_files);
    RUN(test_stream_files);
    RUN(test_pipeline);
    RUN(test_misc);
    sweep_end();
    VTEST_END();
}
