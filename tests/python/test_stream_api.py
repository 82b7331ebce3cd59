"""voxa.stream: streamed runs on paths. For every op of the registry, a run
from .npy, Zarr and TIFF inputs into .npy, Zarr and TIFF outputs, block by
block, equals the in-memory Python call; TIFF interop both ways with
tifffile (tiled, striped, BigTIFF, compressed, predictors, big-endian,
ImageJ); a TIFF larger than the blocks is streamed in little memory;
progress, cancel and Ctrl-C leave nothing behind; bad input (truncated TIFF,
strips that lie, read-only or full output folder) gives a clear error and
no output that looks complete."""
import json
import os
import pathlib
import shutil
import tempfile
import resource
import signal
import subprocess
import sys
import textwrap

import numpy as np
import scipy.ndimage as ndi
import pytest
import tifffile

import voxa
import voxa.stream
from conftest import CLI
from voxa import _voxa

RNG = np.random.default_rng(11)
SHAPE = (13, 24, 22)
MASK = RNG.random(SHAPE) < 0.45
IMAGE = (RNG.random(SHAPE) * 100).astype(np.float32) + 1
PSF = voxa.gaussian_psf((3, 5, 5), 1.0)
POINTS = np.array([[2.0, 3.5, 4.0], [7.2, 20.0, 11.0], [12.0, 4.0, 21.0]])
CORNERS = np.array([[0, 1, 2], [5, 7, 9], [9, 0, 15]], dtype=float)
PATCHES = RNG.integers(0, 9, (3, 4, 5, 6)).astype(np.int16)
FMT = ["npy", "zarr", "tif"]


def save(path, a):
    """Write an input in the format its extension names."""
    path = str(path)
    if path.endswith(".npy"):
        np.save(path, a)
    elif path.endswith(".tif"):
        tifffile.imwrite(path, a.astype(np.uint8) if a.dtype == bool else a)
    else:
        voxa.imwrite(path, a)
    return path


def load(path):
    path = str(path)
    if path.endswith(".npy"):
        return np.load(path)
    if path.endswith(".tif"):
        return tifffile.imread(path)
    return voxa.imread(path)


def same(got, want):
    want = np.asarray(want)
    if want.dtype == bool:  # TIFF keeps bool as uint8 0/1
        got = got.astype(bool) if got.dtype == np.uint8 else got
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# op -> (input array or None, stream parameters, in-memory call, chunks)
CASES = {
    "label": (MASK, dict(connectivity=2),
              lambda a: voxa.label(a, voxa.generate_binary_structure(3, 2)), (4, 9, 8)),
    "dilate": (MASK, dict(ball=2), lambda a: voxa.binary_dilation(a, ball=2), (4, 9, 8)),
    "erode": (MASK, dict(box=(3, 1, 5), iterations=2),
              lambda a: voxa.binary_erosion(a, box=(3, 1, 5), iterations=2), (5, 7, 22)),
    "open": (MASK, dict(diamond=2), lambda a: voxa.binary_opening(a, diamond=2), (3, 24, 7)),
    "close": (MASK, dict(connectivity=3, border_value=1),
              lambda a: voxa.binary_closing(a, connectivity=3, border_value=1), (6, 6, 6)),
    "fill_holes": (MASK, {}, lambda a: voxa.binary_fill_holes(a), None),
    "edt": (MASK, dict(spacing=(2.0, 1.0, 0.5)),
            lambda a: voxa.distance_transform_edt(a, sampling=(2.0, 1.0, 0.5)), None),
    "balls": (None, dict(shape=SHAPE, points=POINTS, radius=3.5),
              lambda a: voxa.balls(SHAPE, POINTS, 3.5), (5, 10, 11)),
    # one block: the same FFTs as in memory, so equal bit for bit
    "deconvolve": (IMAGE, dict(psf=PSF, iterations=3),
                   lambda a: voxa.richardson_lucy(a, PSF, num_iter=3), SHAPE),
    "roi": (IMAGE, dict(corners=CORNERS, size=(4, 5, 6)),
            lambda a: voxa.extract_patches(a, CORNERS.astype(int), (4, 5, 6)), None),
    "threshold": (IMAGE, dict(method="otsu"), lambda a: voxa.threshold(a, method="otsu"), None),
    "paste": (PATCHES, dict(corners=CORNERS, shape=SHAPE, op="add"),
              lambda a: voxa.paste_patches(np.zeros(SHAPE, np.int16), a, CORNERS.astype(int),
                                           op="add"), None),
}


def test_every_op_has_a_case():
    assert sorted(CASES) == sorted(op["name"] for op in _voxa.ops())


@pytest.mark.parametrize("out_fmt", FMT)
@pytest.mark.parametrize("in_fmt", FMT)
@pytest.mark.parametrize("name", sorted(CASES))
def test_stream_equals_in_memory(tmp_path, name, in_fmt, out_fmt):
    array, params, call, chunks = CASES[name]
    src = None
    if array is not None:
        if array.ndim > 3 and in_fmt == "tif":
            pytest.skip("TIFF holds 2-D and 3-D arrays")
        src = save(tmp_path / f"in.{in_fmt}", array)
    elif in_fmt != "npy":
        pytest.skip("no input")
    want = call(array)
    count = None
    if isinstance(want, tuple):
        want, count = want
    out = tmp_path / f"out.{out_fmt}"
    if np.asarray(want).ndim > 3 and out_fmt == "tif":
        with pytest.raises(TypeError, match="2D or 3D"):
            voxa.stream.run(name, src, out, chunks=chunks, **params)
        assert os.listdir(tmp_path) == [os.path.basename(src)]
        return
    got_count = voxa.stream.run(name, src, out, chunks=chunks, **params)
    same(load(out), want)
    if name == "label":
        assert got_count == count
    if name == "balls":
        assert got_count == int(np.count_nonzero(want))
    leftovers = [f for f in os.listdir(tmp_path) if "tmp" in f]
    assert not leftovers


def test_python_names_plan_and_argument_errors(tmp_path):
    src = save(tmp_path / "m.npy", MASK)
    p = voxa.stream.plan("binary_opening", src, ball=2, mem_limit="8K")
    assert p["shape"] == SHAPE and p["dtype"] == "bool" and p["halo_lo"] == (4, 4, 4)
    assert p["nblocks"] > 1 and p["peak_bytes"] <= 8 << 10 and not p["global"]
    assert voxa.stream.plan("label", src)["global"]
    assert voxa.stream.plan("edt", src)["streamed"]
    assert voxa.stream.parse_size("1.5K") == 1536 and voxa.stream.parse_size(7) == 7
    assert voxa.stream.parse_size("2GiB") == 2 << 30
    for bad in ("", "G", "-1M", "12Q", 0):
        with pytest.raises(ValueError, match="mem_limit"):
            voxa.stream.parse_size(bad)
    with pytest.raises(ValueError, match="no op named 'nope'"):
        voxa.stream.run("nope", src, tmp_path / "o.npy")
    with pytest.raises(TypeError, match="no parameter 'radius'"):
        voxa.stream.run("dilate", src, tmp_path / "o.npy", ball=1, radius=2)
    with pytest.raises(ValueError, match="chunks: 2 sizes for a 3-D output"):
        voxa.stream.run("dilate", src, tmp_path / "o.npy", ball=1, chunks=(4, 4))
    with pytest.raises(TypeError, match="needs an input path"):
        voxa.stream.run("label", None, tmp_path / "o.npy")
    with pytest.raises(TypeError, match="takes no input"):
        voxa.stream.run("balls", src, tmp_path / "o.npy", shape=SHAPE, points=POINTS, radius=1)
    # one slice of the mask (24 x 22) with its uint32 slice values: 528 x 6 bytes > 2K
    with pytest.raises(MemoryError, match="mem_limit 2048 bytes: the plan needs"):
        voxa.stream.run("edt", src, tmp_path / "o.npy", mem_limit="2K")
    with pytest.raises(ValueError, match="pyramid"):
        voxa.stream.run("label", src, tmp_path / "o.npy", pyramid=2)
    with pytest.raises(OSError, match="missing.npy"):
        voxa.stream.run("label", tmp_path / "missing.npy", tmp_path / "o.npy")
    assert sorted(os.listdir(tmp_path)) == ["m.npy"]


# ---- TIFF interop --------------------------------------------------------------------

def _tifffile_variants():
    img16 = (RNG.random(SHAPE) * 60000).astype(np.uint16)
    f32 = RNG.random(SHAPE).astype(np.float32)
    return [
        ("tiled", img16, dict(tile=(16, 16))),
        ("tiled-zlib", img16, dict(tile=(16, 32), compression="zlib")),
        ("striped", img16, dict(rowsperstrip=3)),
        ("one-strip", img16, dict(rowsperstrip=SHAPE[1])),
        ("bigtiff", img16, dict(bigtiff=True, rowsperstrip=5)),
        ("bigtiff-tiled-lzw", img16, dict(bigtiff=True, tile=(16, 16), compression="lzw")),
        ("zlib-predictor", img16, dict(compression="zlib", predictor=True, rowsperstrip=4)),
        ("packbits", img16.astype(np.uint8), dict(compression="packbits")),
        ("big-endian", img16, dict(byteorder=">")),
        ("imagej", img16, dict(imagej=True)),
        ("float-predictor", f32, dict(compression="zlib", predictor=True)),
        ("int32-zstd", img16.astype(np.int32) - 30000, dict(compression="zstd")),
    ]


@pytest.mark.parametrize("case", _tifffile_variants(), ids=lambda c: c[0])
def test_reads_what_tifffile_writes(tmp_path, case):
    _, a, kw = case
    p = tmp_path / "in.tif"
    try:
        tifffile.imwrite(p, a, **kw)
    except (ValueError, ImportError, KeyError) as e:  # a codec tifffile lacks here
        pytest.skip(str(e))
    np.testing.assert_array_equal(tifffile.imread(p), a)
    # the values: one patch as large as the volume is the volume
    voxa.stream.run("roi", p, tmp_path / "all.npy", corners=np.zeros((1, 3)), size=SHAPE)
    np.testing.assert_array_equal(np.load(tmp_path / "all.npy")[0], a)
    # region reads block by block: erosion by a 1x1x1 box is the identity on
    # the mask; label equals the in-memory label
    voxa.stream.run("erode", p, tmp_path / "id.npy", box=(1, 1, 1), chunks=(3, 7, 5))
    np.testing.assert_array_equal(np.load(tmp_path / "id.npy"), a != 0)
    n = voxa.stream.run("label", p, tmp_path / "l.npy", chunks=(4, 9, 8))
    want, wn = voxa.label(a)
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), want)
    assert n == wn


@pytest.mark.parametrize("dtype", ["uint8", "int16", "uint16", "int32", "uint32", "int64",
                                   "float32", "float64", "bool"])
@pytest.mark.parametrize("shape", [(5, 300, 301), (23, 31), (1, 7, 9)])
def test_tifffile_reads_what_voxa_streams(tmp_path, dtype, shape):
    """A streamed TIFF output (written block by block, in place) is the
    array for tifffile: one series of the right shape, BigTIFF, uncompressed,
    several strips per page where a page exceeds 256 KiB."""
    rng = np.random.default_rng(3)
    a = (rng.random(shape) * 1000 - (0 if dtype.startswith("u") or dtype == "bool" else 500))
    a = (a > 500) if dtype == "bool" else a.astype(dtype)
    # paste of the whole array as one patch writes it exactly
    patches = tmp_path / "p.npy"
    np.save(patches, a[None])
    voxa.stream.run("paste", patches, tmp_path / "o.tif", corners=np.zeros((1, a.ndim)),
                    shape=a.shape)
    with tifffile.TiffFile(tmp_path / "o.tif") as t:
        assert t.is_bigtiff and len(t.series) == 1
        assert t.series[0].shape == (shape[1:] if shape[0] == 1 else shape)
        page = t.pages[0]
        assert page.compression == 1 and page.tags["Software"].value.startswith("voxa")
        if page.shape[0] * page.shape[1] * a.itemsize > 256 << 10:
            assert len(page.dataoffsets) > 1
        got = t.asarray()
    np.testing.assert_array_equal(got.reshape(a.shape), a.astype(np.uint8) if dtype == "bool"
                                  else a)


# ---- memory ----------------------------------------------------------------------------

def _peak_rss_kib(args, env=None):
    """Peak RSS (KiB) of a command, run in a fresh Python so that
    RUSAGE_CHILDREN holds that command alone."""
    code = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.stderr.write(r.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                       text=True, env=env)
    rc, kib = r.stdout.split()
    assert rc == "0", r.stderr
    return int(kib)


def _big_tiff(path):
    """A 32 MiB uint8 TIFF in strips of 64 rows, with one component through
    every block."""
    a = np.zeros((32, 1024, 1024), np.uint8)
    a[::3, ::13, ::5] = 1
    a[:, 500, :] = 1
    tifffile.imwrite(path, a, rowsperstrip=64)


def test_tiff_larger_than_the_blocks_streams_in_little_memory(tmp_path):
    """A 32 MiB TIFF dilated into a TIFF with --mem-limit 8M: the peak RSS
    stays near the blocks (the file is read by strips, the output written in
    place), while the in-memory run holds input and output (64 MiB)."""
    _big_tiff(tmp_path / "big.tif")
    env = dict(os.environ, VOXA_NUM_THREADS="1")
    streamed = _peak_rss_kib([CLI, "morph", "dilate", tmp_path / "big.tif", "--ball", "1", "-o",
                              tmp_path / "s.tif", "--mem-limit", "8M"], env)
    whole = _peak_rss_kib([CLI, "morph", "dilate", tmp_path / "big.tif", "--ball", "1", "-o",
                           tmp_path / "w.tif"], env)
    assert streamed < 32 << 10, streamed  # KiB: below the file's size
    assert whole > 64 << 10, whole
    with tifffile.TiffFile(tmp_path / "s.tif") as s, tifffile.TiffFile(tmp_path / "w.tif") as w:
        np.testing.assert_array_equal(s.asarray(), w.asarray())


@pytest.mark.parametrize("ndim, chunks", [(2, (3, 5)), (2, (1, 7)), (4, (2, 3, 1, 4)),
                                          (4, (3, 2, 5, 2))])
def test_label_by_blocks_2d_4d_every_connectivity(tmp_path, ndim, chunks):
    """Faces across every axis and diagonals through block corners (pass 2
    reads the next row's blocks within one voxel): scipy's labels, any ndim."""
    rng = np.random.default_rng(ndim * 10 + chunks[0])
    shape = (11, 13) if ndim == 2 else (5, 7, 6, 9)
    for density in (0.3, 0.6):
        m = rng.random(shape) < density
        np.save(tmp_path / "m.npy", m)
        for conn in range(1, ndim + 1):
            st = ndi.generate_binary_structure(ndim, conn)
            n = voxa.stream.run("label", tmp_path / "m.npy", tmp_path / "l.npy", chunks=chunks,
                                connectivity=conn)
            want, wn = ndi.label(m, st)
            np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), want)
            assert n == wn


def test_label_by_blocks_keeps_its_faces_on_disk(tmp_path):
    """Label of a 32 MiB TIFF with --mem-limit 8M: every block face (57 MiB of
    int32 layers at this block size) goes to a scratch file, so the peak RSS
    stays below the file's size; equal to the in-memory labels."""
    _big_tiff(tmp_path / "big.tif")
    env = dict(os.environ, VOXA_NUM_THREADS="1")
    plan = subprocess.run([CLI, "label", tmp_path / "big.tif", "-o", tmp_path / "s.tif",
                           "--mem-limit", "8M", "--dry-run"], capture_output=True, text=True)
    assert plan.returncode == 0 and "face layers" in plan.stdout, plan.stdout + plan.stderr
    streamed = _peak_rss_kib([CLI, "label", tmp_path / "big.tif", "-o", tmp_path / "s.tif",
                              "--mem-limit", "8M"], env)
    whole = _peak_rss_kib([CLI, "label", tmp_path / "big.tif", "-o", tmp_path / "w.tif"], env)
    assert streamed < 32 << 10, streamed  # KiB
    assert whole > 32 << 10, whole
    assert sorted(os.listdir(tmp_path)) == ["big.tif", "s.tif", "w.tif"]  # no scratch left
    with tifffile.TiffFile(tmp_path / "s.tif") as s, tifffile.TiffFile(tmp_path / "w.tif") as w:
        np.testing.assert_array_equal(s.asarray(), w.asarray())


# ---- progress, cancel, Ctrl-C --------------------------------------------------------------

def test_progress_and_cancel(tmp_path):
    src = save(tmp_path / "m.tif", MASK)
    seen = []
    voxa.stream.run("dilate", src, tmp_path / "o.tif", ball=1, chunks=(2, 24, 22),
                    progress=lambda d, t: seen.append((d, t)))
    # blocks run in parallel: reports rise (some may be merged) and end at 7 of 7
    assert seen[-1] == (7, 7) and all(t == 7 for _, t in seen)
    assert all(a[0] < b[0] for a, b in zip(seen, seen[1:]))
    for out in ("c.tif", "c.npy", "c.zarr"):
        with pytest.raises(KeyboardInterrupt):
            voxa.stream.run("dilate", src, tmp_path / out, ball=1, chunks=(2, 24, 22),
                            progress=lambda d, t: d < 3)

        class Boom(Exception):
            pass

        def fail(d, t):  # reports may skip a number (blocks run in parallel)
            if d >= 2:
                raise Boom("stop")

        with pytest.raises(Boom):
            voxa.stream.run("label", src, tmp_path / out, chunks=(2, 24, 22), progress=fail)
        assert not (tmp_path / out).exists() or not (tmp_path / out / "zarr.json").exists()
    assert sorted(f for f in os.listdir(tmp_path) if f != "c.zarr") == ["m.tif", "o.tif"]


def test_ctrl_c_cancels_cleanly(tmp_path):
    """SIGINT during a run (sent at the third block) ends it with
    KeyboardInterrupt at the next block: nothing under the output's name, no
    temporary, the process still healthy."""
    src = save(tmp_path / "m.npy", MASK)
    script = textwrap.dedent(f"""
        import os, signal, sys
        import voxa.stream
        state = dict(out=None, sent=None)
        def tick(done, total):  # blocks run in parallel: a report may skip 3
            if done >= 3 and state["sent"] != state["out"]:
                state["sent"] = state["out"]
                os.kill(os.getpid(), signal.SIGINT)
        for out in ("o.tif", "o.npy", "o.zarr"):
            state["out"] = out
            try:
                voxa.stream.run("label", {str(src)!r}, os.path.join({str(tmp_path)!r}, out),
                                chunks=(1, 24, 22), progress=tick)
            except KeyboardInterrupt:
                print("interrupted", out)
        print("alive")
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:4] == ["interrupted o.tif", "interrupted o.npy",
                                        "interrupted o.zarr", "alive"]
    left = sorted(os.listdir(tmp_path))
    assert left in (["m.npy"], ["m.npy", "o.zarr"]), left
    if "o.zarr" in left:  # an interrupted OME-Zarr folder (resumable), never complete
        assert not (tmp_path / "o.zarr" / "zarr.json").exists()


# ---- bad input -------------------------------------------------------------------------------

def test_truncated_tiff(tmp_path):
    a = (RNG.random((8, 64, 64)) * 1000).astype(np.uint16)
    p = tmp_path / "t.tif"
    tifffile.imwrite(p, a, rowsperstrip=16)
    data = p.read_bytes()
    # tifffile puts the directories first and the pixels after: cut the pixels
    p.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(ValueError, match=r"t\.tif.*(page|strip|truncated)"):
        voxa.stream.run("label", p, tmp_path / "o.tif")
    p.write_bytes(data[:200])  # the directories themselves cut
    with pytest.raises((ValueError, OSError), match=r"t\.tif"):
        voxa.stream.run("label", p, tmp_path / "o.tif")
    assert sorted(os.listdir(tmp_path)) == ["t.tif"]


def _patch_tag(path, tag, value):
    """Overwrite every value of `tag` of page 0 in place (273 StripOffsets,
    278 RowsPerStrip, 279 StripByteCounts), clamped to the tag's type."""
    with tifffile.TiffFile(path) as t:
        tg = t.pages[0].tags[tag]
        pos, count, size = tg.valueoffset, tg.count, {3: 2, 4: 4, 16: 8}[int(tg.dtype)]
        order = t.byteorder
    value = min(value, 2 ** (8 * size) - 1)
    raw = bytearray(path.read_bytes())
    for i in range(count):
        raw[pos + i * size: pos + (i + 1) * size] = np.array(value, order + {2: "H", 4: "I",
                                                                              8: "Q"}[size]).tobytes()
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize("compression, tag, value", [
    ("zlib", 279, 7),            # byte counts too short for the rows
    ("zlib", 279, 10 ** 9),      # byte counts past the end of the file
    ("zlib", 273, 10 ** 9),      # offsets past the end of the file
    ("zlib", 278, 1000),         # more rows per strip than the strips hold
    (None, 273, 10 ** 9),
])
def test_tiff_lying_about_its_strips(tmp_path, compression, tag, value):
    """A clear error naming the file, page and strip; no crash, no output."""
    a = (RNG.random((3, 40, 50)) * 1000).astype(np.uint16)
    p = tmp_path / "lie.tif"
    tifffile.imwrite(p, a, rowsperstrip=8, photometric="minisblack", compression=compression)
    _patch_tag(p, tag, value)
    with pytest.raises(ValueError, match=r"lie\.tif': page 0, strip 0"):
        voxa.stream.run("dilate", p, tmp_path / "o.tif", ball=1, chunks=(1, 40, 50))
    assert sorted(os.listdir(tmp_path)) == ["lie.tif"]


def test_uncompressed_strip_counts_are_not_needed(tmp_path):
    """Uncompressed strips are read by the rows the page's geometry gives
    (libtiff ignores their byte counts): counts that lie change nothing."""
    a = (RNG.random((3, 40, 50)) * 1000).astype(np.uint16)
    p = tmp_path / "lie.tif"
    tifffile.imwrite(p, a, rowsperstrip=8, photometric="minisblack")
    _patch_tag(p, 279, 7)
    voxa.stream.run("roi", p, tmp_path / "o.npy", corners=np.zeros((1, 3)), size=a.shape)
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy")[0], a)


def _as_nobody():
    """Drop root to nobody in the child (root ignores folder permissions)."""
    if os.geteuid() == 0:
        os.setgid(65534)
        os.setuid(65534)


def _cli_runs_as_nobody():
    if os.geteuid() != 0:
        return True
    r = subprocess.run([CLI, "--version"], capture_output=True, preexec_fn=_as_nobody)
    return r.returncode == 0


@pytest.mark.parametrize("out", ["o.tif", "o.npy", "o.zarr"])
def test_read_only_output_folder(tmp_path, out):
    if not _cli_runs_as_nobody():
        pytest.skip("the CLI cannot run as nobody here")
    # a folder every user can enter (pytest's own are private to root)
    base = pathlib.Path(tempfile.mkdtemp(prefix="voxa-ro-"))
    try:
        os.chmod(base, 0o755)
        src = save(base / "m.npy", MASK)
        os.chmod(src, 0o644)
        ro = base / "ro"
        ro.mkdir()
        os.chmod(ro, 0o555)
        r = subprocess.run([CLI, "label", src, "-o", ro / out, "--mem-limit", "1G"],
                           capture_output=True, text=True, preexec_fn=_as_nobody)
        assert r.returncode == 1, r.stderr
        assert "ro/o" in r.stderr and "ermission denied" in r.stderr, r.stderr
        assert os.listdir(ro) == []
    finally:
        shutil.rmtree(base)


def _fsize_limit(limit):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


@pytest.mark.parametrize("out", ["o.tif", "o.npy", "o.zarr"])
def test_full_output_folder_file_limit(tmp_path, out):
    """Writes fail part-way (RLIMIT_FSIZE: EFBIG, as a full disk gives
    ENOSPC): a clear error, nothing under the output's name or marked complete."""
    a = RNG.random((16, 64, 64)) < 0.5
    src = save(tmp_path / "m.npy", a)
    r = subprocess.run([CLI, "label", src, "-o", tmp_path / out, "--mem-limit", "1G",
                        "--chunks", "2,64,64", "--dtype", "int64"], capture_output=True,
                       text=True, preexec_fn=_fsize_limit(3000 if out == "o.zarr" else 40000))
    assert r.returncode == 1, r.stderr
    assert "voxa: label:" in r.stderr and "large" in r.stderr, r.stderr
    left = sorted(os.listdir(tmp_path))
    assert left in (["m.npy"], ["m.npy", "o.zarr"]), left
    if out == "o.zarr":
        assert not (tmp_path / out / "zarr.json").exists()


@pytest.fixture
def tiny_tmpfs(tmp_path):
    mnt = tmp_path / "full"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                                            str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield mnt
    subprocess.run(["umount", str(mnt)], capture_output=True)


@pytest.mark.parametrize("out", ["o.tif", "o.npy", "o.zarr"])
def test_full_tmpfs(tmp_path, tiny_tmpfs, out):
    """A real full file system (64 KiB tmpfs, a 2 MiB output): ENOSPC named,
    nothing left that looks complete."""
    a = RNG.random((32, 64, 128)) < 0.5
    src = save(tmp_path / "m.npy", a)
    with pytest.raises(OSError, match="(No space|space left)"):
        voxa.stream.run("label", src, tiny_tmpfs / out, chunks=(2, 64, 128),
                        dtype="int64")
    left = os.listdir(tiny_tmpfs)
    assert left in ([], ["o.zarr"]), left
    if left:
        assert not (tiny_tmpfs / "o.zarr" / "zarr.json").exists()


def test_zarr_output_replacing_a_complete_image(tmp_path):
    """A failed run over an earlier complete OME-Zarr image leaves no image
    that looks complete (the old group metadata goes first)."""
    src = save(tmp_path / "m.npy", MASK)
    voxa.stream.run("label", src, tmp_path / "o.zarr")
    assert (tmp_path / "o.zarr" / "zarr.json").exists()
    with pytest.raises(KeyboardInterrupt):
        voxa.stream.run("label", src, tmp_path / "o.zarr", chunks=(2, 24, 22),
                        progress=lambda d, t: d < 2)
    assert not (tmp_path / "o.zarr" / "zarr.json").exists()
    n = voxa.stream.run("label", src, tmp_path / "o.zarr", chunks=(2, 24, 22))
    want, wn = voxa.label(MASK)
    np.testing.assert_array_equal(voxa.imread(tmp_path / "o.zarr"), want)
    assert n == wn
    meta = json.loads((tmp_path / "o.zarr" / "zarr.json").read_text())
    assert meta["attributes"]["ome"]["version"] == "0.5"


def test_plain_zarr_output_published_at_commit(tmp_path):
    """A 4-D Zarr output (a plain array, no OME completion mark) is written
    in a temporary folder and renamed at commit: a failed run leaves none."""
    src = save(tmp_path / "img.npy", IMAGE)
    with pytest.raises(ValueError, match="outside the array"):
        voxa.stream.run("roi", src, tmp_path / "p.zarr", corners=CORNERS * 100, size=(4, 5, 6))
    assert sorted(os.listdir(tmp_path)) == ["img.npy"]
    voxa.stream.run("roi", src, tmp_path / "p.zarr", corners=CORNERS, size=(4, 5, 6))
    same(voxa.imread(tmp_path / "p.zarr"),
         voxa.extract_patches(IMAGE, CORNERS.astype(int), (4, 5, 6)))
    assert sorted(os.listdir(tmp_path)) == ["img.npy", "p.zarr"]
