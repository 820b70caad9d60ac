"""Identity pairs of the known-epsilon benchmark (paper Sec. 6.2 and 6.5).

Pairs are chosen from the prototypes alone, before any mechanism output exists, so every method
and every mechanism receives the same list.
"""

from __future__ import annotations

import numbers
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

from certify.benchmark.prototypes import PrototypeSet
from certify.errors import ParameterError

__all__ = [
    "BENCHMARK_PAIR_COUNT",
    "PAIRS_SEED",
    "POWER_PERCENTILES",
    "benchmark_pairs",
    "power_pairs",
]

BENCHMARK_PAIR_COUNT: Final = 40
"""Number of pairs per prototype set in the main benchmark (paper Sec. 6.2)."""
PAIRS_SEED: Final = 20_260_622
"""Default seed of :func:`benchmark_pairs`."""
POWER_PERCENTILES: Final = (25.0, 50.0, 75.0)
"""Distance percentiles of the non-extreme pairs of :func:`power_pairs`."""


def _upper_pairs(ps: PrototypeSet) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Row and column indices of the upper triangle, row-major."""
    iu, ju = np.triu_indices(ps.n_identities, k=1)
    return iu, ju


def _sorted_pairs(ps: PrototypeSet, p: Literal[1, 2]) -> NDArray[np.int64]:
    """All pairs as rows ``(i, j)``, ``i < j``, sorted by ascending ``p``-distance (stable)."""
    iu, ju = _upper_pairs(ps)
    dist = (ps.l1_distances if p == 1 else ps.l2_distances)[iu, ju]
    order = np.argsort(dist, kind="stable")
    return np.stack([iu[order], ju[order]], axis=1).astype(np.int64)


def _at(ranked: NDArray[np.int64], rank: int) -> tuple[int, int]:
    """The pair of a given rank as a tuple of Python ints."""
    return int(ranked[rank, 0]), int(ranked[rank, 1])


def _check_set(prototype_set: PrototypeSet) -> PrototypeSet:
    """Check the argument is a PrototypeSet."""
    if not isinstance(prototype_set, PrototypeSet):
        raise ParameterError(f"prototype_set must be a PrototypeSet; got {type(prototype_set).__name__}.")
    return prototype_set


def _nearest_free(ranked: NDArray[np.int64], rank: int, chosen: set[tuple[int, int]]) -> tuple[int, int]:
    """The unchosen pair whose rank is nearest ``rank`` (lower rank first on a tie)."""
    for offset in range(ranked.shape[0]):
        for r in (rank - offset, rank + offset):
            if 0 <= r < ranked.shape[0] and _at(ranked, r) not in chosen:
                return _at(ranked, r)
    raise ParameterError("no unchosen pair is left; ask for fewer pairs.")  # pragma: no cover


def benchmark_pairs(
    prototype_set: PrototypeSet, count: int = BENCHMARK_PAIR_COUNT, seed: int = PAIRS_SEED
) -> list[tuple[int, int]]:
    """The predeclared benchmark pairs: sensitivity-attaining plus distance-stratified pairs.

    Parameters
    ----------
    prototype_set : PrototypeSet
        The prototypes; pairs are chosen from their exact L1 and L2 distances only.
    count : int, default 40
        Number of distinct pairs, at least the number of attaining pairs plus 2 and at most
        ``n (n - 1) / 2``.
    seed : int, default PAIRS_SEED
        Seed of the within-stratum draws.

    Returns
    -------
    list of tuple of int
        ``count`` distinct pairs ``(i, j)`` with ``i < j``: first the L1-attaining pair, then the
        L2-attaining pair (once if they coincide), then L1-stratified pairs in ascending distance,
        then L2-stratified pairs in ascending distance.

    Raises
    ------
    ParameterError
        If ``count`` is out of range or ``seed`` is not a non-negative integer.

    Notes
    -----
    Paper Sec. 6.2. The remaining ``r = count - (number of attaining pairs)`` slots go
    ``ceil(r / 2)`` to L1 and ``floor(r / 2)`` to L2 (19 and 19 when the two maxima are attained
    by different pairs, 20 and 19 when by one pair). For each metric, all pairs are sorted
    by distance and split into that many equal-count strata; one pair is drawn uniformly from
    each stratum, among the pairs not already chosen (falling back to the nearest free rank if a
    stratum is exhausted). The result is deterministic given the prototypes and ``seed``, and
    spans the whole distance range of both metrics; for the clustered set about a quarter of
    the pairs fall within a cluster, as in the paper (10 of 40).

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> ps = dispersed()
    >>> pairs = benchmark_pairs(ps)
    >>> len(pairs), len(set(pairs)), pairs[0] == ps.l1_pair
    (40, 40, True)
    """
    ps = _check_set(prototype_set)
    n_pairs = ps.n_identities * (ps.n_identities - 1) // 2
    attaining = [ps.l1_pair] if ps.l1_pair == ps.l2_pair else [ps.l1_pair, ps.l2_pair]
    if (
        isinstance(count, bool)
        or not isinstance(count, numbers.Integral)
        or not len(attaining) + 2 <= count <= n_pairs
    ):
        raise ParameterError(f"count must be an integer in [{len(attaining) + 2}, {n_pairs}]; got {count!r}.")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer; got {seed!r}.")
    rng = np.random.default_rng(int(seed))
    chosen: list[tuple[int, int]] = list(attaining)
    taken = set(chosen)
    remaining = int(count) - len(attaining)
    per_metric: tuple[tuple[Literal[1, 2], int], ...] = (
        (1, (remaining + 1) // 2),
        (2, remaining // 2),
    )
    for p, strata in per_metric:
        ranked = _sorted_pairs(ps, p)
        edges = np.linspace(0, n_pairs, strata + 1).round().astype(np.int64)
        for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
            codes = ranked[lo:hi, 0] * ps.n_identities + ranked[lo:hi, 1]
            taken_codes = np.array([a * ps.n_identities + b for a, b in taken], dtype=np.int64)
            free = lo + np.flatnonzero(~np.isin(codes, taken_codes))
            if free.size > 0:
                pick = _at(ranked, int(free[int(rng.integers(free.size))]))
            else:
                pick = _nearest_free(ranked, (lo + hi) // 2, taken)
            chosen.append(pick)
            taken.add(pick)
    return chosen


def power_pairs(prototype_set: PrototypeSet, metric: Literal[1, 2] = 2) -> list[tuple[int, int]]:
    """Five fixed pairs: the two sensitivity-attaining pairs and three distance percentiles.

    Parameters
    ----------
    prototype_set : PrototypeSet
        The prototypes.
    metric : {1, 2}, default 2
        Norm whose distance percentiles pick the three non-extreme pairs.

    Returns
    -------
    list of tuple of int
        Five distinct pairs ``(i, j)``, ``i < j``: the L1-attaining pair, the L2-attaining pair,
        then the pairs at the 25th, 50th and 75th percentiles of the ``metric`` distance.

    Raises
    ------
    ParameterError
        If ``metric`` is not 1 or 2, or the set has fewer than 5 pairs.

    Notes
    -----
    The percentile pair is the one of rank ``round(q (N - 1))`` among the ``N`` pairs sorted by
    distance (lower order statistic at the median for even ``N``); if that pair is already
    chosen the nearest free rank is used. When one pair attains both maxima, the second slot
    goes to the pair with the second-largest ``metric`` distance. Deterministic: no randomness.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> ps = dispersed()
    >>> pairs = power_pairs(ps)
    >>> len(set(pairs)), pairs[:2] == [ps.l1_pair, ps.l2_pair]
    (5, True)
    """
    ps = _check_set(prototype_set)
    if metric not in (1, 2) or isinstance(metric, bool):
        raise ParameterError(f"metric must be 1 or 2; got {metric!r}.")
    n_pairs = ps.n_identities * (ps.n_identities - 1) // 2
    if n_pairs < 5:
        raise ParameterError(f"prototype_set must have at least 5 pairs (4 identities); got {n_pairs} pairs.")
    ranked = _sorted_pairs(ps, metric)
    chosen: list[tuple[int, int]] = [ps.l1_pair]
    taken = {ps.l1_pair}
    second = ps.l2_pair if ps.l2_pair not in taken else _nearest_free(ranked, n_pairs - 1, taken)
    chosen.append(second)
    taken.add(second)
    for q in POWER_PERCENTILES:
        pick = _nearest_free(ranked, round(q / 100.0 * (n_pairs - 1)), taken)
        chosen.append(pick)
        taken.add(pick)
    return chosen
