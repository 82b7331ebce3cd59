/* The registry: every op descriptor, found by name. The table is generated
 * by CMake from the descriptor files' names (src/ops/<family>/op_<name>.c
 * defines `const voxa_op voxa__op_<name>`), so adding an op edits no list. */
#include "internal.h"
#include "voxa/op.h"

#include <stdlib.h>
#include <string.h>

#define VOXA_OP(n) extern const voxa_op voxa__op_##n;
#include "op_table.h"
#undef VOXA_OP

static const voxa_op *const table[] = {
#define VOXA_OP(n) &voxa__op_##n,
#include "op_table.h"
#undef VOXA_OP
};
static const int ntable = (int)(sizeof table / sizeof table[0]);

const voxa_op *const *voxa_ops(int *n) {
    if (n) *n = ntable;
    return table;
}

const voxa_op *voxa_op_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < ntable; i++)
        if (!strcmp(table[i]->name, name)) return table[i];
    return NULL;
}
