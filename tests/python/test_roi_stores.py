"""extract_patches' copy paths (src/ops/roi/roi_copy.c, roi_order.c) are all
equal to NumPy fancy indexing. Environment switches force each path that the
automatic choice would only take for outputs past the last-level cache or
bands past L2:

- VOXA_ROI_ORDER = slabs (patches cut into slabs along their slowest axis,
  slabs sorted by image plane) | patches (the Z-order of patches);
- VOXA_ROI_STORES = plain (the plain-store fallback) | stream-sse2 (16-byte
  streaming stores) | stream (AVX-512 line stores for runs of 64 q bytes
  where the CPU has it, else SSE2).

Across element sizes 1/2/4/8, runs of 16..192 bytes (and 24: never
streamed), `out` at every 16-byte offset from a cache line and misaligned,
1 and 3 threads, trailing channel axes, and patches reaching outside with
every fill mode. `out` sits between guard bytes and is prefilled, so a byte
written outside its place, or never, shows (the streaming kernels write the
partial first and last line of each unit with plain stores)."""
import numpy as np
import pytest

import voxa

from test_roi import ref_extract

ORDERS = ["slabs", "patches", None]
STORES = ["plain", "stream-sse2", "stream", None]
RUNS = [16, 24, 32, 48, 64, 128, 192]  # bytes per run (one patch row)
OFFSETS = [0, 16, 32, 48, 8]           # bytes from a cache line; 8: not 16-aligned
DTYPES = [np.uint8, np.uint16, np.float32, np.float64]


@pytest.fixture(params=[(o, s) for o in ORDERS for s in STORES],
                ids=[f"{o}-{s}" for o in ORDERS for s in STORES])
def path(request, monkeypatch):
    order, stores = request.param
    for name, value in (("VOXA_ROI_ORDER", order), ("VOXA_ROI_STORES", stores)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return request.param


def fancy(img, corners, size):
    k = len(size)
    idx = []
    for d in range(k):
        shape = [1] * (k + 1)
        shape[d + 1] = size[d]
        idx.append(corners[:, d].reshape((-1,) + (1,) * k) + np.arange(size[d]).reshape(shape))
    return img[tuple(idx)]


def placed_out(shape, dtype, offset):
    """An uninitialised-looking `out` (0xA5 bytes) starting `offset` bytes
    after a 64-byte boundary, with 64 guard bytes on either side."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.full(nbytes + 256, 0xA5, np.uint8)
    start = (-buf.ctypes.data) % 64 + 64 + offset
    return buf, start, buf[start:start + nbytes].view(dtype).reshape(shape)


def check_into(img, corners, size, want, offset, **kw):
    buf, start, out = placed_out(want.shape, img.dtype, offset)
    got = voxa.extract_patches(img, corners, size, out=out, **kw)
    assert got is out
    np.testing.assert_array_equal(out, want)
    assert (buf[:start] == 0xA5).all() and (buf[start + want.nbytes:] == 0xA5).all()


def corners(rng, shape, size, n, margin=0):
    return np.stack([rng.integers(-margin, s - z + margin, n, endpoint=True)
                     for s, z in zip(shape, size)], 1)


@pytest.mark.parametrize("t", [1, 3])
def test_inside_every_run_dtype_and_offset(path, t):
    rng = np.random.default_rng(t)
    voxa.set_threads(t)
    try:
        for dt in DTYPES:
            es = np.dtype(dt).itemsize
            for rb in RUNS:
                if rb % es:
                    continue
                w = rb // es
                img = (rng.integers(0, 120, (9, 11, w + 5)) - 3).astype(dt)
                size = (3, 4, w)
                c = corners(rng, img.shape, size, 300)
                want = fancy(img, c, size)
                for off in OFFSETS:
                    check_into(img, c, size, want, off)
    finally:
        voxa.set_threads(0)


@pytest.mark.parametrize("t", [1, 3])
def test_many_blocks_and_channels(path, t):
    # Enough output for several thread blocks; a channel axis taken whole
    # (runs of w * 3 elements); a 4-d patch (two outer axes before the rows).
    rng = np.random.default_rng(10 + t)
    voxa.set_threads(t)
    try:
        img = rng.integers(0, 60000, (24, 40, 70), dtype=np.uint16)
        c = corners(rng, img.shape, (5, 6, 32), 3000)
        want = fancy(img, c, (5, 6, 32))
        for off in (0, 16, 48, 2):
            check_into(img, c, (5, 6, 32), want, off)
        rgb = rng.integers(0, 255, (12, 30, 40, 3), dtype=np.uint8)
        c = corners(rng, rgb.shape[:3], (3, 4, 16), 800)
        check_into(rgb, c, (3, 4, 16), fancy(rgb, c, (3, 4, 16)), 16)
        vol = rng.standard_normal((6, 7, 8, 20)).astype(np.float32)
        c = corners(rng, vol.shape, (2, 3, 4, 16), 900)
        check_into(vol, c, (2, 3, 4, 16), fancy(vol, c, (2, 3, 4, 16)), 32)
    finally:
        voxa.set_threads(0)


@pytest.mark.parametrize("mode", ["constant", "nearest", "reflect", "clip"])
def test_patches_reaching_outside(path, mode):
    # Inside patches take the fast kernels (in slabs or whole), the others
    # the index-map gather, in the same call.
    rng = np.random.default_rng(20)
    img = rng.integers(-30000, 30000, (10, 14, 40), dtype=np.int16)
    size = (3, 5, 32)
    c = corners(rng, img.shape, size, 400, margin=0 if mode == "clip" else 4)
    if mode == "clip":
        c = c + rng.integers(-9, 9, c.shape)
    want = ref_extract(img, c, size, mode=mode, cval=-5)
    for t in (1, 3):
        voxa.set_threads(t)
        try:
            check_into(img, c, size, want, 16, mode=mode, cval=-5)
        finally:
            voxa.set_threads(0)


def test_strided_inputs(path):
    rng = np.random.default_rng(30)
    base = rng.standard_normal((16, 20, 50))
    for img in (base[::-1], base[:, ::2], np.asfortranarray(base), base[..., 1:33]):
        c = corners(rng, img.shape, (3, 4, 8), 500)
        check_into(img, c, (3, 4, 8), fancy(img, c, (3, 4, 8)), 0)


def test_unknown_switch_values_are_the_default(monkeypatch):
    rng = np.random.default_rng(40)
    img = rng.integers(0, 255, (8, 9, 40), dtype=np.uint8)
    c = corners(rng, img.shape, (2, 3, 32), 300)
    monkeypatch.setenv("VOXA_ROI_ORDER", "bogus")
    monkeypatch.setenv("VOXA_ROI_STORES", "bogus")
    check_into(img, c, (2, 3, 32), fancy(img, c, (2, 3, 32)), 16)
