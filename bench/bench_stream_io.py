"""Out-of-core storage: the same streamed label (--mem-limit) with its input
and output in each store format, side by side: .npy (pread/pwrite), TIFF
(read by strips through libtiff, written in place as BigTIFF), Zarr (zstd
chunks), and Zarr with a 3-level pyramid. Wall time and peak RSS of the
process (GNU time), rounds interleaved, median and min-max; the ratio is to
the .npy run of the same round. Every output is checked equal to the .npy
one. --quick: a smaller volume."""
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import tifffile
from scipy import ndimage as ndi

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import voxa  # noqa: E402

CLI = os.environ.get("VOXA_CLI", os.path.join(os.path.dirname(__file__), "..", "build", "voxa"))
quick = "--quick" in sys.argv
shape = (64, 512, 512) if quick else (128, 1024, 1024)
rounds = 3 if quick else 5
limit = "32M" if quick else "128M"


def timed(args):
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", CLI, *args], capture_output=True,
                       text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    sec, kb = r.stderr.strip().splitlines()[-1].split()
    return float(sec), int(kb) / 1024


def load(path):
    if path.endswith(".npy"):
        return np.load(path)
    if path.endswith(".tif"):
        return tifffile.imread(path)
    return voxa.imread(path)


with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(0)
    blobs = (ndi.gaussian_filter(rng.random(shape, dtype=np.float32), 4) > 0.5).astype(np.uint8)
    src = {f: os.path.join(tmp, "m." + f) for f in ("npy", "tif", "zarr")}
    np.save(src["npy"], blobs)
    tifffile.imwrite(src["tif"], blobs, rowsperstrip=64)
    voxa.imwrite(src["zarr"], blobs)
    cases = {
        ".npy -> .npy": [src["npy"], "o.npy"],
        ".tif -> .tif": [src["tif"], "o.tif"],
        ".zarr -> .zarr": [src["zarr"], "o.zarr"],
        ".zarr -> .zarr --pyramid 3": [src["zarr"], "p.zarr", "--pyramid", "3"],
    }
    print(f"## Streamed label by store format ({shape} uint8 blobs, {blobs.nbytes >> 20} MiB; "
          f"--mem-limit {limit}; {rounds} interleaved rounds; load "
          f"{os.getloadavg()[0]:.1f})\n")
    print("| input -> output | s (min-max) | peak MiB | time / .npy run |")
    print("|---|---|---|---|")
    res = {name: [] for name in cases}
    for _ in range(rounds):
        for name, (inp, out, *extra) in cases.items():
            res[name].append(timed(["label", inp, "-o", os.path.join(tmp, out), "--mem-limit",
                                    limit, *extra]))
    ref = load(os.path.join(tmp, "o.npy"))
    for name, (inp, out, *extra) in cases.items():
        assert np.array_equal(load(os.path.join(tmp, out)), ref), name
        ts = [t for t, _ in res[name]]
        ratios = [a[0] / b[0] for a, b in zip(res[name], res[".npy -> .npy"])]
        print(f"| {name} | {statistics.median(ts):.2f} ({min(ts):.2f}-{max(ts):.2f}) | "
              f"{statistics.median(m for _, m in res[name]):.0f} | "
              f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) |")
    print()
