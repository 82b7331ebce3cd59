"""3-D float32 EDT with sampling (src/core/sqdt.c, load_pair): between passes
each voxel keeps, in the output's 4 bytes, the row distance of its nearest
target so far and its offset along axis 1 (16 bits each), and every pass
rebuilds the double value from them with the operations the double path
stores. So the float32 result (plain and squared) must equal, bit for bit,
the float64 result cast to float32 (what the 8 B/voxel path gave), and
scipy's where the spacings are exact (integers, halves).

Cases: random and few-target masks, rows and planes with no target, extent-1
axes, rows of 0xFFFF voxels and more (the double path instead), anisotropic,
random and exact samplings, 1 and 3 threads."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

SAMPLINGS = [(1.5, 1.0, 0.7), (0.3, 2.7, 1.1), (2.0, 1.0, 0.5), (1.0, 3.0, 1.0),
             (1e-3, 1e3, 0.25)]


def masks(shape, seed):
    rng = np.random.default_rng(seed)
    out = [rng.random(shape) < 0.8, rng.random(shape) < 0.995]
    few = np.ones(shape, bool)
    for _ in range(2):
        few[tuple(rng.integers(0, s) for s in shape)] = False
    out.append(few)
    lines = rng.random(shape) < 0.9
    lines[:, ::3] = True       # rows with no target
    lines[shape[0] // 2] = True  # a plane with none
    lines.flat[-1] = False
    out.append(lines)
    return out


def exact(sp):
    return all(float(s * 2).is_integer() for s in sp)


@pytest.mark.parametrize("shape", [(17, 40, 33), (4, 90, 7), (1, 25, 30), (25, 1, 30),
                                   (25, 30, 1), (2, 2, 2)])
@pytest.mark.parametrize("sp", SAMPLINGS)
def test_pairs_equal_float64(shape, sp, threads):
    for a in masks(shape, sum(shape)):
        d64 = voxa.distance_transform_edt(a, sampling=sp)
        got = voxa.distance_transform_edt(a, sampling=sp, dtype=np.float32)
        assert got.dtype == np.float32 and np.array_equal(got, d64.astype(np.float32))
        sq64 = voxa.distance_transform_edt(a, sampling=sp, squared=True)
        sq = voxa.distance_transform_edt(a, sampling=sp, squared=True, dtype=np.float32)
        assert np.array_equal(sq, sq64.astype(np.float32))
        if exact(sp):
            want = ndi.distance_transform_edt(a, sampling=sp)
            assert np.array_equal(got, want.astype(np.float32))


def test_pairs_into_strided_output():
    a = masks((9, 31, 20), 3)[0]
    sp = (1.5, 1.0, 0.7)
    out = np.full((20, 31, 9), -1.0, np.float32).T  # not C-contiguous
    voxa.distance_transform_edt(a, sampling=sp, squared=True, dtype=np.float32, distances=out)
    want = voxa.distance_transform_edt(a, sampling=sp, squared=True).astype(np.float32)
    assert np.array_equal(out, want)


@pytest.mark.parametrize("shape", [(2, 2, 0xFFFF), (1, 0xFFFF, 2), (2, 3, 0xFFFE)])
def test_rows_past_16_bits(shape):
    # rows of 0xFFFF voxels or more: the double storage instead (0xFFFE: pairs)
    a = np.ones(shape, bool)
    a[0, 0, 0] = False
    a[-1, -1, -1] = False
    sp = (1.0, 0.5, 1.5)
    got = voxa.distance_transform_edt(a, sampling=sp, dtype=np.float32)
    assert np.array_equal(got, ndi.distance_transform_edt(a, sampling=sp).astype(np.float32))


@pytest.mark.parametrize("shape", [(40, 33), (1, 50), (50, 1)])
@pytest.mark.parametrize("sp", [(1.5, 0.7), (2.0, 0.5), (0.3, 2.7)])
def test_2d_row_distances(shape, sp, threads):
    # 2-D keeps the row distance alone (c.buf_dist), plain and squared
    for a in masks((1,) + shape, sum(shape)):
        a = a[0]
        d64 = voxa.distance_transform_edt(a, sampling=sp)
        got = voxa.distance_transform_edt(a, sampling=sp, dtype=np.float32)
        assert np.array_equal(got, d64.astype(np.float32))
        sq = voxa.distance_transform_edt(a, sampling=sp, squared=True, dtype=np.float32)
        assert np.array_equal(sq, voxa.distance_transform_edt(a, sampling=sp, squared=True)
                              .astype(np.float32))
