"""Wrap-free RL (boundary='free') at the boundaries of its storage layout:
border weights kept per row class (edge rows of the box and one interior
class per axis), the estimate kept in the output's window plus a shell of
the rest of the box. Compared with the float64 reference formula of
test_deconv.py on odd/even PSF extents, PSFs as large as the image along an
axis, extent-1 axes, 1-3D, 1 and 2 threads, with and without acceleration,
and on every output path (float32 in place, float64, strided, clip). Then
the default FFTW wisdom cache (VOXA_FFTW_WISDOM; conftest turns it off for
the suite, these tests point it at tmp_path)."""
import os
import stat

import numpy as np
import pytest

import voxa
from test_deconv import free_reference, rand_psf, rel_err

CASES = [  # (image shape, PSF shape)
    ((40,), (7,)), ((40,), (8,)), ((13,), (13,)), ((14,), (13,)),
    ((30, 41), (5, 7)), ((28, 33), (6, 4)), ((9, 20), (9, 3)), ((12, 15), (1, 15)),
    ((20, 21), (2, 1)),
    ((11, 17, 14), (3, 6, 5)), ((10, 12, 16), (4, 4, 4)), ((8, 13, 9), (8, 2, 9)),
    ((7, 16, 12), (1, 5, 6)), ((6, 9, 11), (5, 8, 10)),
]


@pytest.fixture
def threads():
    old = voxa.get_threads()
    yield voxa.set_threads
    voxa.set_threads(old)


@pytest.mark.parametrize("shape,pshape", CASES)
def test_free_layout_equals_reference(shape, pshape, threads):
    rng = np.random.default_rng(sum(shape) * 31 + sum(pshape))
    g = (rng.random(shape) * 10 + 0.5).astype(np.float32)
    h = rand_psf(rng, pshape)
    want = free_reference(g, h, 5)
    got = []
    for t in (1, 2):
        threads(t)
        got.append(voxa.richardson_lucy(g, h, 5))
        assert rel_err(got[-1], want) < 1e-4, (t, np.abs(got[-1] - want).max())
    assert rel_err(got[0], got[1]) < 1e-5


@pytest.mark.parametrize("shape,pshape", [((28, 33), (6, 4)), ((8, 13, 9), (8, 2, 9)),
                                          ((6, 9, 11), (5, 8, 10)), ((13,), (13,))])
def test_free_output_paths_agree(shape, pshape, threads):
    """float32 C-contiguous out holds the estimate itself; every other
    float32 out (strided, clip) goes through a window buffer: same numbers.
    (float64 is computed in double: close, test_deconv_f64.py.)"""
    threads(2)
    rng = np.random.default_rng(3)
    g = (rng.random(shape) * 0.5 + 0.1).astype(np.float32)  # stays within clip's [-1, 1]
    h = rand_psf(rng, pshape)
    for acc in (False, True):
        ref = voxa.richardson_lucy(g, h, 4, accelerate=acc)
        assert rel_err(voxa.richardson_lucy(g, h, 4, accelerate=acc, dtype=np.float64),
                       ref) < 1e-5
        big = np.full(tuple(2 * s for s in shape), -5.0, np.float32)
        view = big[(slice(None, None, 2),) * len(shape)]
        voxa.richardson_lucy(g, h, 4, accelerate=acc, out=view)
        assert np.array_equal(view, ref)
        assert (big[(slice(1, None, 2),) * len(shape)] == -5).all()  # nothing else written
        clipped = voxa.richardson_lucy(g, h, 4, accelerate=acc, clip=True)
        assert np.array_equal(clipped, np.clip(ref, -1, 1))


@pytest.mark.parametrize("boundary", ["free", "zero", "periodic"])
def test_accelerated_threads_agree(boundary, threads):
    rng = np.random.default_rng(5)
    g = (rng.random((9, 30, 23)) * 5 + 0.2).astype(np.float32)
    h = rand_psf(rng, (5, 4, 7))
    res = []
    for t in (1, 2):
        threads(t)
        res.append(voxa.richardson_lucy(g, h, 8, boundary=boundary, accelerate=True))
    assert rel_err(res[0], res[1]) < 1e-5
    plain = voxa.richardson_lucy(g, h, 8, boundary=boundary)
    assert not np.array_equal(plain, res[0])  # acceleration did something


# ---- the default wisdom cache -------------------------------------------------

def measure_once(shape):
    g = np.ones(shape, np.float32)
    h = np.ones((1,) * len(shape), np.float32)
    return voxa.richardson_lucy(g, h, 1, boundary="periodic", planning="measure")


def test_wisdom_cache_saved_after_measure(tmp_path, monkeypatch):
    path = tmp_path / "a" / "b" / "wisdom"
    monkeypatch.setenv("VOXA_FFTW_WISDOM", str(path))
    measure_once((7, 11))  # a shape no other test measures
    assert path.read_text().startswith("(fftw-3")
    assert not [p for p in path.parent.iterdir() if p != path]  # no temp file left
    # an ESTIMATE run does not write
    path.unlink()
    voxa.richardson_lucy(np.ones((7, 13), np.float32), np.ones((1, 1), np.float32), 1,
                         planning="estimate")
    assert not path.exists()


def test_wisdom_cache_xdg_default(tmp_path, monkeypatch):
    monkeypatch.delenv("VOXA_FFTW_WISDOM", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    measure_once((5, 13))
    assert (tmp_path / "voxa" / "fftw-wisdom-f32").read_text().startswith("(fftw-3")
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("off", ["", "0", "off", "none"])
def test_wisdom_cache_off(tmp_path, monkeypatch, off):
    monkeypatch.setenv("VOXA_FFTW_WISDOM", off)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    measure_once((3, 7 + 2 * len(off)))
    assert not list(tmp_path.iterdir())


def test_wisdom_cache_never_fails_a_run(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    g = (np.random.default_rng(2).random((9, 17)) + 0.1).astype(np.float32)
    h = voxa.gaussian_psf((3, 5), 1.0)
    want = voxa.richardson_lucy(g, h, 3)
    # the cache's folder is a file: it cannot be created, the run still works
    monkeypatch.setenv("VOXA_FFTW_WISDOM", str(blocker / "w"))
    assert rel_err(voxa.richardson_lucy(g, h, 3, planning="measure"), want) < 1e-5
    # a foreign file in its place is ignored (and not the reason for an error)
    junk = tmp_path / "junk"
    junk.write_text("not wisdom at all")
    monkeypatch.setenv("VOXA_FFTW_WISDOM", str(junk))
    assert rel_err(voxa.richardson_lucy(g, h, 3), want) < 1e-5
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
        monkeypatch.setenv("VOXA_FFTW_WISDOM", str(ro / "w"))
        assert rel_err(voxa.richardson_lucy(g[:, :15], h, 3, planning="measure"),
                       voxa.richardson_lucy(g[:, :15], h, 3)) < 1e-5
        assert not (ro / "w").exists()
