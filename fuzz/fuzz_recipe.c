/* libFuzzer target: the recipe parser (src/pipeline/toml.c) and the recipe
 * checks (voxa_pipeline_load_text) on arbitrary bytes. Checks memory safety
 * (ASan/UBSan), that a failed parse says where ("LINE:COL: ..."), and that
 * the tree is well formed. Loading never writes: the recipe's folder does
 * not exist, so input files are missing and nothing runs. */
#include "voxa.h"
#include "../src/pipeline/toml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void walk(const vt_node *n, int depth) {
    if (depth > 40 || n->line < 1 || n->col < 1) abort();
    if (n->kind == VT_STRING && !n->s) abort();
    if ((n->kind == VT_ARRAY || n->kind == VT_TABLE) && n->n && !n->items) abort();
    for (int i = 0; i < n->n; i++) {
        if (n->kind == VT_TABLE && !n->items[i]->key) abort();
        if (n->kind == VT_TABLE && vt_get(n, n->items[i]->key) != n->items[i]) abort(); /* unique */
        walk(n->items[i], depth + 1);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    vt_node *root = NULL;
    char err[256];
    if (vt_parse((const char *)data, size, &root, err, sizeof err) == 0) {
        if (!root || root->kind != VT_TABLE) abort();
        walk(root, 0);
        vt_free(root);
    } else {
        int line, col;
        if (root || sscanf(err, "%d:%d: ", &line, &col) != 2 || line < 1 || col < 1) abort();
    }
    voxa_pipeline *p = NULL;
    voxa_status s = voxa_pipeline_load_text((const char *)data, size, "fuzz",
                                            "/nonexistent-voxa-fuzz", &p);
    if ((s == VOXA_OK) != (p != NULL)) abort();
    if (s != VOXA_OK && !*voxa_last_error()) abort();
    voxa_pipeline_free(p);
    return 0;
}
