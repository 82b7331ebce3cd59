"""voxa.dask.label: scipy.ndimage.label of a dask array, as a tree reduction.

Every label is named by its first voxel: id = 1 + raster index (in the whole
volume) of the label's first voxel. The id of a component's first voxel is
the smallest id of its pieces, and scipy numbers components in raster order of
their first voxels, so the job is (a) the smallest id of each component, then
(b) the rank of each component's id among all of them.

1. ``voxa-label-chunk``: each chunk labelled alone (int32 where it fits),
   its labels' first voxels (one C pass, ``_voxa.dask_firsts``) and its
   layers on faces that have a neighbour, as ids (``voxa-label-face``); the
   labels are not kept (step 5).
2. ``voxa-label-merge`` (up the tree): the chunk grid is split in halves
   recursively (longest axis first); a node joins its two children across
   their common face (the seam) by the structure, unites the ids met there
   (union-find keeping the smallest id, ``_voxa.label_resolve``), and passes
   up its own box's open faces with the ids replaced. A node holds its
   children's faces, never voxels inside them.
3. ``voxa-label-down`` (down the tree): each node gets from its parent the
   final id (component minimum) of every id on its faces; a chunk then knows
   it for all its labels. A label owns its component when its own id is the
   minimum.
4. ``voxa-label-rows``: owners counted per row of the chunk (all axes but
   the last); exclusive prefix sums in raster order over the per-row counts,
   one column per chunk along the last axis (``_scan.py``: a task per row of
   chunks, the row totals scanned one dimension down), give every owner its
   number (``voxa-label-number``); the total is the count
   (``voxa-label-count``).
5. ``voxa-label-up2`` / ``voxa-label-down2``: numbers of owners on faces
   travel the same tree to the chunks holding other pieces of their
   components; ``voxa-label-relabel`` labels its chunk again and maps
   those labels through its table in one C pass (``_voxa.dask_relabel``),
   in place where the output dtype is theirs (int32 by default). Labelling
   twice costs about 10 % (the raw-task scan of step 4 gives it back) and
   saves keeping every chunk's labels (4 bytes a voxel of the volume) until
   the end; a rerun of the task recomputes from the input.

Tasks per chunk: a constant (about 12); tree depth log2(chunks); the largest
node holds the faces of half the volume's chunk grid (its seam), O(faces),
and no task is serial over chunks. Labels and count equal
``scipy.ndimage.label`` exactly for any chunking and structure.
"""
import numpy as np

import dask
import dask.array as da
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import _backend, _ndsupport as _nds, _voxa, _wrap
from ..measure import label as _label_np, label_structure
from ._lazy import lazy_output
from ._route import routed
from ._scan import raster_scan

_E = np.empty(0, np.int64)


def _structure(structure, connectivity, ndim):
    from scipy.ndimage import generate_binary_structure
    if structure is None:
        return np.ascontiguousarray(generate_binary_structure(ndim, int(connectivity)), np.uint8)
    return label_structure(structure, ndim)  # voxa.label's checks and exception types


def _lookup(keys, vals, x):
    """x with every value found in the sorted `keys` replaced by its `vals`."""
    if keys.size == 0 or x.size == 0:
        return x
    i = np.minimum(np.searchsorted(keys, x), keys.size - 1)
    hit = keys[i] == x
    return np.where(hit, vals[i], x)


def _restrict(keys, vals, allowed):
    keep = np.isin(keys, allowed, assume_unique=False)
    return keys[keep], vals[keep]


# ---- per chunk ---------------------------------------------------------------------------

def _labels(block, st, backend):
    """The chunk labelled alone (int32 where it fits): the same labels each
    time, so the relabel task makes them again rather than the graph
    keeping every chunk's labels (4-8 bytes a voxel) until the end."""
    out = np.int32 if block.size < 2**31 - 1 else np.int64
    lab, n = routed(_label_np, backend)(np.asarray(block), structure=st, output=out)
    return np.ascontiguousarray(lab), int(n)


def _chunk(block, st, lo, hi, whole, backend=None):
    """(ids of the chunk's labels, ascending; its faces, _faces)."""
    lab, n = _labels(block, st, backend)
    first = np.empty(n, np.int64)
    _voxa.dask_firsts(lab, n, list(lo), list(whole), first)
    ids = first + 1
    return ids, _faces(lab, ids, lo, hi, whole)


def _faces(lab, ids, lo, hi, whole):
    """(empty seam map, {(axis, side): (ids on that face, its distinct ids)})
    for the chunk's faces that have a neighbour."""
    table = np.concatenate([[0], ids])
    out = {}
    for d in range(lab.ndim):
        for side, at, inside in ((0, 0, lo[d] > 0), (1, lab.shape[d] - 1, hi[d] < whole[d])):
            if inside:
                loc = np.take(lab, at, axis=d)
                present = np.flatnonzero(np.bincount(loc.ravel(), minlength=ids.size + 1)[1:])
                out[(d, side)] = (table[loc], ids[present])
    return (_E, _E), out


# ---- up the tree: unite across seams ---------------------------------------------------------

def _seam_pairs(fa, fb, st, d):
    """Pairs (a, b) of ids joined by the structure across a seam on axis d:
    fa is the lower child's last layer, fb the upper child's first."""
    nd = st.ndim
    a_parts, b_parts = [], []
    for off in np.ndindex(*st.shape):
        if off[d] != 2 or not st[off]:
            continue
        sa, sb = [], []
        for e in range(nd):
            if e == d:
                continue
            k = off[e] - 1
            sa.append(slice(max(-k, 0), fa.shape[len(sa)] - max(k, 0)))
            sb.append(slice(max(k, 0), fb.shape[len(sb)] - max(-k, 0)))
        a, b = fa[tuple(sa)].ravel(), fb[tuple(sb)].ravel()
        both = (a != 0) & (b != 0)
        a, b = a[both], b[both]
        if a.size > 1:  # neighbours along a row mostly repeat the pair
            new = np.concatenate([[True], (a[1:] != a[:-1]) | (b[1:] != b[:-1])])
            a, b = a[new], b[new]
        a_parts.append(a)
        b_parts.append(b)
    if not a_parts:
        return _E, _E
    return np.concatenate(a_parts), np.concatenate(b_parts)


def _unite(a, b):
    """Sorted (keys, vals): every id met in the pairs that is not the smallest
    of its component, with that smallest id."""
    if a.size == 0:
        return _E, _E
    uids = np.unique(np.concatenate([a, b]))
    pairs = np.ascontiguousarray(np.stack([np.searchsorted(uids, a) + 1,
                                           np.searchsorted(uids, b) + 1], 1), np.int64)
    comp = np.empty(uids.size, np.int64)
    _voxa.label_resolve(np.ascontiguousarray(uids), pairs, comp)  # ranks by smallest id
    order = np.argsort(comp, kind="stable")  # uids ascend: each group starts at its minimum
    cs = comp[order]
    start = np.flatnonzero(np.concatenate([[True], cs[1:] != cs[:-1]]))
    smallest = uids[order[start]]
    rep = smallest[comp - 1]
    moved = rep != uids
    return uids[moved], rep[moved]


def _remap(keys, vals, face):
    """A face (ids, distinct ids) through a seam map; untouched faces are kept."""
    arr, u = face
    if keys.size == 0 or not np.isin(u, keys).any():
        return face
    return _lookup(keys, vals, arr), np.unique(_lookup(keys, vals, u))


def _merge(a, b, d, st):
    """Up-sweep node: children's (seam map, faces) -> (seam map, own open faces)."""
    fa, fb = a[1], b[1]
    keys, vals = _unite(*_seam_pairs(fa[(d, 1)][0], fb[(d, 0)][0], st, d))
    out = {}
    for (e, side) in set(fa) | set(fb):
        if e == d:  # the box's own ends on the seam's axis
            src = fa if side == 0 else fb
            if (d, side) in src:
                out[(d, side)] = _remap(keys, vals, src[(d, side)])
            continue
        ax = d if d < e else d - 1
        (pa, ua), (pb, ub) = fa[(e, side)], fb[(e, side)]
        out[(e, side)] = _remap(keys, vals, (np.concatenate([pa, pb], axis=ax),
                                             np.concatenate([ua, ub])))
    return (keys, vals), out


def _face_ids(faces):
    """Distinct ids on the faces (no background)."""
    if not faces:
        return _E
    return np.unique(np.concatenate([u for _, u in faces.values()]))


# ---- down the tree: final ids ----------------------------------------------------------------

def _down(child, node, parent):
    """Final id of every id on a child's faces: through the parent's seam map,
    then the parent's own final table. Returns (changed ids, their final ids,
    every final id on the faces)."""
    seam, u = node[0], _face_ids(child[1])
    final = _lookup(parent[0], parent[1], _lookup(seam[0], seam[1], u))
    moved = final != u
    return u[moved], final[moved], np.unique(final)


def _root_down():
    return _E, _E, _E


# ---- numbering ---------------------------------------------------------------------------

def _owners(chunk, down):
    """Ids of the chunk's labels that own their component (ascending)."""
    ids = chunk[0]
    return ids[~np.isin(ids, down[0], assume_unique=True)]


def _row_counts(chunk, down, lo, cshape, whole):
    """Owners per row (all axes but the last) of the chunk, shaped
    (*cshape[:-1], 1)."""
    own = _owners(chunk, down) - 1
    rows = _local_rows(own, lo, cshape, whole)
    n = int(np.prod(cshape[:-1], dtype=np.int64))
    return np.bincount(rows, minlength=n).astype(np.int64).reshape(tuple(cshape[:-1]) + (1,))


def _local_rows(flat, lo, cshape, whole):
    if len(whole) == 1:
        return np.zeros(flat.size, np.int64)
    coords = np.unravel_index(flat // whole[-1], tuple(whole[:-1]))
    return np.ravel_multi_index(tuple(c - o for c, o in zip(coords, lo[:-1])),
                                tuple(cshape[:-1])).astype(np.int64)


def _number(chunk, down, offsets, lo, cshape, whole):
    """(number of every label or 0 where another chunk owns it, the up2
    export: (owner ids on faces, their numbers))."""
    ids = chunk[0]
    owner = ~np.isin(ids, down[0], assume_unique=True)
    own = ids[owner] - 1
    rows = own // whole[-1]
    rank = np.arange(own.size) - np.searchsorted(rows, rows, side="left")
    num = np.zeros(ids.size + 1, np.int64)
    num[1:][owner] = offsets.ravel()[_local_rows(own, lo, cshape, whole)] + rank + 1
    on_face = np.isin(ids[owner], down[2])
    return num, (ids[owner][on_face], num[1:][owner][on_face])


def _second(pair):
    return pair[1]


def _up2(a, b, down):
    facekeys = down[2]
    keys = np.concatenate([a[0], b[0]])
    vals = np.concatenate([a[1], b[1]])
    order = np.argsort(keys)
    return _restrict(keys[order], vals[order], facekeys)


def _down2(parent, sibling, down):
    facekeys = down[2]
    keys = np.concatenate([parent[0], sibling[0]])
    vals = np.concatenate([parent[1], sibling[1]])
    keys, vals = _restrict(keys, vals, facekeys)
    order = np.argsort(keys)
    return keys[order], vals[order]


def _relabel(block, st, backend, chunk, down, numbered, down2, dtype):
    ids = chunk[0]
    num = numbered[0].copy()  # a task's input: never changed in place
    if down[0].size:
        at = np.searchsorted(ids, down[0])  # the chunk's labels owned elsewhere
        mine = numbered[1]  # owners here whose components come back into the chunk
        keys = np.concatenate([down2[0], mine[0]])
        vals = np.concatenate([down2[1], mine[1]])
        order = np.argsort(keys)
        num[at + 1] = _lookup(keys[order], vals[order], down[1])
    lab, _ = _labels(block, st, backend)
    if dtype.kind not in "iu":  # float or bool, as scipy: the int64 labels cast
        out = np.empty(lab.shape, np.int64)
        _voxa.dask_relabel(lab, np.ascontiguousarray(num.astype(np.int64, copy=False)), out)
        return out.astype(dtype)
    _check_fits(int(num.max(initial=0)), dtype)  # as voxa.label: never wrap around
    table = np.ascontiguousarray(num.astype(dtype, copy=False))
    if dtype == lab.dtype:  # the labels are this task's own: written over
        _voxa.dask_relabel(lab, table, lab)
        return lab
    out = np.empty(lab.shape, dtype)
    _voxa.dask_relabel(lab, table, out)
    return out


# ---- the graph ---------------------------------------------------------------------------

def _split(lo, hi):
    """Halve a box of chunk indices on its longest axis: (axis, middle) or None."""
    d = int(np.argmax([h - l for l, h in zip(lo, hi)]))
    if hi[d] - lo[d] < 2:
        return None
    return d, (lo[d] + hi[d]) // 2


def label(input, structure=None, output=None, *, connectivity=1, wrap_axes=None,
          backend=None):
    """``voxa.label`` / ``scipy.ndimage.label`` of a dask array, lazily:
    returns ``(labels, n)`` with labels a dask array and n a 0-d dask array.
    ``output``: a dtype as in memory (any integer, float32, float64 or bool;
    default int32, int64 from 2^31 - 2 voxels); an array is refused, the
    result being a new dask array. Exactly scipy's labels and count, for
    any chunking and connectivity (see the module's notes). ``wrap_axes``
    (dask-image's keyword): axes along which the volume wraps around, its
    components joined across the ends afterwards and numbered as
    ``voxa.label(..., wrap_axes=)`` numbers them (voxa._wrap)."""
    lazy_output(output, instead="give a dtype or None")
    x = da.asarray(input)
    dtype = np.dtype((np.int64 if x.size >= 2**31 - 2 else np.int32) if output is None
                     else output)
    if dtype.kind not in "iu" and dtype not in (np.float32, np.float64, np.bool_):
        raise TypeError(f"label: unsupported output dtype {dtype} (expected an integer "
                        "dtype, float32, float64 or bool)")
    wrap = _wrap.check_axes(wrap_axes, x.ndim)
    _structure(structure, connectivity, max(x.ndim, 1))  # a bad one fails here, wrapped too
    if wrap and 0 not in x.shape:
        return _wrapped(x, structure, connectivity, backend, wrap, dtype)
    scalar = x.ndim == 0
    if scalar:
        x = x.reshape(1)
    nd = x.ndim
    st = _structure(structure, connectivity, nd)
    if 0 in x.shape:
        lab = da.zeros(x.shape, dtype=dtype, chunks=x.chunks)
        return lab, _count_of(0, dtype)
    if backend is not None:
        _backend.check(backend)  # a bad name fails here, not in a task
    tok = tokenize(x, st, dtype)
    whole = [int(s) for s in x.shape]
    begin = [np.concatenate([[0], np.cumsum(c)[:-1]]).astype(np.int64) for c in x.chunks]
    grid = x.numblocks

    def name(step):
        return f"voxa-label-{step}-{tok}"

    def box(idx):
        lo = [int(begin[d][idx[d]]) for d in range(nd)]
        return lo, [lo[d] + x.chunks[d][idx[d]] for d in range(nd)]

    # one raw graph (two layers): tuple tasks keep building it O(chunks)
    g1 = {}
    for idx in np.ndindex(*grid):
        lo, hi = box(idx)
        g1[(name("chunk"),) + idx] = (_chunk, (x.name,) + idx, st, lo, hi, whole, backend)
        g1[(name("face"),) + idx] = (_second, (name("chunk"),) + idx)

    up, children, leaf = {}, {}, {}  # tree node id -> key of its (seam, faces)

    def build(lo, hi):
        me = len(up)
        cut = _split(lo, hi)
        if cut is None:
            up[me] = (name("face"),) + tuple(lo)
            leaf[tuple(lo)] = me
            return me
        up[me] = None
        d, mid = cut
        a = build(lo, [mid if e == d else hi[e] for e in range(nd)])
        b = build([mid if e == d else lo[e] for e in range(nd)], hi)
        up[me] = (name("merge"), me)
        g1[up[me]] = (_merge, up[a], up[b], d, st)
        children[me] = (a, b)
        return me

    root = build([0] * nd, list(grid))
    down = {root: (name("down"), root)}
    g1[down[root]] = (_root_down,)
    order = [root]
    for node in order:  # parents before children
        for c in children.get(node, ()):
            down[c] = (name("down"), c)
            g1[down[c]] = (_down, up[c], up[node], down[node])
            order.append(c)
    for idx in np.ndindex(*grid):  # owners per row of each chunk
        lo, hi = box(idx)
        g1[(name("rows"),) + idx] = (_row_counts, (name("chunk"),) + idx, down[leaf[idx]], lo,
                                     [h - l for l, h in zip(lo, hi)], whole)
    # exclusive prefix sums in raster order of (rows..., chunk along the last
    # axis): each count block is (rows..., 1), one column per chunk
    offsets, total = raster_scan(g1, lambda idx: (name("rows"),) + idx, grid, name("scan"))

    g2 = {}
    up2 = {}
    for idx in np.ndindex(*grid):
        lo, hi = box(idx)
        num = (name("number"),) + idx
        g2[num] = (_number, (name("chunk"),) + idx, down[leaf[idx]], offsets(idx), lo,
                   [h_ - l for l, h_ in zip(lo, hi)], whole)
        up2[leaf[idx]] = (name("up2"), leaf[idx])
        g2[up2[leaf[idx]]] = (_second, num)
    for node in reversed(order):  # children before parents
        if node in children and node != root:
            a, b = children[node]
            up2[node] = (name("up2"), node)
            g2[up2[node]] = (_up2, up2[a], up2[b], down[node])
    down2 = {root: (name("down2"), root)}
    g2[down2[root]] = (_root_down,)
    for node in order:
        for c, sib in zip(children.get(node, ()), reversed(children.get(node, ()))):
            down2[c] = (name("down2"), c)
            g2[down2[c]] = (_down2, down2[node], up2[sib], down[c])
    for idx in np.ndindex(*grid):
        g2[(name("relabel"),) + idx] = (_relabel, (x.name,) + idx, st, backend,
                                        (name("chunk"),) + idx, down[leaf[idx]],
                                        (name("number"),) + idx, down2[leaf[idx]], dtype)
    # the count: the scan's total (the first layer's keys, which g2 reads, are its graph)
    g1[(name("count"),)] = (_cast_checked, total, _count_dtype(dtype))
    n = da.Array(HighLevelGraph.from_collections(name("count"), g1, dependencies=[x]),
                 name("count"), chunks=(), dtype=_count_dtype(dtype),
                 meta=np.empty((), _count_dtype(dtype)))
    labels = da.Array(HighLevelGraph.from_collections(name("relabel"), g2, dependencies=[n]),
                      name("relabel"), chunks=x.chunks, dtype=dtype,
                      meta=np.empty((0,) * nd, dtype))
    if scalar:
        labels = labels.reshape(())
    return labels, n


def _wrapped(x, structure, connectivity, backend, wrap, dtype):
    """label with wrap_axes: the plain int64 labels, the pairs of labels that
    meet across the ends (read from the end layers of the wrapped axes), the
    joined numbering, each chunk through it."""
    lab, n = label(x, structure, np.int64, connectivity=connectivity, backend=backend)
    st = _structure(structure, connectivity, x.ndim)
    # the layers and the count as their chunks' own tasks (unoptimised keys):
    # a Delayed of the arrays would get a graph of its own, labelling the
    # volume again for each of them
    layers = [lab[(slice(None),) * ax + (side,)].to_delayed(optimize_graph=False).tolist()
              for ax, side in _wrap.ends(wrap)]
    count = n.to_delayed(optimize_graph=False).item()
    pairs = dask.delayed(_pairs_from_chunks)(x.shape, st, wrap, layers)
    tab = dask.delayed(_wrap.table, nout=2)(count, pairs)
    meta = np.empty((0,) * x.ndim, np.int64)  # not guessed: the table is a Delayed
    out = lab.map_blocks(_wrap.relabel, tab[0], dtype=np.int64, meta=meta)
    if dtype != np.int64:
        out = out.map_blocks(_cast_checked, dtype, dtype=dtype, meta=meta.astype(dtype))
    return out, _count_of(tab[1], dtype)


def _pairs_from_chunks(shape, st, wrap, layers):
    """_wrap.pairs_at_ends of end layers given as nested lists of chunks."""
    return _wrap.pairs_at_ends(shape, st, wrap, *[np.block(c) for c in layers])


def _count_dtype(dtype):
    """The count's dtype: the labels' where they are integers (dask-image's n
    is their largest label, int32 by default), else int64."""
    return dtype if dtype.kind in "iu" else np.dtype(np.int64)


def _count_of(n, dtype):
    """A 0-d dask array of the count n (a number or a Delayed of one) for
    labels of `dtype`."""
    cd = _count_dtype(dtype)
    return da.from_delayed(dask.delayed(_cast_checked)(n, cd), shape=(), dtype=cd)


def _cast_checked(block, dtype):
    """The joined labels (or the count, a NumPy value then) in the output
    dtype: refused where they do not fit an integer dtype, as voxa.label
    refuses them."""
    block = np.asarray(block)
    if dtype.kind in "iu" and block.size:
        _check_fits(int(block.max()), dtype)
    out = block.astype(dtype)
    return out[()] if out.ndim == 0 else out  # the count: a NumPy scalar, as dask gives


def _check_fits(top, dtype):
    """voxa.label's refusal of a largest label that the integer dtype cannot hold."""
    if top > np.iinfo(dtype).max:
        raise _nds.BitDepthError(f"label: label {top} does not fit the output dtype {dtype} "
                                 f"(max {np.iinfo(dtype).max}); use a wider dtype such as int32 "
                                 "or int64 (insufficient bit-depth in requested output type)")
