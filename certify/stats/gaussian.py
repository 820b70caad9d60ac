"""The analytic Gaussian mechanism: exact privacy profile, its inverse in epsilon and in sigma.

Balle and Wang (2018), Theorem 8: the Gaussian mechanism with L2 sensitivity ``D`` and noise
standard deviation ``s`` is ``(epsilon, delta)``-DP exactly when

    delta >= Phi(D/(2s) - epsilon s/D) - e^epsilon Phi(-D/(2s) - epsilon s/D).

Everything here depends on ``D`` and ``s`` only through ``mu = D / s``; the profile is evaluated in
log space (``scipy.special.log_ndtr`` and a log-difference), so it stays accurate where both terms
are tiny and nearly equal (large epsilon), which a plain ``erf`` evaluation is not.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Final

from scipy.optimize import brentq
from scipy.special import log_ndtr

from certify.errors import ParameterError

__all__ = [
    "analytic_gaussian_delta",
    "analytic_gaussian_epsilon",
    "calibrate_sigma",
]

_XTOL: Final = 1e-14
_RTOL: Final = 1e-15
_LOG_FLOOR: Final = -1e300
_MAX_BRACKET_STEPS: Final = 2000


def _check_real(name: str, value: float) -> float:
    """Return ``value`` as a float after checking it is a finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ParameterError(f"{name} must be a finite real number; got {value!r}.")
    return float(value)


def _check_nonnegative(name: str, value: float) -> float:
    """Return ``value`` as a float after checking it is finite and ``>= 0``."""
    v = _check_real(name, value)
    if v < 0.0:
        raise ParameterError(f"{name} must be non-negative; got {value!r}.")
    return v


def _check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float after checking it is finite and ``> 0``."""
    v = _check_real(name, value)
    if v <= 0.0:
        raise ParameterError(f"{name} must be positive; got {value!r}.")
    return v


def _check_delta(value: float) -> float:
    """Return ``delta`` as a float after checking it lies in the open interval (0, 1)."""
    v = _check_real("delta", value)
    if not 0.0 < v < 1.0:
        raise ParameterError(f"delta must be in the open interval (0, 1); got {value!r}.")
    return v


def _log_delta(epsilon: float, mu: float) -> float:
    """Log of the analytic Gaussian profile delta(epsilon) at ``mu = D / sigma > 0``."""
    t = epsilon / mu
    x = float(log_ndtr(mu / 2.0 - t))
    y = epsilon + float(log_ndtr(-mu / 2.0 - t))
    if y >= x:
        return -math.inf
    return x + math.log(-math.expm1(y - x))


def _floored(value: float) -> float:
    """Replace ``-inf`` by a very negative finite number so root finders see a sign."""
    return value if value > _LOG_FLOOR else _LOG_FLOOR


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Brent root of an increasing or decreasing ``f`` on a sign-changing bracket."""
    return float(brentq(f, lo, hi, xtol=_XTOL, rtol=_RTOL, maxiter=500))


def analytic_gaussian_delta(epsilon: float, sensitivity: float, sigma: float) -> float:
    """Exact delta of the Gaussian mechanism at a given epsilon (analytic privacy profile).

    Parameters
    ----------
    epsilon : float
        Privacy-loss level, finite and ``>= 0``.
    sensitivity : float
        L2 distance ``D`` between the two means being compared (the sensitivity for a global
        guarantee, one pair's distance for a pairwise one); finite and ``>= 0``.
    sigma : float
        Standard deviation ``s`` of the isotropic Gaussian noise; finite and ``> 0``.

    Returns
    -------
    float
        ``delta(epsilon) = Phi(D/(2s) - epsilon s/D) - e^epsilon Phi(-D/(2s) - epsilon s/D)``, in
        ``[0, 1)``; exactly ``0.0`` when ``sensitivity == 0`` (the two laws coincide).

    Raises
    ------
    ParameterError
        If an argument is not finite or outside its range.

    Notes
    -----
    This is the tight privacy profile of Balle and Wang [1]_, Theorem 8: the mechanism is
    ``(epsilon, delta)``-DP if and only if ``delta >= analytic_gaussian_delta(epsilon, D, s)``.
    It is exact (not a bound). The value is computed as
    ``exp(x + log(-expm1(y - x)))`` with ``x = log Phi(a)`` and ``y = epsilon + log Phi(b)``,
    which keeps full relative accuracy when both terms underflow or nearly cancel. Used for the
    pairwise references of paper Eq. 20.

    References
    ----------
    .. [1] B. Balle and Y.-X. Wang, "Improving the Gaussian mechanism for differential privacy:
       analytical calibration and optimal denoising", ICML 2018.

    Examples
    --------
    >>> round(analytic_gaussian_delta(1.0, 1.0, 1.0), 6)
    0.126937
    """
    eps = _check_nonnegative("epsilon", epsilon)
    d = _check_nonnegative("sensitivity", sensitivity)
    s = _check_positive("sigma", sigma)
    if d == 0.0:
        return 0.0
    return math.exp(_log_delta(eps, d / s))


def analytic_gaussian_epsilon(sigma: float, sensitivity: float, delta: float) -> float:
    """Smallest epsilon at which the Gaussian mechanism is ``(epsilon, delta)``-DP.

    Parameters
    ----------
    sigma : float
        Noise standard deviation, finite and ``> 0``.
    sensitivity : float
        L2 distance ``D`` between the two means (global sensitivity or one pair's distance);
        finite and ``>= 0``.
    delta : float
        Target delta in the open interval (0, 1).

    Returns
    -------
    float
        The smallest ``epsilon >= 0`` with ``analytic_gaussian_delta(epsilon, D, sigma) <= delta``;
        ``0.0`` when already ``delta(0) <= delta`` (including ``sensitivity == 0``).

    Raises
    ------
    ParameterError
        If an argument is not finite or outside its range.

    Notes
    -----
    The profile is strictly decreasing in epsilon, so the answer is the unique root of
    ``log delta(epsilon) = log delta``. A bracket ``[lo, hi]`` is grown geometrically from
    ``[0, 1]`` and the root found with Brent's method (absolute tolerance ``1e-14``, relative
    ``1e-15``); the returned value is then nudged upwards, if needed, so that
    ``delta(epsilon) <= delta`` holds in floating point. This gives the exact pairwise reference
    ``epsilon_ij^G`` of paper Eq. 20 when ``sensitivity = ||c_i - c_j||_2``.

    Examples
    --------
    >>> round(analytic_gaussian_epsilon(1.0, 1.0, 1e-5), 4)
    4.3772
    """
    s = _check_positive("sigma", sigma)
    d = _check_nonnegative("sensitivity", sensitivity)
    target = math.log(_check_delta(delta))
    if d == 0.0:
        return 0.0
    mu = d / s

    def f(eps: float) -> float:
        return _floored(_log_delta(eps, mu)) - target

    if f(0.0) <= 0.0:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(_MAX_BRACKET_STEPS):
        if f(hi) <= 0.0:
            break
        lo, hi = hi, 2.0 * hi
    else:  # pragma: no cover - the profile tends to 0, so the loop always breaks
        raise ParameterError(f"delta is too small to bracket for sigma={sigma!r}; got {delta!r}.")
    root = _root(f, lo, hi)
    step = max(abs(root) * _RTOL, _XTOL)
    while f(root) > 0.0:
        root += step
        step *= 2.0
    return root


def calibrate_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest Gaussian noise standard deviation giving ``(epsilon, delta)``-DP.

    Parameters
    ----------
    epsilon : float
        Target epsilon, finite and ``>= 0``.
    delta : float
        Target delta in the open interval (0, 1).
    sensitivity : float
        Global L2 sensitivity ``D``, finite and ``> 0``.

    Returns
    -------
    float
        The smallest ``sigma`` with ``analytic_gaussian_delta(epsilon, D, sigma) <= delta``.

    Raises
    ------
    ParameterError
        If an argument is not finite or outside its range.

    Notes
    -----
    The profile depends on ``mu = D / sigma`` only and increases in ``mu``; the largest admissible
    ``mu`` is found by Brent's method on a geometrically grown bracket and ``sigma = D / mu`` is
    then nudged upwards, if needed, so that ``delta(epsilon) <= delta`` holds in floating point.
    This is the analytic calibration of Balle and Wang (2018) used with ``D = Delta_2`` and
    ``delta = 1e-5`` for the Gaussian benchmark mechanism (paper Sec. 6.1, Eq. 20). Unlike the
    classical ``sqrt(2 ln(1.25/delta)) D / epsilon`` rule, it is valid for every ``epsilon``.

    Examples
    --------
    >>> round(calibrate_sigma(1.0, 1e-5, 1.0), 4)
    3.7306
    """
    eps = _check_nonnegative("epsilon", epsilon)
    target = math.log(_check_delta(delta))
    d = _check_positive("sensitivity", sensitivity)

    def g(mu: float) -> float:
        return _floored(_log_delta(eps, mu)) - target

    lo, hi = 0.5, 1.0
    if g(hi) > 0.0:
        for _ in range(_MAX_BRACKET_STEPS):
            if g(lo) <= 0.0:
                break
            lo, hi = lo / 2.0, lo
    else:
        for _ in range(_MAX_BRACKET_STEPS):
            if g(hi) > 0.0:
                break
            lo, hi = hi, 2.0 * hi
    mu = _root(g, lo, hi)
    sigma = d / mu
    step = max(sigma * _RTOL, math.ulp(sigma))
    while _log_delta(eps, d / sigma) > target:
        sigma += step
        step *= 2.0
    return sigma
