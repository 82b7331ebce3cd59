"""io: .npy and TIFF round trips and parity with numpy/tifffile, CSV tables,
and every bad file the issue lists (clear error, nothing written, no crash)."""
import os
import stat
import struct
import subprocess
import sys

import numpy as np
import pytest
import tifffile

import voxa
from voxa import _voxa

DTYPES = ["bool", "u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "f4", "f8"]
TIFF_DTYPES = [d for d in DTYPES if d != "bool"]


def rand(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == bool:
        return rng.random(shape) < 0.5
    if dt.kind == "f":
        a = rng.standard_normal(shape).astype(dt) * 1000
        if a.size > 2:
            a.flat[0], a.flat[1] = np.inf, np.nan
        return a
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def listdir_clean(d):
    """No temporary left behind."""
    return [n for n in os.listdir(d) if ".tmp-" in n]


# ---- .npy ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 0, 2), (7, 5), (2, 3, 4), (1, 1, 9), (2, 1, 3, 2, 1)])
def test_npy_roundtrip(tmp_path, dtype, shape):
    a = rand(shape, dtype)
    p = tmp_path / "a.npy"
    voxa.imwrite(p, a)
    assert same(np.load(p), a)
    assert same(voxa.imread(p), a)
    np.save(p, a)
    assert same(voxa.imread(p), a)
    assert not listdir_clean(tmp_path)


@pytest.mark.parametrize("dtype", DTYPES)
def test_npy_fortran_bigendian_strided(tmp_path, dtype):
    a = rand((4, 5, 6), dtype, seed=1)
    p = tmp_path / "a.npy"
    np.save(p, np.asfortranarray(a))          # fortran_order True
    b = voxa.imread(p)
    assert same(b, a)
    if np.dtype(dtype).itemsize > 1:
        np.save(p, a.astype(np.dtype(dtype).newbyteorder(">")))
        assert same(voxa.imread(p), a)
        voxa.imwrite(p, a.astype(np.dtype(dtype).newbyteorder(">")))
        assert same(np.load(p), a)
    views = [a[::2, 1:, ::-1], a.transpose(2, 0, 1), np.asfortranarray(a), a[:, 3], a[..., ::3]]
    for v in views:
        voxa.imwrite(p, v)
        assert same(np.load(p), np.ascontiguousarray(v))


def test_npy_versions_2_and_3(tmp_path):
    a = rand((3, 4), "f4")
    for version in [(2, 0), (3, 0)]:
        p = tmp_path / f"v{version[0]}.npy"
        with open(p, "wb") as f:
            np.lib.format.write_array(f, a, version=version)
        assert same(voxa.imread(p), a)


# ---- .npy bad files --------------------------------------------------------------

def npy_bytes(a):
    import io
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def test_missing_file(tmp_path):
    for ext in ("npy", "tif", "tiff"):
        with pytest.raises(OSError, match="No such file"):
            voxa.imread(tmp_path / f"nope.{ext}")
    with pytest.raises(OSError, match="nope.csv"):
        voxa.read_csv(tmp_path / "nope.csv")


def test_directory_is_not_a_file(tmp_path):
    for ext in ("npy", "tif", "csv"):
        d = tmp_path / f"dir.{ext}"
        d.mkdir()
        with pytest.raises(OSError, match="not a regular file"):
            voxa.read_csv(d) if ext == "csv" else voxa.imread(d)


def test_unknown_extension(tmp_path):
    with pytest.raises(TypeError, match="unknown extension"):
        voxa.imread(tmp_path / "a.png")
    with pytest.raises(TypeError, match="unknown extension"):
        voxa.imwrite(tmp_path / "a.png", np.zeros((2, 2)))
    assert not os.listdir(tmp_path)


def test_npy_truncated_and_corrupt(tmp_path):
    good = npy_bytes(rand((10, 10), "u2"))
    p = tmp_path / "a.npy"
    for what, data in [("too short", good[:5]), ("bad magic", b"\x93NUMPX" + good[6:]),
                       ("truncated", good[:40]), ("truncated", good[:len(good) - 1]),
                       ("version", good[:6] + b"\x07" + good[7:]),
                       ("too short", b"")]:
        p.write_bytes(data)
        with pytest.raises(ValueError, match=what) as e:
            voxa.imread(p)
        assert "a.npy" in str(e.value)


def test_npy_huge_shape_truncated_is_format_error(tmp_path):
    # A header announcing 2^40 elements must fail as truncated, without trying
    # to allocate terabytes.
    hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576), }"
    hdr = hdr + " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    data = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + b"\0" * 64
    p = tmp_path / "big.npy"
    p.write_bytes(data)
    with pytest.raises(ValueError, match="truncated"):
        voxa.imread(p)


@pytest.mark.parametrize("dtype", ["complex64", "<U4", "object", "float16", "datetime64[s]", [("a", "<f4"), ("b", "<i4")]])
def test_npy_unsupported_dtype(tmp_path, dtype):
    a = np.zeros(3, dtype=dtype)
    p = tmp_path / "a.npy"
    np.save(p, a, allow_pickle=True)
    with pytest.raises(TypeError, match="unsupported .npy dtype"):
        voxa.imread(p)


def test_write_unsupported_dtype_python(tmp_path):
    with pytest.raises(TypeError):
        voxa.imwrite(tmp_path / "a.npy", np.zeros(3, np.complex64))
    assert not os.listdir(tmp_path)


# ---- output paths ------------------------------------------------------------------

@pytest.mark.parametrize("ext", ["npy", "tif"])
def test_output_in_missing_folder(tmp_path, ext):
    target = tmp_path / "missing" / f"out.{ext}"
    with pytest.raises(OSError, match="out." + ext):
        voxa.imwrite(target, np.zeros((3, 3), np.uint8))
    assert not (tmp_path / "missing").exists()
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("ext", ["npy", "tif"])
def test_output_read_only_folder(tmp_path, ext):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        # As root, permissions are not enforced: /sys refuses new files
        # to everyone.
        target = d if not os.access(d, os.W_OK) else "/sys"
        if target == "/sys" and not os.path.isdir("/sys/class"):
            pytest.skip("root without /sys: no read-only location to test")
        with pytest.raises(OSError, match="Permission denied") as e:
            voxa.imwrite(os.path.join(target, f"voxa-out.{ext}"), np.zeros((3, 3), np.uint8))
        assert "voxa-out" in str(e.value)
        assert not [n for n in os.listdir(target) if n.startswith("voxa-out")]
    finally:
        d.chmod(stat.S_IRWXU)


@pytest.mark.parametrize("ext", ["npy", "tif"])
def test_long_file_name(tmp_path, ext):
    # 255 bytes is the limit of a name; the temporary must not exceed it.
    p = tmp_path / ("a" * (255 - 4) + "." + ext)
    a = rand((3, 4), "u2")
    voxa.imwrite(p, a)
    assert same(voxa.imread(p), a)
    assert sorted(os.listdir(tmp_path)) == [p.name]


@pytest.mark.parametrize("ext", ["npy", "tif"])
def test_overwrite_is_atomic(tmp_path, ext):
    p = tmp_path / f"a.{ext}"
    voxa.imwrite(p, np.ones((4, 4), np.uint8))
    ino = os.stat(p).st_ino
    voxa.imwrite(p, np.zeros((4, 4), np.uint8))
    assert os.stat(p).st_ino != ino  # replaced by rename, not rewritten in place
    assert not voxa.imread(p).any()
    # A failed write leaves the old file untouched.
    with pytest.raises((TypeError, ValueError)):
        voxa.imwrite(p, np.zeros((2, 0, 3), np.uint8) if ext == "tif" else np.zeros(3, np.complex64))
    assert same(voxa.imread(p), np.zeros((4, 4), np.uint8))
    assert not listdir_clean(tmp_path)


# ---- TIFF: voxa writes, tifffile reads -----------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (3, 17, 9), (1, 33, 1), (2, 1, 1)])
@pytest.mark.parametrize("compression", [None, "deflate"])
def test_tiff_write_tifffile_reads(tmp_path, dtype, shape, compression):
    a = rand(shape, dtype)
    p = tmp_path / "a.tif"
    voxa.imwrite(p, a, compression=compression)
    with tifffile.TiffFile(p) as tf:
        assert len(tf.pages) == (shape[0] if len(shape) == 3 else 1)
        assert not tf.is_bigtiff
        b = tf.asarray()
        if compression:
            assert tf.pages[0].compression == 8
    want = a.astype(np.uint8) if a.dtype == bool else a
    if len(shape) == 3 and shape[0] == 1:
        b = b.reshape(shape)
    assert same(b, want)
    c = voxa.imread(p)
    if len(shape) == 3 and shape[0] == 1:
        assert c.shape == shape[1:]  # one page reads back as 2D
        c = c.reshape(shape)
    assert same(c, want)
    assert not listdir_clean(tmp_path)


def test_tiff_write_large_rows_many_strips(tmp_path):
    a = rand((3, 1000, 300), "u2")   # 600 kB per page: several strips
    p = tmp_path / "a.tif"
    for comp in (None, "deflate"):
        voxa.imwrite(p, a, compression=comp)
        assert same(tifffile.imread(p), a)
        assert same(voxa.imread(p), a)


def test_tiff_deflate_same_file_for_any_thread_count(tmp_path):
    a = rand((3, 700, 300), "u2")     # several strips per page
    a[:, ::2] = 7                     # compressible
    files = []
    old = voxa.get_threads()
    try:
        for n in (1, 3):
            voxa.set_threads(n)
            p = tmp_path / f"t{n}.tif"
            voxa.imwrite(p, a[:, :, ::-1], compression="deflate")   # strided too
            files.append(p.read_bytes())
            assert same(tifffile.imread(p), a[:, :, ::-1])
            assert same(voxa.imread(p), a[:, :, ::-1])   # parallel inflate
    finally:
        voxa.set_threads(old)
    assert files[0] == files[1]


def test_tiff_write_strided(tmp_path):
    base = rand((6, 20, 30), "f4")
    p = tmp_path / "a.tif"
    for v in [base[::2, 1:, ::-3], base.transpose(2, 1, 0), np.asfortranarray(base), base[:, 5]]:
        voxa.imwrite(p, v)
        assert same(tifffile.imread(p), np.ascontiguousarray(v))


def test_tiff_bigtiff(tmp_path):
    a = rand((3, 10, 12), "i2")
    p = tmp_path / "a.tif"
    voxa.imwrite(p, a, bigtiff=True)
    with tifffile.TiffFile(p) as tf:
        assert tf.is_bigtiff
        assert same(tf.asarray(), a)
    assert same(voxa.imread(p), a)
    voxa.imwrite(p, a, bigtiff=False, compression="deflate", level=9)
    with tifffile.TiffFile(p) as tf:
        assert not tf.is_bigtiff
    # The threshold is an option of the C API: data above it -> BigTIFF.
    _voxa.tiff_write(os.fspath(p), a, 0, 0, a.nbytes - 1)
    assert open(p, "rb").read(4) == b"II+\x00"
    _voxa.tiff_write(os.fspath(p), a, 0, 0, a.nbytes)
    assert open(p, "rb").read(4) == b"II*\x00"


def test_tiff_write_bad_arguments(tmp_path):
    p = tmp_path / "a.tif"
    with pytest.raises(TypeError, match="2D or 3D"):
        voxa.imwrite(p, np.zeros(5, np.uint8))
    with pytest.raises(TypeError, match="2D or 3D"):
        voxa.imwrite(p, np.zeros((2, 2, 2, 2), np.uint8))
    with pytest.raises(TypeError, match="empty"):
        voxa.imwrite(p, np.zeros((0, 4), np.uint8))
    with pytest.raises(ValueError, match="compression"):
        voxa.imwrite(p, np.zeros((2, 2)), compression="zstd")
    with pytest.raises(ValueError, match="TIFF files only"):
        voxa.imwrite(tmp_path / "a.npy", np.zeros((2, 2)), compression="deflate")
    with pytest.raises(ValueError, match="level"):
        _voxa.tiff_write(os.fspath(p), np.zeros((2, 2)), 1, 12, 0)
    assert os.listdir(tmp_path) == []


# ---- TIFF: tifffile writes, voxa reads --------------------------------------------------

TIFFFILE_VARIANTS = [
    dict(),
    dict(compression="zlib"),
    dict(compression="lzw"),
    dict(compression="packbits"),
    dict(tile=(16, 32)),
    dict(tile=(16, 16), compression="zlib"),
    dict(bigtiff=True),
    dict(bigtiff=True, tile=(32, 16), compression="lzw"),
    dict(rowsperstrip=3),
    dict(byteorder=">"),
    dict(byteorder=">", tile=(16, 16), compression="zlib"),
    dict(predictor=True, compression="zlib"),
    dict(compression="zlib", rowsperstrip=5),          # parallel inflate path
    dict(byteorder=">", compression="zlib", rowsperstrip=7),
    dict(bigtiff=True, compression="zlib", rowsperstrip=1),
    dict(contiguous=False),
]


try:  # a dev requirement: lets tifffile write LZW, PackBits and predictors
    import imagecodecs  # noqa: F401
    HAVE_IMAGECODECS = True
except ImportError:
    HAVE_IMAGECODECS = False


def _tifffile_can(kw, dtype):
    if kw.get("predictor") and np.dtype(dtype).itemsize == 8:
        return False  # tifffile has no predictor for 64-bit values
    needs_codecs = kw.get("predictor") or kw.get("compression") in ("lzw", "packbits")
    return HAVE_IMAGECODECS or not needs_codecs


@pytest.mark.parametrize("kw", TIFFFILE_VARIANTS, ids=lambda k: "-".join(f"{a}={b}" for a, b in k.items()) or "plain")
@pytest.mark.parametrize("dtype", TIFF_DTYPES)
def test_tifffile_writes_voxa_reads(tmp_path, kw, dtype):
    if not _tifffile_can(kw, dtype):
        pytest.skip("tifffile cannot write this combination (see _tifffile_can)")
    p = tmp_path / "a.tif"
    for shape in [(37, 45), (4, 37, 45), (1, 1)]:
        a = rand(shape, dtype, seed=len(shape))
        tifffile.imwrite(p, a, photometric="minisblack", **kw)
        b = voxa.imread(p)
        assert same(b, a), (shape, kw)


def test_lzw_and_packbits_via_libtiff_tool(tmp_path):
    # tifffile writes LZW/PackBits only with imagecodecs; libtiff's tiffcp
    # (when installed) or voxa's own writer + tiffcp makes them.
    import shutil
    tiffcp = shutil.which("tiffcp")
    if not tiffcp:
        pytest.skip("tiffcp not installed")
    a = rand((3, 40, 50), "u2")
    src = tmp_path / "src.tif"
    voxa.imwrite(src, a)
    for comp in ["lzw", "packbits", "zip", "lzw:2", "zstd", "lzma", "none"]:
        dst = tmp_path / f"{comp.replace(':', '_')}.tif"
        r = subprocess.run([tiffcp, "-c", comp, os.fspath(src), os.fspath(dst)], capture_output=True)
        if r.returncode != 0:
            continue  # codec not built into this libtiff
        assert same(voxa.imread(dst), a), comp
        r = subprocess.run([tiffcp, "-c", comp, "-t", "-w", "16", "-l", "16", os.fspath(src), os.fspath(dst)], capture_output=True)
        if r.returncode == 0:
            assert same(voxa.imread(dst), a), comp + " tiled"


def test_imagej_hyperstack(tmp_path):
    a = rand((2, 3, 2, 20, 30), "u2")  # T Z C Y X
    p = tmp_path / "hyper.tif"
    tifffile.imwrite(p, a, imagej=True, metadata={"axes": "TZCYX"})
    b = voxa.imread(p)
    assert same(b, a.reshape(-1, 20, 30))
    assert same(b, tifffile.imread(p).reshape(-1, 20, 30))
    f = rand((5, 8, 9), "f4")
    tifffile.imwrite(p, f, imagej=True)
    assert same(voxa.imread(p), f)


def _cut_ifd_chain_after_first(path):
    """Make an ImageJ stack look like ImageJ's > 4 GB files: one IFD, the
    other images raw and contiguous after the first."""
    with tifffile.TiffFile(path) as tf:
        page = tf.pages[0]
        bo = tf.byteorder
        # offset of the "next IFD" field of IFD 0
        off = page.offset + 2 + len(page.tags) * 12
        n = struct.unpack(bo + "H", open(path, "rb").read()[page.offset:page.offset + 2])[0]
        assert n == len(page.tags)
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(b"\0\0\0\0")


@pytest.mark.parametrize("byteorder", ["<", ">"])
def test_imagej_raw_contiguous(tmp_path, byteorder):
    a = rand((6, 21, 17), "u2")
    p = tmp_path / "ij.tif"
    tifffile.imwrite(p, a, imagej=True, byteorder=byteorder)
    _cut_ifd_chain_after_first(p)
    assert same(voxa.imread(p), a)
    assert same(tifffile.imread(p), a)   # tifffile agrees
    # Truncated: fewer bytes than the announced images.
    with tifffile.TiffFile(p) as tf:
        start = tf.pages[0].dataoffsets[0]
    data = open(p, "rb").read()
    p.write_bytes(data[:start + a.nbytes - 100])
    with pytest.raises(ValueError, match="truncated"):
        voxa.imread(p)


def test_rgb_and_planar(tmp_path):
    p = tmp_path / "rgb.tif"
    for planar, shape in [("contig", (20, 30, 3)), ("separate", (3, 20, 30)),
                          ("contig", (4, 20, 30, 3)), ("separate", (4, 3, 20, 30))]:
        a = rand(shape, "u1")
        for tile, comp in [(None, None), ((16, 16), None), (None, "zlib"), ((16, 16), "zlib")]:
            tifffile.imwrite(p, a, photometric="rgb", planarconfig=planar, tile=tile,
                             compression=comp, rowsperstrip=6)
            assert same(voxa.imread(p), tifffile.imread(p)), (planar, shape, tile, comp)
            assert same(voxa.imread(p), a)


def test_bilevel(tmp_path):
    a = rand((13, 21), "bool")
    p = tmp_path / "bits.tif"
    tifffile.imwrite(p, a)  # tifffile writes bool as 1-bit bilevel
    with tifffile.TiffFile(p) as tf:
        assert tf.pages[0].bitspersample == 1
    assert same(voxa.imread(p), a)
    s = rand((3, 13, 21), "bool")
    tifffile.imwrite(p, s, tile=(16, 16))
    assert same(voxa.imread(p), s)


def test_tiff_pages_disagree(tmp_path):
    p = tmp_path / "mixed.tif"
    with tifffile.TiffWriter(p) as tw:
        tw.write(np.zeros((10, 10), np.uint8))
        tw.write(np.zeros((10, 10), np.uint8))
        tw.write(np.zeros((10, 11), np.uint8))
    with pytest.raises(ValueError, match="page 2"):
        voxa.imread(p)
    with tifffile.TiffWriter(p) as tw:
        tw.write(np.zeros((10, 10), np.uint8))
        tw.write(np.zeros((10, 10), np.uint16))
    with pytest.raises(ValueError, match="page 1.*uint16.*uint8"):
        voxa.imread(p)


def test_tiff_unsupported_types(tmp_path):
    p = tmp_path / "a.tif"
    tifffile.imwrite(p, np.zeros((4, 4), np.float16))
    with pytest.raises(TypeError, match="float16|unsupported pixel type"):
        voxa.imread(p)
    tifffile.imwrite(p, np.zeros((4, 4), np.complex64))
    with pytest.raises(TypeError, match="unsupported pixel type"):
        voxa.imread(p)


# ---- TIFF bad files ---------------------------------------------------------------------

def _stderr_of(code):
    """Run `code` in a fresh interpreter and return its stderr (libtiff must
    never print)."""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stderr


def test_tiff_truncated_and_corrupt(tmp_path):
    a = rand((3, 40, 50), "u2")
    p = tmp_path / "good.tif"
    bad = tmp_path / "bad.tif"
    for kw in [dict(), dict(compression="zlib"), dict(tile=(16, 16), compression="zlib"), dict(bigtiff=True)]:
        tifffile.imwrite(p, a, photometric="minisblack", **kw)
        data = p.read_bytes()
        with tifffile.TiffFile(p) as tf:
            last = tf.pages[-1].dataoffsets[-1] + tf.pages[-1].databytecounts[-1]
        cuts = [0, 3, 8, 15, 100, len(data) // 2, last - 10]
        for cut in cuts:
            bad.write_bytes(data[:cut])
            with pytest.raises(ValueError) as e:
                voxa.imread(bad)
            assert "bad.tif" in str(e.value)
        # Corrupt bytes in the middle of the data: either an error or an
        # array of the right shape (raw data has no checksum), never a crash.
        rng = np.random.default_rng(0)
        for _ in range(20):
            d = bytearray(data)
            for i in rng.integers(0, len(d), size=8):
                d[i] = rng.integers(0, 256)
            bad.write_bytes(bytes(d))
            try:
                b = voxa.imread(bad)
                assert b.ndim in (2, 3, 4)
            except (ValueError, TypeError, OSError, MemoryError):
                pass
    bad.write_bytes(b"II*\x00garbage")
    with pytest.raises(ValueError, match="not a readable TIFF"):
        voxa.imread(bad)
    bad.write_bytes(b"not a tiff at all, just text")
    with pytest.raises(ValueError, match="not a readable TIFF"):
        voxa.imread(bad)


def test_tiff_ifd_cycle_no_hang(tmp_path):
    p = tmp_path / "cycle.tif"
    tifffile.imwrite(p, rand((3, 8, 8), "u1"), photometric="minisblack")
    with tifffile.TiffFile(p) as tf:
        offs = [pg.offset for pg in tf.pages]
        ntags = [len(pg.tags) for pg in tf.pages]
    data = bytearray(p.read_bytes())
    # page 2's "next IFD" points back to page 0
    nxt = offs[2] + 2 + ntags[2] * 12
    data[nxt:nxt + 4] = struct.pack("<I", offs[0])
    p.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="cycle.tif"):
        voxa.imread(p)
    # page 0 points to itself
    data = bytearray(p.read_bytes())
    nxt = offs[0] + 2 + ntags[0] * 12
    data[nxt:nxt + 4] = struct.pack("<I", offs[0])
    p.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="cycle.tif"):
        voxa.imread(p)


def test_tiff_errors_never_printed(tmp_path):
    a = rand((3, 40, 50), "u2")
    p = tmp_path / "t.tif"
    tifffile.imwrite(p, a, compression="zlib", tile=(16, 16), photometric="minisblack")
    data = p.read_bytes()
    files = []
    for i, cut in enumerate([9, 50, 200, len(data) // 2, len(data) - 5]):
        f = tmp_path / f"bad{i}.tif"
        f.write_bytes(data[:cut])
        files.append(os.fspath(f))
    d = bytearray(data)
    d[300:340] = b"\xff" * 40     # inside compressed data or the tags
    f = tmp_path / "flip.tif"
    f.write_bytes(bytes(d))
    files.append(os.fspath(f))
    # unknown private tags produce libtiff warnings: they must not print
    q = tmp_path / "extratag.tif"
    tifffile.imwrite(q, a[0], extratags=[(65000, "s", 0, "hello", True)])
    files.append(os.fspath(q))
    code = (
        "import voxa\n"
        f"for f in {files!r}:\n"
        "    try:\n        voxa.imread(f)\n    except (ValueError, TypeError, OSError):\n        pass\n"
        "try:\n"
        f"    voxa.imwrite({os.fspath(tmp_path / 'missing' / 'x.tif')!r}, __import__('numpy').zeros((2, 2)))\n"
        "except OSError:\n    pass\n"
    )
    assert _stderr_of(code) == ""
    assert same(voxa.imread(q), a[0])


# ---- CSV ---------------------------------------------------------------------------------

def parse(text):
    names, values, nrows = _voxa.csv_parse(text.encode() if isinstance(text, str) else text)
    return names, np.frombuffer(values, np.float64).reshape(nrows, len(names))


def test_csv_basic():
    names, v = parse("x,y,z,radius\n1,2,3,4\n5.5,-6e2,7,8\n")
    assert names == ["x", "y", "z", "radius"]
    assert np.array_equal(v, [[1, 2, 3, 4], [5.5, -600, 7, 8]])


@pytest.mark.parametrize("text", [
    "x,y\r\n1,2\r\n3,4\r\n",
    "x,y\n1,2\n3,4",
    "\ufeffx,y\n1,2\n3,4\n",
    "\n\nx,y\n\n1,2\n   \n3,4\n\n\n",
    ' "x" , "y"\n"1",2\n3,  "4" \n',
    "x,y\r\n1,2\r\n\r\n3,4",
])
def test_csv_variants(text):
    names, v = parse(text)
    assert names == ["x", "y"]
    assert np.array_equal(v, [[1, 2], [3, 4]])


def test_csv_quotes_and_nan():
    names, v = parse('name,"a,b","say ""hi"""\nfoo,1,2\n"multi\nline",nan,inf\n,,\n')
    assert names == ["name", "a,b", 'say "hi"']
    assert v.shape == (3, 3)
    assert np.isnan(v[:, 0]).all()
    assert v[0, 1] == 1 and np.isnan(v[1, 1]) and v[1, 2] == np.inf and np.isnan(v[2, 1:]).all()
    for cell in ["abc", "1.5x", "0x10", "1 2", "--1", "", "1e", "."]:
        _, v = parse(f"a\n{cell}\n" if cell else "a,b\n,\n")
        assert np.isnan(v[0, 0]), cell
    for cell, want in [("+1", 1), ("-0.5", -0.5), (" 7 ", 7), ("1e3", 1000), (".5", 0.5), ("5.", 5), ("1E-2", 0.01)]:
        _, v = parse(f"a\n{cell}\n")
        assert v[0, 0] == want, cell


def test_csv_header_only_and_empty():
    names, v = parse("x,y,z\n")
    assert names == ["x", "y", "z"] and v.shape == (0, 3)
    for text in ["", "\n\n", "\ufeff", "   \r\n"]:
        with pytest.raises(ValueError, match="no header"):
            parse(text)


def test_csv_ragged_rows_name_the_line():
    with pytest.raises(ValueError, match="line 4 has 3 fields, the header has 2"):
        parse("x,y\n1,2\n\n1,2,3\n")
    with pytest.raises(ValueError, match="line 3 has 1 fields"):
        parse("x,y\n1,2\n5\n")
    with pytest.raises(ValueError, match="line 2: unterminated"):
        parse('x,y\n"1,2\n3,4\n')
    with pytest.raises(ValueError, match="line 2: unexpected character"):
        parse('x,y\n"1"2,3\n')


def test_csv_locale_independent(tmp_path):
    code = (
        "import locale, voxa, numpy as np\n"
        "for loc in ('de_DE.UTF-8', 'fr_FR.UTF-8', 'de_DE'):\n"
        "    try:\n        locale.setlocale(locale.LC_ALL, loc); break\n"
        "    except locale.Error:\n        pass\n"
        "from voxa import _voxa\n"
        "n, v, r = _voxa.csv_parse(b'a\\n1.5\\n')\n"
        "assert np.frombuffer(v)[0] == 1.5, np.frombuffer(v)\n"
    )
    _stderr_of(code)


def test_csv_matches_numpy_random(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2000, 4)) * 10.0 ** rng.integers(-30, 30, size=(2000, 4))
    p = tmp_path / "pts.csv"
    np.savetxt(p, a, delimiter=",", header="X,y,Z,Radius", comments="", fmt="%.17g")
    t = voxa.read_csv(p)
    assert list(t) == ["X", "y", "Z", "Radius"]
    got = np.stack([t[k] for k in t], axis=1)
    assert np.array_equal(got, a)   # round-trip exact with 17 digits


def test_csv_numbers_exact_like_float():
    # The C parser's fast path must give the same double as Python's float()
    # (correct rounding) on every format, including the boundaries of the
    # fast path (2^53 digits, powers of ten 22/23, long fractions).
    rng = np.random.default_rng(5)
    vals = np.concatenate([rng.standard_normal(3000) * 10.0 ** rng.integers(-30, 30, 3000),
                           rng.integers(-2**60, 2**60, 500).astype(float)])
    cells = []
    for v in vals:
        cells += [f"{v:.6f}", f"{v:.15g}", f"{v:.17g}", f"{v:e}", f"{v:.3E}", repr(float(v))]
    cells += [str(2**53), str(2**53 + 1), str(2**53 - 1), "9007199254740993.0", "1e22", "1e23",
              "123456789e-22", "123456789e-23", "0.1", "0.3", "-0", "-0.0", "+.5e-3", "5.e2",
              "0000000000000000000000001", "1" + "0" * 30, "0." + "0" * 40 + "1", "1e-400", "1e400",
              "4.9406564584124654e-324", "2.2250738585072011e-308", "1.7976931348623157e308"]
    text = "v\n" + "\n".join(cells) + "\n"
    _, v = parse(text)
    want = np.array([float(c) for c in cells])
    assert v.shape == (len(cells), 1)
    bad = [(c, g, w) for c, g, w in zip(cells, v[:, 0], want) if not (g == w and np.signbit(g) == np.signbit(w))]
    assert not bad, bad[:5]


def test_csv_large_file_linear(tmp_path):
    n = 300_000
    p = tmp_path / "big.csv"
    rng = np.random.default_rng(0)
    a = rng.integers(0, 1000, size=(n, 3)).astype(float)
    np.savetxt(p, a, delimiter=",", header="z,y,x", comments="", fmt="%d")
    t = voxa.read_csv(p)
    assert np.array_equal(np.stack([t["z"], t["y"], t["x"]], 1), a)


def test_csv_hypothesis_vs_python_csv():
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings, strategies as st
    import csv
    import io

    cell = st.one_of(st.floats(allow_nan=False, width=64).map(repr), st.integers(-10**6, 10**6).map(str),
                     st.text(alphabet="ab ,\"\n\t", max_size=6))

    @settings(max_examples=200, deadline=None)
    @given(st.integers(1, 4).flatmap(lambda k: st.tuples(st.just(k), st.lists(st.lists(cell, min_size=k, max_size=k), max_size=6))),
           st.sampled_from(["\n", "\r\n"]))
    def check(kr, eol):
        k, rows = kr
        header = [f"c{i}" for i in range(k)]
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator=eol, quoting=csv.QUOTE_MINIMAL)
        w.writerow(header)
        for r in rows:
            w.writerow(r)
        text = buf.getvalue()
        names, v = parse(text)
        assert names == header
        # Lines that are blank after writing are skipped by voxa (a 1-column
        # row whose cell is empty or only spaces).
        kept = [r for r in rows if not (k == 1 and r[0].strip(" \t") == "" and '"' not in w_quote(r[0]))]
        assert v.shape == (len(kept), k)
        for i, r in enumerate(kept):
            for j, c in enumerate(r):
                s = c.strip(" \t\r\n")
                try:
                    want = float(s) if s and not s.lower().startswith(("0x", "-0x", "+0x")) and "_" not in s else np.nan
                except ValueError:
                    want = np.nan
                got = v[i, j]
                assert (np.isnan(want) and np.isnan(got)) or got == want, (c, got, want)

    def w_quote(c):
        b = io.StringIO()
        csv.writer(b, lineterminator="\n").writerow([c])
        return b.getvalue()

    check()


@pytest.mark.parametrize("name,msg", [
    ("regression-huge-tile.tif", "implausible tile size"),     # fuzz: 3 GB tile buffer
    ("regression-huge-page.tif", "truncated or corrupt"),      # fuzz: 22 GB page in 259 bytes
])
def test_tiff_fuzz_regressions(name, msg):
    p = os.path.join(os.path.dirname(__file__), "..", "..", "fuzz", "corpus", "fuzz_tiff", name)
    with pytest.raises(ValueError, match=msg):
        voxa.imread(p)
