"""W4: binary opening with large structuring elements, and the exact EDT.

voxa vs scipy.ndimage side by side in one process: scipy.binary_opening where
it finishes (small volume), scipy's exact distance-transform routes and the
FFT-threshold workaround, at full size (400,401,401) once. 2 threads.
Also binary_fill_holes on hollow blobs (200,201,201) against scipy.
Run: python bench/bench_morph.py  (peak RSS per call: see bench/common.py);
python bench/bench_morph.py fill-holes runs the fill-holes case alone;
python bench/bench_morph.py --before=OLD_voxa.so [--rounds=N] [--no-edt] [--cpu]
times a copy of the extension built before a change against the current one
on the W4 openings (ball R=21, diamond R=20) and the float32 EDT, interleaved
rounds (median and min-max), 1 and 2 threads (issue 14); --no-edt leaves the
EDT out, --cpu times the process's CPU time (all threads summed) instead of
wall time, a figure that a busy machine disturbs much less."""
import os
import sys
import time

import numpy as np
import scipy.ndimage as ndi
from scipy.signal import fftconvolve

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (swap_ext, blob_mask, fmt_bytes, fmt_time, interleave, load_other_ext,  # noqa: E402
                    loadavg, machine, measure, ratio_stats, table)

import voxa  # noqa: E402

THREADS = 2
voxa.set_threads(THREADS)
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))


blobs = blob_mask  # union of balls around sparse seeds, ~40 % set (common.py)


def scipy_edt_open(a, R):
    """Exact opening through scipy's EDT: erosion = (distance to background,
    outside included) > R; dilation = distance to the eroded set <= R."""
    inner = (slice(1, -1),) * a.ndim
    er = ndi.distance_transform_edt(np.pad(a, 1))[inner] > R
    if not er.any():  # scipy's EDT of an all-ones array is not "infinite"
        return er
    return ndi.distance_transform_edt(~er) <= R


def scipy_cdt_open(a, R):
    inner = (slice(1, -1),) * a.ndim
    er = ndi.distance_transform_cdt(np.pad(a, 1), "taxicab")[inner] > R
    if not er.any():
        return er
    return ndi.distance_transform_cdt(~er, "taxicab") <= R


def fft_open(a, b):
    """The published workaround: thresholded FFT convolutions (zero padding =
    border_value 0)."""
    bf = b.astype(np.float32)
    er = fftconvolve(a.astype(np.float32), bf, mode="same") > bf.sum() - 0.5
    return fftconvolve(er.astype(np.float32), bf, mode="same") > 0.5


def hollow_blobs(shape):
    """Blobs made hollow (a 2-voxel shell, so each blob holds a hole), plus
    small cavities inside the shells' complement: a mask with many holes."""
    b = blobs(shape)
    shell = b & ~voxa.binary_erosion(b, ball=2)
    rng = np.random.default_rng(3)
    return shell | (b & (rng.random(shape, dtype=np.float32) < 0.3))


def fill_holes_case(shape):
    """binary_fill_holes vs scipy (connectivity 1 and the full 3^3 box)."""
    a = hollow_blobs(shape)
    holes = voxa.binary_fill_holes(a).sum() - a.sum()
    head = (f"fill holes {shape}: {100 * a.mean():.1f} % foreground, {holes} hole voxels "
            f"({100 * holes / a.size:.1f} %)\n")
    tables = [head]
    for name, s in (("connectivity 1", None), ("full box", np.ones((3, 3, 3), bool))):
        mv = measure(lambda: voxa.binary_fill_holes(a, s), repeats=5)
        ms = measure(lambda: ndi.binary_fill_holes(a, s), repeats=1, warmup=0)
        assert np.array_equal(mv["result"], ms["result"])
        tables.append(table(f"binary_fill_holes {shape}, {name}",
                            [("voxa", mv, "depth-first search over background runs"),
                             ("scipy.ndimage.binary_fill_holes", ms, "exact: equal")], "voxa"))
    return "\n".join(tables)


def before_after(old_path, rounds, edt=True, cpu=False):
    """W4 openings and the float32 EDT, old build vs this one, interleaved."""
    import statistics
    old, new = load_other_ext(old_path), voxa._voxa
    big = blobs((400, 401, 401))
    cases = [("edt float32", lambda: voxa.distance_transform_edt(big, dtype=np.float32)),
             ("opening diamond R=20", lambda: voxa.binary_opening(big, diamond=20)),
             ("opening ball R=21", lambda: voxa.binary_opening(big, ball=21))]
    if not edt:
        cases = cases[1:]
    clock = "CPU time (all threads)" if cpu else "wall time"
    lines = [f"### before/after (400,401,401) blobs, {rounds} interleaved rounds, {clock} "
             f"(load {loadavg()})", "",
             "| case | threads | before median (min-max) | after median (min-max) | "
             "before/after per round: median (min-max) | peak added before / after |",
             "|---|---|---|---|---|---|"]
    print("\n".join(lines))

    def on(ext, fn, t):
        def f():
            prev = swap_ext(ext)
            try:
                ext.set_threads(t)
                return fn()
            finally:
                swap_ext(prev)
        return f
    for name, fn in cases:
        assert np.array_equal(on(old, fn, 2)(), on(new, fn, 2)()), name
        for t in (1, 2):
            calls = [("before", on(old, fn, t)), ("after", on(new, fn, t))]
            ts = interleave(calls, rounds, clock=time.process_time if cpu else time.perf_counter)
            mb = measure(on(old, fn, t), repeats=1, warmup=0)["added_bytes"]
            ma = measure(on(new, fn, t), repeats=1, warmup=0)["added_bytes"]
            m = {k: statistics.median(v) for k, v in ts.items()}
            r, lo, hi = ratio_stats(ts["before"], ts["after"])
            print(f"| {name} | {t} | {fmt_time(m['before'])} ({fmt_time(min(ts['before']))}"
                  f"-{fmt_time(max(ts['before']))}) | {fmt_time(m['after'])} "
                  f"({fmt_time(min(ts['after']))}-{fmt_time(max(ts['after']))}) | "
                  f"{r:.2f}x ({lo:.2f}-{hi:.2f}) | {fmt_bytes(mb)} / {fmt_bytes(ma)} |")
            sys.stdout.flush()
    voxa.set_threads(THREADS)
    print(f"\nload after: {loadavg()}\n")


def main():
    for a in sys.argv[1:]:
        if a.startswith("--before="):
            rounds = 11
            for b in sys.argv[1:]:
                if b.startswith("--rounds="):
                    rounds = int(b.split("=", 1)[1])
            print(f"machine: {machine()}\n")
            before_after(a.split("=", 1)[1], rounds, edt="--no-edt" not in sys.argv,
                         cpu="--cpu" in sys.argv)
            return
    out = [f"## W4 binary opening, exact EDT ({THREADS} threads)", "", f"machine: {machine()}", ""]
    if sys.argv[1:] == ["fill-holes"]:  # this case alone
        print("\n".join(out + [fill_holes_case((200, 201, 201))]))
        return
    t0 = time.time()
    # --- small volume: scipy.binary_opening finishes ---------------------------------
    small = blobs((60, 61, 61))
    for name, b in (("ball R=5", voxa.ball(5)), ("diamond R=5", voxa.diamond(5)),
                    ("ball R=8", voxa.ball(8)), ("ball R=12", voxa.ball(12)),
                    ("box 11", np.ones((11, 11, 11), bool)),
                    ("random 7^3", np.random.default_rng(2).random((7, 7, 7)) < 0.5)):
        mv = measure(lambda: voxa.binary_opening(small, b), repeats=5)
        ms = measure(lambda: ndi.binary_opening(small, b), repeats=1, warmup=0)
        assert np.array_equal(mv["result"], ms["result"])
        mf = measure(lambda: fft_open(small, b), repeats=3)
        rows = [("voxa", mv, voxa.morph_path(3, b)),
                ("scipy.ndimage.binary_opening", ms, "exact: equal"),
                ("FFT threshold (fftconvolve)", mf,
                 "equal" if np.array_equal(mf["result"], ms["result"]) else "NOT equal")]
        out.append(table(f"opening (60,61,61), {name}", rows, "voxa"))
    # --- full size ---------------------------------------------------------------------
    big = blobs((400, 401, 401))
    out.append(f"full size: (400,401,401) bool, {100 * big.mean():.1f} % foreground, input "
               f"{fmt_bytes(big.nbytes)}; opened with ball R=21 keeps "
               f"{100 * voxa.binary_opening(big, ball=21).mean():.1f} %\n")
    mv21 = measure(lambda: voxa.binary_opening(big, ball=21), repeats=3)
    ms21 = measure(lambda: scipy_edt_open(big, 21), repeats=1, warmup=0)
    assert np.array_equal(mv21["result"], ms21["result"])
    mv17 = measure(lambda: voxa.binary_opening(big, ball=17), repeats=3)
    rows = [("voxa ball R=21", mv21, "ball path (squared-EDT thresholds)"),
            ("scipy EDT route, ball R=21", ms21, "exact: equal to voxa"),
            ("voxa ball R=17", mv17, "")]
    out.append(table("opening (400,401,401), ball", rows[:3], "voxa ball R=21"))
    out.append("scipy.ndimage.binary_opening cannot run these (PEERS.md: ball R=17 at (100,101,101) "
               "takes 113 s and 6.7 GB; R=21 raises MemoryError).\n")
    mvd = measure(lambda: voxa.binary_opening(big, diamond=20), repeats=3)
    msd = measure(lambda: scipy_cdt_open(big, 20), repeats=1, warmup=0)
    assert np.array_equal(mvd["result"], msd["result"])
    out.append(table("opening (400,401,401), diamond R=20",
                     [("voxa diamond R=20", mvd, "city-block threshold path"),
                      ("scipy taxicab cdt route", msd, "exact: equal to voxa")], "voxa diamond R=20"))
    ones = np.ones_like(big)
    mo = measure(lambda: voxa.binary_opening(ones, ball=21), repeats=3)
    mod = measure(lambda: voxa.binary_opening(ones, diamond=20), repeats=3)
    out.append(table("opening (400,401,401), all-ones input",
                     [("voxa ball R=21", mo, ""), ("voxa diamond R=20", mod, "")], "voxa ball R=21"))
    # --- R sweep -----------------------------------------------------------------------
    lines = ["### voxa opening time vs radius, (400,401,401) blobs", "",
             "| R | ball | diamond | box 2R+1 |", "|---|---|---|---|"]
    tb, td = [], []
    for R in (5, 10, 20, 30, 40, 50):
        b = measure(lambda: voxa.binary_opening(big, ball=R), repeats=3)
        d = measure(lambda: voxa.binary_opening(big, diamond=R), repeats=3)
        x = measure(lambda: voxa.binary_opening(big, box=2 * R + 1), repeats=3)
        tb.append(b["median"])
        td.append(d["median"])
        lines.append(f"| {R} | {fmt_time(b['median'])} | {fmt_time(d['median'])} | "
                     f"{fmt_time(x['median'])} |")
    lines.append(f"\nmax/min over R: ball {max(tb) / min(tb):.2f}x, diamond {max(td) / min(td):.2f}x\n")
    out.append("\n".join(lines))
    # --- EDT ---------------------------------------------------------------------------
    me = measure(lambda: voxa.distance_transform_edt(big), repeats=3)
    mse = measure(lambda: ndi.distance_transform_edt(big), repeats=1, warmup=0)
    np.testing.assert_allclose(me["result"], mse["result"], rtol=1e-12)
    me32 = measure(lambda: voxa.distance_transform_edt(big, dtype=np.float32), repeats=3)
    out.append(table("distance_transform_edt (400,401,401) float64",
                     [("voxa", me, "float64 output, no scratch"),
                      ("voxa float32", me32, "4-byte output"),
                      ("scipy.ndimage.distance_transform_edt", mse, "equal within 1e-12")], "voxa"))
    mf = measure(lambda: fft_open(big[:200, :201, :201], voxa.ball(17)), repeats=1, warmup=0)
    mvq = measure(lambda: voxa.binary_opening(big[:200, :201, :201], ball=17), repeats=3)
    out.append(table("opening (200,201,201) ball R=17 vs FFT threshold",
                     [("voxa", mvq, ""), ("FFT threshold (fftconvolve float32)", mf,
                      "equal" if np.array_equal(mf["result"], mvq["result"]) else "NOT equal")], "voxa"))
    out.append(fill_holes_case((200, 201, 201)))
    out.append(f"total benchmark wall time {time.time() - t0:.0f} s\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
