/* Atomic file output: write to "<path>.tmp-<pid>-<n>" in the same folder,
 * rename over <path> on success, unlink on failure. A crash never leaves a
 * partial file under the final name. */
#ifndef VOXA_ATOMIC_H
#define VOXA_ATOMIC_H

#include "internal.h"

#include <stdio.h>

typedef struct voxa__atomic {
    char tmp[4096];
    const char *path;
} voxa__atomic;

/* Create the temporary name (not the file) for `path`. */
voxa_status voxa__atomic_begin(voxa__atomic *w, const char *path);
/* fopen the temporary for writing ("wb"); EIO with the reason on failure. */
voxa_status voxa__atomic_fopen(voxa__atomic *w, FILE **f);
/* Close `f` (may be NULL), then rename on st == VOXA_OK or remove otherwise.
 * Returns st, or EIO if closing/renaming failed. */
voxa_status voxa__atomic_end(voxa__atomic *w, FILE *f, voxa_status st);

#endif
