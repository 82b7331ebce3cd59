"""The op registry from Python: `_voxa.ops()` describes every op (summary,
parameters with type, default, help), `_voxa.op_halo` gives halos, and for
every op the generic call `_voxa.run_op` on a tiny input equals the public
function (which itself is checked against scipy / scikit-image in the
per-op test files). An op without a case here fails
test_every_op_has_a_case unless the default case (one input, no required
parameter) fits it."""
import numpy as np
import pytest

import voxa
from voxa import _voxa

OPS = {op["name"]: op for op in _voxa.ops()}
TYPES = {"flag", "int", "float", "choice", "dtype", "ints", "floats", "string", "array", "table"}
RNG = np.random.default_rng(8)
MASK = RNG.random((9, 11)) > 0.45
IMAGE = RNG.random((10, 12)).astype(np.float32) + 0.1
PSF = voxa.gaussian_psf((3, 5), 1.0)
POINTS = np.array([[2.0, 3.5], [7.2, 9.0], [4.0, 4.0]])
CORNERS = np.array([[0, 1], [5, 7], [3, 0]])
PATCHES = RNG.integers(0, 9, (3, 2, 3)).astype(np.int16)
FOOT = np.array([[0, 1, 1], [1, 1, 0], [0, 1, 0]], bool)


def generic(name, input, **params):
    """run_op into an output allocated from op_output: (output, count)."""
    dtype, shape = _voxa.op_output(name, input, **params)
    out = np.empty(shape, dtype=np.dtype(dtype))
    return out, _voxa.run_op(name, input, out, **params)


def generic_into(name, input, out, **params):
    return out, _voxa.run_op(name, input, out, **params)


# name -> list of (generic call, public call) returning comparable results.
MORPH = [
    (dict(ball=1.5), dict(ball=1.5)),
    (dict(connectivity=2, iterations=2), dict(connectivity=2, iterations=2)),
    (dict(box=(3, 2)), dict(box=(3, 2))),
    (dict(footprint=FOOT), dict(structure=FOOT)),
    (dict(diamond=1, border_value=1), dict(diamond=1, border_value=1)),
    (dict(ball=2, spacing=(2.0, 1.0)), dict(ball=2, spacing=(2.0, 1.0))),
]
CASES = {
    "label": [
        (lambda: generic("label", MASK, connectivity=2), lambda: voxa.label(MASK, connectivity=2)),
        (lambda: generic("label", MASK, structure=FOOT | FOOT[::-1, ::-1]),
         lambda: voxa.label(MASK, structure=FOOT | FOOT[::-1, ::-1])),
        (lambda: generic("label", MASK, dtype="uint16"),
         lambda: voxa.label(MASK, output=np.uint16)),
    ],
    **{name: [(lambda name=name, g=g: generic(name, MASK, **g)[0],
               lambda name=name, p=p: getattr(voxa, OPS[name]["python"])(MASK, **p))
              for g, p in MORPH] for name in ("dilate", "erode", "open", "close")},
    "edt": [
        (lambda: generic("edt", MASK)[0], lambda: voxa.distance_transform_edt(MASK)),
        (lambda: generic("edt", MASK, spacing=(2, 0.5), squared=True, dtype="float32")[0],
         lambda: voxa.distance_transform_edt(MASK, sampling=(2, 0.5), squared=True,
                                             dtype=np.float32)),
        (lambda: generic("edt", MASK, metric="taxicab")[0],
         lambda: voxa.distance_transform_cdt(MASK, metric="taxicab")),
        (lambda: generic("edt", MASK, metric="chessboard")[0],
         lambda: voxa.distance_transform_cdt(MASK, metric="chessboard")),
        (lambda: generic_into("edt", MASK, np.empty(MASK.shape),
                              indices=np.empty((2,) + MASK.shape, np.int32))[0],
         lambda: voxa.distance_transform_edt(MASK, return_indices=True)[0]),
    ],
    "fill_holes": [
        (lambda: generic("fill_holes", MASK)[0], lambda: voxa.binary_fill_holes(MASK)),
        (lambda: generic("fill_holes", MASK, structure=FOOT, connectivity=None)[0],
         lambda: voxa.binary_fill_holes(MASK, structure=FOOT)),
    ],
    "balls": [
        (lambda: generic("balls", None, shape=(12, 13), points=POINTS, radius=2.5)[0],
         lambda: voxa.balls((12, 13), POINTS, 2.5)),
        (lambda: generic("balls", None, shape=(12, 13), points=POINTS, radius=2.0, owner=True,
                         spacing=(1.0, 2.0))[0],
         lambda: voxa.balls((12, 13), POINTS, 2.0, owner=True, spacing=(1.0, 2.0))),
        (lambda: generic("balls", None, shape=(12, 13),
                         points=(np.column_stack([POINTS[:, ::-1], [1, 2, 3.5]]),
                                 ["x", "y", "radius"]))[0],
         lambda: voxa.balls((12, 13), POINTS, np.array([1, 2, 3.5]))),
        (lambda: generic("balls", None, shape=(12, 13), points=POINTS, radius=2.0)[1],
         lambda: int(voxa.balls((12, 13), POINTS, 2.0).sum())),
    ],
    "deconvolve": [
        (lambda: generic("deconvolve", IMAGE, psf=PSF, iterations=3)[0],
         lambda: voxa.richardson_lucy(IMAGE, PSF, num_iter=3)),
        (lambda: generic("deconvolve", IMAGE, psf=PSF, iterations=2, boundary="zero",
                         clip=True, dtype="float64")[0],
         lambda: voxa.richardson_lucy(IMAGE, PSF, num_iter=2, boundary="zero", clip=True,
                                      dtype=np.float64)),
    ],
    "roi": [
        (lambda: generic("roi", IMAGE, corners=CORNERS.astype(float), size=(3, 4))[0],
         lambda: voxa.extract_patches(IMAGE, CORNERS, (3, 4))),
        (lambda: generic("roi", IMAGE, centres=CORNERS.astype(float), size=(3, 3),
                         mode="constant", value=7)[0],
         lambda: voxa.extract_patches(IMAGE, CORNERS, (3, 3), centered=True, mode="constant",
                                      cval=7)),
    ],
    "threshold": [
        (lambda: generic("threshold", IMAGE, method="otsu")[0],
         lambda: voxa.threshold(IMAGE, method="otsu")),
        (lambda: generic("threshold", IMAGE, value=0.5)[0], lambda: voxa.threshold(IMAGE, 0.5)),
    ],
    "paste": [
        (lambda: generic("paste", PATCHES, corners=CORNERS.astype(float), shape=(8, 10),
                         op="add")[0],
         lambda: voxa.paste_patches(np.zeros((8, 10), np.int16), PATCHES, CORNERS, op="add")),
        (lambda: generic("paste", PATCHES, centres=CORNERS.astype(float),
                         volume=np.ones((8, 9), np.int16), mode="crop", op="max")[0],
         lambda: voxa.paste_patches(np.ones((8, 9), np.int16), PATCHES, CORNERS, centered=True,
                                    mode="crop", op="max")),
    ],
}


def default_case(op):
    """One input, no required parameter: the generic call with defaults
    equals the public function with defaults (binary_fill_holes, ...)."""
    required = [p["name"] for p in op["params"] if "required" in p["flags"]]
    if op["ninputs"] != 1 or required or not hasattr(voxa, op["python"] or ""):
        return None
    return [(lambda: generic(op["name"], MASK)[0],
             lambda: getattr(voxa, op["python"])(MASK))]


def cases(name):
    return CASES.get(name) or default_case(OPS[name]) or []


def test_registry_lists_the_ops():
    assert {"label", "dilate", "erode", "open", "close", "edt", "balls", "deconvolve", "roi",
            "paste", "fill_holes"} <= set(OPS)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_a_case(name):
    assert cases(name), f"{name}: add a generic-vs-public case to CASES"


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_is_described(name):
    op = OPS[name]
    assert op["summary"] and op["summary"].strip()
    assert op["python"] and callable(getattr(voxa, op["python"]))
    assert op["ninputs"] in (0, 1)
    assert op["scratch"] >= 0
    assert ("local" in op["flags"]) != ("global" in op["flags"])
    assert not {"progress", "count"} & {p["name"] for p in op["params"]}  # run_op's own
    for p in op["params"]:
        assert p["help"] and p["help"].strip(), f"{name}.{p['name']}: no help"
        assert p["type"] in TYPES
        if p["type"] in ("choice", "dtype"):
            assert p["choices"], f"{name}.{p['name']}: no choices"
            if p["default"] is not None:
                assert p["default"] in p["choices"]
        if p["min"] is not None and isinstance(p["default"], (int, float)):
            assert p["min"] <= p["default"] <= p["max"]


@pytest.mark.parametrize("name", sorted(OPS))
def test_generic_call_equals_public_function(name):
    for run_generic, run_public in cases(name):
        same(run_generic(), run_public())


def same(got, want):
    """Equal values, and for arrays equal dtype and shape; tuples item by item
    (label: (labels, n))."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
        return
    np.testing.assert_array_equal(got, want)
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape


def test_label_count_is_returned():
    out = np.empty(MASK.shape, np.int32)
    assert _voxa.run_op("label", MASK, out) == voxa.label(MASK)[1]
    assert _voxa.run_op("dilate", MASK, np.empty(MASK.shape, bool), ball=1) is None


@pytest.mark.parametrize("name", sorted(n for n, op in OPS.items() if "local" in op["flags"]))
def test_halo_non_negative_and_growing(name):
    small = {"dilate": dict(ball=1), "erode": dict(ball=1), "open": dict(box=3),
             "close": dict(diamond=1), "balls": dict(shape=(5, 5), points=POINTS, radius=1),
             "deconvolve": dict(psf=np.ones((3, 3)))}.get(name)
    large = {"dilate": dict(ball=4), "erode": dict(ball=4), "open": dict(box=9),
             "close": dict(diamond=4), "balls": dict(shape=(5, 5), points=POINTS, radius=5),
             "deconvolve": dict(psf=np.ones((9, 7)))}.get(name)
    assert small is not None, f"{name}: add halo parameters here"
    lo1, hi1 = _voxa.op_halo(name, 2, **small)
    lo2, hi2 = _voxa.op_halo(name, 2, **large)
    assert len(lo1) == len(hi1) == 2
    assert min(lo1 + hi1) >= 0
    assert all(a <= b for a, b in zip(lo1 + hi1, lo2 + hi2)) and lo2 + hi2 != lo1 + hi1


def test_halo_of_global_op_raises():
    with pytest.raises(TypeError, match="global"):
        _voxa.op_halo("label", 2)


def test_defaults_and_flags():
    label = OPS["label"]["params"]
    assert {p["name"]: p["default"] for p in label}["connectivity"] == 1
    edt = {p["name"]: p for p in OPS["edt"]["params"]}
    assert "output" in edt["indices"]["flags"] and "hidden" in edt["indices"]["flags"]
    assert edt["metric"]["default"] == "euclidean"
    dilate = {p["name"]: p for p in OPS["dilate"]["params"]}
    assert dilate["ball"]["oneof"] == "element" and "per_axis" in dilate["box"]["flags"]
    assert "count" in OPS["label"]["flags"] and "global" in OPS["label"]["flags"]


def test_describe():
    text = _voxa.op_describe("dilate", MASK, ball=3)
    assert text == voxa.morph_path(2, ball=3)
    assert _voxa.op_describe("label", MASK) is None


def test_bad_calls():
    out = np.empty(MASK.shape, bool)
    with pytest.raises(ValueError, match="no op named 'nope'"):
        _voxa.run_op("nope", MASK, out)
    with pytest.raises(TypeError, match="dilate has no parameter 'radius'"):
        _voxa.run_op("dilate", MASK, out, radius=2)
    with pytest.raises(TypeError, match="iterations: expected an integer"):
        _voxa.run_op("dilate", MASK, out, ball=1, iterations=1.5)
    with pytest.raises(ValueError, match="ball: nan is not finite"):
        _voxa.run_op("dilate", MASK, out, ball=float("nan"))
    with pytest.raises(ValueError, match="exactly one of"):
        _voxa.run_op("dilate", MASK, out, ball=1, box=3)
    with pytest.raises(ValueError, match="exactly one of"):
        _voxa.run_op("dilate", MASK, out)
    with pytest.raises(TypeError, match="needs an input"):
        _voxa.run_op("dilate", None, out, ball=1)
    with pytest.raises(ValueError, match="output: shape"):
        _voxa.run_op("dilate", MASK, np.empty((2, 2), bool), ball=1)
    with pytest.raises(ValueError, match="metric"):
        _voxa.run_op("edt", MASK, np.empty(MASK.shape), metric="hamming")
    with pytest.raises(TypeError, match="points: unsupported element type"):
        _voxa.run_op("balls", None, out, shape=MASK.shape, points=np.array([["a"]]), radius=1)
    with pytest.raises(ValueError, match="column names"):
        _voxa.run_op("balls", None, out, shape=MASK.shape, points=(POINTS, ["y"]), radius=1)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty(MASK.shape, bool)
        ro.flags.writeable = False
        _voxa.run_op("dilate", MASK, ro, ball=1)


def test_dtype_values():
    for dt in ("uint16", np.uint16, np.dtype(np.uint16)):
        assert generic("label", MASK, dtype=dt)[0].dtype == np.uint16
    with pytest.raises(ValueError, match="dtype"):
        generic("label", MASK, dtype=np.float32)


def test_none_leaves_a_parameter_absent():
    # connectivity has a default; None removes it, structure takes its place
    out = np.empty(MASK.shape, np.int32)
    st = np.ones((3, 3), np.uint8)
    assert _voxa.run_op("label", MASK, out, connectivity=None, structure=st) == \
        voxa.label(MASK, structure=st)[1]


def test_progress_callback_and_cancel():
    seen = []
    out = np.empty(IMAGE.shape, np.float32)
    _voxa.run_op("deconvolve", IMAGE, out, psf=PSF, iterations=4,
                 progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]

    def boom(done, total):
        raise ZeroDivisionError("stop")
    with pytest.raises(ZeroDivisionError):
        _voxa.run_op("deconvolve", IMAGE, out, psf=PSF, iterations=4, progress=boom)
    with pytest.raises(KeyboardInterrupt):
        _voxa.run_op("deconvolve", IMAGE, out, psf=PSF, iterations=4,
                     progress=lambda d, t: False)


def test_generic_call_equals_scipy():
    """The generic call against the peer directly (the public functions use
    it too, so this anchors the conversions of flags, lists and arrays)."""
    import scipy.ndimage as ndi
    st = ndi.generate_binary_structure(2, 2)
    box = np.ones((3, 2), bool)
    for name, ref in (("dilate", ndi.binary_dilation), ("erode", ndi.binary_erosion),
                      ("open", ndi.binary_opening), ("close", ndi.binary_closing)):
        same(generic(name, MASK, box=(3, 2))[0], ref(MASK, box))
        same(generic(name, MASK, footprint=FOOT, iterations=2)[0], ref(MASK, FOOT, 2))
    same(generic("dilate", MASK, connectivity=2, border_value=1)[0],
         ndi.binary_dilation(MASK, st, border_value=1))
    same(generic("label", MASK, connectivity=2), ndi.label(MASK, st))
    same(generic("fill_holes", MASK, connectivity=2)[0], ndi.binary_fill_holes(MASK, st))
    same(generic("edt", MASK, spacing=(2.0, 1.0))[0],
         ndi.distance_transform_edt(MASK, sampling=(2.0, 1.0)))
    ref_idx = ndi.distance_transform_edt(MASK, return_distances=False, return_indices=True)
    same(generic("edt", MASK, squared=True)[0],
         ((ref_idx - np.indices(MASK.shape)) ** 2).sum(0).astype(np.float64))
    same(generic("edt", MASK, metric="taxicab")[0],
         ndi.distance_transform_cdt(MASK, metric="taxicab"))
    idx = np.empty((2,) + MASK.shape, np.int32)
    generic_into("edt", MASK, np.empty(MASK.shape), indices=idx)
    d = np.hypot(*(idx - np.indices(MASK.shape)))  # the indices point at a nearest background
    same(d, ndi.distance_transform_edt(MASK))
    yy, xx = np.indices((12, 13))
    inside = ((yy[..., None] - POINTS[:, 0]) ** 2 + ((xx[..., None] - POINTS[:, 1]) * 2) ** 2
              <= 2.5 ** 2).any(-1)
    same(generic("balls", None, shape=(12, 13), points=POINTS, radius=2.5,
                 spacing=(1, 2))[0], inside)


def test_halo_checks_its_arguments():
    # halo functions read parameters unchecked: missing ones are refused first
    with pytest.raises(ValueError, match="psf: required"):
        _voxa.op_halo("deconvolve", 2)
    with pytest.raises(ValueError, match="exactly one of"):
        _voxa.op_halo("dilate", 2)
    with pytest.raises(ValueError, match="box: 3 values"):
        _voxa.op_halo("dilate", 2, box=(1, 2, 3))
    with pytest.raises(ValueError, match="ndim 9"):
        _voxa.op_halo("dilate", 9, ball=1)


def test_concurrent_generic_calls():
    """Several Python threads in run_op at once (the GIL is released; Dask
    will do this): every result equals the one computed alone, and a failing
    call's message does not leak into another thread's."""
    from concurrent.futures import ThreadPoolExecutor
    calls = [g for name in sorted(CASES) for g, _ in CASES[name]] * 3
    alone = [g() for g in calls]

    def bad(_):
        with pytest.raises(ValueError, match="ball radius -1 is negative"):
            _voxa.run_op("dilate", MASK, np.empty(MASK.shape, bool), ball=-1)
    with ThreadPoolExecutor(4) as ex:
        together = list(ex.map(lambda g: g(), calls))
        list(ex.map(bad, range(20)))
    for a, b in zip(alone, together):
        same(b, a)


def test_connectivity_above_the_op_range():
    # scipy's generate_binary_structure(ndim, c > ndim) is the full box; the
    # morph ops take 1..64, so the public function passes min(c, ndim)
    import scipy.ndimage as ndi
    for c in (3, 100, 2**40):
        same(voxa.binary_erosion(MASK, connectivity=c),
             ndi.binary_erosion(MASK, ndi.generate_binary_structure(2, c)))
