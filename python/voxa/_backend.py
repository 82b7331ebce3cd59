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
"""
import contextvars
import functools
import inspect
import os

from . import _voxa

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


def takes_backend(fn):
    """fn with a keyword-only backend=None that routes its ops."""
    if "backend" in inspect.signature(fn).parameters:
        return fn

    @functools.wraps(fn)
    def wrapper(*args, backend=None, **kw):
        token = _current.set(check(backend))
        try:
            return fn(*args, **kw)
        finally:
            _current.reset(token)

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

