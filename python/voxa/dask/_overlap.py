"""Chunks grown by a halo: the one map_overlap call of voxa.dask's local ops."""
import dask.array as da
import numpy as np


def overlap(fn, arrays, depth, dtype, name):
    """fn(*blocks) per chunk of `arrays` (one shape), each block grown by
    depth[d] voxels along axis d except at the volume's edge (boundary
    'none': the op's own border rule acts there). An axis the halo spans
    whole becomes one chunk with no overlap, which is what every chunk needs
    anyway (dask cannot grow a chunk past the array); dask merges chunks
    thinner than the halo. Either way the result gets the input's chunks
    back: callers line it up with other arrays and write it chunk for chunk
    (to_zarr refuses the irregular chunks a merge leaves), as dask-image's
    ops keep them."""
    shape, chunks = arrays[0].shape, arrays[0].chunks
    whole = {d: -1 for d, v in enumerate(depth) if v and v >= shape[d]}
    if whole:
        arrays = [a.rechunk(whole) for a in arrays]
    depth = {d: 0 if d in whole else int(v) for d, v in enumerate(depth)}
    out = da.map_overlap(fn, *arrays, depth=depth, boundary="none", trim=True, dtype=dtype,
                         meta=np.empty((0,) * len(shape), dtype), allow_rechunk=True,
                         name=name)
    return out if out.chunks == chunks else out.rechunk(chunks)
