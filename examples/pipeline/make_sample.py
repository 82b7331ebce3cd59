"""Write the sample examples/pipeline/recipe.toml reads into a folder:
raw.npy, (48, 192, 192) uint16: 200 blobs on a background of 2, blurred by
a Gaussian PSF, with Poisson noise (seeded: the same every time); psf.npy;
and the recipe itself. Usage: python make_sample.py DIR [--no-threshold]

--no-threshold writes the recipe without its threshold step, for builds
without the `threshold` op: the sample then also holds mask.npy (the
blobs' support, raw > 25), read as the mask instead."""
import os
import re
import shutil
import sys

import numpy as np
import scipy.ndimage
import scipy.signal

HERE = os.path.dirname(os.path.abspath(__file__))


def make(folder, threshold=True):
    import voxa
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(1)
    shape = (48, 192, 192)
    truth = np.zeros(shape)
    np.add.at(truth, tuple(rng.integers(0, s, 200) for s in shape), 1.0)
    truth = scipy.ndimage.gaussian_filter(truth, 1.5)
    truth = 2 + truth * (1000 / truth.max())
    psf = voxa.gaussian_psf((15, 15, 15), (2.5, 1.5, 1.5))
    blurred = scipy.signal.fftconvolve(truth, psf.astype(np.float64), "same")
    raw = rng.poisson(np.maximum(blurred, 0)).astype(np.uint16)
    np.save(os.path.join(folder, "raw.npy"), raw)
    np.save(os.path.join(folder, "psf.npy"), psf)
    recipe = open(os.path.join(HERE, "recipe.toml")).read()
    if not threshold:
        # the mask comes from the sample instead of a threshold step
        np.save(os.path.join(folder, "mask.npy"), raw > 25)
        recipe = re.sub(r'\[\[step\]\]\nname = "mask"\n.*?\n\n', "", recipe, flags=re.S)
        recipe = recipe.replace('psf = "psf.npy"\n', 'psf = "psf.npy"\nmask = "mask.npy"'
                                '          # no threshold op in this build\n')
    with open(os.path.join(folder, "recipe.toml"), "w") as f:
        f.write(recipe)
    return os.path.join(folder, "recipe.toml")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print(make(sys.argv[1], "--no-threshold" not in sys.argv))
