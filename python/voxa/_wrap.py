"""Labels on a torus: ``wrap_axes`` of ``voxa.label`` and ``voxa.dask.label``
(dask-image's keyword; scipy has none).

Along a wrapped axis the volume's last layer touches its first: voxel x and
x + o (o an offset of the structure) are neighbours when x + o taken modulo
the shape on the wrapped axes is inside the volume. The components of that
graph are those of the plain labelling joined by the pairs that cross the
volume's ends: for every offset o and every set S of wrapped axes that o
crosses (o_a != 0 on each), the voxels x with x_a at the end o_a points out
of on the axes of S, and x + o inside on the others, meet (x + o) mod shape.
Those are slabs one voxel thick on the axes of S, inside the end layers of
the wrapped axes: the pairs cost a read of those layers only. The joined components are numbered as scipy numbers
components, in raster order of their first voxels: a component keeps the
rank of the smallest plain label among its pieces.
"""
import itertools
import operator

import numpy as np

from . import _voxa


def check_axes(wrap_axes, ndim):
    """wrap_axes (None, an int or a sequence of ints, negative counting from
    the end) as a sorted tuple of distinct axes; ValueError or TypeError."""
    if wrap_axes is None:
        return ()
    if isinstance(wrap_axes, (int, np.integer)) and not isinstance(wrap_axes, bool):
        wrap_axes = (wrap_axes,)
    try:
        axes = [operator.index(a) for a in wrap_axes]
    except TypeError:
        raise TypeError(f"label: wrap_axes must be integers, got {wrap_axes!r}") from None
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"label: wrap_axes: axis {a} out of range for {ndim}-D input")
    norm = sorted(a % ndim for a in axes)
    if len(set(norm)) != len(norm):
        raise ValueError(f"label: wrap_axes: repeated axis in {tuple(wrap_axes)!r}")
    return tuple(norm)


def slab_pairs(shape, structure, axes):
    """(axis, source, neighbour): pairs of slice tuples whose voxels meet
    across the volume's ends along `axes` (one direction of each symmetric
    offset), with the first wrapped axis the pair crosses."""
    nd = len(shape)
    out = []
    for idx in zip(*np.nonzero(structure)):
        o = [int(i) - 1 for i in idx]
        if not any(o) or next(v for v in o if v) < 0:  # the centre; each pair once
            continue
        crossing = [a for a in axes if o[a]]
        for k in range(1, len(crossing) + 1):
            for S in itertools.combinations(crossing, k):
                src, dst = [], []
                for a in range(nd):
                    n = shape[a]
                    if a in S:  # the end the offset points out of, and the other end
                        src.append(slice(n - 1, n) if o[a] > 0 else slice(0, 1))
                        dst.append(slice(0, 1) if o[a] > 0 else slice(n - 1, n))
                    else:  # x and x + o both inside
                        lo = max(0, -o[a])
                        hi = min(n, n - o[a])
                        src.append(slice(lo, hi))
                        dst.append(slice(lo + o[a], hi + o[a]))
                if all(s.stop > s.start for s in src):
                    out.append((S[0], tuple(src), tuple(dst)))
    return out


def ends(axes):
    """The layers pairs_at_ends reads: (axis, 0) and (axis, -1) per axis."""
    return [(a, side) for a in axes for side in (0, -1)]


def pairs_at_ends(shape, structure, axes, *layers):
    """Label pairs (a, b), both > 0, without repeats, of the voxels that meet
    across the ends: `layers` are the labels' end layers in the order of
    ends(axes) (the whole volume is not needed: every slab of slab_pairs
    lies in the end layer of the first axis it crosses, its neighbour in the
    other end layer of that axis)."""
    layer = dict(zip(ends(axes), layers))
    a_parts, b_parts = [], []
    for ax, src, dst in slab_pairs(shape, structure, axes):
        def cut(box):  # the slab, from the end layer of axis ax it lies in
            side = -1 if box[ax].start == shape[ax] - 1 else 0
            return layer[(ax, side)][tuple(box[d] for d in range(len(shape)) if d != ax)]
        a, b = np.asarray(cut(src)).ravel(), np.asarray(cut(dst)).ravel()
        both = (a != 0) & (b != 0)
        a_parts.append(a[both].astype(np.int64))
        b_parts.append(b[both].astype(np.int64))
    if not a_parts:
        return np.empty((0, 2), np.int64)
    p = np.stack([np.concatenate(a_parts), np.concatenate(b_parts)], 1)
    return np.unique(p, axis=0) if p.size else p


def table(n, p):
    """(new number of each plain label 0..n, new count) after joining the
    labels of the pairs p: components ranked by their smallest label."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    n = int(n)
    if p.shape[0] == 0:
        return np.arange(n + 1, dtype=np.int64), n
    g = coo_matrix((np.ones(p.shape[0], np.int8), (p[:, 0], p[:, 1])), shape=(n + 1, n + 1))
    k, comp = connected_components(g, directed=False)
    smallest = np.full(k, n + 1, np.int64)
    np.minimum.at(smallest, comp, np.arange(n + 1, dtype=np.int64))
    rep = smallest[comp[1:]]
    reps = np.unique(rep)
    new = np.zeros(n + 1, np.int64)
    new[1:] = np.searchsorted(reps, rep) + 1
    return new, int(reps.size)


def relabel(labels, new, out=None):
    """labels through the table `new`, in their own dtype, into `out` (may be
    labels itself: each element reads its own index first) or a new array.
    Contiguous int32 / int64 labels go through voxa.dask's C relabel pass
    (threads); others through np.take ('clip': the indices are all valid, and
    unlike 'raise' it is not buffered: 15x faster in place)."""
    tab = new.astype(labels.dtype)
    if out is None:
        out = np.empty_like(labels)
    if (labels.dtype in (np.int32, np.int64) and labels.flags.c_contiguous
            and out.flags.c_contiguous):
        _voxa.dask_relabel(labels, tab, out)
    else:
        np.take(tab, labels, out=out, mode="clip")
    return out
