"""Parity of voxa.extract_patches / paste_patches with NumPy slicing, np.pad
and a Python loop over the rows, for every mode, op, dtype, 2D/3D/4D, borders,
strided views and thread counts; and the errors."""
import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck, strategies as st

import voxa

DTYPES = [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32,
          np.uint64, np.int64, np.float32, np.float64]
PAD = {"constant": "constant", "nearest": "edge", "reflect": "reflect"}


def rand(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def ref_corners(coords, size, centered):
    c = np.asarray(coords, dtype=np.float64).reshape(-1, len(size))
    if centered:
        c = np.rint(c) - np.array(size) // 2
    return c.astype(np.int64)


def ref_extract(img, coords, size, centered=False, mode="error", cval=0):
    """The reference: np.pad just enough for each patch, then slice."""
    k = len(size)
    corners = ref_corners(coords, size, centered)
    out = np.empty((len(corners),) + tuple(size) + img.shape[k:], img.dtype)
    for i, c in enumerate(corners):
        c = [int(x) for x in c]
        if mode == "clip":
            c = [min(max(c[d], 0), img.shape[d] - size[d]) for d in range(k)]
        lo = [max(0, -c[d]) for d in range(k)]
        hi = [max(0, c[d] + size[d] - img.shape[d]) for d in range(k)]
        src = img
        if any(lo) or any(hi):
            assert mode in PAD
            pad = list(zip(lo, hi)) + [(0, 0)] * (img.ndim - k)
            kw = {"constant_values": cval} if mode == "constant" else {}
            src = np.pad(img, pad, mode=PAD[mode], **kw)
        out[i] = src[tuple(slice(c[d] + lo[d], c[d] + lo[d] + size[d]) for d in range(k))]
    return out


def ref_paste(vol, patches, coords, centered=False, op="overwrite", mode="error"):
    vol = vol.copy()
    k = len(coords[0]) if len(coords) else vol.ndim
    size = patches.shape[1:1 + k]
    corners = ref_corners(coords, size, centered)
    acc = np.zeros(vol.shape, np.float64)
    cnt = np.zeros(vol.shape, np.int64)
    for i, c in enumerate(corners):
        c = [int(x) for x in c]
        if mode == "clip":
            c = [min(max(c[d], 0), vol.shape[d] - size[d]) for d in range(k)]
        vs, ps = [], []
        for d in range(k):
            a, b = max(c[d], 0), min(c[d] + size[d], vol.shape[d])
            if b <= a:
                break
            vs.append(slice(a, b))
            ps.append(slice(a - c[d], b - c[d]))
        else:
            v, p = tuple(vs), patches[i][tuple(ps)]
            if op == "overwrite":
                vol[v] = p
            elif op == "add":
                vol[v] = vol[v] + p if vol.dtype != np.bool_ else vol[v] | p
            elif op == "max":
                vol[v] = np.maximum(vol[v], p)
            else:
                acc[v] += p.astype(np.float64)
                cnt[v] += 1
    if op == "mean":
        m = acc / np.maximum(cnt, 1)
        if vol.dtype.kind != "f":
            m = np.rint(m)
        covered = cnt > 0
        vol[covered] = m[covered].astype(vol.dtype)
    return vol


@pytest.fixture(params=[1, 3], ids=["t1", "t3"])
def threads(request):
    voxa.set_threads(request.param)
    yield request.param
    voxa.set_threads(0)


def eq(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(a, b)


# ---- extraction: parity -------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["error", "clip", "constant", "nearest", "reflect"])
def test_extract_modes_dtypes(dtype, mode, threads):
    rng = np.random.default_rng(hash((np.dtype(dtype).str, mode)) % 2**32)
    for shape, size in [((13, 17), (4, 5)), ((6, 7, 9), (3, 2, 4)), ((5, 4, 6, 3), (2, 3, 2, 3)),
                        ((9, 11, 3), (4, 4))]:
        img = rand(shape, dtype, rng)
        k = len(size)
        if mode == "error":
            hi = [shape[d] - size[d] for d in range(k)]
            lo = [0] * k
        elif mode == "clip":
            lo = [-size[d] - 3 for d in range(k)]
            hi = [shape[d] + 3 for d in range(k)]
        else:
            lo = [-3 * shape[d] for d in range(k)]  # pads far wider than the image
            hi = [3 * shape[d] for d in range(k)]
        coords = np.stack([rng.integers(lo[d], hi[d], 60, endpoint=True) for d in range(k)], 1)
        cval = 1 if dtype is np.bool_ else 7
        got = voxa.extract_patches(img, coords, size, mode=mode, cval=cval)
        eq(got, ref_extract(img, coords, size, mode=mode, cval=cval))


@pytest.mark.parametrize("mode", ["constant", "nearest", "reflect"])
def test_extract_every_border_position(mode):
    rng = np.random.default_rng(1)
    for shape, size in [((7, 5), (3, 4)), ((1, 6), (3, 3)), ((4, 1, 5), (2, 3, 6)),
                        ((2, 3), (5, 7))]:
        img = rand(shape, np.int16, rng)
        k = len(size)
        axes = [np.arange(-size[d] - 2, shape[d] + 3) for d in range(k)]
        coords = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], 1)
        got = voxa.extract_patches(img, coords, size, mode=mode, cval=-5)
        eq(got, ref_extract(img, coords, size, mode=mode, cval=-5))


def test_extract_error_mode_every_inside_position(threads):
    img = np.arange(8 * 9, dtype=np.uint8).reshape(8, 9)
    for size in [(1, 1), (3, 4), (8, 9), (8, 1)]:
        axes = [np.arange(0, img.shape[d] - size[d] + 1) for d in range(2)]
        coords = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], 1)
        eq(voxa.extract_patches(img, coords, size), ref_extract(img, coords, size))


def test_extract_size_one_whole_image_duplicates_empty():
    rng = np.random.default_rng(2)
    img = rand((6, 5, 4), np.float32, rng)
    eq(voxa.extract_patches(img, [[0, 0, 0]], img.shape)[0], img)
    eq(voxa.extract_patches(img, [[0]], (6,))[0], img)
    c = [[1, 2, 3], [1, 2, 3], [0, 0, 0], [1, 2, 3]]
    got = voxa.extract_patches(img, c, (1, 1, 1))
    eq(got[:, 0, 0, 0], np.array([img[1, 2, 3], img[1, 2, 3], img[0, 0, 0], img[1, 2, 3]]))
    empty = voxa.extract_patches(img, np.zeros((0, 3), np.int64), (2, 2, 2))
    assert empty.shape == (0, 2, 2, 2) and empty.dtype == img.dtype
    assert voxa.extract_patches(img, [], (2, 2)).shape == (0, 2, 2, 4)
    zero = voxa.extract_patches(img, [[1, 1], [2, 2]], (0, 3), mode="reflect")
    assert zero.shape == (2, 0, 3, 4)


def test_extract_strided_inputs_and_out(threads):
    rng = np.random.default_rng(3)
    base = rand((20, 30, 8), np.uint16, rng)
    views = [base[::2, 1::3], base.transpose(1, 0, 2), base[::-1, ::-2, 3],
             np.asfortranarray(base), base[:, :, ::-1], base[2:15, 4:20, 0]]
    for img in views:
        k = 2
        size = (3, 4)
        coords = np.stack([rng.integers(-4, img.shape[d] + 1, 40) for d in range(k)], 1)
        for mode in ["constant", "reflect", "nearest"]:
            eq(voxa.extract_patches(img, coords, size, mode=mode),
               ref_extract(img, coords, size, mode=mode))
        # A strided out is filled in place.
        shape = (40,) + size + img.shape[2:]
        big = np.zeros((shape[0] * 2,) + shape[1:], img.dtype)
        out = big[::2]
        r = voxa.extract_patches(img, coords, size, mode="nearest", out=out)
        assert r is out
        eq(out, ref_extract(img, coords, size, mode="nearest"))
        assert not big[1::2].any()


def test_extract_into_fortran_out():
    img = np.arange(200, dtype=np.int32).reshape(10, 20)
    coords = [[0, 0], [5, 14], [-2, 18]]
    out = np.asfortranarray(np.zeros((3, 4, 6), np.int32))
    voxa.extract_patches(img, coords, (4, 6), mode="reflect", out=out)
    eq(out, ref_extract(img, coords, (4, 6), mode="reflect"))


def test_extract_big_many_patches_threads(threads):
    rng = np.random.default_rng(4)
    img = rand((300, 400), np.uint8, rng)
    coords = np.stack([rng.integers(-40, 360, 3000), rng.integers(-40, 420, 3000)], 1)
    eq(voxa.extract_patches(img, coords, (64, 64), mode="constant"),
       ref_extract(img, coords, (64, 64), mode="constant"))
    coords = np.stack([rng.integers(0, 236, 3000), rng.integers(0, 336, 3000)], 1)
    eq(voxa.extract_patches(img, coords, (64, 64)), ref_extract(img, coords, (64, 64)))


def test_centres_rounding_half_to_even():
    img = np.arange(100, dtype=np.int64).reshape(10, 10)
    # corner = rint(centre) - size // 2; rint(2.5) = 2, rint(3.5) = 4, rint(-0.5) = -0.
    c = np.array([[2.5, 3.5], [4.0, 4.0], [-0.5, 5.5], [4.49, 4.51]])
    got = voxa.extract_patches(img, c, (3, 2), centered=True, mode="constant")
    corners = [(2 - 1, 4 - 1), (4 - 1, 4 - 1), (0 - 1, 6 - 1), (4 - 1, 5 - 1)]
    eq(got, ref_extract(img, corners, (3, 2), mode="constant"))
    eq(got, ref_extract(img, c, (3, 2), centered=True, mode="constant"))
    # Integer centres, even and odd sizes.
    ci = np.array([[5, 5], [0, 9]])
    eq(voxa.extract_patches(img, ci, (4, 3), centered=True, mode="reflect"),
       ref_extract(img, ci - np.array([2, 1]), (4, 3), mode="reflect"))


def test_integral_float_corners_accepted():
    img = np.arange(30, dtype=np.uint8).reshape(5, 6)
    eq(voxa.extract_patches(img, np.array([[1.0, 2.0]]), (2, 2)),
       ref_extract(img, [[1, 2]], (2, 2)))


def test_pandas_table():
    pd = pytest.importorskip("pandas")
    img = np.arange(4 * 5 * 6, dtype=np.uint16).reshape(4, 5, 6)
    df = pd.DataFrame({"x": [1, 2], "ID": [7, 8], "z": [0, 1], "y": [2, 0]})
    eq(voxa.extract_patches(img, df, (2, 3, 3)),
       ref_extract(img, [[0, 2, 1], [1, 0, 2]], (2, 3, 3)))
    df2 = pd.DataFrame({"y": [1.0], "x": [2.0]})
    eq(voxa.extract_patches(img[0], df2, (2, 2)), ref_extract(img[0], [[1, 2]], (2, 2)))
    df3 = pd.DataFrame({"axis1": [1], "axis0": [2]})
    eq(voxa.extract_patches(img, df3, (2, 2)), ref_extract(img, [[2, 1]], (2, 2)))
    with pytest.raises(ValueError, match="no column 'z'"):
        voxa.extract_patches(img, df2, (2, 2, 2))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_extract_hypothesis(data):
    ndim = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim)))
    k = data.draw(st.integers(1, ndim))
    size = tuple(data.draw(st.lists(st.integers(0, 9), min_size=k, max_size=k)))
    mode = data.draw(st.sampled_from(["constant", "nearest", "reflect", "clip"]))
    if mode == "clip":
        size = tuple(min(s, shape[d]) for d, s in enumerate(size))
    n = data.draw(st.integers(0, 6))
    coords = np.array(data.draw(st.lists(st.lists(st.integers(-12, 12), min_size=k, max_size=k),
                                         min_size=n, max_size=n)), dtype=np.int64).reshape(n, k)
    dtype = data.draw(st.sampled_from(DTYPES))
    img = rand(shape, dtype, np.random.default_rng(n))
    eq(voxa.extract_patches(img, coords, size, mode=mode, cval=1),
       ref_extract(img, coords, size, mode=mode, cval=1))


# ---- extraction: errors -------------------------------------------------------

def test_extract_errors():
    img = np.zeros((10, 12), np.uint8)
    with pytest.raises(ValueError, match="row 2 reaches outside the array on axis 1"):
        voxa.extract_patches(img, [[0, 0], [5, 5], [1, 9], [-1, 0]], (4, 4))
    with pytest.raises(ValueError, match="row 0 reaches outside"):
        voxa.extract_patches(img, [[0, 0]], (11, 4))  # patch larger than the image
    with pytest.raises(ValueError, match="clip"):
        voxa.extract_patches(img, [[0, 0]], (11, 4), mode="clip")
    with pytest.raises(ValueError, match="size has 3 entries but image has 2"):
        voxa.extract_patches(img, [[0, 0, 0]], (2, 2, 2))
    with pytest.raises(ValueError, match="3 columns but size has 2"):
        voxa.extract_patches(img, [[0, 0, 0]], (2, 2))
    with pytest.raises(ValueError, match="row 1 .* not integral"):
        voxa.extract_patches(img, [[0, 0], [1.5, 2]], (2, 2))
    with pytest.raises(ValueError, match="row 0 is not finite"):
        voxa.extract_patches(img, [[np.nan, 0]], (2, 2), centered=True)
    with pytest.raises(ValueError, match="size\\[1\\] = -2 is negative"):
        voxa.extract_patches(img, [[0, 0]], (2, -2))
    with pytest.raises(TypeError, match="size"):
        voxa.extract_patches(img, [[0, 0]], (2, 2.5))
    with pytest.raises(ValueError, match="out: shape"):
        voxa.extract_patches(img, [[0, 0]], (2, 2), out=np.zeros((1, 2, 3), np.uint8))
    with pytest.raises(TypeError, match="out: dtype"):
        voxa.extract_patches(img, [[0, 0]], (2, 2), out=np.zeros((1, 2, 2), np.uint16))
    with pytest.raises(ValueError, match="cval"):
        voxa.extract_patches(img, [[-1, 0]], (2, 2), mode="constant", cval=300)
    with pytest.raises(ValueError, match="cval"):
        voxa.extract_patches(img, [[-1, 0]], (2, 2), mode="constant", cval=1.5)
    with pytest.raises(ValueError, match="mode"):
        voxa.extract_patches(img, [[0, 0]], (2, 2), mode="wrap")
    with pytest.raises(ValueError, match="outside int64"):
        voxa.extract_patches(img, [[2.0**70, 0]], (2, 2))
    with pytest.raises(ValueError, match="overflows int64"):
        voxa.extract_patches(img, [[np.iinfo(np.int64).max, 0]], (2, 2), mode="constant")
    with pytest.raises(ValueError, match="axis 1 of length 0"):
        voxa.extract_patches(np.zeros((3, 0)), [[0, 0]], (1, 1), mode="reflect")
    with pytest.raises(TypeError):
        voxa.extract_patches(img, np.array([[True, False]]), (2, 2))
    # float cval into float images may be anything, NaN included.
    r = voxa.extract_patches(img.astype(np.float32), [[-1, 0]], (2, 2), mode="constant",
                             cval=np.nan)
    assert np.isnan(r[0, 0]).all() and (r[0, 1] == 0).all()


# ---- paste ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["overwrite", "add", "max", "mean"])
def test_paste_ops_dtypes(dtype, op, threads):
    rng = np.random.default_rng(hash((np.dtype(dtype).str, op)) % 2**32)
    for shape, size, mode in [((13, 17), (4, 5), "crop"), ((6, 7, 9), (3, 2, 4), "clip"),
                              ((5, 4, 6, 3), (2, 3, 2, 3), "crop"), ((9, 11, 3), (4, 4), "error")]:
        vol = rand(shape, dtype, rng)
        k = len(size)
        if mode == "error":
            coords = np.stack([rng.integers(0, shape[d] - size[d], 50, endpoint=True)
                               for d in range(k)], 1)
        else:
            coords = np.stack([rng.integers(-size[d] - 1, shape[d] + 1, 50) for d in range(k)], 1)
        coords[10] = coords[3]  # duplicates: the later row wins / counts twice
        patches = rand((50,) + size + shape[k:], dtype, rng)
        want = ref_paste(vol, patches, coords, op=op, mode=mode)
        got = vol.copy()
        r = voxa.paste_patches(got, patches, coords, op=op, mode=mode)
        assert r is got
        eq(got, want)


def test_paste_big_volume_many_slabs(threads):
    # More than one 2^20-voxel slab, patches straddling slab edges.
    rng = np.random.default_rng(5)
    vol = np.zeros((40, 200, 300), np.float32)
    coords = np.stack([rng.integers(-5, 40, 300), rng.integers(-5, 200, 300),
                       rng.integers(-5, 300, 300)], 1)
    patches = rand((300, 9, 16, 16), np.float32, rng)
    for op in ["overwrite", "add", "max", "mean"]:
        got = voxa.paste_patches(vol.copy(), patches, coords, op=op, mode="crop")
        eq(got, ref_paste(vol, patches, coords, op=op, mode="crop"))


def test_paste_strided_volume_and_patches(threads):
    rng = np.random.default_rng(6)
    base = rand((30, 40), np.int32, rng)
    vol = base[::2, ::-3]
    coords = np.stack([rng.integers(-2, 15, 30), rng.integers(-2, 14, 30)], 1)
    patches = rand((30, 6, 3), np.int32, rng).transpose(0, 2, 1)[:, ::-1]  # (30, 3, 6)
    want = ref_paste(vol, patches, coords, op="add", mode="crop")
    before = base.copy()
    voxa.paste_patches(vol, patches, coords, op="add", mode="crop")
    eq(vol, want)
    mask = np.ones(base.shape, bool)
    mask[::2, ::-3] = False
    eq(base[mask], before[mask])  # nothing outside the view changed


def test_paste_mean_and_nan_max_semantics():
    vol = np.zeros((4, 4), np.uint8)
    p = np.array([[[1, 2]], [[2, 3]], [[2, 2]]], np.uint8)  # (3, 1, 2)
    voxa.paste_patches(vol, p, [[0, 0], [0, 0], [0, 1]], op="mean")
    # (0,0): (1+2)/2 = 1.5 -> 2; (0,1): (2+3+2)/3 = 2.33 -> 2; (0,2): 2
    eq(vol[0], np.array([2, 2, 2, 0], np.uint8))
    v = np.array([[1.0, np.nan, 3.0]])
    voxa.paste_patches(v, np.array([[[np.nan, 2.0, 1.0]]]), [[0, 0]], op="max")
    assert np.isnan(v[0, 0]) and np.isnan(v[0, 1]) and v[0, 2] == 3.0
    w = np.array([250, 5], np.uint8)
    voxa.paste_patches(w, np.array([[10, 10]], np.uint8), [[0]], op="add")
    eq(w, np.array([4, 15], np.uint8))  # wraps like NumPy


def test_paste_roundtrip_tiled():
    # Extract overlapping padded tiles, paste back with mean/crop: the image again.
    rng = np.random.default_rng(7)
    img = rand((50, 70), np.float64, rng)
    ys, xs = np.meshgrid(np.arange(-4, 50, 12), np.arange(-4, 70, 12), indexing="ij")
    coords = np.stack([ys.ravel(), xs.ravel()], 1)
    tiles = voxa.extract_patches(img, coords, (20, 20), mode="reflect")
    out = voxa.paste_patches(np.zeros_like(img), tiles, coords, op="mean", mode="crop")
    np.testing.assert_allclose(out, img, rtol=1e-15)
    out2 = voxa.paste_patches(np.zeros_like(img), tiles, coords, op="overwrite", mode="crop")
    eq(out2, img)


def test_paste_centred_and_empty():
    vol = np.zeros((6, 6), np.int16)
    voxa.paste_patches(vol, np.full((1, 3, 3), 5, np.int16), [[2.5, 2.5]], centered=True)
    want = np.zeros((6, 6), np.int16)
    want[1:4, 1:4] = 5
    eq(vol, want)
    voxa.paste_patches(vol, np.zeros((0, 3, 3), np.int16), np.zeros((0, 2)))
    voxa.paste_patches(vol, np.zeros((0, 3, 3), np.int16), [])
    eq(vol, want)


def test_paste_errors():
    vol = np.zeros((8, 8), np.uint8)
    p = np.ones((3, 4, 4), np.uint8)
    with pytest.raises(ValueError, match="row 1 reaches outside the array on axis 0"):
        voxa.paste_patches(vol, p, [[0, 0], [6, 0], [-1, -1]])
    assert not vol.any()
    with pytest.raises(ValueError, match="op"):
        voxa.paste_patches(vol, p, [[0, 0]] * 3, op="min")
    with pytest.raises(ValueError, match="mode"):
        voxa.paste_patches(vol, p, [[0, 0]] * 3, mode="reflect")
    with pytest.raises(ValueError, match="3 patches but 2"):
        voxa.paste_patches(vol, p, [[0, 0]] * 2)
    with pytest.raises(ValueError, match="patches"):
        voxa.paste_patches(vol, np.ones((3, 4, 4, 2), np.uint8), [[0, 0]] * 3)
    with pytest.raises(ValueError, match="shape"):
        voxa.paste_patches(np.zeros((8, 8, 2), np.uint8), np.ones((3, 4, 4, 3), np.uint8),
                           [[0, 0]] * 3)
    with pytest.raises(TypeError, match="cannot cast"):
        voxa.paste_patches(vol, p.astype(np.float32), [[0, 0]] * 3)
    with pytest.raises(TypeError, match="writable NumPy array"):
        voxa.paste_patches([[0] * 8] * 8, p, [[0, 0]] * 3)
    ro = np.zeros((8, 8), np.uint8)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        voxa.paste_patches(ro, p, [[0, 0]] * 3)
    with pytest.raises(ValueError, match="not integral"):
        voxa.paste_patches(vol, p, [[0, 0], [0, 0.5], [0, 0]])
    with pytest.raises(ValueError, match="clip"):
        voxa.paste_patches(vol, np.ones((1, 9, 2), np.uint8), [[0, 0]], mode="clip")


# ---- CLI ------------------------------------------------------------------------

from conftest import CLI  # noqa: E402


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)




def test_cli_roi_npy(tmp_path):
    rng = np.random.default_rng(8)
    img = rand((30, 40), np.uint16, rng)
    np.save(tmp_path / "img.npy", img)
    coords = np.array([[0, 0], [-3, 35], [29, 10]], np.int64)
    np.save(tmp_path / "c.npy", coords)
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "c.npy", "--size", "5,6",
            "--mode", "constant", "--value", "9", "-o", tmp_path / "p.npy")
    assert r.returncode == 0, r.stderr
    eq(np.load(tmp_path / "p.npy"), ref_extract(img, coords, (5, 6), mode="constant", cval=9))
    np.save(tmp_path / "cf.npy", np.array([[10.5, 20.5]]))
    r = run("roi", tmp_path / "img.npy", "--centres", tmp_path / "cf.npy", "--size", "4,4",
            "-o", tmp_path / "q.npy")
    assert r.returncode == 0, r.stderr
    eq(np.load(tmp_path / "q.npy"), ref_extract(img, [[10.5, 20.5]], (4, 4), centered=True))
    # paste them back
    np.save(tmp_path / "vol.npy", np.zeros((30, 40), np.uint16))
    r = run("paste", tmp_path / "p.npy", "--corners", tmp_path / "c.npy", "--volume",
            tmp_path / "vol.npy", "--op", "add", "--mode", "crop", "-o", tmp_path / "v2.npy")
    assert r.returncode == 0, r.stderr
    p = np.load(tmp_path / "p.npy")
    eq(np.load(tmp_path / "v2.npy"),
       ref_paste(np.zeros((30, 40), np.uint16), p, coords, op="add", mode="crop"))
    r = run("paste", tmp_path / "p.npy", "--corners", tmp_path / "c.npy", "--shape", "30,40",
            "--mode", "crop", "-o", tmp_path / "v3.npy")
    assert r.returncode == 0, r.stderr
    eq(np.load(tmp_path / "v3.npy"),
       ref_paste(np.zeros((30, 40), np.uint16), p, coords, mode="crop"))


def test_cli_errors(tmp_path):
    img = np.zeros((10, 10), np.uint8)
    np.save(tmp_path / "img.npy", img)
    np.save(tmp_path / "c.npy", np.array([[0, 0], [8, 8]]))
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "c.npy", "--size", "4,4",
            "-o", tmp_path / "p.npy")
    assert r.returncode == 1 and "voxa: roi:" in r.stderr and "row 1" in r.stderr
    assert not (tmp_path / "p.npy").exists()
    r = run("roi", tmp_path / "img.npy", "--size", "4,4", "-o", tmp_path / "p.npy")
    assert r.returncode == 2 and "voxa: roi:" in r.stderr
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "c.npy", "--size", "4,x",
            "-o", tmp_path / "p.npy")
    assert r.returncode == 2
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "c.npy", "--size", "4,4",
            "--mode", "wrap", "-o", tmp_path / "p.npy")
    assert r.returncode == 2 and "wrap" in r.stderr
    np.save(tmp_path / "cf.npy", np.array([[0.5, 1.0]]))
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "cf.npy", "--size", "4,4",
            "-o", tmp_path / "p.npy")
    assert r.returncode == 1 and "not an integer" in r.stderr
    r = run("paste", tmp_path / "img.npy", "--corners", tmp_path / "c.npy", "-o",
            tmp_path / "v.npy")
    assert r.returncode == 2  # neither --volume nor --shape


def test_cli_roi_csv(tmp_path):
    rng = np.random.default_rng(9)
    img = rand((12, 30, 40), np.uint8, rng)
    np.save(tmp_path / "img.npy", img)
    (tmp_path / "c.csv").write_text("ID,x,y,z,mass\n1,3,4,5,0.5\n2,38,-2,11,1\n")
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "c.csv", "--size", "3,4,5",
            "--mode", "reflect", "-o", tmp_path / "p.npy")
    assert r.returncode == 0, r.stderr
    want = ref_extract(img, [[5, 4, 3], [11, -2, 38]], (3, 4, 5), mode="reflect")
    eq(np.load(tmp_path / "p.npy"), want)
    (tmp_path / "a.csv").write_text("axis0,axis1\n1,2\n")
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "a.csv", "--size", "3,4",
            "-o", tmp_path / "p2.npy")
    assert r.returncode == 0, r.stderr
    eq(np.load(tmp_path / "p2.npy"), ref_extract(img, [[1, 2]], (3, 4)))
    (tmp_path / "b.csv").write_text("x,y\n1,2\n")
    r = run("roi", tmp_path / "img.npy", "--corners", tmp_path / "b.csv", "--size", "3,4,5",
            "-o", tmp_path / "p3.npy")
    assert r.returncode == 1 and "column" in r.stderr and "'z'" in r.stderr


def test_extract_large_output_streaming_and_misaligned(threads):
    # A 34 MB output into an allocated (aligned) out and a 1-byte-shifted one
    # (never streamed); every forced copy path is in test_roi_stores.py.
    rng = np.random.default_rng(10)
    img = rand((600, 700), np.uint8, rng)
    n, size = 2100, (128, 128)  # 34 MB
    coords = np.stack([rng.integers(0, 600 - 128, n, endpoint=True),
                       rng.integers(0, 700 - 128, n, endpoint=True)], 1)
    got = voxa.extract_patches(img, coords, size)
    for i in range(0, n, 97):
        y, x = coords[i]
        eq(got[i], img[y:y + 128, x:x + 128])
    eq(got, img[coords[:, :1, None] + np.arange(128)[None, :, None],
                coords[:, 1:, None] + np.arange(128)[None, None, :]])
    buf = np.zeros(got.size + 1, np.uint8)
    out = buf[1:].reshape(got.shape)
    voxa.extract_patches(img, coords, size, out=out)
    eq(out, got)
    del got, out, buf


def test_zero_length_axes():
    img = np.zeros((3, 0), np.int32)
    c = [[0, -1], [2, 0], [-1, -2]]
    eq(voxa.extract_patches(img, c, (2, 2), mode="constant", cval=4),
       ref_extract(img, c, (2, 2), mode="constant", cval=4))
    img3 = np.ones((4, 5, 0), np.uint8)
    r = voxa.extract_patches(img3, [[0, 0], [-3, 4]], (2, 2), mode="reflect")
    assert r.shape == (2, 2, 2, 0)
    with pytest.raises(ValueError, match="reaches outside"):
        voxa.extract_patches(img, [[0, 0]], (1, 1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_paste_hypothesis(data):
    ndim = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 7), min_size=ndim, max_size=ndim)))
    k = data.draw(st.integers(1, ndim))
    size = tuple(data.draw(st.lists(st.integers(1, 8), min_size=k, max_size=k)))
    op = data.draw(st.sampled_from(["overwrite", "add", "max", "mean"]))
    mode = data.draw(st.sampled_from(["crop", "clip"]))
    if mode == "clip":
        size = tuple(min(s, shape[d]) for d, s in enumerate(size))
    n = data.draw(st.integers(0, 8))
    coords = np.array(data.draw(st.lists(st.lists(st.integers(-9, 9), min_size=k, max_size=k),
                                         min_size=n, max_size=n)), dtype=np.int64).reshape(n, k)
    dtype = data.draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(n)
    vol = rand(shape, dtype, rng)
    patches = rand((n,) + size + shape[k:], dtype, rng)
    got = voxa.paste_patches(vol.copy(), patches, coords, op=op, mode=mode)
    eq(got, ref_paste(vol, patches, coords, op=op, mode=mode))


def test_paste_mean_1d_many_slabs(threads):
    # A 1-d volume longer than a slab: the slab is the row.
    rng = np.random.default_rng(11)
    vol = rand((700_000,), np.float64, rng)
    coords = rng.integers(-50, 700_000, (500, 1))
    patches = rand((500, 3000), np.float64, rng)
    for op in ["mean", "overwrite", "add"]:
        got = voxa.paste_patches(vol.copy(), patches, coords, op=op, mode="crop")
        eq(got, ref_paste(vol, patches, coords, op=op, mode="crop"))


def test_paste_pandas_table():
    pd = pytest.importorskip("pandas")
    vol = np.zeros((4, 5, 6), np.int32)
    p = np.arange(2 * 2 * 2 * 6, dtype=np.int32).reshape(2, 2, 2, 6)
    # z, y, x columns -> k = 3, size (2, 2, 6): x = 1 fits, x = 9 does not.
    df = pd.DataFrame({"x": [0, 9], "y": [0, 3], "z": [1, 2]})
    with pytest.raises(ValueError, match="row 1 reaches outside the array on axis 2"):
        voxa.paste_patches(vol, p, df)
    got = voxa.paste_patches(vol.copy(), p, df, mode="crop")
    eq(got, ref_paste(vol, p, [[1, 0, 0], [2, 3, 9]], mode="crop"))
    df2 = pd.DataFrame({"axis0": [1, 2], "axis1": [0, 3], "mass": [0.1, 0.2]})
    got = voxa.paste_patches(vol.copy(), p, df2, op="add")
    eq(got, ref_paste(vol, p, [[1, 0], [2, 3]], op="add"))
