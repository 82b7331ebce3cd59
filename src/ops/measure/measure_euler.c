/* The Euler characteristic of every object of a 2-D or 3-D label image in
 * one pass (voxa_measure_euler), as skimage.measure.euler_number(object,
 * connectivity=ndim) gives it object by object (regionprops' `euler_number`:
 * 8-connected objects and 4-connected holes in 2-D, 26- and 6- in 3-D).
 *
 * An object is taken as the union of its voxels as closed unit cubes: two
 * voxels that share only a corner touch, so the union's components are the
 * 26- (8-) connected components, and the holes of the complement are 6- (4-)
 * connected. Its Euler characteristic is V - E + F - C over the cells of
 * that cubical complex: the lattice points, edges, faces and cubes that
 * touch at least one of its voxels. Every cell is named by its lowest
 * lattice point p and touches voxels p - d with d in {0, 1}^3:
 *   the vertex p         all 8;
 *   the edge along a     the 4 with d_a = 0;
 *   the face across a    the 2 with d_b = d_c = 0 (b, c != a);
 *   the cube             d = 0 only.
 * So one 2x2x2 window of labels per lattice point gives every cell named by
 * it, and each distinct label in a cell's voxels gets that cell's sign: per
 * label, a table by the pattern of its voxels in the window (256 entries,
 * made here from these rules). A window of one label adds 1 - 3 + 3 - 1 = 0
 * and is skipped: the work is at the objects' borders. In 2-D the same with
 * squares: 2x2 windows, the vertex, two edges and the pixel (1 - 2 + 1 = 0
 * for one label). Counts are integers, exact for any size.
 *
 * voxa_measure_euler_counts counts the lattice points of a core box of a
 * larger array (the rest is context, of which the cells read one voxel
 * before the core; beyond the array is outside the image, so the lattice
 * points at its far end belong to a core that reaches it), so chunks with a
 * voxel of their neighbours on each side add up to the whole (voxa.dask).
 * Memory: 4 rows of labels (2 in 2-D) as int64. */
#include "measure_internal.h"

#include <string.h>

typedef struct tally {
    const int64_t *rows;
    int64_t n;
    int64_t *chi;
    int64_t last, last_row; /* the last label looked up */
    int nw;                 /* voxels per window: 2^D */
    int8_t table[256];      /* by the pattern of one label's voxels in a window */
} tally;

/* The cells named by a lattice point p of a D-dimensional image: one per
 * set K of axes (the cell spans K: the vertex, edges, faces, the cube), of
 * sign (-1)^|K|, touching the window's voxels p - d with d_a = 0 on every
 * axis a of K (window index: bit D-1-a holds d_a). table[m]: what one label
 * whose voxels in the window are the bits of m adds, the sum of the signs
 * of the cells that touch one of them. */
static void make_table(int D, tally *t) {
    t->nw = 1 << D;
    for (int m = 0; m < 1 << t->nw; m++) {
        int sum = 0;
        for (int K = 0; K < t->nw; K++) {
            int kbits = 0, dims = 0;
            for (int a = 0; a < D; a++)
                if (K >> a & 1) kbits |= 1 << (D - 1 - a), dims++;
            int touched = 0;
            for (int i = 0; i < t->nw; i++) touched |= !(i & kbits) && (m >> i & 1);
            sum += touched ? (dims % 2 ? -1 : 1) : 0;
        }
        t->table[m] = (int8_t)sum;
    }
}

/* One window w of labels holding at least two: each label > 0 adds its
 * pattern's value. */
static void window(tally *t, const int64_t *w) {
    int done = 0; /* bits of the window already counted */
    for (int i = 0; i < t->nw; i++) {
        if (done >> i & 1) continue;
        int64_t L = w[i];
        int m = 0;
        for (int j = i; j < t->nw; j++) m |= (w[j] == L) << j;
        done |= m;
        if (L <= 0) continue;
        if (L != t->last) {
            t->last = L;
            t->last_row = voxa__measure_find_label(t->rows, t->n, L);
        }
        if (t->last_row >= 0) t->chi[t->last_row] += t->table[m];
    }
}

/* Label row y of plane z into dst[1 .. nx] (dst[0] = dst[nx + 1] = 0); a row
 * outside the array is all 0. (2-D: z is 0 and ignored.) */
static voxa_status read_row(const voxa_array *a, int64_t z, int64_t y, int64_t *dst) {
    int D = a->ndim;
    int64_t nx = a->shape[D - 1], ny = a->shape[D - 2];
    if ((D == 3 && (z < 0 || z >= a->shape[0])) || y < 0 || y >= ny) {
        memset(dst, 0, (size_t)(nx + 2) * sizeof *dst);
        return VOXA_OK;
    }
    dst[0] = dst[nx + 1] = 0;
    const char *p = (const char *)a->data + (D == 3 ? z * a->strides[0] : 0) +
                    y * a->strides[D - 2];
    return voxa__measure_read_labels(a, p, nx, dst + 1);
}

/* mix[x - x0] = whether the window of lattice point x holds two labels
 * (the others add nothing): branch-free, so that it vectorises; 64-bit
 * compares need SSE4.1, so an AVX2 build of it where the CPU has one
 * (VOXA_EULER_KERNEL=c forces the baseline, for tests). */
#define MIXED_BODY(NR)                                                         \
    for (int64_t x = x0; x <= x1; x++) {                                       \
        int64_t v = r[0][x + 1];                                               \
        int d = r[0][x] != v;                                                  \
        for (int k = 1; k < NR; k++) d |= (r[k][x] != v) | (r[k][x + 1] != v); \
        mix[x - x0] = (uint8_t)d;                                              \
    }
typedef void (*mixed_fn)(int64_t *const *r, int64_t x0, int64_t x1, uint8_t *mix);
static void mixed2(int64_t *const *r, int64_t x0, int64_t x1, uint8_t *mix) { MIXED_BODY(2) }
static void mixed4(int64_t *const *r, int64_t x0, int64_t x1, uint8_t *mix) { MIXED_BODY(4) }
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void mixed2_avx2(int64_t *const *r, int64_t x0,
                                                        int64_t x1, uint8_t *mix) {
    MIXED_BODY(2)
}
__attribute__((target("avx2"))) static void mixed4_avx2(int64_t *const *r, int64_t x0,
                                                        int64_t x1, uint8_t *mix) {
    MIXED_BODY(4)
}
#endif

static mixed_fn mixed_kernel(int nr) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (voxa__simd_level_from_env("VOXA_EULER_KERNEL") >= VOXA__SIMD_AVX2 &&
        __builtin_cpu_supports("avx2"))
        return nr == 4 ? mixed4_avx2 : mixed2_avx2;
#endif
    return nr == 4 ? mixed4 : mixed2;
}

/* The lattice points lo .. last (inclusive; axis 0 unused in 2-D) of a
 * core. r[k] (k = 2 d0 + d1 in 3-D, d0 in 2-D) is the row (z - d0, y - d1),
 * padded so that voxel x - d2 is at x - d2 + 1; per plane the row y read
 * now and the row y - 1 read before roll. */
static voxa_status count_points(const voxa_array *a, const int64_t *lo, const int64_t *last,
                                tally *t) {
    int D = a->ndim, nr = 1 << (D - 1), planes = nr / 2;
    int64_t nx = a->shape[D - 1];
    int64_t *buf = voxa__malloc((size_t)(nx + 2) * (size_t)nr, sizeof *buf);
    uint8_t *mix = voxa__malloc((size_t)(nx + 8), 1);
    if (!buf || !mix) {
        voxa__free(buf);
        voxa__free(mix);
        return voxa__error(VOXA_ENOMEM, "euler_number: no memory for rows of %lld",
                           (long long)nx);
    }
    int64_t *r[4];
    for (int k = 0; k < nr; k++) r[k] = buf + k * (nx + 2);
    mixed_fn mixed = mixed_kernel(nr);
    voxa_status st = VOXA_OK;
    for (int64_t z = lo[0]; z <= last[0] && st == VOXA_OK; z++) {
        for (int q = 0; q < planes && st == VOXA_OK; q++)
            st = read_row(a, z - q, lo[1] - 1, r[2 * q + 1]);
        for (int64_t y = lo[1]; y <= last[1] && st == VOXA_OK; y++) {
            for (int q = 0; q < planes && st == VOXA_OK; q++) st = read_row(a, z - q, y, r[2 * q]);
            if (st != VOXA_OK) break;
            mixed(r, lo[2], last[2], mix);
            for (int64_t x = lo[2]; x <= last[2]; x++) {
                uint64_t word = 1;
                if (x + 8 <= last[2] + 1) memcpy(&word, mix + (x - lo[2]), 8);
                if (!word) { /* 8 windows of one label each */
                    x += 7;
                    continue;
                }
                if (!mix[x - lo[2]]) continue;
                int64_t w[8];
                for (int k = 0; k < nr; k++) {
                    w[k << 1] = r[k][x + 1];
                    w[(k << 1) | 1] = r[k][x];
                }
                window(t, w);
            }
            for (int q = 0; q < planes; q++) { /* row y is the next y's y - 1 */
                int64_t *tmp = r[2 * q];
                r[2 * q] = r[2 * q + 1];
                r[2 * q + 1] = tmp;
            }
        }
    }
    voxa__free(buf);
    voxa__free(mix);
    return st;
}

/* The core's lattice points split along the outer axis (z in 3-D, y in
 * 2-D) across threads, each adding into its own n values: integer sums,
 * the same for any split. */
typedef struct euler_job {
    const voxa_array *a;
    int64_t lo[3], last[3];
    int outer;            /* 0 in 3-D, 1 in 2-D */
    const tally *proto;   /* rows, n, table */
    int64_t *parts;       /* nthreads x n */
} euler_job;

static voxa_status euler_range(int64_t lo, int64_t hi, int tid, void *ctx) {
    euler_job *J = ctx;
    tally t = *J->proto;
    t.chi = J->parts + (size_t)tid * (size_t)t.n;
    int64_t l[3], e[3];
    memcpy(l, J->lo, sizeof l);
    memcpy(e, J->last, sizeof e);
    l[J->outer] = J->lo[J->outer] + lo;
    e[J->outer] = J->lo[J->outer] + hi - 1;
    return count_points(J->a, l, e, &t);
}

static voxa_status count_core(const voxa_array *a, const int64_t *clo, const int64_t *chi,
                              tally *t) {
    int D = a->ndim, off = 3 - D;
    euler_job J = {a, {0, 0, 0}, {0, 0, 0}, D == 3 ? 0 : 1, t, NULL};
    for (int d = 0; d < D; d++) {
        J.lo[d + off] = clo[d];
        /* its own points, and the far end when the core reaches it */
        J.last[d + off] = chi[d] == a->shape[d] ? chi[d] : chi[d] - 1;
    }
    int64_t points = J.last[J.outer] - J.lo[J.outer] + 1, per = 1;
    for (int d = J.outer + 1; d < 3; d++) per *= J.last[d] - J.lo[d] + 1;
    int nt;
    J.parts = voxa__thread_scratch((size_t)(t->n > 0 ? t->n : 1), sizeof(int64_t), &nt);
    VOXA_FAIL_IF(!J.parts, VOXA_ENOMEM, "euler_number: no memory for %lld labels per thread",
                 (long long)t->n);
    memset(J.parts, 0, (size_t)nt * (size_t)(t->n > 0 ? t->n : 1) * sizeof(int64_t));
    voxa_status st = voxa__parallel_for_nt(points, voxa__grain(per), nt, euler_range, &J);
    for (int k = 0; st == VOXA_OK && k < nt; k++)
        for (int64_t i = 0; i < t->n; i++) t->chi[i] += J.parts[(size_t)k * (size_t)t->n + i];
    voxa__free(J.parts);
    return st;
}

voxa_status voxa_measure_euler_counts(const voxa_array *labels, const int64_t *core_lo,
                                      const int64_t *core_hi, const int64_t *rows, int64_t n,
                                      int64_t *chi) {
    VOXA_FAIL_IF(!core_lo, VOXA_EINVAL, "euler_number: NULL argument");
    VOXA_CHECK(voxa__measure_check_counts("euler_number", labels, 2, 3, rows, n, core_lo,
                                          core_hi, chi));
    for (int d = 0; d < labels->ndim; d++)
        if (core_lo[d] == core_hi[d]) return VOXA_OK; /* an empty core names nothing */
    tally t = {rows, n, chi, 0, -1, 0, {0}};
    make_table(labels->ndim, &t);
    return count_core(labels, core_lo, core_hi, &t);
}

voxa_status voxa_measure_euler(const voxa_array *labels, const int64_t *rows, int64_t n,
                               int64_t *out) {
    VOXA_CHECK(voxa__measure_check_counts("euler_number", labels, 2, 3, rows, n, NULL, NULL,
                                          out));
    int64_t lo[3] = {0, 0, 0};
    memset(out, 0, (size_t)n * sizeof *out);
    return voxa_measure_euler_counts(labels, lo, labels->shape, rows, n, out);
}
