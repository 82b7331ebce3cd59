"""Streamed edt, fill holes, roi and paste (src/stream/run_*.c) vs the same CLI
op in memory, on a volume that fits: wall time and peak RSS of the process
(GNU time), rounds interleaved, median and min-max; every streamed result is
checked equal to the in-memory one. --quick: a smaller volume."""
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from scipy import ndimage as ndi

CLI = os.environ.get("VOXA_CLI", os.path.join(os.path.dirname(__file__), "..", "build", "voxa"))
quick = "--quick" in sys.argv
shape = (48, 384, 384) if quick else (128, 768, 768)
rounds = 3 if quick else 5


def timed(args):
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", CLI, *args], capture_output=True,
                       text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    sec, kb = r.stderr.strip().splitlines()[-1].split()
    return float(sec), int(kb) / 1024


def load(path):
    return np.load(path)


with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(0)
    # blobs with holes: foreground ~50 %, distances up to ~15 voxels
    field = ndi.gaussian_filter(rng.random(shape, dtype=np.float32), 4)
    blobs = (field > 0.5) & ~(np.abs(field - 0.53) < 0.002)
    src = os.path.join(tmp, "m.npy")
    np.save(src, blobs)
    img = os.path.join(tmp, "img.npy")
    np.save(img, (field * 60000).astype(np.uint16))
    n = 20000 if not quick else 4000
    centres = np.stack([rng.integers(0, s, n) for s in shape], 1)
    np.save(os.path.join(tmp, "c.npy"), centres)
    patches = os.path.join(tmp, "p.npy")
    subprocess.run([CLI, "roi", img, "--centres", os.path.join(tmp, "c.npy"), "--size",
                    "16,16,16", "--mode", "reflect", "-o", patches], check=True)
    cases = {
        "edt": ["edt", src],
        "edt --spacing 2,1,1 (float32)": ["edt", src, "--spacing", "2,1,1", "--dtype", "float32"],
        "fill-holes": ["morph", "fill-holes", src],
        f"roi {n} x 16^3 reflect": ["roi", img, "--centres", os.path.join(tmp, "c.npy"),
                                   "--size", "16,16,16", "--mode", "reflect"],
        f"paste {n} x 16^3 mean": ["paste", patches, "--centres", os.path.join(tmp, "c.npy"),
                                   "--shape", ",".join(map(str, shape)), "--op", "mean",
                                   "--mode", "crop"],
    }
    limit = "32M" if quick else "128M"
    print(f"## Streamed edt / fill holes / roi / paste vs in memory ({shape} bool blobs, "
          f"{blobs.nbytes >> 20} MiB; uint16 image for roi; --mem-limit {limit}; {rounds} "
          f"interleaved rounds)\n")
    print("| op | in memory: s, peak MiB | streamed: s, peak MiB | time ratio streamed/in memory |")
    print("|---|---|---|---|")
    for name, args in cases.items():
        mem, st = [], []
        for _ in range(rounds):
            mem.append(timed(args + ["-o", os.path.join(tmp, "a.npy")]))
            st.append(timed(args + ["-o", os.path.join(tmp, "b.npy"), "--mem-limit", limit]))
        assert np.array_equal(load(os.path.join(tmp, "a.npy")), load(os.path.join(tmp, "b.npy"))), name
        ratios = [b[0] / a[0] for a, b in zip(mem, st)]
        f = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        print(f"| {name} | {f(mem, 0):.2f} s, {f(mem, 1):.0f} | {f(st, 0):.2f} s, "
              f"{f(st, 1):.0f} | {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}) |")
    print()
