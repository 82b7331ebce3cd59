/* voxa label, the typed passes: run extraction along the last axis and the
 * final output write.
 *
 * Run extraction reads one line of the input (any dtype, any stride) and
 * emits its foreground runs [s, e) in increasing x. "Foreground" is v != 0
 * in the input's own type, as scipy.ndimage.label tests it: NaN is
 * foreground, -0.0 is background. Types are folded where the test allows it:
 * for integers a non-zero value is a non-zero bit pattern, so signed and
 * unsigned share a kernel (bool/u8/i8, u16/i16, u32/i32, u64/i64); floats
 * keep their own (-0.0 has a non-zero pattern). The same function counts
 * (dst == NULL, the sizing pass) and stores (the fill pass), so both passes
 * see exactly the same runs.
 *
 * Contiguous lines take a loop with a compile-time stride and skip 32 zero
 * bytes at a time while outside a run (an all-zero bit pattern is 0 in every
 * type), which is what makes sparse masks (W1: ~0.1 % foreground) cost about
 * a memory read. Strided lines take the same loop with a run-time stride.
 *
 * The output write fills each line once: zeros between runs (memset when
 * contiguous) and each run's final label. Label types are folded by size
 * (int8/uint8, 16, 32, 64 bits): labels are in [0, max of the dtype], so the
 * unsigned store of the same width has the same bits.
 *
 * Cost: one read of the input per pass (two passes), one write of the
 * output; no allocation. */
#include "label_internal.h"

#include <string.h>

/* Counting: boundaries (a foreground voxel after background, or the reverse,
 * including the line's ends) are counted without a branch; runs are half of
 * them. With merge == 0 every foreground voxel is a run. Contiguous lines go
 * in chunks of 32 elements: an all-zero chunk after background is skipped
 * with a few word tests (sparse masks), others take a loop the compiler
 * vectorises. */
#define COUNT_BODY(T, LOAD, CONTIG)                                            \
    int64_t c = 0, i = 0;                                                      \
    if (!merge) {                                                              \
        for (; i < n; i++) c += LOAD(i) != 0;                                  \
        return c;                                                              \
    }                                                                          \
    int prev = 0;                                                              \
    if (CONTIG) {                                                              \
        for (; i + 32 <= n; i += 32) {                                         \
            if (!prev) {                                                       \
                uint64_t w[4 * sizeof(T)], any = 0;                            \
                memcpy(w, p + i * (int64_t)sizeof(T), sizeof w);               \
                for (size_t k = 0; k < 4 * sizeof(T); k++) any |= w[k];        \
                if (!any) continue;                                            \
            }                                                                  \
            unsigned cc = (LOAD(i) != 0) != prev;                              \
            for (int k = 1; k < 32; k++)                                       \
                cc += (LOAD(i + k) != 0) != (LOAD(i + k - 1) != 0);            \
            c += cc;                                                           \
            prev = LOAD(i + 31) != 0;                                          \
        }                                                                      \
    }                                                                          \
    for (; i < n; i++) {                                                       \
        int f = LOAD(i) != 0;                                                  \
        c += f != prev;                                                        \
        prev = f;                                                              \
    }                                                                          \
    return (c + prev) / 2;

/* Filling: the boundary positions are stored as a flat uint32 list, which is
 * exactly the (s, e) layout of voxa__run. The loop stores at the current slot
 * for every voxel and advances only on a boundary (no branch to mispredict on
 * noisy masks); so it also writes the slot just past the line's runs, which
 * the caller guarantees is its own (see `safe`). Outside a run, contiguous
 * lines skip 32 zero bytes at a time. */
#define FILL_BODY(T, LOAD, CONTIG)                                             \
    uint32_t *b = (uint32_t *)(void *)dst;                                     \
    int64_t c = 0, i = 0;                                                      \
    if (!merge) {                                                              \
        for (; i < n; i++) {                                                   \
            b[2 * c] = (uint32_t)i;                                            \
            b[2 * c + 1] = (uint32_t)i + 1;                                    \
            c += LOAD(i) != 0;                                                 \
        }                                                                      \
        return c;                                                              \
    }                                                                          \
    int prev = 0;                                                              \
    while (i < n) {                                                            \
        if (CONTIG && !prev) {                                                 \
            const int64_t per = 32 / (int64_t)sizeof(T);                       \
            while (i + per <= n) {                                             \
                uint64_t w[4];                                                 \
                memcpy(w, p + i * (int64_t)sizeof(T), 32);                     \
                if (w[0] | w[1] | w[2] | w[3]) break;                          \
                i += per;                                                      \
            }                                                                  \
        }                                                                      \
        int64_t stop = n - i > 256 ? i + 256 : n;                              \
        for (; i < stop; i++) {                                                \
            int f = LOAD(i) != 0;                                              \
            b[c] = (uint32_t)i;                                                \
            c += f ^ prev;                                                     \
            prev = f;                                                          \
        }                                                                      \
    }                                                                          \
    if (prev) b[c++] = (uint32_t)n;                                            \
    return c / 2;

/* The same with a branch per run and no store past the line's runs: used
 * for a line whose next slot belongs to another thread. */
#define SAFE_BODY(LOAD)                                                        \
    int64_t c = 0, i = 0;                                                      \
    while (i < n) {                                                            \
        while (i < n && !(LOAD(i) != 0)) i++;                                  \
        if (i >= n) break;                                                     \
        int64_t s = i++;                                                       \
        if (merge)                                                             \
            while (i < n && LOAD(i) != 0) i++;                                 \
        dst[c].s = (uint32_t)s;                                                \
        dst[c].e = (uint32_t)i;                                                \
        c++;                                                                   \
    }                                                                          \
    return c;

#define SCAN_BODY(T, LOAD, CONTIG)                                             \
    if (n == 0) return 0;                                                      \
    if (!dst) {                                                                \
        COUNT_BODY(T, LOAD, CONTIG)                                            \
    } else if (safe) {                                                         \
        SAFE_BODY(LOAD)                                                        \
    } else {                                                                   \
        FILL_BODY(T, LOAD, CONTIG)                                             \
    }

#define RUNS_KERNEL(T, name)                                                   \
    static int64_t runs_##name(const char *p, int64_t n, int64_t st, int merge, \
                               voxa__run *dst, int safe) {                     \
        if (st == (int64_t)sizeof(T)) {                                        \
            const T *a = (const T *)(const void *)p;                           \
            SCAN_BODY(T, CLOAD, 1)                                             \
        } else {                                                               \
            SCAN_BODY(T, SLOAD, 0)                                             \
        }                                                                      \
    }

/* Reads go through memcpy-free typed loads: the buffer may be unaligned for
 * strided views, so strided loads use memcpy (compiled to a plain load). */
#define CLOAD(i) (a[(i)])
#define SLOAD(i) (sload_v(p + (i) * st))

#define SLOADER(T, name)                                                       \
    static inline T sload_##name(const char *q) {                              \
        T v;                                                                   \
        memcpy(&v, q, sizeof v);                                               \
        return v;                                                              \
    }

SLOADER(uint8_t, u8)
SLOADER(uint16_t, u16)
SLOADER(uint32_t, u32)
SLOADER(uint64_t, u64)
SLOADER(float, f32)
SLOADER(double, f64)

#define sload_v sload_u8
RUNS_KERNEL(uint8_t, u8_any)
#undef sload_v

/* Bytes, contiguous (bool and uint8 masks, the common case): 64 voxels at a
 * time as a bit mask (bit k = voxel k is non-zero); boundaries are the set
 * bits of mask ^ (mask << 1 | carry), stored by a loop over set bits. No
 * branch per voxel, none per run beyond the loop exit, no store past the
 * line's runs (so `safe` is moot), and all-zero words cost a few
 * instructions. The mask is built with SSE2 (baseline on x86-64: compare 16
 * bytes with zero, movemask; 4 x 3 instructions per 64 voxels) or, portably,
 * with word arithmetic (about 8 x 7). The counting pass of such lines uses
 * the same masks: runs = popcount(boundaries) / 2, with the popcnt
 * instruction where the CPU has it. `portable` (VOXA_LABEL_PORTABLE=1 or
 * voxa__label_portable, for tests) takes the word-arithmetic mask and the
 * generic count. Little-endian only (the word loads map byte k to bits
 * 8k..8k+7); other machines use the generic path. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
#define LABEL_BITS 1
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
static inline uint64_t nonzero_bits8(const char *q) {
    uint64_t w, t;
    memcpy(&w, q, 8);
    t = (((w & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | w) & 0x8080808080808080ULL;
    return ((t >> 7) * 0x0102040810204080ULL) >> 56; /* gather the 8 high bits */
}

/* Bit k set iff byte q[k] != 0, k < 64. */
static inline __attribute__((always_inline)) uint64_t nonzero_bits64(const char *q,
                                                                      int portable) {
#if defined(__SSE2__)
    if (!portable) {
        const __m128i z = _mm_setzero_si128();
        uint64_t e0 = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)q), z));
        uint64_t e1 = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(q + 16)), z));
        uint64_t e2 = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(q + 32)), z));
        uint64_t e3 = (uint16_t)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(q + 48)), z));
        return ~(e0 | e1 << 16 | e2 << 32 | e3 << 48); /* zero bytes -> 0 bits */
    }
#endif
    uint64_t wz[8], any = 0, m = 0;
    memcpy(wz, q, 64);
    for (int k = 0; k < 8; k++) any |= wz[k];
    if (!any) return 0; /* 64 background voxels: a few word tests */
    for (int k = 0; k < 8; k++) m |= nonzero_bits8(q + 8 * k) << (8 * k);
    return m;
}

int voxa__label_portable = 0;

/* The bits of voxels base..base+63 of a line of n (bits past n clear). A
 * line's last, partial word is read as the 64 voxels ending at n, shifted
 * down, when the line has 64 voxels or more: no copy into a padded buffer
 * (a memset and a memcpy call per line, about a fifth of the scan on the
 * 401-voxel lines of the blob masks). */
static inline __attribute__((always_inline)) uint64_t line_bits64(const char *p, int64_t n,
                                                                   int64_t base, int portable) {
    int64_t rem = n - base;
    if (rem >= 64) return nonzero_bits64(p + base, portable);
    if (n >= 64) return nonzero_bits64(p + n - 64, portable) >> (64 - rem);
    char pad[64];
    memset(pad, 0, sizeof pad);
    memcpy(pad, p + base, (size_t)rem);
    return nonzero_bits64(pad, portable);
}

/* With `bits` non-NULL (merge only) the line's masks are kept for the
 * bitmap union (label_bits.c): bits[w] = foreground, starts[w] = run starts,
 * pc[w] = runs started before word w. */
static inline __attribute__((always_inline)) int64_t
fill_bits_body(const char *p, int64_t n, int merge, voxa__run *dst, uint64_t *bits,
               uint64_t *starts, uint32_t *pc, int portable) {
    uint32_t *b = (uint32_t *)(void *)dst;
    int64_t c = 0;
    uint64_t carry = 0;
    for (int64_t base = 0; base < n; base += 64) {
        /* bits past n are clear: a run ending at n gives boundary bit n */
        uint64_t m = line_bits64(p, n, base, portable);
        if (!m && !carry && !bits) continue; /* 64 background voxels */
        if (merge) {
            uint64_t x = m ^ ((m << 1) | carry);
            if (bits) {
                int64_t w = base >> 6;
                bits[w] = m;
                starts[w] = m & ~((m << 1) | carry);
                pc[w] = (uint32_t)((c + 1) >> 1);
            }
            carry = m >> 63;
            if (!b) { /* bitmaps only (no run table): count the runs */
                c += __builtin_popcountll(x);
                continue;
            }
            while (x) {
                b[c++] = (uint32_t)(base + __builtin_ctzll(x));
                x &= x - 1;
            }
        } else {
            while (m) {
                uint32_t at = (uint32_t)(base + __builtin_ctzll(m));
                b[c++] = at;
                b[c++] = at + 1;
                m &= m - 1;
            }
        }
    }
    if (carry && b) b[c++] = (uint32_t)n;
    else if (carry) c++;
    return c / 2;
}

static int64_t fill_bits_u8(const char *p, int64_t n, int merge, voxa__run *dst, uint64_t *bits,
                            uint64_t *starts, uint32_t *pc) {
    return fill_bits_body(p, n, merge, dst, bits, starts, pc, 0);
}

static int64_t fill_bits_u8_portable(const char *p, int64_t n, int merge, voxa__run *dst,
                                     uint64_t *bits, uint64_t *starts, uint32_t *pc) {
    return fill_bits_body(p, n, merge, dst, bits, starts, pc, 1);
}

/* Count the runs of a contiguous byte line (merge): half the boundaries. */
#define COUNT_BITS_BODY                                                        \
    int64_t c = 0;                                                             \
    uint64_t carry = 0;                                                        \
    for (int64_t base = 0; base < n; base += 64) {                             \
        uint64_t m = line_bits64(p, n, base, 0);                               \
        if (!(m | carry)) continue;                                            \
        c += __builtin_popcountll(m ^ ((m << 1) | carry));                     \
        carry = m >> 63;                                                       \
    }                                                                          \
    return (c + (int64_t)carry) / 2;

static int64_t count_bits_generic(const char *p, int64_t n) { COUNT_BITS_BODY }
#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("popcnt"))) static int64_t count_bits_popcnt(const char *p, int64_t n) {
    COUNT_BITS_BODY
}
#endif
static int64_t (*count_bits_fn)(const char *, int64_t);

static int64_t count_bits_u8(const char *p, int64_t n) {
    int64_t (*f)(const char *, int64_t) = __atomic_load_n(&count_bits_fn, __ATOMIC_RELAXED);
    if (!f) {
        f = count_bits_generic;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("popcnt")) f = count_bits_popcnt;
#endif
        __atomic_store_n(&count_bits_fn, f, __ATOMIC_RELAXED);
    }
    return f(p, n);
}

void voxa__label_fill_bits(const char *p, int64_t n, voxa__run *dst, uint64_t *bits,
                           uint64_t *starts, uint32_t *pc, int portable) {
    if (portable) fill_bits_u8_portable(p, n, 1, dst, bits, starts, pc);
    else fill_bits_u8(p, n, 1, dst, bits, starts, pc);
}

int voxa__label_bits_available(void) { return 1; }
#else
int voxa__label_portable = 0;

void voxa__label_fill_bits(const char *p, int64_t n, voxa__run *dst, uint64_t *bits,
                           uint64_t *starts, uint32_t *pc, int portable) {}

int voxa__label_bits_available(void) { return 0; } /* no bitmap path here */
#endif

static int64_t runs_u8(const char *p, int64_t n, int64_t st, int merge, voxa__run *dst,
                       int safe) {
#ifdef LABEL_BITS
    if (st == 1) {
        if (dst) return fill_bits_u8(p, n, merge, dst, NULL, NULL, NULL);
        if (merge) return count_bits_u8(p, n);
    }
#endif
    return runs_u8_any(p, n, st, merge, dst, safe);
}

/* The portable byte kernel: word-arithmetic masks, generic counting. */
static int64_t runs_u8_portable(const char *p, int64_t n, int64_t st, int merge,
                                voxa__run *dst, int safe) {
#ifdef LABEL_BITS
    if (dst && st == 1) return fill_bits_u8_portable(p, n, merge, dst, NULL, NULL, NULL);
#endif
    return runs_u8_any(p, n, st, merge, dst, safe);
}
#define sload_v sload_u16
RUNS_KERNEL(uint16_t, u16)
#undef sload_v
#define sload_v sload_u32
RUNS_KERNEL(uint32_t, u32)
#undef sload_v
#define sload_v sload_u64
RUNS_KERNEL(uint64_t, u64)
#undef sload_v
#define sload_v sload_f32
RUNS_KERNEL(float, f32)
#undef sload_v
#define sload_v sload_f64
RUNS_KERNEL(double, f64)
#undef sload_v

voxa__runs_fn voxa__label_runs_kernel(voxa_dtype t, int portable) {
    switch (t) {
    case VOXA_BOOL: case VOXA_U8: case VOXA_I8: return portable ? runs_u8_portable : runs_u8;
    case VOXA_U16: case VOXA_I16: return runs_u16;
    case VOXA_U32: case VOXA_I32: return runs_u32;
    case VOXA_U64: case VOXA_I64: return runs_u64;
    case VOXA_F32: return runs_f32;
    case VOXA_F64: return runs_f64;
    default: return NULL;
    }
}

/* ---- output ---------------------------------------------------------------- */

/* Fill a[y, end) with v, where the line has n elements. Short spans (the
 * usual case on noisy masks) use fixed 16-element stores that may run past
 * `end` (never past n): the caller writes spans that tile the line in
 * increasing order, so whatever spills over is overwritten by the next span. Long spans use one
 * memset (zeros) or a plain loop the compiler vectorises. */
#define SPAN_FILL(T, a, y, end, n, v)                                          \
    do {                                                                       \
        int64_t y_ = (y), end_ = (end);                                        \
        if (end_ - y_ >= 64) {                                                 \
            if ((v) == 0) memset((a) + y_, 0, (size_t)(end_ - y_) * sizeof(T)); \
            else for (; y_ < end_; y_++) (a)[y_] = (v);                        \
            break;                                                             \
        }                                                                      \
        if (y_ + 16 <= (n)) {                                                  \
            /* whole 16-element stores; an empty span still stores once */    \
            do {                                                               \
                for (int q_ = 0; q_ < 16; q_++) (a)[y_ + q_] = (v);            \
                y_ += 16;                                                      \
            } while (y_ < end_ && y_ + 16 <= (n));                             \
        }                                                                      \
        for (; y_ < end_; y_++) (a)[y_] = (v);                                 \
    } while (0)

#define WRITE_KERNEL(T, name, L)                                               \
    static void write_##name(char *p, int64_t n, int64_t st, const voxa__run *r, \
                             int64_t nr, const void *labels, int zeroed) {     \
        const L *lab = labels; /* the union-find table's width */             \
        /* zeroed: the runs only, exactly (no spill past a run's end); on    \
         * noisy lines (many short runs) the span fills below are faster.     \
         * The run's bounds are read once, before its loop: a store through   \
         * `a` may alias the run table (uint32 too, for int32 labels), so a   \
         * loop bounded by r[k].e reloads it per voxel and stays scalar (20 % \
         * of a blobs 26-connected call); with local bounds it is vectorised. */ \
        if (zeroed && nr * 8 < n) {                                            \
            for (int64_t k = 0; k < nr; k++) {                                 \
                T v = (T)lab[k];                                               \
                if (st == (int64_t)sizeof(T)) {                                \
                    T *a = (T *)(void *)p + r[k].s;                            \
                    int64_t len = (int64_t)r[k].e - (int64_t)r[k].s;           \
                    for (int64_t x = 0; x < len; x++) a[x] = v;                \
                } else {                                                       \
                    for (int64_t x = r[k].s; x < (int64_t)r[k].e; x++)         \
                        memcpy(p + x * st, &v, sizeof(T));                     \
                }                                                              \
            }                                                                  \
        } else if (st == (int64_t)sizeof(T)) {                                 \
            T *a = (T *)(void *)p;                                             \
            int64_t x = 0;                                                     \
            for (int64_t k = 0; k < nr; k++) {                                 \
                /* the label in a local: stores to `a` may alias `lab` */     \
                T v = (T)lab[k];                                               \
                SPAN_FILL(T, a, x, (int64_t)r[k].s, n, (T)0);                  \
                SPAN_FILL(T, a, (int64_t)r[k].s, (int64_t)r[k].e, n, v);       \
                x = r[k].e;                                                    \
            }                                                                  \
            SPAN_FILL(T, a, x, n, n, (T)0);                                    \
        } else {                                                               \
            int64_t x = 0;                                                     \
            T zero = 0;                                                        \
            for (int64_t k = 0; k < nr; k++) {                                 \
                for (; x < (int64_t)r[k].s; x++) memcpy(p + x * st, &zero, sizeof(T)); \
                T v = (T)lab[k];                                               \
                for (; x < (int64_t)r[k].e; x++) memcpy(p + x * st, &v, sizeof(T)); \
            }                                                                  \
            for (; x < n; x++) memcpy(p + x * st, &zero, sizeof(T));           \
        }                                                                      \
    }

/* Output width x table width (int64 / uint32 labels, label_uf.h). */
WRITE_KERNEL(uint8_t, u8_64, int64_t)
WRITE_KERNEL(uint16_t, u16_64, int64_t)
WRITE_KERNEL(uint32_t, u32_64, int64_t)
WRITE_KERNEL(uint64_t, u64_64, int64_t)
WRITE_KERNEL(uint8_t, u8_32, uint32_t)
WRITE_KERNEL(uint16_t, u16_32, uint32_t)
WRITE_KERNEL(uint32_t, u32_32, uint32_t)
WRITE_KERNEL(uint64_t, u64_32, uint32_t)

voxa__write_fn voxa__label_write_kernel(voxa_dtype t, int wide) {
    switch (t) {
    case VOXA_U8: case VOXA_I8: return wide ? write_u8_64 : write_u8_32;
    case VOXA_U16: case VOXA_I16: return wide ? write_u16_64 : write_u16_32;
    case VOXA_U32: case VOXA_I32: return wide ? write_u32_64 : write_u32_32;
    case VOXA_U64: case VOXA_I64: return wide ? write_u64_64 : write_u64_32;
    default: return NULL;
    }
}
