"""voxa.regionprops_table and `voxa measure` against
skimage.measure.regionprops_table: every label dtype, gaps in the numbering,
negative labels, empty images, anisotropic spacing, float intensities,
strides and byte order, thread counts, the CLI by blocks vs whole, errors;
extra_properties (scikit-image's user functions: columns, dtypes, empty
tables, shadowing, errors)."""
import csv

import numpy as np
import pytest
from skimage.measure import regionprops_table as sk_table

import voxa

ALL = ("label", "area", "num_pixels", "centroid", "bbox", "intensity_mean", "intensity_min",
       "intensity_max", "centroid_weighted")
LABEL_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64)


def assert_same(a, b, rtol=0.0):
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        if rtol == 0.0 or a[k].dtype.kind != "f":
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)
        else:
            np.testing.assert_allclose(a[k], b[k], rtol=rtol, atol=0, err_msg=k)


def random_labels(rng, shape, values, p_background=0.3):
    lab = rng.choice(np.asarray(values), size=shape)
    lab[rng.random(shape) < p_background] = 0
    return lab


@pytest.mark.parametrize("dtype", LABEL_DTYPES)
@pytest.mark.parametrize("shape", [(31, 40), (9, 14, 17)])
def test_every_label_dtype(dtype, shape):
    rng = np.random.default_rng(len(shape) + np.dtype(dtype).itemsize)
    lab = random_labels(rng, shape, np.arange(1, 25)).astype(dtype)
    img = rng.integers(0, 65535, shape).astype(np.uint16)
    assert_same(voxa.regionprops_table(lab, img, properties=ALL),
                sk_table(lab, img, properties=ALL))


def test_gaps_and_negative_labels():
    rng = np.random.default_rng(1)
    lab = random_labels(rng, (12, 13, 14), [-7, -1, 3, 1000, 70000]).astype(np.int64)
    img = rng.integers(-500, 500, lab.shape).astype(np.int32)
    got = voxa.regionprops_table(lab, img, properties=ALL)
    assert got["label"].tolist() == [3, 1000, 70000]
    assert_same(got, sk_table(lab, img, properties=ALL))
    # labels far apart cost nothing (skimage's find_objects allocates up to the
    # largest label and fails here): the same rows with label 2^40
    lab[lab == 70000] = 2**40
    big = voxa.regionprops_table(lab, img, properties=ALL)
    assert big.pop("label").tolist() == [3, 1000, 2**40]
    got.pop("label")
    assert_same(big, got)


def test_default_properties_and_order():
    lab = np.array([[0, 2, 2], [1, 0, 2]], np.uint8)
    assert list(voxa.regionprops_table(lab)) == ["label", "bbox-0", "bbox-1", "bbox-2",
                                                 "bbox-3"]
    props = ("bbox", "centroid", "label")
    assert_same(voxa.regionprops_table(lab, properties=props), sk_table(lab, properties=props))
    # skimage's former names are accepted, as skimage accepts them
    old = voxa.regionprops_table(lab, lab, properties=("label", "mean_intensity"))
    assert list(old) == ["label", "mean_intensity"]


@pytest.mark.parametrize("shape", [(0, 5), (4, 5), (3, 0, 2)])
def test_empty(shape):
    lab = np.zeros(shape, np.int32)
    img = np.ones(shape, np.float32)
    # skimage fails on zero-size arrays; its columns for an all-background
    # image of the same ndim are the reference
    ref = np.zeros((2,) * len(shape), np.int32)
    assert_same(voxa.regionprops_table(lab, img, properties=ALL),
                sk_table(ref, ref, properties=ALL))


def test_spacing():
    rng = np.random.default_rng(2)
    lab = random_labels(rng, (10, 12, 15), np.arange(1, 9)).astype(np.uint16)
    img = rng.integers(0, 4000, lab.shape).astype(np.uint16)
    # products exact (powers of two, integers): the same bits
    for sp in [(2.0, 0.5, 4.0), (3.0, 1.0, 2.0)]:
        assert_same(voxa.regionprops_table(lab, img, properties=ALL, spacing=sp),
                    sk_table(lab, img, properties=ALL, spacing=sp))
    # fractional: skimage adds rounded products one by one; equal to rounding
    sp = (0.3, 1.7, 0.11)
    got = voxa.regionprops_table(lab, img, properties=ALL, spacing=sp)
    want = sk_table(lab, img, properties=ALL, spacing=sp)
    assert_same(got, want, rtol=1e-13)
    np.testing.assert_array_equal(got["bbox-4"], want["bbox-4"])
    assert got["area"][0] == got["num_pixels"][0] * (0.3 * 1.7 * 0.11)
    # a scalar spacing is every axis
    assert_same(voxa.regionprops_table(lab, properties=("area",), spacing=0.5),
                voxa.regionprops_table(lab, properties=("area",), spacing=(0.5,) * 3))


@pytest.mark.parametrize("idtype", [np.float32, np.float64, np.bool_, np.int8, np.uint64])
def test_intensity_dtypes(idtype):
    rng = np.random.default_rng(3)
    lab = random_labels(rng, (20, 30), np.arange(1, 12)).astype(np.int32)
    img = (rng.random(lab.shape) * 100).astype(idtype)
    got = voxa.regionprops_table(lab, img, properties=ALL)
    want = sk_table(lab, img, properties=ALL)
    # skimage averages float32 in float32; voxa sums in float64
    assert_same(got, want, rtol=1e-5 if idtype == np.float32 else 1e-13)
    for k in ("intensity_min", "intensity_max", "label", "num_pixels", "bbox-0", "bbox-3"):
        np.testing.assert_array_equal(got[k], want[k])


def test_nan_intensity():
    lab = np.array([1, 1, 2, 2], np.uint8)
    img = np.array([1.0, np.nan, 2.0, 3.0])
    got = voxa.regionprops_table(lab, img, properties=("intensity_min", "intensity_max",
                                                       "intensity_mean"))
    assert np.isnan(got["intensity_min"][0]) and np.isnan(got["intensity_max"][0])
    assert got["intensity_mean"][1] == 2.5


def test_strides_order_and_byte_order():
    rng = np.random.default_rng(4)
    lab = random_labels(rng, (16, 18, 20), np.arange(1, 30)).astype(np.int32)
    img = rng.integers(0, 1000, lab.shape).astype(np.uint16)
    want = sk_table(lab, img, properties=ALL)
    assert_same(voxa.regionprops_table(np.asfortranarray(lab), img.astype(">u2"), properties=ALL),
                want)
    view = lab[::-2, 1::3, ::2]
    iview = img[::-2, 1::3, ::2]
    assert_same(voxa.regionprops_table(view, iview, properties=ALL),
                sk_table(np.ascontiguousarray(view), np.ascontiguousarray(iview),
                         properties=ALL))


def test_threads_identical():
    rng = np.random.default_rng(5)
    lab = random_labels(rng, (40, 100, 100), np.arange(1, 400)).astype(np.uint32)
    img = rng.random(lab.shape) * 1e6  # float64: sums round, order matters
    saved = voxa.get_threads()
    try:
        voxa.set_threads(1)
        one = voxa.regionprops_table(lab, img, properties=ALL)
        voxa.set_threads(3)
        three = voxa.regionprops_table(lab, img, properties=ALL)
    finally:
        voxa.set_threads(saved)
    assert_same(one, three)


def test_errors():
    lab = np.zeros((3, 4), np.uint8)
    with pytest.raises(TypeError, match="bool"):
        voxa.regionprops_table(lab.astype(bool))
    with pytest.raises(TypeError, match="float32"):
        voxa.regionprops_table(lab.astype(np.float32))
    with pytest.raises(ValueError, match="bogus"):
        voxa.regionprops_table(lab, properties=("label", "bogus"))
    with pytest.raises(ValueError, match="intensity_image"):
        voxa.regionprops_table(lab, properties=("intensity_mean",))
    with pytest.raises(ValueError, match="shape"):
        voxa.regionprops_table(lab, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="spacing"):
        voxa.regionprops_table(lab, spacing=(1, 2, 3))
    with pytest.raises(ValueError, match="spacing"):
        voxa.regionprops_table(lab, spacing=(1, 0))
    with pytest.raises(ValueError, match="above the largest label"):
        voxa.regionprops_table(np.array([1, 2**63], np.uint64))


def _n(mask):
    return int(mask.sum())


def _isum(mask, intensity):
    return intensity[mask].sum()


def _box_total(mask, intensity):  # the box's intensity is zero outside the object
    return float(intensity.sum())


def _quartiles(mask, intensity):
    return np.percentile(intensity[mask], [25, 75])


def _shape2(mask):
    return np.full((2, 3), mask.sum(), np.float32)


def _coords(mask):  # a different size per object: an object column
    return np.argwhere(mask)


def _box(mask):
    return mask.shape


def assert_same_extra(a, b):
    assert list(a) == list(b)
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        if a[k].dtype == object:
            assert len(a[k]) == len(b[k]) and all(np.array_equal(x, y)
                                                  for x, y in zip(a[k], b[k])), k
        else:
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.parametrize("shape,idtype", [((31, 40), np.uint8), ((9, 14, 17), np.float32)])
def test_extra_properties_like_skimage(shape, idtype):
    rng = np.random.default_rng(31)
    lab = random_labels(rng, shape, [0, 3, 5, 9, 200], 0.4)
    img = (rng.random(shape) * 100).astype(idtype)
    funcs = [_n, _isum, _quartiles, _shape2, _coords, _box, _box_total]
    for props in [(), ("label", "area", "centroid")]:
        for extra in [funcs[:1], funcs[1:2], funcs]:
            with np.errstate(all="ignore"):
                want = sk_table(lab, img, properties=props, extra_properties=extra)
            assert_same_extra(voxa.regionprops_table(lab, img, properties=props,
                                                     extra_properties=extra), want)
    empty = np.zeros(shape, np.int32)
    assert_same_extra(voxa.regionprops_table(empty, img, ("label",), extra_properties=funcs[:3]),
                      sk_table(empty, img, ("label",), extra_properties=funcs[:3]))


def test_extra_properties_rules():
    lab = np.array([[0, 1, 1], [2, 0, 1]], np.int32)

    def area(mask):  # shadowed by the property, as in skimage
        return -1
    with pytest.warns(UserWarning, match="shadowed"):
        got = voxa.regionprops_table(lab, properties=("label",), extra_properties=[area])
    np.testing.assert_array_equal(got["area"], [3.0, 1.0])
    with pytest.raises(AttributeError, match="intensity_image"):
        voxa.regionprops_table(lab, extra_properties=[_isum])
    with pytest.raises(AttributeError, match="intensity_image"):  # skimage's error class
        voxa.regionprops_table(lab, properties=("intensity_mean",))

    def three(mask, intensity, other):
        return 0
    with pytest.raises(AttributeError, match="1 or 2"):
        voxa.regionprops_table(lab, np.ones(lab.shape), extra_properties=[three])
    got = voxa.regionprops_table(lab, extra_properties=[_n], separator="/", cache=False)
    assert list(got) == ["label", "bbox/0", "bbox/1", "bbox/2", "bbox/3", "_n"]


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=np.float64).reshape(len(rows) - 1, len(rows[0]))


@pytest.mark.parametrize("mem", [None, "1K", "100"])
def test_cli_blocks_vs_skimage(cli, tmp_path, mem):
    rng = np.random.default_rng(6)
    lab = random_labels(rng, (11, 23, 29), [2, 5, 9, 70000]).astype(np.int32)
    img = rng.integers(0, 60000, lab.shape).astype(np.uint16)
    np.save(tmp_path / "lab.npy", lab)
    np.save(tmp_path / "img.npy", img)
    args = ["measure", tmp_path / "lab.npy", "--intensity", tmp_path / "img.npy", "--spacing",
            "2,1,0.5", "-o", tmp_path / "t.csv"]
    if mem:
        args += ["--mem-limit", mem]
    r = cli(*args)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "4"
    names, vals = read_csv(tmp_path / "t.csv")
    props = ("label", "area", "centroid", "bbox", "intensity_mean", "intensity_min",
             "intensity_max", "centroid_weighted")
    want = sk_table(lab, img, properties=props, spacing=(2, 1, 0.5))
    keys = list(want)
    assert names == keys[:14] + ["intensity_sum"] + keys[14:]  # default columns, in order
    for k, v in want.items():
        np.testing.assert_array_equal(vals[:, names.index(k)], v, err_msg=k)
    s = vals[:, names.index("intensity_sum")]
    np.testing.assert_array_equal(s, [img[lab == v].sum() for v in (2, 5, 9, 70000)])


def test_cli_properties_and_errors(cli, tmp_path):
    lab = np.array([[0, 3, 3], [5, 0, 3]], np.uint8)
    np.save(tmp_path / "lab.npy", lab)
    r = cli("measure", tmp_path / "lab.npy", "-o", tmp_path / "t.csv", "--properties",
            "num_pixels,label")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.csv").read_text() == "num_pixels,label\n3,3\n1,5\n"
    r = cli("measure", tmp_path / "lab.npy", "-o", tmp_path / "u.csv", "--properties",
            "intensity_mean")  # a usage error, found before the pass over the labels
    assert r.returncode == 2 and "needs an intensity image" in r.stderr
    assert not (tmp_path / "u.csv").exists()
    np.save(tmp_path / "f.npy", lab.astype(np.float32))
    r = cli("measure", tmp_path / "f.npy", "-o", tmp_path / "u.csv")
    assert r.returncode == 1 and "voxa: measure: labels: dtype float32" in r.stderr
    r = cli("measure", tmp_path / "lab.npy", "-o", tmp_path / "u.csv", "--spacing", "1,2,3")
    assert r.returncode == 2 and "--spacing has 3 values" in r.stderr
    r = cli("measure", tmp_path / "lab.npy", "-o", tmp_path / "u.csv", "--mem-limit", "lots")
    assert r.returncode == 2 and "--mem-limit" in r.stderr
    r = cli("measure", tmp_path / "lab.npy")
    assert r.returncode == 2 and "missing -o" in r.stderr
    assert not (tmp_path / "u.csv").exists()
