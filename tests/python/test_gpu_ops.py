"""GPU ops through the op interface: backend= (Python), --backend (CLI) and
the routing of voxa_op_run, on the OpenCL backend (PoCL in `make test`).

Every GPU result is compared with the CPU backend bit for bit (and the
distances with SciPy) on random and adversarial masks, odd shapes, every
element kind, iterations and border values; tiling is forced on small
volumes with VOXA_GPU_TILE_BYTES; arguments without a GPU path fail clearly
on opencl and fall back to the CPU on auto. VOXA_TEST_BACKENDS chooses the
GPU backends (default "opencl")."""
import os
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa
from voxa import _voxa
from conftest import CLI

GPUS = os.environ.get("VOXA_TEST_BACKENDS", "opencl").replace(",", " ").split()


def masks():
    rng = np.random.default_rng(11)
    out = [rng.random((13, 17, 19)) < p for p in (0.05, 0.5, 0.97)]
    out.append(rng.random((3, 300)) < 0.3)                 # long lines, > a work-group
    out.append(rng.random((7,)) < 0.5)                     # 1-D
    out.append(rng.random((5, 1, 9)) < 0.6)                # a unit axis
    out.append(rng.random((3, 4, 5, 6)) < 0.7)             # 4-D
    z = np.ones((9, 10, 11), bool)
    z[4, 5, 6] = False                                     # one background voxel
    out.append(z)
    out.append(np.indices((8, 9, 10)).sum(0) % 2 == 0)     # checkerboard
    out.append(np.zeros((6, 7, 8), bool))                  # no foreground
    out.append(np.ones((4, 5, 6), bool))                   # no background
    return out


MASKS = masks()


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))  # bit for bit


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("i", range(len(MASKS)))
def test_edt_equals_cpu_and_scipy(backend, i):
    m = MASKS[i]
    sp = tuple(np.linspace(0.7, 2.3, m.ndim))
    for kw in [{}, {"sampling": sp}]:
        cpu = voxa.distance_transform_edt(m, **kw, backend="cpu")
        gpu = voxa.distance_transform_edt(m, **kw, backend=backend)
        same(cpu, gpu)
        # scipy sums in another order with spacing: equal up to rounding there
        np.testing.assert_allclose(gpu, ndi.distance_transform_edt(m, **kw),
                                   rtol=0 if not kw else 1e-15)
    # every output dtype of the op: float32, squared float64/float32, uint32
    for params in [{"dtype": "float32"}, {"squared": True}, {"squared": True, "dtype": "float32"},
                   {"squared": True, "dtype": "uint32"}, {"dtype": "float32", "spacing": sp}]:
        outs = []
        for b in ("cpu", backend):
            dt, shape = _voxa.op_output("edt", m, **params)
            o = np.empty(shape, dt)
            _voxa.run_op("edt", m, o, backend=b, **params)
            outs.append(o)
        same(*outs)


@pytest.mark.parametrize("backend", GPUS)
def test_edt_uint32_overflow_refused_as_on_cpu(backend):
    """uint32 squared distances that could pass 2^32 - 1: the same clear
    error on every backend, and nothing written."""
    m = np.ones(65536, bool)
    m[0] = False
    for b in ("cpu", backend):
        o = np.full(m.shape, 7, np.uint32)
        with pytest.raises(ValueError, match="may exceed uint32 for this shape"):
            _voxa.run_op("edt", m, o, backend=b, squared=True, dtype="uint32")
        assert (o == 7).all()


ELEMENTS = [
    {"structure": None},                                   # connectivity 1: diamond
    {"structure": np.ones((3, 3, 3), bool)},               # box
    {"structure": voxa.ball(2)},                           # a footprint recognised as a ball
    {"structure": voxa.diamond(2)},
    {"structure": np.ones((2, 4, 3), bool)},               # even box, off-centre
    {"structure": np.ones((1, 1, 5), bool)},
]


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("fn", ["binary_dilation", "binary_erosion", "binary_opening",
                                "binary_closing"])
@pytest.mark.parametrize("e", range(len(ELEMENTS)))
def test_morphology_equals_cpu_and_scipy(backend, fn, e):
    f = getattr(voxa, fn)
    s = ELEMENTS[e]["structure"]
    for m in MASKS[:3] + MASKS[7:9]:
        for it, bv in [(1, 0), (2, 1), (3, 0)]:
            cpu = f(m, s, iterations=it, border_value=bv, backend="cpu")
            gpu = f(m, s, iterations=it, border_value=bv, backend=backend)
            same(cpu, gpu)
            if it == 1:
                np.testing.assert_array_equal(gpu, getattr(ndi, fn)(m, s, border_value=bv))


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("op", ["dilate", "erode", "open", "close"])
def test_ball_diamond_box_parameters(backend, op):
    rng = np.random.default_rng(5)
    m = rng.random((23, 29, 31)) < 0.4
    for params in [{"ball": 3.0}, {"ball": 4.5, "spacing": (2.0, 1.0, 0.8)}, {"ball": 0.5},
                   {"ball": 60.0}, {"diamond": 3}, {"box": (3, 2, 5)}, {"box": 40},
                   {"ball": 1.5, "iterations": 2, "border_value": 1},
                   {"diamond": 2, "iterations": 3, "border_value": 1}]:
        outs = []
        for b in ("cpu", backend):
            o = np.empty(m.shape, bool)
            _voxa.run_op(op, m, o, backend=b, **params)
            outs.append(o)
        same(*outs)


@pytest.mark.parametrize("backend", GPUS)
def test_label_every_connectivity(backend):
    rng = np.random.default_rng(3)
    m = rng.random((17, 45, 70)) < 0.45                    # labels cross work-groups
    for conn in (1, 2, 3):
        s = ndi.generate_binary_structure(3, conn)
        a, n = voxa.label(m, s, backend=backend)
        b, k = ndi.label(m, s)
        assert n == k and np.array_equal(a, b)


@pytest.mark.parametrize("backend", GPUS)
def test_no_gpu_path_fails_clearly_and_auto_falls_back(backend):
    m = MASKS[1]
    s2 = np.zeros((3, 3, 3), bool)                         # a general footprint
    s2[1, 1, :] = s2[0, 0, 0] = True
    with pytest.raises(TypeError, match="ball, diamond and box"):
        voxa.binary_dilation(m, s2, backend=backend)
    same(voxa.binary_dilation(m, s2, backend="auto"), ndi.binary_dilation(m, s2))
    with pytest.raises(TypeError, match="until nothing changes"):
        voxa.binary_erosion(m, iterations=-1, backend=backend)
    with pytest.raises(TypeError, match="no GPU path"):
        voxa.binary_fill_holes(m, backend=backend)
    np.testing.assert_array_equal(voxa.binary_fill_holes(m, backend="auto"),
                                  ndi.binary_fill_holes(m))
    with pytest.raises(TypeError, match="Euclidean distances only"):
        voxa.distance_transform_cdt(m, backend=backend)
    with pytest.raises(ValueError, match="backend"):
        voxa.label(m, backend="tpu")


@pytest.mark.parametrize("backend", GPUS)
def test_tiles_equal_one_run(backend, monkeypatch):
    """VOXA_GPU_TILE_BYTES forces tiles: local ops run block by block with
    their halo and equal the untiled run; EDT runs its passes by tiles; too
    small a limit fails on opencl and runs on the CPU with auto."""
    rng = np.random.default_rng(7)
    m = rng.random((24, 27, 33)) < 0.5
    ref = {op: np.empty(m.shape, bool) for op in ("open", "close")}
    for op in ref:
        _voxa.run_op(op, m, ref[op], ball=3.0, backend="cpu")
    for op in ("open", "close"):
        for limit, params in [(60000, {"ball": 3.0}), (60000, {"ball": 3.0, "border_value": 1}),
                              (15000, {"box": (5, 3, 7)}), (30000, {"diamond": 2, "iterations": 2})]:
            monkeypatch.setenv("VOXA_GPU_TILE_BYTES", str(limit))
            seen = []
            want, got = np.empty(m.shape, bool), np.empty(m.shape, bool)
            _voxa.run_op(op, m, want, backend="cpu", **params)
            _voxa.run_op(op, m, got, backend=backend, progress=lambda d, t: seen.append(t),
                         **params)
            same(want, got)
            assert seen and max(seen) > 4, seen            # it did run in tiles
    monkeypatch.setenv("VOXA_GPU_TILE_BYTES", "5000")
    pts = rng.random((40, 3)) * [24, 27, 33]
    same(voxa.balls((24, 27, 33), pts, 3.5, backend="cpu"),
         voxa.balls((24, 27, 33), pts, 3.5, backend=backend))
    # global ops tile themselves (test_gpu_tiles.py); one line too large fails
    same(voxa.distance_transform_edt(m, backend=backend), ndi.distance_transform_edt(m))
    monkeypatch.setenv("VOXA_GPU_TILE_BYTES", "100")
    with pytest.raises(TypeError, match="more device memory than the limit"):
        voxa.distance_transform_edt(m, backend=backend)
    same(voxa.distance_transform_edt(m, backend="auto"), ndi.distance_transform_edt(m))


@pytest.mark.parametrize("backend", GPUS)
def test_cli_backend_option(backend, tmp_path):
    rng = np.random.default_rng(9)
    np.save(tmp_path / "m.npy", rng.random((19, 23, 29)) < 0.5)
    jobs = [(["morph", "open"], ["--ball", "2.5"]), (["morph", "close"], ["--box", "3,5,3"]),
            (["edt"], ["--spacing", "2,1,1"]), (["label"], ["--connectivity", "3"])]
    for k, (cmd, opts) in enumerate(jobs):
        outs = []
        for b in ("cpu", backend):
            out = tmp_path / f"{k}-{b}.npy"
            r = subprocess.run([CLI, *cmd, tmp_path / "m.npy", "-o", out, "--backend", b, *opts],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            outs.append(np.load(out))
        same(*outs)
    # streamed: every block of the chunk executor runs on the GPU (labels merged across
    # blocks, morphology with its halo)
    m = np.load(tmp_path / "m.npy")
    for cmd, opts, want in [(["label"], ["--connectivity", "2"],
                             ndi.label(m, ndi.generate_binary_structure(3, 2))[0]),
                            (["morph", "open"], ["--ball", "3"], voxa.binary_opening(m, ball=3))]:
        out = tmp_path / "streamed.npy"
        r = subprocess.run([CLI, *cmd, tmp_path / "m.npy", "-o", out, "--backend", backend,
                            "--mem-limit", "64K", *opts], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        np.testing.assert_array_equal(np.load(out), want)
    r = subprocess.run([CLI, "label", tmp_path / "m.npy", "-o", tmp_path / "x.npy",
                        "--backend", "gpu"], capture_output=True, text=True)
    assert r.returncode == 2 and "expected cpu, opencl, cuda or auto" in r.stderr
    r = subprocess.run([CLI, "morph", "fill-holes", tmp_path / "m.npy", "-o",
                        tmp_path / "x.npy", "--backend", backend], capture_output=True, text=True)
    assert r.returncode == 1 and "no GPU path" in r.stderr
    r = subprocess.run([CLI, "morph", "open", "--help"], capture_output=True, text=True)
    assert "--backend B" in r.stdout
    r = subprocess.run([CLI, "morph", "open", tmp_path / "m.npy", "-o", tmp_path / "x.npy",
                        "--ball", "3", "--dry-run"], capture_output=True, text=True)
    assert r.returncode == 0 and "device memory (opencl, cuda): 2 V" in r.stdout


def test_no_icd_backend_option_fails_clearly_auto_runs_cpu(tmp_path):
    empty = tmp_path / "no-vendors"
    empty.mkdir()
    env = dict(os.environ, OCL_ICD_VENDORS=str(empty))
    np.save(tmp_path / "m.npy", np.random.default_rng(1).random((9, 10, 11)) < 0.5)
    base = [CLI, "morph", "open", tmp_path / "m.npy", "--ball", "2"]
    r = subprocess.run(base + ["-o", tmp_path / "a.npy", "--backend", "opencl"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 1 and not (tmp_path / "a.npy").exists()
    assert "backend 'opencl' cannot run: no OpenCL platform" in r.stderr
    r = subprocess.run(base + ["-o", tmp_path / "b.npy", "--backend", "auto"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(base + ["-o", tmp_path / "c.npy"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(tmp_path / "b.npy"), np.load(tmp_path / "c.npy"))
    code = ("import numpy as np, voxa\n"
            "m = np.random.default_rng(0).random((20, 30)) < 0.5\n"
            "try:\n    voxa.label(m, backend='opencl')\n"
            "except TypeError as e:\n    print(e)\n"
            "a, n = voxa.label(m, backend='auto'); b, k = voxa.label(m)\n"
            "assert n == k and (a == b).all()\n")
    r = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "backend 'opencl' cannot run: no OpenCL platform" in r.stdout


class FakeDeviceArray:
    """An object that only has __cuda_array_interface__ (like a CuPy array)."""
    __cuda_array_interface__ = {"shape": (2, 2), "typestr": "|b1", "data": (0, False),
                                "version": 3}


def test_cuda_arrays_need_the_cuda_backend():
    with pytest.raises(TypeError, match="need backend='cuda' or 'auto'"):
        voxa.label(FakeDeviceArray(), backend="cpu")


def test_cupy_arrays_round_trip():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver / no device
        pytest.skip(f"no CUDA device: {e}")
    m = np.random.default_rng(4).random((20, 30, 40)) < 0.5
    d = voxa.distance_transform_edt(cupy.asarray(m), backend="cuda")
    assert isinstance(d, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(d), ndi.distance_transform_edt(m))
    lab, n = voxa.label(cupy.asarray(m), backend="cuda")
    ref, k = ndi.label(m)
    assert n == k and np.array_equal(cupy.asnumpy(lab), ref)
