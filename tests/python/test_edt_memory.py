"""The EDT's line scratch is sized by each pass's own lines (src/core/sqdt.c,
docs/morph.md): a long axis with few lines across it, or a 1-D input, costs
no more than the input, the output and a few kilobytes per thread. Before,
every thread reserved about 176 bytes times the longest axis (1 GB per thread
for 6e6 voxels), so these runs, in a subprocess whose address space is
limited to what it already maps plus the output plus 400 MB, failed with
MemoryError. The values are checked against the exact distances of a mask
whose background is every 1000th column.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

N = 6_000_000

SCRIPT = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import voxa
    shape, dtype = eval(sys.argv[1]), np.dtype(sys.argv[2])
    squared, margin = sys.argv[3] == "squared", int(sys.argv[4])
    sampling = eval(sys.argv[5]) if len(sys.argv) > 5 else None
    a = np.ones(shape, bool)
    a[..., ::1000] = False
    x = np.arange(shape[-1]) % 1000
    want = np.minimum(x, 1000 - x).astype(np.float64)
    last = (shape[-1] - 1) // 1000 * 1000  # no background after the last one
    want[last:] = x[last:]
    if sampling:
        want = want * sampling[-1]  # the last axis's spacing: exact (0.5)
    want = np.broadcast_to(want, shape)
    voxa.set_threads(2)
    vm = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                vm = int(line.split()[1]) * 1024
    out_bytes = a.size * dtype.itemsize
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = vm + out_bytes + margin * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        d = voxa.distance_transform_edt(a, dtype=dtype, squared=squared, sampling=sampling)
    except MemoryError as e:
        print("MemoryError", e)
        sys.exit(3)
    resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    assert d.dtype == dtype and d.shape == a.shape
    if squared:
        want = want * want
    assert np.array_equal(d, want.astype(dtype)), "wrong distances"
    print("ok")
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, /proc: Linux")
@pytest.mark.parametrize("shape,dtype", [((3, N), "float32"), ((N,), "float64"),
                                         ((2, N // 2), "float64")])
def test_long_axis_fits_a_tight_address_space(shape, dtype):
    env = dict(os.environ, MALLOC_ARENA_MAX="1", VOXA_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", SCRIPT, repr(shape), dtype, "", "400"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, /proc: Linux")
def test_float32_squared_needs_no_double_copy():
    """float32 squared=True with unit spacing keeps the exact uint32 squares
    in the output (before: a float64 copy, 8 B/voxel: 115 MB more here, so
    this run within the output + 60 MB failed with MemoryError)."""
    env = dict(os.environ, MALLOC_ARENA_MAX="1", VOXA_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", SCRIPT, repr((160, 300, 300)), "float32",
                        "squared", "60"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS, /proc: Linux")
@pytest.mark.parametrize("squared", ["", "squared"])
def test_float32_sampling_needs_no_double_copy(squared):
    """3-D float32 with sampling keeps each voxel's (row distance, axis-1
    offset) pair in the output's 4 bytes between passes (src/core/sqdt.c,
    load_pair); before, a float64 copy (8 B/voxel: 115 MB more here), so
    this run within the output + 60 MB failed with MemoryError."""
    env = dict(os.environ, MALLOC_ARENA_MAX="1", VOXA_NUM_THREADS="2")
    r = subprocess.run([sys.executable, "-c", SCRIPT, repr((160, 300, 300)), "float32",
                        squared, "60", "(2.0, 1.0, 0.5)"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_thin_shapes_equal_scipy():
    """Tiles narrower than 16/64 columns (few lines across a pass) and long
    lines: equal to scipy to the bit, float64, float32 and squared uint32."""
    import scipy.ndimage as ndi
    import voxa
    rng = np.random.default_rng(14)
    for shape in [(20000, 2), (2, 20000), (9000, 3, 1), (1, 3, 9000), (5, 1, 7), (40000,)]:
        a = rng.random(shape) < 0.995
        a.flat[len(a.flat) // 2] = False
        want = ndi.distance_transform_edt(a)
        assert np.array_equal(voxa.distance_transform_edt(a), want)
        assert np.array_equal(voxa.distance_transform_edt(a, dtype=np.float32),
                              want.astype(np.float32))
        sq = voxa.distance_transform_edt(a, squared=True, dtype=np.uint32)
        assert np.array_equal(sq, np.round(want * want).astype(np.uint32))
        sp = [1.5, 0.5, 2.0][:a.ndim]
        assert np.array_equal(voxa.distance_transform_edt(a, sampling=sp, dtype=np.float32),
                              ndi.distance_transform_edt(a, sampling=sp).astype(np.float32))
