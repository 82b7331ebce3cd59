"""voxa.ball / voxa.diamond called with scikit-image's keywords (dtype=,
strict_radius=, decomposition=): equal to skimage.morphology's footprints
where those define the answer, a clear error where voxa's signature differs."""
import numpy as np
import pytest

import voxa

skm = pytest.importorskip("skimage.morphology")


@pytest.mark.parametrize("strict", [True, False])
def test_ball_with_skimage_keywords_equals_skimage(strict):
    for r in range(0, 9):
        got = voxa.ball(r, dtype=np.uint8, strict_radius=strict)
        want = skm.ball(r, strict_radius=strict)
        assert got.dtype == want.dtype == np.uint8
        assert np.array_equal(got, want), r


def test_diamond_with_dtype_equals_skimage_diamond_and_octahedron():
    for r in range(0, 7):
        flat = voxa.diamond(r, ndim=2, dtype=np.uint8)
        assert flat.dtype == np.uint8 and np.array_equal(flat, skm.diamond(r))
        solid = voxa.diamond(r, dtype=np.float32)
        assert solid.dtype == np.float32 and np.array_equal(solid, skm.octahedron(r))


@pytest.mark.parametrize("call", [lambda: voxa.ball(4, np.uint8),
                                  lambda: voxa.ball(4, "uint8"),
                                  lambda: voxa.diamond(4, np.uint8),
                                  lambda: voxa.diamond(4, np.dtype(bool))])
def test_a_dtype_in_skimages_second_place_is_a_clear_error(call):
    with pytest.raises(TypeError, match="looks like a dtype.*pass dtype= by keyword"):
        call()


@pytest.mark.parametrize("fn", [voxa.ball, voxa.diamond])
def test_a_decomposition_is_refused_with_the_reason(fn):
    with pytest.raises(ValueError, match="decomposition='sequence' is not supported"):
        fn(3, decomposition="sequence")
    assert fn(3, decomposition=None).dtype == np.bool_


def test_a_typed_footprint_keeps_its_path_and_its_result():
    a = np.random.default_rng(5).random((14, 30, 30)) < 0.6
    plain = voxa.ball(3, spacing=(2, 1, 1))
    typed = voxa.ball(3, spacing=(2, 1, 1), dtype=np.uint8)
    assert typed.voxa_spacing == plain.voxa_spacing == (2.0, 1.0, 1.0)
    assert voxa.morph_path(3, typed) == voxa.morph_path(3, plain)
    assert np.array_equal(voxa.binary_opening(a, typed), voxa.binary_opening(a, plain))
    wide = voxa.ball(6, strict_radius=False)
    assert np.array_equal(wide, voxa.ball(6.5))
    assert voxa.morph_path(3, wide) == voxa.morph_path(3, voxa.ball(6.5))
