"""Measurements on labelled images: connected-component labelling.

`label` is a drop-in for scipy.ndimage.label: same arguments, same labels
(numbered in raster order of each component's first voxel), same count, the
same return convention (``(labels, n)``, or only ``n`` when `output` is an
array that receives the labels). The work is done by the C library with the
GIL released, on `voxa.get_threads()` threads; results never depend on the
thread count."""
import numpy as np

from . import _voxa

# Output dtypes the C library writes (integers of every width).
_OUT_DTYPES = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                      np.uint32, np.int64, np.uint64)}
# Input dtypes read directly (native byte order); others are compared with 0 first.
_IN_KINDS = {np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16,
                                   np.int32, np.uint32, np.int64, np.uint64,
                                   np.float32, np.float64)}


def label(input, structure=None, connectivity=1, output=None):
    """Label the connected components of the non-zero voxels of `input`.

    Parameters
    ----------
    input : array_like, any real dtype, any strides, 0 to 8 dimensions.
        Non-zero (including NaN) is foreground.
    structure : array_like of shape (3,) * input.ndim, optional
        Which neighbours are connected (non-zero = connected). It must be
        centrosymmetric; its centre is ignored. Default:
        ``scipy.ndimage.generate_binary_structure(input.ndim, connectivity)``.
    connectivity : int, 1..input.ndim
        Used when `structure` is None: neighbours whose offsets have at most
        `connectivity` non-zero components (1 = faces, ndim = full box).
        This argument is a voxa extension (scipy has only `structure`).
    output : dtype or ndarray, optional
        Integer dtype of the labels (default int32), or an integer array of
        input's shape (any strides) to write them into.

    Returns
    -------
    (labels, n), or n only when `output` is an array (as scipy does).

    Raises
    ------
    ValueError for a wrong structure, connectivity, output shape or dtype,
    or a component count that does not fit the output dtype; TypeError for
    complex input.
    """
    a = np.asarray(input)
    if np.iscomplexobj(a):
        raise TypeError("label: complex input is not supported")
    if a.dtype not in _IN_KINDS or not a.dtype.isnative:
        a = a != 0  # float16, big-endian, object...: same foreground
    ndim = a.ndim

    st = None
    if structure is not None:
        s = np.asarray(structure)
        if s.ndim != ndim:
            raise ValueError(f"label: structure has {s.ndim} dimensions, input has {ndim} "
                             "(they must have equal rank)")
        if any(n != 3 for n in s.shape):
            raise ValueError(f"label: structure has shape {s.shape}, expected {(3,) * ndim}")
        st = np.ascontiguousarray(s != 0, dtype=np.uint8)
    elif not isinstance(connectivity, (int, np.integer)) or isinstance(connectivity, bool):
        raise TypeError(f"label: connectivity must be an integer, got {connectivity!r}")

    return_n_only = isinstance(output, np.ndarray)
    if return_n_only:
        out = output
        if out.shape != a.shape:
            raise ValueError(f"label: output has shape {out.shape}, expected the input's "
                             f"shape {a.shape}")
    else:
        dt = np.dtype(np.int32 if output is None else output)
        out = np.empty(a.shape, dtype=dt)
    if out.dtype not in _OUT_DTYPES or not out.dtype.isnative:
        raise ValueError(f"label: unsupported output dtype {out.dtype} (expected an integer "
                         "dtype such as int32, uint16, uint32 or int64)")

    if ndim == 0:
        # one voxel: treat as (1,); the structure does not matter
        c_in, c_out, c_st, c_conn = a.reshape(1), out.reshape(1), None, 1
    else:
        c_in, c_out, c_st, c_conn = a, out, st, int(connectivity)
        if st is None and not 1 <= c_conn <= ndim:
            raise ValueError(f"label: connectivity {c_conn} out of range 1..{ndim} for "
                             f"{ndim}-D input")
    n = _voxa.run_op("label", c_in, c_out, structure=c_st,
                     connectivity=None if c_st is not None else c_conn)
    if return_n_only:
        return n
    return out, n
