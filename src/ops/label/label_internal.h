/* Shared between label.c (planning, union-find, numbering) and label_runs.c
 * (typed run extraction and output writing). Not installed. */
#ifndef VOXA_LABEL_INTERNAL_H
#define VOXA_LABEL_INTERNAL_H

#include "internal.h"

/* One run of foreground voxels along the last axis: x in [s, e). */
typedef struct voxa__run {
    uint32_t s, e;
} voxa__run;

/* Count (dst == NULL) or store the runs of one line of `n` elements starting
 * at `p`, `st` bytes apart. merge != 0: adjacent foreground voxels form one
 * run; merge == 0: every foreground voxel is its own run (a structure
 * without the last-axis neighbour). Returns the number of runs. The fast
 * fill also writes the one run slot after the line's runs: pass safe != 0
 * when that slot is not the caller's to scribble on. */
typedef int64_t (*voxa__runs_fn)(const char *p, int64_t n, int64_t st, int merge,
                                 voxa__run *dst, int safe);

/* Write one output line: `lab[k]` over run k, 0 elsewhere (zeroed != 0: the
 * line already holds zeros, only the runs are written). `lab` points into
 * the union-find table: int64 or uint32 entries (label_uf.h), as the kernel
 * was chosen for. */
typedef void (*voxa__write_fn)(char *p, int64_t n, int64_t st, const voxa__run *runs,
                               int64_t nruns, const void *lab, int zeroed);

/* Kernels for an input dtype (folded: bool/u8/i8, u16/i16, u32/i32, u64/i64,
 * f32, f64; portable: see voxa__label_portable) and an integer output dtype
 * (folded by size) reading an int64 (wide != 0) or uint32 table; NULL if
 * unsupported. */
voxa__runs_fn voxa__label_runs_kernel(voxa_dtype in, int portable);
voxa__write_fn voxa__label_write_kernel(voxa_dtype out, int wide);

/* Does a union-find table for nruns runs need int64 entries (nruns >=
 * UINT32_MAX: uint32 holds indices and labels up to nruns)? Tests force
 * them on any input with voxa__label_wide_table = 1 or the environment
 * variable VOXA_LABEL_WIDE=1; voxa__label_last_wide tells which width the
 * calling thread's last run-path call used (-1: none). */
int voxa__label_table_wide(int64_t nruns);
extern int voxa__label_wide_table;
extern _Thread_local int voxa__label_last_wide;

/* Byte masks with a contiguous last axis and run merging: fill a line's runs
 * (as the runs kernel does) and keep its bitmaps for the bitmap union:
 * bits[w] = non-zero voxels 64w..64w+63, starts[w] = run starts among them,
 * pc[w] = runs started before word w. Only when voxa__label_bits_available()
 * (little-endian GCC/Clang builds). */
void voxa__label_fill_bits(const char *p, int64_t n, voxa__run *dst, uint64_t *bits,
                           uint64_t *starts, uint32_t *pc, int portable); /* dst NULL: no runs */
int voxa__label_bits_available(void);

/* The runs of one contiguous byte line of n voxels rebuilt from its
 * bitmap (nw words, as voxa__label_fill_bits kept it), into dst; returns
 * their number (label_bits.c). */
int64_t voxa__label_runs_from_bits(const uint64_t *bits, int64_t nw, int64_t n, voxa__run *dst);

/* 1: the bitmap path keeps its run table (0, the default: rebuilt from the
 * bitmaps when written); set by tests, as is VOXA_LABEL_RUNTABLE=1. */
extern int voxa__label_keep_runs;

/* portable != 0: byte masks take the portable C kernels (no SSE2 masks, no
 * bit-count pass), as on machines without them; set by tests through
 * voxa__label_portable or the environment variable VOXA_LABEL_PORTABLE=1. */
extern int voxa__label_portable;

/* One line's bitmaps (see above) and the index of its first run. For the
 * earlier line b of a pair, cover1/cover2 (both set, or both NULL) are the
 * bitmaps of two lines whose voxels make b's voxel at the same x redundant:
 * such a voxel is joined to line a through them by other unions, so it is
 * left out of this pair's search (label.c, "corner pruning"). */
typedef struct voxa__line_bits {
    const uint64_t *bits, *starts;
    const uint32_t *pc;
    int64_t first;
    const uint64_t *cover1, *cover2;
} voxa__line_bits;

/* Unite the runs of line a with those of the earlier line b whose voxels are
 * dx apart for some dx allowed by `mask` (bit 0: -1, 1: 0, 2: +1), with the
 * smaller-index-root union-find in `parent` (int64 entries if the kernel was
 * chosen wide, else uint32). nw = words per line. */
typedef void (*voxa__unite_bits_fn)(void *parent, int64_t nw, const voxa__line_bits *a,
                                    const voxa__line_bits *b, unsigned mask);
voxa__unite_bits_fn voxa__label_unite_bits_kernel(int wide);

/* Least voxels per parallel block (default 65536); tests may lower it. */
extern int64_t voxa__label_min_block;

/* The block path (label_blocks.c): full connectivity on byte masks in 2-D
 * and 3-D (unit axes dropped), last axes contiguous. */
typedef struct voxa__label_blocks_in {
    int nd;                       /* 2 or 3 */
    const int64_t *shape, *istr, *ostr;
    const char *in;
    char *out;
    int in_es, out_es, full;      /* element sizes; the structure is 3^nd ones */
    voxa_dtype out_dtype;
    int zeroed;                   /* out holds zeros already */
} voxa__label_blocks_in;
/* 0 when the inputs do not suit it. label.c takes it when
 * voxa__label_use_blocks is 2, or 1 (the default) and the mask is noisy;
 * 0: never. With 1, the environment variable VOXA_LABEL_BLOCKS=0|1|2 takes
 * its place: tests compare both paths on any mask. */
int voxa__label_blocks_applies(const voxa__label_blocks_in *a);
voxa_status voxa__label_blocks(const voxa__label_blocks_in *a, int64_t maxlab, int64_t *nlabels);
extern int voxa__label_use_blocks;

/* Runs in one scan of the input (0 never, 1 auto on masks with few runs, 2
 * always; label.c); with 1, VOXA_LABEL_ONESCAN=0|1|2 takes its place. */
extern int voxa__label_one_scan;

/* Set by the op (op_label.c) around one call on the calling thread when the
 * caller says the output already holds zeros (a freshly calloc'ed array):
 * voxa_label then writes only the labels, not the background. */
extern _Thread_local int voxa__label_zeroed;

#endif
