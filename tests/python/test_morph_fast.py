"""The diamond (city-block) fast paths of src/ops/morph/morph_box.c at the
places where they switch, equal to scipy:

- the distance storage: uint8 saturating at r + 1 while r <= 253, uint32
  from r = 254 (radii 252..255, distances on both sides of the limit);
- rows scanned RG = 8 at a time (interleaved chains), the remainder one by
  one: row counts around multiples of 8, split between 1 and 3 threads;
- the threshold written by the last pass (ndim >= 2), by a separate loop in
  1-D; the output aliasing the input (opening, iterations, until stable);
- border_value 0 and 1, all-zero and all-one volumes, lines of length 1.

The reference for large radii is scipy's exact taxicab distance transform
(a footprint of radius 254 is too big for scipy.binary_erosion itself);
small radii are also checked against scipy.binary_* with the footprint.
"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa


def cdt_ref(op, a, R, bv):
    """scipy's binary erosion/dilation with the diamond of radius R, through
    its taxicab distance transform (outside the volume = bv)."""
    a = np.asarray(a, bool)
    if op == "erosion":
        pad = np.pad(a, 1, constant_values=bool(bv))
        if pad.all():
            return np.ones_like(a)
        d = ndi.distance_transform_cdt(pad, "taxicab")
        return d[(slice(1, -1),) * a.ndim] > R
    pad = np.pad(a, 1, constant_values=bool(bv))
    if not pad.any():
        return np.zeros_like(a)
    d = ndi.distance_transform_cdt(~pad, "taxicab")
    return d[(slice(1, -1),) * a.ndim] <= R


def check(a, R, bv=0):
    for op in ("erosion", "dilation"):
        want = cdt_ref(op, a, R, bv)
        got = getattr(voxa, "binary_" + op)(a, diamond=R, border_value=bv)
        assert np.array_equal(got, want), (op, R, bv, a.shape)
    # opening: the dilation runs in place on the erosion's output
    er = cdt_ref("erosion", a, R, bv)
    want = cdt_ref("dilation", er, R, bv)
    assert np.array_equal(voxa.binary_opening(a, diamond=R, border_value=bv), want)


@pytest.mark.parametrize("R", [252, 253, 254, 255])
@pytest.mark.parametrize("shape", [(700,), (3, 640), (2, 3, 300), (530, 2)])
def test_storage_switch_radii(R, shape, threads):
    rng = np.random.default_rng(R)
    for p in (0.002, 0.5, 0.998):
        a = rng.random(shape) < p
        for bv in (0, 1):
            check(a, R, bv)


@pytest.mark.parametrize("R", [253, 254])
def test_distance_exactly_at_the_limit(R, threads):
    # one background voxel: foreground voxels at city-block distance R and
    # R + 1 (erosion keeps exactly those beyond R)
    a = np.ones((1, 2 * R + 9), bool)
    a[0, 3] = False
    check(a, R, 1)
    b = np.zeros((R + 5, 3), bool)
    b[1, 1] = True
    check(b, R, 0)


@pytest.mark.parametrize("rows", [1, 2, 7, 8, 9, 15, 16, 17, 24, 25])
@pytest.mark.parametrize("n", [1, 2, 5, 33])
def test_row_groups(rows, n, threads):
    rng = np.random.default_rng(rows * 100 + n)
    a = rng.random((rows, n)) < 0.7
    fp = ndi.generate_binary_structure(2, 1)
    for R in (1, 2, 3):
        for bv in (0, 1):
            check(a, R, bv)
    # against scipy's own binary ops with the footprint, iterated
    for bv in (0, 1):
        for op in ("erosion", "dilation", "opening", "closing"):
            want = getattr(ndi, "binary_" + op)(a, fp, iterations=2, border_value=bv)
            got = getattr(voxa, "binary_" + op)(a, fp, iterations=2, border_value=bv)
            assert np.array_equal(got, want), (op, bv)


@pytest.mark.parametrize("shape", [(9, 10, 11), (4, 3, 5, 6), (1, 1, 40), (40, 1, 1)])
def test_3d_4d_edges(shape, threads):
    rng = np.random.default_rng(len(shape))
    for p in (0.0, 0.3, 0.8, 1.0):
        a = rng.random(shape) < p
        for R in (1, 2, 4, 7):
            for bv in (0, 1):
                check(a, R, bv)


def test_until_stable_in_place(threads):
    a = np.random.default_rng(5).random((20, 23)) < 0.8
    fp = ndi.generate_binary_structure(2, 1)
    for bv in (0, 1):
        want = ndi.binary_erosion(a, fp, iterations=0, border_value=bv)
        got = voxa.binary_erosion(a, fp, iterations=0, border_value=bv)
        assert np.array_equal(got, want)
