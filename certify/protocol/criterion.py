"""The expected-bound criterion: which threshold (and family) a fixed test should use.

A certificate's power depends on the threshold fixed on development data. The criterion
:func:`expected_bound` ranks candidate thresholds by the certified bound (Eq. 16) they are
expected to give on the reserved draws, computed from development counts only;
:func:`max_bound_cut` and :func:`best_cut` maximize it over thresholds.

Cost: the exact expectation sums over every pair of reserved error counts, ``O(n0 n1)`` per
threshold; above :data:`EXACT_LIMIT` entries a quadrature of the same expectation is used
(``O(K^2)`` per threshold, ``K`` = :data:`QUADRATURE_NODES`), and long score lists are thinned
to at most :data:`MAX_CUTS` candidate thresholds, denser in both tails. Choosing a threshold
this way is then ``O(n log n)`` in the development scores. The criterion only ranks choices
made before evaluation: any fixed threshold gives a valid certificate, so an approximation
here can cost power, never validity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray
from scipy.special import betaln, gammaln
from scipy.stats import beta as beta_dist

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

_PRUNE_STRIDE: Final = 16
"""Grid step of the first pass of :func:`robust_cut`'s search over cuts (see ``_max_worst``)."""




def _upper_table(n: int, alpha: float) -> NDArray[np.float64]:
    """One-sided Clopper-Pearson upper bounds for k = 0..n errors among n."""
    k = np.arange(n + 1, dtype=np.float64)
    out = np.ones(n + 1, dtype=np.float64)
    out[:-1] = beta_dist.ppf(1.0 - alpha, k[:-1] + 1.0, n - k[:-1])
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


def _predictive_nodes(errors: NDArray[np.float64], m: int, n: int) -> NDArray[np.float64]:
    """Equal-probability quantiles of the predictive law of a reserved error count (per cut).

    The beta-binomial law of :func:`_predictive` is matched in mean and variance by a Beta law
    on the rate (scaled by ``n``); its quantiles at ``(i + 1/2) / K`` are the nodes. The Beta
    shape keeps rare events (counts near zero) right, where a normal approximation would not.
    """
    a = errors + 0.5
    b = (m - errors) + 0.5
    mean = a / (a + b)
    var = mean * (1.0 - mean) * (a + b + n) / (n * (a + b + 1.0))
    size = mean * (1.0 - mean) / var - 1.0
    levels = (np.arange(QUADRATURE_NODES, dtype=np.float64) + 0.5) / QUADRATURE_NODES
    q = beta_dist.ppf(levels[None, :], (mean * size)[:, None], ((1.0 - mean) * size)[:, None])
    out: NDArray[np.float64] = np.clip(n * q, 0.0, float(n))
    return out


def _upper_real(k: NDArray[np.float64], n: int, alpha: float) -> NDArray[np.float64]:
    """Clopper-Pearson upper bounds at real-valued counts (the integer bounds, interpolated)."""
    out = np.ones_like(k)
    inside = k < n
    out[inside] = beta_dist.isf(alpha, k[inside] + 1.0, n - k[inside])
    return out


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
    u0 = _upper_real(_predictive_nodes(e0, m0, n0), n0, alpha)[:, :, None]
    u1 = _upper_real(_predictive_nodes(e1, m1, n1), n1, alpha)[:, None, :]
    out: NDArray[np.float64] = _value(u0, u1, delta, target).mean(axis=(1, 2))
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
) -> NDArray[np.float64]:
    """The bound (Eq. 16) a threshold would certify if its error rates were as high as plausible.

    Parameters
    ----------
    dev_errors_0, dev_n_0, dev_errors_1, dev_n_1, n_class0, n_class1, alpha_per_rate, delta, target
        As in :func:`expected_bound`.
    dev_level : float, default 0.05
        One-sided level of the pessimistic development rates.

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
    if not 0.0 < float(dev_level) < 1.0:
        raise ParameterError(f"dev_level must be a number in (0, 1); got {dev_level!r}.")
    e0 = np.atleast_1d(np.asarray(dev_errors_0, dtype=np.float64))
    e1 = np.atleast_1d(np.asarray(dev_errors_1, dtype=np.float64))
    r0 = _upper_real(e0, int(dev_n_0), float(dev_level))
    r1 = _upper_real(e1, int(dev_n_1), float(dev_level))
    u0 = _upper_real(r0 * n_class0, int(n_class0), float(alpha_per_rate))
    u1 = _upper_real(r1 * n_class1, int(n_class1), float(alpha_per_rate))
    return _value(u0, u1, delta, target)


def _candidate_cuts(values: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Candidate cuts (sorted unique scores, thinned to at most MAX_CUTS) and the score below each.

    A cut ``c`` predicts class 1 for scores ``>= c``; the returned threshold of a chosen cut is
    the midpoint to the next lower unique score, so it is the same test on every score between.
    Thinning keeps every rank near both ends (a geometric grid of ranks) and an even grid in
    between, because the best event of a strong mechanism is often a far tail.
    """
    unique = np.unique(values)
    below = np.concatenate([[unique[0] - 1.0], unique[:-1]])
    if unique.size <= MAX_CUTS:
        return unique, below
    last = unique.size - 1
    tail = np.unique(np.geomspace(1, unique.size / 2, MAX_CUTS // 3).astype(np.int64))
    middle = np.linspace(0, last, MAX_CUTS // 3).astype(np.int64)
    ranks = np.unique(np.concatenate([tail - 1, last - (tail - 1), middle]))
    return unique[ranks], below[ranks]


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
    cut, value, _ = _best_oriented_cut(s0, s1, n_class0, n_class1, alpha_per_rate, delta, None, target)
    return cut, value


def _best_oriented_cut(
    s0: NDArray[np.float64],
    s1: NDArray[np.float64],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float,
    dev_level: float | None = None,
    target: Target | None = None,
) -> tuple[float, float, float]:
    """Best cut on oriented scores: ``(threshold, criterion value, Youden index there)``."""
    cuts, below = _candidate_cuts(np.concatenate([s0, s1]))
    fp = s0.size - np.searchsorted(np.sort(s0), cuts, side="left")
    fn = np.searchsorted(np.sort(s1), cuts, side="left")
    if dev_level is None:
        value = expected_bound(fp.astype(np.float64), s0.size, fn.astype(np.float64), s1.size,
                               n_class0, n_class1, alpha_per_rate, delta, target=target)
    else:
        value = pessimistic_bound(fp.astype(np.float64), s0.size, fn.astype(np.float64), s1.size,
                                  n_class0, n_class1, alpha_per_rate, delta, dev_level, target=target)
    youden = (1.0 - fn / s1.size) - fp / s0.size
    best = int(np.argmax(value)) if float(value.max()) > 0.0 else int(np.argmax(youden))
    threshold = float(0.5 * (cuts[best] + below[best]))
    return threshold, float(max(value[best], 0.0)), float(youden[best])


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
    up = _best_oriented_cut(s0, s1, n_class0, n_class1, alpha_per_rate, delta, dev_level, target)
    down = _best_oriented_cut(-s0, -s1, n_class0, n_class1, alpha_per_rate, delta, dev_level, target)
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
        (level 1/2). When no threshold has a positive pessimistic value, the threshold that is
        best with plug-in rates is returned, with criterion value 0.

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
    beta functions) is evaluated only on the thresholds that could beat the best one found,
    with the same result as evaluating all of them (``_max_worst``).

    Examples
    --------
    >>> h = (np.arange(40.0), np.arange(40.0) + 100.0)
    >>> robust_cut([h, h], 100, 100, 0.01)[:2]
    (1, 69.5)
    """
    prepared = []
    for s0, s1 in halves:
        a = np.sort(np.asarray(s0, dtype=np.float64).reshape(-1))
        b = np.sort(np.asarray(s1, dtype=np.float64).reshape(-1))
        if a.size == 0 or b.size == 0:
            raise DataError("every half must hold scores of both classes.")
        prepared.append((a, b))
    # the halves are sorted: a stable sort of their concatenation merges the runs
    merged = np.sort(np.concatenate([x for pair in prepared for x in pair]), kind="stable")
    unique = merged[np.concatenate([[True], merged[1:] != merged[:-1]])]
    ranks = _thinned_ranks(unique.size)
    cuts = unique[ranks]
    below = np.where(ranks > 0, unique[np.maximum(ranks - 1, 0)], unique[0] - 1.0)
    above = np.where(ranks < unique.size - 1, unique[np.minimum(ranks + 1, unique.size - 1)],
                     unique[-1] + 1.0)
    counts: list[tuple[int, NDArray[np.float64], int, NDArray[np.float64], int]] = []
    for orientation in (1, -1):
        for a, b in prepared:
            if orientation == 1:  # class 1 when score >= cut
                fp = a.size - np.searchsorted(a, cuts, side="left")
                fn = np.searchsorted(b, cuts, side="left")
            else:  # class 1 when score <= cut
                fp = np.searchsorted(a, cuts, side="right")
                fn = b.size - np.searchsorted(b, cuts, side="right")
            counts.append((orientation, fp.astype(np.float64), a.size, fn.astype(np.float64), b.size))
    # when no threshold is positive at the pessimistic level (too few development calls for
    # the effect), rank by the plain plug-in rates (level 1/2) instead, so that the choice still
    # follows the data; the pessimistic value is then 0 and the plug-in value breaks ties
    if cuts.size * max(int(candidates), 1) <= FEW_CUTS:  # a handful of events: less caution
        dev_level = max(dev_level, FEW_CUTS_LEVEL)
    found: dict[float, tuple[float, int, int]] = {}
    for level in (dev_level, 0.5):
        best = (-1.0, 1, 0)
        for orientation in (1, -1):
            sides = [(e0, m0, e1, m1) for o, e0, m0, e1, m1 in counts if o == orientation]
            value, k = _max_worst(
                sides, n_class0, n_class1, alpha_per_rate, delta, level, best[0], target
            )
            if value > best[0]:
                best = (value, orientation, k)
        found[level] = best
    chosen, orientation, k = found[dev_level]
    plug_in = found[0.5][0]
    if chosen <= 0.0:
        _, orientation, k = found[0.5]
    edge = below[k] if orientation == 1 else above[k]
    return orientation, float(0.5 * (cuts[k] + edge)), max(chosen, 0.0), max(plug_in, 0.0)


def _max_worst(
    sides: Sequence[tuple[NDArray[np.float64], int, NDArray[np.float64], int]],
    n_class0: int,
    n_class1: int,
    alpha_per_rate: float,
    delta: float,
    level: float,
    floor: float,
    target: Target | None = None,
) -> tuple[float, int]:
    """The largest, over cuts, of the smallest pessimistic bound over halves, and its first cut.

    ``sides`` holds each half's error counts at every cut (``e0, m0, e1, m1``). Only a largest
    value above ``floor`` is sought (the best of the other orientation): when it is at most
    ``floor``, some value at most ``floor`` is returned. The result is that of evaluating
    every cut, at a fraction of the cost (each evaluation is four inverse
    incomplete beta functions): as the cut moves one way, one error count only falls and the
    other only rises, and the bound falls as either count rises, so the bound at the smaller
    end counts of a run of cuts caps every cut inside it. Cuts on a grid every
    :data:`_PRUNE_STRIDE` are evaluated first; then every run between evaluated cuts whose
    cap reaches the best value found and exceeds ``floor`` and 0 (the first cut, evaluated,
    already holds the value 0 that every cut is floored at) is cut in four, until no such run
    is left.
    """

    def worst(e0s: list[NDArray[np.float64]], e1s: list[NDArray[np.float64]]) -> NDArray[np.float64]:
        out = np.full(e0s[0].size, np.inf)
        for (_, m0, _, m1), e0, e1 in zip(sides, e0s, e1s, strict=True):
            out = np.minimum(
                out,
                pessimistic_bound(
                    e0, m0, e1, m1, n_class0, n_class1, alpha_per_rate, delta, level, target=target
                ),
            )
        return out

    size = sides[0][0].size
    if size <= 4 * _PRUNE_STRIDE:
        values = worst([s[0] for s in sides], [s[2] for s in sides])
        k = int(np.argmax(values))
        return float(values[k]), k
    cuts = np.unique(np.concatenate([np.arange(0, size, _PRUNE_STRIDE), [size - 1]]))
    values = worst([s[0][cuts] for s in sides], [s[2][cuts] for s in sides])
    lo, hi = cuts[:-1], cuts[1:]
    while lo.size:
        best = float(values.max())
        cap = worst(
            [np.minimum(s[0][lo], s[0][hi]) for s in sides],
            [np.minimum(s[2][lo], s[2][hi]) for s in sides],
        )
        # a relative margin keeps a run whose cap ties the best up to rounding of the beta inverse
        keep = (cap > max(floor, 0.0)) & (cap >= best - 1e-9 * max(best, 1.0)) & (hi - lo > 1)
        lo, hi = lo[keep], hi[keep]
        if not lo.size:
            break
        # each run left is cut in four: its three inner cut points are evaluated
        step = np.maximum((hi - lo) // 4, 1)
        points = lo[:, None] + step[:, None] * np.arange(1, 4)[None, :]
        inside = points < hi[:, None]
        new = points[inside]
        cuts = np.concatenate([cuts, new])
        values = np.concatenate([values, worst([s[0][new] for s in sides], [s[2][new] for s in sides])])
        bounds = np.concatenate([lo[:, None], np.where(inside, points, hi[:, None]), hi[:, None]], axis=1)
        lo, hi = bounds[:, :-1].reshape(-1), bounds[:, 1:].reshape(-1)
        lo, hi = lo[hi - lo > 1], hi[hi - lo > 1]
    top = float(values.max())
    return top, int(cuts[values == top].min())


def _thinned_ranks(size: int) -> NDArray[np.int64]:
    """Ranks of the candidate cuts among ``size`` sorted unique scores (all when few)."""
    if size <= MAX_CUTS:
        return np.arange(size, dtype=np.int64)
    last = size - 1
    tail = np.unique(np.geomspace(1, size / 2, MAX_CUTS // 3).astype(np.int64))
    middle = np.linspace(0, last, MAX_CUTS // 3).astype(np.int64)
    return np.unique(np.concatenate([tail - 1, last - (tail - 1), middle]))
