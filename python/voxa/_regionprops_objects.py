"""`regionprops`: scikit-image's object API (skimage.measure.regionprops,
0.26) on voxa's columns.

``voxa.regionprops(labels, ...)`` returns one `RegionProperties` per label,
ascending, that answer scikit-image's property names with scikit-image's
values and types. Where the values come from:

* the C pass (voxa._regionprops_table.property_arrays): label, num_pixels,
  area, bbox, centroid, centroid_local, area_bbox, extent,
  equivalent_diameter_area, the intensity ones (intensity_mean / min / max /
  std, centroid_weighted, and voxa's intensity_sum), the shape ones
  (inertia_tensor, inertia_tensor_eigvals, axis_major_length,
  axis_minor_length, eccentricity, orientation), perimeter (2-D) and
  euler_number (2-D, 3-D). A column is computed for every object at once,
  the first time one object is asked for it, and kept by the list's shared
  state: ``[r.area for r in regions]`` is one C pass, not one per object,
  and a pass keeps every column it made (the intensity pass gives all the
  intensity columns, for instance).
* each object's bounding box, in NumPy (or voxa's hole filling): image,
  coords, coords_scaled, slice, image_intensity, image_filled, area_filled.
* scikit-image, one ``skimage.measure.RegionProperties`` per object made on
  first need, for the rest: image_convex, area_convex, solidity,
  feret_diameter_max, perimeter_crofton, intensity_median,
  centroid_weighted_local, the moments* family (and the properties above at
  ranks voxa does not compute them). Without scikit-image these raise an
  error that says so; the others need nothing.

`regionprops` makes one C pass to find the objects (their labels, boxes and
voxel counts; without a spacing also their areas and centroids).
"""
import math
import numbers
import warnings

import numpy as np

from . import _regionprops_table as _rt
from . import _shape_props, _skimage_props
from ._extra_props import required_args
from .fill import binary_fill_holes

# Where each property of scikit-image's (0.26) comes from.
#: columns of voxa's C pass (voxa._regionprops_table.property_arrays)
COMPUTED = ("num_pixels", "area", "bbox", "centroid", "centroid_local", "area_bbox", "extent",
            "equivalent_diameter_area", "intensity_mean", "intensity_min", "intensity_max",
            "intensity_std", "centroid_weighted", "inertia_tensor", "inertia_tensor_eigvals",
            "axis_major_length", "axis_minor_length", "eccentricity", "orientation",
            "perimeter", "euler_number")
#: computed per object from its bounding box
LOCAL = ("label", "slice", "image", "coords", "coords_scaled", "image_intensity",
         "image_filled", "area_filled")
#: computed by scikit-image
DELEGATED = ("image_convex", "area_convex", "solidity", "feret_diameter_max",
             "perimeter_crofton", "intensity_median", "centroid_weighted_local", "moments",
             "moments_central", "moments_hu", "moments_normalized", "moments_weighted",
             "moments_weighted_central", "moments_weighted_hu", "moments_weighted_normalized")
_ALL = COMPUTED + LOCAL + DELEGATED

_NEEDS_INTENSITY = frozenset({
    "image_intensity", "intensity_mean", "intensity_min", "intensity_max", "intensity_std",
    "intensity_median", "intensity_sum", "centroid_weighted", "centroid_weighted_local",
    "moments_weighted", "moments_weighted_central", "moments_weighted_hu",
    "moments_weighted_normalized"})
# NotImplementedError above 2-D, as scikit-image
_PLANAR = frozenset({"eccentricity", "orientation", "perimeter", "perimeter_crofton",
                     "moments_hu", "moments_weighted_hu"})
# iteration over an object gives scikit-image's names, less these three (as its does)
_ITERATED = tuple(sorted(set(_ALL) - {"num_pixels", "coords_scaled", "intensity_median"}))

# scikit-image's former names, deprecated in 0.26: as attributes (the
# lower-case ones) and as keys (all), with a FutureWarning
_FORMER = {
    "area": ("Area",), "bbox": ("BoundingBox",), "area_bbox": ("BoundingBoxArea", "bbox_area"),
    "centroid": ("Centroid",), "area_convex": ("ConvexArea", "convex_area"),
    "image_convex": ("ConvexImage", "convex_image"), "coords": ("Coordinates",),
    "eccentricity": ("Eccentricity",),
    "equivalent_diameter_area": ("EquivDiameter", "equivalent_diameter"),
    "euler_number": ("EulerNumber",), "extent": ("Extent",),
    "feret_diameter_max": ("FeretDiameter", "FeretDiameterMax"),
    "area_filled": ("FilledArea", "filled_area"), "image_filled": ("FilledImage", "filled_image"),
    "image": ("Image",), "inertia_tensor": ("InertiaTensor",),
    "inertia_tensor_eigvals": ("InertiaTensorEigvals",),
    "image_intensity": ("IntensityImage", "intensity_image"), "label": ("Label",),
    "centroid_local": ("LocalCentroid", "local_centroid"),
    "axis_major_length": ("MajorAxisLength", "major_axis_length"),
    "axis_minor_length": ("MinorAxisLength", "minor_axis_length"),
    "intensity_max": ("MaxIntensity", "max_intensity"),
    "intensity_mean": ("MeanIntensity", "mean_intensity"),
    "intensity_min": ("MinIntensity", "min_intensity"), "intensity_std": ("std_intensity",),
    "moments": ("Moments",), "moments_central": ("CentralMoments",),
    "moments_normalized": ("NormalizedMoments",), "moments_hu": ("HuMoments",),
    "orientation": ("Orientation",), "perimeter": ("Perimeter",),
    "perimeter_crofton": ("CroftonPerimeter",), "slice": ("Slice",), "solidity": ("Solidity",),
    "centroid_weighted": ("WeightedCentroid", "weighted_centroid"),
    "centroid_weighted_local": ("WeightedLocalCentroid", "weighted_local_centroid"),
    "moments_weighted": ("WeightedMoments", "weighted_moments"),
    "moments_weighted_central": ("WeightedCentralMoments", "weighted_moments_central"),
    "moments_weighted_normalized": ("WeightedNormalizedMoments",
                                    "weighted_moments_normalized"),
    "moments_weighted_hu": ("WeightedHuMoments", "weighted_moments_hu"),
}
_RENAMED = {old: new for new, olds in _FORMER.items() for old in olds}


def regionprops(label_image, intensity_image=None, cache=True, *, extra_properties=None,
                spacing=None, offset=None):
    """Measure the labelled objects of `label_image`, as
    skimage.measure.regionprops (scikit-image 0.26) does.

    Parameters
    ----------
    label_image : integer array (not bool, not float), 2-D or 3-D (voxa
        also takes 1-D to 8-D); labels <= 0 are background.
    intensity_image : array of the same shape, or with one more (last) axis
        of channels, optional (real dtypes).
    cache : bool, keep each object's arrays (image, image_intensity, ...)
        once computed (scikit-image's meaning). voxa's columns are kept for
        all objects either way (one number or row per object).
    extra_properties : iterable of functions ``f(mask)`` or ``f(mask,
        intensity)``, optional: ``region.f`` calls ``f`` on the object's
        mask over its box (and its intensity there, zero outside it; per
        channel, stacked on a last axis), at each access, as scikit-image.
        A function named like a property is shadowed by it (a warning).
    spacing : a number or one per axis, optional: the voxel size (finite,
        and > 0 for voxa's C pass); area, centroids and moments become
        physical, bbox and coords stay in voxels.
    offset : one integer per axis, optional: the position of
        ``label_image[0, ...]``, added to coords, coords_scaled and
        centroid (not to bbox or slice), as scikit-image adds it.

    Returns
    -------
    list of RegionProperties, one per label present, ascending. Each has
    scikit-image's properties as attributes (``r.area``, ``r.centroid``)
    and keys (``r["area"]``), with its value types (tuples, NumPy scalars,
    arrays of its dtypes and shapes, Python floats where it gives them);
    iterating over one gives its property names. Which properties voxa
    computes, per object or for all at once, and which scikit-image does:
    voxa._regionprops_objects (COMPUTED, LOCAL, DELEGATED).
    ``r.intensity_sum`` is a voxa extension.

    Cost: one C pass here; then at most one C pass for each property of
    COMPUTED the first time any object is asked for it (one per channel
    for the intensity ones), whatever the number of objects; LOCAL and
    DELEGATED ones cost a NumPy (or scikit-image) computation per object
    on its box, as in scikit-image.

    Raises
    ------
    TypeError for a bool or float label image (as scikit-image); ValueError
    for an offset of the wrong shape; with objects present, ValueError for
    an intensity image of another shape or a spacing of the wrong length,
    TypeError for a spacing that is not real numbers (as scikit-image).
    """
    labels = _rt.check_labels(np.asarray(label_image))
    ndim = labels.ndim
    if offset is None:
        off = np.zeros(ndim, dtype=int)
    else:
        off = np.asarray(offset)
        if off.ndim != 1 or off.size != ndim:
            raise ValueError("offset: %r is not one integer per axis of the %d-D label_image"
                             % (offset, ndim))
    raw = None if intensity_image is None else np.asarray(intensity_image)
    cols = _rt.property_arrays(labels, None, (), None)  # the one pass that finds the objects
    if len(cols["label"]) == 0:
        return []
    if raw is not None and (raw.shape[:ndim] != labels.shape or raw.ndim not in (ndim, ndim + 1)):
        raise ValueError("intensity_image: shape %s does not match label_image's %s (a last "
                         "axis of channels may be added)" % (raw.shape, labels.shape))
    sp = _normalized_spacing(spacing, ndim)
    shared = _Shared(labels, raw, cache, extra_properties, spacing, sp, off)
    keep = ("label", "bbox", "num_pixels") if spacing is not None else \
        ("label", "bbox", "num_pixels", "area", "centroid")
    shared.columns.update((k, cols[k]) for k in keep)
    _warn_shadowed(shared)
    starts, stops = cols["bbox"][:, :ndim].tolist(), cols["bbox"][:, ndim:].tolist()
    return [RegionProperties(shared, i, lab, tuple(map(slice, a, b)))
            for i, (lab, a, b) in enumerate(zip(cols["label"].tolist(), starts, stops))]


def _normalized_spacing(spacing, ndim):
    """The spacing as scikit-image keeps it: an array of ndim real finite
    numbers (its dtype kept: integer spacings give integer areas)."""
    if spacing is None:
        return np.full(ndim, 1.0)
    sp = np.array(spacing)
    if sp.ndim == 0:
        sp = np.full(ndim, sp)
    elif sp.shape != (ndim,):
        raise ValueError("spacing: %r is neither a number nor %d numbers (one per axis)"
                         % (spacing, ndim))
    if not all(isinstance(v, numbers.Real) for v in sp):
        raise TypeError("spacing: %r holds values that are not real numbers" % (spacing,))
    if not np.all(np.isfinite(sp)):
        raise ValueError("spacing: %r holds values that are not finite" % (spacing,))
    return sp


def _warn_shadowed(shared):
    for name in shared.extra:
        known = _RENAMED.get(name, name)
        if known in _ALL or known == "intensity_sum":
            if shared.raw is None and known in _NEEDS_INTENSITY:
                continue  # not an attribute here, so nothing shadows it (as scikit-image)
            warnings.warn(f"Extra property {name!r} is shadowed by the property of that name "
                          "and will be inaccessible. Consider renaming it.", stacklevel=3)


class _Shared:
    """What the objects of one `regionprops` call share: the images, the
    arguments, and the columns computed so far ({property: array, a row per
    object})."""

    def __init__(self, labels, raw, cache, extra, spacing, sp, offset):
        self.labels, self.raw = labels, raw
        self.ndim = labels.ndim
        self.channels = raw is not None and raw.ndim > labels.ndim
        self.cache = bool(cache)
        self.extra = {f.__name__: f for f in extra or ()}
        self.spacing_arg = spacing   # as given (for scikit-image's objects)
        self.spacing = sp            # scikit-image's normalized array
        self.offset = offset
        self.pixel_area = np.prod(sp)
        self.columns = {}
        self.groups = (_rt.DERIVED, tuple(p for p in _shape_props.PROPERTIES
                                          if _shape_props.computes(p, self.ndim)))
        # the C pass's spacing: float64 values > 0, or None (voxel units)
        self.c_spacing = None if spacing is None else _rt.spacing_array(sp, self.ndim)
        # the types scikit-image's formulas give for these
        self.area_type = type(np.int64(1) * self.pixel_area)
        self.area_bbox_type = type(1 * self.pixel_area)
        self.extent_type = type(self.area_type(1) / self.area_bbox_type(1))
        self.diameter_type = type(2 * self.ndim * self.area_type(1) / math.pi)
        if raw is not None:
            self.mean_type = raw.dtype.type if raw.dtype.kind == "f" else np.float64

    def column(self, name, *more):
        """The column `name` (computed with `more` and its group when first
        asked for, every object at once: one property_arrays call)."""
        col = self.columns.get(name)
        if col is None:
            wanted = (name,) + more
            for group in self.groups:  # what the same work gives: all of it
                if name in group:
                    wanted += group
            raw = self.raw if any(p in _NEEDS_INTENSITY for p in wanted) else None
            got = _rt.property_arrays(self.labels, raw, wanted, self.c_spacing)
            if not np.array_equal(got["label"], self.columns["label"]):
                raise RuntimeError("regionprops: the labels of label_image changed since the "
                                   "objects were made")
            self.columns.update((k, v) for k, v in got.items() if v is not None)
            col = self.columns[name]
        return col


def _only_planar(region, name):
    if region._shared.ndim > 2:
        raise NotImplementedError(f"Property {name} is not implemented for 3D images")


class RegionProperties:
    """One labelled object of `voxa.regionprops`: scikit-image's
    RegionProperties (0.26), its properties as attributes and keys.

    ``label`` and ``slice`` are attributes; the properties are computed on
    first access (see voxa.regionprops for where each comes from). Iterating
    gives the property names; ``r[name]`` is ``getattr(r, name)``; former
    names warn (FutureWarning) and give the new one's value; functions of
    `extra_properties` are attributes too. Two objects are equal when every
    property is (NaN equal to NaN); objects pickle."""

    def __init__(self, shared, row, label, slices):
        self._shared = shared
        self._row = row
        self._cache = {}
        self._skimage = None
        self.label = label
        self.slice = slices

    # -- plumbing ------------------------------------------------------------------
    def __setattr__(self, name, value):
        super().__setattr__(_RENAMED.get(name, name), value)

    def __getattr__(self, attr):
        # only reached when normal lookup fails (a property raising AttributeError too)
        if attr.startswith("_"):  # includes pickle's probes before __dict__ is set
            raise AttributeError(attr)
        shared = self._shared
        if shared.raw is None and attr in _NEEDS_INTENSITY:
            raise AttributeError(f"Attribute {attr!r} unavailable when `intensity_image` has "
                                 "not been specified.")
        if attr in shared.extra:
            return self._extra(attr, shared.extra[attr])
        if attr in _RENAMED and attr.islower():
            new = _RENAMED[attr]
            if shared.raw is None and new in _NEEDS_INTENSITY:
                raise AttributeError(f"Attribute {attr!r} unavailable when `intensity_image` "
                                     "has not been specified.")
            warnings.warn(f"`RegionProperties.{attr}` is deprecated (scikit-image 0.26, "
                          f"removal in 2.0); use `RegionProperties.{new}`.", FutureWarning,
                          stacklevel=2)
            return getattr(self, new)
        if attr in DELEGATED and _skimage_props._regionprops() is None:
            raise _skimage_props.PropertyError(
                f"RegionProperties.{attr} is computed by scikit-image, which is not installed "
                "(pip install scikit-image)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def __iter__(self):
        names = _ITERATED
        if self._shared.raw is None:
            names = [n for n in names if n not in _NEEDS_INTENSITY]
        return iter(names)

    def __getitem__(self, key):
        if key in _RENAMED:
            warnings.warn(f"`RegionProperties[{key!r}]` is deprecated (scikit-image 0.26, "
                          f"removal in 2.0); use `RegionProperties[{_RENAMED[key]!r}]`.",
                          FutureWarning, stacklevel=2)
            key = _RENAMED[key]
        return getattr(self, key)

    def __eq__(self, other):
        if not isinstance(other, RegionProperties):
            return False
        for name in _ITERATED:
            try:
                np.testing.assert_equal(_outcome(self, name), _outcome(other, name))
            except AssertionError:
                return False
        return True

    __hash__ = None

    def __repr__(self):
        return f"<{type(self).__qualname__}: label={self.label!r}, bbox={self.bbox}>"

    def _col(self, name, *more):
        return self._shared.column(name, *more)[self._row]

    def _cached(self, name, compute):
        if not self._shared.cache:
            return compute()
        if name not in self._cache:
            self._cache[name] = compute()
        return self._cache[name]

    def _need_intensity(self, name):
        if self._shared.raw is None:
            raise AttributeError(f"Attribute {name!r} unavailable when `intensity_image` has "
                                 "not been specified.")

    def _delegate(self, name):
        """scikit-image's value, from its RegionProperties of this object
        (which raises as it does: a 2-D-only property, a spacing it does not
        take, a missing intensity image, in its order)."""
        rp = _skimage_props._regionprops()
        if rp is None:
            if name in _PLANAR:
                _only_planar(self, name)
            if name in _NEEDS_INTENSITY:
                self._need_intensity(name)
            raise _skimage_props.PropertyError(
                f"RegionProperties.{name} is computed by scikit-image, which is not installed "
                "(pip install scikit-image)")
        if self._skimage is None:
            sh = self._shared
            self._skimage = rp.RegionProperties(self.slice, self.label, sh.labels, sh.raw,
                                                sh.cache, spacing=sh.spacing_arg,
                                                offset=sh.offset)
        return getattr(self._skimage, name)

    def _extra(self, name, func):
        n = required_args(func)
        if n == 1:
            return func(self.image)
        if n != 2:
            raise AttributeError(f"extra property {name!r}: a function of 1 or 2 required "
                                 f"arguments (mask, intensity) is needed, it takes {n}")
        if self._shared.raw is None:
            raise AttributeError(f"extra property {name!r} needs an intensity_image")
        inten = self.image_intensity
        if not self._shared.channels:
            return func(self.image, inten)
        return np.stack([func(self.image, inten[..., c]) for c in range(inten.shape[-1])],
                        axis=-1)

    # -- voxa's columns -------------------------------------------------------------
    @property
    def num_pixels(self):
        """Number of voxels of the object (NumPy int64)."""
        return self._col("num_pixels")

    @property
    def area(self):
        """Voxel count x the product of the spacing (a physical area or volume)."""
        return self._shared.area_type(self._col("area"))

    @property
    def bbox(self):
        """Bounding box: the start of every axis, then the stop (exclusive), in
        voxels (tuple of ints)."""
        return tuple([s.start for s in self.slice] + [s.stop for s in self.slice])

    @property
    def area_bbox(self):
        """Area (volume) of the bounding box, x the product of the spacing."""
        return self._shared.area_bbox_type(self._col("area_bbox"))

    @property
    def extent(self):
        """area / area_bbox."""
        return self._shared.extent_type(self._col("extent"))

    @property
    def equivalent_diameter_area(self):
        """Diameter of the disk (ball) of the object's area (volume)."""
        return self._shared.diameter_type(self._col("equivalent_diameter_area"))

    @property
    def centroid(self):
        """Mean voxel position x spacing, plus the offset (tuple)."""
        return tuple(self._col("centroid") + self._shared.offset)

    @property
    def centroid_local(self):
        """centroid relative to the bounding box's start, x spacing (array)."""
        return np.array(self._col("centroid_local"))

    def _intensity_value(self, name, kind):
        self._need_intensity(name)
        v = self._col(name)
        return v.astype(kind) if self._shared.channels else kind(v)

    @property
    def intensity_mean(self):
        """Mean intensity over the object (per channel: an array); float
        intensities keep their type, others give float64 (np.mean's rule)."""
        return self._intensity_value("intensity_mean", self._shared.mean_type)

    @property
    def intensity_std(self):
        """Standard deviation of the intensity over the object (np.std's type)."""
        return self._intensity_value("intensity_std", self._shared.mean_type)

    @property
    def intensity_min(self):
        """Least intensity over the object (float64; per channel: an array)."""
        return self._intensity_value("intensity_min", np.float64)

    @property
    def intensity_max(self):
        """Greatest intensity over the object (float64; per channel: an array)."""
        return self._intensity_value("intensity_max", np.float64)

    @property
    def intensity_sum(self):
        """Sum of the intensity over the object (float64; per channel: an
        array). A voxa extension: not in scikit-image, nor in iteration."""
        return self._intensity_value("intensity_sum", np.float64)

    @property
    def centroid_weighted(self):
        """Intensity-weighted centroid x spacing (tuple; per channel, a tuple of
        arrays)."""
        self._need_intensity("centroid_weighted")
        return tuple(np.array(self._col("centroid_weighted")))

    @property
    def inertia_tensor(self):
        """Inertia tensor of the object (ndim x ndim array)."""
        return np.array(self._col("inertia_tensor"))

    @property
    def inertia_tensor_eigvals(self):
        """Eigenvalues of the inertia tensor, descending (a list)."""
        return list(np.array(self._col("inertia_tensor_eigvals")))

    def _axis(self, name):
        if self._shared.ndim not in (2, 3):
            raise ValueError(f"{name} only available in 2D and 3D")
        return float(self._col(name))

    @property
    def axis_major_length(self):
        """Major axis of the ellipse (ellipsoid) of the same second moments."""
        return self._axis("axis_major_length")

    @property
    def axis_minor_length(self):
        """Minor axis of the ellipse (ellipsoid) of the same second moments."""
        return self._axis("axis_minor_length")

    @property
    def eccentricity(self):
        """Eccentricity of the ellipse of the same second moments (2-D): 0 (an
        int) for an object without extent, as scikit-image gives it."""
        _only_planar(self, "eccentricity")
        if self._shared.ndim != 2:
            return self._delegate("eccentricity")
        if self._col("inertia_tensor_eigvals", "eccentricity")[0] == 0:
            return 0
        return float(self._col("eccentricity", "inertia_tensor_eigvals"))

    @property
    def orientation(self):
        """Angle between axis 0 and the major axis, in (-pi/2, pi/2] (2-D)."""
        _only_planar(self, "orientation")
        if self._shared.ndim != 2:
            return self._delegate("orientation")
        return float(self._col("orientation"))

    @property
    def perimeter(self):
        """skimage.measure.perimeter(image, 4) x spacing (2-D, isotropic spacing)."""
        _only_planar(self, "perimeter")
        if self._shared.ndim != 2:
            return self._delegate("perimeter")
        _rt.check_perimeter_spacing(self._shared.spacing)
        return np.float64(self._col("perimeter"))

    @property
    def euler_number(self):
        """Objects minus holes (2-D); objects minus tunnels plus cavities (3-D);
        connectivity ndim (a NumPy int64 in 2-D, an int in 3-D)."""
        if self._shared.ndim not in (2, 3):
            raise NotImplementedError("Euler number is implemented for 2D and 3D images only")
        e = self._col("euler_number")
        return e if self._shared.ndim == 2 else int(e)  # scikit-image's types

    # -- per object, from its box ------------------------------------------------------
    @property
    def image(self):
        """The object's mask over its bounding box (bool array)."""
        return self._cached("image", lambda: self._shared.labels[self.slice] == self.label)

    def _positions(self):
        start = np.array([s.start for s in self.slice])
        return start + np.argwhere(self.image)

    @property
    def coords(self):
        """Voxel indices of the object, plus the offset ((count, ndim) array)."""
        return self._positions() + self._shared.offset

    @property
    def coords_scaled(self):
        """Voxel indices x spacing, plus the offset ((count, ndim) array)."""
        return self._positions() * self._shared.spacing + self._shared.offset

    @property
    def image_intensity(self):
        """The intensity image over the bounding box, zero outside the object
        (its dtype; channels last)."""
        self._need_intensity("image_intensity")

        def crop():
            mask = self.image[..., None] if self._shared.channels else self.image
            return self._shared.raw[self.slice] * mask
        return self._cached("image_intensity", crop)

    @property
    def image_filled(self):
        """image with its holes filled (voxa.binary_fill_holes, full connectivity)."""
        full = np.ones((3,) * self._shared.ndim, bool)
        return self._cached("image_filled", lambda: binary_fill_holes(self.image, full))

    @property
    def area_filled(self):
        """Area (volume) of image_filled, x the product of the spacing."""
        return np.sum(self.image_filled) * self._shared.pixel_area


def _delegated(name):
    def get(self):
        return self._delegate(name)
    get.__name__ = name
    return property(get, doc=f"scikit-image's {name} of this object (computed by "
                        "scikit-image, which must be installed).")


for _name in DELEGATED:
    setattr(RegionProperties, _name, _delegated(_name))
del _name


def _outcome(region, name):
    """A property's value, or the type of the error it raises."""
    try:
        return getattr(region, name)
    except Exception as e:  # noqa: BLE001 (compared, not hidden: equal errors are equal)
        return ("raises", type(e).__name__)
