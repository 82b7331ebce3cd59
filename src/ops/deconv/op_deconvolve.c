/* Descriptor of `deconvolve` (voxa_rl_plan_*): Richardson-Lucy on FFTW, in
 * float32, or in double for a float64 output (CPU only). Local with an approximate halo: one PSF extent, the usual practice
 * for chunked RL (exact needs iterations x the extent). */
#include "op_args.h"
#include "deconv_gpu.h"
#include "deconv_internal.h"
#include "voxa/deconv.h"

#include <unistd.h>

enum { PSF, ITERATIONS, BOUNDARY, ACCELERATE, NORMALIZE_PSF, CLIP, FILTER_EPSILON, DTYPE, PLANNING,
       MEASURE, MEASURE_PLANES, WISDOM, HALO, NPARAMS };

/* PLANNING's choices, in the order of its choice list */
enum { PLAN_AUTO, PLAN_ESTIMATE, PLAN_MEASURE };

static const voxa_param params[NPARAMS] = {
    [PSF] = {"psf", VOXA_PARAM_ARRAY, NULL,
             "PSF (.npy or .tif), same ndim, no larger than IN; centre at shape//2", NULL, 1, 0,
             VOXA_PARAM_REQUIRED, NULL, "PSF"},
    [ITERATIONS] = {"iterations", VOXA_PARAM_INT, "20", "number of iterations", NULL, 1, 1000000,
                    0, NULL, "N"},
    [BOUNDARY] = {"boundary", VOXA_PARAM_CHOICE, "free",
                  "free: wrap-free, normalised at the borders (Bertero & Boccacci); periodic: "
                  "the published FFT formula (circular); zero: scikit-image's richardson_lucy "
                  "(0.5 start, zero padding)", "free|periodic|zero|wrap-free=free", 1, 0, 0, NULL,
                  "MODE"},
    [ACCELERATE] = {"accelerate", VOXA_PARAM_FLAG, NULL,
                    "Biggs-Andrews acceleration (about 3x fewer iterations; 2 more "
                    "FFT-box-sized buffers, 3 on a GPU)",
                    NULL, 1, 0, 0, NULL, NULL},
    [NORMALIZE_PSF] = {"normalize_psf", VOXA_PARAM_FLAG, NULL, "divide the PSF by its sum first",
                       NULL, 1, 0, 0, NULL, NULL},
    [CLIP] = {"clip", VOXA_PARAM_FLAG, NULL, "clip the result to [-1, 1] (scikit-image's default)",
              NULL, 1, 0, 0, NULL, NULL},
    [FILTER_EPSILON] = {"filter_epsilon", VOXA_PARAM_FLOAT, "0",
                        "zero mode: ratio 0 where the blurred estimate is below E", NULL, 0, 1e300,
                        0, NULL, "E"},
    [DTYPE] = {"dtype", VOXA_PARAM_DTYPE, "float32",
               "output type; float64 also computes in double precision (CPU only; 1.1-2.8x "
               "the time, about 2x the memory: for agreement with float64 code such as "
               "scikit-image)",
               "float32|float64", 1, 0, 0, NULL, "T"},
    /* no default value, so that a contradicting --measure can be told from it */
    [PLANNING] = {"planning", VOXA_PARAM_CHOICE, NULL,
                  "how FFTW picks its algorithms. auto (the default): measure the small "
                  "per-plane plans of 3-D wrap-free/periodic runs (0.2-0.5 s once per size, "
                  "then the wisdom cache; up to 1.6x faster iterations) and the plans of 1-D "
                  "and 2-D images up to 4096^2 (0.6-4.5 s once per size; 1.2-3.5x faster "
                  "iterations), and estimate the rest; "
                  "estimate: instant plans, "
                  "the same in every process unless measured wisdom is cached; measure: time "
                  "every transform (seconds to minutes for a 3-D box: for long runs)",
                  "auto|estimate|measure", 1, 0, 0, NULL, "P"},
    [MEASURE] = {"measure", VOXA_PARAM_FLAG, NULL, "same as --planning measure", NULL, 1, 0, 0,
                 NULL, NULL},
    [MEASURE_PLANES] = {"measure_planes", VOXA_PARAM_FLAG, NULL,
                        "same as --planning auto (the default)", NULL, 1, 0, 0, NULL, NULL},
    [WISDOM] = {"wisdom", VOXA_PARAM_STRING, NULL,
                "reuse the measured plans saved in FILE (if it exists) and save them "
                "there, so later runs plan in milliseconds (default: the per-user cache, "
                "$VOXA_FFTW_WISDOM or ~/.cache/voxa/fftw-wisdom-f32; VOXA_FFTW_WISDOM=off: none)", NULL, 1, 0, 0, NULL, "FILE"},
    [HALO] = {"halo", VOXA_PARAM_CHOICE, "psf",
              "block by block (--mem-limit): psf, one PSF extent around each block (the usual "
              "approximation), or exact, iterations x twice the extent (equal to the whole-"
              "volume result within float32 rounding for --boundary zero; closer for the others)", "psf|exact", 1, 0, 0, NULL, "H"},
};

/* --planning, or the older flags standing for one of its choices; auto if
 * none is given */
static int planning(const voxa_args *a) {
    if (voxa__arg_int(a, MEASURE)) return PLAN_MEASURE;
    if (voxa__arg_int(a, MEASURE_PLANES) || !voxa__arg_set(a, PLANNING)) return PLAN_AUTO;
    return (int)voxa__arg_int(a, PLANNING);
}

static voxa_status check(const voxa_args *a, const voxa_array *in) {
    VOXA_FAIL_IF(voxa__arg_int(a, MEASURE) && voxa__arg_int(a, MEASURE_PLANES), VOXA_EINVAL,
                 "measure_planes: not with --measure (pick one planner)");
    VOXA_FAIL_IF(voxa__arg_set(a, PLANNING) &&
                     (voxa__arg_int(a, MEASURE) || voxa__arg_int(a, MEASURE_PLANES)) &&
                     voxa__arg_int(a, PLANNING) != planning(a),
                 VOXA_EINVAL, "planning: contradicts --measure / --measure-planes");
    VOXA_FAIL_IF(voxa__arg_set(a, WISDOM) && planning(a) == PLAN_ESTIMATE, VOXA_EINVAL,
                 "wisdom: not with --planning estimate (nothing is measured)");
    return VOXA_OK;
}

static voxa_status output(const voxa_args *a, const voxa_array *in, voxa_dtype *dt, int *nd,
                          int64_t *shape) {
    *dt = (voxa_dtype)voxa__arg_int(a, DTYPE);
    voxa__output_same_shape(in, nd, shape);
    return VOXA_OK;
}

static voxa_status halo(const voxa_args *a, int ndim, int64_t *lo, int64_t *hi) {
    const voxa_array *psf = voxa__arg_array(a, PSF);
    VOXA_FAIL_IF(psf->ndim != ndim, VOXA_EINVAL, "psf: %d dimensions, the image %d", psf->ndim,
                 ndim);
    VOXA_CHECK(voxa_deconv_halo(psf, lo, hi));
    /* Each iteration convolves with the PSF centred at cf and correlates
     * with it centred at cb, so the new estimate at x depends on the old one
     * from x - (m - 1 - cf + cb) to x + (m - 1 - cb + cf): k iterations need
     * k times that of halo (RedLionfish's valid-region argument). cf = cb =
     * m//2 (m - 1 = lo + hi each side), except in zero mode with an even
     * extent, where cf = m//2 - 1 (scikit-image's 'same' convolution): m
     * before, m - 2 after. Exact for the zero boundary; the free mode's flat
     * start is the block's mean and the periodic mode wraps per block, so
     * those stay approximations (closer with the larger halo). */
    if (voxa__arg_int(a, HALO) == 1) {
        int64_t k = voxa__arg_int(a, ITERATIONS);
        int zero = voxa__arg_int(a, BOUNDARY) == VOXA_RL_ZERO;
        for (int d = 0; d < ndim; d++) {
            int64_t m = psf->shape[d], skew = zero && m % 2 == 0;
            lo[d] = k * (m - 1 + skew);
            hi[d] = k * (m - 1 - skew);
        }
    }
    return VOXA_OK;
}

/* The plan (FFTW geometry, PSF transform, border weights) is made on the
 * host either way; backend b runs the iterations (cpu: FFTW; opencl/cuda:
 * deconv_gpu.c with the whole iteration on the device). */
static voxa_status run_on(voxa_op_ctx *c, voxa_backend b) {
    const voxa_args *a = c->args;
    const voxa_array *raw = voxa__arg_array(a, PSF);
    const char *wisdom = voxa__arg(a, WISDOM)->s;
    VOXA_FAIL_IF(c->in->ndim < 1 || c->in->ndim > 3, VOXA_EINVAL,
                 "input: %d dimensions (1, 2 or 3 supported)", c->in->ndim);
    VOXA_FAIL_IF(raw->ndim != c->in->ndim, VOXA_EINVAL,
                 "psf: the PSF has %d dimensions, the image %d", raw->ndim, c->in->ndim);
    int f64 = c->out->dtype == VOXA_F64;
    VOXA_FAIL_IF(f64 && b != VOXA_BACKEND_CPU, VOXA_EUNSUPPORTED,
                 "deconvolve: backend '%s': a float64 output is computed in double precision, "
                 "on the CPU only (the device kernels are float32): use dtype float32, or the "
                 "cpu or auto backend", voxa_backend_name(b));
    voxa_array psf;
    VOXA_CHECK(voxa__psf_prepare_as(raw, (int)voxa__arg_int(a, NORMALIZE_PSF),
                                    f64 ? VOXA_F64 : VOXA_F32, &psf));
    voxa_rl_plan *plan = NULL;
    voxa_status st = VOXA_OK;
    if (wisdom && access(wisdom, F_OK) == 0) st = voxa_deconv_wisdom_load(wisdom);
    if (st == VOXA_OK)
        st = voxa_rl_plan_new(&plan, c->in->ndim, c->in->shape, &psf,
                              (voxa_rl_boundary)voxa__arg_int(a, BOUNDARY),
                              (f64 ? VOXA_RL_DOUBLE : 0) |
                              (planning(a) == PLAN_MEASURE ? VOXA_RL_MEASURE
                               /* a device backend uses the host plans once, for H */
                               : planning(a) == PLAN_AUTO && b == VOXA_BACKEND_CPU
                                   ? VOXA_RL_MEASURE_PLANES
                                   : VOXA_RL_ESTIMATE));
    if (st == VOXA_OK && wisdom) st = voxa_deconv_wisdom_save(wisdom);
    if (st == VOXA_OK) {
        voxa_rl_options o;
        voxa_rl_options_init(&o);
        o.iterations = (int)voxa__arg_int(a, ITERATIONS);
        o.accelerate = (int)voxa__arg_int(a, ACCELERATE);
        o.clip = (int)voxa__arg_int(a, CLIP);
        o.filter_epsilon = voxa__arg_float(a, FILTER_EPSILON);
        o.progress = c->progress;
        st = b == VOXA_BACKEND_CPU ? voxa_rl_plan_execute(plan, c->in, c->out, &o)
                                   : voxa__rl_gpu_execute(b, plan, c->in, c->out, &o);
    }
    voxa_rl_plan_free(plan);
    voxa_array_free(&psf);
    return st;
}

static voxa_status run(voxa_op_ctx *c) { return run_on(c, VOXA_BACKEND_CPU); }

/* Working bytes per voxel: float32 28 (docs/stream.md); double 40: the
 * work buffer, H, the box estimate and the image copy in double, + H^T
 * for zero mode's even PSFs (acceleration, 2 boxes more, is outside both). */
enum { SCRATCH_F32 = 28, SCRATCH_F64 = 40 };
static double scratch_for(const voxa_args *a, voxa_dtype out) {
    (void)a;
    return out == VOXA_F64 ? SCRATCH_F64 : SCRATCH_F32;
}

static voxa_status device_bytes(const voxa_args *a, voxa_dtype dt, int nd, const int64_t *shape,
                                int64_t *total, int64_t *largest) {
    (void)dt;
    const voxa_array *psf = voxa__arg_array(a, PSF);
    VOXA_FAIL_IF(!psf || psf->ndim != nd, VOXA_EINVAL, "psf: missing or of another ndim");
    return voxa__rl_gpu_bytes_for(nd, shape, psf->shape,
                                  (voxa_rl_boundary)voxa__arg_int(a, BOUNDARY),
                                  (int)voxa__arg_int(a, ACCELERATE), total, largest);
}

static const voxa_op_gpu gpu = {run_on, device_bytes,
                                "4 (2 B + 4 C + V), + 4 B (free, + its class table), "
                                "+ 8 C (zero, even PSF), "
                                "+ 12 B (accelerate); B: FFT box, C: its complex values, V: "
                                "image (docs/gpu.md)", NULL};

const voxa_op voxa__op_deconvolve = {
    .name = "deconvolve",
    .python = "richardson_lucy",
    .summary = "Richardson-Lucy deconvolution of a 1-3D image by a PSF (FFTW, float32; "
               "float64 output: double).",
    .ninputs = 1,
    .params = params,
    .nparams = NPARAMS,
    .flags = VOXA_OP_LOCAL | VOXA_OP_SAME_SHAPE | VOXA_OP_HALO_APPROX,
    .check = check,
    .output = output,
    .halo = halo,
    .run = run,
    .gpu = &gpu,
    .scratch = SCRATCH_F32,
    .scratch_for = scratch_for,
};
