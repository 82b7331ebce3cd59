"""Wrap-free RL on the staged 3-D transform (src/ops/deconv/deconv_staged.c:
per-plane 2-D FFTs fused with the element-wise passes, then along z a
direct convolution with the PSF's x-y transform, or z-FFTs on tiles of
columns for long PSFs; test_deconv_zconv.py forces each).

VOXA_RL_STAGED=1 forces the staged path (also on 1-D/2-D boxes, where the
z-FFT has length 1), =0 the 3-D FFTW plans; unset, free mode is staged when
the FFT box has more than one plane, periodic mode from 8 planes and 2^19
voxels. By default (planning='auto') the staged plans are measured and
written to the wisdom cache; planning='estimate' estimates everything. Checked: the staged result equals the
3-D path to float32 rounding (relative max difference < 2e-5 plain, 1e-4
accelerated, where the extrapolation amplifies rounding) and the float64
reference formula of test_deconv.py (< 1e-4, as the 3-D path); it is bit
for bit the same for 1, 2 and 3 threads; tiles cut at the plane's end, PSFs
as long as the image along z (hxy as deep as the box's half), extent-1
axes, odd/even extents; MEASURE plans and the default choice."""
import os
import subprocess
import sys

import numpy as np
import pytest

import voxa
from test_deconv import free_reference, rand_psf, rel_err

CASES = [  # (image shape, PSF shape)
    ((11, 17, 14), (3, 6, 5)), ((10, 12, 16), (4, 4, 4)), ((8, 13, 9), (8, 2, 9)),
    ((7, 16, 12), (1, 5, 6)), ((6, 9, 11), (5, 8, 10)), ((2, 5, 3), (2, 1, 3)),
    ((5, 1, 19), (3, 1, 4)), ((9, 20, 1), (2, 7, 1)), ((3, 4, 40), (3, 3, 1)),
    ((16, 8, 8), (15, 3, 3)),
]
LOW_D = [((40,), (7,)), ((13,), (13,)), ((30, 41), (5, 7)), ((12, 15), (1, 15)),
         ((1, 9, 10), (1, 3, 4))]


@pytest.fixture
def nthreads():
    old = voxa.get_threads()
    yield voxa.set_threads
    voxa.set_threads(old)


def run(monkeypatch, staged, g, h, n, **kw):
    monkeypatch.setenv("VOXA_RL_STAGED", staged)
    return voxa.richardson_lucy(g, h, n, **kw)


def sample(shape, pshape):
    rng = np.random.default_rng(sum(shape) * 7 + sum(pshape))
    g = (rng.random(shape) * 10 + 0.5).astype(np.float32)
    g[tuple(slice(0, max(1, s // 3)) for s in shape)] *= 4  # a bright corner
    return g, rand_psf(rng, pshape)


@pytest.mark.parametrize("shape,pshape", CASES + LOW_D)
def test_staged_equals_3d_and_reference(shape, pshape, monkeypatch, nthreads):
    g, h = sample(shape, pshape)
    nthreads(2)
    want = free_reference(g, h, 5)
    staged = run(monkeypatch, "1", g, h, 5)
    plans3 = run(monkeypatch, "0", g, h, 5)
    assert rel_err(staged, want) < 1e-4
    assert rel_err(staged, plans3) < 2e-5, np.abs(staged - plans3).max()
    assert not np.array_equal(g, staged)
    for acc_it in (4, 9):
        a1 = run(monkeypatch, "1", g, h, acc_it, accelerate=True)
        a0 = run(monkeypatch, "0", g, h, acc_it, accelerate=True)
        assert rel_err(a1, a0) < 1e-4, (acc_it, np.abs(a1 - a0).max())


@pytest.mark.parametrize("shape,pshape", CASES[:6] + LOW_D[2:3])
def test_staged_threads_bit_identical(shape, pshape, monkeypatch, nthreads):
    g, h = sample(shape, pshape)
    monkeypatch.setenv("VOXA_RL_STAGED", "1")
    for acc in (False, True):
        res = []
        for t in (1, 2, 3):
            nthreads(t)
            res.append(voxa.richardson_lucy(g, h, 6, accelerate=acc))
        assert np.array_equal(res[0], res[1]) and np.array_equal(res[0], res[2]), acc


def test_staged_many_tiles_and_planes(monkeypatch, nthreads):
    """A plane of 37 x 21 coefficients: 777 columns, 48 full tiles of 16
    and a cut one; 3 threads over an uneven tile and plane count."""
    g, h = sample((13, 37, 40), (5, 6, 7))
    nthreads(3)
    want = free_reference(g, h, 3)
    got = run(monkeypatch, "1", g, h, 3)
    assert rel_err(got, want) < 1e-4
    assert rel_err(got, run(monkeypatch, "0", g, h, 3)) < 2e-5


@pytest.mark.parametrize("shape,pshape,sigma", [((12, 30, 26), (11, 13, 9), (0.9, 1.2, 1.0)),
                                               ((9, 21, 40), (7, 15, 12), (1.0, 0.8, 1.5))])
def test_staged_fading_psf(shape, pshape, sigma, monkeypatch, nthreads):
    """A Gaussian PSF whose tails fall below 1e-4 of its sum leaves dead
    planes and rows at the box's borders, which the staged path skips (no
    plane transform there; row transforms cut to the live rows, and to the
    window's for the ratio): still the 3-D path's result to rounding and the
    float64 formula's, plain and accelerated, for 1 and 3 threads. (The
    extrapolation amplifies rounding more with this sharp PSF: after 9
    accelerated iterations the staged path differs from the 3-D one by
    1.4e-4 of the maximum, spread evenly over the image, against 3.5e-6
    plain; hence 6.)"""
    rng = np.random.default_rng(5)
    g = (rng.random(shape) * 10 + 0.5).astype(np.float32)
    h = voxa.gaussian_psf(pshape, sigma)
    want = free_reference(g, h, 5)
    plans3 = run(monkeypatch, "0", g, h, 5)
    for t in (1, 3):
        nthreads(t)
        staged = run(monkeypatch, "1", g, h, 5)
        assert rel_err(staged, want) < 1e-4
        assert rel_err(staged, plans3) < 2e-5, np.abs(staged - plans3).max()
        a1 = run(monkeypatch, "1", g, h, 6, accelerate=True)
        a0 = run(monkeypatch, "0", g, h, 6, accelerate=True)
        assert rel_err(a1, a0) < 1e-4


@pytest.mark.parametrize("boundary", ["free", "periodic"])
@pytest.mark.parametrize("shape,pshape,sigma", [
    ((6, 75, 44), (3, 9, 7), None),  # rows 75 = 2 x 32 + 11 from y 4; 26 -> 28 complex columns
    ((5, 70, 33), (3, 15, 5), (0.8, 1.0, 1.0)),  # live rows cut by the fading PSF
    ((4, 64, 20), (3, 1, 5), None),  # whole blocks only, no short one
    ((3, 200, 9), (2, 3, 2), None),  # 7 blocks: every thread takes several
])
def test_staged_row_blocks(boundary, shape, pshape, sigma, monkeypatch, nthreads):
    """The staged path's plane transforms run their rows out of place in
    blocks of 32 through a per-thread ring, on rows padded to 8 floats: row
    sets of several blocks with a short last one, starting off the block
    grid (free mode), with and without pad columns, live rows narrower than
    the box. Equal to the 3-D path to rounding (and free mode to the float64
    formula); bit for bit for 1, 2 and 3 threads, plain and accelerated."""
    rng = np.random.default_rng(sum(shape))
    g = (rng.random(shape) * 10 + 0.5).astype(np.float32)
    h = voxa.gaussian_psf(pshape, sigma) if sigma else rand_psf(rng, pshape)
    kw = {"boundary": boundary}
    plans3 = run(monkeypatch, "0", g, h, 4, **kw)
    for acc in (False, True):
        res = []
        for t in (1, 2, 3):
            nthreads(t)
            res.append(run(monkeypatch, "1", g, h, 4, accelerate=acc, **kw))
        assert all(np.array_equal(res[0], r) for r in res[1:]), acc
        if not acc:
            if boundary == "free":
                assert rel_err(res[0], free_reference(g, h, 4)) < 1e-4
            assert rel_err(res[0], plans3) < 2e-5, np.abs(res[0] - plans3).max()
        else:
            a0 = run(monkeypatch, "0", g, h, 4, accelerate=True, **kw)
            assert rel_err(res[0], a0) < 1e-4


def test_default_choice(monkeypatch):
    """Unset: 3-D boxes with several planes are staged, 2-D ones are not."""
    monkeypatch.delenv("VOXA_RL_STAGED", raising=False)
    g3, h3 = sample((6, 9, 11), (5, 8, 10))
    d3 = voxa.richardson_lucy(g3, h3, 3)
    assert np.array_equal(d3, run(monkeypatch, "1", g3, h3, 3))
    monkeypatch.delenv("VOXA_RL_STAGED")
    g2, h2 = sample((30, 41), (5, 7))
    d2 = voxa.richardson_lucy(g2, h2, 3)
    assert np.array_equal(d2, run(monkeypatch, "0", g2, h2, 3))
    # any other value means automatic
    assert np.array_equal(d3, run(monkeypatch, "yes", g3, h3, 3))


def test_staged_measure_plans(monkeypatch, tmp_path):
    g, h = sample((7, 10, 12), (3, 4, 5))
    est = run(monkeypatch, "1", g, h, 3, planning="estimate")
    wis = tmp_path / "w"
    monkeypatch.setenv("VOXA_FFTW_WISDOM", str(wis))
    meas = run(monkeypatch, "1", g, h, 3, planning="measure")
    assert rel_err(meas, est) < 1e-5
    assert wis.read_text().startswith("(fftw-3")


def test_staged_progress_cancel_leaves_partial(monkeypatch):
    g, h = sample((6, 9, 11), (5, 8, 10))
    monkeypatch.setenv("VOXA_RL_STAGED", "1")
    two = voxa.richardson_lucy(g, h, 2)
    out = np.zeros_like(g)
    with pytest.raises(KeyboardInterrupt):
        voxa.richardson_lucy(g, h, 5, out=out, progress=lambda d, n: d < 2)
    assert np.array_equal(out, two)  # the estimate after 2 iterations


@pytest.mark.parametrize("shape,pshape", [((8, 13, 9), (8, 2, 9)), ((10, 12, 16), (4, 4, 4)),
                                          ((30, 41), (5, 7))])
def test_periodic_staged_switch(shape, pshape, monkeypatch, nthreads):
    """VOXA_RL_STAGED=1 also stages small periodic boxes (the default keeps
    their 3-D plans): same results to rounding, bit-identical across thread
    counts."""
    g, h = sample(shape, pshape)
    nthreads(2)
    monkeypatch.delenv("VOXA_RL_STAGED", raising=False)
    plans3 = voxa.richardson_lucy(g, h, 5, boundary="periodic")
    res = []
    for t in (1, 2, 3):
        nthreads(t)
        res.append(run(monkeypatch, "1", g, h, 5, boundary="periodic"))
    assert rel_err(res[0], plans3) < 2e-5
    assert not np.array_equal(res[0], plans3)
    assert np.array_equal(res[0], res[1]) and np.array_equal(res[0], res[2])


def test_periodic_default_stages_big_boxes(monkeypatch):
    """Periodic mode is staged from 8 planes and 2^19 voxels: the default
    equals the forced staged path bit for bit there and differs from the 3-D
    plans by rounding (with planning='auto' its plans are measured, the 3-D
    ones estimated); one row fewer, or one plane fewer, keeps the 3-D
    plans."""
    rng = np.random.default_rng(5)
    h = rand_psf(rng, (3, 5, 4))
    for shape, staged in (((8, 256, 256), True), ((8, 255, 256), False),
                          ((7, 512, 160), False)):
        g = (rng.random(shape, dtype=np.float32) + 0.5)
        monkeypatch.delenv("VOXA_RL_STAGED", raising=False)
        default = voxa.richardson_lucy(g, h, 2, boundary="periodic", planning="auto")
        forced = run(monkeypatch, "1", g, h, 2, boundary="periodic", planning="auto")
        plans3 = run(monkeypatch, "0", g, h, 2, boundary="periodic", planning="auto")
        assert rel_err(forced, plans3) < 2e-5
        assert not np.array_equal(forced, plans3)
        assert np.array_equal(default, forced if staged else plans3), shape


@pytest.mark.parametrize("boundary,shape,pshape,measured", [
    # sizes no other test plans, so that measuring them is new wisdom
    ("free", (6, 11, 9), (3, 4, 5), True),       # staged: measured
    ("periodic", (9, 21, 22), (3, 4, 5), False),  # small periodic: 3-D plans
    ("zero", (9, 21, 22), (3, 4, 5), False),     # zero mode: 3-D plans
    ("periodic", (37, 43), (5, 7), True),        # one plane (2-D): measured
    ("zero", (23, 29), (3, 4), True),
    ("free", (47,), (7,), True),                 # 1-D
    ("periodic", (4116, 4096), (3, 3), False),   # one plane past 2^24 voxels: estimated
])
def test_auto_planning_measures_staged_plans(boundary, shape, pshape, measured, tmp_path):
    """planning='auto' (the default) measures the staged plans and those of
    a box of one plane (1-D and 2-D images), which adds wisdom to the cache
    file, and estimates the others (3-D plans); 'estimate' never
    measures; the results agree to rounding. In a fresh process: FFTW's
    wisdom is process-wide, and a plan measured by an earlier test can hold
    these plans' sub-problems (then nothing new is learnt and no file is
    written: this test failed once that way in a full run)."""
    g, h = sample(shape, pshape)
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "h.npy", h)
    est_file, auto_file = tmp_path / "est", tmp_path / "auto"
    script = f"""
import os, numpy as np, voxa
g, h = np.load({str(tmp_path / "g.npy")!r}), np.load({str(tmp_path / "h.npy")!r})
os.environ["VOXA_FFTW_WISDOM"] = {str(est_file)!r}
np.save({str(tmp_path / "est.npy")!r},
        voxa.richardson_lucy(g, h, 3, boundary={boundary!r}, planning="estimate"))
os.environ["VOXA_FFTW_WISDOM"] = {str(auto_file)!r}
np.save({str(tmp_path / "default.npy")!r}, voxa.richardson_lucy(g, h, 3, boundary={boundary!r}))
np.save({str(tmp_path / "auto.npy")!r},
        voxa.richardson_lucy(g, h, 3, boundary={boundary!r}, planning="auto"))
"""
    env = {k: v for k, v in os.environ.items() if k != "VOXA_RL_STAGED"}
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    est, default, auto = (np.load(tmp_path / f"{n}.npy") for n in ("est", "default", "auto"))
    assert not est_file.exists()
    assert auto_file.exists() == measured
    if measured:
        assert auto_file.read_text().startswith("(fftw-3")
    assert np.array_equal(auto, default)  # named, 'auto' runs the plans just measured
    assert rel_err(auto, est) < 2e-5
