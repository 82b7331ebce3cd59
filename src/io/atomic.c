/* Atomic file output (see atomic.h). */
#include "atomic.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static atomic_int counter;

voxa_status voxa__atomic_begin(voxa__atomic *w, const char *path) {
    VOXA_FAIL_IF(!path || !*path, VOXA_EINVAL, "output path is empty");
    long pid = (long)getpid();
    int k = atomic_fetch_add(&counter, 1);
    const char *slash = strrchr(path, '/');
    size_t base = strlen(slash ? slash + 1 : path);
    int n = snprintf(w->tmp, sizeof w->tmp, "%s.tmp-%ld-%d", path, pid, k);
    /* A file name near the 255-byte limit (NAME_MAX) would make the
     * temporary's name too long although the target's is fine: then use a
     * short hidden name in the same folder. */
    if (n >= 0 && base + (size_t)n - strlen(path) > 255)
        n = snprintf(w->tmp, sizeof w->tmp, "%.*s.voxa-tmp-%ld-%d",
                     (int)(slash ? slash + 1 - path : 0), path, pid, k);
    VOXA_FAIL_IF(n < 0 || (size_t)n >= sizeof w->tmp, VOXA_EINVAL, "output path too long: '%s'",
                 path);
    w->path = path;
    return VOXA_OK;
}

voxa_status voxa__atomic_fopen(voxa__atomic *w, FILE **f) {
    *f = fopen(w->tmp, "wb");
    if (!*f) return voxa__error(VOXA_EIO, "cannot create '%s': %s", w->path, strerror(errno));
    return VOXA_OK;
}

voxa_status voxa__atomic_end(voxa__atomic *w, FILE *f, voxa_status st) {
    if (f) {
        int bad = ferror(f);
        if (fclose(f) != 0 || bad) {
            if (st == VOXA_OK)
                st = voxa__error(VOXA_EIO, "cannot write '%s': %s", w->path,
                                 strerror(errno ? errno : EIO));
        }
    }
    if (st == VOXA_OK && rename(w->tmp, w->path) != 0)
        st = voxa__error(VOXA_EIO, "cannot rename the output to '%s': %s", w->path,
                         strerror(errno));
    if (st != VOXA_OK) remove(w->tmp);
    return st;
}
