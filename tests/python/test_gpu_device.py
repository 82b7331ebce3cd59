"""Device arrays (__cuda_array_interface__) on the cuda backend, the parts
that run without CUDA: the interface parsing and its errors (fake objects),
the C entry's argument checks and its "no CUDA" message, the transfer
counter, and that NumPy inputs take the same paths as before. Parity and
"no host copy" on a GPU: test_device_arrays_on_cuda (skipped without CuPy
and a device) and tools/gpu-check.sh."""
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa
from voxa import _device, _voxa
from conftest import CLI


class Fake:
    """An object with only __cuda_array_interface__ (like a CuPy array)."""

    def __init__(self, **over):
        ci = {"shape": (4, 5, 6), "typestr": "|u1", "data": (0x7F0000000000, False),
              "version": 3, "strides": None, "stream": 1}
        ci.update(over)
        self.__cuda_array_interface__ = ci


def test_interface_parsed():
    ci = _device.interface(Fake(typestr="<f4", strides=(120, 24, 4)))
    assert ci["shape"] == (4, 5, 6) and ci["dtype"] == np.float32
    assert ci["ptr"] == 0x7F0000000000 and not ci["readonly"] and ci["stream"] == 1
    # extent-1 axes may carry any stride (as CuPy and PyTorch give them)
    _device.interface(Fake(shape=(1, 5, 6), strides=(999, 6, 1)))


@pytest.mark.parametrize("over,exc,msg", [
    ({"typestr": ">f4"}, ValueError, "big-endian"),
    ({"typestr": "<x9"}, TypeError, "unknown typestr"),
    ({"strides": (1, 4, 20)}, ValueError, "not C-contiguous"),
    ({"mask": object()}, ValueError, "masked"),
    ({"version": 9}, ValueError, "version 9"),
    ({"shape": (4, -1, 6)}, ValueError, "negative extent"),
    ({"data": (0, False)}, ValueError, "NULL device pointer"),
    ({"data": 5}, ValueError, "pointer, read-only"),
])
def test_interface_errors(over, exc, msg):
    with pytest.raises(exc, match=msg):
        _device.interface(Fake(**over))


def test_interface_missing_and_readonly():
    f = Fake()
    del f.__cuda_array_interface__["typestr"]
    with pytest.raises(ValueError, match="lacks 'typestr'"):
        _device.interface(f)
    with pytest.raises(ValueError, match="read-only"):
        _device.interface(Fake(data=(0x7F0000000000, True)), "output", writable=True)
    with pytest.raises(TypeError, match="no __cuda_array_interface__"):
        _device.interface(np.zeros(3))


def test_device_index():
    class Dev:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    f = Fake()
    f.device = Dev(id=1)  # CuPy
    with pytest.raises(ValueError, match="CUDA device 1"):
        _device.check_device(f)
    f.device = Dev(index=0)  # PyTorch
    _device.check_device(f)
    assert _device.device_index(Fake()) is None


def test_run_device_checks():
    ptr = 0x7F0000000000
    with pytest.raises(TypeError, match="bool or uint8"):
        _voxa.run_device("label", ptr, "float32", (4, 5, 6), ptr, "int32")
    with pytest.raises(ValueError, match="no device-array path"):
        _voxa.run_device("dilate", ptr, "uint8", (4, 5, 6), ptr, "uint8")
    with pytest.raises(ValueError, match="ndim"):
        _voxa.run_device("label", ptr, "uint8", (), ptr, "int32")
    with pytest.raises(ValueError, match="sampling"):
        _voxa.run_device("edt", ptr, "uint8", (4, 5, 6), ptr, "float64", spacing=np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="connectivity"):
        _voxa.run_device("label", ptr, "uint8", (4, 5, 6), ptr, "int32", connectivity=4)


def usable(backend):
    return subprocess.run([CLI, "backends", "--require", backend],
                          capture_output=True).returncode == 0


def test_run_device_without_cuda():
    if usable("cuda"):
        pytest.skip("a CUDA device is present (the no-driver message does not apply)")
    ptr = 0x7F0000000000
    for name, odt in (("label", "int32"), ("edt", "float64")):
        with pytest.raises(TypeError, match="(?i)cuda"):
            _voxa.run_device(name, ptr, "uint8", (4, 5, 6), ptr, odt)


def test_fake_device_array_needs_cuda_and_cupy():
    with pytest.raises(TypeError, match="need backend='cuda' or 'auto'"):
        voxa.distance_transform_edt(Fake(), backend="cpu")
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed: the fake pointer would reach the device")
    except ImportError:
        pass
    with pytest.raises((TypeError, ImportError), match="(?i)cupy"):
        voxa.label(Fake(), backend="cuda")


def test_numpy_paths_unaffected():
    m = np.random.default_rng(3).random((9, 10, 11)) < 0.5
    before = _voxa.gpu_transfers()
    lab, n = voxa.label(m, backend="auto")
    ref, k = ndi.label(m)
    assert n == k and np.array_equal(lab, ref)
    np.testing.assert_array_equal(voxa.distance_transform_edt(m, backend="auto"),
                                  ndi.distance_transform_edt(m))
    after = _voxa.gpu_transfers()
    assert all(a >= b for a, b in zip(after, before))


def test_transfer_counter_counts_host_runs():
    if not usable("opencl"):
        pytest.skip("no opencl device")
    m = np.random.default_rng(8).random((6, 7, 8)) < 0.5
    t0, f0 = _voxa.gpu_transfers()
    voxa.label(m, backend="opencl")
    t1, f1 = _voxa.gpu_transfers()
    assert t1 - t0 >= m.size and f1 - f0 >= m.size * 4


def test_device_arrays_on_cuda():
    """Parity with the CPU and no host copy (run where CuPy and a device exist:
    tools/gpu-check.sh)."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver / no device
        pytest.skip(f"no CUDA device: {e}")
    m = np.random.default_rng(4).random((20, 30, 40)) < 0.5
    dm = cupy.asarray(m)
    t0, f0 = _voxa.gpu_transfers()
    lab, n = voxa.label(dm, backend="cuda", connectivity=3)
    d = voxa.distance_transform_edt(dm, sampling=(1.0, 0.5, 2.0), backend="cuda")
    d32 = voxa.distance_transform_edt(cupy.asarray(m.astype(np.float32)).T, backend="cuda",
                                      dtype=np.float32)
    t1, f1 = _voxa.gpu_transfers()
    assert isinstance(lab, cupy.ndarray) and isinstance(d, cupy.ndarray)
    # nothing to the device; back: the label count and two EDT "any background?" flags
    assert t1 - t0 == 0 and f1 - f0 <= 24
    ref, k = ndi.label(m, np.ones((3, 3, 3)))
    assert n == k and np.array_equal(cupy.asnumpy(lab), ref)
    np.testing.assert_array_equal(
        cupy.asnumpy(d), voxa.distance_transform_edt(m, sampling=(1.0, 0.5, 2.0)))
    np.testing.assert_array_equal(
        cupy.asnumpy(d32), voxa.distance_transform_edt(m.T, dtype=np.float32))


class FakeCupyArray:
    """Enough of a CuPy array for voxa._device: shape, dtype, flags, !=."""

    def __init__(self, shape, dtype, ptr=0x7F0000001000, contiguous=True):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.ndim, self.size = len(self.shape), int(np.prod(self.shape))
        self.flags = type("F", (), {"c_contiguous": contiguous})()
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": self.dtype.str,
                                         "data": (ptr, False), "version": 3, "strides": None,
                                         "stream": 1}

    def __ne__(self, other):
        return FakeCupyArray(self.shape, np.bool_, 0x7F0000002000)


class FakeCupy:
    """A stand-in `cupy` module that records what voxa asks of it."""

    def __init__(self):
        self.calls = []
        self.cuda = type("C", (), {"ExternalStream": self._stream})

    def _stream(self, s):
        self.calls.append(("stream", s))
        return type("S", (), {"synchronize": lambda _: self.calls.append(("sync", s))})()

    def asarray(self, x):
        return x if isinstance(x, FakeCupyArray) else FakeCupyArray(x.shape, x.dtype)

    def ascontiguousarray(self, x):
        self.calls.append(("contiguous",))
        return FakeCupyArray(x.shape, x.dtype, 0x7F0000003000)

    def empty(self, shape, dtype):
        self.calls.append(("empty", tuple(shape), np.dtype(dtype).name))
        return FakeCupyArray(shape, dtype, 0x7F0000004000)


def test_device_path_wiring(monkeypatch):
    """What the device path hands the C entry, with a fake CuPy: no data moves,
    outputs are allocated on the "device", other dtypes become x != 0 there,
    strided inputs are made contiguous there, foreign streams are waited for."""
    import sys
    fake = FakeCupy()
    monkeypatch.setitem(sys.modules, "cupy", fake)
    seen = []

    def run_device(name, ip, idt, shape, op, odt, **kw):
        seen.append((name, ip, idt, tuple(shape), op, odt, kw))
        return 7

    monkeypatch.setattr(_voxa, "run_device", run_device)
    x = FakeCupyArray((4, 5, 6), np.uint8)
    lab, n = voxa.label(x, backend="cuda", connectivity=2)
    assert n == 7 and lab.dtype == np.int32 and lab.shape == (4, 5, 6)
    name, ip, idt, shape, op, odt, kw = seen[-1]
    assert (name, ip, idt, shape, op, odt) == ("label", 0x7F0000001000, "uint8", (4, 5, 6),
                                               0x7F0000004000, "int32")
    assert kw == {"connectivity": 2, "structure": None}
    s = np.zeros((3, 3, 3), bool)
    s[1, 1, :] = True
    voxa.label(x, s, np.uint16, backend="auto")
    assert seen[-1][5] == "uint16" and seen[-1][6]["structure"] == s.astype(np.uint8).tobytes()
    # float input: x != 0 on the device; strided: made contiguous on the device
    f = FakeCupyArray((4, 5, 6), np.float32, contiguous=False)
    f.__cuda_array_interface__["stream"] = 12345
    d = voxa.distance_transform_edt(f, sampling=2.0, backend="cuda", dtype=np.float32)
    name, ip, idt, shape, op, odt, kw = seen[-1]
    assert (name, idt, odt) == ("edt", "bool", "float32") and d.dtype == np.float32
    assert list(kw["spacing"]) == [2.0, 2.0, 2.0] and kw["squared"] is False
    assert ("sync", 12345) in fake.calls
    # what the device path does not take goes elsewhere (the host path: fake asnumpy absent)
    with pytest.raises(AttributeError, match="asnumpy"):
        voxa.distance_transform_edt(x, return_indices=True, backend="cuda")
    assert len(seen) == 3
