"""Arguments that name an array to write into: a lazy result has none."""
import dask.array as da
import numpy as np


def lazy_output(output, name="output", instead="leave it None"):
    """TypeError for an array given as `name` (the result is a new dask array)."""
    if isinstance(output, (np.ndarray, da.Array)):
        raise TypeError(f"voxa.dask: {name}= cannot be an array (the result is a new dask "
                        f"array); {instead}")
