/* Shared by the TIFF reader (tiff.c) and writer (tiff_write.c): libtiff
 * handles opened so that libtiff never prints. libtiff's default handlers
 * write errors and warnings to stderr; the "ExtR" handlers of libtiff >= 4.5
 * are attached to one TIFF* and, by returning 1, stop the global handlers.
 * Errors are captured into a tiffmsg (the first one since the last reset,
 * usually the root cause); warnings are dropped. */
#ifndef VOXA_TIFF_INTERNAL_H
#define VOXA_TIFF_INTERNAL_H

#include "internal.h"

#include <stdio.h>
#include <string.h>
#include <tiffio.h>

typedef struct tiffmsg {
    char text[480];
    int have;
    const char *name; /* file name libtiff puts in its messages: cut out */
} tiffmsg;

static inline void tiffmsg_reset(tiffmsg *m) {
    m->text[0] = '\0';
    m->have = 0;
}

static int tiffmsg_on_error(TIFF *tif, void *user, const char *module, const char *fmt,
                            va_list ap) {
    (void)tif;
    tiffmsg *m = user;
    if (!m || m->have) return 1;
    int k = 0;
    if (module && *module) k = snprintf(m->text, sizeof m->text, "%s: ", module);
    if (k < 0 || (size_t)k >= sizeof m->text) k = 0;
    vsnprintf(m->text + k, sizeof m->text - (size_t)k, fmt, ap);
    m->have = 1;
    /* libtiff repeats the file name ("name: Cannot read ..."); our message
     * names the file already. */
    size_t nl = m->name ? strlen(m->name) : 0;
    char *at = nl ? strstr(m->text, m->name) : NULL;
    if (at && at[nl] == ':' && at[nl + 1] == ' ')
        memmove(at, at + nl + 2, strlen(at + nl + 2) + 1);
    return 1; /* handled: libtiff's global handler (stderr) is not called */
}

static int tiffmsg_on_warning(TIFF *tif, void *user, const char *module, const char *fmt,
                              va_list ap) {
    (void)tif, (void)user, (void)module, (void)fmt, (void)ap;
    return 1; /* ignored, and kept off stderr */
}

/* TIFFOpenExt with the capturing handlers. NULL on failure (m says why). */
static inline TIFF *voxa__tiff_open(const char *path, const char *mode, tiffmsg *m) {
    tiffmsg_reset(m);
    m->name = path;
    TIFFOpenOptions *o = TIFFOpenOptionsAlloc();
    if (!o) {
        snprintf(m->text, sizeof m->text, "out of memory");
        m->have = 1;
        return NULL;
    }
    TIFFOpenOptionsSetErrorHandlerExtR(o, tiffmsg_on_error, m);
    TIFFOpenOptionsSetWarningHandlerExtR(o, tiffmsg_on_warning, m);
    TIFF *tif = TIFFOpenExt(path, mode, o); /* copies the handlers */
    TIFFOpenOptionsFree(o);
    return tif;
}

/* The message libtiff left, or `fallback`. */
static inline const char *tiffmsg_text(const tiffmsg *m, const char *fallback) {
    return m->have && m->text[0] ? m->text : fallback;
}

/* What a page holds and how it is laid out. */
typedef struct pageinfo {
    uint32_t w, h;
    uint16_t bps, fmt, spp, planar, photometric, compression;
    int tiled;
    uint32_t tw, th, rps;
    voxa_dtype dtype;
    int bilevel; /* 1-bit samples expanded to bool */
} pageinfo;

typedef struct reader {
    const char *path;
    TIFF *tif;
    tiffmsg msg;
    int64_t file_size;
} reader;

/* tiff.c, shared with tiff_region.c: pass 1 over the directories (every
 * page checked against page 0; p0 = page 0, *npages counted; ImageJ raw
 * stacks: *raw_n > 1 images from *raw_offset, else 0). Leaves the TIFF on
 * its last directory. */
voxa_status voxa__tiff_scan(reader *r, pageinfo *p0, int64_t *npages, uint64_t *raw_offset,
                            int64_t *raw_n);
/* Read page k's directory description (after TIFFSetDirectory). */
voxa_status voxa__tiff_page_info(reader *r, tdir_t page, pageinfo *p);

/* tiff_inflate.c: parallel decoding of deflate strips (see there). */
int voxa__tiff_inflate_ok(TIFF *tif, uint16_t compression, int tiled, uint16_t bps);
voxa_status voxa__tiff_inflate_page(TIFF *tif, uint8_t *dst, int64_t h, int64_t rps,
                                    int64_t row, int64_t nplanes, int64_t es,
                                    int64_t file_size);

#endif
