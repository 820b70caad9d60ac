"""Sample-size planning for reserved tests: ceilings, required sizes and power (closed forms).

A reserved test of ``n`` rows per class can never certify more than its zero-error ceiling: with
no error at all, each Clopper-Pearson upper bound is still ``1 - alpha_per_rate ** (1 / n)``.
These functions answer "how many reserved rows do I need?" before any data are spent.
:func:`mmd_ceiling` and :func:`mmd_required_n` answer the same for the certified MMD route
(:class:`certify.MMDTest`), whose finite-sample deduction does not depend on the data.
"""

from __future__ import annotations

import math
from typing import final

import attrs
import numpy as np
from scipy.stats import binom

from certify._core import check_confidence_level, check_delta, check_int, first_true
from certify.errors import ParameterError
from certify.stats._mmd_bounds import theorem7_slack
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds
from certify.stats.mmd import mmd_pure_dp_epsilon_lower

__all__ = [
    "MMDCeiling",
    "alpha_of_test",
    "alpha_per_rate",
    "ceiling",
    "mmd_ceiling",
    "mmd_required_n",
    "power",
    "rate_level",
    "required_n",
]


def rate_level(test_alpha: float) -> float:
    """Level of each of a test's two one-sided error bounds: ``1 - sqrt(1 - test_alpha)``.

    Parameters
    ----------
    test_alpha : float
        The error probability allowed to one test (both of its rates), in (0, 1).

    Returns
    -------
    float
        ``a`` with ``(1 - a)^2 = 1 - test_alpha``; slightly above ``test_alpha / 2``.

    Raises
    ------
    ParameterError
        If ``test_alpha`` is not in (0, 1).

    Notes
    -----
    A test's false-positive count comes from the reserved rows of ``pair.a`` and its
    false-negative count from those of ``pair.b``: disjoint rows, independent under the iid
    model (for a mechanism: separate calls with fresh randomness). Two one-sided bounds at level
    ``a`` each then both hold with probability ``(1 - a)^2`` exactly as a product of independent
    events, so ``a = 1 - sqrt(1 - test_alpha)`` spends the test's whole ``test_alpha``, where the
    Bonferroni split ``a = test_alpha / 2`` spends ``test_alpha - test_alpha^2 / 4`` of it. The
    tests of a family are not independent of each other (they may share an identity), so they
    are combined by the union bound. Computed as ``-expm1(log1p(-test_alpha) / 2)``, accurate
    for tiny levels.

    Examples
    --------
    >>> round(rate_level(0.05), 6), 0.05 / 2
    (0.025321, 0.025)
    """
    t: object = test_alpha
    if not (isinstance(t, int | float) and not isinstance(t, bool) and 0.0 < t < 1.0):
        raise ParameterError(f"test_alpha must be a number in (0, 1); got {test_alpha!r}.")
    return -math.expm1(0.5 * math.log1p(-float(t)))


def alpha_of_test(alpha_per_rate: float) -> float:
    """The error probability a test spends when each of its two rates is bounded at ``alpha_per_rate``.

    Parameters
    ----------
    alpha_per_rate : float
        Level of each one-sided error bound, in (0, 1).

    Returns
    -------
    float
        ``1 - (1 - alpha_per_rate)^2``, the inverse of :func:`rate_level`.

    Raises
    ------
    ParameterError
        If ``alpha_per_rate`` is not in (0, 1).

    Examples
    --------
    >>> round(alpha_of_test(rate_level(0.00125)), 12)
    0.00125
    """
    a: object = alpha_per_rate
    if not (isinstance(a, int | float) and not isinstance(a, bool) and 0.0 < a < 1.0):
        raise ParameterError(f"alpha_per_rate must be a number in (0, 1); got {alpha_per_rate!r}.")
    return float(a) * (2.0 - float(a))


def alpha_per_rate(n_tests: int, confidence_level: float) -> float:
    """Level of each one-sided error bound in a family of ``n_tests`` tests.

    Parameters
    ----------
    n_tests : int
        Tests in the family (each has two error rates).
    confidence_level : float
        Simultaneous confidence level of the family.

    Returns
    -------
    float
        ``rate_level((1 - confidence_level) / n_tests)``: each test gets an equal share of
        ``1 - confidence_level`` (union bound over tests), split between its two independent
        rates by :func:`rate_level`.

    Notes
    -----
    All bounds of the family then hold together with probability at least
    ``confidence_level`` under the iid model: each test fails with probability at most
    ``1 - (1 - a)^2 = (1 - confidence_level) / n_tests``, and a union bound adds the tests.
    The gain over the Bonferroni split ``(1 - confidence_level) / (2 n_tests)`` is a factor
    ``1 + (1 - confidence_level) / (4 n_tests)`` or so in the level: about 3e-4 for 40 tests at
    95%, 1.3% for one test at 95%, 17% for one test at 50%.

    Examples
    --------
    >>> round(alpha_per_rate(40, 0.95), 12)
    0.000625195435
    """
    n = check_int(n_tests, "n_tests", 1)
    return rate_level((1.0 - check_confidence_level(confidence_level)) / n)


def ceiling(n_per_class: int, n_tests: int, confidence_level: float = 0.95, delta: float = 0.0) -> float:
    """The highest epsilon a reserved test with ``n_per_class`` rows per class can certify.

    Parameters
    ----------
    n_per_class : int
        Reserved rows of each identity of the pair.
    n_tests : int
        Number of tests in the family (union bound over tests, :func:`alpha_per_rate`).
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
    return first_true(ok, hi // 2, hi)


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


_SQRT2: float = math.sqrt(2.0)
_MMD_N_LIMIT: int = 2**53  # rows per class beyond which the float arithmetic is no longer exact


def _mmd_alpha(n_tests: int, confidence_level: float) -> float:
    """The one-sided level of an MMD test: its whole share of the family's budget."""
    return alpha_of_test(alpha_per_rate(n_tests, confidence_level))


def _mmd_slack(n: int, alpha: float) -> float:
    """Theorem 7's deduction with ``n`` rows in each class, evaluated as the evaluation does."""
    return theorem7_slack(n, n, alpha)


@final
@attrs.frozen
class MMDCeiling:
    """The most a certified MMD test with ``n_per_class`` reserved rows per class can give.

    Returned by :func:`mmd_ceiling`; plain planning numbers, not a result with a status.

    Attributes
    ----------
    n_per_class : int
        Reserved rows of each identity of the pair.
    alpha : float
        The one-sided error probability of the test's MMD bound, ``1 - (1 - alpha_per_rate)^2``.
    slack : float
        Theorem 7's deduction ``(4 + 2 sqrt(ln(1/alpha))) / sqrt(n_per_class)``.
    mmd_lower : float
        ``max(0, sqrt(2) - slack)``: no certified MMD bound can exceed it.
    epsilon_lower : float
        ``mmd_pure_dp_epsilon_lower(mmd_lower, delta)``: no MMD certificate can exceed it.
    """

    n_per_class: int
    alpha: float
    slack: float
    mmd_lower: float
    epsilon_lower: float


def mmd_ceiling(
    n_per_class: int, n_tests: int, confidence_level: float = 0.95, delta: float = 0.0
) -> MMDCeiling:
    """The largest lower bound on the population MMD, and on epsilon, a certified MMD test can give.

    Parameters
    ----------
    n_per_class : int
        Reserved rows of each identity of the pair.
    n_tests : int
        Number of tests in the family (union bound over tests, :func:`alpha_per_rate`).
    confidence_level : float, default 0.95
        Simultaneous confidence level.
    delta : float, default 0.0
        Delta of the certified statement (only ``epsilon_lower`` depends on it).

    Returns
    -------
    MMDCeiling
        The test's level, its slack, the ceiling ``mmd_lower = max(0, sqrt(2) - slack)`` and the
        epsilon that ceiling converts to; ``mmd_lower == 0`` means no MMD certificate can be
        positive.

    Raises
    ------
    ParameterError
        On out-of-range arguments.

    Notes
    -----
    The certified MMD route (:class:`certify.MMDTest`) spends its test's whole share of the
    family's budget, ``alpha = 1 - (1 - alpha_per_rate)^2`` (:func:`alpha_of_test`), on one
    bound, Gretton et al. (2012), Theorem 7: ``MMD >= MMD_b - 2 (sqrt(1/m) + sqrt(1/n)) -
    sqrt(2 (m + n) ln(1/alpha) / (m n))``. With ``m = n`` rows per class the deduction is
    ``(4 + 2 sqrt(ln(1/alpha))) / sqrt(n)``, whatever the data. The RBF kernel lies in [0, 1],
    so the biased statistic is at most ``sqrt(1 + 1 - 0) = sqrt(2)``; the certified bound, and the
    epsilon it gives (Eq. 14 and the hockey-stick bound, both monotone in the MMD), can therefore
    never exceed the values returned here. Exact; reaching them needs two classes whose outputs
    are each concentrated at one point and far apart, so realistic bounds are much lower.

    References
    ----------
    .. [1] A. Gretton, K. M. Borgwardt, M. J. Rasch, B. Schoelkopf and A. Smola, "A kernel
       two-sample test", JMLR 13, 2012, Theorem 7.

    Examples
    --------
    >>> c = mmd_ceiling(300, 40, 0.95)
    >>> round(c.slack, 4), round(c.mmd_lower, 4), round(c.epsilon_lower, 3)
    (0.5295, 0.8847, 1.468)
    >>> mmd_ceiling(30, 40, 0.95).mmd_lower
    0.0
    """
    n = check_int(n_per_class, "n_per_class", 1)
    alpha = _mmd_alpha(n_tests, confidence_level)
    d = check_delta(delta)
    slack = _mmd_slack(n, alpha)
    lower = max(0.0, _SQRT2 - slack)
    return MMDCeiling(
        n_per_class=n,
        alpha=alpha,
        slack=slack,
        mmd_lower=lower,
        epsilon_lower=mmd_pure_dp_epsilon_lower(lower, d),
    )


def mmd_required_n(mmd: float, n_tests: int, confidence_level: float = 0.95) -> int:
    """The smallest reserved rows per class for which an MMD statistic of ``mmd`` gives a positive bound.

    Parameters
    ----------
    mmd : float
        The biased MMD statistic expected on the reserved rows (for example, its value on
        development rows), in (0, sqrt(2)].
    n_tests, confidence_level
        As in :func:`mmd_ceiling`.

    Returns
    -------
    int
        The smallest ``n`` with Theorem 7's deduction below ``mmd`` (see :func:`mmd_ceiling`);
        with ``n - 1`` rows per class an observed ``MMD_b = mmd`` certifies nothing.

    Raises
    ------
    ParameterError
        If ``mmd`` is not a number in (0, sqrt(2)], or is so small that more than ``2**53`` rows
        per class would be needed; on out-of-range ``n_tests`` or ``confidence_level``.

    Notes
    -----
    With ``n`` rows per class the deduction is ``(4 + 2 sqrt(ln(1/alpha))) / sqrt(n)``, so the
    answer is the smallest integer above ``((4 + 2 sqrt(ln(1/alpha))) / mmd)^2``, checked against
    the deduction as the evaluation computes it. A positive MMD bound is a positive epsilon bound
    at ``delta = 0``; at ``delta > 0`` the hockey-stick bound needs more (see
    :func:`certify.stats.mmd.mmd_pure_dp_epsilon_lower`). The statistic fluctuates around the
    population MMD, so plan with a margin: this is the size at which positivity becomes possible,
    not likely.

    Examples
    --------
    >>> mmd_required_n(0.5, 40, 0.95)
    337
    >>> mmd_required_n(2**0.5, 1, 0.95)
    28
    """
    m: object = mmd
    if not (
        isinstance(m, int | float) and not isinstance(m, bool) and math.isfinite(m) and 0.0 < m <= _SQRT2
    ):
        raise ParameterError(
            f"mmd must be a number in (0, sqrt(2)] (an RBF-kernel MMD is at most sqrt(2)); got {mmd!r}. "
            "Pass the biased MMD statistic you expect on the reserved rows."
        )
    target = float(m)
    alpha = _mmd_alpha(n_tests, confidence_level)
    root = (4.0 + 2.0 * math.sqrt(math.log(1.0 / alpha))) / target
    if not root * root < _MMD_N_LIMIT:
        raise ParameterError(
            f"mmd={mmd!r} is too small to plan for: more than 2**53 reserved rows per class would be "
            "needed for a positive certified MMD bound. Use the classifier route (certify plan --epsilon)."
        )
    n = max(1, math.floor(root * root) + 1)
    while _mmd_slack(n, alpha) >= target:
        n += 1
    while n > 1 and _mmd_slack(n - 1, alpha) < target:
        n -= 1
    return n
