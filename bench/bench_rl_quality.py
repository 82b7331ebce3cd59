"""Time to quality (issue 14): plain vs accelerated Richardson-Lucy against the
known ground truth of a synthetic sample.

Sample: background 2 plus 300 Gaussian blobs (sigma 1.5 voxels, peak 1000)
and 200 bright points (500) in a (64, 256, 256) volume (--quick: (32, 96, 96)),
blurred with a Gaussian PSF (15, 15, 15), sigma (2.5, 1.5, 1.5) ('same'
convolution, zero outside), Poisson noise, seed 0. Boundary: free (the
default). Error: relative L2 to the truth, ||f - t|| / ||t||, on the image.

1. Quality (once): plain RL for 60 iterations, its progress callback
   copying the estimate after every iteration (voxa keeps a float32
   C-contiguous `out` as its estimate while iterating; the last copy is
   checked equal to the returned result and one intermediate copy to a
   separate run of that many iterations); accelerated RL (accelerate=True:
   Biggs-Andrews' alpha with a geometric step, docs/deconv.md) one run per
   iteration count k = 1, 2, ... up to 30 and on until it reaches plain's
   50-iteration error (between its iterations `out` holds the next
   extrapolated start, not an estimate). "best accelerated" is over those k.
2. K = the first accelerated iteration whose error is <= plain's after 50.
3. Timing: >= 11 interleaved rounds (order reversed every other round) of
   plain 50 iterations and accelerated K iterations, iterations timed from
   the progress stamps (set-up excluded; it is the same for both); per round
   the ratio accelerated / plain; median and min-max. Target <= 40 %.
4. Memory: the added peak RSS of one plain and one accelerated call (three
   iterations each, so that every acceleration buffer has been written;
   output allocated inside), in image sizes.

Run: python bench/bench_rl_quality.py [--quick] [--rounds=N] [--threads=T]"""
import os
import statistics
import sys
import time

import numpy as np
import scipy.ndimage
import scipy.signal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import interleave, loadavg, machine, measure, ratio_stats  # noqa: E402

import voxa  # noqa: E402

QUICK = "--quick" in sys.argv
ROUNDS = 5 if QUICK else 11
THREADS = 2
for _a in sys.argv[1:]:
    if _a.startswith("--rounds="):
        ROUNDS = int(_a.split("=", 1)[1])
    if _a.startswith("--threads="):
        THREADS = int(_a.split("=", 1)[1])
PLAIN_N = 50
MAX_IT = 60


def sample(shape, seed=0):
    rng = np.random.default_rng(seed)
    truth = np.zeros(shape)
    np.add.at(truth, tuple(rng.integers(0, s, 300) for s in shape), 1.0)
    truth = scipy.ndimage.gaussian_filter(truth, 1.5)
    truth *= 1000 / truth.max()
    truth[tuple(rng.integers(0, s, 200) for s in shape)] += 500
    truth += 2
    psf = voxa.gaussian_psf((15, 15, 15), (2.5, 1.5, 1.5), dtype=np.float64)
    blurred = scipy.signal.fftconvolve(truth, psf, "same")
    noisy = rng.poisson(np.maximum(blurred, 0)).astype(np.float32)
    return truth, noisy, psf.astype(np.float32)


def curve_plain(g, psf, truth):
    """Plain RL's errors after iterations 0..MAX_IT (0: the input), from one
    run: its progress callback reads `out`, which voxa keeps as its estimate
    while iterating (float32, C-contiguous)."""
    nrm = np.linalg.norm(truth)
    out = np.empty(g.shape, np.float32)
    errs, snaps = [], {}

    def cb(done, total):
        errs.append(float(np.linalg.norm((g if done == 0 else out) - truth) / nrm))
        if done == 10:
            snaps[10] = out.copy()
        return True
    res = voxa.richardson_lucy(g, psf, MAX_IT, out=out, progress=cb)
    assert errs[-1] == float(np.linalg.norm(res - truth) / nrm)
    check = voxa.richardson_lucy(g, psf, 10)
    assert np.array_equal(check, snaps[10]), "progress snapshot differs from a 10-iteration run"
    return errs


def curve_accelerated(g, psf, truth, e_target, at_least):
    """Accelerated RL's errors after k iterations, one run per k (between
    iterations `out` holds the next one's extrapolated start, not an
    estimate): k = 1, 2, ... up to at_least, and on until one error is <=
    e_target (or MAX_IT). Index 0: the input."""
    nrm = np.linalg.norm(truth)
    errs = [float(np.linalg.norm(g - truth) / nrm)]
    for k in range(1, MAX_IT + 1):
        f = voxa.richardson_lucy(g, psf, k, accelerate=True)
        errs.append(float(np.linalg.norm(f - truth) / nrm))
        if k >= at_least and min(errs[1:]) <= e_target:
            break
    return errs


def iter_time(g, psf, n, accelerate):
    stamps = []
    voxa.richardson_lucy(g, psf, n, accelerate=accelerate, planning="auto",
                         progress=lambda d, t: stamps.append(time.perf_counter()))
    return stamps[-1] - stamps[0]


def main():
    shape = (32, 96, 96) if QUICK else (64, 256, 256)
    voxa.set_threads(THREADS)
    truth, g, psf = sample(shape)
    plain = curve_plain(g, psf, truth)
    e50 = plain[PLAIN_N]
    acc = curve_accelerated(g, psf, truth, e50, 30)
    K = next((k for k in range(1, len(acc)) if acc[k] <= e50), None)
    kp, ka = int(np.argmin(plain)), int(np.argmin(acc))
    print(f"## Time to quality: plain vs accelerated RL ({shape}, free, {THREADS} thread(s))\n\n"
          f"machine: {machine()}; load {loadavg()}\n\n"
          f"Relative L2 error to the truth: input {plain[0]:.4f}; plain after {PLAIN_N}: "
          f"{e50:.4f}; best plain {plain[kp]:.4f} (iteration {kp}), best accelerated "
          f"{acc[ka]:.4f} (iteration {ka}).\n")
    cols = [k for k in (1, 2, 5, 10, 15, 20, 25, 30, 40, 50, 60) if k < len(acc)]
    print("| iterations | " + " | ".join(str(k) for k in cols) + " |\n|---" +
          "|---" * len(cols) + "|")
    for name, c in (("plain", plain), ("accelerated", acc)):
        print(f"| {name} | " + " | ".join(f"{c[k]:.4f}" for k in cols) + " |")
    mem = {acc: measure(lambda: voxa.richardson_lucy(g, psf, 3, accelerate=acc), repeats=1,
                        warmup=0)["added_bytes"] / g.nbytes for acc in (False, True)}
    print(f"\nAdded peak RSS of one call (output included): plain {mem[False]:.2f}x the image, "
          f"accelerated {mem[True]:.2f}x.")
    if K is None:
        print(f"\naccelerated never reaches plain's error after {PLAIN_N} iterations within "
              f"{MAX_IT}.\n")
        return
    box = {"plain": [], "accelerated": []}
    load0 = loadavg()
    interleave([("plain", lambda: box["plain"].append(iter_time(g, psf, PLAIN_N, False))),
                ("accelerated", lambda: box["accelerated"].append(iter_time(g, psf, K, True)))],
               ROUNDS)
    p, a = box["plain"][-ROUNDS:], box["accelerated"][-ROUNDS:]
    m, lo, hi = ratio_stats(a, p)
    print(f"\nAccelerated reaches plain's {PLAIN_N}-iteration error ({e50:.4f}) at iteration "
          f"{K} ({acc[K]:.4f}). Iteration time, {ROUNDS} interleaved rounds (load {load0} / "
          f"{loadavg()}): plain {PLAIN_N} its median {statistics.median(p):.2f} s "
          f"({min(p):.2f}-{max(p):.2f}), {statistics.median(p) / PLAIN_N * 1e3:.1f} ms/it; "
          f"accelerated {K} its {statistics.median(a):.2f} s ({min(a):.2f}-{max(a):.2f}), "
          f"{statistics.median(a) / K * 1e3:.1f} ms/it.\n\n"
          f"**Time to plain's 50-iteration error: accelerated / plain = {100 * m:.0f} % "
          f"({100 * lo:.0f}-{100 * hi:.0f} %) per round** (target <= 40 %).\n")


if __name__ == "__main__":
    main()
