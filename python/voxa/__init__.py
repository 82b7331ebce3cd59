"""voxa: fast, exact, lean processing of big 2D/3D microscopy images.

NumPy arrays in, NumPy arrays out; the C library does the work with the GIL
released. Where scipy.ndimage or scikit-image define an operation, voxa gives
the same answer with the same arguments.
"""
from . import _voxa
from .fill import binary_fill_holes
from .io import imread, imwrite, read_csv
from ._ndsupport import generate_binary_structure, iterate_structure
from .binary import binary_hit_or_miss, binary_propagation
from .measure import find_objects, label
from .morphology import (ball, binary_closing, binary_dilation, binary_erosion, binary_opening,
                         diamond, distance_transform_cdt, distance_transform_edt, morph_path)
from .pipeline import pipeline
from .points import balls
from .preview import preview
from ._regionprops_objects import regionprops
from ._regionprops_table import regionprops_table
from .restoration import gaussian_psf, richardson_lucy
from .roi import extract_patches, paste_patches
from .threshold import threshold, threshold_otsu
from . import stream  # streamed runs on paths: voxa.stream.run

__version__ = _voxa.version()

from ._backend import takes_backend as _takes_backend  # noqa: E402  backend= on op functions
for _name in ("balls", "label", "richardson_lucy", "extract_patches", "paste_patches",
              "distance_transform_edt", "distance_transform_cdt", "binary_dilation",
              "binary_erosion", "binary_opening", "binary_closing", "binary_propagation",
              "binary_hit_or_miss", "binary_fill_holes"):
    globals()[_name] = _takes_backend(globals()[_name])


def set_threads(n):
    """Use n worker threads for later calls (0 restores the default:
    VOXA_NUM_THREADS, else all cores). Results never depend on it."""
    _voxa.set_threads(int(n))


def get_threads():
    """The number of worker threads calls will use."""
    return _voxa.get_threads()


__all__ = [
    "set_threads", "get_threads", "__version__",
    "imread", "imwrite", "read_csv",  # io
    "balls",  # points
    "label",  # measure
    "regionprops", "regionprops_table",  # measure (scikit-image's)
    "preview",  # preview
    "pipeline",  # pipeline
    "richardson_lucy", "gaussian_psf",  # restoration
    "extract_patches", "paste_patches",  # roi
    "distance_transform_edt", "distance_transform_cdt", "binary_dilation",  # morphology
    "binary_erosion", "binary_opening", "binary_closing", "ball", "diamond", "morph_path",
    "find_objects", "binary_propagation", "binary_hit_or_miss",  # scipy.ndimage drop-ins
    "generate_binary_structure", "iterate_structure",
    "binary_fill_holes",  # fill
    "threshold", "threshold_otsu",  # threshold
]
