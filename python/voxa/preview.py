"""Previews: `preview` draws one RGB picture of a 2-D or 3-D image: for 3-D,
maximum-intensity projections along each axis (left) and orthogonal slices
through a point (right), each laid out as x-y, z-y (to its right) and x-z
(below it); percentile contrast; labels in distinct colours over the image;
a scale bar with its physical length when the spacing is known.

Arrays, or paths of .npy/.tif files: a path is read by the C library in slabs
of whole planes within `mem_limit` bytes, so a projection never loads the
volume. `label_color(k)` is the colour of label k. The PNG is written with
libpng (`path=`, atomically)."""
import os

import numpy as np

from . import _voxa
from ._arrays import native


def _source(a, name):
    if a is None:
        return None
    if isinstance(a, (str, os.PathLike)):
        return os.fspath(a)
    a = np.asarray(a)
    if a.dtype.kind not in "biuf":
        raise TypeError("%s: dtype %s is not a real number type" % (name, a.dtype))
    if a.dtype == np.float16:
        a = a.astype(np.float32)
    return native(a)


def preview(image=None, labels=None, *, spacing=None, point=None, percentiles=(0.5, 99.5),
            mem_limit=0, path=None):
    """Draw a preview of `image` (and/or `labels`) as a (height, width, 3)
    uint8 array.

    Parameters
    ----------
    image : 2-D or 3-D array (any real dtype) or path, optional
    labels : integer array or path of the same shape, optional (not both None);
        projections show the largest label along each ray, half transparent
        over the image (opaque over black without an image)
    spacing : ndim floats > 0 (z, y, x), optional: physical proportions and a
        scale bar
    point : ndim voxel indices the slices go through (default: the centre)
    percentiles : (low, high) contrast limits, 0 <= low < high <= 100,
        computed over the projections and over the slices separately
    mem_limit : bytes of slabs in memory when reading paths (0: 64 MiB)
    path : str, optional: also write the picture there as PNG

    Raises ValueError for a wrong shape, point, spacing or percentiles;
    TypeError for a wrong dtype.
    """
    if image is None and labels is None:
        raise ValueError("image: give an image, labels or both")
    img, lab = _source(image, "image"), _source(labels, "labels")
    if isinstance(lab, np.ndarray) and (lab.dtype == np.bool_ or lab.dtype.kind not in "iu"):
        raise TypeError("labels: dtype %s is not an integer type" % lab.dtype)
    lo, hi = (float(p) for p in percentiles)
    if not (0 <= lo < hi <= 100):
        raise ValueError("percentiles: %r (need 0 <= low < high <= 100)" % (percentiles,))
    ref = img if img is not None else lab
    sp = pt = None
    if spacing is not None:
        sp = np.ascontiguousarray(np.asarray(spacing, dtype=np.float64).ravel())
        if isinstance(ref, np.ndarray) and sp.size == 1:
            sp = np.full(ref.ndim, sp[0])
        if isinstance(ref, np.ndarray) and sp.size != ref.ndim:
            raise ValueError("spacing: %d values for a %d-D image" % (sp.size, ref.ndim))
    if point is not None:
        pt = [int(p) for p in point]
        if isinstance(ref, np.ndarray) and len(pt) != ref.ndim:
            raise ValueError("point: %d values for a %d-D image" % (len(pt), ref.ndim))
    if (isinstance(img, np.ndarray) and isinstance(lab, np.ndarray)
            and img.shape != lab.shape):
        raise ValueError("labels: shape %s differs from the image's %s" % (lab.shape, img.shape))
    data, h, w = _voxa.preview(img, lab, sp, pt, lo, hi, int(mem_limit))
    rgb = np.frombuffer(data, dtype=np.uint8).reshape(h, w, 3).copy()
    if path is not None:
        _voxa.png_write(os.fspath(path), rgb)
    return rgb


def label_color(label):
    """The (r, g, b) colour previews give label `label` (> 0)."""
    lab = np.full((1, 1), int(label), dtype=np.int64)
    return tuple(int(c) for c in preview(labels=lab)[0, 0])
