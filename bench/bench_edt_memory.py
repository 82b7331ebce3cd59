"""Peak memory of voxa.distance_transform_edt (issue #14, EDT line scratch).

Each case runs in a fresh process: it builds the mask, reads its peak RSS
(ru_maxrss), runs the EDT and reads the peak again; the table shows both, the
input and output sizes, and the EDT's own rise. With --before=OLD_voxa.so the
same cases also run with a copy of the extension built before the change
(its Python package is this one), side by side.

Cases: (3, 1e7) float32, (3e7,) float64 (every 1000th column background) and
the (400,401,401) blob mask (bench.common.blob_mask) float32, and squared=True,
and both with sampling (2, 1, 0.7).
Run: python bench/bench_edt_memory.py [--quick] [--before=OLD_voxa.so]
(--quick: 1e6-long shapes and a (100,101,101) blob).
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CHILD = r"""
import resource, sys
import numpy as np
sys.path.insert(0, BENCH)
import voxa
kind, n = sys.argv[1], int(sys.argv[2])
if kind in ("blobs", "blobsq", "blobsp", "blobspsq"):
    a = np.load(sys.argv[4])  # built once by the parent: its peak is not the EDT's
    dt = np.float32
else:
    shape = (3, n) if kind == "wide" else (n,)
    dt = np.float32 if kind == "wide" else np.float64
    a = np.ones(shape, bool)
    a[..., ::1000] = False
voxa.set_threads(int(sys.argv[3]))
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sp = (2.0, 1.0, 0.7) if kind.startswith("blobsp") else None
d = voxa.distance_transform_edt(a, dtype=dt, squared=kind.endswith("sq"), sampling=sp)
r1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(a.nbytes, d.nbytes, r0 * 1024, r1 * 1024)
"""


def run(kind, n, threads, pkg, mask):
    env = dict(os.environ, PYTHONPATH=pkg)
    code = CHILD.replace("BENCH", repr(HERE))
    out = subprocess.run([sys.executable, "-c", code, kind, str(n), str(threads), mask], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return [int(v) for v in out]


def old_package(so):
    """This python/voxa with the extension replaced by `so`."""
    tmp = tempfile.mkdtemp(prefix="voxa_before_")
    shutil.copytree(os.path.join(ROOT, "python", "voxa"), os.path.join(tmp, "voxa"),
                    ignore=shutil.ignore_patterns("_voxa*.so", "__pycache__"))
    name = [f for f in os.listdir(os.path.join(ROOT, "python", "voxa")) if f.startswith("_voxa")
            and f.endswith(".so")][0]
    shutil.copy(so, os.path.join(tmp, "voxa", name))
    return tmp


def main():
    quick = "--quick" in sys.argv
    before = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--before=")]
    pkgs = [("after", os.path.join(ROOT, "python"))]
    if before:
        pkgs.insert(0, ("before", old_package(before[0])))
    cases = [("wide", 10**6 if quick else 10**7, "(3, n) float32"),
             ("long", 10**6 if quick else 3 * 10**7, "(n,) float64"),
             ("blobs", 100 if quick else 400, "blobs (n, n+1, n+1) float32"),
             ("blobsq", 100 if quick else 400, "blobs (n, n+1, n+1) float32 squared"),
             ("blobsp", 100 if quick else 400, "blobs (n, n+1, n+1) float32, sampling (2, 1, 0.7)"),
             ("blobspsq", 100 if quick else 400,
              "blobs (n, n+1, n+1) float32 squared, sampling (2, 1, 0.7)")]
    mb = 2**20
    nb = cases[2][1]
    mask = os.path.join(tempfile.mkdtemp(prefix="voxa_blobs_"), "blobs.npy")
    subprocess.run([sys.executable, "-c", "import sys, numpy as np; sys.path.insert(0, %r); "
                    "from common import blob_mask; np.save(%r, blob_mask((%d, %d, %d)))"
                    % (HERE, mask, nb, nb + 1, nb + 1)], check=True,
                   env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python")))
    print(f"## EDT peak memory ({time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f})\n")
    print("| case | n | threads | build | input MiB | output MiB | RSS before EDT MiB | "
          "peak RSS MiB | EDT rise MiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, n, label in cases:
        for threads in (1, 2):
            for name, pkg in pkgs:
                i, o, r0, r1 = run(kind, n, threads, pkg, mask)
                print(f"| {label} | {n} | {threads} | {name} | {i / mb:.0f} | {o / mb:.0f} | "
                      f"{r0 / mb:.0f} | {r1 / mb:.0f} | {(r1 - r0) / mb:.0f} |", flush=True)
    shutil.rmtree(os.path.dirname(mask))
    if before:
        shutil.rmtree(pkgs[0][1])


if __name__ == "__main__":
    main()
