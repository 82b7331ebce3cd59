"""voxa.dask.threshold_otsu / threshold: the value and type of
skimage.filters.threshold_otsu of the whole array, for every chunking, float,
integer and bool images, constant images, nbins, hist=; the lazy mask equals
``image > threshold``; bad images fail like the in-memory call."""
import warnings

import numpy as np
import pytest
from skimage.filters import threshold_otsu as sk_otsu

da = pytest.importorskip("dask.array")
import voxa.dask as vd  # noqa: E402

RNG = np.random.default_rng(41)
IMAGES = {
    "float32": RNG.random((20, 30, 17)).astype(np.float32),
    "float64 wide": RNG.normal(size=(20, 31, 16)) * 1e3,
    "int16 negative": RNG.integers(-50, 300, (21, 30, 17)).astype(np.int16),
    "uint16": RNG.integers(0, 60000, (9, 40, 50)).astype(np.uint16),
    "uint8": (RNG.random((40, 40)) * 100).astype(np.uint8),
    "bool": RNG.random((30, 40)) < 0.3,
    "bimodal float32": np.concatenate([RNG.normal(10, 1, 500), RNG.normal(30, 3, 700)])
    .astype(np.float32).reshape(40, 30),
}


def sk(a, nbins=256, hist=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sk_otsu(a, nbins, hist=hist)


@pytest.mark.parametrize("name", sorted(IMAGES))
@pytest.mark.parametrize("nbins", [256, 7])
def test_equals_skimage(name, nbins):
    a = IMAGES[name]
    want = sk(a, nbins)
    kind = np.int64 if a.dtype.kind in "iu" else a.dtype if a.dtype == np.float32 else np.float64
    for chunks in [tuple(max(1, s // 3) for s in a.shape), a.shape, (1,) + a.shape[1:]]:
        x = da.from_array(a, chunks=chunks)
        t = vd.threshold_otsu(x, nbins)
        got = t.compute()
        assert t.dtype == kind and got.dtype == kind
        assert got == want, (chunks, got, want)
        mask = vd.threshold(x, method="otsu", nbins=nbins).compute()
        np.testing.assert_array_equal(mask, a > want)


def test_constant_hist_value_and_errors():
    for a in (np.full((5, 6, 7), 3, np.uint8), np.full((5, 6), 2.5, np.float32),
              np.ones((4, 4), bool)):
        x = da.from_array(a, chunks=2)
        assert vd.threshold_otsu(x).compute() == sk(a)  # the image's value
        assert not vd.threshold(x, method="otsu").compute().any()
    img = IMAGES["float32"]
    counts, edges = np.histogram(img, 30)
    h = (counts, (edges[:-1] + edges[1:]) / 2)
    assert vd.threshold_otsu(hist=h).compute() == sk(None, hist=h)
    assert vd.threshold_otsu(da.from_array(img), hist=h).compute() == sk(img, hist=h)
    const = np.full((3, 3), 5, np.int32)
    assert vd.threshold_otsu(da.from_array(const), hist=h).compute() == sk(const, hist=h)
    np.testing.assert_array_equal(vd.threshold(da.from_array(img, chunks=7), 0.5).compute(),
                                  img > 0.5)
    tenth = np.full((4, 4), np.float32(0.1))  # a Python float compares in float32, as NumPy
    for v in (0.1, np.float64(0.1), np.float32(0.1), 0):
        np.testing.assert_array_equal(vd.threshold(da.from_array(tenth, chunks=2), v).compute(),
                                      tenth > v)
    with pytest.raises(TypeError, match="a number"):
        vd.threshold(da.from_array(img), [0.5])
    with pytest.raises(ValueError, match="NaN or inf"):
        vd.threshold_otsu(da.from_array(np.array([1.0, 2.0, np.nan]), chunks=1)).compute()
    with pytest.raises(ValueError, match="2\\^28"):
        vd.threshold_otsu(da.from_array(np.array([0, 2**40]))).compute()
    with pytest.raises(TypeError, match="float16"):
        vd.threshold_otsu(da.from_array(np.ones(3, np.float16)))
    with pytest.raises(ValueError, match="empty"):
        vd.threshold_otsu(da.zeros((0, 3)))
    with pytest.raises(TypeError, match="image or hist"):
        vd.threshold_otsu()
    with pytest.raises(TypeError, match="exactly one"):
        vd.threshold(da.from_array(img), 0.5, method="otsu")
    with pytest.raises(TypeError, match="ProgressBar"):
        vd.threshold(da.from_array(img), 0.5, progress=print)


def test_histogram_is_per_chunk():
    """The graph holds one histogram task per chunk (no task sees the image)."""
    x = da.from_array(IMAGES["uint16"], chunks=(3, 20, 25))
    t = vd.threshold_otsu(x)
    names = {k[0] if isinstance(k, tuple) else k for k in dict(t.__dask_graph__())}
    assert sum(str(n).startswith("_chunk_counts") for n in names) == x.npartitions


@pytest.mark.parametrize("base", [2**60, -(2**60)])
def test_int64_beyond_2_53(base):
    """Integer chunks whose values pass 2^53 (a narrow range far from 0) are
    counted by np.bincount, not the C histogram, which takes float ends;
    scikit-image cannot allocate its bincount there, so voxa in memory is
    the reference."""
    import voxa
    rng = np.random.default_rng(7)
    a = (base + rng.integers(0, 100, (30, 41))).astype(np.int64)
    got = vd.threshold_otsu(da.from_array(a, chunks=(7, 9))).compute()[()]
    want = voxa.threshold_otsu(a)
    assert got == want and got.dtype == want.dtype and abs(int(got)) > 2**53
