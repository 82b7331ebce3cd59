"""voxa.label's bitmap path without a run table (label.c, step 1; label_bits.c,
voxa__label_runs_from_bits): on noisy byte masks (more than one run per 64
voxels) the runs are not stored but rebuilt from the line bitmaps when the
output is written. Checked against scipy.ndimage.label and against the same
path keeping its run table (VOXA_LABEL_RUNTABLE=1), at the widths where a
run meets a 64-voxel word's end or the line's end (the bitmap's carry), in
2-D to 4-D, for bool/uint8/int8 inputs, several output dtypes, into a fresh
array (zeroed: runs only) and into a given one (every voxel written), with 1
and 2 threads; and a structure with a {-1, +1}-only neighbour line, which
keeps the run table (its union sweeps runs)."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa


def noisy(rng, shape, p=0.5, end=True):
    m = rng.random(shape) < p
    if end:
        m[..., ::3, -1] = True   # runs reaching the line's end
        m[..., 1::3, -1] = False
    return m


def check(a, s, want=None, outs=(None, np.int32, np.uint16, np.int64)):
    if want is None:
        want = ndi.label(a, s)
    for t in (1, 2):
        voxa.set_threads(t)
        for dt in outs:
            if dt is None:  # a fresh output (np.zeros, the zeroed hint)
                got, n = voxa.label(a, s)
            else:           # a given one, full of garbage: every voxel written
                got = np.full(a.shape, 77, dt)
                n = voxa.label(a, s, output=got)
            assert n == want[1], (a.shape, t, dt)
            np.testing.assert_array_equal(got, want[0])
    voxa.set_threads(0)


@pytest.mark.parametrize("table", ["0", "1"])
@pytest.mark.parametrize("w", [2, 63, 64, 65, 128, 129, 300])
def test_widths_3d(monkeypatch, table, w):
    monkeypatch.setenv("VOXA_LABEL_RUNTABLE", table)
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", "0")
    rng = np.random.default_rng(w)
    m = noisy(rng, (5, 9, w))
    for c in (1, 2, 3):
        check(m, ndi.generate_binary_structure(3, c))
    full = np.ones((3, 4, w), bool)  # one run per line, ending at the line's end
    full[1, 2, w // 2] = False
    check(full, ndi.generate_binary_structure(3, 1), outs=(None, np.int32))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8])
def test_dtypes_and_ndim(monkeypatch, dtype):
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", "0")
    rng = np.random.default_rng(3)
    for shape in [(70, 130), (3, 4, 5, 129), (40, 64)]:
        m = noisy(rng, shape)
        vals = rng.integers(1, 256, shape).astype(np.uint8)  # high bit set too
        a = m.astype(dtype) if dtype is np.bool_ else np.where(m, vals, 0).view(
            np.dtype(dtype)).astype(dtype)
        for c in range(1, len(shape) + 1):
            s = ndi.generate_binary_structure(len(shape), c)
            want = ndi.label(a, s)
            for table in ("1", "0"):
                monkeypatch.setenv("VOXA_LABEL_RUNTABLE", table)
                check(a, s, want, outs=(None, np.int32))


def test_sparse_line_among_noisy_ones(monkeypatch):
    # the zeroed write takes the runs-only path on lines with few runs and
    # the span fills on noisy ones: both from rebuilt runs
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", "0")
    rng = np.random.default_rng(5)
    m = noisy(rng, (6, 10, 200), end=False)
    m[:, ::2, :] = False
    m[:, ::2, 50:150] = True
    m[2, 4, :] = False
    check(m, ndi.generate_binary_structure(3, 2))


def test_pm1_structure_keeps_run_table(monkeypatch):
    # a neighbour line allowed only at dx = -1 and +1: the union sweeps its
    # runs, so the run table stays; other lines still take the bitmaps
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", "0")
    rng = np.random.default_rng(9)
    s = np.zeros((3, 3, 3), bool)
    s[1, 1, :] = True               # the line itself: runs merge
    s[0, 1, 0] = s[2, 1, 2] = True  # line (z-1, y): dx = -1 and +1 only
    s[0, 1, 2] = s[2, 1, 0] = True
    s[1, 0, 1] = s[1, 2, 1] = True  # line (z, y-1): dx = 0
    m = noisy(rng, (7, 11, 130))
    check(m, s)
