/* ROI extraction (a gather) and paste-back (OVERWRITE) on the GPU.
 *
 * Extraction: one work-item per line (last axis) of the (n, ext...) patch
 * array; it splits its index into (row, position in the patch), maps each
 * coordinate axis through numpy.pad's rule for the mode (the same
 * map_index as roi_extract.c: constant -> fill, nearest -> clamp, reflect
 * -> period 2(n-1) without repeating the edge) and copies one element.
 * Elements are moved as unsigned integers of their width (1, 2, 4, 8 bytes),
 * so every dtype is one of four kernels and floats are copied bit for bit.
 *
 * Paste OVERWRITE, "the later row wins": pass 1 claims every target voxel
 * for the highest row covering it (atomic max on an int per voxel), pass 2
 * writes the voxels a row won. Outside voxels (mode crop) are skipped.
 *
 * geom (long): [0] ndim, [1] k, [2] mode, [3] elements per patch,
 * [4..12) array shape, [12..20) patch extent per axis, [20..28) element
 * strides of the C-contiguous array. Corners: n x k, after centring/clip. */

VX_FUNC long roi_map(long j, long n, long mode) {
    if (j >= 0 && j < n) return j;
    if (mode == 2) return -1;               /* constant */
    if (mode == 3) return j < 0 ? 0 : n - 1; /* nearest */
    if (n == 1) return 0;                   /* reflect */
    long period = 2 * (n - 1);
    long r = j % period;
    if (r < 0) r += period;
    return r < n ? r : period - r;
}

/* Patch-array line t (all but the last axis): its row *r, and the offset
 * in the array of the line's first element before the last axis; returns
 * 0 when an axis other than the last falls outside (the whole line is the
 * fill value, or skipped for paste). */
VX_FUNC int roi_line(long t, VX_GLOBAL const long *corners, VX_GLOBAL const long *geom,
                     long *r, long *off) {
    long nd = geom[0], k = geom[1], mode = geom[2], last = nd - 1;
    long lines = geom[3] / geom[12 + last]; /* lines per patch */
    long row = t / lines, w = t - row * lines, o = 0;
    int inside = 1;
    for (long d = last - 1; d >= 0; d--) {
        long e = geom[12 + d];
        long wd = w % e;
        w /= e;
        long c = wd;
        if (d < k) {
            c = roi_map(corners[row * k + d] + wd, geom[4 + d], mode);
            if (c < 0) inside = 0;
        }
        o += c * geom[20 + d];
    }
    *r = row;
    *off = o;
    return inside;
}

/* First source index on the last axis of a line of row r when the whole
 * line lies inside the array there (then element x is at it + x), else -1. */
VX_FUNC long roi_run(long r, VX_GLOBAL const long *corners, VX_GLOBAL const long *geom) {
    long nd = geom[0], k = geom[1], last = nd - 1;
    if (last >= k) return 0;
    long c = corners[r * k + last];
    return c >= 0 && c <= geom[4 + last] - geom[12 + last] ? c : -1;
}

/* Source index on the last axis of element x of a line of row r (-1: outside). */
VX_FUNC long roi_last(long x, long r, VX_GLOBAL const long *corners, VX_GLOBAL const long *geom) {
    long nd = geom[0], k = geom[1], last = nd - 1;
    if (last >= k) return x;
    return roi_map(corners[r * k + last] + x, geom[4 + last], geom[2]);
}

/* One work-item per line of the patch array (lines = elements / extent of
 * the last axis): index arithmetic once per line, then a run of copies. */
#define VX_ROI_KERNELS(T, W)                                                             \
    VX_KERNEL vx_roi_extract_##W(VX_GLOBAL T *out, VX_GLOBAL const T *in,                \
                                 VX_GLOBAL const long *corners, VX_GLOBAL const long *geom, \
                                 long lines, ulong fill) {                              \
        long e = geom[12 + geom[0] - 1];                                                 \
        VX_FOR(t, lines) {                                                               \
            long r, off;                                                                 \
            int inside = roi_line(t, corners, geom, &r, &off);                           \
            VX_GLOBAL T *dst = out + t * e;                                              \
            long c0 = inside ? roi_run(r, corners, geom) : -1;                           \
            if (c0 >= 0) {                                                               \
                VX_GLOBAL const T *src = in + off + c0;                                  \
                for (long x = 0; x < e; x++) dst[x] = src[x];                            \
                continue;                                                                \
            }                                                                            \
            for (long x = 0; x < e; x++) {                                               \
                long c = inside ? roi_last(x, r, corners, geom) : -1;                    \
                dst[x] = c < 0 ? (T)fill : in[off + c];                                  \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
    VX_KERNEL vx_roi_paste_##W(VX_GLOBAL T *vol, VX_GLOBAL const T *pat,                 \
                               VX_GLOBAL const int *win, VX_GLOBAL const long *corners,  \
                               VX_GLOBAL const long *geom, long lines) {                 \
        long e = geom[12 + geom[0] - 1];                                                 \
        VX_FOR(t, lines) {                                                               \
            long r, off;                                                                 \
            if (!roi_line(t, corners, geom, &r, &off)) continue;                         \
            for (long x = 0; x < e; x++) {                                               \
                long c = roi_last(x, r, corners, geom);                                  \
                if (c >= 0 && win[off + c] == (int)r) vol[off + c] = pat[t * e + x];     \
            }                                                                            \
        }                                                                                \
    }
VX_ROI_KERNELS(uchar, 1)
VX_ROI_KERNELS(ushort, 2)
VX_ROI_KERNELS(uint, 4)
VX_ROI_KERNELS(ulong, 8)

VX_KERNEL vx_roi_claim(VX_GLOBAL int *win, VX_GLOBAL const long *corners,
                       VX_GLOBAL const long *geom, long lines) {
    long e = geom[12 + geom[0] - 1];
    VX_FOR(t, lines) {
        long r, off;
        if (!roi_line(t, corners, geom, &r, &off)) continue;
        for (long x = 0; x < e; x++) {
            long c = roi_last(x, r, corners, geom);
            if (c >= 0) vx_max32(&win[off + c], r);
        }
    }
}
