"""io: writing and reading the W1 label volume ((20, 1024, 1024) int32,
80 MiB) and a uint16 image of the same shape as .npy and TIFF, voxa vs numpy
and tifffile side by side in this process; and reading a 1e6-row points CSV,
voxa vs numpy.loadtxt (and pandas when installed).

Files go to a scratch folder (VOXA_BENCH_DIR, default a temporary folder
under /tmp); the OS page cache is warm for reads (the warm-up read fills it),
so the read figures measure decoding + copying, not the disk.
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import tifffile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import measure, table  # noqa: E402

import voxa  # noqa: E402

SHAPE = (20, 1024, 1024)


def volumes():
    rng = np.random.default_rng(0)
    labels = np.zeros(SHAPE, np.int32)          # W1-like: sparse labels
    idx = rng.integers(0, labels.size, labels.size // 20)
    labels.flat[idx] = rng.integers(1, 500, idx.size)
    img = (rng.standard_normal(SHAPE) * 200 + 1000).astype(np.uint16)
    return {"int32 labels": labels, "uint16 image": img}


def drop(fn):
    """Call fn and drop its result, so the peak RSS of the next measurement
    does not include this one's array."""
    return lambda: (fn(), None)[1]


def bench_arrays(d):
    out = []
    vols = volumes()
    for name in list(vols):
        a = vols.pop(name)  # only the array being measured stays resident
        npy, tif, tifz = (os.path.join(d, f) for f in ("a.npy", "a.tif", "z.tif"))
        mb = a.nbytes / 2**20
        rows = [
            ("voxa .npy write", measure(lambda: voxa.imwrite(npy, a)), ""),
            ("numpy np.save", measure(lambda: np.save(npy, a)), ""),
            ("voxa .tif write", measure(lambda: voxa.imwrite(tif, a)), "uncompressed"),
            ("tifffile.imwrite", measure(lambda: tifffile.imwrite(tif, a, photometric="minisblack")),
             "uncompressed"),
            ("voxa .tif deflate write", measure(lambda: voxa.imwrite(tifz, a, compression="deflate"),
                                                repeats=3),
             ""),
            ("tifffile zlib write",
             measure(lambda: tifffile.imwrite(tifz, a, photometric="minisblack", compression="zlib"),
                     repeats=3), "level 6"),
        ]
        voxa.imwrite(tifz, a, compression="deflate")
        ratio = os.path.getsize(tifz) / a.nbytes * 100
        rows[4] = (rows[4][0], rows[4][1], f"level 6, {ratio:.0f}% of raw")
        out.append(table(f"write {name} {SHAPE} ({mb:.0f} MiB)", rows, "voxa .npy write"))
        voxa.imwrite(npy, a)
        voxa.imwrite(tif, a)
        voxa.imwrite(tifz, a, compression="deflate")
        rows = [
            ("voxa .npy read", measure(drop(lambda: voxa.imread(npy))), ""),
            ("numpy np.load", measure(drop(lambda: np.load(npy))), ""),
            ("voxa .tif read", measure(drop(lambda: voxa.imread(tif))), "uncompressed"),
            ("tifffile.imread", measure(drop(lambda: tifffile.imread(tif))), "uncompressed"),
            ("voxa .tif deflate read", measure(drop(lambda: voxa.imread(tifz))), ""),
            ("tifffile deflate read", measure(drop(lambda: tifffile.imread(tifz))), ""),
        ]
        assert np.array_equal(voxa.imread(tifz), a) and np.array_equal(tifffile.imread(tifz), a)
        out.append(table(f"read {name} {SHAPE} ({mb:.0f} MiB)", rows, "voxa .npy read"))
    return out


def bench_csv(d):
    n = 1_000_000
    rng = np.random.default_rng(1)
    pts = np.column_stack([rng.uniform(0, 1024, (n, 3)), rng.uniform(2, 8, n)])
    p = os.path.join(d, "pts.csv")
    np.savetxt(p, pts, delimiter=",", header="x,y,z,radius", comments="", fmt="%.6f")
    mb = os.path.getsize(p) / 2**20
    rows = [("voxa.read_csv", measure(drop(lambda: voxa.read_csv(p))), "")]
    rows.append(("numpy.loadtxt", measure(drop(lambda: np.loadtxt(p, delimiter=",", skiprows=1)),
                                          repeats=1), ""))
    try:
        import pandas as pd
        rows.append(("pandas.read_csv", measure(drop(lambda: pd.read_csv(p))), "C engine"))
    except ImportError:
        pass
    got = voxa.read_csv(p)
    assert np.array_equal(np.column_stack([got[k] for k in ("x", "y", "z", "radius")]),
                          np.loadtxt(p, delimiter=",", skiprows=1))
    return [table(f"read CSV, {n} rows x 4 columns ({mb:.0f} MiB)", rows, "voxa.read_csv")]


def main():
    d = os.environ.get("VOXA_BENCH_DIR") or tempfile.mkdtemp(prefix="voxa-bench-io-")
    try:
        for t in bench_arrays(d) + bench_csv(d):
            print(t)
    finally:
        if not os.environ.get("VOXA_BENCH_DIR"):
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
