"""The napari plugin `voxa` (npe2 manifest: napari.yaml beside this file).

- a reader (_reader.py): .npy, TIFF, Zarr and OME-Zarr (scale and
  translation from the metadata, pyramids as multiscale layers); integer
  arrays wider than 16 bits, bool masks and OME "image-label" images open
  as Labels layers, the rest as Image layers;
- dock widgets (_widgets.py, needs napari): deconvolve, threshold (a value
  or Otsu's) + open + label, labelled balls around a Points layer, patches
  around a Points layer, and measure objects (regionprops_table as a Labels
  layer's features); each runs off the GUI thread with a progress bar and a
  Cancel button, and processes Dask-backed layers lazily;
- what the widgets compute, as plain functions (_functions.py).

This module imports without napari; install it with `pip install .[napari]`."""
from ._functions import balls, deconvolve, label_objects, measure, morphology, patches
from ._reader import get_reader, layer_type, read

__all__ = ["get_reader", "read", "layer_type", "deconvolve", "label_objects", "morphology",
           "balls", "patches", "measure", "deconvolve_widget", "label_widget", "balls_widget",
           "patches_widget", "measure_widget"]


def __getattr__(name):  # the widgets import napari and Qt: only when asked for
    if name.endswith("_widget"):
        from . import _widgets
        return getattr(_widgets, name)
    raise AttributeError(name)
