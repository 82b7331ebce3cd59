"""voxa.label against scipy.ndimage.label: labels, numbering and count equal
voxel for voxel, for every connectivity, ndim 1-4 (and up to 8), densities
0..1, adversarial masks, every output dtype, memory orders, strided views,
custom structures and thread counts; plus bad input and the CLI."""
import os
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import given, settings, strategies as st, HealthCheck

import voxa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from conftest import CLI  # noqa: E402
THREADS = (1, 2, 3)


@pytest.fixture(autouse=True)
def _restore_threads():
    yield
    voxa.set_threads(0)


def check(a, structure=None, connectivity=None, output=None, threads=THREADS):
    """voxa.label == scipy.ndimage.label for every thread count."""
    a = np.asarray(a)
    if structure is None and connectivity is not None:
        structure = ndi.generate_binary_structure(a.ndim, connectivity)
    want, wn = ndi.label(a, structure, output=output)
    for t in threads:
        voxa.set_threads(t)
        got, gn = voxa.label(a, structure, output=output)
        assert gn == wn, (t, gn, wn)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    return wn


# ---- parity on random masks -----------------------------------------------------

@pytest.mark.parametrize("shape", [(257,), (33, 47), (9, 17, 23), (5, 6, 7, 8)])
@pytest.mark.parametrize("density", [0.0, 0.05, 0.3, 0.5, 0.7, 0.95, 1.0])
def test_random_every_connectivity(shape, density):
    rng = np.random.default_rng(abs(hash((shape, density))) % 2**32)
    a = rng.random(shape) < density
    for c in range(1, len(shape) + 1):
        check(a, connectivity=c)


def test_default_structure_is_connectivity_1():
    rng = np.random.default_rng(1)
    a = rng.random((20, 30, 40)) < 0.4
    want, wn = ndi.label(a)
    got, gn = voxa.label(a)
    assert gn == wn and got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    got, gn = voxa.label(a, connectivity=3)
    want, wn = ndi.label(a, ndi.generate_binary_structure(3, 3))
    assert gn == wn
    np.testing.assert_array_equal(got, want)


def test_large_enough_for_several_blocks():
    """~300k voxels: cut into one block per thread, so seams are merged."""
    rng = np.random.default_rng(2)
    a = rng.random((60, 70, 80)) < 0.45
    for c in (1, 2, 3):
        check(a, connectivity=c)
    b = ndi.gaussian_filter(rng.random((96, 64, 64)), 2) > 0.5
    check(b, connectivity=1)
    check(rng.random((700, 700)) < 0.55, connectivity=2)


@pytest.mark.parametrize("ndim", [5, 6, 8])
def test_high_rank(ndim):
    rng = np.random.default_rng(ndim)
    shape = (3, 2, 4, 3, 2, 3, 2, 3)[:ndim]
    a = rng.random(shape) < 0.5
    for c in (1, 2, ndim):
        check(a, connectivity=c, threads=(1, 3))


# ---- adversarial masks ------------------------------------------------------------

def spiral(n):
    a = np.zeros((n, n), bool)
    a[0, :] = True
    # a square spiral of one-voxel walls with one-voxel gaps
    top, left, bottom, right = 0, 0, n - 1, n - 1
    while top <= bottom and left <= right:
        a[top, left:right + 1] = True
        a[top:bottom + 1, right] = True
        if bottom - top >= 2:
            a[bottom, left:right + 1] = True
        if right - left >= 2 and bottom - top >= 4:
            a[top + 2:bottom + 1, left] = True
        top, left, bottom, right = top + 2, left + 2, bottom - 2, right - 2
    return a


ADVERSARIAL = {
    "checker2d": np.indices((31, 33)).sum(0) % 2 == 0,
    "checker3d": np.indices((9, 10, 11)).sum(0) % 2 == 0,
    "stripes_x": np.indices((16, 40))[1] % 2 == 0,
    "stripes_y": np.indices((40, 16))[0] % 2 == 0,
    "diag_lines": (np.indices((40, 40)).sum(0) % 3) == 0,
    "anti_diag": (np.subtract(*np.indices((40, 40))) % 4) == 0,
    "spiral": spiral(41),
    "zeros": np.zeros((7, 8, 9), bool),
    "ones": np.ones((7, 8, 9), bool),
    "ones_1d": np.ones(1000, bool),
    "1x1xN": np.random.default_rng(3).random((1, 1, 500)) < 0.5,
    "Nx1x1": np.random.default_rng(4).random((500, 1, 1)) < 0.5,
    "1xNx1": np.random.default_rng(5).random((1, 500, 1)) < 0.5,
    "thin_z_line": np.pad(np.ones((20, 1, 1), bool), ((0, 0), (3, 3), (4, 4))),
    "single_voxel": np.pad(np.ones((1, 1, 1), bool), 2),
    "border_frame": np.pad(np.zeros((10, 10), bool), 1, constant_values=True),
    "comb": np.add.outer(np.arange(30) % 2, np.zeros(30)).astype(bool) | (np.arange(30) == 0)[None, :],
    "shape_1": np.ones((1,), bool),
    "shape_1_0": np.zeros((1,), bool),
    "empty": np.zeros((0, 5), bool),
    "empty3": np.zeros((4, 0, 3), bool),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial(name):
    a = ADVERSARIAL[name]
    for c in range(1, a.ndim + 1):
        check(a, connectivity=c)


def test_zero_dimensional():
    for v in (0, 1, 2.5):
        want = ndi.label(np.array(v))
        got = voxa.label(np.array(v))
        assert got[1] == want[1] and got[0].shape == () and got[0] == want[0]


# ---- dtypes, layouts ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32,
                                   np.int32, np.uint64, np.int64, np.float16, np.float32,
                                   np.float64, ">i4", ">f8"])
def test_input_dtypes(dtype):
    rng = np.random.default_rng(6)
    a = (rng.integers(-3, 4, (12, 13, 14)) * (rng.random((12, 13, 14)) < 0.4)).astype(dtype)
    if a.dtype == np.float16 or not a.dtype.isnative:
        # scipy has no float16 or big-endian kernel; voxa takes them
        want, wn = ndi.label(a.astype(a.dtype.newbyteorder("=")).astype(np.float64),
                             ndi.generate_binary_structure(3, 2))
        got, gn = voxa.label(a, connectivity=2)
        assert gn == wn
        np.testing.assert_array_equal(got, want)
        return
    check(a, connectivity=2)


def test_float_special_values():
    a = np.array([[0.0, -0.0, np.nan, 0.0], [np.inf, 0.0, -np.inf, 1e-300],
                  [-0.0, np.nan, 0.0, 0.0]])
    for dt in (np.float32, np.float64):
        check(a.astype(dt), connectivity=1)
        check(a.astype(dt), connectivity=2)


@pytest.mark.parametrize("dtype", [np.int32, np.uint16, np.uint32, np.int64, np.int8, np.uint8,
                                   np.int16, np.uint64])
def test_output_dtypes(dtype):
    rng = np.random.default_rng(7)
    a = rng.random((30, 31)) < 0.3
    if np.iinfo(dtype).max < 200:
        a = rng.random((6, 7)) < 0.3  # few components: fits 8 bits
    check(a, connectivity=1, output=dtype)


def test_output_array_filled_and_n_returned():
    rng = np.random.default_rng(8)
    a = rng.random((20, 21, 22)) < 0.4
    want, wn = ndi.label(a)
    for dt in (np.int32, np.uint16, np.uint32, np.int64):
        out = np.full(a.shape, 99, dtype=dt)
        n = voxa.label(a, output=out)
        assert isinstance(n, int) and n == wn
        np.testing.assert_array_equal(out, want)
        # strided output: only the view is written
        big = np.full((20, 21, 44), 99, dtype=dt)
        n = voxa.label(a, output=big[:, :, ::2])
        assert n == wn
        np.testing.assert_array_equal(big[:, :, ::2], want)
        assert (big[:, :, 1::2] == 99).all()
    fo = np.zeros(a.shape, np.int32, order="F")
    assert voxa.label(a, output=fo) == wn
    np.testing.assert_array_equal(fo, want)


def test_memory_orders_and_views():
    rng = np.random.default_rng(9)
    base = rng.random((14, 15, 16)) < 0.5
    views = {
        "C": base,
        "F": np.asfortranarray(base),
        "reversed": base[::-1, ::-1, ::-1],
        "step2": base[::2, 1::2, ::3],
        "transposed": base.transpose(2, 0, 1),
        "u8_strided": base.astype(np.uint8)[:, ::-2, :],
        "f64_F": np.asfortranarray(base.astype(np.float64))[1:, :, 3:],
    }
    for name, v in views.items():
        for c in (1, 2, 3):
            check(v, connectivity=c)


def test_broadcast_zero_strides():
    rng = np.random.default_rng(14)
    a = np.broadcast_to(rng.random((1, 1, 50)) < 0.5, (10, 20, 50))
    b = np.broadcast_to(rng.random((10, 1, 1)) < 0.5, (10, 20, 50))
    for v in (a, b):
        for c in (1, 2, 3):
            check(v, connectivity=c)


def test_in_place():
    rng = np.random.default_rng(10)
    a = (rng.random((25, 26)) < 0.5).astype(np.int32)
    want, wn = ndi.label(a)
    n = voxa.label(a, output=a)
    assert n == wn
    np.testing.assert_array_equal(a, want)


# ---- structures -----------------------------------------------------------------------

def random_symmetric_structure(rng, ndim, p):
    s = rng.random((3,) * ndim) < p
    return s | s[(slice(None, None, -1),) * ndim]


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_custom_structures(ndim):
    rng = np.random.default_rng(11 + ndim)
    shape = {1: (200,), 2: (30, 31), 3: (10, 11, 12), 4: (5, 6, 5, 6)}[ndim]
    for trial in range(12):
        s = random_symmetric_structure(rng, ndim, rng.random())
        a = rng.random(shape) < rng.random()
        check(a, structure=s)
        s2 = s.copy()
        s2[(1,) * ndim] = not s2[(1,) * ndim]  # the centre does not matter
        check(a, structure=s2, threads=(1,))


def test_structures_named():
    rng = np.random.default_rng(12)
    a = rng.random((30, 40)) < 0.5
    for s in ([[0, 0, 0], [1, 1, 1], [0, 0, 0]],      # rows only
              [[0, 1, 0], [0, 1, 0], [0, 1, 0]],      # columns only
              [[1, 0, 0], [0, 1, 0], [0, 0, 1]],      # one diagonal
              [[1, 0, 1], [0, 1, 0], [1, 0, 1]],      # diagonals only
              [[1, 0, 1], [0, 0, 0], [1, 0, 1]],      # diagonals, centre 0
              [[0, 0, 0], [0, 1, 0], [0, 0, 0]],      # nothing connects
              np.zeros((3, 3), int),                  # nothing at all
              [[0.5, 0, 0], [0, 2, 0], [0, 0, -1]]):  # non-zero values
        check(a, structure=np.asarray(s))


# ---- hypothesis ------------------------------------------------------------------------

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=4),
       density=st.floats(0, 1), seed=st.integers(0, 2**32 - 1),
       conn=st.integers(1, 4), order=st.sampled_from("CF"), custom=st.booleans())
def test_hypothesis(shape, density, seed, conn, order, custom):
    rng = np.random.default_rng(seed)
    a = np.asarray(rng.random(shape) < density, order=order)
    if custom:
        check(a, structure=random_symmetric_structure(rng, a.ndim, rng.random()))
    else:
        check(a, connectivity=min(conn, a.ndim))


# ---- bad input --------------------------------------------------------------------------

def test_bad_structure_shape():
    a = np.ones((4, 5), bool)
    with pytest.raises(ValueError, match="equal rank"):
        voxa.label(a, structure=np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        voxa.label(a, structure=np.ones((5, 5)))
    with pytest.raises(ValueError, match="centrosymmetric"):
        voxa.label(a, structure=[[1, 0, 0], [0, 1, 0], [0, 0, 0]])


@pytest.mark.parametrize("c", [0, -1, 3, 9])
def test_bad_connectivity(c):
    with pytest.raises(ValueError, match=f"connectivity {c} out of range 1..2"):
        voxa.label(np.ones((4, 5), bool), connectivity=c)


def test_bad_connectivity_type():
    with pytest.raises(TypeError):
        voxa.label(np.ones((4, 5), bool), connectivity=1.5)


@pytest.mark.parametrize("dt", [np.float16, np.complex64])
def test_unsupported_output_dtype(dt):  # scipy: TypeError too (float32/64, bool work)
    with pytest.raises(TypeError, match="unsupported output dtype"):
        voxa.label(np.ones((4, 5), bool), output=dt)
    with pytest.raises(TypeError, match="unsupported output dtype"):
        voxa.label(np.ones((4, 5), bool), output=np.zeros((4, 5), dt))


def test_mismatched_output_shape():
    with pytest.raises(ValueError, match=r"output has shape \(5, 4\)"):
        voxa.label(np.ones((4, 5), bool), output=np.zeros((5, 4), np.int32))


def test_complex_input():
    with pytest.raises(TypeError, match="complex"):
        voxa.label(np.ones((4, 5), np.complex64))


def test_overflow_uint16():
    a = np.zeros(2 * 65536 + 1, bool)
    a[::2] = True  # 65537 components
    with pytest.raises(ValueError, match="65537 components do not fit the output dtype uint16"):
        voxa.label(a, output=np.uint16)
    out = np.zeros(a.shape, np.uint16)
    with pytest.raises(ValueError, match="uint16"):
        voxa.label(a, output=out)
    a2 = a.copy()
    a2[-3:] = False  # 65535 components: fits
    got, n = voxa.label(a2, output=np.uint16)
    assert n == 65535 and got.max() == 65535
    assert voxa.label(a, output=np.uint32)[1] == 65537
    # 2-D: components in many lines
    b = np.zeros((514, 514), bool)
    b[::2, ::2] = True  # 257 * 257 = 66049
    with pytest.raises(ValueError, match="66049 components"):
        voxa.label(b, output=np.uint16)
    with pytest.raises(ValueError, match="int8"):
        voxa.label(b, output=np.int8)


# ---- CLI -----------------------------------------------------------------------------------

def run_cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


def test_cli_label(tmp_path):
    rng = np.random.default_rng(13)
    a = rng.random((10, 20, 30)) < 0.4
    src = tmp_path / "in.npy"
    np.save(src, a.astype(np.uint8))
    for c in (1, 2, 3):
        for dt in ("int32", "uint16", "uint32", "int64"):
            dst = tmp_path / f"lab_{c}_{dt}.npy"
            r = run_cli("--threads", "2", "label", src, "-o", dst, "--connectivity", c,
                        "--dtype", dt)
            assert r.returncode == 0, r.stderr
            want, wn = ndi.label(a, ndi.generate_binary_structure(3, c))
            assert r.stdout.strip() == str(wn)
            got = np.load(dst)
            assert got.dtype == np.dtype(dt)
            np.testing.assert_array_equal(got, want)
    r = run_cli("label", src, "-o", tmp_path / "default.npy")
    assert r.returncode == 0
    assert np.load(tmp_path / "default.npy").dtype == np.int32
    # a Fortran-ordered float input
    np.save(tmp_path / "f.npy", np.asfortranarray(a.astype(np.float32)))
    r = run_cli("label", tmp_path / "f.npy", "--output", tmp_path / "f_out.npy")
    assert r.returncode == 0
    np.testing.assert_array_equal(np.load(tmp_path / "f_out.npy"), ndi.label(a)[0])


def test_cli_help():
    r = run_cli("label", "--help")
    assert r.returncode == 0 and "usage: voxa label" in r.stdout


@pytest.mark.parametrize("args,code,msg", [
    (["label"], 2, "expected one input file"),
    (["label", "{src}"], 2, "missing -o"),
    (["label", "{src}", "-o", "{dst}", "--connectivity", "0"], 2, "--connectivity"),
    (["label", "{src}", "-o", "{dst}", "--connectivity", "x"], 2, "--connectivity"),
    (["label", "{src}", "-o", "{dst}", "--connectivity", "3"], 2, "out of range 1..2"),
    (["label", "{src}", "-o", "{dst}", "--dtype", "float32"], 2, "--dtype"),
    (["label", "{src}", "-o", "{dst}", "--bogus"], 2, "unknown option"),
    (["label", "{missing}", "-o", "{dst}"], 1, "cannot open"),
    (["label", "{corrupt}", "-o", "{dst}"], 1, "voxa: label:"),
    (["label", "{src}", "-o", "{nodir}"], 1, "voxa: label:"),
    (["label", "{many}", "-o", "{dst}", "--dtype", "uint16"], 1, "do not fit the output dtype uint16"),
])
def test_cli_errors(tmp_path, args, code, msg):
    src = tmp_path / "in.npy"
    np.save(src, np.eye(5, dtype=np.uint8))
    many = tmp_path / "many.npy"
    m = np.zeros(2 * 65536 + 1, np.uint8)
    m[::2] = 1
    np.save(many, m)
    corrupt = tmp_path / "corrupt.npy"
    corrupt.write_bytes(b"\x93NUMPY\x01\x00garbage")
    paths = dict(src=src, dst=tmp_path / "out.npy", missing=tmp_path / "missing.npy",
                 corrupt=corrupt, nodir=tmp_path / "no" / "such" / "dir" / "out.npy", many=many)
    r = run_cli(*[a.format(**paths) for a in args])
    assert r.returncode == code, (r.returncode, r.stderr)
    assert msg in r.stderr
    assert r.stderr.startswith("voxa")
    assert not (tmp_path / "out.npy").exists()
    assert not paths["nodir"].exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["in.npy", "many.npy", "corrupt.npy"])


@pytest.mark.parametrize("onescan", ["0", "2"])
@pytest.mark.parametrize("portable", ["0", "1"])
@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int8])
def test_byte_kernels_smooth_wide_lines(monkeypatch, portable, dtype, onescan):
    # Byte masks take SSE2 bit masks and a popcount counting pass (x86-64);
    # VOXA_LABEL_PORTABLE=1 forces the portable word-arithmetic kernels.
    # Smooth masks with lines of 63..200 voxels (runs crossing 64-voxel
    # words and the line's end), byte values with the high bit set; runs
    # found in two scans (count, fill: VOXA_LABEL_ONESCAN=0) or in one (2).
    monkeypatch.setenv("VOXA_LABEL_PORTABLE", portable)
    monkeypatch.setenv("VOXA_LABEL_ONESCAN", onescan)
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", "0")
    rng = np.random.default_rng(14)
    for w in (63, 64, 65, 127, 129, 200):
        f = ndi.gaussian_filter(rng.random((5, 9, w)), 1.5)
        m = f > np.quantile(f, 0.55)
        vals = rng.integers(1, 256, m.shape).astype(np.uint8).view(np.dtype(dtype)) \
            if dtype is not np.bool_ else np.ones(m.shape, bool)
        a = np.where(m, vals, 0).astype(dtype)
        a[:, :, -1] = vals[:, :, -1]  # runs reaching the line's end
        for c in (1, 2, 3):
            s = ndi.generate_binary_structure(3, c)
            want, wn = ndi.label(a, s)
            for t in (1, 2):
                voxa.set_threads(t)
                got, n = voxa.label(a, s)
                assert n == wn, (w, c, t)
                np.testing.assert_array_equal(got, want)
    voxa.set_threads(0)


@pytest.mark.parametrize("onescan", ["0", "1", "2"])
@pytest.mark.parametrize("dtype", [np.bool_, np.uint16, np.float32, np.int64])
def test_one_scan_modes(monkeypatch, onescan, dtype):
    # Runs in one scan into per-chunk buffers (VOXA_LABEL_ONESCAN=2; 1 = on
    # masks with few runs), copied into the table, against scipy: smooth and
    # noisy masks (noisy ones fall back to the bitmap union's fill), many
    # chunks (3 threads), custom structures without the last-axis neighbour.
    monkeypatch.setenv("VOXA_LABEL_ONESCAN", onescan)
    monkeypatch.setenv("VOXA_LABEL_BLOCKS", "0")
    rng = np.random.default_rng(41)
    f = ndi.gaussian_filter(rng.random((12, 30, 150)), 2)
    masks = [f > np.quantile(f, 0.6), rng.random((12, 30, 150)) < 0.5,
             np.zeros((4, 5, 6), bool), np.ones((3, 40, 2), bool)]
    nolast = np.ones((3, 3, 3), bool)
    nolast[1, 1, 0] = nolast[1, 1, 2] = False
    for m in masks:
        a = m.astype(dtype)
        for s in (ndi.generate_binary_structure(3, 1), ndi.generate_binary_structure(3, 3),
                  nolast):
            want, wn = ndi.label(a, s)
            for t in (1, 3):
                voxa.set_threads(t)
                got, n = voxa.label(a, s)
                assert n == wn, (m.shape, t)
                np.testing.assert_array_equal(got, want)
    voxa.set_threads(0)
