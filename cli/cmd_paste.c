/* voxa paste PATCHES (--corners F | --centres F) (--volume V | --shape S) -o OUT:
 * write patches back into a volume (the inverse of voxa roi). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char voxa_cmd_paste_help[] =
    "Paste N patches back into a volume (overwrite, add, max or mean).\n"
    "\n"
    "usage: voxa paste PATCHES (--corners COORDS | --centres COORDS)\n"
    "                  (--volume VOL | --shape A,B[,...]) -o OUT\n"
    "                  [--op overwrite|add|max|mean] [--mode error|clip|crop]\n"
    "  PATCHES     (N, *size, *rest) array, e.g. from voxa roi (.npy)\n"
    "  COORDS      as for voxa roi: .npy (N x k) or .csv (axis0.. or z,y,x / y,x\n"
    "              columns); k is the .npy column count or the number of such columns;\n"
    "              the patch size is PATCHES.shape[1:1+k]\n"
    "  --volume    array to paste into (not changed: the result goes to OUT)\n"
    "  --shape     or start from zeros of this shape, in the patches' dtype\n"
    "  --op        overwrite (default; later rows win where patches overlap), add,\n"
    "              max, mean (covered voxels = mean of the patch values covering them,\n"
    "              integers rounded half to even; others keep their value)\n"
    "  --mode      patches reaching outside: error (default), clip (shift inside as\n"
    "              voxa roi --mode clip does), crop (write only the inside part)\n";

int roi_cli_load_coords(const char *cmd, const char *path, int k_want, int centered,
                        int64_t **out, int64_t *n, int *k); /* cli/cmd_roi.c */

int voxa_cmd_paste(int argc, char **argv) {
    const char *corners = NULL, *centres = NULL, *centers = NULL, *volume_s = NULL;
    const char *shape_s = NULL, *output = NULL, *op_s = NULL, *mode_s = NULL;
    cli_option opts[] = {{"corners", &corners, NULL}, {"centres", &centres, NULL},
                         {"centers", &centers, NULL}, {"volume", &volume_s, NULL},
                         {"shape", &shape_s, NULL},   {"output", &output, NULL},
                         {"op", &op_s, NULL},         {"mode", &mode_s, NULL}};
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 8, voxa_cmd_paste_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
    if (!centres) centres = centers;
    if (npos != 1)
        return cli_error("paste", CLI_USAGE, "expected one PATCHES file (see voxa help paste)");
    if (!!corners + !!centres != 1)
        return cli_error("paste", CLI_USAGE, "give exactly one of --corners and --centres");
    if (!!volume_s + !!shape_s != 1)
        return cli_error("paste", CLI_USAGE, "give exactly one of --volume and --shape");
    if (!output) return cli_error("paste", CLI_USAGE, "missing -o OUT");
    voxa_roi_params p;
    memset(&p, 0, sizeof p);
    voxa_paste_op op = VOXA_PASTE_OVERWRITE;
    if (op_s && voxa_paste_op_from_name(op_s, &op) != VOXA_OK)
        return cli_error("paste", CLI_USAGE, "%s", voxa_last_error());
    if (mode_s && (voxa_roi_mode_from_name(mode_s, &p.mode) != VOXA_OK ||
                   (p.mode != VOXA_ROI_ERROR && p.mode != VOXA_ROI_CLIP &&
                    p.mode != VOXA_ROI_CROP)))
        return cli_error("paste", CLI_USAGE, "--mode must be error, clip or crop, got '%s'",
                         mode_s);
    int64_t shape[VOXA_MAXDIM];
    int nshape = 0;
    if (shape_s) {
        nshape = cli_parse_int64s(shape_s, shape, VOXA_MAXDIM);
        if (nshape < 1)
            return cli_error("paste", CLI_USAGE, "--shape needs 1 to %d comma-separated "
                             "integers, got '%s'", VOXA_MAXDIM, shape_s);
    }

    voxa_array pat, vol;
    memset(&vol, 0, sizeof vol);
    int64_t *coords = NULL;
    voxa_status s = voxa_read(pos[0], &pat);
    if (s != VOXA_OK) return cli_fail("paste", s);
    if (shape_s) {
        s = voxa_array_new(&vol, pat.dtype, nshape, shape);
    } else {
        /* Any memory order: the library writes through strides and
         * voxa_write stores what it is given. */
        s = voxa_read(volume_s, &vol);
    }
    if (s != VOXA_OK) {
        voxa_array_free(&pat);
        voxa_array_free(&vol);
        return cli_fail("paste", s);
    }
    rc = roi_cli_load_coords("paste", corners ? corners : centres, 0, !!centres, &coords, &p.n,
                             &p.k);
    if (rc == CLI_OK) {
        if (p.k > vol.ndim || pat.ndim != vol.ndim + 1) {
            rc = cli_error("paste", CLI_FAIL, "%s has %d dimensions and the volume %d: expected "
                           "(N, *size, *rest) with %d", pos[0], pat.ndim, vol.ndim,
                           vol.ndim + 1);
        } else {
            p.coords = coords;
            p.size = pat.shape + 1;
            p.centered = !!centres;
            s = voxa_roi_paste(&vol, &pat, &p, op);
            if (s == VOXA_OK) s = voxa_write(output, &vol);
            if (s != VOXA_OK) rc = cli_fail("paste", s);
        }
    }
    free(coords);
    voxa_array_free(&pat);
    voxa_array_free(&vol);
    return rc;
}
