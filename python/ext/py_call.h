/* An op call being prepared from Python (py_op.c): the op, its arguments
 * converted from keywords by their declared types, the buffers behind them.
 * Shared with py_stream.c, whose streamed runs take the same keywords. */
#ifndef VOXA_PY_CALL_H
#define VOXA_PY_CALL_H

#include "common.h"

/* Everything a call holds: the op, its arguments and the buffers behind
 * them, the input view. Released by call_free on every way out. */
typedef struct call {
    const voxa_op *op;
    voxa_args args;
    int args_ready;
    vx_bufs bufs;
    voxa_array in;
    int has_in;
} call;

/* Fill c from (name, input, **kwargs) (input_obj NULL: no input array);
 * keywords listed in `skip` (NULL-terminated) are not parameters. Returns 0
 * or -1 with an exception; vx_call_free(c) either way. */
int vx_call_init(call *c, const char *fname, PyObject *name_obj, PyObject *input_obj,
                 PyObject *kwargs, const char *const *skip);
void vx_call_free(call *c);

#endif
