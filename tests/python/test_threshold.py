"""voxa.threshold_otsu against skimage.filters.threshold_otsu, value and type:
random, bimodal, skewed, negative and huge-magnitude floats (float32 and
float64, several nbins), every integer dtype, bool, constant images (0-D,
-0.0 mixed with 0.0, all-inf), voxels exactly on the histogram's bin edges,
ranges a few ulps wide, bins whose counts exceed 2^24 (float32 rounding of
the counts), NaN/inf/empty inputs (both refuse), strides, byte order, thread
counts; voxa.threshold against NumPy's ``image > value`` (Python and NumPy
scalars, NaN, inf, big integers) and against ``image > threshold_otsu``;
the CLI (`voxa threshold`, in memory and with --mem-limit) and cancelling;
``hist=`` (counts, or counts and bin centres) against skimage's."""
import os
import warnings

import numpy as np
import pytest
from skimage.filters import threshold_otsu as sk_otsu

import voxa

RNG = np.random.default_rng(12)


@pytest.fixture(autouse=True)
def _restore_threads():
    yield
    voxa.set_threads(0)


def sk(a, nbins=256):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return sk_otsu(a, nbins)
        except Exception as e:  # noqa: BLE001 - the exception is the result
            return type(e)


def same(a, nbins=256, threads=(1,)):
    want = sk(a, nbins)
    for t in threads:
        voxa.set_threads(t)
        if isinstance(want, type):
            with pytest.raises((ValueError, IndexError)):
                voxa.threshold_otsu(a, nbins)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = voxa.threshold_otsu(a, nbins)
        assert type(got) is type(want), (type(got), type(want), a.dtype)
        assert got == want or (np.isnan(got) and np.isnan(want)), (got, want, a.dtype, nbins)
        np.testing.assert_array_equal(voxa.threshold(a, method="otsu", nbins=nbins), a > want)
    return want


def float_samples(dtype):
    n = 3001
    yield RNG.random(n).astype(dtype)
    yield RNG.normal(5, 3, (17, 19)).astype(dtype)
    yield np.concatenate([RNG.normal(10, 2, 2000), RNG.normal(60, 5, 1000)]).astype(dtype)
    yield RNG.exponential(2.0, (7, 11, 13)).astype(dtype)
    yield (RNG.random(999) * 1e30 - 3e29).astype(dtype)
    yield (1e6 + RNG.random(500) * 0.5).astype(dtype)
    yield (-RNG.random((40, 40)) * 1e-30).astype(dtype)
    yield RNG.integers(0, 5, 1000).astype(dtype)  # few distinct values


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nbins", [2, 3, 17, 256, 1000])
def test_floats_random(dtype, nbins):
    for a in float_samples(dtype):
        same(a, nbins)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floats_on_bin_edges(dtype):
    """Voxels equal to np.histogram's edges and one ulp either side: NumPy's
    index guess is corrected there, voxa must place them the same way."""
    for lo, hi in [(0.0, 1.0), (-3.3, 7.1), (0.1, 0.7), (1e-3, 1e5), (-1000.0, -999.0)]:
        edges = np.histogram_bin_edges(np.array([lo, hi], dtype), 256).astype(dtype)
        a = np.concatenate([edges, np.nextafter(edges, dtype(np.inf)),
                            np.nextafter(edges, dtype(-np.inf))]).astype(dtype)
        a = np.clip(a, edges[0], edges[-1])
        rep = np.repeat(a, RNG.integers(1, 5, a.size))
        for nbins in (256, 255, 7):
            same(rep, nbins)


def test_narrow_ranges():
    for dtype in (np.float32, np.float64):
        x = dtype(1.5)
        for k in (1, 2, 5, 300, 600):
            a = np.array([x, x, x], dtype)
            for _ in range(k):
                a = np.append(a, np.nextafter(a[-1], dtype(np.inf)))
            same(a.astype(dtype), 256)  # few ulps: "too many bins" for both, or equal
    same(np.array([0, 1e-45], np.float32))  # NumPy: too many bins


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
                                   np.uint64, np.int64])
def test_integers(dtype):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -3000), min(info.max, 3000)
    same(RNG.integers(lo, hi, 5000, endpoint=True).astype(dtype), threads=(1, 2, 3))
    same(RNG.integers(lo, hi, (3, 4, 5)).astype(dtype))
    bi = np.concatenate([RNG.integers(0, 40, 3000), RNG.integers(90, 127, 1000)]).astype(dtype)
    same(bi)
    same(np.array([0, 1], dtype))
    top = min(info.max, 2**63 - 1)
    ends = [np.array([top, top - 1, top - 7, top], dtype)]
    if info.min < 0:
        ends.append(np.array([info.min, info.min + 3, info.min + 1], dtype))
    for a in ends:
        if info.bits <= 16:
            same(a)
        else:  # skimage's bincount allocates max + 1 bins here (or fails): voxa does not
            t = voxa.threshold_otsu(a)
            assert type(t) is np.int64 and a.min() <= t < a.max()
            assert int(t) in {int(x) for x in a} | set(range(int(a.min()), int(a.max())))
    base = 2**62 + 12345  # magnitudes beyond 2^53, narrow range: int64 exact
    if info.bits == 64:
        a = np.array([base, base + 3, base + 1, base + 2, base + 2], dtype)
        t = voxa.threshold_otsu(a)
        assert a.min() <= t < a.max() and voxa.threshold(a, method="otsu").sum() > 0
        np.testing.assert_array_equal(voxa.threshold(a, method="otsu"), a > t)


def test_bool():
    same(RNG.random(100) > 0.3)
    same(np.array([True, False, False]))
    same(np.ones(5, bool))


def test_constant_images():
    for dtype in (np.uint8, np.int16, np.int64, np.uint64, np.float32, np.float64, bool):
        a = np.full((3, 4), 1, dtype)
        assert same(a) == 1
        same(np.full((), 7, dtype))
    same(np.array([0.0, -0.0, 0.0]))
    same(np.array([-0.0, 0.0], np.float32))
    same(np.full(4, np.inf))
    same(np.full(4, -np.inf, np.float32))
    same(np.array([2**64 - 1] * 3, np.uint64))


def test_refused_like_skimage():
    for a in (np.array([1.0, np.nan, 2.0]), np.array([np.nan, np.nan]),
              np.array([1.0, np.inf], np.float32), np.array([-np.inf, 0.0])):
        assert sk(a) is ValueError
        with pytest.raises(ValueError, match="NaN or infinite"):
            voxa.threshold_otsu(a)
    with pytest.raises(ValueError, match="empty"):
        voxa.threshold_otsu(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="nbins"):
        voxa.threshold_otsu(RNG.random(10), nbins=1)
    with pytest.raises(TypeError):
        voxa.threshold_otsu(np.arange(3).astype(np.float16))
    with pytest.raises(TypeError):
        voxa.threshold_otsu(np.arange(3) + 1j)
    with pytest.raises(ValueError, match="2\\^63"):
        voxa.threshold_otsu(np.array([0, 2**63], np.uint64))
    with pytest.raises(ValueError, match="2\\^28"):
        voxa.threshold_otsu(np.array([np.iinfo(np.int32).min, np.iinfo(np.int32).max],
                                     np.int32))


def test_counts_beyond_float32():
    """skimage rounds counts to float32: a bin of 2^24 + 1 voxels counts
    2^24. Both must then pick the same split."""
    a = np.zeros(2**24 + 3, np.uint8)
    a[-3:] = (7, 200, 201)
    same(a)
    b = np.zeros(2**24 + 5, np.float32)
    b[-5:] = (0.5, 0.25, 1.0, 0.75, 0.125)
    same(b)


def test_hist_like_skimage():
    """hist=: value and type equal skimage's on random histograms with zero
    bins at the ends, float counts, given or default bin centres; with an
    image too, a constant image returns its value first."""
    rng = np.random.default_rng(21)
    for trial in range(200):
        k = int(rng.integers(1, 300))
        counts = rng.integers(0, 1000, k)
        if trial % 4 == 1:
            counts[:rng.integers(0, k)] = 0
        if trial % 5 == 2:
            counts[rng.integers(0, k):] = 0
        if trial % 7 == 3:
            counts = counts * rng.random()
        centres = [None, np.sort(rng.random(k)) * 100, np.arange(k) * 3 + 7][trial % 3]
        h = counts if centres is None else (counts, centres)
        if not np.any(counts):
            continue  # skimage divides 0 by 0 there
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = sk_otsu(hist=h)
        got = voxa.threshold_otsu(hist=h)
        assert got == want and type(got) is type(want), (trial, got, want)
    img = RNG.random((20, 30)).astype(np.float32)
    counts, edges = np.histogram(img, 50)
    h = (counts, (edges[:-1] + edges[1:]) / 2)
    assert voxa.threshold_otsu(img, hist=h) == sk_otsu(img, hist=h)
    assert voxa.threshold_otsu(np.full((3, 3), 5), hist=h) == sk_otsu(np.full((3, 3), 5), hist=h)
    with pytest.raises(TypeError, match="image or hist"):
        voxa.threshold_otsu()
    with pytest.raises(ValueError, match="hist"):
        voxa.threshold_otsu(hist=(np.ones(3), np.ones(4)))


def test_layouts_and_threads():
    base = RNG.normal(0, 1, (30, 40, 50)).astype(np.float32)
    want = sk(base)
    for view in (base.T, base[::-2, :, ::3], np.asfortranarray(base),
                 base.astype(base.dtype.newbyteorder(">"))):
        for t in (1, 2, 3):
            voxa.set_threads(t)
            if view.shape == base.shape or view.shape == base.T.shape:
                assert voxa.threshold_otsu(view) == want
            else:
                assert voxa.threshold_otsu(view) == sk(np.ascontiguousarray(view))
    big = RNG.integers(0, 1 << 20, 200_000).astype(np.int32)  # shared-table path
    voxa.set_threads(1)
    t1 = voxa.threshold_otsu(big)
    voxa.set_threads(3)
    assert voxa.threshold_otsu(big) == t1 == sk(big)


def test_rgb_warning():
    with pytest.warns(UserWarning, match="RGB"):
        voxa.threshold_otsu(RNG.random((5, 6, 3)))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.uint64, np.int64,
                                   np.float32, np.float64, bool])
def test_value_like_numpy(dtype):
    a = (RNG.normal(0, 40, (23, 31))).astype(dtype) if dtype is not bool else RNG.random(50) > .5
    for v in (0, 0.5, -3, 17.25, 0.1, np.float32(0.1), np.float64(0.1), np.int64(5), 1e300,
              -1e300, np.nan, np.inf, -np.inf, 2**60 + 1, True):
        try:
            want = a > v
        except OverflowError:
            continue
        got = voxa.threshold(a, v)
        assert got.dtype == bool
        np.testing.assert_array_equal(got, want, err_msg=f"{dtype} > {v!r}")
    big = np.array([2**60 + 1, 2**60, 2**60 + 2], np.int64)
    np.testing.assert_array_equal(voxa.threshold(big, 2**60 + 1), big > 2**60 + 1)
    np.testing.assert_array_equal(voxa.threshold(big, float(2**60)), big > float(2**60))


def test_threshold_arguments():
    a = RNG.random(10)
    with pytest.raises(TypeError):
        voxa.threshold(a)
    with pytest.raises(TypeError):
        voxa.threshold(a, 0.5, method="otsu")
    with pytest.raises(ValueError, match="method"):
        voxa.threshold(a, method="li")
    assert voxa.threshold(np.zeros((0, 4)), 0.5).shape == (0, 4)


def test_cancel():
    a = RNG.random((64, 64)).astype(np.float32)
    with pytest.raises(KeyboardInterrupt):
        voxa.threshold(a, method="otsu", progress=lambda done, total: False)
    seen = []
    voxa.threshold(a, method="otsu", progress=lambda d, t: seen.append((d, t)) or True)
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1]


def test_cli(cli, tmp_path):
    a = np.concatenate([RNG.normal(100, 10, 4000), RNG.normal(300, 30, 2000)]).reshape(60, 100)
    a = a.astype(np.float32)
    src = tmp_path / "a.npy"
    np.save(src, a)
    out = tmp_path / "m.npy"
    r = cli("threshold", src, "-o", out, "--method", "otsu")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(out), a > sk_otsu(a))
    r = cli("threshold", src, "-o", out, "--value", "150.5")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(out), a > np.float32(150.5))
    r = cli("threshold", src, "-o", out, "--method", "otsu", "--mem-limit", "64K")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(out), a > sk_otsu(a))
    for bad in (["--value", "1", "--method", "otsu"], []):
        if out.exists():
            os.remove(out)
        r = cli("threshold", src, "-o", out, *bad)
        assert r.returncode == 2 and "threshold" in r.stderr, r.stderr
        assert not out.exists()
    np.save(src, np.array([1.0, np.nan]))
    r = cli("threshold", src, "-o", out, "--method", "otsu")
    assert r.returncode == 1 and "NaN" in r.stderr
    r = cli("help", "threshold")
    assert "otsu" in r.stdout


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nbins", [2, 7, 256, 1000])
def test_histogram_over_a_given_range_equals_numpy(dtype, nbins):
    """voxa_threshold_histogram (voxa.dask.threshold_otsu's per-chunk pass)
    is np.histogram(a, nbins, range=(lo, hi)): the same edges in a's type,
    values on the edges, outside the range, NaN and inf left out."""
    from voxa import _voxa
    rng = np.random.default_rng(nbins)
    a = (rng.random((37, 53)) * 8 - 2).astype(dtype)
    lo, hi = np.asarray(-1.5, dtype)[()], a.max()
    edges = np.linspace(lo, hi, nbins + 1, dtype=dtype)
    a.ravel()[:nbins + 1] = edges[:a.size]  # values exactly on the edges
    a[0, :4] = [np.nan, np.inf, -np.inf, hi + 1]
    got = np.frombuffer(_voxa.threshold_histogram(a, float(lo), float(hi), nbins), np.int64)
    with np.errstate(invalid="ignore"):
        want = np.histogram(a[np.isfinite(a)], bins=nbins, range=(lo, hi))[0]
    np.testing.assert_array_equal(got, want)
    strided = a[::2, ::-3]
    got = np.frombuffer(_voxa.threshold_histogram(strided, float(lo), float(hi), nbins), np.int64)
    np.testing.assert_array_equal(
        got, np.histogram(strided[np.isfinite(strided)], bins=nbins, range=(lo, hi))[0])


def test_histogram_integers_bool_and_errors():
    from voxa import _voxa
    rng = np.random.default_rng(3)
    i = rng.integers(-20, 40, (30, 31)).astype(np.int16)
    got = np.frombuffer(_voxa.threshold_histogram(i, -10, 30, 41), np.int64)
    inside = i[(i >= -10) & (i <= 30)].astype(np.int64)
    np.testing.assert_array_equal(got, np.bincount(inside + 10, minlength=41))
    b = rng.random((20, 21)) > 0.3
    got = np.frombuffer(_voxa.threshold_histogram(b, 0, 1, 256), np.int64)
    np.testing.assert_array_equal(got, np.histogram(b.view(np.uint8), bins=256, range=(0, 1))[0])
    for lo, hi, n in ((1.0, 1.0, 4), (0.0, np.nan, 4), (0.0, np.inf, 4)):
        with pytest.raises(ValueError, match="range"):
            _voxa.threshold_histogram(b, lo, hi, n)
    with pytest.raises(ValueError, match="nbins = hi - lo"):
        _voxa.threshold_histogram(i, 0.5, 3, 3)
    with pytest.raises(ValueError, match="nbins = hi - lo"):
        _voxa.threshold_histogram(i, 0, 3, 5)
