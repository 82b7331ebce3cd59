/* voxa edt IN -o OUT: Euclidean, city-block or chessboard distance transform. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

const char voxa_cmd_edt_help[] =
    "Distance of every foreground (non-zero) voxel to the nearest background voxel.\n"
    "\n"
    "usage: voxa edt IN -o OUT [--spacing z,y,x] [--metric euclidean|cityblock|chessboard]\n"
    "                          [--squared] [--dtype float64|float32|uint32]\n"
    "  IN              .npy or .tif/.tiff array, any dtype (non-zero = foreground)\n"
    "  -o OUT          output array (.npy or .tif); same shape\n"
    "  --spacing S     voxel size per axis (euclidean only), default 1\n"
    "  --metric M      euclidean (default, = scipy distance_transform_edt), cityblock or\n"
    "                  chessboard (= scipy distance_transform_cdt, int32, -1 without background)\n"
    "  --squared       squared Euclidean distances\n"
    "  --dtype T       euclidean output type: float64 (default), float32, or uint32 (squared,\n"
    "                  unit spacing)\n";

int voxa_cmd_edt(int argc, char **argv) {
    const char *outp = NULL, *spacing = NULL, *metric = "euclidean", *dtype = NULL;
    bool squared = false;
    cli_option opts[] = {{"output", &outp, NULL},  {"spacing", &spacing, NULL},
                         {"metric", &metric, NULL}, {"dtype", &dtype, NULL},
                         {"squared", NULL, &squared}};
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 5, voxa_cmd_edt_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1) return cli_error("edt", CLI_USAGE, "expected one input file (see voxa help edt)");
    if (!outp) return cli_error("edt", CLI_USAGE, "missing -o OUT");
    int euclid = !strcmp(metric, "euclidean");
    voxa_edt_metric m = VOXA_EDT_TAXICAB;
    if (!euclid) {
        if (!strcmp(metric, "cityblock") || !strcmp(metric, "taxicab")) m = VOXA_EDT_TAXICAB;
        else if (!strcmp(metric, "chessboard")) m = VOXA_EDT_CHESSBOARD;
        else
            return cli_error("edt", CLI_USAGE,
                             "--metric '%s': expected euclidean, cityblock or chessboard", metric);
        if (spacing || squared || dtype)
            return cli_error("edt", CLI_USAGE,
                             "--spacing, --squared and --dtype apply to --metric euclidean only");
    }
    voxa_dtype odt = VOXA_F64;
    if (dtype && voxa_dtype_from_name(dtype, &odt) != VOXA_OK)
        return cli_error("edt", CLI_USAGE, "--dtype '%s': expected float64, float32 or uint32",
                         dtype);
    voxa_array in, out = {0};
    voxa_status s = voxa_read(pos[0], &in);
    if (s != VOXA_OK) return cli_fail("edt", s);
    double sp[VOXA_MAXDIM];
    if (spacing) {
        int k = cli_parse_doubles(spacing, sp, VOXA_MAXDIM);
        if (k != in.ndim) {
            int nd = in.ndim;
            voxa_array_free(&in);
            return cli_error("edt", CLI_USAGE, "--spacing '%s': expected %d comma-separated values",
                             spacing, nd);
        }
    }
    s = voxa_array_new(&out, euclid ? odt : VOXA_I32, in.ndim, in.shape);
    if (s == VOXA_OK) {
        if (euclid) {
            voxa_edt_params p = {spacing ? sp : NULL, squared, {cli_progress, (void *)"edt"}};
            s = voxa_edt(&in, &out, &p);
        } else {
            s = voxa_edt_cdt(&in, &out, m);
        }
    }
    if (s == VOXA_OK) s = voxa_write(outp, &out);
    voxa_array_free(&in);
    voxa_array_free(&out);
    return s == VOXA_OK ? CLI_OK : cli_fail("edt", s);
}
