"""GPU backends through the op interface (backend=): each workload on the
CPU and on every usable GPU backend, interleaved round by round in one
process, median and min-max of the per-call times, and whether the GPU result
equals the CPU's byte for byte. On PoCL (make test's OpenCL, a CPU device)
only correctness counts; the times are reported next to the CPU's. The H200
figures come from tools/gpu-check.sh. --quick: smaller volumes.

Then the global ops larger than the device (issue 11): label and EDT with
VOXA_GPU_TILE_BYTES forcing tiles, against one GPU run and the CPU.

--tiles: only the tiles table (11 rounds).

--cupy [--scale S]: only the W1 label on device arrays, voxa (backend="cuda",
CuPy in, CuPy out) against cupyx.scipy.ndimage.label, interleaved, 11
rounds (run by tools/gpu-check.sh where CuPy is installed; appends a line
to $VOXA_SUMMARY)."""
import os
import statistics
import sys
import time

import numpy as np

import voxa



def cupy_vs_cupyx():
    import cupy
    import cupyx.scipy.ndimage as cnd
    scale = float(sys.argv[sys.argv.index("--scale") + 1]) if "--scale" in sys.argv else 1.0
    ny = max(64, int(1024 * min(scale, 1.0)))
    r = np.random.default_rng(1)
    m = voxa.balls((20, ny, ny), r.random((500, 3)) * [20, ny, ny], 5.0)
    dm = cupy.asarray(m)
    runs = {"voxa": lambda: voxa.label(dm, backend="cuda"), "cupyx": lambda: cnd.label(dm)}
    out = {k: f() for k, f in runs.items()}  # warm-up
    cupy.cuda.Device().synchronize()
    times = {k: [] for k in runs}
    for _ in range(11):
        for k, f in runs.items():
            cupy.cuda.Device().synchronize()
            t = time.perf_counter()
            f()
            cupy.cuda.Device().synchronize()
            times[k].append(1e3 * (time.perf_counter() - t))
    equal = out["voxa"][1] == int(out["cupyx"][1]) and bool(
        (out["voxa"][0] == out["cupyx"][0]).all())
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"| W1 label (20,{ny},{ny}) on device arrays | ms median (min-max) |\n|---|---|")
    for k, v in times.items():
        print(f"| {k} | {med[k]:.3f} ({min(v):.3f}-{max(v):.3f}) |")
    print(f"voxa / cupyx: {med['cupyx'] / med['voxa']:.1f}x faster; equal labels: {equal}")
    path = os.environ.get("VOXA_SUMMARY")
    if path:
        with open(path, "a") as f:
            f.write(f"W1 label vs cupyx (20,{ny},{ny}), device arrays|cuda|"
                    f"{med['cupyx'] / med['voxa']:.1f}x (voxa {med['voxa']:.3f}, cupyx "
                    f"{med['cupyx']:.3f})|0|||{'yes' if equal else 'NO'}\n")


if "--cupy" in sys.argv:
    cupy_vs_cupyx()
    sys.exit(0)

quick = "--quick" in sys.argv
rng = np.random.default_rng(0)
s = 0.5 if quick else 1.0
n = int(160 * s)
blobs = voxa.balls((n, n + 1, n + 1), rng.random((60, 3)) * n, n / 10)
w1 = voxa.balls((20, int(512 * s), int(512 * s)), rng.random((500, 3)) * [20, 512 * s, 512 * s], 5.0)
pts = rng.random((500, 3)) * [20, 512 * s, 512 * s]
R = max(3, round(21 * n / 400))
cases = {
    f"label W1-like mask {w1.shape}": lambda b: voxa.label(w1, backend=b)[0],
    f"balls {w1.shape}, 500 points r=5": lambda b: voxa.balls(w1.shape, pts, 5.0, backend=b),
    f"distance_transform_edt {blobs.shape}": lambda b: voxa.distance_transform_edt(blobs, backend=b),
    f"binary_opening ball R={R} {blobs.shape}":
        lambda b: voxa.binary_opening(blobs, ball=R, backend=b),
    f"binary_closing box 7 {blobs.shape}": lambda b: voxa.binary_closing(blobs, box=7, backend=b),
}
gpus = []
for b in ("opencl", "cuda"):
    try:
        voxa.label(np.ones((2, 2), bool), backend=b)
        gpus.append(b)
    except TypeError as e:
        print(f"<!-- {b}: {e} -->")
backends = ["cpu"] + gpus
print("## GPU backends (backend=)\n")
print("| workload | backend | ms per call, median (min-max) | equal to cpu |\n|---|---|---|---|")
rounds = 3 if quick else 5
if "--tiles" in sys.argv:  # only the tiled label/EDT table below
    cases, rounds = {}, 11
for name, f in cases.items():
    ref = {b: f(b) for b in backends}  # warm-up: kernels built, contexts open
    times = {b: [] for b in backends}
    for _ in range(rounds):
        for b in backends:
            t = time.perf_counter()
            f(b)
            times[b].append(1e3 * (time.perf_counter() - t))
    for b in backends:
        same = "ref" if b == "cpu" else (
            "yes" if ref[b].dtype == ref["cpu"].dtype and
            np.array_equal(ref[b].view(np.uint8), ref["cpu"].view(np.uint8)) else "NO")
        t = times[b]
        print(f"| {name} | {b} | {statistics.median(t):.1f} ({min(t):.1f}-{max(t):.1f}) | {same} |")
print()

# ---- global ops larger than the device: tiles forced with VOXA_GPU_TILE_BYTES ----
if gpus:
    t = int(96 * s)
    m = rng.random((t, t + 1, t + 3)) < 0.5
    v = m.size
    limits = {"one run": None, "tiles of ~v/8": 24 * v // 8, "tiles of ~v/64": 24 * v // 64}
    print(f"## Label and EDT by tiles on the device {m.shape} (VOXA_GPU_TILE_BYTES)\n")
    print("| op | backend | device limit | ms per call, median (min-max) | equal to cpu |")
    print("|---|---|---|---|---|")
    ops = {"label": lambda b: voxa.label(m, backend=b)[0],
           "edt": lambda b: voxa.distance_transform_edt(m, backend=b)}
    for op, f in ops.items():
        ref = f("cpu")
        runs = [("cpu", None)] + [(b, lim) for b in gpus for lim in limits]
        times = {r: [] for r in runs}
        same = {}
        for r in range(rounds + 1):
            for b, lim in runs:
                if limits.get(lim):
                    os.environ["VOXA_GPU_TILE_BYTES"] = str(limits[lim])
                t0 = time.perf_counter()
                out = f(b)
                dt = 1e3 * (time.perf_counter() - t0)
                os.environ.pop("VOXA_GPU_TILE_BYTES", None)
                if r == 0:
                    same[(b, lim)] = "ref" if b == "cpu" else (
                        "yes" if np.array_equal(out.view(np.uint8), ref.view(np.uint8)) else "NO")
                else:
                    times[(b, lim)].append(dt)
        for (b, lim), tt in times.items():
            lab = "-" if b == "cpu" else lim if not limits[lim] else f"{lim} ({limits[lim]} B)"
            print(f"| {op} | {b} | {lab} | {statistics.median(tt):.1f} "
                  f"({min(tt):.1f}-{max(tt):.1f}) | {same[(b, lim)]} |")
    print()
