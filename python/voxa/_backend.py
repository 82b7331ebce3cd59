"""backend= on every public function: which backend runs the C op.

Each public function that runs an op takes ``backend=None`` (added by
``takes_backend`` in ``__init__.py``): "cpu", "opencl", "cuda" or "auto" (a
usable GPU, else the CPU); None means the environment variable VOXA_BACKEND,
else "cpu". The choice is held in a context variable for the duration of the
call, and every ``_voxa.run_op`` call made meanwhile (the modules call it by
that name) receives it, so the functions' own code needs no change. GPU
results are equal to the CPU's, voxel for voxel; a backend that cannot run
raises TypeError naming what is missing (runtime, device, the op's GPU path);
"auto" never fails for that (``voxa backends`` on the command line lists
them).

CuPy arrays (objects with ``__cuda_array_interface__`` and no NumPy
interface) are accepted with backend "cuda" or "auto" and the result comes
back as a CuPy array. ``label`` and ``distance_transform_edt`` run on them in
device memory (``_device.py``); the other functions take them through the
host (cupy.asnumpy in, cupy.asarray out) (docs/gpu.md, "Device arrays").
"""
import contextvars
import functools
import inspect
import os

from . import _device, _voxa

NAMES = ("cpu", "opencl", "cuda", "auto")
_current = contextvars.ContextVar("voxa_backend", default=None)
_raw_run_op = _voxa.run_op


def check(backend):
    """The backend name to use: `backend`, else VOXA_BACKEND, else None."""
    if backend is None:
        env = os.environ.get("VOXA_BACKEND") or None
        if env is not None and env not in NAMES:
            raise ValueError(f"VOXA_BACKEND={env!r}: expected one of {', '.join(NAMES)}")
        return env
    if not isinstance(backend, str) or backend not in NAMES:
        raise ValueError(f"backend: {backend!r}: expected one of {', '.join(NAMES)}")
    return backend


def run_op(name, input, output, **kw):
    """_voxa.run_op with the backend of the current call."""
    if "backend" not in kw:
        kw["backend"] = _current.get()
    return _raw_run_op(name, input, output, **kw)


_voxa.run_op = run_op  # every module calls _voxa.run_op: route them through here


def _is_cupy(x):
    return hasattr(x, "__cuda_array_interface__") and not hasattr(x, "__array_interface__")


def _from_device(args, kw, backend):
    """(args, kw, cupy module or None): CuPy arrays among the arguments copied
    to NumPy; TypeError unless the backend is cuda or auto."""
    found = [a for a in list(args) + list(kw.values()) if _is_cupy(a)]
    if not found:
        return args, kw, None
    if backend not in ("cuda", "auto"):
        raise TypeError("CuPy arrays (__cuda_array_interface__) need backend='cuda' or 'auto'")
    import cupy  # an object with __cuda_array_interface__ came from a CUDA library
    conv = (lambda a: cupy.asnumpy(a) if _is_cupy(a) else a)
    return [conv(a) for a in args], {k: conv(v) for k, v in kw.items()}, cupy


def _to_device(result, cupy):
    if isinstance(result, tuple):
        return tuple(_to_device(r, cupy) for r in result)
    return cupy.asarray(result) if hasattr(result, "__array_interface__") else result


def takes_backend(fn):
    """fn with a keyword-only backend=None that routes its ops."""
    if "backend" in inspect.signature(fn).parameters:
        return fn

    @functools.wraps(fn)
    def wrapper(*args, backend=None, **kw):
        name = check(backend)
        if name in ("cuda", "auto") and args and _is_cupy(args[0]):
            result = _device.run(fn.__name__, args, kw)  # in device memory
            if result is not NotImplemented:
                return result
        args, kw, cupy = _from_device(args, kw, name)
        token = _current.set(name)
        try:
            result = fn(*args, **kw)
        finally:
            _current.reset(token)
        return result if cupy is None else _to_device(result, cupy)

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    extra = inspect.Parameter("backend", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = next((i for i, p in enumerate(params) if p.kind == p.VAR_KEYWORD), len(params))
    wrapper.__signature__ = sig.replace(parameters=params[:at] + [extra] + params[at:])
    wrapper.__doc__ = (fn.__doc__ or "") + (
        "\n\n    backend : 'cpu', 'opencl', 'cuda' or 'auto', optional\n"
        "        Where the op runs (default: VOXA_BACKEND, else 'cpu'); every backend\n"
        "        gives the same result. 'auto': a usable GPU, else the CPU.\n")
    return wrapper

