"""voxa.distance_transform_edt / _cdt against scipy.ndimage, voxel for voxel."""
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import given, settings
from hypothesis.extra import numpy as hnp

import voxa

SHAPES = [(1,), (9,), (1, 1), (1, 13), (13, 1), (8, 9), (1, 1, 17), (5, 6, 7), (12, 3, 9),
          (2, 3, 4, 5)]


def rand(shape, p, seed=0):
    return np.random.default_rng(seed).random(shape) < p


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("p", [0.0, 0.2, 0.7, 0.97, 1.0])
def test_edt_matches_scipy(shape, p, threads):
    a = rand(shape, p, seed=len(shape))
    want = ndi.distance_transform_edt(a)
    got = voxa.distance_transform_edt(a)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    sq = voxa.distance_transform_edt(a, squared=True, dtype=np.uint32)
    if (~a).any():  # exact integers with unit spacing
        assert np.array_equal(sq.astype(np.int64), np.rint(want ** 2).astype(np.int64))


@pytest.mark.parametrize("shape", [(7,), (6, 9), (5, 6, 7), (1, 9, 4)])
def test_edt_sampling(shape, threads):
    rng = np.random.default_rng(3)
    a = rng.random(shape) < 0.8
    for _ in range(3):
        sp = rng.uniform(0.3, 3.0, len(shape))
        np.testing.assert_allclose(voxa.distance_transform_edt(a, sampling=sp),
                                   ndi.distance_transform_edt(a, sampling=sp), rtol=1e-12)
    np.testing.assert_allclose(voxa.distance_transform_edt(a, sampling=2.5),
                               ndi.distance_transform_edt(a, sampling=2.5), rtol=1e-12)
    f32 = voxa.distance_transform_edt(a, sampling=sp, dtype=np.float32)
    assert f32.dtype == np.float32
    # float32 is voxa's float64 rounded once (which is scipy's within 1 ulp
    # for arbitrary spacings, docs/scipy.md)
    f64 = voxa.distance_transform_edt(a, sampling=sp)
    assert np.array_equal(f32, f64.astype(np.float32))
    np.testing.assert_allclose(f32, ndi.distance_transform_edt(a, sampling=sp), rtol=1e-6)


@pytest.mark.parametrize("shape", [(9,), (7, 8), (5, 6, 7), (1, 1, 9)])
@pytest.mark.parametrize("p", [0.3, 0.9, 1.0])
def test_edt_indices(shape, p, threads):
    a = rand(shape, p, seed=5)
    sp = np.linspace(0.7, 1.9, len(shape))
    d, ind = voxa.distance_transform_edt(a, sampling=sp, return_indices=True)
    wd, wind = ndi.distance_transform_edt(a, sampling=sp, return_indices=True)
    assert ind.dtype == np.int32 and ind.shape == wind.shape
    np.testing.assert_allclose(d, wd, rtol=1e-12)
    if a.all():  # no background: scipy's fixed (-1, 0, ...) answer
        assert np.array_equal(ind, wind)
        return
    # the returned index is a background voxel at exactly the distance
    grid = np.indices(shape)
    assert not a[tuple(ind)].any()
    dist = np.sqrt(sum(((ind[k] - grid[k]) * sp[k]) ** 2 for k in range(len(shape))))
    np.testing.assert_allclose(dist, wd, rtol=1e-12)
    # where the nearest background voxel is unique, it is scipy's
    nearest_unique = np.ones(shape, bool)
    bg = np.argwhere(~a)
    for v in np.ndindex(*shape):
        dd = np.sqrt((((bg - np.array(v)) * sp) ** 2).sum(1))
        nearest_unique[v] = (np.abs(dd - dd.min()) < 1e-9).sum() == 1
    assert np.array_equal(ind[:, nearest_unique], wind[:, nearest_unique])
    only = voxa.distance_transform_edt(a, return_distances=False, return_indices=True)
    assert only.shape == wind.shape


def test_edt_layouts_and_dtypes(threads):
    base = rand((6, 7, 8), 0.75, seed=9)
    want = ndi.distance_transform_edt(base)
    for dt in (np.bool_, np.uint8, np.int16, np.uint32, np.int64, np.float32, np.float64):
        a = base.astype(dt)
        np.testing.assert_allclose(voxa.distance_transform_edt(a), want, rtol=1e-12)
        np.testing.assert_allclose(voxa.distance_transform_edt(np.asfortranarray(a)), want,
                                   rtol=1e-12)
    big = rand((12, 14, 16), 0.75, seed=10)
    view = big[::2, 1::2, ::-2]
    np.testing.assert_allclose(voxa.distance_transform_edt(view),
                               ndi.distance_transform_edt(view), rtol=1e-12)
    out = np.zeros((6, 7, 8))
    assert voxa.distance_transform_edt(base, distances=out) is None
    np.testing.assert_allclose(out, want, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.bool_, hnp.array_shapes(min_dims=1, max_dims=3, max_side=12)))
def test_edt_hypothesis(a):
    np.testing.assert_allclose(voxa.distance_transform_edt(a), ndi.distance_transform_edt(a),
                               rtol=1e-12)
    for m in ("taxicab", "chessboard"):
        assert np.array_equal(voxa.distance_transform_cdt(a, m), ndi.distance_transform_cdt(a, m))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("metric", ["taxicab", "chessboard", "cityblock"])
def test_cdt_matches_scipy(shape, metric, threads):
    for p in (0.0, 0.5, 0.95, 1.0):
        a = rand(shape, p, seed=2)
        got = voxa.distance_transform_cdt(a, metric)
        assert got.dtype == np.int32
        assert np.array_equal(got, ndi.distance_transform_cdt(a, metric))
    cross = ndi.generate_binary_structure(len(shape), 1)
    assert np.array_equal(voxa.distance_transform_cdt(a, cross), ndi.distance_transform_cdt(a, cross))


def test_edt_bad_inputs():
    a = rand((5, 6), 0.5)
    with pytest.raises(ValueError, match="sampling"):
        voxa.distance_transform_edt(a, sampling=[1, 2, 3])
    # sampling <= 0 is accepted, as scipy does (test_scipy_distance.py)
    with pytest.raises(ValueError, match="sampling"):
        voxa.distance_transform_edt(a, sampling=[1, np.nan])
    assert voxa.distance_transform_edt(np.array(True)).shape == (1,)  # as scipy
    with pytest.raises(RuntimeError):
        voxa.distance_transform_edt(a, return_distances=False)
    with pytest.raises(ValueError, match="dtype"):
        voxa.distance_transform_edt(a, dtype=np.int16)
    with pytest.raises(ValueError, match="uint32"):
        voxa.distance_transform_edt(a, dtype=np.uint32)  # not squared
    with pytest.raises(ValueError, match="metric"):
        voxa.distance_transform_cdt(a, "euclid")
    with pytest.raises(ValueError, match="metric"):
        voxa.distance_transform_cdt(a, np.ones((3, 3, 3), bool))  # scipy crashes


from conftest import CLI  # noqa: E402


def test_cli_edt(tmp_path):
    a = rand((6, 7, 8), 0.8, seed=4)
    np.save(tmp_path / "in.npy", a)
    r = subprocess.run([CLI, "edt", str(tmp_path / "in.npy"), "-o", str(tmp_path / "d.npy"),
                        "--spacing", "2,1,0.5"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "d.npy"),
                               ndi.distance_transform_edt(a, sampling=(2, 1, 0.5)), rtol=1e-12)
    for m, sm in (("cityblock", "taxicab"), ("chessboard", "chessboard")):
        r = subprocess.run([CLI, "edt", str(tmp_path / "in.npy"), "-o", str(tmp_path / "c.npy"),
                            "--metric", m], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert np.array_equal(np.load(tmp_path / "c.npy"), ndi.distance_transform_cdt(a, sm))
    r = subprocess.run([CLI, "edt", str(tmp_path / "in.npy"), "-o", str(tmp_path / "s.npy"),
                        "--squared", "--dtype", "uint32"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "s.npy"),
                          np.rint(ndi.distance_transform_edt(a) ** 2).astype(np.uint32))
    bad = [["--spacing", "1,2"], ["--metric", "nope"], ["--metric", "chessboard", "--squared"]]
    for extra in bad:
        r = subprocess.run([CLI, "edt", str(tmp_path / "in.npy"), "-o", str(tmp_path / "x.npy")]
                           + extra, capture_output=True, text=True)
        assert r.returncode == 2 and r.stderr.startswith("voxa: edt: "), (extra, r.stderr)
    r = subprocess.run([CLI, "edt", str(tmp_path / "missing.npy"), "-o", str(tmp_path / "x.npy")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.startswith("voxa: edt: ")


def test_large_volume_threads():
    """Big enough to be split across threads: 1 and 3 threads agree, and
    agree with scipy."""
    a = rand((30, 100, 110), 0.9, seed=21)
    sp = (1.5, 1.0, 0.7)
    old = voxa.get_threads()
    try:
        res = {}
        for t in (1, 3):
            voxa.set_threads(t)
            res[t] = (voxa.distance_transform_edt(a, sampling=sp, return_indices=True),
                      voxa.distance_transform_edt(a, squared=True, dtype=np.uint32),
                      voxa.distance_transform_edt(a, dtype=np.float32))
        (d1, i1), s1, f1 = res[1]
        (d3, i3), s3, f3 = res[3]
        assert np.array_equal(d1, d3) and np.array_equal(i1, i3)
        assert np.array_equal(s1, s3) and np.array_equal(f1, f3)
        want = ndi.distance_transform_edt(a, sampling=sp)
        np.testing.assert_allclose(d3, want, rtol=1e-12)
        assert np.array_equal(s3, np.rint(ndi.distance_transform_edt(a) ** 2).astype(np.uint32))
        # unit spacing: exactly scipy's float64 rounded once
        assert np.array_equal(f3, ndi.distance_transform_edt(a).astype(np.float32))
    finally:
        voxa.set_threads(old)


@pytest.mark.parametrize("shape", [(6, 9), (5, 6, 7), (1, 9, 4), (40, 33, 70)])
@pytest.mark.parametrize("p", [0.5, 0.97])
def test_edt_float32_unit_spacing_stores_in_output(shape, p, threads):
    # float32 output with unit spacing keeps its uint32 intermediate in the
    # output buffer itself (no 4 B/voxel scratch): results must not change.
    a = rand(shape, p, seed=11)
    got = voxa.distance_transform_edt(a, dtype=np.float32)
    assert got.dtype == np.float32
    assert np.array_equal(got, ndi.distance_transform_edt(a).astype(np.float32))
