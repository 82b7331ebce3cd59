"""Reading and writing .npy and TIFF files through the C library."""
import os

import numpy as np

from . import _voxa


def imread(path):
    """Read a .npy or .tif/.tiff file into a NumPy array."""
    buf, dtype, shape, fortran = _voxa.read(os.fspath(path))
    arr = np.frombuffer(buf, dtype=np.dtype(dtype))
    return arr.reshape(shape, order="F" if fortran else "C")


def imwrite(path, array):
    """Write an array to .npy or .tif/.tiff (by extension), atomically: the
    file appears under its name only once complete."""
    a = np.asarray(array)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("="))
    _voxa.write(os.fspath(path), a)
