/* voxa backends: list each backend, its devices (name, memory) and, when it
 * cannot run, why (not built, no ICD loader / driver, no device). Probing
 * loads the GPU runtimes with dlopen; a missing one is a line of output, not
 * an error. Exit status 0 unless --require names a backend that cannot run. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

const char voxa_cmd_backends_help[] =
    "List the backends (cpu, opencl, cuda), their devices, or why one is unavailable.\n"
    "\n"
    "usage: voxa backends [--require NAME]\n"
    "  --require NAME  exit 1 unless backend NAME (cpu, opencl, cuda, auto) can run\n"
    "\n"
    "The default backend is cpu, or VOXA_BACKEND (cpu, opencl, cuda, auto);\n"
    "auto is cuda, else opencl, else cpu.\n";

static void print_backend(const voxa_backend_info *info, voxa_backend def) {
    printf("%-7s %s%s\n", voxa_backend_name(info->backend),
           info->available ? "available" : "unavailable",
           info->backend == def ? "  (default)" : "");
    if (!info->available) printf("        why: %s\n", info->why);
    if (info->runtime[0]) printf("        runtime: %s\n", info->runtime);
    for (int i = 0; i < info->ndevices; i++) {
        const voxa_device_info *d = &info->devices[i];
        if (d->memory > 0)
            printf("        device %d: %s, %.1f GiB memory, %.1f GiB per buffer\n", i, d->name,
                   (double)d->memory / (1 << 30), (double)d->max_alloc / (1 << 30));
        else
            printf("        device %d: %s\n", i, d->name);
    }
}

int voxa_cmd_backends(int argc, char **argv) {
    const char *require = NULL;
    cli_option opts[] = {{"require", &require, NULL}};
    const char *pos[1];
    int npos;
    int rc = cli_parse(argc, argv, opts, 1, voxa_cmd_backends_help, pos, 0, &npos);
    if (rc != CLI_OK) return rc;
    voxa_backend want = VOXA_BACKEND_CPU;
    if (require && voxa_backend_from_name(require, &want) != VOXA_OK)
        return cli_error("backends", CLI_USAGE, "%s", voxa_last_error());
    const char *env = getenv("VOXA_BACKEND");
    voxa_backend def = VOXA_BACKEND_CPU;
    if (env && *env && voxa_backend_from_name(env, &def) != VOXA_OK)
        return cli_error("backends", CLI_USAGE, "VOXA_BACKEND: %s", voxa_last_error());
    def = voxa_backend_selected();
    for (int b = VOXA_BACKEND_CPU; b <= VOXA_BACKEND_CUDA; b++) {
        voxa_backend_info info;
        voxa_status s = voxa_backend_query((voxa_backend)b, &info);
        if (s != VOXA_OK) return cli_fail("backends", s);
        print_backend(&info, def);
    }
    if (def == VOXA_BACKEND_AUTO) {
        voxa_backend r;
        if (voxa_backend_resolve(VOXA_BACKEND_AUTO, &r) == VOXA_OK)
            printf("auto    -> %s\n", voxa_backend_name(r));
    }
    if (require) {
        voxa_backend r;
        voxa_status s = voxa_backend_resolve(want, &r);
        if (s != VOXA_OK) return cli_fail("backends", s);
    }
    return CLI_OK;
}
