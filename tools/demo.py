"""make demo: run voxa's main jobs on a built-in sample and show what they did.

The sample is synthetic and seeded (no download): 500 detected centres in a
(20, 1024, 1024) volume, the W1 workload. Each step runs the real CLI
(build/voxa) and prints the command and its output."""
import os
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.ndimage
import scipy.signal

CLI = os.environ.get("VOXA_CLI", os.path.join(os.path.dirname(__file__), "..", "build", "voxa"))


def run(*args):
    cmd = [CLI, *map(str, args)]
    print("$ voxa " + " ".join(shlex.quote(str(a)) for a in args))
    t0 = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    out = (res.stdout + res.stderr).rstrip()
    if out:
        print("  " + out.replace("\n", "\n  "))
    print(f"  [{dt * 1e3:.0f} ms, exit {res.returncode}]\n")
    if res.returncode:
        sys.exit(f"demo: step failed: {' '.join(cmd)}")
    return res.stdout


def step_w1(tmp):
    print("== W1: balls around 500 points in (20, 1024, 1024), then connected components ==\n")
    rng = np.random.default_rng(0)
    shape = (20, 1024, 1024)
    pts = rng.uniform(0, 1, (500, 3)) * shape
    csv = os.path.join(tmp, "points.csv")
    with open(csv, "w") as f:
        f.write("ID,x,y,z,mass\n")
        for i, (z, y, x) in enumerate(pts):
            f.write(f"{i},{x:.6f},{y:.6f},{z:.6f},{rng.uniform(1, 9):.3f}\n")
    print(f"sample: {csv} (500 rows: ID, x, y, z, mass)\n")
    mask = os.path.join(tmp, "mask.npy")
    labels = os.path.join(tmp, "labels.npy")
    run("balls", "--shape", "20,1024,1024", "--points", csv, "--radius", 5, "-o", mask)
    run("label", mask, "-o", labels, "--connectivity", 1)
    run("info", labels)
    return csv, mask


def step_w3(tmp, csv, mask):
    print("== W3: cut a (11, 21, 21) patch around each of the 500 objects, then paste back ==\n")
    patches = os.path.join(tmp, "patches.npy")
    back = os.path.join(tmp, "pasted.npy")
    run("roi", mask, "--centres", csv, "--size", "11,21,21", "--mode", "constant", "-o", patches)
    run("info", patches)
    run("paste", patches, "--centres", csv, "--shape", "20,1024,1024", "--op", "max",
        "--mode", "crop", "-o", back)
    same = (np.load(back) == np.load(mask)).all()
    print(f"pasting the patches back gives the mask again: {same}\n")


def step_w2(tmp):
    print("== W2: Richardson-Lucy deconvolution of a blurred, noisy sample (known truth) ==\n")
    rng = np.random.default_rng(1)
    shape = (48, 192, 192)
    truth = np.zeros(shape)
    np.add.at(truth, tuple(rng.integers(0, s, 200) for s in shape), 1.0)
    truth = scipy.ndimage.gaussian_filter(truth, 1.5)
    truth = 2 + truth * (1000 / truth.max())
    psf_path, img, out = (os.path.join(tmp, n) for n in ("psf.npy", "blurred.npy", "restored.npy"))
    run("psf", "gaussian", "--shape", "15,15,15", "--sigma", "2.5,1.5,1.5", "-o", psf_path)
    blurred = scipy.signal.fftconvolve(truth, np.load(psf_path).astype(np.float64), "same")
    np.save(img, rng.poisson(np.maximum(blurred, 0)).astype(np.uint16))
    print(f"sample: {img} {shape} uint16: 200 blobs on background 2, blurred by the PSF, Poisson noise\n")
    run("deconvolve", img, "--psf", psf_path, "-o", out, "--iterations", 15, "--accelerate")
    err = lambda a: np.linalg.norm(a - truth) / np.linalg.norm(truth)
    print(f"relative L2 error to the ground truth: blurred {err(np.load(img)):.3f} -> "
          f"deconvolved {err(np.load(out)):.3f}\n")


def step_w4(tmp):
    print("== W4: exact binary opening of a blob volume with a radius-10 ball ==\n")
    rng = np.random.default_rng(4)
    noise = scipy.ndimage.gaussian_filter(rng.random((64, 256, 256), dtype=np.float32), 6)
    blobs = noise > np.quantile(noise, 0.6)
    src, opened = (os.path.join(tmp, n) for n in ("blobs.npy", "opened.npy"))
    np.save(src, blobs)
    print(f"sample: {src} (64, 256, 256) bool, 40 % foreground blobs\n")
    run("info", src)
    run("morph", "open", src, "-o", opened, "--ball", 10, "--describe")
    run("info", opened)
    print("(scipy.ndimage.binary_opening with this ball visits 4,169 offsets per voxel;\n"
          " voxa thresholds an exact distance transform, whatever the radius)\n")


def step_pipeline():
    """The whole job from a recipe (examples/pipeline/recipe.toml): its
    outputs stay in build/demo-pipeline/ so the report can be opened."""
    print("== Pipeline: deconvolve -> threshold (Otsu) -> open -> fill holes -> label -> "
          "measure -> preview ==\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "examples", "pipeline"))
    import make_sample
    import voxa
    folder = os.path.join(root, "build", "demo-pipeline")
    has_threshold = any(op["name"] == "threshold" for op in voxa._voxa.ops())
    if not has_threshold:
        print("(this build has no `threshold` op yet: the recipe reads a mask from the sample)\n")
    recipe = make_sample.make(folder, threshold=has_threshold)
    print(f"sample and recipe: {folder}/ (raw.npy, psf.npy, recipe.toml)\n")
    run("pipeline", recipe, "--force")
    print("(run again: every step is up to date, so each is skipped)\n")
    run("pipeline", recipe)
    out = os.path.join(folder, "out")
    print(f"previews: {out}/previews/*.png and {out}/overview.png")
    print(f"report:   {out}/report.html (self-contained: open it in any browser)")
    print(f"run log:  {out}/run.json\n")


def main():
    print(f"voxa demo ({run('--version').strip()})\n")
    with tempfile.TemporaryDirectory(prefix="voxa-demo-") as tmp:
        csv, mask = step_w1(tmp)
        step_w3(tmp, csv, mask)
        step_w4(tmp)
        step_w2(tmp)
    step_pipeline()
    print("demo: all steps succeeded")


if __name__ == "__main__":
    main()
