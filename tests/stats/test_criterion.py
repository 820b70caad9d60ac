"""The pruned search of ``robust_cut`` returns what evaluating every cut returns."""

from __future__ import annotations

import numpy as np
import pytest

from certify.protocol import criterion
from certify.protocol.criterion import pessimistic_bound, robust_cut


def _halves(kind: str, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Two independent halves of development scores of one kind."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(2):
        if kind == "shift":  # a smooth ratio: the best cut is in the bulk
            s0, s1 = rng.normal(0.0, 1.0, 20_000), rng.normal(0.3, 1.0, 20_000)
        elif kind == "tail":  # a rare window far in the tail carries the effect
            s0 = rng.normal(0.0, 1.0, 30_000)
            s1 = np.concatenate([rng.normal(0.0, 1.0, 29_900), rng.normal(4.0, 0.1, 100)])
        elif kind == "ties":  # discrete scores: few distinct values, heavy ties
            s0, s1 = rng.poisson(20.0, 20_000) * 1.0, rng.poisson(20.5, 20_000) * 1.0
        elif kind == "reversed":  # class 1 low: the orientation -1 wins
            s0, s1 = rng.laplace(0.0, 1.0, 20_000), rng.laplace(-0.2, 1.0, 20_000)
        else:  # "null": no effect, every pessimistic value is 0
            s0, s1 = rng.normal(0.0, 1.0, 2_000), rng.normal(0.0, 1.0, 2_000)
        out.append((s0, s1))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["shift", "tail", "ties", "reversed", "null"])
@pytest.mark.parametrize("reserved", [(10**5, 10**5), (3 * 10**7, 10**7)])
def test_pruned_search_matches_every_cut(
    kind: str, reserved: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same orientation, threshold and values as a search over every cut, on varied scores."""
    for seed in range(3):
        halves = _halves(kind, seed)
        pruned = robust_cut(halves, *reserved, 0.0125, 0.0)
        monkeypatch.setattr(criterion, "_PRUNE_STRIDE", 10**9)  # every cut evaluated
        full = robust_cut(halves, *reserved, 0.0125, 0.0)
        monkeypatch.undo()
        assert pruned == full
        if kind == "null":
            assert pruned[2] == 0.0
        elif kind != "ties":
            assert pruned[2] > 0.0


def test_max_worst_takes_the_first_of_equal_best_cuts() -> None:
    """Among cuts of equal value the first is returned, as ``numpy.argmax`` would."""
    # the same counts at every cut: every cut ties, the first must be returned
    e = np.full(500, 10.0)
    value, k = criterion._max_worst([(e, 1000, e, 1000)], 10**5, 10**5, 0.01, 0.0, 0.05, -1.0)
    assert k == 0
    assert value == float(pessimistic_bound(e[:1], 1000, e[:1], 1000, 10**5, 10**5, 0.01)[0])
