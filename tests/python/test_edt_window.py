"""The windowed column passes of the integer EDT (src/core/sqdt_window.c),
equal to scipy to the bit for every kernel set VOXA_SQDT_KERNEL can force
(envelope, portable C, AVX2, AVX-512; a set the CPU lacks falls back):

- blob masks whose distances are short, and balls large enough that their
  centres are far (sets of lanes that spend their budget of steps: redone
  by the envelope, the next ones backed off to it);
- the budget forced (VOXA_SQDT_WINDOW_STEPS) from 0 (every set gives up at
  once) to unlimited (every column scanned to its end), on masks that mix
  near and far regions (give-ups, back-off, and its reset);
- masks with a few background voxels (tiles with no target at all);
- widths around the SIMD lanes (8, 16) on the axis the lanes run along;
- all-background / all-foreground lines and extent-1 axes;
- float32, float64 and uint32 (squared) outputs, anisotropic sampling (the
  double path: the same values whatever the kernel set), 1 and 3 threads.
"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

KERNELS = ["envelope", "c", "avx2", "avx512"]


@pytest.fixture(params=KERNELS)
def kernel(request, monkeypatch):
    monkeypatch.setenv("VOXA_SQDT_KERNEL", request.param)  # read per call
    return request.param


def balls(shape, n, rmax, seed):
    rng = np.random.default_rng(seed)
    g = np.indices(shape)
    m = np.zeros(shape, bool)
    for _ in range(n):
        c = [rng.integers(0, s) for s in shape]
        r = rng.uniform(1, rmax)
        m |= sum((gi - ci) ** 2 for gi, ci in zip(g, c)) <= r * r
    return m


def check(a):
    want = ndi.distance_transform_edt(a)
    assert np.array_equal(voxa.distance_transform_edt(a), want)
    got32 = voxa.distance_transform_edt(a, dtype=np.float32)
    assert np.array_equal(got32, want.astype(np.float32))
    if (~a).any():
        sq = voxa.distance_transform_edt(a, squared=True, dtype=np.uint32)
        assert np.array_equal(sq.astype(np.float64), np.round(want ** 2))


@pytest.mark.parametrize("rmax", [6, 30, 70])  # within K, around it, beyond it
def test_blobs(kernel, rmax, threads):
    a = balls((40, 90, 97), 12, rmax, rmax)
    check(a)
    check(a.transpose(2, 0, 1).copy())


def mixed(shape, seed):
    # noise in one corner (short distances), two small holes far apart in
    # the rest (long ones), a wall along the last axis
    rng = np.random.default_rng(seed)
    a = np.ones(shape, bool)
    h = [s // 3 for s in shape]
    a[: h[0], : h[1]] = rng.random((h[0], h[1]) + tuple(shape[2:])) < 0.6
    a[tuple(s - 2 for s in shape)] = False
    a[tuple(s // 2 + 1 for s in shape)] = False
    a[..., -1 - shape[-1] // 5] = False
    return a


@pytest.mark.parametrize("steps", ["0", "1", "7", "64", str(10 ** 12)])
def test_budget(kernel, steps, threads, monkeypatch):
    monkeypatch.setenv("VOXA_SQDT_WINDOW_STEPS", steps)
    check(balls((30, 70, 83), 5, 40, 7))
    check(mixed((37, 90, 41), 1))
    check(mixed((150, 35), 2))
    check(mixed((150, 35), 2).T.copy())


@pytest.mark.parametrize("shape", [(70, 9, 130), (7, 200, 65), (300, 70)])
def test_few_targets(kernel, shape, threads):
    # most tiles hold no target at all before the last pass
    rng = np.random.default_rng(sum(shape))
    for k in (1, 3):
        a = np.ones(shape, bool)
        for _ in range(k):
            a[tuple(rng.integers(0, s) for s in shape)] = False
        check(a)
        assert np.array_equal(voxa.distance_transform_edt(a, dtype=np.float32, squared=True),
                              (ndi.distance_transform_edt(a) ** 2).round().astype(np.float32))


@pytest.mark.parametrize("w", [1, 7, 8, 9, 15, 16, 17, 33, 65])
def test_lane_widths(kernel, w, threads):
    rng = np.random.default_rng(w)
    a = rng.random((50, 11, w)) < 0.93
    check(a)
    a[:, :, 0] = True  # a column with few targets
    a[5] = True        # an all-foreground plane
    a[7] = False       # an all-background plane
    check(a)


@pytest.mark.parametrize("shape", [(1, 120), (120, 1), (1, 1, 90), (90, 1, 1), (3, 1, 100)])
def test_extent_one(kernel, shape):
    rng = np.random.default_rng(len(shape))
    a = rng.random(shape) < 0.97
    a.flat[len(a.flat) // 2] = False
    check(a)


def test_anisotropic_unchanged(kernel, monkeypatch):
    # double storage: no window; the same values as the envelope, and scipy's
    # to test_edt.py's tolerance (the sampled path is not bit-exact there)
    a = balls((20, 40, 41), 6, 12, 3)
    sp = (1.5, 1.0, 0.7)
    got = voxa.distance_transform_edt(a, sampling=sp, dtype=np.float32)
    monkeypatch.setenv("VOXA_SQDT_KERNEL", "envelope")
    assert np.array_equal(got, voxa.distance_transform_edt(a, sampling=sp, dtype=np.float32))
    np.testing.assert_allclose(got, ndi.distance_transform_edt(a, sampling=sp), rtol=1e-6)


@pytest.mark.parametrize("shape", [(2, 9000), (3, 40, 4200), (9, 31, 33)])
def test_float32_squared(kernel, shape, threads):
    # unit spacing: uint32 squares in the output's 4 bytes, converted in place;
    # squares past 2^24 round once, as scipy's float64 squares cast to float32
    rng = np.random.default_rng(len(shape))
    a = rng.random(shape) < (0.9 if shape == (9, 31, 33) else 1.0)
    a.flat[0] = False
    _, ind = ndi.distance_transform_edt(a, return_indices=True)
    d2 = ((ind.astype(np.int64) - np.indices(shape)) ** 2).sum(axis=0)
    want = d2.astype(np.float64).astype(np.float32)
    got = voxa.distance_transform_edt(a, squared=True, dtype=np.float32)
    assert got.dtype == np.float32 and np.array_equal(got, want)
    assert (d2 > 2 ** 24).any() or shape == (9, 31, 33)
    out = np.full(shape[::-1], -1.0, np.float32).T  # not C-contiguous
    voxa.distance_transform_edt(a, squared=True, dtype=np.float32, distances=out)
    assert np.array_equal(out, want)
