"""Accelerated RL: Biggs-Andrews' alpha in the paper's order against voxa's
(one step behind, so that the extrapolation runs inside the update pass;
docs/deconv.md), in iterations to plain RL's 50-iteration error.

voxa runs only its own order, so both run here as float32 NumPy loops of
free-mode RL (the wrap-free extended domain of tests/python/test_deconv.py,
FFTs by scipy.fft on a fast box) with the geometric step. Samples:
bench_rl_quality.py's (64, 256, 256) at seed 0 and 7 variants of it (seeds
1-3; 10x fewer and 10x more counts; a wider PSF, sigma (4, 2, 2); 3000
blobs and no points) and a (32, 512, 512) volume. Per sample: plain RL's
error after 50 iterations, then for each order the first iteration at or
below it, and its best error (iteration). Not a test, not run by make bench;
~6 minutes.

Run: python bench/rl_alpha_order.py"""
import os
import sys

import numpy as np
import scipy.fft as sf
import scipy.ndimage
import scipy.signal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import voxa  # noqa: E402

SAMPLES = [((64, 256, 256), 0, {}), ((64, 256, 256), 1, {}), ((64, 256, 256), 2, {}),
           ((64, 256, 256), 3, {}), ((64, 256, 256), 0, {"scale": 0.1}),
           ((64, 256, 256), 0, {"scale": 10}), ((64, 256, 256), 0, {"sig": (4, 2, 2)}),
           ((64, 256, 256), 0, {"nblobs": 3000, "npts": 0}), ((32, 512, 512), 0, {})]


def sample(shape, seed, nblobs=300, npts=200, sig=(2.5, 1.5, 1.5), scale=1.0):
    """bench_rl_quality.sample with its parameters open."""
    rng = np.random.default_rng(seed)
    truth = np.zeros(shape)
    np.add.at(truth, tuple(rng.integers(0, s, nblobs) for s in shape), 1.0)
    truth = scipy.ndimage.gaussian_filter(truth, 1.5)
    truth *= 1000 / truth.max()
    truth[tuple(rng.integers(0, s, npts) for s in shape)] += 500
    truth = (truth + 2) * scale
    psf = voxa.gaussian_psf((15, 15, 15), sig, dtype=np.float64)
    blurred = scipy.signal.fftconvolve(truth, psf, "same")
    return truth, rng.poisson(np.maximum(blurred, 0)).astype(np.float32), psf


class FreeRL:
    """One free-mode RL step in float32 on the FFT box of the extended domain."""

    def __init__(self, g, h):
        n, m = np.array(g.shape), np.array(h.shape)
        self.box = tuple(sf.next_fast_len(int(e), real=True) for e in n + m - 1)
        self.g = g.astype(np.float32)
        self.hf = sf.rfftn(h.astype(np.float32), self.box, workers=-1)
        self.hb = sf.rfftn(h[::-1, ::-1, ::-1].astype(np.float32), self.box, workers=-1)
        self.valid = tuple(slice(int(a) - 1, int(a) - 1 + int(b)) for a, b in zip(m, n))
        self.ext = tuple(slice(0, int(e)) for e in n + m - 1)
        a = self.adjoint(np.ones(g.shape, np.float32))
        self.ok = a > 1e-4 * h.sum()
        self.a = np.where(self.ok, a, 1).astype(np.float32)
        self.crop = tuple(slice(int(k) - 1 - int(k) // 2, int(k) - 1 - int(k) // 2 + int(j))
                          for k, j in zip(m, n))
        self.x0 = np.where(self.ok, g.mean(), 0).astype(np.float32)

    def adjoint(self, r):
        return sf.irfftn(sf.rfftn(r, self.box, workers=-1) * self.hb, self.box,
                         workers=-1)[self.ext]

    def __call__(self, f):
        b = sf.irfftn(sf.rfftn(f, self.box, workers=-1) * self.hf, self.box,
                      workers=-1)[self.valid]
        r = np.where(b > 0, self.g / np.where(b > 0, b, 1), 0).astype(np.float32)
        return np.where(self.ok, np.maximum(f * self.adjoint(r) / self.a, 0), 0).astype(
            np.float32)


def geometric(x, xp, a):
    ok = (x > 0) & (xp > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(a * (np.log2(np.where(ok, x, 1)) - np.log2(np.where(ok, xp, 1))), -16, 16)
    return np.where(ok, x * np.exp2(t), x).astype(np.float32)


def errors(step, truth, n, order):
    """Errors after iterations 1..n; order: 'plain', 'paper' or 'lagged'."""
    nrm = np.linalg.norm(truth)
    x, xp, dold, alpha, a_next, out = step.x0, None, None, 0.0, 0.0, []
    for k in range(n):
        a = a_next if order == "lagged" else alpha
        y = x if (k == 0 or order == "plain") else geometric(x, xp, a)
        a_next = alpha
        xp, x = x, step(y)
        d = (x - y).astype(np.float64)
        alpha = 0.0
        if dold is not None and float(np.sum(dold * dold)) > 0:
            alpha = min(max(float(np.sum(d * dold)) / float(np.sum(dold * dold)), 0.0), 1.0)
        dold = d
        out.append(float(np.linalg.norm(x[step.crop] - truth) / nrm))
    return out


def main():
    print("| sample | plain-50 error | paper's order: iterations to it (best) | "
          "voxa's order (best) |\n|---|---|---|---|")
    for shape, seed, kw in SAMPLES:
        truth, g, psf = sample(shape, seed, **kw)
        step = FreeRL(g, psf)
        e50 = errors(step, truth, 50, "plain")[-1]
        cells = []
        for order in ("paper", "lagged"):
            e = errors(step, truth, 40, order)
            k = next((i + 1 for i, v in enumerate(e) if v <= e50), None)
            cells.append(f"{k} ({min(e):.4f} at {int(np.argmin(e)) + 1})")
        print(f"| {shape} seed {seed} {kw or ''} | {e50:.4f} | {cells[0]} | {cells[1]} |",
              flush=True)


if __name__ == "__main__":
    main()
