"""voxa on Dask: every op on dask arrays, lazily, equal to the in-memory result.

Import it explicitly (``import voxa.dask``); it needs ``dask[array]`` (and
``distributed`` for clusters), which the core package does not.

- Every function takes its in-memory namesake's arguments in the same order
  (dask-only ones keyword-only); an array to write into is refused.
- Local ops (binary morphology, Richardson-Lucy, balls) run per chunk with
  ``map_overlap``: the depth is the halo the op's descriptor declares
  (``voxa._voxa.op_halo``), and ``boundary='none'`` leaves the volume's edge
  unpadded, so the op's own border rule acts there and only there. Morphology
  with mask, origin, axes and iterations until stable: ``_morph.py``.
- ``label`` (``_label.py``) is a tree reduction over the chunk grid: chunks
  labelled alone, ids joined across faces up a tree of chunk groups, final ids
  sent back down, owners numbered by parallel prefix sums in scipy's raster
  order, one C relabel per chunk. Labels and count equal ``scipy.ndimage.label``;
  no task holds the volume or more than a group's faces.
- ``binary_fill_holes`` is exact by blocks too: the background's components
  (``label`` of the complement with the structure) that do not touch the
  volume's edge are the holes.
- ``distance_transform_edt`` and ``distance_transform_cdt`` (taxicab,
  chessboard) are exact by chunks in two passes (slabs of whole slices, then
  pencils holding axis 0 whole; ``_edt.py``); with ``max_distance`` the EDT
  is local (chunks overlap by the distance).
- ``extract_patches`` groups the ROIs by the chunk of their corner and reads,
  per group, only the box its patches need.

Everything the tasks need is module-level and pickles, so threads and
``distributed.LocalCluster(processes=True)`` both work; the C calls release
the GIL.
"""
import functools

import numpy as np

import dask
import dask.array as da
from dask.base import tokenize

from .. import _backend, _shape_props, _voxa
from ..distance import _c_metric, _metric_offsets, edt_dtype, edt_sampling
from ..morphology import (_NATIVE, distance_transform_cdt as _cdt_np,
                          distance_transform_edt as _edt_np)
from ..points import _points_array, balls as _balls_np
from .._regionprops_table import (check_intensity, check_labels, check_perimeter_spacing,
                                  check_properties, named_columns, perimeter_of,
                                  spacing_array, with_derived)
from ..restoration import richardson_lucy as _rl_np
from ..roi import _int_coords, _sizes, extract_patches as _extract_np
from . import _edt
from ._chunks import at_least
from ._label import label
from ._measure import core_counts, measure
from ._lazy import lazy_output
from ._morph import fill_holes, morph
from ._overlap import overlap
from ._route import routed
from ._threshold import mask_above, otsu

__all__ = ["label", "binary_dilation", "binary_erosion", "binary_opening", "binary_closing",
           "binary_fill_holes", "distance_transform_edt", "distance_transform_cdt",
           "richardson_lucy", "balls",
           "extract_patches", "threshold_otsu", "threshold", "regionprops_table"]


def __dir__():
    """The public functions (and the module's dunders): the modules and
    helpers imported above stay attributes (voxa's own code uses them) but
    are not names a user is offered."""
    return sorted(__all__ + [n for n in globals() if n.startswith("__")])


def _starts(chunks):
    """Start index of every chunk, per axis."""
    return [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64) for c in chunks]


def _overlap(x, fn, depth, out_dtype, name, **kwargs):
    """fn(block, **kwargs) per chunk grown by `depth` (not at the volume's edge)."""
    return overlap(functools.partial(fn, **kwargs), [x], depth, np.dtype(out_dtype), name)


# ---- morphology ------------------------------------------------------------------------

def binary_dilation(input, structure=None, iterations=1, mask=None, output=None,
                    border_value=0, origin=0, brute_force=False, *, axes=None, ball=None,
                    diamond=None, box=None, connectivity=None, spacing=None, backend=None):
    """Lazy ``voxa.binary_dilation`` of a dask array (chunks overlap by the halo)."""
    return morph("dilate", input, structure, iterations, mask, output, border_value, origin,
                 axes, (ball, diamond, box, connectivity, spacing), backend)


def binary_erosion(input, structure=None, iterations=1, mask=None, output=None,
                   border_value=0, origin=0, brute_force=False, *, axes=None, ball=None,
                   diamond=None, box=None, connectivity=None, spacing=None, backend=None):
    """Lazy ``voxa.binary_erosion`` of a dask array."""
    return morph("erode", input, structure, iterations, mask, output, border_value, origin,
                 axes, (ball, diamond, box, connectivity, spacing), backend)


def binary_opening(input, structure=None, iterations=1, output=None, origin=0, mask=None,
                   border_value=0, brute_force=False, *, axes=None, ball=None, diamond=None,
                   box=None, connectivity=None, spacing=None, backend=None):
    """Lazy ``voxa.binary_opening`` of a dask array."""
    return morph("open", input, structure, iterations, mask, output, border_value, origin,
                 axes, (ball, diamond, box, connectivity, spacing), backend)


def binary_closing(input, structure=None, iterations=1, output=None, origin=0, mask=None,
                   border_value=0, brute_force=False, *, axes=None, ball=None, diamond=None,
                   box=None, connectivity=None, spacing=None, backend=None):
    """Lazy ``voxa.binary_closing`` of a dask array."""
    return morph("close", input, structure, iterations, mask, output, border_value, origin,
                 axes, (ball, diamond, box, connectivity, spacing), backend)


# ---- deconvolution ---------------------------------------------------------------------

def richardson_lucy(image, psf, num_iter=20, boundary="free", clip=False,
                    filter_epsilon=None, accelerate=False, out=None, dtype=np.float32,
                    progress=None, planning="auto", *, backend=None, halo="psf"):
    """Lazy ``voxa.richardson_lucy`` per chunk. ``halo='psf'`` overlaps chunks
    by one PSF extent (the usual approximation, as the W2 write-up's
    ``map_overlap``); ``halo='exact'`` by iterations x (lo + hi), equal to the
    whole-image result for ``boundary='zero'`` (see docs/stream.md).
    ``planning`` as in ``voxa.richardson_lucy``: with 'auto' each worker
    process measures its plane plans once per chunk shape, so runs on
    several processes can differ at float32 round-off; 'estimate' gives
    every worker the same plans (unless measured wisdom is cached).
    ``out`` must be None (the result is a new dask array); so must
    ``progress``: dask's own progress bars follow the chunks."""
    lazy_output(out, "out")
    if progress is not None:
        raise TypeError("voxa.dask.richardson_lucy: progress= is not taken on dask arrays; "
                        "use dask.diagnostics.ProgressBar or the distributed dashboard")
    if planning not in ("auto", "estimate", "measure"):
        raise ValueError(f"planning: {planning!r} (expected 'auto', 'estimate' or 'measure')")
    x = da.asarray(image)
    chunks = x.chunks  # the result's, as the other local ops keep them
    psf = np.asarray(psf)
    if psf.ndim == x.ndim:  # every chunk at least the PSF's size (RL needs it)
        x = x.rechunk(tuple(at_least(c, m) for c, m in zip(x.chunks, psf.shape)))
    lo, hi = _voxa.op_halo("deconvolve", x.ndim, psf=psf, iterations=int(num_iter),
                           boundary=boundary, halo=halo)
    depth = [max(a, b) for a, b in zip(lo, hi)]
    out = _overlap(x, routed(_rl_np, backend), depth, np.dtype(dtype), psf=psf,
                   num_iter=num_iter, boundary=boundary, clip=clip,
                   filter_epsilon=filter_epsilon, accelerate=accelerate, dtype=dtype,
                   planning=planning,
                   name="voxa-deconvolve-" + tokenize(x, psf, num_iter, boundary, clip,
                                                      filter_epsilon, accelerate, dtype, halo,
                                                      planning))
    return out if out.chunks == chunks else out.rechunk(chunks)


# ---- balls -----------------------------------------------------------------------------

def _balls_block(pts, radius, spacing, owner, out_dtype, backend, block_info=None):
    info = block_info[None]
    origin = np.array([r[0] for r in info["array-location"]], np.float64)
    shape = tuple(info["chunk-shape"])
    out = routed(_balls_np, backend)(shape, pts - origin, radius, spacing=spacing, owner=owner)
    return out.astype(out_dtype, copy=False)


def balls(shape, points, radius, spacing=None, owner=False, out=None, *, backend=None,
          chunks="auto"):
    """A lazy mask (or owner map) of balls around points, chunk by chunk; each
    chunk paints every point (the W1 rule has no cheap cut for far points at
    this size; the C op skips balls that miss the chunk). ``out`` must be None."""
    lazy_output(out, "out")
    shape = tuple(int(s) for s in shape)
    pts = _points_array(points, len(shape))
    n = pts.shape[0]
    dtype = np.dtype(np.bool_) if not owner else np.dtype(np.int32 if n <= 2**31 - 1 else np.int64)
    template = da.empty(shape, dtype=dtype, chunks=chunks)
    if backend is not None:
        _backend.check(backend)  # a bad name fails here, not in a task
    return da.map_blocks(_balls_block, pts=pts, radius=radius, spacing=spacing, owner=owner,
                         out_dtype=dtype, backend=backend, dtype=dtype, chunks=template.chunks,
                         meta=np.empty((0,) * len(shape), dtype),
                         name="voxa-balls-" + tokenize(shape, pts, radius, spacing, owner,
                                                        template.chunks))


# ---- fill holes, edt ------------------------------------------------------------------

def binary_fill_holes(input, structure=None, output=None, origin=0, *, axes=None,
                      backend=None):
    """``scipy.ndimage.binary_fill_holes`` of a dask array, exact by blocks: the
    background's components (joined by the structure) that reach outside the
    volume are not holes; a face of axis d reaches outside where the
    structure steps along d. A structure whose steps (origin included) are
    not symmetric or reach beyond one voxel runs on one chunk."""
    return fill_holes(input, structure, output, origin, axes, backend)


def distance_transform_edt(input, sampling=None, return_distances=True, return_indices=False,
                           distances=None, indices=None, *, squared=False, dtype=np.float64,
                           max_distance=None, backend=None):
    """Exact EDT of a dask array, with ``voxa.distance_transform_edt``'s
    arguments (``distances``/``indices`` must be None: the results are new
    dask arrays). Without ``max_distance``, exact by chunks in two passes
    (``_edt.py``: slabs of whole slices, then pencils holding axis 0 whole;
    no task holds the volume), equal to the in-memory result bit for bit; a
    single chunk, a 1-D array, a device ``backend`` or a sampling with zero
    or negative values runs on one chunk instead. With it, chunks overlap by
    ceil(max_distance / sampling) + 1 and distances are exact up to
    max_distance; larger ones read max_distance (its square when
    ``squared``, rounded down for uint32). Indices need the whole array."""
    lazy_output(distances, "distances")
    lazy_output(indices, "indices")
    if not return_distances and not return_indices:
        raise RuntimeError("at least one of return_distances/return_indices must be True")
    x = da.asarray(input)
    if x.ndim == 0:  # scipy: a 0-d input gives shape (1,)
        x = x.reshape(1)
    kw = dict(sampling=sampling, squared=squared, dtype=dtype)
    if return_distances:
        edt_dtype(dtype, squared, sampling)  # fails here, not in a task
    out_dtype = np.dtype(dtype)
    tok = tokenize(x, sampling, return_distances, return_indices, squared, out_dtype,
                   max_distance)
    if return_indices:
        if max_distance is not None:
            raise ValueError("voxa.dask.distance_transform_edt: indices of voxels further "
                             "than max_distance are not known by blocks; omit max_distance")
        both = dask.delayed(routed(_edt_np, backend), pure=True)(
            x.rechunk(-1), return_distances=return_distances, return_indices=True, **kw,
            dask_key_name="voxa-edt-" + tok)
        ind_shape = (x.ndim,) + x.shape
        if not return_distances:
            return da.from_delayed(both, ind_shape, np.int32)
        return (da.from_delayed(both[0], x.shape, out_dtype),
                da.from_delayed(both[1], ind_shape, np.int32))
    if max_distance is None:
        sp = _exact_spacing(x, sampling)
        if x.ndim >= 2 and x.npartitions > 1 and backend in (None, "cpu") and sp is not False:
            _check_uint32(x.shape, out_dtype)
            return _edt.exact(x if x.dtype in _NATIVE else x != 0, sp, bool(squared), out_dtype)
        return x.rechunk(-1).map_blocks(functools.partial(routed(_edt_np, backend), **kw),
                                        dtype=out_dtype,
                                        name="voxa-edt-" + tok).rechunk(x.chunks)
    sp = np.broadcast_to(np.asarray(1.0 if sampling is None else sampling, float), (x.ndim,))
    depth = [int(np.ceil(max_distance / abs(s))) + 1 for s in sp]
    cap = float(max_distance) ** 2 if squared else float(max_distance)
    return _overlap(x, routed(_edt_clamped, backend), depth, out_dtype, cap=cap, **kw,
                    name="voxa-edt-" + tok)


def distance_transform_cdt(input, metric="chessboard", return_distances=True,
                           return_indices=False, distances=None, indices=None, *, backend=None):
    """``scipy.ndimage.distance_transform_cdt`` of a dask array, with its
    arguments (``distances``/``indices`` must be None: the results are new
    dask arrays). The taxicab and chessboard metrics (names, or scipy's
    arrays for them) run exact by chunks in two passes, like
    ``distance_transform_edt`` (``_edt.py``); other metric arrays, indices,
    a single chunk, a 1-D array or a device ``backend`` run on one chunk.
    int32, -1 everywhere without background, as scipy."""
    lazy_output(distances, "distances")
    lazy_output(indices, "indices")
    if not return_distances and not return_indices:
        raise RuntimeError("at least one of return_distances/return_indices must be True")
    x = da.asarray(input)
    if x.ndim == 0:
        raise TypeError("distance_transform_cdt: input must have at least 1 dimension "
                        "(scipy raises TypeError on 0-d input too)")
    name = _cdt_metric(metric, x.ndim)  # a bad metric fails here, not in a task
    if (not return_indices and name is not None and x.ndim >= 2 and x.npartitions > 1
            and backend in (None, "cpu")):
        return _edt.exact_cdt(x != 0, 1 if name == "taxicab" else 2)
    tok = tokenize(x, metric, return_distances, return_indices)
    fn = functools.partial(routed(_cdt_np, backend), metric=metric,
                           return_distances=return_distances, return_indices=return_indices)
    if not return_indices:  # one chunk, split back to the input's
        return x.rechunk(-1).map_blocks(fn, dtype=np.int32,
                                        name="voxa-cdt-" + tok).rechunk(x.chunks)
    both = dask.delayed(fn, pure=True)(x.rechunk(-1), dask_key_name="voxa-cdt-" + tok)
    ind_shape = (x.ndim,) + x.shape
    if not return_distances:
        return da.from_delayed(both, ind_shape, np.int32)
    return (da.from_delayed(both[0], x.shape, np.int32),
            da.from_delayed(both[1], ind_shape, np.int32))


def _exact_spacing(x, sampling):
    """The spacing the chunked exact EDT takes (None: unit), or False for
    zero or negative values (only the whole-array feature transform takes
    them); bad values raise voxa.distance_transform_edt's errors here."""
    sp = edt_sampling(sampling, x.ndim)
    return sp if sp is None or np.all(sp > 0) else False


def _cdt_metric(metric, ndim):
    """'taxicab' or 'chessboard' where scipy's metric is one of them (the
    chunked passes take it), else None; a bad metric raises scipy's error."""
    return _c_metric(_metric_offsets(metric, ndim), ndim)


def _check_uint32(shape, dtype):
    """voxa.distance_transform_edt's refusal, at the call: uint32 squared
    distances that this shape could push past 2^32 - 1."""
    if dtype == np.uint32 and sum((n + 1) ** 2 for n in shape) >= 2**32 - 1:
        raise ValueError("squared distances may exceed uint32 for this shape: use float64")


def _edt_clamped(block, cap, **kw):
    d = _edt_np(block, **kw)
    return np.minimum(d, d.dtype.type(np.floor(cap) if d.dtype.kind == "u" else cap))


# ---- thresholds --------------------------------------------------------------------------

def threshold_otsu(image=None, nbins=256, *, hist=None):
    """``skimage.filters.threshold_otsu`` of a whole dask array, lazily: a 0-d
    dask array (float32 for float32 images, int64 for integer images, also
    constant ones, float64 for float64 and bool); a min/max pass, one
    histogram per chunk, their sum (see ``_threshold.py``). ``hist=`` as in
    memory."""
    if image is None and hist is None:
        raise TypeError("threshold_otsu: give an image or hist=")
    return otsu(None if image is None else da.asarray(image), nbins, hist)


def threshold(image, value=None, *, method=None, nbins=256, progress=None):
    """The lazy mask ``image > value`` (NumPy's comparison, as in memory), or
    ``image > threshold_otsu(image)`` with ``method='otsu'``. ``progress``
    must be None: dask's progress bars follow the chunks."""
    if progress is not None:
        raise TypeError("voxa.dask.threshold: progress= is not taken on dask arrays; use "
                        "dask.diagnostics.ProgressBar or the distributed dashboard")
    if (value is None) == (method is None):
        raise TypeError("threshold: give exactly one of value= and method=")
    if method is not None and method != "otsu":
        raise ValueError(f"method: unknown {method!r} (expected 'otsu')")
    x = da.asarray(image)
    if method:
        return mask_above(x, t=otsu(x, nbins, None))
    if isinstance(value, (np.ndarray, list, tuple, da.Array)):
        raise TypeError("value: expected a number")
    return mask_above(x, value=value)


# ---- measurements ------------------------------------------------------------------------

def regionprops_table(label_image, intensity_image=None, properties=("label", "bbox"), *,
                      cache=True, separator="-", extra_properties=None, spacing=None):
    """``voxa.regionprops_table`` of a dask label image (and intensity image),
    as a ``dask.delayed`` of the same dict: ``.compute()`` gives it. Chunks
    are measured alone and their sums merged up a tree (``_measure.py``):
    label, num_pixels, area, bbox and centroid equal the in-memory table bit
    for bit, the intensity columns to rounding. ``extra_properties`` needs
    each object whole and is not taken here."""
    if extra_properties:
        raise NotImplementedError("voxa.dask.regionprops_table: extra_properties need each "
                                  "object whole; measure those in memory")
    x = check_labels(da.asarray(label_image))
    props, names, _ = check_properties(properties, None, intensity_image is not None, x.ndim,
                                       delegate=False)
    inten = None
    if intensity_image is not None:
        inten = check_intensity(da.asarray(intensity_image), x.shape).rechunk(x.chunks)
    sp = spacing_array(spacing, x.ndim)
    moments = any(p in _shape_props.PROPERTIES for p in props)
    if "perimeter" in props:
        check_perimeter_spacing(sp)
    counted = {p: core_counts(x, p) for p in ("perimeter", "euler_number") if p in props}
    return dask.delayed(_named_table)(measure(x, inten, sp, moments, "intensity_std" in props),
                                      counted, props, names, separator, x.ndim, sp)


def _named_table(cols, counted, props, names, separator, ndim, spacing):
    cols = with_derived(cols, ndim, spacing, props)
    cols.update(_shape_props.columns(cols, ndim, spacing, props))
    for prop, (rows, counts) in counted.items():  # the chunks' sums, in the table's order
        mine = counts[np.searchsorted(rows, cols["label"])]
        cols[prop] = perimeter_of(mine, spacing) if prop == "perimeter" else mine[:, 0].copy()
    return named_columns(cols, props, names, separator)


# ---- ROI extraction ----------------------------------------------------------------------

def _extract_group(sub, corners, size, mode, cval):
    return _extract_np(sub, corners, size, mode=mode, cval=cval)


def extract_patches(image, coords, size, centered=False, mode="error", cval=0, out=None, *,
                    backend=None):
    """Lazy ``voxa.extract_patches`` of a dask array: ROIs grouped by the chunk
    of their corner; each group reads only the box its patches need (padding
    modes read the mirrored or nearest voxels too). Rows keep their order.
    ``out`` must be None."""
    lazy_output(out, "out")
    x = da.asarray(image)
    size = _sizes(size, coords)
    k = len(size)
    if k > x.ndim:
        raise ValueError(f"size has {k} entries but image has {x.ndim} dimensions")
    c = _int_coords(coords, k, centered)
    if centered:
        c = c - np.asarray(size, np.int64) // 2
    dims = np.asarray(x.shape[:k], np.int64)
    sz = np.asarray(size, np.int64)
    if mode == "error":
        bad = np.any((c < 0) | (c + sz > dims), axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"coords: row {i} reaches outside the array")
    elif mode == "clip":
        if np.any(sz > dims):
            raise ValueError("clip: a patch is larger than the array")
        c = np.clip(c, 0, dims - sz)
        mode = "error"
    elif mode not in ("constant", "nearest", "reflect"):
        raise ValueError(f"mode: unknown mode {mode!r}")
    n = c.shape[0]
    rest = x.shape[k:]
    if n == 0:
        return da.zeros((0,) + size + rest, dtype=x.dtype)
    begin = _starts(x.chunks[:k])
    cell = np.stack([np.clip(np.searchsorted(begin[d], c[:, d], side="right") - 1, 0, None)
                     for d in range(k)], 1)
    order = np.lexsort(cell.T[::-1])
    cs = cell[order]
    cuts = np.flatnonzero(np.any(np.diff(cs, axis=0) != 0, axis=1)) + 1
    padded = mode in ("nearest", "reflect")
    parts = []
    tok = tokenize(x, c, size, mode, cval)
    for g, rows in enumerate(np.split(order, cuts)):
        cc = c[rows]
        lo = np.clip(cc.min(0), 0, dims)
        hi = np.clip((cc + sz).max(0), 0, dims)
        if padded:
            # nearest/reflect read voxels measured from the image's edges:
            # where a patch reaches outside, take that axis whole
            outside = (cc.min(0) < 0) | ((cc + sz).max(0) > dims)
            lo = np.where(outside, 0, lo)
            hi = np.where(outside, dims, hi)
        sub = x[tuple(slice(int(a), int(b)) for a, b in zip(lo, hi))]
        local = cc - lo
        part = dask.delayed(routed(_extract_group, backend), pure=True)(
            sub, local, size, mode, cval, dask_key_name=f"voxa-roi-{tok}-{g}")
        parts.append(da.from_delayed(part, shape=(len(rows),) + size + rest, dtype=x.dtype))
    out = da.concatenate(parts, axis=0)
    inverse = np.empty(n, np.int64)
    inverse[order] = np.arange(n)
    return out[inverse]
