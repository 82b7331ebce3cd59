"""scipy.ndimage's distance-transform arguments on top of voxa's C kernels.

distance_transform_edt: the C kernel (morphology._edt_c) gives scipy's
distances exactly; this layer adds scipy's argument rules (0-d input gives
shape (1,), `distances=` must be float64 and `indices=` int32, the
RuntimeError messages scipy uses).

distance_transform_cdt: 'taxicab'/'cityblock'/'manhattan' and 'chessboard'
(and metric arrays that are one of them) run in C. Any other metric array,
and return_indices, use scipy's own algorithm, written here in NumPy: two
raster passes of a chamfer propagation (Rosenfeld & Pfaltz 1966). scipy
uses only the first half (in C order) of the (3,)*ndim metric: a forward
pass where each foreground voxel takes 1 + the smallest known distance among
those neighbours, then the same on the array reversed along every axis. On
a tie the voxel keeps its value, else the first neighbour in C order wins;
the nearest-background index follows the winner. Exact to scipy including
those ties. Cost: one Python step per line of the array (prod(shape[:-1]))
with the lines vectorised: 3.6 s for 128**3 on a loaded 2-core machine
(scipy: 0.27 s); a C kernel would be the fast path if a pipeline needs it.
"""
import numpy as np

from . import _ndsupport as nds
from . import morphology

__all__ = ["edt", "cdt"]

_INF = np.int64(1) << 40  # "no background reached yet" (scipy's -1)


def _arg_check(dist_out, ind_out, return_distances, return_indices):
    msgs = []
    if not return_distances and not return_indices:
        msgs.append("at least one of return_distances/return_indices must be True")
    if dist_out and not return_distances:
        msgs.append("return_distances must be True if distances is supplied")
    if ind_out and not return_indices:
        msgs.append("return_indices must be True if indices is supplied")
    if msgs:
        raise RuntimeError(", ".join(msgs))


def _results(return_distances, return_indices, dist, ind, dist_given, ind_given):
    res = []
    if return_distances and not dist_given:
        res.append(dist)
    if return_indices and not ind_given:
        res.append(ind)
    if not res:
        return None
    return res[0] if len(res) == 1 else tuple(res)


def edt(input, sampling, return_distances, return_indices, distances, indices, squared,
        dtype):
    """voxa.distance_transform_edt (scipy's arguments plus squared=, dtype=)."""
    dist_given = isinstance(distances, np.ndarray)
    ind_given = isinstance(indices, np.ndarray)
    _arg_check(dist_given, ind_given, return_distances, return_indices)
    a = np.asarray(input)
    if a.dtype not in morphology._NATIVE or a.ndim == 0:
        a = np.atleast_1d(np.where(a, True, False))  # scipy: 0-d gives shape (1,)
    if sampling is not None:
        try:
            sampling = nds.normalize_sequence(sampling, a.ndim)
        except RuntimeError as e:
            raise nds.RankError(f"sampling: {e}") from None
    if ind_given:
        if indices.shape != (a.ndim,) + a.shape:
            raise RuntimeError(f"indices array has wrong shape {indices.shape}, expected "
                               f"{(a.ndim,) + a.shape}")
        if indices.dtype.type != np.int32:
            raise RuntimeError(f"indices array must be int32, got {indices.dtype}")
    if dist_given and return_distances:
        if distances.shape != a.shape:
            raise RuntimeError(f"distances array has wrong shape {distances.shape}, expected "
                               f"{a.shape}")
        if distances.dtype.type != np.float64 and not squared:
            raise RuntimeError(f"distances array must be float64, got {distances.dtype}")
    if a.size == 0:
        dist = np.zeros(a.shape, dtype=np.dtype(dtype)) if return_distances else None
        ind = np.zeros((a.ndim,) + a.shape, dtype=np.int32) if return_indices else None
        return _results(return_distances, return_indices, dist, ind, dist_given, ind_given)
    r = morphology._edt_c(a, sampling, return_distances, return_indices,
                          distances if dist_given else None, indices if ind_given else None,
                          squared=squared, dtype=dtype)
    return r


def _metric_offsets(metric, ndim):
    """The neighbour offsets scipy's chamfer passes use: the true elements of
    the first half (C order) of the (3,)*ndim metric, in C order."""
    if isinstance(metric, str):
        if metric in ("taxicab", "cityblock", "manhattan"):
            m = nds.generate_binary_structure(ndim, 1)
        elif metric == "chessboard":
            m = nds.generate_binary_structure(ndim, ndim)
        else:
            raise ValueError(f"invalid metric provided: {metric!r} (expected 'chessboard', "
                             "'taxicab', 'cityblock', 'manhattan' or a (3,)*ndim array)")
    else:
        try:
            m = np.asarray(metric)
        except Exception as e:
            raise ValueError(f"invalid metric provided: {e}") from e
        if any(s != 3 for s in m.shape):
            raise ValueError(f"metric sizes must be equal to 3, got shape {m.shape}")
        if m.ndim != ndim:
            raise ValueError(f"metric has {m.ndim} dimensions, the input {ndim}: they must "
                             "match (scipy crashes here)")
        if m.dtype.kind not in "biufc":
            raise ValueError(f"invalid metric provided: dtype {m.dtype}")
        if m.dtype != np.bool_:
            # scipy reads the metric's first size // 2 *bytes* as its flags,
            # whatever the dtype (so np.ones((3, 3)) in float64 means "no
            # neighbour": scipy's own test_distance_transform_cdt05 checks
            # this). voxa does the same, to give scipy's result.
            raw = np.ascontiguousarray(m, dtype=m.dtype.newbyteorder("="))
            m = raw.reshape(-1).view(np.uint8)[:m.size].reshape(m.shape) != 0
    half = m.size // 2
    flat = m.ravel()
    return [tuple(int(c) - 1 for c in np.unravel_index(k, m.shape))
            for k in range(half) if flat[k]]


def _c_metric(offsets, ndim):
    """'taxicab' / 'chessboard' when the offsets are theirs (the C path)."""
    for name, conn in (("taxicab", 1), ("chessboard", ndim)):
        if offsets == _metric_offsets(nds.generate_binary_structure(ndim, conn), ndim):
            return name
    return None


def _update(P, PF, Q, QF, r):
    """P[p] = Q[p + r] + 1 where that is strictly smaller (features follow)."""
    dst = tuple(slice(max(0, -d), n - max(0, d)) for d, n in zip(r, P.shape))
    src = tuple(slice(max(0, d), n - max(0, -d)) for d, n in zip(r, P.shape))
    Pd = P[dst]
    cand = Q[src] + 1
    upd = cand < Pd
    Pd[upd] = cand[upd]
    if PF is not None:
        PF[dst][upd] = QF[src][upd]


def _line(W, F):
    """The in-line recurrence W[x] = min(W[x], W[x-1] + 1), keeping W[x] on a
    tie: W[x] = x + cummin(W[k] - k); the source is the last k <= x where
    W[k] - k reaches the running minimum."""
    x = np.arange(W.shape[0], dtype=np.int64)
    s = W - x
    cm = np.minimum.accumulate(s)
    if F is not None:
        src = np.maximum.accumulate(np.where(s == cm, x, 0))
        F[...] = F[src]
    W[...] = np.minimum(cm + x, _INF)


def _chamfer(W, F, offs):
    """One raster pass over W (int64, _INF = unknown) with the offsets
    `offs` (lexicographically negative, C order), recursively per axis."""
    if W.ndim == 1:
        if (-1,) in offs:
            _line(W, F)
        return
    outer = [o[1:] for o in offs if o[0] == -1]
    inner = [o[1:] for o in offs if o[0] == 0]
    for i in range(W.shape[0]):
        P = W[i]
        PF = None if F is None else F[i]
        if i and outer:
            for r in outer:
                _update(P, PF, W[i - 1], None if F is None else F[i - 1], r)
        if inner:
            _chamfer(P, PF, inner)


def cdt(input, metric, return_distances, return_indices, distances, indices):
    """voxa.distance_transform_cdt (scipy's arguments and results)."""
    dist_given = isinstance(distances, np.ndarray)
    ind_given = isinstance(indices, np.ndarray)
    _arg_check(dist_given, ind_given, return_distances, return_indices)
    a = np.asarray(input)
    if a.ndim == 0:
        raise TypeError("distance_transform_cdt: input must have at least 1 dimension "
                        "(scipy raises TypeError on 0-d input too)")
    offs = _metric_offsets(metric, a.ndim)
    if dist_given:
        if distances.dtype.type != np.int32:
            raise ValueError(f"distances must be of int32 type, got {distances.dtype}")
        if distances.shape != a.shape:
            raise ValueError(f"distances has wrong shape {distances.shape}, expected {a.shape}")
    if ind_given:
        if indices.dtype.type != np.int32:
            raise ValueError(f"indices array must be int32, got {indices.dtype}")
        if indices.shape != (a.ndim,) + a.shape:
            raise ValueError(f"indices array has wrong shape {indices.shape}, expected "
                             f"{(a.ndim,) + a.shape}")
    fg = np.where(a, True, False)
    dist = distances if dist_given else np.empty(a.shape, dtype=np.int32)
    ind = None
    name = _c_metric(offs, a.ndim)
    if a.size and name is not None and not return_indices:
        morphology._cdt_c(fg, name, True, False, dist, None)
    else:
        W = np.where(fg, _INF, 0)
        F = np.arange(a.size, dtype=np.int64).reshape(a.shape) if return_indices else None
        if a.size:
            _chamfer(W, F, offs)
            flip = (slice(None, None, -1),) * a.ndim
            _chamfer(W[flip], None if F is None else F[flip], offs)
        dist[...] = np.where(W >= _INF, -1, W)
        if return_indices:
            ind = indices if ind_given else np.empty((a.ndim,) + a.shape, dtype=np.int32)
            for d, c in enumerate(np.unravel_index(F, a.shape)):
                ind[d] = c
    return _results(return_distances, return_indices, dist, ind, dist_given, ind_given)
