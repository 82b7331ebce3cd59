"""voxa.dask's binary morphology and hole filling: every scipy argument of the
in-memory functions, lazily.

- A count of iterations (>= 1): each chunk, grown by the op's halo, runs the
  in-memory function with the same arguments (and its piece of `mask`); the
  halo is the op's reach: iterations x the structure's largest offset per
  axis (origin included), twice for opening and closing. Exact, since a
  voxel depends on nothing further away, masked or not.
- iterations < 1 (until nothing changes) has no bounded reach. Where the
  structure fits in 3 per axis and is centrosymmetric with its centre (the
  default, binary_propagation's case), the fixed point is a labelling: a
  voxel of `mask` ends true iff its component of ``mask | input`` holds an
  input voxel (or touches the border, for border_value=1); so it runs as
  ``voxa.dask.label`` and one lookup per chunk. Other structures raise.
- binary_fill_holes: the background's components that reach outside the
  volume are not holes (labels of the complement, by blocks). A structure
  whose steps are not symmetric or reach beyond one voxel has no such
  labelling; it runs on one chunk (one worker holds the volume).
- `mask` may also be a bool scalar (dask-image's form): True is no mask,
  False an all-false one.
- `output` may not be an array (a lazy result has no place to write); like
  scipy, anything else leaves the result bool. `brute_force` changes nothing
  in scipy's result and is accepted.
"""
import functools
import operator

import numpy as np

import dask
import dask.array as da
from dask.base import tokenize

from .. import _ndsupport as nds, _voxa
from ..binary import _border, _named_element, _propagable
from ..fill import binary_fill_holes as _fill_np
from ..morphology import (_element, _element_args, binary_closing as _close_np,
                         binary_dilation as _dilate_np, binary_erosion as _erode_np,
                         binary_opening as _open_np)
from ._label import label
from ._lazy import lazy_output
from ._overlap import overlap
from ._route import routed

_NP = {"dilate": _dilate_np, "erode": _erode_np, "open": _open_np, "close": _close_np}
_STAGES = {"dilate": ("dilate",), "erode": ("erode",), "open": ("erode", "dilate"),
           "close": ("dilate", "erode")}


def _small(structure):
    """A structure given as a dask array, computed once here rather than in
    every task."""
    return structure.compute() if isinstance(structure, da.Array) else structure


def _iterations(iterations):
    try:
        return operator.index(iterations)
    except TypeError:
        raise TypeError(f"iterations parameter should be an integer, got "
                        f"{iterations!r}") from None


def _offset_reach(fp):
    """Largest |offset| per axis of the footprint's true voxels (offset =
    index - shape // 2, scipy's centre)."""
    idx = np.argwhere(fp)
    if idx.size == 0:
        return [0] * fp.ndim
    off = idx - np.asarray(fp.shape) // 2
    return [int(v) for v in np.abs(off).max(0)]


def _footprint(ndim, structure, origin, axes, extras):
    """The effective element, origin and axes applied as the in-memory
    functions apply them; None for a named element at origin 0, whose halo
    the op descriptor gives."""
    axes = nds.check_axes(axes, ndim)
    named = any(e is not None for e in extras)
    if named and structure is not None:
        raise ValueError("give one of structure, ball, diamond, box, connectivity")
    if named and len(axes) < ndim:
        raise ValueError("ball=, diamond=, box=, connectivity= act on every axis: "
                         "pass structure= with axes=")
    if named:
        s = _named_element(ndim, *extras)
    else:
        s = nds.structure_array(structure, ndim, axes)
    org = nds.origin_list(origin, ndim, axes, s.shape)
    if named and not any(org):
        return None
    return nds.shifted_footprint(s, org)


def _halo(op, ndim, fp, iterations, extras):
    if fp is None:  # a named element: the descriptor knows its reach
        kind, radius, sp, bx, conn, f = _element(None, ndim, *extras)
        lo, hi = _voxa.op_halo(op, ndim, **_element_args(kind, radius, sp, bx, conn, f),
                               iterations=iterations)
        return [max(a, b) for a, b in zip(lo, hi)]
    return [r * iterations * len(_STAGES[op]) for r in _offset_reach(fp)]


def _block(block, mask_block=None, *, fn, **kw):
    return fn(block, mask=mask_block, **kw)


def _blockwise(op, x, m, depth, backend, kw):
    """op per chunk grown by `depth` (not at the volume's edge), with its
    piece of the mask m (or None)."""
    fn = functools.partial(_block, fn=routed(_NP[op], backend), **kw)
    return overlap(fn, [x] if m is None else [x, m], depth, np.dtype(np.bool_),
                   f"voxa-{op}-" + tokenize(x, m, depth, kw))


def _seed_ids(lab, seeds):
    return np.unique(lab[seeds])


def _all_ids(*parts):
    ids = np.unique(np.concatenate(parts))
    return ids[ids > 0]


def _reached(x, mask, lab, ids):
    return x | (mask & np.isin(lab, ids))


def _propagate(x, mask, f3, bv, backend):
    """Masked dilation by f3 until stable (x, mask bool dask arrays of the
    same chunks): mask voxels joined by f3 steps, through voxels of
    mask | x, to a voxel of x, or to the border when bv."""
    seeds = x
    if bv:  # the border's reach: one dilation of nothing, border 1
        ring = _blockwise("dilate", da.zeros_like(x), None, [1] * x.ndim, backend,
                          dict(structure=f3, iterations=1, border_value=1))
        seeds = x | (mask & ring)
    lab, _ = label(mask | x, f3, output=np.int64, backend=backend)
    parts = [dask.delayed(_seed_ids)(a, b)
             for a, b in zip(lab.to_delayed().ravel(), seeds.to_delayed().ravel())]
    ids = dask.delayed(_all_ids)(*parts)
    return da.map_blocks(_reached, x, mask, lab, ids, dtype=np.bool_,
                         meta=np.empty((0,) * x.ndim, np.bool_),
                         name="voxa-propagate-" + tokenize(x, mask, f3, bv))


def _until_stable(op, x, m, fp, bv, backend):
    f3 = _propagable(fp)
    if f3 is None:
        raise NotImplementedError(
            "voxa.dask: iterations < 1 (until nothing changes) needs a structure of at most "
            "3 per axis, centrosymmetric and holding its centre (then it is a labelling); "
            "give a count of iterations for other structures")
    if m is None:
        m = da.ones(x.shape, dtype=bool, chunks=x.chunks)
    for stage in _STAGES[op]:
        x = (_propagate(x, m, f3, bv, backend) if stage == "dilate"
             else ~_propagate(~x, m, f3, 1 - bv, backend))
    return x


def _scalar_mask(mask, x):
    """dask-image's scalar masks: True lets every voxel change (no mask),
    False none (an all-false mask, lazy). Anything else is left as given."""
    if isinstance(mask, (bool, np.bool_)):
        return None if mask else da.zeros(x.shape, dtype=bool, chunks=x.chunks)
    return mask


def _as_mask(mask, x):
    if mask is None:
        return None
    m = da.asarray(mask)
    if m.shape != x.shape:
        raise nds.RankError(f"mask and input must have equal sizes (mask {m.shape}, "
                            f"input {x.shape})")
    return (m != 0).rechunk(x.chunks)


def morph(op, input, structure, iterations, mask, output, border_value, origin, axes, extras,
          backend):
    """Lazy binary_<op> with the in-memory function's arguments."""
    lazy_output(output)
    x = da.asarray(input)
    structure = _small(structure)
    mask = _scalar_mask(mask, x)
    if x.ndim == 0 or 0 in x.shape:  # nothing to split: the in-memory rules apply
        return da.from_array(_NP[op](np.asarray(x), structure, iterations, mask=mask,
                                     border_value=border_value, origin=origin, axes=axes,
                                     **dict(zip(("ball", "diamond", "box", "connectivity",
                                                 "spacing"), extras))))
    iterations = _iterations(iterations)
    x = x if x.dtype == np.bool_ else x != 0
    bv = _border(border_value)  # a bad value fails here, not in a task
    m = _as_mask(mask, x)
    fp = _footprint(x.ndim, structure, origin, axes, extras)
    if iterations < 1 and (fp is None or fp.any()):
        if fp is None:
            fp = _named_element(x.ndim, *extras)
        return _until_stable(op, x, m, fp, bv, backend)
    kw = dict(structure=structure, iterations=iterations, border_value=border_value,
              origin=origin, axes=axes,
              **dict(zip(("ball", "diamond", "box", "connectivity", "spacing"), extras)))
    depth = _halo(op, x.ndim, fp, max(iterations, 1), extras)
    return _blockwise(op, x, m, depth, backend, kw)


# ---- hole filling -------------------------------------------------------------------------

def _fill_block(block, bg_labels, edge):
    return np.asarray(block, bool) | ((bg_labels > 0) & ~np.isin(bg_labels, edge))


def _symmetric3(fp):
    """fp as a (3,)*ndim centrosymmetric array (its centre is no step and
    does not matter), or None where fp reaches further or is not symmetric:
    then reachability is not a labelling."""
    if any(n > 3 for n in fp.shape):
        return None
    f3 = np.zeros((3,) * fp.ndim, dtype=bool)
    f3[tuple(slice(1 - n // 2, 1 - n // 2 + n) for n in fp.shape)] = fp
    if not np.array_equal(f3, f3[(slice(None, None, -1),) * fp.ndim]):
        return None
    return f3


def fill_holes(input, structure, output, origin, axes, backend):
    """Lazy binary_fill_holes with the in-memory function's arguments."""
    lazy_output(output)
    x = da.asarray(input)
    structure = _small(structure)
    if x.ndim == 0 or 0 in x.shape:
        return da.from_array(_fill_np(np.asarray(x), structure, origin=origin, axes=axes))
    ax = nds.check_axes(axes, x.ndim)
    s = nds.structure_array(structure, x.ndim, ax)
    f3 = _symmetric3(nds.shifted_footprint(s, nds.origin_list(origin, x.ndim, ax, s.shape)))
    tok = tokenize(x, structure, origin, axes)
    if f3 is None:  # directed steps: one chunk, the in-memory search
        return x.rechunk(-1).map_blocks(routed(_fill_np, backend), structure, origin=origin,
                                        axes=axes, dtype=np.bool_, name="voxa-fill-holes-" + tok)
    bg, _ = label(x == 0, f3, output=np.int64, backend=backend)
    steps = [bool(np.take(f3, [0, 2], axis=d).any()) for d in range(x.ndim)]
    faces = [da.take(bg, [0, x.shape[d] - 1], axis=d).ravel()
             for d in range(x.ndim) if steps[d]]
    edge = dask.delayed(np.unique)(da.concatenate(faces) if faces else np.zeros(0, np.int64))
    return da.map_blocks(_fill_block, x, bg, edge, dtype=np.bool_,
                         meta=np.empty((0,) * x.ndim, np.bool_), name="voxa-fill-holes-" + tok)
