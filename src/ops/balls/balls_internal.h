/* What the balls family's CPU and GPU paths share (not installed): the
 * one-axis term of the W1 rule and the exact run of a ball along one axis.
 * Both paths must round alike, so both use these. */
#ifndef VOXA_BALLS_INTERNAL_H
#define VOXA_BALLS_INTERNAL_H

#include "internal.h"

/* ((v - p) * s)^2 in double precision, no fused multiply-add. */
static inline double voxa__balls_term(double v, double p, double s) {
    double t = (v - p) * s;
    return t * t;
}

/* Interval [*lo, *hi] of integer x in [0, n) with
 * fl(partial + term(x)) <= r2, or *lo > *hi when empty (balls.c). */
void voxa__balls_run_bounds(double partial, double p, double s, double r2, int64_t n,
                            int64_t *lo, int64_t *hi);

#endif
