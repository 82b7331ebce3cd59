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
 * The only loop branch left per pair is the set-bit loop's; the union
 * caches the current run's root. Cost per line pair: O(words + pairs).
 * Built twice, with and without the popcnt instruction, chosen once. */
#include "label_internal.h"

static inline int64_t find(int64_t *parent, int64_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving; parents only decrease */
        x = parent[x];
    }
    return x;
}

/* bits 0..x inclusive (x = 63: all; 2 << 63 wraps to 0 in unsigned) */
#define LOW(x) ((2ULL << (x)) - 1)

#define UNITE_BITS_BODY                                                        \
    int64_t last_a = -1, ri = -1;                                              \
    for (int dxi = 0; dxi < 3; dxi++) {                                        \
        if (!(mask & (1u << dxi))) continue;                                   \
        int dx = dxi - 1;                                                      \
        uint64_t carry = 0;                                                    \
        for (int64_t w = 0; w < nw; w++) {                                     \
            uint64_t bw = b->bits[w];                                          \
            if (dx > 0) bw = (bw >> 1) | (w + 1 < nw ? b->bits[w + 1] << 63 : 0); \
            else if (dx < 0) bw = (bw << 1) | (w > 0 ? b->bits[w - 1] >> 63 : 0); \
            uint64_t c = a->bits[w] & bw;                                      \
            uint64_t seg = c & ~((c << 1) | carry);                            \
            carry = c >> 63;                                                   \
            while (seg) {                                                      \
                int x = __builtin_ctzll(seg);                                  \
                seg &= seg - 1;                                                \
                int64_t ia = a->first + a->pc[w] +                             \
                             __builtin_popcountll(a->starts[w] & LOW(x)) - 1;  \
                int64_t y = 64 * w + x + dx, wy = y >> 6;                      \
                int64_t ib = b->first + b->pc[wy] +                            \
                             __builtin_popcountll(b->starts[wy] & LOW(y & 63)) - 1; \
                if (ia != last_a) {                                            \
                    last_a = ia;                                               \
                    ri = find(parent, ia);                                     \
                }                                                              \
                int64_t rk = parent[ib];                                       \
                if (rk == ri) continue;                                        \
                rk = find(parent, rk);                                         \
                if (rk < ri) {                                                 \
                    parent[ri] = rk;                                           \
                    ri = rk;                                                   \
                } else if (ri < rk) {                                          \
                    parent[rk] = ri;                                           \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }

static void unite_bits_generic(int64_t *parent, int64_t nw, const voxa__line_bits *a,
                               const voxa__line_bits *b, unsigned mask) {
    UNITE_BITS_BODY
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
__attribute__((target("popcnt"))) static void
unite_bits_popcnt(int64_t *parent, int64_t nw, const voxa__line_bits *a,
                  const voxa__line_bits *b, unsigned mask) {
    UNITE_BITS_BODY
}
#endif

voxa__unite_bits_fn voxa__label_unite_bits_kernel(void) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_cpu_init();
    if (__builtin_cpu_supports("popcnt")) return unite_bits_popcnt;
#endif
    return unite_bits_generic;
}
