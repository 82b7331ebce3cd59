"""voxa.dask's distance transforms without a distance bound, exact by
chunks, no task holding the volume: distance_transform_edt (no
max_distance) and distance_transform_cdt (taxicab, chessboard).

Each metric is separable along axis 0 (include/voxa/edt.h,
src/ops/distance/edt_passes.c): with g(q, .) the transform of slice q alone,
    Euclidean   D2(z, .) = min_q g2(q, .) + (s_0 (z - q))^2
    taxicab     D(z, .)  = min_q g(q, .) + |z - q|
    chessboard  D(z, .)  = min_q max(g(q, .), |z - q|).
1. ``voxa-<op>-slices``: the input rechunked into slabs of whole slices (axis
   0 cut, every other axis whole), each through pass 1 (Euclidean: g2 as
   uint32 with unit spacing, exact integers, else float64; cdt: int32);
2. g rechunked into pencils holding axis 0 whole, each through pass 2
   (``voxa-<op>-columns``); the Euclidean pass is given whether the volume has
   any background, as the slab pass found it (without any, scipy measures
   from index (-1, 0, ..., 0));
3. the result back in the input's chunks.
Equal to the in-memory functions bit for bit (the same cores, passes and
arithmetic). Memory: a slab task holds its slab (input + G bytes a voxel,
G = 4 for uint32 or int32 g, 8 for float64), a pencil task its pencil (G +
output bytes); between the passes g, G bytes a voxel of the volume, lives in
the workers' memory, spread over them, as any rechunk's data does."""
import functools
import operator

import numpy as np

import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _voxa


def _slab(block, sp, gdt):
    """(the slab's squared slice distances, whether it holds background)."""
    g = np.empty(block.shape, gdt)
    return g, _voxa.edt_slices(np.asarray(block), sp, g)


def _columns(g, has_bg, origin, sp, squared, dtype):
    out = np.empty(g.shape, dtype)
    _voxa.edt_columns(np.ascontiguousarray(g), origin, bool(has_bg), sp, squared, out)
    return out


def _cdt_slab(block, metric):
    """(the slab's slice transforms, True: the column pass does not ask)."""
    g = np.empty(block.shape, np.int32)
    _voxa.edt_cdt_slices(np.asarray(block), metric, g)
    return g, True


def _cdt_columns(g, has_bg, origin, metric):
    out = np.empty(g.shape, np.int32)
    _voxa.edt_cdt_columns(np.ascontiguousarray(g), metric, out)
    return out


def _g_dtype(shape, sp):
    """The Euclidean slice values' dtype: uint32 (exact integers, half the
    bytes) with unit spacing where a slice's squared distances stay below
    2^32 - 1, else float64 (as the chunk executor chooses, run_edt.c)."""
    small = sum((n + 1) ** 2 for n in shape[1:]) < 2**32 - 1
    return np.dtype(np.uint32 if sp is None and small else np.float64)


def _fit(sizes, whole, target):
    """Chunk sizes for axes 1.. (from `sizes`), halved, largest first, until a
    block holding `whole` voxels along axis 0 has about `target` voxels."""
    sizes = list(sizes)
    while whole * int(np.prod(sizes)) > target and max(sizes) > 1:
        d = int(np.argmax(sizes))
        sizes[d] = (sizes[d] + 1) // 2
    return sizes


def _any(flags):
    return any(flags)


def _passes(x, op, tok, slab, gdt, columns, dtype):
    """slabs -> slab(block) -> pencils -> columns(block, has_bg, origin) ->
    the input's chunks. slab returns (values, has background); has_bg is
    whether any slab had some (the slab pass sees every voxel: no second
    read of the input for it)."""
    nd, shape = x.ndim, x.shape
    target = max(int(np.prod([max(c) for c in x.chunks])), 1)
    slice_voxels = max(int(np.prod(shape[1:])), 1)
    slabs = x.rechunk((max(1, target // slice_voxels),) + tuple(shape[1:]))
    sname, gname = f"voxa-{op}-slices-{tok}", f"voxa-{op}-g-{tok}"
    bg = (f"voxa-{op}-background-{tok}",)
    layer, parts = {}, []
    for idx in np.ndindex(*slabs.numblocks):
        layer[(sname,) + idx] = (slab, (slabs.name,) + idx)
        layer[(gname,) + idx] = (operator.getitem, (sname,) + idx, 0)
        parts.append((bg[0] + "-part",) + idx)
        layer[parts[-1]] = (operator.getitem, (sname,) + idx, 1)
    layer[bg] = (_any, parts)
    g = da.Array(HighLevelGraph.from_collections(gname, layer, dependencies=[slabs]), gname,
                 chunks=slabs.chunks, dtype=gdt, meta=np.empty((0,) * nd, gdt))
    pencils = g.rechunk((shape[0],) + tuple(_fit([max(c) for c in x.chunks[1:]], shape[0],
                                                 target)))
    begin = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(int) for c in pencils.chunks]
    name = f"voxa-{op}-columns-{tok}"
    graph = {(name,) + idx: (columns, (pencils.name,) + idx, bg,
                             [int(begin[d][idx[d]]) for d in range(nd)])
             for idx in np.ndindex(*pencils.numblocks)}
    out = da.Array(HighLevelGraph.from_collections(name, graph, dependencies=[pencils, g]),
                   name, chunks=pencils.chunks, dtype=dtype, meta=np.empty((0,) * nd, dtype))
    return out.rechunk(x.chunks)


def exact(x, sp, squared, dtype):
    """Euclidean distances of dask array x (ndim >= 2, several chunks); sp:
    None or ndim spacings > 0; dtype float64, float32 or uint32 (checked)."""
    gdt = _g_dtype(x.shape, sp)
    return _passes(x, "edt", tokenize(x, sp, squared, dtype),
                   functools.partial(_slab, sp=sp, gdt=gdt), gdt,
                   functools.partial(_columns, sp=sp, squared=squared, dtype=dtype), dtype)


def exact_cdt(x, metric):
    """Taxicab (metric 1) or chessboard (2) distances of dask array x (ndim
    >= 2, several chunks), int32, -1 everywhere without background."""
    return _passes(x, "cdt", tokenize(x, metric), functools.partial(_cdt_slab, metric=metric),
                   np.dtype(np.int32), functools.partial(_cdt_columns, metric=metric),
                   np.dtype(np.int32))
