"""The napari plugin's functions without napari (the core tests must not need
it): the manifest names functions that exist, the reader opens .npy/TIFF
with the right layer type, and each widget function gives the same array as
the calls it stands for (scipy's where scipy defines them). Inside a viewer
the plugin is not tested here (napari is not in requirements-dev.txt)."""
import re
from pathlib import Path

import numpy as np
import scipy.ndimage as ndi
import tifffile

import voxa
import voxa.napari as plugin


def test_manifest_names_exist():
    text = (Path(plugin.__file__).parent / "napari.yaml").read_text()
    names = re.findall(r"python_name:\s*voxa\.napari:(\w+)", text)
    assert sorted(names) == ["deconvolve", "get_reader", "label_objects", "morphology"]
    for n in names:
        assert callable(getattr(plugin, n))
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
    assert plugin.get_reader(str(tmp_path / "x.zarr")) is None
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
