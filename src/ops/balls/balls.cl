/* Balls around points on the GPU: one work-item per (point, line) of the
 * point's bounding box, the line running along the last axis.
 *
 * The rule is balls.c's, to the last rounding: voxel v is inside the ball
 * of point p iff 0 + t_0 + t_1 + t_2 <= r^2 with t_d = ((v_d - p_d) s_d)^2,
 * in double precision, summed left to right, no fused multiply-add (1-D and
 * 2-D arrays are padded to 3-D with leading axes of length 1 where the
 * point sits at 0: the padded terms are +0 and leave the sum unchanged).
 * A line's partial sum t_0 + t_1 is fixed, and the voxels of the line
 * inside the ball are an interval found from a sqrt estimate corrected by
 * the exact test at both ends (vx_run_bounds = balls.c's run_bounds).
 *
 * The host computes each point's box (axes 0 and 1) and the prefix sum of
 * its line counts; work-item t finds its point by binary search.
 * Mask: the line's run is set to 1 (concurrent writers write the same 1).
 * Owner: pass 1 takes the atomic minimum of the distance's bits per voxel
 * (non-negative doubles order as their bits), pass 2 the minimum point
 * index among the points at that distance: the nearest point, ties to the
 * lower index, exactly balls.c's compare-and-set outcome. */

VX_FUNC double vx_term(double v, double p, double s) {
    double t = (v - p) * s;
    return t * t;
}

/* Interval [*lo, *hi] of x in [0, n) with partial + term(x) <= r2 (lo > hi
 * when empty). */
VX_FUNC void vx_run_bounds(double partial, double p, double s, double r2, long n, long *lo,
                           long *hi) {
    double rem = r2 - partial;
    double hw = rem > 0 ? sqrt(rem) / s : 0;
    double flo = ceil(p - hw), fhi = floor(p + hw);
    if (flo < -1) flo = -1;
    if (fhi > (double)n) fhi = (double)n;
    if (flo > (double)n || fhi < -1 || flo > fhi + 1) {
        *lo = 1;
        *hi = 0;
        return;
    }
    long a = (long)flo, b = (long)fhi;
    while (a - 1 >= 0 && partial + vx_term((double)(a - 1), p, s) <= r2) a--;
    while (a <= b && !(partial + vx_term((double)a, p, s) <= r2)) a++;
    while (b + 1 < n && partial + vx_term((double)(b + 1), p, s) <= r2) b++;
    while (b >= a && !(partial + vx_term((double)b, p, s) <= r2)) b--;
    if (a < 0) a = 0;
    if (b > n - 1) b = n - 1;
    *lo = a;
    *hi = b;
}

/* Line t: its point *k, the line's first voxel offset *base and partial sum;
 * returns 0 when the line misses the ball. geom: sz sy sx. sp: s0 s1 s2. */
VX_FUNC int vx_ball_line(long t, VX_GLOBAL const long *off, long npts,
                         VX_GLOBAL const long *box, VX_GLOBAL const double *pts,
                         VX_GLOBAL const double *r2s, VX_GLOBAL const double *sp, long sy,
                         long sx, long *k, long *base, double *partial) {
    long a = 0, b = npts - 1;
    while (a < b) { /* last point with off[point] <= t */
        long m = a + (b - a + 1) / 2;
        if (off[m] <= t) a = m;
        else b = m - 1;
    }
    long l = t - off[a];
    long ny = box[4 * a + 3] - box[4 * a + 2] + 1;
    long z = box[4 * a] + l / ny, y = box[4 * a + 2] + l % ny;
    double part = 0.0;
    part = part + vx_term((double)z, pts[3 * a], sp[0]);
    part = part + vx_term((double)y, pts[3 * a + 1], sp[1]);
    *k = a;
    *base = (z * sy + y) * sx;
    *partial = part;
    return part <= r2s[a];
}

VX_KERNEL vx_balls_mask(VX_GLOBAL uchar *out, VX_GLOBAL const long *off, long npts,
                        VX_GLOBAL const long *box, VX_GLOBAL const double *pts,
                        VX_GLOBAL const double *r2s, VX_GLOBAL const double *sp, long sy,
                        long sx, long lines) {
    VX_FOR(t, lines) {
        long k, base, lo, hi;
        double part;
        if (!vx_ball_line(t, off, npts, box, pts, r2s, sp, sy, sx, &k, &base, &part)) continue;
        vx_run_bounds(part, pts[3 * k + 2], sp[2], r2s[k], sx, &lo, &hi);
        for (long x = lo; x <= hi; x++) out[base + x] = 1;
    }
}

/* pass 0: best = min distance bits; pass 1: own = min index at that distance. */
VX_KERNEL vx_balls_owner(VX_GLOBAL long *best, VX_GLOBAL long *own, VX_GLOBAL const long *off,
                         long npts, VX_GLOBAL const long *box, VX_GLOBAL const double *pts,
                         VX_GLOBAL const double *r2s, VX_GLOBAL const double *sp, long sy,
                         long sx, long lines, long pass) {
    VX_FOR(t, lines) {
        long k, base, lo, hi;
        double part;
        if (!vx_ball_line(t, off, npts, box, pts, r2s, sp, sy, sx, &k, &base, &part)) continue;
        double px = pts[3 * k + 2], s = sp[2];
        vx_run_bounds(part, px, s, r2s[k], sx, &lo, &hi);
        for (long x = lo; x <= hi; x++) {
            long bits = vx_dbits(part + vx_term((double)x, px, s));
            if (pass == 0) vx_min64(&best[base + x], bits);
            else if (best[base + x] == bits) vx_min64(&own[base + x], k);
        }
    }
}
