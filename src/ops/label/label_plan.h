/* voxa label, the run path's private plan (label.c plans and unites;
 * label_scan.c scans the runs) and the line-walking helpers both use. */
#ifndef VOXA_LABEL_PLAN_H
#define VOXA_LABEL_PLAN_H

#include "label_internal.h"
#include "label_uf.h"

#define NGROUPS_MAX 1093

typedef struct plan {
    int nd;                        /* dims after dropping unit axes, >= 1 */
    int64_t shape[VOXA_MAXDIM];
    int64_t istr[VOXA_MAXDIM], ostr[VOXA_MAXDIM];
    const char *in;
    char *out;
    int64_t nlines, w;             /* lines and their length (last axis) */
    int merge;                     /* last-axis neighbour: runs, not voxels */
    int ngroups;
    int64_t reach;                 /* max lines back a neighbour line lies */
    int64_t gdelta[NGROUPS_MAX];   /* line index offset of each group */
    uint8_t gneg[NGROUPS_MAX], gpos[NGROUPS_MAX]; /* dims with -1 / +1 */
    uint8_t gmask[NGROUPS_MAX];    /* allowed dx: bit 0 = -1, 1 = 0, 2 = +1 */
    uint8_t gcover[NGROUPS_MAX];   /* corner pruning applies (3-D, bitmap union) */
    int64_t gcov1[NGROUPS_MAX], gcov2[NGROUPS_MAX]; /* line offsets of its covers */
    voxa__runs_fn runs_fn;
    voxa__write_fn write_fn;
    int zeroed;                    /* out holds zeros: write the runs only */
    int portable;                  /* byte masks: the portable kernels (tests) */
    int runs_from_bits;            /* bitmap path: no run table (label.c) */
    int64_t *line_off;             /* nlines + 1 */
    voxa__run *runs;
    void *parent;                  /* parent, then label, of every run */
    int wide;                      /* its entries: int64, else uint32 (label_uf.h) */
    int64_t nblocks, *block_lo;    /* union blocks (nblocks + 1 bounds) */
    /* bitmap union (byte masks with many runs; see label_bits.c) */
    int64_t nw;                    /* 64-bit words per line */
    uint64_t *bits, *starts;       /* nlines * nw each, or NULL */
    uint32_t *pc;                  /* nlines * nw */
    voxa__unite_bits_fn unite_bits;
    /* one-scan runs (masks with few runs): per-chunk run buffers */
    int64_t nchunks, *chunk_lo, *chunk_n, *chunk_cap;
    voxa__run **chunk_buf;
} plan;

/* Multi-index of line `l` (dims 0..nd-2), and its byte offsets. */
static inline void line_index(const plan *P, int64_t l, int64_t *idx) {
    for (int d = P->nd - 2; d >= 0; d--) {
        idx[d] = l % P->shape[d];
        l /= P->shape[d];
    }
}

static inline int64_t line_offset(const int64_t *idx, const int64_t *str, int nd) {
    int64_t off = 0;
    for (int d = 0; d < nd - 1; d++) off += idx[d] * str[d];
    return off;
}

static inline void line_next(const plan *P, int64_t *idx) {
    for (int d = P->nd - 2; d >= 0; d--) {
        if (++idx[d] < P->shape[d]) return;
        idx[d] = 0;
    }
}

/* Border masks of a line: bit d set if idx[d] is at 0 / at shape-1. */
static inline void line_borders(const plan *P, const int64_t *idx, unsigned *lo, unsigned *hi) {
    *lo = *hi = 0;
    for (int d = 0; d < P->nd - 1; d++) {
        if (idx[d] == 0) *lo |= 1u << d;
        if (idx[d] == P->shape[d] - 1) *hi |= 1u << d;
    }
}

/* Pass 1 (label_scan.c): count runs per line, then fill the table; or
 * one scan into per-chunk buffers, then copy (masks with few runs). */
voxa_status voxa__label_count_block(int64_t b, int64_t e, int tid, void *ctx);
voxa_status voxa__label_fill_block(int64_t b, int64_t e, int tid, void *ctx);
voxa_status voxa__label_scan_chunk(int64_t c0, int64_t c1, int tid, void *ctx);
voxa_status voxa__label_copy_chunk(int64_t c0, int64_t c1, int tid, void *ctx);
/* Runs per voxel on a sample of up to 256 lines, times 65536. */
int64_t voxa__label_sampled_density(const plan *P);

#endif
