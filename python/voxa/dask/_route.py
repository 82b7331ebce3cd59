"""backend= for voxa.dask: the per-chunk functions run on the named backend.

The backend name is checked when the graph is built, so a bad name fails at
the call, not inside a task. None leaves the choice to each worker (its
VOXA_BACKEND, else cpu): that is how one GPU per worker is usually set up
(docs/dask.md). The wrapper is a functools.partial of module-level functions,
so it pickles for distributed workers.
"""
import functools

from .. import _backend


def routed(fn, backend):
    """fn, run on `backend` when one is named."""
    if backend is None:
        return fn
    return functools.partial(_call_on, fn, _backend.check(backend))


def _call_on(fn, backend, *args, **kwargs):
    """fn with every C call it makes routed to `backend` (the context
    variable the public functions' backend= sets, _backend.py)."""
    token = _backend._current.set(backend)
    try:
        return fn(*args, **kwargs)
    finally:
        _backend._current.reset(token)
