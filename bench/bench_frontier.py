"""The CPU frontier (issue 14): voxa against the fastest CPU peers, side by side.

Peers (pinned in requirements-dev.txt):
  labelling       cc3d.connected_components (connected-components-3d; one
                  thread, it has none), 6/18/26-connectivity, on the W1 mask
                  (20,1024,1024), a 50 % random mask and a blob mask
                  (400,401,401); its labels are checked equal to voxa's;
  EDT             edt.edt (seung-lab), parallel=1 and 2, float32, on the blob
                  mask; voxa with dtype=float32 (max difference reported);
  deconvolution   the floors: four bare pyFFTW r2c/c2r transforms of the image,
                  in place, with the thread count voxa runs with, FFTW_ESTIMATE
                  (voxa's flag for whole-box plans) and FFTW_MEASURE, and of
                  free mode's FFT box with FFTW_MEASURE; the W2 formula on
                  scipy.fft float32 with workers = all cores (the strongest
                  Python route); voxa with planning='auto'.

How: every comparison is timed interleaved in this one process (each round
calls every method once, the order reversed every other round; common.py's
interleave), >= 11 rounds after a warm-up, reporting the median and min-max
of each method and the median (min-max) of the per-round ratio peer/voxa.
Interleaving makes ratios resist the load of a shared machine better than
two separate runs; the absolute times still move with it, so the load average
is printed beside each table. RL times are per iteration (voxa: stamps of its
progress callback, set-up and the first iteration excluded, see voxa_iter;
scipy.fft route: the same).

Run: python bench/bench_frontier.py [--quick] [--rounds=N] [label edt rl]
(edt --before=OLD_voxa.so: also times a copy of the extension built before a
change, interleaved in the same rounds: before/after ratios.)
(--quick: small shapes, 5 rounds: a smoke test, not a figure)."""
import os
import statistics
import sys
import time

import numpy as np
import scipy.fft as sfft

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (edt_timer, _read_status, _reset_peak, blob_mask, fast_size, fmt_bytes, fmt_time,  # noqa: E402
                    interleave, loadavg, machine, paint_bbox, ratio_stats, w1_points)

import cc3d  # noqa: E402
import edt  # noqa: E402
import pyfftw  # noqa: E402
import voxa  # noqa: E402

QUICK = "--quick" in sys.argv
ROUNDS = 5 if QUICK else 11
for _a in sys.argv[1:]:
    if _a.startswith("--rounds="):
        ROUNDS = int(_a.split("=", 1)[1])
ALL = os.cpu_count()


def versions():
    import importlib.metadata as md
    return ", ".join(f"{p} {md.version(p)}" for p in
                     ("connected-components-3d", "edt", "pyFFTW", "scipy", "numpy"))


def row(name, ts, ref=None, voxels=None, note=""):
    if ref is not None and voxels == "ratio only":
        m, lo, hi = ratio_stats(ts, ref)
        return f"| {name} | | | | {m:.2f}x ({lo:.2f}-{hi:.2f}) | {note} |"
    med = statistics.median(ts)
    mvx = f"{voxels / med / 1e6:.0f}" if voxels else "-"
    if ref is None:
        rat = "-"
    else:
        m, lo, hi = ratio_stats(ts, ref)
        rat = f"{m:.2f}x ({lo:.2f}-{hi:.2f})"
    return (f"| {name} | {fmt_time(med)} | {fmt_time(min(ts))}-{fmt_time(max(ts))} | {mvx} | "
            f"{rat} | {note} |")


HEAD = ["| method | median | min-max | MVx/s | time ratio, per round: median (min-max) | note |",
        "|---|---|---|---|---|---|"]


# ---- labelling -----------------------------------------------------------------

def label_masks():
    w1 = (20, 128, 128) if QUICK else (20, 1024, 1024)
    big = (40, 101, 101) if QUICK else (400, 401, 401)
    yield "W1 balls", paint_bbox(w1, w1_points(w1, 500, 0), 5.0)
    yield "random 50 %", np.random.default_rng(1).random(big, dtype=np.float32) < 0.5
    yield "blobs 40 %", blob_mask(big)


def bench_label():
    out = ["### Labelling: voxa.label vs cc3d.connected_components", "",
           "cc3d has no threads; its output dtype is its default (the smallest that fits, "
           "uint16 or uint32), voxa's int32 (scipy's default; where cc3d writes uint16, "
           "voxa output=uint16 rows are added). Ratio = cc3d time / voxa time in the same round "
           "(above 1: voxa faster).", ""]
    summary = ["| mask | conn | components | cc3d | voxa 1 thread (cc3d/voxa) | "
               "voxa 2 threads (cc3d/voxa) |", "|---|---|---|---|---|---|"]
    for mname, mask in label_masks():
        for conn, cc in ((1, 6), (2, 18), (3, 26)):
            load0 = loadavg()

            def vx(t, dt=None):
                def f():
                    voxa.set_threads(t)
                    return voxa.label(mask, connectivity=conn, output=dt)
                return f
            ref = cc3d.connected_components(mask, connectivity=cc)
            got, n = vx(2)()
            assert n == int(ref.max()) and np.array_equal(got, ref), (mname, cc)
            del got
            calls = [("cc3d", lambda: cc3d.connected_components(mask, connectivity=cc)),
                     ("voxa 1", vx(1)), ("voxa 2", vx(2))]
            # where cc3d's default output is uint16, voxa also writes uint16
            # (the same job), beside its int32 default (scipy's)
            u16 = ref.dtype == np.uint16
            if u16:
                calls += [("voxa 1 u16", vx(1, np.uint16)), ("voxa 2 u16", vx(2, np.uint16))]
            ts = interleave(calls, ROUNDS)
            voxa.set_threads(0)
            v = mask.size
            out += [f"#### {mname} {mask.shape}, {cc}-connected: {n} components "
                    f"(load {load0} / {loadavg()})", ""] + HEAD + [
                row("cc3d.connected_components", ts["cc3d"], None, v, f"{ref.dtype} out"),
                row("voxa.label, 1 thread", ts["voxa 1"], None, v, "int32 out, equal"),
                row("voxa.label, 2 threads", ts["voxa 2"], None, v, "int32 out, equal"),
                row("cc3d / voxa 1 thread", ts["cc3d"], ts["voxa 1"], "ratio only"),
                row("cc3d / voxa 2 threads", ts["cc3d"], ts["voxa 2"], "ratio only")]
            if u16:
                out += [
                    row("voxa.label output=uint16, 1 thread", ts["voxa 1 u16"], None, v,
                        "uint16 out, as cc3d"),
                    row("voxa.label output=uint16, 2 threads", ts["voxa 2 u16"], None, v,
                        "uint16 out, as cc3d"),
                    row("cc3d / voxa uint16 1 thread", ts["cc3d"], ts["voxa 1 u16"],
                        "ratio only"),
                    row("cc3d / voxa uint16 2 threads", ts["cc3d"], ts["voxa 2 u16"],
                        "ratio only")]
            out.append("")
            r1 = ratio_stats(ts["cc3d"], ts["voxa 1"])[0]
            r2 = ratio_stats(ts["cc3d"], ts["voxa 2"])[0]
            med = {k: statistics.median(x) for k, x in ts.items()}
            summary.append(f"| {mname} | {cc} | {n} | {fmt_time(med['cc3d'])} | "
                           f"{fmt_time(med['voxa 1'])} ({r1:.2f}x) | "
                           f"{fmt_time(med['voxa 2'])} ({r2:.2f}x) |")
            del ref
        del mask
    out += ["#### labelling summary (medians; ratio: median of per-round cc3d/voxa)", ""] + summary
    print("\n".join(out) + "\n")
    sys.stdout.flush()


# ---- EDT -----------------------------------------------------------------------

def bench_edt():
    """voxa vs edt.edt; with --before=OLD_voxa.so also a copy of the extension
    built before a change (same process, interleaved): the before/after ratio."""
    shape = (40, 101, 101) if QUICK else (400, 401, 401)
    mask = blob_mask(shape)
    load0 = loadavg()
    old = None
    for a in sys.argv[1:]:
        if a.startswith("--before="):
            from common import load_other_ext
            old = load_other_ext(a.split("=", 1)[1])

    def vx(t, ext=None):
        return edt_timer(mask, t, ext)
    a = edt.edt(mask, parallel=1)
    b = vx(2)()
    diff = float(np.abs(a.astype(np.float64) - b).max())
    if old is not None:
        assert np.array_equal(vx(2, old)(), b)
    del a, b
    calls = [("edt 1", lambda: edt.edt(mask, parallel=1)),
             ("edt 2", lambda: edt.edt(mask, parallel=2)),
             ("voxa 1", vx(1)), ("voxa 2", vx(2))]
    if old is not None:
        calls += [("before 1", vx(1, old)), ("before 2", vx(2, old))]
    ts = interleave(calls, ROUNDS)
    voxa.set_threads(0)
    v = mask.size
    out = [f"### EDT of the blob mask {shape} ({100 * mask.mean():.1f} % foreground), float32 "
           f"(load {load0} / {loadavg()})", "",
           f"Largest difference edt vs voxa: {diff:.3g} (0: identical float32 values).", ""] + HEAD + [
        row("edt.edt, parallel=1", ts["edt 1"], None, v),
        row("edt.edt, parallel=2", ts["edt 2"], None, v),
        row("voxa.distance_transform_edt, 1 thread", ts["voxa 1"], None, v),
        row("voxa.distance_transform_edt, 2 threads", ts["voxa 2"], None, v),
        row("edt(parallel=1) / voxa 1 thread", ts["edt 1"], ts["voxa 1"], "ratio only"),
        row("edt(parallel=2) / voxa 2 threads", ts["edt 2"], ts["voxa 2"], "ratio only")]
    if old is not None:
        out += [row("voxa before, 1 thread", ts["before 1"], None, v),
                row("voxa before, 2 threads", ts["before 2"], None, v),
                row("before / after, 1 thread", ts["before 1"], ts["voxa 1"], "ratio only"),
                row("before / after, 2 threads", ts["before 2"], ts["voxa 2"], "ratio only"),
                row("edt(parallel=2) / voxa before 2 threads", ts["edt 2"], ts["before 2"],
                    "ratio only")]
    print("\n".join(out + [""]) + "\n")
    sys.stdout.flush()


# ---- Richardson-Lucy -------------------------------------------------------------

class FFTWFloor:
    """Four bare in-place float32 r2c/c2r transforms of `shape` with pyFFTW,
    `threads` threads, FFTW_ESTIMATE (voxa's flag for whole-box plans) or
    FFTW_MEASURE (the best FFTW finds, seconds to plan): what one RL
    iteration on that box cannot beat with one 3-D plan."""

    def __init__(self, shape, threads, flag="FFTW_ESTIMATE"):
        cshape = shape[:-1] + (shape[-1] // 2 + 1,)
        self.c = pyfftw.empty_aligned(cshape, dtype=np.complex64)
        self.r = self.c.view(np.float32)[..., :shape[-1]]
        ax = tuple(range(len(shape)))
        t0 = time.perf_counter()
        self.f = pyfftw.FFTW(self.r, self.c, axes=ax, direction="FFTW_FORWARD",
                             flags=(flag,), threads=threads)
        self.i = pyfftw.FFTW(self.c, self.r, axes=ax, direction="FFTW_BACKWARD",
                             flags=(flag, "FFTW_DESTROY_INPUT"), threads=threads)
        self.plan_s = time.perf_counter() - t0
        self.r[...] = 1.0

    def __call__(self):
        for _ in range(2):
            self.f.execute()
            self.i.execute()
        self.r[...] = 1.0 / self.r.size  # keep the values finite between rounds


def fast_box(shape, pshape):
    """free mode's FFT box: n + m - 1 per axis, rounded up to a fast size."""
    return tuple(fast_size(n + m - 1) for n, m in zip(shape, pshape))


def w2_scipy_iter(g, h, workers, n=2):
    """The W2 formula on scipy.fft float32: returns seconds per iteration
    (median of n), set-up excluded."""
    s, ax = g.shape, tuple(range(g.ndim))
    pad = [((a - b) // 2, a - b - (a - b) // 2) for a, b in zip(s, h.shape)]
    hp = np.roll(np.pad(h.astype(np.float32), pad), [x // 2 for x in s], axis=ax)
    H = sfft.rfftn(hp, workers=workers)
    del hp
    f = g.copy()
    its = []
    for _ in range(n):
        t0 = time.perf_counter()
        ratio = g / sfft.irfftn(sfft.rfftn(f, workers=workers) * H, s=s, axes=ax, workers=workers)
        f *= sfft.irfftn(sfft.rfftn(ratio, workers=workers) * H.conj(), s=s, axes=ax,
                         workers=workers)
        del ratio
        its.append(time.perf_counter() - t0)
    return statistics.median(its)


def voxa_iter(g, h, t, n=5, **kw):
    """voxa RL: seconds per iteration in steady state: the median of
    iterations 2 to n - 1, from its progress callback (set-up excluded). The
    first iteration is left out: it also transforms the starting estimate and
    first touches the plan's buffers (page faults: 1.5-2.5x an iteration on
    a VM, measured 2026-12-04), which the floors' pre-filled arrays never pay;
    the last: on the staged path it skips the transform for a next
    iteration."""
    voxa.set_threads(t)
    stamps = []
    voxa.richardson_lucy(g, h, n, progress=lambda d, tot: stamps.append(time.perf_counter()),
                         planning="auto",
                         **kw)
    return statistics.median(np.diff(stamps)[1:-1])


def rs(a, b):
    m, lo, hi = ratio_stats(a, b)
    return f"{m:.2f}x ({lo:.2f}-{hi:.2f})"


def added_peak(fn):
    base = _read_status("VmRSS")
    _reset_peak()
    fn()
    return _read_status("VmHWM") - base


def bench_rl():
    # voxa's per-user wisdom cache off: every voxa plan here is made in this
    # process (the default planning: staged plans measured, once per size)
    os.environ["VOXA_FFTW_WISDOM"] = "off"
    shape = (32, 128, 128) if QUICK else (128, 512, 512)
    pshape = (32, 32, 32)
    box = fast_box(shape, pshape)
    g = np.random.default_rng(0).random(shape, dtype=np.float32) + 0.1
    h = voxa.gaussian_psf(pshape, (3, 2, 2))
    out = [f"### Richardson-Lucy {shape} float32, PSF {pshape}: seconds per iteration", "",
           f"Floors: four in-place pyFFTW r2c/c2r of the image {shape} with FFTW_ESTIMATE (voxa's "
           f"flag for whole-box plans) and with FFTW_MEASURE, and of free mode's FFT box {box} "
           f"with FFTW_MEASURE (planning time left out), voxa's thread count; pyFFTW ships its "
           f"own FFTW build, voxa links Debian's libfftw3. voxa runs planning='auto' "
           f"(the staged path's plane plans, and z-tile plans where its z stage uses FFTs, "
           f"measured once per size in this "
           f"process, wisdom cache off), timed over its iterations 2-4 of 5 (steady state: the first "
           f"one also pays the buffers' first-touch page faults). scipy.fft route: "
           f"workers={ALL} (all cores) in every round. Ratios are per round.", ""]
    for t in (1, 2):
        load0 = loadavg()
        floors = {"floor": FFTWFloor(shape, t), "floor M": FFTWFloor(shape, t, "FFTW_MEASURE"),
                  "box floor M": FFTWFloor(box, t, "FFTW_MEASURE")}

        def timed(fn):
            # interleave() times the call; these return the per-iteration time
            # themselves, so record that instead of the call's wall time.
            box_ = []
            return box_, (lambda: box_.append(fn()))
        per, calls = {}, []
        for name, fn in [("voxa periodic", lambda: voxa_iter(g, h, t, boundary="periodic")),
                         ("voxa free", lambda: voxa_iter(g, h, t, boundary="free")),
                         ("scipy", lambda: w2_scipy_iter(g, h, ALL))]:
            box_, f = timed(fn)
            per[name] = box_
            calls.append((name, f))
        calls += list(floors.items())
        ts = interleave(calls, ROUNDS)
        for name, box_ in per.items():
            ts[name] = box_[-ROUNDS:]
        voxa.set_threads(0)
        pp = added_peak(lambda: voxa_iter(g, h, t, boundary="periodic"))
        pf = added_peak(lambda: voxa_iter(g, h, t, boundary="free"))
        ps = added_peak(lambda: w2_scipy_iter(g, h, ALL))
        vp, vf = ts["voxa periodic"], ts["voxa free"]
        ims = g.nbytes
        plan_s = ", ".join(f"{k} {v.plan_s:.1f} s" for k, v in floors.items())
        out += [f"#### {t} thread{'s' * (t > 1)} (load {load0} / {loadavg()}; pyFFTW planning: "
                f"{plan_s})", ""] + HEAD + [
            row("floor: 4 pyFFTW r2c/c2r, ESTIMATE", ts["floor"], vp),
            row("floor: 4 pyFFTW r2c/c2r, MEASURE", ts["floor M"], vp),
            row(f"box floor: 4 pyFFTW r2c/c2r of {box}, MEASURE", ts["box floor M"], vp),
            row("voxa periodic", vp, vp, None, f"added peak {fmt_bytes(pp)} "
                f"({pp / ims:.1f}x the image)"),
            row("voxa free (default)", vf, vp, None,
                f"added peak {fmt_bytes(pf)} ({pf / ims:.1f}x the image)"),
            row(f"W2 formula, scipy.fft float32, workers={ALL}", ts["scipy"], vp, None,
                f"added peak {fmt_bytes(ps)} ({ps / ims:.1f}x the image)"), "",
            "Per-round ratios, median (min-max): voxa periodic / ESTIMATE floor " +
            rs(vp, ts["floor"]) + "; voxa periodic / MEASURE floor " + rs(vp, ts["floor M"]) +
            "; scipy.fft route / voxa periodic " + rs(ts["scipy"], vp) +
            "; voxa free / voxa periodic " + rs(vf, vp) + "; voxa free / box MEASURE floor " +
            rs(vf, ts["box floor M"]) + "; box / image MEASURE floor " +
            rs(ts["box floor M"], ts["floor M"]) + ".", ""]
        del floors
    print("\n".join(out) + "\n")
    sys.stdout.flush()


def main():
    wanted = [a for a in sys.argv[1:] if not a.startswith("--")]
    print(f"## The CPU frontier: voxa vs cc3d, edt, pyFFTW, scipy.fft\n\nmachine: {machine()}; "
          f"{versions()}; {ROUNDS} interleaved rounds{' (QUICK shapes)' if QUICK else ''}\n")
    t0 = time.time()
    for name, fn in (("label", bench_label), ("edt", bench_edt), ("rl", bench_rl)):
        if not wanted or name in wanted:
            fn()
    print(f"frontier wall time {time.time() - t0:.0f} s\n")


if __name__ == "__main__":
    main()
