"""Zarr interop: voxa's C Zarr layer (through ctypes, tests/python/zarr_ctypes.py)
against zarr-python 3, both ways: formats 2 and 3, every dtype, every codec,
sharding, F order, big endian, fill values and missing chunks, region reads
and writes; OME-NGFF metadata checked against the spec; voxa.imread/imwrite
and the CLI on .zarr paths; bad input gives a clear error naming the chunk."""
import json
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec,  # noqa: E402
                         ShardingCodec, TransposeCodec, ZstdCodec)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import CLI  # noqa: E402
import zarr_ctypes  # noqa: E402

Z = zarr_ctypes.load(os.path.dirname(CLI))
RNG = np.random.default_rng(1234)
DTYPES = zarr_ctypes.DTYPES


def rand(shape, dtype):
    dt = np.dtype(dtype)
    if dt == bool:
        return RNG.random(shape) < 0.3
    if dt.kind == "f":
        a = RNG.standard_normal(shape).astype(dt) * 1000
        a.flat[:3] = [np.inf, -np.inf, np.nan][: a.size]
        return a
    info = np.iinfo(dt)
    return RNG.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)


def same(a, b):
    np.testing.assert_array_equal(a, b)
    assert a.dtype == b.dtype


# ---- voxa writes, zarr-python reads ------------------------------------------------------------

CODEC_CASES = [
    ("raw", {}), ("blosc", {}), ("blosc", {"cname": "zstd", "shuffle": 2}),
    ("blosc", {"cname": "zlib", "shuffle": 1}), ("blosc", {"cname": "lz4hc", "level": 9}),
    ("zstd", {}), ("gzip", {"level": 1}),
]


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("codec,kw", CODEC_CASES + [("zlib", {})])
def test_voxa_writes_codecs(tmp_path, fmt, codec, kw):
    if codec == "zlib" and fmt == 3:
        with pytest.raises(zarr_ctypes.VoxaError, match="zlib"):
            Z.save(tmp_path / "a.zarr", np.zeros((2, 2), "u1"), format=3, codec="zlib")
        return
    a = rand((23, 40, 17), "uint16")
    p = tmp_path / "a.zarr"
    Z.save(p, a, format=fmt, chunks=(8, 16, 5), codec=codec, **kw)
    same(zarr.open_array(p, mode="r")[...], a)
    same(Z.load(p), a)


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("big,order", [(False, "C"), (True, "C"), (False, "F"), (True, "F")])
def test_voxa_writes_dtypes(tmp_path, fmt, dtype, big, order):
    a = rand((11, 9, 7), dtype)
    p = tmp_path / "a.zarr"
    Z.save(p, a, format=fmt, chunks=(4, 5, 3), big_endian=big, order=order, codec="zstd")
    z = zarr.open_array(p, mode="r")
    same(z[...].astype(a.dtype), a)
    if fmt == 2:
        meta = json.loads((p / ".zarray").read_text())
        assert meta["order"] == order
        if a.dtype.itemsize > 1:
            assert meta["dtype"][0] == (">" if big else "<")
    same(Z.load(p), a)


@pytest.mark.parametrize("index_chunks", [(4, 4, 4), (2, 8, 3)])
def test_voxa_writes_sharded(tmp_path, index_chunks):
    a = rand((21, 33, 14), "int32")
    p = tmp_path / "s.zarr"
    shards = tuple(c * k for c, k in zip(index_chunks, (2, 3, 2)))
    Z.save(p, a, chunks=index_chunks, shards=shards, codec="blosc")
    z = zarr.open_array(p, mode="r")
    assert z.shards == shards and z.chunks == index_chunks
    same(z[...], a)
    same(Z.load(p), a)


@pytest.mark.parametrize("fmt,sep", [(2, "/"), (3, ".")])
def test_voxa_writes_separators(tmp_path, fmt, sep):
    a = rand((6, 7), "uint8")
    p = tmp_path / "a.zarr"
    Z.save(p, a, format=fmt, chunks=(3, 3), separator=sep)
    same(zarr.open_array(p, mode="r")[...], a)
    key = ("1/2" if fmt == 2 else "c.1.2")
    assert (p / key).exists()


@pytest.mark.parametrize("fmt", [2, 3])
@pytest.mark.parametrize("sharded", [False, True])
@pytest.mark.parametrize("layout", ["C", "F-big"])
def test_region_writes_and_fill(tmp_path, fmt, sharded, layout):
    if sharded and fmt == 2:
        return
    shape = (19, 26, 11)
    p = tmp_path / "r.zarr"
    kw = {"shards": (8, 12, 6)} if sharded else {}
    if layout == "F-big":
        kw.update(order="F", big_endian=True)
    h = Z.create(p, shape, "float32", format=fmt, chunks=(4, 6, 3), fill_value=-7.5, **kw)
    ref = np.full(shape, -7.5, np.float32)
    try:
        for _ in range(25):
            lo = [int(RNG.integers(0, s)) for s in shape]
            ext = [int(RNG.integers(1, s - l + 1)) for s, l in zip(shape, lo)]
            blk = rand(ext, "float32")
            Z.write(h, blk, lo)
            ref[tuple(slice(l, l + e) for l, e in zip(lo, ext))] = blk
            # strided (non-contiguous) views both ways
            lo2 = [int(RNG.integers(0, s)) for s in shape]
            ext2 = [int(RNG.integers(1, s - l + 1)) for s, l in zip(shape, lo2)]
            out = np.zeros([e * 2 for e in ext2], np.float32)[::2, ::-2, ::2]
            Z.read(h, lo2, ext2, "float32", out=out)
            same(out, ref[tuple(slice(l, l + e) for l, e in zip(lo2, ext2))])
    finally:
        Z.close(h)
    same(zarr.open_array(p, mode="r")[...].astype(ref.dtype), ref)


def test_missing_chunks_read_fill(tmp_path):
    for fill, dtype in [(np.nan, "float64"), (3, "int16"), (1, "bool"), (-np.inf, "float32")]:
        p = tmp_path / f"m{dtype}.zarr"
        h = Z.create(p, (5, 6), dtype, chunks=(2, 2), fill_value=fill)
        Z.write(h, np.ones((1, 1), dtype), [4, 5])
        Z.close(h)
        want = zarr.open_array(p, mode="r")[...]
        same(Z.load(p), want)
        assert np.array_equal(want[0, 0], np.array(fill, dtype), equal_nan=True)


def test_zero_d_and_one_d(tmp_path):
    for fmt in (2, 3):
        a = np.array(42, np.int64)
        Z.save(tmp_path / f"s{fmt}.zarr", a, format=fmt)
        same(zarr.open_array(tmp_path / f"s{fmt}.zarr", mode="r")[...], a)
        b = rand((1000,), "uint32")
        Z.save(tmp_path / f"v{fmt}.zarr", b, format=fmt, chunks=(77,))
        same(zarr.open_array(tmp_path / f"v{fmt}.zarr", mode="r")[...], b)


# ---- zarr-python writes, voxa reads -------------------------------------------------------------

V2_COMPRESSORS = [None, numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
                  numcodecs.Blosc("zstd", 3, numcodecs.Blosc.BITSHUFFLE),
                  numcodecs.Blosc("zlib", 1, numcodecs.Blosc.NOSHUFFLE),
                  numcodecs.Blosc("lz4", 5, numcodecs.Blosc.AUTOSHUFFLE),
                  numcodecs.Zstd(level=1), numcodecs.GZip(level=5), numcodecs.Zlib(level=2)]
V3_COMPRESSORS = [None, BloscCodec(cname="lz4", shuffle="shuffle"),
                  BloscCodec(cname="zstd", shuffle="bitshuffle"),
                  BloscCodec(cname="zlib", shuffle="noshuffle"), ZstdCodec(level=2),
                  ZstdCodec(level=1, checksum=True), GzipCodec(level=4), Crc32cCodec()]


def _zarr_write(p, a, fmt, compressor, **kw):
    comp = compressor if compressor is not None else None
    z = zarr.create_array(store=str(p), shape=a.shape, chunks=kw.pop("chunks", (5, 7, 4)),
                          dtype=kw.pop("dtype", a.dtype), zarr_format=fmt,
                          compressors=comp, fill_value=kw.pop("fill_value", 0), **kw)
    z[...] = a
    return z


@pytest.mark.parametrize("comp", V2_COMPRESSORS, ids=repr)
def test_zarr_writes_v2(tmp_path, comp):
    a = rand((13, 22, 9), "uint16")
    _zarr_write(tmp_path / "a.zarr", a, 2, comp)
    same(Z.load(tmp_path / "a.zarr"), a)


@pytest.mark.parametrize("comp", V3_COMPRESSORS, ids=repr)
def test_zarr_writes_v3(tmp_path, comp):
    a = rand((13, 22, 9), "float32")
    _zarr_write(tmp_path / "a.zarr", a, 3, comp)
    same(Z.load(tmp_path / "a.zarr"), a)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zarr_writes_dtypes_both_orders(tmp_path, dtype):
    a = rand((9, 10, 11), dtype)
    dt = np.dtype(dtype)
    for i, (order, bo) in enumerate([("C", "<"), ("F", ">"), ("F", "<"), ("C", ">")]):
        p = tmp_path / f"v2_{i}.zarr"
        _zarr_write(p, a, 2, numcodecs.Zstd(), dtype=dt.newbyteorder(bo) if dt.itemsize > 1
                    else dt, order=order)
        same(Z.load(p), a)
    p = tmp_path / "v3big.zarr"
    z = zarr.create_array(store=str(p), shape=a.shape, chunks=(4, 4, 4), dtype=dt,
                          serializer=BytesCodec(endian="big"), compressors=None)
    z[...] = a
    same(Z.load(p), a)
    p = tmp_path / "v3F.zarr"
    z = zarr.create_array(store=str(p), shape=a.shape, chunks=(4, 3, 5), dtype=dt,
                          filters=[TransposeCodec(order=(2, 1, 0))])
    z[...] = a
    same(Z.load(p), a)


@pytest.mark.parametrize("where", ["end", "start"])
@pytest.mark.parametrize("inner", [[BytesCodec()], [BytesCodec(endian="big"), ZstdCodec()],
                                   [BytesCodec(), BloscCodec(cname="lz4"), Crc32cCodec()]],
                         ids=["raw", "big-zstd", "blosc-crc"])
def test_zarr_writes_sharded(tmp_path, where, inner):
    a = rand((17, 30, 12), "uint16")
    p = tmp_path / "s.zarr"
    z = zarr.create_array(store=str(p), shape=a.shape, chunks=(8, 12, 12), dtype=a.dtype,
                          serializer=ShardingCodec(chunk_shape=(4, 4, 6), codecs=inner,
                                                   index_location=where), compressors=None)
    z[...] = a
    z[:8, :12, :12] = 0  # write_empty_chunks=False: inner chunks absent from the index
    a[:8, :12, :12] = 0
    same(Z.load(p), a)
    # voxa updates a region of zarr-python's shards; zarr-python reads it back
    h = Z.open(p, writable=True)
    try:
        blk = rand((5, 7, 3), "uint16")
        Z.write(h, blk, [3, 10, 9])
        a[3:8, 10:17, 9:12] = blk
    finally:
        Z.close(h)
    same(zarr.open_array(p, mode="r")[...], a)


def test_zarr_writes_shards_api(tmp_path):
    a = rand((40, 33, 20), "uint8")
    p = tmp_path / "s.zarr"
    z = zarr.create_array(store=str(p), shape=a.shape, chunks=(5, 11, 10), shards=(10, 33, 20),
                          dtype=a.dtype)
    z[...] = a
    same(Z.load(p), a)
    h = Z.open(p)
    try:
        for _ in range(20):
            lo = [int(RNG.integers(0, s)) for s in a.shape]
            ext = [int(RNG.integers(1, s - l + 1)) for s, l in zip(a.shape, lo)]
            same(Z.read(h, lo, ext, "uint8"), a[tuple(slice(l, l + e) for l, e in zip(lo, ext))])
    finally:
        Z.close(h)


def test_zarr_writes_separators_and_fill(tmp_path):
    a = rand((10, 12), "float64")
    for fmt, enc in [(2, {"name": "v2", "separator": "/"}),
                     (3, {"name": "v2", "separator": "."}),
                     (3, {"name": "default", "separator": "."})]:
        p = tmp_path / f"k{fmt}{enc['name']}{enc['separator']}.zarr"
        z = zarr.create_array(store=str(p), shape=a.shape, chunks=(3, 5), dtype=a.dtype,
                              zarr_format=fmt, chunk_key_encoding=enc, fill_value=np.nan)
        z[2:7, 1:9] = a[2:7, 1:9]
        same(Z.load(p), z[...])


# ---- OME-NGFF ---------------------------------------------------------------------------------

def _check_multiscales(ms, ndim, spacing, levels):
    assert [x["name"] for x in ms["axes"]] == ["z", "y", "x"][3 - ndim:]
    assert all(x["type"] == "space" and x["unit"] == "micrometer" for x in ms["axes"])
    assert [d["path"] for d in ms["datasets"]] == [str(k) for k in range(levels)]
    for k, d in enumerate(ms["datasets"]):
        (t,) = d["coordinateTransformations"]
        assert t["type"] == "scale"
        assert t["scale"] == [s * 2 ** k for s in spacing]


@pytest.mark.parametrize("fmt", [2, 3])
def test_ome_metadata(tmp_path, fmt):
    a = rand((9, 20, 15), "uint16")
    p = tmp_path / "img.ome.zarr"
    Z.write_ome(p, a, spacing=[2.0, 0.5, 0.25], levels=3, format=fmt, chunks=(4, 8, 8))
    if fmt == 2:
        assert json.loads((p / ".zgroup").read_text())["zarr_format"] == 2
        (ms,) = json.loads((p / ".zattrs").read_text())["multiscales"]
        assert ms["version"] == "0.4"
    else:
        g = json.loads((p / "zarr.json").read_text())
        assert g["node_type"] == "group" and g["attributes"]["ome"]["version"] == "0.5"
        (ms,) = g["attributes"]["ome"]["multiscales"]
    _check_multiscales(ms, 3, [2.0, 0.5, 0.25], 3)
    grp = zarr.open_group(p, mode="r")
    same(grp["0"][...], a)
    # level 1: 2x2x2 block means (partial blocks at the odd edges), half to even
    pad = np.pad(a.astype(np.float64), [(0, s % 2) for s in a.shape], constant_values=np.nan)
    blocks = pad.reshape(5, 2, 10, 2, 8, 2)
    want = np.rint(np.nanmean(blocks, axis=(1, 3, 5))).astype(a.dtype)
    same(grp["1"][...], want)
    assert grp["2"].shape == (3, 5, 4)
    sp, unit = Z.spacing(p, 3)
    assert sp == [2.0, 0.5, 0.25] and unit == "micrometer"
    same(Z.load(p), a)  # a group opens its full resolution


def test_ome_labels_stride(tmp_path):
    a = RNG.integers(0, 5, (10, 11), dtype=np.uint32)
    Z.write_ome(tmp_path / "l.zarr", a, levels=2, labels=True)
    same(zarr.open_group(tmp_path / "l.zarr", mode="r")["1"][...], a[::2, ::2])


@pytest.mark.parametrize("fmt", [2, 3])
def test_ome_read_by_ome_zarr_py(tmp_path, fmt):
    """ome-zarr-models validates the metadata against the OME-NGFF schema
    (0.4 / 0.5: axes, datasets, scales, dimension_names); ome-zarr reads the
    pyramid with its scales."""
    reader = pytest.importorskip("ome_zarr.reader")
    from ome_zarr.io import parse_url
    models = pytest.importorskip("ome_zarr_models")
    from ome_zarr_models.v04.image import Image as Image04
    from ome_zarr_models.v05.image import Image as Image05
    a = rand((6, 16, 18), "uint8")
    p = tmp_path / "o.zarr"
    Z.write_ome(p, a, spacing=[3, 1, 0.5], levels=2, format=fmt)
    if fmt == 2:
        img = Image04.from_zarr(zarr.open_group(p, mode="r", zarr_format=2))
    else:
        img = Image05.from_zarr(zarr.open_group(p, mode="r"))
    ms = (img.attributes if fmt == 2 else img.attributes.ome).multiscales[0]
    assert [ax.name for ax in ms.axes] == ["z", "y", "x"]
    assert list(ms.datasets[1].coordinateTransformations[0].scale) == [6, 2, 1]
    node = next(iter(reader.Reader(parse_url(str(p)))()))
    same(np.asarray(node.data[0]), a)
    assert node.data[1].shape == (3, 8, 9)
    assert models is not None


def test_spacing_errors(tmp_path):
    Z.save(tmp_path / "plain.zarr", np.zeros((3, 3), "u1"))
    with pytest.raises(zarr_ctypes.VoxaError, match="no OME-NGFF"):
        Z.spacing(tmp_path / "plain.zarr", 2)


# ---- voxa.imread / imwrite, CLI ---------------------------------------------------------------

def test_imread_imwrite_zarr(tmp_path):
    import voxa
    a = rand((12, 30, 31), "int16")
    voxa.imwrite(tmp_path / "x.zarr", a)
    same(voxa.imread(tmp_path / "x.zarr"), a)
    same(zarr.open_group(tmp_path / "x.zarr", mode="r")["0"][...], a)
    b = rand((3, 4, 5, 6), "float32")  # not an OME image: a plain array
    voxa.imwrite(tmp_path / "y.zarr", b)
    same(zarr.open_array(tmp_path / "y.zarr", mode="r")[...], b)
    z = zarr.create_array(store=str(tmp_path / "z.zarr"), shape=(7, 8), chunks=(3, 3), dtype="u8")
    z[...] = np.arange(56).reshape(7, 8)
    same(voxa.imread(tmp_path / "z.zarr/"), np.arange(56, dtype=np.uint64).reshape(7, 8))


def test_cli_on_zarr(tmp_path, cli):
    a = (RNG.random((10, 20, 20)) < 0.2)
    z = zarr.create_array(store=str(tmp_path / "m.zarr"), shape=a.shape, chunks=(4, 8, 8),
                          dtype=bool)
    z[...] = a
    r = cli("info", tmp_path / "m.zarr")
    assert r.returncode == 0, r.stderr
    assert "10" in r.stdout and "bool" in r.stdout
    r = cli("label", tmp_path / "m.zarr", "-o", tmp_path / "l.zarr")
    assert r.returncode == 0, r.stderr
    import scipy.ndimage as ndi
    want, _ = ndi.label(a)
    got = zarr.open_group(tmp_path / "l.zarr", mode="r")["0"][...]
    np.testing.assert_array_equal(got, want)


# ---- bad input ----------------------------------------------------------------------------------

def _small(tmp_path, fmt=3, **kw):
    a = rand((8, 8), "uint16")
    p = tmp_path / "b.zarr"
    Z.save(p, a, format=fmt, chunks=(4, 4), **kw)
    return p, a


@pytest.mark.parametrize("codec", ["raw", "blosc", "zstd", "gzip"])
def test_corrupt_and_truncated_chunks(tmp_path, codec):
    p, a = _small(tmp_path, codec=codec)
    key = p / "c" / "1" / "0"
    data = key.read_bytes()
    key.write_bytes(data[: len(data) // 2])
    with pytest.raises(zarr_ctypes.VoxaError, match=r"c/1/0") as e:
        Z.load(p)
    assert e.value.code == -4
    # Flipped bytes are caught only where the format has a checksum (gzip's
    # CRC-32); raw, blosc and zstd without checksum decode them as voxels.
    if codec == "gzip":
        key.write_bytes(data[:16] + bytes(255 - x for x in data[16:]))
        with pytest.raises(zarr_ctypes.VoxaError, match=r"c/1/0"):
            Z.load(p)


def test_wrong_chunk_size_and_lying_metadata(tmp_path):
    p, a = _small(tmp_path, codec="raw")
    (p / "c" / "0" / "1").write_bytes(b"\0" * 31)
    with pytest.raises(zarr_ctypes.VoxaError, match=r"c/0/1.*31 bytes, expected 32"):
        Z.load(p)
    p, a = _small(tmp_path, codec="zstd")
    meta = json.loads((p / "zarr.json").read_text())
    meta["data_type"] = "uint32"  # lies about the dtype: chunks are half the size
    (p / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(zarr_ctypes.VoxaError, match=r"c/0/0"):
        Z.load(p)
    meta["data_type"] = "uint16"
    meta["chunk_grid"]["configuration"]["chunk_shape"] = [4, 4, 4]
    (p / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(zarr_ctypes.VoxaError, match="chunk_shape"):
        Z.load(p)
    meta["chunk_grid"]["configuration"]["chunk_shape"] = [4, 0]
    (p / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(zarr_ctypes.VoxaError, match="chunk_shape"):
        Z.load(p)
    meta["chunk_grid"]["configuration"]["chunk_shape"] = [4, 4]
    meta["codecs"].append({"name": "lzma"})
    (p / "zarr.json").write_text(json.dumps(meta))
    with pytest.raises(zarr_ctypes.VoxaError, match="codec 'lzma' is not supported"):
        Z.load(p)


def test_unknown_v2_compressor_and_filters(tmp_path):
    p, a = _small(tmp_path, fmt=2)
    meta = json.loads((p / ".zarray").read_text())
    meta["compressor"] = {"id": "lzma"}
    (p / ".zarray").write_text(json.dumps(meta))
    with pytest.raises(zarr_ctypes.VoxaError, match="lzma"):
        Z.load(p)
    meta["compressor"] = None
    meta["filters"] = [{"id": "delta", "dtype": "<u2"}]
    (p / ".zarray").write_text(json.dumps(meta))
    with pytest.raises(zarr_ctypes.VoxaError, match="filters"):
        Z.load(p)


def test_corrupt_shard_index(tmp_path):
    a = rand((8, 8), "uint16")
    p = tmp_path / "s.zarr"
    Z.save(p, a, chunks=(2, 2), shards=(4, 4), codec="raw")
    key = p / "c" / "0" / "1"
    data = bytearray(key.read_bytes())
    data[-10] ^= 0xFF  # index bytes: crc32c mismatch
    key.write_bytes(bytes(data))
    with pytest.raises(zarr_ctypes.VoxaError, match=r"c/0/1.*checksum"):
        Z.load(p)
    key.write_bytes(bytes(data[:20]))
    with pytest.raises(zarr_ctypes.VoxaError, match=r"c/0/1.*truncated"):
        Z.load(p)


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_read_only_folder(tmp_path):
    p, a = _small(tmp_path)
    h = Z.open(p, writable=True)
    os.chmod(p / "c" / "1", stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(zarr_ctypes.VoxaError, match=r"c/1/"):
            Z.write(h, a)
    finally:
        os.chmod(p / "c" / "1", stat.S_IRWXU)
        Z.close(h)


def test_read_only_handle_and_region_errors(tmp_path):
    p, a = _small(tmp_path)
    h = Z.open(p)
    try:
        with pytest.raises(zarr_ctypes.VoxaError, match="read-only"):
            Z.write(h, a)
        with pytest.raises(zarr_ctypes.VoxaError, match="outside the array"):
            Z.read(h, [5, 0], (4, 8), "uint16")
        with pytest.raises(zarr_ctypes.VoxaError, match="dtype"):
            Z.read(h, [0, 0], (4, 8), "uint8")
    finally:
        Z.close(h)
    with pytest.raises(zarr_ctypes.VoxaError, match="not a Zarr array"):
        Z.open(tmp_path)


def test_no_temporaries_left(tmp_path):
    p, a = _small(tmp_path, fsync=True)
    names = [f for _, _, fs in os.walk(p) for f in fs]
    assert not [n for n in names if "tmp" in n], names


def test_cli_bad_zarr_message(tmp_path, cli):
    p, a = _small(tmp_path)
    (p / "c" / "0" / "0").write_bytes(b"junk")
    r = cli("info", p)
    assert r.returncode == 1
    assert "c/0/0" in r.stderr, r.stderr
    subprocess.run(["true"])


# ---- kill -9 while writing: no chunk is ever half there ---------------------------------------

_WRITER = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[2])
import zarr_ctypes
Z = zarr_ctypes.load(sys.argv[3])
h = Z.open(sys.argv[1], writable=True)
print("ready", flush=True)
for rep in range(1000000):
    for i in range(8):   # rewrite every chunk, over and over, each with its own value
        Z.write(h, np.full((8, 64, 64), rep * 8 + i + 1, np.uint32), [8 * i, 0, 0])
"""


@pytest.mark.parametrize("fmt,sharded,fsync", [(2, False, False), (3, True, False),
                                               (3, False, True)])
def test_kill_9_leaves_whole_chunks(tmp_path, fmt, sharded, fsync):
    import signal
    import time
    p = tmp_path / "k.zarr"
    kw = {"shards": (8, 64, 64)} if sharded else {}
    h = Z.create(p, (64, 64, 64), "uint32", format=fmt, chunks=(8, 32, 64) if sharded
                 else (8, 64, 64), codec="zstd", fsync=fsync, **kw)
    Z.close(h)
    here = os.path.dirname(os.path.abspath(__file__))
    for delay in (0.05, 0.2, 0.5):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(p), here, os.path.dirname(CLI)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        got = Z.load(p)  # raises on any truncated or corrupt chunk
        for i in range(8):
            block = got[8 * i: 8 * i + 8]
            # one value per chunk (inner chunks of a shard were written together)
            assert (block == block.flat[0]).all(), (delay, i)
