"""CLI messages across commands: one "voxa: <cmd>: " prefix, the right figures."""
import numpy as np
import pytest


@pytest.fixture
def mask(tmp_path):
    p = tmp_path / "m.npy"
    np.save(p, np.random.default_rng(0).random((5, 6, 7)) > 0.5)
    return p


@pytest.mark.parametrize("args", [
    ["morph", "open", "{m}", "-o", "{o}", "--ball", "-1"],
    ["balls", "--shape", "4,4", "--points", "{m}", "--radius", "1", "-o", "{o}"],
    ["label", "{m}", "-o", "{o}", "--connectivity", "7"],
    ["edt", "{m}", "-o", "{o}", "--metric", "bogus"],
])
def test_message_has_one_command_prefix(cli, tmp_path, mask, args):
    r = cli(*[a.format(m=mask, o=tmp_path / "o.npy") for a in args])
    assert r.returncode in (1, 2)
    cmd = args[0]
    assert r.stderr.startswith(f"voxa: {cmd}: ")
    assert not r.stderr.startswith(f"voxa: {cmd}: {cmd}:"), r.stderr
    assert not (tmp_path / "o.npy").exists()


def test_regression_edt_spacing_message_names_ndim(cli, tmp_path, mask):
    # The count was printed after the input was freed, as 0.
    r = cli("edt", mask, "-o", tmp_path / "e.npy", "--spacing", "1,1")
    assert r.returncode == 2 and "expected 3 comma-separated values" in r.stderr
