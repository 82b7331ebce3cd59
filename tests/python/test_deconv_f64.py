"""Richardson-Lucy in double precision: a float64 output (dtype=np.float64,
out=float64, `voxa deconvolve --dtype float64`) is computed in double, and
then equals float64 code to double round-off: scikit-image's richardson_lucy
(zero mode), the centred W2 formula (periodic), the wrap-free reference
(free), plain and accelerated. The float32 path cannot: where the blurred
estimate crosses 0 (noisy data with negative values) its round-off is
amplified, as in scikit-image's own camera test, which this file repeats."""
import os
import subprocess

import numpy as np
import pytest
import scipy.signal
from skimage import data, restoration, util

import voxa
from conftest import CLI
from test_deconv import free_reference, rand_psf, rel_err, w2_centred
from test_deconv_accel import additive, reference

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rl64(g, h, n, **kw):
    return voxa.richardson_lucy(g, h, n, dtype=np.float64, **kw)


def test_camera_with_noise_equals_skimage():
    """scikit-image's test_richardson_lucy (ndim 2): the camera blurred by
    a 5x5 box plus noise of 0.1 std (negative values), 5 iterations, clip.
    Its reference file is scikit-image's own output; the test's rtol is 1e-3."""
    img = util.img_as_float(data.camera())
    psf = np.ones((5, 5)) / 25
    g = scipy.signal.convolve(img, psf, "same")
    g += 0.1 * g.std() * np.random.RandomState(0).standard_normal(g.shape)
    want = restoration.richardson_lucy(g, psf, num_iter=5)
    got = rl64(g, psf, 5, boundary="zero", clip=True)
    assert got.dtype == np.float64
    # 5e-10 relative where the blurred estimate nears 0 (10 of 262,144
    # pixels beyond 1e-10): the two libraries' double round-off, amplified
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    # the test can fail: float32 work misses scikit-image's own rtol 1e-3
    f32 = voxa.richardson_lucy(g, psf, 5, boundary="zero", clip=True)
    assert not np.allclose(f32, want, rtol=1e-3, atol=0)


@pytest.mark.parametrize("shape,pshape", [((40, 37), (5, 4)), ((12, 20, 17), (3, 4, 5)),
                                          ((64,), (7,)), ((9, 10, 11), (9, 1, 6))])
@pytest.mark.parametrize("clip", [False, True])
def test_zero_equals_skimage(shape, pshape, clip):
    rng = np.random.default_rng(sum(shape))
    g = rng.random(shape) * 3 - 0.5  # negative values: b crosses 0
    h = rand_psf(rng, pshape)
    want = restoration.richardson_lucy(g, h, num_iter=6, clip=clip)
    np.testing.assert_allclose(rl64(g, h, 6, boundary="zero", clip=clip), want,
                               rtol=1e-9, atol=1e-11)


def test_zero_filter_epsilon_equals_skimage():
    rng = np.random.default_rng(4)
    g = rng.random((30, 28)) * 2 - 1
    h = rand_psf(rng, (4, 5))
    for fe in (1e-3, 0.3):
        want = restoration.richardson_lucy(g, h, num_iter=5, clip=False, filter_epsilon=fe)
        got = rl64(g, h, 5, boundary="zero", filter_epsilon=fe)
        # data in [-1, 1]: 5e-9 relative (3.5e-11 absolute) where b nears 0
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-10)
    # the filter acts: off, the numbers differ
    assert rel_err(rl64(g, h, 5, boundary="zero"), want) > 1e-3


@pytest.mark.parametrize("shape,pshape", [((33, 47), (5, 7)), ((31, 40), (6, 5)),
                                          ((15, 22, 19), (5, 4, 3)), ((64,), (10,))])
def test_periodic_and_free_equal_references(shape, pshape):
    rng = np.random.default_rng(len(shape) + pshape[0])
    g = rng.random(shape) * 100 + 1
    h = rand_psf(rng, pshape)
    assert rel_err(rl64(g, h, 9, boundary="periodic"), w2_centred(g, h, 9)) < 1e-12
    assert rel_err(rl64(g, h, 9, boundary="free"), free_reference(g, h, 9)) < 1e-12
    # float32 is 1e-7-close, not 1e-12-close: the tolerance tells them apart
    assert rel_err(voxa.richardson_lucy(g, h, 9, boundary="free"),
                   free_reference(g, h, 9)) > 1e-10


@pytest.mark.parametrize("boundary", ["free", "periodic", "zero"])
@pytest.mark.parametrize("shape,pshape", [((30, 41), (5, 7)), ((12, 17, 14), (3, 6, 4))])
def test_accelerated_equals_reference(boundary, shape, pshape):
    rng = np.random.default_rng(sum(shape))
    g = rng.random(shape) * 10 + 0.5
    h = rand_psf(rng, pshape)
    want = reference(g, h, 12, boundary)
    assert rel_err(rl64(g, h, 12, boundary=boundary, accelerate=True), want) < 1e-10
    assert rel_err(reference(g, h, 12, boundary, additive), want) > 1e-3


def test_psf_kept_in_double():
    """A float64 PSF is not rounded to float32 on the double path: its
    rounding alone would move the result by ~1e-8 here."""
    rng = np.random.default_rng(9)
    g = rng.random((40, 40)) + 0.5
    h = rand_psf(rng, (7, 7))
    want = free_reference(g, h, 10)
    assert rel_err(rl64(g, h, 10, boundary="free"), want) < 1e-13
    h32 = h.astype(np.float32).astype(np.float64)
    assert rel_err(free_reference(g, h32, 10), want) > 1e-10


def test_inputs_outputs_threads():
    rng = np.random.default_rng(11)
    g = (rng.random((20, 26, 18)) * 1000).astype(np.uint16)
    h = rand_psf(rng, (3, 4, 5))
    for boundary in ("free", "periodic", "zero"):
        ref = rl64(g, h, 5, boundary=boundary, accelerate=True)
        for variant in (g.astype(np.float64), np.asfortranarray(g), g.astype(np.int32),
                        g.astype(np.float32)[:, ::-1, :][:, ::-1, :]):
            assert np.array_equal(rl64(variant, h, 5, boundary=boundary, accelerate=True), ref)
        out = np.full((26, 40, 18), -7.0).transpose(1, 0, 2)[::2]
        r = voxa.richardson_lucy(g, h, 5, boundary=boundary, accelerate=True, out=out)
        assert r is out and np.array_equal(out, ref)
        assert (np.full((26, 40, 18), -7.0).transpose(1, 0, 2)[1::2] == -7).all()
        res, old = [], voxa.get_threads()
        try:
            for t in (1, 3):
                voxa.set_threads(t)
                res.append(rl64(g, h, 5, boundary=boundary, accelerate=True))
        finally:
            voxa.set_threads(old)
        assert rel_err(res[0], res[1]) < 1e-13  # FFTW's plans per thread count may round apart


def test_bad_values_and_backends():
    g = np.ones((10, 12))
    h = np.ones((3, 3)) / 9
    g[3, 4] = np.nan
    with pytest.raises(ValueError, match=r"image: value at flat index 40 is NaN or infinite"):
        rl64(g, h, 2)
    g[3, 4] = 1e300  # beyond float32, fine in double
    assert np.isfinite(rl64(g, h, 2, boundary="periodic")).all()
    g[3, 4] = 1
    # a device backend refuses double work clearly; auto runs it on the CPU
    want = rl64(g, h, 3)
    assert np.array_equal(voxa.richardson_lucy(g, h, 3, dtype=np.float64, backend="auto"), want)
    for b in ("opencl", "cuda"):
        usable = _runs(b)
        with pytest.raises(TypeError) as e:
            voxa.richardson_lucy(g, h, 3, dtype=np.float64, backend=b)
        # where the backend runs float32, it refuses float64 for that reason
        assert ("computed in double precision, on the CPU only" in str(e.value)) == usable, \
            str(e.value)


def _runs(backend):
    try:
        voxa.richardson_lucy(np.ones((6, 7), np.float32), np.ones((3, 3)) / 9, 1,
                             backend=backend)
        return True
    except TypeError:
        return False


def test_cli_stream_and_dask_compute_in_double(tmp_path):
    rng = np.random.default_rng(2)
    g = rng.random((24, 30, 28)) * 2 - 0.2
    h = rand_psf(rng, (3, 5, 4))
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "h.npy", h)
    want = rl64(g, h, 4, boundary="zero")
    for extra in ([], ["--mem-limit", "64M", "--chunks", "9,11,10", "--halo", "exact"]):
        o = tmp_path / "o.npy"
        subprocess.run([CLI, "deconvolve", str(tmp_path / "g.npy"), "--psf",
                        str(tmp_path / "h.npy"), "--iterations", "4", "--boundary", "zero",
                        "--dtype", "float64", "-o", str(o)] + extra, check=True,
                       capture_output=True)
        got = np.load(o)
        assert got.dtype == np.float64
        # whole: the same numbers; by blocks with the exact halo: equal to
        # double round-off (each block is its own FFT box)
        assert np.array_equal(got, want) if not extra else rel_err(got, want) < 1e-12
    da = pytest.importorskip("dask.array")
    import voxa.dask
    lazy = voxa.dask.richardson_lucy(da.from_array(g, chunks=(12, 15, 14)), h, 4,
                                     boundary="zero", dtype=np.float64, halo="exact")
    assert lazy.dtype == np.float64
    assert rel_err(lazy.compute(), want) < 1e-12


@pytest.mark.parametrize("pshape", [(3, 5, 4), (4, 4, 4), (2, 3, 6)])
def test_exact_halo_with_even_psf_extents(tmp_path, pshape):
    """halo='exact' in zero mode with even PSF extents: scikit-image centres
    the forward kernel at m//2 - 1 and the backward one at m//2, so an
    iteration reaches m voxels before and m - 2 after (not m - 1 each side;
    with that halo the blocks missed by 1e-3). Blocks equal the whole."""
    rng = np.random.default_rng(len(pshape) + sum(pshape))
    g = rng.random((24, 30, 28)) * 2 + 0.2
    h = rand_psf(rng, pshape)
    want = rl64(g, h, 4, boundary="zero")
    da = pytest.importorskip("dask.array")
    import voxa.dask
    lazy = voxa.dask.richardson_lucy(da.from_array(g, chunks=(12, 15, 14)), h, 4,
                                     boundary="zero", dtype=np.float64, halo="exact")
    assert rel_err(lazy.compute(), want) < 1e-12
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "h.npy", h)
    subprocess.run([CLI, "deconvolve", str(tmp_path / "g.npy"), "--psf", str(tmp_path / "h.npy"),
                    "--iterations", "4", "--boundary", "zero", "--dtype", "float64",
                    "--mem-limit", "64M", "--chunks", "7,9,8", "--halo", "exact",
                    "-o", str(tmp_path / "o.npy")], check=True, capture_output=True)
    assert rel_err(np.load(tmp_path / "o.npy"), want) < 1e-12
