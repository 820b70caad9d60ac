"""The sample-size planner agrees with closed forms and with brute-force enumeration."""

from __future__ import annotations

import math

import pytest
from scipy.stats import binom

from certify import plan
from certify.errors import ParameterError


@pytest.mark.parametrize(
    ("n", "tests", "expected"), [(10, 40, 0.0), (15, 40, 0.454), (30, 40, 1.277), (100, 250, 2.338)]
)
def test_ceiling_matches_the_paper(n: int, tests: int, expected: float) -> None:
    """Zero-error ceilings of Sec. 5.3 and Appendix E (0, 0.454, 1.277 at 40 tests; 2.338 at 250)."""
    assert plan.ceiling(n, tests, 0.95) == pytest.approx(expected, abs=5e-4)


@pytest.mark.parametrize("n", [1, 7, 50, 333])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.2])
def test_ceiling_is_the_closed_form(n: int, delta: float) -> None:
    """The ceiling is max(0, ln((1 - delta - U) / U)) with U = 1 - alpha^(1/n), alpha = 0.05 / (2 T)."""
    alpha = 0.05 / (2 * 7)
    u = 1 - alpha ** (1 / n)
    expected = max(0.0, math.log((1 - delta - u) / u)) if 1 - delta - u > 0 else 0.0
    assert plan.ceiling(n, 7, 0.95, delta) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("epsilon0", [0.0, 0.5, 1.0, 2.0])
def test_required_n_is_the_smallest_sufficient_size(epsilon0: float) -> None:
    """required_n is the first n whose ceiling exceeds epsilon0; one fewer row never suffices."""
    n = plan.required_n(epsilon0, 40, 0.95)
    assert plan.ceiling(n, 40, 0.95) > epsilon0
    assert n == 1 or plan.ceiling(n - 1, 40, 0.95) <= epsilon0


def test_power_matches_brute_force_enumeration() -> None:
    """The power sums binomial probabilities of every outcome whose Eq. 16 bound exceeds epsilon0."""
    n, fpr, fnr, tests, eps0 = 12, 0.05, 0.1, 3, 0.3
    alpha = 0.05 / (2 * tests)
    from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds

    total = 0.0
    for k0 in range(n + 1):
        for k1 in range(n + 1):
            u0, u1 = clopper_pearson_upper(k0, n, alpha), clopper_pearson_upper(k1, n, alpha)
            if epsilon_lower_from_error_bounds(u0, u1, 0.0) > eps0:
                total += binom.pmf(k0, n, fpr) * binom.pmf(k1, n, fnr)
    assert plan.power(n, fpr, fnr, tests, 0.95, 0.0, eps0) == pytest.approx(total, rel=1e-12)
    assert plan.power(n, 0.0, 0.0, tests) == (1.0 if plan.ceiling(n, tests) > 0 else 0.0)


def test_planner_rejects_bad_arguments() -> None:
    """Out-of-range arguments raise ParameterError naming the argument."""
    with pytest.raises(ParameterError, match="n_per_class"):
        plan.ceiling(0, 5)
    with pytest.raises(ParameterError, match="confidence_level"):
        plan.ceiling(10, 5, 1.5)
    with pytest.raises(ParameterError, match="epsilon0"):
        plan.required_n(-1.0, 5)
    with pytest.raises(ParameterError, match="fpr"):
        plan.power(10, 1.5, 0.0, 5)
