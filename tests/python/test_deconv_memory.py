"""Richardson-Lucy at the edge of memory: an error, never an abort.

FFTW aborts the process when one of its own allocations fails, so voxa
checks for room before planning (deconv_plan.c, voxa__fftw_lock_for_planning)
and every allocation of its own is checked. Each child process computes the
result, lowers its address-space limit (RLIMIT_AS) to a margin above what it
has mapped, and calls richardson_lucy again (free mode, default planning):
it must raise MemoryError or return the same result. Margins 0-15 MiB in
1 MiB steps, then to 40 MiB in 4 MiB steps; without the check, this machine's FFTW aborted at 10 MiB (its
planner's malloc, right after the FFT work buffer fit)."""
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent("""
    import resource, sys
    import numpy as np
    import voxa
    g = np.random.default_rng(0).random((48, 192, 192), dtype=np.float32) + 0.1
    h = voxa.gaussian_psf((16, 16, 16), (3, 2, 2))
    voxa.set_threads(2)
    ref = voxa.richardson_lucy(g, h, 2)
    for line in open("/proc/self/status"):
        if line.startswith("VmSize:"):
            mapped = int(line.split()[1]) * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (mapped + int(sys.argv[1]) * 2**20, hard))
    try:
        got = voxa.richardson_lucy(g, h, 2)
    except MemoryError as e:
        print("error", e)
        sys.exit(0)
    print("ok" if np.array_equal(got, ref) else "DIFFERENT")
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux")
def test_rl_memory_limit_ladder_errors_never_aborts():
    seen = []
    for margin in [*range(0, 16), *range(16, 41, 4)]:
        r = subprocess.run([sys.executable, "-c", CHILD, str(margin)], capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, f"margin {margin} MiB: rc {r.returncode}: {r.stderr[-1500:]}"
        out = r.stdout.strip()
        assert out == "ok" or out.startswith("error "), f"margin {margin} MiB: {out}"
        seen.append(out.split()[0])
    # the ladder covers both sides: limits too low, and enough room
    assert "error" in seen and "ok" in seen, seen
