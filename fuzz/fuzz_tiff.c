/* libFuzzer target: the TIFF reader (voxa_tiff_read, i.e. libtiff plus
 * voxa's page walking and ImageJ handling) on arbitrary files. Besides
 * memory safety it checks that nothing is printed: stderr is pointed at a
 * scratch file during the read and must stay empty (libtiff prints by
 * default; voxa must capture every message). */
#include "voxa.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[64], errpath[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/voxa-fuzz-%ld.tif", (long)getpid());
        snprintf(errpath, sizeof errpath, "/tmp/voxa-fuzz-%ld.err", (long)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    if (size) fwrite(data, 1, size, f);
    fclose(f);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    voxa_array a;
    voxa_status s = voxa_tiff_read(path, &a);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    struct stat sb;
    if (stat(errpath, &sb) == 0 && sb.st_size > 0) {
        fprintf(stderr, "voxa_tiff_read printed %lld bytes to stderr (see %s)\n",
                (long long)sb.st_size, errpath);
        abort();
    }
    if (s == VOXA_OK) {
        if (a.ndim < 2 || a.ndim > 4 || !a.data) abort();
        voxa_array_free(&a);
    } else if (a.data) {
        abort();
    }
    return 0;
}
