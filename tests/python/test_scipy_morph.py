"""voxa's binary morphology against scipy.ndimage, argument by argument.

Random structures of every size (even ones included), origins over scipy's
whole allowed range, masks, iterations (1, k, until stable), border values,
axes, output arrays of every dtype and in place, 0-d / 1-element / empty
inputs, ndim 1-4, several input dtypes and memory orders, two thread counts.

scipy's own iterative path (iterations != 1, brute_force=False) corrupts
memory with an even-sized structure or a non-zero origin (seen here as
"double free" aborts with scipy 1.17); there we ask scipy for brute_force=True,
which scipy documents as giving the same result.
"""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

OPS = ["binary_dilation", "binary_erosion", "binary_opening", "binary_closing"]


def same(want, got):
    return got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


def random_case(rng, ndim, max_size=8, max_se=4):
    shape = tuple(int(v) for v in rng.integers(1, max_size + 1, ndim))
    a = rng.random(shape) < rng.random()
    sshape = tuple(int(v) for v in rng.integers(1, max_se + 1, ndim))
    s = rng.random(sshape) < 0.6
    org = tuple(int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in sshape)
    return a, s, org


def scipy_kw(s, org, it):
    kw = {}
    if it != 1 and (any(k % 2 == 0 for k in s.shape) or any(org)):
        kw["brute_force"] = True  # scipy's default path is memory-unsafe here
    return kw


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
@pytest.mark.parametrize("threads", [1, 2])
def test_random_origin_mask_iterations_border(ndim, threads):
    rng = np.random.default_rng(100 + ndim)
    voxa.set_threads(threads)
    try:
        for _ in range(60 if ndim < 4 else 25):
            a, s, org = random_case(rng, ndim, 8 if ndim < 4 else 5, 4 if ndim < 4 else 3)
            mask = rng.random(a.shape) < 0.7 if rng.random() < 0.5 else None
            it = int(rng.choice([1, 2, 3, 0, -1]))
            centre = tuple(k // 2 + o for k, o in zip(s.shape, org))
            if it < 1 and not s[centre]:
                it = 2  # scipy loops forever when the centre is false
            bv = int(rng.integers(0, 2))
            for op in OPS:
                kw = dict(structure=s, iterations=it, mask=mask, border_value=bv, origin=org)
                want = getattr(ndi, op)(a, **kw, **scipy_kw(s, org, it))
                got = getattr(voxa, op)(a, **kw)
                assert same(want, got), (op, a.shape, kw)
    finally:
        voxa.set_threads(0)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float32, np.float64, ">i4",
                                   np.float16])
@pytest.mark.parametrize("order", ["C", "F", "strided"])
def test_input_dtypes_and_orders(dtype, order):
    rng = np.random.default_rng(7)
    base = (rng.random((9, 12, 7)) < 0.5).astype(dtype)
    a = {"C": base, "F": np.asfortranarray(base), "strided": base[::2, ::-1, 1:]}[order]
    s = rng.random((3, 2, 3)) < 0.7
    m = rng.random(a.shape) < 0.8
    for op in OPS:
        for kw in (dict(), dict(structure=s, origin=(1, 0, -1)), dict(mask=m, iterations=2),
                   dict(structure=s, mask=m, iterations=-1, border_value=1, origin=(0, -1, 0))):
            if kw.get("iterations", 1) < 1 and not s[1, 0, 1]:
                kw["iterations"] = 3
            want = getattr(ndi, op)(a.astype(np.float64), **kw,
                                    **scipy_kw(kw.get("structure", np.ones(3)),
                                               kw.get("origin", (0,)),
                                               kw.get("iterations", 1)))
            assert same(want, getattr(voxa, op)(a, **kw)), (op, kw)


@pytest.mark.parametrize("op", OPS)
def test_axes(op):
    rng = np.random.default_rng(3)
    a = rng.random((6, 7, 8)) < 0.55
    for axes in [(0,), (2,), (-1, 0), (1, 2), (2, 0, 1)]:
        s = rng.random((3,) * len(axes)) < 0.7
        s[(1,) * len(axes)] = True
        org = tuple(int(v) for v in rng.integers(-1, 2, len(axes)))
        for kw in (dict(), dict(structure=s), dict(structure=s, origin=org, iterations=2),
                   dict(structure=s, mask=a | (rng.random(a.shape) < 0.5), iterations=0)):
            extra = scipy_kw(s, kw.get("origin", (0,)), kw.get("iterations", 1))
            want = getattr(ndi, op)(a, axes=axes, **kw, **extra)
            assert same(want, getattr(voxa, op)(a, axes=axes, **kw)), (axes, kw)


@pytest.mark.parametrize("op", OPS)
def test_output_arrays_dtypes_and_in_place(op):
    rng = np.random.default_rng(5)
    a = rng.random((10, 11)) < 0.5
    for dt in (np.bool_, np.uint8, np.int32, np.float32, np.float64, np.int8):
        want_out = np.zeros(a.shape, dt)
        want = getattr(ndi, op)(a, output=want_out, origin=(1, 0))
        got_out = np.full(a.shape, 7, dt)
        got = getattr(voxa, op)(a, output=got_out, origin=(1, 0))
        assert got is got_out and want is want_out and np.array_equal(want_out, got_out)
    for dt in (np.float32, "f8", np.complex64):  # scipy ignores a dtype: bool result
        assert same(getattr(ndi, op)(a, output=dt), getattr(voxa, op)(a, output=dt))
    x_s, x_v = a.astype(np.uint8), a.astype(np.uint8)
    getattr(ndi, op)(x_s, output=x_s, iterations=2)
    getattr(voxa, op)(x_v, output=x_v, iterations=2)
    assert np.array_equal(x_s, x_v)  # in place


@pytest.mark.parametrize("op", OPS)
def test_structures_any_dtype_list_even_empty(op):
    rng = np.random.default_rng(9)
    a = rng.random((9, 10)) < 0.5
    structures = [[[0, 1], [1, 1]], [[2, 0, -1]], np.array([[0.5, 0], [0, 3]]),
                  np.zeros((3, 3), bool), np.ones((4, 2), np.uint16), [[True]],
                  np.asfortranarray(rng.random((5, 4)) < 0.5)]
    for s in structures:
        for kw in (dict(), dict(border_value=1), dict(iterations=2), dict(mask=a[::-1])):
            sa = np.asarray(s)
            extra = {"brute_force": True} if kw.get("iterations", 1) != 1 else {}
            want = getattr(ndi, op)(a, sa, **kw, **extra)
            assert same(want, getattr(voxa, op)(a, s, **kw)), (sa, kw)


@pytest.mark.parametrize("op", OPS)
def test_tiny_and_empty_inputs(op):
    for a in (np.array(1), np.array(0.0), np.array([True]), np.zeros((0, 3)),
              np.zeros((4, 0, 2), bool), np.ones((1, 1, 1))):
        for kw in (dict(), dict(border_value=1), dict(iterations=-1)):
            want = getattr(ndi, op)(a, **kw)
            assert same(want, getattr(voxa, op)(a, **kw)), (a.shape, kw)


def test_brute_force_accepted():
    a = np.random.default_rng(1).random((8, 8)) < 0.5
    for bf in (True, False):
        assert same(ndi.binary_erosion(a, iterations=3, brute_force=bf),
                    voxa.binary_erosion(a, iterations=3, brute_force=bf))


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_binary_propagation(ndim):
    rng = np.random.default_rng(20 + ndim)
    for trial in range(25):
        shape = tuple(int(v) for v in rng.integers(1, 12 if ndim < 3 else 7, ndim))
        mask = rng.random(shape) < 0.6
        seed = rng.random(shape) < 0.05
        for s in (None, ndi.generate_binary_structure(ndim, ndim),
                  rng.random((3,) * ndim) < 0.5, rng.random((5,) * ndim) < 0.3):
            if s is not None:
                s = np.asarray(s)
                s[(s.shape[0] // 2,) * ndim] = True
            for bv in (0, 1):
                kw = dict(structure=s, mask=mask, border_value=bv)
                # scipy's binary_propagation is binary_dilation(iterations=-1);
                # its non-brute-force path corrupts memory on some of these
                want = ndi.binary_dilation(seed, iterations=-1, brute_force=True, **kw)
                assert same(want, voxa.binary_propagation(seed, **kw)), (trial, kw)
                if min(shape) >= 3 and (s is None or s.shape[0] == 3):
                    assert same(ndi.binary_propagation(seed, **kw), want)
    m = rng.random((6, 7, 8)) < 0.7
    assert same(ndi.binary_propagation(m[0] > 2, mask=m[0], border_value=1),
                voxa.binary_propagation(m[0] > 2, mask=m[0], border_value=1))
    for axes in ((0, 2), (1,)):
        assert same(ndi.binary_propagation(m & (np.arange(8) == 0), mask=m, axes=axes),
                    voxa.binary_propagation(m & (np.arange(8) == 0), mask=m, axes=axes))


def test_binary_hit_or_miss():
    rng = np.random.default_rng(11)
    for trial in range(60):
        ndim = int(rng.integers(1, 4))
        a = rng.random(tuple(int(v) for v in rng.integers(2, 9, ndim))) < 0.5
        s1 = rng.random(tuple(int(v) for v in rng.integers(1, 4, ndim))) < 0.5
        kw = {}
        if rng.random() < 0.5:
            kw["structure2"] = rng.random(tuple(int(v) for v in rng.integers(1, 4, ndim))) < 0.4
        kw["origin1"] = tuple(int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in s1.shape)
        if "structure2" in kw:  # else origin1 must also fit structure2 (scipy: unchecked)
            kw["origin2"] = tuple(int(rng.integers(-(k // 2), (k - 1) // 2 + 1))
                                  for k in kw["structure2"].shape)
        assert same(ndi.binary_hit_or_miss(a, s1, **kw),
                    voxa.binary_hit_or_miss(a, s1, **kw)), (trial, kw)
    a = rng.random((7, 8)) < 0.5
    assert same(ndi.binary_hit_or_miss(a), voxa.binary_hit_or_miss(a))
    assert same(ndi.binary_hit_or_miss(a, [1, 1], axes=1),
                voxa.binary_hit_or_miss(a, [1, 1], axes=1))
    out_s, out_v = np.zeros(a.shape, np.int16), np.zeros(a.shape, np.int16)
    ndi.binary_hit_or_miss(a, [[0, 1, 0]], output=out_s)
    assert voxa.binary_hit_or_miss(a, [[0, 1, 0]], output=out_v) is out_v
    assert np.array_equal(out_s, out_v)


def test_structure_helpers():
    for rank in range(-1, 5):
        for conn in range(-1, 6):
            assert same(ndi.generate_binary_structure(rank, conn),
                        voxa.generate_binary_structure(rank, conn))
    s = [[0, 1, 0], [1, 1, 1], [0, 1, 0]]
    for it in range(0, 5):
        assert np.array_equal(ndi.iterate_structure(s, it), voxa.iterate_structure(s, it))
        w = ndi.iterate_structure(np.ones((2, 3)), it, origin=(0, -1))
        g = voxa.iterate_structure(np.ones((2, 3)), it, origin=(0, -1))
        if isinstance(w, tuple):
            assert np.array_equal(w[0], g[0]) and list(w[1]) == list(g[1])
        else:
            assert np.array_equal(w, g)


def exc_type(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - any exception type is what we compare
        return e
    return None


@pytest.mark.parametrize("op", OPS)
def test_invalid_arguments_raise_scipys_exception_type(op):
    a = np.array([[0, 1, 1], [1, 1, 0]], bool)
    cases = [
        dict(iterations=1.5), dict(iterations="2"), dict(origin=(0, 0, 0)),
        dict(mask=np.ones((2, 2))), dict(structure=np.ones((3,))),
        dict(structure=np.zeros((0, 3))), dict(output=np.zeros((3, 3), bool)),
        dict(output=np.zeros((2, 3), complex)), dict(axes=(2,)), dict(axes=(0, 0)),
        dict(axes=(0,), structure=np.ones((3, 3))), dict(border_value=0.5),
        dict(border_value=None), dict(structure="abc"),
    ]
    if op != "binary_erosion":  # scipy: IndexError; voxa: RuntimeError, as erosion
        cases = [kw for kw in cases
                 if "structure" not in kw or np.ndim(kw["structure"]) not in (0, 1)]
    for kw in cases:
        want = exc_type(lambda: getattr(ndi, op)(a, **kw))
        got = exc_type(lambda: getattr(voxa, op)(a, **kw))
        assert want is not None and isinstance(got, type(want)), (kw, want, got)
    for bad in (a.astype(complex), np.array(["a", "b"]), np.array([None, 1], object)):
        want = exc_type(lambda: getattr(ndi, op)(bad))
        assert isinstance(exc_type(lambda: getattr(voxa, op)(bad)), type(want))
    # an origin outside scipy's range: scipy returns an undefined result, voxa refuses
    with pytest.raises(ValueError, match="origin"):
        getattr(voxa, op)(a, origin=2)


def test_regression_scipy_even_structure_iterated_default_path():
    """scipy's default iterative path (brute_force=False) erodes one voxel too
    many here (found by hypothesis in test_morph.py); its brute-force path and
    two single erosions agree with each other and with voxa."""
    a = np.array([[[0, 1, 1], [1, 1, 1]]], bool)
    s = np.ones((1, 1, 4), bool)
    once = ndi.binary_erosion(ndi.binary_erosion(a, s, border_value=1), s, border_value=1)
    want = ndi.binary_erosion(a, s, iterations=2, border_value=1, brute_force=True)
    assert np.array_equal(once, want)
    assert same(want, voxa.binary_erosion(a, s, iterations=2, border_value=1))


def settle(op, x, s, mask, bv, org):
    """scipy's until-stable loop, one single-step call at a time (a path
    scipy runs safely), stopped where a result repeats: the fixed point, or
    None for a cycle (where scipy itself would loop for ever)."""
    seen = set()
    while True:
        y = op(x, s, iterations=1, border_value=bv, origin=org)
        if mask is not None:
            y = np.where(mask, y, x)
        if np.array_equal(x, y):
            return y
        if y.tobytes() in seen:
            return None
        seen.add(y.tobytes())
        x = y


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_until_stable_without_centre_settles_or_raises(ndim):
    """iterations < 1 with a structure whose centre (after origin) is false:
    the results may cycle, and scipy then never returns. voxa detects the
    cycle (Brent's method, in the C loop and in the masked Python loop) and
    raises ValueError; where the results do settle, it returns scipy's fixed
    point. Opening and closing settle each stage in turn."""
    rng = np.random.default_rng(40 + ndim)
    cycles = settles = 0
    for _ in range(80 if ndim < 3 else 40):
        a, s, org = random_case(rng, ndim, 9 if ndim < 3 else 6, 4)
        centre = tuple(k // 2 + o for k, o in zip(s.shape, org))
        s[centre] = False
        mask = rng.random(a.shape) < 0.8 if rng.random() < 0.5 else None
        bv = int(rng.integers(0, 2))
        stages = {"binary_dilation": (ndi.binary_dilation,),
                  "binary_erosion": (ndi.binary_erosion,),
                  "binary_opening": (ndi.binary_erosion, ndi.binary_dilation),
                  "binary_closing": (ndi.binary_dilation, ndi.binary_erosion)}
        for name, ops in stages.items():
            want = a != 0
            for op in ops:
                want = None if want is None else settle(op, want, s, mask, bv, org)
            kw = dict(structure=s, iterations=int(rng.integers(-2, 1)), mask=mask,
                      border_value=bv, origin=org)
            if want is None:
                cycles += 1
                with pytest.raises(ValueError, match="never settles"):
                    getattr(voxa, name)(a, **kw)
            else:
                settles += 1
                assert np.array_equal(getattr(voxa, name)(a, **kw), want), (name, kw)
    assert cycles >= 3 and settles >= 3, (cycles, settles)
    # binary_propagation is a masked dilation until stable: same rule
    a = np.array([0, 0, 1, 0, 0, 0])
    with pytest.raises(ValueError, match="repeat every 2 iterations"):
        voxa.binary_propagation(a, [1, 0, 1], mask=np.ones(6, bool))
    with pytest.raises(ValueError, match="repeat every 2 iterations"):
        voxa.binary_dilation(a, [1, 0, 1], iterations=-1)
