/* Threshold: out = in > t, with t given or chosen by Otsu's method exactly as
 * skimage.filters.threshold_otsu chooses it.
 *
 * Otsu picks the histogram split that maximises the between-class variance
 * w1 w2 (m1 - m2)^2. "Exactly as skimage" fixes every rounding step, so this
 * file follows skimage 0.2x / NumPy 2 operation by operation:
 *
 *   scan      min, max, "every voxel equals the first", NaN/inf seen; one
 *             parallel pass over rows. A constant image returns its value
 *             (skimage's early exit, before any range check); otherwise a
 *             NaN or inf fails as np.histogram's range check does.
 *   histogram integer inputs: one bin per value min..max (skimage's
 *             bincount path; nbins ignored). Float and bool inputs:
 *             np.histogram(image, nbins): edges = np.linspace(min, max,
 *             nbins + 1) in the image's float type (bool: float64), computed
 *             as linspace does (k * step + min, last edge = max); a voxel's
 *             bin is NumPy's guess trunc((x - min) / (max - min) * nbins),
 *             the last edge folded into the last bin, then corrected once
 *             down (x < edge[i]) and once up (x >= edge[i+1], not the last
 *             bin). Counts are int64 per thread (or shared atomics when the
 *             per-thread tables would be large), added in any order: exact.
 *   select    counts as float32 (skimage's astype), running sums of counts
 *             in float32 and of counts x centres in the centres' precision
 *             (float32 for float32 images, else float64), both from the left
 *             and from the right, sequential as np.cumsum is; the variance
 *             (w1 w2 in float32) x (m1 - m2)^2; the first maximum (a NaN
 *             wins, as np.argmax). O(bins).
 *   apply     out = in > t in NumPy's promotion: float32 against t as float32,
 *             integers against an integer t exactly, or against a float64
 *             value converted to float64 (what `image > 0.5` does).
 *
 * Cost: three passes over the image for Otsu (scan, histogram, apply), one
 * for a given value; O(threads x bins) memory. No -ffast-math anywhere, and
 * no contraction into fused multiply-adds here: each operation rounds as
 * NumPy's does. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif
#include <math.h>
#include <string.h>

#include "internal.h"
#include "voxa/threshold.h"

#define MAX_INT_BINS ((int64_t)1 << 28)
#define MAX_NBINS ((int64_t)1 << 24)

/* ---- rows of an N-d view ------------------------------------------------ */

typedef struct rows {
    const voxa_array *a;
    int64_t n, len, step; /* rows, voxels per row, bytes between them */
} rows;

static rows rows_of(const voxa_array *a) {
    rows r = {a, 1, 1, 0};
    if (a->ndim > 0) {
        r.len = a->shape[a->ndim - 1];
        r.step = a->strides[a->ndim - 1];
        for (int d = 0; d < a->ndim - 1; d++) r.n *= a->shape[d];
        if (r.len == 0) r.n = 0;
    }
    return r;
}

static char *row_ptr(const voxa_array *a, int64_t r) {
    int64_t off = 0;
    for (int d = a->ndim - 2; d >= 0; d--) {
        off += (r % a->shape[d]) * a->strides[d];
        r /= a->shape[d];
    }
    return (char *)a->data + off;
}

/* ---- scan: min, max, constant, non-finite -------------------------------- */

typedef struct scan {
    int64_t imn, imx;  /* signed integers and bool */
    uint64_t umn, umx; /* unsigned integers */
    double fmn, fmx;   /* floats */
    int nonfinite, varies;
} scan;

typedef struct job {
    const voxa_array *in;
    voxa_array *out;
    rows r;
    scan *scans;              /* per thread */
    int64_t *hist;            /* per thread (nbins each) or shared */
    int shared;               /* hist is one table updated atomically */
    int64_t nbins;
    const void *edges;        /* float or double, nbins + 1 */
    double first, denom;      /* float path: min and max - min */
    double last;              /* float path: the range's end */
    int ranged;               /* a given range: voxels outside it (and NaN) left out */
    int64_t imin;             /* integer path */
    const voxa_threshold_value *t;
} job;

/* Local accumulators and a contiguous loop the compiler can vectorise; the
 * strided loop otherwise. NaN compares false (never a min or max); x - x is
 * non-zero (NaN) exactly for NaN and inf. */
#define SCAN_LOOP(T, BODY)                                                         \
    if (s == (int64_t)sizeof(T)) {                                                 \
        const T *q = (const T *)p;                                                 \
        for (int64_t k = 0; k < n; k++) {                                          \
            T x = q[k];                                                            \
            BODY                                                                   \
        }                                                                          \
    } else {                                                                       \
        for (int64_t k = 0; k < n; k++, p += s) {                                  \
            T x = *(const T *)p;                                                   \
            BODY                                                                   \
        }                                                                          \
    }
#define SCAN_INT(NAME, T, MN, MX)                                                  \
    static void NAME(const char *p, int64_t n, int64_t s, T first, scan *a) {     \
        T mn = (T)a->MN, mx = (T)a->MX;                                            \
        int v = 0;                                                                 \
        if (a->MN > a->MX) mn = x0_max_##NAME, mx = x0_min_##NAME;                 \
        SCAN_LOOP(T, mn = x < mn ? x : mn; mx = x > mx ? x : mx; v |= x != first;) \
        a->MN = mn, a->MX = mx, a->varies |= v;                                    \
    }
#define SCAN_FLT(NAME, T)                                                          \
    static void NAME(const char *p, int64_t n, int64_t s, T first, scan *a) {     \
        T mn = (T)a->fmn, mx = (T)a->fmx;                                          \
        int v = 0, bad = 0;                                                        \
        SCAN_LOOP(T, mn = x < mn ? x : mn; mx = x > mx ? x : mx;                   \
                  v |= !(x == first); bad |= (x - x) != 0;)                        \
        a->fmn = mn, a->fmx = mx, a->varies |= v, a->nonfinite |= bad;            \
    }
enum {
    x0_max_scan_u8 = UINT8_MAX, x0_min_scan_u8 = 0, x0_max_scan_u16 = UINT16_MAX,
    x0_min_scan_u16 = 0, x0_max_scan_i8 = INT8_MAX, x0_min_scan_i8 = INT8_MIN,
    x0_max_scan_i16 = INT16_MAX, x0_min_scan_i16 = INT16_MIN
};
#define x0_max_scan_u32 UINT32_MAX
#define x0_min_scan_u32 0
#define x0_max_scan_u64 UINT64_MAX
#define x0_min_scan_u64 0
#define x0_max_scan_i32 INT32_MAX
#define x0_min_scan_i32 INT32_MIN
#define x0_max_scan_i64 INT64_MAX
#define x0_min_scan_i64 INT64_MIN
SCAN_INT(scan_u8, uint8_t, umn, umx)
SCAN_INT(scan_u16, uint16_t, umn, umx)
SCAN_INT(scan_u32, uint32_t, umn, umx)
SCAN_INT(scan_u64, uint64_t, umn, umx)
SCAN_INT(scan_i8, int8_t, imn, imx)
SCAN_INT(scan_i16, int16_t, imn, imx)
SCAN_INT(scan_i32, int32_t, imn, imx)
SCAN_INT(scan_i64, int64_t, imn, imx)
SCAN_FLT(scan_f32, float)
SCAN_FLT(scan_f64, double)

static voxa_status scan_rows(int64_t b, int64_t e, int tid, void *ctx) {
    job *j = ctx;
    scan *a = &j->scans[tid];
    const voxa_array *in = j->in;
    const char *f = in->data;
    for (int64_t r = b; r < e; r++) {
        const char *p = row_ptr(in, r);
        int64_t n = j->r.len, s = j->r.step;
        switch (in->dtype) {
        case VOXA_BOOL:
        case VOXA_U8: scan_u8(p, n, s, *(const uint8_t *)f, a); break;
        case VOXA_U16: scan_u16(p, n, s, *(const uint16_t *)f, a); break;
        case VOXA_U32: scan_u32(p, n, s, *(const uint32_t *)f, a); break;
        case VOXA_U64: scan_u64(p, n, s, *(const uint64_t *)f, a); break;
        case VOXA_I8: scan_i8(p, n, s, *(const int8_t *)f, a); break;
        case VOXA_I16: scan_i16(p, n, s, *(const int16_t *)f, a); break;
        case VOXA_I32: scan_i32(p, n, s, *(const int32_t *)f, a); break;
        case VOXA_I64: scan_i64(p, n, s, *(const int64_t *)f, a); break;
        case VOXA_F32: scan_f32(p, n, s, *(const float *)f, a); break;
        case VOXA_F64: scan_f64(p, n, s, *(const double *)f, a); break;
        default: break;
        }
    }
    return VOXA_OK;
}

/* ---- histogram ------------------------------------------------------------ */

static inline void bump(const job *j, int tid, int64_t i) {
    if (j->shared) __atomic_fetch_add(&j->hist[i], 1, __ATOMIC_RELAXED);
    else j->hist[(int64_t)tid * j->nbins + i]++;
}

/* NumPy's bin of x (float path), in the edges' type T. */
#define BIN_FLT(NAME, T)                                                           \
    static inline int64_t NAME(T x, const T *edges, T first, T denom, int64_t nb) { \
        T fi = (x - first) / denom * (T)nb;                                        \
        int64_t i = (int64_t)fi;                                                   \
        if (i == nb) i--;                                                          \
        if (x < edges[i]) i--;                                                     \
        if (x >= edges[i + 1] && i != nb - 1) i++;                                 \
        return i;                                                                  \
    }
BIN_FLT(bin_f32, float)
BIN_FLT(bin_f64, double)

/* Values outside imin .. imin + nbins - 1 (only with a given range) are
 * left out. */
#define HIST_INT(NAME, T)                                                          \
    static void NAME(const char *p, int64_t n, int64_t s, const job *j, int tid) { \
        for (int64_t k = 0; k < n; k++, p += s) {                                  \
            uint64_t i = (uint64_t)(int64_t)*(const T *)p - (uint64_t)j->imin;     \
            if (i < (uint64_t)j->nbins) bump(j, tid, (int64_t)i);                  \
        }                                                                          \
    }
HIST_INT(hist_u8, uint8_t)
HIST_INT(hist_u16, uint16_t)
HIST_INT(hist_u32, uint32_t)
HIST_INT(hist_u64, uint64_t)
HIST_INT(hist_i8, int8_t)
HIST_INT(hist_i16, int16_t)
HIST_INT(hist_i32, int32_t)
HIST_INT(hist_i64, int64_t)

static voxa_status hist_rows(int64_t b, int64_t e, int tid, void *ctx) {
    job *j = ctx;
    const voxa_array *in = j->in;
    int64_t n = j->r.len, s = j->r.step, nb = j->nbins;
    for (int64_t r = b; r < e; r++) {
        const char *p = row_ptr(in, r);
        switch (in->dtype) {
        case VOXA_BOOL: /* np.histogram reads bool as uint8, edges float64 */
            for (int64_t k = 0; k < n; k++, p += s) {
                double x = (double)*(const uint8_t *)p;
                if (j->ranged && !(x >= j->first && x <= j->last)) continue;
                bump(j, tid, bin_f64(x, j->edges, j->first, j->denom, nb));
            }
            break;
        case VOXA_F32: {
            float first = (float)j->first, denom = (float)j->denom, last = (float)j->last;
            for (int64_t k = 0; k < n; k++, p += s) {
                float x = *(const float *)p;
                if (j->ranged && !(x >= first && x <= last)) continue; /* np.histogram's keep */
                bump(j, tid, bin_f32(x, j->edges, first, denom, nb));
            }
            break;
        }
        case VOXA_F64:
            for (int64_t k = 0; k < n; k++, p += s) {
                double x = *(const double *)p;
                if (j->ranged && !(x >= j->first && x <= j->last)) continue;
                bump(j, tid, bin_f64(x, j->edges, j->first, j->denom, nb));
            }
            break;
        case VOXA_U8: hist_u8(p, n, s, j, tid); break;
        case VOXA_U16: hist_u16(p, n, s, j, tid); break;
        case VOXA_U32: hist_u32(p, n, s, j, tid); break;
        case VOXA_U64: hist_u64(p, n, s, j, tid); break;
        case VOXA_I8: hist_i8(p, n, s, j, tid); break;
        case VOXA_I16: hist_i16(p, n, s, j, tid); break;
        case VOXA_I32: hist_i32(p, n, s, j, tid); break;
        case VOXA_I64: hist_i64(p, n, s, j, tid); break;
        default: break;
        }
    }
    return VOXA_OK;
}

/* np.linspace(first, last, nb + 1) in T: y = k * step + first (or k / nb *
 * delta when step underflows to 0), y[nb] = last. */
#define LINSPACE(NAME, T)                                                          \
    static void NAME(T first, T last, int64_t nb, T *y) {                          \
        T delta = last - first, step = delta / (T)nb;                              \
        for (int64_t k = 0; k <= nb; k++) {                                        \
            T v = (T)k;                                                            \
            if (step == 0) v = v / (T)nb * delta;                                  \
            else v = v * step;                                                     \
            y[k] = v + first;                                                      \
        }                                                                          \
        y[nb] = last;                                                              \
    }
LINSPACE(linspace_f32, float)
LINSPACE(linspace_f64, double)

/* ---- selection ------------------------------------------------------------- */

/* skimage's selection on counts h and centres c(i), all in T (float for
 * float32 images, double otherwise); w: 2 x nb floats, sm: nb T scratch. */
#define SELECT(NAME, T)                                                            \
    static int64_t NAME(const int64_t *h, const T *c, int64_t nb, float *w2, T *m2) { \
        float w = 0;                                                               \
        T s = 0;                                                                   \
        for (int64_t i = nb - 1; i >= 0; i--) {                                    \
            float ci = (float)h[i];                                                \
            w = i == nb - 1 ? ci : w + ci;                                         \
            T p = (T)ci * c[i];                                                    \
            s = i == nb - 1 ? p : s + p;                                           \
            w2[i] = w;                                                             \
            m2[i] = s / (T)w;                                                      \
        }                                                                          \
        float w1 = 0;                                                              \
        T s1 = 0, best = 0;                                                        \
        int64_t arg = 0;                                                           \
        for (int64_t i = 0; i + 1 < nb; i++) {                                     \
            float ci = (float)h[i];                                                \
            w1 = i == 0 ? ci : w1 + ci;                                            \
            T p = (T)ci * c[i];                                                    \
            s1 = i == 0 ? p : s1 + p;                                              \
            T m1 = s1 / (T)w1, d = m1 - m2[i + 1];                                 \
            float ww = w1 * w2[i + 1];                                             \
            T v = (T)ww * (d * d);                                                 \
            if (isnan(v)) return i; /* np.argmax: the first NaN */                 \
            if (i == 0 || v > best) best = v, arg = i;                             \
        }                                                                          \
        return arg;                                                                \
    }
SELECT(select_f32, float)
SELECT(select_f64, double)

/* ---- Otsu -------------------------------------------------------------------- */

/* np.histogram's edges: linspace(lo, hi, nb + 1) in the image's float type
 * (bool: float64), into *edges (freed by the caller); EINVAL unless they
 * are distinct. */
static voxa_status make_edges(job *j, voxa_dtype dt, double lo, double hi, int64_t nb,
                              void **edges) {
    size_t es = dt == VOXA_F32 ? sizeof(float) : sizeof(double);
    *edges = voxa__malloc((size_t)nb + 1, es);
    VOXA_FAIL_IF(!*edges, VOXA_ENOMEM, "threshold: no memory for %lld bins", (long long)nb);
    int bad = 0;
    if (dt == VOXA_F32) {
        float *e = *edges;
        linspace_f32((float)lo, (float)hi, nb, e);
        for (int64_t k = 0; k < nb; k++) bad |= !(e[k] < e[k + 1]);
        j->denom = (float)hi - (float)lo;
    } else {
        double *e = *edges;
        linspace_f64(lo, hi, nb, e);
        for (int64_t k = 0; k < nb; k++) bad |= !(e[k] < e[k + 1]);
        j->denom = hi - lo;
    }
    VOXA_FAIL_IF(bad, VOXA_EINVAL,
                 "nbins: too many bins (%lld) for the data range [%.17g, %.17g]: the edges are "
                 "not distinct (np.histogram raises ValueError)", (long long)nb, lo, hi);
    j->edges = *edges;
    j->first = lo;
    j->last = hi;
    return VOXA_OK;
}

static voxa_status run_hist(job *j, int nt_want) {
    int nt = nt_want;
    size_t per = (size_t)j->nbins;
    j->shared = (double)per * 8 * voxa__threads_for(j->r.n) > 32.0 * (1 << 20);
    int64_t *tab = j->shared ? voxa__calloc(per, sizeof(int64_t))
                             : voxa__thread_scratch(per, sizeof(int64_t), &nt);
    VOXA_FAIL_IF(!tab, VOXA_ENOMEM, "threshold: no memory for a histogram of %lld bins",
                 (long long)j->nbins);
    j->hist = tab;
    if (!j->shared) memset(tab, 0, per * sizeof(int64_t) * (size_t)nt);
    voxa_status st = j->shared
                         ? voxa__parallel_for(j->r.n, voxa__grain(j->r.len), hist_rows, j)
                         : voxa__parallel_for_nt(j->r.n, voxa__grain(j->r.len), nt, hist_rows, j);
    for (int t = 1; !j->shared && t < nt; t++)
        for (size_t i = 0; i < per; i++) tab[i] += tab[(size_t)t * per + i];
    return st;
}

voxa_status voxa_threshold_otsu(const voxa_array *in, int64_t nbins, voxa_threshold_value *t,
                                const voxa_progress *progress) {
    voxa_status st = VOXA_OK;
    scan *scans = NULL;
    int64_t *hist = NULL;
    void *edges = NULL, *cent = NULL, *m2 = NULL;
    float *w2 = NULL;
    job j = {0};
    VOXA_FAIL_IF(!in || !t, VOXA_EINVAL, "threshold: NULL argument");
    VOXA_CHECK(voxa_array_check(in, "input"));
    memset(t, 0, sizeof *t);
    VOXA_FAIL_IF(voxa_array_size(in) < 1, VOXA_EINVAL,
                 "input: empty array (Otsu's threshold needs at least one voxel)");
    voxa_dtype dt = in->dtype;
    int isflt = dt == VOXA_F32 || dt == VOXA_F64, isint = !isflt && dt != VOXA_BOOL;
    (void)isflt;
    VOXA_FAIL_IF(!isint && (nbins < 2 || nbins > MAX_NBINS), VOXA_EINVAL,
                 "nbins: %lld is out of range 2..%lld", (long long)nbins, (long long)MAX_NBINS);
    VOXA_CHECK(voxa__progress(progress, 0, 3));

    /* scan */
    j.in = in;
    j.r = rows_of(in);
    int nt = 1;
    scans = voxa__thread_scratch(1, sizeof(scan), &nt);
    VOXA_GOTO_IF(!scans, VOXA_ENOMEM, "threshold: no memory");
    for (int k = 0; k < nt; k++)
        scans[k] = (scan){INT64_MAX, INT64_MIN, UINT64_MAX, 0, INFINITY, -INFINITY, 0, 0};
    j.scans = scans;
    st = voxa__parallel_for_nt(j.r.n, voxa__grain(j.r.len), nt, scan_rows, &j);
    if (st) goto done;
    scan a = scans[0];
    for (int k = 1; k < nt; k++) {
        scan *b = &scans[k];
        a.imn = b->imn < a.imn ? b->imn : a.imn, a.imx = b->imx > a.imx ? b->imx : a.imx;
        a.umn = b->umn < a.umn ? b->umn : a.umn, a.umx = b->umx > a.umx ? b->umx : a.umx;
        a.fmn = b->fmn < a.fmn ? b->fmn : a.fmn, a.fmx = b->fmx > a.fmx ? b->fmx : a.fmx;
        a.nonfinite |= b->nonfinite, a.varies |= b->varies;
    }
    if (!a.varies) { /* skimage: `if np.all(image == first_pixel): return first_pixel` */
        int64_t zero[VOXA_MAXDIM] = {0};
        const char *p = (const char *)in->data;
        t->constant = 1;
        t->integer = isint;
        if (dt == VOXA_I64) t->i = *(const int64_t *)p, t->f = (double)t->i;
        else if (dt == VOXA_U64) {
            uint64_t u = *(const uint64_t *)p;
            t->f = (double)u, t->i = (int64_t)u;
            t->integer = u <= (uint64_t)INT64_MAX; /* else compare as float64 */
        }
        else t->f = voxa_array_get(in, zero), t->i = isint ? (int64_t)t->f : 0;
        st = voxa__progress(progress, 2, 3);
        goto done;
    }
    VOXA_GOTO_IF(a.nonfinite, VOXA_EINVAL,
                 "input: holds NaN or infinite values (Otsu's histogram needs a finite "
                 "range; skimage raises ValueError too)");
    st = voxa__progress(progress, 1, 3);
    if (st) goto done;

    /* histogram */
    int64_t nb;
    if (isint) {
        int uns = dt == VOXA_U8 || dt == VOXA_U16 || dt == VOXA_U32 || dt == VOXA_U64;
        if (uns) {
            VOXA_GOTO_IF(a.umx > (uint64_t)INT64_MAX, VOXA_EINVAL,
                         "input: uint64 value %llu above 2^63 - 1 (skimage's integer "
                         "histogram works in int64)", (unsigned long long)a.umx);
            a.imn = (int64_t)a.umn, a.imx = (int64_t)a.umx;
        }
        uint64_t span = (uint64_t)a.imx - (uint64_t)a.imn;
        VOXA_GOTO_IF(span >= (uint64_t)MAX_INT_BINS, VOXA_EINVAL,
                     "input: integer range %lld..%lld needs more than 2^28 bins (Otsu on "
                     "integers uses one bin per value, as skimage)", (long long)a.imn,
                     (long long)a.imx);
        nb = (int64_t)span + 1;
        j.imin = a.imn;
    } else {
        nb = nbins;
        double lo = dt == VOXA_BOOL ? 0 : a.fmn, hi = dt == VOXA_BOOL ? 1 : a.fmx;
        if (dt == VOXA_BOOL) a.fmn = 0, a.fmx = 1;
        st = make_edges(&j, dt, lo, hi, nb, &edges);
        if (st) goto done;
    }
    j.nbins = nb;
    st = run_hist(&j, nt);
    hist = j.hist;
    if (st) goto done;
    st = voxa__progress(progress, 2, 3);
    if (st) goto done;

    /* select */
    size_t ces = dt == VOXA_F32 ? sizeof(float) : sizeof(double);
    cent = voxa__malloc((size_t)nb, ces);
    m2 = voxa__malloc((size_t)nb, ces);
    w2 = voxa__malloc((size_t)nb, sizeof(float));
    VOXA_GOTO_IF(!cent || !m2 || !w2, VOXA_ENOMEM, "threshold: no memory for %lld bins",
                 (long long)nb);
    int64_t idx;
    if (dt == VOXA_F32) {
        const float *e = edges;
        float *c = cent;
        for (int64_t k = 0; k < nb; k++) c[k] = (e[k] + e[k + 1]) / 2.0f;
        idx = select_f32(hist, c, nb, w2, m2);
        t->f = c[idx];
    } else {
        double *c = cent;
        if (isint)
            for (int64_t k = 0; k < nb; k++) c[k] = (double)(j.imin + k);
        else {
            const double *e = edges;
            for (int64_t k = 0; k < nb; k++) c[k] = (e[k] + e[k + 1]) / 2.0;
        }
        idx = select_f64(hist, c, nb, w2, m2);
        t->f = c[idx];
    }
    if (isint) t->integer = 1, t->i = j.imin + idx;

done:
    voxa__free(scans);
    voxa__free(hist);
    voxa__free(edges);
    voxa__free(cent);
    voxa__free(m2);
    voxa__free(w2);
    return st;
}

voxa_status voxa_threshold_histogram(const voxa_array *in, double lo, double hi, int64_t nbins,
                                     int64_t *hist) {
    VOXA_FAIL_IF(!in || !hist, VOXA_EINVAL, "threshold histogram: NULL argument");
    VOXA_CHECK(voxa_array_check(in, "input"));
    voxa_dtype dt = in->dtype;
    int isint = dt != VOXA_F32 && dt != VOXA_F64 && dt != VOXA_BOOL;
    VOXA_FAIL_IF(!(lo < hi) || !isfinite(lo) || !isfinite(hi), VOXA_EINVAL,
                 "range: [%g, %g] (need finite lo < hi)", lo, hi);
    VOXA_FAIL_IF(nbins < 2 || nbins > (isint ? MAX_INT_BINS : MAX_NBINS), VOXA_EINVAL,
                 "nbins: %lld is out of range", (long long)nbins);
    VOXA_FAIL_IF(isint && (lo != floor(lo) || fabs(lo) > 9007199254740992.0 ||
                           hi - lo + 1 != (double)nbins),
                 VOXA_EINVAL, "integer range [%g, %g]: one bin per value needs integer ends "
                 "(below 2^53) and nbins = hi - lo + 1 (%lld given)", lo, hi, (long long)nbins);
    job j = {0};
    void *edges = NULL;
    j.in = in;
    j.r = rows_of(in);
    j.nbins = nbins;
    j.ranged = 1;
    voxa_status st = VOXA_OK;
    if (isint) j.imin = (int64_t)lo;
    else st = make_edges(&j, dt, lo, hi, nbins, &edges);
    if (st == VOXA_OK) st = run_hist(&j, voxa_get_threads());
    if (st == VOXA_OK) memcpy(hist, j.hist, (size_t)nbins * sizeof *hist);
    voxa__free(j.hist);
    voxa__free(edges);
    return st;
}

/* ---- apply --------------------------------------------------------------------- */

#define APPLY(NAME, T, CT, TV)                                                     \
    static void NAME(const char *p, int64_t n, int64_t s, uint8_t *o, int64_t os,  \
                     CT tv) {                                                      \
        for (int64_t k = 0; k < n; k++, p += s, o += os)                           \
            *o = (CT)(*(const T *)p) > tv;                                         \
    }
APPLY(gt_u8, uint8_t, double, double)
APPLY(gt_u16, uint16_t, double, double)
APPLY(gt_u32, uint32_t, double, double)
APPLY(gt_u64, uint64_t, double, double)
APPLY(gt_i8, int8_t, double, double)
APPLY(gt_i16, int16_t, double, double)
APPLY(gt_i32, int32_t, double, double)
APPLY(gt_i64, int64_t, double, double)
APPLY(gt_f32, float, float, float)
APPLY(gt_f64, double, double, double)
APPLY(gti_i64, int64_t, int64_t, int64_t)

static void gti_u64(const char *p, int64_t n, int64_t s, uint8_t *o, int64_t os, int64_t tv) {
    for (int64_t k = 0; k < n; k++, p += s, o += os)
        *o = tv < 0 || *(const uint64_t *)p > (uint64_t)tv;
}

static voxa_status apply_rows(int64_t b, int64_t e, int tid, void *ctx) {
    (void)tid;
    job *j = ctx;
    const voxa_array *in = j->in;
    const voxa_threshold_value *t = j->t;
    int64_t n = j->r.len, s = j->r.step;
    int64_t os = j->out->ndim ? j->out->strides[j->out->ndim - 1] : 0;
    double f = t->f;
    for (int64_t r = b; r < e; r++) {
        const char *p = row_ptr(in, r);
        uint8_t *o = (uint8_t *)row_ptr(j->out, r);
        if (t->integer && in->dtype != VOXA_F32 && in->dtype != VOXA_F64) {
            if (in->dtype == VOXA_U64) gti_u64(p, n, s, o, os, t->i);
            else if (in->dtype == VOXA_I64) gti_i64(p, n, s, o, os, t->i);
            else f = (double)t->i; /* exact: narrower types */
            if (in->dtype == VOXA_U64 || in->dtype == VOXA_I64) continue;
        }
        switch (in->dtype) {
        case VOXA_BOOL:
        case VOXA_U8: gt_u8(p, n, s, o, os, f); break;
        case VOXA_U16: gt_u16(p, n, s, o, os, f); break;
        case VOXA_U32: gt_u32(p, n, s, o, os, f); break;
        case VOXA_U64: gt_u64(p, n, s, o, os, f); break;
        case VOXA_I8: gt_i8(p, n, s, o, os, f); break;
        case VOXA_I16: gt_i16(p, n, s, o, os, f); break;
        case VOXA_I32: gt_i32(p, n, s, o, os, f); break;
        case VOXA_I64: gt_i64(p, n, s, o, os, f); break;
        case VOXA_F32: gt_f32(p, n, s, o, os, (float)f); break;
        case VOXA_F64: gt_f64(p, n, s, o, os, f); break;
        default: break;
        }
    }
    return VOXA_OK;
}

voxa_status voxa_threshold_apply(const voxa_array *in, const voxa_threshold_value *t,
                                 voxa_array *out) {
    VOXA_FAIL_IF(!in || !t || !out, VOXA_EINVAL, "threshold: NULL argument");
    VOXA_CHECK(voxa_array_check(in, "input"));
    VOXA_CHECK(voxa_array_check(out, "output"));
    VOXA_FAIL_IF(out->dtype != VOXA_BOOL && out->dtype != VOXA_U8, VOXA_EINVAL,
                 "output: dtype %s (threshold writes bool or uint8)",
                 voxa_dtype_name(out->dtype));
    VOXA_FAIL_IF(!voxa__same_shape(in, out), VOXA_EINVAL,
                 "output: shape differs from the input's");
    VOXA_FAIL_IF(!t->integer && isnan(t->f), VOXA_EINVAL, "value: NaN");
    job j = {.in = in, .out = out, .r = rows_of(in), .t = t};
    return voxa__parallel_for(j.r.n, voxa__grain(j.r.len), apply_rows, &j);
}
