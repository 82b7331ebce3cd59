"""Exclusive prefix sums, in raster (C) order, of a blocked integer array, as
raw graph tasks (voxa.dask.label numbers its components with them).

A k-dimensional array's raster prefix at an element is the prefix along its
row (within the element's block, plus the totals of the blocks to its left in
the same row of blocks) plus the raster prefix, over the (k-1)-dimensional
array of row totals, at its row. So one task per row of blocks (all blocks
that differ only along the last axis) scans those blocks and sums their rows;
the row totals are scanned the same way one dimension down; a task per block
adds the two. Tasks: the blocks, plus one per row of blocks at each level
(far fewer than the blocks); a task holds one row of blocks, never the array.
"""
import operator

import numpy as np


def _row_of_blocks(*blocks):
    """(each block's exclusive prefix along the last axis, counting the blocks
    to its left; the totals of the rows, shape blocks[0].shape[:-1])."""
    left = np.zeros(blocks[0].shape[:-1], np.int64)
    out = []
    for b in blocks:
        b = np.asarray(b, np.int64)
        out.append(np.cumsum(b, axis=-1) - b + left[..., None])
        left = left + b.sum(axis=-1)
    return out, left


def _pick(row, j):
    return row[0][j]


def _add_rows(row, j, below):
    """Block j of a row of blocks with the prefix of its rows added."""
    return row[0][j] + np.asarray(below)[..., None]


def raster_scan(graph, key, grid, tag):
    """Add the tasks to `graph`. key(idx): the graph key of block idx (an
    int64 array; grid: blocks per axis); tag: a unique name prefix. Returns
    (prefix(idx): the key of block idx's exclusive prefix, the key of the
    total, a 0-d int64 array)."""
    rows = {}
    for rb in np.ndindex(*grid[:-1]):
        rows[rb] = (f"{tag}-rows",) + rb
        graph[rows[rb]] = (_row_of_blocks,) + tuple(key(rb + (j,)) for j in range(grid[-1]))
        graph[(f"{tag}-totals",) + rb] = (operator.getitem, rows[rb], 1)
    if len(grid) == 1:
        for j in range(grid[0]):
            graph[(f"{tag}-prefix", j)] = (_pick, rows[()], j)
        return (lambda idx: (f"{tag}-prefix",) + tuple(idx)), (f"{tag}-totals",)
    below, total = raster_scan(graph, lambda rb: (f"{tag}-totals",) + rb, grid[:-1],
                               tag + "-up")
    for idx in np.ndindex(*grid):
        graph[(f"{tag}-prefix",) + idx] = (_add_rows, rows[idx[:-1]], idx[-1], below(idx[:-1]))
    return (lambda idx: (f"{tag}-prefix",) + tuple(idx)), total
