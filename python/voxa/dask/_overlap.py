"""Chunks grown by a halo: the one map_overlap call of voxa.dask's local ops."""
import dask.array as da
import numpy as np


def overlap(fn, arrays, depth, dtype, name):
    """fn(*blocks) per chunk of `arrays` (one shape), each block grown by
    depth[d] voxels along axis d except at the volume's edge (boundary
    'none': the op's own border rule acts there). An axis the halo spans
    whole becomes one chunk with no overlap, which is what every chunk needs
    anyway (dask cannot grow a chunk past the array)."""
    shape = arrays[0].shape
    whole = {d: -1 for d, v in enumerate(depth) if v and v >= shape[d]}
    if whole:
        arrays = [a.rechunk(whole) for a in arrays]
    depth = {d: 0 if d in whole else int(v) for d, v in enumerate(depth)}
    return da.map_overlap(fn, *arrays, depth=depth, boundary="none", trim=True, dtype=dtype,
                          meta=np.empty((0,) * len(shape), dtype), allow_rechunk=True,
                          name=name)
