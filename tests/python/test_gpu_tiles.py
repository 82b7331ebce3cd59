"""Global ops larger than the device, run by tiles on the GPU backends
(label_gpu_tiled.c, edt_gpu_tiled.c), forced on small volumes with
VOXA_GPU_TILE_BYTES, against the CPU backend and SciPy voxel for voxel.

label: components crossing tile faces along every axis, tile edges and
corners (diagonal chains that only corner connectivity joins), every
connectivity and a custom structure, odd sizes, 1-D to 3-D, the output
dtypes. edt: bit for bit, every pass tiled, spacings and output kinds.
Also: a run that really was tiled (--dry-run's tile count), and a limit
that leaves no room failing clearly (auto: the CPU)."""
import os
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa
from voxa import _voxa
from conftest import CLI

GPUS = os.environ.get("VOXA_TEST_BACKENDS", "opencl").replace(",", " ").split()


def diagonal_chains(shape):
    """Lines along the main diagonal: connected only through corners (3-D)
    or edges (2-D), so every tile corner they pass must be united."""
    m = np.zeros(shape, bool)
    n = min(shape)
    for off in range(0, shape[-1], 4):
        idx = tuple(np.arange(n) for _ in shape[:-1]) + ((np.arange(n) + off) % shape[-1],)
        m[idx] = True
    return m


def snake(shape):
    """One face-connected path winding through the whole volume."""
    m = np.zeros(shape, bool)
    m[..., ::2, :] = True
    if len(shape) >= 2:
        m[..., 1::4, -1] = True
        m[..., 3::4, 0] = True
    return m


def label_masks():
    rng = np.random.default_rng(21)
    out = [rng.random((11, 13, 17)) < p for p in (0.3, 0.55)]
    out += [diagonal_chains((9, 10, 12)), snake((5, 9, 11)),
            np.indices((7, 8, 9)).sum(0) % 2 == 0,            # checkerboard
            np.ones((6, 7, 5), bool),                           # one component, every tile
            np.zeros((4, 5, 6), bool),
            rng.random((37, 41)) < 0.5, diagonal_chains((23, 29)), snake((15, 21)),
            rng.random((101,)) < 0.5]
    return out


LABEL = label_masks()


def structures(nd):
    out = [{"connectivity": c} for c in range(1, nd + 1)]
    if nd == 3:
        s = np.zeros((3, 3, 3), bool)
        s[1, 1, :] = s[1, :, 1] = True
        s[0, 0, 0] = s[2, 2, 2] = True                      # one corner pair only
        out.append({"structure": s})
        alone = np.zeros((3, 3, 3), bool)
        alone[1, 1, 1] = True                              # no neighbours: a label per voxel
        out.append({"structure": alone})
    return out


def run_label(m, backend, **kw):
    dtype = kw.pop("dtype", "int32")
    dt, shape = _voxa.op_output("label", m, dtype=dtype, **kw)
    o = np.full(shape, 77, dt)
    n = _voxa.run_op("label", m, o, backend=backend, dtype=dtype, **kw)
    return o, n


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("i", range(len(LABEL)))
def test_label_tiles_equal_cpu_and_scipy(backend, i, monkeypatch):
    m = LABEL[i]
    for kw in structures(m.ndim):
        want, nw = run_label(m, "cpu", **kw)
        s = kw.get("structure")
        ref, nref = ndi.label(m, s if s is not None else
                              ndi.generate_binary_structure(m.ndim, kw["connectivity"]))
        np.testing.assert_array_equal(want, ref)
        # tiles of one voxel row, then slabs: cuts along every axis
        for limit in (300, 3000):
            monkeypatch.setenv("VOXA_GPU_TILE_BYTES", str(limit))
            got, ng = run_label(m, backend, **kw)
            np.testing.assert_array_equal(got, want)
            assert ng == nw == nref
        monkeypatch.delenv("VOXA_GPU_TILE_BYTES")


@pytest.mark.parametrize("backend", GPUS)
def test_label_tiles_dtypes_and_views(backend, monkeypatch):
    m = LABEL[0]
    monkeypatch.setenv("VOXA_GPU_TILE_BYTES", "1000")
    for dtype in ("uint16", "uint32", "int64"):
        want, _ = run_label(m, "cpu", dtype=dtype)
        got, _ = run_label(m, backend, dtype=dtype)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    # a strided input and the Python function
    v = np.asarray(LABEL[1])[:, ::-1, 1::2]
    got, n = voxa.label(v, backend=backend)
    ref, nref = ndi.label(v)
    np.testing.assert_array_equal(got, ref)
    assert n == nref


@pytest.mark.parametrize("backend", GPUS)
def test_label_tiles_are_used(backend, tmp_path):
    """--dry-run prints the tile count under the limit; the same command
    without --dry-run gives the CPU's labels."""
    m = LABEL[0]
    np.save(tmp_path / "m.npy", m)
    env = dict(os.environ, VOXA_GPU_TILE_BYTES="3000")
    cmd = [CLI, "label", str(tmp_path / "m.npy"), "-o", str(tmp_path / "l.npy"),
           "--backend", backend, "--connectivity", "3"]
    p = subprocess.run(cmd + ["--dry-run"], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    line = [x for x in p.stdout.splitlines() if x.startswith("device tiles:")]
    assert line and int(line[0].split()[2]) > 8, p.stdout
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    ref, n = ndi.label(m, np.ones((3, 3, 3)))
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), ref)
    assert p.stdout.split() == [str(n)]


def edt_masks():
    rng = np.random.default_rng(5)
    out = [rng.random((11, 13, 17)) < p for p in (0.5, 0.97)]
    z = np.ones((9, 10, 11), bool)
    z[8, 0, 10] = False                                   # one far corner background
    out += [z, rng.random((37, 41)) < 0.9, rng.random((201,)) < 0.8,
            rng.random((3, 4, 5, 6)) < 0.8]
    return out


EDT = edt_masks()


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("i", range(len(EDT)))
def test_edt_tiles_bit_for_bit(backend, i, monkeypatch):
    m = EDT[i]
    sp = tuple(np.linspace(0.7, 2.3, m.ndim))
    cases = [{}, {"spacing": sp}, {"dtype": "float32"}, {"squared": True},
             {"squared": True, "dtype": "uint32"}, {"dtype": "float32", "spacing": sp}]
    for params in cases:
        dt, shape = _voxa.op_output("edt", m, **params)
        want = np.empty(shape, dt)
        _voxa.run_op("edt", m, want, backend="cpu", **params)
        for limit in (2000, 20000):  # a few lines per tile, then slabs
            if m.ndim == 1 and limit == 2000:
                limit = 2000 * 9  # a 1-D volume is one line: it has to fit
            monkeypatch.setenv("VOXA_GPU_TILE_BYTES", str(limit))
            got = np.full(shape, 7, dt)
            _voxa.run_op("edt", m, got, backend=backend, **params)
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (params, limit)
        monkeypatch.delenv("VOXA_GPU_TILE_BYTES")
    np.testing.assert_array_equal(voxa.distance_transform_edt(m, backend="cpu"),
                                  ndi.distance_transform_edt(m))


@pytest.mark.parametrize("backend", GPUS)
def test_edt_tiles_limits(backend, monkeypatch, tmp_path):
    m = EDT[0]
    np.save(tmp_path / "m.npy", m)
    env = dict(os.environ, VOXA_GPU_TILE_BYTES="2000")
    p = subprocess.run([CLI, "edt", str(tmp_path / "m.npy"), "-o", str(tmp_path / "d.npy"),
                        "--backend", backend, "--dry-run"], env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    line = [x for x in p.stdout.splitlines() if x.startswith("device tiles:")]
    assert line and int(line[0].split()[2]) > 3, p.stdout
    # one line with its scratch does not fit: a clear error; auto runs the CPU
    monkeypatch.setenv("VOXA_GPU_TILE_BYTES", "300")
    with pytest.raises(TypeError, match="more device memory than the limit"):
        voxa.distance_transform_edt(m, backend=backend)
    np.testing.assert_array_equal(voxa.distance_transform_edt(m, backend="auto"),
                                  ndi.distance_transform_edt(m))
