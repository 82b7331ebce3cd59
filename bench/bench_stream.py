"""Out of core (issue 9's workload): a synthetic uint16 Zarr of blobs on a zero
background, (950, 2048, 2048) in (190, 512, 512) chunks, written chunk by
chunk (the generator never holds the volume: every blob is drawn from a seed
of its 32^3 cell, so a chunk needs only the cells near it), through the CLI:

- `morph open --ball 5`, `label` and `deconvolve` (10 iterations, on a
  (190, 2048, 2048) slab), each with `--mem-limit 2G`: wall time and peak RSS
  of the process (GNU time's maximum resident set);
- throughput per voxel of each op in memory on a volume that fits (`--fit`)
  against the same op streamed, on that volume (rounds interleaved, median and
  min-max) and on the big one;
- streamed label == in-memory label on the slab (compared chunk by chunk);
- label's merge fraction on the big volume (VOXA_STREAM_STATS phase times).

--size Z,Y,X / --chunks / --slab Z / --fit Z,Y,X / --mem-limit / --rounds
change the workload; --quick runs a small one (a minute or two); --dir puts
the data there (default: a temporary folder, deleted at the end)."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import zarr

CLI = os.environ.get("VOXA_CLI", os.path.join(os.path.dirname(__file__), "..", "build", "voxa"))
CELL = 32  # one blob seed cell


def triple(s):
    v = tuple(int(x) for x in s.split(","))
    if len(v) != 3 or min(v) < 1:
        raise argparse.ArgumentTypeError(f"expected Z,Y,X, got {s!r}")
    return v


def blobs_in(lo, hi, shape):
    """The blobs (centre, radius, value) that touch the box [lo, hi)."""
    rmax = 9
    c0 = [max(0, (lo[d] - rmax) // CELL) for d in range(3)]
    c1 = [min((shape[d] - 1) // CELL, (hi[d] + rmax) // CELL) for d in range(3)]
    out = []
    for cz in range(c0[0], c1[0] + 1):
        for cy in range(c0[1], c1[1] + 1):
            for cx in range(c0[2], c1[2] + 1):
                rng = np.random.default_rng([cz, cy, cx, 9])
                for _ in range(int(rng.integers(1, 4))):
                    c = np.array([cz, cy, cx]) * CELL + rng.integers(0, CELL, 3)
                    out.append((c, int(rng.integers(3, rmax + 1)), int(rng.integers(200, 4000))))
    return out


def chunk_of(lo, hi, shape):
    """Voxels [lo, hi) of the synthetic volume: blobs (balls) on zeros."""
    a = np.zeros([hi[d] - lo[d] for d in range(3)], np.uint16)
    for c, r, v in blobs_in(lo, hi, shape):
        s = [slice(max(lo[d], c[d] - r), min(hi[d], c[d] + r + 1)) for d in range(3)]
        if any(x.start >= x.stop for x in s):
            continue
        z, y, x = np.ogrid[s[0], s[1], s[2]]
        ball = (z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2 <= r * r
        loc = tuple(slice(x.start - lo[d], x.stop - lo[d]) for d, x in enumerate(s))
        np.maximum(a[loc], np.where(ball, v, 0).astype(np.uint16), out=a[loc])
    return a


def generate(path, shape, chunks):
    z = zarr.create_array(path, shape=shape, chunks=chunks, dtype=np.uint16, fill_value=0)
    for i in range(0, shape[0], chunks[0]):
        for j in range(0, shape[1], chunks[1]):
            for k in range(0, shape[2], chunks[2]):
                lo = (i, j, k)
                hi = tuple(min(shape[d], lo[d] + chunks[d]) for d in range(3))
                z[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]] = chunk_of(lo, hi, shape)


def psf(path):
    g = np.exp(-0.5 * sum((np.indices((9, 15, 15)) - np.array([4, 7, 7])[:, None, None, None]) ** 2
                          / np.array([2.0, 1.2, 1.2])[:, None, None, None] ** 2))
    np.save(path, (g / g.sum()).astype(np.float32))


def timed(args, env=None):
    """(seconds, peak RSS MiB, stderr, stdout) of one CLI run."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M", CLI, *map(str, args)],
                       capture_output=True, text=True, env={**os.environ, **(env or {})})
    if r.returncode:
        raise SystemExit(f"voxa {' '.join(map(str, args))}: {r.stderr}")
    sec, kb = r.stderr.strip().splitlines()[-1].split()
    return float(sec), int(kb) / 1024, r.stderr, r.stdout


def stats(err):
    for line in err.splitlines():
        if line.startswith("stream: wall"):
            w = line.replace(",", "").replace(";", "").split()
            return {w[i]: float(w[i + 1]) for i in range(len(w) - 1) if w[i] in
                    ("wall", "read", "op", "write", "blocks", "merge", "relabel")}
    return {}


def image(path):
    z = zarr.open(path, mode="r")
    return z if isinstance(z, zarr.Array) else z["0"]  # OME-Zarr: dataset 0


def same_zarr(a, b):
    za, zb = image(a), image(b)
    if za.shape != zb.shape:
        return False
    step = za.chunks[0]
    return all(np.array_equal(za[i:i + step], zb[i:i + step]) for i in range(0, za.shape[0], step))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=triple, default=(950, 2048, 2048))
    ap.add_argument("--chunks", type=triple, default=(190, 512, 512))
    ap.add_argument("--slab", type=int, default=190)
    ap.add_argument("--fit", type=triple, default=(190, 1024, 1024))
    ap.add_argument("--mem-limit", default="2G")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", default="", help="ops to leave out: open,label,deconvolve")
    o = ap.parse_args()
    if o.quick:
        o.size, o.chunks, o.slab, o.fit, o.mem_limit = (96, 384, 384), (48, 128, 128), 48, \
            (48, 256, 256), "128M"
    skip = set(filter(None, o.skip.split(",")))
    tmp = tempfile.mkdtemp(prefix="voxa-bench-stream-", dir=o.dir)
    try:
        run(o, tmp, skip)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(o, tmp, skip):
    big, slab, fit = (os.path.join(tmp, n) for n in ("big.zarr", "slab.zarr", "fit.zarr"))
    slab_shape = (o.slab, *o.size[1:])
    generate(big, o.size, o.chunks)
    generate(slab, slab_shape, o.chunks)
    generate(fit, o.fit, o.chunks)
    psf(os.path.join(tmp, "psf.npy"))
    out = lambda n: os.path.join(tmp, n)  # noqa: E731
    lim = ["--mem-limit", o.mem_limit]
    cases = {
        "open": (["morph", "open", "{in}", "--ball", "5"], big),
        "label": (["label", "{in}"], big),
        "deconvolve": (["deconvolve", "{in}", "--psf", out("psf.npy"), "--iterations",
                        str(o.iterations)], slab),
    }
    nvox = lambda s: int(np.prod(s))  # noqa: E731
    print(f"## Out of core: issue 9's workload ({o.size} uint16 blobs Zarr, chunks {o.chunks}; "
          f"--mem-limit {o.mem_limit}; in memory on {o.fit}, {o.rounds} interleaved rounds)\n")
    print("| op | in memory on fit: ns/voxel | streamed on fit: ns/voxel | ratio (min-max) "
          "| streamed on the big volume: s, ns/voxel, peak RSS MiB |")
    print("|---|---|---|---|---|")
    merge = None
    for name, (args, src) in cases.items():
        if name in skip:
            continue
        fill = lambda x: [a.format(**{"in": x}) for a in args]  # noqa: E731
        mem, st = [], []
        for _ in range(o.rounds):
            mem.append(timed(fill(fit) + ["-o", out("m.zarr")]))
            st.append(timed(fill(fit) + ["-o", out("s.zarr")] + lim))
            shutil.rmtree(out("m.zarr"))
            shutil.rmtree(out("s.zarr"))
        n = nvox(o.fit)
        ratios = [b[0] / a[0] for a, b in zip(mem, st)]
        sec, rss, err, _ = timed(fill(src) + ["-o", out("b.zarr")] + lim, {"VOXA_STREAM_STATS": "1"})
        shutil.rmtree(out("b.zarr"))
        s = stats(err)
        if name == "label":
            merge = s
        bn = nvox(o.size if src == big else slab_shape)
        med = lambda xs: statistics.median(x[0] for x in xs) / n * 1e9  # noqa: E731
        print(f"| {name} | {med(mem):.2f} | {med(st):.2f} | {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}) | {sec:.1f} s, {sec / bn * 1e9:.2f}, "
              f"{rss:.0f} |")
    print()
    if merge:
        print(f"label on the big volume: blocks {merge['blocks']:.2f} s, merge (face pairs, "
              f"numbering) {merge['merge']:.2f} s = {100 * merge['merge'] / merge['wall']:.1f} % "
              f"of {merge['wall']:.2f} s, relabel {merge['relabel']:.2f} s\n")
    if "label" not in skip:
        a = timed(["label", slab, "-o", out("ls.zarr")] + lim)
        b = timed(["label", slab, "-o", out("lm.zarr")])
        ok = same_zarr(out("ls.zarr"), out("lm.zarr")) and a[3] == b[3]
        print(f"label on the slab {slab_shape}: streamed == in memory: {ok} "
              f"({a[3].strip()} components; streamed {a[0]:.1f} s, {a[1]:.0f} MiB; in memory "
              f"{b[0]:.1f} s, {b[1]:.0f} MiB)\n")
        if not ok:
            sys.exit(1)


if __name__ == "__main__":
    main()
