"""The op interface's cost: the same public calls on the build before the
generic call (pass --before DIR: a checkout whose python/ holds the old
extension, e.g. commit 2f0466d built in place) and on this one, in two child
processes run alternately, 7 rounds, median and min-max of the per-round time
ratios (this / before). Without --before it prints this build's times only."""
import json
import os
import statistics
import subprocess
import sys

CASES = r'''
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import voxa
rng = np.random.default_rng(0)
tiny = rng.random((8, 8)) < 0.5
vol = rng.random((64, 256, 256)) < 0.5
img = (rng.random((512, 512)) * 255).astype(np.uint8)
pts = rng.random((20000, 3)) * [20, 512, 512]
c = rng.integers(0, 512 - 16, (2000, 2))
psf = np.ones((5, 5, 5), np.float32) / 125
stack = rng.random((32, 128, 128)).astype(np.float32)
cases = {
    "label 8x8 (per-call cost)": lambda: voxa.label(tiny),
    "binary_dilation 8x8": lambda: voxa.binary_dilation(tiny),
    "label (64,256,256)": lambda: voxa.label(vol),
    "binary_opening ball 5 (64,256,256)": lambda: voxa.binary_opening(vol, voxa.ball(5)),
    "distance_transform_edt (64,256,256)": lambda: voxa.distance_transform_edt(vol),
    "balls 20k points (20,512,512)": lambda: voxa.balls((20, 512, 512), pts, 3.0),
    "extract_patches 2000 x 16x16": lambda: voxa.extract_patches(img, c, (16, 16)),
    "richardson_lucy (32,128,128) 5 it": lambda: voxa.richardson_lucy(stack, psf, 5),
}
out = {}
for name, f in cases.items():
    f()
    n = 200 if "8x8" in name else 3
    t = time.perf_counter()
    for _ in range(n):
        f()
    out[name] = (time.perf_counter() - t) / n
print(json.dumps(out))
'''


def run(pydir):
    r = subprocess.run([sys.executable, "-c", CASES, pydir], capture_output=True, text=True,
                       env=dict(os.environ, VOXA_NUM_THREADS="1"))
    if r.returncode:
        raise SystemExit(r.stderr)
    return json.loads(r.stdout)


here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python")
before = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
rounds = [(run(here), run(before) if before else None) for _ in range(7 if before else 1)]
print("## The op interface: public calls before and after the generic call (1 thread)\n")
if not before:
    for k, v in rounds[0][0].items():
        print(f"- {k}: {v * 1e3:.3f} ms")
    sys.exit(0)
print("| call | before | after | after / before, median (min-max) of 7 rounds |")
print("|---|---|---|---|")
for k in rounds[0][0]:
    a = statistics.median(r[0][k] for r in rounds)
    b = statistics.median(r[1][k] for r in rounds)
    ratios = [r[0][k] / r[1][k] for r in rounds]
    unit, f = ("µs", 1e6) if b < 1e-3 else ("ms", 1e3)
    print(f"| {k} | {b * f:.1f} {unit} | {a * f:.1f} {unit} | {statistics.median(ratios):.2f} "
          f"({min(ratios):.2f}-{max(ratios):.2f}) |")
