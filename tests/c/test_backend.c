/* Backends: names, selection, probing, and every GPU op against the CPU
 * backend voxel for voxel (random and adversarial inputs, odd sizes, sizes
 * across work-group boundaries, every connectivity, every dtype width).
 *
 * The GPU backends tested are those in VOXA_TEST_BACKENDS (default
 * "opencl", which `make test` provides through PoCL; tools/gpu-check.sh
 * sets "cuda opencl"). A listed backend that cannot run is a failure, not a
 * skip: a missing ICD must not pass silently. */
#include "vtest.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static unsigned long long seed = 0x9e3779b97f4a7c15ull;
static double urand(void) { return (double)(vtest_rand(&seed) >> 11) / 9007199254740992.0; }

static voxa_backend gpus[2];
static int ngpus;

/* ---- names, selection, probing ------------------------------------------------- */

static void test_names(void) {
    voxa_backend b;
    for (int i = 0; i < VOXA_NBACKENDS; i++) {
        CHECK_OK(voxa_backend_from_name(voxa_backend_name((voxa_backend)i), &b));
        CHECK(b == (voxa_backend)i);
    }
    CHECK_STATUS(voxa_backend_from_name("gpu", &b), VOXA_EINVAL);
    CHECK_MSG("unknown backend 'gpu'");
    CHECK(!strcmp(voxa_backend_name((voxa_backend)7), "invalid"));
    CHECK_OK(voxa_backend_select(VOXA_BACKEND_AUTO));
    CHECK(voxa_backend_selected() == VOXA_BACKEND_AUTO);
    CHECK_OK(voxa_backend_select(VOXA_BACKEND_CPU));
    CHECK(voxa_backend_selected() == VOXA_BACKEND_CPU);
    CHECK_STATUS(voxa_backend_select((voxa_backend)9), VOXA_EINVAL);
    CHECK_OK(voxa_backend_resolve(VOXA_BACKEND_CPU, &b));
    CHECK(b == VOXA_BACKEND_CPU);
    CHECK_OK(voxa_backend_resolve(VOXA_BACKEND_AUTO, &b));
    CHECK(b != VOXA_BACKEND_AUTO);
}

static void test_query(void) {
    voxa_backend_info info;
    CHECK_OK(voxa_backend_query(VOXA_BACKEND_CPU, &info));
    CHECK(info.available && info.ndevices == 1);
    CHECK_STATUS(voxa_backend_query(VOXA_BACKEND_AUTO, &info), VOXA_EINVAL);
    for (int b = VOXA_BACKEND_OPENCL; b <= VOXA_BACKEND_CUDA; b++) {
        CHECK_OK(voxa_backend_query((voxa_backend)b, &info));
        /* available, or a reason; resolve agrees with query */
        CHECK(info.available ? info.ndevices > 0 : info.why[0] != 0);
        voxa_backend r;
        voxa_status s = voxa_backend_resolve((voxa_backend)b, &r);
        CHECK((s == VOXA_OK) == (info.available != 0));
        if (s != VOXA_OK) {
            CHECK(s == VOXA_EUNSUPPORTED);
            CHECK_MSG("cannot run");
        }
    }
    for (int i = 0; i < ngpus; i++) {
        CHECK_OK(voxa_backend_query(gpus[i], &info));
        CHECK(info.available);
        if (!info.available)
            fprintf(stderr, "backend %s listed in VOXA_TEST_BACKENDS cannot run: %s\n",
                    voxa_backend_name(gpus[i]), info.why);
        else
            fprintf(stderr, "testing %s on %s\n", voxa_backend_name(gpus[i]),
                    info.devices[0].name);
    }
}

/* ---- balls --------------------------------------------------------------------------- */

static int same_array(const voxa_array *a, const voxa_array *b) {
    int64_t n = voxa_array_size(a), idx[VOXA_MAXDIM] = {0};
    size_t es = voxa_dtype_size(a->dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < a->ndim; d++) oa += idx[d] * a->strides[d], ob += idx[d] * b->strides[d];
        if (memcmp((char *)a->data + oa, (char *)b->data + ob, es)) return 0;
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (++idx[d] < a->shape[d]) break;
            idx[d] = 0;
        }
    }
    return 1;
}

/* A strided view (every other element on the last axis) of a fresh array. */
static void strided(voxa_array *owner, voxa_array *view, voxa_dtype t, int nd, const int64_t *sh) {
    int64_t big[VOXA_MAXDIM];
    for (int d = 0; d < nd; d++) big[d] = sh[d] * (d == nd - 1 ? 2 : 1);
    voxa_array_new(owner, t, nd, big);
    *view = *owner;
    view->owner = NULL;
    for (int d = 0; d < nd; d++) view->shape[d] = sh[d];
    view->strides[nd - 1] *= 2;
}

static void balls_case(int nd, const int64_t *sh, int64_t np, int owner, voxa_dtype t,
                       int anis, int halfint, int strided_out) {
    double *pts = malloc((size_t)(np * nd + 1) * sizeof *pts);
    double *rad = malloc((size_t)(np + 1) * sizeof *rad), sp[3] = {1, 1, 1};
    for (int64_t k = 0; k < np; k++) {
        for (int d = 0; d < nd; d++) {
            double v = urand() * (double)(sh[d] + 8) - 4; /* some outside */
            pts[k * nd + d] = halfint ? floor(v) + 0.5 * (double)(vtest_rand(&seed) & 1) : v;
        }
        rad[k] = halfint ? (double)(vtest_rand(&seed) % 5) : urand() * 6;
    }
    if (anis)
        for (int d = 0; d < nd; d++) sp[d] = 0.5 + urand() * 1.5;
    voxa_balls_params p = {.points = pts, .npoints = np, .radius = 2.5, .radii = anis ? rad : NULL,
                           .spacing = anis ? sp : NULL, .owner = owner};
    if (halfint) p.radii = rad;
    voxa_array ref, own_g, got;
    voxa_array_new(&ref, t, nd, sh);
    CHECK_OK(voxa_balls_on(VOXA_BACKEND_CPU, &p, &ref));
    for (int i = 0; i < ngpus; i++) {
        if (strided_out) strided(&own_g, &got, t, nd, sh);
        else voxa_array_new(&own_g, t, nd, sh), got = own_g;
        memset(own_g.data, 7, (size_t)voxa_array_size(&own_g) * voxa_dtype_size(t));
        CHECK_OK(voxa_balls_on(gpus[i], &p, &got));
        int same = same_array(&ref, &got);
        CHECK(same);
        if (!same)
            fprintf(stderr, "  balls %s: nd %d np %lld owner %d dtype %s anis %d halfint %d\n",
                    voxa_backend_name(gpus[i]), nd, (long long)np, owner, voxa_dtype_name(t),
                    anis, halfint);
        voxa_array_free(&own_g);
    }
    voxa_array_free(&ref);
    free(pts);
    free(rad);
}

/* Points whose ball boundary falls exactly between the plain and the fused
 * (multiply-add) evaluation of the rule at one voxel: r is chosen with
 * r*r == one of the two sums, so a device that contracted x + t*t into an
 * fma would paint that voxel differently from the CPU. */
static void balls_fma_case(void) {
    const double sp[3] = {1.1, 0.9, 1.3};
    int64_t sh[3] = {16, 16, 16};
    double pts[3 * 64], rad[64];
    int np = 0;
    for (int tries = 0; tries < 200000 && np < 64; tries++) {
        double p[3], v[3], t[3];
        for (int d = 0; d < 3; d++) {
            v[d] = (double)(vtest_rand(&seed) % 16);
            p[d] = v[d] + (urand() - 0.5) * 6;
            t[d] = (v[d] - p[d]) * sp[d];
        }
        double plain = ((0.0 + t[0] * t[0]) + t[1] * t[1]) + t[2] * t[2];
        double fused = fma(t[2], t[2], fma(t[1], t[1], t[0] * t[0]));
        if (plain == fused) continue;
        double target = (np % 2) ? plain : fused, r = sqrt(target);
        for (int k = 0; k < 4 && r * r != target; k++) r = nextafter(r, k % 2 ? INFINITY : 0);
        if (r * r != target) continue;
        memcpy(pts + 3 * np, p, sizeof p);
        rad[np++] = r;
    }
    CHECK(np == 64);
    voxa_balls_params p = {.points = pts, .npoints = np, .radii = rad, .spacing = sp};
    for (int owner = 0; owner < 2; owner++) {
        p.owner = owner;
        voxa_dtype t = owner ? VOXA_I32 : VOXA_U8;
        voxa_array ref, got;
        voxa_array_new(&ref, t, 3, sh);
        voxa_array_new(&got, t, 3, sh);
        CHECK_OK(voxa_balls_on(VOXA_BACKEND_CPU, &p, &ref));
        for (int i = 0; i < ngpus; i++) {
            CHECK_OK(voxa_balls_on(gpus[i], &p, &got));
            int same = same_array(&ref, &got);
            CHECK(same);
            if (!same)
                fprintf(stderr, "  balls %s: boundary voxels differ: the device fused x + t*t\n",
                        voxa_backend_name(gpus[i]));
        }
        voxa_array_free(&ref);
        voxa_array_free(&got);
    }
}

static void test_balls(void) {
    balls_fma_case();
    const int64_t s1[1] = {1000}, s2[2] = {67, 259}, s3[3] = {13, 41, 257}, s3b[3] = {1, 1, 1};
    for (int owner = 0; owner < 2; owner++) {
        voxa_dtype ts[3] = {owner ? VOXA_I32 : VOXA_U8, owner ? VOXA_U32 : VOXA_BOOL,
                            owner ? VOXA_I64 : VOXA_U8};
        for (int v = 0; v < 3; v++) {
            balls_case(1, s1, 40, owner, ts[v], v == 1, v == 2, 0);
            balls_case(2, s2, 120, owner, ts[v], v == 1, v == 2, v == 0);
            balls_case(3, s3, 300, owner, ts[v], v == 1, v == 2, v == 2);
            balls_case(3, s3b, 5, owner, ts[v], v == 1, v == 2, 0);
        }
        balls_case(3, s3, 0, owner, ts[0], 0, 0, 0); /* no points */
    }
    /* errors: the CPU's checks and messages */
    double pt[3] = {1, NAN, 2};
    int64_t sh[3] = {4, 4, 4};
    voxa_array o;
    voxa_array_new(&o, VOXA_U8, 3, sh);
    voxa_balls_params p = {.points = pt, .npoints = 1, .radius = 1};
    for (int i = 0; i < ngpus; i++) {
        CHECK_STATUS(voxa_balls_on(gpus[i], &p, &o), VOXA_EINVAL);
        CHECK_MSG("non-finite coordinate on axis 1");
    }
    int64_t sh4[4] = {2, 2, 2, 2};
    voxa_array o4;
    voxa_array_new(&o4, VOXA_U8, 4, sh4);
    pt[1] = 0;
    double pt4[4] = {0, 0, 0, 0};
    p.points = pt4;
    for (int i = 0; i < ngpus; i++) {
        CHECK_STATUS(voxa_balls_on(gpus[i], &p, &o4), VOXA_EUNSUPPORTED);
        CHECK_MSG("1-D to 3-D");
    }
    voxa_array_free(&o);
    voxa_array_free(&o4);
}

/* ---- label ------------------------------------------------------------------------- */

static void label_case(const voxa_array *in, const unsigned char *st, int conn, voxa_dtype ot,
                       const char *what) {
    voxa_array ref, got;
    int64_t nref = -1, ngot = -1;
    voxa_array_new(&ref, ot, in->ndim, in->shape);
    voxa_status sr = voxa_label_on(VOXA_BACKEND_CPU, in, st, conn, &ref, &nref);
    for (int i = 0; i < ngpus; i++) {
        voxa_array_new(&got, ot, in->ndim, in->shape);
        voxa_status sg = voxa_label_on(gpus[i], in, st, conn, &got, &ngot);
        CHECK(sg == sr);
        CHECK(nref == ngot);
        int same = sr != VOXA_OK || same_array(&ref, &got);
        CHECK(same);
        if (sg != sr || nref != ngot || !same)
            fprintf(stderr, "  label %s %s conn %d: status %d/%d n %lld/%lld (%s)\n",
                    voxa_backend_name(gpus[i]), what, conn, sr, sg, (long long)nref,
                    (long long)ngot, voxa_last_error());
        voxa_array_free(&got);
    }
    voxa_array_free(&ref);
}

static void fill_random(voxa_array *a, double density) {
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0; i < n; i++) ((uint8_t *)a->data)[i] = urand() < density;
}

static void test_label(void) {
    /* (70, 64, 64): 560 root counts, more than one block of the device scan (512) */
    const int64_t shapes[][3] = {{1, 1, 1000}, {1, 37, 261}, {19, 33, 67}, {3, 257, 5},
                                 {64, 64, 64}, {1, 1, 1}, {70, 64, 64}};
    const int nds[] = {1, 2, 3, 3, 3, 3, 3};
    const double dens[] = {0.2, 0.45, 0.6, 0.9};
    for (int s = 0; s < 7; s++) {
        int nd = nds[s];
        const int64_t *sh = shapes[s] + (3 - nd);
        voxa_array m;
        voxa_array_new(&m, VOXA_U8, nd, sh);
        for (int di = 0; di < 4; di++) {
            fill_random(&m, dens[di]);
            for (int c = 1; c <= nd; c++) label_case(&m, NULL, c, VOXA_I32, "random");
        }
        voxa_array_free(&m);
    }
    /* adversarial: a serpentine (one component visiting every row, joined
     * at alternate ends) whose root is far from most voxels, and a comb */
    int64_t sh[3] = {9, 63, 129};
    voxa_array m;
    voxa_array_new(&m, VOXA_U8, 3, sh);
    uint8_t *v = m.data;
    for (int64_t z = 0; z < sh[0]; z++)
        for (int64_t y = 0; y < sh[1]; y++)
            for (int64_t x = 0; x < sh[2]; x++) {
                int row = (y % 2 == 0), link = (y % 4 == 1) ? x == sh[2] - 1 : (y % 4 == 3) ? x == 0 : 0;
                v[(z * sh[1] + y) * sh[2] + x] = (uint8_t)(row || link || (z % 2 == 0 && y == 0));
            }
    for (int c = 1; c <= 3; c++) label_case(&m, NULL, c, VOXA_I64, "serpentine");
    for (int64_t i = 0; i < voxa_array_size(&m); i++) v[i] = (i % 129) % 2 == 0 || i % 3 == 0;
    for (int c = 1; c <= 3; c++) label_case(&m, NULL, c, VOXA_U32, "comb");
    /* checkerboard: connectivity 1 gives one label per voxel */
    for (int64_t i = 0; i < voxa_array_size(&m); i++) {
        int64_t x = i % sh[2], y = i / sh[2] % sh[1], z = i / sh[2] / sh[1];
        v[i] = (x + y + z) % 2 == 0;
    }
    for (int c = 1; c <= 3; c++) label_case(&m, NULL, c, VOXA_I32, "checkerboard");
    /* overflow: > 255 labels into uint8 is EOVERFLOW on both */
    label_case(&m, NULL, 1, VOXA_U8, "overflow");
    label_case(&m, NULL, 3, VOXA_U16, "u16");
    /* a custom structure: x neighbours and one diagonal pair only */
    unsigned char st[27] = {0};
    st[12] = st[14] = st[13] = 1;
    st[0] = st[26] = 1;
    fill_random(&m, 0.5);
    label_case(&m, st, 0, VOXA_I32, "structure");
    st[0] = 0;
    label_case(&m, st, 0, VOXA_I32, "asymmetric"); /* EINVAL on both */
    voxa_array_free(&m);
    /* float input with NaN (foreground) and -0.0 (background), strided */
    int64_t fs[2] = {31, 47};
    voxa_array fo, f;
    strided(&fo, &f, VOXA_F32, 2, fs);
    for (int64_t y = 0; y < fs[0]; y++)
        for (int64_t x = 0; x < fs[1]; x++) {
            double u = urand();
            float val = u < 0.3 ? NAN : u < 0.5 ? -0.0f : u < 0.7 ? 0.0f : 1.5f;
            *(float *)((char *)f.data + y * f.strides[0] + x * f.strides[1]) = val;
        }
    for (int c = 1; c <= 2; c++) label_case(&f, NULL, c, VOXA_I16, "float strided");
    voxa_array_free(&fo);
    /* 4-D: EUNSUPPORTED on the GPU */
    int64_t s4[4] = {2, 2, 2, 2};
    voxa_array m4, o4;
    voxa_array_new(&m4, VOXA_U8, 4, s4);
    voxa_array_new(&o4, VOXA_I32, 4, s4);
    for (int i = 0; i < ngpus; i++) {
        CHECK_STATUS(voxa_label_on(gpus[i], &m4, NULL, 1, &o4, NULL), VOXA_EUNSUPPORTED);
        CHECK_MSG("1-D to 3-D");
    }
    voxa_array_free(&m4);
    voxa_array_free(&o4);
}

/* ---- roi ------------------------------------------------------------------------------ */

static void roi_case(voxa_dtype t, int mode, int centered, int strided_in) {
    int64_t sh[3] = {11, 13, 3}, size[2] = {5, 6};
    voxa_array io, in;
    if (strided_in) strided(&io, &in, t, 3, sh);
    else voxa_array_new(&io, t, 3, sh), in = io;
    int64_t n = voxa_array_size(&in), idx[3] = {0};
    size_t es = voxa_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        unsigned long long r = vtest_rand(&seed);
        if (t == VOXA_BOOL) r &= 1;
        if (t == VOXA_F32 || t == VOXA_F64) r &= 0x3fffffffffffffull; /* no NaN payloads */
        memcpy((char *)in.data + idx[0] * in.strides[0] + idx[1] * in.strides[1] +
                   idx[2] * in.strides[2], &r, es);
        for (int d = 2; d >= 0; d--) {
            if (++idx[d] < sh[d]) break;
            idx[d] = 0;
        }
    }
    int64_t np = 37, coords[74];
    for (int64_t i = 0; i < 2 * np; i++)
        coords[i] = mode <= VOXA_ROI_CLIP ? (int64_t)(vtest_rand(&seed) % 6) + (centered ? 3 : 0)
                                         : (int64_t)(vtest_rand(&seed) % 40) - 20;
    voxa_roi_params p = {.coords = coords, .n = np, .k = 2, .size = size, .centered = centered,
                         .mode = (voxa_roi_mode)mode, .cval = t == VOXA_BOOL ? 1 : 3};
    int64_t os[4] = {np, 5, 6, 3};
    voxa_array ref, got;
    voxa_array_new(&ref, t, 4, os);
    voxa_array_new(&got, t, 4, os);
    voxa_status sr = voxa_roi_extract_on(VOXA_BACKEND_CPU, &in, &p, &ref);
    for (int i = 0; i < ngpus; i++) {
        voxa_status sg = voxa_roi_extract_on(gpus[i], &in, &p, &got);
        CHECK(sr == sg);
        int same = sr != VOXA_OK || same_array(&ref, &got);
        CHECK(same);
        if (!same || sr != sg)
            fprintf(stderr, "  roi %s dtype %s mode %d centered %d: %d/%d\n",
                    voxa_backend_name(gpus[i]), voxa_dtype_name(t), mode, centered, sr, sg);
    }
    /* paste the patches back (overwrite; later rows win where they overlap) */
    if (sr == VOXA_OK && mode != VOXA_ROI_CONSTANT) {
        voxa_roi_params q = p;
        q.mode = mode == VOXA_ROI_CLIP ? VOXA_ROI_CLIP : mode == VOXA_ROI_ERROR ? VOXA_ROI_ERROR
                                                                              : VOXA_ROI_CROP;
        for (int64_t b = 0; b < (int64_t)(np * 90 * es); b++) ((uint8_t *)ref.data)[b] ^= (uint8_t)(b * 7);
        if (t == VOXA_BOOL) for (int64_t b = 0; b < np * 90; b++) ((uint8_t *)ref.data)[b] &= 1;
        voxa_array vc, vg, vgo;
        for (int i = 0; i < ngpus; i++) {
            voxa_array_new(&vc, t, 3, sh);
            strided(&vgo, &vg, t, 3, sh);
            CHECK_OK(voxa_roi_paste_on(VOXA_BACKEND_CPU, &vc, &ref, &q, VOXA_PASTE_OVERWRITE));
            CHECK_OK(voxa_roi_paste_on(gpus[i], &vg, &ref, &q, VOXA_PASTE_OVERWRITE));
            CHECK(same_array(&vc, &vg));
            CHECK_STATUS(voxa_roi_paste_on(gpus[i], &vg, &ref, &q, VOXA_PASTE_ADD),
                         VOXA_EUNSUPPORTED);
            CHECK_MSG("overwrite only");
            voxa_array_free(&vc);
            voxa_array_free(&vgo);
        }
    }
    voxa_array_free(&ref);
    voxa_array_free(&got);
    voxa_array_free(&io);
}

/* Coordinates on every axis (k = ndim): lines partly outside on the last axis. */
static void roi_case_full(voxa_dtype t, int mode) {
    int64_t sh[2] = {17, 29}, size[2] = {6, 11}, np = 200, os[3] = {200, 6, 11};
    voxa_array in, ref, got;
    voxa_array_new(&in, t, 2, sh);
    size_t es = voxa_dtype_size(t);
    for (int64_t b = 0; b < 17 * 29 * (int64_t)es; b++)
        ((uint8_t *)in.data)[b] = (uint8_t)(t == VOXA_BOOL ? b & 1 : vtest_rand(&seed) & 0x3f);
    int64_t coords[400];
    for (int i = 0; i < 400; i++) coords[i] = (int64_t)(vtest_rand(&seed) % 60) - 25;
    voxa_roi_params p = {.coords = coords, .n = np, .k = 2, .size = size,
                         .mode = (voxa_roi_mode)mode, .cval = 1};
    voxa_array_new(&ref, t, 3, os);
    voxa_array_new(&got, t, 3, os);
    CHECK_OK(voxa_roi_extract_on(VOXA_BACKEND_CPU, &in, &p, &ref));
    for (int i = 0; i < ngpus; i++) {
        memset(got.data, 0x55, (size_t)(np * 66) * es);
        CHECK_OK(voxa_roi_extract_on(gpus[i], &in, &p, &got));
        CHECK(same_array(&ref, &got));
    }
    voxa_array_free(&in);
    voxa_array_free(&ref);
    voxa_array_free(&got);
}

static void test_roi(void) {
    for (int mode = VOXA_ROI_CONSTANT; mode <= VOXA_ROI_REFLECT; mode++) {
        roi_case_full(VOXA_U8, mode);
        roi_case_full(VOXA_U32, mode);
    }
    const voxa_dtype ts[] = {VOXA_BOOL, VOXA_U8, VOXA_I16, VOXA_F32, VOXA_U64, VOXA_F64};
    for (int ti = 0; ti < 6; ti++)
        for (int mode = VOXA_ROI_ERROR; mode <= VOXA_ROI_REFLECT; mode++)
            for (int c = 0; c < 2; c++) roi_case(ts[ti], mode, c, (ti + mode) % 2);
    /* a patch outside in mode error: the same message on every backend */
    for (int i = 0; i < ngpus; i++) {
        int64_t sh[2] = {4, 4}, size[2] = {2, 2}, coords[2] = {3, 0};
        voxa_array in, out;
        voxa_array_new(&in, VOXA_U8, 2, sh);
        int64_t os[3] = {1, 2, 2};
        voxa_array_new(&out, VOXA_U8, 3, os);
        voxa_roi_params p = {.coords = coords, .n = 1, .k = 2, .size = size};
        CHECK_STATUS(voxa_roi_extract_on(gpus[i], &in, &p, &out), VOXA_EINVAL);
        CHECK_MSG("row 0 reaches outside the array on axis 0");
        voxa_array_free(&in);
        voxa_array_free(&out);
    }
}

/* ---- edt and morphology ------------------------------------------------------------ */

static void same_bytes(const voxa_array *x, const voxa_array *y) {
    CHECK(!memcmp(x->data, y->data, (size_t)voxa_array_size(x) * voxa_dtype_size(x->dtype)));
}

static void test_edt_morph(void) {
    static const int64_t shapes[][3] = {{1, 1, 7}, {5, 1, 9}, {13, 17, 19}, {3, 2, 300}};
    static const double dens[] = {0.05, 0.5, 0.97};
    double sp[3] = {2.0, 1.0, 0.7};
    for (int s = 0; s < 4; s++)
        for (int d = 0; d < 3; d++) {
            voxa_array m, c, g;
            CHECK_OK(voxa_array_new(&m, VOXA_U8, 3, shapes[s]));
            fill_random(&m, dens[d]);
            for (int k = 0; k < ngpus; k++)
                for (int v = 0; v < 3; v++) {
                    voxa_dtype t = v == 2 ? VOXA_F32 : VOXA_F64;
                    voxa_edt_params p = {v == 1 ? sp : NULL, 0, {0}};
                    CHECK_OK(voxa_array_new(&c, t, 3, shapes[s]));
                    CHECK_OK(voxa_array_new(&g, t, 3, shapes[s]));
                    CHECK_OK(voxa_edt(&m, &c, &p));
                    CHECK_OK(voxa_edt_on(gpus[k], &m, &g, &p));
                    same_bytes(&c, &g);
                    voxa_array_free(&c);
                    voxa_array_free(&g);
                }
            voxa_morph_element els[4] = {{.kind = VOXA_SE_BALL, .radius = 2.5},
                                         {.kind = VOXA_SE_BALL, .radius = 3, .spacing = sp},
                                         {.kind = VOXA_SE_DIAMOND, .radius = 2},
                                         {.kind = VOXA_SE_BOX, .box = {3, 2, 5}}};
            for (int k = 0; k < ngpus; k++)
                for (int e = 0; e < 4; e++)
                    for (int op = VOXA_MORPH_DILATE; op <= VOXA_MORPH_CLOSE; op++) {
                        voxa_morph_params p = {.se = els[e], .iterations = 1 + e % 2,
                                               .border_value = op % 2};
                        CHECK_OK(voxa_array_new(&c, VOXA_BOOL, 3, shapes[s]));
                        CHECK_OK(voxa_array_new(&g, VOXA_BOOL, 3, shapes[s]));
                        CHECK_OK(voxa_morph((voxa_morph_op)op, &m, &c, &p));
                        CHECK_OK(voxa_morph_on(gpus[k], (voxa_morph_op)op, &m, &g, &p));
                        same_bytes(&c, &g);
                        voxa_array_free(&c);
                        voxa_array_free(&g);
                    }
            voxa_array_free(&m);
        }
}

int main(void) {
    const char *env = getenv("VOXA_TEST_BACKENDS");
    char list[64];
    snprintf(list, sizeof list, "%s", env ? env : "opencl");
    for (char *tok = strtok(list, " ,"); tok && ngpus < 2; tok = strtok(NULL, " ,")) {
        voxa_backend b;
        if (voxa_backend_from_name(tok, &b) == VOXA_OK && (b == VOXA_BACKEND_OPENCL ||
                                                           b == VOXA_BACKEND_CUDA))
            gpus[ngpus++] = b;
    }
    RUN(test_names);
    RUN(test_query);
    RUN(test_balls);
    RUN(test_label);
    RUN(test_roi);
    RUN(test_edt_morph);
    VTEST_END();
}
