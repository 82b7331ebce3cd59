"""voxa.balls against a brute-force NumPy reference of the W1 rule:
inside iff sum_d ((v_d - p_d) * s_d)**2 <= r**2, summed left to right in
float64; owners = nearest point within reach, ties to the lower index."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import voxa


def reference(shape, points, radius, spacing=None, owner=False):
    points = np.asarray(points, dtype=np.float64).reshape(-1, len(shape))
    radii = np.broadcast_to(np.asarray(radius, dtype=np.float64), (len(points),))
    sp = np.ones(len(shape)) if spacing is None else np.asarray(spacing, np.float64)
    grid = np.indices(shape, dtype=np.float64)
    best = np.full(shape, np.inf)
    own = np.zeros(shape, dtype=np.int64)
    for k, (p, r) in enumerate(zip(points, radii)):
        d2 = np.zeros(shape)
        for d in range(len(shape)):
            d2 = d2 + ((grid[d] - p[d]) * sp[d]) ** 2
        take = (d2 <= r * r) & (d2 < best)
        best[take] = d2[take]
        own[take] = k + 1
    return own if owner else own > 0


def random_points(rng, shape, n, margin=3.0):
    lo = -margin
    hi = np.array(shape) + margin
    return rng.uniform(lo, hi, size=(n, len(shape)))


@pytest.mark.parametrize("shape", [(33, 40), (7, 19, 23), (5, 6, 7, 8), (50,), (1, 1, 30)])
@pytest.mark.parametrize("radius", [0.0, 0.5, 1.0, 2.5, 4.0])
def test_matches_reference(shape, radius):
    rng = np.random.default_rng(len(shape) * 100 + int(radius * 10))
    pts = random_points(rng, shape, 12)
    np.testing.assert_array_equal(voxa.balls(shape, pts, radius), reference(shape, pts, radius))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_owner_and_threads(threads):
    rng = np.random.default_rng(7)
    shape = (17, 31, 29)
    pts = random_points(rng, shape, 40)
    radii = rng.uniform(0, 6, size=40)
    voxa.set_threads(threads)
    try:
        got = voxa.balls(shape, pts, radii, owner=True)
    finally:
        voxa.set_threads(0)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, reference(shape, pts, radii, owner=True))


def test_owner_ties_go_to_lower_index():
    # Two points equidistant from the voxels between them.
    pts = [[5.0, 4.0], [5.0, 6.0], [5.0, 6.0]]
    got = voxa.balls((11, 11), pts, 3, owner=True)
    np.testing.assert_array_equal(got, reference((11, 11), pts, 3, owner=True))
    assert got[5, 5] == 1 and got[5, 6] == 2 and not (got == 3).any()


@pytest.mark.parametrize("spacing", [(2.0, 1.0, 1.0), (0.3, 0.7, 1.1), (5.0, 0.25, 1.0)])
def test_anisotropic(spacing):
    rng = np.random.default_rng(3)
    shape = (9, 21, 18)
    pts = random_points(rng, shape, 10)
    for r in (1.0, 2.2, 3.7):
        np.testing.assert_array_equal(voxa.balls(shape, pts, r, spacing=spacing),
                                      reference(shape, pts, r, spacing))


def test_boundary_exactness_integer_points():
    # Integer centres and radii: voxels exactly at distance r are inside.
    shape = (21, 21, 21)
    pts = [[10, 10, 10]]
    got = voxa.balls(shape, pts, 5)
    assert got[10, 10, 15] and got[10, 15, 10] and got[15, 10, 10] and got[13, 14, 10]
    assert not got[10, 10, 16]
    np.testing.assert_array_equal(got, reference(shape, pts, 5))
    assert got.sum() == 515  # lattice points in a ball of radius 5


def test_points_outside_and_far_away():
    shape = (10, 12)
    pts = [[-3.0, 5.0], [12.5, -2.0], [1e12, 3.0], [-1e300, 0.0], [5.0, 11.9]]
    with np.errstate(over="ignore"):
        want = reference(shape, pts, 4.0)
    np.testing.assert_array_equal(voxa.balls(shape, pts, 4.0), want)


def test_huge_radius_fills_the_volume():
    assert voxa.balls((6, 7, 8), [[2.5, 3.5, 4.5]], 1e6).all()


def test_no_points_and_empty_shapes():
    assert not voxa.balls((5, 6), np.empty((0, 2)), 3).any()
    assert voxa.balls((0, 6), [[1, 2]], 3).shape == (0, 6)


def test_table_input_and_out_parameter():
    table = {"x": [3.0, 10.0], "y": [4.0, 2.0], "z": [1.0, 2.0], "ID": [7, 8]}
    want = reference((4, 8, 14), [[1, 4, 3], [2, 2, 10]], 2.0)
    np.testing.assert_array_equal(voxa.balls((4, 8, 14), table, 2.0), want)
    out = np.full((4, 8, 14), 9, dtype=np.uint8)
    assert voxa.balls((4, 8, 14), table, 2.0, out=out) is out
    np.testing.assert_array_equal(out, want.astype(np.uint8))
    strided = np.ones((4, 8, 28), dtype=np.uint8)[:, :, ::2]
    voxa.balls((4, 8, 14), table, 2.0, out=strided)
    np.testing.assert_array_equal(strided, want.astype(np.uint8))


def test_owner_int64_output():
    out = np.empty((6, 6), dtype=np.int64)
    voxa.balls((6, 6), [[2, 2], [3, 3]], 2, owner=True, out=out)
    np.testing.assert_array_equal(out, reference((6, 6), [[2, 2], [3, 3]], 2, owner=True))


@pytest.mark.parametrize("bad, match", [
    (dict(points=[[np.nan, 1, 1]]), "non-finite"),
    (dict(points=[[1, np.inf, 1]]), "non-finite"),
    (dict(radius=-1), "radius"),
    (dict(radius=np.nan), "radius"),
    (dict(spacing=(1, 0, 1)), "spacing"),
    (dict(spacing=(1, 1)), "spacing"),
    (dict(points=[[1, 2]]), "shape"),
    (dict(radius=[1, 2, 3]), "radius"),
])
def test_bad_input(bad, match):
    args = dict(shape=(4, 5, 6), points=[[1.0, 2.0, 3.0]], radius=2)
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        voxa.balls(**args)


def test_bad_out_dtype():
    with pytest.raises(ValueError, match="mask output"):
        voxa.balls((4, 4), [[1, 1]], 1, out=np.zeros((4, 4), np.float32))
    with pytest.raises(ValueError, match="owner output"):
        voxa.balls((4, 4), [[1, 1]], 1, owner=True, out=np.zeros((4, 4), np.uint8))


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(1, 12), min_size=1, max_size=4),
       n=st.integers(0, 6), seed=st.integers(0, 2**32 - 1), r=st.floats(0, 5),
       owner=st.booleans())
def test_random_shapes(shape, n, seed, r, owner):
    shape = tuple(shape)
    rng = np.random.default_rng(seed)
    pts = random_points(rng, shape, n)
    np.testing.assert_array_equal(voxa.balls(shape, pts, r, owner=owner),
                                  reference(shape, pts, r, owner=owner))
