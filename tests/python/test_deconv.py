"""Richardson–Lucy: parity with the published W2 formula (periodic), with
scikit-image (zero), with an independent float64 reference of the wrap-free
mode (free); properties; bad inputs; CLI."""
import os
import subprocess

import numpy as np
import pytest
import scipy.signal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from skimage import restoration

import voxa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conftest import CLI  # noqa: E402


def rel_err(a, b):
    b = np.asarray(b, dtype=np.float64)
    return float(np.abs(np.asarray(a, dtype=np.float64) - b).max() / np.abs(b).max())


# ---- references -------------------------------------------------------------

def w2_published(g, h, num_iter):
    """The published NumPy formula, literally (float64)."""
    g = g.astype(np.float64)
    n = g.shape
    axes = tuple(range(g.ndim))
    pad = [((a - b) // 2, a - b - (a - b) // 2) for a, b in zip(n, h.shape)]
    hp = np.roll(np.pad(h.astype(np.float64), pad), [s // 2 for s in n], axis=axes)
    H = np.fft.rfftn(hp)
    f = g.copy()
    for _ in range(num_iter):
        ratio = g / np.fft.irfftn(np.fft.rfftn(f) * H, s=n, axes=axes)
        f *= np.fft.irfftn(np.conj(np.conj(np.fft.rfftn(ratio)) * H), s=n, axes=axes)
    return f


def w2_centred(g, h, num_iter):
    """The W2 formula with the PSF centre (shape // 2) put exactly at the
    origin (what voxa's periodic mode promises for every size)."""
    g = g.astype(np.float64)
    n = g.shape
    axes = tuple(range(g.ndim))
    hp = np.zeros(n)
    hp[tuple(slice(0, m) for m in h.shape)] = h
    hp = np.roll(hp, [-(m // 2) for m in h.shape], axis=axes)
    H = np.fft.rfftn(hp)
    f = g.copy()
    for _ in range(num_iter):
        ratio = g / np.fft.irfftn(np.fft.rfftn(f) * H, s=n, axes=axes)
        f *= np.fft.irfftn(np.fft.rfftn(ratio) * np.conj(H), s=n, axes=axes)
    return f


def free_reference(g, h, num_iter):
    """Wrap-free RL (Bertero & Boccacci) written directly in float64: object
    on the image extended by m - 1 (split m - 1 - m//2 before, m//2 after),
    data on the image, updates divided by H^T(1_window)."""
    g = g.astype(np.float64)
    h = h.astype(np.float64)
    a = scipy.signal.fftconvolve(np.ones(g.shape), h[(slice(None, None, -1),) * g.ndim], "full")
    ok = a > 1e-4 * h.sum()
    f = np.where(ok, g.mean(), 0.0)
    for _ in range(num_iter):
        b = scipy.signal.fftconvolve(f, h, "valid")
        r = np.where(b > 0, g / np.where(b > 0, b, 1), 0)
        c = scipy.signal.fftconvolve(r, h[(slice(None, None, -1),) * g.ndim], "full")
        f = np.where(ok, np.maximum(f * c / np.where(ok, a, 1), 0), 0)
    crop = tuple(slice(m - 1 - m // 2, m - 1 - m // 2 + n) for m, n in zip(h.shape, g.shape))
    return f[crop]


def rand_psf(rng, shape):
    h = rng.random(shape) + 0.05
    return h / h.sum()


# ---- periodic: the published formula ----------------------------------------

@pytest.mark.parametrize("shape,pshape", [((32, 48), (6, 8)), ((16, 20, 24), (4, 6, 8)),
                                          ((64,), (10,))])
def test_periodic_equals_published_formula_even(shape, pshape):
    rng = np.random.default_rng(1)
    g = (rng.random(shape) + 0.1).astype(np.float32)
    h = rand_psf(rng, pshape)
    got = voxa.richardson_lucy(g, h, 8, boundary="periodic")
    assert got.dtype == np.float32
    assert rel_err(got, w2_published(g, h, 8)) < 1e-4


@pytest.mark.parametrize("shape,pshape", [((33, 47), (5, 7)), ((31, 40), (6, 5)),
                                          ((15, 22, 19), (5, 4, 3)), ((9, 12, 7), (9, 1, 7))])
def test_periodic_centred_odd_sizes(shape, pshape):
    rng = np.random.default_rng(2)
    g = (rng.random(shape) * 100).astype(np.float32)
    h = rand_psf(rng, pshape)
    got = voxa.richardson_lucy(g, h, 6, boundary="periodic")
    assert rel_err(got, w2_centred(g, h, 6)) < 1e-4


def test_published_formula_shifts_odd_sizes_but_voxa_does_not():
    g = np.random.default_rng(3).random((21, 22)).astype(np.float32) + 1
    d = np.zeros((3, 3))
    d[1, 1] = 1
    # the literal formula is shifted by one voxel for odd image extents
    assert rel_err(w2_published(g, d, 1), g) > 0.05
    assert rel_err(voxa.richardson_lucy(g, d, 3, boundary="periodic"), g) < 1e-5


def test_periodic_conserves_flux():
    rng = np.random.default_rng(4)
    g = (rng.random((24, 40, 36)) * 50).astype(np.float32)
    h = voxa.gaussian_psf((7, 9, 8), (1.5, 2, 1))
    f = voxa.richardson_lucy(g, h, 15, boundary="periodic")
    assert abs(f.sum(dtype=np.float64) / g.sum(dtype=np.float64) - 1) < 1e-4


# ---- zero: scikit-image ----------------------------------------------------

@pytest.mark.parametrize("shape,pshape", [((40, 52), (5, 7)), ((40, 52), (6, 8)),
                                          ((37, 30), (4, 9)), ((12, 18, 14), (3, 5, 4)),
                                          ((10, 16, 13), (4, 4, 4)), ((50,), (8,))])
def test_zero_equals_skimage(shape, pshape):
    rng = np.random.default_rng(5)
    g = rng.random(shape) + 0.05
    h = rand_psf(rng, pshape)
    want = restoration.richardson_lucy(g, h, num_iter=7, clip=False)
    got = voxa.richardson_lucy(g, h, 7, boundary="zero")
    assert rel_err(got, want) < 1e-4


def test_zero_skimage_defaults_clip_filter_and_integers():
    rng = np.random.default_rng(6)
    g8 = (rng.random((30, 34)) * 255).astype(np.uint8)
    h = rand_psf(rng, (5, 6))
    want = restoration.richardson_lucy(g8, h, num_iter=4, clip=False)
    assert rel_err(voxa.richardson_lucy(g8, h, 4, boundary="zero"), want) < 1e-4
    g = rng.random((30, 34)) * 1.6  # so that clipping bites
    want = restoration.richardson_lucy(g, h, num_iter=5)  # clip=True by default
    got = voxa.richardson_lucy(g, h, 5, boundary="zero", clip=True)
    assert got.max() == 1.0 and rel_err(got, want) < 1e-4
    g[5:15, 5:15] = 0  # a dark square: the filter sets ratios there to 0
    want = restoration.richardson_lucy(g, h, num_iter=5, clip=False, filter_epsilon=0.3)
    got = voxa.richardson_lucy(g, h, 5, boundary="zero", filter_epsilon=0.3)
    assert rel_err(got, want) < 1e-4


# ---- free: wrap-free ---------------------------------------------------------

@pytest.mark.parametrize("shape,pshape", [((30, 41), (5, 7)), ((28, 33), (6, 4)),
                                          ((11, 17, 14), (3, 6, 5)), ((40,), (7,))])
def test_free_equals_reference(shape, pshape):
    rng = np.random.default_rng(7)
    g = (rng.random(shape) * 10 + 0.5).astype(np.float32)
    h = rand_psf(rng, pshape)
    assert rel_err(voxa.richardson_lucy(g, h, 6), free_reference(g, h, 6)) < 1e-4


def test_free_no_wraparound_no_dark_borders():
    h = voxa.gaussian_psf((9, 9), 2)
    flat = np.full((40, 50), 7.0, np.float32)
    # a constant image is a fixed point: no darkened (or brightened) borders
    assert rel_err(voxa.richardson_lucy(flat, h, 10), flat) < 1e-4
    assert rel_err(voxa.richardson_lucy(flat, h, 10, boundary="zero"), flat) > 0.1
    # a bright object at the left edge must not disturb the right edge
    # (periodic mode wraps it there: the flat background beside it collapses)
    g = np.full((40, 50), 1.0, np.float32)
    g[15:25, 0:3] = 100
    free = voxa.richardson_lucy(g, h, 10)
    per = voxa.richardson_lucy(g, h, 10, boundary="periodic")
    assert np.abs(free[15:25, -3:] - 1).max() < 0.01
    assert np.abs(per[15:25, -3:] - 1).max() > 0.5


# ---- random shapes: every mode against its reference ---------------------------

@st.composite
def problems(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 13)) for _ in range(ndim))
    pshape = tuple(draw(st.integers(1, n)) for n in shape)
    seed = draw(st.integers(0, 2**31))
    boundary = draw(st.sampled_from(["free", "periodic", "zero"]))
    order = draw(st.sampled_from(["C", "F"]))
    return shape, pshape, seed, boundary, order


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_random_shapes_match_references(prob):
    shape, pshape, seed, boundary, order = prob
    rng = np.random.default_rng(seed)
    g = np.asarray(rng.random(shape) * 10 + 0.5, dtype=np.float32, order=order)
    h = rand_psf(rng, pshape)
    got = voxa.richardson_lucy(g, h, 3, boundary=boundary)
    if boundary == "periodic":
        want = w2_centred(g, h, 3)
    elif boundary == "zero":
        want = restoration.richardson_lucy(g.astype(np.float64), h, num_iter=3, clip=False)
    else:
        want = free_reference(g, h, 3)
    assert got.shape == g.shape
    assert rel_err(got, want) < 1e-4


# ---- properties shared by the modes -------------------------------------------

@pytest.mark.parametrize("boundary", ["free", "periodic", "zero"])
def test_delta_psf_is_identity(boundary):
    g = (np.random.default_rng(8).random((13, 18, 10)) * 3).astype(np.float32) + 0.2
    # scikit-image centres even kernels one voxel apart forward and backward,
    # so in zero mode only odd deltas are the identity (there, and in voxa)
    for ps in [(1, 1, 1), (3, 5, 7)] + ([(3, 5, 4), (2, 4, 6)] if boundary != "zero" else []):
        d = np.zeros(ps)
        d[tuple(s // 2 for s in ps)] = 1
        got = voxa.richardson_lucy(g, d, 4, boundary=boundary)
        assert rel_err(got, g) < 1e-5


@pytest.mark.parametrize("boundary", ["free", "periodic", "zero"])
@pytest.mark.parametrize("accelerate", [False, True])
def test_all_zero_image(boundary, accelerate):
    h = voxa.gaussian_psf((5, 4), 1)
    r = voxa.richardson_lucy(np.zeros((20, 21), np.uint8), h, 5, boundary=boundary,
                             accelerate=accelerate)
    assert np.array_equal(r, np.zeros((20, 21), np.float32))


@pytest.mark.parametrize("boundary", ["free", "periodic"])
def test_non_negative(boundary):
    rng = np.random.default_rng(9)
    g = rng.random((30, 31)).astype(np.float32) ** 8 * 1000  # mostly tiny, a few bright
    g[:, :10] = 0
    f = voxa.richardson_lucy(g, voxa.gaussian_psf((7, 7), 1.5), 25, boundary=boundary)
    assert f.min() >= 0 and np.isfinite(f).all()


def synthetic(shape=(24, 64, 64), seed=10):
    rng = np.random.default_rng(seed)
    truth = np.zeros(shape)
    for _ in range(40):
        c = rng.uniform(0, 1, 3) * shape
        zz, yy, xx = np.ogrid[:shape[0], :shape[1], :shape[2]]
        truth += 50 * np.exp(-(((zz - c[0]) / 1.5) ** 2 + ((yy - c[1]) / 2) ** 2
                               + ((xx - c[2]) / 2) ** 2))
    truth += 1
    psf = voxa.gaussian_psf((9, 11, 11), (2, 2.5, 2.5), dtype=np.float64)
    blurred = scipy.signal.fftconvolve(truth, psf, "same")
    return truth, np.maximum(blurred, 0).astype(np.float32), psf


def test_error_to_ground_truth_decreases_and_acceleration_helps():
    truth, g, psf = synthetic()
    err = lambda f: np.linalg.norm(f - truth) / np.linalg.norm(truth)
    e0 = err(g)
    e5, e20 = (err(voxa.richardson_lucy(g, psf, k)) for k in (5, 20))
    assert e20 < e5 < e0
    a20 = err(voxa.richardson_lucy(g, psf, 20, accelerate=True))
    assert a20 < e20
    assert a20 < err(voxa.richardson_lucy(g, psf, 40))  # 20 accelerated beat 40 plain


def test_layouts_dtypes_threads_out():
    rng = np.random.default_rng(11)
    g = (rng.random((20, 26, 18)) * 1000).astype(np.uint16)
    h = rand_psf(rng, (3, 4, 5))
    ref = voxa.richardson_lucy(g, h, 5, boundary="periodic")
    for variant in (g.astype(np.float32), g.astype(np.float64), np.asfortranarray(g),
                    g.astype(np.int32)):
        assert np.array_equal(voxa.richardson_lucy(variant, h, 5, boundary="periodic"), ref)
    big = np.zeros((40, 26, 36), np.float32)
    big[::2, :, ::2] = g
    view = big[::2, :, ::2]
    assert not view.flags.c_contiguous
    for boundary in ("free", "periodic", "zero"):
        a = voxa.richardson_lucy(view, h[::-1, :, ::-1], 5, boundary=boundary)
        b = voxa.richardson_lucy(np.ascontiguousarray(view), h[::-1, :, ::-1].copy(), 5,
                                 boundary=boundary)
        assert np.array_equal(a, b)
    out = np.empty((26, 20, 18), np.float64).transpose(1, 0, 2)
    r = voxa.richardson_lucy(g, h, 5, boundary="periodic", out=out)
    # a float64 out is computed in double (test_deconv_f64.py): dtype=float64's numbers
    assert r is out and np.array_equal(
        out, voxa.richardson_lucy(g, h, 5, boundary="periodic", dtype=np.float64))
    assert rel_err(out, ref) < 1e-5
    assert voxa.richardson_lucy(g, h, 5, dtype=np.float64).dtype == np.float64
    old = voxa.get_threads()
    try:
        res = []
        for t in (1, 3):
            voxa.set_threads(t)
            res.append(voxa.richardson_lucy(g, h, 6, accelerate=True))
        assert rel_err(res[0], res[1]) < 1e-5
    finally:
        voxa.set_threads(old)


def test_thin_and_psf_as_large_as_image():
    rng = np.random.default_rng(12)
    g = (rng.random((1, 1, 30)) + 0.1).astype(np.float32)
    h = rand_psf(rng, (1, 1, 5))
    got = voxa.richardson_lucy(g, h, 4, boundary="zero")
    want = restoration.richardson_lucy(g.astype(np.float64), h, num_iter=4, clip=False)
    assert rel_err(got, want) < 1e-4
    g = (rng.random((8, 10)) + 0.1).astype(np.float32)
    h = rand_psf(rng, (8, 10))
    assert rel_err(voxa.richardson_lucy(g, h, 3, boundary="periodic"),
                   w2_published(g, h, 3)) < 1e-4
    assert rel_err(voxa.richardson_lucy(g, h, 3), free_reference(g, h, 3)) < 1e-4


def test_progress_and_cancel():
    g = np.ones((16, 16), np.float32)
    h = voxa.gaussian_psf((3, 3), 1)
    seen = []
    voxa.richardson_lucy(g, h, 4, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    with pytest.raises(KeyboardInterrupt):
        voxa.richardson_lucy(g, h, 4, progress=lambda d, t: d < 2)

    def boom(d, t):
        raise RuntimeError("stop here")
    with pytest.raises(RuntimeError, match="stop here"):
        voxa.richardson_lucy(g, h, 4, progress=boom)


def test_planning_measure_and_wisdom(tmp_path):
    rng = np.random.default_rng(14)
    g = (rng.random((40, 44)) + 0.1).astype(np.float32)
    h = voxa.gaussian_psf((5, 6), 1.2)
    a = voxa.richardson_lucy(g, h, 5, boundary="periodic", planning="measure")
    assert rel_err(a, voxa.richardson_lucy(g, h, 5, boundary="periodic")) < 1e-5
    w = tmp_path / "wisdom.txt"
    voxa.restoration.save_wisdom(w)
    assert w.read_text().startswith("(fftw-3")
    voxa.restoration.load_wisdom(w)
    (tmp_path / "bad.txt").write_text("not wisdom")
    with pytest.raises(ValueError, match="not FFTW"):
        voxa.restoration.load_wisdom(tmp_path / "bad.txt")
    with pytest.raises(OSError, match="cannot open"):
        voxa.restoration.load_wisdom(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="planning: 'patient' .expected 'auto'"):
        voxa.richardson_lucy(g, h, 2, planning="patient")


# ---- PSF helpers --------------------------------------------------------------

def test_gaussian_psf():
    p = voxa.gaussian_psf((7, 8, 9), (1.0, 2.0, 0.5), dtype=np.float64)
    z, y, x = np.ogrid[:7, :8, :9]
    want = np.exp(-0.5 * (((z - 3) / 1.0) ** 2 + ((y - 4) / 2.0) ** 2 + ((x - 4) / 0.5) ** 2))
    want /= want.sum()
    assert np.allclose(p, want, rtol=1e-12, atol=1e-15)
    assert np.unravel_index(p.argmax(), p.shape) == (3, 4, 4)
    d = voxa.gaussian_psf((5, 4), 0)
    assert d.dtype == np.float32 and d[2, 2] == 1 and d.sum() == 1
    with pytest.raises(ValueError, match="sigma"):
        voxa.gaussian_psf((5, 5), (-1, 1))
    with pytest.raises(ValueError, match="shape"):
        voxa.gaussian_psf((0, 5), 1)


# ---- bad inputs ----------------------------------------------------------------

def test_bad_inputs():
    g = np.ones((20, 20), np.float32)
    h = voxa.gaussian_psf((5, 5), 1)
    cases = [
        (dict(psf=np.ones((21, 5))), "larger than the image"),
        (dict(psf=-h), "negative"),
        (dict(psf=np.where(h > h.max() / 2, np.nan, h)), "not finite"),
        (dict(psf=np.where(h > h.max() / 2, np.inf, h)), "not finite"),
        (dict(psf=np.zeros((5, 5))), "sum is 0"),
        (dict(psf=np.ones((5, 5, 1))), "ndim"),
        (dict(image=np.where(np.eye(20) > 0, np.nan, 1.0)), "NaN"),
        (dict(image=np.full((20, 20), np.inf)), "infinite"),
        (dict(image=np.full((20, 20), 1e300)), "float32 range"),
        (dict(num_iter=0), "num_iter"),
        (dict(boundary="reflect"), "boundary"),
        (dict(filter_epsilon=-1), "filter_epsilon"),
        (dict(image=np.ones((2, 2, 2, 5)), psf=np.ones((1, 1, 1, 1))), "ndim 4"),
    ]
    for kw, msg in cases:
        args = dict(image=g, psf=h, num_iter=3)
        args.update(kw)
        with pytest.raises(ValueError, match=msg):
            voxa.richardson_lucy(**args)
    with pytest.raises(TypeError):
        voxa.richardson_lucy(g.astype(np.complex64), h)
    with pytest.raises(TypeError):
        voxa.richardson_lucy(g, h, 2.5)
    with pytest.raises(ValueError, match="overlap"):
        voxa.richardson_lucy(g, h, out=g)


# ---- CLI ----------------------------------------------------------------------

def cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


def test_cli(tmp_path, monkeypatch):
    # the default planning measures the staged path's plans: one wisdom file
    # for this process and the CLI's, so both run the same plans
    monkeypatch.setenv("VOXA_FFTW_WISDOM", str(tmp_path / "shared-wisdom"))
    psf, img, out = tmp_path / "psf.npy", tmp_path / "img.npy", tmp_path / "out.npy"
    r = cli("psf", "gaussian", "--shape", "5,7,6", "--sigma", "1,2,1.5", "-o", psf)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(psf), voxa.gaussian_psf((5, 7, 6), (1, 2, 1.5)))
    g = (np.random.default_rng(13).random((12, 20, 16)) * 4000).astype(np.uint16)
    np.save(img, g)
    for extra, kw in [([], {}), (["--boundary", "periodic"], dict(boundary="periodic")),
                      (["--boundary", "zero", "--accelerate"], dict(boundary="zero",
                                                                   accelerate=True)),
                      (["--measure-planes"], dict(planning="auto")),
                      (["--planning", "estimate"], dict(planning="estimate")),
                      (["--planning", "measure"], dict(planning="measure"))]:
        r = cli("deconvolve", img, "--psf", psf, "-o", out, "--iterations", 5, *extra)
        assert r.returncode == 0, r.stderr
        want = voxa.richardson_lucy(g, np.load(psf), 5, **kw)
        # this process may hold FFTW wisdom measured by earlier tests, which
        # steers its estimated plans too: equal to float32 round-off
        assert rel_err(np.load(out), want) < 1e-5
    r = cli("deconvolve", img, "--psf", psf, "-o", out, "--boundary", "wrap")
    assert r.returncode == 2 and "voxa: deconvolve: --boundary" in r.stderr
    r = cli("deconvolve", img, "--psf", psf, "-o", out, "--iterations", "0")
    assert r.returncode == 2 and "--iterations" in r.stderr
    np.save(tmp_path / "neg.npy", -np.ones((3, 3, 3)))
    r = cli("deconvolve", img, "--psf", tmp_path / "neg.npy", "-o", out)
    assert r.returncode == 1 and "voxa: deconvolve: psf: value" in r.stderr
    np.save(tmp_path / "big.npy", np.ones((13, 3, 3)))
    r = cli("deconvolve", img, "--psf", tmp_path / "big.npy", "-o", out)
    assert r.returncode == 1 and "larger than the image" in r.stderr
    np.save(tmp_path / "p2.npy", np.ones((3, 3)))
    r = cli("deconvolve", img, "--psf", tmp_path / "p2.npy", "-o", out)
    assert r.returncode == 1 and "dimensions" in r.stderr
    r = cli("deconvolve", img, "--psf", psf, "-o", out, "--wisdom", tmp_path / "w.txt",
            "--planning", "estimate")
    assert r.returncode == 2 and "--wisdom not with --planning estimate" in r.stderr
    r = cli("deconvolve", img, "--psf", psf, "-o", out, "--measure", "--measure-planes")
    assert r.returncode == 2 and "--measure-planes not with --measure" in r.stderr
    for bad in (["--measure", "--planning", "auto"], ["--measure-planes", "--planning", "estimate"]):
        r = cli("deconvolve", img, "--psf", psf, "-o", out, *bad)
        assert r.returncode == 2 and "--planning contradicts --measure" in r.stderr
    r = cli("deconvolve", img, "--psf", psf, "-o", out, "--planning", "patient")
    assert r.returncode == 2 and "--planning 'patient': expected auto, estimate" in r.stderr
    assert not (tmp_path / "w.txt").exists()
    r = cli("deconvolve", img, "--psf", psf, "-o", out, "--iterations", 5, "--measure",
            "--wisdom", tmp_path / "w.txt")
    assert r.returncode == 0 and (tmp_path / "w.txt").read_text().startswith("(fftw-3")
    assert rel_err(np.load(out), voxa.richardson_lucy(g, np.load(psf), 5)) < 1e-5
    r = cli("psf", "gaussian", "--shape", "5,5", "--sigma", "1,2,3", "-o", psf)
    assert r.returncode == 2 and "voxa: psf: --sigma" in r.stderr


def test_zero_mode_psf_longer_than_the_image():
    """boundary='zero' is scikit-image's "same" convolution, defined for any
    PSF extent: a thin stack under a tall PSF (and PSFs longer than the image
    on any axis, 1-3-D) gives skimage's result, in double to rounding, in
    float32 to its precision, block by block with the exact halo too, and
    with backend='auto' (the device paths do not take it: test_deconv_gpu.py);
    periodic and free modes still refuse such a PSF."""
    import dask.array as da

    import voxa.dask as vd
    rng = np.random.default_rng(12)
    for shape, pshape in (((4, 40, 50), (9, 5, 7)), ((3, 30), (8, 31)), ((5,), (12,)),
                          ((1, 9, 9), (2, 3, 3))):
        img = rng.random(shape) + 0.05
        psf = rng.random(pshape) + 0.05
        psf /= psf.sum()
        want = restoration.richardson_lucy(img, psf, num_iter=4, clip=False)
        got = voxa.richardson_lucy(img, psf, num_iter=4, boundary="zero", dtype=np.float64)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14 * want.max())
        got32 = voxa.richardson_lucy(img, psf, num_iter=4, boundary="zero", backend="auto")
        np.testing.assert_allclose(got32, want, rtol=2e-5, atol=1e-6 * want.max())
        x = da.from_array(img, chunks=tuple(max(1, s // 2) for s in shape))
        lazy = vd.richardson_lucy(x, psf, num_iter=4, boundary="zero", dtype=np.float64,
                                  halo="exact")
        np.testing.assert_allclose(lazy.compute(), want, rtol=1e-12, atol=1e-14 * want.max())
        for mode in ("periodic", "free"):
            with pytest.raises(ValueError, match="larger than the image"):
                voxa.richardson_lucy(img, psf, num_iter=1, boundary=mode)
