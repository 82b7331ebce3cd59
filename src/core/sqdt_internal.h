/* The exact squared EDT's private parts shared by its two files: sqdt.c
 * (the planner, pass 1 on rows and the double/general envelope) and
 * sqdt_int.c (the integer path: unit spacing, uint32/uint16 storage). */
#ifndef VOXA_SQDT_INTERNAL_H
#define VOXA_SQDT_INTERNAL_H

#include "sqdt.h"

#include <math.h>

#define TILE 16
#define TILE_INT 64
#define ACH 512 /* positions per chunk of the axis-0 pass (threshold mode) */

typedef struct stage_ctx {
    const voxa__sqdt *p;
    void *buf;          /* storage between passes */
    int u16;            /* integer storage is uint16 (thresholds < 65535) */
    int buf_double;     /* 1: double, 0: uint32 */
    int buf_dist;       /* 2-D float32: pass 1 leaves row distances d as
                           uint32 in the output; loaded as d * d * s2_row */
    int buf_pair;       /* 3-D float32: (row distance, axis-1 offset) as two
                           uint16 in the output (sqdt.c, load_pair) */
    double s2_row, s2_mid;
    int64_t n, inner, nti; /* line length, stride (elements), inner tiles */
    double s2;          /* spacing^2 of the axis */
    double cap;         /* values > cap are stored as +inf */
    int final;          /* write the output instead of storage */
    char *scratch;
    size_t per_thread;  /* bytes */
    const int32_t *isqrt; /* isqrt[i] = floor(sqrt(i)) for i <= thr, or NULL */
    int64_t tw;         /* columns per tile of the integer passes */
    const struct voxa__sqdt_wkern *wk; /* windowed kernels, or NULL: envelope */
    int64_t wsteps;     /* their budget of steps per row, or -1: the kernel's */
} stage_ctx;

static inline int64_t isqrt_of(const stage_ctx *c, int64_t v) {
    if (c->isqrt) return c->isqrt[v];
    int64_t r = (int64_t)sqrt((double)v);
    while (r * r > v) r--;
    while ((r + 1) * (r + 1) <= v) r++;
    return r;
}

static inline void emit(const voxa__sqdt *p, int64_t i, double f) {
    switch (p->mode) {
    case VOXA__SQDT_THRESHOLD:
        ((uint8_t *)p->out)[i] = (uint8_t)((f <= p->thr) ^ (p->invert != 0));
        break;
    case VOXA__SQDT_F64: ((double *)p->out)[i] = sqrt(f); break;
    case VOXA__SQDT_F32: ((float *)p->out)[i] = (float)sqrt(f); break;
    case VOXA__SQDT_F32_SQ: ((float *)p->out)[i] = (float)f; break;
    case VOXA__SQDT_F64_SQ: ((double *)p->out)[i] = f; break;
    case VOXA__SQDT_U32_SQ:
        ((uint32_t *)p->out)[i] = f == INFINITY ? UINT32_MAX : (uint32_t)f;
        break;
    }
}

/* float32 of sqrt(d2) for an integer d2: sqrtf on the exact float when
 * d2 < 2^24 (one rounding; equal to rounding the double sqrt to float, since
 * double rounding of a square root is innocuous when 53 >= 2 * 24 + 2, and
 * the C tests check every d2 < 2^24), else through double. */
static inline float voxa__sqdt_sqrt_f32(uint32_t d2) {
    if (d2 == UINT32_MAX) return INFINITY;
    if (d2 < (1u << 24)) return sqrtf((float)d2);
    return (float)sqrt((double)d2);
}

/* The windowed column pass (sqdt_window.c): lanes adjacent columns of a
 * tile at a time, rows 0..n-1, with a budget of steps (one step: one offset
 * k for every lane). Returns n, or the row where it gave up (budget spent,
 * or a lane whose column has no target): rows before it are written, the
 * caller redoes the lanes' columns with the envelope. */
typedef int64_t (*voxa__sqdt_wcols)(const uint32_t *t, int64_t n, int64_t ws, int64_t j0,
                                    int border, int64_t budget, void *dst, int64_t ds, int f32);
typedef struct voxa__sqdt_wkern {
    const char *name;
    int lanes;
    int slot;      /* its back-off state in voxa__sqdt_wstate */
    int64_t steps; /* budget per row: the mean steps where the envelope gets cheaper */
    voxa__sqdt_wcols cols;
} voxa__sqdt_wkern;
extern const voxa__sqdt_wkern voxa__sqdt_wkern_c;
/* The kernels for this CPU (or VOXA_SQDT_KERNEL's); NULL: use the envelope. */
const voxa__sqdt_wkern *voxa__sqdt_window_pick(void);
/* The kernels for a tile of w < k->lanes columns: narrower SIMD (AVX2 under
 * AVX-512) when w reaches its lanes, else the one-lane C loop. */
const voxa__sqdt_wkern *voxa__sqdt_window_narrow(const voxa__sqdt_wkern *k, int64_t w);
/* Budget per row forced by VOXA_SQDT_WINDOW_STEPS, or -1: each kernel's
 * own `steps`. */
int64_t voxa__sqdt_window_steps(void);
#define SQDT_STEPS_AVX512 64
#define SQDT_STEPS_AVX2 48
#define SQDT_STEPS_C 4
/* After a call that gave up, the next 2^level - 1 calls of that thread go
 * straight to the envelope (level 1..SQDT_BACKOFF_MAX, reset by a call that
 * completes): long-distance regions try the window rarely. */
#define SQDT_BACKOFF_MAX 6
typedef struct voxa__sqdt_wstate {
    int64_t skip[3]; /* calls (sets of lanes) left on the envelope, per kernel
                        set (slot): narrow tiles' tries do not back off the
                        wide sets */
    int level[3];
} voxa__sqdt_wstate;

/* The integer path (sqdt_int.c): threshold mode's pass 1 along axis 0, and
 * the slow passes on integer storage. parallel_for bodies over a stage_ctx. */
voxa_status voxa__sqdt_first_axis0(int64_t lo, int64_t hi, int tid, void *vc);
voxa_status voxa__sqdt_slow_lines_int(int64_t lo, int64_t hi, int tid, void *vc);
voxa_status voxa__sqdt_slow_lines_int_skip(int64_t lo, int64_t hi, int tid, void *vc,
                                           voxa__sqdt_wstate *ws);
/* Pass 1, row r, into uint32 storage when no cap applies (sqdt_int.c). */
void voxa__sqdt_row_int(const stage_ctx *c, int64_t r);

#endif
