/* Shape properties of one table row from its central second moments, by
 * scikit-image's formulas (voxa_measure_write_csv's inertia_tensor, ...;
 * Python computes the same in voxa/_shape_props.py with LAPACK).
 *
 *   tensor   mu scaled by spacing_i spacing_j; T_ii = (sum_k mu_kk - mu_ii)
 *            / n, T_ij = -mu_ij / n (n: the voxel count)
 *   eigen    cyclic Jacobi rotations until the off-diagonal part is below
 *            1e-30 of the matrix (at most 64 sweeps; 3 x 3 needs a handful),
 *            then clipped at 0 and sorted descending. LAPACK's eigvalsh
 *            (Python) and this agree to rounding, not to the bit.
 *   lengths  2-D 4 sqrt(l), 3-D sqrt(10 (l0 + l1 - l2)) and
 *            sqrt(10 (-l0 + l1 + l2)), clamped at 0
 *   2-D      eccentricity sqrt(1 - l1 / l0) (0 when l0 is 0); orientation
 *            0.5 atan2(-2 b, c - a), or -+pi/4 when a == c. */
#include "measure_internal.h"

void voxa__measure_tensor(const voxa_measure_table *t, int64_t r, double *T) {
    int nd = t->ndim;
    double n = (double)t->num_pixels[r], mu[VOXA_MAXDIM * VOXA_MAXDIM], trace = 0;
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++)
            mu[i * nd + j] = t->moments2[r * nd * nd + i * nd + j] * t->spacing[i] * t->spacing[j];
    for (int k = 0; k < nd; k++) trace += mu[k * nd + k];
    for (int i = 0; i < nd; i++)
        for (int j = 0; j < nd; j++)
            T[i * nd + j] = i == j ? (trace - mu[i * nd + i]) / n : -mu[i * nd + j] / n;
}

/* Eigenvalues of the symmetric nd x nd matrix A (destroyed), descending,
 * clipped at 0. */
static void eigenvalues(double *A, int nd, double *ev) {
    double norm = 0;
    for (int k = 0; k < nd * nd; k++) norm += A[k] * A[k];
    for (int sweep = 0; sweep < 64; sweep++) {
        double off = 0;
        for (int p = 0; p < nd; p++)
            for (int q = p + 1; q < nd; q++) off += A[p * nd + q] * A[p * nd + q];
        if (off <= 1e-30 * norm) break;
        for (int p = 0; p < nd; p++)
            for (int q = p + 1; q < nd; q++) {
                double apq = A[p * nd + q];
                if (apq == 0) continue;
                /* the rotation that zeroes A[p][q]: tan(phi) = t, the smaller root */
                double theta = (A[q * nd + q] - A[p * nd + p]) / (2 * apq);
                double tt = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(tt * tt + 1), s = tt * c;
                for (int k = 0; k < nd; k++) { /* columns p, q */
                    double akp = A[k * nd + p], akq = A[k * nd + q];
                    A[k * nd + p] = c * akp - s * akq;
                    A[k * nd + q] = s * akp + c * akq;
                }
                for (int k = 0; k < nd; k++) { /* rows p, q */
                    double apk = A[p * nd + k], aqk = A[q * nd + k];
                    A[p * nd + k] = c * apk - s * aqk;
                    A[q * nd + k] = s * apk + c * aqk;
                }
                A[p * nd + q] = A[q * nd + p] = 0;
            }
    }
    for (int k = 0; k < nd; k++) ev[k] = A[k * nd + k] > 0 ? A[k * nd + k] : 0;
    for (int i = 1; i < nd; i++) /* descending (insertion: nd <= 8) */
        for (int k = i; k > 0 && ev[k] > ev[k - 1]; k--) {
            double x = ev[k];
            ev[k] = ev[k - 1];
            ev[k - 1] = x;
        }
}

void voxa__measure_eigvals(const voxa_measure_table *t, int64_t r, double *ev) {
    double T[VOXA_MAXDIM * VOXA_MAXDIM];
    voxa__measure_tensor(t, r, T);
    eigenvalues(T, t->ndim, ev);
}

double voxa__measure_axis_length(const voxa_measure_table *t, int64_t r, int major) {
    double ev[VOXA_MAXDIM], l;
    voxa__measure_eigvals(t, r, ev);
    if (t->ndim == 2) return 4 * sqrt(major ? ev[0] : ev[1]);
    l = major ? 10 * (ev[0] + ev[1] - ev[2]) : 10 * (-ev[0] + ev[1] + ev[2]);
    return sqrt(l > 0 ? l : 0);
}

double voxa__measure_eccentricity(const voxa_measure_table *t, int64_t r) {
    double ev[2];
    voxa__measure_eigvals(t, r, ev);
    return ev[0] == 0 ? 0 : sqrt(1 - ev[1] / ev[0]);
}

double voxa__measure_orientation(const voxa_measure_table *t, int64_t r) {
    double T[4];
    voxa__measure_tensor(t, r, T);
    double a = T[0], b = T[1], c = T[3];
    const double pi = 3.14159265358979323846; /* Python's math.pi */
    if (a - c == 0) return b < 0 ? pi / 4 : -pi / 4;
    return 0.5 * atan2(-2 * b, c - a);
}
