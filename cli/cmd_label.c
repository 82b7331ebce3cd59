/* voxa label IN -o OUT [--connectivity C] [--dtype T]: connected components
 * of the non-zero voxels, numbered like scipy.ndimage.label; prints the
 * number of components. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

const char voxa_cmd_label_help[] =
    "Label connected components of the non-zero voxels (as scipy.ndimage.label).\n"
    "\n"
    "usage: voxa label IN -o OUT [--connectivity C] [--dtype T]\n"
    "  IN                  .npy or .tif/.tiff, any dtype, 1 to 8 dimensions\n"
    "  -o, --output OUT    labels file (.npy or .tif/.tiff), written atomically\n"
    "  --connectivity C    1..ndim: neighbours differ in at most C coordinates\n"
    "                      (1 = faces, the default; ndim = full 3^ndim box)\n"
    "  --dtype T           int32 (default), uint16, uint32 or int64\n"
    "Prints the number of components. Labels are 1..n in raster (C) order of\n"
    "each component's first voxel, 0 is background. Exit 0 ok, 1 failure\n"
    "(e.g. more components than --dtype can hold), 2 usage error.\n";

int voxa_cmd_label(int argc, char **argv) {
    const char *out_path = NULL, *conn_s = NULL, *dtype_s = NULL;
    cli_option opts[] = {
        {"output", &out_path, NULL},
        {"connectivity", &conn_s, NULL},
        {"dtype", &dtype_s, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 3, voxa_cmd_label_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1) return cli_error("label", CLI_USAGE, "expected one input file (see voxa help label)");
    if (!out_path) return cli_error("label", CLI_USAGE, "missing -o OUT (see voxa help label)");
    long conn = 1;
    if (conn_s && (!cli_parse_int(conn_s, &conn) || conn < 1 || conn > VOXA_MAXDIM))
        return cli_error("label", CLI_USAGE, "--connectivity needs a whole number from 1 to the "
                         "number of dimensions, got '%s'", conn_s);
    voxa_dtype odt = VOXA_I32;
    if (dtype_s) {
        if (voxa_dtype_from_name(dtype_s, &odt) != VOXA_OK ||
            (odt != VOXA_I32 && odt != VOXA_U16 && odt != VOXA_U32 && odt != VOXA_I64))
            return cli_error("label", CLI_USAGE,
                             "--dtype must be int32, uint16, uint32 or int64, got '%s'", dtype_s);
    }

    voxa_array in = {0}, out = {0};
    voxa_status s = voxa_read(pos[0], &in);
    if (s != VOXA_OK) return cli_fail("label", s);
    rc = CLI_OK;
    if (conn > in.ndim) {
        rc = cli_error("label", CLI_USAGE, "--connectivity %ld is out of range 1..%d for the "
                       "%d-D input %s", conn, in.ndim, in.ndim, pos[0]);
        goto done;
    }
    s = voxa_array_new(&out, odt, in.ndim, in.shape);
    if (s != VOXA_OK) {
        rc = cli_fail("label", s);
        goto done;
    }
    int64_t n = 0;
    s = voxa_label(&in, NULL, (int)conn, &out, &n);
    if (s == VOXA_OK) s = voxa_write(out_path, &out);
    if (s != VOXA_OK) {
        rc = cli_fail("label", s);
        goto done;
    }
    printf("%lld\n", (long long)n);
done:
    voxa_array_free(&in);
    voxa_array_free(&out);
    return rc;
}
