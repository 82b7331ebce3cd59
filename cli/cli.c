/* Option parsing and messages shared by every subcommand. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <ctype.h>

int cli_error(const char *cmd, int code, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "voxa: %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int cli_fail(const char *cmd, voxa_status s) {
    const char *msg = voxa_last_error();
    /* Library messages often start with the op's name, which the CLI's own
     * "voxa: <cmd>: " prefix already says. */
    size_t n = strlen(cmd);
    if (!strncmp(msg, cmd, n) && msg[n] == ':' && msg[n + 1] == ' ') msg += n + 2;
    return cli_error(cmd, s == VOXA_OK ? CLI_OK : CLI_FAIL, "%s",
                     *msg ? msg : voxa_status_name(s));
}

int cli_parse(int argc, char **argv, const cli_option *opts, int nopts,
              const char *help, const char **pos, int max_pos, int *npos) {
    const char *cmd = argv[0];
    *npos = 0;
    bool only_pos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || a[0] != '-' || a[1] == '\0' ||
            (a[1] != '-' && a[1] != 'h' && a[1] != 'o' && !isalpha((unsigned char)a[1]))) {
            if (*npos >= max_pos)
                return cli_error(cmd, CLI_USAGE, "unexpected argument '%s' (see voxa help %s)",
                                 a, cmd);
            pos[(*npos)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) { only_pos = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(help, stdout);
            return CLI_HELP_SHOWN;
        }
        /* "-o" is the one short option: the output path. */
        const char *name = !strcmp(a, "-o") ? "output" : (a[1] == '-' ? a + 2 : NULL);
        if (!name) return cli_error(cmd, CLI_USAGE, "unknown option '%s'", a);
        size_t nlen = strcspn(name, "=");
        const char *inline_val = name[nlen] == '=' ? name + nlen + 1 : NULL;
        const cli_option *o = NULL;
        for (int k = 0; k < nopts; k++)
            if (strlen(opts[k].name) == nlen && !strncmp(opts[k].name, name, nlen)) o = &opts[k];
        if (!o) return cli_error(cmd, CLI_USAGE, "unknown option '%s' (see voxa help %s)", a, cmd);
        if (o->flag) {
            if (inline_val) return cli_error(cmd, CLI_USAGE, "option --%s takes no value", o->name);
            *o->flag = true;
        } else if (inline_val) {
            *o->value = inline_val;
        } else {
            if (i + 1 >= argc) return cli_error(cmd, CLI_USAGE, "option %s needs a value", a);
            *o->value = argv[++i];
        }
    }
    return CLI_OK;
}

bool cli_parse_int(const char *s, long *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno == ERANGE) return false;
    *out = v;
    return true;
}

static int parse_list(const char *s, void *out, int max, bool integer) {
    if (!s || !*s) return -1;
    int n = 0;
    const char *p = s;
    for (;;) {
        if (n >= max) return -1;
        char *end;
        errno = 0;
        if (integer) {
            long long v = strtoll(p, &end, 10);
            if (end == p || errno == ERANGE) return -1;
            ((int64_t *)out)[n++] = v;
        } else {
            double v = strtod(p, &end);
            if (end == p || errno == ERANGE || !isfinite(v)) return -1;
            ((double *)out)[n++] = v;
        }
        while (*end == ' ') end++;
        if (*end == '\0') return n;
        if (*end != ',' && *end != 'x') return -1;
        p = end + 1;
    }
}

int cli_parse_int64s(const char *s, int64_t *out, int max) { return parse_list(s, out, max, true); }
int cli_parse_doubles(const char *s, double *out, int max) { return parse_list(s, out, max, false); }

int cli_progress(int64_t done, int64_t total, void *user) {
    static int last_pct = -1;
    if (!isatty(STDERR_FILENO) || total <= 0) return 1;
    int pct = (int)(100 * done / total);
    if (pct == last_pct && done < total) return 1;
    last_pct = pct;
    int width = 40, fill = pct * width / 100;
    fprintf(stderr, "\r%-12s [", user ? (const char *)user : "");
    for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%%", pct);
    if (done >= total) {
        fputc('\n', stderr);
        last_pct = -1;
    }
    fflush(stderr);
    return 1;
}

bool cli_parse_size(const char *s, int64_t *out) {
    if (!s || !*s) return false;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    double scale = 1;
    switch (*end) {
    case 'k': case 'K': scale = 1024.0; end++; break;
    case 'm': case 'M': scale = 1048576.0; end++; break;
    case 'g': case 'G': scale = 1073741824.0; end++; break;
    case 't': case 'T': scale = 1099511627776.0; end++; break;
    }
    if (*end == 'B' || *end == 'b') end++;
    if (*end || errno == ERANGE || !(v > 0) || v * scale > 9.0e18) return false;
    *out = (int64_t)(v * scale);
    return *out > 0;
}

int cli_spacing_axes(const char *cmd, double *sp, int nsp, int ndim) {
    if (nsp == 1)
        for (int d = 1; d < ndim; d++) sp[d] = sp[0];
    else if (nsp && nsp != ndim)
        return cli_error(cmd, CLI_USAGE, "--spacing has %d values for a %d-D input", nsp, ndim);
    return CLI_OK;
}

int cli_open_stores(const char *cmd, const char *a_path, voxa_store **a, const char *b_path,
                    voxa_store **b) {
    voxa_status s = a_path ? voxa_store_open(a_path, a) : VOXA_OK;
    if (s == VOXA_OK && b_path) s = voxa_store_open(b_path, b);
    return s == VOXA_OK ? CLI_OK : cli_fail(cmd, s);
}
