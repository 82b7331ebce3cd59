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
from .points import balls
from .preview import preview
from .regionprops import regionprops_table
from .restoration import gaussian_psf, richardson_lucy
from .roi import extract_patches, paste_patches
from .threshold import threshold, threshold_otsu

__version__ = _voxa.version()


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
    "regionprops_table",  # regionprops
    "preview",  # preview
    "richardson_lucy", "gaussian_psf",  # restoration
    "extract_patches", "paste_patches",  # roi
    "distance_transform_edt", "distance_transform_cdt", "binary_dilation",  # morphology
    "binary_erosion", "binary_opening", "binary_closing", "ball", "diamond", "morph_path",
    "find_objects", "binary_propagation", "binary_hit_or_miss",  # scipy.ndimage drop-ins
    "generate_binary_structure", "iterate_structure",
    "binary_fill_holes",  # fill
    "threshold", "threshold_otsu",  # threshold
]
