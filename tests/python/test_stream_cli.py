"""Every CLI op block by block (--mem-limit/--chunks) equals the in-memory run;
--dry-run prints the plan; a failed or killed streamed run leaves no output."""
import os
import signal
import subprocess
import time

import numpy as np
import pytest
from scipy import ndimage as ndi

from conftest import CLI
import voxa


def run(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(5)
    mask = rng.random((23, 31, 29)) < 0.45
    np.save(tmp_path / "m.npy", mask)
    np.save(tmp_path / "f.npy", np.asfortranarray(mask.astype(np.float32)))
    np.save(tmp_path / "be.npy", mask.astype(">u2"))
    img = (rng.random((23, 31, 29)) * 1000).astype(np.uint16)
    np.save(tmp_path / "img.npy", img)
    np.save(tmp_path / "psf.npy", np.ones((3, 3, 3), np.float32) / 27)
    (tmp_path / "p.csv").write_text("x,y,z\n3.5,4,5\n20,28.25,17\n-2,9,11\n")
    np.save(tmp_path / "c.npy", np.array([[1, 2, 3], [10, 20, 5]]))
    return tmp_path


CASES = [
    ["label", "{m}"],
    ["label", "{f}", "--connectivity", "3"],
    ["label", "{be}", "--connectivity", "2", "--dtype", "int64"],
    ["morph", "open", "{m}", "--ball", "3"],
    ["morph", "close", "{m}", "--diamond", "2", "--border-value", "1"],
    ["morph", "erode", "{f}", "--box", "3,1,5", "--iterations", "2"],
    ["morph", "fill-holes", "{m}"],
    ["edt", "{m}", "--spacing", "2,1,1"],
    ["balls", "--shape", "23,31,29", "--points", "{p}", "--radius", "4.5", "--owner"],
    ["roi", "{img}", "--corners", "{c}", "--size", "4,5,6", "--mode", "reflect"],
]


@pytest.mark.parametrize("args", CASES, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("limit, chunks", [("64K", None), ("1G", "1,31,29"), ("1G", "5,4,7")])
def test_streamed_equals_in_memory(files, args, limit, chunks):
    paths = dict(m=files / "m.npy", f=files / "f.npy", be=files / "be.npy",
                 img=files / "img.npy", p=files / "p.csv", c=files / "c.npy")
    args = [a.format(**paths) for a in args]
    a = run(*args, "-o", files / "whole.npy")
    assert a.returncode == 0, a.stderr
    extra = ["--mem-limit", limit]  # edt, roi, fill holes: streamed passes (run_*.c)
    if chunks and args[0] != "roi":  # roi: a gather into (N, *size); blocks of its output
        extra += ["--chunks", chunks]
    b = run(*args, "-o", files / "blocks.npy", *extra)
    assert b.returncode == 0, b.stderr
    np.testing.assert_array_equal(np.load(files / "whole.npy"), np.load(files / "blocks.npy"))
    if args[0] == "label":
        assert a.stdout == b.stdout


def test_label_equals_scipy_by_blocks(files):
    m = np.load(files / "m.npy")
    for c in (1, 2, 3):
        r = run("label", files / "m.npy", "-o", files / "l.npy", "--connectivity", c,
                "--mem-limit", "1G", "--chunks", "4,7,5")
        assert r.returncode == 0, r.stderr
        want, n = ndi.label(m, ndi.generate_binary_structure(3, c))
        np.testing.assert_array_equal(np.load(files / "l.npy"), want)
        assert r.stdout.strip() == str(n)


@pytest.mark.parametrize("boundary", ["free", "zero"])
def test_deconvolve_blocks(files, boundary):
    # --halo exact (iterations x the PSF extent) equals the whole-volume run
    # within float32 rounding; the default halo (one extent) approximates it.
    a = run("deconvolve", files / "img.npy", "--psf", files / "psf.npy", "-o",
            files / "w.npy", "--iterations", 3, "--boundary", boundary)
    assert a.returncode == 0, a.stderr
    w = np.load(files / "w.npy")
    errs = {}
    for halo in ("exact", "psf"):
        b = run("deconvolve", files / "img.npy", "--psf", files / "psf.npy", "-o",
                files / "b.npy", "--iterations", 3, "--boundary", boundary, "--halo", halo,
                "--mem-limit", "1G", "--chunks", "12,31,29")
        assert b.returncode == 0, b.stderr
        s = np.load(files / "b.npy")
        assert s.shape == w.shape and s.dtype == w.dtype
        errs[halo] = np.abs(w - s).max() / np.abs(w).max()
    if boundary == "zero":
        assert errs["exact"] < 1e-4
    assert errs["psf"] > errs["exact"]


def test_deconvolve_blocks_thinner_than_the_psf(tmp_path):
    """Blocks of 4 planes and a PSF of 7: clamped at the volume's edge (and
    the last block, 2 planes), a block grown by its halo would be thinner
    than the PSF. Its input region is widened inwards to a full grown
    block's width instead, so every block equals RL on exactly that region,
    cropped (to float32 rounding: another process's plans)."""
    rng = np.random.default_rng(8)
    img = (rng.random((30, 20, 18)) * 100 + 10).astype(np.float32)
    psf = voxa.gaussian_psf((7, 3, 5), (1.5, 1, 1))
    np.save(tmp_path / "img.npy", img)
    np.save(tmp_path / "psf.npy", psf)
    r = run("deconvolve", tmp_path / "img.npy", "--psf", tmp_path / "psf.npy", "-o",
            tmp_path / "b.npy", "--iterations", 3, "--mem-limit", "1G", "--chunks", "4,20,18",
            "--planning", "estimate")
    assert r.returncode == 0, r.stderr
    lo, hi = voxa._voxa.op_halo("deconvolve", 3, psf=psf, iterations=3)
    assert (lo[0], hi[0]) == (3, 3)
    want = np.empty_like(img)
    for z in range(0, 30, 4):
        e = min(z + 4, 30)
        a, b = max(z - 3, 0), min(e + 3, 30)
        if b - a < 10:  # the grown block's width: 4 + 3 + 3
            a, b = (0, 10) if a == 0 else (b - 10, b)
        assert b - a == 10
        out = voxa.richardson_lucy(img[a:b], psf, 3, planning="estimate")
        want[z:e] = out[z - a:e - a]
    got = np.load(tmp_path / "b.npy")
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max()


def test_dry_run_and_bad_options(files):
    r = run("morph", "open", files / "m.npy", "--ball", "2", "--mem-limit", "100K", "--dry-run")
    assert r.returncode == 0 and "blocks:" in r.stdout and "halo:    4x4x4" in r.stdout
    assert not (files / "x.npy").exists()
    r = run("label", files / "m.npy", "-o", files / "x.npy", "--mem-limit", "lots")
    assert r.returncode == 2 and "--mem-limit 'lots'" in r.stderr
    r = run("label", files / "m.npy", "-o", files / "x.npy", "--mem-limit", "1G", "--chunks", "2,2")
    assert r.returncode == 2 and "--chunks" in r.stderr
    r = run("edt", files / "m.npy", "-o", files / "x.npy", "--mem-limit", "1K")
    assert r.returncode == 1 and "--mem-limit 1K" in r.stderr  # one slice does not fit
    assert not (files / "x.npy").exists()
    np.save(files / "ones.npy", np.ones((260, 260), bool))  # 1 component, 67600 blocks
    # block-local ids: 67600 blocks of one label each fit uint16 (one component)
    r = run("label", files / "ones.npy", "-o", files / "x.npy", "--dtype", "uint16",
            "--mem-limit", "1G", "--chunks", "1,1")
    assert r.returncode == 0 and r.stdout.strip() == "1", r.stderr
    np.testing.assert_array_equal(np.load(files / "x.npy"), np.ones((260, 260), np.uint16))
    dots = np.zeros((530, 530), bool)
    dots[::2, ::2] = True  # 70225 components: more than uint16 holds, 13250 per block
    np.save(files / "dots.npy", dots)
    (files / "x.npy").unlink()
    r = run("label", files / "dots.npy", "-o", files / "x.npy", "--dtype", "uint16",
            "--mem-limit", "1G", "--chunks", "100,530")
    assert r.returncode == 1 and "70225 components" in r.stderr, r.stderr
    assert not (files / "x.npy").exists()
    os.remove(files / "ones.npy")
    os.remove(files / "dots.npy")
    assert sorted(os.listdir(files)) == sorted(
        ["m.npy", "f.npy", "be.npy", "img.npy", "psf.npy", "p.csv", "c.npy"])


def test_killed_run_leaves_no_output(tmp_path):
    big = np.random.default_rng(1).random((64, 256, 256)) < 0.5
    np.save(tmp_path / "big.npy", big)
    out = tmp_path / "o.npy"
    # one thread, one-plane blocks with an 8-plane halo each side: about a
    # second here; the temporary appears within milliseconds, and the run is
    # killed 0.1 s later, mid-run (a fixed sleep from the start raced a fast
    # machine's finished run)
    p = subprocess.Popen([CLI, "morph", "open", str(tmp_path / "big.npy"), "-o", str(out),
                          "--ball", "8", "--mem-limit", "1G", "--chunks", "1,256,256"],
                         env=dict(os.environ, VOXA_NUM_THREADS="1"))
    t0 = time.monotonic()
    while not list(tmp_path.glob("o.npy.tmp*")) and p.poll() is None \
            and time.monotonic() - t0 < 60:
        time.sleep(0.002)
    time.sleep(0.1)
    running = p.poll() is None
    p.send_signal(signal.SIGKILL)
    p.wait()
    assert running, "the run ended before it could be killed"
    assert list(tmp_path.glob("o.npy.tmp*")), "no temporary seen"
    assert not out.exists()  # only a temporary (.tmp-PID-N) may remain
    r = run("morph", "open", tmp_path / "big.npy", "-o", out, "--ball", "6", "--mem-limit", "1G",
            "--chunks", "16,256,256")
    assert r.returncode == 0, r.stderr
    assert np.array_equal(np.load(out), ndi.binary_opening(big, structure=ball(6)))


def ball(r):
    g = np.mgrid[-r:r + 1, -r:r + 1, -r:r + 1]
    return (g ** 2).sum(0) <= r * r


zarr = pytest.importorskip("zarr")


def test_zarr_in_and_out(tmp_path):
    m = np.random.default_rng(2).random((40, 50, 45)) < 0.5
    z = zarr.create_array(tmp_path / "in.zarr", shape=m.shape, chunks=(16, 32, 32), dtype=bool)
    z[:] = m
    r = run("label", tmp_path / "in.zarr", "-o", tmp_path / "l.zarr", "--connectivity", 3,
            "--mem-limit", "400K")
    assert r.returncode == 0, r.stderr
    want, n = ndi.label(m, ndi.generate_binary_structure(3, 3))
    np.testing.assert_array_equal(zarr.open_group(tmp_path / "l.zarr")["0"][:], want)
    assert r.stdout.strip() == str(n)
    assert not list(tmp_path.glob("*labels*"))  # the raw scratch of pass 1 is gone
    r = run("morph", "close", tmp_path / "in.zarr", "-o", tmp_path / "c.zarr", "--diamond", 2,
            "--mem-limit", "1G", "--chunks", "7,50,45")
    assert r.returncode == 0, r.stderr
    got = zarr.open_group(tmp_path / "c.zarr")["0"][:]
    np.testing.assert_array_equal(got, ndi.binary_closing(m, ndi.iterate_structure(
        ndi.generate_binary_structure(3, 1), 2)))


def test_zarr_resume_after_kill(tmp_path):
    big = np.random.default_rng(3).random((96, 512, 512)) < 0.5
    np.save(tmp_path / "big.npy", big)
    out = tmp_path / "o.zarr"
    args = [CLI, "--threads", "1", "morph", "open", str(tmp_path / "big.npy"), "-o", str(out),
            "--ball", "8", "--mem-limit", "1G", "--chunks", "4,512,512"]
    p = subprocess.Popen(args)
    while p.poll() is None:  # kill once a few blocks are written
        time.sleep(0.01)
        if out.exists() and sum(f.is_file() for f in (out / "0").rglob("*")) >= 4:
            p.send_signal(signal.SIGKILL)
    p.wait()
    assert p.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    assert not (out / "zarr.json").exists()  # not marked complete
    before = {f: f.stat().st_mtime_ns for f in (out / "0").rglob("*") if f.is_file()
              and f.name != "zarr.json"}
    assert before
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (out / "zarr.json").exists()
    kept = [f for f, t in before.items() if f.exists() and f.stat().st_mtime_ns == t]
    assert kept  # chunks of the killed run were not rewritten
    np.testing.assert_array_equal(zarr.open_group(out)["0"][:],
                                  voxa.binary_opening(big, ball=8))


def test_wide_halo_gets_squat_blocks_and_a_note(tmp_path):
    """A small --mem-limit with a wide halo: slabs would run the op on
    hundreds of times the volume (1x1x80 blocks, 1352x); the planner cuts
    every axis instead, and says on stderr what work remains. Same result."""
    rng = np.random.default_rng(8)
    np.save(tmp_path / "m.npy", rng.random((64, 160, 160)) < 0.5)
    r = run("morph", "open", tmp_path / "m.npy", "--ball", "9", "--mem-limit", "1M", "--dry-run")
    assert r.returncode == 0, r.stderr
    work = float(r.stdout.split("work:")[1].split("x")[0])
    assert 1 < work < 40, r.stdout
    plan = voxa.stream.plan("open", tmp_path / "m.npy", mem_limit="1M", ball=9)
    assert plan["overhead"] == pytest.approx(work, rel=0.01) and plan["peak_bytes"] <= 2**20
    assert all(b < s for b, s in zip(plan["block"], plan["shape"]))
    a = run("morph", "open", tmp_path / "m.npy", "--ball", "9", "-o", tmp_path / "a.npy")
    b = run("morph", "open", tmp_path / "m.npy", "--ball", "9", "-o", tmp_path / "b.npy",
            "--mem-limit", "1M")
    assert a.returncode == 0 and b.returncode == 0, b.stderr
    assert "note: blocks of" in b.stderr and "a larger --mem-limit is faster" in b.stderr
    assert "note:" not in a.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
    r = run("morph", "open", tmp_path / "m.npy", "--ball", "1", "--mem-limit", "64M",
            "--chunks", "64,160,160", "--dry-run")
    assert r.returncode == 0 and "work:" not in r.stdout  # one block: its halo is outside
