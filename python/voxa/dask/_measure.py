"""voxa.dask.regionprops_table: the in-memory table of a dask label image, from
per-chunk measurements merged up a tree.

Each chunk is measured alone by the C pass (``_voxa.measure``, chunk-local
coordinates). Its rows become mergeable sums: voxel counts, coordinate sums
(exact integers: the C centroid is sum / count in float64, and rint(centroid x
count) gives the sum back while it is below 2^50, checked), bounding boxes,
intensity sums, minima and maxima, coordinate x intensity sums and, for the
shape properties and intensity_std, central second moments and squared
intensity deviations (merged by the parallel axis theorem, as Chan et al.
merge variances); then shifted to the chunk's origin. Pairs of partial tables
merge by label (sums add, boxes and extremes widen) up a binary tree, and the
root applies the C table's own formulas. Label, num_pixels, area, bbox and
centroid equal the in-memory table bit for bit; the intensity columns agree to
rounding (float64 sums in another order, as ``voxa measure`` by blocks).
Memory per task: one chunk, or the rows of the labels of its subtree.

The 2-D perimeter needs each border pixel's 3x3 neighbourhood of border
flags: each chunk, grown by 2 pixels of its neighbours, counts the border
pixels of its own core per weight (integers), and the counts add up the tree
(``core_counts``): bit for bit the in-memory perimeter. The Euler number
(2-D, 3-D) is a sum over lattice cells, each counted by the chunk whose core
holds its lowest corner, with a voxel of context on each side: exact
integers.
"""
import dask
import dask.array as da
import numpy as np

from .. import _voxa
from .._arrays import native
from .._regionprops_table import decode
from ._chunks import at_least, tree

_EXACT = 2.0**50  # coordinate sums recovered exactly below this


def _partial(labels, intensity, origin, moments, std):
    labels = np.asarray(labels)
    inten = None if intensity is None else native(np.asarray(intensity))
    cols = decode(_voxa.measure(native(labels), inten, None, moments, std), labels.ndim)
    nd, count = labels.ndim, cols["num_pixels"]
    org = np.asarray(origin, np.int64)
    csum_f = cols["centroid"] * count[:, None]
    if csum_f.size and csum_f.max() >= _EXACT:
        raise ValueError("regionprops_table: a chunk's coordinate sums reach 2^50; use smaller "
                         "chunks")
    part = {"label": cols["label"], "count": count,
            "csum": np.rint(csum_f).astype(np.int64) + org * count[:, None],
            "lo": cols["bbox"][:, :nd] + org, "hi": cols["bbox"][:, nd:] + org}
    if inten is not None:
        s = cols["intensity_sum"]
        part.update(isum=s, imin=cols["intensity_min"], imax=cols["intensity_max"],
                    wsum=cols["centroid_weighted"] * s[:, None] + org * s[:, None])
    if moments:
        part["m2"] = cols["moments2"]  # central: the same at any origin
    if std and inten is not None:
        part["isq"] = cols["intensity_std"] ** 2 * count  # squared deviations about the mean
    return part


_HOW = {"count": np.add, "csum": np.add, "isum": np.add, "wsum": np.add, "lo": np.minimum,
        "imin": np.minimum, "hi": np.maximum, "imax": np.maximum}


def _merge(a, b):
    lab = np.concatenate([a["label"], b["label"]])
    order = np.argsort(lab, kind="stable")
    lab = lab[order]
    if lab.size == 0:
        return a
    starts = np.flatnonzero(np.r_[True, lab[1:] != lab[:-1]])
    out = {"label": lab[starts]}
    for k, ufunc in _HOW.items():
        if k in a:
            v = np.concatenate([a[k], b[k]])[order]
            out[k] = ufunc.reduceat(v, starts, axis=0)
    if "m2" in a:
        out["m2"] = _merge_spread(a, b, order, starts, "m2", "csum")
    if "isq" in a:
        out["isq"] = _merge_spread(a, b, order, starts, "isq", "isum")
    return out


def _merge_spread(a, b, order, starts, key, sums):
    """Spreads about the mean of labels found in both halves, by the parallel
    axis theorem (as Chan et al. merge variances, and the C pass its tiles):
    qa + qb + d d^T na nb / (na + nb), d the difference of the halves' means
    (sums / counts). `key`: the squared intensity deviations (isq, with the
    intensity sums) or the central second moments (m2, with the coordinate
    sums). A label appears at most once per half: a group is one row or two."""
    q = np.concatenate([a[key], b[key]])[order]
    cnt = np.concatenate([a["count"], b["count"]])[order].astype(np.float64)
    s = np.concatenate([a[sums], b[sums]])[order].astype(np.float64)
    out = q[starts].copy()
    two = starts[np.diff(np.r_[starts, len(order)]) == 2]
    if len(two):
        na, nb = cnt[two], cnt[two + 1]
        lift = (slice(None),) + (None,) * (s.ndim - 1)  # counts against per-axis sums
        d = s[two] / na[lift] - s[two + 1] / nb[lift]
        dd = d * d if d.ndim == 1 else d[:, :, None] * d[:, None, :]
        w = (na * nb / (na + nb))[(slice(None),) + (None,) * (dd.ndim - 1)]
        out[np.searchsorted(starts, two)] = q[two] + q[two + 1] + dd * w
    return out


def _table(part, sp, nd):
    """The C table's columns from merged sums (measure_table.c's formulas)."""
    sp = np.ones(nd) if sp is None else sp
    pixel = sp[0]
    for d in range(1, nd):
        pixel = pixel * sp[d]
    cnt = part["count"].astype(np.float64)
    cols = {"label": part["label"], "num_pixels": part["count"], "area": cnt * pixel,
            "centroid": part["csum"].astype(np.float64) * sp / cnt[:, None],
            "bbox": np.concatenate([part["lo"], part["hi"]], axis=1)}
    if "isum" in part:
        s, lo = part["isum"], part["lo"].astype(np.float64)
        cols.update(intensity_sum=s, intensity_mean=s / cnt, intensity_min=part["imin"],
                    intensity_max=part["imax"],
                    centroid_weighted=(part["wsum"] - lo * s[:, None]) * sp / s[:, None]
                    + lo * sp)
    if "m2" in part:
        cols["moments2"] = part["m2"]
    if "isq" in part:
        cols["intensity_std"] = np.sqrt(part["isq"] / cnt)
    return cols


def measure(labels, intensity, sp, moments=False, std=False):
    """A Delayed of the merged columns ({property: array}, as _regionprops_table.decode;
    with `moments`, moments2 too)."""
    starts = [np.concatenate([[0], np.cumsum(c)[:-1]]) for c in labels.chunks]
    lblocks = labels.to_delayed().ravel()
    iblocks = intensity.to_delayed().ravel() if intensity is not None else [None] * len(lblocks)
    parts = []
    for idx, lb, ib in zip(np.ndindex(*labels.numblocks), lblocks, iblocks):
        origin = [int(starts[d][i]) for d, i in enumerate(idx)]
        parts.append(dask.delayed(_partial)(lb, ib, origin, moments, std))
    return dask.delayed(_table)(tree(parts, _merge), sp, labels.ndim)


# per cell-counting property: the C binding, counts per label, the context
# each chunk needs on every side
_COUNTS = {"perimeter": ("perimeter_counts", 3, 2), "euler_number": ("euler_counts", 1, 1)}


def _chunk_counts(block, core_lo, core_hi, prop):
    """(labels, their counts) of one chunk with its context (pixels of its
    neighbours, none at the image's edges): the labels of the core for the
    perimeter (its border pixels), of the whole block for the Euler number
    (a cell at the core's low corner also touches the context's voxels)."""
    fn, k, _ = _COUNTS[prop]
    block = native(np.asarray(block))
    core = block[tuple(slice(a, b) for a, b in zip(core_lo, core_hi))]
    rows = np.unique(core if prop == "perimeter" else block)
    rows = np.ascontiguousarray(rows[rows > 0], np.int64)
    counts = np.frombuffer(getattr(_voxa, fn)(block, rows, core_lo, core_hi),
                           np.int64).reshape(-1, k)
    return rows, counts


def _add_counts(a, b):
    rows = np.concatenate([a[0], b[0]])
    counts = np.concatenate([a[1], b[1]])
    order = np.argsort(rows, kind="stable")
    rows, counts = rows[order], counts[order]
    if rows.size == 0:
        return rows, counts
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    return rows[starts], np.add.reduceat(counts, starts, axis=0)


def core_counts(labels, prop):
    """A Delayed of (labels, counts): every label's integer counts of `prop`
    ('perimeter': its weight counts, voxa_measure_perimeter_counts;
    'euler_number': its Euler characteristic, voxa_measure_euler_counts),
    each chunk counted on its core with the context around it that the
    counting needs (2 pixels, 1 voxel), summed up a tree."""
    ctx = _COUNTS[prop][2]
    # dask grows a chunk only from chunks at least as wide as the depth
    fix = {d: at_least(c, ctx) for d, c in enumerate(labels.chunks) if min(c) < ctx}
    if fix:
        labels = labels.rechunk(fix)
    depth = {d: ctx if len(c) > 1 else 0 for d, c in enumerate(labels.chunks)}
    grown = da.overlap.overlap(labels, depth=depth, boundary="none")
    blocks = grown.to_delayed().ravel()
    parts = []
    for idx, blk in zip(np.ndindex(*labels.numblocks), blocks):
        lo = tuple(0 if i == 0 else depth[d] for d, i in enumerate(idx))
        size = tuple(labels.chunks[d][i] for d, i in enumerate(idx))
        hi = tuple(a + b for a, b in zip(lo, size))
        parts.append(dask.delayed(_chunk_counts)(blk, lo, hi, prop))
    return tree(parts, _add_counts)
