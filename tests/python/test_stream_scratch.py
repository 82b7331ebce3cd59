"""Label by blocks keeps its block faces in an unnamed scratch file beside
the output (src/stream/label_merge.c, scratch_open: O_TMPFILE, else mkstemp
unlinked at once). When that file cannot be created the run must fail with a
clear message and a non-zero exit, and leave nothing under the output's name
that looks complete.

A folder where the output can be created but the scratch file cannot is
hard to build honestly (both live in the same folder), so the failure is
made with the descriptor limit instead: RLIMIT_NOFILE is raised one by one
from a limit too small to start, so each run fails at the next file it
opens (the input, the face file, a Zarr chunk, ...) until one succeeds. One
of those runs must fail at the face file (EMFILE), and every failed run must
end cleanly."""
import os
import resource
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi

from conftest import CLI


def _nofile(n):
    def pre():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return pre


@pytest.mark.parametrize("out", ["o.npy", "o.tif", "o.zarr"])
def test_face_file_cannot_be_created(tmp_path, out):
    rng = np.random.default_rng(3)
    mask = rng.random((20, 30, 40)) < 0.5
    np.save(tmp_path / "m.npy", mask)
    args = [CLI, "label", tmp_path / "m.npy", "-o", tmp_path / out, "--chunks", "5,10,10"]
    failures = []
    for n in range(4, 64):
        r = subprocess.run(args, capture_output=True, text=True, preexec_fn=_nofile(n))
        if r.returncode == 0:
            break
        failures.append(r.stderr)
        assert r.returncode == 1, r.stderr
        assert r.stderr.startswith("voxa: label: ") and "Too many open files" in r.stderr, r.stderr
        left = sorted(os.listdir(tmp_path))
        assert left in (["m.npy"], ["m.npy", "o.zarr"]), (n, left, r.stderr)
        if "o.zarr" in left:  # a resumable folder, never marked complete
            assert not (tmp_path / "o.zarr" / "zarr.json").exists()
    else:
        pytest.fail("no descriptor limit below 64 let the run finish")
    face = [f for f in failures if "cannot create the face file beside" in f]
    assert face, failures
    assert f"beside '{tmp_path / out}'" in face[0], face[0]
    want, _ = ndi.label(mask)
    if out == "o.npy":
        np.testing.assert_array_equal(np.load(tmp_path / out), want)
    assert sorted(os.listdir(tmp_path)) == sorted(["m.npy", out])  # no scratch left
