"""Load-independent cross-check of the frontier ratios: instructions executed
(valgrind's "I refs", cachegrind without cache simulation) by one call of
voxa and of its peer, one thread, on a (100,101,101) mask.

Instruction counts do not move with the machine's load, unlike times; they
ignore memory stalls, so they complement bench_frontier.py, they do not
replace it. Each probe is its own process: Ir(process with the call) minus
Ir(the same process without it) = the call. Not run by make bench (a few
minutes under valgrind). Usage: python bench/ir_frontier.py"""
import os
import re
import subprocess
import sys

import numpy as np

MASKS = ("blobs", "random")
LABEL = ("cc3d6", "voxa6", "cc3d26", "voxa26")
EDT = ("edt1", "voxaedt")


def probe(mask_kind, method):
    import cc3d
    import edt
    import voxa
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import blob_mask
    voxa.set_threads(1)
    shape = (100, 101, 101)
    if mask_kind == "random":
        m = np.random.default_rng(1).random(shape, dtype=np.float32) < 0.5
    else:
        m = blob_mask(shape)
    calls = {"none": lambda: None,
             "cc3d6": lambda: cc3d.connected_components(m, connectivity=6),
             "cc3d26": lambda: cc3d.connected_components(m, connectivity=26),
             "voxa6": lambda: voxa.label(m, connectivity=1),
             "voxa26": lambda: voxa.label(m, connectivity=3),
             "edt1": lambda: edt.edt(m, parallel=1),
             "voxaedt": lambda: voxa.distance_transform_edt(m, dtype=np.float32)}
    calls[method]()


def irefs(mask_kind, method):
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS="1", VOXA_NUM_THREADS="1")
    r = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no",
                        "--cachegrind-out-file=/dev/null", sys.executable, __file__,
                        "--probe", mask_kind, method], env=env, capture_output=True, text=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    if r.returncode or not m:
        raise RuntimeError(f"{mask_kind} {method}: {r.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main():
    print("### Instructions per call, 1 thread, (100,101,101) masks (valgrind I refs)\n")
    print("| mask | method | instructions | peer / voxa |")
    print("|---|---|---|---|")
    for mk in MASKS:
        base = irefs(mk, "none")
        ir = {m: irefs(mk, m) - base for m in LABEL + (EDT if mk == "blobs" else ())}
        pairs = [("cc3d6", "voxa6"), ("cc3d26", "voxa26")] + (
            [("edt1", "voxaedt")] if mk == "blobs" else [])
        for peer, mine in pairs:
            print(f"| {mk} | {peer} | {ir[peer] / 1e6:.1f} M | |")
            print(f"| {mk} | {mine} | {ir[mine] / 1e6:.1f} M | {ir[peer] / ir[mine]:.2f}x |")


if __name__ == "__main__":
    if "--probe" in sys.argv:
        i = sys.argv.index("--probe")
        probe(sys.argv[i + 1], sys.argv[i + 2])
    else:
        main()
