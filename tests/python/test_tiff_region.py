"""TIFF region reads (voxa_tiff_open / voxa_tiff_read_region, through ctypes):
every box equals NumPy slicing of tifffile's whole read, for striped and
tiled files, compressed or not, 2-D and 3-D, both byte orders, ImageJ
stacks; only the touched strips/tiles are decoded (a corrupt strip outside
the box does not matter, one inside is named)."""
import ctypes as C
import os
import sys

import numpy as np
import pytest

tifffile = pytest.importorskip("tifffile")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import CLI  # noqa: E402
from zarr_ctypes import DTYPES, Array, _i64, _view  # noqa: E402

lib = C.CDLL(os.path.join(os.path.dirname(CLI), "libvoxa.so"))
lib.voxa_last_error.restype = C.c_char_p
lib.voxa_tiff_open.argtypes = [C.c_char_p, C.POINTER(C.c_void_p)]
lib.voxa_tiff_read_region.argtypes = [C.c_void_p, C.POINTER(C.c_int64), C.POINTER(Array)]
lib.voxa_tiff_close.argtypes = [C.c_void_p]
lib.voxa_tiff_close.restype = None
lib.voxa_tiff_get_shape.argtypes = [C.c_void_p, C.POINTER(C.c_int), C.POINTER(C.c_int),
                                    C.POINTER(C.c_int64)]
RNG = np.random.default_rng(7)


class TiffError(Exception):
    pass


def check(st):
    if st:
        raise TiffError(lib.voxa_last_error().decode())


def open_tiff(p):
    h = C.c_void_p()
    check(lib.voxa_tiff_open(os.fsencode(p), C.byref(h)))
    return h


def shape_of(h):
    dt, nd, sh = C.c_int(), C.c_int(), (C.c_int64 * 8)()
    check(lib.voxa_tiff_get_shape(h, C.byref(dt), C.byref(nd), sh))
    return DTYPES[dt.value], tuple(sh[:nd.value])


def region(h, lo, shape, dtype, strided=False):
    out = np.zeros([s * (2 if strided else 1) for s in shape], dtype)
    if strided:
        out = out[tuple(slice(None, None, 2) for _ in shape)]
    v = _view(out)
    check(lib.voxa_tiff_read_region(h, _i64(lo), C.byref(v)))
    return out


def boxes(shape, n=12):
    for _ in range(n):
        lo = [int(RNG.integers(0, s)) for s in shape]
        ext = [int(RNG.integers(1, s - l + 1)) for s, l in zip(shape, lo)]
        yield lo, ext


@pytest.mark.parametrize("kw", [dict(), dict(rowsperstrip=7), dict(tile=(16, 32)),
                                dict(tile=(16, 16), compression="zlib"),
                                dict(rowsperstrip=5, compression="zlib", predictor=True),
                                dict(byteorder=">", tile=(32, 16)), dict(imagej=True),
                                dict(bigtiff=True, rowsperstrip=3)],
                         ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "plain")
@pytest.mark.parametrize("shape,dtype", [((5, 70, 45), "uint16"), ((61, 50), "float32"),
                                         ((3, 33, 40), "int32")])
def test_regions_equal_slicing(tmp_path, kw, shape, dtype):
    if kw.get("imagej") and dtype == "int32":
        return  # ImageJ has no int32
    a = (RNG.random(shape) * 30000).astype(dtype)
    p = tmp_path / "a.tif"
    tifffile.imwrite(p, a, photometric="minisblack", **kw)
    whole = tifffile.imread(p)
    h = open_tiff(p)
    try:
        assert shape_of(h) == (np.dtype(dtype).name, shape)
        for i, (lo, ext) in enumerate(boxes(shape)):
            got = region(h, lo, ext, dtype, strided=i % 2 == 1)
            np.testing.assert_array_equal(got, whole[tuple(slice(l, l + e) for l, e in zip(lo, ext))])
    finally:
        lib.voxa_tiff_close(h)


@pytest.mark.parametrize("byteorder", ["<", ">"])
def test_imagej_raw_stack_over_one_ifd(tmp_path, byteorder):
    # truncate=True: one IFD + all pages contiguous (ImageJ's > 4 GB layout)
    a = (RNG.random((6, 20, 30)) * 60000).astype(np.uint16)
    p = tmp_path / "ij.tif"
    tifffile.imwrite(p, a, imagej=True, truncate=True, byteorder=byteorder)
    with tifffile.TiffFile(p) as t:
        assert len(t.pages) == 1  # really the single-IFD layout
    h = open_tiff(p)
    try:
        assert shape_of(h) == ("uint16", a.shape)
        for i, (lo, ext) in enumerate(boxes(a.shape)):
            np.testing.assert_array_equal(region(h, lo, ext, "uint16", strided=i % 2 == 1),
                                          a[tuple(slice(l, l + e) for l, e in zip(lo, ext))])
    finally:
        lib.voxa_tiff_close(h)


def test_only_touched_strips_are_decoded(tmp_path):
    a = np.arange(40 * 16, dtype=np.uint16).reshape(40, 16)
    p = tmp_path / "s.tif"
    tifffile.imwrite(p, a, rowsperstrip=10, compression="zlib")
    with tifffile.TiffFile(p) as t:
        off = t.pages[0].dataoffsets[3]  # strip 3: rows 30..39
    raw = bytearray(p.read_bytes())
    raw[off:off + 8] = b"\xff" * 8
    p.write_bytes(bytes(raw))
    h = open_tiff(p)
    try:
        np.testing.assert_array_equal(region(h, [0, 0], (30, 16), "uint16"), a[:30])
        with pytest.raises(TiffError, match="strip 3"):
            region(h, [25, 0], (10, 16), "uint16")
    finally:
        lib.voxa_tiff_close(h)


def test_errors(tmp_path):
    p = tmp_path / "rgb.tif"
    tifffile.imwrite(p, np.zeros((8, 8, 3), np.uint8), photometric="rgb")
    with pytest.raises(TiffError, match="one 8..64-bit sample"):
        open_tiff(p)
    p = tmp_path / "g.tif"
    tifffile.imwrite(p, np.zeros((8, 9), np.uint8))
    h = open_tiff(p)
    try:
        with pytest.raises(TiffError, match="axis 1"):
            region(h, [0, 5], (8, 5), "uint8")
        with pytest.raises(TiffError, match="uint16"):
            region(h, [0, 0], (8, 9), "uint16")
    finally:
        lib.voxa_tiff_close(h)
    with pytest.raises(TiffError, match="cannot open"):
        open_tiff(tmp_path / "missing.tif")
