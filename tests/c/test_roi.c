/* roi: extraction and paste-back against naive per-voxel references, every
 * mode and op, strided views, thread counts; errors and their messages. */
#include "internal.h"
#include "vtest.h"

#include <math.h>

/* Naive reference source index for one axis (numpy.pad rules), written
 * differently from the library: reflect by repeated folding. */
static int64_t ref_index(int64_t j, int64_t n, voxa_roi_mode m) {
    if (j >= 0 && j < n) return j;
    if (m == VOXA_ROI_CONSTANT) return -1;
    if (m == VOXA_ROI_NEAREST) return j < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    while (j < 0 || j >= n) j = j < 0 ? -j : 2 * (n - 1) - j;
    return j;
}

/* 3-D int32 image (Z, Y, X) with k = 2 coordinate axes (Z, Y) and X whole. */
static void test_extract_modes(void) {
    enum { Z = 5, Y = 7, X = 3, N = 40, SZ = 4, SY = 9 };
    int32_t img[Z][Y][X];
    for (int z = 0; z < Z; z++)
        for (int y = 0; y < Y; y++)
            for (int x = 0; x < X; x++) img[z][y][x] = z * 100 + y * 10 + x;
    voxa_array in;
    int64_t shape[3] = {Z, Y, X};
    CHECK_OK(voxa_array_view(&in, img, VOXA_I32, 3, shape));
    unsigned long long seed = 42;
    int64_t coords[N * 2], size[2] = {SZ, SY};
    for (int i = 0; i < N; i++) {
        coords[2 * i] = (int64_t)(vtest_rand(&seed) % 25) - 12;
        coords[2 * i + 1] = (int64_t)(vtest_rand(&seed) % 31) - 15;
    }
    static int32_t out[N][SZ][SY][X];
    voxa_array o;
    int64_t oshape[4] = {N, SZ, SY, X};
    CHECK_OK(voxa_array_view(&o, out, VOXA_I32, 4, oshape));
    voxa_roi_mode modes[3] = {VOXA_ROI_CONSTANT, VOXA_ROI_NEAREST, VOXA_ROI_REFLECT};
    for (int t = 1; t <= 3; t += 2) {
        voxa_set_threads(t);
        for (int mi = 0; mi < 3; mi++) {
            voxa_roi_params p = {coords, N, 2, size, 0, modes[mi], -7};
            CHECK_OK(voxa_roi_extract(&in, &p, &o));
            int bad = 0;
            for (int i = 0; i < N; i++)
                for (int a = 0; a < SZ; a++)
                    for (int b = 0; b < SY; b++)
                        for (int x = 0; x < X; x++) {
                            int64_t z = ref_index(coords[2 * i] + a, Z, modes[mi]);
                            int64_t y = ref_index(coords[2 * i + 1] + b, Y, modes[mi]);
                            int32_t want = (z < 0 || y < 0) ? -7 : img[z][y][x];
                            if (out[i][a][b][x] != want) bad++;
                        }
            CHECK(bad == 0);
        }
    }
    voxa_set_threads(0);
}

/* In-bounds patches of a strided view (every other row, reversed columns)
 * take the fast path; compare with direct indexing. */
static void test_extract_strided_and_clip(void) {
    enum { H = 20, W = 16, N = 30 };
    uint16_t base[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) base[y][x] = (uint16_t)(y * 1000 + x);
    voxa_array v; /* base[::2, ::-1]: shape (10, 16) */
    memset(&v, 0, sizeof v);
    v.data = &base[0][W - 1];
    v.dtype = VOXA_U16;
    v.ndim = 2;
    v.shape[0] = H / 2; v.shape[1] = W;
    v.strides[0] = 2 * W * 2; v.strides[1] = -2;
    int64_t coords[N * 2], size[2] = {3, 5};
    unsigned long long seed = 7;
    for (int i = 0; i < N; i++) {
        coords[2 * i] = (int64_t)(vtest_rand(&seed) % 14) - 2;  /* -2..11 */
        coords[2 * i + 1] = (int64_t)(vtest_rand(&seed) % 20) - 2;
    }
    uint16_t out[N][3][5];
    voxa_array o;
    int64_t oshape[3] = {N, 3, 5};
    CHECK_OK(voxa_array_view(&o, out, VOXA_U16, 3, oshape));
    voxa_roi_params p = {coords, N, 2, size, 0, VOXA_ROI_CLIP, 0};
    CHECK_OK(voxa_roi_extract(&v, &p, &o));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int64_t cy = coords[2 * i], cx = coords[2 * i + 1];
        cy = cy < 0 ? 0 : cy > 10 - 3 ? 10 - 3 : cy;
        cx = cx < 0 ? 0 : cx > 16 - 5 ? 16 - 5 : cx;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 5; b++)
                if (out[i][a][b] != base[2 * (cy + a)][W - 1 - (cx + b)]) bad++;
    }
    CHECK(bad == 0);
}

static void test_centres_and_rounding(void) {
    double in[8] = {2.5, 3.5, -0.5, -1.5, 4.0, 1e300, 0.25, 7};
    int64_t out[8];
    CHECK_OK(voxa_roi_coords_from_doubles(in, 2, 2, 1, out));
    CHECK(out[0] == 2 && out[1] == 4 && out[2] == 0 && out[3] == -2);
    CHECK_STATUS(voxa_roi_coords_from_doubles(in, 3, 2, 1, out), VOXA_EINVAL);
    CHECK_MSG("row 2, column 1");
    CHECK_STATUS(voxa_roi_coords_from_doubles(in, 1, 2, 0, out), VOXA_EINVAL);
    CHECK_MSG("not an integer");
    double ok[2] = {3, -4};
    CHECK_OK(voxa_roi_coords_from_doubles(ok, 1, 2, 0, out));
    CHECK(out[0] == 3 && out[1] == -4);
    /* centre 5 with size 4 -> corner 3; size 3 -> corner 4 */
    uint8_t img[10];
    for (int i = 0; i < 10; i++) img[i] = (uint8_t)i;
    voxa_array a, o;
    int64_t n10 = 10, c[1] = {5}, s4[1] = {4}, s3[1] = {3}, os[2] = {1, 4};
    uint8_t buf[4];
    CHECK_OK(voxa_array_view(&a, img, VOXA_U8, 1, &n10));
    CHECK_OK(voxa_array_view(&o, buf, VOXA_U8, 2, os));
    voxa_roi_params p = {c, 1, 1, s4, 1, VOXA_ROI_ERROR, 0};
    CHECK_OK(voxa_roi_extract(&a, &p, &o));
    CHECK(buf[0] == 3 && buf[3] == 6);
    os[1] = 3;
    CHECK_OK(voxa_array_view(&o, buf, VOXA_U8, 2, os));
    p.size = s3;
    CHECK_OK(voxa_roi_extract(&a, &p, &o));
    CHECK(buf[0] == 4 && buf[2] == 6);
}

static void test_errors(void) {
    float img[6][8] = {{0}};
    voxa_array a, o;
    int64_t shape[2] = {6, 8}, os[3] = {3, 4, 4}, size[2] = {4, 4};
    float out[3][4][4];
    CHECK_OK(voxa_array_view(&a, img, VOXA_F32, 2, shape));
    CHECK_OK(voxa_array_view(&o, out, VOXA_F32, 3, os));
    int64_t coords[6] = {0, 0, 2, 4, 3, 0};
    voxa_roi_params p = {coords, 3, 2, size, 0, VOXA_ROI_ERROR, 0};
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    CHECK_MSG("row 2 reaches outside the array on axis 0");
    p.k = 3;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    CHECK_MSG("3 columns");
    p.k = 2;
    int64_t neg[2] = {4, -1};
    p.size = neg;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    CHECK_MSG("size[1] = -1");
    p.size = size;
    int64_t big[2] = {7, 4};
    p.size = big;
    p.mode = VOXA_ROI_CLIP;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    p.size = size;
    p.mode = VOXA_ROI_CONSTANT;
    p.cval = 1e300;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    CHECK_MSG("cval");
    p.cval = 0;
    o.shape[2] = 3;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    CHECK_MSG("out has shape (3, 4, 3), expected (3, 4, 4)");
    o.shape[2] = 4;
    o.dtype = VOXA_I32;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    CHECK_MSG("dtype int32");
    o.dtype = VOXA_F32;
    int64_t huge[2] = {INT64_MAX, 0};
    p.coords = huge;
    p.n = 1;
    o.shape[0] = 1;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EOVERFLOW);
    p.mode = VOXA_ROI_CROP;
    CHECK_STATUS(voxa_roi_extract(&a, &p, &o), VOXA_EINVAL);
    voxa_roi_mode m;
    voxa_paste_op op;
    CHECK_OK(voxa_roi_mode_from_name("reflect", &m));
    CHECK(m == VOXA_ROI_REFLECT);
    CHECK_STATUS(voxa_roi_mode_from_name("wrap", &m), VOXA_EINVAL);
    CHECK_MSG("'wrap'");
    CHECK_OK(voxa_paste_op_from_name("mean", &op));
    CHECK(op == VOXA_PASTE_MEAN);
    CHECK_STATUS(voxa_paste_op_from_name("min", &op), VOXA_EINVAL);
    CHECK_STATUS(voxa_roi_extract(NULL, &p, &o), VOXA_EINVAL);
    CHECK_STATUS(voxa_roi_extract(&a, NULL, &o), VOXA_EINVAL);
}

/* Paste: overlapping patches, every op, crop mode, both thread counts, in a
 * volume tall enough for several slabs; the reference is the row loop. */
static void test_paste(void) {
    enum { Z = 70, Y = 40, X = 400, N = 200, S = 6 }; /* 1.1 M voxels: 2 slabs */
    int64_t vshape[3] = {Z, Y, X}, pshape[4] = {N, S, S, S}, size[3] = {S, S, S};
    int16_t *vol = malloc(sizeof(int16_t) * Z * Y * X);
    int16_t *ref = malloc(sizeof(int16_t) * Z * Y * X);
    int16_t *pat = malloc(sizeof(int16_t) * N * S * S * S);
    double *sum = malloc(sizeof(double) * Z * Y * X);
    int *cnt = malloc(sizeof(int) * Z * Y * X);
    int64_t coords[N * 3];
    unsigned long long seed = 99;
    for (int i = 0; i < N; i++) {
        coords[3 * i] = (int64_t)(vtest_rand(&seed) % (Z + S)) - S + 1;
        coords[3 * i + 1] = (int64_t)(vtest_rand(&seed) % 8) - 2; /* heavy overlap */
        coords[3 * i + 2] = (int64_t)(vtest_rand(&seed) % 8) + X - 10;
    }
    coords[3 * 7] = coords[3 * 3]; coords[3 * 7 + 1] = coords[3 * 3 + 1];
    coords[3 * 7 + 2] = coords[3 * 3 + 2];
    for (int i = 0; i < N * S * S * S; i++) pat[i] = (int16_t)(vtest_rand(&seed) % 65536);
    voxa_array v, pa;
    CHECK_OK(voxa_array_view(&pa, pat, VOXA_I16, 4, pshape));
    for (int op = 0; op < VOXA_PASTE_NOPS; op++)
        for (int t = 1; t <= 3; t += 2) {
            voxa_set_threads(t);
            for (int64_t j = 0; j < (int64_t)Z * Y * X; j++)
                vol[j] = ref[j] = (int16_t)(j * 7), sum[j] = 0, cnt[j] = 0;
            for (int i = 0; i < N; i++)
                for (int a = 0; a < S; a++)
                    for (int b = 0; b < S; b++)
                        for (int c = 0; c < S; c++) {
                            int64_t z = coords[3 * i] + a, y = coords[3 * i + 1] + b,
                                    x = coords[3 * i + 2] + c;
                            if (z < 0 || z >= Z || y < 0 || y >= Y || x < 0 || x >= X) continue;
                            int64_t j = (z * Y + y) * X + x;
                            int16_t q = pat[((i * S + a) * S + b) * S + c];
                            if (op == VOXA_PASTE_OVERWRITE) ref[j] = q;
                            else if (op == VOXA_PASTE_ADD) ref[j] = (int16_t)(uint16_t)((uint16_t)ref[j] + (uint16_t)q);
                            else if (op == VOXA_PASTE_MAX) ref[j] = q > ref[j] ? q : ref[j];
                            else sum[j] += q, cnt[j]++;
                        }
            if (op == VOXA_PASTE_MEAN)
                for (int64_t j = 0; j < (int64_t)Z * Y * X; j++)
                    if (cnt[j]) ref[j] = (int16_t)nearbyint(sum[j] / cnt[j]);
            CHECK_OK(voxa_array_view(&v, vol, VOXA_I16, 3, vshape));
            voxa_roi_params p = {coords, N, 3, size, 0, VOXA_ROI_CROP, 0};
            CHECK_OK(voxa_roi_paste(&v, &pa, &p, (voxa_paste_op)op));
            CHECK(!memcmp(vol, ref, sizeof(int16_t) * Z * Y * X));
            p.mode = VOXA_ROI_ERROR;
            CHECK_STATUS(voxa_roi_paste(&v, &pa, &p, (voxa_paste_op)op), VOXA_EINVAL);
            CHECK_MSG("reaches outside");
            p.mode = VOXA_ROI_CONSTANT;
            CHECK_STATUS(voxa_roi_paste(&v, &pa, &p, (voxa_paste_op)op), VOXA_EINVAL);
        }
    voxa_set_threads(0);
    free(vol); free(ref); free(pat); free(sum); free(cnt);
}

static void test_empty(void) {
    uint8_t img[4] = {1, 2, 3, 4}, out[1];
    voxa_array a, o;
    int64_t shape[2] = {2, 2}, os[3] = {0, 1, 1}, size[2] = {1, 1};
    CHECK_OK(voxa_array_view(&a, img, VOXA_U8, 2, shape));
    CHECK_OK(voxa_array_view(&o, out, VOXA_U8, 3, os));
    voxa_roi_params p = {NULL, 0, 2, size, 0, VOXA_ROI_ERROR, 0};
    CHECK_OK(voxa_roi_extract(&a, &p, &o));
    CHECK_OK(voxa_roi_paste(&a, &o, &p, VOXA_PASTE_ADD));
    CHECK(img[0] == 1 && img[3] == 4);
}

int main(void) {
    RUN(test_extract_modes);
    RUN(test_extract_strided_and_clip);
    RUN(test_centres_and_rounding);
    RUN(test_errors);
    RUN(test_paste);
    RUN(test_empty);
    VTEST_END();
}
