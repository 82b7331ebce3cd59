/* voxa: command-line entry. Global options, then a command: a hand-written
 * one (info, psf, ...: the table generated from the cli/cmd_<name>.c file
 * names) or an op of the registry, run by the generic driver (op_driver.c):
 * `voxa <op> ...`, or `voxa <group> <op> ...` for ops that declare a group. */
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

/* One line of the command list: a name and its summary. */
typedef struct entry {
    const char *name;
    char summary[256];
} entry;

static int by_name(const void *a, const void *b) {
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static void usage(FILE *f) {
    int nops;
    const voxa_op *const *ops = voxa_ops(&nops);
    entry *list = calloc((size_t)(ncommands + nops), sizeof *list);
    int n = 0;
    for (int i = 0; list && i < ncommands; i++) {
        list[n].name = commands[i].name;
        snprintf(list[n++].summary, sizeof list->summary, "%.*s",
                 (int)strcspn(commands[i].help, "\n"), commands[i].help);
    }
    for (int i = 0; list && i < nops; i++) {
        const char *g = ops[i]->group;
        if (!g) {
            list[n].name = cli_op_word(ops[i]);
            snprintf(list[n++].summary, sizeof list->summary, "%s", ops[i]->summary);
        } else if (!find(g)) {
            bool listed = false;
            for (int k = 0; k < n; k++) listed |= !strcmp(list[k].name, g);
            if (listed) continue;
            char words[200];
            cli_group_words(g, words, sizeof words);
            list[n].name = g;
            snprintf(list[n++].summary, sizeof list->summary, "%s (voxa help %s)", words, g);
        }
    }
    if (list) qsort(list, (size_t)n, sizeof *list, by_name);
    fprintf(f,
            "usage: voxa [--threads N] <command> [args] [-o OUT] [--options]\n"
            "       voxa help <command> | voxa --version\n\n"
            "Fast, exact, lean processing of big 2D/3D microscopy images.\n"
            "Files: .npy, .tif/.tiff and .zarr, chosen by extension.\n\ncommands:\n");
    for (int i = 0; i < n; i++) fprintf(f, "  %-12s %s\n", list[i].name, list[i].summary);
    fprintf(f, "\nglobal options:\n"
               "  --threads N   worker threads (default: VOXA_NUM_THREADS or all cores)\n"
               "  --version     print the version\n"
               "  -h, --help    this help (voxa help <command>: one command's help)\n");
    free(list);
}

/* `voxa help <command> [<op>]`. */
static int help(int argc, char **argv) {
    if (argc < 1) {
        usage(stdout);
        return CLI_OK;
    }
    const command *c = find(argv[0]);
    if (c) {
        fputs(c->help, stdout);
        return CLI_OK;
    }
    const voxa_op *op = NULL;
    if (cli_is_group(argv[0]) && argc < 2) {
        cli_help_group(stdout, argv[0]);
        return CLI_OK;
    }
    if (cli_is_group(argv[0])) op = cli_op_find(argv[0], argv[1]);
    else op = cli_op_find(NULL, argv[0]);
    /* A grouped op by its own name: `voxa help dilate`, `voxa help fill_holes`. */
    int nops;
    const voxa_op *const *ops = voxa_ops(&nops);
    for (int i = 0; !op && i < nops; i++)
        if (!strcmp(ops[i]->name, argv[0]) || !strcmp(cli_op_word(ops[i]), argv[0])) op = ops[i];
    if (!op) {
        fprintf(stderr, "voxa: help: unknown command '%s%s%s'\n", argv[0], argc > 1 ? " " : "",
                argc > 1 ? argv[1] : "");
        return CLI_USAGE;
    }
    cli_help_op(stdout, op);
    return CLI_OK;
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
    if (!strcmp(argv[i], "help")) return help(argc - i - 1, argv + i + 1);
    const command *c = find(argv[i]);
    const voxa_op *op = c ? NULL : cli_op_find(NULL, argv[i]);
    int rc;
    if (c) rc = c->run(argc - i, argv + i);
    else if (op) rc = cli_run_op(op, argc - i, argv + i);
    else if (cli_is_group(argv[i])) rc = cli_run_group(argc - i, argv + i);
    else {
        fprintf(stderr, "voxa: unknown command '%s' (try voxa --help)\n", argv[i]);
        return CLI_USAGE;
    }
    return rc == CLI_HELP_SHOWN ? CLI_OK : rc;
}
