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
    """The ceiling is max(0, ln((1 - delta - U) / U)) with U = 1 - a^(1/n), (1 - a)^2 = 1 - 0.05 / T."""
    alpha = 1 - math.sqrt(1 - 0.05 / 7)
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
    alpha = 1 - math.sqrt(1 - 0.05 / tests)
    from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds

    total = 0.0
    for k0 in range(n + 1):
        for k1 in range(n + 1):
            u0, u1 = clopper_pearson_upper(k0, n, alpha), clopper_pearson_upper(k1, n, alpha)
            if epsilon_lower_from_error_bounds(u0, u1, 0.0) > eps0:
                total += binom.pmf(k0, n, fpr) * binom.pmf(k1, n, fnr)
    assert plan.power(n, fpr, fnr, tests, 0.95, 0.0, eps0) == pytest.approx(total, rel=1e-12)
    assert plan.power(n, 0.0, 0.0, tests) == (1.0 if plan.ceiling(n, tests) > 0 else 0.0)


@pytest.mark.parametrize("tests", [1, 5, 40, 10**6])
@pytest.mark.parametrize("level", [0.5, 0.95, 0.999999])
def test_alpha_per_rate_splits_each_test_share_between_independent_rates(tests: int, level: float) -> None:
    """(1 - a)^2 = 1 - (1 - level) / T exactly, a lies in [share / 2, share) and alpha_of_test inverts it."""
    share = (1 - level) / tests
    a = plan.alpha_per_rate(tests, level)
    assert (1 - a) ** 2 == pytest.approx(1 - share, rel=1e-14, abs=1e-16)
    assert share / 2 <= a < share
    assert plan.alpha_of_test(a) == pytest.approx(share, rel=1e-12)
    assert plan.rate_level(share) == a


def test_rate_level_rejects_levels_outside_the_unit_interval() -> None:
    """rate_level and alpha_of_test raise ParameterError naming the argument outside (0, 1)."""
    with pytest.raises(ParameterError, match="test_alpha must be a number in"):
        plan.rate_level(1.0)
    with pytest.raises(ParameterError, match="alpha_per_rate must be a number in"):
        plan.alpha_of_test(0.0)


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


def _independent_mmd_slack(n: int, tests: int, level: float) -> float:
    """Theorem 7's deduction with n rows per class at alpha = (1 - level) / tests, as one closed form."""
    return (4 + 2 * math.sqrt(math.log(tests / (1 - level)))) / math.sqrt(n)


@pytest.mark.parametrize("n", [1, 30, 100, 300, 1000, 3000])
@pytest.mark.parametrize("tests", [1, 40])
@pytest.mark.parametrize("level", [0.5, 0.95])
def test_mmd_ceiling_is_the_closed_form(n: int, tests: int, level: float) -> None:
    """The MMD ceiling is max(0, sqrt 2 - slack) and 2 artanh(ceiling / sqrt 2) in epsilon (delta 0)."""
    c = plan.mmd_ceiling(n, tests, level)
    slack = _independent_mmd_slack(n, tests, level)
    lower = max(0.0, math.sqrt(2) - slack)
    assert c.n_per_class == n
    assert c.alpha == pytest.approx((1 - level) / tests, rel=1e-12)
    assert c.slack == pytest.approx(slack, rel=1e-12)
    assert c.mmd_lower == pytest.approx(lower, rel=1e-12, abs=1e-15)
    assert c.epsilon_lower == pytest.approx(2 * math.atanh(lower / math.sqrt(2)), rel=1e-12, abs=1e-15)


def test_mmd_ceiling_at_positive_delta_uses_the_hockey_stick_bound() -> None:
    """At delta > 0 the ceiling's epsilon is ln(max(2 (1 - delta) / (1 - L / sqrt 2) - 1, 1))."""
    c = plan.mmd_ceiling(1000, 40, 0.95, delta=0.1)
    lower = math.sqrt(2) - _independent_mmd_slack(1000, 40, 0.95)
    expected = math.log(max(2 * 0.9 / (1 - lower / math.sqrt(2)) - 1, 1))
    assert c.epsilon_lower == pytest.approx(expected, rel=1e-12)
    assert 0 < c.epsilon_lower < plan.mmd_ceiling(1000, 40, 0.95).epsilon_lower


@pytest.mark.parametrize("n", [5, 50, 337])
def test_mmd_ceiling_slack_is_the_one_the_evaluation_uses(n: int) -> None:
    """The planner's slack and level are those of mmd_lower_confidence_bound and MMDEvidence.check."""
    import numpy as np

    from certify.results import MMDEvidence
    from certify.stats.mmd import mmd_lower_confidence_bound

    a = plan.alpha_per_rate(10, 0.95)
    c = plan.mmd_ceiling(n, 10, 0.95)
    rng = np.random.default_rng(n)
    bound = mmd_lower_confidence_bound(rng.normal(size=(n, 2)), rng.normal(size=(n, 2)) + 3, 1.0, c.alpha)
    assert bound.slack == c.slack
    evidence = MMDEvidence(
        mmd_biased=math.sqrt(2), slack=c.slack, mmd_lower=c.mmd_lower, bandwidth=1.0,
        n_class0=n, n_class1=n, alpha=c.alpha,
    )
    evidence.check(a)  # raises unless slack and bound are Theorem 7's at the test's whole level
    assert evidence.epsilon_lower_at(0.0) == c.epsilon_lower


@pytest.mark.parametrize(("tests", "slacks"), [
    (1, (1.362, 0.746, 0.431, 0.236, 0.136)),
    (40, (1.674, 0.917, 0.529, 0.290, 0.167)),
])
def test_mmd_slack_numbers_quoted_in_the_docs(tests: int, slacks: tuple[float, ...]) -> None:
    """The deductions the docs quote at 30, 100, 300, 1000 and 3000 rows per class (95%)."""
    got = tuple(round(plan.mmd_ceiling(n, tests).slack, 3) for n in (30, 100, 300, 1000, 3000))
    assert got == slacks


@pytest.mark.parametrize("mmd", [math.sqrt(2), 1.0, 0.5, 0.25, 0.1, 0.0123])
@pytest.mark.parametrize(("tests", "level"), [(1, 0.95), (40, 0.95), (7, 0.5)])
def test_mmd_required_n_is_the_smallest_sufficient_size(mmd: float, tests: int, level: float) -> None:
    """With n rows the slack is below mmd, with n - 1 it is not, and n is the closed form's next integer."""
    n = plan.mmd_required_n(mmd, tests, level)
    assert plan.mmd_ceiling(n, tests, level).slack < mmd
    assert n == 1 or plan.mmd_ceiling(n - 1, tests, level).slack >= mmd
    n_star = (_independent_mmd_slack(1, tests, level) / mmd) ** 2
    assert n - 1 <= n_star * (1 + 1e-12) and n_star * (1 - 1e-12) < n


@pytest.mark.parametrize(("mmd", "tests", "expected"), [(0.5, 1, 223), (0.5, 40, 337), (0.25, 1, 891),
                                                        (0.25, 40, 1346)])
def test_mmd_required_n_numbers_quoted_in_the_docs(mmd: float, tests: int, expected: int) -> None:
    """The rows per class the docs quote for an MMD of 0.5 and 0.25 at 95%."""
    assert plan.mmd_required_n(mmd, tests) == expected


def test_mmd_required_n_needs_a_slack_strictly_below_the_statistic() -> None:
    """A statistic exactly equal to the slack at n certifies nothing there: the answer is n + 1."""
    for n in (43, 100, 1000):
        slack = plan.mmd_ceiling(n, 40).slack
        assert plan.mmd_required_n(slack, 40) == n + 1
        assert plan.mmd_ceiling(n + 1, 40).slack < slack


@pytest.mark.parametrize("bad", [0.0, -0.1, math.sqrt(2) + 1e-9, 2.0, math.nan, math.inf, True, "0.5"])
def test_mmd_required_n_rejects_statistics_outside_the_possible_range(bad: object) -> None:
    """An mmd outside (0, sqrt 2] raises ParameterError naming the range and the fix."""
    from typeguard import suppress_type_checks

    message = r"mmd must be a number in \(0, sqrt\(2\)\].*Pass the biased MMD"
    with suppress_type_checks(), pytest.raises(ParameterError, match=message):
        plan.mmd_required_n(bad, 40)  # type: ignore[arg-type]


def test_mmd_planner_rejects_impossible_sizes_and_levels() -> None:
    """Vanishing statistics, empty classes, empty families and bad levels raise ParameterError."""
    with pytest.raises(ParameterError, match="too small to plan for"):
        plan.mmd_required_n(1e-9, 40)
    with pytest.raises(ParameterError, match="n_per_class"):
        plan.mmd_ceiling(0, 40)
    with pytest.raises(ParameterError, match="n_tests"):
        plan.mmd_required_n(0.5, 0)
    with pytest.raises(ParameterError, match="confidence_level"):
        plan.mmd_ceiling(100, 40, 1.0)
    with pytest.raises(ParameterError, match="delta"):
        plan.mmd_ceiling(100, 40, 0.95, delta=1.0)


def test_mmd_ceiling_is_frozen_and_survives_a_pickle_round_trip() -> None:
    """An MMDCeiling cannot be changed and pickles to an equal object."""
    import pickle

    import attrs

    c = plan.mmd_ceiling(300, 40)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        c.slack = 0.0  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(c)) == c
