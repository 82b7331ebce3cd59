"""voxa.label's union-find table in its two widths (src/ops/label/label_uf.h):
uint32 entries whenever the run count fits (every input here), int64 past
2^32 - 1 runs, forced on any input by VOXA_LABEL_WIDE=1. Both widths must
give the same labels bit for bit, equal to scipy.ndimage.label: random and
smooth masks in 1-4-D, every connectivity and a structure without the
last-axis neighbour (a run per voxel), bool/uint16 inputs (bitmap union and
run sweep), several output dtypes (fresh and given arrays), 1 and 2
threads, runs in one scan or two, with and without the bitmap path's run
table."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

OUTS = (None, np.int32, np.uint32, np.uint16, np.int64, np.uint64)


@pytest.fixture(autouse=True)
def _run_path(monkeypatch):
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", "0")  # the run path (its table)
    yield
    voxa.set_threads(0)


def masks(rng, nd):
    shape = {1: (300,), 2: (37, 150), 3: (9, 13, 131), 4: (4, 5, 6, 70)}[nd]
    f = ndi.gaussian_filter(rng.random(shape), 1.5)
    return [rng.random(shape) < 0.5, rng.random(shape) < 0.1, f > np.quantile(f, 0.6)]


def structures(nd):
    out = [ndi.generate_binary_structure(nd, c) for c in range(1, nd + 1)]
    nolast = ndi.generate_binary_structure(nd, nd).copy()
    nolast[(1,) * (nd - 1) + (0,)] = nolast[(1,) * (nd - 1) + (2,)] = False
    return out + [nolast]


def label_all(monkeypatch, a, s, wide):
    monkeypatch.setenv("VOXA_LABEL_WIDE", "1" if wide else "0")
    res = []
    for t in (1, 2):
        voxa.set_threads(t)
        for dt in OUTS:
            if dt is None:  # fresh output (zeroed hint: runs only)
                got, n = voxa.label(a, s)
            else:           # a given one, full of garbage: every voxel written
                got = np.full(a.shape, 77, dt)
                n = voxa.label(a, s, output=got)
            res.append((t, dt, n, got))
    return res


@pytest.mark.parametrize("env", [{}, {"VOXA_LABEL_ONESCAN": "2"},
                                 {"VOXA_LABEL_RUNTABLE": "1", "VOXA_LABEL_ONESCAN": "0"}])
@pytest.mark.parametrize("nd", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.bool_, np.uint16])
def test_both_widths_equal(monkeypatch, nd, dtype, env):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    rng = np.random.default_rng(100 + nd)
    for m in masks(rng, nd):
        a = m.astype(dtype)
        for s in structures(nd):
            want, wn = ndi.label(a, s)
            narrow = label_all(monkeypatch, a, s, False)
            wide = label_all(monkeypatch, a, s, True)
            for (t, dt, n0, g0), (_, _, n1, g1) in zip(narrow, wide):
                assert n0 == n1 == wn, (nd, t, dt, n0, n1, wn)
                assert g0.dtype == g1.dtype
                assert g0.tobytes() == g1.tobytes(), (nd, t, dt)  # bit for bit
                np.testing.assert_array_equal(g0, want)


@pytest.mark.parametrize("wide", ["0", "1"])
def test_small_outputs_and_overflow(monkeypatch, wide):
    # 8-bit outputs: the labels fit, or both widths raise the same overflow.
    monkeypatch.setenv("VOXA_LABEL_WIDE", wide)
    rng = np.random.default_rng(5)
    a = rng.random((6, 7, 40)) < 0.06
    want, wn = ndi.label(a)
    assert wn <= 127
    for dt in (np.uint8, np.int8):
        got = np.zeros(a.shape, dt)
        assert voxa.label(a, output=got) == wn
        np.testing.assert_array_equal(got, want)
    big = rng.random((20, 20, 64)) < 0.5
    with pytest.raises(Exception, match="do not fit"):
        voxa.label(big, output=np.zeros(big.shape, np.uint8))
