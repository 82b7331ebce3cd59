"""--pyramid N / voxa.stream.run(pyramid=N): OME-Zarr outputs with N
downsampled levels made block by block after level 0. Each level equals a
NumPy reference (mean of 2x2x2 blocks, partial at odd edges, rounded half to
even for integers; or the block's first voxel) and voxa's in-memory pyramid
(voxa_zarr_write_ome); the metadata lists every level with its scale (OME-NGFF
0.4 on Zarr v2, 0.5 on v3) and zarr-python, ome-zarr-models and ome-zarr-py
read it; the image is marked complete only once every level is written."""
import json
import os
import subprocess

import numpy as np
import pytest
import zarr

import voxa
import voxa.stream
import zarr_ctypes
from conftest import CLI

Z = zarr_ctypes.load(os.path.dirname(CLI))
RNG = np.random.default_rng(21)


def mean_down(a):
    """One level: mean of each 2x..x2 block (the voxels present at odd
    edges), rounded half to even for integers."""
    pad = np.pad(a.astype(np.float64), [(0, s % 2) for s in a.shape], constant_values=np.nan)
    blocks = pad.reshape([x for s in pad.shape for x in (s // 2, 2)])
    m = np.nanmean(blocks, axis=tuple(range(1, 2 * a.ndim, 2)))
    return (m if a.dtype.kind == "f" else np.rint(m)).astype(a.dtype)


def stride_down(a):
    return a[tuple(slice(None, None, 2) for _ in a.shape)]


def levels(a, n, down):
    out = [a]
    for _ in range(n):
        out.append(down(out[-1]))
    return out


def group_meta(path, fmt):
    if fmt == 2:
        assert json.loads((path / ".zgroup").read_text())["zarr_format"] == 2
        (ms,) = json.loads((path / ".zattrs").read_text())["multiscales"]
        assert ms["version"] == "0.4"
        return ms
    g = json.loads((path / "zarr.json").read_text())
    assert g["node_type"] == "group" and g["attributes"]["ome"]["version"] == "0.5"
    (ms,) = g["attributes"]["ome"]["multiscales"]
    return ms


def check_levels(path, want, fmt, spacing):
    ms = group_meta(path, fmt)
    assert [d["path"] for d in ms["datasets"]] == [str(k) for k in range(len(want))]
    grp = zarr.open_group(path, mode="r", zarr_format=fmt)
    for k, (d, w) in enumerate(zip(ms["datasets"], want)):
        (t,) = d["coordinateTransformations"]
        assert t["type"] == "scale" and t["scale"] == [s * 2 ** k for s in spacing]
        got = grp[str(k)][...]
        assert got.dtype == w.dtype and got.shape == w.shape, k
        np.testing.assert_array_equal(got, w, err_msg=f"level {k}")


@pytest.mark.parametrize("fmt", [2, 3])
def test_label_pyramid_stride(tmp_path, fmt):
    mask = RNG.random((23, 37, 30)) < 0.4
    np.save(tmp_path / "m.npy", mask)
    n = voxa.stream.run("label", tmp_path / "m.npy", tmp_path / "l.zarr", chunks=(4, 16, 16),
                        pyramid=3, zarr_format=fmt)
    lab, wn = voxa.label(mask)
    assert n == wn
    check_levels(tmp_path / "l.zarr", levels(lab, 3, stride_down), fmt, [1, 1, 1])
    # equal to voxa's in-memory pyramid
    Z.write_ome(tmp_path / "mem.zarr", lab, levels=4, labels=True, format=fmt)
    mem = zarr.open_group(tmp_path / "mem.zarr", mode="r", zarr_format=fmt)
    got = zarr.open_group(tmp_path / "l.zarr", mode="r", zarr_format=fmt)
    for k in range(4):
        np.testing.assert_array_equal(got[str(k)][...], mem[str(k)][...])


def test_image_pyramid_mean_with_spacing(tmp_path):
    """A float output (RL) averages; an OME-Zarr input's scale carries over
    to every level (x 2^k)."""
    img = (RNG.random((19, 33, 28)) * 50).astype(np.float32) + 1
    Z.write_ome(tmp_path / "in.zarr", img, spacing=[2.0, 0.5, 0.25], format=3)
    psf = voxa.gaussian_psf((3, 3, 3), 0.8)
    voxa.stream.run("deconvolve", tmp_path / "in.zarr", tmp_path / "rl.zarr", psf=psf,
                    iterations=2, chunks=img.shape, pyramid=2)
    rl = voxa.richardson_lucy(img, psf, num_iter=2)
    check_levels(tmp_path / "rl.zarr", levels(rl, 2, mean_down), 3, [2.0, 0.5, 0.25])
    Z.write_ome(tmp_path / "mem.zarr", rl, levels=3)
    mem = zarr.open_group(tmp_path / "mem.zarr", mode="r")
    got = zarr.open_group(tmp_path / "rl.zarr", mode="r")
    for k in range(3):
        np.testing.assert_array_equal(got[str(k)][...], mem[str(k)][...])


@pytest.mark.parametrize("mode, down", [("mean", mean_down), ("stride", stride_down)])
def test_pyramid_mode_override(tmp_path, mode, down):
    patches = RNG.integers(-900, 900, (2, 9, 17, 15)).astype(np.int16)
    np.save(tmp_path / "p.npy", patches)
    corners = np.array([[0, 0, 0], [5, 10, 12]], float)
    shape = (14, 27, 27)
    voxa.stream.run("paste", tmp_path / "p.npy", tmp_path / "o.zarr", corners=corners,
                    shape=shape, pyramid=2, pyramid_mode=mode)
    want = voxa.paste_patches(np.zeros(shape, np.int16), patches, corners.astype(int))
    check_levels(tmp_path / "o.zarr", levels(want, 2, down), 3, [1, 1, 1])


def test_bool_2d_pyramid_and_ome_readers(tmp_path):
    """2-D bool output (stride), then ome-zarr-models validates and
    ome-zarr-py opens every level with its shape and scale."""
    reader = pytest.importorskip("ome_zarr.reader")
    from ome_zarr.io import parse_url
    from ome_zarr_models.v05.image import Image as Image05
    mask = RNG.random((101, 77)) < 0.5
    np.save(tmp_path / "m.npy", mask)
    r = subprocess.run([CLI, "morph", "open", tmp_path / "m.npy", "-o", tmp_path / "o.zarr",
                        "--ball", "2", "--pyramid", "4", "--chunks", "16,77"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = levels(voxa.binary_opening(mask, ball=2), 4, stride_down)
    check_levels(tmp_path / "o.zarr", want, 3, [1, 1])
    img = Image05.from_zarr(zarr.open_group(tmp_path / "o.zarr", mode="r"))
    ms = img.attributes.ome.multiscales[0]
    assert [ax.name for ax in ms.axes] == ["y", "x"] and len(ms.datasets) == 5
    node = next(iter(reader.Reader(parse_url(str(tmp_path / "o.zarr")))()))
    assert [tuple(d.shape) for d in node.data] == [w.shape for w in want]
    scales = [t[0]["scale"] for t in node.metadata["coordinateTransformations"]]
    assert scales == [[2.0 ** k] * 2 for k in range(5)]
    for d, w in zip(node.data, want):
        np.testing.assert_array_equal(np.asarray(d), w)


def test_complete_only_when_every_level_is_written(tmp_path):
    """A level that cannot be written fails the run before the metadata:
    the folder is not an image; the same command then resumes and finishes."""
    mask = RNG.random((16, 20, 24)) < 0.5
    np.save(tmp_path / "m.npy", mask)
    out = tmp_path / "o.zarr"
    out.mkdir()
    (out / "2").write_text("in the way")  # level 2's folder cannot be made
    with pytest.raises(OSError, match="o.zarr/2"):
        voxa.stream.run("label", tmp_path / "m.npy", out, chunks=(4, 20, 24), pyramid=3)
    assert not (out / "zarr.json").exists()
    assert (out / "0" / "zarr.json").exists() and (out / "1" / "zarr.json").exists()
    (out / "2").unlink()
    voxa.stream.run("label", tmp_path / "m.npy", out, chunks=(4, 20, 24), pyramid=3)
    check_levels(out, levels(voxa.label(mask)[0], 3, stride_down), 3, [1, 1, 1])


def test_interrupted_run_resumes_with_pyramid(tmp_path):
    """Cancelled after three blocks (level 0 partial, no levels, no
    metadata), the same run finishes: blocks written are skipped, the levels
    are made from the whole level 0, equal to an uninterrupted run's."""
    img = (RNG.random((24, 30, 20)) * 90).astype(np.float32) + 1
    np.save(tmp_path / "i.npy", img)
    args = dict(psf=voxa.gaussian_psf((3, 3, 3), 0.8), iterations=2, chunks=(4, 30, 20),
                pyramid=2)
    voxa.stream.run("deconvolve", tmp_path / "i.npy", tmp_path / "ref.zarr", **args)
    with pytest.raises(KeyboardInterrupt):
        voxa.stream.run("deconvolve", tmp_path / "i.npy", tmp_path / "o.zarr",
                        progress=lambda d, t: d < 3, **args)
    assert not (tmp_path / "o.zarr" / "zarr.json").exists()
    assert not (tmp_path / "o.zarr" / "1").exists()
    voxa.stream.run("deconvolve", tmp_path / "i.npy", tmp_path / "o.zarr", **args)
    ref = zarr.open_group(tmp_path / "ref.zarr", mode="r")
    check_levels(tmp_path / "o.zarr", [ref[str(k)][...] for k in range(3)], 3, [1, 1, 1])
    np.testing.assert_array_equal(ref["1"][...], mean_down(ref["0"][...]))


def test_cli_pyramid_errors(tmp_path):
    np.save(tmp_path / "m.npy", np.zeros((4, 5, 6), bool))
    r = subprocess.run([CLI, "label", tmp_path / "m.npy", "-o", tmp_path / "o.npy",
                        "--pyramid", "2"], capture_output=True, text=True)
    assert r.returncode == 1 and "pyramid" in r.stderr and "o.npy" in r.stderr, r.stderr
    for bad in ("x", "-1", "17"):
        r = subprocess.run([CLI, "label", tmp_path / "m.npy", "-o", tmp_path / "o.zarr",
                            "--pyramid", bad], capture_output=True, text=True)
        assert r.returncode == 2 and "--pyramid" in r.stderr, r.stderr
    r = subprocess.run([CLI, "label", "--help"], capture_output=True, text=True)
    assert "--pyramid N" in r.stdout
    assert sorted(os.listdir(tmp_path)) == ["m.npy"]
