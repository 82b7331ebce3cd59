"""scipy.ndimage's argument conventions, in one place, for the drop-in layer.

The functions here turn what a scipy user passes (an `axes` tuple, an `origin`
scalar or sequence, a structure of any dtype or as nested lists, an `output`
array or dtype) into what voxa's C calls take, raising the exception type
scipy raises for the same mistake. The structuring-element helpers
generate_binary_structure / iterate_structure are re-implemented (they are a
few lines of NumPy) so that a script can drop its scipy import.

The one piece of maths: scipy places structure element b at offset
b - shape // 2 - origin (for erosion: out[v] = AND in[v + offset]; for
dilation: out[v] = OR in[v - offset]; checked on every size and origin by
tests/python/test_scipy_morph.py). voxa's C kernels use the same rule with
origin 0, so a non-zero origin is exactly a structure embedded, shifted, in a
larger zero-padded array (`shifted_footprint`).
"""
import operator
from collections.abc import Iterable

import numpy as np

# Input dtypes scipy.ndimage's binary functions read (others: RuntimeError).
_SCIPY_KINDS = "biuf"


def generate_binary_structure(rank, connectivity):
    """scipy.ndimage.generate_binary_structure: the boolean (3,)*rank
    neighbourhood of offsets with at most `connectivity` non-zero components
    (connectivity < 1 counts as 1; rank < 1 gives array(True))."""
    if connectivity < 1:
        connectivity = 1
    if rank < 1:
        return np.array(True, dtype=bool)
    dist = np.abs(np.indices([3] * rank) - 1).sum(0)
    return dist <= connectivity


def iterate_structure(structure, iterations, origin=None):
    """scipy.ndimage.iterate_structure: `structure` dilated by itself
    iterations - 1 times (shape n + (iterations - 1) * (n - 1) per axis).
    With `origin` given (and iterations >= 2) returns (structure, origin *
    iterations), as scipy does; iterations < 2 returns a copy unchanged."""
    from .morphology import binary_dilation  # the layer above uses this module
    structure = np.asarray(structure)
    if iterations < 2:
        return structure.copy()
    ni = iterations - 1
    shape = [n + ni * (n - 1) for n in structure.shape]
    pos = [ni * (n // 2) for n in structure.shape]
    out = np.zeros(shape, bool)
    out[tuple(slice(p, p + n) for p, n in zip(pos, structure.shape))] = structure != 0
    out = binary_dilation(out, structure, iterations=ni)
    if origin is None:
        return out
    origin = normalize_sequence(origin, structure.ndim)
    return out, [iterations * o for o in origin]


def normalize_sequence(value, rank):
    """A scalar repeated rank times, or a sequence of exactly rank values
    (RuntimeError otherwise, as scipy)."""
    if not isinstance(value, str) and np.iterable(value):
        seq = list(value)
        if len(seq) != rank:
            raise RankError(f"sequence argument must have length equal to input rank "
                               f"({rank}), got {len(seq)} values")
        return seq
    return [value] * rank


def check_axes(axes, ndim):
    """scipy's `axes`: None (all), an int or an iterable of ints, each in
    [-ndim, ndim), no repeats. Returns a tuple of non-negative axes."""
    if axes is None:
        return tuple(range(ndim))
    if np.isscalar(axes):
        axes = (operator.index(axes),)
    elif isinstance(axes, Iterable):
        axes = tuple(operator.index(ax) for ax in axes)
    else:
        raise ValueError(f"axes must be an integer, iterable of integers, or None, "
                         f"got {axes!r}")
    for ax in axes:
        if ax < -ndim or ax > ndim - 1:
            raise ValueError(f"specified axis: {ax} is out of range for an input of "
                             f"{ndim} dimensions")
    axes = tuple(ax % ndim for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes must be unique, got {axes}")
    return axes


def binary_input(input, what="input"):
    """`input` as an ndarray, with scipy's errors: TypeError for complex,
    RuntimeError for dtypes scipy does not read (strings, objects...)."""
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError(f"Complex type not supported ({what} has dtype {a.dtype})")
    if a.dtype.kind not in _SCIPY_KINDS:
        raise RuntimeError(f"data type not supported: {what} has dtype {a.dtype}")
    return a


def structure_array(structure, ndim, axes, name="structure"):
    """The boolean structure scipy would use on an input of `ndim`
    dimensions: None -> generate_binary_structure(len(axes), 1); any array or
    nested list -> non-zero is True; expanded with size-1 axes outside
    `axes`. RuntimeError on a dimension mismatch or an empty structure."""
    if structure is None:
        s = generate_binary_structure(len(axes), 1)
    else:
        s = np.asarray(structure)
        if np.iscomplexobj(s) or s.dtype.kind not in _SCIPY_KINDS:
            raise DtypeError(f"{name} must be boolean or numeric, got dtype {s.dtype}")
        if s.ndim == 0 and ndim > 0:  # scipy: RuntimeError (rank); dask-image: TypeError
            raise ScalarStructureError(f"{name} must be an array, got the scalar {structure!r}")
        s = s != 0
    if len(axes) < ndim:
        if s.ndim != len(axes):
            raise RankError(f"{name}.ndim ({s.ndim}) must match len(axes) ({len(axes)})")
        s = np.expand_dims(s, tuple(ax for ax in range(ndim) if ax not in axes))
    if s.ndim != ndim:
        raise RankError(f"{name} and input must have same dimensionality "
                           f"({name} has {s.ndim}, input {ndim})")
    if s.size < 1:
        raise RankError(f"{name} must not be empty (shape {s.shape})")
    return s


def origin_list(origin, ndim, axes, shape, name="origin"):
    """Per-axis integer origins (0 outside `axes`), each within scipy's range
    -(n // 2) <= origin <= (n - 1) // 2 for a structure of n along that axis
    (ValueError otherwise: scipy gives an undefined result there)."""
    seq = normalize_sequence(origin, len(axes))
    full = [0] * ndim
    if len(axes) == ndim:  # scipy ignores the order of axes that name every axis
        axes = range(ndim)
    for ax, o in zip(axes, seq):
        try:
            full[ax] = operator.index(o)
        except TypeError:
            raise TypeError(f"{name} values must be integers, got {o!r}") from None
    for ax, (o, n) in enumerate(zip(full, shape)):
        if not -(n // 2) <= o <= (n - 1) // 2:
            raise ValueError(f"invalid {name} {o} on axis {ax}: a structure of size {n} "
                             f"allows {-(n // 2)}..{(n - 1) // 2}")
    return full


def shifted_footprint(s, origin):
    """A boolean footprint whose offsets (index - shape // 2) are those of
    structure `s` with `origin` (b - s.shape // 2 - origin): `s` embedded in
    a zero array of odd size per axis. Identity when origin is all zero."""
    if not any(origin):
        return s
    lo = [-(n // 2) - o for n, o in zip(s.shape, origin)]
    hi = [n - 1 - n // 2 - o for n, o in zip(s.shape, origin)]
    half = [max(-a, b) for a, b in zip(lo, hi)]
    out = np.zeros([2 * h + 1 for h in half], dtype=bool)
    out[tuple(slice(h + a, h + b + 1) for h, a, b in zip(half, lo, hi))] = s
    return out


# scipy raises RuntimeError or AssertionError where voxa raised ValueError
# before it followed scipy; these classes are both, so code written for
# either keeps working.
class RankError(RuntimeError, ValueError):
    """A structure, mask or output whose rank or shape does not fit."""


class ScalarStructureError(RankError, TypeError):
    """A scalar where a structuring element is expected (scipy: RuntimeError,
    its rank does not match; dask-image: TypeError)."""


class BitDepthError(RuntimeError, ValueError):
    """Labels that do not fit the requested output dtype."""


class DtypeError(TypeError, RuntimeError):
    """A structure that is not boolean or numeric (scipy: RuntimeError)."""


class SymmetryError(AssertionError, ValueError):
    """A label structure that is not centrosymmetric."""
