"""regionprops_table's shape properties from second moments: inertia_tensor,
inertia_tensor_eigvals, axis_major_length, axis_minor_length, eccentricity
and orientation, by scikit-image's formulas (skimage.measure._regionprops,
_moments.inertia_tensor) on the C pass's central second moments.

The C pass keeps exact integer sums of coordinate products per label, so the
central moments are rounded once (scikit-image sums float products over each
object's box): the two agree to rounding. For an object symmetric about both
axes, voxa's tensor has a == c exactly, so orientation takes scikit-image's
tie rule (-pi/4 for b >= 0) where a rounding difference in scikit-image may
not. All objects at once: one eigvalsh over the stack of tensors (LAPACK per
matrix, as scikit-image calls it)."""
import math

import numpy as np

#: computed here; the 2-D-only and 2-/3-D-only ones (below) for other ranks
#: are left to scikit-image, which raises as it does
PROPERTIES = ("inertia_tensor", "inertia_tensor_eigvals", "axis_major_length",
              "axis_minor_length", "eccentricity", "orientation")
_RANKS = {"eccentricity": (2,), "orientation": (2,), "axis_major_length": (2, 3),
          "axis_minor_length": (2, 3)}


def computes(name, ndim):
    return name in PROPERTIES and ndim in _RANKS.get(name, (ndim,))


def tensors(cols, ndim, spacing):
    """(n, ndim, ndim) inertia tensors: T_ii = (sum_k mu_kk - mu_ii) / mu0,
    T_ij = -mu_ij / mu0, mu scaled by the spacing, mu0 the voxel count."""
    mu = cols["moments2"]
    if spacing is not None:
        mu = mu * np.multiply.outer(spacing, spacing)
    mu0 = cols["num_pixels"].astype(np.float64)[:, None, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = -mu / mu0
        diag = np.einsum("nii->ni", mu)
        trace = diag[:, 0].copy()
        for k in range(1, ndim):  # left to right, as np.sum of a few values
            trace = trace + diag[:, k]
        idx = np.arange(ndim)
        t[:, idx, idx] = (trace[:, None] - diag) / mu0[:, :, 0]
    return t


def columns(cols, ndim, spacing, wanted):
    """{property: array} for the shape properties in `wanted` (n rows;
    (n, ndim, ndim) for the tensor, (n, ndim) for its eigenvalues)."""
    wanted = [p for p in wanted if p in PROPERTIES]
    if not wanted:
        return {}
    t = tensors(cols, ndim, spacing)
    out = {"inertia_tensor": t}
    ev = np.linalg.eigvalsh(t) if len(t) else np.zeros((0, ndim))
    ev = np.clip(ev, 0, None)[:, ::-1]  # descending, no round-off below zero
    out["inertia_tensor_eigvals"] = np.ascontiguousarray(ev)
    if ndim == 2:
        out["axis_major_length"] = 4 * np.sqrt(ev[:, 0])
        out["axis_minor_length"] = 4 * np.sqrt(ev[:, -1])
        with np.errstate(invalid="ignore", divide="ignore"):
            ecc = np.sqrt(1 - ev[:, 1] / ev[:, 0])
        out["eccentricity"] = np.where(ev[:, 0] == 0, 0.0, ecc)
        out["orientation"] = np.array([_orientation(*m.ravel()) for m in t], np.float64)
    elif ndim == 3:
        out["axis_major_length"] = np.sqrt(np.maximum(0, 10 * (ev[:, 0] + ev[:, 1] - ev[:, 2])))
        out["axis_minor_length"] = np.sqrt(np.maximum(0, 10 * (-ev[:, 0] + ev[:, 1] + ev[:, 2])))
    return {p: out[p] for p in wanted}


def _orientation(a, b, _, c):
    if a - c == 0:
        return math.pi / 4 if b < 0 else -math.pi / 4
    return 0.5 * math.atan2(-2 * b, c - a)
