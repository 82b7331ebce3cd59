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
and the memcpy floor, interleaved (common.interleave), into out=, 1 and 2 threads."""
import os
import sys

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import interleave, load_other_ext, machine, measure, ratio_stats, table  # noqa: E402

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


def before_after(key, old_path, rounds=11):
    """Interleaved: old build, new build, memcpy floor; into out=."""
    import statistics
    old = load_other_ext(old_path)
    title, shape, dtype, n, size = WORKLOADS[key]
    rng = np.random.default_rng(0)
    img = rng.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype)
    corners = np.stack([rng.integers(0, shape[d] - size[d], n, endpoint=True)
                        for d in range(len(size))], 1).astype(np.int64)
    out = np.empty((n,) + size, dtype)
    out.fill(1)
    ref = voxa.extract_patches(img, corners, size)
    dst = np.empty_like(ref)
    dst.fill(1)
    lines = [f"### before/after, W3 {title}, out= preallocated ({rounds} interleaved rounds)",
             "", "| threads | before | after | after/before per round | floor (np.copyto) | "
             "after: % of memcpy bandwidth, per round |", "|---|---|---|---|---|---|"]
    for t in (1, 2):
        voxa.set_threads(t)
        old.set_threads(t)
        ts = interleave([
            ("before", lambda: old.roi_extract(img, corners, size, False, "error", 0.0, out)),
            ("after", lambda: voxa._voxa.roi_extract(img, corners, size, False, "error", 0.0,
                                                     out)),
            ("floor", lambda: np.copyto(dst, ref))], rounds)
        assert np.array_equal(out, ref)
        m = {k: statistics.median(v) for k, v in ts.items()}
        r, lo, hi = ratio_stats(ts["after"], ts["before"])
        b, blo, bhi = ratio_stats(ts["floor"], ts["after"])
        lines.append(f"| {t} | {m['before'] * 1e3:.1f} ms | {m['after'] * 1e3:.1f} ms | "
                     f"{r:.2f} ({lo:.2f}-{hi:.2f}) | {m['floor'] * 1e3:.1f} ms | "
                     f"{100 * b:.0f} % ({100 * blo:.0f}-{100 * bhi:.0f}) |")
    voxa.set_threads(0)
    print("\n".join(lines) + "\n")


if __name__ == "__main__":
    if "--before" in sys.argv:
        i = sys.argv.index("--before")
        path = sys.argv[i + 1]
        for key in sys.argv[1:i] + sys.argv[i + 2:] or ["large3d", "large2d"]:
            before_after(key, path)
        sys.exit(0)
    keys = [a for a in sys.argv[1:] if not a.startswith("--")] or list(WORKLOADS)
    print(f"machine: {machine()}, voxa threads default {voxa.get_threads()}\n")
    for key in keys:
        run(key, repeats=20 if key == "small" else 5)
