"""Richardson-Lucy in double precision (dtype=float64) against voxa's float32
path and scikit-image's richardson_lucy (float64, the peer it matches to
double round-off), side by side in one process, interleaved rounds; also the
added peak memory of one call of each voxa path (ru_maxrss in a child).

    python bench/bench_rl_f64.py [--rounds 7] [--threads 1,2]
"""
import argparse
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.signal

import voxa

try:
    from skimage import restoration
except ImportError:  # the peer is optional
    restoration = None

CASES = {  # name: (image shape, PSF shape, iterations, boundary)
    "2d zero (1024, 1024), psf 9x9": ((1024, 1024), (9, 9), 10, "zero"),
    "3d zero (64, 256, 256), psf 9^3": ((64, 256, 256), (9, 9, 9), 5, "zero"),
    "3d free (64, 256, 256), psf 9^3": ((64, 256, 256), (9, 9, 9), 5, "free"),
    "3d periodic (128, 256, 256), psf 16^3": ((128, 256, 256), (16, 16, 16), 5, "periodic"),
}


def sample(shape, pshape):
    rng = np.random.default_rng(0)
    t = np.zeros(shape)
    t[tuple(rng.integers(0, s, 200) for s in shape)] = 100.0
    h = voxa.gaussian_psf(pshape, [m / 4 for m in pshape], dtype=np.float64)
    g = scipy.signal.fftconvolve(t, h, "same") + 1.0
    return g + 0.05 * rng.standard_normal(shape), h


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def peak_child(path, it, boundary, dtype, threads):
    """Added peak RSS of one call in a fresh process that holds only the
    sample (loaded from .npy), in units of the float64 image's size. VmHWM,
    not ru_maxrss: a child's ru_maxrss starts at its parent's size."""
    code = (f"import numpy as np, voxa; voxa.set_threads({threads});"
            f"hwm = lambda: int([l for l in open('/proc/self/status')"
            f" if l.startswith('VmHWM')][0].split()[1]);"
            f"g = np.load({path + '_g.npy'!r}); h = np.load({path + '_h.npy'!r});"
            f"r0 = hwm();"
            f"voxa.richardson_lucy(g, h, {it}, boundary={boundary!r}, dtype=np.{dtype},"
            f" planning='estimate');"
            f"print((hwm() - r0) * 1024 / (g.size * 8))")
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                check=True).stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    for threads in [int(t) for t in args.threads.split(",")]:
        voxa.set_threads(threads)
        print(f"## {threads} thread(s), {args.rounds} interleaved rounds, planning='estimate'; "
              "median (min-max) seconds per call")
        for name, (shape, pshape, it, boundary) in CASES.items():
            g, h = sample(shape, pshape)
            runs = {"f32": lambda: voxa.richardson_lucy(g, h, it, boundary=boundary,
                                                        planning="estimate"),
                    "f64": lambda: voxa.richardson_lucy(g, h, it, boundary=boundary,
                                                        dtype=np.float64, planning="estimate")}
            if restoration is not None and boundary == "zero" and threads == 1:
                runs["skimage"] = lambda: restoration.richardson_lucy(g, h, num_iter=it,
                                                                      clip=False)
            for fn in runs.values():
                fn()  # warm: plans, pages
            t = {k: [] for k in runs}
            for _ in range(args.rounds):
                for k, fn in runs.items():
                    t[k].append(timed(fn))
            med = {k: float(np.median(v)) for k, v in t.items()}
            print(f"\n### {name}, {it} iterations")
            for k, v in t.items():
                print(f"  {k:8s} {med[k]:.3f} ({min(v):.3f}-{max(v):.3f})")
            r = [a / b for a, b in zip(t["f64"], t["f32"])]
            print(f"  f64/f32 per round: {np.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})")
            if "skimage" in t:
                r = [a / b for a, b in zip(t["skimage"], t["f64"])]
                print(f"  skimage/f64 per round: {np.median(r):.1f}x ({min(r):.1f}-{max(r):.1f})")
            if threads == 1:
                with tempfile.TemporaryDirectory() as tmp:
                    np.save(tmp + "/s_g.npy", g)
                    np.save(tmp + "/s_h.npy", h)
                    m32, m64 = (peak_child(tmp + "/s", it, boundary, d, threads)
                                for d in ("float32", "float64"))
                print(f"  added peak RSS, in float64 images: f32 {m32:.2f}, f64 {m64:.2f}")


if __name__ == "__main__":
    main()
