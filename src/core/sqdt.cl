/* The exact squared distance transform on a GPU: the same separable
 * Felzenszwalb-Huttenlocher passes as sqdt.c's double path, written once for
 * OpenCL and CUDA (vx_portable.h), driven by src/backend/gpu_sqdt.c and
 * shared, like sqdt.c, by the distance family (EDT) and the morph family
 * (ball elements).
 *
 *   vx_sqdt_rows    one work-item per row of the last axis: a forward and a
 *                   backward scan give the distance d (in voxels) to the
 *                   nearest target of the row; f = d * d * s2.
 *   vx_sqdt_lines   one work-item per line of a slower axis (neighbouring
 *                   work-items read neighbouring voxels): the lower envelope
 *                   of the parabolas (q, f(q)) is built on a stack (apexes v,
 *                   heights gv, breakpoints z in the work-item's slice of a
 *                   scratch buffer) and read back into the line in place.
 *   vx_sqdt_emit_*  f to the output: sqrt as float64/float32, f itself, or
 *                   a threshold byte.
 *
 * Exactness: every expression is evaluated in the same order as sqdt.c's
 * double path with FP_CONTRACT off (nvcc: --fmad=false), so the distances are
 * the CPU's bit for bit; values above `cap` become +inf as sqdt.c's store()
 * does. Border: targets at q = -1 and q = n (height 0) on every line. */

VX_KERNEL vx_sqdt_rows(VX_GLOBAL const uchar *src, VX_GLOBAL double *f, long n, long rows,
                       int target, int border, double s2, double cap) {
    VX_FOR(r, rows) {
        VX_GLOBAL const uchar *s = src + r * n;
        VX_GLOBAL double *g = f + r * n;
        /* forward: distance to the previous target, -1 for none */
        long last = border ? -1 : -2;
        for (long x = 0; x < n; x++) {
            if ((s[x] != 0) == (target != 0)) last = x;
            g[x] = last >= -1 ? (double)(x - last) : -1.0;
        }
        long next = border ? n : -1;
        for (long x = n - 1; x >= 0; x--) {
            if ((s[x] != 0) == (target != 0)) next = x;
            double df = g[x];
            long d = df < 0 ? -1 : (long)df;
            if (next >= 0 && (d < 0 || next - x < d)) d = next - x;
            double v = d < 0 ? INFINITY : (double)d * (double)d * s2;
            g[x] = v > cap ? INFINITY : v;
        }
    }
}

/* Lines [line0, line0 + nlines) along an axis of length n with element
 * stride `inner`; line L starts at (L / inner) * n * inner + L % inner.
 * Scratch: 3 (n + 2) values per work-item slot (nlines slots). */
VX_KERNEL vx_sqdt_lines(VX_GLOBAL double *f, VX_GLOBAL double *scratch, long n, long inner,
                        long line0, long nlines, double s2, int border, double cap) {
    VX_FOR(t, nlines) {
        long L = line0 + t;
        VX_GLOBAL double *line = f + (L / inner) * n * inner + L % inner;
        VX_GLOBAL double *gv = scratch + t * 3 * (n + 2);
        VX_GLOBAL double *z = gv + (n + 2);
        VX_GLOBAL long *v = (VX_GLOBAL long *)(z + (n + 2));
        long k = -1;
        long qlo = border ? -1 : 0, qhi = border ? n : n - 1;
        for (long q = qlo; q <= qhi; q++) {
            double gq = (q < 0 || q >= n) ? 0.0 : line[q * inner];
            if (gq == INFINITY || gq > cap) continue;
            double hq = gq + s2 * (double)q * (double)q;
            double s = -INFINITY;
            while (k >= 0) {
                double hk = gv[k] + s2 * (double)v[k] * (double)v[k];
                s = (hq - hk) / (2.0 * s2 * (double)(q - v[k]));
                if (s <= z[k]) k--;
                else break;
            }
            if (k < 0) s = -INFINITY;
            k++;
            v[k] = q;
            gv[k] = gq;
            z[k] = s;
        }
        if (k < 0) {
            for (long x = 0; x < n; x++) line[x * inner] = INFINITY;
            continue;
        }
        long j = 0;
        for (long x = 0; x < n; x++) {
            while (j < k && z[j + 1] <= (double)x) j++;
            double d = (double)(x - v[j]);
            double val = gv[j] + s2 * d * d;
            line[x * inner] = val > cap ? INFINITY : val;
        }
    }
}

VX_KERNEL vx_sqdt_emit_f64(VX_GLOBAL double *f, long n) {
    VX_FOR(i, n) f[i] = sqrt(f[i]);
}

VX_KERNEL vx_sqdt_emit_f32(VX_GLOBAL const double *f, VX_GLOBAL float *out, long n) {
    VX_FOR(i, n) out[i] = (float)sqrt(f[i]);
}

VX_KERNEL vx_sqdt_emit_f32sq(VX_GLOBAL const double *f, VX_GLOBAL float *out, long n) {
    VX_FOR(i, n) out[i] = (float)f[i];
}

VX_KERNEL vx_sqdt_emit_u32(VX_GLOBAL const double *f, VX_GLOBAL uint *out, long n) {
    VX_FOR(i, n) out[i] = f[i] == INFINITY ? 4294967295u : (uint)f[i];
}

VX_KERNEL vx_sqdt_emit_thr(VX_GLOBAL const double *f, VX_GLOBAL uchar *out, long n, double thr,
                           int invert) {
    VX_FOR(i, n) out[i] = (uchar)((f[i] <= thr) ^ (invert != 0));
}
