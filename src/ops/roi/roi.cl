/* ROI extraction (a gather) and paste-back (OVERWRITE) on the GPU.
 *
 * Extraction: one work-item per output element of the (n, ext...) patch
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

/* Offset in the array of element i of the patch array, or -1 when it
 * falls outside (the fill value for extract, skipped for paste). */
VX_FUNC long roi_source(long i, VX_GLOBAL const long *corners, VX_GLOBAL const long *geom,
                        long *row) {
    long nd = geom[0], k = geom[1], mode = geom[2], P = geom[3];
    long r = i / P, w = i - r * P, off = 0, out = 0;
    for (long d = nd - 1; d >= 0; d--) {
        long e = geom[12 + d];
        long wd = w % e;
        w /= e;
        long c = wd;
        if (d < k) {
            c = roi_map(corners[r * k + d] + wd, geom[4 + d], mode);
            if (c < 0) out = 1;
        }
        off += c * geom[20 + d];
    }
    *row = r;
    return out ? -1 : off;
}

#define VX_ROI_KERNELS(T, W)                                                             \
    VX_KERNEL vx_roi_extract_##W(VX_GLOBAL T *out, VX_GLOBAL const T *in,                \
                                 VX_GLOBAL const long *corners, VX_GLOBAL const long *geom, \
                                 long total, ulong fill) {                              \
        VX_FOR(i, total) {                                                               \
            long row;                                                                    \
            long off = roi_source(i, corners, geom, &row);                               \
            out[i] = off < 0 ? (T)fill : in[off];                                        \
        }                                                                                \
    }                                                                                    \
    VX_KERNEL vx_roi_paste_##W(VX_GLOBAL T *vol, VX_GLOBAL const T *pat,                 \
                               VX_GLOBAL const int *win, VX_GLOBAL const long *corners,  \
                               VX_GLOBAL const long *geom, long total) {                 \
        VX_FOR(i, total) {                                                               \
            long row;                                                                    \
            long off = roi_source(i, corners, geom, &row);                               \
            if (off >= 0 && win[off] == (int)row) vol[off] = pat[i];                     \
        }                                                                                \
    }
VX_ROI_KERNELS(uchar, 1)
VX_ROI_KERNELS(ushort, 2)
VX_ROI_KERNELS(uint, 4)
VX_ROI_KERNELS(ulong, 8)

VX_KERNEL vx_roi_claim(VX_GLOBAL int *win, VX_GLOBAL const long *corners,
                       VX_GLOBAL const long *geom, long total) {
    VX_FOR(i, total) {
        long row;
        long off = roi_source(i, corners, geom, &row);
        if (off >= 0) vx_max32(&win[off], row);
    }
}
