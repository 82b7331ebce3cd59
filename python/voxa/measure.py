"""Measurements on labelled images: connected-component labelling, object tables.

`label` is a drop-in for scipy.ndimage.label: same arguments, same labels
(numbered in raster order of each component's first voxel), same count, the
same return convention (``(labels, n)``, or only ``n`` when `output` is an
array that receives the labels). The work is done by the C library with the
GIL released, on `voxa.get_threads()` threads; results never depend on the
thread count.

`regionprops` and `regionprops_table` (scikit-image's, in
voxa._regionprops_objects and voxa._regionprops_table) are here too, as in
skimage.measure; both are also ``voxa.regionprops`` / ``voxa.regionprops_table``."""
import operator

import numpy as np

from . import _ndsupport as nds
from . import _voxa, _wrap
from ._regionprops_objects import RegionProperties, regionprops  # noqa: F401 (re-exported)
from ._regionprops_table import regionprops_table  # noqa: F401 (re-exported)

# Output dtypes the C library writes (integers of every width).
_OUT_DTYPES = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                      np.uint32, np.int64, np.uint64)}
# Input dtypes read directly (native byte order); others are compared with 0 first.
_IN_KINDS = {np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                   np.int32, np.uint32, np.int64, np.uint64,
                                   np.float32, np.float64)}


def label(input, structure=None, output=None, *, connectivity=1, wrap_axes=None):
    """Label the connected components of the non-zero voxels of `input`.

    Parameters
    ----------
    input : array_like, any real dtype, any strides, 0 to 8 dimensions.
        Non-zero (including NaN) is foreground.
    structure : array_like of shape (3,) * input.ndim, optional
        Which neighbours are connected (non-zero = connected), as an array or
        nested lists. It must be centrosymmetric; its centre is ignored.
        Default: ``scipy.ndimage.generate_binary_structure(input.ndim, 1)``.
    output : dtype or ndarray, optional
        dtype of the labels (default int32, int64 for 2**31 - 2 voxels or
        more): any integer, float32, float64 or bool (as scipy); or an array
        of input's shape and such a dtype (any strides; the input itself for
        in-place labelling) to write them into.
    connectivity : int, 1..input.ndim, keyword only
        Used when `structure` is None: neighbours whose offsets have at most
        `connectivity` non-zero components (1 = faces, ndim = full box).
        A voxa extension (scipy has only `structure`).
    wrap_axes : int or sequence of ints, keyword only
        Axes along which the volume wraps around (its last layer touches its
        first, by the structure; dask-image's keyword): components joined
        across the ends, still numbered in raster order of their first
        voxels (voxa._wrap). Default: none, as scipy.

    Returns
    -------
    (labels, n), or n only when `output` is an array (as scipy does).

    Raises
    ------
    As scipy: RuntimeError for a structure of another rank or labels that
    do not fit the output dtype (both also ValueError, voxa's earlier type);
    ValueError for a structure not of size 3 per axis, a wrong output shape
    or a big-endian output; AssertionError (also ValueError) for a structure
    that is not centrosymmetric; TypeError for complex input or an output
    dtype scipy has no kernel for (float16, complex, object).
    """
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("label: complex input is not supported (Complex type not supported)")
    if a.dtype not in _IN_KINDS or not a.dtype.isnative:
        a = a != 0  # float16, big-endian, object...: same foreground
    ndim = a.ndim

    st = None
    if structure is not None:
        st = label_structure(structure, ndim)
    elif not isinstance(connectivity, (int, np.integer)) or isinstance(connectivity, bool):
        raise TypeError(f"label: connectivity must be an integer, got {connectivity!r}")
    wrap = _wrap.check_axes(wrap_axes, ndim)

    return_n_only = isinstance(output, np.ndarray)
    if return_n_only:
        out = output
        if out.shape != a.shape:
            raise ValueError(f"label: output has shape {out.shape}, expected the input's "
                             f"shape {a.shape} (output shape not correct)")
    else:
        dt = np.dtype((np.int64 if a.size >= 2**31 - 2 else np.int32) if output is None
                      else output)
        out = np.zeros(a.shape, dtype=dt)  # calloc: the C side writes only the labels
    if not out.dtype.isnative:
        raise ValueError(f"label: output dtype {out.dtype} is big-endian (not supported, as "
                         "in scipy)")
    tmp = np.dtype(np.int32 if a.size < 2**31 - 2 else np.int64)
    if out.dtype not in _OUT_DTYPES:
        if out.dtype not in (np.float32, np.float64, np.bool_):
            raise TypeError(f"label: unsupported output dtype {out.dtype} (expected an integer "
                            "dtype, float32, float64 or bool)")
        n = _label_c(a, np.zeros(a.shape, dtype=tmp), st, connectivity, out, True, wrap)
    elif wrap and out.dtype.itemsize < tmp.itemsize:
        # the count that must fit is the joined one (as voxa.dask checks it):
        # the plain labels go to a wide array first
        n = _label_c(a, np.zeros(a.shape, dtype=tmp), st, connectivity, out, True, wrap)
    else:
        n = _label_c(a, out, st, connectivity, None, not return_n_only, wrap)
    return n if return_n_only else (out, n)


def label_structure(structure, ndim):
    """A label structure as the C kernel takes it (C-contiguous uint8 0/1),
    with scipy's checks and exception types (each also a ValueError): rank,
    3 per axis, centrosymmetric. voxa.dask.label checks with it too."""
    s = np.asarray(structure)
    if s.ndim != ndim:
        raise nds.RankError(f"label: structure has {s.ndim} dimensions, input has {ndim} "
                            "(structure and input must have equal rank)")
    if any(n != 3 for n in s.shape):
        raise ValueError(f"label: structure has shape {s.shape}, expected {(3,) * ndim} "
                         "(structure dimensions must be equal to 3)")
    st = np.ascontiguousarray(s != 0, dtype=np.uint8)
    if not np.array_equal(st, st[(slice(None, None, -1),) * ndim]):
        raise nds.SymmetryError("label: structure is not centrosymmetric, as "
                                "scipy.ndimage.label requires")
    return st


def _label_c(a, out, st, connectivity, cast_to, zeroed=False, wrap=()):
    """The C labelling into the integer array `out`, its components joined
    across the ends of the `wrap` axes; copied into `cast_to` (a float or
    bool array, or with `wrap` an integer one narrower than `out`, checked
    to hold the joined count) when given. zeroed: `out` is a fresh np.zeros array, so the
    C side skips writing the background."""
    ndim = a.ndim
    if a.size == 0:
        return 0
    if ndim == 0:  # one voxel: treat as (1,); the structure does not matter
        c_in, c_out, c_st, c_conn = a.reshape(1), out.reshape(1), None, 1
    else:
        c_in, c_out, c_st, c_conn = a, out, st, int(connectivity)
        if st is None and not 1 <= c_conn <= ndim:
            raise ValueError(f"label: connectivity {c_conn} out of range 1..{ndim} for "
                             f"{ndim}-D input")
    try:
        n = _voxa.run_op("label", c_in, c_out, structure=c_st,
                         connectivity=None if c_st is not None else c_conn,
                         **({"zeroed": True} if zeroed else {}))
    except ValueError as e:
        if "do not fit" in str(e):
            raise nds.BitDepthError(f"{e} (insufficient bit-depth in requested output "
                                    "type)") from None
        raise
    if wrap and n:
        if st is None:
            from scipy.ndimage import generate_binary_structure
            st = generate_binary_structure(ndim, int(connectivity))
        layers = [np.take(out, side, axis=ax) for ax, side in _wrap.ends(wrap)]
        new, n = _wrap.table(n, _wrap.pairs_at_ends(out.shape, st, wrap, *layers))
        _wrap.relabel(out, new, out=out)
        if cast_to is not None and cast_to.dtype.kind in "iu" and n > np.iinfo(cast_to.dtype).max:
            raise nds.BitDepthError(f"label: {n} components do not fit the output dtype "
                                    f"{cast_to.dtype} (max {np.iinfo(cast_to.dtype).max}); use "
                                    "a wider dtype such as int32 or int64 (insufficient "
                                    "bit-depth in requested output type)")
    if cast_to is not None:
        cast_to[...] = out
    return n


def find_objects(input, max_label=0):
    """scipy.ndimage.find_objects: for labels 1..max_label (default: the
    largest label), the tuple of slices of the smallest box holding that
    label, or None where the label is absent. Labels <= 0 are ignored.

    As scipy: `max_label` must be an integer (TypeError); integer labels of
    any width; with `max_label` given, also bool and float32/float64 labels,
    read as scipy's C reads them, truncated toward zero (2.9 is label 2; NaN
    and infinities are no label); without it, those raise TypeError (scipy
    cannot take their maximum as a label count). Complex input: TypeError;
    other dtypes (float16, object, strings): DtypeError (TypeError and
    RuntimeError, scipy's "data type not supported").

    A NumPy composition (one sort of the labelled voxels' positions, then a
    min/max per label and axis): O(F log F) for F labelled voxels."""
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("find_objects: complex input is not supported (as scipy)")
    max_label = operator.index(max_label)
    if a.dtype.kind not in "iubf" or a.dtype == np.float16:
        raise nds.DtypeError(f"find_objects: labels of dtype {a.dtype} are not supported "
                             "(integers; bool, float32 or float64 with max_label)")
    if max_label < 1:
        if a.dtype.kind not in "iu":
            raise TypeError(f"find_objects: labels of dtype {a.dtype} need max_label (as "
                            "scipy: their maximum is not an integer)")
        if a.size == 0:
            raise ValueError("find_objects: input is empty and max_label is not given "
                             "(zero-size array to reduction operation maximum)")
        max_label = int(a.max())
    res = [None] * max(max_label, 0)
    if max_label < 1:
        return res
    # labels are the values in [1, max_label + 1), cast toward zero as scipy's
    # C casts bool and float labels (NaN and infinities name none); only the
    # selected voxels are converted
    if a.ndim == 0:
        if 1 <= a.item() < max_label + 1:
            res[int(a.item()) - 1] = ()
        return res
    flat = a.ravel()
    if a.dtype.kind in "iu":
        pos = np.flatnonzero((flat > 0) & (flat <= max_label))
    else:
        pos = np.flatnonzero((flat >= 1) & (flat < max_label + 1))
    if pos.size == 0:
        return res
    labs = flat[pos].astype(np.int64, copy=False)
    order = np.argsort(labs, kind="stable")
    labs, pos = labs[order], pos[order]
    starts = np.flatnonzero(np.r_[True, labs[1:] != labs[:-1]])
    coords = np.unravel_index(pos, a.shape)
    lo = [np.minimum.reduceat(c, starts) for c in coords]
    hi = [np.maximum.reduceat(c, starts) for c in coords]
    for j, lab in enumerate(labs[starts].tolist()):
        res[lab - 1] = tuple(slice(int(l[j]), int(h[j]) + 1) for l, h in zip(lo, hi))
    return res
