"""Tests for certify.stats.tradeoff: Gaussian DP, zCDP and profiles from a test's error rates."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from certify.errors import ParameterError
from certify.stats.tradeoff import (
    Target,
    bernoulli_renyi,
    epsilon_lower_values,
    gaussian_tradeoff,
    gdp_delta,
    gdp_mu_lower,
    profile_excess,
    profile_grid,
    tv_mu_lower,
    tv_rho_lower,
    zcdp_delta,
    zcdp_rho_lower,
)

mpmath.mp.dps = 50


def _renyi_exact(p: float, q: float, order: float) -> float:
    """``D_order(Ber(p) || Ber(q))`` in 50-digit arithmetic."""
    p_, q_, lam = mpmath.mpf(p), mpmath.mpf(q), mpmath.mpf(order)
    s = p_**lam * q_ ** (1 - lam) + (1 - p_) ** lam * (1 - q_) ** (1 - lam)
    return float(mpmath.log(s) / (lam - 1))


def _kl_exact(p: float, q: float) -> float:
    """``KL(Ber(p) || Ber(q))`` in 50-digit arithmetic (the order-1 limit)."""
    p_, q_ = mpmath.mpf(p), mpmath.mpf(q)
    return float(p_ * mpmath.log(p_ / q_) + (1 - p_) * mpmath.log((1 - p_) / (1 - q_)))


def _rho_exact(p: float, q: float) -> float:
    """``sup_lambda max(D(p||q), D(q||p)) / lambda`` (order-1 limit included), 50-digit search."""
    def value(x: float) -> float:
        lam = 1.0 + math.exp(x)
        return max(_renyi_exact(p, q, lam), _renyi_exact(q, p, lam)) / lam

    grid = np.linspace(math.log(1e-4), math.log(1e4), 801)
    values = [value(x) for x in grid]
    k = int(np.argmax(values))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    found = minimize_scalar(lambda x: -value(x), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return max(_kl_exact(p, q), _kl_exact(q, p), values[k], -float(found.fun))


@pytest.mark.parametrize("mu", [0.25, 1.0, 3.0])
@pytest.mark.parametrize("t", [-1.0, 0.0, 0.5, 2.0, 4.0])
def test_mu_lower_is_exact_at_the_gaussian_rates(mu: float, t: float) -> None:
    """At the exact rates of a threshold test between N(0,1) and N(mu,1), mu_lower is mu."""
    fpr, fnr = norm.sf(t), norm.cdf(t - mu)
    assert float(gdp_mu_lower(fpr, fnr)) == pytest.approx(mu, abs=1e-9)
    assert float(gaussian_tradeoff(fpr, mu)) == pytest.approx(fnr, rel=1e-9)


def test_mu_lower_is_zero_for_a_useless_test() -> None:
    """Rates adding up to 1 or more (no better than a coin) certify mu = 0."""
    assert gdp_mu_lower([0.5, 0.7, 1.0], [0.5, 0.6, 0.0]).tolist() == [0.0, 0.0, 0.0]


def test_mu_lower_is_infinite_without_errors_on_one_side() -> None:
    """A zero bound on one rate and a nonzero bound below 1 on the other forbid every finite mu."""
    assert math.isinf(float(gdp_mu_lower(0.0, 0.3)))


def test_rates_outside_the_unit_interval_are_refused() -> None:
    """Bounds must lie in [0, 1]: ParameterError names the argument."""
    with pytest.raises(ParameterError, match="u_fnr must lie in"):
        gdp_mu_lower(0.1, 1.5)
    with pytest.raises(ParameterError, match="u_fpr must lie in"):
        zcdp_rho_lower(-0.1, 0.5)


@pytest.mark.parametrize(("p", "q", "order"), [(0.5, 0.25, 2.0), (0.9, 0.01, 1.001), (0.3, 1e-7, 50.0)])
def test_bernoulli_renyi_matches_high_precision(p: float, q: float, order: float) -> None:
    """The Bernoulli Renyi divergence agrees with a 50-digit computation to 1e-9 relative."""
    assert float(bernoulli_renyi(p, q, order)) == pytest.approx(_renyi_exact(p, q, order), rel=1e-9)


def test_bernoulli_renyi_refuses_order_one() -> None:
    """Orders must exceed 1 (order 1 is the Kullback-Leibler divergence, handled apart)."""
    with pytest.raises(ParameterError, match="order must be a finite number > 1"):
        bernoulli_renyi(0.5, 0.2, 1.0)


@pytest.mark.parametrize(
    ("u_fpr", "u_fnr"), [(0.1, 0.2), (norm.sf(3.0), norm.cdf(2.0)), (1e-5, 0.9), (0.4, 0.4)]
)
def test_rho_lower_matches_a_high_precision_search(u_fpr: float, u_fnr: float) -> None:
    """The refined rho_lower is within 1e-7 (relative) of a 50-digit search over orders."""
    exact = _rho_exact(1.0 - u_fnr, u_fpr)
    value = float(zcdp_rho_lower(u_fpr, u_fnr, refine=True))
    assert value == pytest.approx(exact, rel=1e-7)


def test_rho_lower_of_a_gaussian_event_is_below_the_mechanism_rho() -> None:
    """No threshold event of N(0,1) against N(1,1) shows more than the mechanism's rho = 1/2."""
    t = np.linspace(-3.0, 8.0, 200)
    rho = zcdp_rho_lower(norm.sf(t), norm.cdf(t - 1.0))
    assert float(rho.max()) < 0.5
    assert float(rho.max()) > 0.45  # the best binary event comes close (0.468 at infinite samples)


def test_rho_lower_of_randomized_response_is_its_exact_rho() -> None:
    """Binary randomized response is its own best event: rho_lower at its exact rates is its rho."""
    p = 0.75  # reports the true bit with probability 0.75
    exact = _rho_exact(p, 1.0 - p)
    assert float(zcdp_rho_lower(1.0 - p, 1.0 - p, refine=True)) == pytest.approx(exact, rel=1e-6)


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0),
)
def test_certified_parameters_are_monotone(a0: float, a1: float, b0: float, b1: float) -> None:
    """Smaller error bounds never certify a smaller mu, rho or epsilon (what makes them valid)."""
    lo0, hi0 = sorted((a0, a1))
    lo1, hi1 = sorted((b0, b1))
    assert float(gdp_mu_lower(lo0, lo1)) >= float(gdp_mu_lower(hi0, hi1)) - 1e-12
    assert float(zcdp_rho_lower(lo0, lo1)) >= float(zcdp_rho_lower(hi0, hi1)) * (1 - 1e-9) - 1e-12
    assert float(epsilon_lower_values(lo0, lo1, 1e-3)) >= float(epsilon_lower_values(hi0, hi1, 1e-3)) - 1e-12


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_gdp_profile_matches_dp_accounting(mu: float) -> None:
    """The mu-GDP profile agrees with dp_accounting's Gaussian privacy loss distribution (sigma = 1/mu)."""
    pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    pld = pld_module.from_gaussian_mechanism(1.0 / mu, sensitivity=1.0, value_discretization_interval=1e-4)
    eps = np.array([0.0, 0.5, 1.0, 3.0])
    assert gdp_delta(eps, mu) == pytest.approx(np.asarray(pld.get_delta_for_epsilon(eps)), rel=1e-3, abs=1e-9)


def test_gdp_profile_is_finite_far_in_the_tail() -> None:
    """The GDP profile stays a number in [0, 1] where e^eps overflows a float."""
    d = gdp_delta(np.array([50.0, 800.0]), 1.0)
    assert np.all(np.isfinite(d)) and np.all((d >= 0.0) & (d < 1e-300))


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_zcdp_conversion_covers_the_gaussian_mechanism(rho: float) -> None:
    """The zCDP-to-DP delta is at least the exact delta of the Gaussian mechanism with that rho."""
    mu = math.sqrt(2.0 * rho)
    eps = np.linspace(0.0, 10.0, 41)
    assert np.all(zcdp_delta(eps, rho) >= gdp_delta(eps, mu) * (1 - 1e-9))
    # and it is not vacuous: within a factor 20 of the exact delta where the latter is above 1e-12
    exact = gdp_delta(eps, mu)
    informative = exact > 1e-12
    assert np.all(zcdp_delta(eps, rho)[informative] < 20 * exact[informative] + 1e-12)


def test_profile_excess_refutes_exactly_the_points_eq16_exceeds() -> None:
    """A profile point is exceeded iff Eq. 16 at its delta certifies more than its epsilon."""
    u0, u1 = 0.01, 0.2
    eps16 = float(epsilon_lower_values(u0, u1, 0.0))  # log(0.8 / 0.01)
    assert float(profile_excess(u0, u1, [eps16 - 0.1], [0.0])) == pytest.approx(0.1)
    assert float(profile_excess(u0, u1, [eps16 + 0.1], [0.0])) == pytest.approx(-0.1)
    # the weakest point decides
    both = profile_excess(u0, u1, [eps16 + 0.1, eps16 - 0.3], [0.0, 0.0])
    assert float(both) == pytest.approx(0.3)


def test_profile_grid_refuses_a_value_outside_zero_one() -> None:
    """A profile returning a delta outside [0, 1] (or NaN) is a ParameterError naming the epsilon."""
    with pytest.raises(ParameterError, match="must return a delta in"):
        profile_grid(lambda e: math.nan)
    with pytest.raises(ParameterError, match="must return a number"):
        profile_grid(lambda e: "x")  # type: ignore[arg-type,return-value]


def test_tv_bounds_invert_the_gaussian_distance() -> None:
    """The mu of a TV bound inverts 2 Phi(mu/2) - 1; its rho is Pinsker's 2 TV^2."""
    assert tv_mu_lower(2 * norm.cdf(0.75) - 1) == pytest.approx(1.5)
    assert tv_rho_lower(0.3) == pytest.approx(0.18)
    assert tv_mu_lower(0.0) == 0.0 and math.isinf(tv_mu_lower(1.0))


def test_targets_rank_by_their_parameter() -> None:
    """Each target's values are its certified parameter; a profile's is e^(margin), above 1 iff refuted."""
    u0, u1 = np.array([norm.sf(0.5)]), np.array([norm.cdf(-0.5)])
    assert Target("mu").values(u0, u1)[0] == pytest.approx(1.0)
    assert Target("rho").values(u0, u1)[0] == pytest.approx(float(zcdp_rho_lower(u0, u1)[0]))
    eps16 = float(epsilon_lower_values(u0, u1, 0.1)[0])
    assert Target("epsilon", delta=0.1).values(u0, u1)[0] == pytest.approx(eps16)
    eps, deltas = profile_grid(lambda e: float(gdp_delta(e, 0.9)))
    weaker = Target("profile", epsilons=tuple(eps), deltas=tuple(deltas)).values(u0, u1)[0]
    assert weaker > 1.0  # a 1-GDP test refutes a 0.9-GDP profile
    eps, deltas = profile_grid(lambda e: float(gdp_delta(e, 1.2)))
    assert Target("profile", epsilons=tuple(eps), deltas=tuple(deltas)).values(u0, u1)[0] < 1.0


def test_target_refuses_an_unknown_kind() -> None:
    """A target kind outside epsilon, mu, rho, profile is a ParameterError."""
    with pytest.raises(ParameterError, match=r"Target\.kind must be"):
        Target("tv")  # type: ignore[arg-type]
