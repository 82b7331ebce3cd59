/* roi paste-back: write N patches into a volume with overwrite, add, max or
 * mean — the step after tiled processing of extracted patches.
 *
 * Semantics. The result equals a Python loop over the rows in order,
 *     for i, c in enumerate(corners): volume[box(c)] op= patches[i][part]
 * so where patches overlap the later row wins (overwrite), additions happen
 * in row order (bit-identical float sums), and MEAN gives each covered voxel
 * the float64 mean of the patch values covering it (integers rounded half to
 * even, like np.rint; uncovered voxels keep their value). Patches reaching
 * outside the volume are rejected (mode error, first offending row named),
 * shifted inside like extraction's clip mode (clip), or cut to the inside
 * part (crop: the inverse of extraction with a padding mode).
 *
 * Schedule. Row order forbids running patches in parallel where they
 * overlap, so threads split the volume instead: it is cut along axis 0 into
 * slabs of about 2^20 voxels; a counting sort lists, for each slab, the rows
 * touching it, in row order (CSR: O(N + entries)). Each slab applies its
 * rows in order to its own voxels only, so slabs are independent, every voxel
 * sees its patches in row order, and the result is the same for every
 * thread count. MEAN accumulates in per-slab scratch (float64 sum + uint32
 * count, 12 bytes per slab voxel, one slab of 2^18 voxels per thread at a
 * time) and writes
 * the means when the slab is done.
 *
 * Kernels: one row function per (op, dtype), chosen once per call; overwrite
 * folds dtypes by width and copies contiguous rows with memcpy. Integer add
 * wraps modulo 2^bits as NumPy's does (computed in the unsigned type: no
 * signed overflow); bool add and max are logical or; float max follows
 * np.maximum (NaN wins).
 *
 * Cost: O(N * k + N * slabs touched) set-up, O(patch voxels written) work;
 * memory O(entries) int64 plus the MEAN scratch. */
#include "roi_internal.h"

#include <math.h>
#include <string.h>

#define SLAB_VOXELS ((int64_t)1 << 20)

typedef void (*row_fn)(char *v, const char *p, int64_t n, int64_t vs, int64_t ps,
                       double *sum, uint32_t *cnt);

#define COPY_ROW(W)                                                            \
    static void copy_row_##W(char *v, const char *p, int64_t n, int64_t vs,    \
                             int64_t ps, double *sum, uint32_t *cnt) {         \
        if (vs == W && ps == W) {                                              \
            memcpy(v, p, (size_t)(n * W));                                     \
            return;                                                            \
        }                                                                      \
        for (int64_t i = 0; i < n; i++) memcpy(v + i * vs, p + i * ps, W);     \
    }
COPY_ROW(1)
COPY_ROW(2)
COPY_ROW(4)
COPY_ROW(8)

/* One element-wise combination (a = OP(a, b)) of a volume row with a patch
 * row, for one dtype. */
#define COMBINE_ROW(FN, T, OP)                                                  \
    static void FN(char *v, const char *p, int64_t n, int64_t vs, int64_t ps,  \
                   double *sum, uint32_t *cnt) {                               \
        for (int64_t i = 0; i < n; i++) {                                      \
            T a, b;                                                            \
            memcpy(&a, v + i * vs, sizeof a);                                  \
            memcpy(&b, p + i * ps, sizeof b);                                  \
            a = OP(a, b);                                                      \
            memcpy(v + i * vs, &a, sizeof a);                                  \
        }                                                                      \
    }

/* add / max / mean-accumulate for one dtype. ADD(a, b) and MAX(a, b) are
 * expressions of T. */
#define TYPED_ROWS(NAME, T, ADD, MAX)                                          \
    COMBINE_ROW(add_row_##NAME, T, ADD)                                        \
    COMBINE_ROW(max_row_##NAME, T, MAX)                                        \
    static void acc_row_##NAME(char *v, const char *p, int64_t n, int64_t vs,  \
                               int64_t ps, double *sum, uint32_t *cnt) {       \
        for (int64_t i = 0; i < n; i++) {                                      \
            T b;                                                               \
            memcpy(&b, p + i * ps, sizeof b);                                  \
            sum[i] += (double)b;                                               \
            cnt[i]++;                                                          \
        }                                                                      \
    }

#define ORV(a, b) (uint8_t)((a) | (b))
#define IMAX(a, b) ((b) > (a) ? (b) : (a))
#define FADD(a, b) ((a) + (b))
#define FMAX(a, b) (((a) >= (b) || (a) != (a)) ? (a) : (b))

#define ADD_U8(a, b) (uint8_t)((uint8_t)(a) + (uint8_t)(b))
#define ADD_I8(a, b) (int8_t)(uint8_t)((uint8_t)(a) + (uint8_t)(b))
#define ADD_U16(a, b) (uint16_t)((uint16_t)(a) + (uint16_t)(b))
#define ADD_I16(a, b) (int16_t)(uint16_t)((uint16_t)(a) + (uint16_t)(b))
#define ADD_U32(a, b) (uint32_t)((uint32_t)(a) + (uint32_t)(b))
#define ADD_I32(a, b) (int32_t)(uint32_t)((uint32_t)(a) + (uint32_t)(b))
#define ADD_U64(a, b) (uint64_t)((uint64_t)(a) + (uint64_t)(b))
#define ADD_I64(a, b) (int64_t)(uint64_t)((uint64_t)(a) + (uint64_t)(b))

TYPED_ROWS(bool, uint8_t, ORV, ORV)
TYPED_ROWS(u8, uint8_t, ADD_U8, IMAX)
TYPED_ROWS(i8, int8_t, ADD_I8, IMAX)
TYPED_ROWS(u16, uint16_t, ADD_U16, IMAX)
TYPED_ROWS(i16, int16_t, ADD_I16, IMAX)
TYPED_ROWS(u32, uint32_t, ADD_U32, IMAX)
TYPED_ROWS(i32, int32_t, ADD_I32, IMAX)
TYPED_ROWS(u64, uint64_t, ADD_U64, IMAX)
TYPED_ROWS(i64, int64_t, ADD_I64, IMAX)
TYPED_ROWS(f32, float, FADD, FMAX)
TYPED_ROWS(f64, double, FADD, FMAX)

/* Mean -> dtype: floats by C conversion, integers rounded half to even and
 * clamped (a mean lies within its values' range; the clamp only guards the
 * rounding of 2^64-ish doubles). */
#define STORE_MEAN(NAME, T, LO, HI, ISINT)                                     \
    static void store_##NAME(char *v, double m) {                              \
        T x;                                                                   \
        if (ISINT) {                                                           \
            double r = nearbyint(m);                                           \
            if (r < (double)(LO)) r = (double)(LO);                            \
            x = r >= (double)(HI) ? (T)(HI) : (T)r;                            \
        } else {                                                               \
            x = (T)m;                                                          \
        }                                                                      \
        memcpy(v, &x, sizeof x);                                               \
    }
STORE_MEAN(bool, uint8_t, 0, 1, 1)
STORE_MEAN(u8, uint8_t, 0, UINT8_MAX, 1)
STORE_MEAN(i8, int8_t, INT8_MIN, INT8_MAX, 1)
STORE_MEAN(u16, uint16_t, 0, UINT16_MAX, 1)
STORE_MEAN(i16, int16_t, INT16_MIN, INT16_MAX, 1)
STORE_MEAN(u32, uint32_t, 0, UINT32_MAX, 1)
STORE_MEAN(i32, int32_t, INT32_MIN, INT32_MAX, 1)
STORE_MEAN(u64, uint64_t, 0, UINT64_MAX, 1)
STORE_MEAN(i64, int64_t, INT64_MIN, INT64_MAX, 1)
STORE_MEAN(f32, float, 0, 0, 0)
STORE_MEAN(f64, double, 0, 0, 0)

typedef void (*store_fn)(char *v, double m);

#define TABLE(PFX) {PFX##_bool, PFX##_u8, PFX##_i8, PFX##_u16, PFX##_i16, PFX##_u32, \
                    PFX##_i32, PFX##_u64, PFX##_i64, PFX##_f32, PFX##_f64}
static const row_fn add_rows[VOXA_NDTYPES] = TABLE(add_row);
static const row_fn max_rows[VOXA_NDTYPES] = TABLE(max_row);
static const row_fn acc_rows[VOXA_NDTYPES] = TABLE(acc_row);
static const store_fn stores[VOXA_NDTYPES] = TABLE(store);

typedef struct pctx {
    voxa_array *vol;
    const voxa_array *pat;
    const voxa_roi_params *p;
    voxa_paste_op op;
    int64_t ext[VOXA_MAXDIM];
    int64_t rows_per_slab, nslabs, slab_voxels;
    int64_t sst[VOXA_MAXDIM]; /* scratch strides in voxels (C order) */
    const int64_t *start;     /* CSR: entries of slab s are start[s]..start[s+1] */
    const int64_t *rows;
    row_fn row;
    store_fn store;
} pctx;

/* Apply row i to the voxels of slab [s0, s1) on axis 0. */
static void apply(const pctx *c, int64_t i, int64_t s0, int64_t s1, double *sum,
                  uint32_t *cnt) {
    const voxa_array *vol = c->vol, *pat = c->pat;
    int D = vol->ndim, last = D - 1;
    int64_t corner[VOXA_MAXDIM], e[VOXA_MAXDIM] = {0};
    voxa__roi_corner(vol, c->p, i, corner);
    char *v = vol->data;
    const char *p = (const char *)pat->data + i * pat->strides[0];
    int64_t si = 0;
    for (int d = 0; d < D; d++) {
        int64_t a = corner[d], b = corner[d] + c->ext[d];
        int64_t vlo = d == 0 ? s0 : 0, vhi = d == 0 ? s1 : vol->shape[d];
        if (a < vlo) a = vlo;
        if (b > vhi) b = vhi;
        if (b <= a) return;
        e[d] = b - a;
        v += a * vol->strides[d];
        p += (a - corner[d]) * pat->strides[d + 1];
        si += (a - vlo) * c->sst[d];
    }
    int64_t n = e[last], vs = vol->strides[last], ps = pat->strides[last + 1];
    int64_t idx[VOXA_MAXDIM] = {0}, nrows = 1;
    for (int d = 0; d < last; d++) nrows *= e[d];
    for (int64_t r = 0; r < nrows; r++) {
        c->row(v, p, n, vs, ps, sum ? sum + si : NULL, cnt ? cnt + si : NULL);
        for (int d = last - 1; d >= 0; d--) {
            v += vol->strides[d];
            p += pat->strides[d + 1];
            si += c->sst[d];
            if (++idx[d] < e[d]) break;
            v -= vol->strides[d] * e[d];
            p -= pat->strides[d + 1] * e[d];
            si -= c->sst[d] * e[d];
            idx[d] = 0;
        }
    }
}

/* Write the means of one slab, row by row along the last axis. */
static void finish_mean(const pctx *c, int64_t s0, int64_t s1, const double *sum,
                        const uint32_t *cnt) {
    const voxa_array *vol = c->vol;
    int D = vol->ndim, last = D - 1;
    int64_t n = vol->shape[last], vs = vol->strides[last];
    int64_t nrows = (s1 - s0) * c->sst[0] / n;
    int64_t idx[VOXA_MAXDIM] = {0};
    idx[0] = s0;
    if (D == 1) { /* the slab is the one row */
        n = s1 - s0;
        nrows = 1;
    }
    for (int64_t r = 0; r < nrows; r++) {
        char *v = (char *)vol->data + (D == 1 ? s0 * vs : 0);
        for (int d = 0; d < last; d++) v += idx[d] * vol->strides[d];
        const double *sr = sum + r * n;
        const uint32_t *cr = cnt + r * n;
        for (int64_t i = 0; i < n; i++)
            if (cr[i]) c->store(v + i * vs, sr[i] / (double)cr[i]);
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < vol->shape[d] || d == 0) break;
            idx[d] = 0;
        }
    }
}

static voxa_status paste_block(int64_t lo, int64_t hi, int tid, void *arg) {
    const pctx *c = arg;
    double *sum = NULL;
    uint32_t *cnt = NULL;
    if (c->op == VOXA_PASTE_MEAN) {
        sum = voxa__malloc((size_t)c->slab_voxels, sizeof *sum);
        cnt = voxa__malloc((size_t)c->slab_voxels, sizeof *cnt);
        if (!sum || !cnt) {
            voxa__free(sum);
            voxa__free(cnt);
            return voxa__error(VOXA_ENOMEM, "paste: cannot allocate mean scratch of %lld "
                               "voxels", (long long)c->slab_voxels);
        }
    }
    for (int64_t s = lo; s < hi; s++) {
        int64_t s0 = s * c->rows_per_slab, s1 = s0 + c->rows_per_slab;
        if (s1 > c->vol->shape[0]) s1 = c->vol->shape[0];
        if (c->start[s] == c->start[s + 1]) continue;
        if (sum) {
            memset(sum, 0, (size_t)((s1 - s0) * c->sst[0]) * sizeof *sum);
            memset(cnt, 0, (size_t)((s1 - s0) * c->sst[0]) * sizeof *cnt);
        }
        for (int64_t j = c->start[s]; j < c->start[s + 1]; j++)
            apply(c, c->rows[j], s0, s1, sum, cnt);
        if (sum) finish_mean(c, s0, s1, sum, cnt);
    }
    voxa__free(sum);
    voxa__free(cnt);
    return VOXA_OK;
}

voxa_status voxa_roi_paste(voxa_array *volume, const voxa_array *patches,
                           const voxa_roi_params *p, voxa_paste_op op) {
    voxa_status st = VOXA_OK;
    pctx c;
    memset(&c, 0, sizeof c);
    int64_t *start = NULL, *rows = NULL, *fill = NULL;
    VOXA_FAIL_IF(!volume || !patches, VOXA_EINVAL, "paste: volume or patches is NULL");
    VOXA_FAIL_IF((unsigned)op >= VOXA_PASTE_NOPS, VOXA_EINVAL, "paste: invalid op %d",
                 (int)op);
    VOXA_CHECK(voxa__roi_check(volume, "volume", p, patches, "patches", 1, c.ext));
    VOXA_CHECK(voxa__roi_validate_rows(volume, p));
    int D = volume->ndim;
    int64_t vox = voxa_array_size(volume);
    if (p->n == 0 || vox == 0) return VOXA_OK;
    for (int d = 0; d < D; d++)
        if (c.ext[d] == 0) return VOXA_OK;
    c.vol = volume;
    c.pat = patches;
    c.p = p;
    c.op = op;
    c.sst[D - 1] = 1;
    for (int d = D - 2; d >= 0; d--) c.sst[d] = c.sst[d + 1] * volume->shape[d + 1];
    /* MEAN's scratch (12 bytes a voxel) should stay in the caches. */
    c.rows_per_slab = (op == VOXA_PASTE_MEAN ? SLAB_VOXELS / 4 : SLAB_VOXELS) / c.sst[0];
    if (c.rows_per_slab < 1) c.rows_per_slab = 1;
    if (c.rows_per_slab > volume->shape[0]) c.rows_per_slab = volume->shape[0];
    c.nslabs = (volume->shape[0] + c.rows_per_slab - 1) / c.rows_per_slab;
    c.slab_voxels = c.rows_per_slab * c.sst[0];
    size_t es = voxa_dtype_size(volume->dtype);
    switch (op) {
    case VOXA_PASTE_OVERWRITE:
        c.row = es == 1 ? copy_row_1 : es == 2 ? copy_row_2 : es == 4 ? copy_row_4 : copy_row_8;
        break;
    case VOXA_PASTE_ADD: c.row = add_rows[volume->dtype]; break;
    case VOXA_PASTE_MAX: c.row = max_rows[volume->dtype]; break;
    default: c.row = acc_rows[volume->dtype]; c.store = stores[volume->dtype]; break;
    }

    /* Counting sort of (slab, row) pairs, rows ascending within a slab. */
    start = voxa__calloc((size_t)c.nslabs + 1, sizeof *start);
    fill = voxa__calloc((size_t)c.nslabs, sizeof *fill);
    VOXA_GOTO_IF(!start || !fill, VOXA_ENOMEM, "paste: cannot allocate %lld slab lists",
                 (long long)c.nslabs);
    int64_t corner[VOXA_MAXDIM], total = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t i = 0; i < p->n; i++) {
            voxa__roi_corner(volume, p, i, corner);
            int hit = 1;
            for (int d = 1; d < p->k; d++)
                if (corner[d] >= volume->shape[d] || corner[d] + c.ext[d] <= 0) hit = 0;
            int64_t a = corner[0], b = corner[0] + c.ext[0];
            if (a < 0) a = 0;
            if (b > volume->shape[0]) b = volume->shape[0];
            if (!hit || b <= a) continue;
            for (int64_t s = a / c.rows_per_slab; s <= (b - 1) / c.rows_per_slab; s++) {
                if (pass == 0) start[s + 1]++;
                else rows[start[s] + fill[s]++] = i;
            }
        }
        if (pass == 0) {
            for (int64_t s = 0; s < c.nslabs; s++) start[s + 1] += start[s];
            total = start[c.nslabs];
            rows = voxa__malloc((size_t)(total ? total : 1), sizeof *rows);
            VOXA_GOTO_IF(!rows, VOXA_ENOMEM, "paste: cannot allocate %lld slab entries",
                         (long long)total);
        }
    }
    c.start = start;
    c.rows = rows;
    st = voxa__parallel_for(c.nslabs, 1, paste_block, &c);
done:
    voxa__free(start);
    voxa__free(fill);
    voxa__free(rows);
    return st;
}
