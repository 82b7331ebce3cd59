"""Ball masks around points (workload W1)."""
import numbers

import numpy as np

from . import _voxa

_AXES = ("z", "y", "x")


def _points_array(points, ndim):
    """(N, ndim) float64 in axis order from an array or a table with x/y[/z]
    columns (a pandas DataFrame, a dict of columns, a NumPy structured array)."""
    names = getattr(points, "columns", None)
    if names is None and isinstance(points, dict):
        names = list(points.keys())
    if names is None and getattr(getattr(points, "dtype", None), "names", None):
        names = list(points.dtype.names)
    if names is not None:
        lower = {str(n).lower(): n for n in names}
        axes = _AXES[3 - ndim:] if ndim <= 3 else None
        if axes is None or any(a not in lower for a in axes):
            raise ValueError(f"points table needs columns {', '.join(axes or _AXES)} for a "
                             f"{ndim}-D shape; it has {', '.join(map(str, names))}")
        cols = [np.asarray(points[lower[a]], dtype=np.float64) for a in axes]
        return np.ascontiguousarray(np.stack(cols, axis=1) if cols[0].size else
                                    np.empty((0, ndim)))
    arr = np.asarray(points, dtype=np.float64)
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(0, ndim)
    if arr.ndim != 2 or arr.shape[1] != ndim:
        raise ValueError(f"points must have shape (N, {ndim}) for a {ndim}-D shape, "
                         f"got {arr.shape}")
    return np.ascontiguousarray(arr)


def balls(shape, points, radius, spacing=None, owner=False, out=None):
    """Mask of the balls of `radius` around `points`.

    Voxel v is inside iff sum_d ((v_d - p_d) * spacing_d)**2 <= radius**2 for
    some point p, in double precision (the W1 rule).

    shape:   output shape (any ndim >= 1).
    points:  (N, ndim) float coordinates in axis order (z, y, x), or a table
             with columns x, y[, z] (pandas DataFrame, dict, structured array).
    radius:  one radius, or N radii (one per point).
    spacing: voxel size per axis (anisotropic balls); default 1.
    owner:   if True, return int32 (int64 beyond 2**31-1 points) holding the
             1-based index of the nearest point within reach (ties: the lower
             index), 0 outside; else a bool mask.
    out:     optional array to fill (bool/uint8 mask or int32/uint32/int64
             owners), returned.
    Cost: O(N r^(ndim-1) + output), not O(voxels x N).
    """
    shape = tuple(int(s) for s in (shape if np.iterable(shape) else (shape,)))
    ndim = len(shape)
    if ndim < 1:
        raise ValueError("shape must have at least one axis")
    pts = _points_array(points, ndim)
    if isinstance(radius, numbers.Real) or np.ndim(radius) == 0:
        r, radii = float(radius), None
    else:
        radii = np.ascontiguousarray(radius, dtype=np.float64).ravel()
        r = 0.0
        if radii.size != len(pts):
            raise ValueError(f"radius has {radii.size} values for {len(pts)} points")
    sp = None
    if spacing is not None:
        sp = np.asarray(spacing, dtype=np.float64)
        if sp.ndim == 0:
            sp = np.full(ndim, float(sp))
        if sp.shape != (ndim,):
            raise ValueError(f"spacing has {sp.size} values for a {ndim}-D shape")
        sp = np.ascontiguousarray(sp)
    if out is None:
        dtype = (np.int32 if len(pts) < 2**31 else np.int64) if owner else np.bool_
        out = np.empty(shape, dtype=dtype)
    elif out.shape != shape:
        raise ValueError(f"out has shape {out.shape}, expected {shape}")
    if not np.isfinite(pts).all():
        bad = np.argwhere(~np.isfinite(pts))
        raise ValueError(f"balls: point {bad[0][0]} has a non-finite coordinate on axis "
                         f"{bad[0][1]} ({pts[tuple(bad[0])]})")
    if len(pts) and out.size:
        _voxa.run_op("balls", None, out, shape=shape, points=pts, radius=None if radii is not None
                     else r, radii=radii, spacing=sp, owner=bool(owner), count=False)
    else:
        out[...] = 0
    return out
