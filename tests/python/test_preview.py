"""voxa.preview and `voxa preview`: pixel-level checks on small synthetic
volumes (projections and slices equal NumPy's max and indexing through the
same percentile contrast, label colours), paths streamed by slabs == arrays,
the PNG decoded by an independent reader (Pillow), scale bar, errors."""
import numpy as np
import pytest
from PIL import Image

import voxa
from voxa.preview import label_color


def grey(v, lo, hi):
    """The documented mapping: percentile limits, linear, rounded half to even."""
    g = np.clip((v - lo) / (hi - lo), 0, 1)
    return np.rint(g * 255).astype(np.uint8)


def test_projections_and_slices_equal_numpy():
    rng = np.random.default_rng(0)
    Z, Y, X = 5, 7, 9
    v = rng.random((Z, Y, X)) * 1000
    p = (3, 1, 6)
    rgb = voxa.preview(v, point=p, percentiles=(2, 98))
    assert rgb.shape == (Y + 4 + Z, 2 * (X + 4 + Z) + 12, 3)
    assert (rgb[..., 0] == rgb[..., 1]).all() and (rgb[..., 1] == rgb[..., 2]).all()
    mips = [v.max(0), v.max(2).T, v.max(1)]          # y-x, y-z, z-x
    slices = [v[p[0]], v[:, :, p[2]].T, v[:, p[1], :]]
    for views, c0 in ((mips, 0), (slices, X + 4 + Z + 12)):
        vals = np.concatenate([w.ravel() for w in views])
        lo, hi = np.percentile(vals, [2, 98])
        np.testing.assert_array_equal(rgb[:Y, c0:c0 + X, 0], grey(views[0], lo, hi))
        np.testing.assert_array_equal(rgb[:Y, c0 + X + 4:c0 + X + 4 + Z, 0], grey(views[1], lo, hi))
        np.testing.assert_array_equal(rgb[Y + 4:, c0:c0 + X, 0], grey(views[2], lo, hi))
    # gaps stay black
    assert (rgb[Y:Y + 4] == 0).all() and (rgb[:, X:X + 4] == 0).all()


def test_2d_and_labels():
    img = np.arange(12, dtype=np.uint16).reshape(3, 4) * 10
    lab = np.zeros((3, 4), np.int32)
    lab[1, 2] = 42
    rgb = voxa.preview(img, lab, percentiles=(0, 100))
    assert rgb.shape == (3, 4, 3)
    g = grey(img.astype(float), 0, 110)
    c = np.array(label_color(42))
    np.testing.assert_array_equal(rgb[1, 2], np.rint(0.5 * g[1, 2] + 0.5 * c).astype(np.uint8))
    np.testing.assert_array_equal(rgb[0, 0], [0, 0, 0])
    np.testing.assert_array_equal(rgb[2, 3], [255, 255, 255])
    only = voxa.preview(labels=lab)
    np.testing.assert_array_equal(only[1, 2], c)
    assert (only[0, 0] == 0).all()
    colours = {label_color(k) for k in range(1, 40)}
    assert len(colours) == 39  # distinct


def test_label_projection_keeps_largest():
    lab = np.zeros((3, 2, 2), np.uint8)
    lab[0, 0, 0], lab[2, 0, 0] = 3, 8
    rgb = voxa.preview(labels=lab)
    np.testing.assert_array_equal(rgb[0, 0], label_color(8))


def test_path_streamed_equals_array(tmp_path):
    rng = np.random.default_rng(1)
    v = rng.integers(0, 4000, (9, 20, 30)).astype(np.uint16)
    lab = rng.integers(0, 4, v.shape).astype(np.int64)
    np.save(tmp_path / "v.npy", v)
    np.save(tmp_path / "l.npy", lab)
    want = voxa.preview(v, lab, spacing=(3, 1, 1))
    got = voxa.preview(str(tmp_path / "v.npy"), tmp_path / "l.npy", spacing=(3, 1, 1),
                       mem_limit=20 * 30 * 10 * 2, path=tmp_path / "p.png")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "p.png").convert("RGB")), want)


def test_cli_png_decodes(cli, tmp_path):
    v = np.zeros((6, 64, 80), np.float32)
    v[3, 10:20, 30:50] = 5
    np.save(tmp_path / "v.npy", v)
    r = cli("preview", tmp_path / "v.npy", "-o", tmp_path / "o.png", "--spacing", "2,1,1",
            "--point", "3,15,40", "--mem-limit", "10K")
    assert r.returncode == 0, r.stderr
    png = np.asarray(Image.open(tmp_path / "o.png"))
    assert png.dtype == np.uint8 and png.shape == (64 + 4 + 12, 2 * (80 + 4 + 12) + 12, 3)
    np.testing.assert_array_equal(png, voxa.preview(v, spacing=(2, 1, 1), point=(3, 15, 40)))
    # the bright box, projected along z: white in the x-y view
    assert (png[10:20, 30:50] == 255).all() and png[25, 60, 0] == 0
    # scale bar: white pixels in the bottom-left corner (spacing given)
    assert (png[50:64, 0:40] == 255).any()
    assert not (voxa.preview(v)[50:64, 0:20] == 255).any()


def test_errors(cli, tmp_path):
    with pytest.raises(ValueError, match="image"):
        voxa.preview()
    with pytest.raises(ValueError, match="1-D"):
        voxa.preview(np.zeros(5))
    with pytest.raises(ValueError, match="percentiles"):
        voxa.preview(np.zeros((2, 2)), percentiles=(50, 10))
    with pytest.raises(ValueError, match="point"):
        voxa.preview(np.zeros((2, 2)), point=(0, 5))
    with pytest.raises(ValueError, match="shape"):
        voxa.preview(np.zeros((2, 2)), np.zeros((2, 3), np.int32))
    with pytest.raises(TypeError, match="labels"):
        voxa.preview(np.zeros((2, 2)), np.zeros((2, 2)))
    np.save(tmp_path / "v.npy", np.zeros((3, 3), np.uint8))
    r = cli("preview", tmp_path / "v.npy", "-o", tmp_path / "o.jpg")
    assert r.returncode == 2 and ".png" in r.stderr
    r = cli("preview", tmp_path / "v.npy", "-o", tmp_path / "o.png", "--point", "1,1,1")
    assert r.returncode == 2 and "--point has 3 values" in r.stderr
    r = cli("preview", tmp_path / "nope.npy", "-o", tmp_path / "o.png")
    assert r.returncode == 1 and "voxa: preview:" in r.stderr
    assert not (tmp_path / "o.png").exists()


@pytest.mark.parametrize("chunks", [(4, 7, 11), (1, 20, 30), (9, 3, 2), (2, 1, 30)])
def test_zarr_read_by_chunks_equals_array(tmp_path, chunks):
    """A Zarr input is read chunk by chunk (each decoded once): the same
    picture as the array, with the slice point inside and on the edges of
    chunks that do not divide the shape."""
    import zarr
    rng = np.random.default_rng(2)
    v = rng.integers(0, 4000, (9, 20, 30)).astype(np.uint16)
    lab = rng.integers(0, 4, v.shape).astype(np.int32)
    for name, a in (("v.zarr", v), ("l.zarr", lab)):
        z = zarr.create_array(str(tmp_path / name), shape=a.shape, chunks=chunks, dtype=a.dtype)
        z[...] = a
    for point in (None, (0, 0, 0), (8, 19, 29), (3, 7, 11)):
        want = voxa.preview(v, lab, point=point)
        got = voxa.preview(str(tmp_path / "v.zarr"), str(tmp_path / "l.zarr"), point=point)
        np.testing.assert_array_equal(got, want)
        got = voxa.preview(str(tmp_path / "v.zarr"), None, point=point)
        np.testing.assert_array_equal(got, voxa.preview(v, None, point=point))
