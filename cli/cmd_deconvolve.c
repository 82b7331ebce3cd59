/* voxa deconvolve IN --psf PSF -o OUT: Richardson–Lucy deconvolution. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char voxa_cmd_deconvolve_help[] =
    "Richardson-Lucy deconvolution of a 1-3D image by a PSF (FFTW, float32).\n"
    "\n"
    "usage: voxa deconvolve IN --psf PSF -o OUT [--iterations 20]\n"
    "                       [--boundary free|periodic|zero] [--accelerate]\n"
    "                       [--normalize-psf] [--clip] [--filter-epsilon E]\n"
    "                       [--dtype float32|float64] [--measure]\n"
    "  IN                .npy or .tif image (any integer or float dtype, finite)\n"
    "  --psf PSF         .npy or .tif PSF, same ndim, no larger than IN; centre at shape//2\n"
    "  -o OUT            output file (float32 unless --dtype float64)\n"
    "  --iterations N    number of iterations, >= 1 (default 20)\n"
    "  --boundary MODE   free (default): wrap-free, normalised at the borders (Bertero &\n"
    "                    Boccacci); periodic: the published FFT formula (circular);\n"
    "                    zero: scikit-image's richardson_lucy (0.5 start, zero padding)\n"
    "  --accelerate      Biggs-Andrews acceleration (fewer iterations, 3 more buffers)\n"
    "  --normalize-psf   divide the PSF by its sum first\n"
    "  --clip            clip the result to [-1, 1] (scikit-image's default)\n"
    "  --filter-epsilon E  zero mode: ratio 0 where the blurred estimate is below E\n"
    "  --measure         let FFTW time its algorithms first (seconds of planning,\n"
    "                    up to 3x faster iterations: for long runs)\n"
    "  --wisdom FILE     with --measure: reuse the plans saved in FILE (if it exists)\n"
    "                    and save them there, so later runs plan in milliseconds\n";

int voxa_cmd_deconvolve(int argc, char **argv) {
    const char *cmd = "deconvolve";
    const char *psf_path = NULL, *out_path = NULL, *iters_s = NULL, *bound_s = NULL,
               *fe_s = NULL, *dtype_s = NULL, *wisdom = NULL;
    bool accel = false, norm = false, clip = false, measure = false;
    const cli_option opts[] = {
        {"psf", &psf_path, NULL},          {"output", &out_path, NULL},
        {"iterations", &iters_s, NULL},    {"boundary", &bound_s, NULL},
        {"filter-epsilon", &fe_s, NULL},   {"dtype", &dtype_s, NULL},
        {"accelerate", NULL, &accel},      {"normalize-psf", NULL, &norm},
        {"clip", NULL, &clip},             {"measure", NULL, &measure},
        {"wisdom", &wisdom, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]),
                       voxa_cmd_deconvolve_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1) return cli_error(cmd, CLI_USAGE, "expected one input file (see voxa help deconvolve)");
    if (!psf_path) return cli_error(cmd, CLI_USAGE, "--psf PSF is required");
    if (!out_path) return cli_error(cmd, CLI_USAGE, "-o OUT is required");

    voxa_rl_options o;
    voxa_rl_options_init(&o);
    if (iters_s) {
        long n;
        if (!cli_parse_int(iters_s, &n) || n < 1 || n > 1000000)
            return cli_error(cmd, CLI_USAGE, "--iterations: '%s' (a whole number >= 1)", iters_s);
        o.iterations = (int)n;
    }
    voxa_rl_boundary b = VOXA_RL_FREE;
    if (bound_s && voxa_rl_boundary_from_name(bound_s, &b) != VOXA_OK)
        return cli_error(cmd, CLI_USAGE, "--boundary: '%s' (free, periodic or zero)", bound_s);
    if (fe_s && (!cli_parse_double(fe_s, &o.filter_epsilon) || o.filter_epsilon < 0))
        return cli_error(cmd, CLI_USAGE, "--filter-epsilon: '%s' (a number >= 0)", fe_s);
    voxa_dtype odt = VOXA_F32;
    if (dtype_s && (voxa_dtype_from_name(dtype_s, &odt) != VOXA_OK ||
                    (odt != VOXA_F32 && odt != VOXA_F64)))
        return cli_error(cmd, CLI_USAGE, "--dtype: '%s' (float32 or float64)", dtype_s);
    o.accelerate = accel;
    o.clip = clip;
    o.progress.fn = cli_progress;
    o.progress.user = (void *)"deconvolve";

    voxa_array in = {0}, psf = {0}, out = {0};
    voxa_rl_plan *plan = NULL;
    voxa_status s = voxa_read(pos[0], &in);
    if (s != VOXA_OK) goto fail;
    s = voxa_psf_read(psf_path, norm, &psf);
    if (s != VOXA_OK) goto fail;
    if (in.ndim < 1 || in.ndim > 3) {
        rc = cli_error(cmd, CLI_FAIL, "%s: %d dimensions (1, 2 or 3 supported)", pos[0], in.ndim);
        goto done;
    }
    if (psf.ndim != in.ndim) {
        rc = cli_error(cmd, CLI_FAIL, "%s: the PSF has %d dimensions, the image %d", psf_path,
                       psf.ndim, in.ndim);
        goto done;
    }
    if (wisdom && !measure) {
        rc = cli_error(cmd, CLI_USAGE, "--wisdom needs --measure");
        goto done;
    }
    if (wisdom && access(wisdom, F_OK) == 0) {
        s = voxa_deconv_wisdom_load(wisdom);
        if (s != VOXA_OK) goto fail;
    }
    s = voxa_rl_plan_new(&plan, in.ndim, in.shape, &psf, b, measure ? VOXA_RL_MEASURE : 0);
    if (s != VOXA_OK) goto fail;
    if (wisdom) {
        s = voxa_deconv_wisdom_save(wisdom);
        if (s != VOXA_OK) goto fail;
    }
    s = voxa_array_new(&out, odt, in.ndim, in.shape);
    if (s != VOXA_OK) goto fail;
    s = voxa_rl_plan_execute(plan, &in, &out, &o);
    if (s != VOXA_OK) goto fail;
    s = voxa_write(out_path, &out);
    if (s != VOXA_OK) goto fail;
    rc = CLI_OK;
    goto done;
fail:
    rc = cli_fail(cmd, s);
done:
    voxa_rl_plan_free(plan);
    voxa_array_free(&in);
    voxa_array_free(&psf);
    voxa_array_free(&out);
    return rc;
}
