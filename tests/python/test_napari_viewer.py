"""The napari plugin inside napari itself, headless (Xvfb), with napari's own
fixture (make_napari_viewer): the reader opens .npy, TIFF, Zarr and
OME-Zarr (v2/0.4 and v3/0.5, scale and translation from the metadata, a
pyramid as a multiscale layer, labels and masks as Labels layers) with the
right layer type; each widget (deconvolve, threshold + open + label, balls
around a Points layer, patches around a Points layer) runs on a small layer
off the GUI thread and adds the layer the voxa function gives; Cancel stops
a long run and no layer is added; Dask-backed layers give lazy Dask layers.

Xvfb: started here when no DISPLAY is set (napari needs an OpenGL context,
which Qt's offscreen platform does not give); `make test` installs it
(tools/setup-deps.sh). These tests must run, not skip: a missing napari or
Xvfb fails them."""
import atexit
import os
import shutil
import subprocess
from pathlib import Path


def _start_xvfb():
    if os.environ.get("DISPLAY"):
        return
    exe = shutil.which("Xvfb")
    assert exe, "Xvfb is missing: run tools/setup-deps.sh (Debian package xvfb)"
    r, w = os.pipe()
    proc = subprocess.Popen([exe, "-displayfd", str(w), "-screen", "0", "1280x1024x24",
                             "-nolisten", "tcp"], pass_fds=(w,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(w)
    with os.fdopen(r) as f:
        num = f.readline().strip()
    assert num, "Xvfb did not start"
    atexit.register(proc.terminate)
    os.environ["DISPLAY"] = ":" + num
    os.environ["QT_QPA_PLATFORM"] = "xcb"


_start_xvfb()

import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import scipy.ndimage as ndi  # noqa: E402
import tifffile  # noqa: E402
import zarr  # noqa: E402
from npe2 import PluginManager, PluginManifest  # noqa: E402

import voxa  # noqa: E402
import voxa.napari as plugin  # noqa: E402

RNG = np.random.default_rng(5)


@pytest.fixture(scope="module", autouse=True)
def _voxa_plugin():
    """Register the manifest (the dev tree is not pip-installed)."""
    pm = PluginManager.instance()
    mine = "voxa" not in pm._manifests
    if mine:
        pm.register(PluginManifest.from_file(Path(plugin.__file__).parent / "napari.yaml"))
    yield
    if mine:
        pm.unregister("voxa")


@pytest.fixture
def viewer(make_napari_viewer):
    return make_napari_viewer()


def blobs(shape=(12, 40, 40), seed=0):
    r = np.random.default_rng(seed)
    return ndi.gaussian_filter(r.random(shape), 2.0).astype(np.float32)


# ---- reader -----------------------------------------------------------------------------

def _ome_v2(path, levels, scale, translate=None, label=False):
    g = zarr.open_group(str(path), mode="w", zarr_format=2)
    ds = []
    for i, lev in enumerate(levels):
        g.create_array(str(i), data=lev, chunks=lev.shape)
        tr = [{"type": "scale", "scale": [s * 2**i if k else s for k, s in enumerate(scale)]}]
        if translate:
            tr.append({"type": "translation", "translation": translate})
        ds.append({"path": str(i), "coordinateTransformations": tr})
    attrs = {"multiscales": [{"version": "0.4", "name": "ome",
                              "axes": [{"name": a, "type": "space"} for a in "zyx"[-len(scale):]],
                              "datasets": ds}]}
    if label:
        attrs["image-label"] = {"version": "0.4"}
    g.attrs.update(attrs)


def _ome_v3(path, level, scale):
    g = zarr.open_group(str(path), mode="w", zarr_format=3)
    g.create_array("0", data=level, chunks=level.shape)
    g.attrs["ome"] = {"version": "0.5", "multiscales": [{
        "axes": [{"name": a, "type": "space"} for a in "zyx"[-level.ndim:]],
        "datasets": [{"path": "0", "coordinateTransformations": [
            {"type": "scale", "scale": scale}]}]}]}


def test_reader_formats(viewer, tmp_path):
    img = (blobs() * 1000).astype(np.uint16)
    lab = voxa.label(img > 500)[0].astype(np.int32)
    np.save(tmp_path / "img.npy", img)
    np.save(tmp_path / "lab.npy", lab)
    np.save(tmp_path / "mask.npy", lab > 0)
    tifffile.imwrite(tmp_path / "stack.tif", img)
    voxa.imwrite(str(tmp_path / "plain.zarr"), lab)
    _ome_v2(tmp_path / "pyr.zarr", [img, img[:, ::2, ::2], img[:, ::4, ::4]], [2.0, 0.5, 0.5],
            translate=[1.0, 0.0, 3.0])
    _ome_v2(tmp_path / "seg.zarr", [lab.astype(np.uint16)], [2.0, 0.5, 0.5], label=True)
    _ome_v3(tmp_path / "v3.zarr", img, [3.0, 1.0, 0.25])

    def open1(name):
        layers = viewer.open(str(tmp_path / name), plugin="voxa")
        assert len(layers) == 1
        return layers[0]

    a = open1("img.npy")
    assert a._type_string == "image" and a.data.dtype == np.uint16
    np.testing.assert_array_equal(a.data, img)
    b = open1("lab.npy")
    assert b._type_string == "labels"
    np.testing.assert_array_equal(b.data, lab)
    m = open1("mask.npy")
    assert m._type_string == "labels" and m.data.dtype == np.uint8
    np.testing.assert_array_equal(m.data, lab > 0)
    t = open1("stack.tif")
    assert t._type_string == "image"
    np.testing.assert_array_equal(t.data, img)
    z = open1("plain.zarr")
    assert z._type_string == "labels"
    np.testing.assert_array_equal(np.asarray(z.data), lab)
    p = open1("pyr.zarr")
    assert p._type_string == "image" and p.multiscale and len(p.data) == 3
    np.testing.assert_allclose(p.scale, [2.0, 0.5, 0.5])
    np.testing.assert_allclose(p.translate, [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(p.data[2]), img[:, ::4, ::4])
    s = open1("seg.zarr")
    assert s._type_string == "labels" and not s.multiscale
    np.testing.assert_allclose(s.scale, [2.0, 0.5, 0.5])
    v = open1("v3.zarr")
    assert v._type_string == "image"
    np.testing.assert_allclose(v.scale, [3.0, 1.0, 0.25])
    np.testing.assert_array_equal(np.asarray(v.data), img)


# ---- widgets ----------------------------------------------------------------------------

def dock(viewer, make):
    w = make(viewer)
    viewer.window.add_dock_widget(w, name=w.label)
    w.reset_choices()
    return w


def run(qtbot, w, **values):
    for k, v in values.items():
        getattr(w.form, k).value = v
    n = len(w.viewer.layers)
    worker = w.run()
    assert worker is not None
    qtbot.waitUntil(lambda: not w.running, timeout=120000)
    assert w.error is None, w.error
    assert len(w.viewer.layers) == n + 1
    return w.viewer.layers[-1]


def test_deconvolve_widget(viewer, qtbot):
    img = blobs()
    layer = viewer.add_image(img, scale=(2, 1, 1))
    w = dock(viewer, plugin.deconvolve_widget)
    out = run(qtbot, w, image=layer, sigma=1.5, psf_size=7, iterations=4)
    psf = voxa.gaussian_psf((7, 7, 7), (1.5,) * 3)
    np.testing.assert_array_equal(out.data, voxa.richardson_lucy(img, psf, num_iter=4))
    assert out._type_string == "image" and tuple(out.scale) == (2, 1, 1)
    assert w.progress.value == 1000


def test_label_widget(viewer, qtbot):
    img = blobs(seed=1)
    layer = viewer.add_image(img)
    w = dock(viewer, plugin.label_widget)
    out = run(qtbot, w, image=layer, method="otsu", open_radius=1, connectivity=1)
    from skimage.filters import threshold_otsu
    want = ndi.label(ndi.binary_opening(img > threshold_otsu(img), voxa.ball(1, ndim=3)))[0]
    assert out._type_string == "labels" and out.data.max() > 1
    np.testing.assert_array_equal(out.data, want)
    out = run(qtbot, w, image=layer, method="value", threshold=0.5, open_radius=0)
    np.testing.assert_array_equal(out.data, ndi.label(img > 0.5)[0])


def test_balls_widget(viewer, qtbot):
    img = blobs()
    layer = viewer.add_image(img, scale=(2, 1, 1))
    pts_world = np.array([[4.0, 10, 12], [12, 30, 30], [20, 20, 5.5]])
    pts = viewer.add_points(pts_world)  # scale 1: data = world
    w = dock(viewer, plugin.balls_widget)
    out = run(qtbot, w, points=pts, image=layer, radius=4.0)
    vox = pts_world / np.array([2, 1, 1])
    want = voxa.balls(img.shape, vox, 4.0, spacing=(2, 1, 1), owner=True)
    assert out._type_string == "labels" and set(np.unique(out.data)) == {0, 1, 2, 3}
    np.testing.assert_array_equal(out.data, want)


def test_patches_widget(viewer, qtbot):
    img = blobs()
    layer = viewer.add_image(img)
    pts = viewer.add_points(np.array([[5, 10, 10], [0, 39, 2.4]]))
    w = dock(viewer, plugin.patches_widget)
    out = run(qtbot, w, image=layer, points=pts, size=8, mode="reflect")
    want = voxa.extract_patches(img, np.array([[5, 10, 10], [0, 39, 2]]), (8, 8, 8),
                                centered=True, mode="reflect")
    assert out.data.shape == (2, 8, 8, 8)
    np.testing.assert_array_equal(out.data, want)


def test_cancel_adds_no_layer(viewer, qtbot):
    img = blobs((16, 48, 48))
    layer = viewer.add_image(img)
    w = dock(viewer, plugin.deconvolve_widget)
    for k, v in dict(image=layer, sigma=1.0, psf_size=5, iterations=100000).items():
        getattr(w.form, k).value = v
    seen = []
    w._bridge.step.connect(lambda d, t: (seen.append(d), w.cancel()))  # cancel at the 1st step
    n = len(viewer.layers)
    w.run()
    qtbot.waitUntil(lambda: not w.running, timeout=120000)
    assert seen and w.cancelled and w.error is None
    assert len(viewer.layers) == n
    assert w.run_button.enabled and not w.cancel_button.enabled


def test_error_is_reported_not_raised(viewer, qtbot):
    img = blobs()
    img[0, 0, 0] = np.nan
    layer = viewer.add_image(img)
    w = dock(viewer, plugin.label_widget)
    w.form.image.value = layer
    w.form.method.value = "otsu"
    n = len(viewer.layers)
    w.run()
    qtbot.waitUntil(lambda: not w.running, timeout=60000)
    assert isinstance(w.error, ValueError) and "NaN" in str(w.error)
    assert len(viewer.layers) == n


def test_dask_layers_are_lazy(viewer, qtbot):
    img = blobs((16, 40, 40), seed=3)
    lazy = da.from_array(img, chunks=(8, 20, 20))
    layer = viewer.add_image(lazy, name="lazy")
    w = dock(viewer, plugin.label_widget)
    out = run(qtbot, w, image=layer, method="value", threshold=0.5, open_radius=1)
    assert isinstance(out.data, da.Array)  # a graph, computed when drawn
    want = ndi.label(ndi.binary_opening(img > 0.5, voxa.ball(1, ndim=3)))[0]
    np.testing.assert_array_equal(out.data.compute(), want)
    w = dock(viewer, plugin.deconvolve_widget)
    out = run(qtbot, w, image=layer, sigma=1.0, psf_size=5, iterations=2)
    assert isinstance(out.data, da.Array)
    psf = voxa.gaussian_psf((5, 5, 5), (1.0,) * 3)
    import voxa.dask as vd
    np.testing.assert_array_equal(out.data.compute(), vd.richardson_lucy(lazy, psf, 2).compute())


def test_measure_widget_sets_features(viewer, qtbot):
    """The table becomes the Labels layer's features, one row per label
    (`index` = the label), in the layer's physical units; no layer added.
    A Dask-backed layer is measured chunk by chunk (voxa.dask)."""
    img = blobs(seed=4)
    lab = voxa.label(img > 0.5)[0]
    for data in (lab, da.from_array(lab, chunks=(8, 20, 20))):
        labels = viewer.add_labels(data, scale=(2, 1, 1))
        image = viewer.add_image(img, scale=(2, 1, 1))
        w = dock(viewer, plugin.measure_widget)
        w.form.objects.value = labels
        w.form.image.value = image
        w.form.properties.value = "label,area,centroid,intensity_mean,axis_major_length"
        n = len(viewer.layers)
        w.run()
        qtbot.waitUntil(lambda: not w.running, timeout=120000)
        assert w.error is None, w.error
        assert len(viewer.layers) == n
        want = voxa.regionprops_table(lab, img, ("label", "area", "centroid", "intensity_mean",
                                                 "axis_major_length"), spacing=(2, 1, 1))
        f = labels.features
        np.testing.assert_array_equal(f["index"], want["label"])
        for k in want:
            np.testing.assert_allclose(f[k], want[k], rtol=1e-10, err_msg=k)
