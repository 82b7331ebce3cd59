"""regionprops_table's whole property set: the ones voxa derives from its C
pass (area_bbox, extent, equivalent_diameter_area, centroid_local), the ones
scikit-image computes for it (everything else), intensity images with a
channel axis, skimage's former names, and what happens without
scikit-image. Compared with skimage.measure.regionprops_table."""
import warnings

import numpy as np
import pytest
from scipy import ndimage as ndi

skm = pytest.importorskip("skimage.measure")
import voxa  # noqa: E402
from voxa import _regionprops_table, _skimage_props  # noqa: E402

DERIVED = ["area_bbox", "extent", "equivalent_diameter_area", "centroid_local"]
SHAPE = ["inertia_tensor", "inertia_tensor_eigvals", "axis_major_length", "axis_minor_length"]
SHAPE_ALL = tuple(SHAPE) + ("eccentricity", "orientation")
# float64 sums in another order than skimage's (docs/measure.md)
ROUNDED = ("intensity_mean", "centroid_weighted", "intensity_std", "perimeter")


def labels(shape, seed, dtype=np.int32):
    rng = np.random.default_rng(seed)
    lab, _ = ndi.label(ndi.gaussian_filter(rng.random(shape), 1.2) > 0.55)
    return lab.astype(dtype)


def same(got, want, rounded=ROUNDED, rtol=1e-13):
    assert list(got) == list(want)
    for k in want:
        g, w = np.asarray(got[k]), np.asarray(want[k])
        assert g.dtype == w.dtype, k
        if k.startswith(SHAPE_ALL):
            near(g, w, k.split("-")[0].split("_")[0] if k.startswith("orientation") else k)
        elif g.dtype == object:
            assert len(g) == len(w) and all(np.array_equal(a, b) for a, b in zip(g, w)), k
        elif k.startswith(rounded):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=0, err_msg=k)
        else:
            np.testing.assert_array_equal(g, w, err_msg=k)


@pytest.mark.parametrize("shape", [(40, 53), (17, 23, 19)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.uint64])
def test_derived_equal_skimage_without_spacing(shape, dtype):
    lab = labels(shape, 1, dtype)
    assert 3 < lab.max() < 256
    props = ["label"] + DERIVED + ["bbox_area", "local_centroid", "equivalent_diameter"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skimage's FutureWarning on the former names
        want = skm.regionprops_table(lab, properties=props)
    same(voxa.regionprops_table(lab, properties=props), want, rounded=())


@pytest.mark.parametrize("spacing", [(2.0, 0.5, 0.3), (0.7, 0.7, 0.7)])
def test_derived_with_spacing(spacing):
    lab = labels((17, 23, 19), 2)
    same(voxa.regionprops_table(lab, properties=["label"] + DERIVED, spacing=spacing),
         skm.regionprops_table(lab, properties=["label"] + DERIVED, spacing=spacing),
         rounded=("centroid_local",))


@pytest.mark.parametrize("separator", ["-", "_", "", "/"])
def test_skimage_properties_mixed_in_order(separator):
    """voxa's and skimage's properties interleaved, repeated, with names
    that prefix each other under "_" (moments, moments_central)."""
    lab = labels((40, 53), 3)
    img = np.random.default_rng(4).integers(0, 500, lab.shape).astype(np.uint16)
    props = ["moments", "label", "perimeter", "centroid", "moments_central", "intensity_std",
             "area", "slice", "image", "coords", "eccentricity", "bbox", "perimeter",
             "intensity_mean", "solidity", "extent", "orientation", "centroid_weighted",
             "euler_number", "inertia_tensor_eigvals", "centroid_weighted_local"]
    got = voxa.regionprops_table(lab, img, props, separator=separator)
    same(got, skm.regionprops_table(lab, img, props, separator=separator))


def test_skimage_properties_3d_spacing_and_empty():
    lab = labels((17, 23, 19), 5)
    props = ("label", "axis_major_length", "area_filled", "inertia_tensor", "centroid",
             "moments_central")
    same(voxa.regionprops_table(lab, properties=props, spacing=(2, 1, 0.5)),
         skm.regionprops_table(lab, properties=props, spacing=(2, 1, 0.5)),
         rounded=("centroid",))
    zero = np.zeros((4, 5, 6), np.int16)
    img = np.zeros(zero.shape, np.float32)
    props = ("label", "intensity_std", "bbox", "moments_hu", "image", "area_bbox")
    same(voxa.regionprops_table(zero[0], img[0], props),
         skm.regionprops_table(zero[0], img[0], props))


@pytest.mark.parametrize("channels", [1, 3])
def test_intensity_with_channels(channels):
    lab = labels((30, 41), 6)
    rng = np.random.default_rng(7)
    img = rng.integers(0, 1000, lab.shape + (channels,)).astype(np.uint16)
    props = ("label", "intensity_mean", "intensity_min", "intensity_max", "centroid_weighted",
             "intensity_std", "area")
    got = voxa.regionprops_table(lab, img, props, spacing=(1.0, 2.0))
    same(got, skm.regionprops_table(lab, img, props, spacing=(1.0, 2.0)))
    assert f"centroid_weighted-1-{channels - 1}" in got
    sums = voxa.regionprops_table(lab, img, ("intensity_sum",))
    for c in range(channels):
        want = ndi.sum_labels(img[..., c].astype(np.float64), lab, np.unique(lab)[1:])
        np.testing.assert_array_equal(sums[f"intensity_sum-{c}"], want)
    with pytest.raises(ValueError, match="channels"):
        voxa.regionprops_table(lab, img[1:])
    with pytest.raises(ValueError, match="length 0"):
        voxa.regionprops_table(lab, img[..., :0], ("intensity_mean",))


def test_extra_properties_with_channels():
    """skimage calls a two-argument function once per channel and stacks
    the results on a last axis; the empty table keeps those columns."""
    lab = labels((30, 41), 16)
    img = np.random.default_rng(17).random(lab.shape + (3,))

    def total(mask, inten):
        return inten.sum()

    def spread(mask, inten):
        return np.array([inten[mask].max(), inten[mask].min()])

    for lab_ in (lab, np.zeros_like(lab)):
        got = voxa.regionprops_table(lab_, img, ("label", "intensity_max"),
                                     extra_properties=[total, spread])
        want = skm.regionprops_table(lab_, img, ("label", "intensity_max"),
                                     extra_properties=[total, spread])
        same(got, want, rounded=("total",))
    assert "spread-1-2" in got


def test_unknown_property_is_both_errors():
    lab = labels((20, 20), 8)
    for cls in (ValueError, AttributeError):
        with pytest.raises(cls, match="bogus"):
            voxa.regionprops_table(lab, properties=("label", "bogus"))
    with pytest.raises(AttributeError, match="intensity_image"):
        voxa.regionprops_table(lab, properties=("label", "intensity_std"))


def test_without_scikit_image(monkeypatch):
    """voxa's own properties need nothing else; the others say what is
    missing, before any work."""
    monkeypatch.setattr(_skimage_props, "_regionprops", lambda: None)
    lab = labels((20, 20), 9)
    same(voxa.regionprops_table(lab, properties=["label"] + DERIVED),
         skm.regionprops_table(lab, properties=["label"] + DERIVED), rounded=())
    with pytest.raises(ValueError, match="'solidity'.*need scikit-image"):
        voxa.regionprops_table(lab, properties=("label", "solidity", "perimeter"))
    assert "perimeter" in voxa.regionprops_table(lab, properties=("label", "perimeter"))


def test_skimage_table_replaced_by_voxa(monkeypatch):
    """Running scikit-image's tests on voxa replaces its regionprops_table
    with voxa's; voxa must not call itself back."""
    import skimage.measure._regionprops as rp
    monkeypatch.setattr(rp, "regionprops_table", voxa.regionprops_table)
    monkeypatch.setattr(skm, "regionprops_table", voxa.regionprops_table)
    lab = labels((20, 20), 10)
    got = voxa.regionprops_table(lab, properties=("label", "solidity"))
    monkeypatch.undo()
    same(got, skm.regionprops_table(lab, properties=("label", "solidity")))


def test_extra_property_named_like_a_skimage_property():
    lab = labels((20, 20), 11)

    def perimeter(mask):
        return 0.0

    with pytest.warns(UserWarning, match="shadowed"):
        got = voxa.regionprops_table(lab, properties=("label",), extra_properties=[perimeter])
    same(got, skm.regionprops_table(lab, properties=("label", "perimeter")))


def test_dask_refuses_what_needs_whole_objects():
    da = pytest.importorskip("dask.array")
    import voxa.dask as vd
    x = da.from_array(labels((20, 20), 12), chunks=7)
    with pytest.raises(ValueError, match="'moments' not computed here"):
        vd.regionprops_table(x, properties=("label", "moments"))
    assert set(_regionprops_table.DERIVED) == set(DERIVED)




def near(got, want, key):
    """Shape properties agree to rounding: central moments are exact in
    voxa, float sums in skimage. Orientation +-pi/2 are one axis (an exact
    mu11 of 0 against skimage's -1e-16); a 3-D minor axis of exact length 0
    (a flat object) is the square root of round-off in both (~1e-8)."""
    g, w = np.asarray(got), np.asarray(want)
    if key == "orientation":
        d = np.abs(g - w)
        assert np.all((d < 1e-12) | (np.abs(d - np.pi) < 1e-12)), key
    else:
        atol = 1e-6 if "length" in key else 1e-12
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=atol, err_msg=key)


@pytest.mark.parametrize("shape", [(60, 70), (20, 30, 25)])
@pytest.mark.parametrize("spacing", [None, "aniso"])
def test_shape_properties_equal_skimage(shape, spacing):
    lab = labels(shape, 13)
    sp = None if spacing is None else (0.5, 2.0, 0.7)[:len(shape)]
    props = ["label"] + SHAPE + (["eccentricity", "orientation"] if len(shape) == 2 else [])
    got = voxa.regionprops_table(lab, properties=props, spacing=sp)
    want = skm.regionprops_table(lab, properties=props, spacing=sp)
    assert list(got) == list(want)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        near(got[k], want[k], k.split("-")[0])


def test_shape_properties_other_ranks_and_symmetric_objects():
    """eccentricity and orientation are 2-D only and the axis lengths 2-/3-D
    only in scikit-image: it is asked for those (and raises as it does);
    the tensor is computed for any rank. Symmetric objects (squares,
    crosses, single voxels) tie a == c: skimage's rule gives -pi/4."""
    lab = labels((20, 30, 25), 14)
    with pytest.raises(NotImplementedError):
        voxa.regionprops_table(lab, properties=("label", "eccentricity"))
    lab4 = np.zeros((6, 7, 8, 9), np.int32)  # skimage takes 2-D and 3-D label images only
    lab4[1:4, 2:6, 3:5, 1:8] = 5
    lab4[2, 3, 4, 1:3] = 0
    got = voxa.regionprops_table(lab4, properties=("label", "inertia_tensor"))
    c = np.argwhere(lab4 == 5).astype(np.float64)
    mu = (c - c.mean(0)).T @ (c - c.mean(0))
    want = (np.trace(mu) * np.eye(4) - mu) / len(c)  # skimage's inertia tensor formula
    for i in range(4):
        for j in range(4):
            np.testing.assert_allclose(got[f"inertia_tensor-{i}-{j}"][0], want[i, j],
                                       rtol=1e-12, atol=1e-12)
    with pytest.raises(TypeError, match="2-D and 3-D"):  # skimage's error, for rank 4
        voxa.regionprops_table(lab4, properties=("axis_major_length",))
    sym = np.zeros((20, 20), np.int32)
    sym[2:6, 2:6] = 1  # a square
    sym[10, 9:12], sym[9:12, 10] = 2, 2  # a cross
    sym[15, 15] = 3  # one voxel
    sym[14:17, 3:6] = 4
    sym[15, 4] = 0  # a ring
    props = ("orientation", "eccentricity", "axis_major_length", "axis_minor_length")
    got = voxa.regionprops_table(sym, properties=props)
    want = skm.regionprops_table(sym, properties=props)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    assert np.all(got["orientation"] == -np.pi / 4)


@pytest.mark.parametrize("shape, spacing", [((60, 70), "0.5,2"), ((20, 30, 25), "2,1,0.5")])
def test_cli_shape_columns_equal_python(tmp_path, shape, spacing):
    """`voxa measure --properties` with the shape properties (C: Jacobi
    eigenvalues, streamed by blocks) against voxa.regionprops_table
    (LAPACK), which equals skimage's to rounding."""
    import subprocess
    from conftest import CLI
    lab = labels(shape, 18)
    np.save(tmp_path / "lab.npy", lab)
    props = ["label", "area", "inertia_tensor", "inertia_tensor_eigvals", "axis_major_length",
             "axis_minor_length"] + (["eccentricity", "orientation"] if len(shape) == 2 else [])
    r = subprocess.run([CLI, "measure", tmp_path / "lab.npy", "-o", tmp_path / "t.csv",
                        "--spacing", spacing, "--properties", ",".join(props),
                        "--mem-limit", "4K"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "t.csv").read_text().splitlines()[0].split(",")
    got = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1, ndmin=2)
    sp = tuple(float(v) for v in spacing.split(","))
    want = voxa.regionprops_table(lab, properties=props, spacing=sp)
    assert header == list(want)
    for i, k in enumerate(want):
        near(got[:, i], want[k], k)
    r = subprocess.run([CLI, "measure", tmp_path / "lab.npy", "-o", tmp_path / "u.csv",
                        "--properties", "label,orientation"], capture_output=True, text=True)
    if len(shape) == 3:  # refused before the pass: a usage error
        assert r.returncode == 2 and "2-D labels" in r.stderr
        assert not (tmp_path / "u.csv").exists()
    else:
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("kind", ["uint16", "offset_float64", "float32_channels"])
def test_intensity_std_equals_skimage(kind):
    """intensity_std in the C pass: each run's squared deviations merged as
    Chan et al. merge variances. Against skimage's np.std: 1e-13 for
    integers; 1e-8 for float64 values 1e4 + 1e-3 noise (both lose digits to
    the offset: eps x mean / std); 1e-6 for float32, which skimage sums in
    float32 and voxa in float64."""
    lab = labels((30, 41), 19)
    rng = np.random.default_rng(20)
    img, rtol = {
        "uint16": (rng.integers(0, 60000, lab.shape).astype(np.uint16), 1e-13),
        "offset_float64": (1e4 + rng.random(lab.shape) * 1e-3, 1e-8),
        "float32_channels": (rng.random(lab.shape + (2,)).astype(np.float32), 1e-6)}[kind]
    props = ("label", "intensity_std", "std_intensity", "intensity_mean")
    got = voxa.regionprops_table(lab, img, props)
    want = skm.regionprops_table(lab, img, props)
    assert list(got) == list(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=0, err_msg=k)


def test_intensity_std_by_chunks_and_in_the_csv(tmp_path):
    import subprocess
    from conftest import CLI
    da = pytest.importorskip("dask.array")
    import voxa.dask as vd
    lab = labels((20, 30, 25), 21)
    img = np.random.default_rng(22).integers(0, 4000, lab.shape).astype(np.uint16)
    want = voxa.regionprops_table(lab, img, ("label", "intensity_std"))
    got = vd.regionprops_table(da.from_array(lab, chunks=(7, 9, 11)), img,
                               ("label", "intensity_std")).compute()
    np.testing.assert_allclose(got["intensity_std"], want["intensity_std"], rtol=1e-12)
    np.save(tmp_path / "lab.npy", lab)
    np.save(tmp_path / "img.npy", img)
    r = subprocess.run([CLI, "measure", tmp_path / "lab.npy", "--intensity", tmp_path / "img.npy",
                        "-o", tmp_path / "t.csv", "--properties", "label,intensity_std",
                        "--mem-limit", "8K"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    csv = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1, ndmin=2)
    np.testing.assert_allclose(csv[:, 1], want["intensity_std"], rtol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_perimeter_equals_skimage(seed):
    """2-D perimeter in one C pass (voxa_measure_perimeter): skimage's
    per-object perimeter(image, 4) to rounding (its weighted sum is a BLAS
    dot product), objects on the image's edges, touching each other (4- and
    8-connected labels), single pixels, views and label dtypes."""
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(5, 80, 2))
    lab = skm.label(rng.random(shape) > rng.uniform(0.3, 0.7), connectivity=1 + seed % 2)
    lab = lab.astype([np.int32, np.uint16, np.int64][seed % 3])
    if seed % 2:
        lab = lab.T  # a strided view
    sp = None if seed < 3 else (0.7, 0.7)
    props = ("label", "perimeter", "area")
    got = voxa.regionprops_table(lab, properties=props, spacing=sp)
    want = skm.regionprops_table(lab, properties=props, spacing=sp)
    assert list(got) == list(want)
    np.testing.assert_allclose(got["perimeter"], want["perimeter"], rtol=1e-13, atol=1e-12)
    with pytest.raises(NotImplementedError, match="isotropic"):
        voxa.regionprops_table(lab, properties=props, spacing=(1, 2))


def test_cli_perimeter_streamed(tmp_path):
    """`voxa measure --properties ...,perimeter`: a second pass by blocks of
    rows, each with 2 rows of its neighbours; bit for bit voxa's in-memory
    perimeter (times an isotropic spacing); anisotropic spacings and 3-D
    labels are refused before any pass."""
    import subprocess
    from conftest import CLI
    lab = labels((70, 90), 24)
    np.save(tmp_path / "lab.npy", lab)
    r = subprocess.run([CLI, "measure", tmp_path / "lab.npy", "-o", tmp_path / "t.csv",
                        "--properties", "label,perimeter", "--spacing", "0.5,0.5",
                        "--mem-limit", "2K"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1, ndmin=2)
    want = voxa.regionprops_table(lab, properties=("label", "perimeter"), spacing=(0.5, 0.5))
    np.testing.assert_array_equal(got[:, 0], want["label"])
    np.testing.assert_array_equal(got[:, 1], want["perimeter"])
    r = subprocess.run([CLI, "measure", tmp_path / "lab.npy", "-o", tmp_path / "u.csv",
                        "--properties", "perimeter", "--spacing", "1,2"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "isotropic" in r.stderr and not (tmp_path / "u.csv").exists()
    np.save(tmp_path / "lab3.npy", labels((5, 20, 20), 25))
    r = subprocess.run([CLI, "measure", tmp_path / "lab3.npy", "-o", tmp_path / "u.csv",
                        "--properties", "perimeter"], capture_output=True, text=True)
    assert r.returncode == 2 and "2-D labels" in r.stderr


@pytest.mark.parametrize("seed", range(8))
def test_euler_number_equals_skimage(seed):
    """2-D and 3-D euler_number in one C pass (voxa_measure_euler): exactly
    skimage's euler_number(object, connectivity=ndim) per object, for objects
    with holes, tunnels and cavities, several components under one label
    (labels merged), touching labels, objects on the edges, views, label
    dtypes and spacings (which do not change it)."""
    rng = np.random.default_rng(seed)
    nd = 2 + seed % 2
    shape = tuple(rng.integers(4, 60 if nd == 2 else 22, nd))
    lab = skm.label(rng.random(shape) > rng.uniform(0.3, 0.7), connectivity=1 + seed % nd)
    lab = np.where(lab % 4 == 1, 1, lab)  # one label of many components
    lab = lab.astype([np.int32, np.uint16, np.int64, np.uint8][seed % 4] if lab.max() < 255
                     else np.int32)
    if seed % 3 == 0:
        lab = lab.T  # a strided view
    sp = None if seed < 4 else tuple(rng.uniform(0.5, 2, nd))
    props = ("label", "euler_number", "area")
    got = voxa.regionprops_table(lab, properties=props, spacing=sp)
    want = skm.regionprops_table(lab, properties=props, spacing=sp)
    same(got, want)
    assert (got["euler_number"] != 1).any()  # the sample has holes or several components


@pytest.mark.parametrize("seed", range(6))
def test_euler_number_sparse_rows(seed):
    """Sparse labels: objects between empty rows and planes, on the first
    and last rows and planes, one voxel thick, in views whose last axis is
    strided or reversed (and Fortran order), in every label width: skimage's
    numbers."""
    rng = np.random.default_rng(100 + seed)
    nd = 2 + seed % 2
    shape = (9, 30, 26) if nd == 3 else (40, 33)
    lab = np.zeros(shape, np.int64)
    for k in range(1, 9):  # small boxes of noise, some on the edges
        lo = [int(rng.integers(-1, s - 2)) for s in shape]
        box = tuple(slice(max(a, 0), a + int(rng.integers(1, 5))) for a in lo)
        lab[box] = np.where(rng.random(lab[box].shape) > 0.3, k, lab[box])
    lab[(0,) * (nd - 1)][::3] = 9  # a dotted line: components on the first row
    dt = [np.uint8, np.int16, np.uint32, np.int64, np.uint64, np.int32][seed]
    lab = lab.astype(dt)
    big = np.zeros(shape[:-1] + (2 * shape[-1],), dt)
    big[..., ::2] = lab
    views = (lab, big[..., ::2], lab[..., ::-1], np.asfortranarray(lab))
    for v in views:
        props = ("label", "euler_number")
        same(voxa.regionprops_table(v, properties=props),
             skm.regionprops_table(np.ascontiguousarray(v), properties=props))
    empty = np.all(lab == 0, axis=-1)
    assert empty.any() and not empty.all()


def test_euler_number_other_ranks_go_to_skimage():
    lab = np.array([0, 1, 1, 0, 2], np.int32)  # 1-D: scikit-image's (which refuses it)
    with pytest.raises(Exception) as e:
        skm.regionprops_table(lab, properties=("euler_number",))
    with pytest.raises(type(e.value)):
        voxa.regionprops_table(lab, properties=("euler_number",))


@pytest.mark.parametrize("shape", [(70, 90), (12, 30, 26)])
def test_cli_euler_number_streamed(tmp_path, shape):
    """`voxa measure --properties ...,euler_number`: a pass by slabs along
    axis 0, each with one of its neighbours' on each side, at a limit of a
    few rows; the in-memory numbers exactly, with perimeter beside it in
    2-D; 1-D and 4-D labels are refused before any pass."""
    import subprocess
    from conftest import CLI
    rng = np.random.default_rng(len(shape))
    lab, _ = ndi.label(rng.random(shape) > 0.45)
    lab = np.where(lab % 3 == 1, 1, lab).astype(np.int32)
    np.save(tmp_path / "lab.npy", lab)
    props = ("label", "euler_number") + (("perimeter",) if len(shape) == 2 else ())
    r = subprocess.run([CLI, "measure", tmp_path / "lab.npy", "-o", tmp_path / "t.csv",
                        "--properties", ",".join(props), "--mem-limit", "3K"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = np.loadtxt(tmp_path / "t.csv", delimiter=",", skiprows=1, ndmin=2)
    want = voxa.regionprops_table(lab, properties=props)
    assert (want["euler_number"] != 1).any()
    for i, p in enumerate(props):
        np.testing.assert_array_equal(got[:, i], want[p], err_msg=p)
    np.save(tmp_path / "lab4.npy", lab.reshape((1,) + lab.shape + (1,))[..., :1])
    r = subprocess.run([CLI, "measure", tmp_path / "lab4.npy", "-o", tmp_path / "u.csv",
                        "--properties", "euler_number"], capture_output=True, text=True)
    assert r.returncode == 2 and "2-D and 3-D" in r.stderr and not (tmp_path / "u.csv").exists()
