"""Batch patch (ROI) extraction and paste-back (workload W3).

``extract_patches`` copies N patches of one shape out of an N-d array into one
C-contiguous (N, *size, *trailing) array, in the order of the coordinates;
``paste_patches`` writes such patches back into a volume. The C library does
the copying on several threads with the GIL released; strided NumPy views are
read in place.

Coordinates: an (N, k) array (or a pandas DataFrame, see ``_coords_array``)
for the first k axes; the remaining axes are taken whole. Corners must be
integers (integral floats are accepted); centres may be floats and are
rounded half to even (np.rint) before ``corner = centre - size // 2``.
"""
import numpy as np

from . import _voxa
from ._arrays import native

_MODES = ("error", "clip", "constant", "nearest", "reflect")
_PASTE_MODES = ("error", "clip", "crop")
_OPS = ("overwrite", "add", "max", "mean")


def _coords_array(coords, k):
    """pandas DataFrame -> (N, k) array: columns axis0..axis{k-1} if present,
    else the last k of z, y, x (case-insensitive); other columns ignored."""
    cols = getattr(coords, "columns", None)
    if cols is None:
        return np.asarray(coords)
    lower = {str(c).lower(): c for c in cols}
    names = [f"axis{d}" for d in range(k)]
    if not all(n in lower for n in names):
        if k > 3:
            missing = [n for n in names if n not in lower]
            raise ValueError(f"coords: no column {missing[0]!r} (a {k}-axis table needs "
                             f"columns axis0..axis{k - 1})")
        names = ["z", "y", "x"][3 - k:]
        missing = [n for n in names if n not in lower]
        if missing:
            raise ValueError(f"coords: no column {missing[0]!r} (need columns "
                             f"{', '.join(names)} or axis0..axis{k - 1})")
    return np.column_stack([np.asarray(coords[lower[n]]) for n in names]) if len(coords) \
        else np.zeros((0, k))


def _table_k(columns):
    """Coordinate axes of a table: consecutive axis0, axis1, ... columns, else
    3 with a z column, 2 with y, 1 with only x."""
    lower = {str(c).lower() for c in columns}
    k = 0
    while f"axis{k}" in lower:
        k += 1
    if k:
        return k
    return 3 if "z" in lower else 2 if "y" in lower else 1 if "x" in lower else 0


def _first_row(bad):
    return int(np.flatnonzero(bad.reshape(len(bad), -1).any(axis=1))[0])


def _int_coords(coords, k, centered):
    """Validate and convert to a C-ordered int64 (N, k) array."""
    a = _coords_array(coords, k)
    if a.dtype == object or a.dtype.kind not in "iuf":
        raise TypeError(f"coords: expected integer or float numbers, got dtype {a.dtype}")
    if a.ndim == 1 and a.size == 0:
        a = a.reshape(0, k)
    if a.ndim != 2:
        raise ValueError(f"coords: expected an (N, {k}) array, got shape {a.shape}")
    if a.shape[1] != k:
        raise ValueError(f"coords: {a.shape[1]} columns but size has {k} entries "
                         f"(one coordinate per patched axis)")
    if a.dtype.kind == "f":
        a = a.astype(np.float64, copy=False)
        bad = ~np.isfinite(a)
        if bad.any():
            raise ValueError(f"coords: row {_first_row(bad)} is not finite")
        if centered:
            a = np.rint(a)
        else:
            bad = a != np.floor(a)
            if bad.any():
                i = _first_row(bad)
                raise ValueError(f"coords: row {i} = {a[i].tolist()} is not integral "
                                 f"(corners must be integers; centres are rounded half "
                                 f"to even)")
        bad = (a < -2.0**63) | (a >= 2.0**63)
        if bad.any():
            raise ValueError(f"coords: row {_first_row(bad)} is outside int64")
    elif a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size:
        bad = a >= 2**63
        if bad.any():
            raise ValueError(f"coords: row {_first_row(bad)} is outside int64")
    return np.ascontiguousarray(a, dtype=np.int64)


def _sizes(size, coords):
    if np.ndim(size) == 0:
        k = np.shape(coords)[1] if np.ndim(coords) == 2 else None
        if k is None:
            raise ValueError("size: give one extent per patched axis (a tuple)")
        size = (size,) * k
    try:
        size = tuple(int(_index(s)) for s in size)
    except TypeError:
        raise TypeError(f"size: expected integers, got {size!r}") from None
    if not size:
        raise ValueError("size: empty (need at least one axis)")
    for d, s in enumerate(size):
        if s < 0:
            raise ValueError(f"size[{d}] = {s} is negative")
    return size


def _table(c, size, centered):
    """The coordinate keyword of the roi/paste ops: a float64 table. Rows whose
    patch bounds overflow int64 are refused here, while the values are exact
    (float64 rounds beyond 2**53)."""
    f = c.astype(np.float64)
    if f.size and np.abs(f).max() >= 2.0**62:  # the op caps sizes at 1e15: no overflow below
        imax, imin = np.iinfo(np.int64).max, np.iinfo(np.int64).min
        for d, s in enumerate(size):
            off = s // 2 if centered else 0
            bad = (c[:, d] > imax - s + off) | (c[:, d] < imin + off)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"coords: row {i}, column {d} = {c[i, d]} overflows int64 "
                                 f"with size {s}")
    return {"centres" if centered else "corners": f}


def _index(s):
    import operator
    return operator.index(s)


def extract_patches(image, coords, size, centered=False, mode="error", cval=0, out=None):
    """Copy N patches of shape ``size`` out of ``image`` into one array.

    image:    N-d array, any dtype voxa supports, any strides (not copied).
    coords:   (N, k) corners, or centres if ``centered``; k = len(size) <= image.ndim.
              A pandas DataFrame is read by column name: axis0..axis{k-1}, or the
              last k of z, y, x. Float corners must be integral; float centres are
              rounded half to even (np.rint). Corner = centre - size // 2.
    size:     k patch extents (>= 0); axes k.. of the image are taken whole.
    mode:     where a patch reaches outside: "error" (ValueError naming the first
              offending row), "clip" (shift it inside), or pad as numpy.pad does:
              "constant" (``cval``), "nearest" (pad's "edge"), "reflect".
    cval:     fill value for "constant"; must be exactly representable in the
              image's dtype.
    out:      optional C-or-any-strided array of shape (N, *size, *image.shape[k:])
              and the image's dtype to fill.
    Returns the (N, *size, *image.shape[k:]) array.
    """
    img = native(np.asarray(image))
    size = _sizes(size, coords)
    k = len(size)
    if k > img.ndim:
        raise ValueError(f"size has {k} entries but image has {img.ndim} dimensions")
    c = _int_coords(coords, k, centered)
    if mode not in _MODES:
        raise ValueError(f"mode: unknown mode {mode!r} (expected one of {', '.join(_MODES)})")
    shape = (c.shape[0],) + size + img.shape[k:]
    if out is None:
        out = np.empty(shape, dtype=img.dtype)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError("out: expected a NumPy array")
        if out.shape != shape:
            raise ValueError(f"out: shape {out.shape}, expected {shape}")
        if out.dtype != img.dtype:
            raise TypeError(f"out: dtype {out.dtype}, expected {img.dtype}")
    fill = float(cval)
    if not np.isfinite(fill) and img.dtype.kind == "f" and mode == "constant":
        # op parameters are finite: pad with 0, then put cval where a patch of
        # ones (over the patched axes) got padding
        _voxa.run_op("roi", img, out, **_table(c, size, centered), size=size, mode=mode)
        inside = np.ones(img.shape[:k], np.bool_)
        pad = np.empty((c.shape[0],) + size, np.bool_)
        _voxa.run_op("roi", inside, pad, **_table(c, size, centered), size=size, mode=mode)
        out[~pad] = fill
        return out
    _voxa.run_op("roi", img, out, **_table(c, size, centered), size=size, mode=mode,
                 value=fill)
    return out


def paste_patches(volume, patches, coords, centered=False, op="overwrite", mode="error"):
    """Write N patches back into ``volume`` in place and return it.

    volume:   writable N-d NumPy array (any strides).
    patches:  (N, *size, *volume.shape[k:]) array; cast to the volume's dtype if
              NumPy's "same_kind" casting allows, else TypeError.
    coords:   (N, k) corners or centres, as for extract_patches; size is read from
              patches.shape[1:1 + k].
    op:       "overwrite" (later rows win where patches overlap), "add", "max"
              (np.maximum), or "mean" (covered voxels become the mean of the patch
              values covering them; integers rounded half to even; voxels no patch
              covers keep their value).
    mode:     patches reaching outside: "error" (ValueError naming the first
              offending row), "clip" (shift inside, as extract_patches does), or
              "crop" (write only the part inside).
    The result equals pasting the rows one after another in order, for any
    thread count.
    """
    if not isinstance(volume, np.ndarray):
        raise TypeError("volume: expected a writable NumPy array (it is changed in place)")
    if not volume.flags.writeable:
        raise ValueError("volume: array is read-only")
    if volume.dtype.byteorder == ">":
        raise TypeError("volume: byte-swapped arrays are not supported")
    pat = np.asarray(patches)
    if op not in _OPS:
        raise ValueError(f"op: unknown op {op!r} (expected one of {', '.join(_OPS)})")
    if mode not in _PASTE_MODES:
        raise ValueError(f"mode: unknown mode {mode!r} (expected one of "
                         f"{', '.join(_PASTE_MODES)})")
    if hasattr(coords, "columns"):
        k = _table_k(coords.columns)
    else:
        ca = np.asarray(coords)
        k = ca.shape[1] if ca.ndim == 2 else (volume.ndim if ca.size == 0 else -1)
        if k < 0:
            raise ValueError(f"coords: expected an (N, k) array, got shape {ca.shape}")
    if not 1 <= k <= volume.ndim:
        raise ValueError(f"coords have {k} columns but volume has {volume.ndim} dimensions")
    if pat.ndim != volume.ndim + 1:
        raise ValueError(f"patches: {pat.ndim} dimensions, expected {volume.ndim + 1} "
                         f"(N, *size, *volume.shape[{k}:])")
    if pat.dtype != volume.dtype:
        if not np.can_cast(pat.dtype, volume.dtype, "same_kind"):
            raise TypeError(f"patches: cannot cast {pat.dtype} to the volume's "
                            f"{volume.dtype} (same_kind)")
        pat = pat.astype(volume.dtype)
    pat = native(pat)
    size = tuple(pat.shape[1:1 + k])
    c = _int_coords(coords, k, centered)
    if c.shape[0] != pat.shape[0]:
        raise ValueError(f"patches: {pat.shape[0]} patches but {c.shape[0]} coordinate rows")
    _voxa.run_op("paste", pat, volume, **_table(c, size, centered), volume=volume, op=op,
                 mode=mode)
    return volume
