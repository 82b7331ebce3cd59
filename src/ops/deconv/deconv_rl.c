/* Richardson–Lucy iterations on a plan (see deconv_plan.c for the geometry).
 *
 * One iteration, with H the PSF transform (pre-scaled) and w the data window:
 *   1. r2c(f)                       buf <- F
 *   2. buf *= Hf                    (complex pass)
 *   3. c2r                          buf <- blurred estimate b
 *   4. buf <- w * g / b             ratio pass (mode rule below)
 *   5. r2c, buf *= conj(Hb), c2r    buf <- c = H^T ratio
 *   6. f <- f * c / a; buf <- f     update pass, which also loads the next
 *                                   iteration's r2c input
 * Four FFTs and four streaming passes; nothing else touches memory.
 *
 * Ratio rules: periodic / free: g / b where b > 0, else 0 (the published
 * formula divides blindly; it is equal wherever it is finite). zero
 * (scikit-image): b' = b + 1e-12, 0 where filter_epsilon and b' < it, else
 * g / b'. Update: periodic f * c; free f * c / a (a = H^T w, 0 where a is
 * negligible); both clamped at 0 so FFT round-off cannot make a negative
 * estimate. zero: f * c unclamped on the window, as scikit-image.
 *
 * Starting estimates: periodic f = g (W2); zero 0.5 on the window
 * (scikit-image); free the mean of g on every voxel the data see.
 *
 * Acceleration (Biggs & Andrews 1997, "Acceleration of iterative image
 * restoration algorithms", Appl. Opt. 36:1766, with a geometric step):
 * before each RL step the estimate is extrapolated voxel by voxel,
 * y = x (x / x_prev)^alpha where x, x_prev > 0 (else y = x), with Biggs and
 * Andrews' alpha = <d_k, d_k-1> / <d_k-1, d_k-1> clamped to [0, 1], d_k the
 * change made by RL step k. The update pass that makes x extrapolates it at
 * once, so alpha is one step behind the paper's (the dots of the step being
 * made are not summed yet): no pass of its own, and as many iterations to a
 * given error (docs/deconv.md). The paper's additive step
 * y = max(x + alpha (x - x_prev), 0) fits the noise faster than RL itself
 * (worse error at the same data fit, voxels stuck at 0, which a
 * multiplicative update never leaves); the geometric step is the same
 * extrapolation in log x, the variable in which RL's update is additive, and
 * keeps y > 0 without clamping (docs/deconv.md, bench/bench_rl_quality.py).
 * The exponent alpha (log2 x - log2 x_prev) is clamped to [-16, 16]: it
 * keeps y finite; it binds where zero counts in the data empty a voxel
 * (exponents of -50 seen there), not on the bench's sample. The kernels are
 * in deconv_accel.c. Costs two extra box-sized arrays (log2 of the last
 * estimate, kept from the last extrapolation, and the last step, which the update
 * pass reads for the dot products and overwrites with the new step in the
 * same loop). The dot products are summed per box row in double,
 * in fixed lanes (deconv_accel.c), then in row order, so they depend on
 * neither the thread count nor the SIMD width.
 *
 * Storage of the estimate: its window in the caller's output when that is
 * float32, C-contiguous and not clipped (else one window-sized buffer), the
 * rest of the box in a "shell" array, row by row (row_spans). So beyond the
 * caller's two arrays: the plan's buffer and H (~2 box sizes; H is m0/L0 of
 * a box on the staged path) plus the shell (box - image; none in periodic
 * mode, where that is 4x the image in all). Free mode on a box of several
 * planes, and periodic mode from 8 planes and 2^19 voxels, run staged
 * (staged_iteration, deconv_staged.c): the passes above run per z-plane, a
 * block of rows at a time in a per-thread ring, between the rows' c2r and
 * r2c. */
#include "deconv_internal.h"

#include <math.h>
#include <string.h>

typedef struct run {
    const voxa_rl_plan *p;
    const float *g;     /* window-shaped data, C-contiguous */
    float *fwin;        /* the estimate on the window (window-shaped) */
    float *fshell;      /* the estimate on the rest of the box, row by row */
    float *lprev, *step; /* acceleration (else NULL), box-shaped: log2 of the
                          * last estimate (-inf where it is not > 0), and the
                          * last RL step d (replaced in place by the new one
                          * as the dot products read it) */
    voxa__rl_accel_kernels accel;
    double *dots;       /* 2 per box row */
    const fftwf_complex *h;
    float alpha;        /* acceleration: the alpha of the update pass's
                         * extrapolation (from the last pass's dots) */
    float tmax;         /* acceleration: |exponent| bound, 16 */
    int last;           /* the last iteration: the update pass extrapolates
                         * nothing */
    float mean;         /* free mode's starting value */
    float fe;           /* filter_epsilon (zero mode); -inf when off */
    /* staged path: the plane pass's steps (pass_planes) */
    int64_t z0;         /* first plane of the pass */
    int c2r, r2c;       /* transform the plane before / after its rows */
    int rows;           /* which rows the transforms keep (voxa__rl_plane_split) */
    voxa__range_fn rows_fn; /* the element-wise pass on the plane's rows */
    float *scr;         /* the threads' scratch (voxa__rl_staged_scratch) */
    int in_scratch;     /* the pass's rows are in the thread's row ring
                         * (a plane pass of the staged path), not in buf */
} run;

/* Where the element-wise passes read and write rows [lo, hi): the first
 * one's floats (buf, or during a plane pass of the staged path the thread's
 * row ring); the others follow px floats apart in both, as one call never
 * spans two of the ring's blocks (voxa__rl_plane_split). */
static inline float *rows_at(const run *R, int64_t lo, int tid) {
    const voxa_rl_plan *p = R->p;
    if (R->in_scratch)
        return voxa__rl_row_scratch(p, R->scr, tid) +
               voxa__rl_ring_slot(p, R->rows, lo % p->L[1]) * p->px;
    return p->buf + lo * p->px;
}

/* The estimate's storage for box row r as up to three spans covering
 * [0, L2) in order: a row outside the window is one span of the shell; a
 * window row is shell [0, off2), window row [off2, off2 + n2), shell rest.
 * The shell holds the box minus the window, row by row: row r starts at
 * r * L2 minus n2 for every window row before it. Returns the span count;
 * `mid` is the index of the window span (-1 if none). */
typedef struct span {
    float *f;
    int64_t x, len;
} span;

static inline int row_spans(const run *R, int64_t r, span *s, int *mid) {
    const voxa_rl_plan *p = R->p;
    int64_t z = r / p->L[1] - p->off[0], y = r % p->L[1] - p->off[1];
    int64_t wz = z < 0 ? 0 : z > p->n[0] ? p->n[0] : z;
    int64_t wy = (z < 0 || z >= p->n[0]) ? 0 : y < 0 ? 0 : y > p->n[1] ? p->n[1] : y;
    float *sh = R->fshell + r * p->L[2] - (wz * p->n[1] + wy) * p->n[2];
    int64_t wr = voxa__rl_window_row(p, r), o2 = p->off[2], n2 = p->n[2], L2 = p->L[2];
    int k = 0;
    *mid = -1;
    if (wr < 0) {
        s[k++] = (span){sh, 0, L2};
        return k;
    }
    if (o2 > 0) s[k++] = (span){sh, 0, o2};
    *mid = k;
    s[k++] = (span){R->fwin + wr * n2, o2, n2};
    if (L2 > o2 + n2) s[k++] = (span){sh + o2, o2 + n2, L2 - o2 - n2};
    return k;
}

static voxa_status pass_mul(int64_t lo, int64_t hi, int tid, void *ctx) {
    run *R = ctx;
    fftwf_complex *b = (fftwf_complex *)R->p->buf;
    const fftwf_complex *h = R->h;
    for (int64_t i = lo; i < hi; i++) {
        float re = b[i][0] * h[i][0] - b[i][1] * h[i][1];
        float im = b[i][0] * h[i][1] + b[i][1] * h[i][0];
        b[i][0] = re;
        b[i][1] = im;
    }
    return VOXA_OK;
}

static voxa_status pass_mul_conj(int64_t lo, int64_t hi, int tid, void *ctx) {
    run *R = ctx;
    fftwf_complex *b = (fftwf_complex *)R->p->buf;
    const fftwf_complex *h = R->h;
    for (int64_t i = lo; i < hi; i++) {
        float re = b[i][0] * h[i][0] + b[i][1] * h[i][1];
        float im = b[i][1] * h[i][0] - b[i][0] * h[i][1];
        b[i][0] = re;
        b[i][1] = im;
    }
    return VOXA_OK;
}

static voxa_status pass_ratio(int64_t lo, int64_t hi, int tid, void *ctx) {
    run *R = ctx;
    const voxa_rl_plan *p = R->p;
    float *b0 = rows_at(R, lo, tid);
    int64_t n2 = p->n[2], o2 = p->off[2];
    for (int64_t r = lo; r < hi; r++) {
        float *b = b0 + (r - lo) * p->px;
        int64_t wr = voxa__rl_window_row(p, r);
        if (wr < 0) {
            memset(b, 0, (size_t)p->L[2] * sizeof(float));
            continue;
        }
        const float *g = R->g + wr * n2;
        for (int64_t x = 0; x < o2; x++) b[x] = 0;
        for (int64_t x = o2 + n2; x < p->L[2]; x++) b[x] = 0;
        float *bw = b + o2;
        if (p->boundary == VOXA_RL_ZERO) {
            float fe = R->fe;
            /* divide unconditionally, then select: keeps the loop
             * branch-free (vectorised) */
            for (int64_t x = 0; x < n2; x++) {
                float c = bw[x] + 1e-12f;
                float q = g[x] / c;
                bw[x] = c < fe ? 0.0f : q; /* fe is -inf when the filter is off */
            }
        } else {
            for (int64_t x = 0; x < n2; x++) {
                float c = bw[x];
                float q = g[x] / (c > 0 ? c : 1.0f);
                bw[x] = c > 0 ? q : 0.0f;
            }
        }
    }
    return VOXA_OK;
}

/* One span of the update: v = update(f, c) (c in bx) into bx, and into f
 * too unless `keep_f` (acceleration: the step still needs the old f). wx:
 * free mode's weights, else NULL; in_window: zero mode's middle span. */
static inline __attribute__((always_inline)) void update_span(float *f, float *bx,
                                                              const float *wx, int periodic,
                                                              int in_window, int64_t len,
                                                              int keep_f) {
    if (wx) {
        for (int64_t x = 0; x < len; x++) {
            float v = f[x] * bx[x] * wx[x];
            v = v > 0 ? v : 0.0f; /* also maps NaN (0 * inf) to 0 */
            bx[x] = v;
            if (!keep_f) f[x] = v;
        }
    } else if (periodic) {
        for (int64_t x = 0; x < len; x++) {
            float v = f[x] * bx[x];
            v = v > 0 ? v : 0.0f;
            bx[x] = v;
            if (!keep_f) f[x] = v;
        }
    } else if (in_window) { /* zero: unclamped on the window */
        for (int64_t x = 0; x < len; x++) {
            float v = f[x] * bx[x];
            bx[x] = v;
            if (!keep_f) f[x] = v;
        }
    } else {
        memset(bx, 0, (size_t)len * sizeof(float));
        if (!keep_f) memset(f, 0, (size_t)len * sizeof(float));
    }
}

/* f <- update(f, c) and buf <- f (the next iteration's r2c input). With
 * acceleration: the new estimate x, the step d = x - f and the row's dot
 * products; then, unless this is the last iteration, the extrapolation of
 * the next iteration's start y from x and log2 x_prev with the alpha known
 * now (the last pass's dots): f, buf <- y, log2 x_prev <- log2 x. */
static voxa_status pass_update(int64_t lo, int64_t hi, int tid, void *ctx) {
    run *R = ctx;
    const voxa_rl_plan *p = R->p;
    float *b0 = rows_at(R, lo, tid);
    int64_t L2 = p->L[2];
    int periodic = p->boundary == VOXA_RL_PERIODIC;
    span s[3];
    int mid;
    for (int64_t r = lo; r < hi; r++) {
        float *b = b0 + (r - lo) * p->px;
        int ns = row_spans(R, r, s, &mid);
        const float *w = p->boundary == VOXA_RL_FREE ? voxa__rl_wrow(p, r) : NULL;
        float *gs = R->step ? R->step + r * L2 : NULL;
        double num[VOXA__RL_LANES] = {0}, den[VOXA__RL_LANES] = {0};
        int lane = 0;
        for (int k = 0; k < ns; k++) {
            float *f = s[k].f, *bx = b + s[k].x;
            const float *wx = w ? w + s[k].x : NULL;
            if (gs) { /* the new estimate into bx while f still holds the old
                       * one; then the step, its dot products with the old
                       * step (which it replaces) and f; then y */
                update_span(f, bx, wx, periodic, k == mid, s[k].len, 1);
                lane = R->accel.step(f, bx, gs + s[k].x, s[k].len, lane, num, den);
                if (!R->last)
                    R->accel.extrapolate(f, R->lprev + r * L2 + s[k].x, bx, s[k].len, R->alpha,
                                         -R->tmax, R->tmax);
            } else {
                update_span(f, bx, wx, periodic, k == mid, s[k].len, 0);
            }
        }
        if (gs) { /* the lanes in order: the same sums for every kernel */
            double n = 0, d = 0;
            for (int l = 0; l < VOXA__RL_LANES; l++) {
                n += num[l];
                d += den[l];
            }
            R->dots[2 * r] = n;
            R->dots[2 * r + 1] = d;
        }
    }
    return VOXA_OK;
}

/* buf <- f; with acceleration also log2 x_prev <- log2 f. */
static voxa_status pass_load(int64_t lo, int64_t hi, int tid, void *ctx) {
    run *R = ctx;
    const voxa_rl_plan *p = R->p;
    float *b0 = rows_at(R, lo, tid);
    span s[3];
    int mid;
    for (int64_t r = lo; r < hi; r++) {
        int ns = row_spans(R, r, s, &mid);
        for (int k = 0; k < ns; k++) {
            size_t bytes = (size_t)s[k].len * sizeof(float);
            memcpy(b0 + (r - lo) * p->px + s[k].x, s[k].f, bytes);
            if (R->lprev) R->accel.log(s[k].f, R->lprev + r * p->L[2] + s[k].x, s[k].len);
        }
    }
    return VOXA_OK;
}

/* Staged path: planes z0 + [lo, hi) of the box, each while it is in cache:
 * 2-D c2r (if c2r), the element-wise pass on its rows (if any), 2-D r2c
 * (if r2c). */
static voxa_status pass_planes(int64_t lo, int64_t hi, int tid, void *ctx) {
    run *R = ctx;
    const voxa_rl_plan *p = R->p;
    int64_t L1 = p->L[1];
    for (int64_t z = R->z0 + lo; z < R->z0 + hi; z++) {
        float *pl = p->buf + z * L1 * p->px;
        voxa_status st =
            voxa__rl_plane_split(p, pl, R->rows, voxa__rl_row_scratch(p, R->scr, tid), R->c2r,
                                 R->r2c, R->rows_fn, z * L1, tid, R);
        if (st != VOXA_OK) return st;
    }
    return VOXA_OK;
}

static voxa_status planes(run *R, int64_t zlo, int64_t zhi, int c2r, voxa__range_fn fn,
                          int r2c, int rows) {
    R->rows = rows;
    R->z0 = zlo;
    R->c2r = c2r;
    R->r2c = r2c;
    R->rows_fn = fn;
    R->in_scratch = 1;
    voxa_status st = voxa__parallel_for(zhi - zlo, 1, pass_planes, R);
    R->in_scratch = 0;
    return st;
}

/* One RL iteration on the staged path (deconv_staged.c); on entry buf holds
 * the estimate's plane transforms unless `load` (first iteration). The last
 * plane pass transforms the next iteration's start (the new estimate, or its
 * extrapolation) unless `last`. Only the
 * live planes [zl, zh) are loaded, gathered, scattered and updated: the
 * estimate is 0 on the others (their transforms too), and buf there is
 * never read. */
static voxa_status staged_iteration(run *R, float *scr, int load, int last) {
    const voxa_rl_plan *p = R->p;
    int64_t zl = p->zlive[0], zh = p->zlive[1], w0 = p->off[0], w1 = p->off[0] + p->n[0];
    voxa_status st = VOXA_OK;
    /* the ratio pass reads only the window's rows and zeroes the others;
     * the others read and write the live rows (the estimate is 0 elsewhere) */
    const int live = VOXA_RL_ROWS_LIVE;
    if (load) st = planes(R, zl, zh, 0, pass_load, 1, live);
    /* H f: only the window's planes are needed (the ratio is 0 elsewhere) */
    if (st == VOXA_OK) st = voxa__rl_staged_cols(p, scr, 0, zl, zh, w0, w1);
    if (st == VOXA_OK) st = planes(R, w0, w1, 1, pass_ratio, 1, VOXA_RL_ROWS_WINDOW);
    /* H^T ratio: only the window's planes are non-zero */
    if (st == VOXA_OK) st = voxa__rl_staged_cols(p, scr, 1, w0, w1, zl, zh);
    if (st == VOXA_OK) st = planes(R, zl, zh, 1, pass_update, !last, live);
    return st;
}

/* The starting estimate: periodic f = g (W2); zero 0.5 on the window, 0
 * elsewhere (scikit-image); free the mean of g wherever the weight is > 0. */
static voxa_status pass_start(int64_t lo, int64_t hi, int tid, void *ctx) {
    run *R = ctx;
    const voxa_rl_plan *p = R->p;
    span s[3];
    int mid;
    for (int64_t r = lo; r < hi; r++) {
        int ns = row_spans(R, r, s, &mid);
        const float *w = p->boundary == VOXA_RL_FREE ? voxa__rl_wrow(p, r) : NULL;
        for (int k = 0; k < ns; k++) {
            float *f = s[k].f;
            if (p->boundary == VOXA_RL_PERIODIC) {
                /* every row is a window row: f = g's row */
                memcpy(f, R->g + (f - R->fwin), (size_t)s[k].len * sizeof(float));
            } else if (w) {
                const float *wx = w + s[k].x;
                for (int64_t x = 0; x < s[k].len; x++) f[x] = wx[x] > 0 ? R->mean : 0.0f;
            } else {
                float v = k == mid ? 0.5f : 0.0f;
                for (int64_t x = 0; x < s[k].len; x++) f[x] = v;
            }
        }
    }
    return VOXA_OK;
}

/* Copy the window estimate (window-shaped) to `out` (f32/f64, any strides),
 * clipping if asked. */
#define DEF_STORE(T, NAME)                                                     \
    static void store_##NAME(const voxa_rl_plan *p, const float *f, voxa_array *out, \
                             int clip) {                                       \
        int nd = out->ndim;                                                    \
        int64_t s0 = nd == 3 ? out->strides[0] : 0;                            \
        int64_t s1 = nd >= 2 ? out->strides[nd - 2] : 0;                       \
        int64_t s2 = out->strides[nd - 1];                                     \
        for (int64_t z = 0; z < p->n[0]; z++)                                  \
            for (int64_t y = 0; y < p->n[1]; y++) {                            \
                const float *src = f + (z * p->n[1] + y) * p->n[2];            \
                char *dst = (char *)out->data + z * s0 + y * s1;               \
                for (int64_t x = 0; x < p->n[2]; x++) {                        \
                    float v = src[x];                                          \
                    if (clip) v = v > 1 ? 1.0f : v < -1 ? -1.0f : v;           \
                    *(T *)(dst + x * s2) = (T)v;                               \
                }                                                              \
            }                                                                  \
    }
DEF_STORE(float, f32)
DEF_STORE(double, f64)

/* voxa__rl_image_sum: a block's sum is finite exactly when its values are
 * (a float32's magnitude times any block length stays far below double's
 * range; NaN and infinities propagate), so one pass both sums and checks,
 * and only a block with a bad value is scanned again, for its first index. */
#define SUM_BLOCK 65536

typedef struct image_sum {
    const float *g;
    int64_t n;
    double *part; /* one sum per block */
} image_sum;

static voxa_status sum_blocks(int64_t lo, int64_t hi, int tid, void *ctx) {
    image_sum *S = ctx;
    (void)tid;
    for (int64_t b = lo; b < hi; b++) {
        int64_t i = b * SUM_BLOCK, end = i + SUM_BLOCK < S->n ? i + SUM_BLOCK : S->n;
        double a[4] = {0, 0, 0, 0}; /* four fixed lanes: no chain of dependent adds */
        for (; i + 4 <= end; i += 4)
            for (int k = 0; k < 4; k++) a[k] += S->g[i + k];
        for (; i < end; i++) a[0] += S->g[i];
        S->part[b] = (a[0] + a[1]) + (a[2] + a[3]);
    }
    return VOXA_OK;
}

voxa_status voxa__rl_image_sum(const float *g, int64_t n, int check, double *sum) {
    int64_t nb = (n + SUM_BLOCK - 1) / SUM_BLOCK;
    image_sum S = {g, n, voxa__malloc((size_t)(nb > 0 ? nb : 1), sizeof(double))};
    VOXA_FAIL_IF(!S.part, VOXA_ENOMEM, "deconvolution: cannot allocate the image's block sums");
    voxa_status st = voxa__parallel_for(nb, 16, sum_blocks, &S);
    double s = 0;
    for (int64_t b = 0; st == VOXA_OK && b < nb; b++) {
        if (check && !isfinite(S.part[b]))
            for (int64_t i = b * SUM_BLOCK;; i++)
                if (!isfinite(g[i])) {
                    st = voxa__error(VOXA_EINVAL, "image: value at flat index %lld is NaN or "
                                     "infinite", (long long)i);
                    break;
                }
        s += S.part[b];
    }
    voxa__free(S.part);
    *sum = s;
    return st;
}

/* The argument checks of an RL run on plan p (shared by the GPU path, so
 * both give the same messages in the same order). */
voxa_status voxa__rl_check_args(const voxa_rl_plan *p, const voxa_array *in,
                                const voxa_array *out, const voxa_rl_options *opt) {
    VOXA_FAIL_IF(!p, VOXA_EINVAL, "deconvolution: NULL plan");
    VOXA_CHECK(voxa_array_check(in, "image"));
    VOXA_CHECK(voxa_array_check(out, "out"));
    VOXA_FAIL_IF(opt->iterations < 1, VOXA_EINVAL, "iterations: %d (must be >= 1)",
                 opt->iterations);
    VOXA_FAIL_IF(!(opt->filter_epsilon >= 0) || !isfinite(opt->filter_epsilon), VOXA_EINVAL,
                 "filter_epsilon: %g (must be finite and >= 0)", opt->filter_epsilon);
    VOXA_FAIL_IF(in->ndim != p->ndim, VOXA_EINVAL,
                 "image: ndim %d does not match the plan's (and PSF's) ndim %d", in->ndim,
                 p->ndim);
    for (int d = 0; d < p->ndim; d++)
        VOXA_FAIL_IF(in->shape[d] != p->n[3 - p->ndim + d], VOXA_EINVAL,
                     "image: shape[%d] = %lld differs from the plan's %lld", d,
                     (long long)in->shape[d], (long long)p->n[3 - p->ndim + d]);
    VOXA_FAIL_IF(!voxa__same_shape(in, out), VOXA_EINVAL,
                 "out: shape differs from the image's");
    VOXA_FAIL_IF(out->data == in->data && voxa_array_size(in) > 0, VOXA_EINVAL,
                 "out: must not share memory with the image");
    VOXA_FAIL_IF(out->dtype != VOXA_F32 && out->dtype != VOXA_F64, VOXA_EINVAL,
                 "out: dtype %s (must be float32 or float64)", voxa_dtype_name(out->dtype));
    return VOXA_OK;
}

voxa_status voxa_rl_plan_execute(voxa_rl_plan *p, const voxa_array *in, voxa_array *out,
                                 const voxa_rl_options *opt) {
    voxa_status st = VOXA_OK;
    voxa_rl_options defaults;
    float *gbuf = NULL, *fbuf = NULL, *shell = NULL, *acc = NULL;
    float *scr = NULL;
    double *dots = NULL;
    VOXA_FAIL_IF(!p, VOXA_EINVAL, "deconvolution: NULL plan");
    if (!opt) {
        voxa_rl_options_init(&defaults);
        opt = &defaults;
    }
    VOXA_CHECK(voxa__rl_check_args(p, in, out, opt));
    if (p->f64) return voxa__rl_execute_f64(p, in, out, opt);

    int64_t nwin = p->n[0] * p->n[1] * p->n[2];
    int contig_f32_in = in->dtype == VOXA_F32 && voxa_array_is_c_contiguous(in);
    int out_is_f = out->dtype == VOXA_F32 && voxa_array_is_c_contiguous(out) && !opt->clip;
    const float *g;
    double gsum = 0;
    if (contig_f32_in) {
        VOXA_CHECK(voxa__rl_image_sum(in->data, nwin, 1, &gsum));
        g = in->data;
    } else {
        gbuf = voxa__malloc((size_t)nwin, sizeof(float));
        VOXA_GOTO_IF(!gbuf, VOXA_ENOMEM, "deconvolution: cannot allocate the image copy");
        voxa__advise_huge_pages(gbuf, (size_t)nwin * sizeof(float));
        st = voxa__deconv_load_f32(in, gbuf, "image");
        if (st == VOXA_OK) st = voxa__rl_image_sum(gbuf, nwin, 0, &gsum);
        if (st != VOXA_OK) goto done;
        g = gbuf;
    }
    run R = {.p = p, .g = g, .tmax = 16.0f,
             .fe = opt->filter_epsilon > 0 ? (float)opt->filter_epsilon : -INFINITY};
    if (out_is_f) {
        R.fwin = out->data;
    } else {
        fbuf = voxa__malloc((size_t)nwin, sizeof(float));
        VOXA_GOTO_IF(!fbuf, VOXA_ENOMEM, "deconvolution: cannot allocate the estimate");
        voxa__advise_huge_pages(fbuf, (size_t)nwin * sizeof(float));
        R.fwin = fbuf;
    }
    if (p->nbox > nwin) {
        shell = voxa__malloc((size_t)(p->nbox - nwin), sizeof(float));
        VOXA_GOTO_IF(!shell, VOXA_ENOMEM,
                     "deconvolution: cannot allocate the estimate outside the image");
        voxa__advise_huge_pages(shell, (size_t)(p->nbox - nwin) * sizeof(float));
    }
    R.fshell = shell;
    if (opt->accelerate) {
        acc = voxa__calloc((size_t)p->nbox * 2, sizeof(float));
        dots = voxa__calloc((size_t)p->rows * 2, sizeof(double));
        VOXA_GOTO_IF(!acc || !dots, VOXA_ENOMEM,
                     "deconvolution: cannot allocate acceleration buffers");
        voxa__advise_huge_pages(acc, (size_t)p->nbox * 2 * sizeof(float));
        R.lprev = acc;
        R.accel = voxa__rl_accel_kernels_pick();
        R.step = acc + p->nbox;
        R.dots = dots;
    }

    if (p->boundary == VOXA_RL_FREE) R.mean = (float)(gsum / (double)nwin);
    int64_t rgrain = 16384 / p->L[2] + 1, cgrain = 16384;
    st = voxa__parallel_for(p->rows, rgrain, pass_start, &R);
    if (st == VOXA_OK && !p->staged) st = voxa__parallel_for(p->rows, rgrain, pass_load, &R);
    if (st != VOXA_OK) goto done;
    if (p->staged) {
        size_t nscr = (size_t)voxa_get_threads() * (size_t)voxa__rl_staged_scratch(p);
        scr = fftwf_malloc(nscr * sizeof(float));
        VOXA_GOTO_IF(!scr, VOXA_ENOMEM, "deconvolution: cannot allocate the staged scratch");
        /* a ring's rows outside a c2r's rows are read, never used: keep
         * them finite */
        memset(scr, 0, nscr * sizeof(float));
        R.scr = scr;
    }
    st = voxa__progress(&opt->progress, 0, opt->iterations);
    if (st != VOXA_OK) goto done;
    fftwf_complex *cb = (fftwf_complex *)p->buf;
    int have_gold = 0;
    for (int it = 0; it < opt->iterations; it++) {
        R.last = it + 1 == opt->iterations;
        if (opt->accelerate) {
            R.alpha = 0;
            if (have_gold >= 2) {
                double num = 0, den = 0;
                for (int64_t r = 0; r < p->rows; r++) {
                    num += dots[2 * r];
                    den += dots[2 * r + 1];
                }
                double a = den > 0 ? num / den : 0;
                R.alpha = (float)(a < 0 ? 0 : a > 1 ? 1 : a);
            }
        }
        if (p->staged) {
            st = staged_iteration(&R, scr, it == 0, R.last);
            if (st != VOXA_OK) goto done;
            goto step_done;
        }
        fftwf_execute_dft_r2c(p->fwd, p->buf, cb);
        R.h = p->hf;
        st = voxa__parallel_for(p->nc, cgrain, pass_mul, &R);
        if (st != VOXA_OK) goto done;
        fftwf_execute_dft_c2r(p->inv, cb, p->buf);
        st = voxa__parallel_for(p->rows, rgrain, pass_ratio, &R);
        if (st != VOXA_OK) goto done;
        fftwf_execute_dft_r2c(p->fwd, p->buf, cb);
        R.h = p->hb;
        st = voxa__parallel_for(p->nc, cgrain, pass_mul_conj, &R);
        if (st != VOXA_OK) goto done;
        fftwf_execute_dft_c2r(p->inv, cb, p->buf);
        st = voxa__parallel_for(p->rows, rgrain, pass_update, &R);
        if (st != VOXA_OK) goto done;
    step_done:
        if (opt->accelerate) have_gold++;
        st = voxa__progress(&opt->progress, it + 1, opt->iterations);
        if (st != VOXA_OK) goto done;
    }
    if (!out_is_f) {
        if (out->dtype == VOXA_F32) store_f32(p, R.fwin, out, opt->clip);
        else store_f64(p, R.fwin, out, opt->clip);
    }
done:
    voxa__free(gbuf);
    voxa__free(fbuf);
    voxa__free(shell);
    voxa__free(acc);
    voxa__free(dots);
    fftwf_free(scr);
    return st;
}

voxa_status voxa_deconv_rl(const voxa_array *in, const voxa_array *psf, voxa_array *out,
                           voxa_rl_boundary boundary, const voxa_rl_options *opt) {
    VOXA_CHECK(voxa_array_check(in, "image"));
    VOXA_FAIL_IF(in->ndim < 1 || in->ndim > 3, VOXA_EINVAL,
                 "image: ndim %d not supported (1, 2 or 3)", in->ndim);
    voxa_rl_plan *p = NULL;
    VOXA_CHECK(voxa_rl_plan_new(&p, in->ndim, in->shape, psf, boundary, 0));
    voxa_status st = voxa_rl_plan_execute(p, in, out, opt);
    voxa_rl_plan_free(p);
    return st;
}
