"""Exact binary morphology and distance transforms, with scipy.ndimage's
signatures and results.

    voxa.binary_opening(mask, voxa.ball(20))      # == ndi.binary_opening(mask, ball)
    voxa.binary_opening(mask, ball=20)            # same, without building the array
    voxa.distance_transform_edt(mask, sampling=(2, 1, 1))

Structuring elements: any 0/1 array (scipy's `structure`); arrays that are a
box, a diamond or a ball take a path whose cost does not depend on their
size (see docs/morph.md). The keyword extras ball=, diamond=, box=,
connectivity= (and spacing= for balls) name an element directly.
"""
import numbers

import numpy as np

from . import _voxa

__all__ = ["distance_transform_edt", "distance_transform_cdt", "binary_dilation",
           "binary_erosion", "binary_opening", "binary_closing", "ball", "diamond",
           "morph_path"]

_KIND = {"footprint": 0, "ball": 1, "diamond": 2, "box": 3, "connectivity": 4}
_NATIVE = {np.dtype(t) for t in (np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32,
                                 np.int32, np.uint64, np.int64, np.float32, np.float64)}


class Footprint(np.ndarray):
    """A boolean structuring element made by voxa.ball/voxa.diamond. It is a
    plain boolean ndarray for every other purpose; `voxa_spacing` lets the
    morphology functions recognise an anisotropic ball."""

    def __array_finalize__(self, obj):
        self.voxa_spacing = getattr(obj, "voxa_spacing", None)


def _as_input(input, name="input"):
    a = np.asarray(input)
    if a.dtype not in _NATIVE:
        if a.dtype.kind in "biuf" and a.dtype.newbyteorder("=") in _NATIVE:
            a = a.astype(a.dtype.newbyteorder("="))
        else:
            a = a != 0
    if a.ndim < 1:
        raise ValueError(f"{name} must have at least 1 dimension")
    return a


def _spacing(spacing, ndim, name="spacing", any_sign=False):
    if spacing is None:
        return None
    if isinstance(spacing, numbers.Number):
        sp = np.full(ndim, float(spacing))
    else:
        sp = np.ascontiguousarray(spacing, dtype=np.float64).ravel()
        if sp.size != ndim:
            raise ValueError(f"{name} has {sp.size} values, the input {ndim} dimensions")
    if not np.all(np.isfinite(sp)) or (not any_sign and np.any(sp <= 0)):
        raise ValueError(f"{name} values must be finite{'' if any_sign else ' and > 0'}, "
                         f"got {list(sp)}")
    return sp


def _skimage_args(name, second, param, dtype, decomposition):
    """scikit-image's footprint arguments: `dtype` is taken, a dtype in the
    second place (scikit-image's signature) or a `decomposition` is a clear
    error."""
    if isinstance(second, (type, np.dtype, str)):
        raise TypeError(f"{name}: {param}={second!r} looks like a dtype; voxa's signature is "
                        f"{name}(radius, {param}, *, dtype=bool) (scikit-image's second "
                        f"argument is the dtype): pass dtype= by keyword")
    if decomposition is not None:
        raise ValueError(f"{name}: decomposition={decomposition!r} is not supported: voxa's "
                         f"binary morphology takes the whole {name} at a cost that does not "
                         "grow with its radius (docs/morph.md); pass the footprint itself")
    return np.dtype(dtype)


def _as_dtype(fp, dtype):
    """The boolean footprint `fp` in `dtype` (the Footprint subclass and its
    spacing kept, so the morphology functions still recognise it)."""
    return fp if dtype == np.bool_ else fp.astype(dtype)


def ball(radius, spacing=None, ndim=3, *, dtype=bool, strict_radius=True, decomposition=None):
    """Ball {o : sum_d (o_d * spacing_d)^2 <= radius^2}, shape 2*r_d+1
    (r_d = floor(radius / spacing_d)); spacing, if given, sets ndim. The
    morphology functions recognise it (also as a plain array with unit
    spacing) and use the distance-transform path.

    scikit-image's keywords: `dtype` (default bool; skimage.morphology.ball
    returns uint8), `strict_radius=False` adds half a unit to the radius
    (skimage's rule; equal to skimage's ball for integer radii); a
    `decomposition` is refused (not needed here)."""
    dtype = _skimage_args("ball", spacing, "spacing", dtype, decomposition)
    if not strict_radius:
        radius = float(radius) + 0.5
    if spacing is not None:
        if isinstance(spacing, numbers.Number):
            spacing = [spacing] * ndim
        ndim = len(spacing)
    sp = _spacing(spacing, ndim)
    buf, shape = _voxa.morph_element(ndim, _KIND["ball"], float(radius), sp, None, 0)
    out = np.frombuffer(buf, dtype=np.bool_).reshape(shape).copy().view(Footprint)
    out.voxa_spacing = None if sp is None or np.all(sp == 1) else tuple(float(s) for s in sp)
    return _as_dtype(out, dtype)


def diamond(radius, ndim=3, *, dtype=bool, decomposition=None):
    """Diamond {o : sum_d |o_d| <= radius}, shape 2*radius+1 on every axis;
    equals iterate_structure(generate_binary_structure(ndim, 1), radius).
    3-D by default: skimage.morphology.diamond is ndim=2 (and uint8),
    skimage.morphology.octahedron ndim=3. `dtype` as for ball; a
    `decomposition` is refused (not needed here)."""
    dtype = _skimage_args("diamond", ndim, "ndim", dtype, decomposition)
    if float(radius) != int(radius):
        raise ValueError(f"diamond radius {radius} must be an integer")
    buf, shape = _voxa.morph_element(ndim, _KIND["diamond"], float(radius), None, None, 0)
    return _as_dtype(np.frombuffer(buf, dtype=np.bool_).reshape(shape).copy().view(Footprint),
                     dtype)


def _element(structure, ndim, ball_r, diamond_r, box, connectivity, spacing):
    """(kind, radius, spacing, box, connectivity, footprint) for the C call."""
    given = [x is not None for x in (structure, ball_r, diamond_r, box, connectivity)]
    if sum(given) > 1:
        raise ValueError("give one of structure, ball, diamond, box, connectivity")
    if spacing is not None and ball_r is None and structure is None:
        raise ValueError("spacing applies to ball elements only")
    if ball_r is not None:
        return _KIND["ball"], float(ball_r), _spacing(spacing, ndim), None, 0, None
    if diamond_r is not None:
        if float(diamond_r) != int(diamond_r):
            raise ValueError(f"diamond radius {diamond_r} must be an integer")
        return _KIND["diamond"], float(diamond_r), None, None, 0, None
    if box is not None:
        b = [int(box)] * ndim if isinstance(box, numbers.Integral) else [int(x) for x in box]
        return _KIND["box"], 0.0, None, b, 0, None
    if connectivity is not None:
        if int(connectivity) < 1:
            raise ValueError(f"connectivity {connectivity} must be >= 1")
        return _KIND["connectivity"], 0.0, None, None, min(int(connectivity), ndim), None
    if structure is None:  # scipy's default: generate_binary_structure(ndim, 1)
        return _KIND["connectivity"], 0.0, None, None, 1, None
    hint = spacing if spacing is not None else getattr(structure, "voxa_spacing", None)
    s = np.asarray(structure)
    if s.dtype.kind not in "biuf":
        raise ValueError(f"structure dtype {s.dtype} is not boolean or numeric")
    if s.ndim != ndim:
        raise ValueError(f"structure has {s.ndim} dimensions, the input {ndim}: they must match")
    if s.size == 0:
        raise ValueError("structure is empty (size 0)")
    if s.dtype != np.bool_:
        if not np.all((s == 0) | (s == 1)):
            raise ValueError("structure values must be 0 or 1 (a binary footprint)")
        s = s.astype(np.bool_)
    if not s.any():
        raise ValueError("structure has no true voxel (empty footprint)")
    s = np.ascontiguousarray(s).view(np.ndarray)
    return _KIND["footprint"], 0.0, _spacing(hint, ndim), None, 0, s


def _element_args(kind, radius, sp, bx, conn, fp):
    """The element as keywords of the morph ops (exactly one element kind)."""
    key = ("footprint", "ball", "diamond", "box", "connectivity")[kind]
    return {key: (fp, radius, radius, bx, conn)[kind], "spacing": sp}


def _morph(op, input, structure, iterations, mask, output, border_value, origin, brute_force,
           ball, diamond, box, connectivity, spacing):
    a = _as_input(input)
    if mask is not None:
        raise NotImplementedError("voxa: mask= is not supported")
    if np.any(np.asarray(origin) != 0):
        raise NotImplementedError("voxa: only the default origin (0) is supported")
    if border_value not in (0, 1, True, False):
        raise ValueError(f"border_value must be 0 or 1, got {border_value!r}")
    if isinstance(iterations, bool) or not isinstance(iterations, numbers.Integral):
        raise TypeError(f"iterations must be an integer, got {iterations!r}")
    kind, radius, sp, bx, conn, fp = _element(structure, a.ndim, ball, diamond, box,
                                              connectivity, spacing)
    if output is None:
        out = np.empty(a.shape, dtype=np.bool_)
    elif isinstance(output, np.ndarray):
        if output.shape != a.shape:
            raise ValueError(f"output shape {output.shape} differs from input shape {a.shape}")
        if output.dtype not in (np.bool_, np.uint8):
            raise ValueError(f"output dtype {output.dtype}: expected bool or uint8")
        out = output
    else:
        out = np.empty(a.shape, dtype=np.dtype(output))
        if out.dtype not in (np.bool_, np.uint8):
            raise ValueError(f"output dtype {out.dtype}: expected bool or uint8")
    _voxa.run_op(op, a, out, **_element_args(kind, radius, sp, bx, conn, fp),
                 iterations=int(iterations), border_value=int(border_value))
    return out


def binary_dilation(input, structure=None, iterations=1, mask=None, output=None,
                    border_value=0, origin=0, brute_force=False, *, axes=None, ball=None,
                    diamond=None, box=None, connectivity=None, spacing=None):
    """scipy.ndimage.binary_dilation, exact. Extras: ball=R (with spacing=),
    diamond=R, box=size or sizes, connectivity=c instead of structure."""
    from .binary import binary_op
    return binary_op("dilate", input, structure, iterations, mask, output, border_value, origin,
                     brute_force, axes, (ball, diamond, box, connectivity, spacing))


def binary_erosion(input, structure=None, iterations=1, mask=None, output=None,
                   border_value=0, origin=0, brute_force=False, *, axes=None, ball=None,
                   diamond=None, box=None, connectivity=None, spacing=None):
    """scipy.ndimage.binary_erosion, exact (border_value 0: outside is
    background). Extras as binary_dilation."""
    from .binary import binary_op
    return binary_op("erode", input, structure, iterations, mask, output, border_value, origin,
                     brute_force, axes, (ball, diamond, box, connectivity, spacing))


def binary_opening(input, structure=None, iterations=1, output=None, origin=0, mask=None,
                   border_value=0, brute_force=False, *, axes=None, ball=None, diamond=None,
                   box=None, connectivity=None, spacing=None):
    """scipy.ndimage.binary_opening (erosion^k then dilation^k), exact."""
    from .binary import binary_op
    return binary_op("open", input, structure, iterations, mask, output, border_value, origin,
                     brute_force, axes, (ball, diamond, box, connectivity, spacing))


def binary_closing(input, structure=None, iterations=1, output=None, origin=0, mask=None,
                   border_value=0, brute_force=False, *, axes=None, ball=None, diamond=None,
                   box=None, connectivity=None, spacing=None):
    """scipy.ndimage.binary_closing (dilation^k then erosion^k), exact."""
    from .binary import binary_op
    return binary_op("close", input, structure, iterations, mask, output, border_value, origin,
                     brute_force, axes, (ball, diamond, box, connectivity, spacing))


def morph_path(ndim, structure=None, iterations=1, *, ball=None, diamond=None, box=None,
               connectivity=None, spacing=None):
    """Which algorithm voxa uses for this element (a one-line description)."""
    kind, radius, sp, bx, conn, fp = _element(structure, ndim, ball, diamond, box, connectivity,
                                              spacing)
    return _voxa.op_describe("dilate", np.zeros((1,) * ndim, np.bool_),
                             **_element_args(kind, radius, sp, bx, conn, fp),
                             iterations=int(iterations))


def _edt_c(input, sampling=None, return_distances=True, return_indices=False,
           distances=None, indices=None, *, squared=False, dtype=np.float64):
    """scipy.ndimage.distance_transform_edt, exact separable algorithm.
    Extras: squared=True gives squared distances; dtype float32 halves the
    output. Where several background voxels are equally near, the returned
    index is scipy's."""
    if not return_distances and not return_indices:
        raise RuntimeError("at least one of return_distances/return_indices must be True")
    a = _as_input(input)
    sp = _spacing(sampling, a.ndim, "sampling", any_sign=True)
    if sp is not None and np.any(sp <= 0) and not return_indices:
        # only the feature transform takes such a sampling (as scipy does)
        r = _edt_c(a, sp, True, True, distances, None, squared=squared, dtype=dtype)
        return None if distances is not None else r[0]
    dtype = np.dtype(dtype)  # checked by distance.edt_dtype where distances are returned
    dist_out = ind_out = None
    if return_distances:
        if distances is not None:
            if not isinstance(distances, np.ndarray) or distances.shape != a.shape:
                raise RuntimeError("distances array has wrong shape")
            dist_out = distances
        else:
            dist_out = np.empty(a.shape, dtype=dtype)
    if return_indices:
        if indices is not None:
            if not isinstance(indices, np.ndarray) or indices.shape != (a.ndim,) + a.shape:
                raise RuntimeError("indices array has wrong shape")
            ind_out = indices
        else:
            ind_out = np.empty((a.ndim,) + a.shape, dtype=np.int32)
    if a.size:  # distances not asked for: float32 scratch
        _voxa.run_op("edt", a, np.empty(a.shape, np.float32) if dist_out is None else dist_out,
                     spacing=sp, squared=bool(squared), indices=ind_out)
    res = []
    if return_distances and distances is None:
        res.append(dist_out)
    if return_indices and indices is None:
        res.append(ind_out)
    if not res:
        return None
    return res[0] if len(res) == 1 else tuple(res)


_METRICS = {"chessboard": 2, "taxicab": 1, "cityblock": 1, "manhattan": 1}


def _cdt_c(input, metric="chessboard", return_distances=True,
           return_indices=False, distances=None, indices=None):
    """scipy.ndimage.distance_transform_cdt for metric 'chessboard' or
    'taxicab' ('cityblock', 'manhattan'): int32 distances, exact; -1 where
    there is no background at all."""
    a = _as_input(input)
    if isinstance(metric, str):
        m = _METRICS.get(metric.lower())
        if m is None:
            raise ValueError(f"invalid metric {metric!r}: expected 'chessboard' or 'taxicab'")
    else:
        s = np.asarray(metric).astype(bool)
        cross = np.abs(np.indices((3,) * a.ndim) - 1).sum(0) <= 1
        if s.shape == (3,) * a.ndim and np.array_equal(s, cross):
            m = 1
        elif s.shape == (3,) * a.ndim and s.all():
            m = 2
        else:
            raise NotImplementedError("voxa: cdt supports the taxicab and chessboard metrics")
    if return_indices:
        raise NotImplementedError("voxa: distance_transform_cdt(return_indices=True)")
    if not return_distances:
        raise RuntimeError("at least one of return_distances/return_indices must be True")
    out = distances if distances is not None else np.empty(a.shape, dtype=np.int32)
    if out.shape != a.shape or out.dtype != np.int32:
        raise RuntimeError("distances array must be int32 with the input's shape")
    if a.size:
        _voxa.run_op("edt", a, out, metric=("cityblock", "chessboard")[m - 1])
    return None if distances is not None else out


def distance_transform_edt(input, sampling=None, return_distances=True, return_indices=False,
                           distances=None, indices=None, *, squared=False, dtype=np.float64):
    """scipy.ndimage.distance_transform_edt, exact (see voxa.distance)."""
    from .distance import edt
    return edt(input, sampling, return_distances, return_indices, distances, indices,
               squared, dtype)


def distance_transform_cdt(input, metric="chessboard", return_distances=True,
                           return_indices=False, distances=None, indices=None):
    """scipy.ndimage.distance_transform_cdt, exact (see voxa.distance)."""
    from .distance import cdt
    return cdt(input, metric, return_distances, return_indices, distances, indices)
