"""voxa balls / voxa info on the command line: results equal the Python API,
bad input gives a clear message, the right exit code and no output file."""
import os

import numpy as np
import pytest

import voxa


def write_csv(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r) + "\n")
    return path


@pytest.fixture
def points_csv(tmp_path):
    rng = np.random.default_rng(5)
    pts = rng.uniform(-2, 1, (30, 3)) * [12, 40, 50] + [12, 40, 50]
    rows = [(i, x, y, z, 1.5 + i % 3) for i, (z, y, x) in enumerate(pts)]
    return write_csv(tmp_path / "pts.csv", ["ID", "x", "y", "z", "radius"], rows), pts


def test_mask_matches_python(cli, tmp_path, points_csv):
    csv, pts = points_csv
    out = tmp_path / "mask.npy"
    r = cli("balls", "--shape", "12,40,50", "--points", csv, "--radius", "4", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "30 points" in r.stdout
    got = np.load(out)
    assert got.dtype == bool
    np.testing.assert_array_equal(got, voxa.balls((12, 40, 50), pts, 4.0))


def test_owner_spacing_and_radius_column(cli, tmp_path, points_csv):
    csv, pts = points_csv
    out = tmp_path / "own.tif"
    r = cli("--threads", "2", "balls", "--shape", "12,40,50", "--points", csv, "--spacing",
            "2,1,1", "--owner", "-o", out)
    assert r.returncode == 0, r.stderr
    radii = 1.5 + np.arange(30) % 3
    want = voxa.balls((12, 40, 50), pts, radii, spacing=(2, 1, 1), owner=True)
    np.testing.assert_array_equal(voxa.imread(out), want)


def test_2d_shape_uses_x_y(cli, tmp_path):
    csv = write_csv(tmp_path / "p.csv", ["y", "x", "mass"], [(3.5, 4.25, 1), (10, 1, 2)])
    out = tmp_path / "m.npy"
    assert cli("balls", "--shape", "16,16", "--points", csv, "--radius", "2.5", "-o",
               out).returncode == 0
    np.testing.assert_array_equal(np.load(out), voxa.balls((16, 16), [[3.5, 4.25], [10, 1]], 2.5))


@pytest.mark.parametrize("rows, args, code, message", [
    ([(1, 2, "nan")], ["--radius", "2"], 1, "line 2: z is not a finite number"),
    ([(1, 2, 3)], ["--radius", "-1"], 2, "--radius"),
    ([], ["--radius", "2"], 1, "empty"),
    ([(1, 2, 3)], [], 2, "radius"),
    ([(1, 2, 3)], ["--radius", "2", "--spacing", "1,1"], 2, "--spacing"),
    ([(1, 2, 3)], ["--radius", "2", "--bogus"], 2, "unknown option"),
])
def test_bad_input(cli, tmp_path, rows, args, code, message):
    csv = write_csv(tmp_path / "p.csv", ["x", "y", "z"], rows)
    out = tmp_path / "m.npy"
    r = cli("balls", "--shape", "5,6,7", "--points", csv, *args, "-o", out)
    assert r.returncode == code
    assert r.stderr.startswith("voxa: balls: ") and message in r.stderr
    assert not out.exists() and os.listdir(tmp_path) == ["p.csv"]


def test_missing_inputs_and_outputs(cli, tmp_path):
    csv = write_csv(tmp_path / "p.csv", ["x", "y"], [(1, 2)])
    r = cli("balls", "--shape", "5,6,7", "--points", tmp_path / "nope.csv", "--radius", 1,
            "-o", tmp_path / "m.npy")
    assert r.returncode == 1 and "nope.csv" in r.stderr
    r = cli("balls", "--shape", "5,6,7", "--points", csv, "--radius", 1, "-o", tmp_path / "m.npy")
    assert r.returncode == 1 and "no column 'z'" in r.stderr
    r = cli("balls", "--shape", "5,6", "--points", csv, "--radius", 1,
            "-o", tmp_path / "missing" / "m.npy")
    assert r.returncode == 1 and "missing" in r.stderr
    assert not (tmp_path / "missing").exists()
    r = cli("balls", "--shape", "5,6", "--points", csv, "--radius", 1, "-o", tmp_path / "m.xyz")
    assert r.returncode == 1 and "extension" in r.stderr
    assert sorted(os.listdir(tmp_path)) == ["p.csv"]
    assert cli("balls", "--points", csv).returncode == 2


def test_info_help_version(cli, tmp_path):
    np.save(tmp_path / "a.npy", np.array([[0, 3], [7, 0]], dtype=np.uint16))
    r = cli("info", tmp_path / "a.npy")
    assert r.returncode == 0
    assert "(2, 2)" in r.stdout and "uint16" in r.stdout and "foreground: 2" in r.stdout
    assert "max:        7" in r.stdout
    assert cli("info", tmp_path / "none.npy").returncode == 1
    assert cli("info").returncode == 2
    for args in (["--help"], ["help", "balls"], ["balls", "--help"], ["info", "-h"]):
        r = cli(*args)
        assert r.returncode == 0 and "usage" in r.stdout
    assert cli("--version").stdout.startswith("voxa ")
    assert cli("nosuch").returncode == 2
    assert cli("--threads", "0", "info", tmp_path / "a.npy").returncode == 2
