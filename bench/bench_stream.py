"""Out of core: each CLI op streamed (--mem-limit) vs in memory, on a volume that
fits, side by side: wall time and peak RSS of the process (GNU time), rounds
interleaved, median and min-max. The streamed label must equal the in-memory
one (checked). --quick: a smaller volume."""
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
from scipy import ndimage as ndi

CLI = os.environ.get("VOXA_CLI", os.path.join(os.path.dirname(__file__), "..", "build", "voxa"))
quick = "--quick" in sys.argv
shape = (64, 512, 512) if quick else (190, 1024, 1024)
rounds = 3 if quick else 5


def timed(args):
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", CLI, *args], capture_output=True,
                       text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    sec, kb = r.stderr.strip().splitlines()[-1].split()
    return float(sec), int(kb) / 1024


with tempfile.TemporaryDirectory() as tmp:
    rng = np.random.default_rng(0)
    blobs = ndi.gaussian_filter(rng.random(shape, dtype=np.float32), 4) > 0.5
    src = os.path.join(tmp, "m.npy")
    np.save(src, blobs)
    cases = {
        "label": ["label", src, "--connectivity", "1"],
        "morph open --ball 5": ["morph", "open", src, "--ball", "5"],
    }
    limit = "64M" if quick else "256M"
    print(f"## Out of core: streamed vs in memory ({shape} bool blobs, {blobs.nbytes >> 20} MiB; "
          f"--mem-limit {limit}; {rounds} interleaved rounds)\n")
    print("| op | in memory: s, peak MiB | streamed: s, peak MiB | time ratio streamed/in memory |")
    print("|---|---|---|---|")
    for name, args in cases.items():
        mem, st = [], []
        for _ in range(rounds):
            mem.append(timed(args + ["-o", os.path.join(tmp, "a.npy")]))
            st.append(timed(args + ["-o", os.path.join(tmp, "b.npy"), "--mem-limit", limit]))
        if name == "label":
            assert np.array_equal(np.load(os.path.join(tmp, "a.npy")),
                                  np.load(os.path.join(tmp, "b.npy")))
        ratios = [b[0] / a[0] for a, b in zip(mem, st)]
        f = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        print(f"| {name} | {f(mem, 0):.2f} s, {f(mem, 1):.0f} | {f(st, 0):.2f} s, "
              f"{f(st, 1):.0f} | {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}) |")
    print()
