"""Per-object measurements: `regionprops_table`, a drop-in for
skimage.measure.regionprops_table on the properties voxa computes.

One pass over the label image in C (GIL released, multithreaded; results never
depend on the thread count), O(labels) memory. Columns are named and ordered
as scikit-image names them (``centroid-0``, ``bbox-3``, ...) and hold NumPy
arrays, so ``pandas.DataFrame(voxa.regionprops_table(...))`` works.
Labels <= 0 are background; rows are the labels present, ascending.

Equality with scikit-image (0.26): labels, num_pixels, bbox, intensity_min /
max are identical; area, centroid, intensity_mean and centroid_weighted are
identical without `spacing` for integer intensities (sums below 2^53); with a
fractional spacing or float intensities they agree to rounding (voxa sums
exactly, or in float64, where scikit-image sums scaled values one by one, or
float32 values in float32). `intensity_sum` is a voxa extension.
"""
import warnings

import numpy as np

from . import _extra_props, _voxa
from ._arrays import native

#: properties voxa computes, in the order of the default with intensity
PROPERTIES = ("label", "area", "num_pixels", "centroid", "bbox", "intensity_mean",
              "intensity_min", "intensity_max", "intensity_sum", "centroid_weighted")
_INTENSITY = {"intensity_mean", "intensity_min", "intensity_max", "intensity_sum",
              "centroid_weighted"}
# skimage's former names, accepted as it accepts them
_ALIASES = {"mean_intensity": "intensity_mean", "min_intensity": "intensity_min",
            "max_intensity": "intensity_max", "weighted_centroid": "centroid_weighted"}


def regionprops_table(label_image, intensity_image=None, properties=("label", "bbox"), *,
                      cache=True, separator="-", extra_properties=None, spacing=None):
    """Measure every labelled object of `label_image`.

    Parameters
    ----------
    label_image : integer array, 1-D to 8-D (not bool, not float)
    intensity_image : array of the same shape, optional (any real dtype)
    properties : sequence of names among ``voxa.regionprops.PROPERTIES``
        (label, area, num_pixels, centroid, bbox, intensity_mean,
        intensity_min, intensity_max, intensity_sum, centroid_weighted);
        the columns follow this order.
    cache : accepted for scikit-image's signature (voxa computes each column once)
    separator : str, between a property and its axis in column names
    extra_properties : iterable of functions, optional, as in scikit-image:
        ``f(mask)`` or ``f(mask, intensity)`` per object, on its bounding
        box; columns named after the function, after the others (see
        voxa._extra_props). A function named like a property above is
        shadowed by it, with a warning, as in scikit-image.
    spacing : sequence of ndim floats > 0, optional: voxel size per axis
        (area becomes a physical volume, centroids physical positions; bbox
        stays in voxels), as in scikit-image.

    Returns
    -------
    dict of column name -> 1-D NumPy array (int64 for label, num_pixels and
    bbox; float64 otherwise).

    Raises
    ------
    TypeError for a bool or float label image (as scikit-image);
    ValueError for an unknown property, a shape mismatch, a bad spacing;
    an error that is both AttributeError (scikit-image's) and ValueError for
    an intensity property without an intensity image.
    """
    labels = check_labels(np.asarray(label_image))
    props, properties, extra = check_properties(properties, extra_properties,
                                                intensity_image is not None)
    intensity = None
    if intensity_image is not None:
        intensity = native(check_intensity(np.asarray(intensity_image), labels.shape))
    sp = spacing_array(spacing, labels.ndim)
    res = _voxa.measure(native(labels), intensity, sp)
    n, nd = res[0], labels.ndim
    cols = decode(res, nd)
    out = named_columns(cols, props, properties, separator)
    raw = None if intensity_image is None else np.asarray(intensity_image)
    for func in extra:
        if n == 0:
            out.update(_extra_props.empty_columns(func, nd, None if raw is None else raw.dtype,
                                                  separator))
            continue
        out.update(_extra_props.columns(func, labels, raw, cols["label"], cols["bbox"],
                                        separator))
    return out


def check_labels(labels):
    """`labels` (a NumPy or dask array) if its dtype and rank are a label
    image's, else TypeError as scikit-image."""
    if labels.dtype == np.bool_ or labels.dtype.kind not in "iu":
        raise TypeError("label_image: dtype %s is not an integer type (label a mask first, "
                        "or cast it to uint8 for one object)" % labels.dtype)
    if labels.ndim < 1:
        raise TypeError("label_image: 0-D array (need at least one axis)")
    return labels


def check_properties(properties, extra_properties, with_intensity):
    """(voxa's names, the names asked for, the extra functions not shadowed)."""
    if isinstance(properties, str):
        properties = (properties,)
    extra = []
    for func in extra_properties or ():
        if func.__name__ in PROPERTIES or func.__name__ in _ALIASES:
            warnings.warn(f"Extra property {func.__name__!r} is shadowed by the property of "
                          "that name and will be inaccessible. Consider renaming it.",
                          stacklevel=3)
            properties = tuple(properties) + (func.__name__,)
        else:
            extra.append(func)
    props = [_ALIASES.get(p, p) for p in properties]
    for p, orig in zip(props, properties):
        if p not in PROPERTIES:
            raise ValueError("properties: unknown property %r (voxa computes %s)"
                             % (orig, ", ".join(PROPERTIES)))
    if not with_intensity and any(p in _INTENSITY for p in props):
        raise _extra_props.IntensityMissing(
            "properties: %s need an intensity_image"
            % ", ".join(repr(p) for p in props if p in _INTENSITY))
    return props, list(properties), extra


def check_intensity(intensity, shape):
    """`intensity` (a NumPy or dask array) checked against the labels' shape,
    float16 widened to float32 (the C pass does not read it)."""
    if intensity.shape != tuple(shape):
        raise ValueError("intensity_image: shape %s differs from label_image's %s"
                         % (intensity.shape, tuple(shape)))
    if intensity.dtype.kind not in "biuf":
        raise TypeError("intensity_image: dtype %s is not a real number type" % intensity.dtype)
    return intensity.astype(np.float32) if intensity.dtype == np.float16 else intensity


def spacing_array(spacing, ndim):
    if spacing is None:
        return None
    sp = np.asarray(spacing, dtype=np.float64).ravel()
    if sp.size == 1:
        sp = np.full(ndim, sp[0])
    if sp.size != ndim:
        raise ValueError("spacing: %d values for a %d-D label_image" % (sp.size, ndim))
    return np.ascontiguousarray(sp)


_COLUMNS = ("label", "num_pixels", "area", "centroid", "bbox", "intensity_mean",
            "intensity_min", "intensity_max", "intensity_sum", "centroid_weighted")


def decode(res, nd):
    """_voxa.measure's result as {property: array} (n x k for the per-axis
    ones; None where there is no intensity)."""
    n, cols = res[0], {}
    for p, buf in zip(_COLUMNS, res[1:]):
        if buf is None:
            cols[p] = None
            continue
        a = np.frombuffer(buf, dtype=np.int64 if p in ("label", "num_pixels", "bbox")
                          else np.float64).copy()
        cols[p] = a.reshape(n, 2 * nd if p == "bbox" else nd) \
            if p in ("centroid", "centroid_weighted", "bbox") else a
    return cols


def named_columns(cols, props, properties, separator):
    """The table: each property asked for, under the name asked for (per-axis
    ones split into name<separator><axis>)."""
    out = {}
    for p, name in zip(props, properties):
        a = cols[p]
        if a is not None and a.ndim == 2:
            for c in range(a.shape[1]):
                out["%s%s%d" % (name, separator, c)] = np.ascontiguousarray(a[:, c])
        else:
            out[name] = a
    return out
