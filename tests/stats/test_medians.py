"""Tests of column_medians: numpy's medians, fewer passes."""

from __future__ import annotations

import numpy as np
import pytest

from certify.stats._medians import column_medians


@pytest.mark.parametrize("shape", [(1, 3), (2, 5), (7, 4), (10, 1), (11, 1), (301, 64), (300, 64)])
def test_column_medians_equal_numpy_medians(shape: tuple[int, int]) -> None:
    """Column medians equal np.median(axis=0) exactly (odd and even rows) and leave the rows as they are."""
    x = np.random.default_rng(shape[0]).laplace(size=shape)
    x[0, 0] = x[-1, 0]  # a tie
    assert np.array_equal(column_medians(x), np.median(x, axis=0))
    before = x.copy()
    for view in (x, np.asfortranarray(x)):  # x.T of either is contiguous for some shapes
        view.setflags(write=True)
        assert np.array_equal(column_medians(view), np.median(view, axis=0))
        assert np.array_equal(view, before)  # the rows are never reordered in place
    frozen = x.copy()
    frozen.setflags(write=False)
    assert np.array_equal(column_medians(frozen), np.median(x, axis=0))
    rounded = np.round(x, 1)  # many ties, among them the middle two
    assert np.array_equal(column_medians(rounded), np.median(rounded, axis=0))
    for j in range(x.shape[1]):  # as the Laplace family took them, one column at a time
        assert column_medians(x)[j] == np.median(x[:, j])
    x[0, -1] = np.nan
    with np.errstate(invalid="ignore"):
        assert np.array_equal(column_medians(x), np.median(x, axis=0), equal_nan=True)
