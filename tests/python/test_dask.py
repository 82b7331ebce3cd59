"""voxa.dask: every op on dask arrays equals the in-memory result (labels
with scipy's numbering), for odd chunkings, with threads and processes."""
import numpy as np
import pytest
from scipy import ndimage as ndi

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import voxa  # noqa: E402
import voxa.dask as vd  # noqa: E402

CHUNKS = [(7, 10, 13), (1, 41, 37), (30, 14, 1), (30, 41, 37)]


@pytest.fixture(scope="module")
def mask():
    return np.random.default_rng(1).random((30, 41, 37)) < 0.5


@pytest.mark.parametrize("chunks", CHUNKS)
@pytest.mark.parametrize("conn", [1, 2, 3])
def test_label_equals_scipy(mask, chunks, conn):
    lab, n = vd.label(da.from_array(mask, chunks=chunks), connectivity=conn)
    want, wn = ndi.label(mask, ndi.generate_binary_structure(3, conn))
    got, gn = dask.compute(lab, n, scheduler="threads")
    assert int(gn) == wn and got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_label_structure_dtype_densities():
    rng = np.random.default_rng(2)
    st = np.array([[0, 1, 1], [1, 1, 1], [1, 1, 0]])
    for density in (0.2, 0.6, 0.9):
        m = rng.random((47, 53)) < density
        lab, n = vd.label(da.from_array(m, chunks=(6, 11)), structure=st, output=np.int64)
        want, wn = ndi.label(m, st)
        np.testing.assert_array_equal(lab.compute(), want)
        assert lab.dtype == np.int64 and int(n.compute()) == wn
    empty, n = vd.label(da.zeros((5, 6), chunks=2, dtype=bool))
    assert int(n.compute()) == 0 and not empty.compute().any()


def test_label_spiral_through_every_chunk():
    m = np.zeros((41, 41), bool)
    top, left, bottom, right = 0, 0, 40, 40
    while top <= bottom and left <= right:
        m[top, left:right + 1] = True
        m[top:bottom + 1, right] = True
        m[bottom, left:right + 1] = True
        m[top + 2:bottom + 1, left] = True
        top, left, bottom, right = top + 2, left + 2, bottom - 2, right - 2
        if left <= right:
            m[top - 1, left - 1] = True
    lab, n = vd.label(da.from_array(m, chunks=(3, 4)))
    want, wn = ndi.label(m)
    np.testing.assert_array_equal(lab.compute(), want)
    assert int(n.compute()) == wn


def test_graph_names_and_size(mask):
    x = da.from_array(mask, chunks=(10, 10, 10))
    lab, n = vd.label(x)
    keys = {k[0] if isinstance(k, tuple) else k for k in dict(lab.__dask_graph__())}
    names = " ".join(map(str, keys))
    for part in ("voxa-label-chunk", "voxa-label-face", "voxa-label-merge", "voxa-label-relabel"):
        assert part in names
    nblocks = np.prod(x.numblocks)
    assert len(dict(lab.__dask_graph__())) < 40 * nblocks  # O(chunks), not O(chunks^2)


@pytest.mark.parametrize("op", ["binary_dilation", "binary_erosion", "binary_opening",
                                "binary_closing"])
def test_morphology(mask, op):
    x = da.from_array(mask, chunks=(7, 10, 13))
    for kw in (dict(ball=3), dict(diamond=2, iterations=2, border_value=1), dict(box=(3, 1, 5)),
               dict(structure=ndi.generate_binary_structure(3, 2), iterations=3)):
        got = getattr(vd, op)(x, **kw).compute()
        np.testing.assert_array_equal(got, getattr(voxa, op)(mask, **kw))
    part = mask[:12, :15, :14]
    small = da.from_array(part, chunks=(2, 3, 4))  # chunks smaller than the halo
    for kw in (dict(ball=3, border_value=1), dict(diamond=2, iterations=2)):
        np.testing.assert_array_equal(getattr(vd, op)(small, **kw).compute(),
                                      getattr(voxa, op)(part, **kw))
        scipy_fn = getattr(ndi, op)
        if "ball" not in kw:
            st = ndi.iterate_structure(ndi.generate_binary_structure(3, 1), kw["diamond"])
            np.testing.assert_array_equal(getattr(vd, op)(small, **kw).compute(),
                                          scipy_fn(part, st, iterations=kw["iterations"]))
    with pytest.raises(NotImplementedError, match="iterations < 1"):
        getattr(vd, op)(x, ball=3, iterations=0)  # until stable: only 3-per-axis elements


def test_fill_holes(mask):
    rng = np.random.default_rng(3)
    m = ndi.binary_dilation(rng.random((40, 50, 45)) < 0.02, iterations=3)
    m ^= ndi.binary_erosion(m, iterations=1)  # hollow shells
    for chunks in [(7, 10, 13), (40, 1, 45)]:
        x = da.from_array(m, chunks=chunks)
        np.testing.assert_array_equal(vd.binary_fill_holes(x).compute(), ndi.binary_fill_holes(m))
        st = ndi.generate_binary_structure(3, 3)
        np.testing.assert_array_equal(vd.binary_fill_holes(x, st).compute(),
                                      ndi.binary_fill_holes(m, st))


def test_richardson_lucy():
    rng = np.random.default_rng(4)
    img = ndi.gaussian_filter(rng.random((24, 40, 36)) * 100, 1.5).astype(np.float32)
    psf = np.ones((3, 3, 3), np.float32) / 27
    x = da.from_array(img, chunks=(8, 20, 36))
    exact = vd.richardson_lucy(x, psf, 4, boundary="zero", halo="exact").compute()
    want = voxa.richardson_lucy(img, psf, 4, boundary="zero")
    assert np.abs(exact - want).max() <= 1e-4 * np.abs(want).max()
    approx = vd.richardson_lucy(x, psf, 4).compute()
    assert approx.shape == img.shape and approx.dtype == np.float32


def test_richardson_lucy_planning(tmp_path, monkeypatch):
    """planning= reaches every chunk: only 'measure' times the 3-D plans of
    zero mode, which leaves wisdom in the cache file (a size no other test
    plans); one chunk equals the in-memory call bit for bit."""
    img = np.random.default_rng(6).random((13, 17, 19)).astype(np.float32) + 0.5
    psf = np.ones((3, 3, 3), np.float32) / 27
    x = da.from_array(img, chunks=img.shape)
    for planning in ("estimate", "measure"):
        cache = tmp_path / planning
        monkeypatch.setenv("VOXA_FFTW_WISDOM", str(cache))
        got = vd.richardson_lucy(x, psf, 2, boundary="zero", planning=planning).compute()
        assert cache.exists() == (planning == "measure")
        np.testing.assert_array_equal(
            got, voxa.richardson_lucy(img, psf, 2, boundary="zero", planning=planning))
    with pytest.raises(ValueError, match="planning: 'fast'"):
        vd.richardson_lucy(x, psf, 2, planning="fast")


def test_balls_and_edt(mask):
    pts = np.random.default_rng(5).random((40, 3)) * [30, 41, 37] - 2
    for owner in (False, True):
        got = vd.balls((30, 41, 37), pts, 3.5, owner=owner, chunks=(8, 16, 16)).compute()
        np.testing.assert_array_equal(got, voxa.balls((30, 41, 37), pts, 3.5, owner=owner))
    x = da.from_array(mask, chunks=(7, 10, 13))
    want = ndi.distance_transform_edt(mask, sampling=(2, 1, 1))
    np.testing.assert_allclose(vd.distance_transform_edt(x, sampling=(2, 1, 1)).compute(), want,
                               rtol=1e-12)
    got = vd.distance_transform_edt(x, max_distance=3.0).compute()
    np.testing.assert_allclose(got, np.minimum(ndi.distance_transform_edt(mask), 3.0),
                               rtol=1e-12)


@pytest.mark.parametrize("mode", ["error", "clip", "constant", "nearest", "reflect"])
def test_extract_patches(mask, mode):
    img = (np.arange(30 * 41 * 37) % 251).astype(np.uint8).reshape(30, 41, 37)
    rng = np.random.default_rng(6)
    lo = 0 if mode == "error" else -6
    hi = np.array([30, 41, 37]) - (np.array([5, 6, 4]) if mode == "error" else -3)
    c = np.stack([rng.integers(lo, h, 60) for h in hi], 1)
    x = da.from_array(img, chunks=(7, 10, 13))
    got = vd.extract_patches(x, c, (5, 6, 4), mode=mode, cval=7).compute()
    np.testing.assert_array_equal(got, voxa.extract_patches(img, c, (5, 6, 4), mode=mode, cval=7))
    cen = vd.extract_patches(x, c + 2.5, (5, 6, 4), centered=True, mode="constant").compute()
    np.testing.assert_array_equal(cen, voxa.extract_patches(img, c + 2.5, (5, 6, 4),
                                                            centered=True, mode="constant"))


def test_distributed_processes(mask):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        lab, n = vd.label(da.from_array(mask, chunks=(10, 21, 19)), connectivity=2)
        got, gn = client.compute([lab, n], sync=True)
        want, wn = ndi.label(mask, ndi.generate_binary_structure(3, 2))
        np.testing.assert_array_equal(got, want)
        assert int(gn) == wn
        o = client.compute(vd.binary_opening(da.from_array(mask, chunks=10), ball=2), sync=True)
        np.testing.assert_array_equal(o, voxa.binary_opening(mask, ball=2))
        # every other function on the processes too, odd chunkings
        x = da.from_array(mask, chunks=(16, 21, 19))
        np.testing.assert_array_equal(client.compute(vd.binary_fill_holes(x), sync=True),
                                      ndi.binary_fill_holes(mask))
        np.testing.assert_allclose(client.compute(vd.distance_transform_edt(x, max_distance=2.5),
                                                  sync=True),
                                   np.minimum(ndi.distance_transform_edt(mask), 2.5), rtol=1e-12)
        pts = np.random.default_rng(7).random((20, 3)) * [30, 41, 37]
        np.testing.assert_array_equal(
            client.compute(vd.balls((30, 41, 37), pts, 3.0, owner=True, chunks=(16, 21, 19)),
                           sync=True), voxa.balls((30, 41, 37), pts, 3.0, owner=True))
        c = np.random.default_rng(8).integers(-3, 35, (25, 3))
        np.testing.assert_array_equal(
            client.compute(vd.extract_patches(x, c, (4, 5, 6), mode="reflect"), sync=True),
            voxa.extract_patches(mask, c, (4, 5, 6), mode="reflect"))
        img = ndi.gaussian_filter(mask.astype(np.float32) * 100, 1.0)
        psf = np.ones((3, 3, 3), np.float32) / 27
        rl = client.compute(vd.richardson_lucy(da.from_array(img, chunks=(10, 21, 37)), psf, 3,
                                               boundary="zero", halo="exact"), sync=True)
        want = voxa.richardson_lucy(img, psf, 3, boundary="zero")
        assert np.abs(rl - want).max() <= 1e-4 * np.abs(want).max()


def test_w2_example_runs(tmp_path):
    import os
    import subprocess
    import sys
    pytest.importorskip("ome_zarr")
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "dask_w2.py")
    r = subprocess.run([sys.executable, script, "--scale", "0.02", "--iterations", "2", "--out",
                        str(tmp_path / "o.zarr")], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr
    zarr = pytest.importorskip("zarr")
    out = zarr.open_group(tmp_path / "o.zarr")
    ms = (out.attrs["ome"] if "ome" in out.attrs else out.attrs)["multiscales"][0]
    first = out[ms["datasets"][0]["path"]]
    assert first.shape == (19, 41, 41) and first.dtype == np.float32
