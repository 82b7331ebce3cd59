"""Every public voxa function named like a scipy.ndimage function takes
exactly scipy's parameters, in scipy's order, with scipy's kinds and
defaults; voxa's own extras come after them and are keyword-only. A new
scipy argument therefore fails here, not in a user's script."""
import inspect

import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

SHARED = sorted(n for n in voxa.__all__ if hasattr(ndi, n) and callable(getattr(ndi, n)))


def test_the_drop_in_set_is_complete():
    for name in ["label", "find_objects", "binary_dilation", "binary_erosion", "binary_opening",
                 "binary_closing", "binary_propagation", "binary_hit_or_miss",
                 "distance_transform_edt", "distance_transform_cdt",
                 "generate_binary_structure", "iterate_structure"]:
        assert name in SHARED


def _same_default(a, b):
    if isinstance(a, type) or isinstance(b, type):
        return np.dtype(a) == np.dtype(b) if a is not inspect.Parameter.empty else a is b
    return a is b or a == b


@pytest.mark.parametrize("name", SHARED)
def test_signature_matches_scipy(name):
    want = list(inspect.signature(getattr(ndi, name)).parameters.values())
    got = list(inspect.signature(getattr(voxa, name)).parameters.values())
    assert [p.name for p in got[:len(want)]] == [p.name for p in want], name
    for w, g in zip(want, got):
        assert g.kind == w.kind, (name, w.name, w.kind, g.kind)
        assert _same_default(w.default, g.default), (name, w.name, w.default, g.default)
    for extra in got[len(want):]:
        assert extra.kind == inspect.Parameter.KEYWORD_ONLY, (name, extra.name)
