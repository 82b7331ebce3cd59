/* Binary fill holes (the `fill_holes` op, scipy.ndimage.binary_fill_holes)
 * by blocks, exact for any structure and origin.
 *
 * The result is NOT R, where R is the set of background voxels from which a
 * chain of steps x -> x + d (d = c + origin - j for the structure's true
 * elements j, c = shape // 2) through background leaves the volume
 * (src/ops/morph/fill_holes.c explains why). R is the least fixed point of
 *     x in R  <=>  x is background and, for some d, x + d is outside the
 *                  volume or in R,
 * and the steps reach at most r_a = max |d_a| voxels along axis a. So R is
 * found by blocks, with the output store holding the current state
 * (0: reached background; 1: foreground or not yet reached):
 *   for a block, read the input and the state on the block grown by r
 *   (clamped to the volume; blocks never written count as 1), flood the
 *   grown block backwards from its reached voxels and from the background
 *   voxels with a step out of the volume (x is reached when x + d is, x and
 *   x + d inside the grown block), and write the block's part when it
 *   changed. Sweeps alternate raster and reverse raster order; a block is
 *   processed again only when a block within its halo changed since its
 *   last visit. When a sweep visits no block every block is a fixed point of
 *   the rule given its neighbours' final states, so the state is R (every
 *   state change is a true reach, and any voxel of R not reached would have
 *   a reached or outside successor in its own grown block).
 * Any structure (not centrosymmetric, larger than 3, shifted by origin)
 * gives scipy's voxels: the search follows the steps' direction, which a
 * union of labels (symmetric) would not. A step at least as long as the
 * volume leaves it from every voxel: then every background voxel is
 * reached and the output is the input's foreground, as in memory.
 *
 * I/O per sweep: each visited block reads its grown input and state and
 * writes its state; usually 2-3 sweeps (paths that wind through blocks many
 * times need more; each block is revisited only when a neighbour changed).
 * Memory: one grown block x (input + 10) bytes (state, a stack of int64
 * indices) plus its codes padded by r, plus 16 bytes per block for the
 * schedule. */
#include "stream_ops.h"

#include <stdlib.h>
#include <string.h>

enum { FG = 0, BG = 1, REACHED = 2 };

typedef struct fjob {
    int nd;
    int64_t n[VOXA_MAXDIM];      /* the volume */
    int64_t r[VOXA_MAXDIM];      /* halo: max |d_a| */
    int64_t nsteps;
    int64_t (*dv)[VOXA_MAXDIM];  /* steps */
    int trivial;                 /* a step leaves the volume from anywhere */
} fjob;

/* The steps of the arguments, as voxa_fill_holes builds them. */
static voxa_status steps_of(const voxa_args *a, int nd, const int64_t *n, fjob *f) {
    memset(f, 0, sizeof *f);
    f->nd = nd;
    memcpy(f->n, n, sizeof f->n);
    const voxa_value *sv = voxa_args_get(a, "structure"), *cv = voxa_args_get(a, "connectivity"),
                     *ov = voxa_args_get(a, "origin");
    const voxa_array *se = sv && sv->set ? &sv->array : NULL;
    int64_t conn = cv && cv->set ? cv->i : 1, origin[VOXA_MAXDIM] = {0}, shape[VOXA_MAXDIM];
    int64_t total = 1;
    for (int d = 0; d < nd; d++) {
        if (ov && ov->set) origin[d] = ov->n == 1 ? ov->iv[0] : ov->iv[d];
        shape[d] = se ? se->shape[d] : 3;
        total *= shape[d];
    }
    f->dv = malloc((size_t)total * sizeof *f->dv);
    VOXA_FAIL_IF(!f->dv, VOXA_ENOMEM, "structure: out of memory (%lld elements)",
                 (long long)total);
    int64_t j[VOXA_MAXDIM] = {0};
    for (int64_t e = 0; e < total; e++) {
        int far = 0, zero = 1, within = 1;
        for (int d = 0; d < nd; d++) far += j[d] != 1;
        int on = se ? voxa_array_get(se, j) != 0 : far <= conn;
        int64_t *dd = f->dv[f->nsteps];
        for (int d = 0; d < nd; d++) {
            dd[d] = shape[d] / 2 + origin[d] - j[d];
            zero &= dd[d] == 0;
            within &= (dd[d] < 0 ? -dd[d] : dd[d]) < n[d];
        }
        if (on && !zero && !within) f->trivial = 1;
        if (on && !zero && within) f->nsteps++;
        for (int d = nd - 1; d >= 0; d--) {
            if (++j[d] < shape[d]) break;
            j[d] = 0;
        }
    }
    for (int64_t k = 0; k < f->nsteps; k++)
        for (int d = 0; d < nd; d++) {
            int64_t m = f->dv[k][d] < 0 ? -f->dv[k][d] : f->dv[k][d];
            if (m > f->r[d]) f->r[d] = m;
        }
    return VOXA_OK;
}

/* ---- plan -------------------------------------------------------------------- */

typedef struct fcost {
    const int64_t *r;
    size_t in_es;
} fcost;

static int64_t grown_bytes(const voxa_stream_plan *p, const int64_t *b, void *u) {
    const fcost *c = u;
    int64_t g = 1, n = 1, pad = 1;
    for (int d = 0; d < p->ndim; d++) {
        int64_t e = b[d] + 2 * c->r[d];
        g *= e < p->shape[d] ? e : p->shape[d];
        pad *= (e < p->shape[d] ? e : p->shape[d]) + 2 * c->r[d];
        n *= b[d];
    }
    return g * (int64_t)(c->in_es + 10) + pad + n;
}

int voxa__fill_plan(const voxa_args *a, voxa_store *in, const voxa_stream_options *o,
                    int64_t limit, voxa_stream_plan *p) {
    if (!in || p->ndim < 1) return 0;
    fjob f;
    if (steps_of(a, p->ndim, p->shape, &f) != VOXA_OK) {
        voxa_clear_error();
        return 0;
    }
    free(f.dv);
    fcost c = {f.r, voxa_dtype_size(in->t)};
    for (int d = 0; d < p->ndim; d++) {
        int64_t want = o ? o->block[d] : 0;
        p->block[d] = want > 0 && want < p->shape[d] ? want : p->shape[d] > 0 ? p->shape[d] : 1;
        p->halo_lo[d] = p->halo_hi[d] = f.trivial ? 0 : f.r[d];
    }
    if (!voxa__blocks_given(o, p->ndim)) voxa__fit_block(p, p->block, limit, grown_bytes, &c);
    voxa__plan_grid(p);
    p->peak_bytes = grown_bytes(p, p->block, &c);
    return 1;
}

/* ---- run ----------------------------------------------------------------------- */

typedef struct fctx {
    const fjob *f;
    const voxa_stream_plan *p;
    voxa_store *in, *out;
    voxa_array ibuf, sbuf;     /* grown input, grown state (bool) */
    uint8_t *code;
    int64_t *stack;
    unsigned char *written;
    int64_t *proc_at, *changed_at, clock;
    int64_t *nb;                /* neighbour list scratch */
    int64_t *off;               /* steps as offsets in the padded codes */
    int64_t reach[VOXA_MAXDIM]; /* neighbour blocks within the halo, per axis */
} fctx;

static void block_index(const voxa_stream_plan *p, int64_t b, int64_t *bi) {
    for (int d = p->ndim - 1; d >= 0; d--) {
        bi[d] = b % p->grid[d];
        b /= p->grid[d];
    }
}

/* The blocks whose grid index is within reach[] of block b's (b included),
 * into c->nb; returns their count. */
static int64_t neighbours(fctx *c, int64_t b) {
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim;
    int64_t bi[VOXA_MAXDIM], lo[VOXA_MAXDIM], hi[VOXA_MAXDIM], k[VOXA_MAXDIM], n = 0;
    block_index(p, b, bi);
    for (int d = 0; d < nd; d++) {
        lo[d] = k[d] = bi[d] - c->reach[d] < 0 ? 0 : bi[d] - c->reach[d];
        hi[d] = bi[d] + c->reach[d] >= p->grid[d] ? p->grid[d] - 1 : bi[d] + c->reach[d];
    }
    for (;;) {
        int64_t id = 0;
        for (int d = 0; d < nd; d++) id = id * p->grid[d] + k[d];
        c->nb[n++] = id;
        int d = nd - 1;
        for (; d >= 0; d--) {
            if (++k[d] <= hi[d]) break;
            k[d] = lo[d];
        }
        if (d < 0) return n;
    }
}

static int needs_visit(fctx *c, int64_t b) {
    if (c->proc_at[b] < 0) return 1;
    int64_t n = neighbours(c, b);
    for (int64_t i = 0; i < n; i++)
        if (c->nb[i] != b && c->changed_at[c->nb[i]] > c->proc_at[b]) return 1;
    return 0;
}

/* Set the part of the grown state [glo, glo + gsh) that lies in blocks not
 * written yet to 1 (not reached). */
static void mask_unwritten(fctx *c, int64_t b, const int64_t *glo, const int64_t *gsh) {
    const voxa_stream_plan *p = c->p;
    int nd = p->ndim;
    uint8_t *s = c->sbuf.data;
    int64_t nn = neighbours(c, b);
    for (int64_t i = 0; i < nn; i++) {
        if (c->written[c->nb[i]]) continue;
        int64_t nlo[VOXA_MAXDIM], nsh[VOXA_MAXDIM], a[VOXA_MAXDIM], e[VOXA_MAXDIM];
        voxa__block_region(p, c->nb[i], nlo, nsh);
        int empty = 0;
        for (int d = 0; d < nd; d++) {
            a[d] = nlo[d] > glo[d] ? nlo[d] : glo[d];
            e[d] = nlo[d] + nsh[d] < glo[d] + gsh[d] ? nlo[d] + nsh[d] : glo[d] + gsh[d];
            empty |= e[d] <= a[d];
        }
        if (empty) continue;
        int64_t idx[VOXA_MAXDIM];
        memcpy(idx, a, sizeof idx);
        for (;;) {
            int64_t off = 0;
            for (int d = 0; d < nd - 1; d++) off = (off + idx[d] - glo[d]) * gsh[d + 1];
            off += a[nd - 1] - glo[nd - 1];
            memset(s + off, 1, (size_t)(e[nd - 1] - a[nd - 1]));
            int d = nd - 2;
            for (; d >= 0; d--) {
                if (++idx[d] < e[d]) break;
                idx[d] = a[d];
            }
            if (d < 0) break;
        }
    }
}

/* One visit: flood the grown block, write the block's state if it changed.
 * The codes live in the grown block padded by r with foreground, so the
 * flood follows a step by one subtraction and never tests bounds. */
static voxa_status visit(fctx *c, int64_t b) {
    const voxa_stream_plan *p = c->p;
    const fjob *f = c->f;
    int nd = p->ndim;
    int64_t lo[VOXA_MAXDIM], sh[VOXA_MAXDIM], glo[VOXA_MAXDIM], gsh[VOXA_MAXDIM];
    int64_t pst[VOXA_MAXDIM], psize = 1;
    voxa__block_region(p, b, lo, sh);
    for (int d = 0; d < nd; d++) {
        glo[d] = lo[d] - f->r[d] > 0 ? lo[d] - f->r[d] : 0;
        int64_t end = lo[d] + sh[d] + f->r[d];
        gsh[d] = (end < p->shape[d] ? end : p->shape[d]) - glo[d];
    }
    for (int d = nd - 1; d >= 0; d--) {
        pst[d] = psize;
        psize *= gsh[d] + 2 * f->r[d];
    }
    voxa_array iv = voxa__shaped(&c->ibuf, nd, gsh), sv = voxa__shaped(&c->sbuf, nd, gsh);
    VOXA_CHECK(voxa_store_read(c->in, glo, &iv));
    VOXA_CHECK(voxa_store_read(c->out, glo, &sv));
    mask_unwritten(c, b, glo, gsh);
    const uint8_t *src;
    uint8_t *owned = NULL;
    VOXA_CHECK(voxa__binary_view(&iv, &src, &owned));
    for (int64_t k = 0; k < f->nsteps; k++) {
        c->off[k] = 0;
        for (int d = 0; d < nd; d++) c->off[k] += f->dv[k][d] * pst[d];
    }
    const uint8_t *state = sv.data;
    uint8_t *code = c->code;
    memset(code, FG, (size_t)psize);
    int64_t n = voxa_array_size(&iv), top = 0, w = gsh[nd - 1], rl = f->r[nd - 1];
    int64_t idx[VOXA_MAXDIM] = {0};
    for (int64_t i = 0; i < n; i += w) { /* row by row */
        int64_t pi = 0, row_near = 0;
        for (int d = 0; d < nd - 1; d++) {
            int64_t x = glo[d] + idx[d];
            row_near |= x < f->r[d] || x >= f->n[d] - f->r[d];
            pi += (idx[d] + f->r[d]) * pst[d];
        }
        pi += rl;
        for (int64_t x = 0; x < w; x++) {
            int64_t gi = i + x, q = pi + x;
            code[q] = src[gi] ? FG : state[gi] ? BG : REACHED;
            int64_t gx = glo[nd - 1] + x;
            if (code[q] == BG && (row_near || gx < rl || gx >= f->n[nd - 1] - rl)) {
                for (int64_t k = 0; k < f->nsteps && code[q] == BG; k++) {
                    int out = 0; /* a step out of the volume? */
                    for (int d = 0; d < nd && !out; d++) {
                        int64_t y = glo[d] + (d == nd - 1 ? x : idx[d]) + f->dv[k][d];
                        out = y < 0 || y >= f->n[d];
                    }
                    if (out) code[q] = REACHED;
                }
            }
            if (code[q] == REACHED) c->stack[top++] = q;
        }
        for (int d = nd - 2; d >= 0; d--) {
            if (++idx[d] < gsh[d]) break;
            idx[d] = 0;
        }
    }
    voxa__free(owned);
    /* backwards along the steps: y reached, x = y - d background -> reached */
    while (top > 0) {
        int64_t y = c->stack[--top];
        for (int64_t k = 0; k < f->nsteps; k++) {
            int64_t x = y - c->off[k];
            if (code[x] == BG) {
                code[x] = REACHED;
                c->stack[top++] = x;
            }
        }
    }
    /* the block's part: new state, changed? */
    int changed = !c->written[b];
    voxa_array ov; /* in the input's buffer: the input is no longer needed */
    voxa_array_view(&ov, c->ibuf.data, VOXA_BOOL, nd, sh);
    uint8_t *o = ov.data;
    int64_t m = voxa_array_size(&ov), bi[VOXA_MAXDIM] = {0}, sw = sh[nd - 1];
    for (int64_t i = 0; i < m; i += sw) {
        int64_t g = 0, q = 0;
        for (int d = 0; d < nd; d++) {
            g = g * gsh[d] + (lo[d] - glo[d] + bi[d]);
            q += (lo[d] - glo[d] + bi[d] + f->r[d]) * pst[d];
        }
        for (int64_t x = 0; x < sw; x++) {
            o[i + x] = code[q + x] != REACHED;
            changed |= o[i + x] != state[g + x];
        }
        for (int d = nd - 2; d >= 0; d--) {
            if (++bi[d] < sh[d]) break;
            bi[d] = 0;
        }
    }
    c->proc_at[b] = c->clock++;
    if (changed) {
        VOXA_CHECK(voxa_store_write(c->out, lo, &ov));
        c->written[b] = 1;
        c->changed_at[b] = c->clock++;
    }
    return VOXA_OK;
}

/* A step leaves the volume from every voxel: the output is the foreground. */
static voxa_status foreground(fctx *c, const voxa_progress *progress) {
    const voxa_stream_plan *p = c->p;
    voxa_status st = VOXA_OK;
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) {
        int64_t lo[VOXA_MAXDIM], sh[VOXA_MAXDIM];
        voxa__block_region(p, b, lo, sh);
        voxa_array iv = voxa__shaped(&c->ibuf, p->ndim, sh), ov = voxa__shaped(&c->sbuf, p->ndim, sh);
        st = voxa_store_read(c->in, lo, &iv);
        const uint8_t *src;
        uint8_t *owned = NULL;
        if (st == VOXA_OK) st = voxa__binary_view(&iv, &src, &owned);
        for (int64_t i = 0; st == VOXA_OK && i < voxa_array_size(&ov); i++)
            ((uint8_t *)ov.data)[i] = src[i] != 0;
        voxa__free(owned);
        if (st == VOXA_OK) st = voxa_store_write(c->out, lo, &ov);
        if (st == VOXA_OK) st = voxa__progress(progress, b + 1, p->nblocks);
    }
    return st;
}

voxa_status voxa__stream_fill(const voxa_args *a, const voxa_stream_plan *p, voxa_store *in,
                              voxa_store *out, const voxa_progress *progress) {
    int nd = p->ndim;
    if (p->nblocks == 0) return VOXA_OK;
    fjob f;
    VOXA_CHECK(steps_of(a, nd, p->shape, &f));
    fctx c;
    memset(&c, 0, sizeof c);
    c.f = &f;
    c.p = p;
    c.in = in;
    c.out = out;
    int64_t g[VOXA_MAXDIM], gn = 1, pn = 1;
    for (int d = 0; d < nd; d++) {
        g[d] = p->block[d] + 2 * f.r[d] < p->shape[d] ? p->block[d] + 2 * f.r[d] : p->shape[d];
        gn *= g[d];
        pn *= g[d] + 2 * f.r[d];
        c.reach[d] = (f.r[d] + p->block[d] - 1) / p->block[d];
    }
    voxa_status st = voxa_array_new(&c.ibuf, in->t, nd, g);
    if (st == VOXA_OK) st = voxa_array_new(&c.sbuf, VOXA_BOOL, nd, g);
    c.code = malloc((size_t)pn);
    c.off = malloc((size_t)(f.nsteps + 1) * sizeof *c.off);
    c.stack = malloc((size_t)gn * sizeof *c.stack);
    c.written = calloc((size_t)p->nblocks, 1);
    c.proc_at = malloc((size_t)p->nblocks * sizeof *c.proc_at);
    c.changed_at = calloc((size_t)p->nblocks, sizeof *c.changed_at);
    int64_t nmax = 1;
    for (int d = 0; d < nd; d++) {
        int64_t w = 2 * c.reach[d] + 1;
        nmax *= w < p->grid[d] ? w : p->grid[d];
    }
    c.nb = malloc((size_t)nmax * sizeof *c.nb);
    if (st == VOXA_OK && (!c.code || !c.stack || !c.written || !c.proc_at || !c.changed_at || !c.nb || !c.off))
        st = voxa__error(VOXA_ENOMEM, "fill holes: out of memory for a block of %lld voxels",
                         (long long)gn);
    if (st == VOXA_OK && f.trivial) {
        st = foreground(&c, progress);
        goto done;
    }
    for (int64_t b = 0; st == VOXA_OK && b < p->nblocks; b++) c.proc_at[b] = -1;
    c.clock = 1;
    int64_t visits = 0;
    for (int sweep = 0; st == VOXA_OK; sweep++) {
        int any = 0;
        for (int64_t i = 0; st == VOXA_OK && i < p->nblocks; i++) {
            int64_t b = sweep % 2 ? p->nblocks - 1 - i : i;
            if (!needs_visit(&c, b)) continue;
            any = 1;
            st = visit(&c, b);
            /* progress: visits so far out of at least one more sweep */
            if (st == VOXA_OK)
                st = voxa__progress(progress, ++visits, (int64_t)(sweep + 2) * p->nblocks);
        }
        if (!any) break;
    }
done:
    free(f.dv);
    free(c.code);
    free(c.stack);
    free(c.written);
    free(c.proc_at);
    free(c.changed_at);
    free(c.nb);
    free(c.off);
    voxa_array_free(&c.ibuf);
    voxa_array_free(&c.sbuf);
    return st;
}
