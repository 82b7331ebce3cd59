"""voxa.binary_fill_holes against scipy.ndimage.binary_fill_holes, voxel for
voxel: ndim 1-4, every connectivity, random centrosymmetric and general
(asymmetric, any size) structures with origins, random densities, holes at
the border, all-zeros, all-ones, empty, 1-element and 0-D arrays, every input
dtype, memory orders and strided views, output arrays and dtypes, axes,
thread counts, the exceptions scipy raises for bad arguments, and the CLI."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

THREADS = (1, 2, 3)


@pytest.fixture(autouse=True)
def _restore_threads():
    yield
    voxa.set_threads(0)


def outcome(f):
    try:
        return f()
    except Exception as e:  # noqa: BLE001 - the exception type is the result
        return type(e)


def check(a, threads=(1,), **kw):
    want = outcome(lambda: ndi.binary_fill_holes(a, **kw))
    for t in threads:
        voxa.set_threads(t)
        got = outcome(lambda: voxa.binary_fill_holes(a, **kw))
        if isinstance(want, type):
            assert got is want, (got, want, kw)
        else:
            assert isinstance(got, np.ndarray) and got.dtype == want.dtype, (got, want)
            np.testing.assert_array_equal(got, want)
    return want


def random_mask(rng, shape, density=None):
    if density is None:
        density = rng.uniform(0.05, 0.95)
    return rng.random(shape) < density


SHAPES = {1: [(1,), (2,), (37,), (200,)], 2: [(1, 1), (1, 9), (9, 1), (23, 31), (64, 50)],
          3: [(1, 5, 7), (9, 1, 8), (12, 15, 17), (20, 24, 30)], 4: [(3, 4, 5, 6), (6, 7, 5, 4)]}


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_every_connectivity(ndim):
    rng = np.random.default_rng(ndim)
    for shape in SHAPES[ndim]:
        for density in (0.2, 0.45, 0.6, 0.8, None):
            a = random_mask(rng, shape, density)
            for c in range(1, ndim + 1):
                check(a, structure=ndi.generate_binary_structure(ndim, c))
            check(a)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_random_centrosymmetric(ndim):
    rng = np.random.default_rng(10 + ndim)
    for it in range(25):
        shape = SHAPES[ndim][it % len(SHAPES[ndim])]
        r = rng.random((3,) * ndim) < rng.uniform(0.1, 0.9)
        s = r | r[(slice(None, None, -1),) * ndim]
        check(random_mask(rng, shape), structure=s)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_general_structures_and_origins(ndim):
    """Asymmetric structures of sizes 1..5 per axis (even ones too), origins
    anywhere in scipy's range."""
    rng = np.random.default_rng(20 + ndim)
    for it in range(60):
        shape = SHAPES[ndim][it % len(SHAPES[ndim])]
        ss = tuple(rng.integers(1, 6, ndim))
        s = rng.random(ss) < rng.uniform(0.2, 1.0)
        origin = [int(rng.integers(-(n // 2), (n - 1) // 2 + 1)) for n in ss] if it % 2 else 0
        check(random_mask(rng, shape), structure=s, origin=origin)


def test_holes_at_the_border():
    # a frame made of the array's own border: the whole inside is a hole
    a = np.ones((9, 11), bool)
    a[1:-1, 1:-1] = False
    assert check(a).all()
    # a hole one voxel from the border, and one opened to it
    b = np.zeros((7, 8, 9), bool)
    b[:4, :5, :6] = True
    b[1:3, 1:4, 1:5] = False
    check(b)
    b[0, 2, 2] = False  # tunnel through the face at z = 0
    assert not check(b)[1, 2, 2]
    # diagonal gaps: closed for connectivity 1, open for the full box
    c = np.zeros((6, 6), bool)
    c[1:5, 1:5] = True
    c[2:4, 2:4] = False
    c[1, 1] = False
    c[4, 4] = False
    c[2, 1] = c[1, 2] = True
    for k in (1, 2):
        check(c, structure=ndi.generate_binary_structure(2, k))
    # every edge voxel background, holes right behind it
    rng = np.random.default_rng(3)
    d = random_mask(rng, (30, 30, 30), 0.7)
    d[0], d[-1], d[:, 0], d[:, -1], d[:, :, 0], d[:, :, -1] = [False] * 6
    for k in (1, 2, 3):
        check(d, structure=ndi.generate_binary_structure(3, k))


@pytest.mark.parametrize("shape", [(), (0,), (1,), (3, 0, 2), (1, 1, 1), (4, 4, 4)])
def test_all_zeros_all_ones_empty(shape):
    for value in (0, 1):
        a = np.full(shape, value, bool)
        check(a)
        check(a, structure=np.ones((3,) * a.ndim))
    check(np.zeros(shape, np.float32), output=np.uint8)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                   "int64", "uint64", "float16", "float32", "float64",
                                   "complex64", ">i4", ">f8"])
def test_input_dtypes(dtype):
    rng = np.random.default_rng(5)
    m = random_mask(rng, (17, 19, 13), 0.6)
    a = np.zeros(m.shape, dtype)
    if np.dtype(dtype).kind == "f":
        a[m] = np.where(rng.random(m.sum()) < 0.3, np.nan, -2.5)[:, ] if dtype != "float16" \
            else -2.5
        a[~m] = -0.0  # negative zero is background
    else:
        a[m] = 1 if dtype == "bool" else 3
    check(a, structure=ndi.generate_binary_structure(3, 2))


@pytest.mark.filterwarnings("ignore:WRITEBACKIFCOPY")  # scipy, big-endian output
def test_orders_strides_and_outputs():
    rng = np.random.default_rng(6)
    base = random_mask(rng, (40, 44, 48), 0.55)
    want = ndi.binary_fill_holes(base)
    views = [np.asfortranarray(base), base[::2, ::-1, 1::3], base.transpose(2, 0, 1),
             base.astype(np.uint8)[:, ::-3]]
    for v in views:
        check(v)
    for dt in (np.uint8, np.int32, np.float64, np.float16, "f4"):
        check(base, output=dt)
    for out in (np.zeros(base.shape, np.int16, order="F"), np.zeros(base.shape, bool),
                np.zeros((40, 44, 96), np.float32)[:, :, ::2], np.zeros(base.shape, ">u2")):
        ref = np.zeros_like(out)
        assert ndi.binary_fill_holes(base, output=ref) is None
        assert voxa.binary_fill_holes(base, output=out) is None
        np.testing.assert_array_equal(out, ref)
        np.testing.assert_array_equal(out != 0, want)
    # in place, like scipy
    a = base.copy()
    assert voxa.binary_fill_holes(a, output=a) is None
    np.testing.assert_array_equal(a, want)
    check(base.tolist()[:5])  # lists


def test_axes():
    rng = np.random.default_rng(7)
    a = random_mask(rng, (12, 14, 16), 0.5)
    for axes in [(0,), (1, 2), (2, 0), (-1,), (0, 1, 2)]:
        check(a, axes=axes)
        s = ndi.generate_binary_structure(len(axes), len(axes))
        check(a, structure=s, axes=axes)
        check(a, structure=np.ones((2,) * len(axes)), origin=[-1] * len(axes), axes=axes)


def test_thread_counts():
    rng = np.random.default_rng(8)
    a = random_mask(rng, (48, 110, 120), 0.5)
    for c in (1, 3):
        check(a, threads=THREADS, structure=ndi.generate_binary_structure(3, c))


def test_bad_arguments_raise_as_scipy():
    a = np.ones((4, 5), bool)
    cases = [dict(structure=np.ones((3, 3, 3))), dict(structure=np.ones(3)),
             dict(structure=np.ones((0, 3))), dict(origin=(1, 1, 1)), dict(origin=5),
             dict(origin=-4), dict(origin=1.5), dict(output=np.zeros((4, 4))),
             dict(output=np.zeros((4, 5), complex)), dict(axes=(3,)), dict(axes=(0, 0)),
             dict(axes=(1,), structure=np.ones((3, 3))), dict(axes=(1,), origin=(1, 1))]
    for kw in cases:
        assert isinstance(check(a, **kw), type), kw
    # scipy accepts these origins beyond its range without a check and reads
    # outside its buffers (it can crash): voxa raises instead
    for o in (2, (0, 2), (2, 1)):
        with pytest.raises(ValueError, match="origin"):
            voxa.binary_fill_holes(a, origin=o)


def test_cli(cli, tmp_path):
    """voxa morph fill-holes (the generic driver over the descriptor) ==
    scipy; a structure file, per-axis origins, usage errors exit 2."""
    rng = np.random.default_rng(9)
    m = random_mask(rng, (14, 15, 16), 0.6)
    s = rng.random((3, 2, 3)) < 0.6
    np.save(tmp_path / "m.npy", m)
    np.save(tmp_path / "s.npy", s.astype(np.uint8))
    out = tmp_path / "f.npy"
    for args, want in [((), ndi.binary_fill_holes(m)),
                       (("--connectivity", "3"),
                        ndi.binary_fill_holes(m, ndi.generate_binary_structure(3, 3))),
                       (("--structure", tmp_path / "s.npy", "--origin", "1,-1,0"),
                        ndi.binary_fill_holes(m, s, origin=(1, -1, 0)))]:
        r = cli("--threads", "2", "morph", "fill-holes", tmp_path / "m.npy", "-o", out, *args)
        assert r.returncode == 0, r.stderr
        got = np.load(out)
        assert got.dtype == bool
        np.testing.assert_array_equal(got, want)
    for args, msg in [(("--origin", "2"), "--origin 2 on axis 0 is out of range -1..1"),
                      (("--connectivity", "4"), "--connectivity 4 is out of range 1..3"),
                      (("--connectivity", "2", "--structure", tmp_path / "s.npy"), "one of")]:
        r = cli("morph", "fill-holes", tmp_path / "m.npy", "-o", out, *args)
        assert r.returncode == 2 and msg in r.stderr, (r.returncode, r.stderr)
