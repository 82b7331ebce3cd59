"""voxa.label's block path (full connectivity by 2x2x2 blocks, byte masks)
against scipy.ndimage.label, at its boundaries: odd and even extents in each
axis, 2-D (8-connected) and 3-D with unit axes, lines of length 1, corner
voxels touching diagonally across blocks, checker boards, all ones/zeros,
first voxels in a block's second half, 1-3 threads, output dtypes and the
uint16 overflow. VOXA_LABEL_BLOCKS=2 forces the block path on any mask, 0
the run path; unset, noisy masks take it (the default)."""
import itertools

import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

THREADS = (1, 2, 3)


@pytest.fixture(autouse=True)
def _restore_threads():
    yield
    voxa.set_threads(0)


@pytest.fixture(params=["2", "0", ""], ids=["blocks", "runs", "auto"])
def path(request, monkeypatch):
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", request.param)
    return request.param


def check(m, output=np.int32):
    full = np.ones((3,) * m.ndim, bool)
    want, wn = ndi.label(m, full)
    for t in THREADS:
        voxa.set_threads(t)
        got, n = voxa.label(m, connectivity=m.ndim, output=output)
        assert n == wn, (m.shape, t)
        assert got.dtype == np.dtype(output)
        np.testing.assert_array_equal(got, want.astype(got.dtype))


SIZES = (1, 2, 3, 4, 7)


@pytest.mark.parametrize("shape", list(itertools.product(SIZES, SIZES, SIZES)))
def test_extents_random(path, shape):
    rng = np.random.default_rng(sum(shape))
    for dens in (0.15, 0.5, 0.85):
        check(rng.random(shape) < dens)


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 1, 9), (9, 1, 1), (2, 2, 2), (3, 3, 3),
                                   (5, 6, 7), (6, 5, 8), (1, 7, 6), (4, 1, 5)])
def test_patterns(path, shape):
    z, y, x = np.indices(shape)
    for m in (np.ones(shape, bool), np.zeros(shape, bool), (x + y + z) % 2 == 0,
              (x + y) % 2 == 0, x % 2 == 1, (z % 2 == 1) & (y % 2 == 1)):
        check(m)


def test_corner_pairs(path):
    """Two voxels touching across a block corner, edge or face (one
    component), or two apart (two); and voxels of the second half of a
    block that start a component after a later block's."""
    for a, b in [((1, 1, 1), (2, 2, 2)), ((1, 1, 2), (2, 2, 1)), ((2, 1, 1), (1, 2, 2)),
                 ((1, 2, 1), (2, 1, 2)), ((1, 1, 1), (3, 3, 3)), ((0, 0, 1), (1, 1, 2)),
                 ((1, 0, 0), (0, 0, 3)), ((1, 1, 0), (0, 0, 2)), ((0, 1, 1), (1, 0, 2))]:
        m = np.zeros((4, 4, 5), bool)
        m[a] = m[b] = True
        check(m)
    m = np.zeros((2, 2, 6), bool)
    m[1, 1, 0] = m[0, 0, 3] = m[1, 0, 4] = m[0, 1, 5] = True
    check(m)


@pytest.mark.parametrize("shape", [(1, 1), (1, 8), (8, 1), (2, 2), (3, 5), (33, 65), (64, 3)])
def test_2d(path, shape):
    rng = np.random.default_rng(shape[0] * 100 + shape[1])
    for dens in (0.2, 0.5, 0.8):
        check(rng.random(shape) < dens)
    yy, xx = np.indices(shape)
    check((yy + xx) % 2 == 0)


@pytest.mark.parametrize("output", [np.uint16, np.int32, np.int64, np.uint8])
def test_dtypes_larger(path, output):
    """Several union slabs and threads on a noisy mask; every output dtype
    (uint8: few components at this density)."""
    rng = np.random.default_rng(2)
    m = rng.random((18, 45, 67)) < (0.5 if output != np.uint8 else 0.7)
    check(m, output)
    check(m.astype(np.uint8), output)


def test_uint16_overflow(path):
    """41^3 isolated voxels do not fit uint16: an error, nothing returned."""
    m = np.zeros((82, 82, 82), bool)
    m[::2, ::2, ::2] = True
    with pytest.raises(ValueError, match="68921 components do not fit the output dtype uint16"):
        voxa.label(m, connectivity=3, output=np.uint16)
    got, n = voxa.label(m, connectivity=3, output=np.int32)
    assert n == 68921 and got[80, 80, 80] == n


def test_strided_and_4d(path):
    """Strided views and 4-D masks with a unit axis take whichever path
    applies; results equal scipy's."""
    rng = np.random.default_rng(4)
    m = rng.random((10, 12, 14)) < 0.5
    check(m[::2, ::-1, 1:])
    check(np.asfortranarray(m))
    m4 = (rng.random((5, 1, 8, 9)) < 0.5)
    full = np.ones((3,) * 4, bool)
    want, wn = ndi.label(m4, full)
    got, n = voxa.label(m4, connectivity=4)
    assert n == wn
    np.testing.assert_array_equal(got, want)
    out = np.empty((14, 12, 10), np.int32).transpose(2, 1, 0)
    n = voxa.label(m, connectivity=3, output=out)
    want, wn = ndi.label(m, np.ones((3, 3, 3), bool))
    assert n == wn
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", [np.int32, np.uint16, np.int64])
def test_output_given_is_overwritten(path, dtype):
    """voxa.label's own output starts as zeros and only labels are written;
    an output= array the caller passes holds anything, so background is
    written too (both paths)."""
    rng = np.random.default_rng(5)
    for m in (rng.random((9, 20, 31)) < 0.5, rng.random((9, 20, 31)) < 0.02):
        want, wn = ndi.label(m, np.ones((3, 3, 3), bool))
        out = np.full(m.shape, 7, dtype)
        assert voxa.label(m, connectivity=3, output=out) == wn
        np.testing.assert_array_equal(out, want)
        got, n = voxa.label(m, connectivity=3, output=dtype)
        assert n == wn
        np.testing.assert_array_equal(got, want)
