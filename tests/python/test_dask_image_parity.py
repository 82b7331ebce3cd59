"""voxa.dask as a drop-in for dask-image's ndmeasure.label and ndmorph: what a
dask-image user relies on beyond equal values (the result's chunks, label's
dtypes, dask-image's own argument forms). Values are checked against scipy,
dask-image where it defines the answer (its scalar masks)."""
import numpy as np
import pytest
from scipy import ndimage as ndi

da = pytest.importorskip("dask.array")

import voxa.dask as vd  # noqa: E402

OPS = ["binary_dilation", "binary_erosion", "binary_opening", "binary_closing"]


def _blobs(shape, seed, p=0.45):
    return np.random.default_rng(seed).random(shape) < p


# ---- morphology: the result keeps the input's chunks ------------------------------------

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("chunks, kw", [
    ((2, 3, 5), dict(iterations=3)),                              # halo thicker than chunks
    ((4, 4, 4), dict(structure=np.ones((5, 5, 5)), iterations=2)),  # halo spans whole axes
    ((3, 7, 2), dict(structure=np.ones((3, 3, 3)), origin=(1, 0, -1))),
])
def test_morphology_keeps_the_input_chunks(op, chunks, kw):
    m = _blobs((9, 10, 11), 3)
    x = da.from_array(m, chunks=chunks)
    got = getattr(vd, op)(x, **kw)
    assert got.chunks == x.chunks
    np.testing.assert_array_equal(got.compute(), getattr(ndi, op)(m, **kw))


def test_morphology_result_writes_to_zarr_chunk_for_chunk(tmp_path):
    pytest.importorskip("zarr")
    m = _blobs((12, 12), 4)
    x = da.from_array(m, chunks=4)
    vd.binary_closing(x, iterations=3).to_zarr(str(tmp_path / "closed.zarr"))
    back = da.from_zarr(str(tmp_path / "closed.zarr"))
    assert back.chunks == x.chunks
    np.testing.assert_array_equal(back.compute(), ndi.binary_closing(m, iterations=3))
