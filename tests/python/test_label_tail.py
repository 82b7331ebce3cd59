"""voxa.label on byte lines whose length is not a multiple of 64, and its
output writes, against scipy.ndimage.label.

The byte scan reads a line's last, partial 64-voxel word as the 64 voxels
ending at the line's end, shifted down (lines of 64 voxels or more), or
through a zero-padded copy (shorter lines); every scan path uses it: the
one-scan fill, the count + fill scans, the bitmap path, the portable kernels.
The zeroed output write (a fresh output: only the runs are stored) copies
each run's bounds before its vectorised loop; the span fill writes a given
output whole. Runs here start and end at every position near the line's end
and near the start of the shifted window (n - 64), where a wrong shift or a
dropped bit shows."""
import numpy as np
import pytest
import scipy.ndimage as ndi

import voxa

WIDTHS = [1, 2, 31, 63, 64, 65, 66, 70, 100, 127, 128, 129, 191, 192, 193, 401]
PATHS = {  # name: environment
    "one scan": {"VOXA_LABEL_ONESCAN": "2", "VOXA_LABEL_BLOCKS": "0"},
    "two scans": {"VOXA_LABEL_ONESCAN": "0", "VOXA_LABEL_BLOCKS": "0"},
    "portable": {"VOXA_LABEL_PORTABLE": "1", "VOXA_LABEL_ONESCAN": "0", "VOXA_LABEL_BLOCKS": "0"},
    "bitmaps": {"VOXA_LABEL_ONESCAN": "0", "VOXA_LABEL_BLOCKS": "0", "VOXA_LABEL_RUNTABLE": "0"},
}


def edge_lines(w, rng):
    """(k, w) lines: single runs [s, e) for s, e near 0, n - 64 and n, plus
    random lines at a few densities."""
    marks = {0, 1, 2, w - 65, w - 64, w - 63, w - 2, w - 1, w}
    marks = sorted(m for m in marks if 0 <= m <= w)
    lines = []
    for s in marks:
        for e in marks:
            if s < e:
                row = np.zeros(w, bool)
                row[s:e] = True
                lines.append(row)
    for p in (0.1, 0.5, 0.9):
        lines.extend(rng.random((4, w)) < p)
    return np.array(lines)


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("w", WIDTHS)
def test_tail_words(monkeypatch, path, w):
    for k, v in PATHS[path].items():
        monkeypatch.setenv(k, v)
    rng = np.random.default_rng(w)
    lines = edge_lines(w, rng)
    # 3-D: each line in a plane of its own and stacked with its neighbours,
    # so runs meet across y and z at the tail
    k = len(lines)
    vol = np.zeros((2, k, w), bool)
    vol[0] = lines
    vol[1] = np.roll(lines, 1, axis=0)
    if path == "bitmaps":  # the bitmap union needs > 1 run per 64 voxels
        vol[:, :, ::2] |= rng.random((2, k, (w + 1) // 2)) < 0.5
    for conn in (1, 3):
        s = ndi.generate_binary_structure(3, conn)
        want, wn = ndi.label(vol, s)
        got, n = voxa.label(vol, connectivity=conn)  # fresh output: runs only
        assert n == wn and np.array_equal(got, want), (path, w, conn)
        for dt in (np.int32, np.uint16):  # a given output: written whole
            out = np.full(vol.shape, 7, dt)
            n = voxa.label(vol.view(np.uint8), connectivity=conn, output=out)
            assert n == wn and np.array_equal(out, want), (path, w, conn, dt)
        got, n = voxa.label(vol, connectivity=conn, output=np.uint16)
        assert n == wn and np.array_equal(got, want), (path, w, conn, "u16 fresh")
