"""Arrays in CUDA memory (``__cuda_array_interface__``: CuPy, PyTorch, Numba)
on the cuda backend, without a trip through the host.

``label`` and ``distance_transform_edt`` run on such arrays where they are:
the kernels read the input's device memory and write the output's
(``_voxa.run_device`` -> ``voxa_label_device`` / ``voxa_edt_device``,
include/voxa/device.h), and the result is a CuPy array. The output is
allocated with CuPy; an input of another dtype than bool/uint8 becomes
``x != 0`` and a strided one ``cupy.ascontiguousarray(x)``, both on the
device. Work the producer queued on a stream other than the legacy default
one (the interface's ``stream``) is waited for first. Other functions, and
arguments these two do not take on the device (return_indices, an output
array, ...), keep the host path of ``_backend.py`` (cupy.asnumpy in,
cupy.asarray out).

``interface(obj)`` checks the interface itself and says what is wrong: not a
dict, a missing key, an unsupported version, an unknown or big-endian
typestr, a mask, strides that are not C order, a read-only output; and
``device_index`` finds the device (CuPy ``.device.id``, PyTorch
``.device.index``): voxa's cuda backend runs on device 0. The C side checks
the pointer again with the driver (device memory of device 0, the size
inside its allocation).
"""
import numpy as np

from . import _voxa

DEVICE_FUNCS = ("label", "distance_transform_edt")


def is_device(x):
    return hasattr(x, "__cuda_array_interface__") and not hasattr(x, "__array_interface__")


def interface(obj, name="input", writable=False, contiguous=True):
    """The checked interface of obj: dict(ptr, shape, dtype, readonly, stream);
    contiguous=False accepts any strides."""
    try:
        ci = obj.__cuda_array_interface__
    except AttributeError:
        raise TypeError(f"{name}: not a device array (no __cuda_array_interface__)") from None
    if not isinstance(ci, dict):
        raise TypeError(f"{name}: __cuda_array_interface__ is a {type(ci).__name__}, not a dict")
    for key in ("shape", "typestr", "data", "version"):
        if key not in ci:
            raise ValueError(f"{name}: __cuda_array_interface__ lacks '{key}'")
    version = ci["version"]
    if not isinstance(version, int) or not 0 <= version <= 3:
        raise ValueError(f"{name}: __cuda_array_interface__ version {version!r} is not "
                         "supported (0 to 3)")
    try:
        shape = tuple(int(s) for s in ci["shape"])
    except (TypeError, ValueError):
        raise ValueError(f"{name}: shape {ci['shape']!r} is not a tuple of ints") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: negative extent in shape {shape}")
    try:
        dtype = np.dtype(ci["typestr"])
    except TypeError:
        raise TypeError(f"{name}: unknown typestr {ci['typestr']!r}") from None
    if dtype.byteorder == ">" or (dtype.byteorder == "=" and np.little_endian is False):
        raise ValueError(f"{name}: big-endian dtype {ci['typestr']!r} is not supported")
    data = ci["data"]
    if not (isinstance(data, tuple) and len(data) == 2):
        raise ValueError(f"{name}: data {data!r} is not a (pointer, read-only) pair")
    ptr, readonly = int(data[0] or 0), bool(data[1])
    if ci.get("mask") is not None:
        raise ValueError(f"{name}: masked device arrays are not supported")
    strides = ci.get("strides")
    if strides is not None and contiguous:
        want, step = [], dtype.itemsize
        for s in reversed(shape):
            want.append(step)
            step *= s
        want = tuple(reversed(want))
        bad = [d for d in range(len(shape)) if shape[d] > 1 and int(strides[d]) != want[d]]
        if bad and 0 not in shape:
            raise ValueError(f"{name}: strides {tuple(strides)} are not C-contiguous (expected "
                             f"{want}); make it contiguous on the device first "
                             "(cupy.ascontiguousarray)")
    if writable and readonly:
        raise ValueError(f"{name}: the device array is read-only")
    if ptr == 0 and 0 not in shape:
        raise ValueError(f"{name}: NULL device pointer")
    return {"ptr": ptr, "shape": shape, "dtype": dtype, "readonly": readonly,
            "stream": ci.get("stream")}


def device_index(obj):
    """The CUDA device of obj when the library says (CuPy, PyTorch), else None."""
    dev = getattr(obj, "device", None)
    for attr in ("id", "index"):
        v = getattr(dev, attr, None)
        if isinstance(v, int):
            return v
    return None


def check_device(obj, name="input"):
    d = device_index(obj)
    if d is not None and d != 0:
        raise ValueError(f"{name}: the array is on CUDA device {d}; voxa's cuda backend runs "
                         "on device 0 (move it, or set CUDA_VISIBLE_DEVICES)")


def _wait(ci, cupy):
    s = ci["stream"]
    if s is not None and s != 1:  # 1: the legacy default stream, which voxa uses
        cupy.cuda.ExternalStream(s).synchronize()


def _prepare(x, cupy):
    """x as a C-contiguous bool/uint8 CuPy array on device 0, made on the device."""
    check_device(x)
    _wait(interface(x, contiguous=False), cupy)  # clear errors before CuPy sees it
    x = cupy.asarray(x)  # zero-copy view of any __cuda_array_interface__ object
    if x.dtype not in (np.bool_, np.uint8):
        x = x != 0
    if not x.flags.c_contiguous:
        x = cupy.ascontiguousarray(x)
    return x


def _structure_bytes(structure, ndim):
    if structure is None:
        return None
    if is_device(structure):
        import cupy
        structure = cupy.asnumpy(structure)  # 3^ndim values: a parameter, not data
    s = np.asarray(structure)
    if s.shape != (3,) * ndim:
        return NotImplemented  # the host path gives scipy's exact error
    return (s != 0).astype(np.uint8).tobytes()


def run(fname, args, kw):
    """fname(*args, **kw) on device arrays without a host trip, or
    NotImplemented when the device path does not take these arguments."""
    if fname not in DEVICE_FUNCS or not args or not is_device(args[0]):
        return NotImplemented
    try:
        import cupy
    except ImportError:
        raise TypeError("device arrays: voxa returns CuPy arrays; install CuPy "
                        "(cupy-cuda12x)") from None
    if fname == "label":
        names = ("input", "structure", "output")
        p = dict(zip(names, args))
        p.update(kw)
        if set(p) - set(names) - {"connectivity"} or len(args) > 3:
            return NotImplemented
        o = p.get("output")
        if o is not None and not isinstance(o, (type, str, np.dtype)):
            return NotImplemented  # an output array: the host path writes into it
        x = _prepare(p["input"], cupy)
        out_dt = np.dtype(o if o is not None else
                          np.int64 if x.size >= 2**31 - 2 else np.int32)  # as voxa.label
        if out_dt.name not in ("int32", "uint16", "uint32", "int64"):
            return NotImplemented
        if not 1 <= x.ndim <= 3:
            return NotImplemented
        s = _structure_bytes(p.get("structure"), x.ndim)
        if s is NotImplemented:
            return NotImplemented
        ci = interface(x)
        out = cupy.empty(x.shape, out_dt)
        oi = interface(out, "output", writable=True)
        n = _voxa.run_device("label", ci["ptr"], ci["dtype"].name, x.shape, oi["ptr"],
                             out_dt.name, connectivity=int(p.get("connectivity", 1)),
                             structure=s)
        return out, n
    names = ("input", "sampling", "return_distances", "return_indices", "distances",
             "indices")
    p = dict(zip(names, args))
    p.update(kw)
    if (set(p) - set(names) - {"squared", "dtype"} or not p.get("return_distances", True)
            or p.get("return_indices") or p.get("distances") is not None
            or p.get("indices") is not None):
        return NotImplemented
    squared = bool(p.get("squared", False))
    out_dt = np.dtype(p.get("dtype", np.float64))
    if out_dt.name not in ("float64", "float32") and not (squared and out_dt.name == "uint32"):
        return NotImplemented
    x = _prepare(p["input"], cupy)
    sampling = p.get("sampling")
    if sampling is not None:
        sampling = np.broadcast_to(np.asarray(sampling, np.float64), (x.ndim,)).copy()
    ci = interface(x)
    out = cupy.empty(x.shape, out_dt)
    oi = interface(out, "output", writable=True)
    _voxa.run_device("edt", ci["ptr"], ci["dtype"].name, x.shape, oi["ptr"], out_dt.name,
                     spacing=sampling, squared=squared)
    return out
