"""voxa.dask vs in-memory voxa (and dask-image when installed), threaded
scheduler, on issue 10's workloads: label and a radius-5 ball opening of a
(256, 512, 512) blob mask in (64, 256, 256) chunks. Median of 3 (min-max);
labels checked equal. --quick: (64, 256, 256) in (32, 128, 128)."""
import statistics
import sys
import time

import numpy as np
import dask
import dask.array as da
from scipy import ndimage as ndi

import voxa
import voxa.dask as vd

quick = "--quick" in sys.argv
shape, chunks = ((64, 256, 256), (32, 128, 128)) if quick else ((256, 512, 512), (64, 256, 256))
rng = np.random.default_rng(0)
mask = ndi.gaussian_filter(rng.random(shape, dtype=np.float32), 3) > 0.5
x = da.from_array(mask, chunks=chunks)


def t(f, n=3):
    ts = []
    for _ in range(n):
        s = time.perf_counter()
        r = f()
        ts.append(time.perf_counter() - s)
    return statistics.median(ts), min(ts), max(ts), r


rows = []
m_in, _, _, (want, wn) = t(lambda: voxa.label(mask))
d = t(lambda: dask.compute(*vd.label(x), scheduler="threads"))
assert np.array_equal(d[3][0], want) and int(d[3][1]) == wn
rows.append(("label", m_in, d))
o_in = t(lambda: voxa.binary_opening(mask, ball=5))
od = t(lambda: vd.binary_opening(x, ball=5).compute(scheduler="threads"))
assert np.array_equal(od[3], o_in[3])
rows.append(("opening ball 5", o_in[0], od))
print(f"## voxa.dask vs in memory ({shape} blob mask, {mask.mean():.0%} foreground, chunks "
      f"{chunks}, threaded scheduler)\n")
print("| op | in memory | voxa.dask median (min-max) | dask / in memory |")
print("|---|---|---|---|")
for name, a, (m, lo, hi, _) in rows:
    print(f"| {name} | {a:.2f} s | {m:.2f} s ({lo:.2f}-{hi:.2f}) | {m / a:.2f}x |")
try:
    import dask_image.ndmeasure as dim
    s = time.perf_counter()
    dask.compute(*dim.label(x), scheduler="threads")
    print(f"\ndask-image ndmeasure.label: {time.perf_counter() - s:.1f} s")
except ImportError:
    print("\n(dask-image not installed: its figures are not in this run)")
print()
