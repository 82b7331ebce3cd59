"""Richardson-Lucy on the GPU backends vs the CPU (issue 11, RL part).

Time per iteration = (t(k2 iterations) - t(k1)) / (k2 - k1) on one plan, so
the host plan, the uploads and the read-back are excluded; median of
--repeats, interleaved cpu / gpu rounds. Also the max relative difference of
each GPU result to the CPU's after k2 iterations. Calls libvoxa through
ctypes (voxa_rl_plan_execute_on) because the Python module's backend=
routing is not in this branch. On PoCL (a CPU OpenCL) the times only show
that the path runs: correctness is what counts there; tools/gpu-check.sh is
the run for an NVIDIA GPU.

Default shape (32,128,128), PSF 9^3 (fits `make bench` on a small machine);
--full: (128,512,512), PSF 32^3 (the issue's)."""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from common import machine  # noqa: E402

F32 = 9
MODES = {"free": 0, "periodic": 1, "zero": 2}
BACKENDS = {"cpu": 0, "opencl": 1, "cuda": 2}


class Array(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * 8), ("strides", ctypes.c_int64 * 8),
                ("owner", ctypes.c_void_p)]


class Options(ctypes.Structure):
    _fields_ = [("iterations", ctypes.c_int), ("accelerate", ctypes.c_int),
                ("clip", ctypes.c_int), ("filter_epsilon", ctypes.c_double),
                ("fn", ctypes.c_void_p), ("user", ctypes.c_void_p)]


def load():
    root = os.path.dirname(here)
    lib = ctypes.CDLL(os.path.join(root, os.environ.get("VOXA_BUILD", "build"), "libvoxa.so"))
    lib.voxa_last_error.restype = ctypes.c_char_p
    return lib


def view(lib, a):
    v = Array()
    shape = (ctypes.c_int64 * 8)(*a.shape)
    st = lib.voxa_array_view(ctypes.byref(v), ctypes.c_void_p(a.ctypes.data), F32, a.ndim, shape)
    assert st == 0, lib.voxa_last_error()
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--backends", default="opencl,cuda")
    ap.add_argument("--quick", action="store_true")
    args, _ = ap.parse_known_args()
    lib = load()
    shape, m = ((128, 512, 512), 32) if args.full else ((32, 128, 128), 9)
    rng = np.random.default_rng(1)
    img = (0.2 + 0.1 * rng.random(shape) + 5 * (rng.random(shape) < 0.01)).astype(np.float32)
    z = np.arange(m) - m // 2
    g = np.exp(-(z[:, None, None] ** 2 / 8 + z[None, :, None] ** 2 / 4.5 +
                 z[None, None, :] ** 2 / 4.5) / (m / 32) ** 2)
    psf = (g / g.sum()).astype(np.float32)
    vi, vp = view(lib, img), view(lib, psf)
    gpus = []
    for name in args.backends.split(","):
        r = ctypes.c_int()
        if lib.voxa_backend_resolve(BACKENDS[name], ctypes.byref(r)) == 0:
            gpus.append(name)
        else:
            print(f"{name}: {lib.voxa_last_error().decode()}")
    k1, k2 = 2, 6
    print(f"\n#### RL per iteration, {shape} float32, PSF {m}^3, "
          f"(t({k2} it) - t({k1} it)) / {k2 - k1}, median of {args.repeats}\n")
    print(f"machine: {machine()}\n")
    print("| mode | backend | ms per iteration | min-max | max rel diff to cpu |")
    print("|---|---|---|---|---|")
    for mode in ("periodic", "free"):
        plan = ctypes.c_void_p()
        shp = (ctypes.c_int64 * 3)(*shape)
        assert lib.voxa_rl_plan_new(ctypes.byref(plan), 3, shp, ctypes.byref(vp),
                                    MODES[mode], 0) == 0, lib.voxa_last_error()
        outs = {b: np.zeros(shape, np.float32) for b in ["cpu"] + gpus}
        views = {b: view(lib, o) for b, o in outs.items()}

        def run(b, k):
            o = Options()
            lib.voxa_rl_options_init(ctypes.byref(o))
            o.iterations = k
            t0 = time.perf_counter()
            st = lib.voxa_rl_plan_execute_on(BACKENDS[b], plan, ctypes.byref(vi),
                                             ctypes.byref(views[b]), ctypes.byref(o))
            assert st == 0, lib.voxa_last_error()
            return time.perf_counter() - t0

        per = {b: [] for b in outs}
        for b in outs:
            run(b, 1)  # warm-up: kernels, device FFT plan
        for _ in range(args.repeats):
            for b in outs:
                per[b].append((run(b, k2) - run(b, k1)) / (k2 - k1))
        ref = outs["cpu"]
        for b in outs:
            t = per[b]
            d = "ref" if b == "cpu" else \
                f"{float(np.abs(outs[b] - ref).max() / np.abs(ref).max()):.1e}"
            print(f"| {mode} | {b} | {1e3 * statistics.median(t):.1f} | "
                  f"{1e3 * min(t):.1f}-{1e3 * max(t):.1f} | {d} |")
        lib.voxa_rl_plan_free(plan)


if __name__ == "__main__":
    main()
