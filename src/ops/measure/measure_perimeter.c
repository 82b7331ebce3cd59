/* The perimeter of every object of a 2-D label image in one pass
 * (voxa_measure_perimeter), as skimage.measure.perimeter(object, 4) gives it
 * object by object (regionprops' `perimeter`).
 *
 * scikit-image, per object: border = the object minus its 4-connected
 * erosion (outside the image counts as background); each border pixel gets
 * the code 1 + 2 (its 4-neighbours on the border) + 10 (its diagonal
 * neighbours on the border), and the perimeter is the sum of a weight per
 * code: 1 for 5, 7, 15, 17, 25, 27; sqrt(2) for 21, 33; (1 + sqrt(2)) / 2
 * for 13, 23; 0 otherwise. Only the object's own pixels are in its image,
 * so "on the border" means: the same label, and a 4-neighbour with another
 * label or outside the image. Here every object at once: a border flag per
 * pixel for three rows at a time (rolling), the code of each border pixel,
 * and per label the counts of the three weights (integers: exact). The
 * float sum a + b sqrt(2) + c (1 + sqrt(2)) / 2 is rounded three times;
 * scikit-image's histogram @ weights rounds in its own order: the two agree
 * to the last bits. Memory: 5 rows of labels, 3 of flags, 3 counts per label.
 * voxa_measure_perimeter_counts counts a core box of a larger array (the
 * rest is context: 2 pixels suffice), so chunks with an overlap of 2 add up
 * to the whole (voxa.dask). */
#include "measure_internal.h"

#include <string.h>

/* weight class of a code: 1 -> 1, 2 -> sqrt(2), 3 -> (1 + sqrt(2)) / 2, 0 -> none */
static int weight_class(int code) {
    switch (code) {
    case 5: case 7: case 15: case 17: case 25: case 27: return 1;
    case 21: case 33: return 2;
    case 13: case 23: return 3;
    default: return 0;
    }
}

/* Border flags of row y (lab rows y-1, y, y+1 given; NULL outside). */
static void border_row(const int64_t *up, const int64_t *row, const int64_t *down, int64_t nx,
                       uint8_t *b) {
    for (int64_t x = 0; x < nx; x++) {
        int64_t L = row[x];
        b[x] = L > 0 && (x == 0 || row[x - 1] != L || x == nx - 1 || row[x + 1] != L || !up ||
                         up[x] != L || !down || down[x] != L);
    }
}

/* Counts (n x 3: weights 1, sqrt(2), (1 + sqrt(2)) / 2) of the border
 * pixels in the core box [cy0, cy1) x [cx0, cx1), added to cnt. The array
 * around the core is context: rows and columns beyond the array are
 * outside the image. Label rows y-2 .. y+2 and flag rows y-1 .. y+1 roll
 * through 5 and 3 slots. */
static voxa_status count_core(const voxa_array *labels, int64_t cy0, int64_t cy1, int64_t cx0,
                              int64_t cx1, const int64_t *rows, int64_t n, int64_t *cnt) {
    int64_t ny = labels->shape[0], nx = labels->shape[1];
    int64_t *lab = voxa__malloc((size_t)(nx > 0 ? nx : 1) * 5, sizeof *lab);
    uint8_t *flag = voxa__malloc((size_t)(nx > 0 ? nx : 1) * 3, 1);
    voxa_status st = VOXA_OK;
    VOXA_GOTO_IF(!lab || !flag, VOXA_ENOMEM, "perimeter: no memory for rows of %lld",
                 (long long)nx);
#define IN(y) ((y) >= 0 && (y) < ny)
#define LAB(y) (IN(y) ? lab + (((y) % 5 + 5) % 5) * nx : NULL)
#define FLAG(y) (IN(y) ? flag + (((y) % 3 + 3) % 3) * nx : NULL)
#define READ(y) (IN(y) ? voxa__measure_read_labels(labels, (const char *)labels->data + \
                                                   (y) * labels->strides[0], nx, LAB(y)) \
                       : VOXA_OK)
    for (int64_t y = cy0 - 2; y <= cy0 + 1 && st == VOXA_OK; y++) st = READ(y);
    if (st) goto done;
    for (int64_t y = cy0 - 1; y <= cy0; y++)
        if (IN(y)) border_row(LAB(y - 1), LAB(y), LAB(y + 1), nx, FLAG(y));
    for (int64_t y = cy0; y < cy1; y++) {
        if ((st = READ(y + 2)) != VOXA_OK) goto done;
        if (IN(y + 1)) border_row(LAB(y), LAB(y + 1), LAB(y + 2), nx, FLAG(y + 1));
        const int64_t *row = LAB(y), *up = LAB(y - 1), *down = LAB(y + 1);
        const uint8_t *b = FLAG(y), *bu = FLAG(y - 1), *bd = FLAG(y + 1);
        int64_t prev = 0, r = -1;
        for (int64_t x = cx0; x < cx1; x++) {
            if (!b[x]) continue;
            int64_t L = row[x];
            /* a neighbour counts when it is on the border and of the same label */
#define ON(rowp, bp, xx) ((bp) && (xx) >= 0 && (xx) < nx && (bp)[xx] && (rowp)[xx] == L)
            int n4 = ON(row, b, x - 1) + ON(row, b, x + 1) + ON(up, bu, x) + ON(down, bd, x);
            int ndg = ON(up, bu, x - 1) + ON(up, bu, x + 1) + ON(down, bd, x - 1) +
                      ON(down, bd, x + 1);
#undef ON
            int w = weight_class(1 + 2 * n4 + 10 * ndg);
            if (!w) continue;
            if (L != prev) r = voxa__measure_find_label(rows, n, L), prev = L;
            if (r >= 0) cnt[r * 3 + w - 1]++;
        }
    }
#undef IN
#undef LAB
#undef FLAG
#undef READ
done:
    voxa__free(lab);
    voxa__free(flag);
    return st;
}

void voxa_measure_perimeter_of_counts(const int64_t *cnt, int64_t n, double *out) {
    const double r2 = 1.4142135623730951; /* sqrt(2), as Python's math.sqrt(2) */
    for (int64_t i = 0; i < n; i++)
        out[i] = (double)cnt[i * 3] + (double)cnt[i * 3 + 1] * r2 +
                 (double)cnt[i * 3 + 2] * ((1 + r2) / 2);
}

voxa_status voxa_measure_perimeter_counts(const voxa_array *labels, const int64_t *core_lo,
                                          const int64_t *core_hi, const int64_t *rows, int64_t n,
                                          int64_t *counts) {
    VOXA_FAIL_IF(!core_lo, VOXA_EINVAL, "perimeter: NULL argument");
    VOXA_CHECK(voxa__measure_check_counts("perimeter", labels, 2, 2, rows, n, core_lo, core_hi,
                                          counts));
    return count_core(labels, core_lo[0], core_hi[0], core_lo[1], core_hi[1], rows, n, counts);
}

voxa_status voxa_measure_perimeter(const voxa_array *labels, const int64_t *rows, int64_t n,
                                   double *out) {
    VOXA_CHECK(voxa__measure_check_counts("perimeter", labels, 2, 2, rows, n, NULL, NULL, out));
    int64_t *cnt = calloc((size_t)(n > 0 ? n : 1) * 3, sizeof *cnt);
    VOXA_FAIL_IF(!cnt, VOXA_ENOMEM, "perimeter: no memory for %lld labels", (long long)n);
    voxa_status st = count_core(labels, 0, labels->shape[0], 0, labels->shape[1], rows, n, cnt);
    if (st == VOXA_OK) voxa_measure_perimeter_of_counts(cnt, n, out);
    free(cnt);
    return st;
}
