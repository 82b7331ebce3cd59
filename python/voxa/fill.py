"""Hole filling: `binary_fill_holes`, a drop-in for scipy.ndimage.binary_fill_holes.

scipy fills holes by dilating an empty image inside the background, from
the border, until nothing changes. voxa finds the same voxels with one
depth-first search from the volume's edge over runs of background voxels
(linear time, any structure, origin and axes), in C with the GIL released.
This module follows scipy's argument rules and exceptions."""
import operator
from collections.abc import Iterable

import numpy as np

from . import _voxa

# dtypes the C library reads and writes directly (native byte order).
_DTYPES = {np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                  np.uint32, np.int64, np.uint64, np.float32, np.float64)}


def _check_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim))
    if np.isscalar(axes):
        axes = (operator.index(axes),)
    elif isinstance(axes, Iterable):
        axes = tuple(operator.index(ax) for ax in axes)
        for ax in axes:
            if ax < -ndim or ax > ndim - 1:
                raise ValueError(f"specified axis: {ax} is out of range")
        axes = tuple(ax % ndim if ax < 0 else ax for ax in axes)
    else:
        raise ValueError("axes must be an integer, iterable of integers, or None")
    if len(set(axes)) != len(axes):
        raise ValueError("axes must be unique")
    return axes


def _sequence(value, rank):
    if not isinstance(value, str) and np.iterable(value):
        seq = list(value)
        if len(seq) != rank:
            raise RuntimeError("sequence argument must have length equal to input rank")
        return seq
    return [value] * rank


def binary_fill_holes(input, structure=None, output=None, origin=0, *, axes=None):
    """Fill the holes in binary objects, exactly as scipy.ndimage.binary_fill_holes.

    A hole is a background voxel from which no chain of structure steps
    through background voxels leaves the array.

    Parameters
    ----------
    input : array_like, any dtype (non-zero, NaN included, is foreground), any strides.
    structure : array_like, optional
        Non-zero = a step. Any size per axis, the rank of `input` (or of
        `axes`); not necessarily symmetric. Default: connectivity 1
        (``generate_binary_structure(rank, 1)``).
    output : ndarray, optional
        An array of the input's shape (any real dtype, any strides) to write
        into; then None is returned, as scipy does. Anything else (a dtype
        included) is ignored, as scipy ignores it: the result is bool.
    origin : int or sequence of int
        Shift of the structure, as in scipy's binary_dilation: -(n // 2) to
        (n - 1) // 2 for a structure of size n (ValueError beyond, where
        scipy reads outside its buffers and may crash).
    axes : int or sequence of int, optional
        The axes the structure spans (others: no steps along them).

    Returns
    -------
    The filled image (bool), or None when `output` is an array.

    Cost: linear in the voxels (one search over background runs); identical
    results for every thread count.
    """
    a = np.asarray(input)
    ndim = a.ndim
    axes = _check_axes(axes, ndim)
    nax = len(axes)
    if structure is None:
        # generate_binary_structure(nax, 1): offsets with |o|_1 <= 1
        s = np.add.reduce(np.abs(np.indices((3,) * nax) - 1), axis=0) <= 1
    else:
        s = np.asarray(structure, dtype=bool)
    org = _sequence(origin, nax)
    if s.ndim < nax:
        raise IndexError("tuple index out of range")  # as scipy's binary_dilation
    if ndim > nax:
        if s.ndim != nax:
            raise RuntimeError(f"structure.ndim ({s.ndim}) must match len(axes) ({nax})")
        s = s.reshape(tuple(s.shape[axes.index(d)] if d in axes else 1 for d in range(ndim)))
        full = [0] * ndim
        for o, d in zip(org, axes):
            full[d] = o
        org = full
    if s.ndim != ndim:
        raise RuntimeError("structure and input must have same dimensionality")
    if s.size < 1:
        raise RuntimeError("structure must not be empty")
    for d in range(ndim):
        n = s.shape[d]
        try:
            o = operator.index(org[d])
        except TypeError:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices") from None
        # scipy checks the centre of the reflected structure at -o (-1 for even sizes)
        c = -o - (0 if n & 1 else 1) + n // 2
        if c < -n or c >= n:
            raise IndexError(f"index {c} is out of bounds for axis {d} with size {n}")
        if not -(n // 2) <= o <= (n - 1) // 2:  # scipy does not check: it reads out of bounds
            raise ValueError(f"binary_fill_holes: origin {o} on axis {d} is out of range "
                             f"{-(n // 2)}..{(n - 1) // 2} for a structure of size {n}")
        org[d] = o

    inplace = isinstance(output, np.ndarray)
    if inplace:
        if np.iscomplexobj(output):
            raise TypeError("Complex output type not supported")
        if output.shape != a.shape:
            raise RuntimeError("output shape not correct")
        out = output
    else:
        out = np.empty(a.shape, dtype=bool)  # scipy ignores a dtype given as output
    if ndim == 0:  # scipy fills a 0-D array whatever its value
        out[...] = True
        return None if inplace else out

    if a.dtype not in _DTYPES or not a.dtype.isnative:
        a = a != 0  # complex, float16, big-endian, object: same foreground
    target = out
    if out.dtype not in _DTYPES or not out.dtype.isnative or not out.flags.writeable:
        target = np.empty(a.shape, dtype=bool)
    st = None
    if structure is not None or ndim > nax:
        st = np.ascontiguousarray(s, dtype=np.uint8)
    _voxa.run_op("fill_holes", a, target, structure=st,
                 connectivity=None if st is not None else 1, origin=tuple(org))
    if target is not out:
        np.copyto(out, target, casting="unsafe")
    return None if inplace else out
