"""Tests for certify.stats.gaussmech: Eq. 9 values, null floor, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from certify.errors import DataError, ParameterError
from certify.stats import gaussmech as gm


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator."""
    return np.random.default_rng(515)


def test_identity_moments_match_loops(rng: np.random.Generator) -> None:
    """Mean and RMS residual scale equal straight loops dividing by n d."""
    x = rng.normal(size=(17, 5)) * 3.0 + 1.0
    mean, scale = gm.identity_moments(x)
    n, d = x.shape
    want_mean = [sum(x[i, j] for i in range(n)) / n for j in range(d)]
    ss = sum((x[i, j] - want_mean[j]) ** 2 for i in range(n) for j in range(d))
    np.testing.assert_allclose(mean, want_mean, rtol=1e-14)
    assert scale == pytest.approx(math.sqrt(ss / (n * d)), rel=1e-14)


def test_score_matches_formula(rng: np.random.Generator) -> None:
    """The score is ||mu_a - mu_b|| sqrt(2 ln(1.25/delta)) / max(sigma_a, sigma_b)."""
    x_a = rng.normal(size=(30, 8))
    x_b = rng.normal(size=(40, 8)) * 2.0 + 0.5
    mu_a, s_a = x_a.mean(0), math.sqrt(np.mean((x_a - x_a.mean(0)) ** 2))
    mu_b, s_b = x_b.mean(0), math.sqrt(np.mean((x_b - x_b.mean(0)) ** 2))
    for delta in (1e-5, 0.1):
        want = np.linalg.norm(mu_a - mu_b) * math.sqrt(2 * math.log(1.25 / delta)) / max(s_a, s_b)
        assert gm.gauss_mech_score(x_a, x_b, delta=delta) == pytest.approx(want, rel=1e-13)
    shared = gm.gauss_mech_from_moments(*gm.identity_moments(x_a), *gm.identity_moments(x_b))
    assert shared == gm.gauss_mech_score(x_a, x_b)


def test_hand_value() -> None:
    """Means 3-4-5 apart with larger scale 1 give 5 sqrt(2 ln 125000)."""
    got = gm.gauss_mech_from_moments([0.0, 0.0], 1.0, [3.0, 4.0], 0.25)
    assert got == pytest.approx(5.0 * math.sqrt(2.0 * math.log(125000.0)), rel=1e-15)


# Paper Table 4 (d = 512, delta = 1e-5, exact null): median over 40 pairs, averaged over Laplace
# and Gaussian noise. Across 4 seeds the values were 28.61 +- 0.06, 15.51 +- 0.06 and
# 8.96 +- 0.04 (sd, <= 0.4%), so 2% is at least 5 sd.
@pytest.mark.slow
@pytest.mark.parametrize(("n", "paper"), [(30, 28.60), (100, 15.51), (300, 8.96)])
def test_null_matches_paper_table4(n: int, paper: float) -> None:
    """At an exact null the median GaussMech score reproduces paper Table 4 (Eq. 22 floor)."""
    d = 512
    medians = []
    for noise in ("laplace", "gaussian"):
        r = np.random.default_rng([11, n, noise == "laplace"])
        proto = r.normal(size=d)
        proto /= np.linalg.norm(proto)
        draw = r.laplace if noise == "laplace" else r.normal
        scores = [
            gm.gauss_mech_score(proto + draw(size=(n, d)), proto + draw(size=(n, d))) for _ in range(40)
        ]
        medians.append(float(np.median(scores)))
    assert np.mean(medians) == pytest.approx(paper, rel=0.02)


@pytest.mark.parametrize(
    ("x_a", "message"),
    [
        (np.zeros(5), r"x_a must be a 2-D array .*got shape \(5,\)\. Reshape"),
        (np.zeros((1, 4)), r"x_a must have at least 2 rows; got shape \(1, 4\)"),
        (np.array([[1 + 1j, 0], [0, 0]]), r"x_a must be a real numeric array; got dtype"),
        (np.array([[0.0, np.inf], [1.0, 2.0]]), r"x_a must contain only finite values.*row 0"),
    ],
)
def test_invalid_samples(x_a: object, message: str) -> None:
    """Malformed samples raise DataError with the constraint and the value."""
    with pytest.raises(DataError, match=message):
        gm.gauss_mech_score(x_a, np.ones((3, 2)))  # type: ignore[arg-type]


def test_dimension_mismatch_and_zero_scales() -> None:
    """Different dimensions, and two zero-variation samples, raise DataError."""
    with pytest.raises(DataError, match=r"x_b must have the same number of columns as x_a \(2\)"):
        gm.gauss_mech_score(np.eye(2), np.eye(3))
    with pytest.raises(DataError, match=r"scale_a and scale_b must not both be zero"):
        gm.gauss_mech_score(np.ones((3, 2)), np.zeros((4, 2)))
    with pytest.raises(DataError, match=r"mean_b must have the same length as mean_a \(2\)"):
        gm.gauss_mech_from_moments([0.0, 1.0], 1.0, [0.0], 1.0)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5, math.nan, True])
def test_invalid_delta(delta: object) -> None:
    """Delta outside (0, 1), or not a number, raises ParameterError."""
    with pytest.raises(ParameterError, match=r"delta must be a number in \(0, 1\); got"):
        gm.gauss_mech_score(np.eye(3), np.eye(3)[::-1], delta=delta)  # type: ignore[arg-type]


@pytest.mark.parametrize("scale", [-1.0, math.nan, math.inf])
def test_invalid_scale(scale: float) -> None:
    """A negative or non-finite scale raises ParameterError."""
    with pytest.raises(ParameterError, match=r"scale_b must be a finite number >= 0; got"):
        gm.gauss_mech_from_moments([0.0], 1.0, [1.0], scale)
