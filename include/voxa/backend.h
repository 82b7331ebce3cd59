/* voxa backends: where an op runs (cpu, opencl, cuda, auto).
 *
 * The CPU is the reference and the default. The GPU runtimes are loaded at
 * run time (dlopen of libOpenCL.so.1 / libcuda.so.1), so libvoxa, the CLI and
 * the Python module load and run on the CPU on a machine without them; a
 * backend that cannot run only matters when it is asked for, and then the
 * error says why (not built, no ICD loader / driver, no device).
 *
 * The GPU entry points below (voxa_<op>_on) take the backend explicitly and
 * write into the same caller-provided views as the CPU functions; every GPU
 * result equals the CPU result voxel for voxel. */
#ifndef VOXA_BACKEND_H
#define VOXA_BACKEND_H

#include "core.h"
#include "balls.h"
#include "edt.h"
#include "label.h"
#include "morph.h"
#include "roi.h"
#include "deconv.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum voxa_backend {
    VOXA_BACKEND_CPU = 0,
    VOXA_BACKEND_OPENCL = 1,
    VOXA_BACKEND_CUDA = 2,
    VOXA_BACKEND_AUTO = 3, /* the first usable GPU backend (cuda, then opencl), else cpu */
    VOXA_NBACKENDS
} voxa_backend;

/** "cpu", "opencl", "cuda", "auto"; "invalid" otherwise. */
VOXA_API const char *voxa_backend_name(voxa_backend b);
/** Parse a backend name; EINVAL naming the word otherwise. */
VOXA_API voxa_status voxa_backend_from_name(const char *name, voxa_backend *out);

#define VOXA_MAX_DEVICES 8

typedef struct voxa_device_info {
    char name[128];
    int64_t memory;    /* global memory in bytes */
    int64_t max_alloc; /* largest single buffer in bytes */
} voxa_device_info;

typedef struct voxa_backend_info {
    voxa_backend backend;
    int available;   /* non-zero: ops can run there (device 0 is used) */
    char why[256];   /* when not available: why (not built, no runtime, no device) */
    char runtime[128]; /* platform / driver version when the runtime loaded */
    int ndevices;
    voxa_device_info devices[VOXA_MAX_DEVICES];
} voxa_backend_info;

/** Probe backend `b` (cpu, opencl or cuda): loads its runtime on first use.
 *  Never fails for a missing runtime: *info says available = 0 and why.
 *  EINVAL for auto or an invalid value. */
VOXA_API voxa_status voxa_backend_query(voxa_backend b, voxa_backend_info *info);

/** Resolve `b` to a concrete backend that can run now: cpu always can;
 *  opencl/cuda fail with EUNSUPPORTED and the reason when unavailable;
 *  auto gives cuda, else opencl, else cpu. */
VOXA_API voxa_status voxa_backend_resolve(voxa_backend b, voxa_backend *out);

/** Process-wide default backend for callers that take one (the CLI, the
 *  Python layer). Before any call it is VOXA_BACKEND from the environment
 *  (a name; unset means cpu). voxa_backend_select checks the name only;
 *  availability is checked when an op runs. */
VOXA_API voxa_status voxa_backend_select(voxa_backend b);
VOXA_API voxa_backend voxa_backend_selected(void);

/** Device time for benchmarks. With VOXA_GPU_TIMING=1 in the environment
 *  when a GPU backend's context opens, every launch waits for its kernel
 *  and the seconds spent copying to the device, running kernels and copying
 *  back are summed: seconds[0..2] receive them (all 0 for cpu or when
 *  timing is off); reset != 0 sets the sums back to 0. */
VOXA_API voxa_status voxa_backend_timing(voxa_backend b, double seconds[3], int reset);

/* ---- ops on a backend ------------------------------------------------------
 * Same arguments, checks, results and errors as the CPU functions named; `b`
 * may be any backend (cpu calls the CPU function). GPU limits: balls and
 * label take 1-D to 3-D arrays (EUNSUPPORTED beyond), paste runs the
 * OVERWRITE op only, and one device buffer must fit the device's largest
 * allocation (EUNSUPPORTED naming the size otherwise; tiling through the
 * chunk executor is the plan). Device memory: docs/gpu.md. */

/** voxa_balls on backend b. */
VOXA_API voxa_status voxa_balls_on(voxa_backend b, const voxa_balls_params *p,
                                   voxa_array *out);
/** voxa_label on backend b. */
VOXA_API voxa_status voxa_label_on(voxa_backend b, const voxa_array *in,
                                   const unsigned char *structure, int connectivity,
                                   voxa_array *out, int64_t *nlabels);
/** voxa_edt on backend b (GPU: float64 distances with the CPU's rounding,
 *  equal bit for bit). */
VOXA_API voxa_status voxa_edt_on(voxa_backend b, const voxa_array *in, voxa_array *out,
                                 const voxa_edt_params *p);
/** voxa_morph on backend b (GPU: ball, diamond and box elements, iterations
 *  >= 1; EUNSUPPORTED otherwise). */
VOXA_API voxa_status voxa_morph_on(voxa_backend b, voxa_morph_op op, const voxa_array *in,
                                   voxa_array *out, const voxa_morph_params *p);
/** voxa_roi_extract on backend b. */
VOXA_API voxa_status voxa_roi_extract_on(voxa_backend b, const voxa_array *in,
                                         const voxa_roi_params *p, voxa_array *out);
/** voxa_roi_paste on backend b (GPU: op OVERWRITE only). */
VOXA_API voxa_status voxa_roi_paste_on(voxa_backend b, voxa_array *volume,
                                       const voxa_array *patches, const voxa_roi_params *p,
                                       voxa_paste_op op);
/* Richardson-Lucy (opencl: VkFFT, cuda: cuFFT; the iteration stays on the
 * device). Unlike the ops above, equal to the CPU to float32 round-off of the
 * FFTs (docs/gpu.md), not voxel for voxel. */
VOXA_API voxa_status voxa_deconv_rl_on(voxa_backend b, const voxa_array *in,
                                       const voxa_array *psf, voxa_array *out,
                                       voxa_rl_boundary boundary, const voxa_rl_options *opt);
VOXA_API voxa_status voxa_rl_plan_execute_on(voxa_backend b, voxa_rl_plan *plan,
                                             const voxa_array *in, voxa_array *out,
                                             const voxa_rl_options *opt);

#ifdef __cplusplus
}
#endif
#endif
