"""W1: ball masks around 500 points + connected components, voxa vs peers.

Peers, side by side in this process:
  (a) paint each ball in its bounding box (Python loop, float64, exact) then
      scipy.ndimage.label: the best scipy route;
  (b) seeds at the rounded centres + scipy EDT <= r, then label (inexact:
      rounding the centres moves the balls);
  (c) the published O(voxels x points) NumPy broadcasting method, on a
      reduced shape (it takes minutes at full size);
  floor: writing the int32 label volume once (np.full on a fresh array, which
      includes the page faults a new output pays, and on a warm one).
Fresh 80 MB outputs get transparent huge pages (NumPy asks for them); the
kernel's synchronous compaction makes a few calls 10-20x slower, so the voxa
route and the floors take the median of 21 calls.
"""
import os
import sys

import numpy as np
import scipy.ndimage as ndi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, paint_bbox, table, w1_points  # noqa: E402

import voxa  # noqa: E402


def edt_route(shape, pts, r):
    seeds = np.ones(shape, dtype=bool)
    idx = np.clip(np.rint(pts).astype(int), 0, np.array(shape) - 1)
    seeds[tuple(idx.T)] = False
    return ndi.distance_transform_edt(seeds) <= r


def broadcast_route(shape, pts, r):
    grid = np.indices(shape, dtype=np.float64)
    mask = np.zeros(shape, dtype=bool)
    for p in pts:
        d2 = sum((grid[d] - p[d]) ** 2 for d in range(len(shape)))
        mask |= d2 <= r * r
    return mask


def run_w1(shape, r=5.0, threads=2, reduced=(20, 128, 128)):
    pts = w1_points(shape)
    st = ndi.generate_binary_structure(len(shape), 1)
    voxa.set_threads(threads)
    rows = []
    has_label = hasattr(voxa, "label")

    def voxa_route():
        m = voxa.balls(shape, pts, r)
        return voxa.label(m)[1] if has_label else ndi.label(m, st)[1]
    m_voxa = measure(voxa_route, repeats=21)
    rows.append(("voxa balls + label" if has_label else "voxa balls + scipy label", m_voxa,
                 f"{m_voxa['result']} components"))
    m_a = measure(lambda: ndi.label(paint_bbox(shape, pts, r), st)[1], repeats=5)
    rows.append(("bbox paint (Python) + scipy label", m_a, "exact"))
    m_b = measure(lambda: ndi.label(edt_route(shape, pts, r), st)[1], repeats=1, warmup=0)
    wrong = int((edt_route(shape, pts, r) != voxa.balls(shape, pts, r)).sum())
    rows.append(("rounded seeds + scipy EDT + label", m_b, f"inexact: {wrong} voxels differ"))
    assert (paint_bbox(shape, pts, r) == voxa.balls(shape, pts, r)).all()

    def fresh_fill():
        a = np.empty(shape, dtype=np.int32)
        a.fill(0)
        return a
    warm = np.empty(shape, dtype=np.int32)
    warm.fill(1)
    rows.append(("floor: fill fresh int32 volume", measure(fresh_fill, repeats=21), "page faults"))
    rows.append(("floor: fill warm int32 volume", measure(lambda: warm.fill(0), repeats=21), ""))
    out = [table(f"W1 {shape}, 500 points, r={r:g}, {threads} threads", rows, rows[0][0])]

    if len(shape) == 3 and reduced:
        pts_r = w1_points(reduced)
        rr = [("voxa balls", measure(lambda: voxa.balls(reduced, pts_r, r), repeats=7), ""),
              ("NumPy broadcasting O(V x N)",
               measure(lambda: broadcast_route(reduced, pts_r, r), repeats=1, warmup=0), "")]
        assert (broadcast_route(reduced, pts_r, r) == voxa.balls(reduced, pts_r, r)).all()
        out.append(table(f"W1 masks only, reduced shape {reduced}, 500 points", rr, "voxa balls"))
    voxa.set_threads(0)
    return "\n".join(out)


if __name__ == "__main__":
    print(run_w1((20, 1024, 1024)))
    print(run_w1((1024, 1024), reduced=None))
