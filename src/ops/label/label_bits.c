/* voxa label, the bitmap union for byte masks.
 *
 * The run sweep in label.c meets each pair of overlapping runs of two
 * neighbouring lines after a few data-dependent branches; on noisy masks
 * (50 % random voxels: ~voxels/4 runs) those branches are coin flips and
 * the mispredictions dominate the whole labelling. For bool/uint8 masks the
 * fill pass keeps each line as 64-bit words (foreground bits, run-start bits,
 * runs started before each word), and this file finds the pairs with word
 * arithmetic instead:
 *
 *   for a shift dx, C = A & (B shifted by dx): bit x set iff voxel x of line
 *   a and voxel x+dx of line b are both foreground. A maximal segment of C
 *   lies inside one run of a and one run of b, and each overlapping pair of
 *   runs gives exactly one segment (two intervals meet in one interval). So
 *   the segment starts, C & ~(C << 1), are the pairs; the run holding voxel
 *   x is pc[w] + popcount(starts[w] & bits 0..x) - 1 within its line.
 *
 *   With dx = 0 and diagonal shifts allowed (connectivity 2, 3), one pass
 *   suffices: overlapping runs give the segments of A & B, and disjoint runs
 *   within reach touch diagonally, a run of a ending where one of b starts
 *   one voxel further (or the mirror), found as ends/starts bit masks.
 *
 * The only loop branch left per pair is the set-bit loop's; the union
 * caches the current run's root. Cost per line pair: O(words + pairs).
 * Built twice, with and without the popcnt instruction, chosen once, for
 * each width of the union-find table (label_uf.h).
 *
 * The union needs only these bitmaps, so this path keeps no run table: the
 * output pass rebuilds each line's runs from its bitmap
 * (voxa__label_runs_from_bits, below), saving 8 bytes per run. */
#include "label_internal.h"
#include "label_uf.h"

/* bits 0..x inclusive (x = 63: all; 2 << 63 wraps to 0 in unsigned) */
#define LOW(x) ((2ULL << (x)) - 1)

/* Unite the run of line a holding bit x of word w with the run of line b
 * holding voxel 64w + x + dx. The root of the last run of a is cached (only
 * this function links, and a link updates the cache). */
#define PAIR(w, x, dx)                                                         \
    do {                                                                       \
        int64_t ia = a->first + a->pc[w] +                                     \
                     __builtin_popcountll(a->starts[w] & LOW(x)) - 1;          \
        int64_t y_ = 64 * (w) + (x) + (dx), wy_ = y_ >> 6;                     \
        int64_t ib = b->first + b->pc[wy_] +                                   \
                     __builtin_popcountll(b->starts[wy_] & LOW(y_ & 63)) - 1;  \
        if (ia != last_a) {                                                    \
            last_a = ia;                                                       \
            ri = uf_find(parent, ia);                                          \
        }                                                                      \
        ri = uf_link(parent, ri, ib);                                          \
    } while (0)

/* Each set bit of `m` (in word w) is one pair at shift dx. */
#define PAIRS(m, w, dx)                                                        \
    for (uint64_t m_ = (m); m_; m_ &= m_ - 1) PAIR(w, __builtin_ctzll(m_), dx)

/* Masks with dx = 0 and a neighbour shift ({-1,0}, {0,+1}, {-1,0,+1}): a
 * pair of runs is within reach iff the runs overlap (one segment of A & B)
 * or they are disjoint and touch diagonally: a run of a ends at x and a run
 * of b starts at x + 1 (ends_a & B[x+1] & !B[x]), or a run of b ends at
 * x - 1 and a run of a starts at x (starts_a & B[x-1] & !B[x]). One pass
 * over the words finds every pair exactly once. Other masks ({-1}, {0},
 * {+1}, {-1,+1}) take one pass per shift: C = A & B[x+dx], whose segment
 * starts are exactly the pairs at that shift. */
#define UNITE_BITS_PASS(BW)                                                    \
    if (mask == 3 || mask == 6 || mask == 7) {                                 \
        uint64_t carry = 0;                                                    \
        for (int64_t w = 0; w < nw; w++) {                                     \
            uint64_t aw = a->bits[w], bw = BW(w);                         \
            uint64_t c = aw & bw;                                              \
            uint64_t seg = c & ~((c << 1) | carry);                            \
            carry = c >> 63;                                                   \
            uint64_t e1 = 0, s1 = 0;                                           \
            if (mask & 4) {                                                    \
                uint64_t anext = w + 1 < nw ? a->bits[w + 1] << 63 : 0;        \
                uint64_t bnext = (bw >> 1) | (w + 1 < nw ? BW(w + 1) << 63 : 0); \
                uint64_t ends = aw & ~((aw >> 1) | anext);                     \
                e1 = ends & bnext & ~bw;                                       \
            }                                                                  \
            if (mask & 1) {                                                    \
                uint64_t bprev = (bw << 1) | (w > 0 ? BW(w - 1) >> 63 : 0);    \
                s1 = a->starts[w] & bprev & ~bw;                               \
            }                                                                  \
            /* one loop for the three kinds (seg, s1, e1 are disjoint but for \
             * one-voxel runs of a touching b on both sides: `both`) */        \
            uint64_t both = e1 & s1;                                           \
            e1 &= ~s1;                                                         \
            for (uint64_t m_ = seg | s1 | e1; m_; m_ &= m_ - 1) {              \
                int x_ = __builtin_ctzll(m_);                                  \
                int dx_ = (int)((e1 >> x_) & 1) - (int)((s1 >> x_) & 1);       \
                PAIR(w, x_, dx_);                                              \
            }                                                                  \
            PAIRS(both, w, 1);                                                 \
        }                                                                      \
    } else {                                                                   \
        for (int dxi = 0; dxi < 3; dxi++) {                                    \
            if (!(mask & (1u << dxi))) continue;                               \
            int dx = dxi - 1;                                                  \
            uint64_t carry = 0;                                                \
            for (int64_t w = 0; w < nw; w++) {                                 \
                uint64_t bw = BW(w);                                      \
                if (dx > 0) bw = (bw >> 1) | (w + 1 < nw ? BW(w + 1) << 63 : 0); \
                else if (dx < 0) bw = (bw << 1) | (w > 0 ? BW(w - 1) >> 63 : 0); \
                uint64_t c = a->bits[w] & bw;                                  \
                uint64_t seg = c & ~((c << 1) | carry);                        \
                carry = c >> 63;                                               \
                PAIRS(seg, w, dx);                                             \
            }                                                                  \
        }                                                                      \
    }

/* Line b's word w, without the voxels its covers make redundant. */
#define BW_PLAIN(w) (b->bits[w])
#define BW_COVER(w) (b->bits[w] & ~(b->cover1[w] | b->cover2[w]))

#define UNITE_BITS_BODY                                                        \
    int64_t last_a = -1, ri = -1;                                              \
    if (b->cover1) {                                                           \
        UNITE_BITS_PASS(BW_COVER)                                              \
    } else {                                                                   \
        UNITE_BITS_PASS(BW_PLAIN)                                              \
    }

/* One kernel per table width (T) and instruction set (ATTR). */
#define UNITE_BITS_FN(name, T, ATTR)                                           \
    ATTR static void name(void *table, int64_t nw, const voxa__line_bits *a,   \
                          const voxa__line_bits *b, unsigned mask) {           \
        T *parent = table;                                                     \
        UNITE_BITS_BODY                                                        \
    }
UNITE_BITS_FN(unite_bits_generic64, int64_t, )
UNITE_BITS_FN(unite_bits_generic32, uint32_t, )
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define POPCNT __attribute__((target("popcnt")))
UNITE_BITS_FN(unite_bits_popcnt64, int64_t, POPCNT)
UNITE_BITS_FN(unite_bits_popcnt32, uint32_t, POPCNT)
#undef POPCNT
#endif

int voxa__label_keep_runs = 0;

/* A run starts at a set bit after a clear one and ends before the next
 * clear bit: the boundaries are the set bits of m ^ (m << 1 | carry), in
 * pairs (start, end), exactly as the fill pass found them (bits past n are
 * clear: the fill pass pads the last word with zeros). */
int64_t voxa__label_runs_from_bits(const uint64_t *bits, int64_t nw, int64_t n, voxa__run *dst) {
    uint32_t *b = (uint32_t *)(void *)dst;
    int64_t c = 0;
    uint64_t carry = 0;
    for (int64_t w = 0; w < nw; w++) {
        uint64_t m = bits[w], x = m ^ ((m << 1) | carry);
        carry = m >> 63;
        while (x) {
            b[c++] = (uint32_t)(64 * w + __builtin_ctzll(x));
            x &= x - 1;
        }
    }
    if (carry) b[c++] = (uint32_t)n;
    return c / 2;
}

voxa__unite_bits_fn voxa__label_unite_bits_kernel(int wide) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("popcnt")) return wide ? unite_bits_popcnt64 : unite_bits_popcnt32;
#endif
    return wide ? unite_bits_generic64 : unite_bits_generic32;
}
