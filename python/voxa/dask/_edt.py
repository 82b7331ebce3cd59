"""voxa.dask.distance_transform_edt without max_distance: exact by chunks,
no task holding the volume.

The squared distance is separable along axis 0 (include/voxa/edt.h,
src/ops/distance/edt_passes.c): with g2(q, .) the squared distance of slice
q alone to its own background, D2(z, .) = min_q g2(q, .) + (s_0 (z - q))^2.
1. ``voxa-edt-slices``: the input rechunked into slabs of whole slices (axis 0
   cut, every other axis whole), each through pass 1 (g2: uint32 with unit
   spacing, exact integers, else float64);
2. g2 rechunked into pencils holding axis 0 whole, each through pass 2
   (``voxa-edt-columns``), given whether the volume has any background (a
   reduction over the input's chunks: without any, scipy measures from index
   (-1, 0, ..., 0));
3. the result back in the input's chunks.
Equal to voxa.distance_transform_edt on the whole array bit for bit (the
same core, passes and arithmetic). Memory: a slab task holds its slab
(input + G bytes a voxel, G = 4 for uint32 g2, 8 for float64), a pencil task
its pencil (G + output bytes); between the passes g2, G bytes a voxel of the
volume, lives in the workers' memory, spread over them, as any rechunk's
data does."""
import numpy as np

import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _voxa


def _slab(block, sp, gdt):
    g = np.empty(block.shape, gdt)
    _voxa.edt_slices(np.asarray(block), sp, g)
    return g


def _g_dtype(shape, sp):
    """The slice values' dtype: uint32 (exact integers, half the bytes) with
    unit spacing where a slice's squared distances stay below 2^32 - 1, else
    float64 (as the chunk executor chooses, src/stream/run_edt.c)."""
    small = sum((n + 1) ** 2 for n in shape[1:]) < 2**32 - 1
    return np.dtype(np.uint32 if sp is None and small else np.float64)


def _columns(g, has_bg, origin, sp, squared, dtype):
    out = np.empty(g.shape, dtype)
    _voxa.edt_columns(np.ascontiguousarray(g), origin, bool(has_bg), sp, squared, out)
    return out


def _fit(sizes, whole, target):
    """Chunk sizes for axes 1.. (from `sizes`), halved, largest first, until a
    block holding `whole` voxels along axis 0 has about `target` voxels."""
    sizes = list(sizes)
    while whole * int(np.prod(sizes)) > target and max(sizes) > 1:
        d = int(np.argmax(sizes))
        sizes[d] = (sizes[d] + 1) // 2
    return sizes


def exact(x, sp, squared, dtype):
    """The distances of dask array x (ndim >= 2, several chunks); sp: None or
    ndim spacings > 0; dtype float64, float32 or uint32 (checked)."""
    nd, shape = x.ndim, x.shape
    target = max(int(np.prod([max(c) for c in x.chunks])), 1)
    slice_voxels = int(np.prod(shape[1:]))
    slabs = x.rechunk((max(1, target // max(slice_voxels, 1)),) + tuple(shape[1:]))
    tok = tokenize(x, sp, squared, dtype)
    gdt = _g_dtype(shape, sp)
    g = slabs.map_blocks(_slab, sp, gdt, dtype=gdt, name="voxa-edt-slices-" + tok,
                         meta=np.empty((0,) * nd, gdt))
    pencils = g.rechunk((shape[0],) + tuple(_fit([max(c) for c in x.chunks[1:]], shape[0],
                                                 target)))
    has_bg = (x == 0).any()
    begin = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(int) for c in pencils.chunks]
    name = "voxa-edt-columns-" + tok
    graph = {}
    for idx in np.ndindex(*pencils.numblocks):
        origin = [int(begin[d][idx[d]]) for d in range(nd)]
        graph[(name,) + idx] = (_columns, (pencils.name,) + idx, (has_bg.name,), origin, sp,
                                squared, dtype)
    hlg = HighLevelGraph.from_collections(name, graph, dependencies=[pencils, has_bg])
    out = da.Array(hlg, name, chunks=pencils.chunks, dtype=dtype,
                   meta=np.empty((0,) * nd, dtype))
    return out.rechunk(x.chunks)
