import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The CLI under test (`make test-python` sets VOXA_CLI; default: the build's).
CLI = os.environ.get("VOXA_CLI", os.path.join(ROOT, "build", "voxa"))
# FFTW's wisdom cache (docs/deconv.md) stays off: tests never touch the real home.
os.environ.setdefault("VOXA_FFTW_WISDOM", "off")


@pytest.fixture
def cli():
    """Run the voxa CLI: cli(*args) -> CompletedProcess (text)."""
    def run(*args, **kw):
        return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, **kw)

    return run


@pytest.fixture(params=[1, 3], ids=["t1", "t3"])
def threads(request):
    """Run the test with 1 and with 3 threads (3: an uneven split on 2 cores);
    the previous count is restored after it."""
    import voxa
    old = voxa.get_threads()
    voxa.set_threads(request.param)
    yield request.param
    voxa.set_threads(old)
