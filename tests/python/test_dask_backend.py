"""voxa.dask with backend=: every op's chunks run on the named backend (the
name reaches each C call) and equal the CPU result; a bad name fails when the
graph is built; None leaves the choice to the worker (VOXA_BACKEND).
VOXA_TEST_BACKENDS chooses the GPU backends (default "opencl", PoCL in
`make test`)."""
import os

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import voxa  # noqa: E402
import voxa.dask as vd  # noqa: E402
from voxa import _backend  # noqa: E402

GPUS = os.environ.get("VOXA_TEST_BACKENDS", "opencl").replace(",", " ").split()


@pytest.fixture(scope="module")
def mask():
    return np.random.default_rng(5).random((19, 23, 21)) < 0.55


def cases(mask):
    x = da.from_array(mask, chunks=(7, 9, 11))
    img = da.from_array(np.random.default_rng(6).random((16, 18, 20)).astype(np.float32) + 0.1,
                        chunks=(8, 9, 10))
    psf = np.ones((3, 3, 3), np.float32) / 27
    pts = np.array([[3.2, 4.5, 5.1], [12.0, 15.3, 9.9], [18.5, 0.2, 20.7]])
    coords = np.array([[0, 0, 0], [5, 6, 7], [12, 14, 10]])
    return {
        "label": lambda b: vd.label(x, connectivity=2, backend=b)[0],
        "opening": lambda b: vd.binary_opening(x, ball=2, backend=b),
        "dilation": lambda b: vd.binary_dilation(x, diamond=1, backend=b),
        "fill_holes": lambda b: vd.binary_fill_holes(x, backend=b),
        "edt": lambda b: vd.distance_transform_edt(x, backend=b),
        "edt_whole": lambda b: vd.distance_transform_edt(x.rechunk(-1), backend=b),
        "edt_clamped": lambda b: vd.distance_transform_edt(x, max_distance=3.0, backend=b),
        "balls": lambda b: vd.balls((19, 23, 21), pts, 4.0, chunks=(7, 9, 11), backend=b),
        "rl": lambda b: vd.richardson_lucy(img, psf, num_iter=3, boundary="periodic",
                                           backend=b),
        "patches": lambda b: vd.extract_patches(x, coords, (4, 5, 6), backend=b),
    }


@pytest.fixture
def seen(monkeypatch):
    """The backend each op call receives (every call then runs on the CPU)."""
    calls = []
    raw = _backend._raw_run_op

    def spy(name, input, output, **kw):
        calls.append(kw.get("backend"))
        return raw(name, input, output, **{**kw, "backend": "cpu"})

    monkeypatch.setattr(_backend, "_raw_run_op", spy)
    return calls


@pytest.mark.parametrize("op", ["label", "opening", "dilation", "fill_holes", "edt_whole",
                                "edt_clamped", "balls", "rl", "patches"])
def test_backend_reaches_every_chunk_call(mask, op, seen):
    """The name given is what each C call receives (threads scheduler: same
    process), so the chunks do run on it; with None they receive None."""
    make = cases(mask)[op]
    want = make(None).compute(scheduler="threads")
    assert seen and set(seen) == {None}
    seen.clear()
    got = make("opencl").compute(scheduler="threads")
    assert seen and set(seen) == {"opencl"}
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("op", ["label", "opening", "fill_holes", "edt", "balls", "patches"])
def test_gpu_chunks_equal_cpu(mask, op, backend):
    make = cases(mask)[op]
    cpu = make("cpu").compute(scheduler="threads")
    gpu = make(backend).compute(scheduler="threads")
    assert cpu.dtype == gpu.dtype
    np.testing.assert_array_equal(gpu, cpu)


@pytest.mark.parametrize("backend", GPUS)
def test_gpu_rl_chunks_equal_cpu(backend):
    img = np.random.default_rng(7).random((16, 18, 20)).astype(np.float32) + 0.1
    x = da.from_array(img, chunks=(8, 9, 10))
    psf = np.random.default_rng(8).random((5, 3, 3)).astype(np.float32)
    psf /= psf.sum()
    cpu = vd.richardson_lucy(x, psf, num_iter=4, boundary="free", backend="cpu").compute()
    gpu = vd.richardson_lucy(x, psf, num_iter=4, boundary="free", backend=backend).compute()
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-6)


def test_bad_backend_fails_when_building_the_graph(mask):
    x = da.from_array(mask, chunks=8)
    for call in (lambda: vd.label(x, backend="gpu"),
                 lambda: vd.binary_opening(x, ball=1, backend="gpu"),
                 lambda: vd.balls((8, 8, 8), [[1, 1, 1]], 2.0, backend="gpu"),
                 lambda: vd.distance_transform_edt(x, backend="gpu"),
                 lambda: vd.extract_patches(x, [[0, 0, 0]], (2, 2, 2), backend="gpu")):
        with pytest.raises(ValueError, match="expected one of"):
            call()


def test_unavailable_backend_fails_as_in_memory(mask):
    """A backend that cannot run here (cuda without a driver) fails in the
    task with the in-memory call's message (a CUDA machine runs it: skip)."""
    try:
        voxa.binary_opening(mask, ball=1, backend="cuda")
    except Exception as e:  # noqa: BLE001  the message is what is compared
        want = (type(e), str(e))
    else:
        pytest.skip("a CUDA device is usable on this machine")
    x = da.from_array(mask, chunks=8)
    with pytest.raises(want[0]) as got:
        vd.binary_opening(x, ball=1, backend="cuda").compute(scheduler="threads")
    assert str(got.value) == want[1] and "cuda" in want[1]


def test_chunked_edt_runs_its_passes_on_the_cpu(mask, seen):
    """Without max_distance, a chunked array's EDT runs the two CPU passes
    (voxa/dask/_edt.py) for backend None or 'cpu', whatever the worker's
    VOXA_BACKEND; a device backend runs the whole array on one chunk there,
    through the op (equal results)."""
    make = cases(mask)["edt"]
    want = make(None).compute(scheduler="threads")
    assert seen == [] and make("cpu").compute(scheduler="threads").tobytes() == want.tobytes()
    got = make("opencl").compute(scheduler="threads")
    assert seen == ["opencl"]
    np.testing.assert_array_equal(got, want)
