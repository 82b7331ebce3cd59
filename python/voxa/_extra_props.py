"""regionprops_table's `extra_properties`: user functions per object, with
scikit-image's calling and column rules.

A function taking one required argument gets the object's mask within its
bounding box (bool); one taking two also gets the intensity image over that
box, zero outside the object (``intensity[box] * mask``, as skimage's
``image_intensity``); with a channel axis, one call per channel, the results
stacked on a last axis. The column's dtype comes from calling the function on
two small probe masks of different sizes (random float intensities): the same
shape both times gives that dtype and, for array results, one column per
element (``name-0``, ``name-0-1``, ...); different shapes give one object
column. Values are cast into that dtype, as skimage casts them.

Cost: one Python call per object, on its bounding box (skimage's cost too);
the C pass gives the boxes."""
import inspect

import numpy as np


class IntensityMissing(AttributeError, ValueError):
    """A property that needs the intensity image, which was not given
    (scikit-image raises AttributeError, voxa raised ValueError before)."""


def required_args(func):
    """Positional parameters without a default (skimage's count)."""
    spec = inspect.getfullargspec(func)
    return len(spec.args) - len(spec.defaults or ())


def _probe_dtype(func, two, ndim):
    rng = np.random.default_rng()
    small = np.zeros((2,) * ndim, bool)
    small[(0,) * ndim] = True
    big = np.zeros((3,) * ndim, bool)
    big[(slice(1, None),) * ndim] = True
    vals = [func(m, rng.random(m.shape)) if two else func(m) for m in (small, big)]
    if (np.isscalar(vals[0]) and np.isscalar(vals[1])) or \
            np.shape(vals[0]) == np.shape(vals[1]):
        return np.asarray(vals[0]).dtype
    return np.dtype(object)


def columns(func, labels, intensity, rows, boxes, separator):
    """{column: values} of one extra property; rows: the labels, boxes: (n,
    2 ndim) starts then stops."""
    name = func.__name__
    nargs = required_args(func)
    if nargs not in (1, 2):
        raise AttributeError(f"extra property {name!r}: a function of 1 or 2 required "
                             f"arguments (mask, intensity) is needed, it takes {nargs}")
    if nargs == 2 and intensity is None:
        raise IntensityMissing(f"extra property {name!r} needs an intensity_image")
    nd = labels.ndim
    channels = intensity is not None and intensity.ndim > nd
    values = []
    for lab, box in zip(rows, boxes):
        box = tuple(slice(int(a), int(b)) for a, b in zip(box[:nd], box[nd:]))
        mask = labels[box] == lab
        if nargs == 1:
            values.append(func(mask))
        elif channels:  # one call per channel, stacked on a last axis (skimage's rule)
            crop = intensity[box] * mask[..., None]
            values.append(np.stack([func(mask, crop[..., c]) for c in range(crop.shape[-1])],
                                   axis=-1))
        else:
            values.append(func(mask, intensity[box] * mask))
    dtype = _probe_dtype(func, nargs == 2, nd)
    first = values[0]
    if np.isscalar(first) or dtype == object:
        col = np.empty(len(values), dtype)
        for i, v in enumerate(values):
            col[i] = v
        return {name: col}
    cells = list(np.ndindex(np.shape(first)))
    data = np.empty((len(values), len(cells)), dtype)
    for i, v in enumerate(values):
        v = np.asarray(v)
        for j, cell in enumerate(cells):
            data[i, j] = v[cell]
    return {separator.join(map(str, (name,) + cell)): data[:, j].copy()
            for j, cell in enumerate(cells)}


def empty_columns(func, ndim, intensity, separator):
    """The columns of a table without objects: those of one probe object
    (and the intensity's channels), with no rows (skimage's rule)."""
    labels = np.zeros((3,) * ndim, np.int64)
    labels[(1,) * ndim] = 1
    inten = None if intensity is None else \
        np.zeros(labels.shape + intensity.shape[ndim:], intensity.dtype)
    box = np.array([[1] * ndim + [2] * ndim])
    return {k: v[:0] for k, v in columns(func, labels, inten, [1], box, separator).items()}
