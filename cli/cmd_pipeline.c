/* voxa pipeline RECIPE.toml: run a whole job from a recipe (src/pipeline).
 * A hand-written command: it runs many steps, each through the library's
 * runner, which decides what is stale, streams each op within --mem-limit,
 * and writes run.json and report.html. Here: options, one progress bar per
 * step on a terminal, a line per step, exit codes (2: the recipe is wrong,
 * nothing ran; 1: a step failed). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char voxa_cmd_pipeline_help[] =
    "Run the steps of a recipe (TOML), skipping those already up to date.\n"
    "\n"
    "usage: voxa pipeline RECIPE.toml [--mem-limit BYTES] [--force] [--dry-run]\n"
    "  RECIPE.toml        [inputs] name = path, then [[step]] tables: op = any op\n"
    "                     (voxa help), measure or preview, name, input, output and\n"
    "                     the op's options as keys (docs/pipeline.md); paths are\n"
    "                     relative to the recipe's folder\n"
    "  --mem-limit BYTES  memory per step (suffix K, M, G; default: the recipe's\n"
    "                     [pipeline] mem_limit, else 1G): ops run block by block\n"
    "  --force            rerun every step\n"
    "  --dry-run          say which steps would run and why, and their block plans;\n"
    "                     run nothing\n"
    "A step is skipped when its output exists, is newer than everything it reads\n"
    "and run.json records it complete from the same recipe entry, so a stopped\n"
    "run resumes. Writes run.json and report.html (previews, object table summary,\n"
    "timings; self-contained) in the recipe's output_dir (default: out/).\n"
    "Exit 0 ok, 1 a step failed, 2 the recipe or a usage error (nothing run).\n";

static const char *current = "pipeline";

static int on_step(int index, int nsteps, const char *step, const char *op, const char *state,
                   double seconds, void *user) {
    (void)user;
    current = step;
    if (!strcmp(state, "skip"))
        printf("[%d/%d] %s (%s): up to date, skipped\n", index + 1, nsteps, step, op);
    else if (!strcmp(state, "run"))
        printf("[%d/%d] %s (%s): running\n", index + 1, nsteps, step, op);
    else
        printf("[%d/%d] %s (%s): done in %.2f s\n", index + 1, nsteps, step, op, seconds);
    fflush(stdout);
    return 0;
}

static int progress(int64_t done, int64_t total, void *user) {
    (void)user;
    return cli_progress(done, total, (void *)current);
}

int voxa_cmd_pipeline(int argc, char **argv) {
    const char *mem_s = NULL;
    bool force = false, dry = false;
    cli_option opts[] = {
        {"mem-limit", &mem_s, NULL}, {"force", NULL, &force}, {"dry-run", NULL, &dry},
    };
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 3, voxa_cmd_pipeline_help, pos, 1, &npos);
    if (rc != CLI_OK) return rc;
    if (npos != 1)
        return cli_error("pipeline", CLI_USAGE, "expected one RECIPE.toml (see voxa help pipeline)");
    voxa_pipeline_options o = {0};
    if (mem_s && !cli_parse_size(mem_s, &o.mem_limit))
        return cli_error("pipeline", CLI_USAGE,
                         "--mem-limit needs a positive size (e.g. 512M), got '%s'", mem_s);
    voxa_pipeline *p = NULL;
    voxa_status s = voxa_pipeline_load(pos[0], &p);
    if (s != VOXA_OK)
        return cli_error("pipeline", s == VOXA_EINVAL ? CLI_USAGE : CLI_FAIL, "%s",
                         voxa_last_error());
    o.force = force;
    o.dry_run = dry;
    o.on_step = on_step;
    o.progress = (voxa_progress){progress, NULL};
    s = voxa_pipeline_run(p, &o);
    if (s != VOXA_OK) {
        rc = cli_error("pipeline", CLI_FAIL, "%s", voxa_last_error());
        fprintf(stderr, "voxa: pipeline: run.json: %s\n", voxa_pipeline_path(p, "run.json"));
    } else if (dry) {
        static char text[1 << 16];
        voxa_pipeline_plan_text(p, text, sizeof text);
        fputs(text, stdout);
    } else {
        printf("run.json: %s\nreport: %s\n", voxa_pipeline_path(p, "run.json"),
               voxa_pipeline_path(p, "report"));
    }
    voxa_pipeline_free(p);
    return rc;
}
