"""voxa.regionprops_table vs skimage.measure.regionprops_table, side by side
in this process, on the W1 labels.

Labels: the W1 mask (500 balls of radius 5 around uniform random float points,
seed 0, shape (20, 1024, 1024)) labelled with voxa.label (int32, equal to
scipy's). Intensity: uint16 noise (seed 3). Properties: label, area,
centroid, bbox, then the same with intensity_mean/min/max and
centroid_weighted. The floor is one NumPy pass over the label volume
(labels.max()), the target of issue 12 being within 2x of it and at least
10x faster than regionprops_table. Also `voxa measure` on the .npy (the CLI,
reading the file by blocks, writing the CSV), timed as a subprocess.
A third table asks for the shape properties of the second moments, a fourth
for euler_number (also on 2-D discs and rings). Every
voxa table is checked equal to skimage's (same columns, same bits; the
shape ones to rounding).

Run alone: python bench/bench_measure.py [--quick]"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from skimage.measure import regionprops_table as sk_table

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import machine, measure, paint_bbox, table, w1_points  # noqa: E402

import voxa  # noqa: E402

GEOM = ("label", "area", "centroid", "bbox")
INTEN = GEOM + ("intensity_mean", "intensity_min", "intensity_max", "centroid_weighted")
SHAPE = ("label", "area", "centroid", "inertia_tensor_eigvals", "axis_major_length",
         "axis_minor_length")  # second moments (docs/measure.md)
EULER = ("label", "euler_number")  # one C pass of its own (docs/measure.md)


def check(got, want):
    """Same columns, same bits; the shape ones to rounding (exact sums in
    voxa, float sums in skimage; a flat object's minor axis is sqrt of
    round-off in both)."""
    assert list(got) == list(want)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        if k.startswith(SHAPE[3:]):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-11, atol=1e-6, err_msg=k)
        else:
            assert np.array_equal(got[k], want[k]), k


def against_skimage(labels, inten, props, repeats, floor=None):
    """Table rows: skimage's regionprops_table, then voxa's with 1 and 2
    threads (checked equal to it); and skimage's measurement."""
    sk = measure(lambda: sk_table(labels, inten, properties=props), repeats=repeats,
                 max_seconds=60)
    rows = [("skimage regionprops_table", sk, "")]
    for t in (1, 2):
        voxa.set_threads(t)
        m = measure(lambda: voxa.regionprops_table(labels, inten, properties=props),
                    repeats=repeats)
        check(m["result"], sk["result"])
        note = f"{sk['median'] / m['median']:.0f}x faster than skimage"
        if floor is not None:
            note += f", {m['median'] / floor['median']:.2f}x labels.max()"
        rows.append((f"voxa {t} thread{'s' if t > 1 else ''}", m, note))
    voxa.set_threads(0)
    return rows, sk


def main():
    quick = "--quick" in sys.argv
    shape = (8, 256, 256) if quick else (20, 1024, 1024)
    repeats = 2 if quick else 5
    labels, n = voxa.label(paint_bbox(shape, w1_points(shape), 5.0))
    img = np.random.default_rng(3).integers(0, 4096, shape).astype(np.uint16)
    out = [f"## voxa.regionprops_table vs skimage regionprops_table, W1 labels {shape} "
           f"int32, {n} objects", "", f"machine: {machine()}", ""]
    floor = measure(lambda: labels.max(), repeats=repeats)
    for title, props, inten in (("geometry (label, area, centroid, bbox)", GEOM, None),
                                ("with a uint16 intensity image (+ mean, min, max, "
                                 "weighted centroid)", INTEN, img),
                                ("shape (label, area, centroid, inertia_tensor_eigvals, "
                                 "axis_major_length, axis_minor_length)", SHAPE, None),
                                ("euler_number (label, euler_number)", EULER, None)):
        rows, _ = against_skimage(labels, inten, props, repeats, floor)
        rows.append(("labels.max() (one NumPy pass)", floor, "the floor"))
        out.append(table(title, rows, "voxa 1 thread"))
    # euler_number on 2-D discs and rings (every other one has a hole), some
    # touching: many objects, holes, several holes where rings merge
    blob_shape = (512, 512) if quick else (2048, 2048)
    rng = np.random.default_rng(5)
    seeds = np.ones(blob_shape, bool)
    npts = blob_shape[0] * blob_shape[1] // 700
    seeds[tuple(rng.integers(0, s, npts) for s in blob_shape)] = False
    dist, (iy, ix) = voxa.distance_transform_edt(seeds, return_indices=True)
    ring = (iy * 7 + ix) % 2 == 0
    blobs, nb = voxa.label((dist < 6) & (~ring | (dist > 2.5)), structure=np.ones((3, 3)))
    rows, sk = against_skimage(blobs, None, EULER, repeats)
    holes = int((sk["result"]["euler_number"] < 1).sum())
    out.append(table(f"euler_number, 2-D discs and rings {blob_shape} int32, {nb} objects "
                     f"({holes} with holes)", rows, "voxa 1 thread"))
    # The CLI on files: reads the .npy by blocks, writes the CSV.
    cli = os.environ.get("VOXA_CLI", os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "build", "voxa"))
    with tempfile.TemporaryDirectory() as d:
        np.save(os.path.join(d, "lab.npy"), labels)
        np.save(os.path.join(d, "img.npy"), img)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            subprocess.run([cli, "measure", os.path.join(d, "lab.npy"), "--intensity",
                            os.path.join(d, "img.npy"), "-o", os.path.join(d, "t.csv")],
                           check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        out.append(f"`voxa measure lab.npy --intensity img.npy -o t.csv` (files in the page "
                   f"cache, default threads): median {np.median(times) * 1e3:.1f} ms over "
                   f"{repeats} runs\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
