"""The expected-bound criterion: which threshold (and family) a fixed test should use.

A certificate's power depends on the threshold fixed on development data. The criterion
:func:`expected_bound` ranks candidate thresholds by the certified bound (Eq. 16) they are
expected to give on the reserved draws, computed from development counts only;
:func:`max_bound_cut` and :func:`best_cut` maximize it over thresholds.

Cost: the exact expectation sums over every pair of reserved error counts, ``O(n0 n1)`` per
threshold; above :data:`EXACT_LIMIT` entries a quadrature of the same expectation is used
(``O(K^2)`` per threshold, ``K`` = :data:`QUADRATURE_NODES`), and long score lists are thinned
to at most :data:`MAX_CUTS` candidate thresholds, denser in both tails. Choosing a threshold
this way is then ``O(n log n)`` in the development scores. Most of the remaining cost is
inverse incomplete beta functions (microseconds each); the searches over thresholds
(:func:`robust_cut`, :func:`robust_cuts` for several scores at once, :func:`best_cut`,
:func:`max_bound_cut`) first bound the criterion of each threshold from a Cornish-Fisher
approximation of the beta quantile with a tested error bound, and compute it exactly only
for the thresholds whose upper bound reaches the best lower bound, so they choose exactly as a
search computing it everywhere. The criterion only ranks choices made before evaluation: any
fixed threshold gives a valid certificate, so an approximation here can cost power, never
validity.

One module, though long: the expected bound, its pessimistic variant and the three searches
share the private tables of Clopper-Pearson bounds, quadrature nodes, the Cornish-Fisher
screen and the kept pessimistic rates (:class:`_RateTables`); split apart, those tables would
become an interface that only these functions use.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final, TypeAlias, final

import numpy as np
from numpy.typing import NDArray
from scipy.special import betainccinv, betaincinv, betaln, expit, gammaln, ndtri

from certify.errors import DataError, ParameterError
from certify.stats.tradeoff import Target

__all__ = [
    "EXACT_LIMIT",
    "FEW_CUTS",
    "FEW_CUTS_LEVEL",
    "MAX_CUTS",
    "QUADRATURE_NODES",
    "best_cut",
    "expected_bound",
    "max_bound_cut",
    "pessimistic_bound",
    "robust_cut",
]

EXACT_LIMIT: Final = 20_000_000
"""Largest ``(cuts) x (n0 + 1) x (n1 + 1)`` summed exactly; larger problems use the quadrature."""

QUADRATURE_NODES: Final = 9
"""Nodes per error count of the quadrature (equal-probability quantiles)."""

MAX_CUTS: Final = 4096
"""Most candidate thresholds examined; longer score lists are thinned (denser in the tails)."""

FEW_CUTS: Final = 32
"""At most this many distinct scores (a discrete output with few values) count as few cuts."""

FEW_CUTS_LEVEL: Final = 0.25
"""Pessimistic development level of :func:`robust_cut` among few cuts (few chances of a fluke)."""

_APPROX_SHAPE: Final = 30.0
"""Smallest shape of a beta law whose quantile the search over cuts approximates (below: exact)."""

_APPROX_Z: Final = 8.5
"""Largest normal quantile (tail ~1e-17) at which the search over cuts approximates a quantile."""

_APPROX_ERROR: Final = 0.25
"""``C`` in the bound ``C (1 + |z|)^3 / min(a, b)^3 + 1e-9`` on the approximation's logit error.

At least eight times the largest error measured against :func:`scipy.special.betainccinv`
over shapes from 30 to 1e8 and tails from 1e-10 to 0.99 (four times at a tail of 1e-16);
``tests/stats/test_criterion.py`` checks it.
"""

_STRIDES: Final = (16, 4, 1)
"""Grid steps of the passes of the search over cuts (see ``_max_worst``)."""

_ONE_PASS_ROWS: Final = 512
"""At most this many development rows per class and half: Eq. 16 is bounded at every cut at once."""

_LOWER_AT: Final = 4
"""Cuts per pass, those of largest upper bound, at which the search finds lower bounds."""

_Side: TypeAlias = tuple[NDArray[np.int64], int, NDArray[np.int64], int]
"""A half's development error counts at every cut: ``(errors_0, rows_0, errors_1, rows_1)``."""

_Request: TypeAlias = tuple[int, int, float, NDArray[np.int64]]
"""Development rows, reserved rows, development level and integer error counts."""


def _upper_table(n: int, alpha: float) -> NDArray[np.float64]:
    """One-sided Clopper-Pearson upper bounds for k = 0..n errors among n."""
    k = np.arange(n + 1, dtype=np.float64)
    out = np.ones(n + 1, dtype=np.float64)
    out[:-1] = betaincinv(k[:-1] + 1.0, n - k[:-1], 1.0 - alpha)
    out[0] = 1.0 - alpha ** (1.0 / n)
    return out


def _eq16(u0: NDArray[np.float64], u1: NDArray[np.float64], delta: float) -> NDArray[np.float64]:
    """Eq. 16 elementwise from upper bounds on the two error rates (broadcasting)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where((1.0 - delta - u1 > 0) & (u0 > 0), np.log((1.0 - delta - u1) / u0), 0.0)
        b = np.where((1.0 - delta - u0 > 0) & (u1 > 0), np.log((1.0 - delta - u0) / u1), 0.0)
    out: NDArray[np.float64] = np.maximum(0.0, np.maximum(a, b))
    return out


def _value(
    u0: NDArray[np.float64], u1: NDArray[np.float64], delta: float, target: Target | None
) -> NDArray[np.float64]:
    """The criterion's value of error-rate bounds: Eq. 16 at ``delta``, or the target's (>= 0)."""
    if target is None:
        return _eq16(u0, u1, delta)
    out: NDArray[np.float64] = np.maximum(target.values(u0, u1), 0.0)
    return out


def _bound_matrix(
    n0: int, n1: int, alpha: float, delta: float, target: Target | None = None
) -> NDArray[np.float64]:
    """Eq. 16 (or the target) for every pair of reserved error counts (rows: false positives)."""
    u0 = _upper_table(n0, alpha)[:, None]
    u1 = _upper_table(n1, alpha)[None, :]
    return _value(u0, u1, delta, target)


def _predictive(errors: NDArray[np.float64], m: int, n: int) -> NDArray[np.float64]:
    """Beta-binomial pmf of n future errors given dev errors (Jeffreys prior); rows per cut."""
    a = errors[:, None] + 0.5
    b = (m - errors)[:, None] + 0.5
    k = np.arange(n + 1, dtype=np.float64)[None, :]
    log_choose = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
    out: NDArray[np.float64] = np.exp(log_choose + betaln(k + a, n - k + b) - betaln(a, b))
    return out


def _check_plan(n0: object, n1: object, alpha: object, delta: object) -> None:
    """Raise ParameterError on an invalid planned reserved size, alpha or delta."""
    for label, value in (("reserved n of class 0", n0), ("reserved n of class 1", n1)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ParameterError(f"{label} must be an integer >= 1; got {value!r}.")
    if not (isinstance(alpha, float | int) and 0.0 < alpha < 1.0):
        raise ParameterError(
            f"alpha_per_rate must be a number in (0, 1); got {alpha!r}. Use "
            "certify.plan.alpha_per_rate(n_tests, confidence_level)."
        )
    if not (isinstance(delta, float | int) and 0.0 <= delta < 1.0):
        raise ParameterError(f"delta must be a number in [0, 1); got {delta!r}.")


def _check_level(dev_level: float) -> None:
    """Raise ParameterError unless the pessimistic development level is in (0, 1)."""
    if not 0.0 < float(dev_level) < 1.0:
        raise ParameterError(f"dev_level must be a number in (0, 1); got {dev_level!r}.")


def expected_bound(
    dev_errors_0: NDArray[np.float64] | float,
    dev_n_0: int,
    dev_errors_1: NDArray[np.float64] | float,
    dev_n_1: int,
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float = 0.0,
    *,
    target: Target | None = None,
) -> NDArray[np.float64]:
    """Expected certified bound (Eq. 16) on the reserved rows, predicted from development errors.

    Parameters
    ----------
    dev_errors_0, dev_errors_1 : array_like
        Development (out-of-fold) false positives among ``dev_n_0`` class-0 rows and false
        negatives among ``dev_n_1`` class-1 rows, one entry per candidate threshold.
    dev_n_0, dev_n_1 : int
        Development rows per class.
    n_class0, n_class1 : int
        Planned reserved rows per class.
    alpha_per_rate : float
        Level of each one-sided Clopper-Pearson bound (:func:`certify.plan.alpha_per_rate`).
    delta : float, default 0.0
        Delta of the certified statement.
    target : Target, optional
        What to maximize instead of Eq. 16 at ``delta``: a claim's certified parameter
        (:meth:`certify.GDPClaim.target` and the like; ``delta`` is then unused).

    Returns
    -------
    numpy.ndarray
        One expected bound per candidate threshold.

    Raises
    ------
    ParameterError
        On invalid sizes, ``alpha_per_rate`` or ``delta``.

    Notes
    -----
    Each true error rate gets the Jeffreys posterior ``Beta(e + 1/2, m - e + 1/2)`` from its
    development count ``e`` of ``m``; the reserved count then follows the beta-binomial
    predictive law, and the bound of Eq. 16 is averaged over both (independent) counts. A
    plug-in rate of zero would predict a reserved error count of zero for sure; the posterior
    keeps the chance of errors that a few development rows cannot exclude. The criterion only
    ranks choices made on development data: any threshold fixed before evaluation gives a valid
    certificate, so it affects power, never validity.

    Examples
    --------
    >>> e = expected_bound(np.array([0.0, 5.0]), 50, np.array([0.0, 5.0]), 50, 50, 50, 0.000625)
    >>> bool(e[0] > e[1] > 0)
    True
    """
    _check_plan(n_class0, n_class1, alpha_per_rate, delta)
    e0 = np.atleast_1d(np.asarray(dev_errors_0, dtype=np.float64))
    e1 = np.atleast_1d(np.asarray(dev_errors_1, dtype=np.float64))
    if e0.shape != e1.shape:
        raise ParameterError(
            f"dev_errors_0 and dev_errors_1 must have one shape; got {e0.shape} and {e1.shape}."
        )
    if np.any(e0 < 0) or np.any(e0 > dev_n_0) or np.any(e1 < 0) or np.any(e1 > dev_n_1):
        raise ParameterError("development errors must lie between 0 and the development rows.")
    n0, n1 = int(n_class0), int(n_class1)
    if e0.size * (n0 + 1) * (n1 + 1) > EXACT_LIMIT:
        return _expected_bound_quadrature(
            e0, int(dev_n_0), e1, int(dev_n_1), n0, n1, float(alpha_per_rate), float(delta), target
        )
    m = _bound_matrix(n0, n1, float(alpha_per_rate), float(delta), target)
    p0 = _predictive(e0, dev_n_0, n0)
    p1 = _predictive(e1, dev_n_1, n1)
    out: NDArray[np.float64] = np.einsum("ci,ij,cj->c", p0, m, p1)
    return out


def _node_shapes(
    errors: NDArray[np.float64], m: int, n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Shapes of the Beta law matched to the predictive law of a reserved error count (per cut)."""
    a = errors + 0.5
    b = (m - errors) + 0.5
    mean = a / (a + b)
    var = mean * (1.0 - mean) * (a + b + n) / (n * (a + b + 1.0))
    size = mean * (1.0 - mean) / var - 1.0
    return mean * size, (1.0 - mean) * size


def _predictive_nodes(errors: NDArray[np.float64], m: int, n: int) -> NDArray[np.float64]:
    """Equal-probability quantiles of the predictive law of a reserved error count (per cut).

    The beta-binomial law of :func:`_predictive` is matched in mean and variance by a Beta law
    on the rate (scaled by ``n``); its quantiles at ``(i + 1/2) / K`` are the nodes. The Beta
    shape keeps rare events (counts near zero) right, where a normal approximation would not.
    """
    shape_a, shape_b = _node_shapes(errors, m, n)
    q = betaincinv(shape_a[:, None], shape_b[:, None], _node_levels()[None, :])
    out: NDArray[np.float64] = np.clip(n * q, 0.0, float(n))
    return out


def _node_levels() -> NDArray[np.float64]:
    """The quadrature's equal-probability levels ``(i + 1/2) / K``."""
    return (np.arange(QUADRATURE_NODES, dtype=np.float64) + 0.5) / QUADRATURE_NODES


def _upper_real(
    k: NDArray[np.float64], n: int | NDArray[np.float64], alpha: float | NDArray[np.float64]
) -> NDArray[np.float64]:
    """Clopper-Pearson upper bounds at real-valued counts (the integer bounds, interpolated)."""
    k, size, level = np.broadcast_arrays(
        np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64),
        np.asarray(alpha, dtype=np.float64),
    )
    out = np.ones(k.shape, dtype=np.float64)
    inside = k < size
    out[inside] = betainccinv(k[inside] + 1.0, size[inside] - k[inside], level[inside])
    return out


def _cornish_fisher(z: NDArray[np.float64]) -> tuple[NDArray[np.float64] | np.float64, ...]:
    """Coefficients of the fourth-order Cornish-Fisher expansion at the normal quantile z."""
    z2 = z * z
    z3 = z2 * z
    z4 = z2 * z2
    z5 = z4 * z
    return (
        z, (z2 - 1.0) / 6.0, (z3 - 3.0 * z) / 24.0, -(2.0 * z3 - 5.0 * z) / 36.0,
        (z4 - 6.0 * z2 + 3.0) / 120.0, -(z4 - 5.0 * z2 + 2.0) / 24.0,
        (12.0 * z4 - 53.0 * z2 + 17.0) / 324.0, (z5 - 10.0 * z3 + 15.0 * z) / 720.0,
        -(2.0 * z5 - 17.0 * z3 + 21.0 * z) / 180.0, -(3.0 * z5 - 24.0 * z3 + 29.0 * z) / 384.0,
        (14.0 * z5 - 103.0 * z3 + 107.0 * z) / 288.0, -(252.0 * z5 - 1688.0 * z3 + 1511.0 * z) / 7776.0,
    )


def _logit_quantile(
    a: NDArray[np.float64], b: NDArray[np.float64], z: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Logit of the quantile of Beta(a, b) with upper tail ``Phi(-z)``, for shapes of 30 or more.

    ``logit X = log G_a - log G_b`` for independent standard gamma variables; its cumulants
    are polygamma functions of ``a`` and ``b`` (here their asymptotic series, exact to about
    1e-13 from 30 on), and the Cornish-Fisher expansion to fourth order maps the normal
    quantile ``z`` (broadcasting) to its quantile. Error: see :data:`_APPROX_ERROR`.
    """
    c = _cornish_fisher(z)
    ia, ib = 1.0 / a, 1.0 / b
    ia2, ib2 = ia * ia, ib * ib
    ia3, ib3 = ia2 * ia, ib2 * ib
    ia4, ib4 = ia2 * ia2, ib2 * ib2
    ia5, ib5 = ia4 * ia, ib4 * ib
    ia6, ib6 = ia3 * ia3, ib3 * ib3
    d2, d4, d6 = ia2 - ib2, ia4 - ib4, ia6 - ib6
    s3, s5 = ia3 + ib3, ia5 + ib5
    mean = np.log(a / b) - 0.5 * (ia - ib) - d2 / 12.0 + d4 / 120.0 - d6 / 252.0
    k2 = (ia + ib) + 0.5 * (ia2 + ib2) + s3 / 6.0 - s5 / 30.0
    sd = np.sqrt(k2)
    v = 1.0 / k2
    g1 = (-d2 - (ia3 - ib3) - 0.5 * d4 + d6 / 6.0) * v / sd
    g2 = (2.0 * s3 + 3.0 * (ia4 + ib4) + 2.0 * s5) * v * v
    g3 = (-6.0 * d4 - 12.0 * (ia5 - ib5) - 10.0 * d6) * v * v / sd
    g4 = (24.0 * s5 + 60.0 * (ia6 + ib6)) * v * v * v
    g11 = g1 * g1
    w = (c[0] + c[1] * g1 + c[2] * g2 + c[3] * g11 + c[4] * g3 + c[5] * g1 * g2 + c[6] * g11 * g1
         + c[7] * g4 + c[8] * g1 * g3 + c[9] * g2 * g2 + c[10] * g11 * g2 + c[11] * g11 * g11)
    out: NDArray[np.float64] = mean + sd * w
    return out


_CHUNK: Final = 4096
"""Elements per pass of the approximation (its dozens of temporaries stay in cache)."""


def _isf_bounds(
    a: NDArray[np.float64], b: NDArray[np.float64], alpha: float | NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bounds ``lo <= betainccinv(a, b, alpha) <= hi`` (positive shapes; alpha a number or like a)."""
    tail = np.broadcast_to(np.asarray(alpha, dtype=np.float64), a.shape)
    z = np.asarray(-ndtri(np.asarray(alpha, dtype=np.float64)))
    shape = np.minimum(a, b)
    # betainccinv (Boost's inverse) misses by up to 1e-4 on the logit scale at a shape of
    # exactly 1000 beside one above 1e7: there it is computed, so that the bounds hold it
    fast = (shape >= _APPROX_SHAPE) & (np.abs(z) <= _APPROX_Z) & (a != 1000.0) & (b != 1000.0)
    lo = np.empty(a.shape, dtype=np.float64)
    hi = np.empty(a.shape, dtype=np.float64)
    if fast.all():
        a_f, b_f, shape_f = a.reshape(-1), b.reshape(-1), shape.reshape(-1)
        z_f = z if z.ndim == 0 else np.broadcast_to(z, a.shape).reshape(-1)
    else:
        a_f, b_f, shape_f = a[fast], b[fast], shape[fast]
        z_f = z if z.ndim == 0 else np.broadcast_to(z, a.shape)[fast]
    lo_f = np.empty(a_f.size, dtype=np.float64)
    hi_f = np.empty(a_f.size, dtype=np.float64)
    for i in range(0, a_f.size, _CHUNK):
        part = slice(i, i + _CHUNK)
        z_p = z_f if z_f.ndim == 0 else z_f[part]
        center = _logit_quantile(a_f[part], b_f[part], z_p)
        least = shape_f[part]
        error = _APPROX_ERROR * (1.0 + np.abs(z_p)) ** 3 / (least * least * least) + 1e-9
        lo_f[part] = expit(center - error)
        hi_f[part] = expit(center + error)
    if fast.all():
        lo, hi = lo_f.reshape(a.shape), hi_f.reshape(a.shape)
    else:
        lo[fast], hi[fast] = lo_f, hi_f
        slow = ~fast
        lo[slow] = hi[slow] = betainccinv(a[slow], b[slow], tail[slow])
    # a part in 1e12 for rounding (of the exact inverse, of expit near 1)
    return lo * (1.0 - 1e-12), np.minimum(hi * (1.0 + 1e-12), 1.0)


def _upper_bounds(
    k: NDArray[np.float64], n: float | NDArray[np.float64], alpha: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bounds ``lo <= _upper_real(k, n, alpha) <= hi`` (elementwise; n a number or like k)."""
    size = np.broadcast_to(np.asarray(n, dtype=np.float64), k.shape)
    lo = np.ones(k.shape, dtype=np.float64)
    hi = np.ones(k.shape, dtype=np.float64)
    inside = k < size
    if inside.all():
        return _isf_bounds(k + 1.0, size - k, alpha)
    lo[inside], hi[inside] = _isf_bounds(k[inside] + 1.0, size[inside] - k[inside], alpha)
    return lo, hi


def _expected_bound_quadrature(
    e0: NDArray[np.float64],
    m0: int,
    e1: NDArray[np.float64],
    m1: int,
    n0: int,
    n1: int,
    alpha: float,
    delta: float,
    target: Target | None = None,
) -> NDArray[np.float64]:
    """:func:`expected_bound` by a ``K x K`` quadrature of the two predictive laws."""
    bounds = []
    for e, m, n in ((e0, m0, n0), (e1, m1, n1)):
        # each distinct count once: the nodes and their bounds depend on the count alone
        counts, inverse = np.unique(e, return_inverse=True)
        bounds.append(_upper_real(_predictive_nodes(counts, m, n), n, alpha)[inverse.reshape(-1)])
    u0, u1 = bounds[0][:, :, None], bounds[1][:, None, :]
    out: NDArray[np.float64] = _value(u0, u1, delta, target).mean(axis=(1, 2))
    return out


def _quadrature_rates(
    e0: NDArray[np.float64],
    m0: int,
    e1: NDArray[np.float64],
    m1: int,
    n0: int,
    n1: int,
    alpha: float,
) -> tuple[NDArray[np.float64], ...]:
    """Bounds ``lo0, hi0, lo1, hi1`` on the reserved bounds at the quadrature's nodes (cuts x nodes)."""
    rates: list[NDArray[np.float64]] = []
    for e, m, n in ((e0, m0, n0), (e1, m1, n1)):
        shape_a, shape_b = _node_shapes(e, m, n)
        a, b = np.broadcast_arrays(shape_a[:, None], shape_b[:, None], _node_levels())[:2]
        q_lo, q_hi = _isf_bounds(a, b, 1.0 - _node_levels())
        # the reserved bound rises with the node: bounds at the lower and upper node bound
        lo, hi = _upper_bounds(np.clip(n * np.stack([q_lo, q_hi]), 0.0, float(n)), float(n), alpha)
        rates += [lo[0], hi[1]]
    return tuple(rates)


def _quadrature_value(
    u0: NDArray[np.float64], u1: NDArray[np.float64], delta: float, target: Target | None
) -> NDArray[np.float64]:
    """The quadrature's mean of :func:`_bound_value` over pairs of nodes (bounds it, being monotone)."""
    # the value falls as either bound rises, and a rounded mean keeps the order of its terms
    out: NDArray[np.float64] = _bound_value(u0[:, :, None], u1[:, None, :], delta, target).mean(axis=(1, 2))
    return out


def pessimistic_bound(
    dev_errors_0: NDArray[np.float64],
    dev_n_0: int,
    dev_errors_1: NDArray[np.float64],
    dev_n_1: int,
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float = 0.0,
    dev_level: float = 0.05,
    *,
    target: Target | None = None,
    zero_rates: bool = False,
) -> NDArray[np.float64]:
    """The bound (Eq. 16) a threshold would certify if its error rates were as high as plausible.

    Parameters
    ----------
    dev_errors_0, dev_n_0, dev_errors_1, dev_n_1, n_class0, n_class1, alpha_per_rate, delta, target
        As in :func:`expected_bound`.
    dev_level : float, default 0.05
        One-sided level of the pessimistic development rates.
    zero_rates : bool, default False
        Take a development count of zero as a rate of zero (an event the development calls
        show never happens, such as a value one input never produced among values each counted
        often), not as its upper bound: its reserved count is then zero, and its bound rests
        on the reserve's size alone.

    Returns
    -------
    numpy.ndarray
        One value per candidate threshold.

    Notes
    -----
    Each error rate is replaced by its one-sided Clopper-Pearson upper bound at ``dev_level``
    from the development count (higher error rates lower both terms of Eq. 16); the reserved
    count is then taken at its mean under that rate and bounded as the evaluation will bound it.
    Searching thousands of thresholds by a plug-in or posterior-mean criterion picks, by chance,
    tail events whose few development counts look far apart (a winner's curse); the pessimistic
    rates discount exactly those, while events with many development counts keep nearly their
    plug-in value. Like every criterion here it ranks choices made before evaluation, so it
    affects power, never validity.

    Examples
    --------
    >>> v = pessimistic_bound(np.array([1.0, 40.0]), 1000, np.array([990.0, 600.0]), 1000,
    ...                       10**5, 10**5, 0.0125)
    >>> bool(v[1] > v[0])
    True
    """
    _check_plan(n_class0, n_class1, alpha_per_rate, delta)
    _check_level(dev_level)
    e0 = np.atleast_1d(np.asarray(dev_errors_0, dtype=np.float64))
    e1 = np.atleast_1d(np.asarray(dev_errors_1, dtype=np.float64))
    r0 = _upper_real(e0, int(dev_n_0), float(dev_level))
    r1 = _upper_real(e1, int(dev_n_1), float(dev_level))
    if zero_rates:
        r0, r1 = np.where(e0 == 0.0, 0.0, r0), np.where(e1 == 0.0, 0.0, r1)
    u0 = _upper_real(r0 * n_class0, int(n_class0), float(alpha_per_rate))
    u1 = _upper_real(r1 * n_class1, int(n_class1), float(alpha_per_rate))
    return _value(u0, u1, delta, target)


def _thinned_cuts(unique: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Candidate cuts (sorted unique scores, thinned to at most MAX_CUTS) and the score below each.

    ``unique`` holds the sorted distinct scores. A cut ``c`` predicts class 1 for scores
    ``>= c``; the returned threshold of a chosen cut is the midpoint to the next lower unique
    score, so it is the same test on every score between. Thinning keeps every rank near both
    ends (a geometric grid of ranks) and an even grid in between, because the best event of a
    strong mechanism is often a far tail.
    """
    below = np.concatenate([[unique[0] - 1.0], unique[:-1]])
    ranks = _thinned_ranks(unique.size)
    return unique[ranks], below[ranks]


def _sorted_unique(*runs: NDArray[np.float64]) -> NDArray[np.float64]:
    """The sorted distinct values of sorted arrays (a stable sort of their concatenation merges them)."""
    merged = np.concatenate(runs)
    merged.sort(kind="stable")  # in place: the concatenation is this call's own
    out: NDArray[np.float64] = merged[np.concatenate([[True], merged[1:] != merged[:-1]])]
    return out


def max_bound_cut(
    scores_0: NDArray[np.float64],
    scores_1: NDArray[np.float64],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float = 0.0,
    *,
    target: Target | None = None,
) -> tuple[float, float]:
    """The cut on oriented scores that maximizes :func:`expected_bound`, and that maximum.

    Parameters
    ----------
    scores_0, scores_1 : numpy.ndarray
        Oriented development scores (larger means class 1) of class 0 and class 1.
    n_class0, n_class1, alpha_per_rate, delta, target
        As in :func:`expected_bound`.

    Returns
    -------
    (float, float)
        The cut (predict class 1 when the oriented score is ``>=`` it; the midpoint to the next
        lower score) and its expected bound. When no cut has a positive expected bound, the
        Youden cut (maximal TPR - FPR) is returned with expected bound 0.

    Raises
    ------
    DataError
        If a class has no scores.

    Examples
    --------
    >>> cut, e = max_bound_cut(np.array([0.0, 1.0, 2.0]), np.array([3.0, 4.0, 5.0]), 30, 30, 0.01)
    >>> cut, round(e, 3) > 0
    (2.5, True)
    """
    s0 = np.asarray(scores_0, dtype=np.float64).reshape(-1)
    s1 = np.asarray(scores_1, dtype=np.float64).reshape(-1)
    if s0.size == 0 or s1.size == 0:
        raise DataError("scores_0 and scores_1 must each hold at least one score.")
    a, b = np.sort(s0), np.sort(s1)
    cut, value, _ = _best_oriented_cut(
        a, b, _sorted_unique(a, b), n_class0, n_class1, alpha_per_rate, delta, None, target
    )
    return cut, value


def _best_oriented_cut(
    s0: NDArray[np.float64],
    s1: NDArray[np.float64],
    unique: NDArray[np.float64],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float,
    dev_level: float | None = None,
    target: Target | None = None,
) -> tuple[float, float, float]:
    """Best cut on sorted oriented scores (``unique``: their distinct values): threshold, value, Youden."""
    cuts, below = _thinned_cuts(unique)
    fp = s0.size - np.searchsorted(s0, cuts, side="left")
    fn = np.searchsorted(s1, cuts, side="left")
    _check_plan(n_class0, n_class1, alpha_per_rate, delta)
    if dev_level is None:
        top, best = _max_expected(
            fp.astype(np.float64), s0.size, fn.astype(np.float64), s1.size, int(n_class0),
            int(n_class1), float(alpha_per_rate), float(delta), target,
        )
    else:
        _check_level(dev_level)
        top, _, best = _max_worst(
            [[(fp, s0.size, fn, s1.size)]], int(n_class0), int(n_class1), float(alpha_per_rate),
            float(delta), (float(dev_level),), target,
        )[0]
    youden = (1.0 - fn / s1.size) - fp / s0.size
    if top <= 0.0:
        best = int(np.argmax(youden))
    threshold = float(0.5 * (cuts[best] + below[best]))
    return threshold, max(top, 0.0), float(youden[best])


def _max_expected(
    e0: NDArray[np.float64],
    m0: int,
    e1: NDArray[np.float64],
    m1: int,
    n0: int,
    n1: int,
    alpha: float,
    delta: float,
    target: Target | None,
) -> tuple[float, int]:
    """The largest :func:`expected_bound` over cuts and its first cut (``(0.0, 0)`` when none is positive).

    Where :func:`expected_bound` takes its quadrature, the quadrature is bounded above at every
    cut and below at the few cuts of largest upper bound, from approximate beta quantiles
    (:func:`_isf_bounds`), and computed only where its upper bound reaches the largest lower
    bound: the result of computing it everywhere.
    """
    if e0.size * (n0 + 1) * (n1 + 1) <= EXACT_LIMIT:
        value = expected_bound(e0, m0, e1, m1, n0, n1, alpha, delta, target=target)
        best = int(np.argmax(value))
        return (float(value[best]), best) if value[best] > 0.0 else (0.0, 0)
    lo0, hi0, lo1, hi1 = _quadrature_rates(e0, m0, e1, m1, n0, n1, alpha)
    upper = _quadrature_value(lo0, lo1, delta, target)
    # lower bounds at the few largest upper bounds: the largest lower bound, nearly
    lead = np.argsort(-upper, kind="stable")[:_LOWER_AT]
    lower = _quadrature_value(hi0[lead], hi1[lead], delta, target)
    chosen = np.flatnonzero((upper > 0.0) & (upper >= lower.max()))
    if not chosen.size:
        return 0.0, 0
    value = _expected_bound_quadrature(e0[chosen], m0, e1[chosen], m1, n0, n1, alpha, delta, target)
    best = int(np.argmax(value))
    return (float(value[best]), int(chosen[best])) if value[best] > 0.0 else (0.0, 0)


def best_cut(
    scores_0: NDArray[np.float64],
    scores_1: NDArray[np.float64],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float = 0.0,
    *,
    dev_level: float | None = None,
    target: Target | None = None,
) -> tuple[int, float, float]:
    """The orientation and threshold that maximize the criterion, over both orientations.

    Parameters
    ----------
    scores_0, scores_1 : numpy.ndarray
        Development scores of class 0 and class 1 (not oriented).
    n_class0, n_class1, alpha_per_rate, delta
        As in :func:`expected_bound`.
    dev_level : float, optional
        None ranks cuts by :func:`expected_bound`; a level in (0, 1) ranks them by
        :func:`pessimistic_bound` at that level (robust when many cuts are searched).
    target : Target, optional
        As in :func:`expected_bound`.

    Returns
    -------
    (int, float, float)
        ``orientation`` (+1: predict class 1 when ``score >= threshold``; -1: when ``score <=
        threshold``), ``threshold`` in score units, and its expected bound (0 when no cut has a
        positive expected bound; the orientation and cut of the larger Youden index then).

    Raises
    ------
    DataError
        If a class has no scores.

    Notes
    -----
    Eq. 16 bounds the event a test predicts for class 1 and its complement; the two
    orientations cover the four one-sided events ``{s >= c}`` and ``{s <= c}`` for each class,
    so no event of the form "score beyond a cut" is left out. Ties: the higher expected bound,
    then orientation +1.

    Examples
    --------
    >>> best_cut(np.array([3.0, 4.0, 5.0]), np.array([0.0, 1.0, 2.0]), 30, 30, 0.01)[:2]
    (-1, 2.5)
    """
    s0 = np.asarray(scores_0, dtype=np.float64).reshape(-1)
    s1 = np.asarray(scores_1, dtype=np.float64).reshape(-1)
    if s0.size == 0 or s1.size == 0:
        raise DataError("scores_0 and scores_1 must each hold at least one score.")
    # sorted once: the scores of orientation -1 are those of +1 negated, in reverse order
    a, b = np.sort(s0), np.sort(s1)
    unique = _sorted_unique(a, b)
    up = _best_oriented_cut(a, b, unique, n_class0, n_class1, alpha_per_rate, delta, dev_level, target)
    down = _best_oriented_cut(
        -a[::-1], -b[::-1], -unique[::-1], n_class0, n_class1, alpha_per_rate, delta, dev_level, target
    )
    if (down[1], down[2]) > (up[1], up[2]):
        return -1, -down[0], down[1]
    return 1, up[0], up[1]


def robust_cut(
    halves: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float = 0.0,
    *,
    dev_level: float = 0.05,
    candidates: int = 1,
    target: Target | None = None,
) -> tuple[int, float, float, float]:
    """Orientation and threshold whose worst :func:`pessimistic_bound` over halves is largest.

    Parameters
    ----------
    halves : sequence of (scores_0, scores_1)
        Development scores of class 0 and class 1 from two (or more) independent halves.
    n_class0, n_class1, alpha_per_rate, delta
        As in :func:`expected_bound`.
    dev_level : float, default 0.05
        Level of the pessimistic development rates.
    candidates : int, default 1
        Number of scores whose cuts are searched side by side with this one (one per output
        coordinate, say); the relaxed level for few cuts applies only when all of them together
        have at most :data:`FEW_CUTS` cuts.
    target : Target, optional
        As in :func:`expected_bound`.

    Returns
    -------
    (int, float, float, float)
        ``orientation``, ``threshold`` (as in :func:`best_cut`), the criterion value (the
        smallest of the halves' pessimistic bounds there) and the same with plug-in rates
        (level 1/2) at that threshold. When no threshold has a positive pessimistic value, the
        threshold that is best with plug-in rates is returned, with criterion value 0.

    Raises
    ------
    DataError
        If a half has no scores of a class.

    Notes
    -----
    With thousands of thresholds searched, some tail event looks strong on any one sample by
    chance. Requiring the event to look strong on every half separately (the minimum over
    halves) makes such a fluke need to happen twice, independently, while a real effect shows
    in each half. Among few distinct scores (at most :data:`FEW_CUTS`), where chance has few
    events to pick from, the level is relaxed to :data:`FEW_CUTS_LEVEL`, so the choice is not
    pushed toward large events by caution alone; not when many scores are searched (a score
    per coordinate of a sparse vector, each with a few bins, would offer a fluke hundreds of
    chances at the relaxed level). Costs ``O(n log n)``: each half is sorted once
    and every candidate threshold is a binary search; the criterion itself (inverse incomplete
    beta functions) is bounded from approximate quantiles and evaluated exactly only on the
    thresholds that could beat the best one found, with the same result as evaluating all of
    them (``_max_worst``).

    Examples
    --------
    >>> h = (np.arange(40.0), np.arange(40.0) + 100.0)
    >>> robust_cut([h, h], 100, 100, 0.01)[:2]
    (1, 69.5)
    """
    return robust_cuts(
        [halves], n_class0, n_class1, alpha_per_rate, delta, dev_level=dev_level,
        candidates=candidates, target=target,
    )[0]


def robust_cuts(
    groups: Sequence[Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]]],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float = 0.0,
    *,
    dev_level: float = 0.05,
    candidates: int = 1,
    target: Target | None = None,
) -> list[tuple[int, float, float, float]]:
    """:func:`robust_cut` of each of several scores, searched in one pass.

    Parameters
    ----------
    groups : sequence of halves
        Per score, its halves as :func:`robust_cut` takes them.
    n_class0, n_class1, alpha_per_rate, delta, dev_level, candidates, target
        As in :func:`robust_cut`, for every score.

    Returns
    -------
    list of (int, float, float, float)
        Per score, what :func:`robust_cut` returns for it, to the last bit.

    Notes
    -----
    The criterion is bounded and evaluated for the cuts of every score at once, each score's
    best bound pruning its own cuts only, so each result is that of its own search: a score per
    coordinate costs one pass of the few dozen array operations of a search instead of one per
    coordinate, which dominate a search of a few thousand development calls.

    Only the scores with no positive cut at the pessimistic level have their cuts searched at
    plug-in rates; the others have their chosen cut valued there. Searching both levels for
    every score searched every cut twice, for a choice the plug-in level makes in few searches:
    49 of PrefixSum's 685 at 1e7 calls (615 of SparseVectorTechnique3's 1,110, where most
    coordinates show nothing).
    """
    blocks: list[list[_Side]] = []
    group_of: list[int] = []
    levels: list[tuple[float]] = []
    edges = []
    for g, halves in enumerate(groups):
        prepared = []
        for s0, s1 in halves:
            a = np.sort(np.asarray(s0, dtype=np.float64).reshape(-1))
            b = np.sort(np.asarray(s1, dtype=np.float64).reshape(-1))
            if a.size == 0 or b.size == 0:
                raise DataError("every half must hold scores of both classes.")
            prepared.append((a, b))
        unique = _sorted_unique(*(x for pair in prepared for x in pair))
        ranks = _thinned_ranks(unique.size)
        cuts = unique[ranks]
        below = np.where(ranks > 0, unique[np.maximum(ranks - 1, 0)], unique[0] - 1.0)
        above = np.where(ranks < unique.size - 1, unique[np.minimum(ranks + 1, unique.size - 1)],
                         unique[-1] + 1.0)
        for orientation in (1, -1):
            sides: list[_Side] = []
            for a, b in prepared:
                if orientation == 1:  # class 1 when score >= cut
                    fp = a.size - np.searchsorted(a, cuts, side="left")
                    fn = np.searchsorted(b, cuts, side="left")
                else:  # class 1 when score <= cut
                    fp = np.searchsorted(a, cuts, side="right")
                    fn = b.size - np.searchsorted(b, cuts, side="right")
                sides.append((fp, a.size, fn, b.size))
            blocks.append(sides)
            group_of.append(g)
        level = dev_level
        if cuts.size * max(int(candidates), 1) <= FEW_CUTS:  # a handful of events: less caution
            level = max(level, FEW_CUTS_LEVEL)
        _check_level(level)
        levels.append((float(level),))
        edges.append((cuts, below, above))
    _check_plan(n_class0, n_class1, alpha_per_rate, delta)
    plan = (int(n_class0), int(n_class1), float(alpha_per_rate), float(delta))
    found = [at[0] for at in _max_worst_groups(blocks, group_of, levels, *plan, target)]
    # at plug-in rates (level 1/2): where no threshold is positive at the pessimistic level (too
    # few development calls for the effect), every cut is searched, and the best is chosen, so
    # that the choice still follows the data; elsewhere only the chosen cut is valued
    plug_blocks: list[list[_Side]] = []
    plug_group: list[int] = []
    for g, (value, block, k) in enumerate(found):  # a score's blocks: orientations +1 and -1
        if value <= 0.0:
            plug_blocks += [blocks[2 * g], blocks[2 * g + 1]]
            plug_group += [g, g]
        else:
            plug_blocks.append([(fp[k : k + 1], m0, fn[k : k + 1], m1)
                                for fp, m0, fn, m1 in blocks[2 * g + block]])
            plug_group.append(g)
    at_half = _max_worst_groups(plug_blocks, plug_group, [(0.5,)] * len(groups), *plan, target)
    out = []
    for (cuts, below, above), (chosen, block, k), ((plug_in, plug_block, plug_k),) in zip(
        edges, found, at_half, strict=True
    ):
        if chosen <= 0.0:
            block, k = plug_block, plug_k
        orientation = 1 if block == 0 else -1
        edge = below[k] if orientation == 1 else above[k]
        out.append((orientation, float(0.5 * (cuts[k] + edge)), chosen, plug_in))
    return out


@final
class _RateTable:
    """Pessimistic reserved rates of the counts ``0 .. m`` computed so far, for one key."""

    __slots__ = ("hi", "known", "lo")

    def __init__(self, m: int) -> None:
        self.known = np.zeros(m + 1, dtype=bool)
        self.lo = np.empty(m + 1, dtype=np.float64)
        self.hi = np.empty(m + 1, dtype=np.float64)


@final
class _RateTables:
    """The :class:`_RateTable` of each ``(m, n, level, alpha, exact)``, least recently used out.

    At most ``rows`` counts in all (about 17 bytes each); thread-safe: a table two threads fill
    at once gets the same values from both.
    """

    def __init__(self, rows: int) -> None:
        self._tables: OrderedDict[tuple[int, int, float, float, bool], _RateTable] = OrderedDict()
        self._rows = 0
        self._limit = rows
        self._lock = threading.Lock()

    def get(self, key: tuple[int, int, float, float, bool]) -> _RateTable:
        """The table of ``key`` (a new, empty one the first time)."""
        with self._lock:
            table = self._tables.get(key)
            if table is not None:
                self._tables.move_to_end(key)
                return table
            table = self._tables[key] = _RateTable(key[0])
            self._rows += key[0] + 1
            while self._rows > self._limit and len(self._tables) > 1:
                old, _ = self._tables.popitem(last=False)
                self._rows -= old[0] + 1
            return table


_RATE_TABLE_ROWS: Final = 1 << 16
"""Development rows up to which a key's rates are kept (:func:`_pessimistic_rates`)."""

_RATE_TABLES: Final = _RateTables(1 << 19)


def _pessimistic_rates(
    requests: Sequence[_Request], alpha: float, *, exact: bool
) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Per request, bounds on (``exact``: twice the value of) the pessimistic reserved rate of each count.

    The rate of ``e`` errors among ``m`` development rows is that of :func:`pessimistic_bound`:
    the bound at ``alpha`` on ``n`` reserved rows of ``n`` times the bound at the development
    level of ``e`` among ``m``. It is a function of ``(e, m, n, level, alpha)`` alone, computed
    elementwise, so the value computed once is the value computed again: where ``m`` is at most
    :data:`_RATE_TABLE_ROWS`, the values are kept (:data:`_RATE_TABLES`) and only the counts
    not asked before are computed. An audit's searches ask the same few keys thousands of times
    (every pair of a screening round has the same calls per input, every score of every family
    the same halves). Where ``m`` is larger, a ``(m, n, level)`` with fewer possible counts
    than counts asked has each distinct count computed once. All are computed in one pass.
    """
    groups: dict[tuple[int, int, float], list[int]] = {}
    for i, request in enumerate(requests):
        groups.setdefault(request[:3], []).append(i)
    counts: list[NDArray[np.int64]] = []
    where: list[NDArray[np.int64] | slice] = [slice(0)] * len(requests)
    kept: list[tuple[_RateTable, list[int], NDArray[np.int64], int]] = []
    start = 0
    for key, group in groups.items():
        m = key[0]
        asked = [requests[i][3] for i in group]
        total = sum(x.size for x in asked)
        if m > _RATE_TABLE_ROWS and m + 1 > 2 * total:  # many possible counts: each as asked
            counts.append(np.concatenate(asked))
            for i, x in zip(group, asked, strict=True):
                where[i] = slice(start, start + x.size)
                start += x.size
            start -= total
        else:  # few possible counts (or a kept table): mark those asked
            mark = np.zeros(m + 1, dtype=bool)
            for x in asked:
                mark[x] = True
            if m <= _RATE_TABLE_ROWS:  # kept: compute the counts the table does not hold yet
                table = _RATE_TABLES.get((*key, alpha, exact))
                counts.append(np.flatnonzero(mark & ~table.known))
                kept.append((table, group, counts[-1], start))
            else:  # compute each count asked once
                position = np.cumsum(mark) - 1 + start
                counts.append(np.flatnonzero(mark))
                for i, x in zip(group, asked, strict=True):
                    where[i] = position[x]
        start += counts[-1].size
    e = np.concatenate([np.zeros(0), *counts]).astype(np.float64)
    rows, reserved, level = (
        np.concatenate(
            [np.zeros(0)] + [np.full(c.size, float(key[j])) for key, c in zip(groups, counts, strict=True)]
        )
        for j in range(3)
    )
    if exact:  # as pessimistic_bound computes it, to the last bit
        lo = hi = _upper_real(_upper_real(e, rows, level) * reserved, reserved, alpha)
    else:
        r_lo, r_hi = np.empty(e.size), np.empty(e.size)
        for value in {key[2] for key in groups}:
            at = level == value
            r_lo[at], r_hi[at] = _upper_bounds(e[at], rows[at], value)
        # the reserved bound rises with the rate: bound it at the rate's lower and upper bound
        both_lo, both_hi = _upper_bounds(
            np.concatenate([r_lo * reserved, r_hi * reserved]), np.tile(reserved, 2), alpha
        )
        lo, hi = both_lo[: e.size], both_hi[e.size:]
    out = [(lo[at], hi[at]) for at in where]
    for table, group, filled, offset in kept:
        table.lo[filled] = lo[offset : offset + filled.size]
        table.hi[filled] = hi[offset : offset + filled.size]
        table.known[filled] = True
        for i in group:
            out[i] = (table.lo[requests[i][3]], table.hi[requests[i][3]])
    return out


def _bound_value(
    u0: NDArray[np.float64], u1: NDArray[np.float64], delta: float, target: Target | None
) -> NDArray[np.float64]:
    """:func:`_value` for bounding it (bounds on rates above 0): as monotone, one logarithm for Eq. 16."""
    if target is not None:
        return _value(u0, u1, delta, target)
    ratio = np.maximum((1.0 - delta - u1) / u0, (1.0 - delta - u0) / u1)
    out: NDArray[np.float64] = np.log(np.maximum(ratio, 1.0))
    return out


def _batched(
    pairs: Sequence[tuple[NDArray[np.float64], NDArray[np.float64]]], delta: float, target: Target | None
) -> list[NDArray[np.float64]]:
    """:func:`_bound_value` of each pair of rate-bound arrays, in one evaluation."""
    sizes = np.cumsum([u0.size for u0, _ in pairs])
    if not pairs or not sizes[-1]:
        return [np.zeros(0) for _ in pairs]
    values = _bound_value(
        np.concatenate([u0 for u0, _ in pairs]), np.concatenate([u1 for _, u1 in pairs]), delta, target
    )
    return np.split(values, sizes[:-1])


def _inner(lo: NDArray[np.int64], hi: NDArray[np.int64], step: int) -> NDArray[np.int64]:
    """The points ``lo[i] + step * j`` strictly between ``lo[i]`` and ``hi[i]`` (j >= 1), run by run."""
    length = np.maximum((hi - lo - 1) // step, 0)
    offsets = np.cumsum(length) - length
    ranks = np.arange(int(length.sum()), dtype=np.int64) - np.repeat(offsets, length) + 1
    out: NDArray[np.int64] = np.repeat(lo, length) + step * ranks
    return out


def _max_worst(
    blocks: Sequence[Sequence[_Side]],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float,
    levels: Sequence[float],
    target: Target | None = None,
) -> list[tuple[float, int, int]]:
    """Per level, the largest over cuts of the smallest pessimistic bound over a block's halves.

    :func:`_max_worst_groups` of one group of blocks.
    """
    return _max_worst_groups(
        blocks, [0] * len(blocks), [tuple(levels)], n_class0, n_class1, alpha_per_rate, delta, target
    )[0]


def _max_worst_groups(
    blocks: Sequence[Sequence[_Side]],
    group_of: Sequence[int],
    levels: Sequence[Sequence[float]],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float,
    target: Target | None = None,
) -> list[list[tuple[float, int, int]]]:
    """Per group of blocks and level: the largest over cuts of the worst bound over a block's halves.

    ``group_of[j]`` is block ``j``'s group, numbered from 0; ``levels[g]`` are group ``g``'s
    levels, as many for every group. Each group is searched as if alone (its own largest lower
    bound prunes its cuts), all in one pass.

    Each block (an orientation, say) holds its halves' error counts at each of its cuts. Per
    group and level the result is ``(value, block, cut)``: the largest value and the first block
    (numbered within its group) and cut that reach it, blocks in order; ``(0.0, 0, 0)`` when
    every value is 0. It is the result of evaluating :func:`pessimistic_bound` at every cut, at a
    fraction of the cost. The two inverse incomplete beta functions behind each bound are
    approximated (:func:`_logit_quantile`) within an error bound tested against SciPy
    (:data:`_APPROX_ERROR`), which bounds a cut's value from below and above. Cuts are bounded
    on a grid first, every ``_STRIDES[0]``-th (every cut at once when there are few, or few
    possible counts and the criterion is Eq. 16): as the cut moves one way one error count
    only falls and the other only rises, and the value falls as either count rises, so the
    upper bound at the smaller end counts of a run between bounded cuts caps every cut inside
    it. Runs whose cap reaches the largest lower bound found (and exceeds 0) are bounded on the
    next, finer grid, down to every cut; the cuts whose upper bound reaches the largest lower
    bound are then evaluated exactly, each distinct count once.
    """
    n_levels = len(levels[0])
    keys = [(level, j) for level in range(n_levels) for j in range(len(blocks))]
    sizes = [block[0][0].size for block in blocks]
    rows = max(max(m0, m1) for block in blocks for _, m0, _, m1 in block)
    # few cuts, or few possible counts and a cheap criterion: every cut is bounded in one pass
    few = max(sizes) <= 8 * _STRIDES[0] or (target is None and rows <= _ONE_PASS_ROWS)
    strides = (1,) if few else _STRIDES
    cuts = {key: np.zeros(0, dtype=np.int64) for key in keys}
    upper = {key: np.zeros(0) for key in keys}
    lows: dict[tuple[int, int], list[tuple[NDArray[np.float64], NDArray[np.float64]]]] = {
        key: [(np.zeros(0), np.zeros(0)) for _ in blocks[key[1]]] for key in keys
    }
    best = {(level, g): 0.0 for level in range(n_levels) for g in range(len(levels))}
    runs: dict[tuple[int, int], tuple[NDArray[np.int64], NDArray[np.int64]]] = {}

    def rates(
        at: dict[tuple[int, int], NDArray[np.int64]], exact: bool
    ) -> dict[tuple[int, int], list[tuple[NDArray[np.float64], ...]]]:
        """Rate bounds ``(lo0, hi0, lo1, hi1)`` per key and half at the given cuts."""
        requests: list[_Request] = [
            request
            for (level, j), cut in at.items()
            for e0, m0, e1, m1 in blocks[j]
            for request in ((m0, n_class0, levels[group_of[j]][level], e0[cut]),
                            (m1, n_class1, levels[group_of[j]][level], e1[cut]))
        ]
        found = iter(_pessimistic_rates(requests, alpha_per_rate, exact=exact))
        return {key: [(*next(found), *next(found)) for _ in blocks[key[1]]] for key in at}

    def worst(
        pairs: dict[tuple[int, int], list[tuple[NDArray[np.float64], NDArray[np.float64]]]]
    ) -> dict[tuple[int, int], NDArray[np.float64]]:
        """The smallest over halves of :func:`_bound_value` of each key's pairs, in one evaluation."""
        flat = iter(_batched([pair for key in pairs for pair in pairs[key]], delta, target))
        return {key: np.min([next(flat) for _ in pairs[key]], axis=0) for key in pairs}

    for round_, stride in enumerate(strides):
        if round_ == 0:
            new = {key: _grid(sizes[key[1]], stride) for key in keys}
        else:
            # cap of each run: the upper bound at the smaller end count of each rate
            ends = {}
            for key, (lo, hi) in runs.items():
                at_lo, at_hi = np.searchsorted(cuts[key], lo), np.searchsorted(cuts[key], hi)
                ends[key] = [
                    (np.where(e0[lo] <= e0[hi], lo0[at_lo], lo0[at_hi]),
                     np.where(e1[lo] <= e1[hi], lo1[at_lo], lo1[at_hi]))
                    for (e0, _, e1, _), (lo0, lo1) in zip(blocks[key[1]], lows[key], strict=True)
                ]
            caps = worst(ends)
            new = {}
            for key, (lo, hi) in runs.items():
                keep = (caps[key] > 0.0) & (caps[key] >= best[key[0], group_of[key[1]]])
                runs[key] = (lo[keep], hi[keep])
                new[key] = _inner(lo[keep], hi[keep], stride)
        found = rates(new, exact=False)
        bounded = worst({key: [(lo0, lo1) for lo0, _, lo1, _ in found[key]] for key in new})
        # lower bounds at the few largest upper bounds: the largest lower bound, nearly
        lead = {key: np.argsort(-bounded[key], kind="stable")[:_LOWER_AT] for key in new}
        lower = worst(
            {key: [(hi0[lead[key]], hi1[lead[key]]) for _, hi0, _, hi1 in found[key]] for key in new}
        )
        for key in new:
            if lower[key].size:
                group = (key[0], group_of[key[1]])
                best[group] = max(best[group], float(lower[key].max()))
            order = np.argsort(np.concatenate([cuts[key], new[key]]), kind="stable")
            cuts[key] = np.concatenate([cuts[key], new[key]])[order]
            upper[key] = np.concatenate([upper[key], bounded[key]])[order]
            lows[key] = [
                (np.concatenate([lo0, f[0]])[order], np.concatenate([lo1, f[2]])[order])
                for (lo0, lo1), f in zip(lows[key], found[key], strict=True)
            ]
            if round_ == 0:
                lo, hi = new[key][:-1], new[key][1:]
            else:  # the kept runs, split at their new cuts
                points = _distinct(np.sort(np.concatenate([runs[key][0], runs[key][1], new[key]])))
                lo, hi = points[:-1], points[1:]
                run = np.searchsorted(runs[key][0], lo, side="right") - 1
                inside = (run >= 0) & (hi <= runs[key][1][np.maximum(run, 0)])
                lo, hi = lo[inside], hi[inside]
            runs[key] = (lo[hi - lo > 1], hi[hi - lo > 1])
    # a cut whose upper bound is below some cut's lower bound is not the largest; one whose
    # upper bound is 0 has the value 0 that the first cut has too
    chosen = {
        key: cuts[key][(upper[key] > 0.0) & (upper[key] >= best[key[0], group_of[key[1]]])]
        for key in keys
    }
    exact = rates(chosen, exact=True)
    out: list[list[tuple[float, int, int]]] = [[] for _ in levels]
    for g in range(len(levels)):
        members = [j for j in range(len(blocks)) if group_of[j] == g]
        for level in range(n_levels):
            values = []
            for j in members:
                value = np.full(chosen[level, j].size, np.inf)
                for u0, _, u1, _ in exact[level, j]:  # as pessimistic_bound evaluates it
                    value = np.minimum(value, _value(u0, u1, delta, target))
                values.append(value)
            top = max((float(v.max()) for v in values if v.size), default=0.0)
            if top <= 0.0:
                out[g].append((0.0, 0, 0))
                continue
            i = next(i for i, v in enumerate(values) if v.size and v.max() == top)
            out[g].append((top, i, int(chosen[level, members[i]][values[i] == top].min())))
    return out


@functools.lru_cache(maxsize=256)
def _thinned_ranks(size: int) -> NDArray[np.int64]:
    """Ranks of the candidate cuts among ``size`` sorted unique scores (all when few); read-only.

    Kept by size: the scores of one search (a score per coordinate, say) often have as many
    distinct values each.
    """
    if size <= MAX_CUTS:
        ranks = np.arange(size, dtype=np.int64)
    else:
        last = size - 1
        tail = _distinct(np.geomspace(1, size / 2, MAX_CUTS // 3).astype(np.int64))
        middle = np.linspace(0, last, MAX_CUTS // 3).astype(np.int64)
        ranks = _distinct(np.sort(np.concatenate([tail - 1, last - (tail - 1), middle])))
    ranks.flags.writeable = False
    return ranks


def _grid(size: int, stride: int) -> NDArray[np.int64]:
    """Every ``stride``-th index below ``size`` and the last (``np.union1d`` of the two, sorted)."""
    grid = np.arange(0, size, stride, dtype=np.int64)
    if grid[-1] == size - 1:
        return grid
    return np.append(grid, np.int64(size - 1))


def _distinct(ordered: NDArray[np.int64]) -> NDArray[np.int64]:
    """``np.unique`` of integers already in non-decreasing order, without its sort.

    An audit asks for cut ranks and grids of cuts thousands of times (746 times in PrefixSum's
    at 1e7 calls); ``np.unique`` of those few thousand integers took five times as long.
    """
    if ordered.size == 0:
        return ordered
    out: NDArray[np.int64] = ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])]
    return out
