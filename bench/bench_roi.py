"""W3: batch ROI extraction into one contiguous array, voxa vs its peers.

Peers, side by side in this process: a Python loop of slices into a
preallocated array, NumPy fancy indexing with broadcast index arrays, the
as_strided route (sliding_window_view indexed by the corners), and the floor:
np.copyto of the output's size between two preallocated arrays (memcpy
bandwidth). voxa runs with 1 and 2 threads, allocating its output, and with
out= (preallocated and already touched, as the floor's destination is).
Every peer's result is checked equal to voxa's.

Run alone: python bench/bench_roi.py [small|large2d|large3d ...]
(wrap in flock /tmp/voxa-bench.lock; the 3D workload holds ~1.9 GB).
Before/after a change: python bench/bench_roi.py --before OLD_voxa.so large3d
times a copy of the extension built before the change against the current one
and the memcpy floor, interleaved, into out=, 1 and 2 threads, wall and CPU
time. One build alone: python bench/bench_roi.py --paths large3d times its
copy paths forced one by one (VOXA_ROI_ORDER / VOXA_ROI_STORES; "patches,
plain" is the path before the slab order and streaming stores). --rounds N
sets the rounds (11).

The arrays are NumPy's: on Linux NumPy asks for transparent huge pages
(madvise) on large allocations, so the source and out= are huge-page backed
where THP is in "madvise" or "always" mode (check AnonHugePages in
/proc/self/smaps); nothing else is done about pages here."""
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import load_other_ext, machine, measure, ratio_stats, table  # noqa: E402

import voxa  # noqa: E402

WORKLOADS = {
    "small": ("50 x 64x64 from (1024,1280) uint8", (1024, 1280), np.uint8, 50, (64, 64)),
    "large2d": ("100,000 x 64x64 from (8192,8192) uint8", (8192, 8192), np.uint8, 100_000,
                (64, 64)),
    "large3d": ("10,000 x 32x32x32 from (256,1024,1024) uint16", (256, 1024, 1024), np.uint16,
                10_000, (32, 32, 32)),
}


def python_loop(img, corners, size):
    out = np.empty((len(corners),) + size, img.dtype)
    for i, c in enumerate(corners.tolist()):
        out[i] = img[tuple(slice(a, a + s) for a, s in zip(c, size))]
    return out


def fancy(img, corners, size):
    k = len(size)
    idx = []
    for d in range(k):
        shape = [1] * (k + 1)
        shape[d + 1] = size[d]
        idx.append(corners[:, d].reshape((-1,) + (1,) * k) + np.arange(size[d]).reshape(shape))
    return img[tuple(idx)]


def strided(img, corners, size):
    w = sliding_window_view(img, size)
    return w[tuple(corners.T)]


def run(key, repeats):
    title, shape, dtype, n, size = WORKLOADS[key]
    rng = np.random.default_rng(0)
    img = rng.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype)
    corners = np.stack([rng.integers(0, shape[d] - size[d], n, endpoint=True)
                        for d in range(len(size))], 1).astype(np.int64)
    out_bytes = n * int(np.prod(size)) * img.itemsize
    slow = dict(max_seconds=2.0)
    rows = []

    def note(m):
        return f"{out_bytes / m['median'] / 1e9:.1f} GB/s"

    voxa.set_threads(2)
    ref = voxa.extract_patches(img, corners, size)
    for t in (1, 2):
        voxa.set_threads(t)
        m = measure(lambda: voxa.extract_patches(img, corners, size), repeats=repeats)
        m.pop("result")
        rows.append((f"voxa extract_patches, {t} thread{'s' * (t > 1)}", m, note(m)))
    pre = np.empty_like(ref)
    pre.fill(1)
    for t in (1, 2):
        voxa.set_threads(t)
        m = measure(lambda: voxa.extract_patches(img, corners, size, out=pre), repeats=repeats)
        m.pop("result")
        rows.append((f"voxa, out= preallocated, {t} thread{'s' * (t > 1)}", m, note(m)))
    voxa.set_threads(0)
    del pre
    for name, fn in [("Python loop of slices", python_loop), ("NumPy fancy indexing", fancy),
                     ("as_strided (sliding_window_view[corners])", strided)]:
        m = measure(lambda: fn(img, corners, size), repeats=repeats, **slow)
        assert np.array_equal(m.pop("result"), ref), name
        rows.append((name, m, note(m)))
    src = ref
    dst = np.empty_like(ref)
    dst.fill(1)
    m = measure(lambda: np.copyto(dst, src), repeats=repeats)
    m.pop("result")
    rows.append(("floor: np.copyto of the output size", m, note(m)))
    del dst
    print(table(f"W3 {title} (output {out_bytes / 1e6:.0f} MB)", rows,
                "voxa extract_patches, 2 threads"))
    sys.stdout.flush()


def _timed_rounds(calls, rounds):
    """common.interleave, timing each call's wall clock and the process's CPU
    time (the CPU time leaves out the time the threads wait for a core on a
    loaded machine; with 2 threads it is their sum)."""
    import time
    for _, fn in calls:
        fn()
    wall = {k: [] for k, _ in calls}
    cpu = {k: [] for k, _ in calls}
    for r in range(rounds):
        for name, fn in (calls if r % 2 == 0 else calls[::-1]):
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return wall, cpu


def _copy_halves(dst, src):
    """memcpy of the same bytes by 2 threads (np.copyto releases the GIL)."""
    import threading
    h = len(src) // 2
    t = threading.Thread(target=np.copyto, args=(dst[:h], src[:h]))
    t.start()
    np.copyto(dst[h:], src[h:])
    t.join()


def compare(key, variants, rounds=11, threads=(1, 2)):
    """Interleaved rounds of extraction variants into one preallocated out=
    (each a (name, extract(img, corners, size, out), set_threads) triple, the
    first the reference) and the memcpy floor: np.copyto of the output's bytes
    between two pre-faulted arrays (1 thread, as glibc memcpy; and 2 threads
    on halves). Median and min-max of per-round ratios."""
    import statistics
    from common import loadavg
    title, shape, dtype, n, size = WORKLOADS[key]
    rng = np.random.default_rng(0)
    img = rng.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype)
    corners = np.stack([rng.integers(0, shape[d] - size[d], n, endpoint=True)
                        for d in range(len(size))], 1).astype(np.int64)
    table_ = {"corners": corners.astype(np.float64)}
    out = np.empty((n,) + size, dtype)
    out.fill(1)
    ref = voxa.extract_patches(img, corners, size)
    dst = np.empty_like(ref)
    dst.fill(1)
    lines = [f"### W3 {title}, out= preallocated, {rounds} interleaved rounds "
             f"(load before: {loadavg()})", "",
             f"| threads | variant | wall median (min-max) | / {variants[0][0]}, per round | "
             "% of memcpy (1 thread), per round | % of memcpy (2 threads) | CPU median | "
             "% of memcpy, CPU time |", "|---|---|---|---|---|---|---|---|"]
    for t in threads:
        calls = []
        for name, fn, set_threads in variants:
            def call(fn=fn, set_threads=set_threads):
                set_threads(t)
                fn(img, table_, size, out)
            calls.append((name, call))
        calls += [("floor", lambda: np.copyto(dst, ref)),
                  ("floor2", lambda: _copy_halves(dst, ref))]
        wall, cpu = _timed_rounds(calls, rounds)
        assert np.array_equal(out, ref)
        base = variants[0][0]
        for name, _, _ in variants:
            w = wall[name]
            r, lo, hi = ratio_stats(w, wall[base])
            b, blo, bhi = ratio_stats(wall["floor"], w)
            b2 = ratio_stats(wall["floor2"], w)[0]
            c = ratio_stats(cpu["floor"], cpu[name])
            lines.append(f"| {t} | {name} | {statistics.median(w) * 1e3:.1f} ms "
                         f"({min(w) * 1e3:.1f}-{max(w) * 1e3:.1f}) | {r:.2f} ({lo:.2f}-{hi:.2f}) | "
                         f"{100 * b:.0f} % ({100 * blo:.0f}-{100 * bhi:.0f}) | {100 * b2:.0f} % | "
                         f"{statistics.median(cpu[name]) * 1e3:.1f} ms | "
                         f"{100 * c[0]:.0f} % ({100 * c[1]:.0f}-{100 * c[2]:.0f}) |")
        for name in ("floor", "floor2"):
            w = wall[name]
            lines.append(f"| {t} | memcpy floor, {'2 threads' if name == 'floor2' else '1 thread'}"
                         f" | {statistics.median(w) * 1e3:.1f} ms ({min(w) * 1e3:.1f}-"
                         f"{max(w) * 1e3:.1f}) | | | | {statistics.median(cpu[name]) * 1e3:.1f} ms"
                         " | |")
    voxa.set_threads(0)
    print("\n".join(lines) + f"\n\n(load after: {loadavg()})\n")


def _run_op(mod, env=None):
    """An extraction through `mod`'s run_op, with the roi switches of `env`
    (VOXA_ROI_ORDER / VOXA_ROI_STORES) set for the call (None: automatic)."""
    def fn(img, table_, size, out):
        for k in ("VOXA_ROI_ORDER", "VOXA_ROI_STORES"):
            os.environ.pop(k, None)
        os.environ.update(env or {})
        mod.run_op("roi", img, out, **table_, size=size, mode="error", value=0.0)
    return fn


def before_after(key, old_path, rounds=11):
    """A copy of the extension built before a change against the current one."""
    old = load_other_ext(old_path)
    compare(key, [("before", _run_op(old), old.set_threads),
                  ("after", _run_op(voxa._voxa), voxa.set_threads)], rounds)


def paths(key, rounds=11):
    """The copy paths of the current build, forced one by one: patches in
    Z-order with plain stores (the path before slabs and streaming stores
    existed), slabs with plain stores, slabs with SSE2 streaming stores,
    and the automatic choice (slabs, AVX-512 streaming where the CPU has it)."""
    s = voxa.set_threads
    compare(key, [
        ("patches, plain", _run_op(voxa._voxa, {"VOXA_ROI_ORDER": "patches",
                                                "VOXA_ROI_STORES": "plain"}), s),
        ("slabs, plain", _run_op(voxa._voxa, {"VOXA_ROI_ORDER": "slabs",
                                              "VOXA_ROI_STORES": "plain"}), s),
        ("slabs, stream-sse2", _run_op(voxa._voxa, {"VOXA_ROI_ORDER": "slabs",
                                                    "VOXA_ROI_STORES": "stream-sse2"}), s),
        ("automatic", _run_op(voxa._voxa), s)], rounds)


if __name__ == "__main__":
    rounds = 11
    if "--rounds" in sys.argv:
        i = sys.argv.index("--rounds")
        rounds = int(sys.argv[i + 1])
        del sys.argv[i:i + 2]
    if "--before" in sys.argv:
        i = sys.argv.index("--before")
        path = sys.argv[i + 1]
        print(f"machine: {machine()}\n")
        for key in sys.argv[1:i] + sys.argv[i + 2:] or ["large3d", "large2d"]:
            before_after(key, path, rounds)
        sys.exit(0)
    if "--paths" in sys.argv:
        print(f"machine: {machine()}\n")
        for key in [a for a in sys.argv[1:] if not a.startswith("--")] or ["large3d"]:
            paths(key, rounds)
        sys.exit(0)
    keys = [a for a in sys.argv[1:] if not a.startswith("--")] or list(WORKLOADS)
    print(f"machine: {machine()}, voxa threads default {voxa.get_threads()}\n")
    for key in keys:
        run(key, repeats=20 if key == "small" else 5)
