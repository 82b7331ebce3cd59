"""Per-object measurements: `regionprops_table`, a drop-in for
skimage.measure.regionprops_table on the properties voxa computes (exported
as ``voxa.regionprops_table``; ``voxa.regionprops``, the object API, is in
voxa._regionprops_objects and reads its columns from `property_arrays`).

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
import math
import warnings

import numpy as np

from . import _extra_props, _shape_props, _skimage_props, _voxa
from ._arrays import native

#: properties voxa computes, in the order of the default with intensity
PROPERTIES = ("label", "area", "num_pixels", "centroid", "bbox", "intensity_mean",
              "intensity_min", "intensity_max", "intensity_sum", "centroid_weighted",
              "intensity_std")
#: computed from the C pass's columns, with scikit-image's formulas
DERIVED = ("area_bbox", "extent", "equivalent_diameter_area", "centroid_local")
_INTENSITY = {"intensity_mean", "intensity_min", "intensity_max", "intensity_sum",
              "centroid_weighted", "intensity_std"}
# skimage's former names, accepted as it accepts them
_ALIASES = {"mean_intensity": "intensity_mean", "min_intensity": "intensity_min",
            "max_intensity": "intensity_max", "weighted_centroid": "centroid_weighted",
            "bbox_area": "area_bbox", "equivalent_diameter": "equivalent_diameter_area",
            "local_centroid": "centroid_local", "std_intensity": "intensity_std"}


def regionprops_table(label_image, intensity_image=None, properties=("label", "bbox"), *,
                      cache=True, separator="-", extra_properties=None, spacing=None):
    """Measure every labelled object of `label_image`.

    Parameters
    ----------
    label_image : integer array, 1-D to 8-D (not bool, not float)
    intensity_image : array of the same shape, or with one more (last) axis
        of channels, optional (any real dtype)
    properties : sequence of scikit-image's property names; the columns
        follow this order. voxa computes ``PROPERTIES`` (label, area,
        num_pixels, centroid, bbox, intensity_mean, intensity_min,
        intensity_max, intensity_sum, centroid_weighted) in one C pass,
        ``DERIVED`` (area_bbox, extent, equivalent_diameter_area,
        centroid_local) and the shape properties of its second moments
        (inertia_tensor, inertia_tensor_eigvals, axis_major_length,
        axis_minor_length, eccentricity, orientation; voxa._shape_props)
        from it, a 2-D `perimeter` and a 2-D or 3-D `euler_number` in C
        passes of their own; scikit-image, if installed, computes any other
        (perimeter_crofton, moments, solidity, ...; voxa._skimage_props).
    cache : accepted for scikit-image's signature (passed on to it)
    separator : str, between a property and its axis in column names
    extra_properties : iterable of functions, optional, as in scikit-image:
        ``f(mask)`` or ``f(mask, intensity)`` per object, on its bounding
        box; columns named after the function, after the others (see
        voxa._extra_props). A function named like a property is shadowed
        by it, with a warning, as in scikit-image.
    spacing : sequence of ndim floats > 0, optional: voxel size per axis
        (area becomes a physical volume, centroids physical positions; bbox
        stays in voxels), as in scikit-image.

    Returns
    -------
    dict of column name -> 1-D NumPy array (int64 for label, num_pixels and
    bbox; float64 for voxa's other columns; scikit-image's types for its own).
    With channels, intensity columns get a last index per channel
    (``intensity_mean-1``, ``centroid_weighted-0-1``), as in scikit-image.

    Raises
    ------
    TypeError for a bool or float label image (as scikit-image);
    ValueError for a shape mismatch or a bad spacing; an error that is both
    AttributeError (scikit-image's) and ValueError for an unknown property,
    an intensity property without an intensity image, or a property only
    scikit-image computes when it is not installed.
    """
    labels = check_labels(np.asarray(label_image))
    props, properties, extra = check_properties(properties, extra_properties,
                                                intensity_image is not None, labels.ndim)
    raw = None if intensity_image is None else np.asarray(intensity_image)
    sp = spacing_array(spacing, labels.ndim)
    cols = property_arrays(labels, raw, props, sp)
    groups = column_groups(cols, [(p, name) for p, name in zip(props, properties) if p],
                           separator)
    others = [name for p, name in zip(props, properties) if p is None]
    if others:
        groups.update(_skimage_props.columns(labels, raw, others, separator, spacing, cache))
    out = {}
    for name in properties:  # the order asked for
        out.update(groups[name])
    n = len(cols["label"])
    for func in extra:
        if n == 0:
            out.update(_extra_props.empty_columns(func, labels.ndim, raw, separator))
            continue
        out.update(_extra_props.columns(func, labels, raw, cols["label"], cols["bbox"],
                                        separator))
    return out


def property_arrays(labels, raw, props, sp):
    """{property: array} of every object, one row per label ascending (n x
    ... for the per-axis and per-channel ones): label, num_pixels, area,
    centroid, bbox and moments2 always, the intensity columns when `raw` is
    given, and those of voxa's own properties in `props` (canonical names,
    None ignored) that need more (DERIVED, the shape ones, perimeter,
    euler_number). `labels` checked (check_labels), `raw` an intensity array
    or None (checked here), `sp` spacing_array's. One C pass per channel
    (one without an intensity), one more for each of perimeter and
    euler_number; voxa.regionprops' objects call it once per property."""
    channels = [None] if raw is None else _channels(raw, labels.shape)
    moments = any(p in _shape_props.PROPERTIES for p in props)
    std = "intensity_std" in props
    per_channel = [decode(_voxa.measure(native(labels), c, sp, moments and i == 0, std),
                          labels.ndim) for i, c in enumerate(channels)]
    cols = dict(per_channel[0])
    if raw is not None and raw.ndim > labels.ndim:
        for p in _INTENSITY:  # channels on a last axis, as scikit-image shapes them
            if cols[p] is not None:  # (intensity_std is None unless asked for)
                cols[p] = np.stack([c[p] for c in per_channel], axis=-1)
    cols = with_derived(cols, labels.ndim, sp, props)
    cols.update(_shape_props.columns(cols, labels.ndim, sp, props))
    if "perimeter" in props:
        cols["perimeter"] = _perimeter(labels, cols["label"], sp)
    if "euler_number" in props:
        cols["euler_number"] = _euler(labels, cols["label"])
    return cols


def _perimeter(labels, rows, spacing):
    """skimage.measure.perimeter(object, 4) x spacing of every object, in
    one C pass (voxa_measure_perimeter_counts): to rounding, scikit-image's."""
    check_perimeter_spacing(spacing)
    rows = np.ascontiguousarray(rows, np.int64)
    counts = np.frombuffer(_voxa.perimeter_counts(native(labels), rows, (0, 0), labels.shape),
                           np.int64).reshape(-1, 3)
    return perimeter_of(counts, spacing)


def _euler(labels, rows):
    """skimage.measure.euler_number(object, connectivity=ndim) of every
    object, in one C pass (voxa_measure_euler_counts): exact integers."""
    rows = np.ascontiguousarray(rows, np.int64)
    return np.frombuffer(_voxa.euler_counts(native(labels), rows, (0,) * labels.ndim,
                                            labels.shape), np.int64).copy()


def check_perimeter_spacing(spacing):
    if spacing is not None and len(np.unique(spacing)) != 1:
        raise NotImplementedError("`perimeter` supports isotropic spacings only")


def perimeter_of(counts, spacing):
    """skimage's weights on the (n, 3) counts (in C, as the CLI applies
    them: voxa_measure_perimeter_of_counts), times the spacing."""
    p = np.frombuffer(_voxa.perimeter_of_counts(np.ascontiguousarray(counts, np.int64)),
                      np.float64).copy()
    return p if spacing is None else p * spacing[0]


def _channels(raw, shape):
    """The intensity image checked, then one native array per channel (one
    array without a channel axis), each copied only when its pass comes."""
    intensity = check_intensity(raw, shape, channels=True)
    if intensity.ndim == len(shape):
        return [native(intensity)]
    if intensity.shape[-1] == 0:
        raise ValueError("intensity_image: a channel axis of length 0")
    return (native(np.ascontiguousarray(intensity[..., c])) for c in range(intensity.shape[-1]))


def with_derived(cols, ndim, spacing, wanted):
    """`cols` and the DERIVED properties among `wanted`, by scikit-image's
    formulas. centroid_local comes from the integer coordinate sums,
    rint(centroid / spacing x count) while below 2^50: without a spacing it
    is scikit-image's exact quotient. The diameter's root is C's pow per
    object (NumPy's vector power differs in the last bit)."""
    wanted = set(wanted) & set(DERIVED)
    if not wanted:
        return cols
    box, count = cols["bbox"], cols["num_pixels"][:, None]
    start = box[:, :ndim]
    out = dict(cols)
    out["area_bbox"] = np.prod(box[:, ndim:] - start, axis=1) * \
        (1.0 if spacing is None else float(np.prod(spacing)))
    with np.errstate(invalid="ignore", divide="ignore"):
        out["extent"] = cols["area"] / out["area_bbox"]
    if "equivalent_diameter_area" in wanted:
        out["equivalent_diameter_area"] = np.array(
            [math.pow(v, 1 / ndim) for v in (2 * ndim * cols["area"] / math.pi).tolist()],
            np.float64)
    if "centroid_local" in wanted:
        scale = np.ones(ndim) if spacing is None else spacing
        total = cols["centroid"] / scale * count  # the integer coordinate sums
        local = (np.rint(total) - start * count) * scale / np.maximum(count, 1)
        out["centroid_local"] = np.where(total < 2.0**50, local,
                                         cols["centroid"] - start * scale)
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


def check_properties(properties, extra_properties, with_intensity, ndim=None, delegate=True):
    """(voxa's name of each property, None where scikit-image computes it;
    the names asked for; the extra functions not shadowed). With `ndim`,
    the shape properties of that rank are voxa's too (_shape_props); without
    `delegate`, only voxa's own properties are taken."""
    if isinstance(properties, str):
        properties = (properties,)
    properties = list(properties)
    extra = []
    for func in extra_properties or ():
        name = func.__name__
        if (name in PROPERTIES or name in DERIVED or name in _shape_props.PROPERTIES
                or name in _ALIASES or _skimage_props.knows(name)):
            warnings.warn(f"Extra property {name!r} is shadowed by the property of "
                          "that name and will be inaccessible. Consider renaming it.",
                          stacklevel=3)
            properties.append(name)
        else:
            extra.append(func)
    mine = PROPERTIES + DERIVED
    if ndim is not None:
        mine += tuple(p for p in _shape_props.PROPERTIES if _shape_props.computes(p, ndim))
    if ndim == 2:  # one C pass over the 2-D label image (chunks: with 2 pixels of context)
        mine += ("perimeter",)
    if ndim in (2, 3):  # one C pass (chunks: with 1 voxel of context)
        mine += ("euler_number",)
    props = [_ALIASES.get(p, p) for p in properties]
    props = [p if p in mine else None for p in props]
    theirs = [name for p, name in zip(props, properties) if p is None]
    if theirs and not delegate:
        raise _skimage_props.PropertyError(
            "properties: %s not computed here (it computes %s)"
            % (", ".join(repr(n) for n in theirs), ", ".join(mine)))
    _skimage_props.require(theirs, mine)
    if not with_intensity and any(p in _INTENSITY for p in props):
        raise _extra_props.IntensityMissing(
            "properties: %s need an intensity_image"
            % ", ".join(repr(n) for p, n in zip(props, properties) if p in _INTENSITY))
    return props, properties, extra


def check_intensity(intensity, shape, channels=False):
    """`intensity` (a NumPy or dask array) checked against the labels' shape
    (with `channels`, a last axis more is allowed), float16 widened to
    float32 (the C pass does not read it)."""
    shape = tuple(shape)
    if intensity.shape != shape and not (channels and intensity.shape[:-1] == shape):
        raise ValueError("intensity_image: shape %s differs from label_image's %s%s"
                         % (intensity.shape, shape,
                            " (a last axis of channels may be added)" if channels else ""))
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
            "intensity_min", "intensity_max", "intensity_sum", "centroid_weighted", "moments2",
            "intensity_std")


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
        if p == "moments2":
            a = a.reshape(n, nd, nd)
        elif p in ("centroid", "centroid_weighted", "bbox"):
            a = a.reshape(n, 2 * nd if p == "bbox" else nd)
        cols[p] = a
    return cols


def column_groups(cols, asked, separator):
    """{name asked for: {column: array}} for each (property, name) of
    `asked`; a property with axes (or channels) becomes one column per cell,
    name<separator><axis>[<separator><channel>]."""
    groups = {}
    for p, name in asked:
        a = cols[p]
        if a is None or a.ndim == 1:
            groups[name] = {name: a}
            continue
        groups[name] = {separator.join(map(str, (name,) + cell)):
                        np.ascontiguousarray(a[(slice(None),) + cell])
                        for cell in np.ndindex(a.shape[1:])}
    return groups


def named_columns(cols, props, properties, separator):
    """The table: each property asked for, under the name asked for."""
    out = {}
    for group in column_groups(cols, zip(props, properties), separator).values():
        out.update(group)
    return out
