"""voxa.binary_* against scipy.ndimage.binary_*, voxel for voxel, for every
element kind, border value and iteration count."""
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import voxa

OPS = ["dilation", "erosion", "opening", "closing"]


def rand(shape, p, seed=0):
    return np.random.default_rng(seed).random(shape) < p


def blobs(shape, seed=0):
    """Smooth blobs with ~40 % foreground (like real masks), plus noise."""
    rng = np.random.default_rng(seed)
    f = ndi.gaussian_filter(rng.random(shape), 1.5)
    a = f > np.quantile(f, 0.6)
    a ^= rng.random(shape) < 0.03
    return a


def both(op, a, structure=None, **kw):
    got = getattr(voxa, "binary_" + op)(a, structure, **kw)
    extra = {}
    if kw.get("iterations", 1) != 1 and structure is not None and \
            any(n % 2 == 0 for n in np.shape(structure)):
        extra["brute_force"] = True  # scipy's default path is wrong here (docs/scipy.md)
    want = getattr(ndi, "binary_" + op)(a, structure, **kw, **extra)
    assert got.dtype == np.bool_ and got.shape == a.shape
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)
        raise AssertionError(f"{op} {kw}: {len(bad)} voxels differ, first {bad[:3].tolist()}")


def ball_ref(R, spacing):
    """The ball by its definition, evaluated in NumPy."""
    sp = np.asarray(spacing, float)
    r = [int(np.floor(R / s)) + 1 for s in sp]
    g = np.meshgrid(*[np.arange(-k, k + 1) for k in r], indexing="ij")
    n2 = sum((gi * si) ** 2 for gi, si in zip(g, sp))
    b = n2 <= R * R
    sl = tuple(slice(*np.flatnonzero(b.any(axis=tuple(j for j in range(len(sp)) if j != d)))[[0, -1]] + [0, 1])
               for d in range(len(sp)))
    return b[sl]


# ---- every element kind, both border values, iterations 1-3, 2D and 3D -----

ELEMENTS_3D = {
    "default": None,
    "conn1": ndi.generate_binary_structure(3, 1),
    "conn2": ndi.generate_binary_structure(3, 2),
    "conn3": ndi.generate_binary_structure(3, 3),
    "ball2": voxa.ball(2),
    "ball3.5": voxa.ball(3.5),
    "diamond2": voxa.diamond(2),
    "box3": np.ones((3, 3, 3), bool),
    "box_even": np.ones((2, 4, 3), bool),
    "box_flat": np.ones((1, 5, 2), bool),
    "random": rand((3, 4, 3), 0.5, seed=11),
    "random_even": rand((2, 2, 4), 0.6, seed=12),
    "offcentre": np.pad(np.ones((2, 2, 2), bool), ((0, 3), (0, 1), (2, 0))),
    "line": np.ones((1, 1, 6), bool),
}


@pytest.mark.parametrize("name", list(ELEMENTS_3D))
@pytest.mark.parametrize("bv", [0, 1])
def test_elements_3d(name, bv):
    s = ELEMENTS_3D[name]
    a = blobs((11, 12, 13), seed=1)
    for it in (1, 2, 3):
        for op in OPS:
            both(op, a, s, iterations=it, border_value=bv)


ELEMENTS_2D = {
    "default": None,
    "conn2": ndi.generate_binary_structure(2, 2),
    "ball4": voxa.ball(4, ndim=2),
    "diamond3": voxa.diamond(3, ndim=2),
    "box_even": np.ones((4, 2), bool),
    "box_odd": np.ones((5, 3), bool),
    "random": rand((5, 4), 0.5, seed=3),
    "ring": voxa.ball(3, ndim=2) & ~np.pad(voxa.ball(1.5, ndim=2), 2),
}


@pytest.mark.parametrize("name", list(ELEMENTS_2D))
@pytest.mark.parametrize("bv", [0, 1])
def test_elements_2d(name, bv, threads):
    s = ELEMENTS_2D[name]
    a = blobs((23, 31), seed=2)
    for it in (1, 2, 3):
        for op in OPS:
            both(op, a, s, iterations=it, border_value=bv)


@pytest.mark.parametrize("R", range(1, 13))
def test_ball_and_diamond_radii(R):
    a3 = blobs((14, 15, 16) if R <= 5 else (10, 11, 12), seed=R)
    a2 = blobs((40, 37), seed=R)
    for bv in (0, 1):
        for op in OPS:
            both(op, a2, voxa.ball(R, ndim=2), border_value=bv)
            both(op, a2, voxa.diamond(R, ndim=2), border_value=bv)
        if R <= 5 or R == 12:
            for op in ("erosion", "dilation"):
                both(op, a3, voxa.ball(R), border_value=bv)
                both(op, a3, voxa.diamond(R), border_value=bv)
    assert voxa.morph_path(3, voxa.ball(R)).startswith("diamond" if R == 1 else "ball")
    assert voxa.morph_path(3, voxa.diamond(R)).startswith("diamond")


def test_keyword_elements_equal_arrays():
    a = blobs((13, 14, 15), seed=4)
    for op in OPS:
        f = getattr(voxa, "binary_" + op)
        for bv in (0, 1):
            assert np.array_equal(f(a, ball=3.2, border_value=bv), f(a, voxa.ball(3.2), border_value=bv))
            assert np.array_equal(f(a, diamond=3, border_value=bv, iterations=2),
                                  f(a, voxa.diamond(3), border_value=bv, iterations=2))
            assert np.array_equal(f(a, box=(2, 3, 4), border_value=bv),
                                  f(a, np.ones((2, 3, 4), bool), border_value=bv))
            assert np.array_equal(f(a, connectivity=2, iterations=2, border_value=bv),
                                  getattr(ndi, "binary_" + op)(a, ndi.generate_binary_structure(3, 2),
                                                               iterations=2, border_value=bv))


def test_paths():
    assert voxa.morph_path(3, np.ones((5, 5, 5))).startswith("box")
    assert voxa.morph_path(3, None, iterations=4).startswith("diamond")
    assert "folded" in voxa.morph_path(3, None, iterations=4)
    assert voxa.morph_path(3, ndi.generate_binary_structure(3, 3)).startswith("box")
    # as an array, connectivity 2 in 3D is the ball |o|^2 <= 2
    assert voxa.morph_path(3, ndi.generate_binary_structure(3, 2)).startswith("ball")
    assert voxa.morph_path(3, connectivity=2).startswith("footprint")
    assert voxa.morph_path(3, voxa.ball(7)).startswith("ball")
    assert voxa.morph_path(3, np.pad(voxa.ball(7), 2)).startswith("ball")  # padded: still a ball
    assert voxa.morph_path(3, voxa.ball(5, spacing=(2, 1, 1))).startswith("ball: bit-packed")
    assert voxa.morph_path(3, voxa.ball(16, spacing=(2, 1, 1))).startswith("ball: squared")
    assert voxa.morph_path(3, np.asarray(voxa.ball(5, spacing=(2, 1, 1)))).startswith("footprint")
    assert voxa.morph_path(3, ball=5, spacing=(2, 1, 1)).startswith("ball")
    assert voxa.morph_path(2, rand((5, 5), 0.5, seed=1)).startswith("footprint")


@pytest.mark.parametrize("spacing", [(2.0, 1.0, 1.0), (1.5, 0.7, 1.1), (0.29, 0.16, 0.16)])
def test_anisotropic_balls(spacing, threads):
    a = blobs((12, 14, 13), seed=7)
    for R in np.array([1.0, 2.3, 3.0]) * min(min(spacing), 1.0):
        ref = ball_ref(R, spacing)
        b = voxa.ball(R, spacing=spacing)
        assert np.array_equal(b, ref), (R, spacing)
        for bv in (0, 1):
            for op in OPS:
                got = getattr(voxa, "binary_" + op)(a, ball=R, spacing=spacing, border_value=bv)
                want = getattr(ndi, "binary_" + op)(a, ref, border_value=bv)
                assert np.array_equal(got, want), (R, spacing, op, bv)
                assert np.array_equal(getattr(voxa, "binary_" + op)(a, b, border_value=bv), want)


def test_all_ones_all_zeros_and_big_elements(threads):
    for shape in [(7,), (5, 6), (4, 5, 6), (1, 1, 9)]:
        nd = len(shape)
        for a in (np.ones(shape, bool), np.zeros(shape, bool), rand(shape, 0.5, seed=8)):
            for s in (voxa.ball(9, ndim=nd), voxa.diamond(8, ndim=nd), np.ones((15,) * nd, bool),
                      np.ones((16,) * nd, bool), rand((11,) * nd, 0.3, seed=2)):
                for bv in (0, 1):
                    for op in OPS:
                        both(op, a, s, border_value=bv)
            for bv, R in ((0, 1000), (1, 1000), (0, 1e5), (1, 1e5)):
                for op in OPS:
                    got = getattr(voxa, "binary_" + op)(a, ball=R, border_value=bv)
                    want = getattr(ndi, "binary_" + op)(a, np.ones((1,) * nd, bool), border_value=bv)
                    if op == "erosion":
                        want = np.full(shape, bool(bv) and a.all())
                    elif op == "dilation":
                        want = np.full(shape, bool(bv) or a.any())
                    if op in ("erosion", "dilation"):
                        assert np.array_equal(got, want), (op, bv)


def test_iterations_until_stable():
    a = blobs((9, 10, 11), seed=5)
    for s in (None, voxa.ball(2), rand((3, 3, 3), 0.5, seed=4) | ndi.generate_binary_structure(3, 1)):
        for bv in (0, 1):
            for op in OPS:
                both(op, a, s, iterations=0, border_value=bv)
                both(op, a, s, iterations=-1, border_value=bv)


def test_dtypes_layouts_output(threads):
    base = blobs((10, 11, 12), seed=6)
    want = ndi.binary_opening(base, voxa.ball(2))
    for dt in (np.bool_, np.uint8, np.int8, np.uint16, np.int32, np.float32, np.float64):
        a = base.astype(dt) * (3 if dt != np.bool_ else 1)
        assert np.array_equal(voxa.binary_opening(a, voxa.ball(2)), want)
        assert np.array_equal(voxa.binary_opening(np.asfortranarray(a), voxa.ball(2)), want)
    big = blobs((20, 22, 24), seed=7)
    view = big[::2, 1::2, ::-2]
    both("closing", view, voxa.ball(2))
    both("erosion", view, np.ones((2, 3, 2)), border_value=1)
    out = np.zeros((10, 11, 12), bool)
    r = voxa.binary_opening(base, voxa.ball(2), output=out)
    assert r is out and np.array_equal(out, want)
    outf = np.zeros((10, 11, 12), np.uint8).transpose()  # non-contiguous output
    voxa.binary_dilation(base.transpose(), voxa.diamond(2), output=outf)
    assert np.array_equal(outf, ndi.binary_dilation(base.transpose(), voxa.diamond(2)))
    s = voxa.binary_erosion(base, np.ones((3, 3, 3), np.uint8))  # numeric 0/1 structure
    assert np.array_equal(s, ndi.binary_erosion(base, np.ones((3, 3, 3))))


@settings(max_examples=30, deadline=None)
@given(a=hnp.arrays(np.bool_, hnp.array_shapes(min_dims=1, max_dims=3, max_side=9)),
       seed=st.integers(0, 2**31), bv=st.integers(0, 1), it=st.integers(1, 3),
       op=st.sampled_from(OPS))
def test_hypothesis_random_footprints(a, seed, bv, it, op):
    s = rand(tuple(np.random.default_rng(seed).integers(1, 5, a.ndim)), 0.6, seed=seed)
    if not s.any():
        s.flat[0] = True
    both(op, a, s, iterations=it, border_value=bv)


def test_bad_inputs():
    a = blobs((8, 9, 10))
    # scipy: non-zero structure values are true, an all-false structure is valid
    assert np.array_equal(voxa.binary_dilation(a, np.full((3, 3, 3), 2)),
                          ndi.binary_dilation(a, np.full((3, 3, 3), 2)))
    assert not voxa.binary_dilation(a, np.zeros((3, 3, 3), bool)).any()
    with pytest.raises(RuntimeError, match="empty"):
        voxa.binary_dilation(a, np.zeros((0, 3, 3), bool))
    with pytest.raises(RuntimeError, match="dimensionality"):
        voxa.binary_dilation(a, np.ones((3, 3), bool))
    with pytest.raises(ValueError, match="negative"):
        voxa.binary_dilation(a, ball=-1)
    with pytest.raises(ValueError, match="too large"):
        voxa.binary_dilation(a, ball=1e12)
    with pytest.raises(ValueError, match="not finite"):
        voxa.binary_dilation(a, ball=np.inf)
    with pytest.raises(ValueError, match="integer"):
        voxa.binary_dilation(a, diamond=2.5)
    with pytest.raises(ValueError, match="spacing"):
        voxa.binary_dilation(a, ball=3, spacing=(1, 2))
    with pytest.raises(ValueError, match="spacing"):
        voxa.binary_dilation(a, ball=3, spacing=(1, 0, 1))
    with pytest.raises(ValueError, match="spacing"):
        voxa.ball(3, spacing=(1, -2))
    with pytest.raises(ValueError, match="box"):
        voxa.binary_dilation(a, box=(0, 1, 1))
    with pytest.raises(TypeError, match="border_value"):
        voxa.binary_dilation(a, border_value=0.5)
    with pytest.raises(ValueError, match="one of"):
        voxa.binary_dilation(a, voxa.ball(2), ball=2)
    with pytest.raises(ValueError, match="shape"):
        voxa.binary_dilation(a, output=np.zeros((8, 9), bool))
    with pytest.raises(ValueError, match="origin"):  # scipy: an undefined result
        voxa.binary_dilation(a, origin=2)


from conftest import CLI  # noqa: E402


def test_cli_morph(tmp_path):
    a = blobs((9, 10, 11), seed=9)
    np.save(tmp_path / "in.npy", a)
    fp = rand((3, 4, 3), 0.5, seed=1)
    np.save(tmp_path / "fp.npy", fp)
    cases = [
        (["open", "--ball", "3"], ndi.binary_opening(a, voxa.ball(3))),
        (["close", "--diamond", "2", "--iterations", "2", "--border-value", "1"],
         ndi.binary_closing(a, voxa.diamond(2), iterations=2, border_value=1)),
        (["erode", "--box", "2,3,4"], ndi.binary_erosion(a, np.ones((2, 3, 4)))),
        (["dilate", "--box", "3"], ndi.binary_dilation(a, np.ones((3, 3, 3)))),
        (["dilate", "--connectivity", "2", "--iterations", "3"],
         ndi.binary_dilation(a, ndi.generate_binary_structure(3, 2), iterations=3)),
        (["erode", "--footprint", str(tmp_path / "fp.npy"), "--border-value", "1"],
         ndi.binary_erosion(a, fp, border_value=1)),
        (["open", "--ball", "2", "--spacing", "2,1,1"],
         ndi.binary_opening(a, voxa.ball(2, spacing=(2, 1, 1)))),
    ]
    for args, want in cases:
        r = subprocess.run([CLI, "morph", args[0], str(tmp_path / "in.npy"), "-o",
                            str(tmp_path / "o.npy")] + args[1:], capture_output=True, text=True)
        assert r.returncode == 0, (args, r.stderr)
        assert np.array_equal(np.load(tmp_path / "o.npy"), want), args
    r = subprocess.run([CLI, "morph", "open", str(tmp_path / "in.npy"), "-o", str(tmp_path / "o.npy"),
                        "--ball", "4", "--describe"], capture_output=True, text=True)
    assert r.returncode == 0 and "ball" in r.stderr
    usage = [["open"], ["open", "--ball", "2", "--diamond", "2"], ["blur", "--ball", "2"],
             ["open", "--ball", "x"], ["open", "--box", "1,2"], ["open", "--ball", "2", "--border-value", "3"],
             ["open", "--diamond", "2", "--spacing", "1,1,1"], ["open", "--ball", "2", "--spacing", "1,1"]]
    for args in usage:
        r = subprocess.run([CLI, "morph", args[0], str(tmp_path / "in.npy"), "-o",
                            str(tmp_path / "x.npy")] + args[1:], capture_output=True, text=True)
        assert r.returncode == 2 and r.stderr.startswith("voxa: morph: "), (args, r.stderr)
    np.save(tmp_path / "bad.npy", np.full((3, 3, 3), 2, np.uint8))
    fails = [["open", "--ball", "-1"], ["open", "--diamond", "1.5"],
             ["open", "--footprint", str(tmp_path / "bad.npy")],
             ["open", "--footprint", str(tmp_path / "missing.npy")]]
    for args in fails:
        r = subprocess.run([CLI, "morph", args[0], str(tmp_path / "in.npy"), "-o",
                            str(tmp_path / "x.npy")] + args[1:], capture_output=True, text=True)
        assert r.returncode == 1 and r.stderr.startswith("voxa: morph: "), (args, r.stderr)
    assert not (tmp_path / "x.npy").exists()


def test_large_volume_threads():
    """Volumes big enough to be split across threads (blocks >= 256k voxels):
    1 and 3 threads give identical results, equal to scipy's exact routes."""
    rng = np.random.default_rng(13)
    a = ndi.distance_transform_edt(rng.random((40, 120, 130)) > 2e-4) < 7  # unions of balls
    a ^= rng.random(a.shape) < 0.01
    old = voxa.get_threads()
    try:
        res = {}
        for t in (1, 3):
            voxa.set_threads(t)
            res[t] = [voxa.binary_opening(a, ball=4), voxa.binary_closing(a, diamond=3),
                      voxa.binary_erosion(a, box=(3, 4, 5), border_value=1),
                      voxa.binary_dilation(a, ndi.generate_binary_structure(3, 2), iterations=2),
                      voxa.binary_erosion(a, ball=2.5, spacing=(2, 1, 1)),
                      voxa.distance_transform_edt(a), voxa.distance_transform_cdt(a, "taxicab")]
        for x, y in zip(res[1], res[3]):
            assert np.array_equal(x, y)
        r = res[3]
        inner = (slice(1, -1),) * 3
        er = ndi.distance_transform_edt(np.pad(a, 1))[inner] > 4
        assert er.any() and np.array_equal(r[0], ndi.distance_transform_edt(~er) <= 4)
        assert np.array_equal(r[1], ndi.binary_closing(a, voxa.diamond(3)))
        assert np.array_equal(r[2], ndi.binary_erosion(a, np.ones((3, 4, 5)), border_value=1))
        assert np.array_equal(r[3], ndi.binary_dilation(a, ndi.generate_binary_structure(3, 2),
                                                        iterations=2))
        assert np.array_equal(r[4], ndi.binary_erosion(a, voxa.ball(2.5, spacing=(2, 1, 1))))
        np.testing.assert_allclose(r[5], ndi.distance_transform_edt(a), rtol=1e-12)
        assert np.array_equal(r[6], ndi.distance_transform_cdt(a, "taxicab"))
    finally:
        voxa.set_threads(old)


# ---- bit-packed rows (small elements) ------------------------------------------


def rep_ref(op, a, fp, k, bv):
    """scipy with iterations=k, written as k applications of iterations=1
    (the same definition; scipy's own iteration loop reads out of bounds on
    some shapes with lines of length 1)."""
    def r(f, x):
        for _ in range(k):
            x = f(x, fp, border_value=bv)
        return x
    E = lambda x: r(ndi.binary_erosion, x)  # noqa: E731
    D = lambda x: r(ndi.binary_dilation, x)  # noqa: E731
    return {"dilation": D, "erosion": E, "opening": lambda x: D(E(x)),
            "closing": lambda x: E(D(x))}[op](a)


def test_bits_paths():
    # which elements take bit-packed rows (rule: docs/morph.md)
    for fp in (voxa.ball(5), voxa.ball(9), np.ones((11, 11, 11), bool), rand((4, 5, 6), 0.5),
               rand((15, 15, 15), 0.5, seed=3)):
        assert "bit-packed" in voxa.morph_path(3, fp)
    assert "bit-packed" in voxa.morph_path(3, connectivity=2)
    assert "bit-packed" in voxa.morph_path(3, ball=5)
    assert "bit-packed" in voxa.morph_path(3, box=(3, 4, 5))
    assert "bit-packed" in voxa.morph_path(2, voxa.ball(30, ndim=2))
    assert "bit-packed" in voxa.morph_path(1, np.ones(7, bool))
    assert voxa.morph_path(3, voxa.ball(10)).startswith("ball: squared")
    assert voxa.morph_path(3, np.ones((17, 17, 17), bool)).startswith("box: separable")
    assert voxa.morph_path(3, voxa.diamond(2)).startswith("diamond: city-block")
    assert voxa.morph_path(3, voxa.ball(5), iterations=2).endswith("applied once per iteration")
    # folded iterations stay one O(N) pass
    assert "folded" in voxa.morph_path(3, np.ones((3, 3, 3), bool), iterations=3)


BITS_ELEMENTS = {
    1: [np.ones(1, bool), np.ones(2, bool), np.ones(5, bool), np.array([1, 0, 1, 1], bool),
        rand(7, 0.5, seed=1), np.ones(70, bool)],
    2: [voxa.ball(3, ndim=2), np.ones((2, 4), bool), rand((3, 5), 0.5, seed=2),
        rand((4, 2), 0.7, seed=3), np.ones((1, 66), bool), np.pad(np.ones((2, 2), bool), ((0, 2), (1, 0)))],
    3: [voxa.ball(2), voxa.ball(3.5), np.ones((3, 3, 3), bool), np.ones((2, 4, 3), bool),
        rand((3, 4, 3), 0.5, seed=11), rand((2, 2, 4), 0.6, seed=12),
        np.pad(np.ones((2, 2, 2), bool), ((0, 3), (0, 1), (2, 0))), np.ones((1, 1, 6), bool)],
}


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 130])
def test_bits_line_lengths(nd, n, threads):
    """Word boundaries: every line length around 64, every border value,
    iterations 1-3, empty/full/random inputs, in-place output."""
    shape = {1: (n,), 2: (6, n), 3: (4, 5, n)}[nd]
    inputs = [np.zeros(shape, bool), np.ones(shape, bool), rand(shape, 0.5, seed=n),
              rand(shape, 0.9, seed=n + 1)]
    for fp in BITS_ELEMENTS[nd]:
        assert "bit-packed" in voxa.morph_path(nd, fp), fp
        for it in (1, 2, 3):
            path = voxa.morph_path(nd, fp, iterations=it)  # boxes: folded for it > 1
            for a in inputs:
                for bv in (0, 1):
                    for op in OPS:
                        got = getattr(voxa, "binary_" + op)(a, fp, iterations=it, border_value=bv)
                        want = rep_ref(op, a, fp, it, bv)
                        assert np.array_equal(got, want), (op, fp.shape, it, bv, path)
    # aliasing: output is the input
    a = rand(shape, 0.6, seed=5)
    want = ndi.binary_opening(a, BITS_ELEMENTS[nd][-1])
    voxa.binary_opening(a, BITS_ELEMENTS[nd][-1], output=a)
    assert np.array_equal(a, want)


def test_bits_large_threads():
    """A volume split across threads: 1 and 3 threads identical and = scipy."""
    a = blobs((40, 50, 130), seed=4)
    fps = [voxa.ball(5), np.ones((11, 11, 11), bool), rand((4, 5, 6), 0.5, seed=8),
           voxa.ball(3, spacing=(2, 1, 1))]
    old = voxa.get_threads()
    try:
        for fp in fps:
            assert "bit-packed" in voxa.morph_path(3, fp)
            for bv in (0, 1):
                res = {}
                for t in (1, 3):
                    voxa.set_threads(t)
                    res[t] = [voxa.binary_opening(a, fp, border_value=bv),
                              voxa.binary_closing(a, fp, border_value=bv)]
                assert np.array_equal(res[1][0], res[3][0]) and np.array_equal(res[1][1], res[3][1])
                assert np.array_equal(res[1][0], ndi.binary_opening(a, fp, border_value=bv))
                assert np.array_equal(res[1][1], ndi.binary_closing(a, fp, border_value=bv))
    finally:
        voxa.set_threads(old)


@settings(max_examples=60, deadline=None)
@given(shape=st.tuples(st.integers(1, 5), st.integers(1, 6), st.integers(1, 140)),
       fshape=st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 6)),
       seed=st.integers(0, 10**6), bv=st.integers(0, 1), it=st.integers(1, 3),
       op=st.sampled_from(OPS))
def test_bits_hypothesis(shape, fshape, seed, bv, it, op):
    rng = np.random.default_rng(seed)
    a = rng.random(shape) < rng.random()
    fp = rng.random(fshape) < 0.5
    fp.flat[rng.integers(fp.size)] = True
    got = getattr(voxa, "binary_" + op)(a, fp, iterations=it, border_value=bv)
    assert np.array_equal(got, rep_ref(op, a, fp, it, bv))
