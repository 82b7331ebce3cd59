"""GPU backends through the op interface (backend=): each workload on the
CPU and on every usable GPU backend, interleaved round by round in one
process, median and min-max of the per-call times, and whether the GPU result
equals the CPU's byte for byte. On PoCL (make test's OpenCL, a CPU device)
only correctness counts; the times are reported next to the CPU's. The H200
figures come from tools/gpu-check.sh. --quick: smaller volumes."""
import statistics
import sys
import time

import numpy as np

import voxa

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
