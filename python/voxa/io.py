"""Reading and writing .npy and TIFF files, and CSV tables, through the C
library (the GIL is released while it works)."""
import os

import numpy as np

from . import _voxa
from ._arrays import native

_TIFF_EXT = (".tif", ".tiff")


def imread(path):
    """Read a .npy or .tif/.tiff file, or a .zarr folder (Zarr v2/v3 array or
    OME-Zarr image: its full resolution), into a NumPy array.

    TIFF: one page gives a 2D array, several pages a 3D array (pages along
    axis 0; ImageJ hyperstacks come back flat, as (pages, h, w)). Several
    samples per pixel add an axis where tifffile puts it. Raises OSError
    (missing/unreadable file), ValueError (corrupt or truncated file),
    TypeError (unsupported dtype or layout)."""
    # The buffer owns what the C reader allocated: no copy.
    buf, dtype, shape, fortran = _voxa.read_array(os.fspath(path))
    arr = np.frombuffer(buf, dtype=np.dtype(dtype))
    return arr.reshape(shape, order="F" if fortran else "C")


def imwrite(path, array, compression=None, level=None, bigtiff=None):
    """Write an array to .npy or .tif/.tiff (by extension), atomically: the
    file appears under its name only once complete. A .zarr path gets an
    OME-Zarr image (Zarr v3, blosc lz4; 2-D/3-D) or a plain Zarr v3 array
    (other ndim), each chunk file written atomically (docs/zarr.md).

    TIFF only: ``compression`` None/"none" or "deflate" (alias "zlib"; read by
    tifffile without imagecodecs), ``level`` 1..9 for deflate (default 6),
    ``bigtiff`` None (BigTIFF when the data exceed 2 GiB), True or False. A
    2D array is one page, a 3D array one page per index of axis 0; bool is
    written as uint8."""
    path = os.fspath(path)
    a = native(np.asarray(array))
    is_tiff = str(path).lower().endswith(_TIFF_EXT)
    if not is_tiff:
        if compression not in (None, "none") or level is not None or bigtiff is not None:
            raise ValueError(
                "imwrite: compression, level and bigtiff apply to TIFF files only, "
                f"not to {path!r}")
        _voxa.write(path, a)
        return
    codes = {None: 0, "none": 0, "deflate": 1, "zlib": 1, "adobe_deflate": 1}
    key = compression.lower() if isinstance(compression, str) else compression
    if key not in codes:
        raise ValueError(
            f"imwrite: compression must be None, 'none' or 'deflate', got {compression!r}")
    if level is not None and codes[key] == 0:
        raise ValueError("imwrite: level needs compression='deflate'")
    above = {None: 0, True: -1, False: 2**63 - 1}
    if bigtiff not in above:
        raise ValueError(f"imwrite: bigtiff must be None, True or False, got {bigtiff!r}")
    _voxa.tiff_write(path, a, codes[key], int(level or 0), above[bigtiff])


def read_csv(path):
    """Read a CSV table with a header row into a dict {column name: float64
    array}, in file order. Cells that are not numbers are NaN; ragged rows
    raise ValueError naming the line. Column lookup in the C API is
    case-insensitive; here the names are returned as written."""
    names, values, nrows = _voxa.csv_read(os.fspath(path))
    v = np.frombuffer(values, dtype=np.float64).reshape(nrows, len(names))
    return {n: v[:, i] for i, n in enumerate(names)}
