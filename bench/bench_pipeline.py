"""The pipeline's own cost: a recipe (open -> fill holes -> label -> measure
-> preview) against the same five steps run one by one with the CLI, on a
(64, 256, 256) blob mask with an intensity image. Three recipe variants:
with the report (previews of every array, report.html, run.json), without
it (report = false), and a rerun where every step is up to date (the cost
of deciding to skip). All run as `voxa` processes, interleaved round by
round; ratios are per round against the one-by-one run."""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import blob_mask, fmt_time, interleave, loadavg, ratio_stats  # noqa: E402

CLI = os.environ.get("VOXA_CLI", os.path.join(os.path.dirname(__file__), "..", "build", "voxa"))
QUICK = "--quick" in sys.argv

RECIPE = """\
[pipeline]
output_dir = "{out}"
report = {report}
previews = {report}
[inputs]
mask = "mask.npy"
img = "img.npy"
[[step]]
name = "opened"
op = "open"
input = "mask"
ball = 2
[[step]]
name = "filled"
op = "fill_holes"
input = "opened"
[[step]]
name = "labels"
op = "label"
input = "filled"
[[step]]
name = "objects"
op = "measure"
labels = "labels"
intensity = "img"
[[step]]
name = "picture"
op = "preview"
image = "img"
labels = "labels"
"""


def sh(*args):
    subprocess.run([CLI, *map(str, args)], check=True, capture_output=True)


def main():
    shape = (32, 128, 128) if QUICK else (64, 256, 256)
    with tempfile.TemporaryDirectory(prefix="voxa-bench-pipeline-") as d:
        m = blob_mask(shape)
        np.save(os.path.join(d, "mask.npy"), m)
        np.save(os.path.join(d, "img.npy"), (m * 100 + np.arange(m.size).reshape(shape) % 7)
                .astype(np.uint16))
        for name, report in (("full", "true"), ("bare", "false"), ("skip", "false")):
            with open(os.path.join(d, f"{name}.toml"), "w") as f:
                f.write(RECIPE.format(out=f"out-{name}", report=report))
        sh("pipeline", os.path.join(d, "skip.toml"))
        one = os.path.join(d, "one")
        os.makedirs(one, exist_ok=True)

        def by_steps():
            sh("morph", "open", f"{d}/mask.npy", "-o", f"{one}/opened.npy", "--ball", 2)
            sh("morph", "fill-holes", f"{one}/opened.npy", "-o", f"{one}/filled.npy")
            sh("label", f"{one}/filled.npy", "-o", f"{one}/labels.npy")
            sh("measure", f"{one}/labels.npy", "--intensity", f"{d}/img.npy", "-o",
               f"{one}/objects.csv")
            sh("preview", f"{d}/img.npy", "--labels", f"{one}/labels.npy", "-o",
               f"{one}/picture.png")

        calls = [("steps one by one (CLI)", by_steps),
                 ("recipe + report", lambda: sh("pipeline", f"{d}/full.toml", "--force")),
                 ("recipe, report = false", lambda: sh("pipeline", f"{d}/bare.toml", "--force")),
                 ("rerun, all up to date", lambda: sh("pipeline", f"{d}/skip.toml"))]
        times = interleave(calls, rounds=3 if QUICK else 7)
    ref = times[calls[0][0]]
    print(f"## pipeline overhead, {shape} blob mask, load {loadavg()}\n")
    print("| run | median | min - max | ratio to one by one (median, min - max) |")
    print("|---|---|---|---|")
    for name, _ in calls:
        t = sorted(times[name])
        r = ratio_stats(times[name], ref)
        print(f"| {name} | {fmt_time(t[len(t) // 2])} | {fmt_time(t[0])} - {fmt_time(t[-1])} | "
              f"{r[0]:.2f} ({r[1]:.2f} - {r[2]:.2f}) |")
    print()


if __name__ == "__main__":
    main()
