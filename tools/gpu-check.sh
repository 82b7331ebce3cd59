#!/usr/bin/env bash
# The one prepared check for a machine with an NVIDIA GPU (docs/gpu.md).
#
#   bash tools/gpu-check.sh            # < 5 minutes on one H200
#
# 1. builds the GPU subset of libvoxa (core, backends, balls, label, roi,
#    distance, morph)
#    with gcc and nvcc alone - no libtiff/FFTW needed on a bare machine;
# 2. runs the GPU parity test (tests/c/test_backend.c) on cuda and on
#    opencl (OpenCL on the NVIDIA driver), each op against the CPU backend;
# 3. where `make build` made the Python extension (or a packed library is given, below),
#    runs tests/python/test_gpu_ops.py,
#    test_gpu_tiles.py (label/EDT by tiles) and test_gpu_device.py on cuda; with CuPy
#    (installed from .gpu-wheels/ or the index when missing) the device-array test checks
#    parity with the CPU and that no byte goes to the device (voxa_gpu_transfers);
# 4. runs the GPU benchmarks of issue 11 (C: W1 balls and label, W3 ROIs, W4 opening and
#    EDT; RL iteration and the scaled W2 job; Python: W1 label on CuPy arrays vs
#    cupyx.scipy.ndimage.label), each with its own table, and ends with ONE summary
#    table of the issue's targets: time per call (median), the device split (to device,
#    kernels, from device; VOXA_GPU_TIMING=1), equality with the CPU, the target.
#    What cannot run (no CUDA driver, no nvcc, no CuPy, no FFTW) is reported and skipped.
#
# OpenCL needs an ICD loader (libOpenCL.so.1) and, to build, CL/cl.h. Where
# the machine lacks them, carry the Debian packages in .gpu-debs/ (ignored
# by git; on the dev machine: mkdir .gpu-debs && cd .gpu-debs && apt-get
# download ocl-icd-libopencl1 opencl-c-headers) and they are unpacked into
# a private prefix. The NVIDIA ICD is registered from libnvidia-opencl.so.1
# when no file in /etc/OpenCL/vendors names it (an image may list PoCL
# alone; voxa then still takes the GPU: the first GPU of any platform). A
# backend that cannot run is reported with its reason and the rest goes on.
#
# A GPU machine without `make build` (no Debian -dev packages, another Python): pack
# the library where `make build` ran, carry the folder, and name it there:
#   bash tools/gpu-check.sh --pack .gpu-pack     # here: libvoxa.a, the CLI, their .so's
#   PACK=.gpu-pack bash tools/gpu-check.sh       # there: builds the extension for python3
#
# Env: SCALE=0.1 shrinks the benchmark volumes (for a CPU-only dry run with
# PoCL); BACKENDS="cuda opencl" chooses what is tested; BUILD=dir (default
# build-gpu) keeps the builds and logs; W2_FULL=1 adds the W2 job at its own
# size on cuda (16 GB image; W2_FULL_TIMEOUT seconds, default 240).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--pack" ]; then
    # libvoxa.a, the CLI and the shared libraries they need beyond the C/C++ runtime
    dir=${2:?usage: gpu-check.sh --pack DIR}
    [ -f "$ROOT/build/libvoxa.a" ] && [ -x "$ROOT/build/voxa" ] || { echo "--pack: run make build first"; exit 1; }
    mkdir -p "$dir/lib" && cp "$ROOT/build/libvoxa.a" "$ROOT/build/voxa" "$dir/" || exit 1
    ldd "$ROOT/build/voxa" | awk '$3 ~ /^\// {print $3}' |
        grep -vE '/(libc|libm|libgomp|libstdc\+\+|libgcc_s|libdl|libpthread)\.so' |
        xargs -I{} cp -L {} "$dir/lib/" || exit 1
    ls "$dir" "$dir/lib"
    exit 0
fi
B=${BUILD:-$ROOT/build-gpu}
BACKENDS=${BACKENDS:-"cuda opencl"}
SCALE=${SCALE:-1}
mkdir -p "$B"
cd "$ROOT"
log() { printf '== %s\n' "$*"; }

log "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null ||
    echo "nvidia-smi: none"
nproc; date -u

# ---- OpenCL prerequisites (optional) --------------------------------------------
PREFIX=$B/prefix
CFLAGS_CL=""
if [ -d .gpu-debs ] && ls .gpu-debs/*.deb >/dev/null 2>&1; then
    for f in .gpu-debs/*.deb; do dpkg -x "$f" "$PREFIX"; done
    export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
for inc in /usr/include "$PREFIX/usr/include" /usr/local/cuda/include; do
    if [ -f "$inc/CL/cl.h" ]; then CFLAGS_CL="-DVOXA_HAVE_OPENCL_HEADERS -I$inc"; break; fi
done
[ -z "$CFLAGS_CL" ] && echo "opencl: CL/cl.h not found: the opencl backend is not built"
# after the carried ICD loader: CUDA's folder has a libOpenCL.so.1 of its own
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64"
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd && [ -z "${OCL_ICD_VENDORS:-}" ]; then
    lib=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1/{print $NF; exit}')
    [ -z "$lib" ] && lib=$(ls /usr/local/nvidia/lib64/libnvidia-opencl.so.1 2>/dev/null)
    if [ -n "$lib" ]; then
        mkdir -p "$B/vendors" && cp /etc/OpenCL/vendors/*.icd "$B/vendors/" 2>/dev/null
        echo "$lib" > "$B/vendors/nvidia.icd"
        export OCL_ICD_VENDORS="$B/vendors"
    fi
fi

# ---- build ------------------------------------------------------------------------
log "build"
KERNELS=$(ls src/core/*.cl src/ops/*/*.cl | sort)
FATBIN=""
if command -v nvcc >/dev/null; then
    { echo '#include "vx_portable.h"'; for f in $KERNELS; do echo "#include \"$ROOT/$f\""; done; } \
        > "$B/voxa_kernels.cu"
    nvcc -fatbin -O3 --fmad=false -Isrc/backend \
        -gencode arch=compute_75,code=sm_75 -gencode arch=compute_90,code=sm_90 \
        -gencode arch=compute_75,code=compute_75 -o "$B/voxa_kernels.fatbin" "$B/voxa_kernels.cu" &&
        FATBIN=$B/voxa_kernels.fatbin
else
    echo "nvcc not found: the cuda backend is not built"
fi
SOURCES=$(echo src/backend/vx_portable.h $KERNELS | tr ' ' '|')
cmake -DOUT="$B/voxa_kernels.c" -DSOURCES="$SOURCES" -DFATBIN="$FATBIN" \
    -P src/backend/embed.cmake || exit 1
CC=${CC:-gcc}
FLAGS="-O3 -std=c11 -fopenmp -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc/core -Isrc -Itests/c"
LIBSRC="src/core/*.c src/backend/*.c src/ops/balls/*.c src/ops/label/*.c src/ops/roi/*.c
        src/ops/distance/*.c src/ops/morph/*.c"
# shellcheck disable=SC2086
$CC $FLAGS $CFLAGS_CL -o "$B/test_backend" tests/c/test_backend.c $LIBSRC "$B/voxa_kernels.c" \
    -lm -ldl -lpthread || exit 1
sed -n "/^: <<'BENCH'\$/,/^BENCH\$/p" "$0" | sed '1d;$d' > "$B/gpu_bench.c"
# shellcheck disable=SC2086
$CC $FLAGS $CFLAGS_CL -o "$B/gpu_bench" "$B/gpu_bench.c" $LIBSRC "$B/voxa_kernels.c" \
    -lm -ldl -lpthread || exit 1

# ---- parity ------------------------------------------------------------------------
log "backends"
"$B/gpu_bench" --list | tee "$B/backends.txt"
rc=0
# only the backends that can run here: the others are reported as skipped, not failed
KEEP=""
for b in $BACKENDS; do
    if grep -q "^$b *unavailable:" "$B/backends.txt"; then
        echo "$b: skipped ($(grep "^$b " "$B/backends.txt" | sed 's/^[a-z]* *unavailable: *//'))"
    else
        KEEP="$KEEP $b"
    fi
done
BACKENDS=${KEEP# }
[ -z "$BACKENDS" ] && echo "no GPU backend can run here: parity and GPU benchmarks skipped"
for b in $BACKENDS; do
    log "parity: $b vs cpu"
    VOXA_TEST_BACKENDS=$b timeout 240 "$B/test_backend" > "$B/parity_$b.log" 2>&1
    st=$?
    tail -8 "$B/parity_$b.log"
    [ $st -eq 0 ] || { echo "parity $b: FAILED (exit $st; log: $B/parity_$b.log)"; rc=1; }
done

# ---- Python (backend=, CuPy): the .venv of `make build`, or python3 and PACK ---------
PY=""
CLI=$ROOT/build/voxa
if [ -x .venv/bin/python ] && ls python/voxa/_voxa*.so >/dev/null 2>&1; then
    PY=.venv/bin/python
elif [ -n "${PACK:-}" ] && [ -f "$PACK/libvoxa.a" ] && command -v python3 >/dev/null; then
    # the machine's python3 with an extension built here against the packed library;
    # of the packed .so's, only those the machine lacks go on the library path
    log "python extension for $(python3 -V) from $PACK"
    mkdir -p "$B/packlib"
    for f in "$PACK"/lib/*; do
        n=$(basename "$f")
        ldconfig -p | awk -v n="$n" '$1 == n {f = 1} END {exit !f}' || ln -sf "$(realpath "$f")" "$B/packlib/$n"
    done
    export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$B/packlib"
    pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    pysuf=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
    if [ -f "$pyinc/Python.h" ] &&
       $CC -O2 -fPIC -shared -fopenmp -Iinclude -Ipython/ext -I"$pyinc" -o "python/voxa/_voxa$pysuf" \
           python/ext/*.c "$PACK/libvoxa.a" "$PACK"/lib/* -lm -ldl -lpthread; then
        PY=python3
        CLI=$(realpath "$PACK/voxa")
    else
        echo "python: could not build the extension for python3 (Python.h: $pyinc)"
    fi
fi
if [ -n "$PY" ] && [[ " $BACKENDS " == *" cuda "* ]] && ! "$PY" -c "import cupy" 2>/dev/null; then
    # CuPy for the device-array checks and the cupyx comparison, only where cuda runs
    # (a dry run must not add it to the dev .venv: test_gpu_device's fake-pointer test
    # needs it absent): from wheels carried in .gpu-wheels/ (the GPU machine may have
    # no network), else from the index if reachable
    if ls .gpu-wheels/*.whl >/dev/null 2>&1; then
        timeout 120 "$PY" -m pip install -q --no-index --find-links .gpu-wheels cupy-cuda12x ||
            echo "cupy: install from .gpu-wheels failed"
    else
        timeout 120 "$PY" -m pip install -q cupy-cuda12x >/dev/null 2>&1 ||
            echo "cupy: not installed (no .gpu-wheels/ and no index reachable)"
    fi
fi
if [ -n "$PY" ] && [[ " $BACKENDS " == *" cuda "* ]]; then
    log "python on cuda: backend=, tiles, device arrays (CuPy: parity, no host copy)"
    VOXA_TEST_BACKENDS=cuda PYTHONPATH=$ROOT/python VOXA_CLI=$CLI timeout 200 \
        "$PY" -m pytest -q -rfEs -p no:napari tests/python/test_gpu_ops.py \
        tests/python/test_gpu_tiles.py tests/python/test_gpu_device.py > "$B/python_cuda.log" 2>&1
    st=$?
    grep -E "^(FAILED|ERROR|SKIPPED) |^E  |passed|failed" "$B/python_cuda.log" | tail -30
    [ $st -eq 0 ] || { echo "python on cuda: FAILED (exit $st; log: $B/python_cuda.log)"; rc=1; }
elif [ -n "$PY" ]; then
    echo "python: cuda not in BACKENDS: the cuda/CuPy tests are skipped"
else
    echo "python: no .venv with the extension (make build): backend=/CuPy tests not run"
fi

# ---- benchmarks ----------------------------------------------------------------------
log "benchmarks (SCALE=$SCALE)"
export VOXA_SUMMARY="$B/summary.txt"   # one line per measured target, for the table at the end
: > "$VOXA_SUMMARY"
VOXA_GPU_TIMING=1 timeout 200 "$B/gpu_bench" --scale "$SCALE" $BACKENDS || rc=1
if [ -n "$PY" ] && [[ " $BACKENDS " == *" cuda "* ]] && "$PY" -c "import cupy, cupyx" 2>/dev/null; then
    log "W1 label on device arrays: voxa vs cupyx.scipy.ndimage.label"
    PYTHONPATH=$ROOT/python timeout 120 "$PY" bench/bench_gpu.py --cupy --scale "$SCALE" || rc=1
else
    echo "cupyx comparison: skipped (needs cuda in BACKENDS, .venv and CuPy)"
    echo "W1 label vs cupyx|cuda|skipped: no CuPy|||" >> "$VOXA_SUMMARY"
fi
# ---- Richardson-Lucy (issue 11, part RL) ---------------------------------------------
# Needs FFTW single and double precision (the host plan: PSF transform,
# border weights; the double path links in) and, for opencl, VkFFT's header:
# from the system or from .gpu-debs (apt-get download libfftw3-dev
# libfftw3-single3 libfftw3-double3 libvkfft-dev). cuFFT is
# dlopen'ed from /usr/local/cuda/lib64 (LD_LIBRARY_PATH above).
log "Richardson-Lucy"
RL_INC=""
for inc in /usr/include "$PREFIX/usr/include"; do
    [ -f "$inc/fftw3.h" ] && RL_INC="$RL_INC -I$inc"
done
[ -f "$PREFIX/usr/include/vkFFT.h" ] && RL_INC="$RL_INC -I$PREFIX/usr/include"
RL_LIBDIR="-L$PREFIX/usr/lib/x86_64-linux-gnu"
# every deconv source but the op descriptor (op_*.c needs the registry)
RLSRC=$(ls src/core/*.c src/backend/*.c src/ops/deconv/deconv_*.c src/ops/deconv/psf.c src/io/atomic.c)
if [ -z "$RL_INC" ]; then
    echo "RL: skipped (fftw3.h not found: put libfftw3-dev, libfftw3-single3 and libfftw3-double3 in .gpu-debs)"
else
    sed -n "/^: <<'RLBENCH'\$/,/^RLBENCH\$/p" "$0" | sed '1d;$d' > "$B/rl_bench.c"
    # psf.c's file reader needs the io layer; these programs never read files
    printf '#include "voxa.h"\nvoxa_status voxa_read(const char *p, voxa_array *o) { return VOXA_EUNSUPPORTED; }\n' \
        > "$B/rl_stub.c"
    mkdir -p "$B/rlobj"
    # one object per source, compiled in parallel (VkFFT's header alone is ~30 s of -O3)
    export CC FLAGS CFLAGS_CL RL_INC B
    # shellcheck disable=SC2016
    printf '%s\n' $RLSRC "$B/voxa_kernels.c" "$B/rl_stub.c" | xargs -P "$(nproc)" -I{} sh -c \
        '$CC $FLAGS $CFLAGS_CL $RL_INC -c "{}" -o "$B/rlobj/$(echo "{}" | tr / _).o"'
    xst=$?
    RLLIBS="$RL_LIBDIR -lfftw3f_omp -lfftw3f -lfftw3_omp -lfftw3 -lm -ldl -lpthread"
    # shellcheck disable=SC2086
    if [ $xst -eq 0 ] &&
       $CC $FLAGS $CFLAGS_CL $RL_INC -o "$B/test_deconv_gpu" tests/c/test_deconv_gpu.c \
           "$B"/rlobj/*.o $RLLIBS &&
       $CC $FLAGS $CFLAGS_CL $RL_INC -o "$B/rl_bench" "$B/rl_bench.c" "$B"/rlobj/*.o $RLLIBS; then
        for b in $BACKENDS; do
            log "RL parity: $b vs cpu (tests/c/test_deconv_gpu.c)"
            VOXA_TEST_BACKENDS=$b timeout 120 "$B/test_deconv_gpu" > "$B/rl_parity_$b.log" 2>&1
            st=$?
            grep -E "max rel|FAIL|checks" "$B/rl_parity_$b.log" | tail -14
            [ $st -eq 0 ] || { echo "RL parity $b: FAILED (exit $st)"; rc=1; }
        done
        log "RL benchmarks (SCALE=$SCALE)"
        timeout 150 "$B/rl_bench" --scale "$SCALE" $BACKENDS || rc=1
        log "RL transfers split (VOXA_GPU_TIMING=1: each launch waits, so kernels ms is an upper bound)"
        VOXA_GPU_TIMING=1 timeout 60 "$B/rl_bench" --split --scale "$SCALE" $BACKENDS || rc=1
        if [ "${W2_FULL:-0}" = 1 ] && [[ " $BACKENDS " == *" cuda "* ]]; then
            log "W2 whole job at its size on cuda (W2_FULL=1; ~64 GB host, ~104 GB device memory)"
            timeout "${W2_FULL_TIMEOUT:-240}" "$B/rl_bench" --full cuda || rc=1
        fi
    else
        echo "RL: build failed"; rc=1
    fi
fi
log "summary: issue 11 targets (one H200; SCALE=$SCALE; ms unless stated; transfers separate)"
printf '| workload | backend | measured | to device | kernels | from device | equal to cpu | target |\n'
printf '|---|---|---|---|---|---|---|---|\n'
awk -F'|' '{
    t = "";
    if ($1 ~ /cupyx/) t = ">= 5x cupyx";
    else if ($1 ~ /^W1 label/) t = "<= 2 ms";
    else if ($1 ~ /^W3/) t = "<= 2 ms on the device";
    else if ($1 ~ /^W4 opening/) t = "<= 50 ms";
    else if ($1 ~ /^RL iteration/) t = "<= 2 ms";
    else if ($1 ~ /^W2/) t = "<= 30 s";
    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, t
}' "$B/summary.txt" 2>/dev/null
[ -s "$B/summary.txt" ] || echo "(no benchmark ran)"
exit $rc

: <<'BENCH'
// The GPU benchmarks of issue 11 (extracted and compiled by gpu-check.sh).
#include "voxa.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static unsigned long long rs = 88172645463325252ull;
static double urand(void) {
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}

typedef voxa_status (*job_fn)(voxa_backend b, void *ctx);
typedef struct { int ok; double med, spread, dev[3]; } result;

static result timed(job_fn f, void *ctx, voxa_backend b, int reps) {
    result r = {0};
    double t[32], d[3];
    if (f(b, ctx) != VOXA_OK) { /* warm-up: builds kernels, opens the context */
        fprintf(stderr, "  %s: %s\n", voxa_backend_name(b), voxa_last_error());
        return r;
    }
    voxa_backend_timing(b, d, 1);
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        if (f(b, ctx) != VOXA_OK) return r;
        t[i] = now() - t0;
    }
    voxa_backend_timing(b, d, 1);
    qsort(t, (size_t)reps, sizeof *t, cmpd);
    r.ok = 1;
    r.med = t[reps / 2];
    r.spread = t[reps - 1] - t[0];
    for (int i = 0; i < 3; i++) r.dev[i] = d[i] / reps;
    return r;
}

static void row(const char *w, voxa_backend b, result r, int equal) {
    const char *sp = getenv("VOXA_SUMMARY");
    FILE *sf = sp && *sp ? fopen(sp, "a") : NULL;
    if (sf) {
        if (r.ok) fprintf(sf, "%s|%s|%.3f|%.3f|%.3f|%.3f|%s\n", w, voxa_backend_name(b), 1e3 * r.med,
                          1e3 * r.dev[0], 1e3 * r.dev[1], 1e3 * r.dev[2],
                          b == VOXA_BACKEND_CPU ? "ref" : equal ? "yes" : "NO");
        else fprintf(sf, "%s|%s|failed||||\n", w, voxa_backend_name(b));
        fclose(sf);
    }
    if (!r.ok) { printf("| %s | %s | failed | | | | |\n", w, voxa_backend_name(b)); return; }
    printf("| %s | %s | %.2f (+-%.2f) | %.2f | %.2f | %.2f | %s |\n", w, voxa_backend_name(b),
           1e3 * r.med, 1e3 * r.spread / 2, 1e3 * r.dev[0], 1e3 * r.dev[1], 1e3 * r.dev[2],
           b == VOXA_BACKEND_CPU ? "ref" : equal ? "yes" : "NO");
}

typedef struct { voxa_balls_params p; voxa_array out; } balls_job;
static voxa_status run_balls(voxa_backend b, void *c) {
    balls_job *j = c;
    return voxa_balls_on(b, &j->p, &j->out);
}
typedef struct { voxa_array in, out; int64_t n; } label_job;
static voxa_status run_label(voxa_backend b, void *c) {
    label_job *j = c;
    return voxa_label_on(b, &j->in, NULL, 1, &j->out, &j->n);
}
typedef struct { voxa_array in, out; voxa_morph_params p; } morph_job;
static voxa_status run_open(voxa_backend b, void *c) {
    morph_job *j = c;
    return voxa_morph_on(b, VOXA_MORPH_OPEN, &j->in, &j->out, &j->p);
}
static voxa_status run_edt(voxa_backend b, void *c) {
    morph_job *j = c;
    return voxa_edt_on(b, &j->in, &j->out, NULL);
}
typedef struct { voxa_array in, out; voxa_roi_params p; } roi_job;
static voxa_status run_roi(voxa_backend b, void *c) {
    roi_job *j = c;
    return voxa_roi_extract_on(b, &j->in, &j->p, &j->out);
}

int main(int argc, char **argv) {
    double scale = 1;
    voxa_backend bs[3] = {VOXA_BACKEND_CPU};
    int nb = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list")) {
            for (int b = 0; b < 3; b++) {
                voxa_backend_info info;
                voxa_backend_query((voxa_backend)b, &info);
                printf("%-7s %s %s\n", voxa_backend_name((voxa_backend)b),
                       info.available ? info.devices[0].name : "unavailable:",
                       info.available ? "" : info.why);
            }
            return 0;
        }
        if (!strcmp(argv[i], "--scale") && i + 1 < argc) { scale = atof(argv[++i]); continue; }
        voxa_backend b;
        if (voxa_backend_from_name(argv[i], &b) == VOXA_OK && nb < 3) {
            voxa_backend r;
            if (voxa_backend_resolve(b, &r) != VOXA_OK) { printf("%s\n", voxa_last_error()); continue; }
            bs[nb++] = b;
        }
    }
    int reps = 7;
    printf("\n| workload | backend | ms per call, median of %d (+-half range) | to device ms | kernels ms | from device ms | equal to cpu |\n|---|---|---|---|---|---|---|\n", reps);
    /* W1: balls (20, 1024, 1024), 500 random points, r = 5; then label */
    int64_t ny = (int64_t)(1024 * (scale < 1 ? scale : 1)); if (ny < 64) ny = 64;
    int64_t sh[3] = {20, ny, ny};
    double *pts = malloc(500 * 3 * sizeof *pts);
    for (int k = 0; k < 500; k++) {
        pts[3 * k] = urand() * 20; pts[3 * k + 1] = urand() * (double)ny; pts[3 * k + 2] = urand() * (double)ny;
    }
    balls_job bj[3];
    label_job lj[3];
    char w1[128], w1l[128];
    snprintf(w1, sizeof w1, "W1 balls (20,%lld,%lld) 500 pts r=5", (long long)ny, (long long)ny);
    snprintf(w1l, sizeof w1l, "W1 label of that mask, conn 1");
    for (int i = 0; i < nb; i++) {
        bj[i].p = (voxa_balls_params){.points = pts, .npoints = 500, .radius = 5};
        voxa_array_new(&bj[i].out, VOXA_U8, 3, sh);
        result r = timed(run_balls, &bj[i], bs[i], reps);
        row(w1, bs[i], r, r.ok && !memcmp(bj[i].out.data, bj[0].out.data, (size_t)(20 * ny * ny)));
    }
    for (int i = 0; i < nb; i++) {
        lj[i].in = bj[0].out;
        voxa_array_new(&lj[i].out, VOXA_I32, 3, sh);
        result r = timed(run_label, &lj[i], bs[i], reps);
        row(w1l, bs[i], r, r.ok && lj[i].n == lj[0].n &&
            !memcmp(lj[i].out.data, lj[0].out.data, (size_t)(20 * ny * ny) * 4));
    }
    /* W3: 100,000 ROIs of 64x64 from (8192, 8192) uint8 */
    int64_t side = (int64_t)(8192 * (scale < 1 ? scale : 1)), nroi = (int64_t)(100000 * (scale < 1 ? scale : 1));
    if (side < 128) side = 128;
    if (nroi < 100) nroi = 100;
    int64_t ish[2] = {side, side}, size[2] = {64, 64}, osh[3] = {nroi, 64, 64};
    int64_t *coords = malloc((size_t)nroi * 2 * sizeof *coords);
    for (int64_t k = 0; k < 2 * nroi; k++) coords[k] = (int64_t)(urand() * (double)(side - 64));
    roi_job rj[3];
    char w3[128];
    snprintf(w3, sizeof w3, "W3 %lld ROIs 64x64 from (%lld,%lld) u8", (long long)nroi, (long long)side, (long long)side);
    voxa_array img;
    voxa_array_new(&img, VOXA_U8, 2, ish);
    for (int64_t k = 0; k < side * side; k++) ((unsigned char *)img.data)[k] = (unsigned char)(k * 2654435761u >> 24);
    for (int i = 0; i < nb; i++) {
        rj[i].in = img;
        rj[i].p = (voxa_roi_params){.coords = coords, .n = nroi, .k = 2, .size = size};
        voxa_array_new(&rj[i].out, VOXA_U8, 3, osh);
        result r = timed(run_roi, &rj[i], bs[i], reps);
        row(w3, bs[i], r, r.ok && !memcmp(rj[i].out.data, rj[0].out.data, (size_t)(nroi * 4096)));
        if (i) voxa_array_free(&rj[i].out);
    }
    /* W4: opening of (400, 401, 401) with a radius-21 ball; EDT of the same mask */
    int64_t nz = (int64_t)(400 * (scale < 1 ? scale : 1)); if (nz < 48) nz = 48;
    int64_t wsh[3] = {nz, nz + 1, nz + 1}, wn = nz * (nz + 1) * (nz + 1);
    voxa_array blobs;
    voxa_array_new(&blobs, VOXA_U8, 3, wsh);
    for (int64_t k = 0; k < wn; k++) ((unsigned char *)blobs.data)[k] = 0;
    voxa_balls_params bp = {.points = pts, .npoints = 200, .radius = (double)nz / 10};
    for (int k = 0; k < 200; k++) {
        pts[3 * k] = urand() * (double)nz; pts[3 * k + 1] = urand() * (double)nz; pts[3 * k + 2] = urand() * (double)nz;
    }
    voxa_balls(&bp, &blobs);
    morph_job mj[3];
    char w4[128], w4e[128];
    double R = 21 * (scale < 1 ? scale : 1) < 3 ? 3 : 21 * (scale < 1 ? scale : 1);
    snprintf(w4, sizeof w4, "W4 opening (%lld,%lld,%lld) ball R=%g", (long long)nz, (long long)nz + 1, (long long)nz + 1, R);
    snprintf(w4e, sizeof w4e, "EDT float64 of that mask");
    for (int i = 0; i < nb; i++) {
        mj[i].in = blobs;
        mj[i].p = (voxa_morph_params){.se = {.kind = VOXA_SE_BALL, .radius = R}, .iterations = 1};
        voxa_array_new(&mj[i].out, VOXA_BOOL, 3, wsh);
        result r = timed(run_open, &mj[i], bs[i], 3);
        row(w4, bs[i], r, r.ok && !memcmp(mj[i].out.data, mj[0].out.data, (size_t)wn));
    }
    for (int i = 0; i < nb; i++) {
        if (i) voxa_array_free(&mj[i].out);
        voxa_array_new(&mj[i].out, VOXA_F64, 3, wsh);
        result r = timed(run_edt, &mj[i], bs[i], 3);
        row(w4e, bs[i], r, r.ok && !memcmp(mj[i].out.data, mj[0].out.data, (size_t)wn * 8));
    }
    printf("| RL iteration (128,512,512), PSF 32^3 | gpu | see the RL tables below | | | | |\n");
    printf("\nGPU times include the copies; with VOXA_GPU_TIMING=1 each launch waits for its kernel.\n");
    return 0;
}
BENCH

: <<'RLBENCH'
// Richardson-Lucy benchmarks of issue 11 (extracted and compiled by gpu-check.sh).
// 1. time per iteration, (128,512,512) float32, Gaussian PSF 32^3, periodic
//    and free: (t(25 it) - t(5 it)) / 20 on one plan, median of 3, so set-up
//    and transfers are excluded; cpu: (t(4) - t(2)) / 2;
// 2. scaled W2 whole job: (128,1024,1024), PSF 32^3, free, 100 iterations,
//    wall time of voxa_deconv_rl_on (host plan + transfers + iterations)
//    after a 1-iteration warm-up that makes the device FFT plan,
//    extrapolated to (950,2048,2048) x 100 by FFT-box voxels.
// --split: one run of 1. with VOXA_GPU_TIMING=1, device time split.
// --full: the W2 job at its own size (W2_FULL=1 in gpu-check.sh; see full_job).
#include "voxa.h"
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdarg.h>
/* One line for gpu-check.sh's summary table (VOXA_SUMMARY). */
static void summary(const char *fmt, ...) {
    const char *sp = getenv("VOXA_SUMMARY");
    FILE *f = sp && *sp ? fopen(sp, "a") : NULL;
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static unsigned long long rs = 88172645463325252ull;
static double urand(void) {
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) / 9007199254740992.0;
}
static void scene(voxa_array *a) {
    float *v = a->data;
    int64_t n = voxa_array_size(a);
    for (int64_t i = 0; i < n; i++) v[i] = (float)(0.2 + 0.1 * urand() + (urand() < 0.01 ? 5 : 0));
}
static int64_t sc(int64_t n, double s, int64_t lo) {
    int64_t m = (int64_t)llround((double)n * (s < 1 ? s : 1));
    return m < lo ? lo : m;
}
static double run(voxa_backend b, voxa_rl_plan *p, voxa_array *in, voxa_array *out, int it) {
    voxa_rl_options o;
    voxa_rl_options_init(&o);
    o.iterations = it;
    double t0 = now();
    if (voxa_rl_plan_execute_on(b, p, in, out, &o) != VOXA_OK) {
        printf("  %s: %s\n", voxa_backend_name(b), voxa_last_error());
        return NAN;
    }
    return now() - t0;
}
static double reldiff(const voxa_array *a, const voxa_array *b) {
    const float *x = a->data, *y = b->data;
    double m = 0, d = 0;
    for (int64_t i = 0; i < voxa_array_size(a); i++) {
        if (fabs(x[i]) > m) m = fabs(x[i]);
        if (!(fabs(x[i] - y[i]) <= d)) d = fabs(x[i] - y[i]);
    }
    return d / m;
}

/* The W2 write-up's whole job at its size: (950,2048,2048) float32 (16 GB),
 * Gaussian PSF 32^3, free, 100 iterations, once per GPU backend with no
 * warm-up (the device FFT plan is part of it); the host plan (estimate) and
 * the execution (copies + 100 iterations + the FFT plan) timed apart.
 * Needs ~64 GB of host memory and ~104 GB of device memory plus the FFT
 * library's work space. */
static int full_job(const voxa_backend *bs, int nb) {
    int64_t sh[3] = {950, 2048, 2048}, ps[3] = {32, 32, 32};
    double sg[3] = {2.0, 1.5, 1.5};
    voxa_array img, psf, out;
    if (voxa_array_new(&img, VOXA_F32, 3, sh) || voxa_array_new(&out, VOXA_F32, 3, sh) ||
        voxa_array_new(&psf, VOXA_F32, 3, ps)) {
        printf("full job: %s\n", voxa_last_error());
        return 1;
    }
    float *v = img.data;
    int64_t n = voxa_array_size(&img);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) { /* background 0.2-0.3, 1 % bright voxels */
        uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        v[i] = (float)(0.2 + 0.1 * (double)(h & 0xffff) / 65536.0 + ((h >> 20) % 100 == 0 ? 5 : 0));
    }
    voxa_psf_gaussian(&psf, sg);
    printf("\n| W2 whole job (950,2048,2048) f32, psf 32^3, free, 100 it | backend | host plan s | copies + FFT plan + 100 it s | total s |\n|---|---|---|---|---|\n");
    for (int i = 1; i < nb; i++) {
        voxa_rl_plan *p = NULL;
        voxa_rl_options o;
        voxa_rl_options_init(&o);
        o.iterations = 100;
        double t0 = now();
        voxa_status s = voxa_rl_plan_new(&p, 3, sh, &psf, VOXA_RL_FREE, VOXA_RL_ESTIMATE);
        double t1 = now();
        if (s == VOXA_OK) s = voxa_rl_plan_execute_on(bs[i], p, &img, &out, &o);
        double t2 = now();
        if (s != VOXA_OK) {
            printf("| | %s | failed after %.1f s: %s | | |\n", voxa_backend_name(bs[i]), t2 - t0,
                   voxa_last_error());
            summary("W2 whole job (950,2048,2048) 100 it|%s|failed: %s||||", voxa_backend_name(bs[i]),
                    voxa_last_error());
        } else {
            printf("| | %s | %.1f | %.1f | %.1f |\n", voxa_backend_name(bs[i]), t1 - t0, t2 - t1, t2 - t0);
            summary("W2 whole job (950,2048,2048) 100 it, measured|%s|%.1f s (host plan %.1f s)|||incl.|"
                    "rel. 1e-4 (RL parity test)", voxa_backend_name(bs[i]), t2 - t0, t1 - t0);
        }
        voxa_rl_plan_free(p);
    }
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* rows survive a timeout */
    double scale = 1;
    int split = 0, whole = 0;
    voxa_backend bs[3] = {VOXA_BACKEND_CPU};
    int nb = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--scale") && i + 1 < argc) { scale = atof(argv[++i]); continue; }
        if (!strcmp(argv[i], "--split")) { split = 1; continue; }
        if (!strcmp(argv[i], "--full")) { whole = 1; continue; }
        voxa_backend b, r;
        if (voxa_backend_from_name(argv[i], &b) == VOXA_OK && nb < 3) {
            if (voxa_backend_resolve(b, &r) != VOXA_OK) { printf("%s\n", voxa_last_error()); continue; }
            bs[nb++] = b;
        }
    }
    if (whole) return full_job(bs, nb);
    int64_t m = sc(32, scale, 3);
    int64_t sh[3] = {sc(128, scale, 8), sc(512, scale, 16), sc(512, scale, 16)}, ps[3] = {m, m, m};
    double sg[3] = {2.0 * (double)m / 32, 1.5 * (double)m / 32, 1.5 * (double)m / 32};
    voxa_array img, psf, ref, out;
    voxa_array_new(&img, VOXA_F32, 3, sh);
    voxa_array_new(&psf, VOXA_F32, 3, ps);
    voxa_array_new(&ref, VOXA_F32, 3, sh);
    voxa_array_new(&out, VOXA_F32, 3, sh);
    scene(&img);
    voxa_psf_gaussian(&psf, sg);
    if (split) {
        printf("\n| RL (%lld,%lld,%lld) psf %lld^3, 25 it | backend | to device ms | kernels+FFTs ms | from device ms |\n|---|---|---|---|---|\n",
               (long long)sh[0], (long long)sh[1], (long long)sh[2], (long long)m);
        for (int i = 1; i < nb; i++) {
            voxa_rl_plan *p = NULL;
            double d[3];
            voxa_rl_plan_new(&p, 3, sh, &psf, VOXA_RL_PERIODIC, 0);
            run(bs[i], p, &img, &out, 2); /* warm-up: kernels, FFT plan */
            voxa_backend_timing(bs[i], d, 1);
            run(bs[i], p, &img, &out, 25);
            voxa_backend_timing(bs[i], d, 1);
            printf("| periodic | %s | %.2f | %.2f | %.2f |\n", voxa_backend_name(bs[i]), 1e3 * d[0], 1e3 * d[1], 1e3 * d[2]);
            voxa_rl_plan_free(p);
        }
        return 0;
    }
    printf("\n| RL per iteration, (%lld,%lld,%lld) f32, psf %lld^3 | backend | ms per iteration (median of 3, +-half range) | equal to cpu (4 it, max rel diff) |\n|---|---|---|---|\n",
           (long long)sh[0], (long long)sh[1], (long long)sh[2], (long long)m);
    for (int mode = 1; mode >= 0; mode--) {
        voxa_rl_plan *p = NULL;
        if (voxa_rl_plan_new(&p, 3, sh, &psf, (voxa_rl_boundary)mode, 0) != VOXA_OK) {
            printf("plan: %s\n", voxa_last_error());
            return 1;
        }
        for (int i = 0; i < nb; i++) {
            int cpu = bs[i] == VOXA_BACKEND_CPU, k1 = cpu ? 2 : 5, k2 = cpu ? 4 : 25;
            double t[3];
            run(bs[i], p, &img, &out, 2); /* warm-up */
            for (int r = 0; r < 3; r++) t[r] = (run(bs[i], p, &img, &out, k2) - run(bs[i], p, &img, &out, k1)) / (k2 - k1);
            qsort(t, 3, sizeof *t, cmpd);
            run(bs[i], p, &img, cpu ? &ref : &out, 4);
            char eq[32] = "ref";
            if (!cpu) snprintf(eq, sizeof eq, "%.1e", reldiff(&ref, &out));
            printf("| %s | %s | %.3f (+-%.3f) | %s |\n", voxa_rl_boundary_name((voxa_rl_boundary)mode),
                   voxa_backend_name(bs[i]), 1e3 * t[1], 1e3 * (t[2] - t[0]) / 2, eq);
            summary("RL iteration (%lld,%lld,%lld) psf %lld^3 %s|%s|%.3f||||%s", (long long)sh[0],
                    (long long)sh[1], (long long)sh[2], (long long)m,
                    voxa_rl_boundary_name((voxa_rl_boundary)mode), voxa_backend_name(bs[i]), 1e3 * t[1], eq);
        }
        voxa_rl_plan_free(p);
    }
    /* scaled W2 whole job */
    int64_t wsh[3] = {sc(128, scale, 8), sc(1024, scale, 16), sc(1024, scale, 16)};
    voxa_array wimg, wout;
    voxa_array_new(&wimg, VOXA_F32, 3, wsh);
    voxa_array_new(&wout, VOXA_F32, 3, wsh);
    scene(&wimg);
    printf("\n| scaled W2 whole job: (%lld,%lld,%lld) f32, psf %lld^3, free, 100 it | backend | seconds (host plan + copies + 100 it) | extrapolated to (950,2048,2048) x 100 |\n|---|---|---|---|\n",
           (long long)wsh[0], (long long)wsh[1], (long long)wsh[2], (long long)m);
    /* FFT box voxels: fast sizes of n + m - 1 (as deconv_plan.c) */
    double bw = 1, bf = 1;
    int64_t full[3] = {950, 2048, 2048};
    for (int d = 0; d < 3; d++) {
        int64_t a = wsh[d] + m - 1, c = full[d] + 32 - 1;
        for (;; a++) { int64_t r = a; int pr[4] = {2, 3, 5, 7}; for (int k = 0; k < 4; k++) while (r % pr[k] == 0) r /= pr[k]; if (r == 1) break; }
        for (;; c++) { int64_t r = c; int pr[4] = {2, 3, 5, 7}; for (int k = 0; k < 4; k++) while (r % pr[k] == 0) r /= pr[k]; if (r == 1) break; }
        bw *= (double)a;
        bf *= (double)c;
    }
    for (int i = 1; i < nb; i++) {
        voxa_rl_options o;
        voxa_rl_options_init(&o);
        o.iterations = 1; /* warm-up: the device FFT plan (VkFFT compiles per size), cached */
        if (voxa_deconv_rl_on(bs[i], &wimg, &psf, &wout, VOXA_RL_FREE, &o) != VOXA_OK) {
            printf("| | %s | failed: %s | |\n", voxa_backend_name(bs[i]), voxa_last_error());
            continue;
        }
        o.iterations = 100;
        double t0 = now();
        voxa_status s = voxa_deconv_rl_on(bs[i], &wimg, &psf, &wout, VOXA_RL_FREE, &o);
        double t = now() - t0;
        if (s != VOXA_OK) { printf("| | %s | failed: %s | |\n", voxa_backend_name(bs[i]), voxa_last_error()); continue; }
        printf("| box %.0f voxels (full job: %.0f, x%.1f) | %s | %.2f | %.0f s if linear in box voxels (needs ~%.0f GB of device memory: tile if larger than the device) |\n",
               bw, bf, bf / bw, voxa_backend_name(bs[i]), t, t * bf / bw, 4.0 * (5 * bf + 950.0 * 2048 * 2048) / 1e9);
        summary("W2 whole job 100 it, extrapolated x%.1f from a %.0f-voxel box|%s|%.1f s (measured %.2f s)|||incl.|%s",
                bf / bw, bw, voxa_backend_name(bs[i]), t * bf / bw, t, "rel. 1e-4 (RL parity test)");
    }
    return 0;
}
RLBENCH
