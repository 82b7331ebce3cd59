/* voxa core: status codes, dtypes, array views, threads, progress.
 *
 * Every public function returns a voxa_status (0 = success, negative = a
 * stable error code) and, on failure, leaves a message naming the argument
 * and the wrong value in a thread-local buffer read by voxa_last_error().
 * The library never prints, exits or aborts. */
#ifndef VOXA_CORE_H
#define VOXA_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define VOXA_API __declspec(dllexport)
#else
#define VOXA_API __attribute__((visibility("default")))
#endif

#define VOXA_VERSION_MAJOR 0
#define VOXA_VERSION_MINOR 1
#define VOXA_VERSION_PATCH 0
#define VOXA_VERSION_STRING "0.1.0"

/** Run-time version, "MAJOR.MINOR.PATCH". */
VOXA_API const char *voxa_version(void);

/* ---- status ------------------------------------------------------------ */

/** Stable, numbered error codes. Never renumber. */
typedef enum voxa_status {
    VOXA_OK = 0,
    VOXA_EINVAL = -1,       /* an argument is wrong (message names it) */
    VOXA_ENOMEM = -2,       /* allocation failed */
    VOXA_EIO = -3,          /* a file could not be opened/read/written */
    VOXA_EFORMAT = -4,      /* a file's content is malformed */
    VOXA_EUNSUPPORTED = -5, /* valid request this build/format cannot do */
    VOXA_ECANCELLED = -6,   /* the progress callback asked to stop */
    VOXA_EOVERFLOW = -7,    /* a result does not fit the requested type */
    VOXA_EINTERNAL = -8     /* a bug: please report */
} voxa_status;

/** Message of the last failure on this thread ("" if none). Valid until the
 *  next voxa call on the same thread. */
VOXA_API const char *voxa_last_error(void);
/** Short fixed name of a status code, e.g. "EINVAL". */
VOXA_API const char *voxa_status_name(voxa_status s);
/** Clear this thread's message. */
VOXA_API void voxa_clear_error(void);

/* ---- dtypes ------------------------------------------------------------ */

typedef enum voxa_dtype {
    VOXA_BOOL = 0, /* 1 byte, 0 or 1 */
    VOXA_U8, VOXA_I8, VOXA_U16, VOXA_I16, VOXA_U32, VOXA_I32,
    VOXA_U64, VOXA_I64, VOXA_F32, VOXA_F64,
    VOXA_NDTYPES
} voxa_dtype;

/** Bytes per element; 0 for an invalid dtype. */
VOXA_API size_t voxa_dtype_size(voxa_dtype t);
/** NumPy-style name ("bool", "uint8", ..., "float64"); "invalid" otherwise. */
VOXA_API const char *voxa_dtype_name(voxa_dtype t);
/** Parse a name ("uint16", "u16", "int32", "i32", "float32", "f32", ...).
 *  Returns VOXA_EINVAL for an unknown name. */
VOXA_API voxa_status voxa_dtype_from_name(const char *name, voxa_dtype *out);
/** Non-zero for f32/f64. */
VOXA_API int voxa_dtype_is_float(voxa_dtype t);

/* ---- arrays ------------------------------------------------------------ */

#define VOXA_MAXDIM 8

/** A view of an N-d array: axes in NumPy order (slowest first), strides in
 *  bytes (may be negative or zero). A view never owns its data unless it was
 *  made by voxa_array_new (then `owner` is non-NULL and voxa_array_free
 *  releases it). */
typedef struct voxa_array {
    void *data;
    voxa_dtype dtype;
    int ndim;
    int64_t shape[VOXA_MAXDIM];
    int64_t strides[VOXA_MAXDIM];
    void *owner; /* allocation to free, or NULL for a borrowed view */
} voxa_array;

/** Fill *a as a C-contiguous view of caller memory. No allocation. */
VOXA_API voxa_status voxa_array_view(voxa_array *a, void *data, voxa_dtype t,
                                     int ndim, const int64_t *shape);
/** Allocate a zero-filled C-contiguous array. Release with voxa_array_free. */
VOXA_API voxa_status voxa_array_new(voxa_array *a, voxa_dtype t, int ndim,
                                    const int64_t *shape);
/** Free memory owned by *a (no-op for views and NULL); resets *a. */
VOXA_API void voxa_array_free(voxa_array *a);
/** Number of elements (product of the shape; 1 for ndim 0). */
VOXA_API int64_t voxa_array_size(const voxa_array *a);
/** Non-zero if the view is C-contiguous. */
VOXA_API int voxa_array_is_c_contiguous(const voxa_array *a);
/** Element at the multi-index `idx` (ndim entries, unchecked) as a double:
 *  exact for floats and for integers up to 2^53. For small arrays and
 *  scalars (tables, footprints, PSF checks), not for per-voxel loops. */
VOXA_API double voxa_array_get(const voxa_array *a, const int64_t *idx);
/** Check ndim/shape/dtype sanity; `name` labels the argument in messages. */
VOXA_API voxa_status voxa_array_check(const voxa_array *a, const char *name);

/* ---- threads ----------------------------------------------------------- */

/** Number of threads for later calls; n <= 0 restores the default
 *  (VOXA_NUM_THREADS, else OpenMP's default). Results never depend on it. */
VOXA_API void voxa_set_threads(int n);
VOXA_API int voxa_get_threads(void);

/** Whether files voxa publishes are flushed to disk (fsync of the file and
 *  its folder) before the rename: on by default, off when the environment
 *  has VOXA_NO_FSYNC=1 or after voxa_set_fsync(0) (scratch data). */
VOXA_API void voxa_set_fsync(int on);
VOXA_API int voxa_get_fsync(void);

/* ---- progress and cancellation ----------------------------------------- */

/** Called from the calling thread with work done so far out of `total`.
 *  Return non-zero to continue, 0 to cancel (the op returns
 *  VOXA_ECANCELLED and leaves its output unspecified). */
typedef int (*voxa_progress_fn)(int64_t done, int64_t total, void *user);

typedef struct voxa_progress {
    voxa_progress_fn fn; /* may be NULL */
    void *user;
} voxa_progress;

#ifdef __cplusplus
}
#endif
#endif
