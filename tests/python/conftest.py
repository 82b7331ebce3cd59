import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def cli():
    """Run the voxa CLI: cli(*args) -> CompletedProcess (text)."""
    exe = os.environ.get("VOXA_CLI", os.path.join(ROOT, "build", "voxa"))

    def run(*args, **kw):
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, **kw)

    return run
