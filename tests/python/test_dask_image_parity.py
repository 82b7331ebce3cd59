"""voxa.dask as a drop-in for dask-image's ndmeasure.label and ndmorph: what a
dask-image user relies on beyond equal values (the result's chunks, label's
dtypes, dask-image's own argument forms). Values are checked against scipy,
dask-image where it defines the answer (its scalar masks)."""
import numpy as np
import pytest
from scipy import ndimage as ndi

da = pytest.importorskip("dask.array")

import voxa  # noqa: E402
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


# ---- morphology: dask-image's scalar masks ----------------------------------------------

@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("iterations", [1, 2, 0])
def test_scalar_bool_mask(op, iterations):
    m = _blobs((10, 9), 5)
    x = da.from_array(m, chunks=(4, 5))
    # True: every voxel may change, as without a mask
    free = getattr(vd, op)(x, iterations=iterations, mask=True)
    np.testing.assert_array_equal(free.compute(), getattr(ndi, op)(m, iterations=iterations))
    # False: no voxel may change, as an all-false mask
    for no in (False, np.bool_(False)):
        fixed = getattr(vd, op)(x, iterations=iterations, mask=no)
        assert fixed.chunks == x.chunks
        np.testing.assert_array_equal(fixed.compute(), m)


def test_scalar_bool_mask_as_dask_image():
    ndmorph = pytest.importorskip("dask_image.ndmorph")
    m = _blobs((8, 11), 6)
    x = da.from_array(m, chunks=(3, 4))
    for op in OPS:
        for flag in (True, False):
            np.testing.assert_array_equal(getattr(vd, op)(x, mask=flag).compute(),
                                          getattr(ndmorph, op)(x, mask=flag).compute())


def test_scalar_mask_that_is_not_bool_is_refused():
    x = da.from_array(_blobs((6, 6), 7), chunks=3)
    with pytest.raises(RuntimeError, match="mask"):  # scipy's error for a mask of another shape
        vd.binary_dilation(x, mask=1)


def test_edt_with_max_distance_keeps_the_input_chunks():
    m = _blobs((12, 13), 8, p=0.8)
    x = da.from_array(m, chunks=3)  # thinner than the halo of max_distance=4
    got = vd.distance_transform_edt(x, max_distance=4)
    assert got.chunks == x.chunks
    np.testing.assert_allclose(got.compute(), np.minimum(ndi.distance_transform_edt(m), 4))


# ---- label: the count's dtype, the structure's errors -----------------------------------

@pytest.mark.parametrize("wrap_axes", [None, (0,), (0, 1)])
@pytest.mark.parametrize("output, count_dtype", [(None, np.int32), (np.int64, np.int64),
                                                 (np.uint16, np.uint16),
                                                 (np.float32, np.int64), (bool, np.int64)])
def test_label_count_has_the_labels_integer_dtype(wrap_axes, output, count_dtype):
    """dask-image's n is the largest label: a 0-d array of the labels' dtype
    (int32 by default), computing to a NumPy value of that dtype."""
    m = _blobs((14, 15), 9)
    lab, n = vd.label(da.from_array(m, chunks=(5, 6)), output=output, wrap_axes=wrap_axes)
    assert n.shape == () and n.dtype == count_dtype
    got = n.compute()
    assert isinstance(got, np.generic) and got.dtype == count_dtype
    want = voxa.label(m, wrap_axes=wrap_axes)[1]  # scipy's count without wrap_axes
    assert int(got) == want and (wrap_axes or want == ndi.label(m)[1])


def test_label_count_as_dask_image():
    ndmeasure = pytest.importorskip("dask_image.ndmeasure")
    m = _blobs((10, 12, 9), 10, p=0.3)
    x = da.from_array(m, chunks=(4, 5, 3))
    for wrap in (None, (1,)):
        lab, n = vd.label(x, wrap_axes=wrap)
        dlab, dn = ndmeasure.label(x, wrap_axes=wrap)
        assert (lab.dtype, n.dtype, lab.chunks) == (dlab.dtype, dn.dtype, dlab.chunks)
        assert int(n.compute()) == int(dn.compute())


def test_label_count_of_an_empty_volume():
    lab, n = vd.label(da.zeros((0, 4), bool, chunks=2))
    assert lab.dtype == n.dtype == np.int32 and n.compute() == 0
    assert isinstance(n.compute(), np.generic)


def test_label_count_that_does_not_fit_the_dtype_fails_as_the_labels_do():
    m = np.zeros((1, 600), bool)
    m[0, ::2] = True  # 300 components: more than uint8 holds
    lab, n = vd.label(da.from_array(m, chunks=(1, 100)), output=np.uint8)
    for part in (n, lab):
        with pytest.raises(RuntimeError, match="does not fit"):
            part.compute()


@pytest.mark.parametrize("structure, error", [
    (np.ones((3, 3, 3)), RuntimeError),                      # another rank
    (np.ones((5, 5)), ValueError),                           # not 3 per axis
    ([[1, 1, 0], [0, 1, 0], [0, 0, 0]], AssertionError),     # not centrosymmetric
])
def test_label_structure_errors_as_scipy(structure, error):
    """The exception types scipy raises (and dask-image, which calls it), so a
    caller's ``except`` catches them from voxa.dask too."""
    m = _blobs((6, 6), 11)
    with pytest.raises(error):
        ndi.label(m, structure)
    for wrap in (None, (0,)):
        with pytest.raises(error, match="structure"):
            vd.label(da.from_array(m, chunks=3), structure, wrap_axes=wrap)


# ---- the module's public names ----------------------------------------------------------

def test_public_names_are_the_api_only():
    """dir() (tab completion, help) lists voxa.dask's functions, not the
    modules and helpers its code imports; those stay reachable for voxa's
    own code."""
    public = {n for n in dir(vd) if not n.startswith("_")}
    assert public == set(vd.__all__)
    assert all(callable(getattr(vd, n)) for n in vd.__all__)
    assert vd.np is np and callable(vd.overlap)  # implementation names still resolve


def test_deconvolution_keeps_the_input_chunks():
    """Chunks thinner than the PSF are merged for the computation (RL needs
    the PSF to fit) and the result is split back: it lines up with the input
    and equals the run on merged chunks."""
    rng = np.random.default_rng(2)
    img = (rng.random((10, 13, 12)) + 0.5).astype(np.float32)
    psf = voxa.gaussian_psf((5, 5, 5), 1.0)
    x = da.from_array(img, chunks=(3, 5, 7))
    got = vd.richardson_lucy(x, psf, 3, boundary="zero", halo="exact")
    assert got.chunks == x.chunks
    want = voxa.richardson_lucy(img, psf, 3, boundary="zero")
    np.testing.assert_allclose(got.compute(), want, rtol=2e-5, atol=1e-6)
