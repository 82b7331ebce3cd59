/* Shared helpers of the voxa CLI: option parsing, lists, errors, progress,
 * and the generic op driver (cli/op_driver.c, cli/op_help.c) that serves
 * every op of the registry. Only cli/ may print or exit. Exit codes: 0 ok,
 * 1 failure, 2 usage error. */
#ifndef VOXA_CLI_H
#define VOXA_CLI_H

#include "voxa.h"

#include <stdbool.h>
#include <stdio.h>

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2
#define CLI_HELP_SHOWN (-1) /* --help was printed: exit 0 */

/* Every hand-written command (not an op: info, psf, ...) is
 * `int voxa_cmd_<name>(int argc, char **argv)` (argv[0] is the command name)
 * with `extern const char voxa_cmd_<name>_help[]` whose first line is a
 * one-line summary; the table is generated from the cli/cmd_<name>.c names. */
#define VOXA_CMD(name)                                                         \
    int voxa_cmd_##name(int argc, char **argv);                                \
    extern const char voxa_cmd_##name##_help[];
#include "cli_commands.h"
#undef VOXA_CMD

/* One option: "--name" with a value (value != NULL) or a flag (flag != NULL). */
typedef struct cli_option {
    const char *name;
    const char **value;
    bool *flag;
} cli_option;

/* Parse argv[1..]: options from `opts` (accepting --name V and --name=V) and
 * up to max_pos positionals. Prints a usage error and returns CLI_USAGE, or
 * prints help and returns CLI_HELP_SHOWN for -h/--help, else CLI_OK. */
int cli_parse(int argc, char **argv, const cli_option *opts, int nopts,
              const char *help, const char **pos, int max_pos, int *npos);

/* Print "voxa: <cmd>: <message>" to stderr; return `code`. */
int cli_error(const char *cmd, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report a library failure with voxa_last_error(); returns CLI_FAIL. */
int cli_fail(const char *cmd, voxa_status s);

/* Comma-separated lists. Return the count, or -1 (bad syntax or > max). */
int cli_parse_int64s(const char *s, int64_t *out, int max);
int cli_parse_doubles(const char *s, double *out, int max);
/* A whole-string number; false if junk follows. */
bool cli_parse_int(const char *s, long *out);

/* Progress callback drawing a bar on stderr when it is a terminal. `user` is
 * the label (const char *). */
int cli_progress(int64_t done, int64_t total, void *user);

/* ---- ops (the registry) as commands ------------------------------------------ */

/* The op run by `voxa <word>` (group NULL: an op without a group) or by
 * `voxa <group> <word>` (word: the op's cli_name, or its name); NULL if none. */
const voxa_op *cli_op_find(const char *group, const char *word);
/* A parameter name as an option: '_' written '-', into buf. */
const char *cli_dashed(const char *name, char *buf, size_t n);
/* Whether two parameters are in one exclusive group. */
bool cli_same_group(const voxa_param *p, const voxa_param *q);
/* Whether op belongs to group; whether some op does. */
bool cli_in_group(const voxa_op *op, const char *group);
bool cli_is_group(const char *group);
/* The command word of an op: its cli_name, or its name. */
const char *cli_op_word(const voxa_op *op);
/* Run `voxa <op> ...`: argv[0] is the op's word (after the group, if any). */
int cli_run_op(const voxa_op *op, int argc, char **argv);

/* A byte size: a positive number with an optional K, M, G or T suffix
 * (powers of 1024) and an optional B. */
bool cli_parse_size(const char *s, int64_t *out);
/* Open the stores of the paths given (NULL: skipped); on failure report it
 * and return CLI_FAIL (close what opened either way). */
int cli_open_stores(const char *cmd, const char *a_path, voxa_store **a, const char *b_path,
                    voxa_store **b);
/* A --spacing list of nsp values (0: not given) for an ndim-D input: one value
 * is repeated on every axis; another count than 1 or ndim is a usage error. */
int cli_spacing_axes(const char *cmd, double *sp, int nsp, int ndim);
/* Run `voxa <group> <op> ...`: argv[0] is the group. */
int cli_run_group(int argc, char **argv);
/* Help generated from the descriptors: one op, or every op of a group. */
void cli_help_op(FILE *f, const voxa_op *op);
void cli_help_group(FILE *f, const char *group);
/* The words of a group's ops ("close, dilate, erode or open"), into buf. */
void cli_group_words(const char *group, char *buf, size_t n);

#endif
