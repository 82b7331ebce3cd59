/* voxa label: connected components of the non-zero voxels, identical to
 * scipy.ndimage.label (same components, same numbering, same count).
 *
 * Algorithm (run-based union-find, as in the classic two-pass labellers of
 * Rosenfeld & Pfaltz and the run-length variants of He, Chao & Suzuki):
 *
 *  0. Plan. Axes of length 1 are dropped (nothing is adjacent across them;
 *     the structure is sliced at its centre there), which turns (N,1,1) into
 *     a 1-D line and keeps raster order unchanged. The structure (given, or
 *     generate_binary_structure(ndim, c): offset o is a neighbour iff
 *     sum |o_d| <= c) must be centrosymmetric, so only its "earlier" half
 *     (offsets before the centre in C order) is needed. That half is grouped
 *     by line offset: for each neighbour line o' (first nd-1 components,
 *     lexicographically negative) a mask of allowed last-axis shifts
 *     dx in {-1, 0, +1}. Within a line only dx = -1 matters: when the
 *     structure has it, adjacent voxels form one run, otherwise each voxel
 *     is its own run. The centre element is ignored, as scipy ignores it.
 *
 *        line offsets (3-D, connectivity 1)      (3-D, connectivity 3)
 *             z-1: [ . # . ]  (o'=(-1,0))            z-1: 9 voxels, 3 lines
 *             y-1: [ . # . ]  (o'=(0,-1))            y-1: [ # # # ]
 *             x-1:   # @      (run merge)            x-1:   # @
 *
 *  1. Runs. Every line along the last axis is scanned into runs [s, e);
 *     a counting pass sizes the table exactly, a fill pass stores it (on
 *     masks with few runs, one scan into per-chunk buffers: label_scan.c). Runs
 *     are numbered in raster order of their first voxel.
 *  2. Union. For each line and each neighbour line, the two sorted run
 *     lists are swept together (two pointers); runs whose voxels are within
 *     an allowed dx are united (byte masks with many runs find the pairs
 *     with word arithmetic instead: label_bits.c; in 3-D the corner lines
 *     there skip voxels that a common neighbour already joins: see
 *     plan_corners). The union keeps the smaller index as root,
 *     so every component's root is its first run in raster order.
 *     In parallel: lines are cut into one block per thread; a block unites
 *     only pairs whose both lines lie inside it (parents never leave the
 *     block's run range, so blocks share nothing). The pairs that cross a
 *     block start (at most `reach` lines per block, about one plane) are
 *     united afterwards, sequentially, in block order.
 *  3. Numbering. One pass over runs in order: a root takes the next label,
 *     any other run the label of its parent (parent < run, so already set).
 *     Raster order of roots = raster order of first voxels = scipy's order.
 *     The count is checked against the output dtype before anything is
 *     written (EOVERFLOW).
 *  4. Output. Each output line is written once, in parallel.
 *
 * Results do not depend on the thread count: the partition only changes the
 * order of unions, and components, roots (minimum) and labels are unique.
 *
 * Cost: time O(voxels) reads + O(runs x neighbour lines) + O(voxels)
 * writes. Memory beyond the output: 12 bytes per run (s, e as uint32;
 * parent/label as uint32, or int64 from 2^32 - 1 runs on: label_uf.h) + 8
 * bytes per line (the bitmap path: 5/16 byte per voxel of line bitmaps
 * and, unless a neighbour line allows only dx = -1 and +1, 8 bytes per
 * run, the runs being rebuilt from the bitmaps when written; one scan: up
 * to 2x the run table more,
 * in chunk buffers, until they are copied). Runs <= voxels/2 (a checker board),
 * ~voxels/4 for 50 % random noise, tiny for masks of blobs. Files:
 * label_scan.c (pass 1), label_runs.c (typed scans and output writes),
 * label_bits.c (bitmap union).
 * Full connectivity (26 / 8) on noisy byte masks takes label_blocks.c
 * instead: union-find on 2x2x2 blocks, a constant cost per block where this
 * file's cost grows with the runs (chosen by a sampled run density).
 * Limit: the last (non-unit) axis must be shorter than 2^32. */
#include "label_plan.h"

#include <stdlib.h>
#include <string.h>

_Thread_local int voxa__label_zeroed;

/* Least voxels per parallel block (a tuning knob; tests lower it to cut
 * small volumes into many blocks and so exercise the seams). */
int64_t voxa__label_min_block = 1 << 16; /* (3^7 - 1) / 2 neighbour lines for ndim 8 */

/* The run and bitmap tables (tens of MB on noisy masks) live for one call and
 * are read in random order. They take plain pages, with no transparent huge
 * page hint: on VMs that hand freed memory back to the host (free page
 * reporting), a huge page faulted on such memory costs 2-4x its 512 small
 * pages, and a call after a pause paid that for every table (BENCHMARKS.md,
 * session 14); small pages cost the same whatever came before. */

/* The union-find table's width (label_uf.h): uint32 entries hold run
 * indices and labels up to UINT32_MAX - 1, so up to UINT32_MAX - 1 runs. */
int voxa__label_wide_table = 0;
_Thread_local int voxa__label_last_wide = -1;

int voxa__label_table_wide(int64_t nruns) {
    const char *env = getenv("VOXA_LABEL_WIDE"); /* 1: int64 on any input (tests) */
    return nruns >= (int64_t)UINT32_MAX || voxa__label_wide_table || (env && atoi(env) == 1);
}

/* ---- pass 2: union ------------------------------------------------------------ */

/* Unite the runs of line l with those of the earlier line m where some voxel
 * pair is dx apart with dx allowed by `mask`. */
static void unite_lines(const plan *P, int64_t l, int64_t m, int g) {
    unsigned mask = P->gmask[g];
    int64_t i = P->line_off[l], ie = P->line_off[l + 1];
    int64_t j = P->line_off[m], je = P->line_off[m + 1];
    if (i == ie || j == je) return;
    if (P->bits && mask != 5) {
        /* one word pass ({-1,+1} would need two: the sweep is used) */
        voxa__line_bits A = {P->bits + l * P->nw, P->starts + l * P->nw, P->pc + l * P->nw, i,
                             NULL, NULL};
        voxa__line_bits B = {P->bits + m * P->nw, P->starts + m * P->nw, P->pc + m * P->nw, j,
                             NULL, NULL};
        if (P->gcover[g]) {
            B.cover1 = P->bits + (l + P->gcov1[g]) * P->nw;
            B.cover2 = P->bits + (l + P->gcov2[g]) * P->nw;
        }
        P->unite_bits(P->parent, P->nw, &A, &B, mask);
        return;
    }
    const voxa__run *R = P->runs;
    int64_t dmin = (mask & 1) ? -1 : (mask & 2) ? 0 : 1;
    int64_t dmax = (mask & 4) ? 1 : (mask & 2) ? 0 : -1;
    int gap = mask == 5; /* {-1, +1}: the widened test is not exact */
    /* Widened runs of l have non-decreasing ends (they may overlap when
     * runs are single voxels); runs of m are disjoint and sorted. So the
     * first run of m that can meet run i only moves forward. */
    UF_WITH(P->wide, P->parent, par,
        for (; i < ie; i++) {
            int64_t alo = (int64_t)R[i].s + dmin, ahi = (int64_t)R[i].e - 1 + dmax;
            while (j < je && (int64_t)R[j].e - 1 < alo) j++;
            if (j == je) break;
            int64_t ri = -1; /* root of run i, found lazily */
            for (int64_t k = j; k < je && (int64_t)R[k].s <= ahi; k++) {
                if (gap) {
                    /* differences x_b - x_a span [lo, hi]: need -1 or +1 inside */
                    int64_t lo = (int64_t)R[k].s - ((int64_t)R[i].e - 1);
                    int64_t hi = (int64_t)R[k].e - 1 - (int64_t)R[i].s;
                    if (!((lo <= -1 && -1 <= hi) || (lo <= 1 && 1 <= hi))) continue;
                }
                /* ri stays a root: only this loop links, and it links to it or
                 * moves it to the new (smaller) root */
                if (ri < 0) ri = uf_find(par, i);
                ri = uf_link(par, ri, k);
            }
        }
    );
}

/* Neighbour lines of line l in group g, if inside the volume. */
static void unite_line(const plan *P, int64_t l, unsigned lo, unsigned hi, int64_t from) {
    for (int g = 0; g < P->ngroups; g++) {
        if ((P->gneg[g] & lo) || (P->gpos[g] & hi)) continue;
        int64_t m = l + P->gdelta[g];
        if (m < from) continue;
        unite_lines(P, l, m, g);
    }
}

static voxa_status union_block(int64_t b0, int64_t b1, int tid, void *ctx) {
    plan *P = ctx;
    for (int64_t blk = b0; blk < b1; blk++) {
        int64_t b = P->block_lo[blk], e = P->block_lo[blk + 1];
        if (b >= e) continue;
        int64_t idx[VOXA_MAXDIM];
        line_index(P, b, idx);
        for (int64_t l = b; l < e; l++, line_next(P, idx)) {
            unsigned lo, hi;
            line_borders(P, idx, &lo, &hi);
            unite_line(P, l, lo, hi, b); /* only pairs inside the block */
        }
    }
    return VOXA_OK;
}

/* The pairs skipped above: line in block k >= 1, neighbour before its start. */
static void union_seams(plan *P) {
    for (int64_t blk = 1; blk < P->nblocks; blk++) {
        int64_t b = P->block_lo[blk], e = P->block_lo[blk + 1];
        if (e > b + P->reach) e = b + P->reach;
        if (b >= e) continue;
        int64_t idx[VOXA_MAXDIM];
        line_index(P, b, idx);
        for (int64_t l = b; l < e; l++, line_next(P, idx)) {
            unsigned lo, hi;
            line_borders(P, idx, &lo, &hi);
            for (int g = 0; g < P->ngroups; g++) {
                if ((P->gneg[g] & lo) || (P->gpos[g] & hi)) continue;
                int64_t m = l + P->gdelta[g];
                if (m < b) unite_lines(P, l, m, g);
            }
        }
    }
}

/* ---- pass 4: output ----------------------------------------------------------- */

static voxa_status write_block(int64_t b, int64_t e, int tid, void *ctx) {
    plan *P = ctx;
    int64_t idx[VOXA_MAXDIM];
    voxa__run *line_runs = NULL; /* no run table: one line's runs, from its bitmap */
    if (P->runs_from_bits) {
        line_runs = voxa__malloc((size_t)(P->w / 2 + 2), sizeof *line_runs);
        if (!line_runs)
            return voxa__error(VOXA_ENOMEM, "label: out of memory for a line of %lld runs",
                               (long long)(P->w / 2 + 2));
    }
    line_index(P, b, idx);
    for (int64_t l = b; l < e; l++, line_next(P, idx)) {
        int64_t r0 = P->line_off[l], nr = P->line_off[l + 1] - r0;
        const voxa__run *R = P->runs + r0;
        if (line_runs) {
            voxa__label_runs_from_bits(P->bits + l * P->nw, P->nw, P->w, line_runs);
            R = line_runs;
        }
        P->write_fn(P->out + line_offset(idx, P->ostr, P->nd), P->w, P->ostr[P->nd - 1], R, nr,
                    (const char *)P->parent + r0 * (P->wide ? 8 : 4), P->zeroed);
    }
    voxa__free(line_runs);
    return VOXA_OK;
}

/* ---- planning ------------------------------------------------------------------ */

static int64_t dtype_max(voxa_dtype t) {
    switch (t) {
    case VOXA_I8: return INT8_MAX;
    case VOXA_U8: return UINT8_MAX;
    case VOXA_I16: return INT16_MAX;
    case VOXA_U16: return UINT16_MAX;
    case VOXA_I32: return INT32_MAX;
    case VOXA_U32: return UINT32_MAX;
    default: return INT64_MAX; /* i64, u64: a count always fits */
    }
}

/* Check the arguments and build the (full-rank) structure in `st`. */
static voxa_status check_args(const voxa_array *in, const unsigned char *structure,
                              int connectivity, const voxa_array *out, unsigned char *st) {
    VOXA_CHECK(voxa_array_check(in, "label: in"));
    VOXA_CHECK(voxa_array_check(out, "label: out"));
    VOXA_FAIL_IF(in->ndim < 1 || in->ndim > VOXA_MAXDIM, VOXA_EINVAL,
                 "label: in has %d dimensions, expected 1 to %d", in->ndim, VOXA_MAXDIM);
    VOXA_FAIL_IF(!voxa__label_runs_kernel(in->dtype, 0), VOXA_EINVAL,
                 "label: unsupported input dtype %s", voxa_dtype_name(in->dtype));
    VOXA_FAIL_IF(!voxa__label_write_kernel(out->dtype, 1), VOXA_EINVAL,
                 "label: unsupported output dtype %s (expected an integer type: int32, "
                 "uint16, uint32, int64, int8, uint8, int16, uint64)",
                 voxa_dtype_name(out->dtype));
    if (!voxa__same_shape(in, out)) {
        char a[160], b[160];
        return voxa__error(VOXA_EINVAL, "label: out has shape %s, expected the shape of in %s",
                           voxa__shape_str(out, a, sizeof a), voxa__shape_str(in, b, sizeof b));
    }
    int nd = in->ndim, n3 = 1;
    for (int d = 0; d < nd; d++) n3 *= 3;
    if (structure) {
        for (int k = 0; k < n3; k++) st[k] = structure[k] != 0;
        for (int k = 0; k < n3; k++)
            VOXA_FAIL_IF(st[k] != st[n3 - 1 - k], VOXA_EINVAL,
                         "label: structure is not centrosymmetric (element %d is %d, its "
                         "mirror %d is %d), as scipy.ndimage.label requires",
                         k, st[k], n3 - 1 - k, st[n3 - 1 - k]);
    } else {
        VOXA_FAIL_IF(connectivity < 1 || connectivity > nd, VOXA_EINVAL,
                     "label: connectivity %d out of range 1..%d for %d-D input",
                     connectivity, nd, nd);
        for (int k = 0; k < n3; k++) {
            int rem = k, dist = 0;
            for (int d = 0; d < nd; d++) {
                dist += rem % 3 != 1;
                rem /= 3;
            }
            st[k] = dist <= connectivity;
        }
    }
    return VOXA_OK;
}

/* Corner pruning (3-D). A pair of voxels a = (z, y, x) and b = (z-1, y+s,
 * x+dx), s = +-1, need not be looked at when (z, y+s, x+dx) or (z-1, y,
 * x+dx) is foreground: that voxel c is a neighbour of both, so a and b are
 * joined through the pairs (a, c) and (c, b), which lie on the lines
 * (z, y+-1) and (z-1, y) of some line and are never pruned themselves (so
 * no pruning leans on another). The structure must hold all four offsets
 * for every allowed dx (true for connectivity 2 and 3). On a 50 % random
 * mask this drops about three quarters of the corner lines' voxels; the
 * bitmap union (label_bits.c) masks them out of line b per word. Which
 * unions run changes, the components (and so the labels) do not. */
static void plan_corners(plan *P, const unsigned char *st, const int64_t *place,
                         int64_t centre, const int *keep) {
    for (int g = 0; g < P->ngroups; g++) P->gcover[g] = 0;
    if (P->nd != 3) return;
    int64_t pz = place[keep[0]], py = place[keep[1]], px = place[keep[2]];
#define ST(oz, oy, dx) (st[centre + (oz) * pz + (oy) * py + (dx) * px] != 0)
    for (int g = 0; g < P->ngroups; g++) {
        if (P->gneg[g] != 3 && !(P->gneg[g] == 1 && P->gpos[g] == 2)) continue;
        int s = P->gneg[g] == 3 ? -1 : 1, ok = ST(-1, 0, 0) && ST(0, s, 0);
        for (int dx = -1; dx <= 1; dx++)
            if (P->gmask[g] & (1u << (dx + 1))) ok = ok && ST(0, s, dx) && ST(-1, 0, dx);
        if (!ok) continue;
        P->gcover[g] = 1;
        P->gcov1[g] = s;              /* (z, y+s) */
        P->gcov2[g] = -P->shape[1];   /* (z-1, y) */
    }
#undef ST
}

/* Drop unit axes, derive run merging and the neighbour-line groups. */
static void make_plan(plan *P, const voxa_array *in, const voxa_array *out,
                      const unsigned char *st) {
    int nd = in->ndim, keep[VOXA_MAXDIM];
    P->nd = 0;
    for (int d = 0; d < nd; d++) {
        if (in->shape[d] == 1) continue;
        keep[P->nd] = d;
        P->shape[P->nd] = in->shape[d];
        P->istr[P->nd] = in->strides[d];
        P->ostr[P->nd] = out->strides[d];
        P->nd++;
    }
    if (P->nd == 0) { /* a single voxel */
        P->nd = 1;
        keep[0] = nd - 1;
        P->shape[0] = 1;
        P->istr[0] = in->strides[nd - 1];
        P->ostr[0] = out->strides[nd - 1];
    }
    int rd = P->nd;
    /* full-structure index of a reduced offset (components in {0,1,2}) */
    int64_t place[VOXA_MAXDIM], centre = 0, p3 = 1;
    for (int d = nd - 1; d >= 0; d--) {
        place[d] = p3;
        centre += p3;
        p3 *= 3;
    }
    P->merge = st[centre - place[keep[rd - 1]]] != 0;
    P->nlines = 1;
    for (int d = 0; d < rd - 1; d++) P->nlines *= P->shape[d];
    P->w = P->shape[rd - 1];
    int64_t lstride[VOXA_MAXDIM];
    for (int d = rd - 2; d >= 0; d--)
        lstride[d] = d == rd - 2 ? 1 : lstride[d + 1] * P->shape[d + 1];
    /* neighbour lines: o' in {-1,0,1}^(rd-1), lexicographically negative */
    P->ngroups = 0;
    P->reach = 0;
    int ng = 1;
    for (int d = 0; d < rd - 1; d++) ng *= 3;
    for (int k = 0; k < ng; k++) {
        int o[VOXA_MAXDIM], rem = k;
        for (int d = rd - 2; d >= 0; d--) {
            o[d] = rem % 3 - 1;
            rem /= 3;
        }
        int first = 0;
        for (int d = 0; d < rd - 1 && !first; d++) first = o[d];
        if (first >= 0) continue; /* the centre line or a later one */
        int64_t base = centre, delta = 0;
        uint8_t neg = 0, pos = 0;
        for (int d = 0; d < rd - 1; d++) {
            base += o[d] * place[keep[d]];
            delta += o[d] * lstride[d];
            if (o[d] < 0) neg |= (uint8_t)(1u << d);
            if (o[d] > 0) pos |= (uint8_t)(1u << d);
        }
        unsigned mask = 0;
        int64_t px = place[keep[rd - 1]];
        if (st[base - px]) mask |= 1;
        if (st[base]) mask |= 2;
        if (st[base + px]) mask |= 4;
        if (!mask) continue;
        int g = P->ngroups++;
        P->gdelta[g] = delta;
        P->gneg[g] = neg;
        P->gpos[g] = pos;
        P->gmask[g] = (uint8_t)mask;
        if (-delta > P->reach) P->reach = -delta;
    }
    plan_corners(P, st, place, centre, keep);
}

/* Does the mask look noisy: more than one run per 16 voxels on a sample of
 * up to 256 lines spread over the volume? There the block path (about a
 * constant cost per block) beats the run path (a cost per run); on masks of
 * objects (long runs, W1, blobs) the run path is faster. */
static int noisy(const plan *P) { return voxa__label_sampled_density(P) * 16 > 65536; }

voxa_status voxa_label(const voxa_array *in, const unsigned char *structure, int connectivity,
                       voxa_array *out, int64_t *nlabels) {
    voxa_status st = VOXA_OK;
    plan *P = NULL;
    unsigned char strel[6561]; /* 3^8 */
    if (nlabels) *nlabels = 0;
    VOXA_FAIL_IF(!in, VOXA_EINVAL, "label: in is NULL");
    VOXA_FAIL_IF(!out, VOXA_EINVAL, "label: out is NULL");
    VOXA_CHECK(check_args(in, structure, connectivity, out, strel));
    if (voxa_array_size(in) == 0) return VOXA_OK;

    P = voxa__calloc(1, sizeof *P);
    VOXA_GOTO_IF(!P, VOXA_ENOMEM, "label: out of memory for the plan");
    make_plan(P, in, out, strel);
    VOXA_GOTO_IF(P->w > (int64_t)UINT32_MAX, VOXA_EUNSUPPORTED,
                 "label: the last non-unit axis has %lld voxels; at most %lld are supported",
                 (long long)P->w, (long long)UINT32_MAX);
    P->in = in->data;
    P->out = out->data;
    {   /* VOXA_LABEL_PORTABLE=1: the portable byte kernels (tests) */
        const char *penv = getenv("VOXA_LABEL_PORTABLE");
        P->portable = voxa__label_portable || (penv && atoi(penv) == 1);
    }
    P->runs_fn = voxa__label_runs_kernel(in->dtype, P->portable);
    P->zeroed = voxa__label_zeroed;
    {   /* full connectivity on byte masks in 2-D/3-D: by 2x2(x2) blocks */
        int full = P->merge && P->ngroups == (P->nd == 3 ? 4 : 1);
        for (int g = 0; g < P->ngroups; g++) full = full && P->gmask[g] == 7;
        voxa__label_blocks_in B = {P->nd, P->shape, P->istr, P->ostr, in->data, out->data,
                                   (int)voxa_dtype_size(in->dtype),
                                   (int)voxa_dtype_size(out->dtype), full, out->dtype,
                                   P->zeroed};
        /* VOXA_LABEL_BLOCKS=0|2 overrides the default (tests: both paths) */
        const char *env = getenv("VOXA_LABEL_BLOCKS");
        int mode = voxa__label_use_blocks == 1 && env && *env ? atoi(env) : voxa__label_use_blocks;
        if (mode && voxa__label_blocks_applies(&B) && (mode > 1 || noisy(P))) {
            st = voxa__label_blocks(&B, dtype_max(out->dtype), nlabels ? nlabels : &(int64_t){0});
            goto done;
        }
    }

    /* 1. runs: count, size exactly, fill */
    P->line_off = voxa__malloc((size_t)P->nlines + 1, sizeof *P->line_off);
    VOXA_GOTO_IF(!P->line_off, VOXA_ENOMEM, "label: out of memory for %lld line offsets",
                 (long long)P->nlines + 1);
    P->line_off[0] = 0;
    int64_t grain = voxa__label_min_block / P->w + 1;
    {
        const char *env = getenv("VOXA_LABEL_ONESCAN");
        int mode = voxa__label_one_scan == 1 && env && *env ? atoi(env) : voxa__label_one_scan;
        if (mode > 1 || (mode == 1 && voxa__label_sampled_density(P) * 64 < 65536)) {
            int nt = voxa__threads_for(P->nlines / grain + 1);
            int64_t nc = nt > 1 ? 4 * (int64_t)nt : 1;
            if (nc > P->nlines) nc = P->nlines;
            P->nchunks = nc;
            P->chunk_lo = voxa__malloc((size_t)nc + 1, sizeof *P->chunk_lo);
            P->chunk_n = voxa__calloc((size_t)nc, sizeof *P->chunk_n);
            P->chunk_cap = voxa__calloc((size_t)nc, sizeof *P->chunk_cap);
            P->chunk_buf = voxa__calloc((size_t)nc, sizeof *P->chunk_buf);
            VOXA_GOTO_IF(!P->chunk_lo || !P->chunk_n || !P->chunk_cap || !P->chunk_buf,
                         VOXA_ENOMEM, "label: out of memory for %lld run chunks", (long long)nc);
            for (int64_t c = 0; c <= nc; c++) P->chunk_lo[c] = P->nlines * c / nc;
            if ((st = voxa__parallel_for(nc, 1, voxa__label_scan_chunk, P)) != VOXA_OK) goto done;
        } else if ((st = voxa__parallel_for(P->nlines, grain, voxa__label_count_block, P)) != VOXA_OK) {
            goto done;
        }
    }
    for (int64_t l = 0; l < P->nlines; l++) P->line_off[l + 1] += P->line_off[l];
    int64_t nruns = P->line_off[P->nlines];
    /* Byte masks with more than one run per 64 voxels on average: keep line
     * bitmaps (5/16 byte per voxel, at most ~1.3x the run table) for the
     * branch-free bitmap union. Sparse masks skip them. With bitmaps and no
     * {-1,+1}-only neighbour line (whose union sweeps runs), the run table
     * is not kept either: the output pass rebuilds each line's runs from its
     * bitmap (label_bits.c), which saves 8 of the 16 bytes per run and the
     * stores and page faults of filling them (noisy masks: ~voxels/4 runs). */
    int64_t voxels = P->nlines * P->w;
    int single = 0, five = 0; /* some neighbour line the bitmap union takes */
    for (int g = 0; g < P->ngroups; g++) {
        single |= P->gmask[g] != 5;
        five |= P->gmask[g] == 5;
    }
    int use_bits = nruns && voxa__label_bits_available() && voxa_dtype_size(in->dtype) == 1 &&
                   P->istr[P->nd - 1] == 1 && P->merge && single && nruns > voxels / 64;
    {   /* VOXA_LABEL_RUNTABLE=1 keeps the run table on the bitmap path (tests) */
        const char *env = getenv("VOXA_LABEL_RUNTABLE");
        P->runs_from_bits = use_bits && !five && voxa__label_keep_runs == 0 &&
                            !(env && atoi(env) == 1);
    }
    P->wide = voxa__label_table_wide(nruns);
    voxa__label_last_wide = P->wide;
    P->write_fn = voxa__label_write_kernel(out->dtype, P->wide);
    /* (at least one entry: the output pass indexes these even with no runs) */
    P->runs = voxa__malloc(P->runs_from_bits ? 1 : (size_t)nruns + 1, sizeof *P->runs);
    P->parent = voxa__malloc((size_t)nruns + 1, P->wide ? 8 : 4);
    VOXA_GOTO_IF(!P->runs || !P->parent, VOXA_ENOMEM,
                 "label: out of memory for %lld runs (%lld bytes)", (long long)nruns,
                 (long long)nruns * (P->wide ? 16 : 12));
    if (nruns) {
        if (use_bits) {
            P->nw = (P->w + 63) / 64;
            size_t words = (size_t)(P->nlines * P->nw);
            P->bits = voxa__malloc(words, sizeof *P->bits);
            P->starts = voxa__malloc(words, sizeof *P->starts);
            P->pc = voxa__malloc(words, sizeof *P->pc);
            VOXA_GOTO_IF(!P->bits || !P->starts || !P->pc, VOXA_ENOMEM,
                         "label: out of memory for line bitmaps (%lld words)",
                         (long long)words);
            P->unite_bits = voxa__label_unite_bits_kernel(P->wide);
        }
        if (P->chunk_buf && !P->bits) { /* one scan: the runs are in the chunks */
            if ((st = voxa__parallel_for(P->nchunks, 1, voxa__label_copy_chunk, P)) != VOXA_OK) goto done;
        } else if ((st = voxa__parallel_for(P->nlines, grain, voxa__label_fill_block, P)) != VOXA_OK) {
            goto done;
        }

        /* 2. union: one block of lines per thread, then the seams */
        /* (few runs: one block; a parallel region would cost more than it saves) */
        int nt = nruns < voxa__label_min_block ? 1
                                               : voxa__threads_for(P->nlines / (grain > 1 ? grain : 1));
        P->nblocks = nt;
        P->block_lo = voxa__malloc((size_t)nt + 1, sizeof *P->block_lo);
        VOXA_GOTO_IF(!P->block_lo, VOXA_ENOMEM, "label: out of memory");
        for (int b = 0; b <= nt; b++) P->block_lo[b] = P->nlines * b / nt;
        if ((st = voxa__parallel_for(nt, 1, union_block, P)) != VOXA_OK) goto done;
        union_seams(P);

        /* 3. numbering in raster order of first voxels */
        int64_t n = 0; /* <= nruns: fits the table's entries */
        UF_WITH(P->wide, P->parent, par, for (int64_t r = 0; r < nruns; r++) {
            int64_t p = par[r];
            par[r] = p == r ? ++n : par[p];
        });
        int64_t mx = dtype_max(out->dtype);
        VOXA_GOTO_IF(n > mx, VOXA_EOVERFLOW,
                     "label: %lld components do not fit the output dtype %s (max %lld); "
                     "use a wider dtype such as int32 or int64",
                     (long long)n, voxa_dtype_name(out->dtype), (long long)mx);
        if (nlabels) *nlabels = n;
    }
    /* 4. output, each line written once */
    if ((st = voxa__parallel_for(P->nlines, grain, write_block, P)) != VOXA_OK) goto done;

done:
    if (P) {
        voxa__free(P->line_off);
        voxa__free(P->runs);
        voxa__free(P->parent);
        voxa__free(P->block_lo);
        voxa__free(P->bits);
        voxa__free(P->starts);
        voxa__free(P->pc);
        for (int64_t c = 0; P->chunk_buf && c < P->nchunks; c++) free(P->chunk_buf[c]);
        voxa__free(P->chunk_buf);
        voxa__free(P->chunk_lo);
        voxa__free(P->chunk_n);
        voxa__free(P->chunk_cap);
        voxa__free(P);
    }
    if (st != VOXA_OK && nlabels) *nlabels = 0;
    return st;
}
