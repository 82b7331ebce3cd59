/* Richardson-Lucy on the GPU: the element-wise passes of one iteration
 * (deconv_gpu.c runs them around the device FFTs). Each is the CPU pass of
 * deconv_rl.c, operation for operation, in float32 (the dot products of the
 * acceleration in double), so that only the FFTs' round-off differs.
 *
 * Layout: the FFT box is C-order (L0, L1, L2) floats, unpadded; the complex
 * coefficients are interleaved (re, im) pairs; the data window (n0, n1, n2)
 * sits in the box at (o0, o1, o2). mode: 0 free, 1 periodic, 2 zero. */

/* Flat index in the window of box voxel i, or -1 outside it. */
VX_FUNC long vx_rl_win(long i, long L1, long L2, long n0, long n1, long n2, long o0, long o1,
                       long o2) {
    long x = i % L2 - o2, r = i / L2;
    long y = r % L1 - o1, z = r / L1 - o0;
    if (z < 0 || z >= n0 || y < 0 || y >= n1 || x < 0 || x >= n2) return -1;
    return (z * n1 + y) * n2 + x;
}

/* c *= h, or c *= conj(h) when cj (nc complex values). */
VX_KERNEL vx_rl_mul(VX_GLOBAL float *c, VX_GLOBAL const float *h, long nc, int cj) {
    VX_FOR(i, nc) {
        float br = c[2 * i], bi = c[2 * i + 1], hr = h[2 * i], hi = h[2 * i + 1];
        float re, im;
        if (cj) {
            re = br * hr + bi * hi;
            im = bi * hr - br * hi;
        } else {
            re = br * hr - bi * hi;
            im = br * hi + bi * hr;
        }
        c[2 * i] = re;
        c[2 * i + 1] = im;
    }
}

/* b <- w g / b (the ratio pass; 0 outside the window). */
VX_KERNEL vx_rl_ratio(VX_GLOBAL float *b, VX_GLOBAL const float *g, long nbox, long L1,
                      long L2, long n0, long n1, long n2, long o0, long o1, long o2, int mode,
                      float fe) {
    VX_FOR(i, nbox) {
        long w = vx_rl_win(i, L1, L2, n0, n1, n2, o0, o1, o2);
        float v = 0.0f;
        if (w >= 0) {
            float c = b[i];
            if (mode == 2) {
                c = c + 1e-12f;
                float q = g[w] / c;
                v = c < fe ? 0.0f : q; /* fe is -inf when the filter is off */
            } else {
                float q = g[w] / (c > 0 ? c : 1.0f);
                v = c > 0 ? q : 0.0f;
            }
        }
        b[i] = v;
    }
}

/* f <- update(f, b); b <- f. With acceleration (acc): d <- f_new - f_old;
 * then, if ext, the next start y = x 2^(a (log2 x - log2 x_prev)) where
 * both are > 0 (exponent clamped to [-16, 16]), else x (x = f_new; a one
 * step behind the paper's, as deconv_rl.c's pass_update); x_prev <- x;
 * f, b <- y. */
VX_KERNEL vx_rl_update(VX_GLOBAL float *b, VX_GLOBAL float *f, VX_GLOBAL const float *inva,
                       VX_GLOBAL float *d, VX_GLOBAL float *xp, long nbox, long L1, long L2,
                       long n0, long n1, long n2, int mode, int acc, int ext, float a) {
    VX_FOR(i, nbox) {
        float fo = f[i], v;
        if (mode == 0) {
            v = fo * b[i] * inva[i];
            v = v > 0 ? v : 0.0f; /* also maps NaN (0 * inf) to 0 */
        } else if (mode == 1) {
            v = fo * b[i];
            v = v > 0 ? v : 0.0f;
        } else {
            v = vx_rl_win(i, L1, L2, n0, n1, n2, 0, 0, 0) >= 0 ? fo * b[i] : 0.0f;
        }
        if (acc) {
            d[i] = v - fo;
            if (ext) {
                float o = xp[i], y = v;
                if (v > 0 && o > 0)
                    y = v * exp2(fmin(fmax(a * (log2(v) - log2(o)), -16.0f), 16.0f));
                xp[i] = v;
                v = y;
            }
        }
        f[i] = v;
        b[i] = v;
    }
}

/* Per box row: <d_new, d_old> and <d_old, d_old>, summed in double in row
 * order (the host adds the rows in order, as the CPU code does). */
VX_KERNEL vx_rl_dots(VX_GLOBAL const float *dn, VX_GLOBAL const float *dold,
                     VX_GLOBAL double *dots, long rows, long L2) {
    VX_FOR(r, rows) {
        double num = 0, den = 0;
        for (long x = r * L2; x < (r + 1) * L2; x++) {
            float d = dn[x];
            num += (double)d * dold[x];
            den += (double)dold[x] * dold[x];
        }
        dots[2 * r] = num;
        dots[2 * r + 1] = den;
    }
}

/* The PSF h (m0, m1, m2) placed in the zeroed box with its voxel c at the
 * origin, wrapping (deconv_plan.c's psf_transform, as a gather). */
VX_KERNEL vx_rl_place_psf(VX_GLOBAL float *b, VX_GLOBAL const float *h, long L0, long L1,
                          long L2, long m0, long m1, long m2, long c0, long c1, long c2) {
    VX_FOR(i, L0 * L1 * L2) {
        long x = i % L2, r = i / L2;
        long k2 = (x + c2) % L2, k1 = (r % L1 + c1) % L1, k0 = (r / L1 + c0) % L0;
        b[i] = k0 < m0 && k1 < m1 && k2 < m2 ? h[(k0 * m1 + k1) * m2 + k2] : 0.0f;
    }
}

VX_KERNEL vx_rl_scale(VX_GLOBAL float *dst, VX_GLOBAL const float *src, long n, float s) {
    VX_FOR(i, n) dst[i] = src[i] * s;
}

/* Class of box coordinate x along an axis (image extent n, PSF m), as
 * voxa__rl_cls in deconv_internal.h. */
VX_FUNC long vx_rl_cls(long x, long n, long m) {
    return x < m - 1 ? x : x <= n - 1 ? m - 1 : x - n + m;
}

/* Free mode's border weights for the whole box from the plan's table of
 * K0 x K1 row classes (rows of L2 weights). */
VX_KERNEL vx_rl_weights(VX_GLOBAL float *w, VX_GLOBAL const float *tab, long nbox, long L1,
                        long L2, long n0, long n1, long m0, long m1, long K1) {
    VX_FOR(i, nbox) {
        long r = i / L2;
        long c = vx_rl_cls(r / L1, n0, m0) * K1 + vx_rl_cls(r % L1, n1, m1);
        w[i] = tab[c * L2 + i % L2];
    }
}

VX_KERNEL vx_rl_copy(VX_GLOBAL float *dst, VX_GLOBAL const float *src, long n) {
    VX_FOR(i, n) dst[i] = src[i];
}

/* The starting estimate, into f and b: periodic g; free `mean` where the
 * weight is non-zero; zero 0.5 on the window. */
VX_KERNEL vx_rl_start(VX_GLOBAL float *f, VX_GLOBAL float *b, VX_GLOBAL const float *g,
                      VX_GLOBAL const float *inva, long nbox, long L1, long L2, long n0,
                      long n1, long n2, int mode, float mean) {
    VX_FOR(i, nbox) {
        float v;
        if (mode == 1) v = g[i];
        else if (mode == 0) v = inva[i] > 0 ? mean : 0.0f;
        else v = vx_rl_win(i, L1, L2, n0, n1, n2, 0, 0, 0) >= 0 ? 0.5f : 0.0f;
        f[i] = v;
        b[i] = v;
    }
}

/* The window of the box, C-order, into dst. */
VX_KERNEL vx_rl_window(VX_GLOBAL float *dst, VX_GLOBAL const float *f, long nwin, long L1,
                       long L2, long n1, long n2, long o0, long o1, long o2) {
    VX_FOR(j, nwin) {
        long x = j % n2, r = j / n2;
        long y = r % n1, z = r / n1;
        dst[j] = f[((z + o0) * L1 + y + o1) * L2 + x + o2];
    }
}
