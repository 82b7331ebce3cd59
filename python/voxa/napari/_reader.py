"""The plugin's reader: .npy, TIFF, Zarr and OME-Zarr paths as napari layers.

Arrays come from voxa.imread (C readers, GIL released). Layer type: integer
arrays wider than 16 bits (what voxa.label and voxa measure write) and bool
masks open as Labels layers (masks as uint8 0/1), OME-Zarr images marked
"image-label" too; everything else opens as an Image layer. OME-Zarr: the
first multiscale's datasets give the levels (several levels: a multiscale
layer, read lazily through zarr-python; without zarr-python only the first
level, read whole by voxa) and its first dataset's "scale" transform gives the layer's scale
(and a "translation" its translate). Nothing here imports napari."""
import json
import os

import numpy as np

import voxa

_FILES = (".npy", ".tif", ".tiff")


def layer_type(data):
    """'labels' for bool masks and integer arrays of more than 16 bits (what
    voxa.label and voxa measure produce), else 'image'."""
    d = np.dtype(data.dtype)
    return "labels" if d == np.bool_ or (d.kind in "iu" and d.itemsize > 2) else "image"


def _is_zarr(path):
    return os.path.isdir(path) and any(
        os.path.isfile(os.path.join(path, f)) for f in ("zarr.json", ".zattrs", ".zarray",
                                                        ".zgroup"))


def get_reader(path):
    """npe2 reader contribution: a reader for one .npy/.tif path or Zarr
    folder, else None."""
    if isinstance(path, (list, tuple)):
        if len(path) != 1:
            return None
        path = path[0]
    path = os.fspath(path).rstrip("/")
    if path.lower().endswith(_FILES) and os.path.isfile(path):
        return read
    return read if _is_zarr(path) else None


def _attrs(path):
    """The attributes of a Zarr v3 node (zarr.json) or v2 group (.zattrs)."""
    v3 = os.path.join(path, "zarr.json")
    if os.path.isfile(v3):
        with open(v3) as f:
            return json.load(f).get("attributes", {}) or {}
    v2 = os.path.join(path, ".zattrs")
    if os.path.isfile(v2):
        with open(v2) as f:
            return json.load(f)
    return {}


def _transforms(dataset):
    scale = translate = None
    for t in dataset.get("coordinateTransformations", []):
        if t.get("type") == "scale":
            scale = [float(v) for v in t["scale"]]
        elif t.get("type") == "translation":
            translate = [float(v) for v in t["translation"]]
    return scale, translate


def _levels(path, paths):
    """Lazy levels through zarr-python, or None when it is not installed
    (then the first level alone is read, by voxa)."""
    try:
        import zarr
    except ImportError:
        return None
    return [zarr.open_array(p, mode="r") for p in paths]


def _read_zarr(path, name):
    attrs = _attrs(path)
    ome = attrs.get("ome", attrs)  # OME-NGFF 0.5 nests under "ome"
    ms = ome.get("multiscales")
    if not ms:
        data = voxa.imread(path)
        kind = layer_type(data)
        return [(data.astype(np.uint8) if data.dtype == np.bool_ else data, {"name": name},
                 kind)]
    datasets = ms[0]["datasets"]
    paths = [os.path.join(path, d["path"]) for d in datasets]
    meta = {"name": name}
    scale, translate = _transforms(datasets[0])
    if scale:
        meta["scale"] = scale
    if translate:
        meta["translate"] = translate
    levels = _levels(path, paths) if len(paths) > 1 else None
    if levels:
        data, first = levels, levels[0]
        meta["multiscale"] = True
    else:
        data = first = voxa.imread(path)  # the OME image's first dataset
    kind = "labels" if "image-label" in ome else layer_type(first)
    if kind == "labels" and np.dtype(first.dtype) == np.bool_:
        data = [np.asarray(d, dtype=np.uint8) for d in data] if levels else \
            first.astype(np.uint8)
    return [(data, meta, kind)]


def read(path):
    """Read one path as a list of one napari LayerDataTuple (data, meta, kind)."""
    if isinstance(path, (list, tuple)):
        path = path[0]
    path = os.fspath(path).rstrip("/")
    base = os.path.basename(path)
    name = base[:-5] if base.lower().endswith(".zarr") else os.path.splitext(base)[0]
    if os.path.isdir(path):
        return _read_zarr(path, name)
    data = voxa.imread(path)
    kind = layer_type(data)
    if data.dtype == np.bool_:
        data = data.astype(np.uint8)
    return [(data, {"name": name}, kind)]
