"""The W2 write-up's workflow on voxa.dask, runnable at a reduced size here:
da.from_zarr of a (950, 2048, 2048) uint16 volume, rechunk to (190, 512, 512),
float32, voxa.dask.richardson_lucy, to_zarr with OME-Zarr metadata (napari
opens it at the right scale).

    python examples/dask_w2.py --scale 0.05 --iterations 10 [--workers 2]

--scale multiplies every axis (1.0 is the write-up's 8 GB volume); the sample
is blurred blobs on a background, made chunk by chunk, so nothing holds the
whole volume. With --workers N a distributed.LocalCluster of N processes runs
it; its dashboard shows the voxa-deconvolve-* tasks. With --scheduler ADDRESS
it joins a running cluster instead (a dask-jobqueue or dask-kubernetes
scheduler, see docs/dask.md); the Zarr paths must then be on storage every
worker sees.
"""
import argparse
import time

import numpy as np
from scipy import ndimage as ndi
import dask.array as da

import voxa
import voxa.dask as vd


def sample_block(block_info=None):
    info = block_info[None]
    loc = info["array-location"]
    shape = tuple(b - a for a, b in loc)
    rng = np.random.default_rng(loc[0][0] * 7919 + loc[1][0] * 31 + loc[2][0])
    img = np.full(shape, 100.0)
    for _ in range(max(1, img.size // 20000)):
        c = [rng.integers(0, s) for s in shape]
        sl = tuple(slice(max(0, x - 2), x + 3) for x in c)
        img[sl] += 3000
    return ndi.gaussian_filter(img, (1.5, 1.0, 1.0)).astype(np.uint16)  # a blurred look


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.05)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    ap.add_argument("--out", default="w2_out.zarr")
    args = ap.parse_args()
    shape = tuple(max(8, int(round(s * args.scale))) for s in (950, 2048, 2048))
    chunks = tuple(max(4, int(round(c * args.scale))) for c in (190, 512, 512))
    client = None
    if args.scheduler:
        from distributed import Client
        client = Client(args.scheduler)
    elif args.workers:
        from distributed import Client, LocalCluster
        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                     processes=True))
    src = "w2_in.zarr"
    da.map_blocks(sample_block, dtype=np.uint16,
                  chunks=da.empty(shape, chunks=chunks).chunks).to_zarr(src, overwrite=True)
    t = time.perf_counter()
    x = da.from_zarr(src).rechunk(chunks).astype(np.float32)
    psf = voxa.gaussian_psf((9, 9, 9), (2.0, 1.2, 1.2))
    restored = vd.richardson_lucy(x, psf, num_iter=args.iterations)
    from ome_zarr.io import parse_url
    from ome_zarr.writer import write_image
    import zarr
    root = zarr.open_group(parse_url(args.out, mode="w").store, mode="w")
    write_image(restored, root, axes="zyx", scaler=None,
                coordinate_transformations=[[{"type": "scale", "scale": [2.0, 0.5, 0.5]}]],
                storage_options=dict(chunks=chunks))
    print(f"{shape} uint16 in {chunks} chunks, {args.iterations} iterations: "
          f"{time.perf_counter() - t:.1f} s -> {args.out}")
    if client:
        client.close()


if __name__ == "__main__":
    main()
