"""Squared distances of certify.stats.mmd on data with exactly repeated rows, against brute force.

Discrete outputs (randomized response) repeat a few distinct rows many times; the distance helper then
computes distances between distinct rows only and expands them. These tests compare every entry with
the explicit difference ``sum((u - v)**2)`` and check the properties callers rely on: exact zeros
between copies, an exactly symmetric pooled matrix with a zero diagonal, and unchanged MMD results.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import certify.stats._distances as distances
from certify.stats.mmd import median_bandwidth, mmd2_unbiased, rbf_kernel_matrix

# Entries the Gram form keeps satisfy d2 > 2**-10 (|u|^2 + |v|^2) after centring; its rounding error is
# a few d * eps * (|u|^2 + |v|^2), so the relative error is below 2**10 * 4 * 512 * 1.1e-16 ~ 2.5e-10
# for d <= 512 (observed: ~1e-12). Refined entries are explicit differences, accurate to ~d * eps.
# A wrong expansion index or a missed refinement is off by O(1) relative, far above this tolerance.
DIST_RTOL = 1e-9
# Both the grouped and the ungrouped computation use the same centring and refinement; they differ
# only by the position-dependent rounding of the matrix product, a few ulps of |u|^2 + |v|^2, which
# is at most 2**10 * 4 * 2.2e-16 ~ 1e-12 relative on the entries the Gram form keeps.
SAME_RTOL = 1e-11
# MMD and median from the pooled kernel: sums of O(n^2) terms of size <= 1 with distances accurate to
# DIST_RTOL, so the statistics agree to ~1e-10 relative; the tolerance used by tests/stats/test_mmd.py.
STAT_RTOL = 1e-9


def _brute_sq(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Squared distances from the explicit difference of every pair of rows (one row of x at a time)."""
    out = np.empty((len(x), len(y)))
    for i, u in enumerate(x):
        diff = y - u
        out[i] = np.einsum("jk,jk->j", diff, diff)
    return out


def _centred_norms(z: np.ndarray) -> np.ndarray:
    """Squared norms of the rows of ``z`` centred at their mean, as the pooled distance helper uses."""
    zc = z - z.mean(axis=0)
    return np.einsum("ij,ij->i", zc, zc)


def _repeated(rng: np.random.Generator, distinct: int, copies: int, width: int, singles: int) -> np.ndarray:
    """``distinct`` rows repeated ``copies`` times each plus ``singles`` unique rows, shuffled."""
    base = rng.normal(size=(distinct, width))
    rows = np.vstack([np.repeat(base, copies, axis=0), rng.normal(size=(singles, width))])
    return rows[rng.permutation(len(rows))]


def _assert_distances(got: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """Entries match brute force; exactly equal rows are exactly 0 apart and nothing else is."""
    ref = _brute_sq(x, y)
    np.testing.assert_allclose(got, ref, rtol=DIST_RTOL, atol=0.0)
    equal = np.array([(y == u).all(axis=1) for u in x])
    np.testing.assert_array_equal(got == 0.0, equal)


# ---------------------------------------------------------------------------------- pooled


@pytest.mark.parametrize(("width", "singles"), [(512, 5), (64, 0), (33, 3)])
def test_pooled_repeated_rows_match_brute_force(width: int, singles: int) -> None:
    """Pooled rows taking a few values: grouped, every entry as brute force, exact zeros, symmetric."""
    rng = np.random.default_rng(1000 + width)
    z = _repeated(rng, distinct=3, copies=100, width=width, singles=singles)  # > one mirror block
    assert distances._repeated_rows(z, _centred_norms(z)) is not None  # the grouped path is tested
    d2 = distances._sq_distances(z)
    _assert_distances(d2, z, z)
    np.testing.assert_array_equal(d2, d2.T)
    assert not np.diag(d2).any()


def test_pooled_distinct_rows_match_brute_force() -> None:
    """Continuous rows are not grouped; every entry matches brute force, symmetric, zero diagonal."""
    rng = np.random.default_rng(2001)
    z = 3.0 + rng.normal(size=(300, 40))
    assert distances._repeated_rows(z, _centred_norms(z)) is None
    d2 = distances._sq_distances(z)
    _assert_distances(d2, z, z)
    np.testing.assert_array_equal(d2, d2.T)
    assert not np.diag(d2).any()


def test_pooled_grouped_equals_ungrouped() -> None:
    """Grouping changes no entry beyond the rounding of the matrix product; zeros are identical."""
    rng = np.random.default_rng(2002)
    z = _repeated(rng, distinct=4, copies=60, width=128, singles=7)
    # near-copies of a repeated row are refined from the explicit difference after grouping too
    z[:3] = z[3] + 1e-9 * rng.normal(size=(3, 128))
    zc = z - z.mean(axis=0)
    norms = np.einsum("ij,ij->i", zc, zc)
    assert distances._repeated_rows(z, norms) is not None
    grouped = distances._sq_distances(z)
    ungrouped = distances._gram_sq_distances(zc, norms)
    np.testing.assert_allclose(grouped, ungrouped, rtol=SAME_RTOL, atol=0.0)
    np.testing.assert_array_equal(grouped == 0.0, ungrouped == 0.0)
    # Against the uncentred brute force the near-copies (1e-9 apart) carry the rounding of centring,
    # ~1e-16 per coordinate, i.e. up to ~1e-6 of their tiny distance; all other entries stay at 1e-9.
    near = _brute_sq(z, z) < 1e-12
    np.testing.assert_allclose(grouped[near], _brute_sq(z, z)[near], rtol=1e-5, atol=0.0)
    np.testing.assert_allclose(grouped[~near], _brute_sq(z, z)[~near], rtol=DIST_RTOL, atol=0.0)


def test_pooled_few_copies_not_grouped_still_exact() -> None:
    """One duplicated pair among continuous rows is not worth grouping and is still exactly 0."""
    rng = np.random.default_rng(2003)
    z = rng.normal(size=(200, 256))
    z[150] = z[20]
    assert distances._repeated_rows(z, _centred_norms(z)) is None
    d2 = distances._sq_distances(z)
    assert d2[20, 150] == 0.0 and d2[150, 20] == 0.0
    _assert_distances(d2, z, z)


def test_equal_keys_of_different_rows_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Distinct rows sharing a key are not merged: the bitwise check rejects the grouping."""
    # With a zero angle step every weight is cos(0) = 1, so the key is the row sum: [1, 0] and [0, 1]
    # collide, and both have the same centred norm, so the search gets past the norm test.
    monkeypatch.setattr(distances, "_KEY_STEP", 0.0)
    z = np.tile(np.array([[1.0, 0.0], [0.0, 1.0]]), (300, 1))
    assert distances._repeated_rows(z, _centred_norms(z)) is None
    d2 = distances._sq_distances(z)
    _assert_distances(d2, z, z)
    monkeypatch.undo()
    assert distances._repeated_rows(z, _centred_norms(z)) is not None


# ------------------------------------------------------------------------------- x versus y


@pytest.mark.parametrize(("x_copies", "y_copies"), [(80, 70), (80, 1), (1, 70)])
def test_cross_repeated_rows_match_brute_force(x_copies: int, y_copies: int) -> None:
    """Distances of x to y, with repeated rows on either or both sides, match brute force entry by entry."""
    rng = np.random.default_rng(3000 + x_copies + y_copies)
    base = rng.normal(size=(3, 96))
    x = np.vstack([np.repeat(base, x_copies, axis=0), rng.normal(size=(2, 96))])
    y = np.vstack([np.repeat(base[1:], y_copies, axis=0), rng.normal(size=(4, 96))])
    x, y = x[rng.permutation(len(x))], y[rng.permutation(len(y))]
    center = np.vstack([x, y]).mean(axis=0)
    for rows, copies in ((x, x_copies), (y, y_copies)):
        rc = rows - center
        groups = distances._repeated_rows(rows, np.einsum("ij,ij->i", rc, rc))
        assert (groups is not None) == (copies > 1)
    d2 = distances._sq_distances(x, y)
    assert d2.shape == (len(x), len(y))
    _assert_distances(d2, x, y)


def test_rbf_kernel_matrix_repeated_rows_exact_ones() -> None:
    """The public kernel matrix is exactly 1 between equal rows of x and y and matches brute force."""
    rng = np.random.default_rng(3001)
    x = _repeated(rng, distinct=2, copies=90, width=48, singles=1)
    y = x[rng.permutation(len(x))[:120]]
    k = rbf_kernel_matrix(x, y, bandwidth=4.0)
    ref = np.exp(-_brute_sq(x, y) / 32.0)
    np.testing.assert_allclose(k, ref, rtol=DIST_RTOL, atol=0.0)
    np.testing.assert_array_equal(k == 1.0, np.array([(y == u).all(axis=1) for u in x]))


# ------------------------------------------------------------------------- public statistics


def _brute_median(z: np.ndarray) -> float:
    """Median of the distances over i < j from brute-force squared distances."""
    iu = np.triu_indices(len(z), k=1)
    return float(np.median(np.sqrt(_brute_sq(z, z)[iu])))


def _brute_mmd2(a: np.ndarray, b: np.ndarray, bandwidth: float) -> float:
    """Eq. 7 from brute-force kernel blocks, diagonals left out of the within-sample sums."""
    n, m = len(a), len(b)
    k_aa = np.exp(-_brute_sq(a, a) / (2.0 * bandwidth**2))
    k_bb = np.exp(-_brute_sq(b, b) / (2.0 * bandwidth**2))
    k_ab = np.exp(-_brute_sq(a, b) / (2.0 * bandwidth**2))
    s_aa = math.fsum(k_aa.ravel()) - n
    s_bb = math.fsum(k_bb.ravel()) - m
    return s_aa / (n * (n - 1)) + s_bb / (m * (m - 1)) - 2.0 * math.fsum(k_ab.ravel()) / (n * m)


def test_median_and_mmd2_on_randomized_response_rows() -> None:
    """Median bandwidth and MMD^2_u on repeated-row data equal their brute-force values."""
    rng = np.random.default_rng(4000)
    values = rng.normal(size=(4, 512))
    a = values[rng.choice(4, size=150, p=[0.4, 0.3, 0.2, 0.1])]
    b = values[rng.choice(4, size=150, p=[0.1, 0.2, 0.3, 0.4])]
    pooled = np.vstack([a, b])
    assert distances._repeated_rows(pooled, _centred_norms(pooled)) is not None
    bw = _brute_median(pooled)
    assert median_bandwidth(pooled) == pytest.approx(bw, rel=STAT_RTOL)
    ref = _brute_mmd2(a, b, bw)
    assert ref > 0.05  # the two response distributions differ: a non-trivial statistic
    assert mmd2_unbiased(a, b) == pytest.approx(ref, rel=STAT_RTOL)
    assert mmd2_unbiased(a, b, bandwidth=7.5) == pytest.approx(_brute_mmd2(a, b, 7.5), rel=STAT_RTOL)
