"""The clamped small-integer path of src/ops/morph/morph_clamp.c (balls with
unit spacing and thr <= 32767, diamonds with r * iterations <= 253, 2-D and
3-D) at the places where it switches, equal to the older paths (forced with
VOXA_MORPH_KERNEL=envelope) and to scipy:

- every loop set: AVX-512BW, AVX2 and the portable C fallback (forced with
  VOXA_MORPH_KERNEL=avx512|avx2|c; a set the CPU lacks falls back below it);
- the limits: the largest ball each loop set takes (its measured crossover
  with the envelope: R = 181, thr 32761, with AVX-512; 150 with AVX2; 28 in
  portable C) and the next one, diamond r * iterations = 253 (taken) and 254
  (not), R beyond an extent;
- the smallest balls that leave the bit-packed path (3-D R = 10, 2-D R = 53);
- row lengths 1, 2, 3, 63, 64, 65 and 130 (vector blocks of 64 and their
  tails), lines of length 1-3 along every axis;
- border_value 0/1, all-zero and all-one volumes, iterations 1-3, opening and
  closing (the second step runs in place on the first one's output), 1 and 3
  threads.
"""
import os

import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

KERNELS = ["c", "avx2", "avx512"]


class kernel:
    """Run with VOXA_MORPH_KERNEL set (read by the library on every call)."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.prev = os.environ.get("VOXA_MORPH_KERNEL")
        os.environ["VOXA_MORPH_KERNEL"] = self.name

    def __exit__(self, *exc):
        if self.prev is None:
            del os.environ["VOXA_MORPH_KERNEL"]
        else:
            os.environ["VOXA_MORPH_KERNEL"] = self.prev


BALL_LIMIT = {"AVX-512BW": 181, "AVX2": 150, "portable C": 28}


def used(k):
    """The loop set VOXA_MORPH_KERNEL=k runs on this CPU (a set the CPU lacks
    falls back below it), and its largest ball radius."""
    with kernel(k):
        path = voxa.morph_path(3, ball=10)
    name = path[path.rindex("(") + 1:-1]
    return name, BALL_LIMIT[name]


def rand(shape, p, seed):
    return np.random.default_rng(seed).random(shape) < p


def all_ops(a, **kw):
    return [getattr(voxa, "binary_" + op)(a, **kw)
            for op in ("erosion", "dilation", "opening", "closing")]


def same_as_envelope(a, k, **kw):
    with kernel("envelope"):
        want = all_ops(a, **kw)
    with kernel(k):
        got = all_ops(a, **kw)
    for op, g, w in zip(("erosion", "dilation", "opening", "closing"), got, want):
        assert np.array_equal(g, w), (op, k, a.shape, kw)


def edt_ref(op, a, R, bv):
    """scipy: erosion/dilation by the ball of radius R (thr = floor(R^2))
    from its exact EDT (outside the volume = bv)."""
    T = int(np.floor(R * R))
    inner = (slice(1, -1),) * a.ndim
    pad = np.pad(np.asarray(a, bool), 1, constant_values=bool(bv))
    if op == "erosion":
        if pad.all():
            return np.ones(a.shape, bool)
        d = ndi.distance_transform_edt(pad)[inner]
        return np.rint(d * d) > T
    if not pad.any():
        return np.zeros(a.shape, bool)
    d = ndi.distance_transform_edt(~pad)[inner]
    return np.rint(d * d) <= T


@pytest.mark.parametrize("k", KERNELS)
@pytest.mark.parametrize("shape", [(9, 7, 1), (5, 3, 2), (4, 6, 3), (6, 5, 63), (3, 4, 64),
                                   (5, 4, 65), (3, 2, 130), (1, 1, 70), (2, 1, 5), (70, 1, 1)])
def test_ball_rows_and_tails(k, shape, threads):
    for p in (0.1, 0.6, 0.97):
        a = rand(shape, p, seed=sum(shape))
        for bv in (0, 1):
            for R in (10, 13):
                same_as_envelope(a, k, ball=R, border_value=bv)


@pytest.mark.parametrize("k", KERNELS)
@pytest.mark.parametrize("shape", [(9, 7, 1), (4, 6, 3), (6, 5, 63), (5, 4, 65), (3, 2, 130),
                                   (70, 1, 1), (1, 300), (3, 129), (200, 2)])
def test_diamond_rows_and_tails(k, shape, threads):
    for p in (0.1, 0.6, 0.97):
        a = rand(shape, p, seed=sum(shape) + 1)
        for bv in (0, 1):
            for r in (0, 1, 2, 5, 20):
                same_as_envelope(a, k, diamond=r, border_value=bv)


@pytest.mark.parametrize("k", KERNELS)
def test_ball_against_scipy_edt(k, threads):
    """Medium volumes, several radii including beyond the extents."""
    for shape, R in [((30, 41, 37), 10), ((20, 33, 70), 14.5), ((12, 40, 9), 21),
                     ((8, 9, 10), 27), ((2, 70, 3), 12)]:
        for p in (0.5, 0.9):
            a = rand(shape, p, seed=int(R * 10))
            for bv in (0, 1):
                with kernel(k):
                    assert "clamped" in voxa.morph_path(3, ball=R)
                    er = voxa.binary_erosion(a, ball=R, border_value=bv)
                    di = voxa.binary_dilation(a, ball=R, border_value=bv)
                    op = voxa.binary_opening(a, ball=R, border_value=bv)
                assert np.array_equal(er, edt_ref("erosion", a, R, bv)), (shape, R, bv)
                assert np.array_equal(di, edt_ref("dilation", a, R, bv)), (shape, R, bv)
                want = edt_ref("dilation", edt_ref("erosion", a, R, bv), R, bv)
                assert np.array_equal(op, want), (shape, R, bv)


def test_against_scipy_binary_ops(threads):
    """scipy.ndimage's own binary ops with the footprint arrays."""
    a = rand((16, 19, 23), 0.7, seed=5)
    for fp in (voxa.ball(10), voxa.diamond(4)):
        fp = np.asarray(fp)
        assert "clamped" in voxa.morph_path(3, fp)
        for bv in (0, 1):
            for op in ("erosion", "dilation"):
                want = getattr(ndi, "binary_" + op)(a, fp, border_value=bv)
                got = getattr(voxa, "binary_" + op)(a, fp, border_value=bv)
                assert np.array_equal(got, want), (op, bv)
    b = rand((40, 45), 0.6, seed=6)
    fp = np.asarray(voxa.diamond(7, ndim=2))
    for it in (1, 2):
        want = ndi.binary_opening(b, fp, iterations=it)
        assert np.array_equal(voxa.binary_opening(b, fp, iterations=it), want)


@pytest.mark.parametrize("k", KERNELS)
def test_limits(k):
    """The largest ball radius of the loop set is taken, the next one keeps
    the envelope; diamond r * iterations 253 is taken, 254 is not."""
    name, lim = used(k)
    assert name == {"c": "portable C", "avx2": "AVX2"}.get(k, name)
    with kernel(k):
        assert "clamped" in voxa.morph_path(3, ball=lim)
        assert "clamped" not in voxa.morph_path(3, ball=lim + 1)
        assert "clamped" in voxa.morph_path(3, diamond=253)
        assert "clamped" not in voxa.morph_path(3, diamond=254)
        assert "clamped" in voxa.morph_path(3, diamond=84, iterations=3)
        assert "clamped" not in voxa.morph_path(3, diamond=85, iterations=3)
        assert "clamped" not in voxa.morph_path(1, diamond=5)
        assert "clamped" not in voxa.morph_path(4, diamond=5)
        assert "clamped" not in voxa.morph_path(3, ball=12, spacing=(2, 1, 1))
    shape = (3, 5, 370)
    for p in (0.3, 0.995):
        a = rand(shape, p, seed=7)
        for bv in (0, 1):
            for R in (lim - 0.5, lim, lim + 0.5, lim + 1):
                same_as_envelope(a, k, ball=R, border_value=bv)
            for r, it in ((253, 1), (254, 1), (84, 3), (85, 3), (126, 2), (127, 2)):
                same_as_envelope(a, k, diamond=r, iterations=it, border_value=bv)


@pytest.mark.parametrize("k", KERNELS)
def test_2d_ball_past_the_bit_path(k, threads):
    """2-D balls leave the bit-packed path at R = 53 (beyond the portable C
    loops' limit: those keep the envelope)."""
    if used(k)[1] < 71:
        pytest.skip("this loop set takes no 2-D ball past the bit-packed path")
    with kernel(k):
        assert "bit-packed" in voxa.morph_path(2, voxa.ball(52, ndim=2))
        assert "clamped" in voxa.morph_path(2, voxa.ball(53, ndim=2))
    for shape in ((150, 151), (1, 200), (200, 1), (130, 3)):
        for p in (0.2, 0.995):
            a = rand(shape, p, seed=shape[1])
            for bv in (0, 1):
                same_as_envelope(a, k, ball=53, border_value=bv)
                same_as_envelope(a, k, ball=60.7, border_value=bv)
    a = rand((200, 210), 0.995, seed=9)
    for bv in (0, 1):
        with kernel(k):
            got = voxa.binary_erosion(a, ball=70, border_value=bv)
        assert np.array_equal(got, edt_ref("erosion", a, 70, bv))


@pytest.mark.parametrize("k", KERNELS)
def test_uniform_volumes_and_iterations(k, threads):
    for shape in ((7, 8, 9), (30, 31), (1, 1, 1), (2, 2)):
        for v in (0, 1):
            a = np.full(shape, bool(v))
            for bv in (0, 1):
                same_as_envelope(a, k, ball=10, border_value=bv)
                same_as_envelope(a, k, diamond=3, border_value=bv)
    a = rand((20, 21, 22), 0.8, seed=11)
    for it in (2, 3):
        for bv in (0, 1):
            same_as_envelope(a, k, ball=10, iterations=it, border_value=bv)
            same_as_envelope(a, k, diamond=4, iterations=it, border_value=bv)
    with kernel("envelope"):
        want = voxa.binary_erosion(a, ball=10, iterations=0)
    with kernel(k):
        assert np.array_equal(voxa.binary_erosion(a, ball=10, iterations=0), want)


def test_forced_fallback_is_named():
    with kernel("c"):
        assert "portable C" in voxa.morph_path(3, ball=21)
        assert "portable C" in voxa.morph_path(3, diamond=20)
    with kernel("envelope"):
        assert "clamped" not in voxa.morph_path(3, ball=21)
        assert voxa.morph_path(3, ball=21).startswith("ball: squared Euclidean distance <= 441")


def test_float_sqrt_truncates_to_isqrt():
    """The 3-D ball pass B turns T - g2 (an integer <= 32767) into its integer
    square root by truncating a float32 square root (vsqrtps / sqrtf, both
    correctly rounded, as NumPy's float32 sqrt): exact for every such value."""
    m = np.arange(32768)
    got = np.sqrt(m.astype(np.float32)).astype(np.int64)
    assert np.array_equal(got, np.array([int(np.floor(np.sqrt(float(v)))) for v in m]))
    assert np.all(got * got <= m) and np.all((got + 1) * (got + 1) > m)
