"""extract_patches processes >= 256 patches in the order of the image cell
their corner falls in (src/ops/roi/roi_order.c, voxa__roi_order). The order must
never change the result: every patch lands in its own row of `out`, exactly
once. These tests sit at the order's switches: 255/256/257 patches, the band
size that picks sorting by the slowest axis or the Morton order, cell
counts past the 16-bit Morton code (tiles coarsened), axes ordered by stride
(Fortran order, negative strides), corners outside the image (keys clamped),
a zero-length axis; `out` is prefilled with a sentinel so a patch written
twice in place of another, or never, shows."""
import numpy as np
import pytest

import voxa

from test_roi import ref_extract


@pytest.fixture(params=[1, 3], ids=["t1", "t3"])
def threads(request):
    voxa.set_threads(request.param)
    yield request.param
    voxa.set_threads(0)


def check(img, coords, size, mode="error", cval=0):
    want = ref_extract(img, coords, size, mode=mode, cval=cval)
    out = np.full(want.shape, 77, img.dtype)
    got = voxa.extract_patches(img, coords, size, mode=mode, cval=cval, out=out)
    assert got is out
    np.testing.assert_array_equal(got, want)


def corners(rng, shape, size, n, margin=0):
    return np.stack([rng.integers(-margin, s - z + margin, n, endpoint=True)
                     for s, z in zip(shape, size)], 1)


@pytest.mark.parametrize("n", [1, 255, 256, 257, 1000])
def test_patch_count_switch(n, threads):
    rng = np.random.default_rng(n)
    img = rng.integers(0, 60000, (40, 50, 60), dtype=np.uint16)
    check(img, corners(rng, img.shape, (5, 6, 7), n), (5, 6, 7))


@pytest.mark.parametrize("shape,size", [((70, 70, 70), (1, 1, 1)),      # 343,000 cells
                                        ((300000, 2), (1, 1)),           # 300,000 cells
                                        ((65536, 1), (1, 1)),            # exactly the limit
                                        ((65537, 1), (1, 1))])           # one past it
def test_cells_past_the_bucket_limit(shape, size, threads):
    rng = np.random.default_rng(1)
    img = rng.integers(0, 255, shape, dtype=np.uint8)
    check(img, corners(rng, shape, size, 3000), size)


def test_stride_order_fortran_and_negative(threads):
    rng = np.random.default_rng(2)
    base = rng.standard_normal((30, 40, 50)).astype(np.float32)
    size = (4, 5, 6)
    for img in (np.asfortranarray(base), base[::-1, :, ::-2], base.transpose(2, 0, 1),
                base[:, ::-1]):
        check(img, corners(rng, img.shape, size, 700), size)


@pytest.mark.parametrize("mode", ["constant", "nearest", "reflect", "clip"])
def test_corners_outside(mode, threads):
    rng = np.random.default_rng(3)
    img = rng.integers(-100, 100, (20, 30, 40), dtype=np.int16)
    size = (6, 7, 8)
    m = 0 if mode == "clip" else 10
    c = corners(rng, img.shape, size, 600, margin=m)
    if mode == "clip":
        c = c + rng.integers(-30, 30, c.shape)
    check(img, c, size, mode=mode, cval=5)


def test_zero_length_axis_and_trailing_axes(threads):
    rng = np.random.default_rng(4)
    empty = np.zeros((0, 9), np.int32)
    check(empty, np.stack([rng.integers(-5, 5, 300), rng.integers(-3, 9, 300)], 1), (2, 3),
          mode="constant", cval=-1)
    img = rng.integers(0, 9, (30, 40, 3), dtype=np.uint8)  # a channel axis taken whole
    check(img, corners(rng, img.shape[:2], (4, 4), 500), (4, 4))


@pytest.mark.parametrize("size", [(4, 5, 6), (4, 2, 2), (1, 1, 1)])
def test_morton_branch(size, threads):
    # A (20,300,500) float64 image: a band of 4 planes is 4.8 MB, past the
    # 2 MiB under which patches are sorted by plane alone; (4,2,2) and
    # (1,1,1) cells need more than 16 Morton bits (tiles coarsened); a
    # (1,1,1) patch's band is one plane, 1.2 MB: sorted by plane.
    rng = np.random.default_rng(5)
    img = rng.standard_normal((20, 300, 500))
    check(img, corners(rng, img.shape, size, 1500), size)
    check(img, corners(rng, img.shape, size, 800, margin=3), size, mode="reflect")
    check(img[::-1, ::2], corners(rng, img[::-1, ::2].shape, size, 600), size)
