/* voxa label, pass 1 of the run path (label.c's header, step 1): every
 * line along the last axis becomes its runs [s, e), numbered in raster
 * order. Two ways: count the runs per line, size the table exactly, fill
 * it (two reads of the input); or, on masks with few runs, one scan into
 * per-chunk buffers copied into the table afterwards (one read). */
#include "label_plan.h"

#include <stdlib.h>
#include <string.h>

voxa_status voxa__label_count_block(int64_t b, int64_t e, int tid, void *ctx) {
    plan *P = ctx;
    int64_t idx[VOXA_MAXDIM];
    line_index(P, b, idx);
    for (int64_t l = b; l < e; l++, line_next(P, idx))
        P->line_off[l + 1] = P->runs_fn(P->in + line_offset(idx, P->istr, P->nd), P->w,
                                        P->istr[P->nd - 1], P->merge, NULL, 0);
    return VOXA_OK;
}

voxa_status voxa__label_fill_block(int64_t b, int64_t e, int tid, void *ctx) {
    plan *P = ctx;
    int64_t idx[VOXA_MAXDIM];
    line_index(P, b, idx);
    /* The fast fill scribbles on the slot after a line's runs; from the last
     * line with runs on (all of whose followers in the block are empty),
     * that slot is the next block's, so those lines take the careful path. */
    int64_t end_slot = P->line_off[e];
    int last_block = e == P->nlines;
    if (P->bits) { /* byte masks: runs and the line bitmaps in one scan */
        for (int64_t l = b; l < e; l++, line_next(P, idx))
            voxa__label_fill_bits(P->in + line_offset(idx, P->istr, P->nd), P->w,
                                  P->runs_from_bits ? NULL : P->runs + P->line_off[l],
                                  P->bits + l * P->nw,
                                  P->starts + l * P->nw, P->pc + l * P->nw, P->portable);
        uf_init(P->parent, P->wide, P->line_off[b], P->line_off[e]);
        return VOXA_OK;
    }
    for (int64_t l = b; l < e; l++, line_next(P, idx))
        P->runs_fn(P->in + line_offset(idx, P->istr, P->nd), P->w, P->istr[P->nd - 1],
                   P->merge, P->runs + P->line_off[l],
                   !last_block && P->line_off[l + 1] == end_slot);
    uf_init(P->parent, P->wide, P->line_off[b], P->line_off[e]);
    return VOXA_OK;
}

/* One scan (masks with few runs: smooth objects, W1): each chunk of lines
 * stores its runs into its own growing buffer while counting them, and the
 * buffers are copied into the exact table afterwards. This reads the input
 * once instead of twice (count, then fill) at the price of copying the runs
 * (8 bytes each), which is cheap when runs are rare and is why noisy masks
 * keep the two scans. A line takes at most (w + 1) / 2 runs (w without run
 * merging) plus the fast fill's scribble slot; the buffer grows (doubling)
 * to hold that before each line. */
voxa_status voxa__label_scan_chunk(int64_t c0, int64_t c1, int tid, void *ctx) {
    plan *P = ctx;
    for (int64_t c = c0; c < c1; c++) {
        int64_t b = P->chunk_lo[c], e = P->chunk_lo[c + 1], n = 0, cap = P->chunk_cap[c];
        voxa__run *buf = P->chunk_buf[c];
        int64_t need = (P->merge ? (P->w + 1) / 2 : P->w) + 1, idx[VOXA_MAXDIM];
        if (b >= e) continue;
        line_index(P, b, idx);
        for (int64_t l = b; l < e; l++, line_next(P, idx)) {
            if (cap - n < need) {
                int64_t ncap = 2 * cap > n + need ? 2 * cap : n + need;
                voxa__run *nb = realloc(buf, (size_t)ncap * sizeof *nb);
                if (!nb) {
                    P->chunk_buf[c] = buf;
                    return voxa__error(VOXA_ENOMEM, "label: out of memory for %lld runs",
                                       (long long)ncap);
                }
                buf = nb;
                cap = ncap;
            }
            int64_t k = P->runs_fn(P->in + line_offset(idx, P->istr, P->nd), P->w,
                                   P->istr[P->nd - 1], P->merge, buf + n, 0);
            P->line_off[l + 1] = k;
            n += k;
        }
        P->chunk_buf[c] = buf;
        P->chunk_n[c] = n;
        P->chunk_cap[c] = cap;
    }
    return VOXA_OK;
}

voxa_status voxa__label_copy_chunk(int64_t c0, int64_t c1, int tid, void *ctx) {
    plan *P = ctx;
    for (int64_t c = c0; c < c1; c++) {
        int64_t r0 = P->line_off[P->chunk_lo[c]], n = P->chunk_n[c];
        if (n) memcpy(P->runs + r0, P->chunk_buf[c], (size_t)n * sizeof *P->runs);
        uf_init(P->parent, P->wide, r0, r0 + n);
    }
    return VOXA_OK;
}

/* Runs per voxel on a sample of up to 256 lines spread over the volume, as
 * runs * 65536 / voxels (the noisy test and the one-scan choice). */
int64_t voxa__label_sampled_density(const plan *P) {
    int64_t ns = P->nlines < 256 ? P->nlines : 256, runs = 0, idx[VOXA_MAXDIM];
    for (int64_t k = 0; k < ns; k++) {
        line_index(P, k * P->nlines / ns, idx);
        runs += P->runs_fn(P->in + line_offset(idx, P->istr, P->nd), P->w, P->istr[P->nd - 1],
                           1, NULL, 0);
    }
    return runs * 65536 / (ns * P->w);
}

/* One scan, 0: never (always count, then fill), 1 (default): when the
 * sampled mask has fewer than one run per 64 voxels (then the bitmap union,
 * which needs the second scan, is unlikely), 2: always. With 1, the
 * environment variable VOXA_LABEL_ONESCAN=0|1|2 takes its place (tests). */
int voxa__label_one_scan = 1;
