"""zarr: writing and reading a (190, 512, 512) uint16 chunked array (95 MiB,
chunks (64, 256, 256)), voxa's C Zarr layer (libvoxa through ctypes, the
calls the chunk executor will make) vs zarr-python 3 with the same codec and
format, side by side in this process; and a region read that cuts chunks.

Data: a smooth background with blobs and noise (compresses like a
microscopy stack, ~50-60% with lz4+shuffle). Files go to a scratch folder
(VOXA_BENCH_DIR, default under /tmp); the page cache is warm for reads.
Threads: voxa uses its default thread count (VOXA_NUM_THREADS / OpenMP);
zarr-python its default async/thread settings.
"""
import os
import shutil
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "tests", "python"))
from common import measure, table  # noqa: E402

import zarr  # noqa: E402
from zarr.codecs import BloscCodec, ZstdCodec  # noqa: E402

import zarr_ctypes  # noqa: E402

SHAPE = (190, 512, 512)
CHUNKS = (64, 256, 256)
CLI = os.environ.get("VOXA_CLI", os.path.join(here, "..", "build", "voxa"))


def volume():
    rng = np.random.default_rng(0)
    z, y, x = np.ogrid[: SHAPE[0], : SHAPE[1], : SHAPE[2]]
    img = 800 + 100 * np.sin(x / 40.0) * np.cos(y / 55.0) + 0 * z
    img = np.broadcast_to(img, SHAPE).astype(np.float32)
    for _ in range(300):
        c = rng.uniform(0, 1, 3) * SHAPE
        sl = tuple(slice(max(0, int(ci) - 6), int(ci) + 6) for ci in c)
        img[sl] += 2000
    img += rng.normal(0, 30, SHAPE).astype(np.float32)
    return np.clip(img, 0, 65535).astype(np.uint16)


def du(p):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(p) for f in fs)


def main():
    Z = zarr_ctypes.load(os.path.dirname(os.path.abspath(CLI)))
    d = os.environ.get("VOXA_BENCH_DIR") or tempfile.mkdtemp(prefix="voxa-bench-zarr-")
    a = volume()
    mb = a.nbytes / 2**20
    cases = [("blosc lz4 shuffle", dict(codec="blosc", cname="lz4"),
              BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")),
             ("zstd level 1", dict(codec="zstd", level=1), ZstdCodec(level=1))]
    try:
        for name, vopt, zcodec in cases:
            pv, pz = os.path.join(d, "v.zarr"), os.path.join(d, "z.zarr")

            def zarr_write():
                arr = zarr.create_array(store=pz, shape=SHAPE, chunks=CHUNKS, dtype=a.dtype,
                                        compressors=zcodec, overwrite=True)
                arr[...] = a

            rows = [("voxa zarr write", measure(lambda: Z.save(pv, a, chunks=CHUNKS, **vopt),
                                                repeats=3), ""),
                    ("zarr-python write", measure(zarr_write, repeats=3), ""),
                    ("voxa zarr write, fsync", measure(
                        lambda: Z.save(pv, a, chunks=CHUNKS, fsync=True, **vopt), repeats=3),
                     "each chunk file and its folder flushed before rename")]
            ratio = du(pv) / a.nbytes * 100
            rows[0] = (rows[0][0], rows[0][1], f"{ratio:.0f}% of raw")
            print(table(f"write {SHAPE} uint16 ({mb:.0f} MiB), chunks {CHUNKS}, {name}, "
                        "Zarr v3", rows, "voxa zarr write"))
            assert np.array_equal(zarr.open_array(pv, mode="r")[...], a)
            assert np.array_equal(Z.load(pz), a)
            lo, ext = (50, 100, 200), (64, 300, 300)
            h = Z.open(pv)
            zr = zarr.open_array(pz, mode="r")
            rows = [("voxa zarr read", measure(lambda: (Z.load(pv), None)[1], repeats=3), ""),
                    ("zarr-python read", measure(lambda: (zr[...], None)[1], repeats=3), ""),
                    ("voxa region read", measure(lambda: (Z.read(h, lo, ext, "uint16"), None)[1],
                                                 repeats=5), f"{ext} at {lo}"),
                    ("zarr-python region read",
                     measure(lambda: (zr[50:114, 100:400, 200:500], None)[1], repeats=5),
                     f"{ext} at {lo}")]
            Z.close(h)
            print(table(f"read {SHAPE} uint16 ({mb:.0f} MiB), chunks {CHUNKS}, {name}",
                        rows, "voxa zarr read"))
    finally:
        if not os.environ.get("VOXA_BENCH_DIR"):
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
