"""Sample-size planning for reserved tests: ceilings, required sizes and power (closed forms).

A reserved test of ``n`` rows per class can never certify more than its zero-error ceiling: with
no error at all, each Clopper-Pearson upper bound is still ``1 - alpha_per_rate ** (1 / n)``.
These functions answer "how many reserved rows do I need?" before any data are spent.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

from certify._core import check_confidence_level, check_delta, check_int
from certify.errors import ParameterError
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds

__all__ = ["alpha_per_rate", "ceiling", "power", "required_n"]


def alpha_per_rate(n_tests: int, confidence_level: float) -> float:
    """Bonferroni level of each one-sided error bound: ``(1 - confidence_level) / (2 n_tests)``.

    Examples
    --------
    >>> round(alpha_per_rate(40, 0.95), 12)
    0.000625
    """
    n = check_int(n_tests, "n_tests", 1)
    return (1.0 - check_confidence_level(confidence_level)) / (2 * n)


def ceiling(n_per_class: int, n_tests: int, confidence_level: float = 0.95, delta: float = 0.0) -> float:
    """The highest epsilon a reserved test with ``n_per_class`` rows per class can certify.

    Parameters
    ----------
    n_per_class : int
        Reserved rows of each identity of the pair.
    n_tests : int
        Number of tests in the Bonferroni family.
    confidence_level : float, default 0.95
        Simultaneous confidence level.
    delta : float, default 0.0
        Delta of the certified statement.

    Returns
    -------
    float
        Eq. 16 at zero observed errors; 0 means no certificate can be positive.

    Raises
    ------
    ParameterError
        On out-of-range arguments.

    Notes
    -----
    Eq. 16 is non-increasing in the error counts, so the zero-error value is the maximum over
    all outcomes. Exact, no approximation.

    Examples
    --------
    >>> round(ceiling(100, 250, 0.95), 3)
    2.338
    >>> ceiling(9, 40, 0.95)
    0.0
    """
    n = check_int(n_per_class, "n_per_class", 1)
    u = clopper_pearson_upper(0, n, alpha_per_rate(n_tests, confidence_level))
    return epsilon_lower_from_error_bounds(u, u, check_delta(delta))


def required_n(
    epsilon0: float, n_tests: int, confidence_level: float = 0.95, delta: float = 0.0, *, limit: int = 10**7
) -> int:
    """The smallest rows per class whose zero-error ceiling exceeds ``epsilon0``.

    Parameters
    ----------
    epsilon0 : float
        The claimed epsilon to be refuted, >= 0.
    n_tests, confidence_level, delta
        As in :func:`ceiling`.
    limit : int, default 10**7
        Largest ``n`` searched.

    Returns
    -------
    int
        Fewer rows can never refute ``epsilon0``; this many can, if the test makes no error.

    Raises
    ------
    ParameterError
        If ``epsilon0`` is negative or not finite, or no ``n`` up to ``limit`` suffices.

    Examples
    --------
    >>> required_n(1.0, 40, 0.95)
    24
    """
    eps0: object = epsilon0
    if not (isinstance(eps0, int | float) and math.isfinite(eps0) and eps0 >= 0):
        raise ParameterError(f"epsilon0 must be a finite number >= 0; got {epsilon0!r}.")

    def ok(n: int) -> bool:
        return ceiling(n, n_tests, confidence_level, delta) > epsilon0

    hi = 1
    while not ok(hi):
        hi *= 2
        if hi > limit:
            raise ParameterError(
                f"no n <= {limit} rows per class can certify more than epsilon0={epsilon0}; "
                "lower the family size or the confidence level."
            )
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def power(
    n_per_class: int,
    fpr: float,
    fnr: float,
    n_tests: int,
    confidence_level: float = 0.95,
    delta: float = 0.0,
    epsilon0: float = 0.0,
) -> float:
    """Probability that a test with true error rates ``fpr``, ``fnr`` certifies more than ``epsilon0``.

    Parameters
    ----------
    n_per_class : int
        Reserved rows per class.
    fpr, fnr : float
        Assumed true error rates of the fixed test, in [0, 1].
    n_tests, confidence_level, delta
        As in :func:`ceiling`.
    epsilon0 : float, default 0.0
        Threshold; 0 gives the probability of a positive certificate.

    Returns
    -------
    float
        Exact, summing binomial probabilities over both error counts.

    Examples
    --------
    >>> power(100, 0.0, 0.0, 250) == 1.0
    True
    """
    n = check_int(n_per_class, "n_per_class", 1)
    rates: tuple[tuple[str, object], ...] = (("fpr", fpr), ("fnr", fnr))
    for name, p in rates:
        if not (isinstance(p, int | float) and 0.0 <= p <= 1.0):
            raise ParameterError(f"{name} must be a number in [0, 1]; got {p!r}.")
    a = alpha_per_rate(n_tests, confidence_level)
    d = check_delta(delta)
    upper = np.array([clopper_pearson_upper(k, n, a) for k in range(n + 1)])
    p0 = binom.pmf(np.arange(n + 1), n, fpr)
    p1 = binom.pmf(np.arange(n + 1), n, fnr)
    total = 0.0
    for k0 in range(n + 1):
        if p0[k0] == 0.0:
            continue
        for k1 in range(n + 1):
            if p1[k1] != 0.0 and epsilon_lower_from_error_bounds(upper[k0], upper[k1], d) > epsilon0:
                total += p0[k0] * p1[k1]
    return float(min(1.0, total))
