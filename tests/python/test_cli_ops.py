"""The generic op driver of the CLI: help generated for every registry op, and
the option syntax every op shares (--name V, --name=V, flags, lists, choices
and their aliases, exclusive groups, --, exit codes, no output on failure).
The ops come from the registry itself (_voxa.ops())."""
import os
import re

import numpy as np
import pytest
from scipy import ndimage as ndi

from voxa import _voxa

OPS = {op["name"]: op for op in _voxa.ops()}


def test_registry_is_listed(cli):
    assert {"label", "dilate", "balls", "fill_holes"} <= set(OPS)
    top = cli("--help").stdout
    for op in OPS.values():
        assert re.search(rf"^  {re.escape(op['group'] or op['cli_name'])} ", top, re.M), top
    assert re.search(r"^  info ", top, re.M) and re.search(r"^  psf ", top, re.M)


@pytest.mark.parametrize("name", sorted(OPS))
def test_help_every_op(cli, name):
    op = OPS[name]
    cmd = [op["group"], op["cli_name"]] if op["group"] else [op["cli_name"]]
    r = cli("help", name)
    assert r.returncode == 0, r.stderr
    text = r.stdout
    assert text.startswith(op["summary"] + "\n\n")
    assert "usage: voxa " + " ".join(cmd) + (" IN" if op["ninputs"] else "") + " -o OUT" in text
    assert "-o, --output OUT" in text
    assert (op["details"] or "") in text
    assert ("--describe" in text) == op["has_describe"]
    for line in text.splitlines():
        assert len(line) <= 100, line
    # the same text from `voxa <cmd> --help` and `voxa help <group> <op>`
    r2 = cli(*cmd, "--help")
    assert r2.returncode == 0 and r2.stdout == text
    assert cli("help", *cmd).stdout == text
    for p in op["params"]:
        opt = "--" + p["name"].replace("_", "-")
        if "hidden" in p["flags"]:
            assert opt + " " not in text and opt + "\n" not in text, opt
            continue
        line = re.search(rf"^ +{re.escape(opt)}\b.*(\n {{20,}}.*)*", text, re.M)
        assert line, (opt, text)
        entry = " ".join(line.group(0).split())
        assert p["help"].split()[0] in entry
        if p["metavar"]:
            assert entry.startswith(f"{opt} {p['metavar']} "), entry
        if p["default"] is not None and p["type"] != "flag":  # _voxa gives it parsed
            d = p["default"]
            assert f"(default {d})" in entry if isinstance(d, str) else "(default " in entry, entry
        if p["alias"]:
            assert "also --" + p["alias"].replace("_", "-") in entry, entry
        for word in p["choices"] or []:
            assert word.split("=")[0] in entry, (word, entry)
        # the parser knows the option (and its alias): no "unknown option"
        for o in (opt, "--" + (p["alias"] or p["name"]).replace("_", "-")):
            r3 = cli(*cmd, o, *([] if p["type"] == "flag" else ["x"]), "-o", "/nonexistent/x.npy")
            assert "unknown option" not in r3.stderr, (o, r3.stderr)
            assert r3.returncode in (1, 2)


def test_help_group(cli):
    r = cli("help", "morph")
    assert r.returncode == 0
    for op in ("dilate", "erode", "open", "close"):
        assert re.search(rf"^  {op} +Binary", r.stdout, re.M), r.stdout
    assert "exactly one of:" in r.stdout and "--ball R" in r.stdout
    assert cli("morph", "--help").stdout == r.stdout
    assert "morph" in cli("--help").stdout
    assert cli("help", "morph", "open").stdout == cli("help", "open").stdout
    assert cli("help", "morph", "fill-holes").stdout == cli("help", "fill_holes").stdout
    r = cli("help", "morph", "blur")
    assert r.returncode == 2 and "unknown command" in r.stderr
    r = cli("morph")
    assert r.returncode == 2 and r.stderr.startswith("voxa: morph: expected an operation")


def test_help_content_label(cli):
    text = cli("help", "label").stdout
    assert "usage: voxa label IN -o OUT [--connectivity C | --structure S.npy] [--dtype T]" in text
    assert "at most one of:" in text and "(default 1)" in text
    assert "Prints the number of components." in text  # the details


@pytest.fixture
def mask(tmp_path):
    a = np.random.default_rng(3).random((6, 7, 8)) < 0.45
    np.save(tmp_path / "m.npy", a)
    return a


def run_ok(cli, *args):
    r = cli(*args)
    assert r.returncode == 0, (args, r.stderr)
    return r


def test_equals_form_and_separate_value(cli, tmp_path, mask):
    m = tmp_path / "m.npy"
    run_ok(cli, "label", m, "-o", tmp_path / "a.npy", "--connectivity=2", "--dtype=int64")
    run_ok(cli, "label", m, "--output", tmp_path / "b.npy", "--connectivity", "2",
           "--dtype", "int64")
    run_ok(cli, "label", "--output=" + str(tmp_path / "c.npy"), m, "--connectivity", "2",
           "--dtype", "int64")
    want = ndi.label(mask, ndi.generate_binary_structure(3, 2))[0]
    for f in "abc":
        got = np.load(tmp_path / f"{f}.npy")
        assert got.dtype == np.int64 and np.array_equal(got, want)


def test_last_value_wins(cli, tmp_path, mask):
    m = tmp_path / "m.npy"
    r = run_ok(cli, "label", m, "-o", tmp_path / "a.npy", "--connectivity", "3",
               "--connectivity", "1")
    assert r.stdout.strip() == str(ndi.label(mask)[1])


def test_flags(cli, tmp_path, mask):
    m = tmp_path / "m.npy"
    run_ok(cli, "edt", m, "-o", tmp_path / "s.npy", "--squared")
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"),
                               ndi.distance_transform_edt(mask) ** 2, rtol=1e-12)
    r = cli("edt", m, "-o", tmp_path / "x.npy", "--squared=1")
    assert r.returncode == 2 and "--squared takes no value" in r.stderr


def test_lists(cli, tmp_path, mask):
    m = tmp_path / "m.npy"
    want = ndi.binary_dilation(mask, np.ones((3, 3, 3)))
    for box in ("3", "3,3,3", "3x3x3"):
        run_ok(cli, "morph", "dilate", m, "-o", tmp_path / "d.npy", "--box", box)
        assert np.array_equal(np.load(tmp_path / "d.npy"), want), box
    for bad, msg in (("3,3", "--box 2 values, expected 3"), ("3,,3", "--box '3,,3'"),
                     ("", "--box ''"), ("0", "--box '0'")):
        r = cli("morph", "dilate", m, "-o", tmp_path / "x.npy", "--box", bad)
        assert r.returncode == 2 and r.stderr.startswith("voxa: morph: " + msg), (bad, r.stderr)
    run_ok(cli, "edt", m, "-o", tmp_path / "e.npy", "--spacing", "2")
    np.testing.assert_allclose(np.load(tmp_path / "e.npy"),
                               ndi.distance_transform_edt(mask, sampling=2), rtol=1e-12)


def test_choices_and_aliases(cli, tmp_path, mask):
    m = tmp_path / "m.npy"
    for word in ("cityblock", "taxicab"):
        run_ok(cli, "edt", m, "-o", tmp_path / f"{word}.npy", "--metric", word)
        assert np.array_equal(np.load(tmp_path / f"{word}.npy"),
                              ndi.distance_transform_cdt(mask, "taxicab"))
    r = cli("edt", m, "-o", tmp_path / "x.npy", "--metric", "manhattan")
    assert r.returncode == 2
    assert r.stderr == ("voxa: edt: --metric 'manhattan': expected euclidean, cityblock or "
                        "chessboard\n")
    r = cli("label", m, "-o", tmp_path / "x.npy", "--dtype", "float32")
    assert r.returncode == 2 and "--dtype 'float32': expected int32, uint16, uint32 or int64" \
        in r.stderr


def test_exclusive_groups(cli, tmp_path, mask):
    m, full = tmp_path / "m.npy", tmp_path / "full.npy"
    np.save(full, np.ones((3, 3, 3), np.uint8))
    # an option of a group replaces the group's default (--connectivity 1)
    r = run_ok(cli, "label", m, "-o", tmp_path / "s.npy", "--structure", full)
    want, n = ndi.label(mask, np.ones((3, 3, 3)))
    assert r.stdout.strip() == str(n) and np.array_equal(np.load(tmp_path / "s.npy"), want)
    r = cli("label", m, "-o", tmp_path / "x.npy", "--structure", full, "--connectivity", "2")
    assert r.returncode == 2
    assert r.stderr == "voxa: label: give at most one of --connectivity and --structure\n"
    r = cli("morph", "open", m, "-o", tmp_path / "x.npy")
    assert r.returncode == 2 and "give exactly one of --ball, --diamond, --box" in r.stderr
    r = cli("morph", "open", m, "-o", tmp_path / "x.npy", "--ball", "1", "--footprint", full)
    assert r.returncode == 2 and "give exactly one of" in r.stderr
    assert not (tmp_path / "x.npy").exists()


def test_usage_errors(cli, tmp_path, mask):
    m = tmp_path / "m.npy"
    (tmp_path / "p.csv").write_text("y,x\n1,2\n")
    cases = [
        (["label", m, "-o", tmp_path / "x.npy", "--connectivity"], "option --connectivity "
         "needs a value"),
        (["label", m, "-o", tmp_path / "x.npy", "--nope", "1"], "unknown option '--nope' "
         "(see voxa help label)"),
        (["label", m, "-o", tmp_path / "x.npy", "-q"], "unknown option '-q'"),
        (["label", m, m, "-o", tmp_path / "x.npy"], "unexpected argument"),
        (["morph", "open", m, "-o", tmp_path / "x.npy", "--ball", "1", "--border-value", "2"],
         "--border-value '2': expected a whole number from 0 to 1"),
        (["edt", m, "-o", tmp_path / "x.npy", "--indices", tmp_path / "i.npy"],
         "unknown option '--indices'"),  # hidden: bindings only
        (["edt", m, "-o", tmp_path / "x.npy", "--describe"], "unknown option '--describe'"),
        (["balls", m, "-o", tmp_path / "x.npy"], "unexpected argument"),  # no input
        (["balls", "-o", tmp_path / "x.npy", "--points", m], "--shape is required"),
        # a check message that names options itself is shown without the prefix
        (["edt", m, "-o", tmp_path / "x.npy", "--metric", "chessboard", "--squared"],
         "voxa: edt: --spacing, --squared and --dtype apply to --metric euclidean only"),
        (["balls", "-o", tmp_path / "x.npy", "--points", tmp_path / "p.csv", "--shape", "4,4"],
         "voxa: balls: give --radius or a 'radius' column in"),
        # ... else it reads "--param <message>"
        (["morph", "open", m, "-o", tmp_path / "x.npy", "--diamond", "1", "--spacing", "2"],
         "voxa: morph: --spacing applies to --ball (or --footprint) only"),
    ]
    for args, msg in cases:
        r = cli(*args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("voxa: ") and msg in r.stderr, (args, r.stderr)
        assert r.stderr.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["m.npy", "p.csv"]


def test_double_dash_and_negative_numbers(cli, tmp_path, mask):
    np.save(tmp_path / "-m.npy", mask)
    run_ok(cli, "label", "-o", tmp_path / "a.npy", "--", str(tmp_path / "-m.npy"))
    os.chdir(tmp_path)
    run_ok(cli, "label", "-o", "b.npy", "--", "-m.npy")
    assert np.array_equal(np.load(tmp_path / "b.npy"), ndi.label(mask)[0])
    # a value may look like a negative number
    run_ok(cli, "morph", "dilate", "m.npy", "-o", "c.npy", "--box", "2", "--iterations", "-1")
    assert np.array_equal(np.load("c.npy"), ndi.binary_dilation(mask, np.ones((2, 2, 2)),
                                                                iterations=-1))


def test_failures_exit_1_and_leave_nothing(cli, tmp_path, mask):
    m = tmp_path / "m.npy"
    np.save(tmp_path / "bad.npy", np.full((3, 3), 1, np.uint8))
    cases = [
        (["label", tmp_path / "none.npy", "-o", tmp_path / "x.npy"], "none.npy"),
        (["label", m, "-o", tmp_path / "x.npy", "--structure", tmp_path / "none.npy"], "none.npy"),
        # a file-valued option whose content the op's check rejects: a failure, as written
        (["label", m, "-o", tmp_path / "x.npy", "--structure", tmp_path / "bad.npy"],
         "voxa: label: structure: 2 dimensions"),
        (["morph", "open", m, "-o", tmp_path / "x.npy", "--ball", "-1"], "voxa: morph: "),
        (["label", m, "-o", tmp_path / "no" / "x.npy"], "voxa: label: "),
    ]
    for args, msg in cases:
        r = cli(*args)
        assert r.returncode == 1, (args, r.stderr)
        assert r.stderr.startswith("voxa: ") and msg in r.stderr, (args, r.stderr)
    assert sorted(os.listdir(tmp_path)) == ["bad.npy", "m.npy"]


def test_describe(cli, tmp_path, mask):
    r = run_ok(cli, "morph", "close", tmp_path / "m.npy", "-o", tmp_path / "c.npy",
               "--diamond", "2", "--describe")
    assert r.stderr.startswith("morph: path: ") and "diamond" in r.stderr
    r = run_ok(cli, "morph", "close", tmp_path / "m.npy", "-o", tmp_path / "s.npy",
               "--diamond", "2", "--describe", "--mem-limit", "64K")  # streamed: the same
    assert r.stderr.startswith("morph: path: ") and "diamond" in r.stderr
    assert np.array_equal(np.load(tmp_path / "s.npy"), np.load(tmp_path / "c.npy"))


def test_generated_output_report(cli, tmp_path):
    (tmp_path / "p.csv").write_text("y,x,radius\n3,4,2\n10,10,1.5\n")
    r = run_ok(cli, "balls", "--shape=16,16", "--points", tmp_path / "p.csv", "-o",
               tmp_path / "b.npy")
    got = np.load(tmp_path / "b.npy")
    n = int(got.sum())
    assert r.stdout == (f"balls: 2 points -> {n} of 256 voxels non-zero "
                        f"({100 * n / 256:.3f}%) -> {tmp_path / 'b.npy'}\n")
    # a streamed run reports the same
    r = run_ok(cli, "balls", "--shape=16,16", "--points", tmp_path / "p.csv", "-o",
               tmp_path / "b.npy", "--mem-limit", "1G", "--chunks", "5,7")
    assert r.stdout == (f"balls: 2 points -> {n} of 256 voxels non-zero "
                        f"({100 * n / 256:.3f}%) -> {tmp_path / 'b.npy'}\n")
    assert np.array_equal(np.load(tmp_path / "b.npy"), got)


def test_parameter_alias_and_required_group(cli, tmp_path):
    img = np.arange(12 * 14, dtype=np.uint16).reshape(12, 14)
    np.save(tmp_path / "img.npy", img)
    (tmp_path / "c.csv").write_text("y,x\n3,4\n8.5,10\n")
    for opt in ("--centres", "--centers"):
        run_ok(cli, "roi", tmp_path / "img.npy", opt, tmp_path / "c.csv", "--size", "3,2",
               "-o", tmp_path / f"{opt[2:]}.npy")
    a, b = np.load(tmp_path / "centres.npy"), np.load(tmp_path / "centers.npy")
    assert np.array_equal(a, b) and np.array_equal(a[0], img[2:5, 3:5])
    assert "also --centers" in cli("help", "roi").stdout
    p = tmp_path / "centres.npy"
    for extra in ([], ["--shape", "12,14", "--volume", tmp_path / "img.npy"]):
        r = cli("paste", p, "--centres", tmp_path / "c.csv", "-o", tmp_path / "x.npy", *extra)
        assert r.returncode == 2
        assert r.stderr == "voxa: paste: give exactly one of --volume and --shape\n"
    r = cli("roi", tmp_path / "img.npy", "--size", "3,2", "-o", tmp_path / "x.npy")
    assert r.stderr == "voxa: roi: give exactly one of --corners and --centres\n"
    run_ok(cli, "paste", p, "--centers", tmp_path / "c.csv", "--shape", "12,14", "-o",
           tmp_path / "v.npy")
    v = np.load(tmp_path / "v.npy")
    assert v.dtype == np.uint16 and np.array_equal(v[2:5, 3:5], img[2:5, 3:5])
    assert not (tmp_path / "x.npy").exists()


def test_measure_table_feeds_balls_and_roi(cli, tmp_path):
    """`voxa measure`'s CSV (skimage's centroid-0.. columns) is a points /
    centres table: balls around the objects' centroids and patches centred
    on them, equal to the Python calls on the same centroids."""
    import csv
    import voxa
    rng = np.random.default_rng(0)
    mask = ndi.gaussian_filter(rng.random((20, 40, 44)), 2) > 0.55
    lab = ndi.label(mask)[0].astype(np.int32)
    img = rng.random(lab.shape).astype(np.float32)
    np.save(tmp_path / "lab.npy", lab)
    np.save(tmp_path / "img.npy", img)
    run_ok(cli, "measure", tmp_path / "lab.npy", "-o", tmp_path / "obj.csv")
    rows = list(csv.DictReader(open(tmp_path / "obj.csv")))
    pts = np.array([[float(r[f"centroid-{d}"]) for d in range(3)] for r in rows])
    assert len(pts) == lab.max() > 3
    run_ok(cli, "balls", "-o", tmp_path / "b.npy", "--shape", "20,40,44", "--points",
           tmp_path / "obj.csv", "--radius", "3")
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), voxa.balls(lab.shape, pts, 3))
    run_ok(cli, "roi", tmp_path / "img.npy", "-o", tmp_path / "p.npy", "--centres",
           tmp_path / "obj.csv", "--size", "5,9,9", "--mode", "constant")
    want = voxa.extract_patches(img, pts, (5, 9, 9), centered=True, mode="constant")
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), want)
