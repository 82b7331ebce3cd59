/* Connected-component labelling on the GPU: union-find over voxels with
 * 64-bit indices, then scipy's raster numbering.
 *
 * After Playne & Hawick, "A New Algorithm for Parallel Connected-Component
 * Labelling on GPUs" (IEEE TPDS 2018): every foreground voxel starts as its
 * own root (L[i] = i, background -1); every voxel unites itself with its
 * foreground neighbours that come before it in raster order (at most 13 in
 * 3-D, the structure's bits); a union links the larger root under the
 * smaller with a compare-and-swap that only succeeds while the larger one
 * is still a root, and retries from the new parent otherwise. Parents are
 * always smaller than their children, so each component's root is its
 * first voxel in raster (C) order whatever order the unions ran in.
 *
 *   neighbours before voxel c (bits 0..12 = index (dz+1)*9 + (dy+1)*3 + dx+1):
 *       z-1:  0  1  2     z:   9 10 11
 *             3  4  5         12  c
 *             6  7  8
 *
 * Numbering: component number = 1 + number of roots before its root in
 * raster order, which is exactly scipy.ndimage.label's numbering. Roots are
 * counted per chunk of voxels, the counts are scanned on the device
 * (vx_label_scan: blocks scanned serially, their sums scanned the same way
 * one level up, then added back down; only the total goes to the host),
 * each chunk then writes -(number + 1) into its roots,
 * and the final pass gives every voxel its root's number in the output
 * dtype (1, 2, 4 or 8 bytes).
 *
 * Cost: O(V) work-items per pass, unions nearly constant each; memory 1 + 8
 * bytes per voxel plus the output. */

/* Root of i, with path splitting: each visited voxel is pointed at its
 * grandparent. A plain store is safe: only non-roots are rewritten, with an
 * ancestor, and the compare-and-swap in uf_union only ever acts on roots. */
VX_FUNC long uf_find(VX_GLOBAL long *L, long i) {
    volatile VX_GLOBAL long *V = (volatile VX_GLOBAL long *)L;
    long p = V[i];
    while (p != i) {
        long gp = V[p];
        if (gp != p) V[i] = gp;
        i = p;
        p = gp;
    }
    return i;
}

/* Root of i without writing: the compress pass must not split paths, or a
 * stale split (V[i] = a grandparent read before i's own thread stored the
 * root in V[i]) can undo that store and leave a non-root parent behind. */
VX_FUNC long uf_root(VX_GLOBAL const long *L, long i) {
    volatile VX_GLOBAL const long *V = (volatile VX_GLOBAL const long *)L;
    long p = V[i];
    while (p != i) {
        i = p;
        p = V[i];
    }
    return i;
}

VX_FUNC void uf_union(VX_GLOBAL long *L, long a, long b) {
    for (;;) {
        a = uf_find(L, a);
        b = uf_find(L, b);
        if (a == b) return;
        if (a > b) {
            long t = a;
            a = b;
            b = t;
        }
        long old = vx_cas64(&L[b], b, a);
        if (old == b) return;
        b = old;
    }
}

VX_KERNEL vx_label_init(VX_GLOBAL const uchar *m, VX_GLOBAL long *L, long n) {
    VX_FOR(i, n) L[i] = m[i] ? i : -1;
}

VX_KERNEL vx_label_merge(VX_GLOBAL const uchar *m, VX_GLOBAL long *L, long sz, long sy,
                         long sx, int mask) {
    long n = sz * sy * sx;
    VX_FOR(i, n) {
        if (!m[i]) continue;
        long x = i % sx, t = i / sx, y = t % sy, z = t / sy;
        for (int b = 0; b < 13; b++) {
            if (!((mask >> b) & 1)) continue;
            long dz = b / 9 - 1, dy = (b / 3) % 3 - 1, dx = b % 3 - 1;
            long nz = z + dz, ny = y + dy, nx = x + dx;
            if (nz < 0 || ny < 0 || ny >= sy || nx < 0 || nx >= sx) continue;
            long j = (nz * sy + ny) * sx + nx;
            if (m[j]) uf_union(L, i, j);
        }
    }
}

VX_KERNEL vx_label_compress(VX_GLOBAL long *L, long n) {
    VX_FOR(i, n) {
        if (L[i] >= 0) L[i] = uf_root(L, i); /* only thread i writes L[i] */
    }
}

VX_KERNEL vx_label_count(VX_GLOBAL const long *L, long n, long chunk, VX_GLOBAL long *counts,
                         long nchunks) {
    VX_FOR(t, nchunks) {
        long end = (t + 1) * chunk < n ? (t + 1) * chunk : n, c = 0;
        for (long i = t * chunk; i < end; i++) c += L[i] == i;
        counts[t] = c;
    }
}

/* One level of the exclusive scan of a[off, off + n): block t of `block`
 * items is scanned serially and its sum stored in s[soff + t]. */
VX_KERNEL vx_label_scan(VX_GLOBAL long *a, long off, long n, long block, VX_GLOBAL long *s,
                        long soff) {
    VX_FOR(t, (n + block - 1) / block) {
        long end = (t + 1) * block < n ? (t + 1) * block : n, sum = 0;
        for (long i = t * block; i < end; i++) {
            long v = a[off + i];
            a[off + i] = sum;
            sum += v;
        }
        s[soff + t] = sum;
    }
}

/* The way back down: block t's items get the scanned sum of the blocks
 * before it (s, already scanned, holds it at soff + t). */
VX_KERNEL vx_label_scan_add(VX_GLOBAL long *a, long off, long n, long block,
                            VX_GLOBAL const long *s, long soff) {
    VX_FOR(i, n) a[off + i] += s[soff + i / block];
}

VX_KERNEL vx_label_rank(VX_GLOBAL long *L, long n, long chunk, VX_GLOBAL const long *base,
                        long nchunks) {
    VX_FOR(t, nchunks) {
        long end = (t + 1) * chunk < n ? (t + 1) * chunk : n, r = base[t];
        for (long i = t * chunk; i < end; i++)
            if (L[i] == i) L[i] = -(++r + 1);
    }
}

#define VX_LABEL_FINAL(T, W)                                                          \
    VX_KERNEL vx_label_final_##W(VX_GLOBAL const long *L, VX_GLOBAL T *out, long n) {  \
        VX_FOR(i, n) {                                                                \
            long v = L[i];                                                            \
            long lab = v == -1 ? 0 : v < -1 ? -v - 1 : -L[v] - 1;                     \
            out[i] = (T)lab;                                                          \
        }                                                                             \
    }
/* Tiled runs (label_gpu_tiled.c): a tile's local number n (1..k) becomes
 * map[n - 1], the final number of its merged component. */
#define VX_LABEL_MAPPED(T, W)                                                           \
    VX_KERNEL vx_label_mapped_##W(VX_GLOBAL const long *L, VX_GLOBAL const long *map,    \
                                  VX_GLOBAL T *out, long n) {                           \
        VX_FOR(i, n) {                                                                  \
            long v = L[i];                                                              \
            long lab = v == -1 ? 0 : v < -1 ? -v - 1 : -L[v] - 1;                       \
            out[i] = (T)(lab ? map[lab - 1] : 0);                                       \
        }                                                                               \
    }
VX_LABEL_MAPPED(uchar, 1)
VX_LABEL_MAPPED(ushort, 2)
VX_LABEL_MAPPED(uint, 4)
VX_LABEL_MAPPED(ulong, 8)

VX_LABEL_FINAL(uchar, 1)
VX_LABEL_FINAL(ushort, 2)
VX_LABEL_FINAL(uint, 4)
VX_LABEL_FINAL(ulong, 8)
