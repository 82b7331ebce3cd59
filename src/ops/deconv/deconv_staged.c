/* Richardson–Lucy, staged 3-D transform (the default for wrap-free boxes of
 * several planes and for periodic boxes from 8 planes and 2^19 voxels).
 *
 * Why: a 3-D FFTW plan needs the PSF's whole 3-D transform H (one more
 * box-sized array, 1.5x the image for (128, 512, 512) with a 32^3 PSF), and
 * its element-wise passes stream the box through memory once more each.
 * Here the 3-D transform is done in its stages:
 *   - per z-plane, a 2-D r2c / c2r in its two stages (1 thread, planes run
 *     in parallel): columns (c2c along y) in place on the plane, rows (r2c /
 *     c2r along x) out of place between the plane and a per-thread ring of
 *     VOXA_RL_ROW_BLOCK rows, fused by deconv_rl.c with the element-wise
 *     pass of those rows while they are in cache (c2r -> ratio -> r2c;
 *     c2r -> update -> r2c);
 *   - along z, a convolution per column: directly for short PSFs
 *     (deconv_zconv.c), else on tiles of VOXA_RL_TILE adjacent columns of
 *     the planes' coefficients gathered into per-thread scratch (L0 x TILE):
 *     z-FFT, multiply by H's column, inverse z-FFT, scatter back (this file);
 *     each column is contiguous in the tile (with a z-major tile, FFTW's
 *     strided batch spent ~20 % of the run in buffer copies and per-call
 *     mallocs, perf on (64, 256, 256)).
 * H's column is made per tile from the PSF transformed only in x and y
 * (m0 planes of L1 (L2/2+1) complex, about m0/L0 of the box): its m0
 * planes go to z = (k0 - c0) mod L0 of a zeroed tile, which one more z-FFT
 * turns into the 3-D transform's column. Same centring and 1/|box| scaling
 * as the 3-D path (deconv_plan.c), so the two differ by float rounding only.
 * Pruning the plane structure gives: after the forward convolution only the
 * window's planes are needed (the ratio is 0 elsewhere), so only they are
 * scattered, inverse-transformed and ratio'd; the backward convolution
 * gathers only those planes (the others are 0). Likewise the estimate is 0
 * for ever on the box's dead planes (every border weight 0: the box's
 * rounding-up, and a PSF's tails below 1e-4 of its sum), so only the live
 * ones (p->zlive) are transformed, gathered, scattered and updated.
 * Running a plane's transform as its two stages lets the row stage skip
 * rows (free mode): after c2r the ratio pass reads only the window's rows
 * and zeroes the rest before its r2c, and the load and update passes (the
 * update also extrapolates, with acceleration) read and write only live
 * rows (p->ylive; 0 elsewhere). That is 512 of 560 rows for the ratio and 526 for the rest
 * on (128, 512, 512) with the benchmark's Gaussian 32^3 PSF (4-6 % of a
 * plane's transform pair, 3 % of an iteration with 2 threads,
 * BENCHMARKS.md session 7). Periodic mode's row sets are the whole plane.
 * The rows run out of place, and the box's rows are padded to 32 bytes
 * (deconv_plan.c), because FFTW (MEASURE) runs misaligned rows in place
 * through a buffered plan that allocates and frees its buffer per row
 * (300k allocations per iteration at (128, 512, 512), 7 % of it in glibc's
 * allocator), while aligned out-of-place rows take its SIMD codelets
 * directly: 1.10-1.15x per iteration in both modes (BENCHMARKS.md session
 * 15). The row plans are measured (about 1 s the first time a size is
 * seen, then wisdom).
 * Every FFT runs on one thread on data of fixed shape and the tiles and
 * planes do not depend on the thread count, so results are bit-identical
 * for any thread count.
 * Cost: FFT work per convolution = 2-D FFTs of the planes + 3 z-FFTs per
 * column (one for H); memory: hxy (m0 planes of L1 px/2 complex) + per
 * thread 2 L0 TILE complex and a ring of VOXA_RL_ROW_BLOCK px floats,
 * instead of H (L0 L1 (L2/2+1) complex). */
#include "deconv_internal.h"

#include <string.h>

/* The row plans, per row set k: blocks of rblk[k] rows (and the last,
 * shorter block's) of [yrows[k][0], yrows[k][1]), out of place between the
 * plane (coefficients) and a thread's ring of VOXA_RL_ROW_BLOCK rows (real
 * values), which stays in cache while the pass works on it. Planned at the
 * set's first row in the plane and at the ring's start, both 32-byte
 * aligned as every block's rows are. The column plans, in place, on the nx
 * columns that hold coefficients. Returns 0 when the planning ring cannot
 * be allocated. */
static int split_plans(voxa_rl_plan *p, unsigned pf) {
    int n2 = (int)p->L[2], n1 = (int)p->L[1], px = (int)p->px, cw = (int)(p->px / 2);
    int nx = n2 / 2 + 1; /* complex columns; cw - nx more pad each row */
    float *rs = fftwf_malloc((size_t)(VOXA_RL_ROW_BLOCK * p->px) * sizeof(float));
    if (!rs) return 0;
    int64_t y[2][2];
    y[VOXA_RL_ROWS_WINDOW][0] = p->off[1];
    y[VOXA_RL_ROWS_WINDOW][1] = p->off[1] + p->n[1];
    y[VOXA_RL_ROWS_LIVE][0] = p->ylive[0];
    y[VOXA_RL_ROWS_LIVE][1] = p->ylive[1];
    for (int k = 0; k < 2; k++) {
        fftwf_complex *c = (fftwf_complex *)(p->buf + y[k][0] * p->px);
        int64_t n = y[k][1] - y[k][0];
        int how[2];
        p->yrows[k][0] = y[k][0];
        p->yrows[k][1] = y[k][1];
        p->rblk[k] = n < VOXA_RL_ROW_BLOCK ? n : VOXA_RL_ROW_BLOCK;
        how[0] = (int)p->rblk[k];
        how[1] = (int)(n % p->rblk[k]);
        for (int j = 0; j < 2 && how[j] > 0; j++) {
            p->rowf[k][j] =
                fftwf_plan_many_dft_r2c(1, &n2, how[j], rs, NULL, 1, px, c, NULL, 1, cw, pf);
            p->rowi[k][j] =
                fftwf_plan_many_dft_c2r(1, &n2, how[j], c, NULL, 1, cw, rs, NULL, 1, px, pf);
        }
    }
    fftwf_free(rs);
    fftwf_complex *c = (fftwf_complex *)p->buf;
    p->colf = fftwf_plan_many_dft(1, &n1, nx, c, NULL, cw, 1, c, NULL, cw, 1, FFTW_FORWARD, pf);
    p->coli = fftwf_plan_many_dft(1, &n1, nx, c, NULL, cw, 1, c, NULL, cw, 1, FFTW_BACKWARD, pf);
    return 1;
}

static int split_ok(const voxa_rl_plan *p) {
    for (int k = 0; k < 2; k++) {
        int rem = (p->yrows[k][1] - p->yrows[k][0]) % p->rblk[k] != 0;
        if (!p->rowf[k][0] || !p->rowi[k][0] || (rem && (!p->rowf[k][1] || !p->rowi[k][1])))
            return 0;
    }
    return p->colf && p->coli;
}

int voxa__rl_staged_plans(voxa_rl_plan *p, unsigned fl) {
    int d2[2] = {(int)p->L[1], (int)p->L[2]}, n0 = (int)p->L[0];
    /* every plane must have the planned plane's alignment, or FFTW's SIMD
     * codelets cannot be used on it (new-array execute) */
    unsigned pf = fl | ((p->L[1] * p->px) % 16 ? FFTW_UNALIGNED : 0);
    fftwf_plan_with_nthreads(1);
    if (!split_plans(p, pf)) return -1;
    /* the 2-D r2c only transforms the PSF's m0 planes, once (rows of px
     * floats / px / 2 complex) */
    int re[2] = {d2[0], (int)p->px}, ce[2] = {d2[0], (int)(p->px / 2)};
    p->pfwd = fftwf_plan_many_dft_r2c(2, d2, 1, p->buf, re, 1, 0, (fftwf_complex *)p->buf, ce,
                                      1, 0, FFTW_ESTIMATE | (pf & FFTW_UNALIGNED));
    int planes_ok = p->pfwd && split_ok(p);
    if (p->zdirect) return planes_ok; /* no z-FFTs (deconv_zconv.c) */
    fftwf_complex *s = fftwf_malloc((size_t)(n0 * VOXA_RL_TILE) * sizeof(fftwf_complex));
    if (!s) return -1;
    p->cfwd = fftwf_plan_many_dft(1, &n0, VOXA_RL_TILE, s, NULL, 1, n0, s, NULL, 1, n0,
                                  FFTW_FORWARD, fl);
    p->cinv = fftwf_plan_many_dft(1, &n0, VOXA_RL_TILE, s, NULL, 1, n0, s, NULL, 1, n0,
                                  FFTW_BACKWARD, fl);
    fftwf_free(s);
    return planes_ok && p->cfwd && p->cinv;
}

/* A thread's scratch: the z stage's floats, then the row ring; both start
 * 64-byte aligned (fftwf_malloc'd base, offsets in multiples of 16 floats),
 * as the row plans' planning ring did. */
static int64_t z_scratch(const voxa_rl_plan *p) {
    return p->zdirect ? voxa__rl_zconv_scratch(p) : 4 * p->L[0] * VOXA_RL_TILE;
}

static int64_t row_scratch_at(const voxa_rl_plan *p) { return (z_scratch(p) + 15) / 16 * 16; }

int64_t voxa__rl_staged_scratch(const voxa_rl_plan *p) {
    return row_scratch_at(p) + (VOXA_RL_ROW_BLOCK * p->px + 15) / 16 * 16;
}

float *voxa__rl_row_scratch(const voxa_rl_plan *p, float *scr, int tid) {
    return scr + (int64_t)tid * voxa__rl_staged_scratch(p) + row_scratch_at(p);
}

voxa_status voxa__rl_plane_split(const voxa_rl_plan *p, float *pl, int k, float *rs, int c2r,
                                 int r2c, voxa__range_fn fn, int64_t r0, int tid,
                                 void *ctx) {
    int64_t y0 = p->yrows[k][0], y1 = p->yrows[k][1], b = p->rblk[k];
    int64_t L1 = p->L[1], px = p->px;
    if (c2r) fftwf_execute_dft(p->coli, (fftwf_complex *)pl, (fftwf_complex *)pl);
    /* blocks [cs, cs + b) on the grid anchored at y0; each is wholly
     * transformed, or (the one holding y1) up to y1, or not at all */
    for (int64_t cs = y0 - (y0 + b - 1) / b * b; cs < L1; cs += b) {
        int64_t lo = cs > 0 ? cs : 0, hi = cs + b < L1 ? cs + b : L1;
        int64_t tl = lo > y0 ? lo : y0, th = hi < y1 ? hi : y1;
        int j = th - tl == b ? 0 : 1; /* the block's plan, or the short one's */
        float *ring = rs + voxa__rl_ring_slot(p, k, tl) * px;
        fftwf_complex *co = (fftwf_complex *)(pl + tl * px);
        if (c2r && th > tl) fftwf_execute_dft_c2r(p->rowi[k][j], co, ring);
        if (fn) {
            voxa_status st = fn(r0 + lo, r0 + hi, tid, ctx);
            if (st != VOXA_OK) return st;
        }
        if (!r2c) continue;
        /* rows not transformed are 0 (the pass wrote them in the ring) */
        for (int64_t y = lo; y < hi; y++)
            if (y < tl || y >= th) memset(pl + y * px, 0, (size_t)px * sizeof(float));
        if (th > tl) fftwf_execute_dft_r2c(p->rowf[k][j], ring, co);
    }
    if (r2c) fftwf_execute_dft(p->colf, (fftwf_complex *)pl, (fftwf_complex *)pl);
    return VOXA_OK;
}

/* hxy: each PSF plane k0 written into a zeroed plane with h[k0][c1][c2] at
 * the origin, 2-D r2c, scaled by 1/|box|. And the buffer's pad columns
 * (px/2 - (L2/2+1) complex per row) set to 0: their values never reach a
 * voxel (the z stage treats each column on its own, and no row or column
 * transform reads them), but 0 keeps NaN or denormal garbage out of the z
 * stage, which maps 0 to 0; here, outside the FFTW lock, as it first
 * touches the buffer's pages. */
voxa_status voxa__rl_staged_psf(voxa_rl_plan *p) {
    int64_t nx = p->L[2] / 2 + 1;
    for (int64_t r = 0; r < p->rows; r++)
        memset(p->buf + r * p->px + 2 * nx, 0, (size_t)(p->px - 2 * nx) * sizeof(float));
    int64_t pl = p->L[1] * p->px, m1 = p->m[1], m2 = p->m[2];
    int64_t c1 = m1 / 2, c2 = m2 / 2;
    p->hxy = fftwf_malloc((size_t)(p->m[0] * pl) * sizeof(float));
    VOXA_FAIL_IF(!p->hxy, VOXA_ENOMEM, "deconvolution: cannot allocate the PSF transform");
    float scale = (float)(1.0 / (double)p->nbox);
    for (int64_t k0 = 0; k0 < p->m[0]; k0++) {
        float *b = (float *)p->hxy + k0 * pl;
        memset(b, 0, (size_t)pl * sizeof(float));
        for (int64_t k1 = 0; k1 < m1; k1++) {
            int64_t i1 = ((k1 - c1) % p->L[1] + p->L[1]) % p->L[1];
            const float *src = p->psf + (k0 * m1 + k1) * m2;
            for (int64_t k2 = 0; k2 < m2; k2++)
                b[i1 * p->px + ((k2 - c2) % p->L[2] + p->L[2]) % p->L[2]] = src[k2];
        }
        fftwf_execute_dft_r2c(p->pfwd, b, (fftwf_complex *)b);
        fftwf_complex *h = (fftwf_complex *)b;
        for (int64_t i = 0; i < p->ncp; i++) {
            h[i][0] *= scale;
            h[i][1] *= scale;
        }
    }
    return VOXA_OK;
}

typedef struct cols_ctx {
    const voxa_rl_plan *p;
    float *scr;
    int conj;
    int64_t glo, ghi, slo, shi;
} cols_ctx;

static voxa_status cols_tiles(int64_t lo, int64_t hi, int tid, void *ctx) {
    const cols_ctx *C = ctx;
    const voxa_rl_plan *p = C->p;
    const int64_t T = VOXA_RL_TILE, L0 = p->L[0], ncp = p->ncp;
    fftwf_complex *s = (fftwf_complex *)(C->scr + (int64_t)tid * voxa__rl_staged_scratch(p));
    fftwf_complex *hs = s + L0 * T;
    const fftwf_complex *buf = (const fftwf_complex *)p->buf;
    fftwf_complex *bufw = (fftwf_complex *)p->buf;
    for (int64_t t = lo; t < hi; t++) {
        int64_t j0 = t * T, cnt = ncp - j0 < T ? ncp - j0 : T;
        /* gather the tile, column t at s + t L0 (planes outside [glo, ghi)
         * and columns past the plane's end are 0) */
        if (C->glo > 0 || C->ghi < L0 || cnt < T)
            memset(s, 0, (size_t)(L0 * T) * sizeof(fftwf_complex));
        for (int64_t z = C->glo; z < C->ghi; z++) {
            const fftwf_complex *src = buf + z * ncp + j0;
            for (int64_t t = 0; t < cnt; t++) {
                s[t * L0 + z][0] = src[t][0];
                s[t * L0 + z][1] = src[t][1];
            }
        }
        /* H's column: the PSF's x-y transformed planes at (k0 - c0) mod L0 */
        memset(hs, 0, (size_t)(L0 * T) * sizeof(fftwf_complex));
        for (int64_t k0 = 0; k0 < p->m[0]; k0++) {
            int64_t z = ((k0 - p->c0) % L0 + L0) % L0;
            const fftwf_complex *src = p->hxy + k0 * ncp + j0;
            for (int64_t t = 0; t < cnt; t++) {
                hs[t * L0 + z][0] = src[t][0];
                hs[t * L0 + z][1] = src[t][1];
            }
        }
        fftwf_execute_dft(p->cfwd, s, s);
        fftwf_execute_dft(p->cfwd, hs, hs);
        float sg = C->conj ? -1.0f : 1.0f;
        for (int64_t i = 0; i < L0 * T; i++) {
            float hr = hs[i][0], hi_ = sg * hs[i][1];
            float re = s[i][0] * hr - s[i][1] * hi_;
            float im = s[i][0] * hi_ + s[i][1] * hr;
            s[i][0] = re;
            s[i][1] = im;
        }
        fftwf_execute_dft(p->cinv, s, s);
        for (int64_t z = C->slo; z < C->shi; z++) {
            fftwf_complex *dst = bufw + z * ncp + j0;
            for (int64_t t = 0; t < cnt; t++) {
                dst[t][0] = s[t * L0 + z][0];
                dst[t][1] = s[t * L0 + z][1];
            }
        }
    }
    return VOXA_OK;
}

voxa_status voxa__rl_staged_cols(const voxa_rl_plan *p, float *scr, int conj,
                                 int64_t glo, int64_t ghi, int64_t slo, int64_t shi) {
    if (p->zdirect) return voxa__rl_zconv(p, scr, conj, glo, ghi, slo, shi);
    cols_ctx C = {p, scr, conj, glo, ghi, slo, shi};
    int64_t tiles = (p->ncp + VOXA_RL_TILE - 1) / VOXA_RL_TILE;
    return voxa__parallel_for(tiles, 8, cols_tiles, &C);
}
