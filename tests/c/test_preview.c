/* voxa_preview: the layout of the views with one bright voxel (projections
 * and slices), slabs of one plane == one slab, a label's colour blended at
 * half over the image, 2-D images, physical proportions, percentiles, the
 * PNG writer's signature and atomicity, and bad arguments. */
#include "vtest.h"

#include <math.h>
#include <unistd.h>

static const uint8_t *px(const voxa_array *rgb, int64_t r, int64_t c) {
    return (const uint8_t *)rgb->data + r * rgb->strides[0] + c * rgb->strides[1];
}

/* (4, 5, 6) zeros with 10 at (1, 2, 3): panels 14 wide, 12 apart; views
 * x-y at (0, 0), z-y at (0, X + 4), x-z at (Y + 4, 0). */
static void test_layout(void) {
    int64_t shape[3] = {4, 5, 6};
    double v[120] = {0};
    v[(1 * 5 + 2) * 6 + 3] = 10;
    voxa_array a;
    voxa_array_view(&a, v, VOXA_F64, 3, shape);
    voxa_store *s = NULL;
    CHECK_OK(voxa_store_wrap(&a, &s));
    voxa_preview_options o = {0};
    o.lo_pct = 0;
    o.hi_pct = 100;
    voxa_array rgb, rgb1;
    CHECK_OK(voxa_preview(s, NULL, &o, &rgb));
    CHECK(rgb.ndim == 3 && rgb.shape[0] == 13 && rgb.shape[1] == 40 && rgb.shape[2] == 3);
    int64_t lit = 0;
    for (int64_t r = 0; r < 13; r++)
        for (int64_t c = 0; c < 40; c++) lit += px(&rgb, r, c)[0] == 255;
    CHECK(lit == 5); /* 3 projections, 2 slices (the z slice misses it) */
    CHECK(px(&rgb, 2, 3)[0] == 255 && px(&rgb, 2, 3)[1] == 255);  /* x-y */
    CHECK(px(&rgb, 2, 11)[0] == 255);                              /* z-y */
    CHECK(px(&rgb, 10, 3)[0] == 255);                              /* x-z */
    CHECK(px(&rgb, 2, 26 + 11)[0] == 255);                         /* slice x = 3 */
    CHECK(px(&rgb, 10, 26 + 3)[0] == 255);                         /* slice y = 2 */
    /* a slab of one plane at a time gives the same picture */
    o.mem_limit = 5 * 6 * 8;
    CHECK_OK(voxa_preview(s, NULL, &o, &rgb1));
    CHECK(rgb1.shape[1] == 40 && !memcmp(rgb.data, rgb1.data, 13 * 40 * 3));
    voxa_array_free(&rgb1);
    /* the slices through the voxel light it in the slice panel's x-y view */
    int64_t pt[3] = {1, 0, 0};
    o.point = pt;
    CHECK_OK(voxa_preview(s, NULL, &o, &rgb1));
    CHECK(px(&rgb1, 2, 26 + 3)[0] == 255);
    voxa_array_free(&rgb1);
    voxa_array_free(&rgb);
    voxa_store_close(s);
}

/* Labels: colour blended half over the grey level; the projection keeps the
 * largest label along the ray. Without an image: the colour itself. */
static void test_labels(void) {
    int64_t shape[2] = {3, 4};
    uint16_t img[12] = {0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 50};
    int32_t lab[12] = {0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, -3};
    voxa_array a, l;
    voxa_array_view(&a, img, VOXA_U16, 2, shape);
    voxa_array_view(&l, lab, VOXA_I32, 2, shape);
    voxa_store *si = NULL, *sl = NULL;
    CHECK_OK(voxa_store_wrap(&a, &si));
    CHECK_OK(voxa_store_wrap(&l, &sl));
    voxa_preview_options o = {0};
    o.lo_pct = 0;
    o.hi_pct = 100;
    voxa_array rgb;
    CHECK_OK(voxa_preview(si, sl, &o, &rgb));
    CHECK(rgb.shape[0] == 3 && rgb.shape[1] == 4);
    uint8_t c7[3];
    voxa_preview_label_color(7, c7);
    for (int k = 0; k < 3; k++) CHECK(px(&rgb, 1, 1)[k] == (uint8_t)lrint(0.5 * 255 + 0.5 * c7[k]));
    CHECK(px(&rgb, 2, 3)[0] == 128 && px(&rgb, 2, 3)[2] == 128); /* 50/100, label < 0: none */
    voxa_array_free(&rgb);
    CHECK_OK(voxa_preview(NULL, sl, &o, &rgb));
    CHECK(!memcmp(px(&rgb, 1, 1), c7, 3) && px(&rgb, 0, 0)[0] == 0);
    voxa_array_free(&rgb);
    /* 3-D: the projection shows the larger of two labels on a ray */
    int64_t s3[3] = {2, 1, 1};
    int8_t l3[2] = {5, 9};
    voxa_array l3a;
    voxa_array_view(&l3a, l3, VOXA_I8, 3, s3);
    voxa_store *s3s = NULL;
    CHECK_OK(voxa_store_wrap(&l3a, &s3s));
    CHECK_OK(voxa_preview(NULL, s3s, &o, &rgb));
    uint8_t c9[3];
    voxa_preview_label_color(9, c9);
    CHECK(!memcmp(px(&rgb, 0, 0), c9, 3));
    voxa_array_free(&rgb);
    voxa_store_close(s3s);
    uint8_t c1[3], c2[3];
    voxa_preview_label_color(1, c1);
    voxa_preview_label_color(2, c2);
    CHECK(memcmp(c1, c2, 3) != 0);
    voxa_store_close(si);
    voxa_store_close(sl);
}

/* Spacing stretches z to the x spacing; percentiles clip. */
static void test_spacing_and_contrast(void) {
    int64_t shape[3] = {3, 40, 50};
    voxa_array a;
    CHECK_OK(voxa_array_new(&a, VOXA_U8, 3, shape));
    for (int64_t i = 0; i < 3 * 40 * 50; i++) ((uint8_t *)a.data)[i] = (uint8_t)(i % 101);
    voxa_store *s = NULL;
    CHECK_OK(voxa_store_wrap(&a, &s));
    double sp[3] = {2.0, 0.5, 0.5};
    voxa_preview_options o = {0};
    o.spacing = sp;
    voxa_array rgb;
    CHECK_OK(voxa_preview(s, NULL, &o, &rgb));
    /* z: 3 planes x 2 / 0.5 = 12 rows; H = 40 + 4 + 12, W = 2 (50 + 4 + 12) + 12 */
    CHECK(rgb.shape[0] == 56 && rgb.shape[1] == 144);
    voxa_array_free(&rgb);
    voxa_store_close(s);
    voxa_array_free(&a);
}

static void test_png(void) {
    int64_t shape[3] = {2, 3, 3};
    uint8_t d[18];
    for (int i = 0; i < 18; i++) d[i] = (uint8_t)(i * 10);
    voxa_array a;
    voxa_array_view(&a, d, VOXA_U8, 3, shape);
    char path[64];
    snprintf(path, sizeof path, "preview_%d.png", (int)getpid());
    CHECK_OK(voxa_png_write(path, &a));
    FILE *f = fopen(path, "rb");
    unsigned char sig[8] = {0};
    CHECK(f && fread(sig, 1, 8, f) == 8);
    if (f) fclose(f);
    CHECK(!memcmp(sig, "\x89PNG\r\n\x1a\n", 8));
    unlink(path);
    int64_t s4[3] = {2, 3, 4};
    voxa_array bad;
    voxa_array_view(&bad, d, VOXA_U8, 3, s4);
    CHECK_STATUS(voxa_png_write(path, &bad), VOXA_EINVAL);
    CHECK_MSG("(height, width, 3)");
    CHECK(access(path, F_OK) != 0);
    CHECK_STATUS(voxa_png_write("/nonexistent-dir/p.png", &a), VOXA_EIO);
}

static void test_bad_args(void) {
    int64_t s1[1] = {4}, s2[2] = {2, 2}, s3[2] = {2, 3};
    uint8_t d[8] = {0};
    float f[6] = {0};
    voxa_array a1, a2, a3, fl;
    voxa_array_view(&a1, d, VOXA_U8, 1, s1);
    voxa_array_view(&a2, d, VOXA_U8, 2, s2);
    voxa_array_view(&a3, d, VOXA_U8, 2, s3);
    voxa_array_view(&fl, f, VOXA_F32, 2, s2);
    voxa_store *st1, *st2, *st3, *sf;
    voxa_store_wrap(&a1, &st1);
    voxa_store_wrap(&a2, &st2);
    voxa_store_wrap(&a3, &st3);
    voxa_store_wrap(&fl, &sf);
    voxa_array rgb;
    CHECK_STATUS(voxa_preview(st1, NULL, NULL, &rgb), VOXA_EINVAL);
    CHECK_MSG("image: 1-D");
    CHECK_STATUS(voxa_preview(NULL, NULL, NULL, &rgb), VOXA_EINVAL);
    CHECK_STATUS(voxa_preview(st2, st3, NULL, &rgb), VOXA_EINVAL);
    CHECK_MSG("labels: shape");
    CHECK_STATUS(voxa_preview(st2, sf, NULL, &rgb), VOXA_EINVAL);
    CHECK_MSG("float32");
    voxa_preview_options o = {0};
    o.lo_pct = 90;
    o.hi_pct = 10;
    CHECK_STATUS(voxa_preview(st2, NULL, &o, &rgb), VOXA_EINVAL);
    CHECK_MSG("percentiles");
    int64_t pt[2] = {0, 2};
    o = (voxa_preview_options){0};
    o.point = pt;
    CHECK_STATUS(voxa_preview(st2, NULL, &o, &rgb), VOXA_EINVAL);
    CHECK_MSG("point[1]");
    double sp[2] = {1, -1};
    o = (voxa_preview_options){0};
    o.spacing = sp;
    CHECK_STATUS(voxa_preview(st2, NULL, &o, &rgb), VOXA_EINVAL);
    CHECK_MSG("spacing[1]");
    voxa_store_close(st1);
    voxa_store_close(st2);
    voxa_store_close(st3);
    voxa_store_close(sf);
}

int main(void) {
    RUN(test_layout);
    RUN(test_labels);
    RUN(test_spacing_and_contrast);
    RUN(test_png);
    RUN(test_bad_args);
    VTEST_END();
}
