"""label(..., wrap_axes=): components on a torus along the wrapped axes
(dask-image's keyword), in memory and on dask arrays, against a brute-force
reference: the graph of every voxel and its structure neighbours taken
modulo the shape on the wrapped axes, numbered in raster order of each
component's first voxel (scipy's order)."""
import numpy as np
import pytest
from scipy import ndimage as ndi
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

import voxa

da = pytest.importorskip("dask.array")
import voxa.dask as vd  # noqa: E402


def torus_reference(a, st, wrap):
    fg = np.asarray(a) != 0
    idx = np.arange(fg.size).reshape(fg.shape)
    src, dst = [], []
    for off in zip(*np.nonzero(st)):
        o = np.array(off) - 1
        if not o.any():
            continue
        pts = np.array(np.nonzero(fg)).T
        nb = pts + o
        keep = np.ones(len(pts), bool)
        for d in range(fg.ndim):
            if d in wrap:
                nb[:, d] %= fg.shape[d]
            else:
                keep &= (nb[:, d] >= 0) & (nb[:, d] < fg.shape[d])
        pts, nb = pts[keep], nb[keep]
        ok = fg[tuple(nb.T)]
        src.append(idx[tuple(pts[ok].T)])
        dst.append(idx[tuple(nb[ok].T)])
    src = np.concatenate(src) if src else np.empty(0, int)
    dst = np.concatenate(dst) if dst else np.empty(0, int)
    g = coo_matrix((np.ones(src.size), (src, dst)), shape=(fg.size, fg.size))
    _, comp = connected_components(g, directed=False)
    out = np.zeros(fg.shape, np.int64)
    flat_fg = np.flatnonzero(fg.ravel())
    comps = comp[flat_fg]
    _, first = np.unique(comps, return_index=True)  # first voxel of each component
    rank = np.empty(comp.max() + 1, np.int64)
    rank[comps[np.sort(first)]] = np.arange(1, first.size + 1)
    out.ravel()[flat_fg] = rank[comps]
    return out, int(first.size)


CASES = [((9,), 1, (0,)), ((7, 11), 1, (0,)), ((7, 11), 2, (1,)), ((7, 11), 2, (0, 1)),
         ((5, 6, 7), 1, (0, 2)), ((5, 6, 7), 3, (0, 1, 2)), ((4, 9, 5), 2, (1,))]


@pytest.mark.parametrize("shape, conn, wrap", CASES)
def test_equals_torus_reference(shape, conn, wrap):
    st = ndi.generate_binary_structure(len(shape), conn)
    for seed in range(6):
        a = np.random.default_rng(seed).random(shape) < 0.4
        want, n = torus_reference(a, st, wrap)
        got, m = voxa.label(a, connectivity=conn, wrap_axes=wrap)
        np.testing.assert_array_equal(got, want)
        assert m == n
        got, m = voxa.label(a, st, wrap_axes=[-len(shape) + w for w in wrap])  # negative axes
        np.testing.assert_array_equal(got, want)
        plain, k = voxa.label(a, st)
        if seed == 0:
            assert k >= n  # the test can fail: the plain labels are another answer
        rng = np.random.default_rng(seed + 100)
        chunks = tuple(int(rng.integers(max(1, s // 3), s + 1)) for s in shape)
        lazy, lm = vd.label(da.from_array(a, chunks=chunks), connectivity=conn, wrap_axes=wrap)
        np.testing.assert_array_equal(lazy.compute(), want)
        assert int(lm.compute()) == n


def test_joins_across_the_ends_and_corners():
    a = np.zeros((5, 6), bool)
    a[0, 2] = a[4, 2] = True  # across axis 0
    a[2, 0] = a[2, 5] = True  # across axis 1
    a[0, 0] = a[4, 5] = True  # a corner across both, full connectivity only
    lab, n = voxa.label(a, connectivity=2, wrap_axes=(0, 1))
    assert n == 3 and lab[0, 2] == lab[4, 2] and lab[2, 0] == lab[2, 5] and lab[0, 0] == lab[4, 5]
    lab, n = voxa.label(a, connectivity=1, wrap_axes=(0, 1))
    assert n == 4 and lab[0, 0] != lab[4, 5]
    lab, n = voxa.label(a, connectivity=2, wrap_axes=(0,))
    assert n == 5 and lab[0, 2] == lab[4, 2] and lab[2, 0] != lab[2, 5]


def test_outputs_and_dtypes():
    a = np.random.default_rng(3).random((8, 9)) < 0.45
    want, n = voxa.label(a, wrap_axes=1)
    out = np.zeros(a.shape, np.uint16)
    assert voxa.label(a, output=out, wrap_axes=1) == n  # an array: n only, as scipy
    np.testing.assert_array_equal(out, want)
    for dt in (np.float32, np.float64, np.bool_, np.int8):
        got, m = voxa.label(a, output=dt, wrap_axes=1)
        assert got.dtype == dt and m == n
        np.testing.assert_array_equal(got, want.astype(dt))
        lazy, lm = vd.label(da.from_array(a, chunks=3), output=dt, wrap_axes=1)
        assert lazy.dtype == dt and int(lm.compute()) == n
        np.testing.assert_array_equal(lazy.compute(), want.astype(dt))
    empty = np.zeros((4, 5), bool)
    assert voxa.label(empty, wrap_axes=(0, 1))[1] == 0
    assert int(vd.label(da.from_array(empty, chunks=2), wrap_axes=(0, 1))[1].compute()) == 0


def test_narrow_output_holds_the_joined_count():
    """128 runs whose ends touch across the wrap: 127 components. An int8
    output holds them, in memory as on dask (the plain count does not have
    to fit); 128 components do not, and both refuse them."""
    a = np.zeros(255, bool)
    a[::2] = True
    want, n = voxa.label(a, wrap_axes=0)
    assert n == 127
    got, m = voxa.label(a, output=np.int8, wrap_axes=0)
    assert m == 127 and got.dtype == np.int8
    np.testing.assert_array_equal(got, want)
    out = np.zeros(255, np.int8)
    assert voxa.label(a, output=out, wrap_axes=0) == 127
    np.testing.assert_array_equal(out, want)
    lazy, lm = vd.label(da.from_array(a, chunks=50), output=np.int8, wrap_axes=0)
    np.testing.assert_array_equal(lazy.compute(), want)
    b = np.zeros(257, bool)
    b[1::2] = True  # 128 runs, no voxel at either end: nothing joins
    with pytest.raises(RuntimeError, match="do not fit the output dtype int8"):
        voxa.label(b, output=np.int8, wrap_axes=0)
    with pytest.raises(RuntimeError, match="does not fit the output dtype int8"):
        vd.label(da.from_array(b, chunks=50), output=np.int8, wrap_axes=0)[0].compute()


def test_bad_wrap_axes():
    a = np.ones((3, 4), bool)
    for bad, err in ((2, ValueError), ((0, 0), ValueError), ((-3,), ValueError),
                     ("0", TypeError), ((0.5,), TypeError)):
        with pytest.raises(err, match="wrap_axes"):
            voxa.label(a, wrap_axes=bad)
        with pytest.raises(err, match="wrap_axes"):
            vd.label(da.from_array(a, chunks=2), wrap_axes=bad)
    assert voxa.label(a, wrap_axes=None)[1] == 1 and voxa.label(a, wrap_axes=())[1] == 1
    with pytest.raises(ValueError, match="out of range for 0-D"):  # a scalar has no axis
        voxa.label(np.array(1), wrap_axes=0)
    with pytest.raises(ValueError, match="out of range for 0-D"):
        vd.label(da.from_array(np.array(1)), wrap_axes=0)
    assert voxa.label(np.array(1), wrap_axes=())[1] == 1
