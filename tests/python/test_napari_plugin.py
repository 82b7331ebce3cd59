"""The napari plugin's functions without a viewer: the manifest names
functions that exist, the module imports without napari, the reader opens
.npy/TIFF/Zarr with the right layer type, and each widget's function gives
the same array as the calls it stands for (scipy's where scipy defines
them). Inside napari itself: test_napari_viewer.py."""
import subprocess
import sys
import re
from pathlib import Path

import numpy as np
import pytest
import scipy.ndimage as ndi
import tifffile

import voxa
import voxa.napari as plugin


def test_manifest_validates_with_npe2():
    """napari's plugin engine reads the manifest against its schema and
    imports every python_name it declares (what `npe2 validate` does)."""
    npe2 = pytest.importorskip("npe2")
    m = npe2.PluginManifest.from_file(Path(plugin.__file__).parent / "napari.yaml")
    assert m.name == "voxa" and m.contributions.readers and m.contributions.widgets
    m.validate_imports()

def test_manifest_names_exist():
    text = (Path(plugin.__file__).parent / "napari.yaml").read_text()
    names = re.findall(r"python_name:\s*voxa\.napari:(\w+)", text)
    assert sorted(names) == ["balls_widget", "deconvolve_widget", "get_reader", "label_widget",
                             "measure_widget", "patches_widget"]
    for n in names:
        assert n.endswith("_widget") or callable(getattr(plugin, n))
    commands = set(re.findall(r"- id:\s*(\S+)", text))
    for used in re.findall(r"command:\s*(\S+)", text):
        assert used in commands


def test_reader(tmp_path):
    lab = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    img = lab.astype(np.uint16)
    np.save(tmp_path / "labels.npy", lab)
    tifffile.imwrite(tmp_path / "image.tif", img)
    np.save(tmp_path / "mask.npy", lab > 3)
    data, meta, kind = plugin.get_reader(str(tmp_path / "labels.npy"))(tmp_path / "labels.npy")[0]
    assert kind == "labels" and meta["name"] == "labels"
    np.testing.assert_array_equal(data, lab)
    data, meta, kind = plugin.get_reader([str(tmp_path / "image.tif")])([tmp_path / "image.tif"])[0]
    assert kind == "image" and data.dtype == np.uint16
    np.testing.assert_array_equal(data, img)
    data, _, kind = plugin.read(tmp_path / "mask.npy")[0]
    assert kind == "labels" and data.dtype == np.uint8 and data.sum() == 20
    assert plugin.get_reader(str(tmp_path / "x.zarr")) is None  # no such folder
    voxa.imwrite(str(tmp_path / "lab.zarr"), lab)
    data, meta, kind = plugin.get_reader(str(tmp_path / "lab.zarr"))(str(tmp_path / "lab.zarr"))[0]
    assert kind == "labels" and meta["name"] == "lab"
    np.testing.assert_array_equal(data, lab)
    assert plugin.get_reader(str(tmp_path / "missing.npy")) is None
    assert plugin.get_reader([str(tmp_path / "labels.npy")] * 2) is None


def test_widgets_equal_their_calls():
    rng = np.random.default_rng(0)
    img = ndi.gaussian_filter(rng.random((12, 30, 30)), 1.5)
    thr = float(np.quantile(img, 0.7))
    ball = voxa.ball(1, ndim=3)
    want, _ = ndi.label(ndi.binary_opening(img > thr, ball))
    np.testing.assert_array_equal(plugin.label_objects(img, thr, open_radius=1), want)
    np.testing.assert_array_equal(plugin.label_objects(img, thr), ndi.label(img > thr)[0])
    from skimage.filters import threshold_otsu
    np.testing.assert_array_equal(plugin.label_objects(img, method="otsu"),
                                  ndi.label(img > threshold_otsu(img))[0])
    mask = img > thr
    for op, f in (("dilate", ndi.binary_dilation), ("erode", ndi.binary_erosion),
                  ("open", ndi.binary_opening), ("close", ndi.binary_closing)):
        np.testing.assert_array_equal(plugin.morphology(mask, op, 2),
                                      f(mask, voxa.ball(2, ndim=3)).astype(np.uint8))
    out = plugin.deconvolve(img, sigma=1.0, psf_size=7, iterations=3)
    psf = voxa.gaussian_psf((7, 7, 7), (1.0,) * 3)
    np.testing.assert_array_equal(out, voxa.richardson_lucy(img.astype(np.float32), psf,
                                                            num_iter=3))
    try:
        plugin.morphology(mask, "thin")
    except ValueError as e:
        assert "thin" in str(e)
    else:
        raise AssertionError("no error for an unknown operation")


def test_imports_without_napari():
    code = ("import sys; sys.modules['napari'] = None; import voxa.napari as p; "
            "p.read; p.label_objects; print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_balls_and_patches_equal_voxa():
    pts = np.array([[2.0, 5, 5], [8, 20, 3.2]])
    np.testing.assert_array_equal(plugin.balls((10, 24, 24), pts, 3.0, spacing=(2, 1, 1)),
                                  voxa.balls((10, 24, 24), pts, 3.0, spacing=(2, 1, 1),
                                             owner=True))
    img = np.arange(10 * 24 * 24, dtype=np.float32).reshape(10, 24, 24)
    np.testing.assert_array_equal(plugin.patches(img, pts, 5, "reflect"),
                                  voxa.extract_patches(img, np.rint(pts).astype(int), (5, 5, 5),
                                                       centered=True, mode="reflect"))


def test_dask_inputs_stay_lazy():
    import dask.array as da
    img = np.arange(10 * 24 * 24, dtype=np.float32).reshape(10, 24, 24)
    lazy = da.from_array(img, chunks=(5, 12, 12))
    pts = np.array([[2.0, 5, 5], [8, 20, 3.2]])
    got = plugin.patches(lazy, pts, 5, "reflect")
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), plugin.patches(img, pts, 5, "reflect"))
    got = plugin.balls(img.shape, pts, 3.0, spacing=(2, 1, 1), chunks=lazy.chunks)
    assert isinstance(got, da.Array)
    np.testing.assert_array_equal(got.compute(), plugin.balls(img.shape, pts, 3.0,
                                                              spacing=(2, 1, 1)))
    mask = plugin.morphology(lazy > 1000, "open", 1)
    assert isinstance(mask, da.Array)
    np.testing.assert_array_equal(mask.compute(), plugin.morphology(img > 1000, "open", 1))
    lab = plugin.label_objects(lazy, method="otsu")
    assert isinstance(lab, da.Array)
    np.testing.assert_array_equal(lab.compute(), plugin.label_objects(img, method="otsu"))


def test_measure_function():
    import dask.array as da
    rng = np.random.default_rng(2)
    img = ndi.gaussian_filter(rng.random((10, 30, 30)), 1.5)
    lab = voxa.label(img > np.quantile(img, 0.7))[0]
    want = voxa.regionprops_table(lab, img, ("label", "area", "intensity_max"), spacing=(2, 1, 1))
    got = plugin.measure(lab, img, "label, area,intensity_max", spacing=(2, 1, 1))
    assert list(got) == list(want)
    lazy = plugin.measure(da.from_array(lab, chunks=5), img, ["label", "area", "intensity_max"],
                          spacing=(2, 1, 1))
    for k in want:
        np.testing.assert_array_equal(got[k], want[k])
        np.testing.assert_allclose(lazy[k], want[k], rtol=1e-12)
