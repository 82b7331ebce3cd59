"""Thresholds: `threshold_otsu`, equal to skimage.filters.threshold_otsu, and
`threshold`, the mask ``image > value`` with the value given or Otsu's.

Both run the C op `threshold` (src/ops/threshold) through the generic call:
one parallel pass for min/max, one for the histogram, Otsu's selection on the
bins with skimage's float32 sums, and one pass for the mask, with the GIL
released. Comparisons follow NumPy's promotion rules; the few cases the C
comparison cannot mirror (a float64 NumPy scalar against a float32 image,
non-finite values, integers beyond 2^53 against 64-bit images, float16)
are left to NumPy itself."""
import operator
import warnings

import numpy as np

from . import _voxa

_DTYPES = {np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                  np.uint32, np.int64, np.uint64, np.float32, np.float64)}


def _native(image, name="image"):
    a = np.asarray(image)
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: complex images have no threshold (dtype {a.dtype})")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name}: dtype {a.dtype} is not a real number type")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def _run(a, nbins, progress, mask=True, **params):
    if mask:
        out = np.empty(a.shape, dtype=bool)
    else:  # a 0-stride view of one byte: the op leaves it unwritten (no_mask)
        out = np.lib.stride_tricks.as_strided(np.zeros(1, bool), a.shape, (0,) * a.ndim,
                                              writeable=True)
    res = np.zeros(4)
    _voxa.run_op("threshold", a, out, progress=progress, count=False, result=res,
                 nbins=nbins, no_mask=not mask, **params)
    return out, res


def _otsu_args(image, nbins):
    a = _native(image)
    if a.dtype not in _DTYPES:
        raise TypeError(f"image: dtype {a.dtype} is not supported by voxa's Otsu threshold "
                        "(convert to float32 or float64)")
    if a.ndim > 2 and a.shape[-1] in (3, 4):  # skimage's warning, same text
        warnings.warn(f'threshold_otsu is expected to work correctly only for '
                      f'grayscale images; image shape {a.shape} looks like '
                      f'that of an RGB image.', stacklevel=3)
    try:
        nbins = operator.index(nbins)
    except TypeError:
        raise TypeError(f"nbins: expected an integer, got {nbins!r}") from None
    if a.dtype.kind in "iu":
        nbins = 256  # ignored for integer images, as in skimage
    return a, nbins


def _value_of(a, res):
    if res[1]:  # constant image: skimage returns its first voxel
        return a.reshape(-1)[0]
    if a.dtype == np.float32:
        return np.float32(res[0])
    if a.dtype.kind in "iu":
        return np.int64((int(res[2]) << 32) | int(res[3]))
    return np.float64(res[0])


def _otsu_of_hist(hist):
    """Otsu's selection on a given histogram, as skimage makes it: `hist` is
    counts (bin centres 0, 1, ...) or (counts, bin_centres); zero bins at
    either end are dropped; counts in float32. O(bins), in NumPy."""
    counts, centres = hist if isinstance(hist, (tuple, list)) else (hist, None)
    counts = np.asarray(counts)
    centres = np.arange(counts.size) if centres is None else np.asarray(centres)
    if counts.ndim != 1 or centres.shape != counts.shape or counts.size == 0:
        raise ValueError(f"hist: counts and bin centres must be 1-D of one non-zero length "
                         f"(got {counts.shape} and {centres.shape})")
    if counts[0] == 0 or counts[-1] == 0:
        kept = np.flatnonzero(counts > 0)
        lo, hi = (kept[0], kept[-1] + 1) if kept.size else (0, counts.size)
        counts, centres = counts[lo:hi], centres[lo:hi]
    counts = counts.astype(np.float32, copy=False)
    below = np.cumsum(counts)  # class weights for a cut after each bin
    above = np.cumsum(counts[::-1])[::-1]
    mass = counts * centres
    mean_below = np.cumsum(mass) / below
    mean_above = (np.cumsum(mass[::-1]) / above[::-1])[::-1]
    between = below[:-1] * above[1:] * (mean_below[:-1] - mean_above[1:]) ** 2
    return centres[np.argmax(between)]


def threshold_otsu(image=None, nbins=256, *, hist=None):
    """Otsu's threshold, equal to ``skimage.filters.threshold_otsu(image, nbins, hist=hist)``.

    Parameters
    ----------
    image : array_like, bool, integer or float32/float64 (any strides, any
        byte order), at least one element.
    nbins : int, 2..2^24, bins over [min, max] for float and bool images;
        ignored for integer images, which get one bin per value (as in
        skimage; at most 2^28 values between min and max).
    hist : counts, or (counts, bin_centres), optional: a histogram to
        threshold instead of the image's (as skimage: with both, a constant
        image still returns its value, else the histogram decides).

    Returns
    -------
    The threshold, typed as skimage types it: the first voxel (image dtype)
    for a constant image, else np.float32 for float32 images, np.int64 for
    integer images, np.float64 for float64 and bool images; with `hist`, a
    bin centre. Voxels strictly above it are foreground.

    Raises ValueError for an empty image, NaN or inf voxels (unless every
    voxel equals the first, as in skimage), or a range too narrow for nbins
    distinct edges; TypeError for float16 and complex images, or for neither
    image nor hist.
    """
    if image is None and hist is None:
        raise TypeError("threshold_otsu: give an image or hist=")
    if image is not None and hist is not None:
        a = _native(image)
        if a.size == 0:
            raise ValueError("image: empty array (Otsu's threshold needs at least one voxel)")
        _otsu_args(a, nbins)  # skimage's RGB warning
        first = a.reshape(-1)[0]
        if np.all(a == first):
            return first
    if hist is not None:
        return _otsu_of_hist(hist)
    a, nbins = _otsu_args(image, nbins)
    if a.size == 0:
        raise ValueError("image: empty array (Otsu's threshold needs at least one voxel)")
    _, res = _run(a, nbins, None, mask=False, method="otsu")
    return _value_of(a, res)


def _value_in_c(a, value):
    """True when the C comparison (float32 for float32 images, float64 for the
    rest, exact integers below 2^53) equals NumPy's ``a > value``."""
    if a.dtype not in _DTYPES:
        return False
    try:
        rt = np.result_type(a, value)
        v = float(value)
    except (TypeError, OverflowError, ValueError):
        return False
    if not np.isfinite(v):
        return False
    if a.dtype == np.float32:
        return rt == np.float32
    if rt == np.float64:
        return True
    return rt.kind in "biu" and abs(v) < 2.0**53


def threshold(image, value=None, *, method=None, nbins=256, progress=None):
    """Binary mask of the voxels strictly above a threshold: ``image > value``.

    Parameters
    ----------
    image : array_like, bool, integer or float (any strides).
    value : number, the threshold (NumPy's comparison, promotion included:
        a Python float against a float32 image compares in float32).
    method : 'otsu': the threshold is ``threshold_otsu(image, nbins)``.
        Give exactly one of value and method.
    nbins : int, Otsu's bins for float images (ignored for integers).
    progress : optional callable(done, total) -> bool; False cancels
        (KeyboardInterrupt).

    Returns
    -------
    ndarray of bool, the image's shape.
    """
    if (value is None) == (method is None):
        raise TypeError("threshold: give exactly one of value= and method=")
    if method is not None:
        if method != "otsu":
            raise ValueError(f"method: unknown {method!r} (expected 'otsu')")
        a, nbins = _otsu_args(image, nbins)
        if a.size == 0:
            raise ValueError("image: empty array (Otsu's threshold needs at least one voxel)")
        return _run(a, nbins, progress, method="otsu")[0]
    a = _native(image)
    if isinstance(value, (np.ndarray, list, tuple)):
        raise TypeError("value: expected a number")
    if not _value_in_c(a, value):
        return np.asarray(a > value, dtype=bool)
    return _run(a, 256, progress, value=float(value))[0]
