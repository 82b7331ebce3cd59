"""voxa.dask.threshold_otsu and threshold: Otsu's threshold of a dask array,
equal to ``skimage.filters.threshold_otsu`` of the whole array, lazily.

skimage's histogram is a function of the image's min and max only (float
images: ``np.histogram`` over [min, max], bool ones as uint8; integer
images: one bin per value from min to max), so it is the sum of the chunks'
histograms over the global range: one pass for min and max, one histogram
per chunk (in C, ``voxa_threshold_histogram``: np.histogram's bins over a
given range), a tree of sums, and Otsu's selection on the total (the
in-memory ``_otsu_of_hist``). A constant image gives its value, as skimage; NaN or
inf voxels raise, as in memory. Memory per task: one histogram (nbins
counts; max - min + 1 for integer images).
"""
import dask
import dask.array as da
import numpy as np

from .. import _voxa
from .._arrays import native
from ..threshold import _otsu_args, _otsu_of_hist, threshold as _threshold_np
from ._chunks import tree


def _range(lo, hi, dtype):
    lo, hi = np.asarray(lo, dtype)[()], np.asarray(hi, dtype)[()]
    if dtype.kind == "f" and not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError("image: NaN or inf voxels (Otsu's threshold needs finite values)")
    if dtype.kind in "iu" and int(hi) - int(lo) >= 2**28:  # the in-memory op's limit
        raise ValueError(f"input: integer range {int(lo)}..{int(hi)} needs more than 2^28 "
                         "bins (Otsu on integer images takes one bin per value)")
    return lo, hi


def _chunk_counts(block, lo, hi, nbins):
    a = native(np.asarray(block))
    binned = a.dtype.kind == "f" or a.dtype == np.bool_  # np.histogram, bool as uint8
    lo, hi = _range(lo, hi, np.dtype(np.uint8) if a.dtype == np.bool_ else a.dtype)
    if lo == hi:
        return np.zeros(1, np.int64)  # constant image: no histogram is needed
    if not binned:
        n = int(hi) - int(lo) + 1
        if max(abs(int(lo)), abs(int(hi))) < 2**53:  # C: one bin per value
            return np.frombuffer(_voxa.threshold_histogram(a, float(lo), float(hi), n),
                                 np.int64)
        return np.bincount(a.astype(np.int64).ravel() - int(lo), minlength=n)
    # C: np.histogram(a, nbins, range=(lo, hi)), edges in a's float type (bool:
    # float64, the values read as uint8)
    return np.frombuffer(_voxa.threshold_histogram(a, float(lo), float(hi), nbins), np.int64)


def _add(a, b):
    return a + b


def _minmax(block):
    a = np.asarray(block)
    return a.min(), a.max()


def _widen(a, b):  # np.minimum / np.maximum: a NaN anywhere stays
    return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])


def _range_of(x):
    """(lo, hi) of x as two Delayed, from one pass (min and max per chunk)."""
    r = tree([dask.delayed(_minmax)(b) for b in x.to_delayed().ravel()], _widen)
    return r[0], r[1]


def _select(counts, lo, hi, nbins, dtype, out_dtype):
    lo, hi = _range(lo, hi, np.dtype(np.uint8) if dtype == np.bool_ else dtype)
    if lo == hi:  # skimage: a constant image's value
        return np.asarray(lo, out_dtype)
    if dtype.kind in "iu":  # bool is kind "b": binned
        centres = np.arange(int(lo), int(hi) + 1)
    else:  # np.histogram's edges, which every chunk's C histogram used
        edges = np.histogram(np.array([lo, hi]), bins=nbins, range=(lo, hi))[1]
        centres = (edges[:-1] + edges[1:]) / 2.0
    return np.asarray(_otsu_of_hist((counts, centres)), out_dtype)


def _constant_or(lo, hi, t):
    return np.asarray(lo if lo == hi else t, np.asarray(t).dtype)


def otsu(x, nbins, hist):
    """The lazy threshold: a 0-d dask array (float32 for float32 images,
    int64 for integer ones, float64 for float64 and bool)."""
    if hist is not None:  # skimage: a constant image's value, else the histogram's
        t = _otsu_of_hist(hist)
        if x is None:
            return da.from_array(np.asarray(t))
        lo, hi = _range_of(x)
        return da.from_delayed(dask.delayed(_constant_or)(lo, hi, t), (), np.asarray(t).dtype)
    if x.size == 0:
        raise ValueError("image: empty array (Otsu's threshold needs at least one voxel)")
    # the in-memory checks (dtype, nbins, the RGB warning) on a stand-in of x's
    # dtype and last axis
    nbins = _otsu_args(np.empty((1,) * (x.ndim - 1) + x.shape[-1:], x.dtype), nbins)[1]
    out_dtype = np.dtype(np.int64 if x.dtype.kind in "iu" else
                         np.float32 if x.dtype == np.float32 else np.float64)
    lo, hi = _range_of(x)
    parts = [dask.delayed(_chunk_counts)(b, lo, hi, nbins) for b in x.to_delayed().ravel()]
    t = dask.delayed(_select)(tree(parts, _add), lo, hi, nbins, x.dtype, out_dtype)
    return da.from_delayed(t, (), out_dtype)


def _above(block, t):
    return _threshold_np(block, np.asarray(t)[()])


def _above_value(block, value):
    return _threshold_np(block, value)


def mask_above(x, t=None, value=None):
    """x > t (a 0-d dask array: Otsu's, typed as skimage types it), or x >
    value as given: a Python float stays a Python float, so it compares in
    float32 against a float32 image, as NumPy and the in-memory call do."""
    meta = np.empty((0,) * x.ndim, np.bool_)
    if t is None:
        return da.map_blocks(_above_value, x, value=value, dtype=np.bool_, meta=meta)
    return da.map_blocks(_above, x, t, dtype=np.bool_, meta=meta)
