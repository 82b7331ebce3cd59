/* FFTW wisdom: the record of measured plans, kept across runs.
 *
 * Explicit: voxa_deconv_wisdom_load/save (CLI --wisdom FILE, Python
 * load_wisdom/save_wisdom). By default (cheap, so on): a per-user cache file,
 * $VOXA_FFTW_WISDOM, else $XDG_CACHE_HOME/voxa/fftw-wisdom-f32, else
 * $HOME/.cache/voxa/fftw-wisdom-f32; VOXA_FFTW_WISDOM set to "", "0", "off"
 * or "none" turns it off. Every plan imports the file once per process (per
 * distinct path), so even ESTIMATE plans reuse shapes measured before (FFTW
 * uses wisdom of a more rigorous planner for a less rigorous request), and a
 * MEASURE plan that added wisdom saves it (temp file + rename, so readers see
 * the old or the new file, never half of one). The cache never fails a run:
 * an unreadable, foreign or unwritable file is skipped silently.
 *
 * Import and planning happen under voxa__fftw_lock (FFTW's planner is not
 * thread-safe); saving happens after the lock is released. */
#include "deconv_internal.h"
#include "io/atomic.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

voxa_status voxa_deconv_wisdom_load(const char *path) {
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "wisdom: NULL path");
    FILE *f = fopen(path, "r");
    if (!f)
        return voxa__error(VOXA_EIO, "wisdom: cannot open '%s': %s", path, strerror(errno));
    voxa__fftw_lock();
    int ok = fftwf_import_wisdom_from_file(f);
    voxa__fftw_unlock();
    fclose(f);
    VOXA_FAIL_IF(!ok, VOXA_EFORMAT, "wisdom: '%s' is not FFTW single-precision wisdom", path);
    return VOXA_OK;
}

voxa_status voxa_deconv_wisdom_save(const char *path) {
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "wisdom: NULL path");
    voxa__atomic w;
    FILE *f = NULL;
    VOXA_CHECK(voxa__atomic_begin(&w, path));
    voxa_status st = voxa__atomic_fopen(&w, &f);
    if (st == VOXA_OK) {
        voxa__fftw_lock();
        fftwf_export_wisdom_to_file(f);
        voxa__fftw_unlock();
        if (ferror(f)) st = voxa__error(VOXA_EIO, "wisdom: cannot write '%s'", path);
    }
    return voxa__atomic_end(&w, f, st);
}

/* ---- the default cache file ------------------------------------------------ */

static char loaded[4096]; /* path imported last (under the FFTW lock) */

int voxa__wisdom_cache_path(char *buf, size_t size) {
    const char *e = getenv("VOXA_FFTW_WISDOM");
    int n;
    if (e) {
        if (!*e || !strcmp(e, "0") || !strcmp(e, "off") || !strcmp(e, "none")) return 0;
        n = snprintf(buf, size, "%s", e);
    } else {
        const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
        if (x && *x == '/') n = snprintf(buf, size, "%s/voxa/fftw-wisdom-f32", x);
        else if (h && *h) n = snprintf(buf, size, "%s/.cache/voxa/fftw-wisdom-f32", h);
        else return 0;
    }
    return n > 0 && (size_t)n < size;
}

void voxa__wisdom_cache_import(const char *path) {
    if (!strcmp(path, loaded)) return;
    snprintf(loaded, sizeof loaded, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) return;
    fftwf_import_wisdom_from_file(f); /* a foreign file is ignored */
    fclose(f);
}

/* mkdir -p of the folder holding `path`; failures show up when saving. */
static void make_parents(const char *path) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = buf + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(buf, 0777);
            *s = '/';
        }
}

void voxa__wisdom_cache_save(const char *path) {
    make_parents(path);
    voxa_status st = voxa_deconv_wisdom_save(path);
    if (st != VOXA_OK) voxa_clear_error(); /* never fail a run over the cache */
}
