"""voxa.dask vs in-memory voxa and dask-image, on issue 10's workloads, with
the threaded scheduler (the 2 cores of this machine):
- label of a (256, 512, 512) blob mask (~40 % set) in (64, 256, 256) chunks,
  and the same on a torus along the last two axes (dask-image's wrap_axes),
- binary opening with a radius-5 ball of the same mask,
- propagation until stable inside that mask from sparse seeds
  (binary_dilation(iterations=-1, mask=...), scipy's binary_propagation;
  dask-image raises NotImplementedError for iterations < 1),
- Otsu's threshold of a float32 image of that shape (skimage's value; dask-image
  has none), skimage's own call timed once beside it,
- regionprops_table of the blob mask's labels with that image (the C pass per
  chunk, sums merged up a tree),
- Richardson-Lucy, 10 iterations, PSF 32^3, (256, 512, 512) float32 in
  (128, 256, 256) chunks (default halo: one PSF extent).
voxa in memory and voxa.dask run interleaved (common.interleave); the ratio is
the median of the per-round ratios (min-max). dask-image takes tens of seconds
per call, so it runs once (its time is that one call). Results are checked:
voxa.dask labels == voxa.label == scipy numbering, openings equal; dask-image's
label count equals (its numbering differs). Two more label rows give the
floor of any Dask route: a compute() that only fills and assembles an int32
array of that shape, and per-chunk voxa labels without the merge.
--quick: (64, 256, 256) in (32, 128, 128), RL on (64, 256, 256) in
(32, 128, 128), fewer rounds; --no-peer skips dask-image, --no-rl the RL row."""
import os
import statistics
import sys
import time

import numpy as np
import dask

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import blob_mask, fmt_time, interleave, loadavg, ratio_stats  # noqa: E402

import dask.array as da  # noqa: E402

import voxa  # noqa: E402
import voxa.dask as vd  # noqa: E402

quick = "--quick" in sys.argv
shape, chunks = ((64, 256, 256), (32, 128, 128)) if quick else ((256, 512, 512), (64, 256, 256))
rl_shape, rl_chunks = ((64, 256, 256), (32, 128, 128)) if quick else \
    ((256, 512, 512), (128, 256, 256))
rounds = 3 if quick else 5
rl_rounds = 2 if quick else 1  # a full-size RL call takes minutes on 2 shared cores
load_before = loadavg()
mask = blob_mask(shape)
x = da.from_array(mask, chunks=chunks)


def _ones(block):
    return np.ones(block.shape, np.int32)


def _local(block):
    return voxa.label(block)[0]


def once(fn):
    t0 = time.perf_counter()
    r = fn()
    return time.perf_counter() - t0, r


def row(name, times_mem, times_dask, peer=None):
    med_m, med_d = statistics.median(times_mem), statistics.median(times_dask)
    r, lo, hi = ratio_stats(times_dask, times_mem)
    cells = [name, f"{fmt_time(med_m)} ({fmt_time(min(times_mem))}-{fmt_time(max(times_mem))})",
             f"{fmt_time(med_d)} ({fmt_time(min(times_dask))}-{fmt_time(max(times_dask))})",
             f"{r:.2f}x ({lo:.2f}-{hi:.2f})"]
    if peer is None:
        cells += ["not run", "-"]
    else:
        cells += [fmt_time(peer), f"{peer / med_d:.1f}x"]
    return "| " + " | ".join(cells) + " |"


rows = []
# ---- label
want, wn = voxa.label(mask)
got, gn = dask.compute(*vd.label(x), scheduler="threads")
assert int(gn) == wn and np.array_equal(got, want), "voxa.dask label differs"
del got
t = interleave([("mem", lambda: voxa.label(mask)),
                ("dask", lambda: dask.compute(*vd.label(x), scheduler="threads")),
                ("floor", lambda: x.map_blocks(_ones, dtype=np.int32).compute(scheduler="threads")),
                ("local", lambda: x.map_blocks(_local, dtype=np.int32).compute(scheduler="threads"))],
               rounds=rounds, warmup=1)
try:
    import dask_image.ndmeasure as dim_measure
    import dask_image.ndmorph as dim_morph
except ImportError:
    dim_measure = dim_morph = None
if "--no-peer" in sys.argv:
    dim_measure = dim_morph = None
peer = None
if dim_measure is not None:
    peer, (plab, pn) = once(lambda: dask.compute(*dim_measure.label(x), scheduler="threads"))
    assert int(pn) == wn, "dask-image's label count differs"
    del plab
rows.append(row("label", t["mem"], t["dask"], peer))
rows.append(row("(floor: compute() of an int32 array, no work)", t["mem"], t["floor"]))
rows.append(row("(per-chunk labels only, no merge)", t["mem"], t["local"]))
del want

# ---- label on a torus along the last two axes (dask-image's wrap_axes)
WRAP = (1, 2)
want, wn = voxa.label(mask, wrap_axes=WRAP)
got, gn = dask.compute(*vd.label(x, wrap_axes=WRAP), scheduler="threads")
assert int(gn) == wn and np.array_equal(got, want), "voxa.dask wrapped label differs"
del got
t = interleave([("mem", lambda: voxa.label(mask, wrap_axes=WRAP)),
                ("dask", lambda: dask.compute(*vd.label(x, wrap_axes=WRAP), scheduler="threads"))],
               rounds=rounds, warmup=0)
peer = None
if dim_measure is not None:
    peer, (plab, pn) = once(lambda: dask.compute(*dim_measure.label(x, wrap_axes=WRAP),
                                                 scheduler="threads"))
    assert int(pn) == wn, "dask-image's wrapped label count differs"
    del plab
rows.append(row(f"label, wrap_axes={WRAP}", t["mem"], t["dask"], peer))
del want

# ---- opening, ball of radius 5
ref = voxa.binary_opening(mask, ball=5)
assert np.array_equal(vd.binary_opening(x, ball=5).compute(scheduler="threads"), ref)
t = interleave([("mem", lambda: voxa.binary_opening(mask, ball=5)),
                ("dask", lambda: vd.binary_opening(x, ball=5).compute(scheduler="threads"))],
               rounds=rounds, warmup=0)
peer = None
if dim_morph is not None:
    peer, pr = once(lambda: dim_morph.binary_opening(x, structure=voxa.ball(5))
                    .compute(scheduler="threads"))
    assert np.array_equal(pr, ref), "dask-image's opening differs"
rows.append(row("opening ball r=5", t["mem"], t["dask"], peer))
del ref

# ---- propagation until stable inside the mask, from sparse seeds
seeds = mask & (np.random.default_rng(3).random(shape, dtype=np.float32) < 1e-5)
xs = da.from_array(seeds, chunks=chunks)
ref = voxa.binary_dilation(seeds, iterations=-1, mask=mask)
assert np.array_equal(vd.binary_dilation(xs, iterations=-1, mask=x).compute(scheduler="threads"),
                      ref)
t = interleave([("mem", lambda: voxa.binary_dilation(seeds, iterations=-1, mask=mask)),
                ("dask", lambda: vd.binary_dilation(xs, iterations=-1, mask=x)
                 .compute(scheduler="threads"))], rounds=rounds, warmup=0)
rows.append(row("propagation until stable, mask, 1e-5 seeds", t["mem"], t["dask"]))
del ref, seeds, xs
labels_mem = voxa.label(mask)[0]
del mask, x

# ---- Otsu's threshold of a float32 image
img = np.random.default_rng(4).gamma(2.0, 10.0, shape).astype(np.float32)
xf = da.from_array(img, chunks=chunks)
want = voxa.threshold_otsu(img)
assert vd.threshold_otsu(xf).compute(scheduler="threads") == want
t = interleave([("mem", lambda: voxa.threshold_otsu(img)),
                ("dask", lambda: vd.threshold_otsu(xf).compute(scheduler="threads"))],
               rounds=rounds, warmup=0)
sk_time = None
try:
    from skimage.filters import threshold_otsu as sk_otsu
    sk_time, sk_val = once(lambda: sk_otsu(img))
    assert sk_val == want, "skimage's threshold differs"
except ImportError:
    pass
rows.append(row("threshold_otsu float32" + (f" (skimage in memory: {fmt_time(sk_time)})"
                                            if sk_time else ""), t["mem"], t["dask"]))

# ---- regionprops_table of the labels, with the image
PROPS = ("label", "area", "centroid", "bbox", "intensity_mean", "intensity_max")
xl = da.from_array(labels_mem, chunks=chunks)
want = voxa.regionprops_table(labels_mem, img, PROPS)
got = vd.regionprops_table(xl, xf, PROPS).compute(scheduler="threads")
assert all(np.allclose(got[k], want[k], rtol=1e-12) for k in want)
t = interleave([("mem", lambda: voxa.regionprops_table(labels_mem, img, PROPS)),
                ("dask", lambda: vd.regionprops_table(xl, xf, PROPS).compute(scheduler="threads"))],
               rounds=rounds, warmup=0)
rows.append(row(f"regionprops_table, {len(want['label'])} objects, with intensity", t["mem"],
                t["dask"]))
del img, xf, xl, labels_mem

# ---- Richardson-Lucy, 10 iterations, PSF 32^3
if "--no-rl" in sys.argv:
    rl_shape = None
if rl_shape is not None:
    rng = np.random.default_rng(2)
    img = (rng.random(rl_shape, dtype=np.float32) * 100).astype(np.float32)
    psf = voxa.gaussian_psf((32, 32, 32), (3.0, 2.0, 2.0))
    xi = da.from_array(img, chunks=rl_chunks)
    t = interleave([("mem", lambda: voxa.richardson_lucy(img, psf, 10)),
                    ("dask", lambda: vd.richardson_lucy(xi, psf, 10).compute(scheduler="threads"))],
                   rounds=rl_rounds, warmup=0)
    rows.append(row(f"RL 10 it, PSF 32^3, {rl_shape} in {rl_chunks}", t["mem"], t["dask"]))

print(f"## voxa.dask ({shape} blob mask, ~40 % set, chunks "
      f"{chunks}; threaded scheduler)\n")
print("| workload | voxa in memory | voxa.dask | voxa.dask / in memory | dask-image | "
      "dask-image / voxa.dask |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
print(f"\nmedian (min-max) of {rounds} interleaved rounds after one warm-up ({rl_rounds} for RL); "
      f"dask-image: one call. Load average before: {load_before}; after: {loadavg()}.\n")
