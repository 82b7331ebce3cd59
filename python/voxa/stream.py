"""Streamed runs on paths: any op of the registry on volumes larger than
memory, block by block, from a file to a file (the CLI's ``--mem-limit``).

    import voxa.stream
    n = voxa.stream.run("label", "mask.zarr", "labels.zarr", mem_limit="2G")
    voxa.stream.run("open", "mask.tif", "opened.tif", ball=5, chunks=(64, 512, 512))
    voxa.stream.run("balls", None, "balls.zarr", shape=(950, 2048, 2048),
                    points=pts, radius=5.0, pyramid=4)
    voxa.stream.plan("deconvolve", "stack.zarr", psf=psf, mem_limit="4G")  # a dict

Inputs and outputs are .npy, TIFF (.tif/.tiff) or Zarr (.zarr) paths; the
executor reads the input by regions (.npy rows, TIFF strips or tiles, Zarr
chunks) and writes the output by blocks, published only when complete. The
op is named as in the registry (``voxa._voxa.ops()``: "label", "dilate",
"open", "edt", "deconvolve", ...) or by its Python function
("binary_opening", "richardson_lucy", ...); its parameters are the
registry's (those of ``voxa <op> --help``, as keywords: ``ball=5``,
``connectivity=2``, ``psf=array``, ``points=array``), not the scipy-style
signature of the in-memory function. The result equals the in-memory op
(see docs/stream.md for RL's halo). The GIL is released during the run;
``progress(done, total)`` is called after each block (return False to
cancel); Ctrl-C cancels at the next block. A cancelled or failed run leaves
nothing under the output's name.
"""
import os

from . import _voxa

__all__ = ["run", "plan", "parse_size"]

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_MODES = {"auto": 0, "mean": 1, "stride": 2}


def parse_size(size):
    """A byte count from an int or a string such as "512M", "2G", "1.5G"
    (K, M, G, T: powers of 1024; an optional trailing "B" or "iB")."""
    if isinstance(size, bool):
        raise TypeError(f"mem_limit: expected a size such as '2G' or an int, got {size!r}")
    if isinstance(size, int):
        if size <= 0:
            raise ValueError(f"mem_limit: {size} bytes, expected > 0")
        return size
    if not isinstance(size, str):
        raise TypeError(f"mem_limit: expected a size such as '2G' or an int, got {size!r}")
    text = size.strip().upper()
    for tail in ("IB", "B"):
        if text.endswith(tail) and text[:-len(tail)][-1:] in "KMGT" and len(text) > len(tail):
            text = text[:-len(tail)]
            break
    unit = text[-1:] if text[-1:] in _UNITS else ""
    try:
        value = float(text[:len(text) - len(unit)])
    except ValueError:
        raise ValueError(f"mem_limit: {size!r} is not a size such as '512M' or '2G'") from None
    n = int(value * _UNITS[unit])
    if not value > 0 or n <= 0:
        raise ValueError(f"mem_limit: {size!r}, expected a size > 0")
    return n


def _op_name(op):
    if not isinstance(op, str):
        raise TypeError(f"op: expected an op name, got {op!r}")
    names = {o["name"]: o["name"] for o in _voxa.ops()}
    for o in _voxa.ops():
        if o.get("python"):
            names.setdefault(o["python"], o["name"])
    if op not in names:
        raise ValueError(f"op: no op named {op!r} (one of {', '.join(sorted(names))})")
    return names[op]


def _path(p, what, allow_none=False):
    if p is None and allow_none:
        return None
    try:
        return os.fspath(p)
    except TypeError:
        raise TypeError(f"{what}: expected a path, got {p!r}") from None


def _chunks(chunks):
    if chunks is None:
        return None
    try:
        return tuple(int(c) for c in chunks)
    except TypeError:
        raise TypeError(f"chunks: expected a sequence of ints, got {chunks!r}") from None


def run(op, input, output, /, *, mem_limit="1G", chunks=None, pyramid=0, pyramid_mode="auto",
        zarr_format=3, progress=None, **params):
    """Run `op` from the file `input` (None for ops without input, such as
    "balls") into the file `output`, block by block within `mem_limit`
    bytes (int, or "512M", "2G").

    chunks: the block shape (default: the largest blocks that fit).
    pyramid: for a 2-D/3-D .zarr output, the number of OME-Zarr levels after
        level 0, each half the one before per axis; pyramid_mode "auto"
        (stride for bool and integer outputs, mean for float ones), "mean"
        or "stride" (the first voxel of each 2x2x2 block).
    zarr_format: 3 (OME-NGFF 0.5) or 2 (OME-NGFF 0.4) for .zarr outputs.
    progress: a callable progress(done, total) called after each block;
        False (or an exception) cancels.
    **params: the op's parameters as the registry names them.

    Returns the op's count (label: the number of components; balls: the
    voxels set) or None. Raises MemoryError when the plan needs more than
    mem_limit (an op that reads the whole volume, or chunks too large),
    ValueError/TypeError for bad arguments, OSError for files."""
    if pyramid_mode not in _MODES:
        raise ValueError(f"pyramid_mode: {pyramid_mode!r}, expected 'auto', 'mean' or 'stride'")
    if isinstance(pyramid, bool) or not isinstance(pyramid, int) or not 0 <= pyramid <= 16:
        raise ValueError(f"pyramid: {pyramid!r}, expected 0 to 16 levels")
    if zarr_format not in (2, 3):
        raise ValueError(f"zarr_format: {zarr_format!r}, expected 2 or 3")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress: expected a callable, got {progress!r}")
    return _voxa.stream_run(_op_name(op), _path(input, "input", True), _path(output, "output"),
                            mem_limit=parse_size(mem_limit), chunks=_chunks(chunks),
                            pyramid=pyramid, pyramid_mode=_MODES[pyramid_mode],
                            zarr_format=zarr_format, progress=progress, **params)


def plan(op, input, /, *, mem_limit="1G", chunks=None, **params):
    """What run() would do, without running: a dict with the output's
    dtype and shape, the block shape, grid and count, the halo (halo_lo,
    halo_hi), whether the op is global (labelled by blocks and merged) or
    needs the whole volume, the estimated peak memory (peak_bytes), the
    output's size (out_bytes) and the work (overhead: voxels the op runs on,
    blocks grown by their halo, per output voxel)."""
    return _voxa.stream_plan(_op_name(op), _path(input, "input", True),
                             mem_limit=parse_size(mem_limit), chunks=_chunks(chunks), **params)
