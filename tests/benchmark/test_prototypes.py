"""Tests for certify.benchmark.prototypes and certify.benchmark.pairs (paper Sec. 6.1-6.2)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from typeguard import TypeCheckError

from certify.benchmark.pairs import benchmark_pairs, power_pairs
from certify.benchmark.prototypes import (
    PrototypeSet,
    array_sha256,
    clustered,
    dispersed,
    pairwise_distances,
    sensitivities,
)
from certify.errors import DataError, ParameterError

# Hashes of the default-seed sets: any change to generation, seeds or hashing must be deliberate.
DISPERSED_SHA256 = "531506914950a058"
CLUSTERED_SHA256 = "17bf0843727b6012"


@pytest.fixture(scope="module")
def disp() -> PrototypeSet:
    """The default dispersed set."""
    return dispersed()


@pytest.fixture(scope="module")
def clus() -> PrototypeSet:
    """The default clustered set."""
    return clustered()


def _brute_force(x: np.ndarray) -> tuple[float, tuple[int, int], float, tuple[int, int]]:
    """Plain per-pair loop for Delta_1 and Delta_2 with their attaining pairs."""
    best1, pair1, best2, pair2 = -1.0, (-1, -1), -1.0, (-1, -1)
    n = x.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            d1 = float(np.sum(np.abs(x[i] - x[j])))
            d2 = float(np.sqrt(np.sum((x[i] - x[j]) ** 2)))
            if d1 > best1:
                best1, pair1 = d1, (i, j)
            if d2 > best2:
                best2, pair2 = d2, (i, j)
    return best1, pair1, best2, pair2


@pytest.mark.parametrize("maker", [dispersed, clustered])
def test_sensitivities_match_brute_force(maker: object) -> None:
    """Delta_1, Delta_2 and the attaining pairs equal a per-pair loop on a 60-prototype subset."""
    assert callable(maker)
    x = maker().prototypes[:60]
    ps = sensitivities(x)
    d1, p1, d2, p2 = _brute_force(x)
    assert ps.delta_1 == pytest.approx(d1, rel=1e-13)
    assert ps.delta_2 == pytest.approx(d2, rel=1e-13)
    assert (ps.l1_pair, ps.l2_pair) == (p1, p2)


def test_distance_matrices_match_cdist(disp: PrototypeSet) -> None:
    """The stored and helper distance matrices equal scipy's cdist on the full set."""
    x = disp.prototypes
    np.testing.assert_allclose(disp.l1_distances, cdist(x, x, "cityblock"), rtol=1e-12)
    np.testing.assert_allclose(disp.l2_distances, cdist(x, x, "euclidean"), rtol=1e-12, atol=0)
    np.testing.assert_array_equal(pairwise_distances(x, 1), disp.l1_distances)
    assert disp.delta_1 == pytest.approx(cdist(x, x, "cityblock").max(), rel=1e-13)


def test_default_sets_shape_norm_and_values(disp: PrototypeSet, clus: PrototypeSet) -> None:
    """Both default sets have 400 unit-norm prototypes in R^512 and the recorded sensitivities."""
    for ps in (disp, clus):
        assert ps.prototypes.shape == (400, 512)
        np.testing.assert_allclose(np.linalg.norm(ps.prototypes, axis=1), 1.0, rtol=1e-14)
    assert (round(disp.delta_1, 3), round(disp.delta_2, 3)) == (28.143, 1.538)
    assert (round(clus.delta_1, 3), round(clus.delta_2, 3)) == (26.751, 1.473)


def test_hashes_stable_and_pinned(disp: PrototypeSet, clus: PrototypeSet) -> None:
    """Hashes are identical across calls, equal array_sha256 and match the pinned values."""
    assert dispersed().sha256 == disp.sha256 == array_sha256(disp.prototypes)
    assert clustered().sha256 == clus.sha256
    assert disp.sha256.startswith(DISPERSED_SHA256)
    assert clus.sha256.startswith(CLUSTERED_SHA256)
    assert dispersed(seed=1).sha256 != disp.sha256
    assert dispersed() == disp
    assert dispersed(seed=1) != disp


def test_hash_depends_on_shape_not_layout() -> None:
    """array_sha256 ignores memory layout and writeability but distinguishes shapes."""
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert array_sha256(a) == array_sha256(np.asfortranarray(a))
    assert array_sha256(a) != array_sha256(a.reshape(3, 2))


def test_arrays_are_read_only(disp: PrototypeSet) -> None:
    """Prototype and distance arrays cannot be modified in place."""
    for arr in (disp.prototypes, disp.l1_distances, disp.l2_distances):
        with pytest.raises(ValueError, match="read-only"):
            arr[0, 0] = 1.0


def test_sensitivities_copies_input() -> None:
    """Changing the caller's array afterwards does not change the set."""
    x = np.eye(3)
    ps = sensitivities(x)
    x[0, 0] = 100.0
    assert ps.prototypes[0, 0] == 1.0


def test_clustered_structure(clus: PrototypeSet) -> None:
    """Pairs in one cluster (i mod 4 equal) are all closer than every pair across clusters."""
    i, j = np.triu_indices(400, 1)
    same = (i % 4) == (j % 4)
    d = clus.l2_distances[i, j]
    assert d[same].max() < d[~same].min()


def test_pickle_round_trip(disp: PrototypeSet) -> None:
    """A pickled set compares equal, keeps its values and its arrays stay read-only."""
    back = pickle.loads(pickle.dumps(disp))
    assert back == disp
    assert back.delta_1 == disp.delta_1
    assert not back.prototypes.flags.writeable
    assert not back.l2_distances.flags.writeable


@pytest.mark.parametrize(
    ("bad", "error", "message"),
    [
        (np.zeros(5), DataError, "2-D array"),
        (np.zeros((1, 5)), DataError, "at least 2 rows"),
        (np.array([[0.0, np.nan], [1.0, 1.0]]), DataError, "finite"),
    ],
)
def test_sensitivities_rejects_bad_input(bad: np.ndarray, error: type, message: str) -> None:
    """Malformed prototype arrays raise DataError with the constraint."""
    with pytest.raises(error, match=message):
        sensitivities(bad)


def test_generators_reject_bad_arguments() -> None:
    """Negative seeds and invalid norms raise ParameterError."""
    with pytest.raises(ParameterError, match="seed must be an integer >= 0"):
        dispersed(seed=-1)
    # A non-literal p is refused by typeguard when active, else with ParameterError.
    with pytest.raises((ParameterError, TypeCheckError), match=r"p must be 1 or 2|not any of"):
        pairwise_distances(np.eye(3), 3)  # type: ignore[arg-type]


def test_benchmark_pairs_properties(disp: PrototypeSet, clus: PrototypeSet) -> None:
    """40 distinct ordered pairs, attaining pairs first, deterministic, seed-dependent."""
    for ps in (disp, clus):
        pairs = benchmark_pairs(ps)
        assert len(pairs) == 40
        assert len(set(pairs)) == 40
        assert all(type(i) is int and type(j) is int for i, j in pairs)
        assert all(i < j for i, j in pairs)
        assert pairs[0] == ps.l1_pair and ps.l2_pair in pairs[:2]
        assert benchmark_pairs(ps) == pairs
        assert benchmark_pairs(ps, seed=1) != pairs


def test_benchmark_pairs_cover_every_stratum(disp: PrototypeSet) -> None:
    """Each of the 19 equal-count L1 strata and each L2 stratum holds a chosen pair."""
    pairs = benchmark_pairs(disp)
    i, j = np.triu_indices(400, 1)
    for matrix in (disp.l1_distances, disp.l2_distances):
        edges = np.quantile(matrix[i, j], np.linspace(0, 1, 20))
        chosen = np.array([matrix[p] for p in pairs])
        counts, _ = np.histogram(chosen, bins=edges)
        assert np.all(counts >= 1)


def test_benchmark_pairs_within_cluster_share(clus: PrototypeSet) -> None:
    """About a quarter of the clustered set's pairs fall within a cluster (paper: 10 of 40)."""
    within = sum(i % 4 == j % 4 for i, j in benchmark_pairs(clus))
    # Stratified draws give ~25% within-cluster pairs (the closest quarter of all pairs).
    assert 8 <= within <= 12


def test_benchmark_pairs_count_check(disp: PrototypeSet) -> None:
    """Too small a count raises ParameterError."""
    with pytest.raises(ParameterError, match="count must be an integer"):
        benchmark_pairs(disp, count=3)


def test_power_pairs(disp: PrototypeSet, clus: PrototypeSet) -> None:
    """Five distinct pairs: the attaining ones, then the 25/50/75th L2-distance percentiles."""
    pairs = power_pairs(disp)
    assert len(set(pairs)) == 5 and pairs[:2] == [disp.l1_pair, disp.l2_pair]
    i, j = np.triu_indices(400, 1)
    d = np.sort(disp.l2_distances[i, j])
    for pair, q in zip(pairs[2:], (0.25, 0.5, 0.75), strict=True):
        assert disp.l2_distances[pair] == d[round(q * (d.size - 1))]
    # In the clustered set one pair attains both maxima; the runner-up fills the second slot.
    cp = power_pairs(clus)
    assert len(set(cp)) == 5 and cp[0] == clus.l1_pair == clus.l2_pair
