/* .npy files by regions: a region is a set of runs along the file's
 * contiguous axis (the last one in C order, the first in Fortran order),
 * each moved with one pread/pwrite, so nothing but the region is read or
 * held. Outputs are written to a temporary file of the final size (sparse
 * until written), flushed with fsync and renamed over the target at commit:
 * a killed run never leaves a partial file under the output's name.
 * TIFF outputs (store_tiff.c) are the same kind of file: a header written
 * once (tiff_layout.c), then the array in C order at a known offset, moved
 * by these same runs. pread/pwrite need no lock: stores of this kind are
 * used by many threads at once. */
#include "store_internal.h"
#include "io/atomic.h"
#include "io/npy_format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void layout(voxa_store *s, int fortran) {
    int64_t e = 1;
    for (int k = 0; k < s->ndim; k++) {
        int d = fortran ? k : s->ndim - 1 - k;
        s->estride[d] = e;
        e *= s->shape[d];
    }
}

voxa_status voxa__store_npy_open(voxa_store *s, const char *path) {
    FILE *f = fopen(path, "rb");
    VOXA_FAIL_IF(!f, VOXA_EIO, "cannot open '%s': %s", path, strerror(errno));
    struct stat sb;
    voxa_status st = VOXA_OK;
    int fortran = 0;
    size_t offset = 0;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode))
        st = voxa__error(VOXA_EIO, "cannot read '%s': not a regular file", path);
    if (st == VOXA_OK)
        st = voxa__npy_read_header(f, path, (int64_t)sb.st_size, &s->t, &s->ndim, s->shape,
                                   &fortran, &s->swap, &offset);
    if (st == VOXA_OK) {
        s->fd = dup(fileno(f));
        if (s->fd < 0) st = voxa__error(VOXA_EIO, "cannot read '%s': %s", path, strerror(errno));
    }
    fclose(f);
    s->offset = (int64_t)offset;
    layout(s, fortran);
    return st;
}

voxa_status voxa__store_raw_begin(voxa_store *s, const char *path, int64_t data_offset) {
    voxa__atomic w;
    VOXA_CHECK(voxa__atomic_begin(&w, path));
    snprintf(s->tmp, sizeof s->tmp, "%s", w.tmp);
    int64_t bytes = (int64_t)voxa_dtype_size(s->t);
    for (int d = 0; d < s->ndim; d++) bytes *= s->shape[d];
    s->fd = open(s->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    VOXA_FAIL_IF(s->fd < 0, VOXA_EIO, "cannot create '%s': %s", path, strerror(errno));
    s->offset = data_offset;
    layout(s, 0);
    VOXA_FAIL_IF(ftruncate(s->fd, (off_t)(data_offset + bytes)) != 0, VOXA_EIO,
                 "cannot write '%s': %s", path, strerror(errno));
    return VOXA_OK;
}

voxa_status voxa__store_npy_create(voxa_store *s, const char *path) {
    unsigned char head[VOXA__NPY_HEADER_MAX];
    size_t hlen = voxa__npy_header(s->t, s->ndim, s->shape, head);
    VOXA_CHECK(voxa__store_raw_begin(s, path, (int64_t)hlen));
    VOXA_FAIL_IF(pwrite(s->fd, head, hlen, 0) != (ssize_t)hlen, VOXA_EIO,
                 "cannot write '%s': %s", path, strerror(errno));
    return VOXA_OK;
}

static void swap_bytes(char *p, int64_t n, size_t es) {
    for (int64_t i = 0; i < n; i++, p += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* pread/pwrite all of n bytes at `at`, through partial transfers and
 * EINTR; the error names the reason (ENOSPC, EFBIG, end of file). */
static voxa_status xfer(voxa_store *s, char *p, size_t n, off_t at, int write) {
    while (n > 0) {
        ssize_t k = write ? pwrite(s->fd, p, n, at) : pread(s->fd, p, n, at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            return voxa__error(VOXA_EIO, "cannot %s '%s' at byte %lld: %s",
                               write ? "write" : "read", s->path, (long long)at,
                               k < 0 ? strerror(errno)
                                     : write ? "nothing written" : "unexpected end of file");
        p += k;
        n -= (size_t)k;
        at += k;
    }
    return VOXA_OK;
}

/* Move every run of the region: write = 0 reads the file into `a`. A run
 * is a row along the file's contiguous axis, or, in a C-order file, as many
 * whole rows (planes, ...) as lie one after another both in the file and in
 * `a` (a block of whole rows moves with one call). */
static voxa_status runs(voxa_store *s, const int64_t *lo, voxa_array *a, int write) {
    int64_t n = voxa_array_size(a);
    if (n == 0) return VOXA_OK;
    int fast = 0;
    for (int d = 0; d < s->ndim; d++)
        if (s->estride[d] == 1 && a->shape[d] > 1) fast = d;
    if (s->ndim && s->estride[fast] != 1) fast = s->ndim - 1;
    size_t es = voxa_dtype_size(s->t);
    int64_t len = s->ndim ? a->shape[fast] : 1;
    int direct = !s->ndim || a->strides[fast] == (int64_t)es;
    int outer = fast; /* axes outer..ndim-1 form one run */
    if (direct && fast == s->ndim - 1 && s->ndim > 1 && s->estride[fast] == 1 &&
        s->estride[fast - 1] == s->shape[fast])
        while (outer > 0 && a->shape[outer] == s->shape[outer] &&
               a->strides[outer - 1] == a->strides[outer] * a->shape[outer]) {
            outer--;
            len *= a->shape[outer];
        }
    char *buf = direct ? NULL : malloc((size_t)len * es);
    VOXA_FAIL_IF(!direct && !buf, VOXA_ENOMEM, "store: out of memory for a row");
    int64_t idx[VOXA_MAXDIM] = {0};
    voxa_status st = VOXA_OK;
    for (int64_t r = 0; r < n / len && st == VOXA_OK; r++) {
        int64_t pos = 0;
        for (int d = 0; d < s->ndim; d++) pos += (lo[d] + idx[d]) * s->estride[d];
        char *mem = (char *)a->data + voxa__offset(a, idx);
        char *io = direct ? mem : buf;
        off_t at = (off_t)(s->offset + pos * (int64_t)es);
        size_t bytes = (size_t)len * es;
        if (write && !direct)
            for (int64_t i = 0; i < len; i++) memcpy(buf + i * (int64_t)es, mem + i * a->strides[fast], es);
        if ((st = xfer(s, io, bytes, at, write))) break;
        if (!write) {
            if (s->swap) swap_bytes(io, len, es);
            if (s->t == VOXA_BOOL)
                for (int64_t i = 0; i < len; i++) io[i] = io[i] != 0;
            if (!direct)
                for (int64_t i = 0; i < len; i++) memcpy(mem + i * a->strides[fast], buf + i * (int64_t)es, es);
        }
        for (int d = (outer < fast ? outer : s->ndim) - 1; d >= 0; d--) {
            if (d == fast) continue;
            if (++idx[d] < a->shape[d]) break;
            idx[d] = 0;
        }
    }
    free(buf);
    return st;
}

voxa_status voxa__store_npy_read(voxa_store *s, const int64_t *lo, voxa_array *dst) {
    return runs(s, lo, dst, 0);
}

voxa_status voxa__store_npy_write(voxa_store *s, const int64_t *lo, const voxa_array *src) {
    VOXA_FAIL_IF(!s->created, VOXA_EINVAL, "store: '%s' was opened for reading", s->path);
    return runs(s, lo, (voxa_array *)src, 1);
}

voxa_status voxa__store_npy_commit(voxa_store *s) {
    VOXA_FAIL_IF(voxa_get_fsync() && fsync(s->fd) != 0, VOXA_EIO, "cannot flush '%s': %s", s->path, strerror(errno));
    VOXA_FAIL_IF(rename(s->tmp, s->path) != 0, VOXA_EIO, "cannot rename the output to '%s': %s",
                 s->path, strerror(errno));
    /* The rename itself is durable once the folder is flushed. */
    char dir[4096];
    const char *slash = strrchr(s->path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - s->path) + 1 : 1, slash ? s->path : ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0 && voxa_get_fsync()) {
        fsync(dfd);
        close(dfd);
    }
    return VOXA_OK;
}

void voxa__store_npy_close(voxa_store *s) {
    if (s->fd >= 0) close(s->fd);
    if (s->created && !s->committed && s->tmp[0]) unlink(s->tmp);
}
