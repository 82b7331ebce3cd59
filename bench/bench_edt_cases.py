"""EDT across mask kinds (issue 14): is voxa's margin over edt.edt robust, and
do the windowed column passes (src/core/sqdt_window.c) cost anything where
distances are long? float32 output, unit spacing, (200, 201, 201):

  blobs    the W4 blob mask (common.blob_mask, 40 % foreground, distances <= ~30)
  noise    50 % random foreground (distances of a voxel or two)
  balls    a few balls of radius 60-90 (distances up to ~90; the window's
           budget is a mean number of steps per row, so it still pays here)
  sparse   5 background voxels (distances up to ~200: the worst case; the
           window gives up and backs off to the envelope)
  walls    an empty box with three background walls, one per axis (long
           straight distances, up to ~160)
  shells   hollow spheres of radius 40-95, 3 voxels thick, in an empty box
           (far voxels both inside and outside)

Peers in the same process, interleaved (common.interleave, the order reversed
every other round): edt.edt parallel=1 and 2, voxa 1 and 2 threads; with
--before=OLD_voxa.so also that build of the extension (before/after ratios);
with --envelope also this build with the window off (VOXA_SQDT_KERNEL=envelope:
is the window's choice ever slower than the envelope alone?).
Reports median, min-max and the median (min-max) of per-round ratios.

Run: python bench/bench_edt_cases.py [--rounds=N] [--before=OLD.so] [--envelope] [--quick]
[MASK ...] (MASK: only these rows).
(make bench runs it without --before; --quick: (60, 61, 61), 3 rounds)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (blob_mask, edt_timer, fmt_time, interleave, load_other_ext, loadavg,  # noqa: E402
                    machine, ratio_stats)

import edt  # noqa: E402
import voxa  # noqa: E402

QUICK = "--quick" in sys.argv
ENVELOPE = "--envelope" in sys.argv
ROUNDS = 3 if QUICK else 11
BEFORE = None
for a in sys.argv[1:]:
    if a.startswith("--rounds="):
        ROUNDS = int(a.split("=", 1)[1])
    if a.startswith("--before="):
        BEFORE = a.split("=", 1)[1]
SHAPE = (60, 61, 61) if QUICK else (200, 201, 201)


def masks(shape):
    rng = np.random.default_rng(5)
    out = {"blobs": blob_mask(shape), "noise": rng.random(shape) < 0.5}
    g = np.indices(shape, dtype=np.int32)
    m = np.zeros(shape, bool)
    for _ in range(4):
        c = [rng.integers(0, s) for s in shape]
        r = rng.uniform(0.3, 0.45) * min(shape)
        m |= sum((gi - ci) ** 2 for gi, ci in zip(g, c)) <= r * r
    out["balls"] = m
    s = np.ones(shape, bool)
    for _ in range(5):
        s[tuple(rng.integers(0, n) for n in shape)] = False
    out["sparse"] = s
    w = np.ones(shape, bool)
    w[shape[0] * 3 // 16] = False
    w[:, shape[1] * 3 // 4] = False
    w[:, :, shape[2] // 10] = False
    out["walls"] = w
    sh = np.ones(shape, bool)
    for _ in range(3):
        c = [rng.integers(s // 4, 3 * s // 4) for s in shape]
        r = rng.uniform(0.2, 0.47) * min(shape)
        d = np.sqrt(sum((gi - ci).astype(np.float32) ** 2 for gi, ci in zip(g, c)))
        sh &= np.abs(d - r) > 1.5
    out["shells"] = sh
    return out


def main():
    old = load_other_ext(BEFORE) if BEFORE else None

    def vx(m, t, ext=None):
        return edt_timer(m, t, ext)

    def env(m, t):
        f = edt_timer(m, t)

        def run():
            prev = os.environ.get("VOXA_SQDT_KERNEL")
            os.environ["VOXA_SQDT_KERNEL"] = "envelope"  # read per call
            try:
                return f()
            finally:
                if prev is None:
                    del os.environ["VOXA_SQDT_KERNEL"]
                else:
                    os.environ["VOXA_SQDT_KERNEL"] = prev
        return run

    print(f"## EDT across mask kinds: voxa vs edt.edt\n\nmachine: {machine()}; edt "
          f"{edt.__version__ if hasattr(edt, '__version__') else ''}; shape {SHAPE}, float32; "
          f"{ROUNDS} interleaved rounds\n")
    only = [a for a in sys.argv[1:] if not a.startswith("--")]
    for name, m in masks(SHAPE).items():
        if only and name not in only:
            continue
        ref = edt.edt(m, parallel=1)
        got = vx(m, 2)()
        assert np.array_equal(ref.astype(np.float32), got), f"{name}: voxa differs from edt"
        if old is not None:
            assert np.array_equal(vx(m, 2, old)(), got)
        del ref, got
        calls = [("edt 1", lambda: edt.edt(m, parallel=1)), ("edt 2", lambda: edt.edt(m, parallel=2)),
                 ("voxa 1", vx(m, 1)), ("voxa 2", vx(m, 2))]
        if old is not None:
            calls += [("before 1", vx(m, 1, old)), ("before 2", vx(m, 2, old))]
        if ENVELOPE:
            assert np.array_equal(env(m, 2)(), vx(m, 2)())
            calls += [("envelope 1", env(m, 1)), ("envelope 2", env(m, 2))]
        load0 = loadavg()
        ts = interleave(calls, ROUNDS)
        print(f"### {name} ({100 * m.mean():.1f} % foreground; load {load0} / {loadavg()})\n")
        print("| method | median | min-max |\n|---|---|---|")
        for k, v in ts.items():
            print(f"| {k} | {fmt_time(float(np.median(v)))} | {fmt_time(min(v))}-{fmt_time(max(v))} |")
        pairs = [("edt 1", "voxa 1"), ("edt 2", "voxa 2")]
        if old is not None:
            pairs += [("before 1", "voxa 1"), ("before 2", "voxa 2")]
        if ENVELOPE:
            pairs += [("envelope 1", "voxa 1"), ("envelope 2", "voxa 2")]
        print("\n| ratio (per round) | median (min-max) |\n|---|---|")
        for a, b in pairs:
            r, lo, hi = ratio_stats(ts[a], ts[b])
            print(f"| {a} / {b} | {r:.2f}x ({lo:.2f}-{hi:.2f}) |")
        print()
        sys.stdout.flush()
    voxa.set_threads(0)


if __name__ == "__main__":
    main()
