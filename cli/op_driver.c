/* The generic op driver: every op of the registry (voxa_ops()) is a command.
 *
 *   voxa <op> IN -o OUT [--param V]...         label, edt, deconvolve, roi, ...
 *   voxa <group> <op> IN -o OUT [--param V]... morph dilate|erode|open|close|...
 *   voxa <op> -o OUT [--param V]...            ops without an input (balls)
 *
 * Options come from the descriptor's parameters: --name with '_' written '-',
 * as `--name V` or `--name=V`; flags take no value; hidden parameters are not
 * offered; `--describe` names the algorithm for ops with a describe hook.
 * Array and table parameters are paths, read like IN.
 *
 * Exit codes follow one rule. A usage error exits 2 before anything runs:
 * an unknown option, a value the parameter rejects, a missing or conflicting
 * option (these before any file is read), or an argument the op's check
 * rejects (it may need the input's shape). A failure exits
 * 1: reading IN or a file-valued option, file content the op rejects (a
 * check message naming the input or a file-valued parameter), running,
 * writing. Library messages start "<param>: "; the driver shows them as
 * "--param-name ...". voxa_write is atomic, so a failure leaves no output. */
#include "cli.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAXGIVEN 64

/* One command line, parsed but not yet checked. */
typedef struct call {
    const voxa_op *op;
    const char *cmd;        /* "voxa: <cmd>: " in messages: the group or the op */
    char ref[64];           /* "label", "morph open": for "see voxa help ..." */
    const char *in_path, *out_path;
    bool describe;
    bool dry_run;           /* --dry-run: print the streamed plan, run nothing */
    const char *mem_limit;  /* --mem-limit: run block by block (stream) */
    const char *chunks;     /* --chunks: the block shape */
    const char *pyramid;    /* --pyramid N: OME-Zarr levels after "0" */
    const char *backend;    /* --backend: cpu, opencl, cuda, auto */
    int nopt;               /* options given, in order (the last one wins) */
    int param[MAXGIVEN];
    const char *text[MAXGIVEN];
} call;

const char *cli_op_word(const voxa_op *op) { return op->cli_name ? op->cli_name : op->name; }

const voxa_op *cli_op_find(const char *group, const char *word) {
    int n;
    const voxa_op *const *ops = voxa_ops(&n);
    for (int i = 0; i < n; i++) {
        bool in = group ? cli_in_group(ops[i], group) : !ops[i]->group;
        if (in && (!strcmp(cli_op_word(ops[i]), word) || !strcmp(ops[i]->name, word)))
            return ops[i];
    }
    return NULL;
}

const char *cli_dashed(const char *name, char *buf, size_t n) {
    snprintf(buf, n, "%s", name);
    for (char *c = buf; *c; c++)
        if (*c == '_') *c = '-';
    return buf;
}

bool cli_same_group(const voxa_param *p, const voxa_param *q) {
    return p->oneof && q->oneof && !strcmp(p->oneof, q->oneof);
}

bool cli_in_group(const voxa_op *op, const char *group) {
    return op->group && !strcmp(op->group, group);
}

bool cli_is_group(const char *group) {
    int n;
    const voxa_op *const *ops = voxa_ops(&n);
    for (int i = 0; i < n; i++)
        if (cli_in_group(ops[i], group)) return true;
    return false;
}

int cli_run_group(int argc, char **argv) {
    const char *group = argv[0];
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        cli_help_group(stdout, group);
        return CLI_HELP_SHOWN;
    }
    const voxa_op *op = argc > 1 ? cli_op_find(group, argv[1]) : NULL;
    if (op) return cli_run_op(op, argc - 1, argv + 1);
    char words[256];
    cli_group_words(group, words, sizeof words);
    if (argc < 2) return cli_error(group, CLI_USAGE, "expected an operation: %s", words);
    return cli_error(group, CLI_USAGE, "operation '%s': expected %s", argv[1], words);
}

static bool file_valued(const voxa_param *p) {
    return p->type == VOXA_PARAM_ARRAY || p->type == VOXA_PARAM_TABLE;
}

/* The parameter a library message starts with ("<param>: "), or -1. */
static int message_param(const voxa_op *op, const char *msg) {
    size_t len = strcspn(msg, ": ");
    if (msg[len] != ':' || msg[len + 1] != ' ' || len >= 64) return -1;
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)len, msg);
    return voxa_op_param(op, key);
}

/* voxa_last_error() without a leading "<op>: " or "<cmd>: " (the CLI's
 * prefix says it). */
static const char *library_message(const call *c) {
    const char *msg = voxa_last_error();
    for (int k = 0; k < 2; k++) {
        const char *w = k ? c->cmd : c->op->name;
        size_t len = strlen(w);
        if (!strncmp(msg, w, len) && msg[len] == ':' && msg[len + 1] == ' ') msg += len + 2;
    }
    return *msg ? msg : "failed";
}

/* Report a library error. "<param>: rest" about a plain option reads
 * "--param rest" (just rest when it starts with an option or names this
 * one: "give --radius or a 'radius' column") and exits with `code`; one
 * about the input or a file-valued option (its content) exits CLI_FAIL,
 * naming the input's path, or as the library wrote it. */
static int report(const call *c, int code) {
    const char *msg = library_message(c);
    int p = message_param(c->op, msg);
    if (p >= 0 && file_valued(&c->op->params[p])) return cli_error(c->cmd, CLI_FAIL, "%s", msg);
    if (p < 0 && c->in_path && !strncmp(msg, "input: ", 7))
        return cli_error(c->cmd, CLI_FAIL, "%s: %s", c->in_path, msg + 7);
    if (p < 0) return cli_error(c->cmd, code, "%s", msg);
    const char *rest = msg + strcspn(msg, ":") + 2;
    char d[64], opt[72];
    snprintf(opt, sizeof opt, "--%s", cli_dashed(c->op->params[p].name, d, sizeof d));
    if (rest[0] == '-' || strstr(rest, opt)) return cli_error(c->cmd, code, "%s", rest);
    return cli_error(c->cmd, code, "%s %s", opt, rest);
}

static bool is_option(const char *a) {
    return a[0] == '-' && (a[1] == '-' || isalpha((unsigned char)a[1]));
}

static int parse(call *c, int argc, char **argv) {
    const voxa_op *op = c->op;
    int npos = 0;
    bool only_pos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_pos || !is_option(a)) {
            if (npos++ >= op->ninputs)
                return cli_error(c->cmd, CLI_USAGE, "unexpected argument '%s' (see voxa help %s)",
                                 a, c->ref);
            c->in_path = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_pos = true;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_help_op(stdout, op);
            return CLI_HELP_SHOWN;
        }
        /* "-o" is the one short option: the output path. */
        const char *name = !strcmp(a, "-o") ? "output" : a[1] == '-' ? a + 2 : "";
        size_t len = strcspn(name, "=");
        const char *val = name[len] == '=' ? name + len + 1 : NULL;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(len < 63 ? len : 63), name);
        int p = -1;
        bool flag = false;
        const char **stream_opt = !strcmp(key, "mem-limit") ? &c->mem_limit
                                  : !strcmp(key, "chunks")  ? &c->chunks
                                  : !strcmp(key, "pyramid") ? &c->pyramid
                                  : !strcmp(key, "backend") ? &c->backend
                                                            : NULL;
        if (!strcmp(key, "no-fsync")) { /* scratch data: skip the flush to disk */
            if (val) return cli_error(c->cmd, CLI_USAGE, "option --no-fsync takes no value");
            voxa_set_fsync(0);
            continue;
        }
        if (!strcmp(key, "dry-run")) {
            if (val) return cli_error(c->cmd, CLI_USAGE, "option --dry-run takes no value");
            c->dry_run = true;
            continue;
        }
        if (stream_opt) {
            if (!val && i + 1 >= argc)
                return cli_error(c->cmd, CLI_USAGE, "option %s needs a value", a);
            *stream_opt = val ? val : argv[++i];
            continue;
        }
        if (!strcmp(key, "describe") && op->describe) {
            flag = true;
        } else if (strcmp(key, "output")) {
            p = voxa_op_param(op, key);
            if (!*key || p < 0 || (op->params[p].flags & VOXA_PARAM_HIDDEN))
                return cli_error(c->cmd, CLI_USAGE, "unknown option '%s' (see voxa help %s)", a,
                                 c->ref);
            flag = op->params[p].type == VOXA_PARAM_FLAG;
        }
        if (flag && val) return cli_error(c->cmd, CLI_USAGE, "option --%s takes no value", key);
        if (!flag && !val) {
            if (i + 1 >= argc) return cli_error(c->cmd, CLI_USAGE, "option %s needs a value", a);
            val = argv[++i];
        }
        if (p < 0) {
            if (flag) c->describe = true;
            else c->out_path = val;
            continue;
        }
        if (c->nopt == MAXGIVEN) return cli_error(c->cmd, CLI_USAGE, "too many options");
        c->param[c->nopt] = p;
        c->text[c->nopt++] = flag ? "1" : val;
    }
    if (npos < op->ninputs)
        return cli_error(c->cmd, CLI_USAGE, "expected one input file (see voxa help %s)", c->ref);
    if ((c->chunks || c->dry_run || c->pyramid) && !c->mem_limit) c->mem_limit = "1G";
    if (!c->out_path && !c->dry_run)
        return cli_error(c->cmd, CLI_USAGE, "missing -o OUT (see voxa help %s)", c->ref);
    return CLI_OK;
}

/* --backend NAME, else VOXA_BACKEND (checked here: the library reads an
 * unknown name as cpu). A usage error for an unknown name. */
static int cli_set_backend(const char *cmd, voxa_args *a, const char *name) {
    const char *env = getenv("VOXA_BACKEND");
    voxa_backend b;
    if (name && voxa_backend_from_name(name, &b) != VOXA_OK)
        return cli_error(cmd, CLI_USAGE, "--backend '%s': expected cpu, opencl, cuda or auto",
                         name);
    if (!name && env && *env && voxa_backend_from_name(env, &b) != VOXA_OK)
        return cli_error(cmd, CLI_USAGE, "VOXA_BACKEND '%s': expected cpu, opencl, cuda or auto",
                         env);
    if (name) voxa_args_set_backend(a, b);
    return CLI_OK;
}

/* --dry-run, ops with a GPU path: the device memory of a GPU run. */
static void print_device(const call *c, const voxa_args *a, voxa_dtype dt, int nd,
                         const int64_t *shape) {
    int64_t total, largest;
    const char *formula;
    if (!c->op->gpu || voxa_op_device_bytes(a, dt, nd, shape, &total, &largest, &formula))
        return;
    printf("device memory (opencl, cuda): %s = %.1f MiB, largest buffer %.1f MiB%s\n",
           formula ? formula : "?", (double)total / 1048576.0, (double)largest / 1048576.0,
           c->op->flags & VOXA_OP_LOCAL ? " (tiled with the halo when the device is smaller)"
                                        : "");
    int64_t nt, lim; /* with a GPU backend: the tiles under this device's limit */
    if (voxa_op_device_tiles(a, dt, nd, shape, &nt, &lim) == VOXA_OK && lim > 0)
        printf("device tiles: %lld (limit %lld bytes)%s\n", (long long)nt, (long long)lim,
               nt ? "" : ": too large for the device and not tiled");
}

static bool given(const call *c, int p) {
    for (int k = 0; k < c->nopt; k++)
        if (c->param[k] == p) return true;
    return false;
}

/* Required options and exclusive groups, judged on what the command line
 * gives (defaults do not count): the library's own check, run on a copy of
 * the descriptor without input or op check, so no value is looked at. */
static int check_given(const call *c) {
    const voxa_op *op = c->op;
    voxa_op shadow = *op;
    shadow.ninputs = 0;
    shadow.check = NULL;
    voxa_args a;
    memset(&a, 0, sizeof a);
    a.op = &shadow;
    for (int k = 0; k < c->nopt; k++) a.v[c->param[k]].set = 1;
    if (voxa_op_check(&a, NULL) == VOXA_OK) return CLI_OK;
    int p = message_param(op, voxa_last_error());
    if (p < 0) return cli_error(c->cmd, CLI_USAGE, "%s", voxa_last_error());
    char list[512], d[64];
    if (!op->params[p].oneof)
        return cli_error(c->cmd, CLI_USAGE, "--%s is required (see voxa help %s)",
                         cli_dashed(op->params[p].name, d, sizeof d), c->ref);
    size_t len = 0;
    int count = 0, total = 0;
    bool required = false;
    for (int j = 0; j < op->nparams; j++) {
        const voxa_param *q = &op->params[j];
        total += cli_same_group(q, &op->params[p]) && !(q->flags & VOXA_PARAM_HIDDEN);
        required |= cli_same_group(q, &op->params[p]) && (q->flags & VOXA_PARAM_REQUIRED);
    }
    for (int j = 0; j < op->nparams && len < sizeof list; j++) {
        const voxa_param *q = &op->params[j];
        if (!cli_same_group(q, &op->params[p]) || (q->flags & VOXA_PARAM_HIDDEN)) continue;
        count++;
        len += (size_t)snprintf(list + len, sizeof list - len, "%s--%s",
                                count == 1 ? "" : count == total ? " and " : ", ",
                                cli_dashed(q->name, d, sizeof d));
    }
    return cli_error(c->cmd, CLI_USAGE, "give %s one of %s", required ? "exactly" : "at most",
                     list);
}

/* Set the arguments from the command line: plain values first (usage
 * errors), then IN and the file-valued options (failures), then the op's
 * check. An option given replaces the default of its exclusive group. */
static int set_args(const call *c, voxa_args *a, voxa_array *in, voxa_store **store) {
    const voxa_op *op = c->op;
    if (voxa_args_init(a, op) != VOXA_OK) return report(c, CLI_FAIL);
    if (cli_set_backend(c->cmd, a, c->backend) != CLI_OK) return CLI_USAGE;
    for (int k = 0; k < c->nopt; k++)
        for (int j = 0; j < op->nparams; j++)
            if (j != c->param[k] && cli_same_group(&op->params[j], &op->params[c->param[k]]) &&
                !given(c, j))
                voxa_args_clear(a, op->params[j].name);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && op->ninputs > 0 &&
            (store ? voxa_store_open(c->in_path, store) : voxa_read(c->in_path, in)) != VOXA_OK)
            return cli_error(c->cmd, CLI_FAIL, "%s", library_message(c));
        if (pass == 1 && store && *store) *in = voxa_store_meta(*store);
        for (int k = 0; k < c->nopt; k++) {
            const voxa_param *p = &op->params[c->param[k]];
            if (file_valued(p) != (pass == 1)) continue;
            if (voxa_args_parse(a, p->name, c->text[k]) != VOXA_OK)
                return pass ? cli_error(c->cmd, CLI_FAIL, "%s", library_message(c))
                            : report(c, CLI_USAGE);
        }
    }
    if (voxa_op_check(a, op->ninputs > 0 ? in : NULL) != VOXA_OK) return report(c, CLI_USAGE);
    return CLI_OK;
}

/* What an op without an input made: "<cmd>: N <table> -> K of M voxels
 * non-zero (P%) -> OUT" (balls: "30 points -> ..."; K: the op's count). */
static void report_generated(const call *c, const voxa_args *a, int ndim, const int64_t *shape,
                             int64_t count) {
    printf("%s: ", c->cmd);
    for (int i = 0; i < c->op->nparams; i++)
        if (c->op->params[i].type == VOXA_PARAM_TABLE && a->v[i].set) {
            printf("%lld %s -> ", (long long)a->v[i].array.shape[0], c->op->params[i].name);
            break;
        }
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= shape[d];
    if (count >= 0)
        printf("%lld of %lld voxels non-zero (%.3f%%) -> ", (long long)count, (long long)n,
               n ? 100.0 * (double)count / (double)n : 0.0);
    printf("%s\n", c->out_path);
}

/* Above this much work per output voxel (voxa_stream_plan_overhead) a
 * streamed run says so on stderr: a small --mem-limit with a big structuring
 * element or PSF can cost thousands of times the in-memory run. */
#define CLI_OVERHEAD_NOTE 4.0

/* "4x4x4" */
static void cli_dims(char *buf, size_t n, const int64_t *v, int nd) {
    size_t k = 0;
    buf[0] = 0;
    for (int d = 0; d < nd && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, d ? "x%lld" : "%lld", (long long)v[d]);
}

/* --mem-limit: plan, then (unless --dry-run) run block by block from the
 * input store into an output store published only when complete. */
static int run_streamed(const call *c, const voxa_args *a, voxa_store *in) {
    voxa_stream_options o;
    memset(&o, 0, sizeof o);
    if (!cli_parse_size(c->mem_limit, &o.mem_limit))
        return cli_error(c->cmd, CLI_USAGE, "--mem-limit '%s': expected a size such as 512M or "
                         "2G", c->mem_limit);
    voxa_stream_plan p;
    if (voxa_stream_plan_make(a, in, &o, &p) != VOXA_OK) return report(c, CLI_USAGE);
    if (c->chunks) {
        int n = cli_parse_int64s(c->chunks, o.block, VOXA_MAXDIM);
        bool ok = n == p.ndim;
        for (int d = 0; ok && d < n; d++) ok = o.block[d] >= 1;
        if (!ok)
            return cli_error(c->cmd, CLI_USAGE, "--chunks '%s': expected %d sizes >= 1", c->chunks,
                             p.ndim);
        if (voxa_stream_plan_make(a, in, &o, &p) != VOXA_OK) return report(c, CLI_USAGE);
    }
    char text[1024];
    if (c->dry_run) {
        voxa_stream_plan_text(&p, text, sizeof text);
        fputs(text, stdout);
        voxa_array meta = c->op->ninputs > 0 ? voxa_store_meta(in) : (voxa_array){0};
        if (c->op->ninputs > 0) print_device(c, a, meta.dtype, meta.ndim, meta.shape);
        else print_device(c, a, p.out_dtype, p.ndim, p.shape);
        return CLI_OK;
    }
    if (p.peak_bytes > o.mem_limit)
        return cli_error(c->cmd, CLI_FAIL, "--mem-limit %s: the plan needs about %.3g MiB%s",
                         c->mem_limit, (double)p.peak_bytes / 1048576.0,
                         p.whole ? " (this op reads the whole volume)" : " with these --chunks");
    double over = voxa_stream_plan_overhead(&p);
    if (over > CLI_OVERHEAD_NOTE) { /* a halo wider than the blocks: say so, then run */
        char bl[96], ha[96];
        cli_dims(bl, sizeof bl, p.block, p.ndim);
        cli_dims(ha, sizeof ha, p.halo_lo, p.ndim);
        fprintf(stderr, "voxa %s: note: blocks of %s voxels within --mem-limit %s and a halo of "
                "%s: the op runs on %.0fx the volume; a larger --mem-limit is faster\n",
                c->cmd, bl, c->mem_limit, ha, over);
    }
    o.progress = (voxa_progress){cli_progress, (void *)cli_op_word(c->op)};
    voxa_store *out = NULL;
    int64_t count = -1, levels = 0;
    if (c->pyramid && (cli_parse_int64s(c->pyramid, &levels, 1) != 1 || levels < 0 || levels > 16))
        return cli_error(c->cmd, CLI_USAGE, "--pyramid '%s': expected 0 to 16 levels", c->pyramid);
    voxa_store_options so = {.pyramid = (int)levels};
    voxa_stream_chunks(&p, so.pyramid, so.chunks); /* whole chunks per block: resumable */
    if (voxa_store_create_opts(c->out_path, p.out_dtype, p.ndim, p.shape, &so, &out) != VOXA_OK ||
        voxa_stream_run(a, in, out, &o, &count) != VOXA_OK || voxa_store_commit(out) != VOXA_OK) {
        voxa_store_close(out);
        return report(c, CLI_FAIL);
    }
    voxa_store_close(out);
    voxa_stream_stats S; /* VOXA_STREAM_STATS=1: where the time went (bench/bench_stream.py) */
    voxa_stream_last_stats(&S);
    if (getenv("VOXA_STREAM_STATS"))
        fprintf(stderr, "stream: wall %.3f s, %d workers, read %.3f op %.3f write %.3f; label "
                "blocks %.3f merge %.3f relabel %.3f\n", S.wall, S.workers, S.read, S.op, S.write,
                S.label_blocks, S.label_merge, S.label_relabel);
    if (c->op->ninputs == 0) report_generated(c, a, p.ndim, p.shape, count);
    else if (c->op->flags & VOXA_OP_COUNT) printf("%lld\n", (long long)count);
    return CLI_OK;
}

int cli_run_op(const voxa_op *op, int argc, char **argv) {
    call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.cmd = op->group ? op->group : cli_op_word(op);
    snprintf(c.ref, sizeof c.ref, "%s%s%s", op->group ? op->group : "", op->group ? " " : "",
             cli_op_word(op));
    int rc = parse(&c, argc, argv);
    if (rc == CLI_OK) rc = check_given(&c);
    if (rc != CLI_OK) return rc;
    voxa_args a;
    voxa_array in, out;
    memset(&a, 0, sizeof a);
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    const voxa_array *inp = op->ninputs > 0 ? &in : NULL;
    voxa_store *store = NULL;
    rc = set_args(&c, &a, &in, c.mem_limit ? &store : NULL);
    if (rc != CLI_OK) goto done;
    char buf[512];
    if (c.describe) {
        if (op->describe(&a, inp, buf, sizeof buf) != VOXA_OK) {
            rc = report(&c, CLI_FAIL);
            goto done;
        }
        fprintf(stderr, "%s: path: %s\n", c.cmd, buf);
    }
    if (c.mem_limit) {
        memset(&in, 0, sizeof in); /* a metadata view of the store */
        rc = run_streamed(&c, &a, store);
        goto done;
    }
    voxa_dtype dt;
    int nd;
    int64_t shape[VOXA_MAXDIM + 1], count = -1;
    voxa_progress progress = {cli_progress, (void *)cli_op_word(op)};
    if (voxa_op_output(&a, inp, &dt, &nd, shape) != VOXA_OK ||
        voxa_array_new(&out, dt, nd, shape) != VOXA_OK ||
        voxa_op_run(&a, inp, &out, &progress, &count) != VOXA_OK ||
        voxa_write(c.out_path, &out) != VOXA_OK) {
        rc = report(&c, CLI_FAIL);
        goto done;
    }
    if (op->ninputs == 0) report_generated(&c, &a, out.ndim, out.shape, count);
    else if (op->flags & VOXA_OP_COUNT) printf("%lld\n", (long long)count);
done:
    voxa_store_close(store);
    voxa_args_free(&a);
    voxa_array_free(&in);
    voxa_array_free(&out);
    return rc;
}
