/* Whether published files are flushed to disk before their rename. A
 * power cut after a rename without fsync can leave a renamed but empty
 * file, so the flush is on by default; scratch data may skip it
 * (VOXA_NO_FSYNC=1, voxa_set_fsync(0), the CLI's --no-fsync), which saves
 * the flush of every chunk file (measured in docs/stream.md). */
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_int fsync_mode; /* 0: from the environment, 1: on, 2: off */

void voxa_set_fsync(int on) { fsync_mode = on ? 1 : 2; }

int voxa_get_fsync(void) {
    if (fsync_mode) return fsync_mode == 1;
    const char *env = getenv("VOXA_NO_FSYNC");
    return !(env && *env && strcmp(env, "0") != 0);
}
