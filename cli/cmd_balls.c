/* voxa balls: ball masks (or owner maps) around points from a CSV table. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char voxa_cmd_balls_help[] =
    "Paint balls of radius r around points from a CSV table (exact W1 rule).\n"
    "\n"
    "usage: voxa balls --shape Z,Y,X --points pts.csv [--radius R] [--spacing Z,Y,X]\n"
    "                  [--owner] -o OUT\n"
    "\n"
    "  --shape S       output shape, 2 or 3 axes (Y,X or Z,Y,X)\n"
    "  --points CSV    table with a header; columns x, y (and z for 3-D shapes) in\n"
    "                  voxel units, optional 'radius'; other columns are ignored\n"
    "  --radius R      radius for every point (default: the table's radius column)\n"
    "  --spacing S     voxel size per axis (anisotropic balls), default 1\n"
    "  --owner         write int32 owners (1-based row of the nearest point within\n"
    "                  reach, ties to the lower row) instead of a bool mask\n"
    "  -o OUT          output .npy or .tif (written atomically)\n"
    "\n"
    "Voxel v is inside iff sum_d ((v_d - p_d) * s_d)^2 <= r^2 in double precision.\n";

static const char *axis_names[3] = {"z", "y", "x"};

int voxa_cmd_balls(int argc, char **argv) {
    const char *shape_s = NULL, *points_s = NULL, *radius_s = NULL, *spacing_s = NULL,
               *out_s = NULL;
    bool owner = false;
    const cli_option opts[] = {
        {"shape", &shape_s, NULL},     {"points", &points_s, NULL}, {"radius", &radius_s, NULL},
        {"spacing", &spacing_s, NULL}, {"owner", NULL, &owner},     {"output", &out_s, NULL},
    };
    const char *pos[1];
    int npos, rc = cli_parse(argc, argv, opts, 6, voxa_cmd_balls_help, pos, 0, &npos);
    if (rc != CLI_OK) return rc;
    if (!shape_s || !points_s || !out_s)
        return cli_error("balls", CLI_USAGE, "--shape, --points and -o are required");
    int64_t shape[VOXA_MAXDIM];
    int ndim = cli_parse_int64s(shape_s, shape, 3);
    if (ndim < 2) return cli_error("balls", CLI_USAGE, "--shape must be Y,X or Z,Y,X, got '%s'",
                                   shape_s);
    for (int d = 0; d < ndim; d++)
        if (shape[d] < 1)
            return cli_error("balls", CLI_USAGE, "--shape must be positive, got '%s'", shape_s);
    double spacing[3], radius = 0;
    if (spacing_s && cli_parse_doubles(spacing_s, spacing, 3) != ndim)
        return cli_error("balls", CLI_USAGE, "--spacing needs %d values, got '%s'", ndim,
                         spacing_s);
    if (radius_s && (!cli_parse_double(radius_s, &radius) || radius < 0))
        return cli_error("balls", CLI_USAGE, "--radius must be a number >= 0, got '%s'", radius_s);

    voxa_table t = {0};
    voxa_array out = {0};
    double *pts = NULL, *radii = NULL;
    voxa_status s = voxa_csv_read(points_s, &t);
    if (s != VOXA_OK) return cli_fail("balls", s);
    rc = CLI_FAIL;
    int col[3], rcol = voxa_table_column(&t, "radius");
    for (int d = 0; d < ndim; d++) {
        col[d] = voxa_table_column(&t, axis_names[3 - ndim + d]);
        if (col[d] < 0) {
            cli_error("balls", CLI_FAIL, "%s: no column '%s' (a %d-D shape needs %s)", points_s,
                      axis_names[3 - ndim + d], ndim, ndim == 3 ? "x, y, z" : "x, y");
            goto done;
        }
    }
    if (!radius_s && rcol < 0) {
        cli_error("balls", CLI_USAGE, "give --radius or a 'radius' column in %s", points_s);
        rc = CLI_USAGE;
        goto done;
    }
    if (t.nrows == 0) {
        cli_error("balls", CLI_FAIL, "%s: the points table is empty", points_s);
        goto done;
    }
    pts = malloc((size_t)t.nrows * (size_t)ndim * sizeof *pts);
    radii = radius_s ? NULL : malloc((size_t)t.nrows * sizeof *radii);
    if (!pts || (!radius_s && !radii)) {
        cli_error("balls", CLI_FAIL, "out of memory for %lld points", (long long)t.nrows);
        goto done;
    }
    for (int64_t k = 0; k < t.nrows; k++) {
        for (int d = 0; d < ndim; d++) {
            double v = t.values[k * t.ncols + col[d]];
            if (!isfinite(v)) {
                cli_error("balls", CLI_FAIL, "%s line %lld: %s is not a finite number", points_s,
                          (long long)k + 2, axis_names[3 - ndim + d]);
                goto done;
            }
            pts[k * ndim + d] = v;
        }
        if (radii) radii[k] = t.values[k * t.ncols + rcol];
    }
    voxa_dtype dt = !owner ? VOXA_BOOL : t.nrows <= INT32_MAX ? VOXA_I32 : VOXA_I64;
    s = voxa_array_new(&out, dt, ndim, shape);
    voxa_balls_params p = {.points = pts, .npoints = t.nrows, .radius = radius, .radii = radii,
                           .spacing = spacing_s ? spacing : NULL, .owner = owner};
    if (s == VOXA_OK) s = voxa_balls(&p, &out);
    if (s == VOXA_OK) s = voxa_write(out_s, &out);
    if (s != VOXA_OK) {
        rc = cli_fail("balls", s);
        goto done;
    }
    int64_t inside = 0, n = voxa_array_size(&out);
    size_t es = voxa_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *v = (const unsigned char *)out.data + i * (int64_t)es;
        inside += es == 1 ? v[0] != 0 : es == 4 ? *(const int32_t *)v != 0 : *(const int64_t *)v != 0;
    }
    printf("balls: %lld points -> %lld of %lld voxels inside (%.3f%%) -> %s\n",
           (long long)t.nrows, (long long)inside, (long long)n, 100.0 * (double)inside / (double)n,
           out_s);
    rc = CLI_OK;
done:
    voxa_table_free(&t);
    voxa_array_free(&out);
    free(pts);
    free(radii);
    return rc;
}
