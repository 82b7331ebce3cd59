"""voxa.dask.label survives a lost worker: on a 2-worker
LocalCluster(processes=True), one worker process is killed (SIGKILL) while
the label graph runs, once it holds a result of the tree reduction (and chunk
labels that later steps still need); the nanny restarts it, Dask recomputes
what was lost, and labels and count are still exactly scipy's."""
import os
import signal
import time

import numpy as np
import pytest
from scipy import ndimage as ndi

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import voxa.dask as vd  # noqa: E402


def _slow(block):
    """Keeps the run long enough for the kill to land in the middle of it."""
    time.sleep(0.05)
    return block


def _holding(client, part):
    """Address of a worker holding a result whose key names `part`, or None."""
    for addr, keys in client.has_what().items():
        if any(part in str(k) for k in keys):
            return addr
    return None


def test_label_exact_after_worker_killed():
    rng = np.random.default_rng(11)
    mask = ndi.gaussian_filter(rng.random((36, 40, 44)), 1.5) > 0.5
    want, wn = ndi.label(mask, ndi.generate_binary_structure(3, 2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        x = da.from_array(mask, chunks=(9, 10, 11)).map_blocks(_slow, dtype=bool)
        lab, n = vd.label(x, connectivity=2)
        pids = client.run(os.getpid)
        futures = client.compute([lab, n])
        victim, t0 = None, time.monotonic()
        while victim is None and time.monotonic() - t0 < 60:
            victim = _holding(client, "voxa-label-merge")  # mid-tree
            time.sleep(0.01)
        assert victim is not None, "no voxa-label-merge task finished in 60 s"
        assert not all(f.done() for f in futures), "the run ended before the kill"
        os.kill(pids[victim], signal.SIGKILL)
        got, gn = client.gather(futures)
        assert victim not in client.scheduler_info()["workers"]  # it did die
        np.testing.assert_array_equal(got, want)
        assert int(gn) == wn
