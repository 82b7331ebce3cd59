"""What the plugin's widgets compute, without napari: plain functions on
NumPy or Dask arrays, each taking an optional ``progress(done, total)``
callback that returns False to cancel (voxa then raises KeyboardInterrupt).

A Dask array in gives a Dask array out, built lazily with voxa.dask (nothing
is computed until napari draws a slice), except Otsu's value, which needs
the whole image's histogram: it is computed once, chunk by chunk
(voxa.dask.threshold_otsu), then the mask is lazy. NumPy arrays are computed at once, in C with the GIL
released, reporting progress."""
import numpy as np

import voxa


def is_dask(a):
    return type(a).__module__.split(".")[0] == "dask"


class Steps:
    """Progress over k consecutive steps: step(i) gives a callback mapping a
    step's (done, total) onto the whole run's 0..1000."""

    def __init__(self, progress, k):
        self.progress, self.k = progress, k

    def step(self, i):
        def cb(done, total):
            if self.progress is None:
                return True
            frac = (i + (done / total if total else 1.0)) / self.k
            return self.progress(int(frac * 1000), 1000) is not False
        return cb

    def check(self, i):
        """Between steps: report and honour a cancel."""
        if not self.step(i)(0, 1):
            raise KeyboardInterrupt("cancelled")


def deconvolve(image, sigma=2.0, psf_size=15, iterations=10, progress=None):
    """Richardson-Lucy (voxa.richardson_lucy, boundary 'free') with a
    Gaussian PSF of the given sigma (voxels) and size per axis."""
    ndim = np.ndim(image)
    psf = voxa.gaussian_psf((int(psf_size),) * ndim, (float(sigma),) * ndim)
    if is_dask(image):
        import voxa.dask as vd
        return vd.richardson_lucy(image.astype(np.float32), psf, num_iter=int(iterations))
    img = np.asarray(image, dtype=np.float32)
    return voxa.richardson_lucy(img, psf, num_iter=int(iterations), progress=progress)


def label_objects(image, threshold=0.0, open_radius=0, connectivity=1, method="value",
                  progress=None):
    """Threshold (method 'value': image > threshold; 'otsu': Otsu's value,
    as skimage), open with a ball of open_radius (0: no opening), label the
    components (voxa.label): int32 labels."""
    if method not in ("value", "otsu"):
        raise ValueError(f"method: {method!r} (expected 'value' or 'otsu')")
    steps = Steps(progress, 3)
    if is_dask(image):
        import voxa.dask as vd
        # Otsu's value once, chunk by chunk (a histogram per chunk, not the whole array)
        t = vd.threshold_otsu(image).compute()[()] if method == "otsu" else threshold
        mask = image.map_blocks(voxa.threshold, t, dtype=bool)
        if open_radius > 0:
            mask = vd.binary_opening(mask, voxa.ball(int(open_radius), ndim=mask.ndim))
        return vd.label(mask, connectivity=int(connectivity))[0]
    a = np.asarray(image)
    if method == "otsu":
        mask = voxa.threshold(a, method="otsu", progress=steps.step(0))
    else:
        mask = voxa.threshold(a, threshold, progress=steps.step(0))
    steps.check(1)
    if open_radius > 0:
        mask = voxa.binary_opening(mask, voxa.ball(int(open_radius), ndim=mask.ndim))
    steps.check(2)
    labels, _ = voxa.label(mask, connectivity=int(connectivity))
    steps.step(2)(1, 1)
    return labels


def morphology(mask, operation="open", radius=2, progress=None):
    """Binary dilate, erode, open or close (non-zero = foreground) with a ball:
    uint8 0/1."""
    ops = {"dilate": voxa.binary_dilation, "erode": voxa.binary_erosion,
           "open": voxa.binary_opening, "close": voxa.binary_closing}
    if operation not in ops:
        raise ValueError("operation: %r (one of %s)" % (operation, ", ".join(ops)))
    if is_dask(mask):
        import voxa.dask as vd
        f = getattr(vd, ops[operation].__name__)
        return f(mask != 0, voxa.ball(int(radius), ndim=mask.ndim)).astype(np.uint8)
    m = np.asarray(mask) != 0
    return ops[operation](m, voxa.ball(int(radius), ndim=m.ndim)).astype(np.uint8)


def balls(shape, points, radius=3.0, spacing=None, chunks=None, progress=None):
    """Labelled balls around points (voxa.balls owner map: the 1-based index
    of the nearest point within reach, ties to the lower index; int32).
    points: (N, ndim) voxel coordinates; radius in the units of spacing."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, len(shape))
    if chunks is not None:
        import voxa.dask as vd
        return vd.balls(tuple(shape), pts, float(radius), spacing=spacing, owner=True,
                        chunks=chunks)
    steps = Steps(progress, 1)
    steps.check(0)
    out = voxa.balls(tuple(shape), pts, float(radius), spacing=spacing, owner=True)
    steps.step(0)(1, 1)
    return out


def patches(image, points, size=16, mode="constant", progress=None):
    """Patches of size^ndim around each point (voxel coordinates, rounded),
    voxa.extract_patches(..., centered=True): (N, *size) array."""
    ndim = np.ndim(image)
    pts = np.rint(np.asarray(points, dtype=np.float64)).astype(np.int64).reshape(-1, ndim)
    sz = (int(size),) * ndim
    if is_dask(image):
        import voxa.dask as vd
        return vd.extract_patches(image, pts, sz, centered=True, mode=mode)
    steps = Steps(progress, 1)
    steps.check(0)
    out = voxa.extract_patches(np.asarray(image), pts, sz, centered=True, mode=mode)
    steps.step(0)(1, 1)
    return out


def measure(labels, image=None, properties="label,area,centroid", spacing=None, progress=None):
    """voxa.regionprops_table of a label image (and an intensity image, for
    the intensity properties), as a dict of columns; `properties` a string
    "a,b,c" or a sequence. Dask arrays are measured chunk by chunk
    (voxa.dask.regionprops_table, voxa's own properties) and computed here:
    a table is small."""
    if isinstance(properties, str):
        properties = [p.strip() for p in properties.split(",") if p.strip()]
    steps = Steps(progress, 1)
    steps.check(0)
    if is_dask(labels) or is_dask(image):
        import dask.array as da
        import voxa.dask as vd
        table = vd.regionprops_table(da.asarray(labels), None if image is None else
                                     da.asarray(image), properties, spacing=spacing).compute()
    else:
        table = voxa.regionprops_table(np.asarray(labels), None if image is None else
                                       np.asarray(image), properties, spacing=spacing)
    steps.step(0)(1, 1)
    return table
