"""voxa.dask.label's tree reduction on adversarial inputs: one component
through every chunk, checkerboards (every voxel its own label on faces),
components whose first voxel lies in a later chunk than most of their voxels,
1-D to 4-D, odd grids (1 x n chunks, chunks of one voxel), every output dtype;
labels and count equal scipy's, and the per-chunk steps refuse bad input."""
import numpy as np
import pytest
from scipy import ndimage as ndi

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import voxa.dask as vd  # noqa: E402
from voxa import _voxa  # noqa: E402


def check(mask, chunks, structure=None, output=None, **kw):
    lab, n = vd.label(da.from_array(mask, chunks=chunks), structure=structure, output=output,
                      **kw)
    if structure is None:
        structure = ndi.generate_binary_structure(mask.ndim, kw.get("connectivity", 1))
    want, wn = ndi.label(mask, structure)
    got, gn = dask.compute(lab, n, scheduler="threads")
    assert int(gn) == wn
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.dtype(np.int32 if output is None else output)


def serpentine(shape):
    """One path visiting every row of every plane: crosses every chunk boundary."""
    m = np.zeros(shape, bool)
    for z in range(0, shape[0], 2):
        m[z, ::2, :] = True
        for y in range(0, shape[1] - 2, 2):
            m[z, y + 1, -1 if (y // 2) % 2 == 0 else 0] = True
        if z + 2 < shape[0]:
            m[z + 1, shape[1] - 1 - (shape[1] - 1) % 2, 0] = True
    return m


def test_one_component_through_every_chunk():
    m = serpentine((9, 13, 11))
    assert ndi.label(m)[1] == 1
    for chunks in [(2, 3, 4), (1, 13, 1), (9, 1, 11), (3, 5, 2)]:
        check(m, chunks)


def test_checkerboards_and_full():
    idx = np.indices((10, 12, 14)).sum(0)
    for conn in (1, 2, 3):
        check(idx % 2 == 0, (3, 5, 4), connectivity=conn)
        check(idx % 3 == 0, (4, 4, 5), connectivity=conn)
    check(np.ones((10, 12, 14), bool), (3, 5, 4))
    check(np.zeros((10, 12, 14), bool), (3, 5, 4))


def test_first_voxel_in_a_late_chunk():
    # a U whose arms start in the last chunks along x and meet at the bottom:
    # most of it lies in earlier chunks of the grid than its first voxel
    m = np.zeros((4, 20, 20), bool)
    m[:, 2:, 17] = True
    m[:, 18, 1:18] = True
    m[:, 1:19, 1] = True
    m[0, 0, 5] = True  # a separate earlier component
    for chunks in [(2, 5, 5), (1, 19, 3), (4, 20, 1)]:
        check(m, chunks)


@pytest.mark.parametrize("shape,chunks", [((50,), (7,)), ((31, 45), (4, 9)),
                                          ((7, 8, 9, 10), (3, 4, 5, 3)), ((1, 1, 40), (1, 1, 6))])
def test_dimensions(shape, chunks):
    rng = np.random.default_rng(len(shape))
    m = rng.random(shape) < 0.55
    check(m, chunks)
    check(m, chunks, connectivity=len(shape))


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.int64, np.uint64])
def test_output_dtypes(dtype):
    m = np.random.default_rng(9).random((8, 9, 10)) < 0.3
    assert ndi.label(m)[1] < 128
    check(m, (3, 4, 6), output=dtype)


def test_one_voxel_chunks():
    m = np.random.default_rng(10).random((5, 6, 7)) < 0.5
    check(m, (1, 1, 1), connectivity=3)


def test_bad_input():
    with pytest.raises(TypeError, match="unsupported output dtype complex64"):
        vd.label(da.zeros((4, 4), bool, chunks=2), output=np.complex64)
    with pytest.raises(ValueError, match="structure"):
        vd.label(da.zeros((4, 4), bool, chunks=2), structure=np.ones((3, 3, 3)))
    with pytest.raises(ValueError, match="centrosymmetric"):
        vd.label(da.zeros((4, 4), bool, chunks=2), structure=[[1, 1, 0], [0, 1, 0], [0, 0, 0]])
    lab = np.array([[0, 2], [1, 0]], np.int32)  # not in raster order
    with pytest.raises(ValueError, match="raster order"):
        _voxa.dask_firsts(lab, 2, [0, 0], [2, 2], np.empty(2, np.int64))
    with pytest.raises(ValueError, match="expected"):
        _voxa.dask_firsts(lab.astype(np.float32), 2, [0, 0], [2, 2], np.empty(2, np.int64))
    with pytest.raises(ValueError, match="outside the table"):
        _voxa.dask_relabel(np.array([0, 3], np.int32), np.arange(3, dtype=np.int32),
                           np.empty(2, np.int32))
    with pytest.raises(ValueError, match="table's dtype"):
        _voxa.dask_relabel(np.array([0, 1], np.int32), np.arange(3, dtype=np.int64),
                           np.empty(2, np.int32))
    out = np.empty(3, np.uint16)
    _voxa.dask_relabel(np.array([2, 0, 1], np.int64), np.array([0, 7, 9], np.uint16), out)
    assert out.tolist() == [9, 0, 7]


def test_output_too_narrow():
    m = np.indices((40, 40)).sum(0) % 2 == 0  # 800 components
    lab, n = vd.label(da.from_array(m, chunks=(10, 13)), output=np.uint8)
    with pytest.raises(RuntimeError, match="bit-depth"):
        lab.compute()


def test_firsts_against_brute_force():
    """_voxa.dask_firsts (blocks of 16 labels already met are skipped) equals
    the first voxel of each label found by np.argwhere, for int32 and int64
    rows shorter and longer than a block, at any origin in a larger whole;
    two labels swapped out of raster order raise."""
    rng = np.random.default_rng(8)
    for t in range(120):
        nd = int(rng.integers(1, 4))
        shape = tuple(int(rng.integers(1, 40)) for _ in range(nd))
        lab, n = ndi.label(rng.random(shape) < rng.uniform(0.01, 0.6))
        lab = lab.astype([np.int32, np.int64][t % 2])
        origin = [int(rng.integers(0, 5)) for _ in range(nd)]
        whole = [s + o + int(rng.integers(0, 5)) for s, o in zip(shape, origin)]
        first = np.empty(n, np.int64)
        _voxa.dask_firsts(lab, n, origin, whole, first)
        want = [np.ravel_multi_index(tuple(np.argwhere(lab == k)[0] + origin), whole)
                for k in range(1, n + 1)]
        assert np.array_equal(first, want)
        if n >= 2:
            swapped = np.where(lab == 1, 2, np.where(lab == 2, 1, lab)).astype(lab.dtype)
            with pytest.raises(ValueError, match="raster order"):
                _voxa.dask_firsts(swapped, n, origin, whole, np.empty(n, np.int64))


def test_relabel_runs_again_on_kept_results():
    """The relabel task labels its chunk again and writes the final numbers
    over those labels, its own array: a scheduler that keeps the other
    tasks' results and runs the relabel tasks again (opportunistic caching,
    a lost result recomputed) gets the same labels, never a table applied
    twice to a kept array."""
    from dask.core import get
    m = np.random.default_rng(5).random((12, 18, 16)) < 0.45
    want, n = ndi.label(m)
    lab, _ = vd.label(da.from_array(m, chunks=(5, 7, 9)))
    graph = dict(lab.__dask_graph__())
    every = list(graph)
    kept = dict(zip(every, get(graph, every)))  # every task's result, as a cache keeps them
    keys = sorted(k for k in graph if isinstance(k, tuple) and "relabel" in k[0])
    first = [kept.pop(k) for k in keys]
    again = get(graph, keys, cache=kept)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
        assert a is not b
    np.testing.assert_array_equal(np.block(_nested(lab.numblocks, keys, again)), want)


def _nested(grid, keys, blocks):
    """Blocks keyed by their chunk index, as the nested lists np.block takes."""
    at = {k[1:]: b for k, b in zip(keys, blocks)}

    def level(prefix):
        if len(prefix) == len(grid):
            return at[prefix]
        return [level(prefix + (i,)) for i in range(grid[len(prefix)])]
    return level(())


@pytest.mark.parametrize("chunks", [((3,),), ((2, 5, 1),), ((1, 1), (4, 3)), ((2, 3), (1, 2, 1)),
                                    ((2, 2), (3,), (1, 4)), ((1, 2), (2, 1), (3,), (2, 2))])
def test_raster_scan_against_cumsum(chunks):
    """_scan.raster_scan: each block's exclusive prefix sums in raster order of
    the whole array, and the total, for blocked arrays of 1-4 dimensions."""
    from dask.core import get
    from voxa.dask._scan import raster_scan
    shape = tuple(sum(c) for c in chunks)
    a = np.random.default_rng(len(shape)).integers(0, 9, shape)
    begin = [np.concatenate([[0], np.cumsum(c)[:-1]]) for c in chunks]
    graph = {}
    for idx in np.ndindex(*[len(c) for c in chunks]):
        graph[("blk",) + idx] = a[tuple(slice(b[i], b[i] + c[i]) for b, c, i in
                                        zip(begin, chunks, idx))]
    prefix, total = raster_scan(graph, lambda idx: ("blk",) + idx, [len(c) for c in chunks], "s")
    want = (np.cumsum(a.ravel()) - a.ravel()).reshape(shape)
    for idx in np.ndindex(*[len(c) for c in chunks]):
        got = get(graph, [prefix(idx)])[0]
        np.testing.assert_array_equal(got, want[tuple(slice(b[i], b[i] + c[i]) for b, c, i in
                                                      zip(begin, chunks, idx))])
    assert int(get(graph, [total])[0]) == a.sum()
