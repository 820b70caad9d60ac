"""Tests for certify.benchmark.mechanisms (paper Sec. 6.1-6.2, App. B and C)."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy.special import ndtr
from scipy.stats import binomtest, chisquare, rankdata
from scipy.stats import laplace as laplace_law
from typeguard import TypeCheckError

from certify.benchmark.mechanisms import (
    Anisotropic,
    Gaussian,
    Laplace,
    Mechanism,
    Null,
    RandomizedResponse,
    anisotropic_variances,
    mechanism_for,
)
from certify.benchmark.prototypes import PrototypeSet, dispersed, sensitivities
from certify.errors import DataError, ParameterError
from certify.stats.gaussian import analytic_gaussian_epsilon, calibrate_sigma


@pytest.fixture(scope="module")
def ps() -> PrototypeSet:
    """The default dispersed set (400 x 512)."""
    return dispersed()


@pytest.fixture(scope="module")
def small() -> PrototypeSet:
    """A 12-identity subset in R^512 for cheap checks."""
    return sensitivities(dispersed().prototypes[:12], name="small")


def _auc(neg: np.ndarray, pos: np.ndarray) -> float:
    """Mann-Whitney AUC with ties counting one half."""
    ranks = rankdata(np.concatenate([neg, pos]))
    return float((ranks[neg.size :].sum() - pos.size * (pos.size + 1) / 2) / (neg.size * pos.size))


def _residual_moments(x: np.ndarray, center: np.ndarray) -> tuple[float, float, int]:
    """Pooled mean and variance of ``x - center`` over all entries, and the entry count."""
    r = (x - center).ravel()
    return float(r.mean()), float(r.var()), r.size


def test_laplace_scale_and_moments(small: PrototypeSet) -> None:
    """Laplace samples have mean c_i and variance 2 b^2 with b = Delta_1 / epsilon_g."""
    m = Laplace(small, 4.0)
    assert m.scale == pytest.approx(small.delta_1 / 4.0, rel=1e-15)
    x = m.sample(3, 4000, np.random.default_rng(1))
    mean, var, n = _residual_moments(x, small.prototypes[3])
    b = m.scale
    # Laplace: Var(X) = 2b^2, Var(X^2) = 20 b^4; 5 standard errors over n = 2.05e6 entries.
    assert abs(mean) < 5 * math.sqrt(2 * b * b / n)
    assert abs(var - 2 * b * b) < 5 * math.sqrt(20 / n) * b * b
    # E|X| = b, sd |X| = b.
    assert abs(np.abs(x - small.prototypes[3]).mean() - b) < 5 * b / math.sqrt(n)


def test_gaussian_moments(small: PrototypeSet) -> None:
    """Gaussian samples have mean c_i and variance sigma^2 with the calibrated sigma."""
    m = Gaussian(small, 2.0)
    assert m.sigma == calibrate_sigma(2.0, 1e-5, small.delta_2)
    x = m.sample(5, 4000, np.random.default_rng(2))
    mean, var, n = _residual_moments(x, small.prototypes[5])
    s2 = m.sigma**2
    # Gaussian: Var(X^2) = 2 sigma^4; 5 standard errors.
    assert abs(mean) < 5 * math.sqrt(s2 / n)
    assert abs(var - s2) < 5 * math.sqrt(2 / n) * s2


def test_anisotropic_moments(small: PrototypeSet) -> None:
    """Anisotropic noise has variance s^2 Lambda_kk per coordinate (whitened variance 1)."""
    m = Anisotropic(small, 2.0)
    x = m.sample(0, 10000, np.random.default_rng(3))
    z = (x - small.prototypes[0]) / (m.scale * np.sqrt(m.variances))
    # Whitened entries are N(0, 1): pooled variance SE sqrt(2 / 5.1e6); 5 SE.
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / z.size)
    # Per-coordinate variance of 10,000 draws has relative SE 1.4%, the ratio ~2%: 5 SE = 10%.
    ratio = x[:, 0].var() / x[:, -1].var()
    assert ratio == pytest.approx(100.0, rel=0.10)


def test_anisotropic_variances_shape() -> None:
    """Lambda is descending, has condition number C and geometric mean 1."""
    lam = anisotropic_variances(512, 100.0)
    assert np.all(np.diff(lam) < 0)
    assert lam[0] / lam[-1] == pytest.approx(100.0, rel=1e-12)
    assert math.exp(np.log(lam).mean()) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(lam, 100.0 ** (0.5 - np.arange(512) / 511), rtol=1e-12)


def test_laplace_references(ps: PrototypeSet) -> None:
    """Eq. 19: reference is ||c_i - c_j||_1 / b, equal to epsilon_g at the L1-attaining pair."""
    m = Laplace(ps, 8.0)
    assert m.exact_epsilon(*ps.l1_pair) == pytest.approx(8.0, rel=1e-14)
    i, j = 3, 77
    expected = float(np.abs(ps.prototypes[i] - ps.prototypes[j]).sum()) / m.scale
    assert m.exact_epsilon(i, j) == pytest.approx(expected, rel=1e-12)
    assert m.exact_epsilon(i, j) < 8.0 and m.delta == 0.0
    assert m.exact_epsilon(i, i) == 0.0


def test_shared_laplace_reference_draws_equal_single_epsilon_references(ps: PrototypeSet) -> None:
    """Shared draws give each epsilon the AUC of the exact LR on outputs c + b L from the same stream.

    The reference is recomputed the direct way: outputs ``c_i + b L`` built from the same
    standard Laplace draws, scored by ``log_likelihood_ratio``. The two differ only in rounding
    of the score (the shared path cancels ``c_i`` algebraically), which can reorder scores that
    agree to ~1e-13, so the AUCs must agree to within a couple of the 2,000^2 rank pairs.
    """
    from certify.benchmark.mechanisms import laplace_reference_aucs

    epsilons = [32.0, 0.5, 4.0]
    n, i, j = 2_000, 5, 91  # one chunk of draws per class
    shared = laplace_reference_aucs(ps, epsilons, i, j, n_draws=n, seed=11)
    assert shared == [Laplace(ps, e).reference_auc(i, j, n_draws=n, seed=11) for e in epsilons]
    for eps, value in zip(epsilons, shared, strict=True):
        mech = Laplace(ps, eps)
        gen = np.random.default_rng([11, i, j])
        scores = []
        for cls in (i, j):
            expo = gen.standard_exponential((n, ps.dimension))
            bits = np.unpackbits(gen.integers(0, 256, size=(n * ps.dimension + 7) // 8, dtype=np.uint8),
                                 count=n * ps.dimension)
            sign = (1.0 - 2.0 * bits.astype(np.float64)).reshape(n, -1)
            x = expo * (mech.scale * sign) + ps.prototypes[cls]
            scores.append(mech.log_likelihood_ratio(x, i, j))
        neg, pos = scores
        direct = (np.sum(pos[:, None] > neg[None, :]) + 0.5 * np.sum(pos[:, None] == neg[None, :])) / n**2
        assert abs(value - direct) <= 2.0 / n**2
    assert shared[1] < shared[2] < shared[0]  # larger epsilon, easier to tell apart
    assert laplace_reference_aucs(ps, [], i, j) == []


def test_gaussian_references(ps: PrototypeSet) -> None:
    """Eq. 20-21: global epsilon at the L2 pair, analytic profile per pair, Phi for the AUC."""
    m = Gaussian(ps, 4.0)
    assert m.exact_epsilon(*ps.l2_pair) == pytest.approx(4.0, rel=1e-9)
    d = float(np.linalg.norm(ps.prototypes[10] - ps.prototypes[20]))
    assert m.exact_epsilon(10, 20) == pytest.approx(analytic_gaussian_epsilon(m.sigma, d, 1e-5), rel=1e-12)
    assert m.exact_epsilon(10, 20) < 4.0
    assert m.reference_auc(10, 20) == pytest.approx(float(ndtr(d / (math.sqrt(2) * m.sigma))), rel=1e-12)


def test_gaussian_reference_auc_matches_oracle_monte_carlo(ps: PrototypeSet) -> None:
    """The LR oracle's empirical AUC matches Eq. 21 (checks the score and the formula)."""
    m = Gaussian(ps, 16.0)
    i, j = ps.l2_pair
    gen = np.random.default_rng(4)
    neg = m.log_likelihood_ratio(m.sample(i, 4000, gen), i, j)
    pos = m.log_likelihood_ratio(m.sample(j, 4000, gen), i, j)
    # AUC SE <= sqrt(1/(3 n)) ~ 0.009 for n = 4000 per class; 0.03 is > 3 SE.
    assert _auc(neg, pos) == pytest.approx(m.reference_auc(i, j), abs=0.03)


def test_llr_matches_log_densities(small: PrototypeSet) -> None:
    """Each oracle score equals a direct log p_j - log p_i from the noise density."""
    gen = np.random.default_rng(5)
    lap = Laplace(small, 2.0)
    x = lap.sample(1, 50, gen)
    direct = laplace_law.logpdf(x, small.prototypes[2], lap.scale).sum(1) - laplace_law.logpdf(
        x, small.prototypes[1], lap.scale
    ).sum(1)
    np.testing.assert_allclose(lap.log_likelihood_ratio(x, 1, 2), direct, rtol=1e-9)
    gau = Gaussian(small, 2.0)
    x = gau.sample(1, 50, gen)
    direct = (((x - small.prototypes[1]) ** 2).sum(1) - ((x - small.prototypes[2]) ** 2).sum(1)) / (
        2 * gau.sigma**2
    )
    np.testing.assert_allclose(gau.log_likelihood_ratio(x, 1, 2), direct, rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("kind", ["laplace", "gaussian", "anisotropic"])
def test_llr_sign_and_antisymmetry(small: PrototypeSet, kind: str) -> None:
    """Scores are larger on samples of j than of i, and swapping i and j negates them."""
    m = mechanism_for(kind, small, 64.0)  # type: ignore[arg-type]
    gen = np.random.default_rng(6)
    xi, xj = m.sample(0, 500, gen), m.sample(1, 500, gen)
    assert m.log_likelihood_ratio(xj, 0, 1).mean() > 0 > m.log_likelihood_ratio(xi, 0, 1).mean()
    np.testing.assert_allclose(
        m.log_likelihood_ratio(xi, 1, 0), -m.log_likelihood_ratio(xi, 0, 1), rtol=1e-12
    )
    assert m.log_likelihood_ratio(xi[0], 0, 1).shape == (1,)


def test_laplace_reference_auc_seeded_and_consistent(small: PrototypeSet) -> None:
    """The Laplace Monte Carlo AUC is reproducible and agrees with an independent estimate."""
    m = Laplace(small, 32.0)
    a = m.reference_auc(*small.l1_pair, n_draws=5000)
    assert a == m.reference_auc(*small.l1_pair, n_draws=5000)
    b = m.reference_auc(*small.l1_pair, n_draws=5000, seed=99)
    # Two independent estimates, each with SE <= sqrt(1/(3*5000)) ~ 0.008: 0.04 is > 3.5 SE.
    assert a == pytest.approx(b, abs=0.04)
    assert 0.5 < a < 1.0


def test_anisotropic_whitening_gives_isotropic(small: PrototypeSet) -> None:
    """Whitened prototypes under the isotropic Gaussian give the same scale, references and LR."""
    m = Anisotropic(small, 8.0)
    root = np.sqrt(m.variances)
    white = sensitivities(small.prototypes / root, name="whitened")
    iso = Gaussian(white, 8.0)
    assert m.whitened_sensitivity == pytest.approx(white.delta_2, rel=1e-13)
    assert m.scale == pytest.approx(iso.sigma, rel=1e-13)
    for i, j in [(0, 1), (2, 9), white.l2_pair]:
        assert m.exact_epsilon(i, j) == pytest.approx(iso.exact_epsilon(i, j), rel=1e-10)
        assert m.reference_auc(i, j) == pytest.approx(iso.reference_auc(i, j), rel=1e-12)
    assert m.exact_epsilon(*white.l2_pair) == pytest.approx(8.0, rel=1e-9)
    x = m.sample(4, 20, np.random.default_rng(7))
    np.testing.assert_allclose(
        m.log_likelihood_ratio(x, 4, 5), iso.log_likelihood_ratio(x / root, 4, 5), rtol=1e-9
    )


@pytest.mark.parametrize("family", ["laplace", "gaussian", "anisotropic"])
def test_null_mechanism(small: PrototypeSet, family: str) -> None:
    """The null maps every identity to one law: same draws for any identity, zero references."""
    m = Null(small, family)  # type: ignore[arg-type]
    a = m.sample(3, 10, np.random.default_rng(8))
    b = m.sample(7, 10, np.random.default_rng(8))
    np.testing.assert_array_equal(a, b)
    assert m.epsilon_g == 0.0 and m.exact_epsilon(3, 7) == 0.0 and m.reference_auc(3, 7) == 0.5
    np.testing.assert_array_equal(m.log_likelihood_ratio(a, 3, 7), np.zeros(10))
    assert isinstance(m, Mechanism)


def test_null_noise_scales(small: PrototypeSet) -> None:
    """Null noise is the family's law at epsilon_g = 0.1 (Laplace b = 10 Delta_1)."""
    lap = Null(small, "laplace").noise_mechanism
    assert isinstance(lap, Laplace)
    assert lap.scale == pytest.approx(10 * small.delta_1, rel=1e-14)
    gau = Null(small, "gaussian").noise_mechanism
    assert isinstance(gau, Gaussian)
    assert gau.sigma == calibrate_sigma(0.1, 1e-5, small.delta_2)


def _decimal_log(x: Decimal) -> Decimal:
    """Natural log at 50 digits."""
    with localcontext() as ctx:
        ctx.prec = 50
        return x.ln()


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 2.0, 8.0, 16.0, 32.0])
def test_rr_threshold_and_realized_epsilon(ps: PrototypeSet, epsilon: float) -> None:
    """T is the rounded ideal threshold and the realized epsilon is computed from T exactly."""
    m = RandomizedResponse(ps, epsilon)
    grid = 2**53
    with localcontext() as ctx:
        ctx.prec = 50
        e = Decimal(epsilon).exp()
        ideal = e / (e + 399) * grid
        assert abs(Decimal(m.threshold) - ideal) <= Decimal("0.5000001")
        realized = abs(_decimal_log(Decimal(m.threshold) * 399 / Decimal(grid - m.threshold)))
    assert m.exact_epsilon(0, 1) == pytest.approx(float(realized), rel=1e-12, abs=1e-15)
    assert m.exact_epsilon(5, 200) == m.exact_epsilon(0, 1) == m.epsilon_realized
    # Rounding on the 2^53 grid moves epsilon by about 2^-53 / (1 - p): tiny except at 32.
    assert m.epsilon_realized == pytest.approx(epsilon, abs=1e-4)


def test_rr_realized_differs_from_request_at_large_epsilon(ps: PrototypeSet) -> None:
    """Large requests are visibly rounded, and too large ones give an infinite epsilon."""
    assert RandomizedResponse(ps, 32.0).epsilon_realized != 32.0
    m = RandomizedResponse(ps, 64.0)
    assert m.threshold == 2**53 and m.epsilon_realized == math.inf


def test_rr_keep_rate_and_other_labels(ps: PrototypeSet) -> None:
    """The keep rate lies in its binomial interval and other labels are uniform."""
    m = RandomizedResponse(ps, 4.0)
    n = 200_000
    labels = m.sample_labels(7, n, np.random.default_rng(9))
    kept = int((labels == 7).sum())
    ci = binomtest(kept, n).proportion_ci(confidence_level=0.999)
    assert ci.low <= m.keep_probability <= ci.high
    others = np.bincount(labels[labels != 7], minlength=400)
    assert others[7] == 0
    # Chi-square goodness of fit over the 399 other labels; fails by chance with prob 1e-4.
    assert chisquare(np.delete(others, 7)).pvalue > 1e-4


def test_rr_outputs_are_exact_prototypes_and_llr(ps: PrototypeSet) -> None:
    """Outputs are prototype rows (ties), and the LR is +eps at c_j, -eps at c_i, 0 elsewhere."""
    m = RandomizedResponse(ps, 8.0)
    gen = np.random.default_rng(10)
    x = m.sample(2, 300, gen)
    assert np.all(np.any(np.all(x[:, None, :] == ps.prototypes[None, :, :], axis=2), axis=1))
    eps = m.epsilon_realized
    rows = np.stack([ps.prototypes[2], ps.prototypes[9], ps.prototypes[50]])
    np.testing.assert_array_equal(m.log_likelihood_ratio(rows, 2, 9), [-eps, eps, 0.0])


def test_rr_reference_auc_matches_monte_carlo(ps: PrototypeSet) -> None:
    """The exact discrete AUC matches the oracle's empirical AUC on 20,000 draws per class."""
    m = RandomizedResponse(ps, 5.0)
    gen = np.random.default_rng(11)
    neg = m.log_likelihood_ratio(m.sample(0, 20000, gen), 0, 1)
    pos = m.log_likelihood_ratio(m.sample(1, 20000, gen), 0, 1)
    # AUC SE <= sqrt(1/(3*20000)) ~ 0.004; 0.015 is > 3.5 SE.
    assert _auc(neg, pos) == pytest.approx(m.reference_auc(0, 1), abs=0.015)
    assert RandomizedResponse(ps, 0.0).reference_auc(0, 1) == pytest.approx(0.5, abs=1e-12)


def test_sampling_reproducible(small: PrototypeSet) -> None:
    """The same seed (int or Generator) gives identical samples; another seed does not."""
    for m in (Laplace(small, 1.0), Gaussian(small, 1.0), RandomizedResponse(small, 1.0)):
        a = m.sample(1, 5, 123)
        np.testing.assert_array_equal(a, m.sample(1, 5, np.random.default_rng(123)))
        assert not np.array_equal(a, m.sample(1, 5, 124))
        assert a.dtype == np.float64 and a.shape == (5, 512)


def test_mechanism_for_and_protocol(small: PrototypeSet) -> None:
    """The factory returns the null at 0 and every mechanism satisfies the Mechanism protocol."""
    assert mechanism_for("laplace", small, 0.0).name == "null-laplace"
    for fam in ("laplace", "gaussian", "anisotropic", "randomized_response"):
        m = mechanism_for(fam, small, 1.0)
        assert isinstance(m, Mechanism)
        assert m.epsilon_g == 1.0


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda s: Laplace(s, 0.0), ParameterError, "Use Null"),
        (lambda s: Gaussian(s, 1.0, delta=0.0), ParameterError, "delta must be in"),
        (lambda s: Laplace(s, 1.0).sample(12, 3, 0), ParameterError, r"identity must be .*\[0, 12\)"),
        (lambda s: Laplace(s, 1.0).sample(0, -1, 0), ParameterError, "n_samples must be"),
        (lambda s: Laplace(s, 1.0).sample(0, 1, -5), ParameterError, "rng must be"),
        (lambda s: Gaussian(s, 1.0).log_likelihood_ratio(np.zeros((2, 3)), 0, 1), DataError, "x must"),
        (lambda s: RandomizedResponse(s, 1.0, K=13), ParameterError, "K must be"),
        (lambda s: Anisotropic(s, 1.0, condition=0.5), ParameterError, "condition must be"),
    ],
)
def test_invalid_arguments(small: PrototypeSet, call: object, error: type, message: str) -> None:
    """Invalid arguments raise the documented error with the constraint in the message."""
    assert callable(call)
    with pytest.raises(error, match=message):
        call(small)


def test_null_rejects_unknown_family(small: PrototypeSet) -> None:
    """An unknown noise family is refused (by typeguard when active, else with ParameterError)."""
    with pytest.raises((ParameterError, TypeCheckError), match=r"family|not any of"):
        Null(small, "uniform")  # type: ignore[arg-type]


def test_rr_rejects_duplicate_prototypes() -> None:
    """Randomized response refuses prototypes that coincide (outputs would be ambiguous)."""
    dup = sensitivities(np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(DataError, match="distinct"):
        RandomizedResponse(dup, 1.0)
