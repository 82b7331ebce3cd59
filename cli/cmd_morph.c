/* voxa morph dilate|erode|open|close IN -o OUT: exact binary morphology. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char voxa_cmd_morph_help[] =
    "Binary dilation, erosion, opening or closing, equal to scipy.ndimage.binary_*.\n"
    "\n"
    "usage: voxa morph dilate|erode|open|close IN -o OUT ELEMENT [--iterations K]\n"
    "                  [--border-value 0|1] [--spacing z,y,x] [--describe]\n"
    "  ELEMENT, exactly one of:\n"
    "    --ball R            Euclidean ball sum((o*spacing)^2) <= R^2 (distance transform)\n"
    "    --diamond R         sum(|o|) <= R (city-block distance)\n"
    "    --box a,b,c         box of a x b x c voxels (one value: the same on every axis)\n"
    "    --connectivity C    scipy generate_binary_structure(ndim, C)\n"
    "    --footprint F.npy   any 0/1 array, centre at shape//2 (scipy's origin 0); balls,\n"
    "                        diamonds and boxes given this way are recognised\n"
    "  --iterations K      repeat K times (default 1); K < 1: until nothing changes\n"
    "  --border-value V    value of voxels outside the volume (default 0)\n"
    "  --spacing S         voxel size per axis, for --ball (or a --footprint ball)\n"
    "  --describe          print the algorithm chosen for the element on stderr\n";

int voxa_cmd_morph(int argc, char **argv) {
    const char *outp = NULL, *ball = NULL, *diamond = NULL, *box = NULL, *conn = NULL,
               *fpath = NULL, *iters = "1", *bvs = "0", *spacing = NULL;
    bool describe = false;
    cli_option opts[] = {{"output", &outp, NULL},         {"ball", &ball, NULL},
                         {"diamond", &diamond, NULL},     {"box", &box, NULL},
                         {"connectivity", &conn, NULL},   {"footprint", &fpath, NULL},
                         {"iterations", &iters, NULL},    {"border-value", &bvs, NULL},
                         {"spacing", &spacing, NULL},     {"describe", NULL, &describe}};
    const char *pos[2];
    int npos;
    int rc = cli_parse(argc, argv, opts, 10, voxa_cmd_morph_help, pos, 2, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 2)
        return cli_error("morph", CLI_USAGE,
                         "expected an operation and one input file (see voxa help morph)");
    voxa_morph_op op;
    if (!strcmp(pos[0], "dilate")) op = VOXA_MORPH_DILATE;
    else if (!strcmp(pos[0], "erode")) op = VOXA_MORPH_ERODE;
    else if (!strcmp(pos[0], "open")) op = VOXA_MORPH_OPEN;
    else if (!strcmp(pos[0], "close")) op = VOXA_MORPH_CLOSE;
    else
        return cli_error("morph", CLI_USAGE,
                         "operation '%s': expected dilate, erode, open or close", pos[0]);
    if (!outp) return cli_error("morph", CLI_USAGE, "missing -o OUT");
    int nel = !!ball + !!diamond + !!box + !!conn + !!fpath;
    if (nel != 1)
        return cli_error("morph", CLI_USAGE,
                         "give exactly one of --ball, --diamond, --box, --connectivity, --footprint");
    long it, bv;
    if (!cli_parse_int(iters, &it) || it > 1000000 || it < -1000000)
        return cli_error("morph", CLI_USAGE, "--iterations '%s': expected a whole number", iters);
    if (!cli_parse_int(bvs, &bv) || (bv != 0 && bv != 1))
        return cli_error("morph", CLI_USAGE, "--border-value '%s': expected 0 or 1", bvs);
    if (spacing && !ball && !fpath)
        return cli_error("morph", CLI_USAGE, "--spacing applies to --ball (or --footprint) only");
    voxa_morph_params p;
    memset(&p, 0, sizeof p);
    p.iterations = (int)it;
    p.border_value = (int)bv;
    double r = 0;
    if (ball || diamond) {
        const char *v = ball ? ball : diamond;
        if (!cli_parse_double(v, &r))
            return cli_error("morph", CLI_USAGE, "--%s '%s': expected a number",
                             ball ? "ball" : "diamond", v);
        p.se.kind = ball ? VOXA_SE_BALL : VOXA_SE_DIAMOND;
        p.se.radius = r;
    }
    if (conn) {
        long c;
        if (!cli_parse_int(conn, &c) || c < 1 || c > 64)
            return cli_error("morph", CLI_USAGE, "--connectivity '%s': expected 1..ndim", conn);
        p.se.kind = VOXA_SE_CONNECTIVITY;
        p.se.connectivity = (int)c;
    }
    voxa_array in = {0}, out = {0}, fp = {0};
    voxa_status s = voxa_read(pos[1], &in);
    if (s != VOXA_OK) return cli_fail("morph", s);
    rc = CLI_OK;
    double sp[VOXA_MAXDIM];
    if (spacing) {
        if (cli_parse_doubles(spacing, sp, VOXA_MAXDIM) != in.ndim) {
            rc = cli_error("morph", CLI_USAGE, "--spacing '%s': expected %d comma-separated values",
                           spacing, in.ndim);
            goto done;
        }
        p.se.spacing = sp;
    }
    if (box) {
        int64_t b[VOXA_MAXDIM];
        int k = cli_parse_int64s(box, b, VOXA_MAXDIM);
        if (k != 1 && k != in.ndim) {
            rc = cli_error("morph", CLI_USAGE, "--box '%s': expected 1 or %d sizes", box, in.ndim);
            goto done;
        }
        p.se.kind = VOXA_SE_BOX;
        for (int d = 0; d < in.ndim; d++) p.se.box[d] = b[k == 1 ? 0 : d];
    }
    if (fpath) {
        if ((s = voxa_read(fpath, &fp)) != VOXA_OK) {
            rc = cli_fail("morph", s);
            goto done;
        }
        p.se.kind = VOXA_SE_FOOTPRINT;
        p.se.footprint = &fp;
    }
    if (describe) {
        char buf[512];
        if ((s = voxa_morph_describe(&p.se, in.ndim, p.iterations, buf, sizeof buf)) != VOXA_OK) {
            rc = cli_fail("morph", s);
            goto done;
        }
        fprintf(stderr, "morph: path: %s\n", buf);
    }
    if ((s = voxa_array_new(&out, VOXA_BOOL, in.ndim, in.shape)) == VOXA_OK &&
        (s = voxa_morph(op, &in, &out, &p)) == VOXA_OK)
        s = voxa_write(outp, &out);
    if (s != VOXA_OK) rc = cli_fail("morph", s);
done:
    voxa_array_free(&in);
    voxa_array_free(&out);
    voxa_array_free(&fp);
    return rc;
}
