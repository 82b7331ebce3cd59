/* voxa measure LABELS [--intensity IMAGE] [--spacing Z,Y,X] -o objects.csv:
 * per-object measurements as a CSV table (one row per label, the columns of
 * skimage.measure.regionprops_table). A hand-written command: its output is
 * a table, not an array. Inputs are read as stores, block by block within
 * --mem-limit (a .npy is never loaded whole), so memory is the blocks plus
 * O(labels). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char voxa_cmd_measure_help[] =
    "Measure every labelled object: a CSV table like skimage's regionprops_table.\n"
    "\n"
    "usage: voxa measure LABELS -o OUT.csv [--intensity IMAGE] [--spacing Z,Y,X]\n"
    "                    [--properties P,...] [--mem-limit BYTES]\n"
    "  LABELS              integer label image (.npy, .tif, .zarr); labels <= 0\n"
    "                      are background\n"
    "  -o, --output OUT    CSV table with a header, written atomically\n"
    "  --intensity IMAGE   same shape, any dtype: adds intensity_mean, _min, _max,\n"
    "                      _sum and centroid_weighted-<axis>\n"
    "  --spacing Z,Y,X     voxel size per axis (one value: all axes): area becomes a\n"
    "                      physical volume, centroids physical positions\n"
    "  --properties P,...  columns, in order, among label, area, num_pixels,\n"
    "                      centroid, bbox, intensity_mean, intensity_min,\n"
    "                      intensity_max, intensity_sum, centroid_weighted,\n"
    "                      intensity_std, perimeter (2-D, isotropic spacing),\n"
    "                      euler_number (2-D, 3-D),\n"
    "                      inertia_tensor, inertia_tensor_eigvals,\n"
    "                      axis_major_length, axis_minor_length (2-D, 3-D),\n"
    "                      eccentricity, orientation (2-D)\n"
    "                      (default: label,area,centroid,bbox and, with\n"
    "                      --intensity, every intensity column but _std)\n"
    "  --mem-limit BYTES   bytes of image blocks in memory (suffix K, M or G;\n"
    "                      default 64M); the table is O(objects) on top\n"
    "Prints the number of objects. Exit 0 ok, 1 failure, 2 usage error.\n";

int voxa_cmd_measure(int argc, char **argv) {
    const char *out_path = NULL, *int_path = NULL, *sp_s = NULL, *props = NULL, *mem_s = NULL;
    cli_option opts[] = {
        {"output", &out_path, NULL},  {"intensity", &int_path, NULL},
        {"spacing", &sp_s, NULL},     {"properties", &props, NULL},
        {"mem-limit", &mem_s, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 5, voxa_cmd_measure_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1)
        return cli_error("measure", CLI_USAGE, "expected one LABELS file (see voxa help measure)");
    if (!out_path) return cli_error("measure", CLI_USAGE, "missing -o OUT.csv (see voxa help measure)");
    double sp[VOXA_MAXDIM];
    int nsp = 0;
    if (sp_s) {
        nsp = cli_parse_doubles(sp_s, sp, VOXA_MAXDIM);
        if (nsp < 1)
            return cli_error("measure", CLI_USAGE,
                             "--spacing needs comma-separated numbers, got '%s'", sp_s);
        for (int i = 0; i < nsp; i++)
            if (!(sp[i] > 0))
                return cli_error("measure", CLI_USAGE, "--spacing values must be > 0, got '%s'",
                                 sp_s);
    }
    int64_t mem = 0;
    if (mem_s && !cli_parse_size(mem_s, &mem))
        return cli_error("measure", CLI_USAGE,
                         "--mem-limit needs a positive size (e.g. 512M), got '%s'", mem_s);

    voxa_store *ls = NULL, *is = NULL;
    voxa_measure_table t = {0};
    voxa_status s = VOXA_OK;
    if ((rc = cli_open_stores("measure", pos[0], &ls, int_path, &is)) != CLI_OK) goto done;
    voxa_dtype lt;
    int nd;
    int64_t shape[VOXA_MAXDIM];
    voxa_store_info(ls, &lt, &nd, shape);
    if ((rc = cli_spacing_axes("measure", sp, nsp, nd)) != CLI_OK) goto done;
    int flags = voxa_measure_flags_for(props);
    for (int d = 1; (flags & VOXA_MEASURE_PERIMETER) && d < nsp; d++)
        if (sp[d] != sp[0]) {
            rc = cli_error("measure", CLI_USAGE, "perimeter supports isotropic spacings only "
                           "(--spacing %s)", sp_s);
            goto done;
        }
    /* a bad property list fails now, not after a pass over the volume */
    if (voxa_measure_check_properties(props, nd, flags | (is ? VOXA_MEASURE_INTENSITY : 0)) !=
        VOXA_OK) {
        rc = cli_error("measure", CLI_USAGE, "%s", voxa_last_error());
        goto done;
    }
    voxa_progress prog = {cli_progress, (void *)"measure"};
    s = voxa_measure_store_with(ls, is, sp_s ? sp : NULL, mem, flags, prog, &t);
    if (s == VOXA_OK) s = voxa_measure_write_csv(&t, props, out_path);
    if (s != VOXA_OK) {
        rc = cli_fail("measure", s);
        goto done;
    }
    printf("%lld\n", (long long)t.n);
done:
    voxa_measure_table_free(&t);
    voxa_store_close(is);
    voxa_store_close(ls);
    return rc;
}
