/* voxa: command-line entry. Global options, then a subcommand from the
 * generated table (one cli/cmd_<name>.c per command). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int, char **);
    const char *help;
} command;

static const command commands[] = {
#define VOXA_CMD(n) {#n, voxa_cmd_##n, voxa_cmd_##n##_help},
#include "cli_commands.h"
#undef VOXA_CMD
};
static const int ncommands = (int)(sizeof commands / sizeof commands[0]);

static const command *find(const char *name) {
    for (int i = 0; i < ncommands; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: voxa [--threads N] <command> [args] [-o OUT] [--options]\n"
            "       voxa help <command> | voxa --version\n\n"
            "Fast, exact, lean processing of big 2D/3D microscopy images.\n"
            "Files: .npy and .tif/.tiff, chosen by extension.\n\ncommands:\n");
    for (int i = 0; i < ncommands; i++) {
        const char *h = commands[i].help;
        int len = (int)strcspn(h, "\n");
        fprintf(f, "  %-12s %.*s\n", commands[i].name, len, h);
    }
    fprintf(f, "\nglobal options:\n"
               "  --threads N   worker threads (default: VOXA_NUM_THREADS or all cores)\n"
               "  --version     print the version\n"
               "  -h, --help    this help (voxa help <command>: one command's help)\n");
}

int main(int argc, char **argv) {
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--version")) {
            printf("voxa %s\n", voxa_version());
            return CLI_OK;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(a, "--threads") || !strncmp(a, "--threads=", 10)) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            long n;
            if (!v || !cli_parse_int(v, &n) || n < 1 || n > 4096) {
                fprintf(stderr, "voxa: --threads needs a whole number from 1 to 4096, got '%s'\n",
                        v ? v : "");
                return CLI_USAGE;
            }
            voxa_set_threads((int)n);
        } else {
            fprintf(stderr, "voxa: unknown global option '%s'\n", a);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[i], "help")) {
        if (i + 1 >= argc) {
            usage(stdout);
            return CLI_OK;
        }
        const command *c = find(argv[i + 1]);
        if (!c) {
            fprintf(stderr, "voxa: help: unknown command '%s'\n", argv[i + 1]);
            return CLI_USAGE;
        }
        fputs(c->help, stdout);
        return CLI_OK;
    }
    const command *c = find(argv[i]);
    if (!c) {
        fprintf(stderr, "voxa: unknown command '%s' (try voxa --help)\n", argv[i]);
        return CLI_USAGE;
    }
    int rc = c->run(argc - i, argv + i);
    return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
}
