"""W2: Richardson–Lucy deconvolution, seconds per iteration, voxa vs peers.

Side by side in this process (one after the other, so memory does not mix):
  voxa periodic / zero / free (default) / free + acceleration  (FFTW float32)
  the published W2 NumPy formula (np.fft, float64, one thread)
  skimage.restoration.richardson_lucy (clip=False; float32 in, float32 work)
  the W2 formula on scipy.fft in float32 with workers=1 and workers=all cores
  floor: four bare FFTW r2c/c2r transforms of the row's FFT box (the image
         for periodic, the padded box n+m-1 for zero/free; in-place, the
         row's planner flag and thread count), timed in C through the
         extension's rl_fft_floor hook.
Per-iteration times come from timestamps taken after every iteration (voxa:
its progress callback), so set-up (plans, the PSF transform) is reported
apart. voxa: median over 3 runs x N iterations; the slow peers: 2 iterations
once. Peak RSS: the process's VmHWM during the call (reset before it),
"added": above the RSS at the call's start (the input is already resident).

Then the acceleration figure: error to the known ground truth of a synthetic
blurred, noisy sample after k plain and k accelerated iterations.

Before/after a change (issue 14): python bench/bench_deconv.py
--before OLD_voxa.so [--rounds=N] [--threads=T] [--quick] times a copy of the
extension built before the change against the current one, each timing in a
fresh process (both builds link the same libfftw3f, whose wisdom is per
process: in one process the old build's ESTIMATE plans would reuse plans the
new one measured), each with its default planning and no wisdom cache;
rounds interleaved (old/new x periodic/free, order reversed every other
round), 5 iterations per call, per-iteration time from the progress stamps
(median of iterations 2-4: the first may include lazy set-up, the last may
skip work for a next iteration); then the added peak RSS of each mode,
plain and accelerated, each in a fresh subprocess (VmHWM minus the RSS
before the call; the float32 output allocated inside the measurement, as a
user's richardson_lucy does, so it counts). The quiet re-measurement runs
  python bench/bench_deconv.py --before /work/before6/_voxa_9b7d640.so
(`--threads=1`, `--rounds=N` optional).

The staged transform (free mode's default on 3-D boxes) against the 3-D
FFTW plans in the current build: python bench/bench_deconv.py --staged
[--rounds=N] [--threads=T] [--quick] times periodic (3-D plans, and staged
with VOXA_RL_STAGED=1) and free (staged, and 3-D plans with
VOXA_RL_STAGED=0), interleaved, per-round ratios to periodic's 3-D plans.

The staged path's z stage, z-FFTs against the direct convolution, in the
current build: python bench/bench_deconv.py --zconv [--rounds=N]
[--threads=T] [--planning=estimate|auto] [--quick], each timing in a fresh
process, planning 'auto' (the default) and 'estimate' unless one is named.

Usage: python bench/bench_deconv.py [--quick]   (--quick: small shapes)
"""
import os
import statistics
import sys
import time

import numpy as np
import scipy.fft as sfft
import scipy.ndimage
import scipy.signal

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import _read_status, _reset_peak, fast_size, fmt_bytes, machine  # noqa: E402

import voxa  # noqa: E402
from skimage import restoration  # noqa: E402

QUICK = "--quick" in sys.argv


def peak_run(fn):
    """Run fn() -> (setup_s, [per-iteration s]); add peak and added RSS."""
    _reset_peak()
    base = _read_status("VmRSS")
    setup, its = fn()
    hwm = _read_status("VmHWM")
    return dict(setup=setup, its=its, peak=hwm, added=max(0, hwm - base))


def voxa_run(g, h, n, **kw):
    stamps = []
    t0 = time.perf_counter()
    voxa.richardson_lucy(g, h, n, progress=lambda d, t: stamps.append(time.perf_counter()), **kw)
    return stamps[0] - t0, list(np.diff(stamps))


def w2_numpy(g, h, n):
    t0 = time.perf_counter()
    g = g.astype(np.float64)
    s = g.shape
    pad = [((a - b) // 2, a - b - (a - b) // 2) for a, b in zip(s, h.shape)]
    hp = np.roll(np.pad(h.astype(np.float64), pad), [x // 2 for x in s], axis=tuple(range(g.ndim)))
    H = np.fft.rfftn(hp)
    del hp
    f = g.copy()
    t1 = time.perf_counter()
    its = []
    for _ in range(n):
        ratio = g / np.fft.irfftn(np.fft.rfftn(f) * H, s=s, axes=tuple(range(g.ndim)))
        f *= np.fft.irfftn(np.conj(np.conj(np.fft.rfftn(ratio)) * H), s=s,
                           axes=tuple(range(g.ndim)))
        del ratio
        its.append(time.perf_counter() - t1 - sum(its))
    return t1 - t0, its


def w2_scipy(g, h, n, workers):
    t0 = time.perf_counter()
    s = g.shape
    ax = tuple(range(g.ndim))
    pad = [((a - b) // 2, a - b - (a - b) // 2) for a, b in zip(s, h.shape)]
    hp = np.roll(np.pad(h.astype(np.float32), pad), [x // 2 for x in s], axis=ax)
    H = sfft.rfftn(hp, workers=workers)
    del hp
    f = g.copy()
    t1 = time.perf_counter()
    its = []
    for _ in range(n):
        ratio = g / sfft.irfftn(sfft.rfftn(f, workers=workers) * H, s=s, axes=ax, workers=workers)
        f *= sfft.irfftn(sfft.rfftn(ratio, workers=workers) * H.conj(), s=s, axes=ax,
                         workers=workers)
        del ratio
        its.append(time.perf_counter() - t1 - sum(its))
    return t1 - t0, its


def skimage_run(g, h, n):
    # skimage has no per-iteration hook: time n iterations, report the mean.
    t0 = time.perf_counter()
    restoration.richardson_lucy(g, h, num_iter=n, clip=False)
    dt = time.perf_counter() - t0
    return 0.0, [dt / n] * n


def fmt_s(s):
    return f"{s * 1e3:.0f} ms" if s < 1 else f"{s:.2f} s"


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


VOXA_ROWS = [  # (name, threads, kwargs, note)
    ("voxa periodic", 1, dict(boundary="periodic"), "= W2 formula"),
    ("voxa zero", 1, dict(boundary="zero"), "= scikit-image"),
    ("voxa free (default)", 1, dict(boundary="free"), "wrap-free: box n+m-1"),
    ("voxa free + accelerate", 1, dict(boundary="free", accelerate=True), "Biggs-Andrews"),
    ("voxa periodic", 2, dict(boundary="periodic"), "= W2 formula"),
    ("voxa free (default)", 2, dict(boundary="free"), "wrap-free: box n+m-1"),
    ("voxa periodic, FFTW_MEASURE", 1, dict(boundary="periodic", measure=True), "runs last"),
]


def speed_table(title, g, h, n_voxa, n_peer):
    allc = os.cpu_count()
    load0 = loadavg()
    floors = {}
    for t, meas in [(1, False), (2, False)]:
        voxa.set_threads(t)
        floors[t, meas] = voxa._voxa.rl_fft_floor(g.shape, reps=5, measure=meas)
    rows = []
    # FFTW keeps MEASURE wisdom and later ESTIMATE plans reuse it: every
    # ESTIMATE row runs before anything is planned with MEASURE.
    for name, t, kw, note in VOXA_ROWS:
        voxa.set_threads(t)
        kw = dict(kw)
        meas = kw.pop("measure", False)
        if meas and (t, True) not in floors:
            floors[t, True] = voxa._voxa.rl_fft_floor(g.shape, reps=5, measure=True)
        fn = (lambda: voxa_run_measure(g, h, n_voxa, **kw)) if meas else (
            lambda: voxa_run(g, h, n_voxa, **kw))
        runs = [peak_run(fn) for _ in range(3)]
        its = [x for r in runs for x in r["its"]]
        box = g.shape if kw["boundary"] == "periodic" else tuple(
            fast_size(n + m - 1) for n, m in zip(g.shape, h.shape))
        if box != g.shape and (box, t) not in floors:
            floors[box, t] = voxa._voxa.rl_fft_floor(box, reps=3)
        fl = statistics.median(floors[t, meas] if box == g.shape else floors[box, t])
        rows.append((f"{name}, {t} thread{'s' if t > 1 else ''}", statistics.median(its),
                     min(its), max(its), statistics.median(r["setup"] for r in runs),
                     max(r["peak"] for r in runs), max(r["added"] for r in runs), fl, note))
    voxa.set_threads(0)
    peers = [("W2 NumPy formula (np.fft float64, 1 thread)", lambda: w2_numpy(g, h, n_peer), ""),
             ("skimage richardson_lucy (clip=False)", lambda: skimage_run(g, h, n_peer),
              f"mean of {n_peer}"),
             ("W2 formula, scipy.fft float32, workers=1", lambda: w2_scipy(g, h, n_peer, 1), ""),
             (f"W2 formula, scipy.fft float32, workers={allc}",
              lambda: w2_scipy(g, h, n_peer, allc), "")]
    for name, fn, note in peers:
        r = peak_run(fn)
        rows.append((name, statistics.median(r["its"]), min(r["its"]), max(r["its"]), r["setup"],
                     r["peak"], r["added"], None, note or f"{n_peer} iterations"))
    ref = rows[0][1]
    fl_txt = "; ".join(
        (f"{t} thread{'s' if t > 1 else ''} {'MEASURE' if m else 'ESTIMATE'} "
         if not isinstance(t, tuple) else f"padded box {t}, {m} thread{'s' if m > 1 else ''} "
         "ESTIMATE ") + f"{fmt_s(statistics.median(v))} ({fmt_s(min(v))}-{fmt_s(max(v))})"
        for (t, m), v in floors.items())
    out = [f"### {title}", "",
           f"image {g.shape} float32 ({fmt_bytes(g.nbytes)}), PSF {h.shape}. "
           f"Floor = 4 bare FFTW in-place r2c/c2r of {g.shape} (zero/free rows: of their padded "
           f"box): {fl_txt}. "
           f"Load average before/after: {load0} / {loadavg()}.", "",
           "| method | s / iteration | min-max | time vs voxa periodic 1 thread | vs floor "
           "| set-up | peak RSS | added peak | note |", "|---|---|---|---|---|---|---|---|---|"]
    for name, med, lo, hi, setup, peak, added, fl, note in rows:
        vf = f"{med / fl:.2f}x" if fl else "-"
        out.append(f"| {name} | {fmt_s(med)} | {fmt_s(lo)}-{fmt_s(hi)} | {med / ref:.2f}x | "
                   f"{vf} | {fmt_s(setup)} | {fmt_bytes(peak)} | {fmt_bytes(added)} | {note} |")
    return "\n".join(out) + "\n"


def voxa_run_measure(g, h, n, **kw):
    """voxa with FFTW_MEASURE plans through the extension (wisdom from the
    floor's planning is reused within the process)."""
    stamps = []
    out = np.empty(g.shape, np.float32)
    t0 = time.perf_counter()
    voxa._voxa.run_op("deconvolve", g, out, psf=h, iterations=n, measure=True,
                      progress=lambda d, t: stamps.append(time.perf_counter()), **kw)
    return stamps[0] - t0, list(np.diff(stamps))


def synthetic(shape, psf_shape, sigma, seed=0):
    """Background 2 plus 300 Gaussian blobs (sigma 1.5 voxels, peak ~1000),
    blurred ('same', zero outside), Poisson noise."""
    rng = np.random.default_rng(seed)
    truth = np.zeros(shape)
    np.add.at(truth, tuple(rng.integers(0, s, 300) for s in shape), 1.0)
    truth = scipy.ndimage.gaussian_filter(truth, 1.5)
    truth = 2 + truth * (1000 / truth.max())
    psf = voxa.gaussian_psf(psf_shape, sigma, dtype=np.float64)
    blurred = scipy.signal.fftconvolve(truth, psf, "same")
    noisy = rng.poisson(np.maximum(blurred, 0)).astype(np.float32)
    return truth, noisy, psf


def accel_table():
    shape = (32, 128, 128) if QUICK else (64, 256, 256)
    truth, g, psf = synthetic(shape, (15, 15, 15), (2.5, 1.5, 1.5))
    nrm = np.linalg.norm(truth)
    err = lambda f: float(np.linalg.norm(f - truth) / nrm)
    ks = [5, 10, 15, 20, 30, 40, 60, 80]
    plain = {k: err(voxa.richardson_lucy(g, psf, k)) for k in ks}
    acc = {k: err(voxa.richardson_lucy(g, psf, k, accelerate=True)) for k in ks[:6]}

    def plain_needed(e):
        """Plain iterations to reach error e (linear interpolation on the
        decreasing part of the plain curve)."""
        prev = None
        for k in ks:
            if plain[k] <= e:
                if prev is None:
                    return f"<= {k}"
                k0, e0 = prev
                return f"{k0 + (k - k0) * (e0 - e) / (e0 - plain[k]):.0f}"
            if prev and plain[k] > prev[1]:
                break
            prev = (k, plain[k])
        return "never (below plain's best)"

    kp = min(plain, key=plain.get)
    ka = min(acc, key=acc.get)
    out = ["### Acceleration (Biggs-Andrews): relative L2 error to the ground truth", "",
           f"synthetic {shape} sample: 300 Gaussian blobs (sigma 1.5, peak 1000) on background 2, "
           f"Gaussian PSF (15,15,15) sigma (2.5,1.5,1.5), Poisson noise; boundary free. Error of "
           f"the blurred input: {err(g):.4f}. Best error: plain {plain[kp]:.4f} at {kp} "
           f"iterations, accelerated {acc[ka]:.4f} at {ka} (noise is amplified past the best "
           f"point, as usual for RL on noisy data).", "",
           "| iterations | plain | accelerated | plain iterations for the accelerated error |",
           "|---|---|---|---|"]
    for k in ks:
        a = acc.get(k)
        out.append(f"| {k} | {plain[k]:.4f} | {'-' if a is None else f'{a:.4f}'} | "
                   f"{plain_needed(a) if a is not None and k <= ka else '-'} |")
    return "\n".join(out) + "\n"


def rounds_threads(rounds):
    """--rounds=N and --threads=T from the command line (default threads 2)."""
    threads = 2
    for a in sys.argv:
        if a.startswith("--rounds="):
            rounds = int(a.split("=", 1)[1])
        if a.startswith("--threads="):
            threads = int(a.split("=", 1)[1])
    return rounds, threads


def iter_one(path, boundary, threads, quick, planning="auto"):
    """Seconds per iteration (median of iterations 2-4) in this fresh process,
    with the build at `path` ("-": this one, with `planning`; an old build:
    its default), no wisdom cache (printed on stdout)."""
    from common import load_other_ext
    mod = voxa._voxa if path == "-" else load_other_ext(path)
    mod.set_threads(int(threads))
    shape = (32, 128, 128) if quick == "1" else (128, 512, 512)
    g = np.random.default_rng(0).random(shape, dtype=np.float32) + 0.1
    h = voxa.gaussian_psf((32, 32, 32), (3, 2, 2))
    stamps = []
    out = np.empty(shape, np.float32)
    # an old build may predate the planning option
    extra = {"planning": planning} if path == "-" else {}
    mod.run_op("deconvolve", g, out, psf=h, boundary=boundary, iterations=5,
               progress=lambda d, t: stamps.append(time.perf_counter()), **extra)
    print(statistics.median(np.diff(stamps)[1:4]))


def before_after(old_path):
    """Old build vs this one, every timing in a fresh process: both builds
    link the same libfftw3f, so in one process the old build's ESTIMATE plans
    would reuse the plans this build measured (FFTW wisdom is per process)."""
    import subprocess
    from common import loadavg, ratio_stats
    rounds, threads = rounds_threads(5 if QUICK else 11)
    shape = (32, 128, 128) if QUICK else (128, 512, 512)
    ims = 4 * shape[0] * shape[1] * shape[2]
    env = dict(os.environ, VOXA_FFTW_WISDOM="off")

    def child(*args):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), *map(str, args)],
                           capture_output=True, text=True, check=True, env=env)
        return float(r.stdout.split()[-1])

    names = [("before periodic", old_path, "periodic"), ("before free", old_path, "free"),
             ("after periodic", "-", "periodic"), ("after free", "-", "free")]
    box = {n: [] for n, _, _ in names}
    load0 = loadavg()
    for r in range(rounds):  # interleaved, the order reversed every other round
        for n, path, b in (names if r % 2 == 0 else names[::-1]):
            box[n].append(child("--iter-one", path, b, threads, int(QUICK)))
    load1 = loadavg()
    peaks = {(n, acc): int(child("--peak-one", path, b, acc, threads, int(QUICK)))
             for n, path, b in names for acc in (0, 1)}
    print(f"### before/after, RL {shape} float32, PSF (32,32,32), {threads} thread(s), "
          f"{rounds} interleaved rounds, each timing in a fresh process with its build's "
          f"default planning and no wisdom cache (load {load0} / {load1})\n")
    print("| method | s/iteration median | min-max | added peak (x image) | "
          "accelerated: added peak |\n|---|---|---|---|---|")
    for n, ts in box.items():
        p0, p1 = peaks[n, 0], peaks[n, 1]
        print(f"| {n} | {statistics.median(ts):.3f} | {min(ts):.3f}-{max(ts):.3f} | "
              f"{fmt_bytes(p0)} ({p0 / ims:.2f}x) | {fmt_bytes(p1)} ({p1 / ims:.2f}x) |")

    def rs(a, b):
        m, lo, hi = ratio_stats(box[a], box[b])
        return f"{m:.2f}x ({lo:.2f}-{hi:.2f})"
    print(f"\nper round, median (min-max): free/periodic before {rs('before free', 'before periodic')}, "
          f"after {rs('after free', 'after periodic')}; after/before free "
          f"{rs('after free', 'before free')}, periodic {rs('after periodic', 'before periodic')}\n")


def zconv_table():
    """The staged path's z stage, z-FFTs (VOXA_RL_ZCONV=fft) vs direct (the
    default for this PSF), in this build, each timing in a fresh process
    (no wisdom carried between them), both planning modes; rounds
    interleaved, the order reversed every other round."""
    import subprocess
    from common import loadavg, ratio_stats
    rounds, threads = rounds_threads(5 if QUICK else 11)
    shape = (32, 128, 128) if QUICK else (128, 512, 512)

    def child(boundary, zconv, planning):
        env = dict(os.environ, VOXA_FFTW_WISDOM="off", VOXA_RL_ZCONV=zconv)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--iter-one", "-",
                            boundary, str(threads), str(int(QUICK)), planning],
                           capture_output=True, text=True, check=True, env=env)
        return float(r.stdout.split()[-1])

    plannings = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--planning=")]
    for planning in plannings or ("auto", "estimate"):
        names = [(f"{b}, z {z}", b, z) for z in ("fft", "direct") for b in ("periodic", "free")]
        box = {n: [] for n, _, _ in names}
        load0 = loadavg()
        for r in range(rounds):
            for n, b, z in (names if r % 2 == 0 else names[::-1]):
                box[n].append(child(b, z, planning))
        load1 = loadavg()
        print(f"### z stage: z-FFTs vs direct, RL {shape} float32, PSF (32,32,32), planning="
              f"'{planning}', {threads} thread(s), {rounds} interleaved rounds, fresh process "
              f"per timing (load {load0} / {load1})\n")
        print("| method | s/iteration median | min-max |\n|---|---|---|")
        for n, ts in box.items():
            print(f"| {n} | {statistics.median(ts):.3f} | {min(ts):.3f}-{max(ts):.3f} |")

        def rs(a, b):
            m, lo, hi = ratio_stats(box[a], box[b])
            return f"{m:.2f}x ({lo:.2f}-{hi:.2f})"
        print(f"\nper round, median (min-max): direct/fft periodic "
              f"{rs('periodic, z direct', 'periodic, z fft')}, free "
              f"{rs('free, z direct', 'free, z fft')}; free/periodic with z-FFTs "
              f"{rs('free, z fft', 'periodic, z fft')}, direct "
              f"{rs('free, z direct', 'periodic, z direct')}\n")


def staged_table():
    from common import interleave, loadavg, ratio_stats
    rounds, threads = rounds_threads(5 if QUICK else 11)
    shape = (32, 128, 128) if QUICK else (128, 512, 512)
    g = np.random.default_rng(0).random(shape, dtype=np.float32) + 0.1
    h = voxa.gaussian_psf((32, 32, 32), (3, 2, 2))
    voxa.set_threads(threads)
    prev = os.environ.get("VOXA_RL_STAGED")

    def per_iter(boundary, env):
        os.environ["VOXA_RL_STAGED"] = env  # read when the plan is made
        stamps = []
        out = np.empty(shape, np.float32)
        voxa._voxa.run_op("deconvolve", g, out, psf=h, boundary=boundary, iterations=4,
                          progress=lambda d, t: stamps.append(time.perf_counter()))
        return statistics.median(np.diff(stamps)[:3])
    rows = [("periodic, 3-D plans", "periodic", "0"), ("periodic, staged", "periodic", "1"),
            ("free, staged (default)", "free", "1"), ("free, 3-D plans", "free", "0")]
    box = {r[0]: [] for r in rows}
    calls = [(n, (lambda n=n, b=b, e=e: box[n].append(per_iter(b, e)))) for n, b, e in rows]
    load0 = loadavg()
    interleave(calls, rounds)
    load1 = loadavg()
    if prev is None:
        os.environ.pop("VOXA_RL_STAGED", None)
    else:
        os.environ["VOXA_RL_STAGED"] = prev
    print(f"### staged vs 3-D plans, RL {shape} float32, PSF (32,32,32), {threads} thread(s), "
          f"{rounds} interleaved rounds (load {load0} / {load1})\n")
    print("| method | s/iteration median | min-max | / periodic 3-D per round |\n|---|---|---|---|")
    ref = box[rows[0][0]][-rounds:]
    for n, ts in box.items():
        ts = ts[-rounds:]
        m, lo, hi = ratio_stats(ts, ref)
        print(f"| {n} | {statistics.median(ts):.3f} | {min(ts):.3f}-{max(ts):.3f} | "
              f"{m:.2f}x ({lo:.2f}-{hi:.2f}) |")
    print()


def peak_one(path, boundary, acc, threads, quick):
    """One added-peak measurement in this fresh process (bytes on stdout)."""
    from common import load_other_ext
    mod = voxa._voxa if path == "-" else load_other_ext(path)
    mod.set_threads(int(threads))
    shape = (32, 128, 128) if quick == "1" else (128, 512, 512)
    g = np.random.default_rng(0).random(shape, dtype=np.float32) + 0.1
    h = voxa.gaussian_psf((32, 32, 32), (3, 2, 2))
    base = _read_status("VmRSS")
    _reset_peak()
    out = np.empty(shape, np.float32)
    mod.run_op("deconvolve", g, out, psf=h, boundary=boundary, iterations=2,
               accelerate=acc == "1")
    print(_read_status("VmHWM") - base)


def main():
    # modes: (function, how many arguments follow the flag)
    modes = {"--iter-one": (iter_one, 5), "--peak-one": (peak_one, 5), "--zconv": (zconv_table, 0),
             "--staged": (staged_table, 0), "--before": (before_after, 1)}
    for flag, (fn, nargs) in modes.items():
        if flag in sys.argv:
            at = sys.argv.index(flag) + 1
            fn(*sys.argv[at:at + nargs])
            return
    print(f"## W2 Richardson-Lucy\n\nmachine: {machine()}\n")
    if "--accel" in sys.argv:
        print(accel_table())
        return
    rng = np.random.default_rng(0)
    if QUICK:
        g3, g2 = (rng.random((32, 128, 128)), rng.random((512, 512)))
    else:
        g3, g2 = (rng.random((128, 512, 512)), rng.random((2048, 2048)))
    g2 = g2.astype(np.float32) + 0.1
    h2 = voxa.gaussian_psf((31, 31), (4, 4))
    print(speed_table("2D (2048, 2048), PSF (31, 31)" if not QUICK else "2D quick", g2, h2, 10, 3))
    del g2
    g3 = g3.astype(np.float32) + 0.1
    h3 = voxa.gaussian_psf((32, 32, 32), (3, 2, 2))
    print(speed_table("3D (128, 512, 512), PSF (32, 32, 32)" if not QUICK else "3D quick",
                      g3, h3, 6, 2))
    del g3
    print(accel_table())


if __name__ == "__main__":
    main()
