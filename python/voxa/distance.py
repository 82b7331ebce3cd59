"""scipy.ndimage's distance-transform arguments on top of voxa's C kernels.

distance_transform_edt: the C kernel (morphology._edt_c) gives scipy's
distances exactly; this layer adds scipy's argument rules (0-d input gives
shape (1,), `distances=` must be float64 and `indices=` int32, the
RuntimeError messages scipy uses).

distance_transform_cdt: 'taxicab'/'cityblock'/'manhattan' and 'chessboard'
(and metric arrays that are one of them) run in C by separable passes. Any
other metric array, and return_indices, run scipy's own algorithm in C
(src/ops/distance/chamfer.c: two raster passes of a chamfer propagation
with the first half of the metric, scipy's tie rule; exact to scipy).
"""
import numpy as np

from . import _ndsupport as nds
from . import _voxa, morphology

__all__ = ["edt", "cdt"]


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


def edt_dtype(dtype, squared, sampling):
    """The distances' dtype, checked before any work (voxa.dask checks it when
    the graph is built): the C kernel's rule, float64, float32, or uint32
    for squared distances with unit spacing."""
    dt = np.dtype(dtype)
    if dt not in (np.float64, np.float32, np.uint32):
        raise ValueError(f"dtype {dt}: expected float64, float32 or uint32 (squared)")
    if dt == np.uint32 and (not squared or sampling is not None):
        raise ValueError("edt: uint32 output holds squared distances with unit spacing only")
    return dt


def edt_sampling(sampling, ndim):
    """The sampling as ndim finite float64 values (None stays None), with the
    errors voxa.distance_transform_edt raises (voxa.dask checks it at the
    call); zero and negative values pass (scipy's feature transform takes
    them)."""
    if sampling is None:
        return None
    try:
        sampling = nds.normalize_sequence(sampling, ndim)
    except RuntimeError as e:
        raise nds.RankError(f"sampling: {e}") from None
    return morphology._spacing(sampling, ndim, "sampling", any_sign=True)


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
    if return_distances and not dist_given:
        edt_dtype(dtype, squared, sampling)
    a = np.asarray(input)
    if a.dtype not in morphology._NATIVE or a.ndim == 0:
        a = np.atleast_1d(np.where(a, True, False))  # scipy: 0-d gives shape (1,)
    sampling = edt_sampling(sampling, a.ndim)
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
    m = _metric_flags(metric, ndim)
    half = m.size // 2
    flat = m.ravel()
    return [tuple(int(c) - 1 for c in np.unravel_index(k, m.shape))
            for k in range(half) if flat[k]]


def _metric_flags(metric, ndim):
    """The (3,)*ndim boolean metric scipy uses for `metric`."""
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
    return np.asarray(m, dtype=bool)


def _c_metric(offsets, ndim):
    """'taxicab' / 'chessboard' when the offsets are theirs (the C path)."""
    for name, conn in (("taxicab", 1), ("chessboard", ndim)):
        if offsets == _metric_offsets(nds.generate_binary_structure(ndim, conn), ndim):
            return name
    return None


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
        ind = (indices if ind_given else np.empty((a.ndim,) + a.shape, dtype=np.int32)) \
            if return_indices else None
        if a.size:
            flags = np.ascontiguousarray(_metric_flags(metric, a.ndim), dtype=np.uint8)
            _voxa.run_op("edt", fg, dist, metric_flags=flags, indices=ind)
    return _results(return_distances, return_indices, dist, ind, dist_given, ind_given)
