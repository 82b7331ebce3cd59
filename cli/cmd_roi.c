/* voxa roi IN (--corners F | --centres F) --size A,B[,C] -o OUT: cut patches.
 *
 * Also home of the coordinate-table loader that `voxa paste` shares
 * (roi_cli_load_coords): .npy (an N x k numeric array) or .csv (columns by
 * name, read with voxa_csv_read). Column rule for CSV: axis0, axis1, ... when
 * present (any k); otherwise the last k of z, y, x (k <= 3: 2 -> y,x;
 * 3 -> z,y,x), so W1-style tables (x, y, z, ID, mass...) work as they are;
 * other columns are ignored, names are case-insensitive. Corners must be
 * integers; centres are rounded half to even (as np.rint). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char voxa_cmd_roi_help[] =
    "Cut N fixed-shape patches out of an array into one (N, *size, *rest) array.\n"
    "\n"
    "usage: voxa roi IN (--corners COORDS | --centres COORDS) --size A[,B...] -o OUT\n"
    "                [--mode error|clip|constant|nearest|reflect] [--value V]\n"
    "  IN          .npy or .tif/.tiff image or volume\n"
    "  COORDS      .npy (N x k numbers) or .csv with a header: columns axis0..axis{k-1},\n"
    "              or z,y,x / y,x (other columns ignored); k = number of --size entries.\n"
    "              Corners must be integers; centres are rounded half to even and the\n"
    "              corner is centre - size // 2. Row numbers in messages count data rows\n"
    "              from 0.\n"
    "  --size      patch extents of the first k axes; the other axes are taken whole\n"
    "  --mode      patches reaching outside: error (default; names the first such row),\n"
    "              clip (shift inside), or pad like numpy.pad: constant (--value, default\n"
    "              0), nearest (pad's 'edge'), reflect (no edge repeat)\n"
    "  OUT         output array file (.npy; .tif for 3-D results)\n"
    ;

/* Pick the coordinate columns of a table; k_want 0 infers k. */
static int table_columns(const char *cmd, const char *path, const voxa_table *t, int k_want,
                         int *cols, int *k) {
    static const char *zyx[3] = {"z", "y", "x"};
    char name[16];
    int na = 0;
    while (na < VOXA_MAXDIM) {
        snprintf(name, sizeof name, "axis%d", na);
        if (voxa_table_column(t, name) < 0) break;
        na++;
    }
    int kk = k_want;
    if (!kk)
        kk = na ? na
                : voxa_table_column(t, "z") >= 0 ? 3
                : voxa_table_column(t, "y") >= 0 ? 2
                                                  : 1;
    if (na >= kk) {
        for (int d = 0; d < kk; d++) {
            snprintf(name, sizeof name, "axis%d", d);
            cols[d] = voxa_table_column(t, name);
        }
    } else {
        if (kk > 3)
            return cli_error(cmd, CLI_FAIL, "%s: no column 'axis%d' (a %d-axis table needs "
                             "columns axis0..axis%d)", path, na, kk, kk - 1);
        for (int d = 0; d < kk; d++) {
            cols[d] = voxa_table_column(t, zyx[3 - kk + d]);
            if (cols[d] < 0)
                return cli_error(cmd, CLI_FAIL, "%s: no column '%s' (need columns %s or "
                                 "axis0..axis%d)", path, zyx[3 - kk + d],
                                 kk == 3 ? "z,y,x" : kk == 2 ? "y,x" : "x", kk - 1);
        }
    }
    *k = kk;
    return CLI_OK;
}

/* Load coordinates from `path` into a malloc'ed n x k int64 array (*out,
 * free() it). k_want: required column count, or 0 to infer it (from the
 * .npy shape or the CSV column names). Returns a CLI exit code. */
int roi_cli_load_coords(const char *cmd, const char *path, int k_want, int centered,
                        int64_t **out, int64_t *n, int *k);
int roi_cli_load_coords(const char *cmd, const char *path, int k_want, int centered,
                        int64_t **out, int64_t *n, int *k) {
    const char *ext = cli_ext(path);
    double *vals = NULL;
    int rc = CLI_OK;
    *out = NULL;
    if (!strcmp(ext, ".csv")) {
        voxa_table t;
        voxa_status s = voxa_csv_read(path, &t);
        if (s != VOXA_OK) return cli_fail(cmd, s);
        int cols[VOXA_MAXDIM];
        rc = table_columns(cmd, path, &t, k_want, cols, k);
        if (rc == CLI_OK) {
            *n = t.nrows;
            vals = malloc((size_t)(t.nrows * *k + 1) * sizeof *vals);
            if (!vals) rc = cli_error(cmd, CLI_FAIL, "out of memory reading %s", path);
            for (int64_t i = 0; vals && i < t.nrows; i++)
                for (int d = 0; d < *k; d++)
                    vals[i * *k + d] = t.values[i * t.ncols + cols[d]];
        }
        voxa_table_free(&t);
    } else {
        voxa_array a;
        voxa_status s = voxa_read(path, &a);
        if (s != VOXA_OK) return cli_fail(cmd, s);
        if (a.ndim == 1 && (a.shape[0] == 0 || k_want == 1)) { /* a column, or empty */
            a.ndim = 2;
            a.shape[1] = a.shape[0] ? 1 : (k_want ? k_want : 1);
            a.strides[1] = a.strides[0];
        }
        if (a.ndim != 2 || (k_want && a.shape[1] != k_want) || a.shape[1] < 1 ||
            a.shape[1] > VOXA_MAXDIM) {
            rc = cli_error(cmd, CLI_FAIL, "%s: coordinates must be an N x %s array, got %d "
                           "dimensions%s", path, k_want ? "k (one column per --size entry)"
                           : "k", a.ndim, a.ndim == 2 ? " with the wrong column count" : "");
        } else {
            *k = (int)a.shape[1];
            *n = a.shape[0];
            vals = malloc((size_t)(*n * *k + 1) * sizeof *vals);
            if (!vals) rc = cli_error(cmd, CLI_FAIL, "out of memory reading %s", path);
            for (int64_t i = 0; vals && i < *n; i++)
                for (int d = 0; d < *k; d++) vals[i * *k + d] = voxa_array_get(&a, (const int64_t[2]){i, d});
        }
        voxa_array_free(&a);
    }
    if (rc == CLI_OK) {
        *out = malloc((size_t)(*n * *k + 1) * sizeof **out);
        if (!*out) rc = cli_error(cmd, CLI_FAIL, "out of memory");
    }
    if (rc == CLI_OK) {
        voxa_status s = voxa_roi_coords_from_doubles(vals, *n, *k, centered, *out);
        if (s != VOXA_OK) rc = cli_error(cmd, CLI_FAIL, "%s: %s", path, voxa_last_error());
    }
    free(vals);
    if (rc != CLI_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

int voxa_cmd_roi(int argc, char **argv) {
    const char *corners = NULL, *centres = NULL, *centers = NULL, *size_s = NULL;
    const char *output = NULL, *mode_s = NULL, *value_s = NULL;
    cli_option opts[] = {{"corners", &corners, NULL}, {"centres", &centres, NULL},
                         {"centers", &centers, NULL}, {"size", &size_s, NULL},
                         {"output", &output, NULL},   {"mode", &mode_s, NULL},
                         {"value", &value_s, NULL}};
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 7, voxa_cmd_roi_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    if (!centres) centres = centers;
    if (npos != 1) return cli_error("roi", CLI_USAGE, "expected one input file (see voxa help roi)");
    if (!!corners + !!centres != 1)
        return cli_error("roi", CLI_USAGE, "give exactly one of --corners and --centres");
    if (!output) return cli_error("roi", CLI_USAGE, "missing -o OUT");
    int64_t size[VOXA_MAXDIM];
    int k = size_s ? cli_parse_int64s(size_s, size, VOXA_MAXDIM) : -1;
    if (k < 1)
        return cli_error("roi", CLI_USAGE, "--size needs 1 to %d comma-separated integers, "
                         "got '%s'", VOXA_MAXDIM, size_s ? size_s : "");
    voxa_roi_params p;
    memset(&p, 0, sizeof p);
    if (mode_s && voxa_roi_mode_from_name(mode_s, &p.mode) != VOXA_OK)
        return cli_error("roi", CLI_USAGE, "%s", voxa_last_error());
    if (p.mode == VOXA_ROI_CROP)
        return cli_error("roi", CLI_USAGE, "--mode crop is for voxa paste");
    if (value_s && !cli_parse_double(value_s, &p.cval))
        return cli_error("roi", CLI_USAGE, "--value needs a number, got '%s'", value_s);

    voxa_array img, out;
    memset(&out, 0, sizeof out);
    int64_t *coords = NULL;
    voxa_status s = voxa_read(pos[0], &img);
    if (s != VOXA_OK) return cli_fail("roi", s);
    if (k > img.ndim) {
        voxa_array_free(&img);
        return cli_error("roi", CLI_USAGE, "--size has %d entries but %s has %d dimensions", k,
                         pos[0], img.ndim);
    }
    rc = roi_cli_load_coords("roi", corners ? corners : centres, k, !!centres, &coords, &p.n,
                             &p.k);
    if (rc == CLI_OK) {
        int64_t shape[VOXA_MAXDIM + 1];
        shape[0] = p.n;
        for (int d = 0; d < img.ndim; d++) shape[d + 1] = d < k ? size[d] : img.shape[d];
        for (int d = 0; d < k; d++)
            if (size[d] < 0) {
                rc = cli_error("roi", CLI_USAGE, "--size entry %d is negative (%lld)", d,
                               (long long)size[d]);
                break;
            }
        p.coords = coords;
        p.size = size;
        p.centered = !!centres;
        if (rc == CLI_OK && img.ndim + 1 > VOXA_MAXDIM)
            rc = cli_error("roi", CLI_FAIL, "%s has %d dimensions: the result would have "
                           "more than %d", pos[0], img.ndim, VOXA_MAXDIM);
        if (rc == CLI_OK) {
            s = voxa_array_new(&out, img.dtype, img.ndim + 1, shape);
            if (s == VOXA_OK) s = voxa_roi_extract(&img, &p, &out);
            if (s == VOXA_OK) s = voxa_write(output, &out);
            if (s != VOXA_OK) rc = cli_fail("roi", s);
        }
    }
    free(coords);
    voxa_array_free(&out);
    voxa_array_free(&img);
    return rc;
}
