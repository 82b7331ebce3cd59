"""GPU backends from Python: the OpenCL path (PoCL here) against SciPy/NumPy,
and the CPU path unaffected when no OpenCL ICD is visible.

These call the typed GPU entry points through ctypes on the built libvoxa.so
(voxa_label_on, voxa_balls_on, voxa_roi_extract_on); the op interface's
routing (backend=, --backend) is tested in test_gpu_ops.py.
VOXA_TEST_BACKENDS chooses the GPU backends (default "opencl")."""
import ctypes as C
import os
import subprocess

import numpy as np
import pytest
import scipy.ndimage as ndi

from conftest import CLI

LIB = os.path.join(os.path.dirname(os.path.abspath(CLI)), "libvoxa.so")
BACKENDS = {"cpu": 0, "opencl": 1, "cuda": 2, "auto": 3}
GPUS = os.environ.get("VOXA_TEST_BACKENDS", "opencl").replace(",", " ").split()
DTYPES = {np.dtype(t): i for i, t in enumerate(
    ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
     "float32", "float64"])}


class Array(C.Structure):
    _fields_ = [("data", C.c_void_p), ("dtype", C.c_int), ("ndim", C.c_int),
                ("shape", C.c_int64 * 8), ("strides", C.c_int64 * 8), ("owner", C.c_void_p)]


class BallsParams(C.Structure):
    _fields_ = [("points", C.c_void_p), ("npoints", C.c_int64), ("radius", C.c_double),
                ("radii", C.c_void_p), ("spacing", C.c_void_p), ("owner", C.c_int),
                ("progress_fn", C.c_void_p), ("progress_user", C.c_void_p)]


class RoiParams(C.Structure):
    _fields_ = [("coords", C.c_void_p), ("n", C.c_int64), ("k", C.c_int),
                ("size", C.c_void_p), ("centered", C.c_int), ("mode", C.c_int),
                ("cval", C.c_double)]


@pytest.fixture(scope="module")
def lib():
    if not os.path.exists(LIB):
        pytest.fail(f"{LIB} is missing: build first (make build)")
    lib = C.CDLL(LIB)
    lib.voxa_last_error.restype = C.c_char_p
    return lib


def view(a):
    v = Array(a.ctypes.data, DTYPES[a.dtype], a.ndim)
    for d in range(a.ndim):
        v.shape[d], v.strides[d] = a.shape[d], a.strides[d]
    return v


def check(lib, status):
    assert status == 0, lib.voxa_last_error().decode()


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("shape,conn", [((997,), 1), ((61, 259), 1), ((61, 259), 2),
                                        ((17, 33, 65), 1), ((17, 33, 65), 2),
                                        ((17, 33, 65), 3)])
def test_label_matches_scipy(lib, backend, shape, conn):
    rng = np.random.default_rng(len(shape) * 10 + conn)
    for density in (0.3, 0.55, 0.8):
        mask = rng.random(shape) < density
        want, n = ndi.label(mask, ndi.generate_binary_structure(len(shape), conn))
        got = np.full(shape, -7, np.int32)
        nl = C.c_int64(-1)
        check(lib, lib.voxa_label_on(BACKENDS[backend], C.byref(view(mask)), None, conn,
                                     C.byref(view(got)), C.byref(nl)))
        assert nl.value == n
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", GPUS)
def test_label_fortran_order_and_uint16(lib, backend):
    rng = np.random.default_rng(7)
    mask = np.asfortranarray(rng.random((23, 45, 67)) < 0.5).astype(np.float64)
    want, n = ndi.label(mask)
    got = np.zeros(mask.shape, np.uint16)
    nl = C.c_int64()
    check(lib, lib.voxa_label_on(BACKENDS[backend], C.byref(view(mask)), None, 1,
                                 C.byref(view(got)), C.byref(nl)))
    assert nl.value == n
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("owner", [0, 1])
def test_balls_matches_brute_force(lib, backend, owner):
    rng = np.random.default_rng(11 + owner)
    shape, spacing = (9, 31, 47), np.array([2.0, 1.0, 0.75])
    pts = np.ascontiguousarray(rng.uniform(-3, 50, (40, 3)) * [0.3, 1, 1])
    radii = rng.uniform(0, 6, 40)
    # NumPy brute force in the rule's order: ((v - p) * s)^2 summed over axes 0, 1, 2
    grid = np.indices(shape).astype(np.float64)
    d2 = np.stack([sum(((grid[a] - p[a]) * spacing[a]) ** 2 for a in range(3)) for p in pts])
    inside = d2 <= (radii ** 2)[:, None, None, None]
    if owner:
        d2m = np.where(inside, d2, np.inf)
        want = np.where(inside.any(0), d2m.argmin(0) + 1, 0).astype(np.int32)
        got = np.full(shape, -1, np.int32)
    else:
        want = inside.any(0).astype(np.uint8)
        got = np.full(shape, 9, np.uint8)
    p = BallsParams(pts.ctypes.data, len(pts), 0.0, radii.ctypes.data, spacing.ctypes.data, owner)
    check(lib, lib.voxa_balls_on(BACKENDS[backend], C.byref(p), C.byref(view(got))))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", GPUS)
@pytest.mark.parametrize("mode,padmode", [(2, "constant"), (3, "edge"), (4, "reflect")])
def test_roi_extract_matches_numpy_pad(lib, backend, mode, padmode):
    rng = np.random.default_rng(mode)
    img = rng.integers(0, 60000, (37, 41), dtype=np.uint16)
    size, pad = (9, 12), 60
    coords = rng.integers(-40, 70, (50, 2)).astype(np.int64)
    kw = {"constant_values": 5} if padmode == "constant" else {}
    padded = np.pad(img, pad, mode=padmode, **kw)
    want = np.stack([padded[c[0] + pad:c[0] + pad + size[0], c[1] + pad:c[1] + pad + size[1]]
                     for c in coords])
    got = np.zeros(want.shape, np.uint16)
    sz = np.array(size, np.int64)
    p = RoiParams(coords.ctypes.data, len(coords), 2, sz.ctypes.data, 0, mode, 5.0)
    check(lib, lib.voxa_roi_extract_on(BACKENDS[backend], C.byref(view(img)), C.byref(p),
                                       C.byref(view(got))))
    np.testing.assert_array_equal(got, want)


def test_libraries_do_not_link_gpu_runtimes():
    """libvoxa and the CLI must load where no GPU runtime exists: dlopen only."""
    for path in (LIB, CLI):
        out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
        needed = [ln for ln in out.splitlines() if "NEEDED" in ln]
        assert needed, out
        assert not any("OpenCL" in ln or "libcuda" in ln for ln in needed), needed


def test_no_icd_cpu_unaffected_and_opencl_fails_clearly(tmp_path, cli):
    empty = tmp_path / "no-vendors"
    empty.mkdir()
    env = dict(os.environ, OCL_ICD_VENDORS=str(empty))
    r = subprocess.run([CLI, "backends"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "opencl  unavailable" in r.stdout and "no OpenCL platform" in r.stdout
    assert "cpu     available" in r.stdout
    r = subprocess.run([CLI, "backends", "--require", "opencl"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 1
    assert "voxa: backends: backend 'opencl' cannot run: no OpenCL platform" in r.stderr
    # the CPU path runs as usual: a CLI job and the Python module
    pts = tmp_path / "p.csv"
    pts.write_text("z,y,x\n2,3,4\n")
    out = tmp_path / "m.npy"
    r = subprocess.run([CLI, "balls", "--shape", "5,8,8", "--points", pts, "--radius", "2",
                        "-o", out], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert np.load(out).sum() == 33
    code = ("import numpy as np, voxa, scipy.ndimage as ndi\n"
            "m = np.random.default_rng(0).random((20, 30)) < 0.5\n"
            "a, n = voxa.label(m); b, k = ndi.label(m)\n"
            "assert n == k and (a == b).all(); print('ok')\n")
    r = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    # and through ctypes: opencl fails with EUNSUPPORTED and the reason, cpu works
    code = ("import ctypes as C, numpy as np\n"
            f"lib = C.CDLL({LIB!r}); lib.voxa_last_error.restype = C.c_char_p\n"
            "b = C.c_int(-1)\n"
            "print(lib.voxa_backend_resolve(1, C.byref(b)), lib.voxa_last_error().decode())\n"
            "print(lib.voxa_backend_resolve(0, C.byref(b)), b.value)\n")
    r = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True, env=env)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("-5 backend 'opencl' cannot run: no OpenCL platform"), r.stdout
    assert lines[1] == "0 0"


def test_backends_cli_lists_every_backend(cli):
    r = cli("backends")
    assert r.returncode == 0, r.stderr
    for name in ("cpu", "opencl", "cuda"):
        assert any(ln.startswith(name) for ln in r.stdout.splitlines()), r.stdout
    r = cli("backends", "--require", "tpu")
    assert r.returncode == 2 and "unknown backend 'tpu'" in r.stderr
    for b in GPUS:
        r = cli("backends", "--require", b)
        assert r.returncode == 0, r.stderr
