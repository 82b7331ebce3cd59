/* Choose a reader/writer by file extension. */
#include "internal.h"

#include <string.h>
#include <strings.h>

typedef voxa_status (*reader)(const char *, voxa_array *);
typedef voxa_status (*writer)(const char *, const voxa_array *);

static const struct {
    const char *ext;
    reader read;
    writer write;
} formats[] = {
    {".npy", voxa_npy_read, voxa_npy_write},
    {".tif", voxa_tiff_read, voxa_tiff_write},
    {".tiff", voxa_tiff_read, voxa_tiff_write},
    {".zarr", voxa_zarr_read_all, voxa_zarr_write_all}, /* a folder; see docs/zarr.md */
};

static int find_format(const char *path) {
    /* "x.zarr/" names the same folder as "x.zarr" */
    char buf[4096];
    size_t n = path ? strlen(path) : 0;
    if (n > 1 && n < sizeof buf && path[n - 1] == '/') {
        while (n > 1 && path[n - 1] == '/') n--;
        memcpy(buf, path, n);
        buf[n] = 0;
        path = buf;
    }
    const char *dot = path ? strrchr(path, '.') : NULL;
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!dot || (slash && slash > dot)) return -1;
    for (int i = 0; i < (int)(sizeof formats / sizeof formats[0]); i++)
        if (!strcasecmp(dot, formats[i].ext)) return i;
    return -1;
}

voxa_status voxa_read(const char *path, voxa_array *out) {
    VOXA_FAIL_IF(!path || !out, VOXA_EINVAL, "read: NULL argument");
    int i = find_format(path);
    VOXA_FAIL_IF(i < 0, VOXA_EUNSUPPORTED,
                 "cannot read '%s': unknown extension (expected .npy, .tif, .tiff or .zarr)", path);
    return formats[i].read(path, out);
}

voxa_status voxa_write(const char *path, const voxa_array *a) {
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "write: NULL path");
    VOXA_CHECK(voxa_array_check(a, "write"));
    int i = find_format(path);
    VOXA_FAIL_IF(i < 0, VOXA_EUNSUPPORTED,
                 "cannot write '%s': unknown extension (expected .npy, .tif, .tiff or .zarr)", path);
    return formats[i].write(path, a);
}
