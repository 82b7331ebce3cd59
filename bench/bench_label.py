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
shape, fewer repeats, for a smoke test).

Before/after a change (issue 14's frontier masks, cc3d beside them):
  python bench/bench_label.py --before OLD_voxa.so [--rounds=11] [--threads=1,2]
      [--masks=w1,random,blobs] [--conn=1,2,3] [--cpu]
times a copy of the extension built before the change against the current
one and cc3d.connected_components, interleaved in this process (common.py's
interleave) on bench_frontier.py's masks (W1 balls (20,1024,1024), 50 %
random and blobs (400,401,401)); both builds' labels are checked equal.
Prints per mask/connectivity/thread count the medians (min-max) and the
per-round ratios before/after and cc3d/after. --cpu: one thread only, timed
as the calling thread's CPU time (time.thread_time), which a loaded machine
inflates far less than wall time (voxa with 1 thread and cc3d both run in
the calling thread). Each build is called as its voxa.label calls it: output
np.zeros with the `zeroed` hint (only labels written) where the build takes
the hint, else np.empty (builds before the hint, e.g. f60bebf); --no-zeroed:
both into np.empty, all voxels written."""
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


def _arg(name, default):
    for a in sys.argv[1:]:
        if a.startswith(f"--{name}="):
            return a.split("=", 1)[1]
    return default


def before_after(old_path):
    """Interleaved rounds: old build, new build (each at every thread count)
    and cc3d (one thread; it has none)."""
    import statistics

    import cc3d
    from common import blob_mask as frontier_blobs
    from common import interleave, load_other_ext, loadavg, ratio_stats
    old = load_other_ext(old_path)
    # does each build take the `zeroed` hint (added after f60bebf)?
    zeroed_ok = {True: True, False: True}
    try:
        old.run_op("label", np.ones((2, 2), bool), np.zeros((2, 2), np.int32), structure=None,
                   connectivity=1, zeroed=True)
    except Exception:
        zeroed_ok[False] = False
    rounds = int(_arg("rounds", "11"))
    cpu = "--cpu" in sys.argv
    threads = [1] if cpu else [int(t) for t in _arg("threads", "1,2").split(",")]
    if cpu:
        def interleave(calls, rounds, warmup=1):  # noqa: F811 (thread CPU time)
            import time
            for _, fn in calls:
                fn()
            times = {name: [] for name, _ in calls}
            for r in range(rounds):
                for name, fn in (calls if r % 2 == 0 else calls[::-1]):
                    t0 = time.thread_time()
                    fn()
                    times[name].append(time.thread_time() - t0)
            return times
    conns = [int(c) for c in _arg("conn", "1,2,3").split(",")]
    kinds = _arg("masks", "w1,random,blobs").split(",")
    big = (400, 401, 401)
    what = "thread CPU time" if cpu else "wall time"
    print(f"## voxa.label before/after, {rounds} interleaved rounds, {what}\n\n{machine()}\n")
    print("| mask | conn | threads | before | after | before/after per round | cc3d | "
          "cc3d/after per round | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in kinds:
        if kind == "w1":
            m = w1_mask((20, 1024, 1024))
        elif kind == "random":
            m = random_mask(big)
        else:
            m = frontier_blobs(big)

        def run(mod, t, c):
            # as voxa.label calls each build: into np.zeros with the `zeroed`
            # hint (labels only) where the build has it, else into np.empty
            z = zeroed_ok[mod is voxa._voxa] and "--no-zeroed" not in sys.argv
            def f():
                mod.set_threads(t)
                if z:
                    out = np.zeros(m.shape, np.int32)
                    return mod.run_op("label", m, out, structure=None, connectivity=c,
                                      zeroed=True), out
                out = np.empty(m.shape, np.int32)
                return mod.run_op("label", m, out, structure=None, connectivity=c), out
            return f
        for c in conns:
            n1, a = run(voxa._voxa, 1, c)()
            n0, b = run(old, 1, c)()
            assert n0 == n1 and np.array_equal(a, b), (kind, c)
            del a, b
            cc = {1: 6, 2: 18, 3: 26}[c]
            calls = [("cc3d", lambda: cc3d.connected_components(m, connectivity=cc))]
            for t in threads:
                calls += [(f"before {t}", run(old, t, c)), (f"after {t}", run(voxa._voxa, t, c))]
            load0 = loadavg()
            ts = interleave(calls, rounds)
            med = {k: statistics.median(v) for k, v in ts.items()}
            for t in threads:
                ba = ratio_stats(ts[f"before {t}"], ts[f"after {t}"])
                ca = ratio_stats(ts["cc3d"], ts[f"after {t}"])
                print(f"| {kind} | {cc} | {t} | {med[f'before {t}'] * 1e3:.1f} ms | "
                      f"{med[f'after {t}'] * 1e3:.1f} ms | {ba[0]:.2f}x ({ba[1]:.2f}-{ba[2]:.2f}) | "
                      f"{med['cc3d'] * 1e3:.1f} ms | {ca[0]:.2f}x ({ca[1]:.2f}-{ca[2]:.2f}) | "
                      f"{load0.split()[0]} / {loadavg().split()[0]} |", flush=True)
        del m
    voxa.set_threads(0)


if __name__ == "__main__":
    if "--before" in sys.argv:
        before_after(sys.argv[sys.argv.index("--before") + 1])
    else:
        main()
