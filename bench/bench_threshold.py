"""voxa.threshold_otsu vs skimage.filters.threshold_otsu (and the mask,
voxa.threshold(method="otsu") vs ``image > threshold_otsu(image)``), side by
side in this process, interleaved round by round (bench/common.interleave),
on a bimodal (64, 512, 512) volume (16.8 M voxels, seed 0) as float32 and
uint16. Every result is checked equal to skimage's (value and type). Reports
the median time, min-max, and the median of the per-round ratios.

Run alone: python bench/bench_threshold.py [--quick]"""
import os
import statistics
import sys

import numpy as np
from skimage.filters import threshold_otsu as sk_otsu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import fmt_time, interleave, loadavg, machine, ratio_stats  # noqa: E402

import voxa  # noqa: E402


def volume(shape, dtype):
    r = np.random.default_rng(0)
    n = int(np.prod(shape))
    low = r.normal(300, 40, n)
    high = r.normal(900, 80, n)
    v = np.where(r.random(n) < 0.7, low, high).clip(0, 4000).reshape(shape)
    return v.astype(dtype)


def main():
    quick = "--quick" in sys.argv
    shape = (16, 256, 256) if quick else (64, 512, 512)
    rounds = 3 if quick else 7
    out = [f"## Otsu threshold: voxa vs skimage.filters.threshold_otsu, {shape}", "",
           f"machine: {machine()}; load before: {loadavg()}", "",
           "| input | call | skimage median (min-max) | voxa 1 thread | voxa 2 threads | "
           "skimage / voxa (1 thr, 2 thr; median of rounds) |", "|---|---|---|---|---|---|"]
    for dtype in (np.float32, np.uint16):
        img = volume(shape, dtype)
        want = sk_otsu(img)
        for t in (1, 2):
            voxa.set_threads(t)
            got = voxa.threshold_otsu(img)
            assert type(got) is type(want) and got == want, (got, want)
            assert np.array_equal(voxa.threshold(img, method="otsu"), img > want)
        for what, sk_fn, vx_fn in (
                ("value", lambda: sk_otsu(img), lambda: voxa.threshold_otsu(img)),
                ("mask", lambda: img > sk_otsu(img),
                 lambda: voxa.threshold(img, method="otsu"))):
            def at(t, f=vx_fn):
                def g():
                    voxa.set_threads(t)
                    return f()
                return g
            times = interleave([("sk", sk_fn), ("v1", at(1)), ("v2", at(2))], rounds=rounds)
            sk, v1, v2 = times["sk"], times["v1"], times["v2"]
            r1, r2 = ratio_stats(sk, v1)[0], ratio_stats(sk, v2)[0]
            med = statistics.median
            out.append(f"| {np.dtype(dtype).name} | {what} | {fmt_time(med(sk))} "
                       f"({fmt_time(min(sk))}-{fmt_time(max(sk))}) | {fmt_time(med(v1))} "
                       f"({fmt_time(min(v1))}-{fmt_time(max(v1))}) | {fmt_time(med(v2))} "
                       f"({fmt_time(min(v2))}-{fmt_time(max(v2))}) | {r1:.1f}x, {r2:.1f}x |")
    voxa.set_threads(0)
    out.append("")
    out.append(f"load after: {loadavg()}; {rounds} interleaved rounds after one warm-up")
    print("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
