"""The napari plugin `voxa` (npe2 manifest: napari.yaml beside this file).

A reader for voxa's outputs (.npy and TIFF through voxa.imread; integer
arrays wider than 16 bits and bool masks open as Labels layers, the rest as
Image layers) and three widgets: threshold + open + label, binary morphology
with a ball, and Richardson-Lucy with a Gaussian PSF. The functions are plain
Python with napari types named as strings, so this module imports without
napari (npe2 and magicgui build the widgets from the annotations); install
napari with `pip install .[napari]`. Zarr is not read yet (no Zarr layer)."""
import os

import numpy as np

import voxa

_EXTS = (".npy", ".tif", ".tiff")


def layer_type(data):
    """'labels' for bool masks and integer arrays of more than 16 bits (what
    voxa.label and voxa measure produce), else 'image'."""
    d = np.asarray(data).dtype
    return "labels" if d == np.bool_ or (d.kind in "iu" and d.itemsize > 2) else "image"


def get_reader(path):
    """npe2 reader contribution: a reader for one .npy/.tif path, else None."""
    if isinstance(path, (list, tuple)):
        if len(path) != 1:
            return None
        path = path[0]
    path = os.fspath(path)
    return read if path.lower().endswith(_EXTS) and os.path.isfile(path) else None


def read(path):
    """Read one file as a list of one napari LayerDataTuple."""
    if isinstance(path, (list, tuple)):
        path = path[0]
    data = voxa.imread(os.fspath(path))
    kind = layer_type(data)
    if data.dtype == np.bool_:
        data = data.astype(np.uint8)
    name = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return [(data, {"name": name}, kind)]


def label_objects(image: "napari.types.ImageData", threshold: float = 0.0,
                  open_radius: int = 0,
                  connectivity: int = 1) -> "napari.types.LabelsData":
    """Threshold (image > threshold), open with a ball of open_radius (0:
    no opening), label the components (voxa.label)."""
    mask = np.asarray(image) > threshold
    if open_radius > 0:
        mask = voxa.binary_opening(mask, voxa.ball(open_radius, ndim=mask.ndim))
    labels, _ = voxa.label(mask, connectivity=connectivity)
    return labels


def morphology(mask: "napari.types.LabelsData", operation: str = "open",
               radius: int = 2) -> "napari.types.LabelsData":
    """Binary dilate, erode, open or close (non-zero = foreground) with a ball."""
    ops = {"dilate": voxa.binary_dilation, "erode": voxa.binary_erosion,
           "open": voxa.binary_opening, "close": voxa.binary_closing}
    if operation not in ops:
        raise ValueError("operation: %r (one of %s)" % (operation, ", ".join(ops)))
    m = np.asarray(mask) != 0
    return ops[operation](m, voxa.ball(radius, ndim=m.ndim)).astype(np.uint8)


def deconvolve(image: "napari.types.ImageData", sigma: float = 2.0, psf_size: int = 15,
               iterations: int = 10) -> "napari.types.ImageData":
    """Richardson-Lucy (voxa.richardson_lucy, boundary 'free') with a
    Gaussian PSF of the given sigma (voxels) and size per axis."""
    img = np.asarray(image, dtype=np.float32)
    psf = voxa.gaussian_psf((psf_size,) * img.ndim, (sigma,) * img.ndim)
    return voxa.richardson_lucy(img, psf, num_iter=iterations)
