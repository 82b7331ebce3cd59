"""voxa.label vs scipy.ndimage.label, side by side in this process.

Masks (all (20, 1024, 1024) bool, built with NumPy):
  W1     500 balls of radius 5 around uniform random float points (seed 0),
         painted in their bounding boxes with the exact W1 inequality
         (double precision): ~0.1 % foreground, a few hundred components;
  random 50 % independent random voxels (seed 1): the worst case for a
         run-based labeller (about voxels/4 runs);
  blobs  ~40 % foreground: smoothed noise (Gaussian, sigma 2) thresholded at
         its 60th percentile (seed 2).
Connectivity 1 and 3 (6- and 26-neighbours); voxa with 1 and 2 threads.
Every voxa result is checked equal to scipy's (labels and count).

Run alone: python bench/bench_label.py [--quick]  (--quick: one smaller
shape, fewer repeats, for a smoke test)."""
import os
import sys

import numpy as np
import scipy.ndimage as ndi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import fmt_bytes, machine, measure, paint_bbox, table, w1_points  # noqa: E402

import voxa  # noqa: E402


def w1_mask(shape, n=500, r=5.0, seed=0):
    return paint_bbox(shape, w1_points(shape, n, seed), r)


def random_mask(shape, p=0.5, seed=1):
    return np.random.default_rng(seed).random(shape, dtype=np.float32) < p


def blob_mask(shape, frac=0.4, seed=2):
    f = ndi.gaussian_filter(np.random.default_rng(seed).random(shape, dtype=np.float32), 2)
    return f > np.quantile(f, 1 - frac)


def added(m):
    return m["added_bytes"]


def main():
    quick = "--quick" in sys.argv
    shape = (8, 256, 256) if quick else (20, 1024, 1024)
    repeats = 2 if quick else 5
    masks = {"W1 balls": w1_mask(shape), "random 50%": random_mask(shape),
             "blobs 40%": blob_mask(shape)}
    out = [f"## voxa.label vs scipy.ndimage.label, shape {shape}", "",
           f"machine: {machine()}", ""]
    summary = ["| mask | conn | components | scipy | voxa 1 thread | voxa 2 threads |",
               "|---|---|---|---|---|---|"]
    for name, mask in masks.items():
        for c in (1, 3):
            s = ndi.generate_binary_structure(3, c)
            sp = measure(lambda: ndi.label(mask, s), repeats=repeats)
            want, wn = sp["result"]
            rows = [("scipy.ndimage.label", sp, "")]
            vx = {}
            for t in (1, 2):
                voxa.set_threads(t)
                m = measure(lambda: voxa.label(mask, connectivity=c), repeats=repeats)
                got, gn = m["result"]
                assert gn == wn and np.array_equal(got, want), (name, c, t)
                vx[t] = m
                rows.append((f"voxa {t} thread{'s' if t > 1 else ''}", m,
                             f"added {fmt_bytes(added(m))}"))
            rows[0] = ("scipy.ndimage.label", sp, f"added {fmt_bytes(added(sp))}")
            voxa.set_threads(0)
            fg = mask.mean() * 100
            out.append(table(f"{name} ({fg:.2f} % foreground), connectivity {c}: "
                             f"{wn} components", rows, "voxa 1 thread"))
            summary.append(f"| {name} | {c} | {wn} | {sp['median'] * 1e3:.1f} ms | "
                           f"{vx[1]['median'] * 1e3:.1f} ms ({sp['median'] / vx[1]['median']:.1f}x) | "
                           f"{vx[2]['median'] * 1e3:.1f} ms ({sp['median'] / vx[2]['median']:.1f}x) |")
            del want, got, sp, vx, rows, m
    out.append("### summary (median; in brackets: scipy time / voxa time)\n")
    out.extend(summary)
    print("\n".join(out))


if __name__ == "__main__":
    main()
