/* voxa psf gaussian --shape S --sigma S -o OUT: write a model PSF. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

const char voxa_cmd_psf_help[] =
    "Write a model point spread function (normalised to sum 1).\n"
    "\n"
    "usage: voxa psf gaussian --shape Z,Y,X --sigma SZ,SY,SX -o OUT\n"
    "                         [--dtype float32|float64]\n"
    "  --shape    extents per axis (1 to 8 axes), e.g. 32,32,32\n"
    "  --sigma    standard deviation per axis in voxels (one value: all axes);\n"
    "             0 = delta\n"
    "  -o OUT     .npy or .tif; the peak is at index shape//2 on every axis\n";

int voxa_cmd_psf(int argc, char **argv) {
    const char *cmd = "psf";
    const char *shape_s = NULL, *sigma_s = NULL, *out_path = NULL, *dtype_s = NULL;
    const cli_option opts[] = {
        {"shape", &shape_s, NULL}, {"sigma", &sigma_s, NULL},
        {"output", &out_path, NULL}, {"dtype", &dtype_s, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 4, voxa_cmd_psf_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1 || strcmp(pos[0], "gaussian"))
        return cli_error(cmd, CLI_USAGE, "expected the model name 'gaussian' (see voxa help psf)");
    if (!shape_s || !sigma_s || !out_path)
        return cli_error(cmd, CLI_USAGE, "--shape, --sigma and -o are required");
    int64_t shape[VOXA_MAXDIM];
    double sigma[VOXA_MAXDIM];
    int nd = cli_parse_int64s(shape_s, shape, VOXA_MAXDIM);
    if (nd < 1) return cli_error(cmd, CLI_USAGE, "--shape: '%s' (comma-separated extents)", shape_s);
    for (int d = 0; d < nd; d++)
        if (shape[d] < 1 || shape[d] > 100000)
            return cli_error(cmd, CLI_USAGE, "--shape: extent %lld out of range 1..100000",
                             (long long)shape[d]);
    int ns = cli_parse_doubles(sigma_s, sigma, VOXA_MAXDIM);
    if (ns == 1)
        for (int d = 1; d < nd; d++) sigma[d] = sigma[0];
    else if (ns != nd)
        return cli_error(cmd, CLI_USAGE, "--sigma: '%s' (one value, or one per axis: %d)",
                         sigma_s, nd);
    for (int d = 0; d < nd; d++)
        if (!(sigma[d] >= 0))
            return cli_error(cmd, CLI_USAGE, "--sigma: %g is negative", sigma[d]);
    voxa_dtype dt = VOXA_F32;
    if (dtype_s && (voxa_dtype_from_name(dtype_s, &dt) != VOXA_OK ||
                    (dt != VOXA_F32 && dt != VOXA_F64)))
        return cli_error(cmd, CLI_USAGE, "--dtype: '%s' (float32 or float64)", dtype_s);
    voxa_array a = {0};
    voxa_status s = voxa_array_new(&a, dt, nd, shape);
    if (s == VOXA_OK) s = voxa_psf_gaussian(&a, sigma);
    if (s == VOXA_OK) s = voxa_write(out_path, &a);
    voxa_array_free(&a);
    return s == VOXA_OK ? CLI_OK : cli_fail(cmd, s);
}
