"""Why extract_patches orders patches along a Z-order curve of image cells
(src/ops/roi/roi_order.c, voxa__roi_order): a load-independent check.

Replays the cache lines that W3-3D reads (10,000 random 32^3 uint16 patches
of a (256,1024,1024) C-ordered image, the bench_roi corners) through a fully
associative LRU cache of the given size, for the processing orders: sorted by
axis-0 corner (the earlier order), patch-sized cells in row-major order, and
cells along a Morton curve; prints the misses (DRAM line reads) of each and
the number of distinct lines (the minimum). Pure Python: ~1 min per order.
Not run by make bench. Usage: python bench/sim_roi_order.py [cache MB ...]"""
import sys
from collections import OrderedDict

import numpy as np

SHAPE, SIZE, N, ES, LINE = (256, 1024, 1024), (32, 32, 32), 10_000, 2, 64


def corners():
    rng = np.random.default_rng(0)  # the stream bench_roi.py uses
    rng.integers(0, 65535, size=SHAPE, dtype=np.uint16)
    return np.stack([rng.integers(0, SHAPE[d] - SIZE[d], N, endpoint=True)
                     for d in range(3)], 1)


def patch_lines(c):
    sz, sy = SHAPE[1] * SHAPE[2] * ES, SHAPE[2] * ES
    z, y = np.meshgrid(np.arange(SIZE[0]), np.arange(SIZE[1]), indexing="ij")
    a = ((c[0] + z) * sz + (c[1] + y) * sy + c[2] * ES).ravel()
    first, last = a // LINE, (a + SIZE[2] * ES - 1) // LINE
    return [x for f, g in zip(first.tolist(), last.tolist()) for x in range(f, g + 1)]


def misses(lines, order, cap):
    cache, m = OrderedDict(), 0
    for p in order:
        for ln in lines[p]:
            if ln in cache:
                cache.move_to_end(ln)
            else:
                m += 1
                cache[ln] = None
                if len(cache) > cap:
                    cache.popitem(last=False)
    return m


def morton(cells):
    key = np.zeros(len(cells), np.int64)
    for bit in range(10, -1, -1):
        for j in range(3):
            key = (key << 1) | ((cells[:, j] >> bit) & 1)
    return key


def main():
    c = corners()
    lines = [patch_lines(x) for x in c]
    cells = c // np.array(SIZE)
    orders = {"axis-0 corner": np.argsort(c[:, 0], kind="stable"),
              "cells, row-major": np.argsort((cells[:, 0] * 32 + cells[:, 1]) * 32 + cells[:, 2],
                                             kind="stable"),
              "cells, Morton": np.argsort(morton(cells), kind="stable")}
    total = sum(len(x) for x in lines)
    distinct = len({ln for x in lines for ln in x})
    print(f"line reads {total}, distinct lines {distinct}")
    for mb in [int(a) for a in sys.argv[1:]] or [32, 100]:
        for name, o in orders.items():
            print(f"cache {mb} MB, {name}: {misses(lines, o, mb * 2**20 // LINE)} misses")


if __name__ == "__main__":
    main()
