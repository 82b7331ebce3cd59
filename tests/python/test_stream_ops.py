"""edt, fill holes, roi and paste streamed through the CLI (--mem-limit,
--chunks; .npy and .zarr in and out) equal scipy / the in-memory op; ROI
extraction from a Zarr reads only the chunks the patches touch; the streamed
runs' peak memory is set by the block, not by the volume."""
import subprocess
import time

import numpy as np
import pytest
from scipy import ndimage as ndi

from conftest import CLI
import voxa

zarr = pytest.importorskip("zarr")


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


def load(path):
    path = str(path)
    if path.endswith(".zarr"):
        g = zarr.open(path, mode="r")
        return g["0"][:] if isinstance(g, zarr.Group) else g[:]
    return np.load(path)


def zarr_in(path, a, chunks):
    z = zarr.create_array(path, shape=a.shape, chunks=chunks, dtype=a.dtype)
    z[:] = a
    return path


@pytest.fixture(scope="module")
def mask():
    rng = np.random.default_rng(11)
    m = rng.random((37, 29, 23)) < 0.8
    m[10:30, 5:25, 3:20] = True  # an object crossing many blocks, long distances
    m[15:25, 10:20, 8:15] = rng.random((10, 10, 7)) < 0.5  # with holes inside
    return m


CHUNKS = ["5,4,7", "1,29,23", "37,1,2"]


@pytest.mark.parametrize("chunks", CHUNKS)
@pytest.mark.parametrize("opts", [[], ["--spacing", "2,1,0.7"], ["--metric", "cityblock"],
                                  ["--metric", "chessboard"], ["--dtype", "float32"],
                                  ["--squared", "--dtype", "uint32"]], ids=str)
def test_edt(tmp_path, mask, chunks, opts):
    np.save(tmp_path / "m.npy", mask)
    r = run("edt", tmp_path / "m.npy", "-o", tmp_path / "s.npy", *opts, "--mem-limit", "1G",
            "--chunks", chunks)
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "s.npy")
    r = run("edt", tmp_path / "m.npy", "-o", tmp_path / "w.npy", *opts)  # in memory
    assert r.returncode == 0, r.stderr
    want = np.load(tmp_path / "w.npy")
    if "--metric" in opts:
        np.testing.assert_array_equal(
            want, ndi.distance_transform_cdt(mask, metric=opts[1]))
    else:
        sp = [2, 1, 0.7] if "--spacing" in opts else None
        d = np.sqrt(want.astype(np.float64)) if "--squared" in opts else want
        np.testing.assert_allclose(d, ndi.distance_transform_edt(mask, sampling=sp), rtol=1e-6)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_edt_zarr_and_memory_limit(tmp_path, mask):
    zarr_in(tmp_path / "m.zarr", mask, (8, 8, 8))
    r = run("edt", tmp_path / "m.zarr", "-o", tmp_path / "d.zarr", "--mem-limit", "24K")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(load(tmp_path / "d.zarr"), voxa.distance_transform_edt(mask))
    r = run("edt", tmp_path / "m.zarr", "-o", tmp_path / "x.npy", "--mem-limit", "24K",
            "--dry-run")
    assert r.returncode == 0 and "streamed" in r.stdout
    # no scratch store left behind, on success or failure
    r = run("edt", tmp_path / "m.zarr", "-o", tmp_path / "u.npy", "--dtype", "uint32",
            "--mem-limit", "1M")  # uint32 without --squared: refused before any pass
    assert r.returncode == 1 and "uint32" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.zarr", "m.zarr"]
    no_bg = np.ones((6, 5, 4), bool)  # scipy's distances from (-1, 0, 0)
    np.save(tmp_path / "o.npy", no_bg)
    r = run("edt", tmp_path / "o.npy", "-o", tmp_path / "o2.npy", "--mem-limit", "1G",
            "--chunks", "2,2,3", "--spacing", "1.5,1,2")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "o2.npy"),
                                  ndi.distance_transform_edt(no_bg, sampling=[1.5, 1, 2]))


STRUCTS = {
    "c1": None,
    "c3": ndi.generate_binary_structure(3, 3),
    "skew": np.array([[[0, 1, 0], [0, 0, 0], [0, 0, 0]], [[0, 0, 0], [1, 0, 1], [0, 0, 1]],
                      [[0, 0, 0], [0, 1, 0], [0, 0, 0]]], bool),
    "wide": np.ones((1, 5, 3), bool),
}


@pytest.mark.parametrize("chunks", CHUNKS + ["4,4,4"])
@pytest.mark.parametrize("name", list(STRUCTS))
def test_fill_holes(tmp_path, mask, name, chunks):
    m = ~mask | (np.random.default_rng(3).random(mask.shape) < 0.3)  # many walls and holes
    np.save(tmp_path / "m.npy", m)
    s = STRUCTS[name]
    opts = []
    if s is not None:
        np.save(tmp_path / "s.npy", s)
        opts = ["--structure", tmp_path / "s.npy"]
    origin = [0, 1, 0] if name == "skew" else None
    if origin:
        opts += ["--origin", "0,1,0"]
    r = run("morph", "fill-holes", tmp_path / "m.npy", "-o", tmp_path / "f.npy", *opts,
            "--mem-limit", "1G", "--chunks", chunks)
    assert r.returncode == 0, r.stderr
    want = ndi.binary_fill_holes(m, structure=s, origin=origin or 0)
    np.testing.assert_array_equal(np.load(tmp_path / "f.npy"), want)


def test_fill_holes_zarr(tmp_path):
    # nested shells: holes inside holes, crossing every chunk
    g = np.indices((40, 44, 36)) - np.array([20, 22, 18])[:, None, None, None]
    r2 = (g ** 2).sum(0)
    m = ((r2 > 15 ** 2) & (r2 <= 17 ** 2)) | ((r2 > 6 ** 2) & (r2 <= 8 ** 2))
    zarr_in(tmp_path / "m.zarr", m, (7, 9, 10))
    r = run("morph", "fill-holes", tmp_path / "m.zarr", "-o", tmp_path / "f.zarr",
            "--mem-limit", "40K")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(load(tmp_path / "f.zarr"), ndi.binary_fill_holes(m))


def test_roi_reads_only_touched_chunks(tmp_path):
    img = (np.arange(40 * 40 * 40, dtype=np.int32) * 7 % 1001).reshape(40, 40, 40)
    z = zarr_in(tmp_path / "img.zarr", img, (8, 8, 8))
    corners = np.array([[1, 2, 3], [4, 4, 4], [9, 1, 17], [1, 3, 2]])
    np.save(tmp_path / "c.npy", corners)
    touched = set()
    for c in corners:
        for k in np.ndindex(2, 2, 2):  # patches 6 wide: at most 2 chunks per axis
            touched.add(tuple((c + np.array(k) * 5) // 8))
    chunk_files = [p for p in (z / "c").rglob("*") if p.is_file()]
    corrupt = [p for p in chunk_files
               if tuple(int(x) for x in p.relative_to(z / "c").parts) not in touched]
    assert len(corrupt) > 100
    for p in corrupt:
        p.write_bytes(b"not a chunk")
    r = run("roi", z, "--corners", tmp_path / "c.npy", "--size", "6,6,6", "-o",
            tmp_path / "p.npy")  # in memory: reads the whole array, meets a corrupt chunk
    assert r.returncode == 1
    r = run("roi", z, "--corners", tmp_path / "c.npy", "--size", "6,6,6", "-o",
            tmp_path / "p.npy", "--mem-limit", "4K")  # batches of a few patches
    assert r.returncode == 0, r.stderr
    want = np.stack([img[a:a + 6, b:b + 6, c:c + 6] for a, b, c in corners])
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), want)


@pytest.mark.parametrize("mode", ["constant", "nearest", "reflect", "clip"])
@pytest.mark.parametrize("src", ["npy", "zarr"])
def test_roi_modes(tmp_path, mode, src):
    rng = np.random.default_rng(4)
    img = rng.integers(0, 60000, (30, 26, 22)).astype(np.uint16)
    path = tmp_path / "i.npy"
    np.save(path, img)
    if src == "zarr":
        path = zarr_in(tmp_path / "i.zarr", img, (7, 5, 9))
    cen = np.concatenate([rng.integers(-12, 40, (60, 3)), [[0, 0, 0], [29, 25, 21]]])
    np.save(tmp_path / "c.npy", cen)
    for out in ("p.npy", "p.zarr"):
        r = run("roi", path, "--centres", tmp_path / "c.npy", "--size", "9,4,7", "--mode", mode,
                "-o", tmp_path / out, "--mem-limit", "20K")
        assert r.returncode == 0, r.stderr
        want = voxa.extract_patches(img, cen, (9, 4, 7), centered=True, mode=mode)
        np.testing.assert_array_equal(load(tmp_path / out), want)


@pytest.mark.parametrize("op", ["overwrite", "add", "max", "mean"])
def test_paste(tmp_path, op):
    rng = np.random.default_rng(9)
    patches = rng.integers(0, 200, (25, 6, 5, 4)).astype(np.int16)
    corners = rng.integers(-3, 30, (25, 3))
    vol = rng.integers(0, 50, (30, 28, 26)).astype(np.int16)
    np.save(tmp_path / "p.npy", patches)
    np.save(tmp_path / "c.npy", corners)
    np.save(tmp_path / "v.npy", vol)
    want = voxa.paste_patches(vol.copy(), patches, corners, op=op, mode="crop")
    for out, chunks in (("o.npy", "7,5,26"), ("o.zarr", "30,1,4")):
        r = run("paste", tmp_path / "p.npy", "--corners", tmp_path / "c.npy", "--volume",
                tmp_path / "v.npy", "--op", op, "--mode", "crop", "-o", tmp_path / out,
                "--mem-limit", "1G", "--chunks", chunks)
        assert r.returncode == 0, r.stderr
        np.testing.assert_array_equal(load(tmp_path / out), want)


def peak_rss_mib(*args):
    """Peak RSS (VmHWM, which only grows) of one CLI run in MiB, read while it
    runs (a lower bound: a peak in its last milliseconds may be missed)."""
    p = subprocess.Popen([CLI, *map(str, args)], stdout=subprocess.DEVNULL)
    hwm = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = max(hwm, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.002)
    assert p.returncode == 0
    return hwm / 1024


def test_peak_memory_set_by_the_block(tmp_path):
    m = np.ones((48, 400, 400), bool)  # 7.3 MiB in; edt output 58.6 MiB
    m[::7, ::9, ::11] = False
    m[20:30, 100:300, 100:300] = False
    np.save(tmp_path / "m.npy", m)
    for cmd in (["edt"], ["morph", "fill-holes"]):
        whole = peak_rss_mib(*cmd, tmp_path / "m.npy", "-o", tmp_path / "w.npy")
        streamed = peak_rss_mib(*cmd, tmp_path / "m.npy", "-o", tmp_path / "s.npy",
                                "--mem-limit", "4M")
        np.testing.assert_array_equal(np.load(tmp_path / "w.npy"), np.load(tmp_path / "s.npy"))
        print(cmd, "peak RSS MiB: in memory", whole, "streamed", streamed)
        assert streamed < 4 + 12, (cmd, whole, streamed)  # the limit + process, libraries
        assert whole > 2 * streamed, (cmd, whole, streamed)
