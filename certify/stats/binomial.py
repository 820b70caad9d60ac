"""Exact binomial confidence bounds (Clopper-Pearson) and the error-rate to epsilon step (Eq. 16)."""

from __future__ import annotations

import math
import numbers

from scipy.stats import beta as _beta

from certify.errors import ParameterError

__all__ = [
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_lower_from_error_bounds",
]


def _check_counts(k: int, n: int) -> None:
    """Validate a count ``k`` out of ``n`` trials."""
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ParameterError(f"{name} must be an integer; got {value!r}.")
    if n < 1:
        raise ParameterError(f"n must be at least 1; got {n!r}.")
    if not 0 <= k <= n:
        raise ParameterError(f"k must be in [0, n] = [0, {n}]; got {k!r}.")


def _check_alpha(alpha: float) -> None:
    """Validate a one-sided error probability."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 < alpha < 1.0:
        raise ParameterError(f"alpha must be a number in (0, 1); got {alpha!r}.")


def clopper_pearson_upper(k: int, n: int, alpha: float) -> float:
    """One-sided exact upper confidence bound for a binomial proportion.

    Parameters
    ----------
    k : int
        Observed number of events (for example, test errors), ``0 <= k <= n``.
    n : int
        Number of independent trials, ``n >= 1``.
    alpha : float
        One-sided error probability in (0, 1); the bound holds with probability ``>= 1 - alpha``.

    Returns
    -------
    float
        ``U`` with ``P(p <= U) >= 1 - alpha`` for every true proportion ``p``; ``1.0`` when ``k == n``.

    Raises
    ------
    ParameterError
        If ``k`` or ``n`` are not integers with ``0 <= k <= n``, ``n >= 1``, or ``alpha`` is not in (0, 1).

    Notes
    -----
    The Clopper-Pearson bound [1]_ is the ``1 - alpha`` quantile of ``Beta(k + 1, n - k)``. It is
    exact in the sense of never undercovering: for every ``p`` the coverage is at least ``1 - alpha``
    (it is conservative because the binomial is discrete). At ``k = 0`` the closed form
    ``1 - alpha ** (1 / n)`` is used. Assumption: the ``n`` trials are iid Bernoulli(p).

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits illustrated in
       the case of the binomial", Biometrika 26(4), 1934.

    Examples
    --------
    >>> round(clopper_pearson_upper(0, 10, 0.05 / 80), 4)
    0.5218
    """
    _check_counts(k, n)
    _check_alpha(alpha)
    if k == n:
        return 1.0
    if k == 0:
        return -math.expm1(math.log(alpha) / n)
    return float(_beta.isf(alpha, k + 1, n - k))


def clopper_pearson_lower(k: int, n: int, alpha: float) -> float:
    """One-sided exact lower confidence bound for a binomial proportion.

    Parameters
    ----------
    k : int
        Observed number of events, ``0 <= k <= n``.
    n : int
        Number of trials, ``n >= 1``.
    alpha : float
        One-sided error probability in (0, 1).

    Returns
    -------
    float
        ``L`` with ``P(p >= L) >= 1 - alpha``; ``0.0`` when ``k == 0``.

    Raises
    ------
    ParameterError
        On invalid counts or ``alpha``.

    Notes
    -----
    Mirror image of :func:`clopper_pearson_upper`: ``1 - clopper_pearson_upper(n - k, n, alpha)``.

    Examples
    --------
    >>> round(clopper_pearson_lower(10, 10, 0.05), 4)
    0.7411
    """
    _check_counts(k, n)
    _check_alpha(alpha)
    if k == 0:
        return 0.0
    if k == n:
        return math.exp(math.log(alpha) / n)
    return float(_beta.ppf(alpha, k, n - k + 1))


def epsilon_lower_from_error_bounds(u_fpr: float, u_fnr: float, delta: float) -> float:
    """Turn simultaneous upper bounds on a test's two error rates into a lower bound on epsilon.

    Parameters
    ----------
    u_fpr, u_fnr : float
        Upper confidence bounds on the false-positive and false-negative rates, in [0, 1].
    delta : float
        The delta of the (epsilon, delta)-DP claim, in [0, 1).

    Returns
    -------
    float
        ``max{0, ln((1 - delta - U_FNR) / U_FPR), ln((1 - delta - U_FPR) / U_FNR)}`` (paper Eq. 16),
        omitting a term whose numerator is not positive; a positive numerator over a zero
        denominator gives ``+inf``.

    Raises
    ------
    ParameterError
        If a bound is outside [0, 1] or ``delta`` outside [0, 1).

    Notes
    -----
    Every (epsilon, delta)-DP mechanism satisfies ``FPR + e^eps FNR >= 1 - delta`` and
    ``FNR + e^eps FPR >= 1 - delta`` for every test (Kairouz et al., 2015; paper Eq. 2). If the
    true rates are at most ``U_FPR`` and ``U_FNR`` (which the confidence statement provides), any
    epsilon below the returned value contradicts one of the two inequalities. The function is
    monotone: smaller error bounds never give a smaller epsilon.

    Examples
    --------
    >>> u = clopper_pearson_upper(0, 30, 0.05 / 80)
    >>> round(epsilon_lower_from_error_bounds(u, u, 0.0), 3)
    1.277
    """
    for name, value in (("u_fpr", u_fpr), ("u_fnr", u_fnr)):
        if not (isinstance(value, numbers.Real) and 0.0 <= value <= 1.0):
            raise ParameterError(f"{name} must be a number in [0, 1]; got {value!r}.")
    if not (isinstance(delta, numbers.Real) and 0.0 <= delta < 1.0):
        raise ParameterError(f"delta must be a number in [0, 1); got {delta!r}.")
    best = 0.0
    for numerator, denominator in ((1.0 - delta - u_fnr, u_fpr), (1.0 - delta - u_fpr, u_fnr)):
        if numerator <= 0.0:
            continue
        if denominator == 0.0:
            return math.inf
        best = max(best, math.log(numerator / denominator))
    return best
