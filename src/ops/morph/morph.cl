/* Binary morphology on a GPU (host: morph_gpu.c): the diamond (city-block
 * distance threshold) and box (separable interval filter) elements, written
 * once for OpenCL and CUDA (vx_portable.h). Balls are a threshold of the
 * squared Euclidean distance (src/core/sqdt.cl). Each kernel runs one
 * work-item per line along an axis of length n with element stride `inner`
 * (line L starts at (L / inner) * n * inner + L % inner), so neighbouring
 * work-items touch neighbouring voxels on every axis but the last.
 *
 *   vx_morph_l1_init   f = 0 at targets, +inf (INT_MAX) elsewhere
 *   vx_morph_l1_lines  f(q) = min(f(q), f(q -+ 1) + 1) forwards and backwards;
 *                      with `border` a height-0 target before q = 0 and after
 *                      q = n - 1. Per axis this is the 1-D city-block
 *                      transform; over all axes the L1 distance (separable).
 *   vx_morph_l1_thr    out = (f <= r) ^ invert
 *   vx_morph_box_lines out(x) = OR of X over [x + lo, x + hi], X = src ^ neg,
 *                      outside the line X = outside ^ neg, then ^ neg (neg = 1:
 *                      AND, erosion). One forward walk per line keeps the last
 *                      1 seen up to x + hi: O(n + window) per line. src and
 *                      out are different buffers. */

#define VX_L1_INF 2147483647

VX_KERNEL vx_morph_l1_init(VX_GLOBAL const uchar *src, VX_GLOBAL int *f, long n, int target) {
    VX_FOR(i, n) f[i] = ((src[i] != 0) == (target != 0)) ? 0 : VX_L1_INF;
}

VX_KERNEL vx_morph_l1_lines(VX_GLOBAL int *f, long n, long inner, long nlines, int border) {
    VX_FOR(L, nlines) {
        VX_GLOBAL int *line = f + (L / inner) * n * inner + L % inner;
        int prev = border ? 0 : VX_L1_INF;
        for (long q = 0; q < n; q++) {
            int cur = line[q * inner];
            int t = prev == VX_L1_INF ? VX_L1_INF : prev + 1;
            if (t < cur) cur = t;
            line[q * inner] = cur;
            prev = cur;
        }
        prev = border ? 0 : VX_L1_INF;
        for (long q = n - 1; q >= 0; q--) {
            int cur = line[q * inner];
            int t = prev == VX_L1_INF ? VX_L1_INF : prev + 1;
            if (t < cur) cur = t;
            line[q * inner] = cur;
            prev = cur;
        }
    }
}

VX_KERNEL vx_morph_l1_thr(VX_GLOBAL const int *f, VX_GLOBAL uchar *out, long n, long r,
                          int invert) {
    VX_FOR(i, n) out[i] = (uchar)(((long)f[i] <= r) ^ (invert != 0));
}

VX_KERNEL vx_morph_box_lines(VX_GLOBAL const uchar *src, VX_GLOBAL uchar *out, long n,
                             long inner, long nlines, long lo, long hi, int neg, int outside) {
    VX_FOR(L, nlines) {
        long base = (L / inner) * n * inner + L % inner;
        int ng = neg != 0, ov = (outside != 0) ^ ng;
        long p = -1, last = -1; /* last: the last position <= p holding a 1 */
        for (long x = 0; x < n; x++) {
            long a = x + lo, b = x + hi;
            long bi = b < n - 1 ? b : n - 1, ai = a > 0 ? a : 0;
            while (p < bi) {
                p++;
                if ((src[base + p * inner] != 0) ^ ng) last = p;
            }
            int r = (ov && (a < 0 || b > n - 1)) || (bi >= ai && last >= ai);
            out[base + x * inner] = (uchar)(r ^ ng);
        }
    }
}
