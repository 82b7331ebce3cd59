"""Accelerated Richardson-Lucy (accelerate=True) against a float64 NumPy
reference of the same algorithm, in every boundary mode: Biggs & Andrews'
alpha = <d_k, d_k-1> / <d_k-1, d_k-1> clamped to [0, 1] (d_k the change made
by RL step k), one step behind the paper's (the start of iteration k+1 takes
the alpha of d_k-1 and d_k-2; 0 until those are known), and the geometric step
y = x 2^clip(alpha (log2 x - log2 x_prev), -16, 16) where x, x_prev > 0,
else y = x (docs/deconv.md). The references of one RL step are those of
test_deconv.py (W2 formula centred, scikit-image's 'same' convolutions, the
wrap-free extended domain). The tests also check that they can fail: the
paper's additive step gives other numbers."""
import numpy as np
import pytest
import scipy.ndimage
import scipy.signal

import voxa
from test_deconv import rand_psf, rel_err


def flip(h):
    return h[(slice(None, None, -1),) * h.ndim]


def geometric(x, xp, a):
    ok = (x > 0) & (xp > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.clip(a * (np.log2(np.where(ok, x, 1)) - np.log2(np.where(ok, xp, 1))), -16, 16)
    return np.where(ok, x * np.exp2(t), x)


def additive(x, xp, a):  # the paper's step, the variant voxa no longer uses
    return np.maximum(x + a * (x - xp), 0)


def accelerated(step, x0, num_iter, extrapolate=geometric):
    """Biggs-Andrews acceleration around one RL step, as voxa orders it:
    iteration k >= 1 extrapolates from x_k, x_k-1 with the alpha of steps
    k-2 and k-3 (0 until both are known)."""
    x, xp, dold, alpha, a_next = x0, None, None, 0.0, 0.0
    for k in range(num_iter):
        y = x if k == 0 else extrapolate(x, xp, alpha)
        xp, x = x, step(y)
        d = x - y
        alpha = a_next  # one step behind: the alpha known when x is made
        a_next = 0.0
        if dold is not None:
            den = float(np.sum(dold * dold))
            a_next = min(max(float(np.sum(d * dold)) / den, 0.0), 1.0) if den > 0 else 0.0
        dold = d
    return x


def periodic_setup(g, h):
    n, axes = g.shape, tuple(range(g.ndim))
    hp = np.zeros(n)
    hp[tuple(slice(0, m) for m in h.shape)] = h
    H = np.fft.rfftn(np.roll(hp, [-(m // 2) for m in h.shape], axis=axes))

    def step(f):
        b = np.fft.irfftn(np.fft.rfftn(f) * H, s=n, axes=axes)
        r = np.where(b > 0, g / np.where(b > 0, b, 1), 0)
        return np.maximum(f * np.fft.irfftn(np.fft.rfftn(r) * np.conj(H), s=n, axes=axes), 0)
    return step, g.copy(), lambda f: f


def zero_setup(g, h):  # scikit-image's formula (filter_epsilon off, no clip)
    def step(f):
        b = scipy.signal.convolve(f, h, "same") + 1e-12
        return f * scipy.signal.convolve(g / b, flip(h), "same")
    return step, np.full(g.shape, 0.5), lambda f: f


def free_setup(g, h):  # the wrap-free extended domain of test_deconv.free_reference
    a = scipy.signal.fftconvolve(np.ones(g.shape), flip(h), "full")
    ok = a > 1e-4 * h.sum()

    def step(f):
        b = scipy.signal.fftconvolve(f, h, "valid")
        r = np.where(b > 0, g / np.where(b > 0, b, 1), 0)
        c = scipy.signal.fftconvolve(r, flip(h), "full")
        return np.where(ok, np.maximum(f * c / np.where(ok, a, 1), 0), 0)
    crop = tuple(slice(m - 1 - m // 2, m - 1 - m // 2 + n) for m, n in zip(h.shape, g.shape))
    return step, np.where(ok, g.mean(), 0.0), lambda f: f[crop]


SETUPS = {"periodic": periodic_setup, "zero": zero_setup, "free": free_setup}


def reference(g, h, num_iter, boundary, extrapolate=geometric):
    step, x0, window = SETUPS[boundary](g.astype(np.float64), h.astype(np.float64))
    return window(accelerated(step, x0, num_iter, extrapolate))


def blobs(shape, seed, background):
    """Bright Gaussian blobs on a dim background, blurred, Poisson noise:
    the case where extrapolation matters (dim voxels next to bright ones)."""
    rng = np.random.default_rng(seed)
    t = np.zeros(shape)
    t[tuple(rng.integers(0, s, 6) for s in shape)] = 1.0
    t = scipy.ndimage.gaussian_filter(t, 1.0) * 400 + background
    h = voxa.gaussian_psf(tuple(min(7, s) for s in shape), 1.2, dtype=np.float64)
    b = scipy.signal.fftconvolve(t, h, "same")
    return rng.poisson(np.maximum(b, 0)).astype(np.float32), h


@pytest.mark.parametrize("boundary", ["free", "periodic", "zero"])
@pytest.mark.parametrize("shape,pshape,num_iter", [((30, 41), (5, 7), 12),
                                                   ((12, 17, 14), (3, 6, 4), 6),
                                                   ((64,), (9,), 12)])
def test_accelerated_equals_reference(boundary, shape, pshape, num_iter):
    # (zero mode with an even PSF extent is scikit-image's formula, whose two
    # centrings are not adjoint: it grows without bound, plain or accelerated;
    # 6 iterations stay where float32 can follow it)
    rng = np.random.default_rng(sum(shape) + len(boundary))
    g = (rng.random(shape) * 10 + 0.5).astype(np.float32)
    h = rand_psf(rng, pshape)
    got = voxa.richardson_lucy(g, h, num_iter, boundary=boundary, accelerate=True)
    want = reference(g, h, num_iter, boundary)
    assert rel_err(got, want) < 1e-4, np.abs(got - want).max()
    # the test can fail: plain RL and the additive step give other numbers
    assert rel_err(reference(g, h, num_iter, boundary, additive), want) > 1e-3
    assert rel_err(voxa.richardson_lucy(g, h, num_iter, boundary=boundary), want) > 1e-3


@pytest.mark.parametrize("boundary", ["free", "periodic", "zero"])
def test_accelerated_noisy_blobs_equal_reference(boundary):
    # A background of 20 counts: no zero in the data, so no estimate voxel
    # is driven towards 0 (where float32 underflows and float64 does not).
    # 8 iterations: like late plain RL, accelerated RL amplifies round-off
    # as it goes (free mode: 1.4e-5 after 8, 1.5e-4 after 15; plain RL
    # 2e-5 after 60)
    g, h = blobs((14, 40, 36), 3, background=20)
    got = voxa.richardson_lucy(g, h, 8, boundary=boundary, accelerate=True)
    want = reference(g, h, 8, boundary)
    assert rel_err(got, want) < 1e-4, np.abs(got - want).max()
    assert rel_err(reference(g, h, 8, boundary, additive), want) > 1e-3


def test_accelerated_reaches_plain_error_sooner():
    """On noisy data with known truth, accelerated RL's best error is at
    most plain RL's best and comes sooner (a property; the additive step
    has it too on this small sample: the reference tests above tell the
    two apart)."""
    rng = np.random.default_rng(4)
    shape = (16, 48, 48)
    t = np.zeros(shape)
    t[tuple(rng.integers(0, s, 30) for s in shape)] = 1.0
    t = scipy.ndimage.gaussian_filter(t, 1.5) * 3000 + 2
    h = voxa.gaussian_psf((9, 9, 9), (1.5, 1.2, 1.2), dtype=np.float64)
    g = rng.poisson(np.maximum(scipy.signal.fftconvolve(t, h, "same"), 0)).astype(np.float32)
    nrm = np.linalg.norm(t)
    err = {False: [], True: []}
    out = np.empty(shape, np.float32)

    def cb(done, total):  # plain RL keeps its estimate in `out` between iterations
        if done:
            err[False].append(np.linalg.norm(out - t) / nrm)
        return True
    voxa.richardson_lucy(g, h, 20, out=out, progress=cb)
    # accelerated RL's `out` holds the next extrapolated start between
    # iterations: one run per iteration count
    err[True] = [np.linalg.norm(voxa.richardson_lucy(g, h, k, accelerate=True) - t) / nrm
                 for k in range(1, 21)]
    kp, ka = int(np.argmin(err[False])), int(np.argmin(err[True]))
    assert err[True][ka] <= err[False][kp] and ka < kp, (err[True], err[False])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("boundary", ["free", "periodic", "zero"])
@pytest.mark.parametrize("shape", [(12, 17, 14), (30, 41)])
def test_first_three_iterations_are_plain_rl(boundary, dtype, shape):
    """alpha is one step behind the paper's: it is 0 for the starts of
    iterations 1 and 2 (y = x exactly: 2^0 = 1), so three accelerated
    iterations are plain RL's to the bit, on every path; the fourth
    extrapolates (with the paper's order the third already would)."""
    g, h = blobs(shape, 5, background=3)
    for it, same in ((1, True), (2, True), (3, True), (4, False)):
        acc = voxa.richardson_lucy(g, h, it, boundary=boundary, accelerate=True, dtype=dtype)
        plain = voxa.richardson_lucy(g, h, it, boundary=boundary, dtype=dtype)
        assert np.array_equal(acc, plain) == same, (it, rel_err(acc, plain))


@pytest.mark.parametrize("boundary", ["free", "periodic", "zero"])
@pytest.mark.parametrize("shape", [(9, 13, 37), (5, 7, 16), (4, 6, 33), (3, 64), (47,)])
def test_extrapolation_kernels_bit_identical(boundary, shape, monkeypatch):
    """The acceleration's kernels (extrapolation, step and dot products) have
    AVX2 and AVX-512 loops beside the SSE2 one (VOXA_RL_KERNEL=c forces SSE2):
    no FMA and the same dot-product lanes, so the same bits; row lengths
    around the vector widths and the 16 lanes, values at and below zero."""
    rng = np.random.default_rng(31)
    g = (rng.random(shape) * 5).astype(np.float32)
    g[..., ::7] = 0  # zeros and tiny values take the "else x" branch
    g[(1,) * (g.ndim - 1) if g.ndim > 1 else slice(5, 9)] = 1e-30  # a row of tiny values
    h = rand_psf(rng, tuple(min(5, s) for s in shape))
    res = {}
    for kernel in ("c", "avx2", "avx512"):
        monkeypatch.setenv("VOXA_RL_KERNEL", kernel)
        res[kernel] = voxa.richardson_lucy(g, h, 7, boundary=boundary, accelerate=True)
    assert np.array_equal(res["c"], res["avx2"])
    assert np.array_equal(res["c"], res["avx512"])
    monkeypatch.setenv("VOXA_RL_KERNEL", "c")
    assert not np.array_equal(res["c"], voxa.richardson_lucy(g, h, 7, boundary=boundary))
