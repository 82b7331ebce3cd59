"""The plugin's dock widgets: a form (magicgui) per job, Run and Cancel
buttons and a progress bar; the job runs off the GUI thread.

Run reads the form, starts napari's thread worker (napari.qt.threading) on
the job and returns at once; the job's progress callback (the one voxa's ops
call) posts (done, total) to the GUI thread through a Qt signal, which moves
the bar, and returns False once Cancel was pressed: the voxa op stops at its
next report and raises KeyboardInterrupt, which the worker turns into "no
result", so no layer is added. The result's layers are added on the GUI
thread when the worker returns. Layers backed by Dask arrays give lazy Dask
results (voxa.dask), computed when napari draws them.

Coordinates: Points layers are mapped into the image's voxel indices through
the layers' scale and translate (rotations and shears are not applied)."""
import threading
from typing import Literal, Optional

import numpy as np
from magicgui import magicgui
from magicgui.widgets import Container, ProgressBar, PushButton
from napari.layers import Image, Labels, Points
from napari.qt.threading import create_worker
from napari.utils.notifications import show_error
from qtpy.QtCore import QObject, Signal

from . import _functions as F


class _Bridge(QObject):
    step = Signal(int, int)


def _meta(layer, suffix, **extra):
    meta = {"name": f"{layer.name} {suffix}", "scale": tuple(layer.scale),
            "translate": tuple(layer.translate)}
    meta.update(extra)
    return meta


def _voxels(points, image):
    """Points layer data -> (N, ndim) voxel coordinates of `image`."""
    world = np.asarray(points.data, float) * np.asarray(points.scale) + \
        np.asarray(points.translate)
    return (world - np.asarray(image.translate)) / np.asarray(image.scale)


class VoxaRunner(Container):
    """A form, Run / Cancel, a progress bar. `form` is a function of the
    widget's parameters returning job(progress) -> [LayerDataTuple]."""

    def __init__(self, napari_viewer, form, title, **options):
        self.viewer = napari_viewer
        self.form = magicgui(form, call_button=False, persist=False, **options)
        self.run_button = PushButton(text="Run")
        self.cancel_button = PushButton(text="Cancel", enabled=False)
        self.progress = ProgressBar(value=0, min=0, max=1000, label="progress")
        super().__init__(widgets=[self.form, self.run_button, self.cancel_button,
                                  self.progress], label=title)
        self._cancel = threading.Event()
        self._bridge = _Bridge()
        self._bridge.step.connect(self._on_step)
        self.worker = None
        self.error = None
        self.cancelled = False
        self.run_button.changed.connect(self.run)
        self.cancel_button.changed.connect(self.cancel)

    @property
    def running(self):
        return self.worker is not None

    def run(self, *_):
        """Start the job (returns at once; the worker is `self.worker`)."""
        if self.running:
            return None
        self.error, self.cancelled = None, False
        self._cancel.clear()
        job = self.form()
        self.progress.value = 0
        self.worker = create_worker(self._work, job, _start_thread=False, _ignore_errors=True)
        self.worker.returned.connect(self._add)
        self.worker.errored.connect(self._failed)
        self.worker.finished.connect(self._finished)
        self.run_button.enabled, self.cancel_button.enabled = False, True
        self.worker.start()
        return self.worker

    def cancel(self, *_):
        """Ask the running job to stop at its next progress report."""
        if self.running:
            self._cancel.set()

    def _report(self, done, total):  # worker thread
        self._bridge.step.emit(int(done), int(total))
        return not self._cancel.is_set()

    def _work(self, job):  # worker thread
        try:
            return job(self._report)
        except KeyboardInterrupt:
            if self._cancel.is_set():
                return None
            raise

    def _on_step(self, done, total):
        self.progress.value = int(1000 * done / total) if total else 0

    def _add(self, layers):
        if layers is None:
            self.cancelled = True
            return
        self.progress.value = 1000
        for data, meta, kind in layers:
            if kind == "features":  # a table for an existing layer, one row per label
                meta["layer"].features = {"index": data["label"], **data}
                continue
            getattr(self.viewer, "add_" + kind)(data, **meta)

    def _failed(self, exc):
        self.error = exc
        show_error(f"voxa: {exc}")

    def _finished(self):
        self.worker = None
        self.run_button.enabled, self.cancel_button.enabled = True, False


def deconvolve_widget(napari_viewer):
    """Richardson-Lucy with a Gaussian PSF on an Image layer."""
    def form(image: Image, sigma: float = 2.0, psf_size: int = 15, iterations: int = 10):
        def job(progress):
            out = F.deconvolve(image.data, sigma, psf_size, iterations, progress=progress)
            return [(out, _meta(image, "deconvolved"), "image")]
        return job
    return VoxaRunner(napari_viewer, form, "voxa: deconvolve",
                      iterations={"min": 1, "max": 1000000}, psf_size={"min": 1},
                      sigma={"min": 0.01})


def label_widget(napari_viewer):
    """Threshold (a value or Otsu's), open with a ball, label: a Labels layer."""
    def form(image: Image, method: Literal["otsu", "value"] = "otsu", threshold: float = 0.0,
             open_radius: int = 1, connectivity: int = 1):
        def job(progress):
            out = F.label_objects(image.data, threshold, open_radius, connectivity,
                                  method=method, progress=progress)
            return [(out, _meta(image, "labels"), "labels")]
        return job
    return VoxaRunner(napari_viewer, form, "voxa: threshold, open, label",
                      threshold={"min": -1e300, "max": 1e300, "step": 0.01},
                      connectivity={"min": 1, "max": 3})


def balls_widget(napari_viewer):
    """Labelled balls (owner map) around a Points layer's points, on the grid
    of an Image layer (radius in the image's physical units: its scale)."""
    def form(points: Points, image: Image, radius: float = 3.0):
        def job(progress):
            shape = image.data.shape
            chunks = image.data.chunks if F.is_dask(image.data) else None
            out = F.balls(shape, _voxels(points, image), radius,
                          spacing=tuple(image.scale), chunks=chunks, progress=progress)
            return [(out, _meta(image, "balls", name=f"{points.name} balls"), "labels")]
        return job
    return VoxaRunner(napari_viewer, form, "voxa: balls around points",
                      radius={"min": 0.0, "max": 1e6})


def patches_widget(napari_viewer):
    """Patches of an Image layer around a Points layer's points: an Image
    layer of shape (points, size, size[, size])."""
    def form(image: Image, points: Points, size: int = 16,
             mode: Literal["constant", "reflect", "nearest", "clip", "error"] = "constant"):
        def job(progress):
            out = F.patches(image.data, _voxels(points, image), size, mode, progress=progress)
            return [(out, {"name": f"{image.name} patches"}, "image")]
        return job
    return VoxaRunner(napari_viewer, form, "voxa: patches around points", size={"min": 1})


def measure_widget(napari_viewer):
    """regionprops_table of a Labels layer (and an Image layer for the
    intensity properties), in the physical units of the Labels layer's
    scale: the table becomes that layer's `features` (one row per label,
    its `index` the label), which napari shows under the cursor."""
    def form(objects: Labels, image: Optional[Image] = None,
             properties: str = "label,area,centroid,axis_major_length,axis_minor_length"):
        def job(progress):  # (`objects`: magicgui's Container has a `labels` attribute)
            table = F.measure(objects.data, None if image is None else image.data, properties,
                              spacing=tuple(objects.scale), progress=progress)
            return [(table, {"layer": objects}, "features")]
        return job
    return VoxaRunner(napari_viewer, form, "voxa: measure objects")
