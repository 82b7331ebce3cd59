"""voxa.label / voxa.find_objects against scipy.ndimage: every output dtype
scipy accepts (floats and bool included), in place, structures as lists,
scipy's positional order, exception types; find_objects on random labels of
ndim 0-4 with max_label."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                np.int64, np.uint64, np.float32, np.float64, np.bool_, "f4",
                                "i8"])
def test_label_output_dtypes(dt):
    a = np.random.default_rng(1).random((9, 10)) < 0.4
    want, wn = ndi.label(a, output=dt)
    got, gn = voxa.label(a, output=dt)
    assert gn == wn and got.dtype == want.dtype and np.array_equal(got, want)
    o_s, o_v = np.zeros(a.shape, dt), np.full(a.shape, 3, dt)
    assert ndi.label(a, output=o_s) == voxa.label(a, output=o_v)
    assert np.array_equal(o_s, o_v)


@pytest.mark.parametrize("dt", [np.int32, np.float64, np.uint8])
def test_label_in_place_and_positional(dt):
    rng = np.random.default_rng(2)
    a = (rng.random((8, 9)) < 0.5).astype(dt)
    s = [[1, 1, 1], [1, 1, 1], [1, 1, 1]]
    x_s, x_v = a.copy(), a.copy()
    assert ndi.label(x_s, s, x_s) == voxa.label(x_v, s, x_v)  # scipy's positional order
    assert np.array_equal(x_s, x_v)


def test_label_tiny_inputs():
    for a in (np.array(1), np.array(0), np.zeros((3, 0)), np.ones(1), "ab"):
        (w, wn), (g, gn) = ndi.label(a), voxa.label(a)
        assert wn == gn and w.dtype == g.dtype and w.shape == g.shape and np.array_equal(w, g)


def test_label_exception_types():
    a = np.array([[0, 1, 1, 0, 1], [1, 0, 0, 0, 1]])
    big = np.zeros(600)
    big[::2] = 1
    cases = [(a, dict(structure=np.ones((3, 3, 3)))), (a, dict(structure=np.ones(3))),
             (a, dict(structure=[[0, 1, 0], [1, 1, 1]])), (a, dict(structure=np.ones((4, 4)))),
             (a, dict(structure=[[1, 1, 0], [1, 1, 1], [0, 1, 0]])),
             (a.astype(complex), {}), (a, dict(output=np.zeros((2, 4), int))),
             (a, dict(output=np.float16)), (a, dict(output=np.zeros(a.shape, np.complex64))),
             (a, dict(output=">i4")), (big, dict(output=np.uint8)),
             (big, dict(output=np.zeros(600, np.int8))), (a, dict(output=3))]
    for x, kw in cases:
        with pytest.raises(Exception) as want:
            ndi.label(x, **kw)
        with pytest.raises(want.type):
            voxa.label(x, **kw)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_find_objects_random(ndim):
    rng = np.random.default_rng(ndim)
    for trial in range(20):
        shape = tuple(int(v) for v in rng.integers(1, 9, ndim))
        lab = rng.integers(-2, 7, shape).astype(rng.choice([np.int32, np.uint16, np.int64]))
        if lab.dtype.kind == "u":
            lab = np.abs(lab.astype(np.int64)).astype(lab.dtype)
        if lab.size and lab.max() < 1:
            continue
        for ml in (0, 3, 10):
            assert ndi.find_objects(lab, ml) == voxa.find_objects(lab, max_label=ml)
    lab, _ = ndi.label(rng.random((30, 40)) < 0.3)
    assert ndi.find_objects(lab) == voxa.find_objects(lab)


def test_find_objects_edge_cases():
    assert ndi.find_objects(np.array(3)) == voxa.find_objects(np.array(3))
    assert ndi.find_objects(np.zeros((2, 0), int), 2) == voxa.find_objects(np.zeros((2, 0), int), 2)
    assert ndi.find_objects(np.zeros((2, 3), int)) == voxa.find_objects(np.zeros((2, 3), int))
    for bad in (np.ones((2, 2)), np.ones((2, 2), bool), np.zeros((0, 2), int)):
        with pytest.raises(Exception) as want:
            ndi.find_objects(bad)
        with pytest.raises(want.type):
            voxa.find_objects(bad)


def test_find_objects_float_and_bool_labels():
    """With max_label given, scipy reads bool and float32/float64 labels too,
    each value cast toward zero (2.9 is label 2; NaN and infinities name no
    label, nor do values past max_label); voxa gives its slices. Without
    max_label, and for other dtypes or a non-integer max_label, the error
    types are scipy's."""
    rng = np.random.default_rng(3)
    vals = rng.uniform(-2, 6, (7, 9, 5))
    vals[vals < 0.5] = 0
    vals.flat[rng.integers(0, vals.size, 12)] = [np.nan, np.inf, -np.inf, 1.0, 1e30, -1e30,
                                                  2.0, 2.9999, 4.0, 5.5, 0.999, 1.0001]
    for a in (vals, vals.astype(np.float32), vals[::-1, :, ::2], vals > 2):
        for ml in (1, 3, 6, 9):
            assert voxa.find_objects(a, max_label=ml) == ndi.find_objects(a, ml)
    assert voxa.find_objects(np.array(3.5), 4) == ndi.find_objects(np.array(3.5), 4)
    for bad, kw in ((vals, {}), (vals > 2, {}), (vals.astype(np.float16), {"max_label": 2}),
                    (np.array([1, 2], object), {"max_label": 2}), (vals + 1j, {"max_label": 2}),
                    (np.array([1, 2]), {"max_label": 2.5})):
        with pytest.raises(Exception) as want:
            ndi.find_objects(bad, **kw)
        with pytest.raises(want.type):
            voxa.find_objects(bad, **kw)
