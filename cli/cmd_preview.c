/* voxa preview IN -o out.png: a PNG of maximum-intensity projections and
 * orthogonal slices (3-D) or of the image (2-D), with labels in colour and a
 * scale bar. A hand-written command: its output is a picture. Inputs are
 * read as stores in slabs within --mem-limit (a .npy is never loaded whole). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char voxa_cmd_preview_help[] =
    "Draw projections and slices of an image (and its labels) into a PNG.\n"
    "\n"
    "usage: voxa preview IN -o OUT.png [--labels LABELS] [--spacing Z,Y,X]\n"
    "                    [--point Z,Y,X] [--percentiles LO,HI] [--mem-limit BYTES]\n"
    "       voxa preview --labels LABELS -o OUT.png [...]\n"
    "  IN                  2-D or 3-D image, any dtype (.npy, .tif, .zarr)\n"
    "  -o, --output OUT    PNG, written atomically. 3-D: maximum-intensity\n"
    "                      projections (left) and slices through --point (right),\n"
    "                      each as x-y, z-y (right of it) and x-z (below it)\n"
    "  --labels LABELS     integer labels of the same shape, drawn in distinct\n"
    "                      colours over the image (projections: largest label)\n"
    "  --spacing Z,Y,X     voxel size: physical proportions and a scale bar\n"
    "  --point Z,Y,X       voxel the slices go through (default: the centre)\n"
    "  --percentiles LO,HI contrast limits as percentiles (default 0.5,99.5)\n"
    "  --mem-limit BYTES   bytes of image slabs in memory (suffix K, M, G;\n"
    "                      default 64M)\n"
    "Exit 0 ok, 1 failure, 2 usage error.\n";

int voxa_cmd_preview(int argc, char **argv) {
    const char *out_path = NULL, *lab_path = NULL, *sp_s = NULL, *pt_s = NULL, *pc_s = NULL,
               *mem_s = NULL;
    cli_option opts[] = {
        {"output", &out_path, NULL}, {"labels", &lab_path, NULL},    {"spacing", &sp_s, NULL},
        {"point", &pt_s, NULL},      {"percentiles", &pc_s, NULL}, {"mem-limit", &mem_s, NULL},
    };
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 6, voxa_cmd_preview_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1 && !(npos == 0 && lab_path))
        return cli_error("preview", CLI_USAGE, "expected one input file (see voxa help preview)");
    if (!out_path) return cli_error("preview", CLI_USAGE, "missing -o OUT.png (see voxa help preview)");
    size_t olen = strlen(out_path);
    if (olen < 4 || strcmp(out_path + olen - 4, ".png") != 0)
        return cli_error("preview", CLI_USAGE, "-o must name a .png file, got '%s'", out_path);
    voxa_preview_options o = {0};
    double sp[VOXA_MAXDIM], pc[2];
    int64_t pt[VOXA_MAXDIM];
    int nsp = 0, npt = 0;
    if (sp_s && (nsp = cli_parse_doubles(sp_s, sp, VOXA_MAXDIM)) < 1)
        return cli_error("preview", CLI_USAGE, "--spacing needs comma-separated numbers, got '%s'",
                         sp_s);
    if (pt_s && (npt = cli_parse_int64s(pt_s, pt, VOXA_MAXDIM)) < 1)
        return cli_error("preview", CLI_USAGE, "--point needs comma-separated whole numbers, "
                         "got '%s'", pt_s);
    if (pc_s) {
        if (cli_parse_doubles(pc_s, pc, 2) != 2)
            return cli_error("preview", CLI_USAGE, "--percentiles needs LO,HI, got '%s'", pc_s);
        o.lo_pct = pc[0];
        o.hi_pct = pc[1];
    }
    if (mem_s && !cli_parse_size(mem_s, &o.mem_limit))
        return cli_error("preview", CLI_USAGE,
                         "--mem-limit needs a positive size (e.g. 512M), got '%s'", mem_s);

    voxa_store *is = NULL, *ls = NULL;
    voxa_array rgb = {0};
    voxa_status s = VOXA_OK;
    if ((rc = cli_open_stores("preview", npos == 1 ? pos[0] : NULL, &is, lab_path, &ls)) != CLI_OK)
        goto done;
    voxa_dtype t;
    int nd;
    int64_t shape[VOXA_MAXDIM];
    voxa_store_info(is ? is : ls, &t, &nd, shape);
    if ((rc = cli_spacing_axes("preview", sp, nsp, nd)) != CLI_OK) goto done;
    if (pt_s && npt != nd) {
        rc = cli_error("preview", CLI_USAGE, "--point has %d values for a %d-D input", npt, nd);
        goto done;
    }
    o.spacing = sp_s ? sp : NULL;
    o.point = pt_s ? pt : NULL;
    o.progress = (voxa_progress){cli_progress, (void *)"preview"};
    s = voxa_preview(is, ls, &o, &rgb);
    if (s == VOXA_OK) s = voxa_png_write(out_path, &rgb);
    if (s != VOXA_OK) rc = cli_fail("preview", s);
done:
    voxa_array_free(&rgb);
    voxa_store_close(is);
    voxa_store_close(ls);
    return rc;
}
