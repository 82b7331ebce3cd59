"""voxa.dask.distance_transform_edt without max_distance, exact by chunks:
slabs of whole slices, then pencils holding axis 0 whole (voxa/dask/_edt.py
over include/voxa/edt.h's two passes). Equal to voxa's in-memory result bit
for bit (and so to scipy's) for every chunking, dimension, spacing, squared
and output dtype, a volume without background, non-native input dtypes;
no task holds the volume; what the passes cannot take runs on one chunk."""
import numpy as np
import pytest
from scipy import ndimage as ndi

da = pytest.importorskip("dask.array")

import voxa  # noqa: E402
import voxa.dask as vd  # noqa: E402
from voxa.dask import _edt  # noqa: E402

RNG = np.random.default_rng(21)


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


KWS = [{}, {"sampling": None}, {"squared": True}, {"dtype": np.float32},
       {"squared": True, "dtype": np.float32}, {"squared": True, "dtype": np.uint32}]


@pytest.mark.parametrize("shape, chunks", [((19, 23, 17), (5, 7, 6)), ((19, 23, 17), (1, 23, 17)),
                                           ((19, 23, 17), (19, 1, 4)), ((31, 9), (4, 2)),
                                           ((6, 7, 5, 4), (2, 3, 5, 1)), ((2, 40, 3), (1, 7, 3))])
@pytest.mark.parametrize("p", [0.2, 0.8, 0.995, 1.0])
def test_equals_in_memory_bit_for_bit(shape, chunks, p):
    m = RNG.random(shape) < p
    x = da.from_array(m, chunks=chunks)
    sp = tuple(np.linspace(0.6, 2.2, m.ndim))
    for kw in KWS + [{"sampling": sp}, {"sampling": sp, "squared": True, "dtype": np.float32}]:
        got = vd.distance_transform_edt(x, **kw)
        assert got.chunks == x.chunks
        same(got.compute(), voxa.distance_transform_edt(m, **kw))
    np.testing.assert_allclose(vd.distance_transform_edt(x, sampling=sp).compute(),
                               ndi.distance_transform_edt(m, sampling=sp), rtol=1e-15)


def test_input_dtypes_as_in_memory():
    m = RNG.random((9, 11, 10)) < 0.7
    vals = np.where(m, RNG.integers(1, 9, m.shape), 0)
    for a in (vals.astype(np.float16), vals.astype(">i4"), np.where(m, np.nan, 0.0),
              vals.astype(np.uint64)):
        got = vd.distance_transform_edt(da.from_array(a, chunks=(4, 5, 3))).compute()
        same(got, voxa.distance_transform_edt(a))


def test_no_task_holds_the_volume(monkeypatch):
    seen = []
    for fn in ("_slab", "_columns"):
        orig = getattr(_edt, fn)

        def spy(g, *a, _orig=orig, **k):
            seen.append(g.size)
            return _orig(g, *a, **k)
        monkeypatch.setattr(_edt, fn, spy)
    m = RNG.random((40, 40, 40)) < 0.9
    got = vd.distance_transform_edt(da.from_array(m, chunks=10)).compute()
    same(got, voxa.distance_transform_edt(m))
    assert len(seen) > 2 and max(seen) <= 40 * 40 * 40 // 16, seen


def test_what_the_passes_cannot_take_runs_on_one_chunk():
    m = RNG.random((12, 13, 14)) < 0.6
    x = da.from_array(m, chunks=5)
    for kw in ({"sampling": (1.0, -2.0, 0.5)}, {"sampling": (0.0, 1.0, 1.0)}):
        same(vd.distance_transform_edt(x, **kw).compute(), voxa.distance_transform_edt(m, **kw))
    one = da.from_array(m[0], chunks=4)  # 2-D still chunked; 1-D runs whole
    same(vd.distance_transform_edt(one).compute(), voxa.distance_transform_edt(m[0]))
    line = da.from_array(m[0, 0], chunks=3)
    same(vd.distance_transform_edt(line).compute(), voxa.distance_transform_edt(m[0, 0]))


def test_uint32_that_may_overflow_is_refused_at_the_call():
    x = da.ones((50000, 50000), dtype=bool, chunks=25000)  # 2 x 50001^2 > 2^32
    with pytest.raises(ValueError, match="may exceed uint32"):
        vd.distance_transform_edt(x, squared=True, dtype=np.uint32)


@pytest.mark.parametrize("shape, chunks", [((19, 23, 17), (5, 7, 6)), ((31, 9), (4, 2)),
                                           ((6, 7, 5, 4), (2, 3, 5, 1)), ((2, 40, 3), (1, 7, 3))])
@pytest.mark.parametrize("p", [0.3, 0.97, 1.0])
def test_cdt_equals_scipy(shape, chunks, p):
    """distance_transform_cdt by chunks, taxicab and chessboard (names and
    scipy's arrays for them), equals scipy; other metric arrays and indices
    run on one chunk, equal too."""
    m = RNG.random(shape) < p
    x = da.from_array(m, chunks=chunks)
    nd = m.ndim
    for metric in ("taxicab", "cityblock", "chessboard", ndi.generate_binary_structure(nd, 1),
                   np.ones((3,) * nd, bool), ndi.generate_binary_structure(nd, 2)):
        got = vd.distance_transform_cdt(x, metric)
        assert got.chunks == x.chunks or nd == 1
        same(got.compute(), ndi.distance_transform_cdt(m, metric))
    d, i = vd.distance_transform_cdt(x, "taxicab", return_indices=True)
    wd, wi = ndi.distance_transform_cdt(m, "taxicab", return_indices=True)
    same(d.compute(), wd)
    same(i.compute(), wi)


def test_cdt_arguments_fail_at_the_call():
    x = da.from_array(RNG.random((8, 9)) < 0.5, chunks=4)
    with pytest.raises(ValueError, match="invalid metric"):
        vd.distance_transform_cdt(x, "euclidean")
    with pytest.raises(RuntimeError, match="at least one"):
        vd.distance_transform_cdt(x, return_distances=False)
    with pytest.raises(TypeError):
        vd.distance_transform_cdt(x, distances=np.zeros((8, 9), np.int32))


def test_bad_sampling_fails_at_the_call_as_in_memory():
    m = RNG.random((6, 7, 8)) < 0.5
    x = da.from_array(m, chunks=3)
    for bad in [(1.0, 2.0), (1.0, np.nan, 1.0), (np.inf, 1.0, 1.0)]:
        with pytest.raises(Exception) as want:
            voxa.distance_transform_edt(m, sampling=bad)
        with pytest.raises(type(want.value), match=str(want.value)[:20]):
            vd.distance_transform_edt(x, sampling=bad)  # no compute: the call fails
