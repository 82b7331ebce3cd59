"""Richardson–Lucy deconvolution and PSF helpers (FFTW; float32, or double
for a float64 output).

``richardson_lucy(image, psf, num_iter=20, boundary='free')`` has three
boundary modes:

- ``'free'`` (default): wrap-free (Bertero & Boccacci). The object may extend
  beyond the image by the PSF extent; updates are normalised by the PSF mass
  that reaches the image, so bright objects at one edge neither wrap to the
  opposite edge nor get darkened. Right for real microscopy data.
- ``'periodic'``: the published FFT formula (circular convolution, start
  from the image), with the PSF centred exactly at ``psf.shape // 2``.
  Use it when the sample really is periodic, or to compare with that code.
- ``'zero'``: scikit-image's ``restoration.richardson_lucy`` (zero outside
  the image, flat 0.5 start, ``filter_epsilon``; pass ``clip=True`` for its
  default clipping to [-1, 1]).
"""
import operator
import os

import numpy as np

from . import _voxa
from ._arrays import native

_BOUNDARIES = ("free", "periodic", "zero")


def _real_array(a, name):
    a = np.asarray(a)
    if a.dtype == np.bool_:
        a = a.view(np.uint8)
    if a.dtype.kind not in "uif":
        raise TypeError(f"{name}: dtype {a.dtype} not supported (integers or floats)")
    if a.dtype.kind == "f" and a.dtype.itemsize not in (4, 8):
        a = a.astype(np.float32)
    return native(a)


def richardson_lucy(image, psf, num_iter=20, boundary="free", clip=False,
                    filter_epsilon=None, accelerate=False, out=None, dtype=np.float32,
                    progress=None, planning="auto"):
    """Richardson–Lucy deconvolution of a 1-3D image.

    Parameters
    ----------
    image : ndarray, 1-3D, integer or float, finite (any strides)
    psf : ndarray, same ndim, no larger than the image on any axis (any
        extent with boundary='zero', as scikit-image: on the CPU), finite,
        non-negative, positive sum; centre at ``psf.shape // 2``. Not
        normalised for you (use ``psf / psf.sum()``).
    num_iter : int >= 1
    boundary : 'free' (default), 'periodic' or 'zero' (see the module doc).
    clip : bool, clip the result to [-1, 1] (scikit-image's default is True).
    filter_epsilon : float or None, zero mode: where the blurred estimate is
        below it the ratio is 0 (scikit-image's meaning). None or 0: off.
    accelerate : bool, Biggs–Andrews extrapolation, taken as a geometric step
        x (x / x_prev)^alpha (about 3x fewer iterations to the same error;
        two extra FFT-box-sized buffers; docs/deconv.md). While it runs, a
        float32 ``out`` holds the next iteration's extrapolated start, not
        an RL estimate; the result is the last RL estimate.
    out : optional float32/float64 array of the image's shape to write into.
    dtype : float32 (default) or float64 for the allocated output. The work
        is in the output's precision: float64 computes in double (CPU only;
        1.1-2.8x float32's time, about 2x its memory, without its staged
        3-D transform) and then equals float64 code such as scikit-image's to
        double round-off, also where float32 round-off is amplified (the
        blurred estimate near 0 on data with negative values: scikit-image's
        camera test fails in float32, 203 pixels beyond rtol 1e-3).
    progress : optional callable(done, total) -> bool; returning False (or
        raising) cancels. Ctrl-C also cancels.
    planning : 'auto' (default), 'estimate' or 'measure': how FFTW picks its
        algorithms. 'auto' measures the small per-plane plans (and z-tile
        plans where the z stage uses FFTs) of 3-D free/periodic runs (0.2-0.5
        s more the first time a size is seen in a process, then wisdom and
        the per-user cache; up to 3x faster transforms there, up to
        1.6x faster iterations) and the plans of 1-D and 2-D images up to
        2^24 pixels (0.6-4.5 s the first time, 512^2 to 4096^2; 1.2-3.5x
        faster iterations), and estimates the rest; 'estimate' plans
        instantly, the same plans in every process unless measured wisdom
        was cached or loaded; 'measure' times every transform (seconds to
        minutes for a 3-D box). Plans measured in different processes may
        differ (FFTW times its candidates), and measured wisdom also steers
        later estimated plans of related sizes in the process, so with
        'auto' or 'measure' results can differ at float32 round-off between
        processes and with what ran before; use 'estimate' where runs must
        agree bit for bit. Measured plans can be kept across processes with
        save_wisdom / load_wisdom and the per-user cache (docs/deconv.md).

    Returns
    -------
    ndarray of the image's shape (``out`` if given).
    """
    image = _real_array(image, "image")
    psf = _real_array(psf, "psf")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"boundary: unknown mode {boundary!r} "
                         f"(expected one of {', '.join(_BOUNDARIES)})")
    try:
        num_iter = operator.index(num_iter)
    except TypeError:
        raise TypeError(f"num_iter: expected an integer, got {num_iter!r}") from None
    if num_iter < 1:
        raise ValueError(f"num_iter: {num_iter} (must be >= 1)")
    if image.ndim != psf.ndim:
        raise ValueError(f"psf: ndim {psf.ndim} does not match the image's ndim {image.ndim}")
    fe = 0.0 if filter_epsilon is None else float(filter_epsilon)
    if not np.isfinite(fe) or fe < 0:
        raise ValueError(f"filter_epsilon: {filter_epsilon} (must be finite and >= 0)")
    if planning not in ("auto", "estimate", "measure"):
        raise ValueError(f"planning: {planning!r} (expected 'auto', 'estimate' or 'measure')")
    if out is None:
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise TypeError(f"dtype: {dtype} (float32 or float64)")
        out = np.empty(image.shape, dtype=dtype)
    elif out.shape != image.shape:
        raise ValueError(f"out: shape {out.shape} differs from the image's {image.shape}")
    if np.may_share_memory(out, image):
        raise ValueError("out: must not overlap the image")
    if not 1 <= image.ndim <= 3:
        raise ValueError(f"image: ndim {image.ndim} not supported (1, 2 or 3)")
    _voxa.run_op("deconvolve", image, out, psf=psf, boundary=boundary, iterations=num_iter,
                 clip=bool(clip), filter_epsilon=fe, accelerate=bool(accelerate),
                 progress=progress, planning=planning)
    return out


def load_wisdom(path):
    """Merge FFTW wisdom saved by save_wisdom (or ``voxa deconvolve --wisdom``):
    later calls of known sizes plan in milliseconds."""
    _voxa.deconv_wisdom(os.fspath(path))


def save_wisdom(path):
    """Save this process's FFTW wisdom (atomically)."""
    _voxa.deconv_wisdom(os.fspath(path), save=True)


def gaussian_psf(shape, sigma, dtype=np.float32):
    """Gaussian PSF of the given shape, centred at ``shape // 2`` on every
    axis, normalised to sum 1. ``sigma`` is one value or one per axis (>= 0;
    0 makes that axis a delta)."""
    shape = tuple(operator.index(s) for s in np.atleast_1d(shape))
    if not shape or any(s < 1 for s in shape):
        raise ValueError(f"shape: {shape} (every extent must be >= 1)")
    sig = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (len(shape),)).copy()
    out = np.empty(shape, dtype=np.dtype(dtype))
    _voxa.psf_gaussian(out, sig)
    return out


__all__ = ["richardson_lucy", "gaussian_psf", "load_wisdom", "save_wisdom"]
