"""Shared benchmark harness: warm-up, repeats, median and spread, peak memory,
ratios to peers, a markdown table. Every bench_*.py uses it so all figures are
measured the same way.

Peak memory: Linux's VmHWM (peak RSS) is reset through /proc/self/clear_refs
before each measured call; a call's "added peak" is its VmHWM minus the RSS
just before it: what the call itself needed on top of what was resident (its
outputs and temporaries; inputs allocated beforehand are not counted)."""
import os
import platform
import statistics
import time

import numpy as np


def _read_status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure(fn, repeats=5, warmup=1, max_seconds=None):
    """Run fn() warmup + repeats times. Returns dict(median, min, max, times,
    peak_bytes (process peak RSS), added_bytes (peak above the RSS at the
    call's start), result). If one call exceeds max_seconds, stops
    after it (fewer repeats)."""
    result = None
    for _ in range(warmup):
        t0 = time.perf_counter()
        result = fn()
        if max_seconds and time.perf_counter() - t0 > max_seconds:
            repeats = min(repeats, 1)
    times, peak, added = [], 0, 0
    for _ in range(repeats):
        result = None
        base = _read_status("VmRSS")
        _reset_peak()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        hwm = _read_status("VmHWM")
        peak = max(peak, hwm)
        added = max(added, hwm - base)
        if max_seconds and times[-1] > max_seconds:
            break
    return dict(median=statistics.median(times), min=min(times), max=max(times),
                times=times, peak_bytes=peak, added_bytes=added, result=result)


def fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.0f} us"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s"


def fmt_bytes(b):
    return f"{b / 2**20:.0f} MiB" if b < 2**30 else f"{b / 2**30:.2f} GiB"


def table(title, rows, ref_name):
    """rows: list of (name, measure-dict, note). "time vs voxa" is the row's
    median over the reference row's (how many times slower than voxa)."""
    ref = next(r[1] for r in rows if r[0] == ref_name)
    out = [f"### {title}", "",
           "| method | median | min-max | time vs voxa | added peak RSS | note |",
           "|---|---|---|---|---|---|"]
    for name, m, note in rows:
        ratio = m["median"] / ref["median"]
        out.append(f"| {name} | {fmt_time(m['median'])} | {fmt_time(m['min'])}-"
                   f"{fmt_time(m['max'])} | {ratio:.1f}x | {fmt_bytes(m['added_bytes'])} | {note} |")
    return "\n".join(out) + "\n"


def machine():
    cpu = platform.processor() or "cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import scipy
    return (f"{cpu}, {os.cpu_count()} cpus, Python {platform.python_version()}, "
            f"numpy {np.__version__}, scipy {scipy.__version__}, "
            f"{time.strftime('%Y-%m-%d')}")


# ---- W1 sample shared by the balls and label benchmarks ----------------------

def w1_points(shape, n=500, seed=0):
    """The W1 sample: n uniform random float centres in the volume."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0, 1, (n, len(shape))) * np.array(shape, dtype=np.float64)


def paint_bbox(shape, pts, r):
    """Exact W1 rule, one bounding box per point (float64, Python loop): the
    best plain-NumPy route, and the reference mask."""
    mask = np.zeros(shape, dtype=bool)
    for p in pts:
        lo = [max(0, int(np.ceil(c - r))) for c in p]
        hi = [min(s, int(np.floor(c + r)) + 1) for c, s in zip(p, shape)]
        if any(a >= b for a, b in zip(lo, hi)):
            continue
        grids = np.ogrid[tuple(slice(a, b) for a, b in zip(lo, hi))]
        d2 = sum(((g - c) ** 2 for g, c in zip(grids, p)), np.zeros(()))
        mask[tuple(slice(a, b) for a, b in zip(lo, hi))] |= d2 <= r * r
    return mask


def blob_mask(shape, seed=1, frac=0.4):
    """Realistic masks: union of balls around sparse random seeds, ~40 % set
    (the W4 blob mask; built with voxa's EDT, checked against scipy's in
    bench_morph)."""
    import voxa
    rng = np.random.default_rng(seed)
    seeds = rng.random(shape, dtype=np.float32) < max(3e-6, 60 / np.prod(shape))
    d = voxa.distance_transform_edt(~seeds, dtype=np.float32)
    return d < np.quantile(d[::2, ::2, ::2], frac)


def interleave(calls, rounds=11, warmup=1, clock=time.perf_counter):
    """Time several callables interleaved: each round calls every one once,
    in forward order on even rounds and reversed on odd ones, so slow drifts
    of a shared machine (other jobs, frequency) hit all of them alike.
    calls: list of (name, fn). Returns {name: [seconds per round]}; `clock`
    time.process_time gives CPU seconds (all threads) instead of wall time."""
    for _ in range(warmup):
        for _, fn in calls:
            fn()
    times = {name: [] for name, _ in calls}
    for r in range(rounds):
        for name, fn in (calls if r % 2 == 0 else calls[::-1]):
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return times


def ratio_stats(num, den):
    """Per-round ratios num[i] / den[i] of two interleaved series: (median,
    min, max). Robust to drift that a ratio of two medians would mix in."""
    r = [a / b for a, b in zip(num, den)]
    return statistics.median(r), min(r), max(r)


def loadavg():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def load_other_ext(path):
    """Load another build of the extension (a copy of _voxa*.so made before a
    change) beside the current one, for before/after timings interleaved in
    one process. The module's init symbol only depends on the last name part,
    so a copy loads under a package name of its own."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.ExtensionFileLoader("voxa_before._voxa", path)
    spec = importlib.util.spec_from_file_location("voxa_before._voxa", path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def swap_ext(ext):
    """Point voxa's Python modules at another build of the extension (from
    load_other_ext); returns the previous one. voxa's modules call
    `_voxa.run_op` through their own module attribute."""
    import importlib
    import voxa
    prev = voxa._voxa
    for m in ("voxa", "voxa.distance", "voxa.morphology", "voxa.binary", "voxa._backend"):
        mod = importlib.import_module(m)
        if hasattr(mod, "_voxa"):
            mod._voxa = ext
    return prev


def edt_timer(mask, threads, ext=None):
    """A no-argument function: voxa.distance_transform_edt(mask) as float32
    on `threads` threads through `ext` (a build from load_other_ext; None:
    the current one)."""
    import numpy as np
    import voxa
    ext = ext or voxa._voxa

    def run():
        prev = swap_ext(ext)
        try:
            ext.set_threads(threads)
            return voxa.distance_transform_edt(mask, dtype=np.float32)
        finally:
            swap_ext(prev)
    return run


def fast_size(n):
    """voxa's FFT box extent (deconv_plan.c): the smallest 2^a 3^b 5^c 7^d >= n."""
    s = max(n, 1)
    while True:
        r = s
        for p in (2, 3, 5, 7):
            while r % p == 0:
                r //= p
        if r == 1:
            return s
        s += 1
