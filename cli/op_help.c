/* `voxa help <op>`, `voxa <op> --help` and `voxa help <group>`, generated
 * from the op descriptors: the summary, a usage line (required options
 * bare, exclusive groups as (--a A | --b B), the rest in brackets), one line
 * per option (help text, metavar, default, choices, per-axis rule) and the
 * details. A group's help lists its ops, then one usage block per distinct
 * parameter table (morph's four ops share one). Text wraps at 80 columns. */
#include "cli.h"

#include <string.h>

#define WIDTH 80
#define COL 24 /* where an option's help text starts */

static bool shown(const voxa_param *p) { return !(p->flags & VOXA_PARAM_HIDDEN); }

/* The choice words of a CHOICE/DTYPE parameter, aliases left out, joined by
 * `sep` ("a|b|c"), into buf; *aliases receives the "a=b" words. */
static const char *choice_words(const voxa_param *p, const char *sep, char *buf, size_t n,
                                char *aliases, size_t an) {
    size_t len = 0, alen = 0;
    buf[0] = aliases[0] = '\0';
    for (const char *c = p->choices; c && *c;) {
        size_t w = strcspn(c, "|");
        if (memchr(c, '=', w)) {
            if (alen < an)
                alen += (size_t)snprintf(aliases + alen, an - alen, "%s%.*s", alen ? ", " : "",
                                         (int)w, c);
        } else if (len < n) {
            len += (size_t)snprintf(buf + len, n - len, "%s%.*s", len ? sep : "", (int)w, c);
        }
        c += w + (c[w] == '|');
    }
    return buf;
}

/* "--name METAVAR" (a flag: "--name"). */
static const char *option(const voxa_param *p, char *buf, size_t n) {
    static const char *by_type[] = {
        [VOXA_PARAM_INT] = "N",       [VOXA_PARAM_FLOAT] = "X",    [VOXA_PARAM_DTYPE] = "T",
        [VOXA_PARAM_INTS] = "N,...",  [VOXA_PARAM_FLOATS] = "X,...", [VOXA_PARAM_STRING] = "TEXT",
        [VOXA_PARAM_ARRAY] = "FILE",  [VOXA_PARAM_TABLE] = "TABLE",
    };
    char d[64], words[256], aliases[256];
    const char *mv = p->metavar ? p->metavar
                     : p->type == VOXA_PARAM_CHOICE
                         ? choice_words(p, "|", words, sizeof words, aliases, sizeof aliases)
                         : by_type[p->type];
    if (p->type == VOXA_PARAM_FLAG) snprintf(buf, n, "--%s", cli_dashed(p->name, d, sizeof d));
    else snprintf(buf, n, "--%s %s", cli_dashed(p->name, d, sizeof d), mv);
    return buf;
}

/* Print `text` from column `at`, wrapping at WIDTH and indenting new lines
 * to column `col`; ends the line. */
static void wrap(FILE *f, int at, int col, const char *text) {
    while (*text == ' ') text++;
    if (!*text) fputc('\n', f);
    while (*text) {
        int room = WIDTH - at, len = (int)strlen(text);
        if (len > room) {
            int cut = room;
            while (cut > 0 && text[cut] != ' ') cut--;
            if (cut == 0) cut = (int)strcspn(text, " ");
            len = cut;
        }
        fprintf(f, "%.*s\n", len, text);
        text += len;
        while (*text == ' ') text++;
        if (*text) fprintf(f, "%*s", col, "");
        at = col;
    }
}

/* One option line: "  --name M    help (default D) (one of ...)". */
static void option_line(FILE *f, int indent, const char *opt, const char *help) {
    int at = fprintf(f, "%*s%s", indent, "", opt);
    if (at >= COL - 1) {
        fprintf(f, "\n%*s", COL, "");
        at = COL;
    } else {
        at += fprintf(f, "%*s", COL - at, "");
    }
    wrap(f, at, COL, help);
}

static void param_line(FILE *f, int indent, const voxa_param *p) {
    char opt[128], text[1024], words[256], aliases[256];
    size_t len = (size_t)snprintf(text, sizeof text, "%s", p->help ? p->help : "");
    if (p->type == VOXA_PARAM_CHOICE || p->type == VOXA_PARAM_DTYPE) {
        choice_words(p, ", ", words, sizeof words, aliases, sizeof aliases);
        bool listed = true; /* the help text names every choice already */
        for (const char *w = words; *w; w += strspn(w, ", ")) {
            size_t wl = strcspn(w, ",");
            char one[64];
            snprintf(one, sizeof one, "%.*s", (int)wl, w);
            listed &= strstr(text, one) != NULL;
            w += wl;
        }
        if (p->metavar && !listed && len < sizeof text)
            len += (size_t)snprintf(text + len, sizeof text - len, "; one of %s", words);
        if (*aliases && len < sizeof text)
            len += (size_t)snprintf(text + len, sizeof text - len, "; alias %s", aliases);
    }
    if (p->flags & VOXA_PARAM_PER_AXIS && !strstr(text, "one value") && len < sizeof text)
        len += (size_t)snprintf(text + len, sizeof text - len, "; one value per axis, or one "
                                "for all");
    if (p->type == VOXA_PARAM_TABLE && !strstr(text, ".csv") && len < sizeof text)
        len += (size_t)snprintf(text + len, sizeof text - len, "; a .csv with a header, or an "
                                "N x k .npy");
    if (p->alias && len < sizeof text) {
        char d[64];
        len += (size_t)snprintf(text + len, sizeof text - len, "; also --%s",
                                cli_dashed(p->alias, d, sizeof d));
    }
    if (p->def && p->type != VOXA_PARAM_FLAG && len < sizeof text)
        len += (size_t)snprintf(text + len, sizeof text - len, " (default %s)", p->def);
    if ((p->flags & VOXA_PARAM_REQUIRED) && !p->oneof && len < sizeof text)
        snprintf(text + len, sizeof text - len, " (required)");
    option_line(f, indent, option(p, opt, sizeof opt), text);
}

/* Append `word` to a usage line, wrapping under column `col`. */
static void usage_word(FILE *f, int *at, int col, const char *word) {
    int len = (int)strlen(word);
    if (*at + 1 + len > WIDTH && *at > col) {
        fprintf(f, "\n%*s", col, "");
        *at = col;
    }
    *at += fprintf(f, "%s%s", *at != col ? " " : "", word);
}

/* Parameter i is the first shown one of its exclusive group (or has none). */
static bool group_first(const voxa_op *op, int i) {
    for (int j = 0; op->params[i].oneof && j < i; j++)
        if (cli_same_group(&op->params[i], &op->params[j]) && shown(&op->params[j])) return false;
    return true;
}

/* Parameter i, or one of its exclusive group, must be given. */
static bool required(const voxa_op *op, int i) {
    bool req = op->params[i].flags & VOXA_PARAM_REQUIRED;
    for (int j = 0; op->params[i].oneof && j < op->nparams; j++)
        req |= cli_same_group(&op->params[i], &op->params[j]) &&
               (op->params[j].flags & VOXA_PARAM_REQUIRED);
    return req;
}

/* Parameter i and the shown members of its exclusive group after it, into
 * idx; returns the count. */
static int members(const voxa_op *op, int i, int *idx) {
    int n = 0;
    for (int j = i; j < op->nparams; j++)
        if (j == i || (cli_same_group(&op->params[i], &op->params[j]) && shown(&op->params[j])))
            idx[n++] = j;
    return n;
}

/* "usage: voxa <cmd> IN -o OUT (--a A | --b B) --c C [--d D]" */
static void usage(FILE *f, const char *cmd, const voxa_op *op) {
    int at = fprintf(f, "usage: voxa %s", cmd), col = at < 24 ? at + 1 : 8;
    if (op->ninputs > 0) usage_word(f, &at, col, "IN");
    usage_word(f, &at, col, "-o OUT");
    for (int pass = 0; pass < 2; pass++) /* required first */
        for (int i = 0; i < op->nparams; i++) {
            const voxa_param *p = &op->params[i];
            bool req = required(op, i);
            if (!shown(p) || !group_first(op, i) || req != (pass == 0)) continue;
            /* one word per member, so that a long group wraps between them */
            const char *open = !req ? "[" : p->oneof ? "(" : "";
            const char *close = !req ? "]" : p->oneof ? ")" : "";
            int idx[VOXA_OP_MAXPARAMS], m = members(op, i, idx);
            for (int k = 0; k < m; k++) {
                char word[160], opt[128];
                snprintf(word, sizeof word, "%s%s%s", k ? "| " : open,
                         option(&op->params[idx[k]], opt, sizeof opt), k == m - 1 ? close : "");
                usage_word(f, &at, col, word);
            }
        }
    if (op->describe) usage_word(f, &at, col, "[--describe]");
    /* one group, in words, so that it wraps at 80 columns like the rest */
    usage_word(f, &at, col, "[--mem-limit SIZE");
    usage_word(f, &at, col, "[--chunks Z,Y,X]");
    usage_word(f, &at, col, "[--pyramid N]");
    usage_word(f, &at, col, "[--dry-run]]");
    usage_word(f, &at, col, "[--backend B]");
    fputc('\n', f);
}

/* Usage, the options and the details of one op (cmd: "label", "morph open"). */
static void block(FILE *f, const char *cmd, const voxa_op *op) {
    usage(f, cmd, op);
    if (op->ninputs > 0) {
        char text[512];
        size_t len =
            (size_t)snprintf(text, sizeof text, "input array (.npy, .tif/.tiff, .zarr), ");
        if (!op->in_dtypes) snprintf(text + len, sizeof text - len, "any dtype");
        for (int t = 0, k = 0; op->in_dtypes && t < 32 && len < sizeof text; t++)
            if (op->in_dtypes & (1u << t))
                len += (size_t)snprintf(text + len, sizeof text - len, "%s%s", k++ ? ", " : "",
                                        voxa_dtype_name((voxa_dtype)t));
        option_line(f, 2, "IN", text);
    }
    option_line(f, 2, "-o, --output OUT",
                "output array (.npy, .tif/.tiff, .zarr), written atomically (.zarr: chunk by "
                "chunk, marked complete last)");
    for (int i = 0; i < op->nparams; i++) {
        const voxa_param *p = &op->params[i];
        if (!shown(p)) continue;
        if (!p->oneof) {
            param_line(f, 2, p);
            continue;
        }
        if (!group_first(op, i)) continue;
        fprintf(f, "  %s one of:\n", required(op, i) ? "exactly" : "at most");
        int idx[VOXA_OP_MAXPARAMS], m = members(op, i, idx);
        for (int k = 0; k < m; k++) param_line(f, 4, &op->params[idx[k]]);
    }
    if (op->describe)
        option_line(f, 2, "--describe", "print the algorithm the arguments select, on stderr");
    option_line(f, 2, "--mem-limit SIZE", "run block by block within SIZE bytes (K, M, G "
                "suffixes): volumes larger than memory; .npy, .tif/.tiff and .zarr are read and "
                "written by regions");
    option_line(f, 2, "--chunks Z,Y,X", "with --mem-limit: the block shape (default: the "
                "largest that fits)");
    option_line(f, 2, "--pyramid N", "with a .zarr output: N more OME-Zarr levels, each half "
                "the one before (mean of 2x2x2 for float outputs, first voxel for integer "
                "and bool ones)");
    option_line(f, 2, "--dry-run", "print the plan (blocks, halo, work, peak memory) and exit");
    option_line(f, 2, "--backend B", op->gpu ? "cpu (default: VOXA_BACKEND, else cpu), opencl, "
                "cuda or auto (a usable GPU, else cpu); GPU limits: docs/gpu.md"
                : "cpu (default); this op has no GPU path (auto runs the cpu)");
    option_line(f, 2, "--no-fsync", "do not flush written files to disk (scratch data; also "
                "VOXA_NO_FSYNC=1)");
    if (op->details) fprintf(f, "\n%s", op->details);
}

void cli_help_op(FILE *f, const voxa_op *op) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "%s%s%s", op->group ? op->group : "", op->group ? " " : "",
             cli_op_word(op));
    fprintf(f, "%s\n\n", op->summary);
    block(f, cmd, op);
}

void cli_group_words(const char *group, char *buf, size_t n) {
    int nops, total = 0, k = 0;
    const voxa_op *const *ops = voxa_ops(&nops);
    for (int i = 0; i < nops; i++) total += cli_in_group(ops[i], group);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < nops && len < n; i++)
        if (cli_in_group(ops[i], group)) {
            k++;
            len += (size_t)snprintf(buf + len, n - len, "%s%s",
                                    k == 1 ? "" : k == total ? " or " : ", ", cli_op_word(ops[i]));
        }
}

void cli_help_group(FILE *f, const char *group) {
    int n;
    const voxa_op *const *ops = voxa_ops(&n);
    char words[256];
    cli_group_words(group, words, sizeof words);
    fprintf(f, "voxa %s: %s.\n\n", group, words);
    for (int i = 0; i < n; i++)
        if (cli_in_group(ops[i], group))
            option_line(f, 2, cli_op_word(ops[i]), ops[i]->summary);
    /* One block per distinct parameter table, naming the ops that share it. */
    for (int i = 0; i < n; i++) {
        if (!cli_in_group(ops[i], group)) continue;
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= cli_in_group(ops[j], group) && ops[j]->params == ops[i]->params;
        if (seen) continue;
        char cmd[256];
        size_t len = (size_t)snprintf(cmd, sizeof cmd, "%s ", group);
        for (int j = i, k = 0; j < n && len < sizeof cmd; j++)
            if (cli_in_group(ops[j], group) && ops[j]->params == ops[i]->params)
                len += (size_t)snprintf(cmd + len, sizeof cmd - len, "%s%s", k++ ? "|" : "",
                                        cli_op_word(ops[j]));
        fputc('\n', f);
        block(f, cmd, ops[i]);
    }
}
