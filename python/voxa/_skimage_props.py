"""regionprops_table's properties that voxa does not compute itself
(perimeter_crofton, moments, solidity, convex hulls, ...): scikit-image
computes them, one call for all of them, so their values are scikit-image's.

scikit-image is optional for voxa: asking for such a property without it
installed is a ValueError that says so. Cost: scikit-image's own (one Python
call per object and property), on top of voxa's C pass for the others."""
import numpy as np


class PropertyError(AttributeError, ValueError):
    """An unknown property, or one that needs an intensity image
    (scikit-image raises AttributeError, voxa raises ValueError)."""


def _regionprops():
    try:
        from skimage.measure import _regionprops
    except ImportError:
        return None
    return _regionprops


def knows(name):
    """Whether scikit-image has a property of that name (False without it)."""
    rp = _regionprops()
    return rp is not None and (hasattr(rp.RegionProperties, name) or name in rp.PROPS
                               or name in ("label", "slice"))


def require(names, native):
    """ValueError unless scikit-image is there to compute `names`."""
    if names and _regionprops() is None:
        raise PropertyError("properties: %s need scikit-image (pip install scikit-image); "
                            "voxa computes %s itself"
                            % (", ".join(repr(n) for n in names), ", ".join(native)))


def columns(labels, intensity, names, separator, spacing, cache):
    """{name: {column: array}} for each property in `names`, as
    skimage.measure.regionprops_table makes them, split back by property."""
    names = list(dict.fromkeys(names))
    try:
        table = _table(labels, intensity, names, separator, spacing, cache)
    except AttributeError as e:
        raise PropertyError("properties: %s" % e) from e
    keys, out = list(table), {}
    for name in names:  # skimage keeps the order asked for: take each name's run of keys
        cols = {}
        while keys and belongs(keys[0], name, separator):
            k = keys.pop(0)
            cols[k] = np.asarray(table[k])
        out[name] = cols
    return out


def _table(labels, intensity, names, separator, spacing, cache):
    """skimage's table from its `regionprops` and its column builder, not
    from its `regionprops_table`: a caller may have replaced that one with
    voxa's (to run scikit-image's tests on voxa), which would call back here."""
    from skimage.measure import regionprops
    rp = _regionprops()
    to_dict = getattr(rp, "_props_to_dict", None)
    if to_dict is None:  # a scikit-image without the builder: its public call
        return rp.regionprops_table(labels, intensity, names, cache=cache, separator=separator,
                                    spacing=spacing)
    regions = regionprops(labels, intensity, cache=cache, spacing=spacing)
    if regions:
        return to_dict(regions, properties=names, separator=separator)
    # no objects: the columns of one probe object, without rows (skimage's rule)
    nd = labels.ndim
    probe = np.zeros((3,) * nd, np.int64)
    probe[(1,) * nd] = 1
    inten = None if intensity is None else \
        np.zeros(probe.shape + intensity.shape[nd:], intensity.dtype)
    regions = regionprops(probe, inten, cache=cache, spacing=spacing)
    return {k: v[:0] for k, v in to_dict(regions, properties=names, separator=separator).items()}


def belongs(key, name, separator):
    """`key` is `name` or `name<sep>i<sep>j...` (integers only after it)."""
    if key == name:
        return True
    rest = key[len(name):]
    if not key.startswith(name) or not rest.startswith(separator):
        return False
    if not separator:
        return rest.isdigit()
    return all(part.isdigit() for part in rest[len(separator):].split(separator))
