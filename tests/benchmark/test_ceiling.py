"""The plug-in ceiling: its pieces against direct simulation with certify's own bound functions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from certify.benchmark.ceiling import plug_in_ceiling, positive_probability, separation_draws
from certify.benchmark.mechanisms import Anisotropic
from certify.benchmark.prototypes import dispersed
from certify.errors import ParameterError
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds


def _simulated_positive(mu: float, t: float, n: int, alpha: float, delta: float, reps: int) -> float:
    """Fraction of simulated reserved samples whose certificate (thresholded Gaussian scores) is > 0."""
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(reps):
        s0 = rng.standard_normal(n)
        s1 = rng.standard_normal(n) + mu
        fp, fn = int((s0 >= t).sum()), int((s1 < t).sum())
        u0, u1 = clopper_pearson_upper(fp, n, alpha), clopper_pearson_upper(fn, n, alpha)
        hits += epsilon_lower_from_error_bounds(u0, u1, delta) > 0.0
    return hits / reps


@pytest.mark.slow
@pytest.mark.parametrize("mu", [2.0, 3.0])
def test_positive_probability_is_the_best_threshold_of_the_simulated_certificate(mu: float) -> None:
    """The computed best probability is at least the simulated one at every threshold tried."""
    n, alpha, delta = 15, 0.05 / 80, 1e-5
    best = float(positive_probability(np.array([mu]), n, alpha, delta)[0])
    # the middle threshold is one of the thresholds searched: the best is at least its rate
    reps = 4000
    mid = _simulated_positive(mu, mu / 2, n, alpha, delta, reps)
    se = math.sqrt(max(mid * (1 - mid), 1e-4) / reps)
    assert best >= mid - 4 * se
    # and no threshold of a grid does better than the computed best (beyond sampling error)
    for t in np.linspace(-1.0, mu + 1.0, 7):
        sim = _simulated_positive(mu, float(t), n, alpha, delta, 1500)
        assert sim <= best + 4 * math.sqrt(max(sim * (1 - sim), 1e-4) / 1500)


@pytest.mark.slow
def test_positive_probability_is_monotone_and_mirrors_reversed_scores() -> None:
    """Larger separations certify more often; a reversed score certifies as often."""
    mus = np.linspace(0.0, 8.0, 50)
    p = positive_probability(mus, 50, 0.001, 0.0)
    assert np.all(np.diff(p) >= 0.0)
    assert p[0] < 0.01 and p[-1] > 0.99
    assert np.array_equal(positive_probability(-mus, 50, 0.001, 0.0), p)


def test_separation_draws_match_projected_development_means_of_the_anisotropic_mechanism() -> None:
    """The drawn separations match development means sampled from the mechanism itself."""
    ps = dispersed(n_identities=6, dimension=64)
    mech = Anisotropic(ps, 16.0)
    i, j, m = 0, 1, 10
    scale = mech.scale * np.sqrt(mech.variances)
    prior = 1.0 / (ps.dimension * scale**2)
    delta = (ps.prototypes[j] - ps.prototypes[i]) / scale
    r = prior / (prior + 1.0 / m)
    g = r / (1.0 + r / m)
    rng = np.random.default_rng(3)
    direct = []
    for _ in range(600):
        xa, xb = mech.sample(i, m, rng), mech.sample(j, m, rng)
        w = g * (xb.mean(axis=0) - xa.mean(axis=0)) / scale
        direct.append(float(w @ delta / np.linalg.norm(w)))
    drawn = separation_draws(delta, prior, m, 6000, np.random.default_rng(4))
    both = np.concatenate([direct, drawn])
    se = both.std() * math.sqrt(1 / 600 + 1 / 6000)
    assert abs(np.mean(direct) - drawn.mean()) < 4 * se
    # the estimated direction loses separation: never more than the truth
    assert drawn.max() <= np.linalg.norm(delta) + 1e-9


def test_isotropic_prior_direction_is_the_plain_mean_difference() -> None:
    """With an isotropic prior the Bayes direction does not depend on the prior variance."""
    delta = np.zeros(512)
    delta[0] = 4.0
    a = separation_draws(delta, np.full(512, 0.3), 15, 200, np.random.default_rng(0))
    b = separation_draws(delta, np.full(512, 7.0), 15, 200, np.random.default_rng(0))
    assert np.allclose(a, b)


@pytest.mark.slow
def test_ceiling_lies_between_zero_and_the_oracle_and_rises_with_the_sample() -> None:
    """The ceiling is below the true direction's fraction and grows with development rows."""
    small, oracle_small = plug_in_ceiling("gaussian", 32.0, 30, draws=300)
    large, oracle_large = plug_in_ceiling("gaussian", 32.0, 100, draws=300)
    assert 0.0 < small < oracle_small <= 1.0
    assert small < large <= oracle_large


def test_ceiling_refuses_families_without_gaussian_noise() -> None:
    """Laplace noise has no Gaussian ceiling: a ParameterError says which families have one."""
    with pytest.raises(ParameterError, match="Gaussian noise"):
        plug_in_ceiling("laplace", 32.0, 30)
