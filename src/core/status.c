/* Status codes and the thread-local error message.
 * Each thread has its own buffer (libvips' documented regret was one global
 * buffer shared by all threads). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

const char *voxa_version(void) { return VOXA_VERSION_STRING; }

const char *voxa_last_error(void) { return last_error; }

void voxa_clear_error(void) { last_error[0] = '\0'; }

/* Formats into a copy first: a message may quote the previous one
 * (voxa__error(st, "%s: %s", path, voxa_last_error())). */
voxa_status voxa__error(voxa_status s, const char *fmt, ...) {
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    return s;
}

const char *voxa_status_name(voxa_status s) {
    static const char *const names[] = {
        "OK", "EINVAL", "ENOMEM", "EIO", "EFORMAT",
        "EUNSUPPORTED", "ECANCELLED", "EOVERFLOW", "EINTERNAL",
    };
    int i = -(int)s;
    if (i < 0 || i >= (int)(sizeof names / sizeof names[0])) return "EUNKNOWN";
    return names[i];
}
