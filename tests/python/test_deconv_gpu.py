"""Richardson-Lucy on the GPU backends against the peers: scikit-image
(zero), the W2 formula centred exactly (periodic, float64), the float64
wrap-free reference (free); and against voxa's CPU path.

The Python module's backend= routing is not in this branch, so the GPU entry
(voxa_deconv_rl_on) is called through ctypes on build/libvoxa.so. Backends:
VOXA_TEST_BACKENDS (default "opencl": PoCL under `make test`); a listed
backend that cannot run fails. Sizes are few and small: VkFFT compiles its
kernels per FFT size (seconds on PoCL)."""
import ctypes
import os

import numpy as np
import pytest
from skimage import restoration

import voxa
from conftest import CLI
from test_deconv import free_reference, rand_psf, rel_err, w2_centred

F32 = 9
MODES = {"free": 0, "periodic": 1, "zero": 2}
CODES = {"opencl": 1, "cuda": 2}
BACKENDS = [b for b in os.environ.get("VOXA_TEST_BACKENDS", "opencl").replace(",", " ").split()
            if b in CODES]


class Array(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("ndim", ctypes.c_int),
                ("shape", ctypes.c_int64 * 8), ("strides", ctypes.c_int64 * 8),
                ("owner", ctypes.c_void_p)]


class Options(ctypes.Structure):
    _fields_ = [("iterations", ctypes.c_int), ("accelerate", ctypes.c_int),
                ("clip", ctypes.c_int), ("filter_epsilon", ctypes.c_double),
                ("fn", ctypes.c_void_p), ("user", ctypes.c_void_p)]


@pytest.fixture(scope="module")
def lib():
    path = os.path.join(os.path.dirname(CLI), "libvoxa.so")
    lib = ctypes.CDLL(path)
    lib.voxa_last_error.restype = ctypes.c_char_p
    return lib


def view(lib, a):
    v = Array()
    st = lib.voxa_array_view(ctypes.byref(v), ctypes.c_void_p(a.ctypes.data), F32, a.ndim,
                             (ctypes.c_int64 * 8)(*a.shape))
    assert st == 0
    return v


def rl_gpu(lib, backend, g, h, num_iter, mode, accelerate=False):
    g = np.ascontiguousarray(g, np.float32)
    h = np.ascontiguousarray(h, np.float32)
    out = np.zeros(g.shape, np.float32)
    o = Options()
    lib.voxa_rl_options_init(ctypes.byref(o))
    o.iterations, o.accelerate = num_iter, int(accelerate)
    vg, vh, vo = view(lib, g), view(lib, h), view(lib, out)
    st = lib.voxa_deconv_rl_on(CODES[backend], ctypes.byref(vg), ctypes.byref(vh),
                               ctypes.byref(vo), MODES[mode], ctypes.byref(o))
    assert st == 0, lib.voxa_last_error().decode()
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_equals_skimage(lib, backend):
    rng = np.random.default_rng(5)
    g = rng.random((12, 18, 14)) + 0.05
    h = rand_psf(rng, (3, 5, 4))
    want = restoration.richardson_lucy(g, h, num_iter=7, clip=False)
    assert rel_err(rl_gpu(lib, backend, g, h, 7, "zero"), want) < 1e-4


@pytest.mark.parametrize("backend", BACKENDS)
def test_periodic_prime_sizes_equal_centred_formula(lib, backend):
    rng = np.random.default_rng(6)
    g = rng.random((13, 17)) + 0.05
    h = rand_psf(rng, (3, 5))
    h /= h.sum()
    want = w2_centred(g, h, 20)
    assert rel_err(rl_gpu(lib, backend, g, h, 20, "periodic"), want) < 1e-4


@pytest.mark.parametrize("backend", BACKENDS)
def test_free_equals_reference_and_cpu(lib, backend):
    rng = np.random.default_rng(7)
    g = (rng.random((19, 23)) + 0.05).astype(np.float32)
    h = rand_psf(rng, (4, 5))
    got = rl_gpu(lib, backend, g, h, 15, "free")
    assert rel_err(got, free_reference(g, h, 15)) < 1e-4
    cpu = voxa.richardson_lucy(g, h, 15, boundary="free")
    assert rel_err(got, cpu) < 1e-4
    assert rel_err(g, cpu) > 1e-2  # RL changed the image: the comparison means something
    acc = rl_gpu(lib, backend, g, h, 15, "free", accelerate=True)
    assert rel_err(acc, voxa.richardson_lucy(g, h, 15, boundary="free", accelerate=True)) < 1e-4


@pytest.mark.parametrize("mode", ["free", "periodic", "zero"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_first_three_accelerated_iterations_are_plain(lib, backend, mode):
    """The device takes the CPU's alpha, one step behind the paper's (its
    update kernel extrapolates): 0 for the starts of iterations 1 and 2, so
    three accelerated iterations are the device's plain ones to the bit;
    the fourth extrapolates."""
    rng = np.random.default_rng(8)
    g = (rng.random((21, 18)) * 50 + 1).astype(np.float32)
    h = rand_psf(rng, (5, 4))
    for it, same in ((3, True), (4, False)):
        acc = rl_gpu(lib, backend, g, h, it, mode, accelerate=True)
        plain = rl_gpu(lib, backend, g, h, it, mode)
        assert np.array_equal(acc, plain) == same, (it, rel_err(acc, plain))


def test_listed_backends_run(lib):
    for b in BACKENDS:
        r = ctypes.c_int()
        assert lib.voxa_backend_resolve(CODES[b], ctypes.byref(r)) == 0, \
            lib.voxa_last_error().decode()


def test_backend_keyword_and_cli_route_to_the_gpu(tmp_path):
    """voxa.richardson_lucy(backend="opencl") and `voxa deconvolve --backend
    opencl` run the descriptor's gpu slot: equal to the CPU to float32
    round-off, in every boundary mode."""
    import os
    import subprocess
    import voxa
    rng = np.random.default_rng(5)
    img = rng.random((9, 14, 17)).astype(np.float32) + 0.1
    psf = rng.random((3, 5, 4)).astype(np.float32)
    for mode in ("periodic", "zero", "free"):
        cpu = voxa.richardson_lucy(img, psf, 6, boundary=mode)
        gpu = voxa.richardson_lucy(img, psf, 6, boundary=mode, backend="opencl")
        assert np.max(np.abs(gpu - cpu) / np.abs(cpu).max()) < 1e-4, mode
    np.save(tmp_path / "img.npy", img)
    np.save(tmp_path / "psf.npy", psf)
    cli = os.environ.get("VOXA_CLI", "build/voxa")
    for b in ("cpu", "opencl"):
        subprocess.run([cli, "deconvolve", str(tmp_path / "img.npy"), "--psf",
                        str(tmp_path / "psf.npy"), "--iterations", "6", "--backend", b, "-o",
                        str(tmp_path / f"{b}.npy")], check=True)
    a, b = np.load(tmp_path / "cpu.npy"), np.load(tmp_path / "opencl.npy")
    assert np.max(np.abs(a - b) / np.abs(a).max()) < 1e-4


@pytest.mark.parametrize("backend", [b for b in BACKENDS if b == "opencl"])
def test_fft_size_vkfft_cannot_plan_fails_clearly(backend):
    """An odd last extent beyond one VkFFT upload: a clear error naming the
    shape and VkFFT's code (its own printout, if any, rides in the message:
    the library prints nothing); 'auto' runs the CPU instead."""
    img = np.random.default_rng(0).random((2, 20001)).astype(np.float32) + 0.1
    psf = np.ones((1, 3), np.float32) / 3
    with pytest.raises(TypeError, match=r"VkFFT cannot plan a real transform of shape "
                                        r"\(1, 2, 20001\) \(VkFFT error \d+"):
        voxa.richardson_lucy(img, psf, num_iter=1, boundary="periodic", backend=backend)
    want = voxa.richardson_lucy(img, psf, num_iter=1, boundary="periodic", backend="cpu")
    got = voxa.richardson_lucy(img, psf, num_iter=1, boundary="periodic", backend="auto")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_psf_longer_than_the_image_runs_on_the_cpu(backend):
    """Zero mode with a PSF longer than the image (accepted by the CPU, as
    scikit-image accepts it): a device backend refuses it clearly, 'auto'
    runs the CPU; periodic mode is refused as on the CPU."""
    rng = np.random.default_rng(4)
    img = (rng.random((3, 16, 18)) + 0.1).astype(np.float32)
    psf = np.full((7, 3, 3), 1 / 63, np.float32)
    with pytest.raises(TypeError, match="runs it on the cpu backend"):
        voxa.richardson_lucy(img, psf, num_iter=2, boundary="zero", backend=backend)
    want = voxa.richardson_lucy(img, psf, num_iter=2, boundary="zero", backend="cpu")
    got = voxa.richardson_lucy(img, psf, num_iter=2, boundary="zero", backend="auto")
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="larger than the image"):
        voxa.richardson_lucy(img, psf, num_iter=2, boundary="periodic", backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["free", "periodic", "zero"])
def test_axes_of_one_voxel(backend, mode):
    """A (1, h, w) stack and a (z, 1, w) slab run on the device (their unit
    axes left out of the FFT plan) and equal the CPU; a last axis of one
    voxel has no real-to-complex plan there: a clear error, and 'auto' runs
    the CPU."""
    rng = np.random.default_rng(8)
    for shape, ps in [((1, 13, 7), (1, 2, 5)), ((1, 12, 9), (1, 5, 3)), ((4, 1, 9), (3, 1, 3)),
                      ((1, 1, 6), (1, 1, 3))]:
        img = (rng.random(shape) * 10 + 1).astype(np.float32)
        psf = voxa.gaussian_psf(ps, 1.0).astype(np.float32)
        want = voxa.richardson_lucy(img, psf, num_iter=3, boundary=mode, backend="cpu")
        got = voxa.richardson_lucy(img, psf, num_iter=3, boundary=mode, backend=backend)
        assert np.max(np.abs(got - want)) <= 1e-4 * np.max(np.abs(want)), shape
    img = (rng.random((9, 7, 1)) + 0.5).astype(np.float32)
    psf = voxa.gaussian_psf((3, 3, 1), 1.0).astype(np.float32)
    want = voxa.richardson_lucy(img, psf, num_iter=2, boundary=mode, backend="cpu")
    if backend == "opencl":
        with pytest.raises(TypeError, match=r"cannot plan a real transform of shape \(\d+, \d+, 1\)"):
            voxa.richardson_lucy(img, psf, num_iter=2, boundary=mode, backend=backend)
    got = voxa.richardson_lucy(img, psf, num_iter=2, boundary=mode, backend="auto")
    np.testing.assert_array_equal(got, want)
