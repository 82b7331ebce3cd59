"""voxa's distance transforms against scipy.ndimage, argument by argument:
cdt with every metric form (strings, structure arrays of any first half and
dtype), return_indices (scipy's tie rule), distances=/indices= outputs;
edt's argument rules (0-d input, output arrays, errors)."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa


def same(want, got):
    if isinstance(want, tuple):
        return isinstance(got, tuple) and len(got) == len(want) and all(
            same(w, g) for w, g in zip(want, got))
    if want is None:
        return got is None
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_cdt_random_metric_arrays_and_indices(ndim):
    rng = np.random.default_rng(40 + ndim)
    for trial in range(30 if ndim < 4 else 10):
        shape = tuple(int(v) for v in rng.integers(1, 10 if ndim < 4 else 5, ndim))
        a = rng.random(shape) < rng.choice([0.5, 0.9, 0.99, 1.0])
        metric = rng.random((3,) * ndim) < 0.5
        for m in (metric, "taxicab", "chessboard"):
            for ri in (False, True):
                want = ndi.distance_transform_cdt(a, m, return_indices=ri)
                assert same(want, voxa.distance_transform_cdt(a, m, return_indices=ri)), \
                    (trial, m, ri)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.float64, np.int64])
def test_cdt_metric_dtypes_as_scipy_reads_them(dtype):
    """scipy reads a non-bool metric's first bytes as its flags (its own test
    suite checks np.ones((3, 3)) means no neighbour); voxa gives that result."""
    rng = np.random.default_rng(2)
    a = rng.random((9, 11)) < 0.8
    for m in (np.ones((3, 3), dtype), (rng.random((3, 3)) < 0.5).astype(dtype)):
        assert same(ndi.distance_transform_cdt(a, m), voxa.distance_transform_cdt(a, m))


def test_cdt_output_arrays_and_errors():
    rng = np.random.default_rng(3)
    a = rng.random((6, 7)) < 0.7
    d_s, d_v = np.zeros(a.shape, np.int32), np.zeros(a.shape, np.int32)
    # scipy reads its `indices=` array while filling it (indices[d].flat[nearest]):
    # its answer is right only when the array holds np.indices; voxa's always is
    i_s, i_v = np.indices(a.shape, np.int32), np.zeros((2,) + a.shape, np.int32)
    assert ndi.distance_transform_cdt(a, "taxicab", return_indices=True, distances=d_s,
                                      indices=i_s) is None
    assert voxa.distance_transform_cdt(a, "taxicab", return_indices=True, distances=d_v,
                                       indices=i_v) is None
    assert np.array_equal(d_s, d_v) and np.array_equal(i_s, i_v)
    got = voxa.distance_transform_cdt(a, return_indices=True, distances=d_v)
    assert same(ndi.distance_transform_cdt(a, return_indices=True, distances=d_s), got)
    bad = [dict(metric="euclidean"), dict(metric=np.ones((3, 2))), dict(metric=np.ones((5, 5))),
           dict(return_distances=False), dict(distances=np.zeros((6, 7))),
           dict(distances=np.zeros((6, 6), np.int32)),
           dict(return_indices=True, indices=np.zeros((2, 6, 7), np.int64)),
           dict(return_indices=True, indices=np.zeros((2, 6, 6), np.int32)),
           dict(indices=np.zeros((2, 6, 7), np.int32)),
           dict(return_distances=False, distances=np.zeros((6, 7), np.int32),
                return_indices=True)]
    for kw in bad:
        with pytest.raises(Exception) as want:
            ndi.distance_transform_cdt(a, **kw)
        with pytest.raises(want.type):
            voxa.distance_transform_cdt(a, **kw)
    with pytest.raises(ValueError, match="dimensions"):  # scipy crashes (segfault) here
        voxa.distance_transform_cdt(a, np.ones((3, 3, 3), bool))


def test_cdt_tiny_and_empty():
    for a in (np.zeros((3, 0)), np.ones(1), np.zeros(1), np.ones((1, 1, 1)), [[1, 0, 1]],
              np.array([[1, 1], [1, 1]], complex)):
        for ri in (False, True):
            assert same(ndi.distance_transform_cdt(a, return_indices=ri),
                        voxa.distance_transform_cdt(a, return_indices=ri))
    with pytest.raises(TypeError):
        voxa.distance_transform_cdt(np.array(1))  # scipy: TypeError too


def test_edt_arguments():
    rng = np.random.default_rng(4)
    a = rng.random((7, 8)) < 0.8
    for inp in (np.array(1), np.array(0.0), np.zeros((0, 4)), np.ones((1,)), a.astype(complex),
                a.astype(np.float16), [[1, 0, 1]]):
        assert same(ndi.distance_transform_edt(inp), voxa.distance_transform_edt(inp))
    for sampling in (2.5, (1, 3), [0.5, 2]):
        assert same(ndi.distance_transform_edt(a, sampling),
                    voxa.distance_transform_edt(a, sampling))
    d_s, d_v = np.zeros(a.shape), np.zeros(a.shape)
    i_s, i_v = np.zeros((2,) + a.shape, np.int32), np.zeros((2,) + a.shape, np.int32)
    assert voxa.distance_transform_edt(a, distances=d_v) is None
    ndi.distance_transform_edt(a, distances=d_s)
    assert np.array_equal(d_s, d_v)
    got = voxa.distance_transform_edt(a, return_indices=True, indices=i_v)
    want = ndi.distance_transform_edt(a, return_indices=True, indices=i_s)
    assert same(want, got)
    assert np.array_equal(i_s, i_v)
    bad = [dict(return_distances=False), dict(distances=np.zeros(a.shape, np.float32)),
           dict(distances=np.zeros((7, 7))), dict(return_distances=False, return_indices=True,
                                                  distances=np.zeros(a.shape)),
           dict(return_indices=True, indices=np.zeros((2, 7, 8), np.int64)),
           dict(return_indices=True, indices=np.zeros((2, 7, 7), np.int32)),
           dict(indices=np.zeros((2, 7, 8), np.int32)), dict(sampling=(1, 2, 3))]
    for kw in bad:
        with pytest.raises(Exception) as want:
            ndi.distance_transform_edt(a, **kw)
        with pytest.raises(want.type):
            voxa.distance_transform_edt(a, **kw)


def _tie_inputs(rng):
    """Masks where many background voxels are equally near: random ones,
    lattices of single background voxels (every cell boundary a tie), two
    points, rings; with unit, integer, half-integer and random spacings."""
    for nd in (1, 2, 3, 4):
        side = {1: 41, 2: 23, 3: 11, 4: 6}[nd]
        shape = tuple(int(s) for s in rng.integers(side // 2, side + 1, nd))
        for p in (0.5, 0.9, 0.99):
            yield rng.random(shape) < p
        lattice = np.ones(shape, bool)
        lattice[tuple(slice(k % 2, None, 2 + k % 2) for k in range(nd))] = False
        yield lattice
        two = np.ones(shape, bool)
        two.flat[0] = two.flat[-1] = False
        yield two
    yield np.ones((9, 9), bool) ^ np.pad(np.ones((1, 1), bool), 4)


@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_edt_indices_equal_scipy_on_ties(nthreads):
    rng = np.random.default_rng(11)
    old = voxa.get_threads()
    voxa.set_threads(nthreads)
    try:
        for a in _tie_inputs(rng):
            for sampling in (None, 2, [1.5] * a.ndim, list(rng.random(a.ndim) + 0.2)):
                want = ndi.distance_transform_edt(a, sampling, return_indices=True)
                got = voxa.distance_transform_edt(a, sampling, return_indices=True)
                assert np.array_equal(want[1], got[1]), (a.shape, sampling)
                assert np.array_equal(want[0], got[0]), (a.shape, sampling)
    finally:
        voxa.set_threads(old)


def test_edt_zero_and_negative_sampling_as_scipy():
    rng = np.random.default_rng(12)
    for shape in ((9, 11), (5, 6, 7)):
        a = rng.random(shape) < 0.8
        for sampling in ([0] * len(shape), [-1.5] + [1] * (len(shape) - 1),
                         list(rng.random(len(shape)) - 0.5)):
            for ri in (False, True):
                want = ndi.distance_transform_edt(a, sampling, return_indices=ri)
                assert same(want, voxa.distance_transform_edt(a, sampling, return_indices=ri))
            d_s, d_v = np.zeros(shape), np.zeros(shape)
            ndi.distance_transform_edt(a, sampling, distances=d_s)
            assert voxa.distance_transform_edt(a, sampling, distances=d_v) is None
            assert np.array_equal(d_s, d_v)
    with pytest.raises(ValueError):
        voxa.distance_transform_edt(np.ones((3, 3)), sampling=[np.nan, 1])
