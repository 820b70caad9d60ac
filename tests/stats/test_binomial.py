"""Tests for Clopper-Pearson bounds and the error-rate to epsilon step (paper Eq. 16)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta, binom
from typeguard import suppress_type_checks

from certify.errors import ParameterError
from certify.stats.binomial import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_from_error_bounds,
)

PAPER_ALPHA = 0.05 / 80  # Sec. 5.3: 95% over 40 pairs x 2 error rates
APPENDIX_E_ALPHA = 1e-4  # Appendix E: 0.05 / 500


def zero_error_bound(n: int, alpha: float, delta: float = 0.0) -> float:
    """Eq. 16 for a balanced test that makes no error on n rows per class."""
    u = clopper_pearson_upper(0, n, alpha)
    return epsilon_lower_from_error_bounds(u, u, delta)


# -- known values from the paper ---------------------------------------------------------------


@pytest.mark.parametrize(("n", "expected"), [(10, 0.0), (15, 0.454), (30, 1.277)])
def test_zero_error_bounds_of_section_5_3(n: int, expected: float) -> None:
    """A balanced zero-error test at alpha 0.05/80 gives 0, 0.454, 1.277 at 10, 15, 30 per class."""
    assert round(zero_error_bound(n, PAPER_ALPHA), 3) == expected


@pytest.mark.parametrize(("n", "expected"), [(10, 0.5218), (9, 0.5595)])
def test_zero_error_upper_bounds_of_section_5_3(n: int, expected: float) -> None:
    """The Clopper-Pearson upper bound on zero errors is 0.5218 at n = 10 and 0.5595 at n = 9."""
    assert round(clopper_pearson_upper(0, n, PAPER_ALPHA), 4) == expected


@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_censored_bound_of_appendix_e(delta: float) -> None:
    """At alpha 1e-4 and 100 rows per class a zero-error test caps the bound at 2.338."""
    assert round(zero_error_bound(100, APPENDIX_E_ALPHA, delta), 3) == 2.338


def test_zero_error_upper_bound_closed_form() -> None:
    """At k = 0 the upper bound is 1 - alpha ** (1 / n) and agrees with the Beta quantile."""
    for n in (1, 9, 10, 100, 10_000):
        u = clopper_pearson_upper(0, n, PAPER_ALPHA)
        assert u == pytest.approx(1.0 - PAPER_ALPHA ** (1.0 / n), rel=1e-12)
        assert u == pytest.approx(float(beta.isf(PAPER_ALPHA, 1, n)), rel=1e-9)


def test_bounds_at_the_count_extremes() -> None:
    """The upper bound is 1 at k = n, the lower bound 0 at k = 0, and alpha ** (1/n) at k = n."""
    assert clopper_pearson_upper(7, 7, 0.05) == 1.0
    assert clopper_pearson_lower(0, 7, 0.05) == 0.0
    assert clopper_pearson_lower(10, 10, 0.05) == pytest.approx(0.05**0.1, rel=1e-12)
    assert round(clopper_pearson_lower(10, 10, 0.05), 4) == 0.7411


def test_interior_bounds_match_beta_quantiles() -> None:
    """Interior bounds are the Beta(k + 1, n - k) upper and Beta(k, n - k + 1) lower quantiles."""
    assert clopper_pearson_upper(3, 20, 0.025) == pytest.approx(beta.ppf(0.975, 4, 17), rel=1e-10)
    assert clopper_pearson_lower(3, 20, 0.025) == pytest.approx(beta.ppf(0.025, 3, 18), rel=1e-10)


@pytest.mark.parametrize(
    ("k", "n", "alpha", "fragment"),
    [
        (-1, 10, 0.05, "k must be in [0, n]"),
        (11, 10, 0.05, "k must be in [0, n]"),
        (0, 0, 0.05, "n must be at least 1"),
        (1.0, 10, 0.05, "k must be an integer"),
        (True, 10, 0.05, "k must be an integer"),
        (1, 10, 0.0, "alpha must be a number in (0, 1)"),
        (1, 10, 1.0, "alpha must be a number in (0, 1)"),
        (1, 10, math.nan, "alpha must be a number in (0, 1)"),
    ],
)
def test_invalid_binomial_input_raises(k: object, n: object, alpha: float, fragment: str) -> None:
    """Invalid counts or levels raise ParameterError naming the constraint, never return NaN."""
    for bound in (clopper_pearson_upper, clopper_pearson_lower):
        with suppress_type_checks(), pytest.raises(ParameterError, match=re.escape(fragment)):
            bound(k, n, alpha)  # type: ignore[arg-type]


# -- Eq. 16 edge cases --------------------------------------------------------------------------


def test_eq16_is_the_larger_log_ratio() -> None:
    """Eq. 16 is max{0, ln((1 - d - U_FNR) / U_FPR), ln((1 - d - U_FPR) / U_FNR)}."""
    got = epsilon_lower_from_error_bounds(0.1, 0.3, 0.01)
    assert got == pytest.approx(max(math.log(0.69 / 0.1), math.log(0.89 / 0.3)), rel=1e-14)


def test_eq16_omits_nonpositive_numerators() -> None:
    """A term whose numerator is <= 0 is omitted, even when its denominator is zero."""
    # Term 1 would be ln(0 / 0); term 2 is ln(1 / 1) = 0.
    assert epsilon_lower_from_error_bounds(0.0, 1.0, 0.0) == 0.0
    # With delta > 0 the numerator 1 - 0.05 - 0.95 is zero: omitted, not -inf or inf.
    assert epsilon_lower_from_error_bounds(0.0, 0.95, 0.05) == 0.0
    # Both numerators negative: the bound is 0.
    assert epsilon_lower_from_error_bounds(0.9, 0.9, 0.5) == 0.0


def test_eq16_all_errors_gives_zero() -> None:
    """A test that gets every row wrong (both upper bounds 1) certifies nothing."""
    assert epsilon_lower_from_error_bounds(1.0, 1.0, 0.0) == 0.0


def test_eq16_zero_denominator_gives_infinity() -> None:
    """A positive numerator over a zero error bound gives +inf (Eq. 16 endpoint rule)."""
    assert epsilon_lower_from_error_bounds(0.0, 0.5, 0.0) == math.inf
    assert epsilon_lower_from_error_bounds(0.5, 0.0, 1e-5) == math.inf


def test_eq16_delta_lowers_the_bound() -> None:
    """A larger delta subtracts from both numerators, giving a smaller bound."""
    u = clopper_pearson_upper(0, 30, PAPER_ALPHA)
    at_0 = epsilon_lower_from_error_bounds(u, u, 0.0)
    at_d = epsilon_lower_from_error_bounds(u, u, 0.1)
    assert at_d == pytest.approx(math.log((0.9 - u) / u), rel=1e-14)
    assert at_d < at_0


@pytest.mark.parametrize(
    ("u_fpr", "u_fnr", "delta", "fragment"),
    [
        (-0.1, 0.5, 0.0, "u_fpr must be a number in [0, 1]"),
        (0.5, 1.5, 0.0, "u_fnr must be a number in [0, 1]"),
        (math.nan, 0.5, 0.0, "u_fpr must be a number in [0, 1]"),
        (0.5, 0.5, 1.0, "delta must be a number in [0, 1)"),
        (0.5, 0.5, -1e-9, "delta must be a number in [0, 1)"),
    ],
)
def test_eq16_invalid_input_raises(u_fpr: float, u_fnr: float, delta: float, fragment: str) -> None:
    """Bounds outside [0, 1] or delta outside [0, 1) raise ParameterError, never NaN."""
    with pytest.raises(ParameterError, match=re.escape(fragment)):
        epsilon_lower_from_error_bounds(u_fpr, u_fnr, delta)


# -- properties ---------------------------------------------------------------------------------

counts = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
alphas = st.floats(min_value=1e-8, max_value=0.5)


@settings(max_examples=150, deadline=None)
@given(kn=counts, alpha=alphas)
def test_bounds_lie_in_unit_interval_around_the_estimate(kn: tuple[int, int], alpha: float) -> None:
    """Both bounds lie in [0, 1] and bracket the observed proportion k / n."""
    k, n = kn
    lo, up = clopper_pearson_lower(k, n, alpha), clopper_pearson_upper(k, n, alpha)
    assert 0.0 <= lo <= k / n <= up <= 1.0


@settings(max_examples=150, deadline=None)
@given(kn=counts, a1=alphas, a2=alphas)
def test_bounds_widen_with_the_confidence_level(kn: tuple[int, int], a1: float, a2: float) -> None:
    """A smaller alpha (higher confidence) never gives a tighter bound on either side."""
    k, n = kn
    small, large = min(a1, a2), max(a1, a2)
    assert clopper_pearson_upper(k, n, small) >= clopper_pearson_upper(k, n, large)
    assert clopper_pearson_lower(k, n, small) <= clopper_pearson_lower(k, n, large)


@settings(max_examples=150, deadline=None)
@given(kn=counts, alpha=alphas)
def test_bounds_increase_with_the_count(kn: tuple[int, int], alpha: float) -> None:
    """One more observed event never lowers either bound."""
    k, n = kn
    if k == n:
        k -= 1
    if k < 0:
        return
    assert clopper_pearson_upper(k + 1, n, alpha) >= clopper_pearson_upper(k, n, alpha)
    assert clopper_pearson_lower(k + 1, n, alpha) >= clopper_pearson_lower(k, n, alpha)


@settings(max_examples=200, deadline=None)
@given(
    n0=st.integers(1, 300),
    n1=st.integers(1, 300),
    f0=st.floats(0, 1),
    f1=st.floats(0, 1),
    step=st.sampled_from([(1, 0), (0, 1), (1, 1)]),
    alpha=alphas,
    delta=st.sampled_from([0.0, 1e-5, 0.01, 0.2]),
)
def test_epsilon_bound_does_not_increase_with_errors(
    n0: int,
    n1: int,
    f0: float,
    f1: float,
    step: tuple[int, int],
    alpha: float,
    delta: float,
) -> None:
    """More false positives or false negatives never give a larger certified epsilon."""
    fp, fn = min(int(f0 * n0), n0 - 1), min(int(f1 * n1), n1 - 1)
    if fp < 0 or fn < 0:
        return

    def bound(a: int, b: int) -> float:
        u0, u1 = clopper_pearson_upper(a, n0, alpha), clopper_pearson_upper(b, n1, alpha)
        return epsilon_lower_from_error_bounds(u0, u1, delta)

    before, after = bound(fp, fn), bound(fp + step[0], fn + step[1])
    assert 0.0 <= after <= before


@settings(max_examples=200, deadline=None)
@given(
    u0=st.floats(0, 1),
    u1=st.floats(0, 1),
    d1=st.floats(0, 0.999),
    d2=st.floats(0, 0.999),
)
def test_epsilon_bound_is_monotone_in_bounds_and_delta(
    u0: float, u1: float, d1: float, d2: float
) -> None:
    """Eq. 16 is >= 0, non-increasing in each error bound and in delta."""
    lo_d, hi_d = min(d1, d2), max(d1, d2)
    base = epsilon_lower_from_error_bounds(u0, u1, lo_d)
    assert base >= 0.0
    assert epsilon_lower_from_error_bounds(u0, u1, hi_d) <= base
    assert epsilon_lower_from_error_bounds(min(1.0, u0 + 0.01), u1, lo_d) <= base
    assert epsilon_lower_from_error_bounds(u0, min(1.0, u1 + 0.01), lo_d) <= base


# -- coverage -----------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.01, 0.1, 0.35, 0.7])
def test_upper_bound_coverage_monte_carlo(p: float) -> None:
    """Simulated coverage of the one-sided upper bound is at least 1 - alpha (n = 25, alpha 0.1)."""
    n, alpha, draws = 25, 0.1, 20_000
    table = np.array([clopper_pearson_upper(k, n, alpha) for k in range(n + 1)])
    k = np.random.default_rng(20261130).binomial(n, p, size=draws)
    coverage = float(np.mean(table[k] >= p))
    # Binomial standard error of the coverage estimate is <= sqrt(0.1 * 0.9 / 20000) = 0.0021;
    # allow 4 standard errors below the nominal level.
    assert coverage >= 1 - alpha - 4 * math.sqrt(alpha * (1 - alpha) / draws)


def test_upper_bound_exact_coverage_on_a_grid() -> None:
    """The exact coverage sum_{k: U(k) >= p} P(k) is >= 1 - alpha for every p on a fine grid."""
    for n, alpha in ((9, PAPER_ALPHA), (30, 0.05), (60, 0.2)):
        table = np.array([clopper_pearson_upper(k, n, alpha) for k in range(n + 1)])
        for p in np.linspace(0.0005, 0.9995, 400):
            covered = binom.pmf(np.arange(n + 1), n, p)[table >= p].sum()
            assert covered >= 1 - alpha - 1e-9, (n, alpha, p)
