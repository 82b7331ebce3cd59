"""The staged path's z stage two ways (src/ops/deconv/deconv_zconv.c, the
direct convolution along z, and deconv_staged.c's z-FFTs with H's column
made per tile): VOXA_RL_ZCONV=direct / fft forces either, unset voxa picks
direct while n0 m0 <= 6 L0 ceil(log2 L0). Each kernel set of the direct
convolution (VOXA_RL_ZKERNEL=c: plain C, no FMA; avx2; avx512) against the
3-D plans and the float64 formula, for `free` and `periodic`: PSF depths
from 1 to the image's, odd and even (the centre c0), column counts that
cut the last block of 16, output counts that cut the 4-output step, the
ratio's zero planes skipped in the adjoint; bit-identical across thread
counts for each kernel; the default's choice at both sides of the rule."""
import numpy as np
import pytest

import voxa
from test_deconv import free_reference, rand_psf, rel_err
from test_deconv_staged import CASES, nthreads, sample  # noqa: F401 (fixture)

KERNELS = ["c", "avx2", "avx512"]
# (image, PSF): PSF as deep as the image, depth 1, even/odd depths, 1 column
# block and a cut one, n0 not a multiple of 4
EXTRA = [((9, 6, 7), (9, 3, 2)), ((13, 10, 30), (1, 3, 3)), ((7, 5, 4), (6, 2, 3)),
         ((11, 33, 31), (2, 4, 4)), ((5, 3, 3), (4, 3, 3))]


def rl(monkeypatch, zconv, kernel, g, h, n, **kw):
    monkeypatch.setenv("VOXA_RL_STAGED", "1")
    monkeypatch.setenv("VOXA_RL_ZCONV", zconv)
    monkeypatch.setenv("VOXA_RL_ZKERNEL", kernel)
    return voxa.richardson_lucy(g, h, n, **kw)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("shape,pshape", CASES + EXTRA)
def test_direct_equals_fft_and_3d(shape, pshape, kernel, monkeypatch, nthreads):
    g, h = sample(shape, pshape)
    nthreads(2)
    for boundary in ("free", "periodic"):
        monkeypatch.setenv("VOXA_RL_STAGED", "0")
        plans3 = voxa.richardson_lucy(g, h, 5, boundary=boundary)
        direct = rl(monkeypatch, "direct", kernel, g, h, 5, boundary=boundary)
        fft = rl(monkeypatch, "fft", kernel, g, h, 5, boundary=boundary)
        assert rel_err(direct, plans3) < 2e-5, (boundary, np.abs(direct - plans3).max())
        assert rel_err(fft, plans3) < 2e-5, boundary
        assert not np.array_equal(direct, g)
    free = rl(monkeypatch, "direct", kernel, g, h, 5)
    assert rel_err(free, free_reference(g, h, 5)) < 1e-4
    acc_d = rl(monkeypatch, "direct", kernel, g, h, 6, accelerate=True)
    acc_f = rl(monkeypatch, "fft", kernel, g, h, 6, accelerate=True)
    assert rel_err(acc_d, acc_f) < 1e-4


@pytest.mark.parametrize("kernel", KERNELS)
def test_direct_threads_bit_identical(kernel, monkeypatch, nthreads):
    """777 columns (48 blocks of 16 and a cut one) over 1-3 threads."""
    g, h = sample((13, 37, 40), (5, 6, 7))
    for boundary in ("free", "periodic"):
        res = []
        for t in (1, 2, 3):
            nthreads(t)
            res.append(rl(monkeypatch, "direct", kernel, g, h, 4, boundary=boundary))
        assert np.array_equal(res[0], res[1]) and np.array_equal(res[0], res[2]), boundary


def test_kernels_differ_by_rounding_only(monkeypatch, nthreads):
    """The FMA kernels agree with each other bit for bit (same sums per
    lane) and with plain C to rounding; all three do run (C differs)."""
    g, h = sample((12, 20, 22), (7, 3, 3))
    nthreads(2)
    out = {k: rl(monkeypatch, "direct", k, g, h, 5) for k in KERNELS}
    assert rel_err(out["avx2"], out["c"]) < 2e-5
    assert rel_err(out["avx512"], out["c"]) < 2e-5
    import platform
    if platform.machine() == "x86_64" and "avx2" in open("/proc/cpuinfo").read():
        assert not np.array_equal(out["avx2"], out["c"])
        if "avx512f" in open("/proc/cpuinfo").read():
            assert np.array_equal(out["avx512"], out["avx2"])


def test_default_choice_follows_the_rule(monkeypatch):
    """n0 m0 <= 6 L0 ceil(log2 L0): direct; beyond it the z-FFTs. The
    default equals the forced choice bit for bit on each side."""
    rng = np.random.default_rng(3)
    # (12, 20, 22) with m0 = 7: L0 = 18, 84 <= 6 * 18 * 5: direct
    # (100, 6, 5) with m0 = 100: L0 = 200, 10000 > 6 * 200 * 8: FFT
    for shape, pshape, want in (((12, 20, 22), (7, 3, 3), "direct"),
                                ((100, 6, 5), (100, 3, 2), "fft")):
        g = (rng.random(shape) * 10 + 0.5).astype(np.float32)
        h = rand_psf(rng, pshape)
        monkeypatch.delenv("VOXA_RL_ZCONV", raising=False)
        monkeypatch.delenv("VOXA_RL_ZKERNEL", raising=False)
        monkeypatch.delenv("VOXA_RL_STAGED", raising=False)
        default = voxa.richardson_lucy(g, h, 3)
        other = "fft" if want == "direct" else "direct"
        assert np.array_equal(default, rl(monkeypatch, want, "best", g, h, 3)), shape
        assert not np.array_equal(default, rl(monkeypatch, other, "best", g, h, 3)), shape
