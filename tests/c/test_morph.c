/* morph: every path against the brute-force definition (scipy's semantics)
 * on small random volumes, both border values, iterations, aliasing, errors. */
#include "vtest.h"

static unsigned long long seed = 12345;

/* out[v] = AND/OR over footprint offsets, outside = bv; centre = shape//2 */
static void brute(const uint8_t *a, const int64_t *sh, const uint8_t *fp, const int64_t *fs,
                  int dilate, int bv, uint8_t *out) {
    for (int64_t z = 0; z < sh[0]; z++)
        for (int64_t y = 0; y < sh[1]; y++)
            for (int64_t x = 0; x < sh[2]; x++) {
                int acc = dilate ? 0 : 1;
                for (int64_t k = 0; k < fs[0]; k++)
                    for (int64_t j = 0; j < fs[1]; j++)
                        for (int64_t i = 0; i < fs[2]; i++) {
                            if (!fp[(k * fs[1] + j) * fs[2] + i]) continue;
                            int64_t oz = k - fs[0] / 2, oy = j - fs[1] / 2, ox = i - fs[2] / 2;
                            if (dilate) { oz = -oz; oy = -oy; ox = -ox; }
                            int64_t zz = z + oz, yy = y + oy, xx = x + ox;
                            int v = (zz < 0 || yy < 0 || xx < 0 || zz >= sh[0] || yy >= sh[1] ||
                                     xx >= sh[2]) ? bv : a[(zz * sh[1] + yy) * sh[2] + xx];
                            if (dilate) acc |= v;
                            else acc &= v;
                        }
                out[(z * sh[1] + y) * sh[2] + x] = (uint8_t)acc;
            }
}

static void run_case(voxa_morph_element se, const int64_t *sh) {
    int64_t n = sh[0] * sh[1] * sh[2];
    uint8_t *a = malloc((size_t)n), *o = malloc((size_t)n), *w = malloc((size_t)n),
            *w2 = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) a[i] = vtest_rand(&seed) % 100 < 60;
    voxa_array fa;
    CHECK_OK(voxa_morph_element_array(&se, 3, &fa));
    voxa_array in, out;
    voxa_array_view(&in, a, VOXA_BOOL, 3, sh);
    voxa_array_view(&out, o, VOXA_BOOL, 3, sh);
    for (int bv = 0; bv <= 1; bv++)
        for (int dil = 0; dil <= 1; dil++)
            for (int it = 1; it <= 2; it++) {
                voxa_morph_params p = {se, it, bv, {0}};
                CHECK_OK(voxa_morph(dil ? VOXA_MORPH_DILATE : VOXA_MORPH_ERODE, &in, &out, &p));
                brute(a, sh, fa.data, fa.shape, dil, bv, w);
                if (it == 2) {
                    memcpy(w2, w, (size_t)n);
                    brute(w2, sh, fa.data, fa.shape, dil, bv, w);
                }
                int same = !memcmp(o, w, (size_t)n);
                CHECK(same);
                if (!same) fprintf(stderr, "  kind %d bv %d dilate %d it %d\n", se.kind, bv, dil, it);
            }
    /* in place (out aliases in) equals out of place */
    voxa_morph_params p = {se, 1, 0, {0}};
    CHECK_OK(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p));
    memcpy(w, a, (size_t)n);
    voxa_array inplace;
    voxa_array_view(&inplace, w, VOXA_BOOL, 3, sh);
    CHECK_OK(voxa_morph(VOXA_MORPH_OPEN, &inplace, &inplace, &p));
    CHECK(!memcmp(o, w, (size_t)n));
    /* the named entry points: open = dilate(erode(a)), close = erode(dilate(a)) */
    voxa_status (*const named[4])(const voxa_array *, voxa_array *, const voxa_morph_params *) = {
        voxa_morph_dilate, voxa_morph_erode, voxa_morph_open, voxa_morph_close};
    for (int k = 0; k < 4; k++) {
        CHECK_OK(named[k](&in, &out, &p));
        int first = k == 0 || k == 3; /* dilate first? */
        brute(a, sh, fa.data, fa.shape, first, 0, w);
        if (k >= 2) {
            memcpy(w2, w, (size_t)n);
            brute(w2, sh, fa.data, fa.shape, !first, 0, w);
        }
        CHECK(!memcmp(o, w, (size_t)n));
    }
    voxa_array_free(&fa);
    free(a); free(o); free(w); free(w2);
}

static void test_paths(void) {
    int64_t sh[3] = {6, 7, 8};
    voxa_morph_element se;
    for (int t = 1; t <= 3; t += 2) {
        voxa_set_threads(t);
        memset(&se, 0, sizeof se);
        se.kind = VOXA_SE_BALL; se.radius = 2.5;
        run_case(se, sh);
        double sp[3] = {2, 1, 0.7};
        se.spacing = sp;
        run_case(se, sh);
        se.spacing = NULL;
        se.kind = VOXA_SE_DIAMOND; se.radius = 2;
        run_case(se, sh);
        se.kind = VOXA_SE_BOX; se.box[0] = 2; se.box[1] = 3; se.box[2] = 4;
        run_case(se, sh);
        se.kind = VOXA_SE_CONNECTIVITY; se.connectivity = 2;
        run_case(se, sh);
        /* an arbitrary even-sized footprint */
        uint8_t fp[2 * 3 * 4];
        for (int i = 0; i < 24; i++) fp[i] = vtest_rand(&seed) % 2;
        fp[0] = 1;
        int64_t fs[3] = {2, 3, 4};
        voxa_array f;
        voxa_array_view(&f, fp, VOXA_BOOL, 3, fs);
        se.kind = VOXA_SE_FOOTPRINT; se.footprint = &f;
        run_case(se, sh);
        /* bit-packed rows across word boundaries (lines of 1, 63..65, 130) */
        int64_t lens[5] = {1, 63, 64, 65, 130};
        for (int i = 0; i < 5; i++) {
            int64_t sh2[3] = {3, 4, lens[i]};
            run_case(se, sh2);
            voxa_morph_element b;
            memset(&b, 0, sizeof b);
            b.kind = VOXA_SE_BALL; b.radius = 2;
            run_case(b, sh2);
        }
    }
    voxa_set_threads(0);
    char buf[256];
    memset(&se, 0, sizeof se);
    se.kind = VOXA_SE_BALL; se.radius = 21;
    CHECK_OK(voxa_morph_describe(&se, 3, 1, buf, sizeof buf));
    CHECK(!strncmp(buf, "ball: squared", 13));
    se.radius = 5; /* small: bit-packed rows */
    CHECK_OK(voxa_morph_describe(&se, 3, 1, buf, sizeof buf));
    CHECK(!strncmp(buf, "ball: bit-packed rows, 81 runs", 30));
    se.radius = 21;
    int64_t halo[3];
    CHECK_OK(voxa_morph_halo(&se, 3, VOXA_MORPH_OPEN, 2, halo));
    CHECK(halo[0] == 84 && halo[2] == 84);
}

static void test_errors(void) {
    int64_t sh[3] = {3, 4, 5};
    uint8_t a[60] = {0}, o[60];
    voxa_array in, out;
    voxa_array_view(&in, a, VOXA_BOOL, 3, sh);
    voxa_array_view(&out, o, VOXA_BOOL, 3, sh);
    voxa_morph_params p;
    memset(&p, 0, sizeof p);
    p.iterations = 1;
    p.se.kind = VOXA_SE_BALL;
    p.se.radius = -1;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("negative");
    p.se.radius = 1e9;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("too large");
    p.se.kind = VOXA_SE_DIAMOND;
    p.se.radius = 1.5;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("integer");
    uint8_t fp[9] = {0, 2, 0, 1, 1, 1, 0, 1, 0};
    int64_t fs[3] = {1, 3, 3};
    voxa_array f;
    voxa_array_view(&f, fp, VOXA_U8, 3, fs);
    p.se.kind = VOXA_SE_FOOTPRINT;
    p.se.footprint = &f;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("0 or 1");
    memset(fp, 0, sizeof fp);
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("empty");
    f.ndim = 2;
    f.shape[0] = 3;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("dimensions");
    p.se.kind = VOXA_SE_BOX;
    p.se.box[0] = 0;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("box size");
    p.se.box[0] = p.se.box[1] = p.se.box[2] = 1;
    p.border_value = 2;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("border_value");
    p.border_value = 0;
    voxa_array f32 = out;
    f32.dtype = VOXA_F32;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &f32, &p), VOXA_EINVAL);
    CHECK_MSG("output dtype");
    double sp[3] = {1, -1, 1};
    p.se.kind = VOXA_SE_BALL;
    p.se.radius = 2;
    p.se.spacing = sp;
    CHECK_STATUS(voxa_morph(VOXA_MORPH_OPEN, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("spacing[1]");
}

/* A volume big enough to be split across threads: the integer (unit
 * spacing) ball path must equal the double (anisotropic) path with a spacing
 * that gives the same element, and 1 and 3 threads must agree. */
static void test_large(void) {
    int64_t sh[3] = {6, 300, 310}, n = sh[0] * sh[1] * sh[2];
    uint8_t *a = malloc((size_t)n), *o1 = malloc((size_t)n), *o2 = malloc((size_t)n),
            *o3 = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) a[i] = vtest_rand(&seed) % 100 < 85;
    voxa_array in, out1, out2, out3;
    voxa_array_view(&in, a, VOXA_BOOL, 3, sh);
    voxa_array_view(&out1, o1, VOXA_BOOL, 3, sh);
    voxa_array_view(&out2, o2, VOXA_BOOL, 3, sh);
    voxa_array_view(&out3, o3, VOXA_BOOL, 3, sh);
    double sp[3] = {1, 1, 1.0000001};
    for (int bv = 0; bv <= 1; bv++) {
        voxa_morph_params p;
        memset(&p, 0, sizeof p);
        p.iterations = 1;
        p.border_value = bv;
        p.se.kind = VOXA_SE_BALL;
        p.se.radius = 12; /* large: the EDT path */
        voxa_set_threads(1);
        CHECK_OK(voxa_morph(VOXA_MORPH_OPEN, &in, &out1, &p));
        voxa_set_threads(3);
        CHECK_OK(voxa_morph(VOXA_MORPH_OPEN, &in, &out2, &p));
        p.se.spacing = sp;
        CHECK_OK(voxa_morph(VOXA_MORPH_OPEN, &in, &out3, &p));
        CHECK(!memcmp(o1, o2, (size_t)n));
        CHECK(!memcmp(o1, o3, (size_t)n));
        /* diamond r=2 equals connectivity 1 with 2 iterations, box 3 = conn 3 */
        memset(&p.se, 0, sizeof p.se);
        p.se.kind = VOXA_SE_DIAMOND;
        p.se.radius = 2;
        CHECK_OK(voxa_morph(VOXA_MORPH_CLOSE, &in, &out1, &p));
        p.se.kind = VOXA_SE_CONNECTIVITY;
        p.se.connectivity = 1;
        p.iterations = 2;
        CHECK_OK(voxa_morph(VOXA_MORPH_CLOSE, &in, &out2, &p));
        CHECK(!memcmp(o1, o2, (size_t)n));
        /* bit-packed rows: 1 and 3 threads agree and equal the definition */
        memset(&p.se, 0, sizeof p.se);
        p.se.kind = VOXA_SE_BALL;
        p.se.radius = 3;
        p.iterations = 1;
        for (int dil = 0; dil <= 1; dil++) {
            voxa_morph_op op = dil ? VOXA_MORPH_DILATE : VOXA_MORPH_ERODE;
            voxa_set_threads(1);
            CHECK_OK(voxa_morph(op, &in, &out1, &p));
            voxa_set_threads(3);
            CHECK_OK(voxa_morph(op, &in, &out2, &p));
            CHECK(!memcmp(o1, o2, (size_t)n));
            voxa_array fa;
            CHECK_OK(voxa_morph_element_array(&p.se, 3, &fa));
            brute(a, sh, fa.data, fa.shape, dil, bv, o3);
            CHECK(!memcmp(o1, o3, (size_t)n));
            voxa_array_free(&fa);
        }
    }
    voxa_set_threads(0);
    free(a); free(o1); free(o2); free(o3);
}

/* iterations < 1 with an element lacking its centre: results that cycle
 * are an error, not a hang; results that settle are returned. */
static void test_until_stable_cycles(void) {
    int64_t sh[1] = {6};
    uint8_t a[6] = {0, 0, 1, 0, 0, 0}, o[6], fp[3] = {1, 0, 1};
    int64_t fs[1] = {3};
    voxa_array in, out, f;
    voxa_array_view(&in, a, VOXA_BOOL, 1, sh);
    voxa_array_view(&out, o, VOXA_BOOL, 1, sh);
    voxa_array_view(&f, fp, VOXA_BOOL, 1, fs);
    voxa_morph_params p;
    memset(&p, 0, sizeof p);
    p.se.kind = VOXA_SE_FOOTPRINT;
    p.se.footprint = &f;
    p.iterations = -1; /* {2} -> {1, 3} -> {0, 2, 4} -> {1, 3, 5} -> {0, 2, 4} ... */
    CHECK_STATUS(voxa_morph(VOXA_MORPH_DILATE, &in, &out, &p), VOXA_EINVAL);
    CHECK_MSG("repeat every 2 iterations");
    p.iterations = 0; /* erosion of all ones by {-1, +1}, border 0: shrinks to nothing */
    memset(a, 1, sizeof a);
    CHECK_OK(voxa_morph(VOXA_MORPH_ERODE, &in, &out, &p));
    for (int i = 0; i < 6; i++) CHECK(o[i] == 0);
}

int main(void) {
    RUN(test_large);
    RUN(test_paths);
    RUN(test_errors);
    RUN(test_until_stable_cycles);
    VTEST_END();
}
