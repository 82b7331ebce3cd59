"""The fast paths of the integer EDT (src/core/sqdt.c) at the places where
they switch, equal to scipy to the bit:

- lines split at their zeros (runs between background voxels are separate
  envelopes; zeros skip the envelope): all-zero, all-one, alternating and
  single-voxel runs, runs touching either end, lines of length 1 and 2;
- tiles of columns gathered from the strided axes: widths around the tile
  size (partial last tiles);
- float32 output from integer squared distances: sqrtf below 2^24, double
  above (distances around 4096 voxels);
- 2-D, 3-D, 4-D; 1 and 3 threads; float32, float64 and uint32 (squared).
"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa


def check(a):
    """Every unit-spacing output of voxa equal to scipy's (float32: scipy's
    float64 rounded once; uint32 squared: the exact integers)."""
    a = np.asarray(a, bool)
    want = ndi.distance_transform_edt(a)
    got = voxa.distance_transform_edt(a)
    assert np.array_equal(got, want)
    got32 = voxa.distance_transform_edt(a, dtype=np.float32)
    assert got32.dtype == np.float32
    assert np.array_equal(got32, want.astype(np.float32))
    if (~a).any():
        # the exact integer squared distances, from scipy's nearest voxels
        _, ind = ndi.distance_transform_edt(a, return_indices=True)
        grid = np.indices(a.shape)
        d2 = ((ind.astype(np.int64) - grid) ** 2).sum(axis=0)
        sq = voxa.distance_transform_edt(a, squared=True, dtype=np.uint32)
        assert np.array_equal(sq.astype(np.int64), d2)


# widths around the tile of gathered columns (16 and 64) and the fast axis
WIDTHS = [1, 2, 15, 16, 17, 63, 64, 65]


@pytest.mark.parametrize("w", WIDTHS)
@pytest.mark.parametrize("p", [0.0, 0.3, 0.9, 0.999, 1.0])
def test_random_3d_tile_widths(w, p, threads):
    rng = np.random.default_rng(w)
    a = rng.random((9, 7, w)) < p
    check(a)
    check(a.transpose(2, 1, 0).copy())  # the width on the slow axis


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (2, 2), (1, 1, 1), (2, 1, 2),
                                   (1, 2, 1, 2), (3, 1, 4, 5), (2, 3, 4, 5)])
def test_short_lines_all_patterns(shape, threads):
    # every mask of the shape when small, else many random ones
    n = int(np.prod(shape))
    if n <= 12:
        for bits in range(2 ** n):
            a = np.array([(bits >> i) & 1 for i in range(n)], bool).reshape(shape)
            check(a)
    else:
        rng = np.random.default_rng(n)
        for p in (0.1, 0.5, 0.9, 0.99):
            check(rng.random(shape) < p)


def run_masks(n):
    """Lines built from runs: foreground runs of every length up to n,
    touching the start, the end, both, neither; alternating voxels."""
    rows = []
    for length in range(1, n + 1):
        for start in (0, 1, n - length):
            if 0 <= start <= n - length:
                r = np.zeros(n, bool)
                r[start:start + length] = True
                rows.append(r)
    rows.append(np.arange(n) % 2 == 0)
    rows.append(np.arange(n) % 2 == 1)
    rows.append(np.arange(n) % 3 != 0)
    return np.array(rows)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 33])
def test_runs_between_zeros(n, threads):
    m = run_masks(n)
    check(m)            # runs along the contiguous axis
    check(m.T.copy())   # runs along the strided axis (the envelope passes)
    # the same runs along the middle and first axes of a 3-D volume
    check(np.repeat(m.T[:, :, None], 3, axis=2))
    check(np.repeat(m.T[:, None, :], 2, axis=1))


@pytest.mark.parametrize("shape", [(30, 41, 17), (5, 6, 7, 8)])
def test_blobs_and_empty_lines(shape, threads):
    # foreground blobs large enough that whole lines hold no zero (infinite
    # after the first pass) next to lines of zeros
    rng = np.random.default_rng(len(shape))
    seeds = rng.random(shape) < 0.01
    d = ndi.distance_transform_edt(~seeds)
    a = d > 1.5
    a[:, :3] = True   # whole planes of foreground
    a[..., -2:] = False
    check(a)
    check(np.ones(shape, bool) & (np.indices(shape)[0] > 0))  # one zero plane


@pytest.mark.parametrize("n", [4090, 4097, 5000])
def test_float32_above_2_24(n, threads):
    # squared distances cross 2^24 = 4096^2: float32 comes from the double
    # square root there, from sqrtf below; both must equal scipy's rounding
    a = np.ones((2, n), bool)
    a[0, 0] = False
    check(a)
    b = np.ones((n, 3), bool)
    b[-1, 1] = False
    check(b)
    # squares of 1-D distances are exact either way; sums of two squares
    # above 2^24 are not (thousands of voxels here would differ by 1 ulp if
    # sqrtf were used on the rounded float)
    c = np.ones((40, n), bool)
    c[0, 0] = False
    check(c)


def test_float32_sqrt_rounding_every_integer_below_2_24():
    # the identity the float32 path relies on: one float rounding of the
    # square root equals the double square root rounded to float
    i = np.arange(1 << 24, dtype=np.uint32)
    assert np.array_equal(np.sqrt(i.astype(np.float32)), np.sqrt(i.astype(np.float64))
                          .astype(np.float32))
