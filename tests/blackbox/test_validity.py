"""Coverage of black-box certificates: correct mechanisms, small budgets, 200 seeds each."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.stats import binom

import certify as cf
from certify.protocol.ledger import evaluation_share

SEEDS = 200
ALPHA_FIRST = 0.05 * evaluation_share(1)  # the error budget of a first evaluation


def randomized_response(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Binary randomized response keeping the bit with probability 3/4: exactly ln 3-DP."""
    keep = rng.random(n) < 0.75
    return np.where(keep, x[0], 1 - x[0]).astype(np.int64)


def laplace(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Scalar Laplace mechanism of scale 1: exactly 1-DP for inputs one apart."""
    return x[0] + rng.laplace(0.0, 1.0, size=n)


def _failures(
    tmp_path: Path, mechanism: Any, a: Any, b: Any, truth: float, calls: int, tests: str
) -> list[float]:
    """Bounds of SEEDS independent first evaluations (one ledger each)."""
    bounds = []
    for s in range(SEEDS):
        audit = cf.audit_mechanism(
            mechanism,
            a,
            b,
            calls=calls,
            seed=50_000 + s,
            tests=[tests],
            progress=False,
            ledger=cf.Ledger(tmp_path / f"{s}.ledger"),
        )
        assert audit.evaluation == 1
        bounds.append(audit.certificate.epsilon_lower)
    return bounds


def _consistent(failures: int) -> bool:
    """Whether a failure count is consistent with a rate of at most ALPHA_FIRST (p >= 0.001)."""
    return float(binom.sf(failures - 1, SEEDS, ALPHA_FIRST)) >= 0.001


@pytest.mark.slow
def test_randomized_response_certificates_fail_no_more_than_their_level(tmp_path: Path) -> None:
    """Over 200 seeds at 4,000 calls, bounds above ln 3 are as rare as the level allows."""
    bounds = _failures(tmp_path, randomized_response, 0, 1, math.log(3.0), 4_000, "histogram")
    failures = sum(b > math.log(3.0) for b in bounds)
    assert _consistent(failures), failures
    assert sum(b > 0 for b in bounds) > SEEDS / 2  # the budget is small, not hopeless


@pytest.mark.slow
def test_laplace_certificates_fail_no_more_than_their_level(tmp_path: Path) -> None:
    """Over 200 seeds at 20,000 calls, Laplace bounds above 1 are as rare as the level allows."""
    bounds = _failures(tmp_path, laplace, 0.0, 1.0, 1.0, 20_000, "coordinate")
    failures = sum(b > 1.0 for b in bounds)
    assert _consistent(failures), failures
    assert np.median(bounds) > 0.5


def test_consistency_check_rejects_an_anticonservative_rate() -> None:
    """The failure-count check used above rejects a count a 10% failure rate would give."""
    assert _consistent(6)
    assert not _consistent(20)
