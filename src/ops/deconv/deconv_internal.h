/* Internals shared by the deconvolution files (deconv_plan.c, deconv_rl.c).
 *
 * Geometry. Every image is seen as 3-D (leading axes of extent 1 added).
 * The FFT box has extent L[d] per axis; the image ("window", where data
 * exist) sits in it at offset off[d]; the estimate f lives on the whole box.
 *   periodic: L = n, off = 0           (circular convolution on the image)
 *   zero:     L >= n + m - 1, off = 0  (linear convolution, f = 0 outside)
 *   free:     L >= n + m - 1, off = m - 1 - m//2 (f on the extended domain)
 * With L >= n + m - 1 no PSF tail ever wraps from one side of the data
 * window onto the other, so circular FFT convolution on the box is exactly
 * the linear convolution of the extended problem.
 *
 * The FFT work buffer `buf` holds a real array in FFTW's in-place r2c layout
 * (last axis padded to px = 2 * (L2 / 2 + 1) floats) and, after a forward
 * transform, the nc = rows * (L2 / 2 + 1) complex coefficients. */
#ifndef VOXA_DECONV_INTERNAL_H
#define VOXA_DECONV_INTERNAL_H

#include "internal.h"
#include "voxa/deconv.h"

#include <fftw3.h>

struct voxa_rl_plan {
    int ndim;                   /* caller's ndim (1..3) */
    voxa_rl_boundary boundary;
    int64_t n[3], m[3], L[3], off[3]; /* image, PSF, FFT box, window offset */
    int64_t px;                 /* padded real length of a box row: 2 (L2/2+1),
                                 * rounded up to VOXA_RL_ROW_ALIGN floats on
                                 * the staged path */
    int64_t rows;               /* L[0] * L[1] */
    int64_t nbox;               /* L[0] * L[1] * L[2] (unpadded box voxels) */
    int64_t nc;                 /* complex coefficients */
    float *buf;                 /* rows * px floats, FFT work space */
    fftwf_complex *hf;          /* PSF transform (forward), scaled by 1/nbox */
    fftwf_complex *hb;          /* backward (== hf unless zero mode, even m) */
    float *wtab;                /* free mode: 1 / H^T(window) per row class */
    int64_t K[2];               /* row classes along axes 0 and 1 (free mode) */
    int64_t zlive[2], ylive[2]; /* planes [zlive[0], zlive[1]), and rows of
                                 * any plane [ylive[0], ylive[1]), holding a
                                 * weight > 0: the estimate is 0 elsewhere for
                                 * ever (free mode; else the whole box) */
    double psf_sum;
    fftwf_plan fwd, inv;        /* 3-D plans (NULL on the staged path) */
    int threads;                /* threads the FFTW plans were made for */
    /* The staged path (deconv_staged.c): hf/hb are NULL (the GPU path makes
     * H on the device, deconv_gpu.c), the PSF is kept transformed in x and y
     * only, and the 3-D transform runs as per-plane 2-D FFTs and z-FFTs on
     * tiles of columns. A plane's transform runs in its row and column
     * stages, so that rows a pass does not read after c2r, or knows to be 0
     * before r2c, are skipped (free mode): the row set k
     * (VOXA_RL_ROWS_WINDOW, for the ratio pass, or VOXA_RL_ROWS_LIVE) is
     * [yrows[k][0], yrows[k][1]), transformed in blocks of rblk[k] rows out
     * of place between the plane and a thread's row ring
     * (voxa__rl_plane_split): rowf[k][0] / rowi[k][0] a block, rowf[k][1] /
     * rowi[k][1] the last, shorter one (NULL if none); colf / coli the
     * columns, in place; pfwd (estimated) the PSF's planes' 2-D r2c. */
    int staged;
    fftwf_plan pfwd;
    fftwf_plan rowf[2][2], rowi[2][2], colf, coli;
    int64_t yrows[2][2], rblk[2];
    fftwf_plan cfwd, cinv;      /* z-FFTs of a tile (L0 x VOXA_RL_TILE complex) */
    int zdirect;                /* z stage as a direct convolution
                                 * (deconv_zconv.c; no cfwd/cinv) */
    fftwf_complex *hxy;         /* m0 planes of ncp: the PSF's x-y transform / nbox */
    int64_t ncp;                /* complex coefficients per plane: L1 px/2 */
    int64_t c0;                 /* the PSF's centre along z (its plane goes to
                                 * z index (k0 - c0) mod L0) */
    float *psf;                 /* the PSF, float32 C-contiguous 3-D (for hf) */
    /* Double precision (VOXA_RL_DOUBLE; deconv_rl64.c): 3-D plans on a
     * double work buffer (rows * px doubles), H and the border weights in
     * double. Of the fields above only the geometry, psf_sum and threads
     * apply; the float buffers, plans and tables stay NULL. */
    int f64;
    double *buf64;
    fftw_complex *hf64, *hb64;  /* hb64 == hf64 unless zero mode, even m */
    double *wtab64;             /* free mode, as wtab */
    double *psf64;              /* the PSF, double C-contiguous 3-D */
    fftw_plan fwd64, inv64;
};

/* Columns per z-FFT tile of the staged path (8 bytes each: two cache
 * lines per z row). */
#define VOXA_RL_TILE 16

/* The direct z stage wins while n0 m0 <= this x L0 ceil(log2 L0) (measured,
 * deconv_zconv.c). */
#define VOXA_RL_ZCONV_RATIO 6

/* Staged path (deconv_staged.c). _plans: the plane and tile plans with
 * FFTW flags fl (called under the FFTW lock; 1: planned, 0: FFTW failed,
 * -1: no memory for a planning buffer);
 * _psf: hxy from p->psf, and the buffer's pad columns zeroed (after
 * planning); _cols: one column stage on the
 * whole box: gather planes [glo, ghi) of every tile (others taken as 0),
 * z-FFT, multiply by H's column (conj if conj), inverse z-FFT, scatter
 * planes [slo, shi) back (or voxa__rl_zconv: the same, directly); scr
 * holds voxa_get_threads() x voxa__rl_staged_scratch(p) floats, from
 * fftwf_malloc. */
int voxa__rl_staged_plans(voxa_rl_plan *p, unsigned fl);
voxa_status voxa__rl_staged_psf(voxa_rl_plan *p);
int64_t voxa__rl_staged_scratch(const voxa_rl_plan *p);
/* The row sets of the split plane transforms (yrows). */
enum { VOXA_RL_ROWS_WINDOW = 0, VOXA_RL_ROWS_LIVE = 1 };

/* The staged path: box rows are padded to a multiple of this many
 * floats (32 bytes: every row aligned for FFTW's AVX codelets; 64 bytes
 * measured no faster, BENCHMARKS.md session 15). */
#define VOXA_RL_ROW_ALIGN 8

/* Rows per block of the split plane transforms: the thread's ring holds
 * one block (71 KiB for 560-point rows, in L2 while the pass works; 16
 * to 1024 rows measured within 3 %). */
#define VOXA_RL_ROW_BLOCK 32

/* A plane of the staged path (pl: its first float): c2r (if c2r), the
 * pass fn(r0 + y, ..., tid, ctx) on its rows a block at a time, r2c (if
 * r2c). Only the rows of set k are transformed, between the plane and the
 * thread's ring rs, where fn reads and writes every row (voxa__rl_ring_slot);
 * the others keep whatever the ring held before c2r and must be 0 before
 * r2c. */
voxa_status voxa__rl_plane_split(const voxa_rl_plan *p, float *pl, int k, float *rs, int c2r,
                                 int r2c, voxa__range_fn fn, int64_t r0, int tid, void *ctx);
/* Thread tid's ring within scr. */
float *voxa__rl_row_scratch(const voxa_rl_plan *p, float *scr, int tid);
/* Row y of a plane (row set k) in a ring. */
static inline int64_t voxa__rl_ring_slot(const voxa_rl_plan *p, int k, int64_t y) {
    int64_t b = p->rblk[k], d = (y - p->yrows[k][0]) % b;
    return d < 0 ? d + b : d;
}
voxa_status voxa__rl_staged_cols(const voxa_rl_plan *p, float *scr, int conj,
                                 int64_t glo, int64_t ghi, int64_t slo, int64_t shi);

/* The z stage as a direct convolution (deconv_zconv.c), same arguments
 * and result as voxa__rl_staged_cols (adjoint == conj) to float rounding;
 * _direct: whether it is the cheaper one for this plan (VOXA_RL_ZCONV=fft /
 * direct forces either). */
int voxa__rl_zconv_direct(const voxa_rl_plan *p);
voxa_status voxa__rl_zconv(const voxa_rl_plan *p, float *scr, int adjoint, int64_t glo,
                           int64_t ghi, int64_t slo, int64_t shi);
int64_t voxa__rl_zconv_scratch(const voxa_rl_plan *p); /* floats per thread */

/* Border weights (free mode; deconv.cl's vx_rl_cls is the same rule). The
 * weight of box voxel x depends on x_d only
 * through its class: x_d < m_d - 1 (own class), m_d - 1 <= x_d <= n_d - 1
 * (one interior class, the PSF's whole extent lands in the window), or
 * x_d > n_d - 1 (own class). So K_d = m_d + L_d - n_d classes per axis and
 * the table holds K0 * K1 rows of L2 weights instead of a box. */
static inline int64_t voxa__rl_cls(int64_t x, int64_t n, int64_t m) {
    return x < m - 1 ? x : x <= n - 1 ? m - 1 : x - n + m;
}

/* The weights' row of row class (c0, c1), and of box row r (free mode
 * only): an offset into wtab (float plans) or wtab64 (double plans). */
static inline int64_t voxa__rl_wclass_at(const voxa_rl_plan *p, int64_t c0, int64_t c1) {
    return (c0 * p->K[1] + c1) * p->L[2];
}
static inline int64_t voxa__rl_wrow_at(const voxa_rl_plan *p, int64_t r) {
    return voxa__rl_wclass_at(p, voxa__rl_cls(r / p->L[1], p->n[0], p->m[0]),
                              voxa__rl_cls(r % p->L[1], p->n[1], p->m[1]));
}
static inline const float *voxa__rl_wclass(const voxa_rl_plan *p, int64_t c0, int64_t c1) {
    return p->wtab + voxa__rl_wclass_at(p, c0, c1);
}
static inline const float *voxa__rl_wrow(const voxa_rl_plan *p, int64_t r) {
    return p->wtab + voxa__rl_wrow_at(p, r);
}

/* Row r of the box -> row of the image (window), or -1 outside it. */
static inline int64_t voxa__rl_window_row(const voxa_rl_plan *p, int64_t r) {
    int64_t z = r / p->L[1] - p->off[0], y = r % p->L[1] - p->off[1];
    if (z < 0 || z >= p->n[0] || y < 0 || y >= p->n[1]) return -1;
    return z * p->n[1] + y;
}

/* The one lock around FFTW's planner (not thread-safe); execute needs none. */
void voxa__fftw_lock(void);
void voxa__fftw_unlock(void);
/* voxa__fftw_lock after checking there is room for FFTW's planner (ENOMEM) */
voxa_status voxa__fftw_lock_for_planning(void);

/* The default wisdom cache (deconv_wisdom.c): its path (0 when off),
 * import once per process and path (under the FFTW lock), save (outside it;
 * failures are dropped: the cache never fails a run). */
int voxa__wisdom_cache_path(char *buf, size_t size);
void voxa__wisdom_cache_import(const char *path);
void voxa__wisdom_cache_save(const char *path);

/* Convert `in` (any real dtype, any strides, ndim 1..3) into a float32
 * C-contiguous buffer of the same element count; EINVAL naming `name` and
 * the first index whose value is NaN/inf or does not fit a float. */
voxa_status voxa__deconv_load_f32(const voxa_array *in, float *dst, const char *name);
/* The same into double: EINVAL naming the first NaN or infinite value. */
voxa_status voxa__deconv_load_f64(const voxa_array *in, double *dst, const char *name);

/* voxa_psf_prepare into a new array of dtype dt (VOXA_F32 or VOXA_F64). */
voxa_status voxa__psf_prepare_as(const voxa_array *raw, int normalize, voxa_dtype dt,
                                 voxa_array *out);

/* Accelerated RL's per-span kernels (deconv_accel.c), picked once per run
 * (VOXA_RL_KERNEL=c|avx2|avx512 forces one; all give the same bits):
 * log: lx <- log2 f where f > 0, else -inf (the last estimate, as the next
 * extrapolation reads it); extrapolate: y = f 2^clamp(a (log2 f - lx), tlo,
 * thi) where f > 0 and lx > -inf, else f; then lx <- log2 f as log does and
 * f, bx <- y; step: the RL step d = bx - f, num += d o and den += o o (o the
 * last step, in gx) in VOXA__RL_LANES lanes from lane0 on (returned: the
 * lane after the span's last), gx <- d, f <- bx. */
#define VOXA__RL_LANES 16
typedef struct voxa__rl_accel_kernels {
    void (*log)(const float *f, float *lx, int64_t len);
    void (*extrapolate)(float *f, float *lx, float *bx, int64_t len, float a, float tlo,
                        float thi);
    int (*step)(float *f, const float *bx, float *gx, int64_t len, int lane0, double *num,
                double *den);
} voxa__rl_accel_kernels;
voxa__rl_accel_kernels voxa__rl_accel_kernels_pick(void);

/* voxa_rl_plan_execute on a double plan (deconv_rl64.c), after its checks. */
voxa_status voxa__rl_execute_f64(const voxa_rl_plan *p, const voxa_array *in, voxa_array *out,
                                 const voxa_rl_options *opt);

/* The sum of g[0, n) in double, and EINVAL naming the first index whose
 * value is NaN or infinite when check is set. Blocks of fixed size are
 * summed in parallel (in order within a block), their sums in order: the
 * result does not depend on the thread count. */
voxa_status voxa__rl_image_sum(const float *g, int64_t n, int check, double *sum);

/* voxa_rl_plan_execute's argument checks (plan p, image, out, options), in
 * its order and with its messages; the GPU path runs the same. */
voxa_status voxa__rl_check_args(const voxa_rl_plan *p, const voxa_array *in,
                                const voxa_array *out, const voxa_rl_options *opt);

#endif
