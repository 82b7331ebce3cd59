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
    return _backend.takes_backend(fn)(*args, backend=backend, **kwargs)
