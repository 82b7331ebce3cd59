"""voxa.regionprops, scikit-image's object API: every property a
skimage.measure.regionprops object answers (names found at run time), with
its type and value, on random 2-D and 3-D label images with sparse labels,
objects on the edges, one-voxel objects, holes; with and without intensity
(one channel, channels), spacing and offset. Then the cost model (one C pass
per property for all objects), the arguments and errors, former names,
extra_properties, equality, pickling, and life without scikit-image."""
import pickle
import warnings

import numpy as np
import pytest
from scipy import ndimage as ndi

skm = pytest.importorskip("skimage.measure")
import voxa  # noqa: E402
from voxa import _regionprops_objects, _regionprops_table, _skimage_props, _voxa  # noqa: E402

# float intensities summed in float64 by voxa, in float32 by scikit-image (measure.md: 1e-5)
SINGLE = ("intensity_mean", "intensity_std")


def skimage_names(region):
    """The property names of a scikit-image region: what it iterates over,
    its class's public attributes and its own (label, slice)."""
    return sorted(set(region) | {n for n in dir(type(region)) if not n.startswith("_")}
                  | {n for n in vars(region) if not n.startswith("_")})


def make_labels(shape, seed):
    """Blobs (several on the edges) under sparse labels, one-voxel objects
    in two corners and inside, a hollow square (cube), a one-voxel-thick
    line (plane) and a cross around an empty centre (not a hole when
    diagonal neighbours connect, scikit-image's image_filled)."""
    rng = np.random.default_rng(seed)
    blobs, n = ndi.label(ndi.gaussian_filter(rng.random(shape), 1.0) > 0.57)
    values = np.cumsum(rng.integers(1, 50, n + 1))
    values[0] = 0
    lab = values[blobs].astype(np.int32)
    top = int(values[-1])
    nd = len(shape)
    lab[(0,) * nd] = top + 7
    lab[(-1,) * nd] = top + 3
    lab[tuple(s // 2 for s in shape)] = top + 1000
    ring = (slice(1, 6),) * nd  # hollow: a hole (2-D) or a cavity (3-D)
    lab[ring] = top + 11
    lab[(slice(2, 5),) * nd] = 0
    lab[(shape[0] - 2,) + (slice(2, shape[-1] - 3),) * (nd - 1)] = top + 12  # a line / plane
    centre = (shape[0] // 2,) + (3,) * (nd - 1)  # a hole only for face neighbours: the
    for ax in range(nd):                       # centre, between the arms of a cross
        for d in (-1, 1):
            lab[tuple(c + d * (a == ax) for a, c in enumerate(centre))] = top + 13
    lab[centre] = 0
    return lab


def intensity(kind, shape, seed):
    rng = np.random.default_rng(seed + 100)
    if kind is None:
        return None
    if kind == "uint16":
        return rng.integers(0, 4000, shape).astype(np.uint16)
    if kind == "float32":
        return (rng.random(shape) * 10).astype(np.float32)
    return rng.random(shape + (3,)) * 100  # float64, three channels


def outcome(region, name):
    """(value, None) or (None, exception type)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-image's hull / contour warnings
        try:
            return getattr(region, name), None
        except Exception as e:  # noqa: BLE001
            return None, type(e)


def assert_same(name, got, want, ndim, single):
    """scikit-image's type, and its value: bit for bit where exact, to the
    rounding docs/measure.md documents for floats."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), name
        for g, w in zip(got, want):
            assert_same(name, g, w, ndim, single)
        return
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), (name, type(got))
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (name, got.dtype, got.shape,
                                                                    want.dtype, want.shape)
    else:
        assert type(got) is type(want), (name, type(got), type(want))
    if isinstance(want, slice) or np.asarray(want).dtype.kind not in "fc":
        assert np.array_equal(got, want), (name, got, want)
        return
    g, w = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if name == "orientation":  # +pi/2 and -pi/2 are one axis (measure.md)
        d = np.abs(g - w)
        assert d < 1e-12 or abs(d - np.pi) < 1e-12, (name, got, want)
        return
    rtol = 1e-5 if single and name in SINGLE else 1e-11
    atol = 1e-6 if "length" in name else 1e-12 * max(1.0, float(np.max(np.abs(w), initial=0)))
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=name)


CASES = [  # shape, intensity, spacing, offset
    ((40, 46), None, None, None),
    ((40, 46), "uint16", None, None),
    ((40, 46), "float32", (0.5, 2.0), (3, -2)),
    ((40, 46), "channels", 1.5, None),
    ((40, 46), None, (2, 3), (5, 7)),
    ((13, 15, 16), None, None, None),
    ((13, 15, 16), "uint16", (2.0, 0.5, 0.75), (1, 2, 3)),
    ((13, 15, 16), "channels", None, None),
    ((13, 15, 16), "float32", 2, None),  # an integer spacing: integer areas
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_every_property_as_skimage(case):
    shape, kind, spacing, offset = CASES[case]
    lab = make_labels(shape, case)
    img = intensity(kind, shape, case)
    got = voxa.regionprops(lab, img, spacing=spacing, offset=offset)
    want = skm.regionprops(lab, img, spacing=spacing, offset=offset)
    assert [r.label for r in got] == [r.label for r in want]
    assert len(want) > 10
    names = skimage_names(want[0])
    assert len(names) >= 40 and "area" in names and "moments_weighted_hu" in names
    for g, w in zip(got, want):
        assert list(g) == list(w)
        for name in names:
            gv, ge = outcome(g, name)
            wv, we = outcome(w, name)
            if we is not None:  # the same error (NotImplementedError, AttributeError, ...)
                assert ge is not None and issubclass(ge, we), (name, ge, we)
                continue
            assert ge is None, (name, ge)
            assert_same(name, gv, wv, len(shape), kind == "float32")


def test_exact_where_documented():
    """No spacing, integer intensity: label, num_pixels, bbox, area,
    centroid, intensity_min / max / mean and centroid_weighted are
    scikit-image's bits (measure.md)."""
    lab = make_labels((40, 46), 3)
    img = intensity("uint16", lab.shape, 3)
    for g, w in zip(voxa.regionprops(lab, img), skm.regionprops(lab, img)):
        for name in ("label", "num_pixels", "bbox", "area", "centroid", "intensity_min",
                     "intensity_max", "intensity_mean", "centroid_weighted"):
            assert getattr(g, name) == getattr(w, name), name


def counting(monkeypatch):
    """Counts of property_arrays calls and of C passes (_voxa.measure)."""
    calls = {"table": 0, "pass": 0}
    table, measure = _regionprops_table.property_arrays, _voxa.measure

    def table_counted(*a, **k):
        calls["table"] += 1
        return table(*a, **k)

    def measure_counted(*a, **k):
        calls["pass"] += 1
        return measure(*a, **k)
    monkeypatch.setattr(_regionprops_table, "property_arrays", table_counted)
    monkeypatch.setattr(_voxa, "measure", measure_counted)
    return calls


def test_one_pass_per_property_for_all_objects(monkeypatch):
    calls = counting(monkeypatch)
    lab = make_labels((40, 46), 5)
    img = intensity("uint16", lab.shape, 5)
    regions = voxa.regionprops(lab, img, spacing=(0.5, 2.0))
    assert len(regions) > 10 and calls == {"table": 1, "pass": 1}  # finding the objects
    [r.area for r in regions]
    assert calls == {"table": 2, "pass": 2}
    [r.area for r in regions]
    [r.centroid for r in regions]  # made by the same pass
    [r.num_pixels for r in regions]  # by the first
    assert calls == {"table": 2, "pass": 2}
    [r.intensity_mean for r in regions]
    [r.intensity_max for r in regions]
    assert calls == {"table": 3, "pass": 3}
    [r.eccentricity for r in regions]
    [r.orientation for r in regions]  # the shape columns come together
    assert calls == {"table": 4, "pass": 4}
    [r.extent for r in regions]
    assert calls["table"] == 5
    [(r.image, r.coords, r.image_intensity, r.bbox, r.slice) for r in regions]  # per object
    assert calls["table"] == 5
    # without a spacing the first pass's areas and centroids are the answer
    regions = voxa.regionprops(lab)
    [(r.area, r.centroid) for r in regions]
    assert calls["table"] == 6


def test_cache_flag():
    lab = make_labels((30, 30), 6)
    r = voxa.regionprops(lab)[0]
    assert r.image is r.image  # kept, as scikit-image keeps it
    r = voxa.regionprops(lab, cache=False)[0]
    assert r.image is not r.image and np.array_equal(r.image, r.image)
    assert r.area == voxa.regionprops(lab)[0].area


def test_cache_flag_after_the_labels_change():
    """A kept array stays as it was when the label image is written after;
    with cache=False it follows the image (scikit-image's own test of this
    goes through its private attributes, so it cannot reach voxa's)."""
    for cache in (True, False):
        lab = make_labels((30, 30), 6)
        r = next(r for r in voxa.regionprops(lab, cache=cache) if not r.image_filled.all())
        before = r.image_filled.copy()
        lab[r.slice] = r.label  # the object's box filled: its mask changes
        assert np.array_equal(r.image_filled, before) == cache
        if not cache:
            assert r.image_filled.all()


def test_arguments_and_errors():
    lab = make_labels((30, 30), 7)
    with pytest.raises(TypeError):
        voxa.regionprops(lab > 0)
    with pytest.raises(TypeError):
        voxa.regionprops(lab.astype(np.float64))
    with pytest.raises(ValueError, match="offset"):
        voxa.regionprops(lab, offset=(1, 2, 3))
    with pytest.raises(ValueError, match="offset"):
        voxa.regionprops(lab, offset=[[1, 2]])
    with pytest.raises(ValueError, match="shape"):
        voxa.regionprops(lab, np.zeros((30, 31)))
    with pytest.raises(ValueError, match="spacing"):
        voxa.regionprops(lab, spacing=(1, 2, 3))
    with pytest.raises(TypeError, match="spacing"):
        voxa.regionprops(lab, spacing=("a", "b"))
    with pytest.raises(ValueError, match="spacing"):
        voxa.regionprops(lab, spacing=(1, np.nan))
    # scikit-image checks those per object: nothing to check without objects
    assert voxa.regionprops(np.zeros((5, 5), np.uint8), spacing=(1, 2, 3)) == []
    assert skm.regionprops(np.zeros((5, 5), np.uint8), spacing=(1, 2, 3)) == []
    # positional cache, keyword-only the rest, as scikit-image
    assert len(voxa.regionprops(lab, None, False)) == len(skm.regionprops(lab, None, False))
    with pytest.raises(TypeError):
        voxa.regionprops(lab, None, True, None)
    # intensity properties without an intensity image
    r = voxa.regionprops(lab)[0]
    for name in ("intensity_mean", "image_intensity", "centroid_weighted", "moments_weighted",
                 "intensity_median", "intensity_sum", "mean_intensity"):
        assert not hasattr(r, name)
        with pytest.raises(AttributeError, match="intensity_image"):
            getattr(r, name)
    with pytest.raises(AttributeError):
        r.no_such_property
    # 2-D-only properties in 3-D, perimeter with an anisotropic spacing
    r3 = voxa.regionprops(make_labels((9, 10, 11), 8))[0]
    for name in ("eccentricity", "orientation", "perimeter", "perimeter_crofton", "moments_hu"):
        with pytest.raises(NotImplementedError):
            getattr(r3, name)
    with pytest.raises(NotImplementedError, match="isotropic"):
        voxa.regionprops(lab, spacing=(1, 2))[0].perimeter


def test_labels_numbering_and_other_ranks():
    """Labels ascending, far apart and negative ones ignored; 1-D and 4-D
    label images work for voxa's columns (scikit-image takes 2-D and 3-D
    only); an empty image has no objects."""
    lab = np.zeros((5, 6), np.int64)
    lab[0, 0], lab[4, 5], lab[2, 2], lab[1, 1] = 2**40, 3, -4, 9
    assert [r.label for r in voxa.regionprops(lab)] == [3, 9, 2**40]
    assert all(type(r.label) is int for r in voxa.regionprops(lab))
    lab1 = np.array([0, 1, 1, 0, 2], np.uint8)
    r = voxa.regionprops(lab1)
    assert [x.bbox for x in r] == [(1, 3), (4, 5)] and r[0].area == 2.0
    lab4 = np.zeros((3, 4, 5, 6), np.int32)
    lab4[1:, 1:3, 2:5, 0] = 4
    (r,) = voxa.regionprops(lab4)
    assert r.num_pixels == 12 and r.bbox == (1, 1, 2, 0, 3, 3, 5, 1)
    assert r.inertia_tensor.shape == (4, 4)
    with pytest.raises(ValueError):
        r.axis_major_length
    with pytest.raises(NotImplementedError):
        r.euler_number
    assert voxa.regionprops(np.zeros((0, 4), np.int32)) == []


def test_keys_iteration_and_former_names():
    lab = make_labels((30, 30), 9)
    img = intensity("uint16", lab.shape, 9)
    g, w = voxa.regionprops(lab, img)[2], skm.regionprops(lab, img)[2]
    assert list(g) == list(w)
    for name in g:
        assert_same(name, g[name], w[name], 2, False)
    assert repr(g) == repr(w)
    # scikit-image's former names, read from its own table at run time
    from skimage.measure import _regionprops as rp
    for old, new in rp.PROPS.items():
        with pytest.warns(FutureWarning):
            assert_same(new, g[old], w[new], 2, False)
        if old.islower():
            with pytest.warns(FutureWarning):
                assert_same(new, getattr(g, old), w[new], 2, False)
        else:  # CamelCase: keys only
            assert not hasattr(g, old) and not hasattr(w, old)
    g.Label = 77  # setting a former name sets the property (label is settable)
    assert g.label == 77


def test_extra_properties():
    lab = make_labels((30, 34), 10)
    img = intensity("channels", lab.shape, 10)

    def voxels(mask):
        return int(mask.sum())

    def brightest(mask, inten):
        return float(inten[mask].max())

    def moment(mask, inten, power=2):  # one default: two required arguments
        return float((inten[mask] ** power).sum())

    extra = [voxels, brightest, moment]
    got = voxa.regionprops(lab, img, extra_properties=extra)
    want = skm.regionprops(lab, img, extra_properties=extra)
    for g, w in zip(got, want):
        for name in ("voxels", "brightest", "moment"):
            assert_same(name, getattr(g, name), getattr(w, name), 2, False)
            assert_same(name, g[name], w[name], 2, False)
    one = voxa.regionprops(lab, img[..., 0], extra_properties=extra)[0]
    assert one.brightest == skm.regionprops(lab, img[..., 0], extra_properties=extra)[0].brightest
    # a two-argument function without an intensity image; a three-argument one
    r = voxa.regionprops(lab, extra_properties=[brightest, lambda a, b, c: 0])[0]
    with pytest.raises(AttributeError, match="intensity"):
        r.brightest
    with pytest.raises(AttributeError):
        getattr(r, "<lambda>")

    def area(mask):
        return -1

    with pytest.warns(UserWarning, match="shadowed"):
        r = voxa.regionprops(lab, extra_properties=[area])[0]
    assert r.area == r.num_pixels


def test_equality_and_pickling():
    lab = make_labels((30, 30), 11)
    img = intensity("float32", lab.shape, 11)
    a = voxa.regionprops(lab, img, spacing=(1.0, 1.0))
    b = voxa.regionprops(lab.copy(), img.copy(), spacing=(1.0, 1.0))
    assert a[0] == b[0] and a[1] != b[0] and a[0] != skm.regionprops(lab, img)[0]
    assert a[0] != "area"
    with pytest.raises(TypeError):
        hash(a[0])  # as scikit-image's: equality without hashing
    [r.area for r in a]
    a[0].image
    back = pickle.loads(pickle.dumps(a))
    assert [r.label for r in back] == [r.label for r in a]
    assert back[3] == a[3]
    assert back[0]._shared is back[5]._shared  # one shared state after the trip too
    for name in ("area", "centroid", "intensity_mean", "coords", "image_filled"):
        assert_same(name, getattr(back[4], name), getattr(a[4], name), 2, True)


def test_without_skimage(monkeypatch):
    """voxa's columns and the per-object arrays need no scikit-image; the
    properties it computes say it is needed."""
    lab = make_labels((30, 30), 12)
    img = intensity("uint16", lab.shape, 12)
    want = skm.regionprops(lab, img)
    monkeypatch.setattr(_skimage_props, "_regionprops", lambda: None)
    got = voxa.regionprops(lab, img)
    for g, w in zip(got, want):
        for name in ("area", "centroid", "image", "coords", "image_filled", "euler_number",
                     "perimeter", "inertia_tensor_eigvals", "extent"):
            assert_same(name, getattr(g, name), getattr(w, name), 2, False)
    for name in _regionprops_objects.DELEGATED:
        with pytest.raises(ValueError, match="scikit-image"):
            getattr(got[0], name)
    assert got[0] == voxa.regionprops(lab, img)[0]


def test_exported_names():
    assert voxa.measure.regionprops is voxa.regionprops
    assert voxa.measure.regionprops_table is voxa.regionprops_table
    assert isinstance(voxa.regionprops(make_labels((20, 20), 1))[0],
                      voxa.measure.RegionProperties)
    covered = set(_regionprops_objects.COMPUTED + _regionprops_objects.LOCAL
                  + _regionprops_objects.DELEGATED)
    lab = make_labels((20, 20), 1)
    assert covered == set(skimage_names(skm.regionprops(lab, lab)[0]))
