"""How much any plug-in test fitted on a benchmark cell's development rows can certify.

A fixed test is fitted on development rows and certified on reserved rows. Under Gaussian
noise the exact likelihood ratio of a pair is linear along the whitened mean difference, and
the oracle route uses that true direction. A test fitted on ``m`` development rows per class
must estimate the direction. In ``d = 512`` dimensions that estimate is poor when ``m`` is
small: this module computes how poor, and what it costs in certified power.

The computation (Gaussian and anisotropic Gaussian cells). Whiten the noise (for the
anisotropic mechanism: divide coordinate ``k`` by ``s sqrt(Lambda_kk)``), so that it is
``N(0, I_d)``. Each class mean of the development rows is its prototype plus ``N(0, I_d / m)``.
The prototypes are unit vectors drawn uniformly on the sphere, so give each prototype
coordinate the prior ``N(0, 1/d)`` (whitened: variance ``v_k = 1 / (d s^2 Lambda_kk)``). Under
that prior, and with the noise covariance known, a reserved row of either class has a Gaussian
predictive law centred at the posterior mean of its class, with covariance ``I + P`` (``P``
the posterior covariance, the same for both classes). The Neyman-Pearson test between the two
predictive laws is therefore linear, along

``w_k = g_k (xbar_b - xbar_a)_k``,  ``g_k = r_k / (1 + r_k / m)``,  ``r_k = v_k / (v_k + 1/m)``.

For isotropic noise ``g`` is constant and ``w`` is the plain difference of development means.
Projected on ``w / |w|``, reserved rows are Gaussian with unit variance and the two classes
differ by ``mu_eff = delta . w / |w|`` (``delta`` the true whitened mean difference). The
ceiling draws the development means, computes ``mu_eff``, and gives the test the threshold that
maximizes the probability of a positive certificate for that ``mu_eff`` (exact binomial sums
over the reserved counts, Clopper-Pearson bounds at the route's level, Eq. 16 at the
mechanism's delta): a threshold no real test knows. A pair's ceiling is the mean of that
probability over development draws; a cell's is the mean over its pairs.

What it bounds. It is the power of the Bayes predictive test with a perfect threshold, given
the noise covariance and the prototypes' prior, which a test fitted on the table does not know.
It is a model of the plug-in step, not a theorem about every conceivable test: its numbers are
meant to be read beside the measured fractions, and a measured fraction above its ceiling would
show the model wrong.
"""

from __future__ import annotations

import functools
import math
from typing import Final, cast

import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtr
from scipy.stats import beta as beta_dist
from scipy.stats import binom

from certify.benchmark._compute import _pairs, _prototype_set
from certify.benchmark._gaussian import Anisotropic, Gaussian
from certify.benchmark._setting import CONFIDENCE_LEVEL, DEV_FRACTION, Setting
from certify.benchmark.mechanisms import MechanismFamily, mechanism_for
from certify.errors import ParameterError
from certify.plan import alpha_per_rate

__all__ = ["plug_in_ceiling", "positive_probability", "separation_draws"]

_THRESHOLDS: Final = 241
_GRID: Final = np.linspace(0.0, 20.0, 401)


def separation_draws(
    delta: NDArray[np.float64],
    prior_variance: NDArray[np.float64],
    dev_per_class: int,
    draws: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """Separations ``mu_eff`` of the Bayes predictive direction (see module notes).

    Parameters
    ----------
    delta : numpy.ndarray, shape (d,)
        The pair's whitened mean difference.
    prior_variance : numpy.ndarray, shape (d,)
        Whitened prior variance ``v_k`` of each coordinate of a class mean.
    dev_per_class : int
        Development rows per class ``m``.
    draws : int
        Number of development samples drawn.
    rng : numpy.random.Generator
        Source of the draws.

    Returns
    -------
    numpy.ndarray, shape (draws,)
        Signed separations; negative when the estimated direction points the wrong way.

    Examples
    --------
    >>> d = np.zeros(512); d[0] = 3.0
    >>> s = separation_draws(d, np.ones(512), 10**8, 100, np.random.default_rng(0))
    >>> bool(np.allclose(s, 3.0, atol=0.01))
    True
    """
    m = float(dev_per_class)
    delta = np.asarray(delta, dtype=np.float64)
    r = prior_variance / (prior_variance + 1.0 / m)
    g = r / (1.0 + r / m)
    out = np.empty(draws)
    step = max(1, 2_000_000 // max(delta.size, 1))
    for start in range(0, draws, step):
        k = min(step, draws - start)
        diff = delta + math.sqrt(2.0 / m) * rng.standard_normal((k, delta.size))
        w = diff * g
        out[start : start + k] = (w @ delta) / np.linalg.norm(w, axis=1)
    return out


def _upper(n: int, alpha: float) -> NDArray[np.float64]:
    """Clopper-Pearson upper bounds for 0..n errors in n."""
    k = np.arange(n + 1, dtype=np.float64)
    out = np.ones(n + 1)
    out[:n] = beta_dist.ppf(1.0 - alpha, k[:n] + 1.0, n - k[:n])
    return out


@functools.lru_cache(maxsize=64)
def _best_on_grid(n_reserved: int, alpha: float, delta: float) -> NDArray[np.float64]:
    """Best-threshold probability of a positive certificate at each separation of the grid."""
    u = _upper(n_reserved, alpha)
    # Eq. 16 is positive exactly when U_FPR + U_FNR < 1 - delta
    positive = (u[:, None] + u[None, :] < 1.0 - delta).astype(np.float64)
    k = np.arange(n_reserved + 1)
    best = np.zeros(_GRID.size)
    for g, m in enumerate(_GRID):
        t = np.linspace(-4.0, m + 4.0, _THRESHOLDS)
        p0 = binom.pmf(k[None, :], n_reserved, ndtr(-t)[:, None])
        p1 = binom.pmf(k[None, :], n_reserved, ndtr(t - m)[:, None])
        best[g] = float(np.max(np.einsum("ti,ij,tj->t", p0, positive, p1)))
    # a larger separation can do what a smaller one does (add noise to the score)
    out: NDArray[np.float64] = np.maximum.accumulate(best)
    return out


def positive_probability(
    mu_eff: NDArray[np.float64], n_reserved: int, alpha: float, delta: float
) -> NDArray[np.float64]:
    """Largest probability over thresholds that a test of separation ``mu_eff`` certifies ``> 0``.

    Parameters
    ----------
    mu_eff : numpy.ndarray
        Separations of unit-variance Gaussian scores (absolute values are used: Eq. 16 bounds
        an event and its complement, and the best threshold of a reversed score mirrors).
    n_reserved : int
        Reserved rows per class.
    alpha : float
        One-sided level of each Clopper-Pearson bound.
    delta : float
        Delta of the certificate.

    Returns
    -------
    numpy.ndarray
        One probability per separation, the best threshold's (interpolated on a grid of
        separations from 0 to 20, constant above).

    Examples
    --------
    >>> p = positive_probability(np.array([0.0, 6.0]), 50, 0.01, 0.0)
    >>> bool(p[0] < 0.01 and p[1] > 0.99)
    True
    """
    best = _best_on_grid(int(n_reserved), float(alpha), float(delta))
    mus = np.abs(np.asarray(mu_eff, dtype=np.float64))
    return np.asarray(np.interp(mus, _GRID, best), dtype=np.float64)


def plug_in_ceiling(
    family: str, epsilon_g: float, n_samples: int, *, draws: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Expected fraction of a cell's pairs certified positive: plug-in ceiling and oracle.

    Parameters
    ----------
    family : {"gaussian", "anisotropic"}
        Mechanism family of the cell.
    epsilon_g : float
        The cell's global epsilon.
    n_samples : int
        Rows per identity (half development, half reserved, as in the benchmark).
    draws : int, default 2000
        Development samples drawn per pair.
    seed : int, default 0
        Seed of the draws.

    Returns
    -------
    (float, float)
        The ceiling of the Bayes predictive test fitted on the development rows (each with the
        best threshold for its direction, noise covariance and prior known), and the same with
        the true direction (what the oracle route can reach with the best threshold).

    Raises
    ------
    ParameterError
        For a family other than the two Gaussian ones.

    Examples
    --------
    >>> ceiling, oracle = plug_in_ceiling("gaussian", 32.0, 30, draws=200)
    >>> bool(ceiling < oracle)
    True
    """
    if family not in ("gaussian", "anisotropic"):
        raise ParameterError(
            f"the plug-in ceiling is computed for Gaussian noise; got family {family!r}. Use "
            "'gaussian' or 'anisotropic'."
        )
    setting = Setting("power_compare", "dispersed", cast(MechanismFamily, family), float(epsilon_g),
                      int(n_samples), 0, certificates=True, default_test=True)
    ps = _prototype_set("dispersed", setting.dimension)
    mech = mechanism_for(setting.family, ps, float(epsilon_g))
    pairs = _pairs(setting, ps)
    dev = math.floor(DEV_FRACTION * n_samples)
    reserved = n_samples - dev
    alpha = alpha_per_rate(len(pairs), CONFIDENCE_LEVEL)
    delta = float(mech.delta)
    prototypes = ps.prototypes
    if isinstance(mech, Gaussian):
        scale = np.full(ps.dimension, mech.sigma)
    else:
        assert isinstance(mech, Anisotropic)
        scale = mech.scale * np.sqrt(mech.variances)
    prior = 1.0 / (ps.dimension * scale**2)
    rng = np.random.default_rng(seed)
    deltas = [(prototypes[j] - prototypes[i]) / scale for i, j in pairs]
    eff = np.concatenate([separation_draws(d, prior, dev, draws, rng) for d in deltas])
    mus = np.array([float(np.linalg.norm(d)) for d in deltas])
    probs = positive_probability(np.concatenate([eff, mus]), reserved, alpha, delta)
    ceiling = float(probs[: eff.size].mean())
    oracle = float(probs[eff.size :].mean())
    return ceiling, oracle
