/* voxa_measure: a known 2-D table, a brute-force reference on random 3-D
 * labels with gaps and negative values, central second moments, identical
 * results for 1..3 threads,
 * regions (rows cut anywhere) == whole, stores by blocks == whole, strided
 * views, empty inputs, the CSV writer, and bad arguments. */
#include "vtest.h"

#include <math.h>
#include <unistd.h>

/* measure.c's tile size: lowered so that small volumes make many tiles. */
extern int64_t voxa__measure_tile_voxels;
/* measure_shape.c: a row's inertia tensor and its eigenvalues. */
void voxa__measure_tensor(const voxa_measure_table *t, int64_t r, double *T);
void voxa__measure_eigvals(const voxa_measure_table *t, int64_t r, double *ev);

static uint64_t rng_state = 12345;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Tables equal to the last bit (memcmp of every column). */
static int same_table(const voxa_measure_table *a, const voxa_measure_table *b) {
    if (a->n != b->n || a->ndim != b->ndim || a->has_intensity != b->has_intensity) return 0;
    size_t n = (size_t)a->n, nd = (size_t)a->ndim;
    if (n == 0) return 1;
    int ok = !memcmp(a->label, b->label, n * 8) && !memcmp(a->num_pixels, b->num_pixels, n * 8) &&
             !memcmp(a->area, b->area, n * 8) && !memcmp(a->centroid, b->centroid, n * nd * 8) &&
             !memcmp(a->bbox, b->bbox, n * 2 * nd * 8);
    if (ok && a->has_intensity)
        ok = !memcmp(a->intensity_mean, b->intensity_mean, n * 8) &&
             !memcmp(a->intensity_min, b->intensity_min, n * 8) &&
             !memcmp(a->intensity_max, b->intensity_max, n * 8) &&
             !memcmp(a->intensity_sum, b->intensity_sum, n * 8) &&
             !memcmp(a->centroid_weighted, b->centroid_weighted, n * nd * 8);
    return ok;
}

static void test_known_2d(void) {
    /* 0 3 3      label 3: (0,1) (0,2) (1,2); label 5: (1,0)
     * 5 0 3      intensity 1..6 in raster order */
    uint8_t lab[6] = {0, 3, 3, 5, 0, 3};
    uint16_t img[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    voxa_array L, I;
    voxa_array_view(&L, lab, VOXA_U8, 2, shape);
    voxa_array_view(&I, img, VOXA_U16, 2, shape);
    voxa_measure_table t;
    double sp[2] = {2.0, 0.5};
    CHECK_OK(voxa_measure(&L, &I, sp, &t));
    CHECK(t.n == 2 && t.label[0] == 3 && t.label[1] == 5);
    CHECK(t.num_pixels[0] == 3 && t.num_pixels[1] == 1);
    CHECK(t.area[0] == 3.0 && t.area[1] == 1.0);
    CHECK(t.centroid[0] == 2.0 / 3.0 && t.centroid[1] == 2.5 / 3.0); /* (1/3)*2, (5/3)*0.5 */
    CHECK(t.bbox[0] == 0 && t.bbox[1] == 1 && t.bbox[2] == 2 && t.bbox[3] == 3);
    CHECK(t.bbox[4] == 1 && t.bbox[5] == 0 && t.bbox[6] == 2 && t.bbox[7] == 1);
    CHECK(t.intensity_sum[0] == 11 && t.intensity_mean[0] == 11.0 / 3);
    CHECK(t.intensity_min[0] == 2 && t.intensity_max[0] == 6 && t.intensity_max[1] == 4);
    /* weighted: rows 0*2+0*3+1*6 = 6 -> 6/11*2; cols 1*2+2*3+2*6 = 20 -> 20/11*0.5 */
    CHECK(fabs(t.centroid_weighted[0] - 12.0 / 11) < 1e-15);
    CHECK(fabs(t.centroid_weighted[1] - 10.0 / 11) < 1e-15);
    voxa_measure_table_free(&t);
    voxa_measure_table_free(&t); /* twice is harmless */
}

/* Random int32 labels in {-1, 0, 2, 7, 1e12 (as int64)} and uint16
 * intensities, against a per-voxel reference. */
static void test_random_vs_reference(void) {
    int64_t shape[3] = {9, 11, 13}, n = 9 * 11 * 13;
    const int64_t vals[5] = {-1, 0, 2, 7, 1000000000000};
    int64_t *lab = malloc((size_t)n * 8);
    uint16_t *img = malloc((size_t)n * 2);
    for (int64_t i = 0; i < n; i++) {
        lab[i] = vals[rnd() % 5];
        img[i] = (uint16_t)(rnd() % 60000);
    }
    voxa_array L, I;
    voxa_array_view(&L, lab, VOXA_I64, 3, shape);
    voxa_array_view(&I, img, VOXA_U16, 3, shape);
    voxa_measure_table t;
    CHECK_OK(voxa_measure(&L, &I, NULL, &t));
    CHECK(t.n == 3);
    for (int64_t r = 0; r < t.n && r < 3; r++) {
        int64_t want = vals[2 + r], cnt = 0, lo[3] = {99, 99, 99}, hi[3] = {-1, -1, -1};
        double cs[3] = {0}, s = 0, ws[3] = {0}, mn = 1e9, mx = -1;
        for (int64_t z = 0; z < 9; z++)
            for (int64_t y = 0; y < 11; y++)
                for (int64_t x = 0; x < 13; x++) {
                    int64_t i = (z * 11 + y) * 13 + x, c[3] = {z, y, x};
                    if (lab[i] != want) continue;
                    cnt++;
                    s += img[i];
                    mn = img[i] < mn ? img[i] : mn;
                    mx = img[i] > mx ? img[i] : mx;
                    for (int d = 0; d < 3; d++) {
                        cs[d] += (double)c[d];
                        ws[d] += (double)c[d] * img[i];
                        lo[d] = c[d] < lo[d] ? c[d] : lo[d];
                        hi[d] = c[d] > hi[d] ? c[d] : hi[d];
                    }
                }
        CHECK(t.label[r] == want);
        CHECK(t.num_pixels[r] == cnt && t.area[r] == (double)cnt);
        CHECK(t.intensity_sum[r] == s && t.intensity_min[r] == mn && t.intensity_max[r] == mx);
        CHECK(t.intensity_mean[r] == s / (double)cnt);
        for (int d = 0; d < 3; d++) {
            CHECK(t.centroid[r * 3 + d] == cs[d] / (double)cnt);
            CHECK(t.bbox[r * 6 + d] == lo[d] && t.bbox[r * 6 + 3 + d] == hi[d] + 1);
            double local = ws[d] - (double)lo[d] * s; /* skimage's local moment */
            CHECK(t.centroid_weighted[r * 3 + d] == local / s + (double)lo[d]);
        }
    }
    voxa_measure_table_free(&t);
    free(lab);
    free(img);
}

/* A volume of several tiles, float64 intensities (whose sums round): the same bits for 1, 2 and
 * 3 threads; accumulated by regions that cut rows anywhere: the same bits
 * for integer intensities. */
static void test_threads_and_regions(void) {
    int64_t shape[3] = {40, 70, 300}, n = 40 * 70 * 300; /* 4 tiles */
    uint32_t *lab = malloc((size_t)n * 4);
    double *fimg = malloc((size_t)n * 8); /* float64: sums round */
    int32_t *iimg = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        /* runs of labels, a few hundred objects, sparse ids */
        lab[i] = (i / 37) % 5 == 0 ? 0 : (uint32_t)(((i / 97) * 7919) % 401) * 3;
        fimg[i] = (double)(rnd() >> 11) / 7.0 * (i % 3 ? 1e-3 : 1e3);
        iimg[i] = (int32_t)(rnd() % 200001) - 100000;
    }
    voxa_array L, F, I;
    voxa_array_view(&L, lab, VOXA_U32, 3, shape);
    voxa_array_view(&F, fimg, VOXA_F64, 3, shape);
    voxa_array_view(&I, iimg, VOXA_I32, 3, shape);
    voxa_measure_table ref, t;
    int saved = voxa_get_threads();
    voxa_set_threads(1);
    CHECK_OK(voxa_measure(&L, &F, NULL, &ref));
    CHECK(ref.n > 300);
    for (int th = 2; th <= 3; th++) {
        voxa_set_threads(th);
        CHECK_OK(voxa_measure(&L, &F, NULL, &t));
        CHECK(same_table(&ref, &t));
        voxa_measure_table_free(&t);
    }
    voxa_measure_table_free(&ref);
    /* regions: slabs of 5 planes, each split at row 33 and mid-row x = 101 */
    CHECK_OK(voxa_measure(&L, &I, NULL, &ref));
    voxa_measure_acc *acc = NULL;
    CHECK_OK(voxa_measure_acc_new(3, shape, 1, &acc));
    for (int64_t z = 0; z < 40; z += 5)
        for (int part = 0; part < 4; part++) {
            int64_t o[3] = {z, part < 2 ? 0 : 33, part % 2 ? 101 : 0};
            voxa_array lv = L, iv = I;
            lv.shape[0] = iv.shape[0] = z + 5 <= 40 ? 5 : 40 - z;
            lv.shape[1] = iv.shape[1] = part < 2 ? 33 : 70 - 33;
            lv.shape[2] = iv.shape[2] = part % 2 ? 300 - 101 : 101;
            int64_t off = o[0] * L.strides[0] + o[1] * L.strides[1] + o[2] * L.strides[2];
            lv.data = (char *)lab + off;
            iv.data = (char *)iimg + off;
            CHECK_OK(voxa_measure_add(acc, &lv, &iv, o));
        }
    CHECK_OK(voxa_measure_acc_table(acc, NULL, &t));
    CHECK(same_table(&ref, &t));
    voxa_measure_table_free(&t);
    /* adding a region twice counts it twice: the check above can fail */
    int64_t o0[3] = {0, 0, 0};
    voxa_array one = L;
    one.shape[0] = 1;
    CHECK_OK(voxa_measure_add(acc, &one, &(voxa_array){.data = iimg, .dtype = VOXA_I32, .ndim = 3,
                                                      .shape = {1, 70, 300},
                                                      .strides = {I.strides[0], I.strides[1], 4}},
                              o0));
    CHECK_OK(voxa_measure_acc_table(acc, NULL, &t));
    CHECK(!same_table(&ref, &t));
    voxa_measure_table_free(&t);
    voxa_measure_acc_free(acc);
    voxa_measure_table_free(&ref);
    voxa_set_threads(saved);
    free(lab);
    free(fimg);
    free(iimg);
}

/* Stores: .npy files read in blocks (whole planes, part planes, part rows)
 * give the whole-array table. */
/* Central second moments (VOXA_MEASURE_MOMENTS): against a two-pass long
 * double reference; the same bits for 1..3 threads and many tiles, and for
 * the same labels placed a million voxels from the origin (the sums of
 * products are exact integers, so translation changes nothing). Without the
 * flag there is no moments2. */
static void test_moments(void) {
    int64_t shape[3] = {9, 11, 13}, n = 9 * 11 * 13;
    int32_t *lab = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) lab[i] = (int32_t)(rnd() % 4); /* 0: background */
    voxa_array L;
    voxa_array_view(&L, lab, VOXA_I32, 3, shape);
    voxa_measure_table t, u;
    CHECK_OK(voxa_measure(&L, NULL, NULL, &t));
    CHECK(t.moments2 == NULL);
    voxa_measure_table_free(&t);
    CHECK(voxa_measure_with(&L, NULL, NULL, 8, &t) == VOXA_EINVAL);
    CHECK_OK(voxa_measure_with(&L, NULL, NULL, VOXA_MEASURE_MOMENTS, &t));
    CHECK(t.n == 3 && t.moments2 != NULL);
    for (int64_t r = 0; r < t.n; r++) {
        long double m[3] = {0}, mu[3][3] = {{0}};
        int64_t cnt = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int64_t i = 0; i < n; i++) {
                if (lab[i] != t.label[r]) continue;
                long double c[3] = {(long double)(i / (11 * 13)), (long double)(i / 13 % 11),
                                    (long double)(i % 13)};
                if (pass == 0) {
                    cnt++;
                    for (int d = 0; d < 3; d++) m[d] += c[d];
                    continue;
                }
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++)
                        mu[a][b] += (c[a] - m[a] / cnt) * (c[b] - m[b] / cnt);
            }
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double got = t.moments2[r * 9 + a * 3 + b], want = (double)mu[a][b];
                CHECK(fabs(got - want) <= 1e-12 * (fabs(want) + 1));
                CHECK(got == t.moments2[r * 9 + b * 3 + a]);
            }
    }
    int64_t saved = voxa__measure_tile_voxels;
    voxa__measure_tile_voxels = 40; /* a tile of 3 rows: many partial tables merged */
    for (int th = 1; th <= 3; th++) {
        voxa_set_threads(th);
        CHECK_OK(voxa_measure_with(&L, NULL, NULL, VOXA_MEASURE_MOMENTS, &u));
        CHECK(same_table(&t, &u) && !memcmp(t.moments2, u.moments2, (size_t)t.n * 9 * 8));
        voxa_measure_table_free(&u);
    }
    voxa_set_threads(0);
    voxa__measure_tile_voxels = saved;
    voxa_measure_acc *acc;
    int64_t far[3] = {1000000, 2000000, 3000000}, big[3] = {2000000, 3000000, 4000000};
    CHECK_OK(voxa_measure_acc_new(3, big, VOXA_MEASURE_MOMENTS, &acc));
    CHECK_OK(voxa_measure_add(acc, &L, NULL, far));
    CHECK_OK(voxa_measure_acc_table(acc, NULL, &u));
    CHECK(u.n == t.n && !memcmp(t.moments2, u.moments2, (size_t)t.n * 9 * 8));
    voxa_measure_table_free(&u);
    voxa_measure_acc_free(acc);
    CHECK(voxa_measure_acc_new(3, big, 8, &acc) == VOXA_EINVAL && acc == NULL);
    voxa_measure_table_free(&t);
    free(lab);
}

/* intensity_std (VOXA_MEASURE_STD): against a two-pass long double
 * reference on intensities 1e6 + noise (sum(x^2) - n mean^2 would lose
 * every digit there), the same bits for 1..3 threads and many tiles, and
 * no column without the flag. */
static void test_std(void) {
    int64_t shape[3] = {9, 11, 13}, n = 9 * 11 * 13;
    int16_t lab[9 * 11 * 13];
    double img[9 * 11 * 13];
    for (int64_t i = 0; i < n; i++) {
        lab[i] = (int16_t)(rnd() % 4);
        img[i] = 1e6 + (double)(rnd() % 1000000) * 1e-6;
    }
    voxa_array L, I;
    voxa_array_view(&L, lab, VOXA_I16, 3, shape);
    voxa_array_view(&I, img, VOXA_F64, 3, shape);
    voxa_measure_table t, u;
    CHECK_OK(voxa_measure(&L, &I, NULL, &t));
    CHECK(t.intensity_std == NULL);
    voxa_measure_table_free(&t);
    CHECK_OK(voxa_measure_with(&L, &I, NULL, VOXA_MEASURE_STD, &t));
    CHECK(t.n == 3 && t.intensity_std != NULL);
    for (int64_t r = 0; r < t.n; r++) {
        long double s = 0, q = 0;
        int64_t cnt = 0;
        for (int64_t i = 0; i < n; i++)
            if (lab[i] == t.label[r]) s += img[i], cnt++;
        long double m = s / cnt;
        for (int64_t i = 0; i < n; i++)
            if (lab[i] == t.label[r]) q += (img[i] - m) * (img[i] - m);
        double want = (double)sqrtl(q / cnt);
        CHECK(fabs(t.intensity_std[r] - want) < 1e-6 * want); /* ~0.29: the noise's std */
    }
    int64_t saved = voxa__measure_tile_voxels;
    voxa__measure_tile_voxels = 40; /* tiles of 3 rows: many merges, in tile order */
    voxa_measure_table one;
    voxa_set_threads(1);
    CHECK_OK(voxa_measure_with(&L, &I, NULL, VOXA_MEASURE_STD, &one));
    for (int64_t r = 0; r < t.n && one.n == t.n; r++) /* another cut: the same to rounding */
        CHECK(fabs(one.intensity_std[r] - t.intensity_std[r]) < 1e-9 * t.intensity_std[r]);
    for (int th = 2; th <= 3; th++) { /* the same cut, more threads: the same bits */
        voxa_set_threads(th);
        CHECK_OK(voxa_measure_with(&L, &I, NULL, VOXA_MEASURE_STD, &u));
        CHECK(u.n == one.n && !memcmp(one.intensity_std, u.intensity_std, (size_t)u.n * 8));
        voxa_measure_table_free(&u);
    }
    voxa_set_threads(0);
    voxa__measure_tile_voxels = saved;
    voxa_measure_table_free(&one);
    voxa_measure_table_free(&t);
}

static void test_store_blocks(void) {
    int64_t shape[3] = {7, 19, 23}, n = 7 * 19 * 23;
    voxa_array L, I;
    CHECK_OK(voxa_array_new(&L, VOXA_I16, 3, shape));
    CHECK_OK(voxa_array_new(&I, VOXA_U8, 3, shape));
    for (int64_t i = 0; i < n; i++) {
        ((int16_t *)L.data)[i] = (int16_t)((rnd() % 9) * 1000 - 2000);
        ((uint8_t *)I.data)[i] = (uint8_t)rnd();
    }
    char lp[64], ip[64];
    snprintf(lp, sizeof lp, "measure_lab_%d.npy", (int)getpid());
    snprintf(ip, sizeof ip, "measure_img_%d.npy", (int)getpid());
    CHECK_OK(voxa_write(lp, &L));
    CHECK_OK(voxa_write(ip, &I));
    voxa_measure_table ref, t;
    double sp[3] = {0.3, 1.7, 2.0};
    CHECK_OK(voxa_measure(&L, &I, sp, &ref));
    CHECK(ref.n == 6);
    const int64_t limits[4] = {0, 3 * 19 * 23 * 3, 5 * 23 * 3, 7 * 3};
    for (int k = 0; k < 4; k++) {
        voxa_store *ls = NULL, *is = NULL;
        CHECK_OK(voxa_store_open(lp, &ls));
        CHECK_OK(voxa_store_open(ip, &is));
        CHECK_OK(voxa_measure_store(ls, is, sp, limits[k], (voxa_progress){0}, &t));
        CHECK(same_table(&ref, &t));
        voxa_measure_table_free(&t);
        voxa_store_close(ls);
        voxa_store_close(is);
    }
    /* float labels in a store: EINVAL */
    voxa_store *fs = NULL;
    CHECK_OK(voxa_store_wrap(&(voxa_array){.data = I.data, .dtype = VOXA_F32, .ndim = 1,
                                           .shape = {4}, .strides = {4}},
                             &fs));
    CHECK_STATUS(voxa_measure_store(fs, NULL, NULL, 0, (voxa_progress){0}, &t), VOXA_EINVAL);
    CHECK_MSG("labels");
    voxa_store_close(fs);
    voxa_measure_table_free(&ref);
    unlink(lp);
    unlink(ip);
    voxa_array_free(&L);
    voxa_array_free(&I);
}

/* A reversed, strided view == a contiguous copy of it. */
static void test_strides(void) {
    int64_t shape[2] = {10, 12};
    int32_t buf[10 * 24];
    for (int i = 0; i < 240; i++) buf[i] = (int32_t)(rnd() % 4);
    voxa_array v = {buf + 9 * 24, VOXA_I32, 2, {10, 12}, {-24 * 4, 2 * 4}, NULL};
    int32_t copy[120];
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 12; x++) copy[y * 12 + x] = buf[(9 - y) * 24 + 2 * x];
    voxa_array c;
    voxa_array_view(&c, copy, VOXA_I32, 2, shape);
    voxa_measure_table a, b;
    CHECK_OK(voxa_measure(&v, &v, NULL, &a));
    CHECK_OK(voxa_measure(&c, &c, NULL, &b));
    CHECK(a.n == 3 && same_table(&a, &b));
    voxa_measure_table_free(&a);
    voxa_measure_table_free(&b);
}

static void test_empty(void) {
    uint8_t z[12] = {0};
    int64_t shape[2] = {3, 4}, zero[3] = {4, 0, 5};
    voxa_array a, e;
    voxa_array_view(&a, z, VOXA_U8, 2, shape);
    voxa_measure_table t;
    CHECK_OK(voxa_measure(&a, NULL, NULL, &t));
    CHECK(t.n == 0 && t.ndim == 2 && !t.has_intensity);
    char path[64];
    snprintf(path, sizeof path, "measure_empty_%d.csv", (int)getpid());
    CHECK_OK(voxa_measure_write_csv(&t, NULL, path));
    voxa_measure_table_free(&t);
    voxa_array_view(&e, z, VOXA_U8, 3, zero);
    CHECK_OK(voxa_measure(&e, &e, NULL, &t));
    CHECK(t.n == 0 && t.has_intensity);
    voxa_measure_table_free(&t);
    FILE *f = fopen(path, "r");
    char line[256] = "";
    CHECK(f && fgets(line, sizeof line, f));
    CHECK(!strcmp(line, "label,area,centroid-0,centroid-1,bbox-0,bbox-1,bbox-2,bbox-3\n"));
    CHECK(f && !fgets(line, sizeof line, f)); /* header only */
    if (f) fclose(f);
    unlink(path);
}

/* The CSV reads back: column names in order and exact values. */
static void test_csv(void) {
    uint16_t lab[8] = {1, 1, 0, 4, 4, 4, 0, 9};
    float img[8] = {0.1f, 0.2f, 0, 1, 2, 3, 0, NAN};
    int64_t shape[1] = {8};
    voxa_array L, I;
    voxa_array_view(&L, lab, VOXA_U16, 1, shape);
    voxa_array_view(&I, img, VOXA_F32, 1, shape);
    voxa_measure_table t;
    CHECK_OK(voxa_measure(&L, &I, NULL, &t));
    CHECK(t.n == 3 && isnan(t.intensity_mean[2]) && isnan(t.intensity_min[2]));
    char path[64];
    snprintf(path, sizeof path, "measure_%d.csv", (int)getpid());
    CHECK_OK(voxa_measure_write_csv(&t, "num_pixels, label,intensity_mean,bbox", path));
    voxa_table c;
    CHECK_OK(voxa_csv_read(path, &c));
    CHECK(c.ncols == 5 && c.nrows == 3);
    if (c.ncols == 5 && c.nrows == 3) {
        CHECK(!strcmp(c.names[0], "num_pixels") && !strcmp(c.names[1], "label"));
        CHECK(!strcmp(c.names[3], "bbox-0") && !strcmp(c.names[4], "bbox-1"));
        CHECK(c.values[1 * 5 + 1] == 4 && c.values[1 * 5 + 2] == t.intensity_mean[1]);
        CHECK(c.values[0 * 5 + 2] == t.intensity_mean[0]); /* 17 digits round-trip */
        CHECK(c.values[2 * 5 + 3] == 7 && c.values[2 * 5 + 4] == 8);
    }
    voxa_table_free(&c);
    CHECK_STATUS(voxa_measure_write_csv(&t, "label,volume", path), VOXA_EINVAL);
    CHECK_MSG("volume");
    CHECK_STATUS(voxa_measure_write_csv(&t, "", path), VOXA_EINVAL);
    CHECK_STATUS(voxa_measure_write_csv(&t, NULL, "/nonexistent-dir/x.csv"), VOXA_EIO);
    voxa_measure_table_free(&t);
    CHECK_OK(voxa_measure(&L, NULL, NULL, &t));
    CHECK_STATUS(voxa_measure_write_csv(&t, "label,intensity_max", path), VOXA_EINVAL);
    CHECK_MSG("intensity");
    voxa_measure_table_free(&t);
    unlink(path);
}

/* The shape columns of the CSV: a 2-D table against the 2 x 2 closed form
 * (eigenvalues, lengths, eccentricity, orientation), a 3-D table's
 * eigenvalues against their sum and sum of squares (trace and Frobenius
 * norm are invariants), the flags a property list needs, and the errors. */
static void test_csv_shape(void) {
    int64_t shape2[2] = {12, 15}, n2 = 12 * 15, shape3[3] = {7, 8, 9}, n3 = 7 * 8 * 9;
    uint8_t lab2[12 * 15], lab3[7 * 8 * 9];
    for (int64_t i = 0; i < n2; i++) lab2[i] = (uint8_t)(rnd() % 3);
    for (int64_t i = 0; i < n3; i++) lab3[i] = (uint8_t)(rnd() % 3);
    voxa_array L;
    voxa_measure_table t;
    double sp2[2] = {0.5, 2.0}, T[9], ev[3];
    voxa_array_view(&L, lab2, VOXA_U8, 2, shape2);
    CHECK_OK(voxa_measure_with(&L, NULL, sp2, VOXA_MEASURE_MOMENTS, &t));
    CHECK(t.n == 2 && t.spacing[0] == 0.5 && t.spacing[1] == 2.0);
    char path[64];
    snprintf(path, sizeof path, "measure_shape_%d.csv", (int)getpid());
    const char *props = "label,inertia_tensor,inertia_tensor_eigvals,axis_major_length,"
                        "axis_minor_length,eccentricity,orientation";
    CHECK(voxa_measure_flags_for(props) == VOXA_MEASURE_MOMENTS);
    CHECK(voxa_measure_flags_for("label, area,bbox") == 0 && voxa_measure_flags_for(NULL) == 0);
    CHECK_OK(voxa_measure_check_properties(props, 2, VOXA_MEASURE_MOMENTS));
    CHECK_OK(voxa_measure_check_properties(NULL, 5, 0));
    CHECK_STATUS(voxa_measure_check_properties(props, 2, 0), VOXA_EINVAL);
    CHECK_MSG("second moments");
    CHECK_STATUS(voxa_measure_check_properties(props, 3, VOXA_MEASURE_MOMENTS), VOXA_EINVAL);
    CHECK_MSG("2-D labels");
    CHECK_STATUS(voxa_measure_check_properties("label,intensity_sum", 3, 0), VOXA_EINVAL);
    CHECK_MSG("intensity");
    CHECK_OK(voxa_measure_check_properties("label,intensity_sum", 3, VOXA_MEASURE_INTENSITY));
    CHECK_STATUS(voxa_measure_check_properties(" , ", 3, 0), VOXA_EINVAL);
    CHECK_OK(voxa_measure_write_csv(&t, props, path));
    voxa_table c;
    CHECK_OK(voxa_csv_read(path, &c));
    CHECK(c.ncols == 11 && c.nrows == 2);
    if (c.ncols == 11 && c.nrows == 2) {
        CHECK(!strcmp(c.names[1], "inertia_tensor-0-0"));
        CHECK(!strcmp(c.names[2], "inertia_tensor-0-1"));
        CHECK(!strcmp(c.names[5], "inertia_tensor_eigvals-0"));
        CHECK(!strcmp(c.names[10], "orientation"));
        for (int64_t r = 0; r < 2; r++) {
            const double *v = c.values + r * 11;
            double a = v[1], b = v[2], d = v[4], h = sqrt((a - d) * (a - d) / 4 + b * b);
            double l0 = (a + d) / 2 + h, l1 = (a + d) / 2 - h;
            CHECK(v[2] == v[3] && fabs(v[5] - l0) < 1e-12 * l0 && fabs(v[6] - l1) < 1e-12 * l0);
            CHECK(fabs(v[7] - 4 * sqrt(l0)) < 1e-12 * v[7]);
            CHECK(fabs(v[8] - 4 * sqrt(l1 > 0 ? l1 : 0)) < 1e-6 * v[7]);
            CHECK(fabs(v[9] - sqrt(1 - v[6] / v[5])) < 1e-12);
            CHECK(fabs(v[10] - 0.5 * atan2(-2 * b, d - a)) < 1e-12);
        }
    }
    voxa_table_free(&c);
    voxa_measure_table_free(&t);
    CHECK_OK(voxa_measure(&L, NULL, NULL, &t)); /* no moments */
    CHECK_STATUS(voxa_measure_write_csv(&t, "label,eccentricity", path), VOXA_EINVAL);
    CHECK_MSG("second moments");
    voxa_measure_table_free(&t);
    voxa_array_view(&L, lab3, VOXA_U8, 3, shape3);
    CHECK_OK(voxa_measure_with(&L, NULL, NULL, VOXA_MEASURE_MOMENTS, &t));
    CHECK_STATUS(voxa_measure_write_csv(&t, "label,orientation", path), VOXA_EINVAL);
    CHECK_MSG("2-D labels");
    for (int64_t r = 0; r < t.n; r++) {
        voxa__measure_tensor(&t, r, T);
        voxa__measure_eigvals(&t, r, ev);
        double tr = 0, fro = 0, s = 0, s2 = 0;
        for (int k = 0; k < 9; k++) fro += T[k] * T[k];
        for (int k = 0; k < 3; k++) tr += T[k * 4], s += ev[k], s2 += ev[k] * ev[k];
        CHECK(ev[0] >= ev[1] && ev[1] >= ev[2] && ev[2] >= 0);
        CHECK(fabs(s - tr) < 1e-12 * tr && fabs(s2 - fro) < 1e-12 * fro);
    }
    voxa_measure_table_free(&t);
    unlink(path);
}

/* Progress of a streamed measure: the last (done, total) seen. */
static int last_step(int64_t done, int64_t total, void *user) {
    int64_t *seen = user;
    seen[0] = done, seen[1] = total, seen[2]++;
    return 1; /* go on */
}

/* voxa_measure_perimeter: known values (skimage.measure.perimeter: a 3 x 3
 * square 8, 2 x 2 4, 1 x 5 3, one pixel 0, a 4 x 6 block 16) for objects
 * side by side and on the image's edges, strided views, a label with no
 * pixels, and the errors. */
static void test_perimeter(void) {
    /* 0: 3x3 square (label 2) at the top-left edge; 4x6 block (label 7);
     * 1x5 bar (label 3) on the bottom edge; one pixel (label 9); 2x2 (label 5) */
    int64_t shape[2] = {9, 12};
    int32_t lab[9][12] = {{0}};
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 3; x++) lab[y][x] = 2;
    for (int y = 1; y < 5; y++)
        for (int x = 5; x < 11; x++) lab[y][x] = 7;
    for (int x = 2; x < 7; x++) lab[8][x] = 3;
    lab[6][10] = 9;
    lab[5][1] = lab[5][2] = lab[6][1] = lab[6][2] = 5;
    voxa_array L;
    voxa_array_view(&L, lab, VOXA_I32, 2, shape);
    int64_t rows[6] = {2, 3, 4, 5, 7, 9};
    double out[6];
    CHECK_OK(voxa_measure_perimeter(&L, rows, 6, out));
    CHECK(out[0] == 8 && out[1] == 3 && out[2] == 0 && out[3] == 4 && out[4] == 16 && out[5] == 0);
    voxa_array T = L; /* the transpose: a strided view, the same perimeters */
    T.shape[0] = 12, T.shape[1] = 9, T.strides[0] = 4, T.strides[1] = 48;
    double tout[6];
    CHECK_OK(voxa_measure_perimeter(&T, rows, 6, tout));
    CHECK(!memcmp(out, tout, sizeof out));
    /* counts of four chunks, each with (up to) 2 pixels of its neighbours */
    int64_t whole[18] = {0}, parts[18] = {0};
    int64_t lo0[2] = {0, 0}, hi0[2] = {9, 12};
    CHECK_OK(voxa_measure_perimeter_counts(&L, lo0, hi0, rows, 6, whole));
    const int64_t cuts[2][3] = {{0, 4, 9}, {0, 7, 12}};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            int64_t a0 = cuts[0][i] - 2 > 0 ? cuts[0][i] - 2 : 0;
            int64_t b0 = cuts[1][j] - 2 > 0 ? cuts[1][j] - 2 : 0;
            int64_t a1 = cuts[0][i + 1] + 2 < 9 ? cuts[0][i + 1] + 2 : 9;
            int64_t b1 = cuts[1][j + 1] + 2 < 12 ? cuts[1][j + 1] + 2 : 12;
            voxa_array C = L; /* the chunk with its context, a view */
            C.data = (char *)L.data + a0 * L.strides[0] + b0 * L.strides[1];
            C.shape[0] = a1 - a0, C.shape[1] = b1 - b0;
            int64_t clo[2] = {cuts[0][i] - a0, cuts[1][j] - b0};
            int64_t chi[2] = {cuts[0][i + 1] - a0, cuts[1][j + 1] - b0};
            CHECK_OK(voxa_measure_perimeter_counts(&C, clo, chi, rows, 6, parts));
        }
    CHECK(!memcmp(whole, parts, sizeof whole));
    /* from a store, by blocks of rows (a 100-byte limit: 1 row per block) */
    voxa_store *s;
    voxa_measure_table st;
    CHECK_OK(voxa_store_wrap(&L, &s));
    int64_t seen[3] = {0};
    CHECK_OK(voxa_measure_store_with(s, NULL, NULL, 100, VOXA_MEASURE_PERIMETER,
                                     (voxa_progress){last_step, seen}, &st));
    /* 2 rows per block in the first pass (48 bytes a row), 1 in the second
     * (100 bytes hold no row beside 4 of context; at least 1): 5 + 9 blocks */
    CHECK(seen[0] == seen[1] && seen[1] == 14 && seen[2] == 14);
    CHECK(st.n == 5 && st.perimeter); /* labels 2, 3, 5, 7, 9 (4 has no pixel) */
    const double want[5] = {8, 3, 4, 16, 0};
    for (int64_t i = 0; st.perimeter && i < st.n; i++) CHECK(st.perimeter[i] == want[i]);
    voxa_measure_table_free(&st);
    CHECK_STATUS(voxa_measure_store_with(s, NULL, NULL, 100, 32, (voxa_progress){0}, &st),
                 VOXA_EINVAL);
    voxa_store_close(s);
    voxa_array V3 = L; /* the same labels as 1 x 9 x 12: a 3-D store has no perimeter */
    V3.ndim = 3, V3.shape[0] = 1, V3.shape[1] = 9, V3.shape[2] = 12;
    V3.strides[0] = 9 * 48, V3.strides[1] = 48, V3.strides[2] = 4;
    CHECK_OK(voxa_store_wrap(&V3, &s));
    CHECK_STATUS(voxa_measure_store_with(s, NULL, NULL, 100, VOXA_MEASURE_PERIMETER,
                                         (voxa_progress){0}, &st), VOXA_EINVAL);
    CHECK_MSG("2-D labels only");
    voxa_store_close(s);
    int64_t bad_hi[2] = {10, 12};
    CHECK_STATUS(voxa_measure_perimeter_counts(&L, lo0, bad_hi, rows, 6, whole), VOXA_EINVAL);
    int64_t unsorted[2] = {7, 2};
    CHECK_STATUS(voxa_measure_perimeter(&L, unsorted, 2, out), VOXA_EINVAL);
    CHECK_MSG("ascending");
    int64_t shape3[3] = {1, 9, 12};
    voxa_array V;
    voxa_array_view(&V, lab, VOXA_I32, 3, shape3);
    CHECK_STATUS(voxa_measure_perimeter(&V, rows, 6, out), VOXA_EINVAL);
    CHECK_MSG("2-D");
}

/* Euler characteristics of known shapes: a pixel, a ring (1 - 1 hole), two
 * pixels touching at a corner (one 8-connected object), a 2x2 block with a
 * hole pixel beside it that is open on a corner (4-connected holes: none);
 * in 3-D a hollow cube (1 + a cavity), a torus (1 - 1 tunnel) and a bar;
 * chunks with a voxel of context add up to the whole; the strided
 * transpose gives the same; bad arguments. */
static void test_euler(void) {
    int64_t s2[2] = {8, 9};
    int16_t a[8][9] = {{0}};
    a[0][0] = 1;                                       /* a pixel on the corner */
    for (int y = 2; y < 5; y++)
        for (int x = 0; x < 3; x++) a[y][x] = y == 3 && x == 1 ? 0 : 2; /* a ring */
    a[6][0] = a[7][1] = 3;                             /* corner-touching pair */
    a[1][5] = a[1][6] = a[2][5] = a[3][6] = a[3][7] = a[2][7] = a[1][7] = 4; /* a ring open */
    a[3][5] = 4;                                       /* closed: a hole at (2, 6) */
    a[5][8] = 5, a[6][7] = 5;                          /* another corner pair */
    voxa_array L;
    voxa_array_view(&L, a, VOXA_I16, 2, s2);
    int64_t rows[6] = {1, 2, 3, 4, 5, 6}, out[6];
    CHECK_OK(voxa_measure_euler(&L, rows, 6, out));
    CHECK(out[0] == 1 && out[1] == 0 && out[2] == 1 && out[3] == 0 && out[4] == 1 && out[5] == 0);
    voxa_array T = L; /* the transpose, a strided view */
    T.shape[0] = 9, T.shape[1] = 8, T.strides[0] = 2, T.strides[1] = 18;
    int64_t tout[6];
    CHECK_OK(voxa_measure_euler(&T, rows, 6, tout));
    CHECK(!memcmp(out, tout, sizeof out));

    int64_t s3[3] = {5, 6, 7};
    int32_t v[5][6][7] = {{{0}}};
    for (int z = 0; z < 3; z++) /* a hollow 3x3x3 cube: one cavity */
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 3; x++) v[z][y][x] = z == 1 && y == 1 && x == 1 ? 0 : 7;
    for (int y = 0; y < 3; y++) /* a one-voxel-thick square ring: a torus */
        for (int x = 3; x < 6; x++) v[4][y + 3][x] = y == 1 && x == 4 ? 0 : 8;
    for (int z = 0; z < 4; z++) v[z][5][6] = 9; /* a bar */
    voxa_array V;
    voxa_array_view(&V, v, VOXA_I32, 3, s3);
    int64_t r3[3] = {7, 8, 9}, o3[3];
    CHECK_OK(voxa_measure_euler(&V, r3, 3, o3));
    CHECK(o3[0] == 2 && o3[1] == 0 && o3[2] == 1);
    voxa_set_threads(3); /* planes split across threads: the same integers */
    int64_t o3t[3];
    CHECK_OK(voxa_measure_euler(&V, r3, 3, o3t));
    CHECK_OK(voxa_measure_euler(&L, rows, 6, tout));
    voxa_set_threads(0);
    CHECK(!memcmp(o3, o3t, sizeof o3) && !memcmp(out, tout, sizeof out));
    setenv("VOXA_EULER_KERNEL", "c", 1); /* the baseline kernel finds the same windows */
    CHECK_OK(voxa_measure_euler(&V, r3, 3, o3t));
    CHECK_OK(voxa_measure_euler(&L, rows, 6, tout));
    unsetenv("VOXA_EULER_KERNEL");
    CHECK(!memcmp(o3, o3t, sizeof o3) && !memcmp(out, tout, sizeof out));
    /* chunks: cores cut at (2, 3, 4), each with a voxel of context on each
     * side (beyond the array is outside the image) */
    int64_t whole[3] = {0}, parts[3] = {0}, lo0[3] = {0, 0, 0};
    CHECK_OK(voxa_measure_euler_counts(&V, lo0, s3, r3, 3, whole));
    CHECK(!memcmp(whole, o3, sizeof whole));
    const int64_t cut[3] = {2, 3, 4};
    for (int k = 0; k < 8; k++) {
        voxa_array C = V;
        int64_t clo[3], chi[3];
        for (int d = 0; d < 3; d++) {
            int hi = (k >> d) & 1;
            int64_t c0 = hi ? cut[d] : 0, c1 = hi ? s3[d] : cut[d];
            int64_t a0 = c0 > 0 ? c0 - 1 : 0, a1 = c1 < s3[d] ? c1 + 1 : c1;
            C.data = (char *)C.data + a0 * V.strides[d];
            C.shape[d] = a1 - a0;
            clo[d] = c0 - a0, chi[d] = c1 - a0;
        }
        CHECK_OK(voxa_measure_euler_counts(&C, clo, chi, r3, 3, parts));
    }
    CHECK(!memcmp(whole, parts, sizeof whole));
    /* from a store, by slabs of planes (a 200-byte limit: 1 plane of 168
     * bytes per slab beside its context), into the CSV */
    voxa_store *vs;
    voxa_measure_table tb;
    CHECK_OK(voxa_store_wrap(&V, &vs));
    int64_t seen[3] = {0};
    CHECK_OK(voxa_measure_store_with(vs, NULL, NULL, 200, VOXA_MEASURE_EULER,
                                     (voxa_progress){last_step, seen}, &tb));
    CHECK(seen[2] == seen[1] && seen[1] > 5); /* first pass, then 5 slabs */
    CHECK(tb.n == 3 && tb.euler_number && !tb.perimeter);
    for (int64_t i = 0; tb.euler_number && i < tb.n; i++) CHECK(tb.euler_number[i] == o3[i]);
    char path[64];
    snprintf(path, sizeof path, "/tmp/voxa_test_euler_%d.csv", (int)getpid());
    CHECK_OK(voxa_measure_write_csv(&tb, "label,euler_number", path));
    FILE *f = fopen(path, "r");
    char text[128] = {0};
    CHECK(f && fread(text, 1, sizeof text - 1, f) > 0);
    if (f) fclose(f);
    remove(path);
    CHECK(!strcmp(text, "label,euler_number\n7,2\n8,0\n9,1\n"));
    voxa_measure_table_free(&tb);
    CHECK_STATUS(voxa_measure_write_csv(&tb, "label,euler_number", path), VOXA_EINVAL);
    voxa_store_close(vs);
    CHECK_STATUS(voxa_measure_check_properties("label,euler_number", 4, VOXA_MEASURE_EULER),
                 VOXA_EINVAL);
    CHECK_MSG("2-D and 3-D");
    CHECK(voxa_measure_flags_for("area,euler_number") == VOXA_MEASURE_EULER);
    int64_t empty_hi[3] = {0, 6, 7};
    CHECK_OK(voxa_measure_euler_counts(&V, lo0, empty_hi, r3, 3, parts)); /* adds nothing */
    CHECK(!memcmp(whole, parts, sizeof whole));
    int64_t bad_hi[3] = {6, 6, 7};
    CHECK_STATUS(voxa_measure_euler_counts(&V, lo0, bad_hi, r3, 3, parts), VOXA_EINVAL);
    int64_t unsorted[2] = {8, 7};
    CHECK_STATUS(voxa_measure_euler(&V, unsorted, 2, o3), VOXA_EINVAL);
    CHECK_MSG("ascending");
    CHECK_STATUS(voxa_measure_euler_counts(&V, lo0, NULL, r3, 3, parts), VOXA_EINVAL);
    CHECK_MSG("NULL");
    CHECK_STATUS(voxa_measure_euler(&V, r3, 3, NULL), VOXA_EINVAL);
    int64_t s1[1] = {9};
    voxa_array_view(&V, v, VOXA_I32, 1, s1);
    CHECK_STATUS(voxa_measure_euler(&V, r3, 3, o3), VOXA_EINVAL);
    CHECK_MSG("2-D or 3-D");
    CHECK_OK(voxa_store_wrap(&V, &vs)); /* a 1-D store: refused before any pass */
    CHECK_STATUS(voxa_measure_store_with(vs, NULL, NULL, 200, VOXA_MEASURE_EULER,
                                         (voxa_progress){0}, &tb), VOXA_EINVAL);
    CHECK_MSG("euler_number: 2-D or 3-D labels only");
    voxa_store_close(vs);
}

static void test_bad_args(void) {
    uint8_t b[6] = {1, 0, 1, 1, 0, 1};
    uint64_t big[2] = {1, (uint64_t)1 << 63};
    double d[6] = {0};
    int64_t shape[2] = {2, 3}, s1[1] = {2}, s23[2] = {3, 2};
    voxa_array a, bl, fl, u, other;
    voxa_array_view(&a, b, VOXA_U8, 2, shape);
    voxa_array_view(&bl, b, VOXA_BOOL, 2, shape);
    voxa_array_view(&fl, d, VOXA_F64, 2, shape);
    voxa_array_view(&u, big, VOXA_U64, 1, s1);
    voxa_array_view(&other, b, VOXA_U8, 2, s23);
    voxa_measure_table t;
    CHECK_STATUS(voxa_measure(&bl, NULL, NULL, &t), VOXA_EINVAL);
    CHECK_MSG("bool");
    CHECK_STATUS(voxa_measure(&fl, NULL, NULL, &t), VOXA_EINVAL);
    CHECK_MSG("float64");
    CHECK_STATUS(voxa_measure(&u, NULL, NULL, &t), VOXA_EINVAL);
    CHECK_MSG("9223372036854775808");
    CHECK_STATUS(voxa_measure(&a, &other, NULL, &t), VOXA_EINVAL);
    CHECK_MSG("intensity: shape (3, 2)");
    double sp[2] = {1, 0};
    CHECK_STATUS(voxa_measure(&a, NULL, sp, &t), VOXA_EINVAL);
    CHECK_MSG("spacing[1]");
    CHECK_STATUS(voxa_measure(NULL, NULL, NULL, &t), VOXA_EINVAL);
    CHECK_STATUS(voxa_measure(&a, NULL, NULL, NULL), VOXA_EINVAL);
    voxa_measure_acc *acc = NULL;
    CHECK_STATUS(voxa_measure_acc_new(0, shape, 0, &acc), VOXA_EINVAL);
    CHECK_OK(voxa_measure_acc_new(2, shape, 0, &acc));
    int64_t o[2] = {1, 0};
    CHECK_STATUS(voxa_measure_add(acc, &a, NULL, o), VOXA_EINVAL);
    CHECK_MSG("origin[0]");
    CHECK_STATUS(voxa_measure_add(acc, &a, &a, NULL), VOXA_EINVAL);
    CHECK_MSG("intensity");
    CHECK_STATUS(voxa_measure_add(acc, &u, NULL, NULL), VOXA_EINVAL);
    CHECK_OK(voxa_measure_add(acc, &a, NULL, NULL));
    voxa_measure_acc_free(acc);
    voxa_measure_acc_free(NULL);
}

int main(void) {
    voxa__measure_tile_voxels = (int64_t)1 << 18;
    RUN(test_known_2d);
    RUN(test_random_vs_reference);
    RUN(test_threads_and_regions);
    RUN(test_moments);
    RUN(test_std);
    RUN(test_store_blocks);
    RUN(test_strides);
    RUN(test_empty);
    RUN(test_csv);
    RUN(test_csv_shape);
    RUN(test_perimeter);
    RUN(test_euler);
    RUN(test_bad_args);
    VTEST_END();
}
