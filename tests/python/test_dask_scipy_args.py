"""voxa.dask takes the in-memory functions' arguments, in their order, and each
one acts as it does in memory (scipy's results): mask, origin, axes, output,
iterations until stable, border_value, dtypes, indices. A call written for
voxa or scipy keeps its meaning on a dask array, or fails at the call."""
import inspect

import numpy as np
import pytest
from scipy import ndimage as ndi

da = pytest.importorskip("dask.array")

import voxa  # noqa: E402
import voxa.dask as vd  # noqa: E402

OPS = ["binary_dilation", "binary_erosion", "binary_opening", "binary_closing"]
CHUNKS = [(5, 7, 6), (2, 3, 19), (17, 23, 19)]  # smaller than the halo, thin, one chunk


def _eq(a, b):
    a = a.compute(scheduler="threads") if hasattr(a, "compute") else a
    np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    m = rng.random((17, 23, 19)) < 0.45
    mask = rng.random(m.shape) < 0.7
    return m, mask


@pytest.mark.parametrize("name", vd.__all__)
def test_signature_is_the_in_memory_one(name):
    want = list(inspect.signature(getattr(voxa, name)).parameters.values())
    got = inspect.signature(getattr(vd, name)).parameters
    for w in want:
        assert w.name in got, (name, w.name)
        g = got[w.name]
        assert g.kind == w.kind, (name, w.name, g.kind, w.kind)
        same = g.default is w.default or (
            isinstance(w.default, type) and np.dtype(g.default) == np.dtype(w.default)) or (
            not isinstance(w.default, type) and g.default == w.default)
        assert same, (name, w.name, g.default, w.default)
    assert [p for p in got if p in {w.name for w in want}] == [w.name for w in want], name
    for extra in set(got) - {w.name for w in want}:
        assert got[extra].kind == inspect.Parameter.KEYWORD_ONLY, (name, extra)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("chunks", CHUNKS)
def test_mask_origin_axes_border(data, op, chunks):
    m, mask = data
    x = da.from_array(m, chunks=chunks)
    st = ndi.generate_binary_structure(3, 2)
    fn, ref = getattr(vd, op), getattr(ndi, op)
    uneven = np.zeros((2, 3, 4), bool)
    uneven[[0, 1, 1], [0, 2, 1], [3, 0, 2]] = True
    cases = [dict(structure=st, mask=mask), dict(structure=st, iterations=2, mask=mask,
                                                 border_value=1),
             dict(structure=st, origin=(1, -1, 0)), dict(structure=uneven, origin=(0, 1, -1),
                                                         iterations=2),
             dict(structure=np.ones((3, 5), bool), axes=(0, 2), origin=(-1, 2)),
             dict(structure=st, iterations=3, mask=mask, origin=1, brute_force=True),
             dict(structure=da.from_array(st, chunks=2), mask=mask)]  # as dask-image's tests
    if op in ("binary_dilation", "binary_erosion"):
        cases.append(dict(structure=uneven, mask=mask, border_value=1, iterations=2))
    for kw in cases:
        dmask = kw.get("mask")
        if dmask is not None:  # the mask as a dask array of other chunks
            kw = dict(kw, mask=da.from_array(dmask, chunks=(4, 9, 5)))
        np_kw = dict(kw, structure=np.asarray(kw["structure"]))
        want = ref(m, **dict(np_kw, mask=dmask) if dmask is not None else np_kw)
        _eq(fn(x, **kw), want)
    with pytest.raises(TypeError, match="output= cannot be an array"):
        fn(x, output=np.empty(m.shape, bool))
    with pytest.raises(TypeError, match="border_value"):
        fn(x, border_value="yes")


@pytest.mark.parametrize("op", OPS)
def test_positional_arguments_keep_their_meaning(data, op):
    m, mask = data
    x = da.from_array(m, chunks=(5, 7, 6))
    st = ndi.generate_binary_structure(3, 1)
    if op in ("binary_dilation", "binary_erosion"):  # (input, structure, iterations, mask)
        args = (st, 2, mask, None, 1, 0, False)
    else:  # (input, structure, iterations, output, origin, mask, border_value)
        args = (st, 2, None, 0, mask, 1, False)
    _eq(getattr(vd, op)(x, *args), getattr(ndi, op)(m, *args))


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("masked", [False, True])
def test_until_stable(data, op, masked):
    """iterations < 1 as one labelling, equal to scipy's repeated passes."""
    m, mask = data
    sparse = np.random.default_rng(12).random(m.shape) < 0.02
    src = sparse if op in ("binary_dilation", "binary_closing") else ~sparse
    x = da.from_array(src, chunks=(5, 7, 6))
    for st in (None, ndi.generate_binary_structure(3, 2), np.ones((1, 3, 1), bool)):
        for bv in (0, 1):
            kw = dict(structure=st, iterations=-1, border_value=bv,
                      mask=mask if masked else None)
            _eq(getattr(vd, op)(x, **kw), getattr(ndi, op)(src, **kw))
    _eq(vd.binary_dilation(x, iterations=0, mask=mask, ball=1),
        ndi.binary_propagation(src, mask=mask))


@pytest.mark.parametrize("op", OPS)
def test_halo_longer_than_an_axis(op):
    """A halo that spans an axis whole (here 1 and 3 voxels long) makes that
    axis one chunk: dask cannot grow a chunk past the array."""
    m = np.random.default_rng(15).random((1, 3, 40)) < 0.6
    x = da.from_array(m, chunks=(1, 2, 7))
    for kw in (dict(structure=np.ones((3, 3, 3)), iterations=2), dict(ball=2),
               dict(structure=np.ones((3, 3, 3)), mask=m[::-1, ::-1])):
        want = getattr(ndi, op)(m, **kw) if "ball" not in kw else getattr(voxa, op)(m, **kw)
        _eq(getattr(vd, op)(x, **kw), want)


def test_until_stable_refuses_what_is_not_a_labelling(data):
    x = da.from_array(data[0], chunks=(5, 7, 6))
    half = np.array([[0, 0, 0], [0, 1, 1], [0, 0, 0]], bool)[None]
    for kw in (dict(structure=np.ones((5, 5, 5))), dict(structure=half), dict(ball=2)):
        with pytest.raises(NotImplementedError, match="iterations < 1"):
            vd.binary_dilation(x, iterations=0, **kw)


def test_fill_holes_arguments():
    rng = np.random.default_rng(13)
    m = ndi.binary_dilation(rng.random((21, 26, 24)) < 0.03, iterations=2)
    m ^= ndi.binary_erosion(m)
    x = da.from_array(m, chunks=(6, 7, 8))
    directed = np.zeros((3, 3, 3), bool)
    directed[1, 1, :2] = directed[0, 1, 1] = directed[1, 0, 1] = True
    cases = [dict(), dict(structure=ndi.generate_binary_structure(3, 3)),
             dict(structure=np.ones((3, 3)), axes=(1, 2)),
             dict(structure=np.ones((2, 2, 2)), origin=0),
             dict(structure=np.ones((2, 3, 3)), origin=(-1, 0, 0)),
             dict(structure=directed), dict(structure=np.ones((5, 1, 1)) > 0, origin=(1, 0, 0))]
    for kw in cases:
        _eq(vd.binary_fill_holes(x, **kw), ndi.binary_fill_holes(m, **kw))
    _eq(vd.binary_fill_holes(x, None, np.uint8), ndi.binary_fill_holes(m))  # a dtype: bool
    with pytest.raises(TypeError, match="output= cannot be an array"):
        vd.binary_fill_holes(x, output=np.empty(m.shape, bool))


def test_label_output_positional(data):
    m = data[0]
    x = da.from_array(m, chunks=(5, 7, 6))
    st = ndi.generate_binary_structure(3, 3)
    lab, n = vd.label(x, st, np.int64)
    want, wn = ndi.label(m, st)
    assert lab.dtype == np.int64 and int(n.compute()) == wn
    _eq(lab, want)
    lab, _ = vd.label(x, None, np.uint16)
    assert lab.compute().dtype == np.uint16
    _eq(lab, ndi.label(m)[0])
    for dt in (np.float32, np.float64, np.bool_):  # as scipy: the labels cast
        lab, _ = vd.label(x, st, dt)
        assert lab.dtype == dt
        _eq(lab, want.astype(dt))
    big = da.zeros((2**16, 2**15), bool, chunks=2**14)  # never computed: the dtype is known
    assert vd.label(big)[0].dtype == np.int64 and voxa.label(np.zeros(3, bool))[0].dtype == \
        np.int32 == vd.label(x)[0].dtype  # int64 from 2^31 - 2 voxels, as in memory
    with pytest.raises(TypeError, match="output= cannot be an array"):
        vd.label(x, output=np.empty(m.shape, np.int32))
    with pytest.raises(TypeError):
        vd.label(x, None, None, 2)  # connectivity is keyword-only, as in memory


def test_edt_arguments(data):
    m = data[0]
    x = da.from_array(m, chunks=(5, 7, 6))
    sp = (2.0, 1.0, 0.5)
    d64, ind = ndi.distance_transform_edt(m, sp, return_indices=True)
    got = vd.distance_transform_edt(x, sp, dtype=np.float32)
    assert got.dtype == np.float32 and got.compute().dtype == np.float32
    np.testing.assert_allclose(got.compute(), d64, rtol=1e-6)
    sq = vd.distance_transform_edt(x, squared=True, dtype=np.uint32).compute()
    assert sq.dtype == np.uint32
    _eq(sq, np.rint(ndi.distance_transform_edt(m) ** 2).astype(np.uint32))
    d, i = vd.distance_transform_edt(x, sp, return_indices=True)
    assert i.shape == ind.shape and i.dtype == np.int32
    np.testing.assert_allclose(d.compute(), d64, rtol=1e-12)
    _eq(i, ind)
    _eq(vd.distance_transform_edt(x, sp, False, True), ind)
    for kw, want in ((dict(max_distance=2.5, dtype=np.float32), np.minimum(d64, 2.5)),
                     (dict(max_distance=2.5, squared=True), np.minimum(d64 ** 2, 6.25)),
                     (dict(max_distance=2.5, squared=True, dtype=np.uint32, sampling=None),
                      np.minimum(sq, 6).astype(np.uint32))):
        got = vd.distance_transform_edt(x, **dict(dict(sampling=sp), **kw)).compute()
        assert got.dtype == np.dtype(kw.get("dtype", np.float64))
        np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(ValueError, match="omit max_distance"):
        vd.distance_transform_edt(x, return_indices=True, max_distance=3)
    with pytest.raises(TypeError, match="distances= cannot be an array"):
        vd.distance_transform_edt(x, distances=np.empty(m.shape))
    with pytest.raises(ValueError, match="unit spacing"):  # at the call, not in a task
        vd.distance_transform_edt(x, sp, squared=True, dtype=np.uint32)
    with pytest.raises(RuntimeError, match="at least one"):
        vd.distance_transform_edt(x, return_distances=False)


def test_out_and_progress_are_refused():
    img = np.random.default_rng(14).random((9, 10, 11)).astype(np.float32) + 0.1
    x = da.from_array(img, chunks=5)
    psf = np.ones((3, 3, 3), np.float32) / 27
    with pytest.raises(TypeError, match="out= cannot be an array"):
        vd.richardson_lucy(x, psf, 2, out=np.empty(img.shape, np.float32))
    with pytest.raises(TypeError, match="ProgressBar"):
        vd.richardson_lucy(x, psf, 2, progress=print)
    got = vd.richardson_lucy(x, psf, 2, "zero", False, None, False, None, np.float64,
                             halo="exact")  # dtype in its in-memory position
    assert got.dtype == np.float64
    want = voxa.richardson_lucy(img, psf, 2, "zero", dtype=np.float64)
    np.testing.assert_allclose(got.compute(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="out= cannot be an array"):
        vd.balls((5, 5, 5), [[2, 2, 2]], 1.0, out=np.empty((5, 5, 5), bool))
    with pytest.raises(TypeError, match="out= cannot be an array"):
        vd.extract_patches(x, [[0, 0, 0]], (2, 2, 2), out=np.empty((1, 2, 2, 2), np.float32))


def test_distributed_mask_and_until_stable(data):
    """The new tasks pickle: mask, until-stable, Otsu and measurements run on
    worker processes."""
    distributed = pytest.importorskip("distributed")
    m, mask = data
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        x = da.from_array(m, chunks=(5, 7, 6))
        a = vd.binary_opening(x, iterations=2, mask=mask, origin=(0, 1, 0))
        b = vd.binary_dilation(x, iterations=-1, mask=mask)
        img = da.from_array(m * 7.5 + mask, chunks=(5, 7, 6))
        t = vd.threshold_otsu(img)
        c = vd.threshold(img, method="otsu")
        lab = ndi.label(m)[0]
        props = vd.regionprops_table(da.from_array(lab, chunks=(5, 7, 6)), img, ("label", "area"))
        ga, gb, gt, gc, gp = client.compute([a, b, t, c, props], sync=True)
    _eq(ga, ndi.binary_opening(m, iterations=2, mask=mask, origin=(0, 1, 0)))
    _eq(gb, ndi.binary_dilation(m, iterations=-1, mask=mask))
    want = voxa.threshold_otsu(m * 7.5 + mask)
    assert gt == want
    _eq(gc, (m * 7.5 + mask) > want)
    wp = voxa.regionprops_table(lab, m * 7.5 + mask, ("label", "area"))
    assert list(gp) == list(wp) and all(np.array_equal(gp[k], wp[k]) for k in wp)


def test_empty_and_0d_inputs():
    """Shapes with a zero extent and 0-d inputs: scipy's results and shapes,
    and the lazy array's declared shape is the computed one."""
    for a in (np.zeros((0, 5), bool), np.array(True), np.array(False), np.ones((3, 0, 2), bool)):
        x = da.from_array(a)
        for name in OPS + ["binary_fill_holes", "distance_transform_edt"]:
            got = getattr(vd, name)(x)
            want = getattr(ndi, name)(a)
            assert got.shape == want.shape, (name, a.shape, got.shape)
            _eq(got, want)
        lab, n = vd.label(x)
        want, wn = ndi.label(a)
        _eq(lab, want)
        assert int(n.compute()) == wn


@pytest.mark.parametrize("fn", ["binary_dilation", "binary_erosion", "binary_opening",
                                "binary_closing"])
def test_scalar_structure_is_both_scipys_and_dask_images_error(fn):
    """A scalar structure: scipy raises RuntimeError (its rank does not
    match) in erosion and opening, IndexError in dilation and closing (which
    mirror it first), dask-image TypeError; voxa's error is a RuntimeError
    and a TypeError, in memory and lazy."""
    x = np.ones((4, 5), bool)
    with pytest.raises((RuntimeError, IndexError)):
        getattr(ndi, fn)(x, structure=2.0)
    for mod, arg in ((voxa, x), (vd, da.from_array(x, chunks=2))):
        for err in (RuntimeError, TypeError):
            with pytest.raises(err, match="must be an array, got the scalar 2.0"):
                getattr(mod, fn)(arg, structure=2.0)
