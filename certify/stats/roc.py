"""Empirical ROC curves, AUC, the ROC-HT conversion (Eq. 15) and out-of-fold classifier scores.

Orientation is fixed throughout: class 0 (``scores_0``, ``x_a``) is the negative class, whose rate
above a threshold is the false-positive rate; class 1 (``scores_1``, ``x_b``) is the positive class.
A rule predicts class 1 when ``score >= t``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from fractions import Fraction
from typing import Final, NamedTuple

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify._sklearn import (
    Classifier,
    Response,
    default_estimator,
    out_of_fold,
    response_of,
    stratified_folds,
)
from certify.errors import DataError, ParameterError
from certify.stats._checks import as_rows as _as_rows_checked

__all__ = [
    "RocCounts",
    "RocEpsilon",
    "auc",
    "empirical_roc",
    "out_of_fold_scores",
    "roc_counts",
    "roc_epsilon",
    "roc_epsilon_from_counts",
]

#: Float ratios within this relative distance of the largest are compared in exact arithmetic.
_CANDIDATE_SLACK: Final = 1e-9
#: Float numerators closer to 0 than this get their sign decided in exact arithmetic.
_SIGN_SLACK: Final = 1e-9


class RocCounts(NamedTuple):
    """Integer counts at every operating point of an empirical ROC curve."""

    false_positives: NDArray[np.int64]
    """Class-0 scores ``>= thresholds[i]``."""
    true_positives: NDArray[np.int64]
    """Class-1 scores ``>= thresholds[i]``."""
    n_negative: int
    """Number of class-0 scores."""
    n_positive: int
    """Number of class-1 scores."""
    thresholds: NDArray[np.float64]
    """``+inf`` then every distinct score, decreasing."""


@attrs.frozen
class RocEpsilon:
    """The value of Eq. 15 and where on the ROC curve it is attained (plain numbers, immutable)."""

    value: float
    """Eq. 15, ``max_i {0, ln((1-delta-FPR_i)/(1-TPR_i)), ln((TPR_i-delta)/FPR_i)}``; may be inf."""
    index: int | None
    """Operating point attaining the maximum; ``None`` when the maximum is the 0 term."""
    fpr: float | None
    """False-positive rate at ``index`` (``None`` with it)."""
    tpr: float | None
    """True-positive rate at ``index`` (``None`` with it)."""
    infinite_by_endpoint: bool
    """``value`` is inf from a zero-denominator endpoint while the exact corner (0, 1) is absent."""
    exact_corner: bool
    """Some operating point is exactly ``(FPR, TPR) = (0, 1)``: perfect observed separation."""


# ----------------------------------------------------------------------------------- validation


def _as_scores(name: str, scores: ArrayLike) -> NDArray[np.float64]:
    """Validate scores: a non-empty finite 1-D float array."""
    try:
        arr = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"{name} must be a 1-D array of real numbers; got {type(scores).__name__} ({exc})."
        ) from exc
    if arr.ndim != 1:
        raise DataError(
            f"{name} must be a 1-D array of scores; got shape {arr.shape!r}. "
            "Pass one score per sample, e.g. scores.ravel()."
        )
    if arr.size == 0:
        raise DataError(f"{name} must contain at least 1 score; got an empty array.")
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise DataError(
            f"{name} must contain only finite scores; got {bad} NaN or infinite values. "
            "Use a classifier response that is finite (predict_proba or decision_function)."
        )
    return arr




def _check_delta(delta: float) -> Fraction:
    """Validate ``delta`` in [0, 1) and return its exact rational value."""
    if (
        isinstance(delta, bool)
        or not isinstance(delta, numbers.Real)
        or not math.isfinite(delta)
        or not 0.0 <= delta < 1.0
    ):
        raise ParameterError(f"delta must be a number in [0, 1); got {delta!r}.")
    return Fraction(float(delta))


def _check_rates(name: str, rates: ArrayLike) -> NDArray[np.float64]:
    """Validate a vector of rates: finite, 1-D, non-empty, inside [0, 1]."""
    try:
        arr = np.asarray(rates, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ParameterError(
            f"{name} must be a 1-D array of rates in [0, 1]; got {type(rates).__name__} ({exc})."
        ) from exc
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(
            f"{name} must be a non-empty 1-D array of rates in [0, 1]; got shape {arr.shape!r}."
        )
    outside = ~((arr >= 0.0) & (arr <= 1.0))
    if np.any(outside):
        first = float(arr[np.argmax(outside)])
        raise ParameterError(
            f"{name} must contain only rates in [0, 1]; got {first!r} at index {int(np.argmax(outside))}."
        )
    return arr


# ----------------------------------------------------------------------------------- ROC curves


def roc_counts(scores_0: ArrayLike, scores_1: ArrayLike) -> RocCounts:
    """Integer error counts at every operating point of the empirical ROC curve.

    Parameters
    ----------
    scores_0 : array_like, shape (n0,)
        Scores of the negative class (class 0), finite, ``n0 >= 1``.
    scores_1 : array_like, shape (n1,)
        Scores of the positive class (class 1), finite, ``n1 >= 1``.

    Returns
    -------
    RocCounts
        ``thresholds`` is ``+inf`` followed by every distinct score in decreasing order;
        ``false_positives[i] = #{scores_0 >= thresholds[i]}`` and
        ``true_positives[i] = #{scores_1 >= thresholds[i]}``. The first point is (0, 0) and the last
        is (n0, n1). Tied scores form one operating point.

    Raises
    ------
    DataError
        If either score vector is empty, not 1-D, or not finite.

    Notes
    -----
    These are the operating points of every rule "predict class 1 when ``score >= t``"; no
    randomized rule between points is added.

    Examples
    --------
    >>> c = roc_counts([0.1, 0.4], [0.4, 0.8])
    >>> c.false_positives.tolist(), c.true_positives.tolist()
    ([0, 0, 1, 2], [0, 1, 2, 2])
    """
    s0 = np.sort(_as_scores("scores_0", scores_0))
    s1 = np.sort(_as_scores("scores_1", scores_1))
    distinct = np.unique(np.concatenate([s0, s1]))[::-1]
    thresholds = np.concatenate([[np.inf], distinct])
    fp = (len(s0) - np.searchsorted(s0, thresholds, side="left")).astype(np.int64)
    tp = (len(s1) - np.searchsorted(s1, thresholds, side="left")).astype(np.int64)
    return RocCounts(fp, tp, len(s0), len(s1), thresholds)


def empirical_roc(
    scores_0: ArrayLike, scores_1: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Empirical ROC curve: false- and true-positive rates at every distinct threshold.

    Parameters
    ----------
    scores_0 : array_like, shape (n0,)
        Scores of the negative class (class 0).
    scores_1 : array_like, shape (n1,)
        Scores of the positive class (class 1).

    Returns
    -------
    fpr : ndarray of float64
        ``#{scores_0 >= t} / n0`` for each threshold, nondecreasing from 0 to 1.
    tpr : ndarray of float64
        ``#{scores_1 >= t} / n1`` for each threshold, nondecreasing from 0 to 1.
    thresholds : ndarray of float64
        ``+inf`` (the (0, 0) point) followed by every distinct score, decreasing.

    Raises
    ------
    DataError
        If either score vector is empty, not 1-D, or not finite.

    Notes
    -----
    Each rate is the correctly rounded quotient of two integer counts (see :func:`roc_counts`), so
    the endpoints 0 and 1 are exact. This matches ``sklearn.metrics.roc_curve(...,
    drop_intermediate=False)`` with class 1 as the positive label.

    Examples
    --------
    >>> fpr, tpr, thr = empirical_roc([0.1, 0.4], [0.4, 0.8])
    >>> fpr.tolist(), tpr.tolist()
    ([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0])
    """
    counts = roc_counts(scores_0, scores_1)
    fpr = counts.false_positives / np.float64(counts.n_negative)
    tpr = counts.true_positives / np.float64(counts.n_positive)
    return fpr, tpr, counts.thresholds


def auc(scores_0: ArrayLike, scores_1: ArrayLike) -> float:
    """Area under the empirical ROC curve (Mann-Whitney, ties counted 1/2).

    Parameters
    ----------
    scores_0 : array_like, shape (n0,)
        Scores of the negative class (class 0).
    scores_1 : array_like, shape (n1,)
        Scores of the positive class (class 1).

    Returns
    -------
    float
        ``(#{s1 > s0} + #{s1 == s0} / 2) / (n0 n1)`` over all cross pairs, in [0, 1].

    Raises
    ------
    DataError
        If either score vector is empty, not 1-D, or not finite.

    Notes
    -----
    Equals the trapezoidal area under :func:`empirical_roc`. The count is kept in integers and
    divided once (correctly rounded), so the value is exact up to that single rounding. AUC is a
    descriptive separability measure with no DP meaning of its own.

    Examples
    --------
    >>> auc([0.1, 0.4], [0.4, 0.8])
    0.875
    """
    s0 = np.sort(_as_scores("scores_0", scores_0))
    s1 = np.sort(_as_scores("scores_1", scores_1))  # sorted queries: cache-friendly searches
    below = np.searchsorted(s0, s1, side="left").astype(np.int64)
    at_or_below = np.searchsorted(s0, s1, side="right").astype(np.int64)
    twice_u = int(below.sum()) + int(at_or_below.sum())
    return twice_u / (2 * len(s0) * len(s1))


# ------------------------------------------------------------------------------------- Eq. 15


def _eq15(
    fpr: NDArray[np.float64],
    tpr: NDArray[np.float64],
    fpr_exact: Callable[[int], Fraction],
    tpr_exact: Callable[[int], Fraction],
    delta: Fraction,
) -> RocEpsilon:
    """Eq. 15 from float rates (for screening) and their exact rational values (for decisions)."""
    d = float(delta)
    at_zero_fpr = fpr == 0.0
    at_one_tpr = tpr == 1.0
    corner_idx = np.flatnonzero(at_zero_fpr & at_one_tpr)
    corner = corner_idx.size > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        num_a = (1.0 - d) - fpr
        num_b = tpr - d
    pos_a = num_a > 0.0
    pos_b = num_b > 0.0
    forced = np.zeros(len(fpr), dtype=bool)
    if delta != 0:
        near_a = np.flatnonzero(np.abs(num_a) <= _SIGN_SLACK)
        near_b = np.flatnonzero(np.abs(num_b) <= _SIGN_SLACK)
        for i in near_a.tolist():
            pos_a[i] = 1 - delta - fpr_exact(i) > 0
        for i in near_b.tolist():
            pos_b[i] = tpr_exact(i) - delta > 0
        forced[near_a] = True
        forced[near_b] = True
    infinite = (pos_a & at_one_tpr) | (pos_b & at_zero_fpr)
    if np.any(infinite):
        hit = int(corner_idx[0]) if corner else int(np.flatnonzero(infinite)[0])
        return RocEpsilon(math.inf, hit, float(fpr[hit]), float(tpr[hit]), not corner, corner)
    finite_a = pos_a & ~at_one_tpr
    finite_b = pos_b & ~at_zero_fpr
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio_a = np.where(finite_a, num_a / (1.0 - tpr), -np.inf)
        ratio_b = np.where(finite_b, num_b / fpr, -np.inf)
    ratio = np.maximum(ratio_a, ratio_b)
    top = float(ratio.max())
    # Screen in floats, decide among the near-maximal (and sign-uncertain) points exactly.
    candidates = ((ratio >= top * (1.0 - _CANDIDATE_SLACK)) & (ratio > -np.inf)) | (
        forced & (finite_a | finite_b)
    )
    best: Fraction | None = None
    best_i = -1
    for i in np.flatnonzero(candidates).tolist():
        terms = []
        if finite_a[i]:
            terms.append((1 - delta - fpr_exact(i)) / (1 - tpr_exact(i)))
        if finite_b[i]:
            terms.append((tpr_exact(i) - delta) / fpr_exact(i))
        exact = max(terms)
        if best is None or exact > best:
            best, best_i = exact, i
    if best is None or best <= 1:
        return RocEpsilon(0.0, None, None, None, False, corner)
    value = math.log(float(best))
    return RocEpsilon(value, best_i, float(fpr[best_i]), float(tpr[best_i]), False, corner)


def roc_epsilon(fpr: ArrayLike, tpr: ArrayLike, delta: float = 0.0) -> RocEpsilon:
    """ROC-HT conversion of an ROC curve to an epsilon value (paper Eq. 15).

    Parameters
    ----------
    fpr : array_like, shape (k,)
        False-positive rates of the operating points, in [0, 1].
    tpr : array_like, shape (k,)
        True-positive rates of the same points, in [0, 1].
    delta : float, default 0.0
        The ``delta`` of the ``(epsilon, delta)`` inequalities, in [0, 1).

    Returns
    -------
    RocEpsilon
        ``value = max_i {0, ln((1 - delta - FPR_i) / (1 - TPR_i)), ln((TPR_i - delta) / FPR_i)}``
        (may be ``+inf``), the maximizing point, and the endpoint and exact-corner flags.

    Raises
    ------
    ParameterError
        If the rates are not non-empty 1-D arrays of equal length in [0, 1], or ``delta`` is not
        in [0, 1).

    Notes
    -----
    Endpoint rules (Sec. 4.4): a term with a nonpositive numerator is omitted; a positive
    numerator over a zero denominator gives ``+inf``; ``0/0`` is omitted. The given floats are
    taken as exact numbers: endpoint tests, numerator signs and the choice of the maximum are made
    in exact rational arithmetic, and the value is ``log`` of the correctly rounded maximal ratio.
    Prefer :func:`roc_epsilon_from_counts` when the integer counts are at hand; it avoids the
    rounding of ``k / n`` altogether.

    For population error rates of any test, every ``(epsilon, delta)``-DP mechanism satisfies the
    inequalities behind each term (Kairouz, Oh and Viswanath), so the value is a valid lower bound
    on ``epsilon`` for the population ROC. On an empirical, data-dependent ROC (e.g. out-of-fold
    scores) it is a descriptive value only: no confidence, and ``+inf`` at a finite-sample endpoint
    does not imply perfect population separation (``infinite_by_endpoint``).

    Examples
    --------
    >>> r = roc_epsilon([0.0, 0.25, 1.0], [0.0, 0.75, 1.0])
    >>> round(r.value, 6), r.index
    (1.098612, 1)
    >>> roc_epsilon([0.0, 0.0, 0.5, 1.0], [0.0, 0.5, 1.0, 1.0]).infinite_by_endpoint
    True
    """
    f = _check_rates("fpr", fpr)
    t = _check_rates("tpr", tpr)
    if f.shape != t.shape:
        raise ParameterError(
            f"tpr must have the same length as fpr ({len(f)}); got {len(t)}. "
            "Pass the two coordinates of the same operating points."
        )
    exact_delta = _check_delta(delta)
    return _eq15(f, t, lambda i: Fraction(float(f[i])), lambda i: Fraction(float(t[i])), exact_delta)


def roc_epsilon_from_counts(
    false_positives: ArrayLike,
    true_positives: ArrayLike,
    n_negative: int,
    n_positive: int,
    delta: float = 0.0,
) -> RocEpsilon:
    """Eq. 15 from integer counts, with exact rates ``FP_i / n_negative`` and ``TP_i / n_positive``.

    Parameters
    ----------
    false_positives : array_like of int, shape (k,)
        Class-0 samples at or above each threshold, in ``[0, n_negative]``.
    true_positives : array_like of int, shape (k,)
        Class-1 samples at or above each threshold, in ``[0, n_positive]``.
    n_negative : int
        Number of class-0 samples, ``>= 1``.
    n_positive : int
        Number of class-1 samples, ``>= 1``.
    delta : float, default 0.0
        In [0, 1).

    Returns
    -------
    RocEpsilon
        As :func:`roc_epsilon`; ``fpr`` and ``tpr`` are the rounded rates at the maximizing point.

    Raises
    ------
    ParameterError
        If the counts are not integers in range, the arrays differ in length or are empty, or
        ``delta`` is not in [0, 1).

    Notes
    -----
    Same rules and meaning as :func:`roc_epsilon`. All decisions use the exact rationals
    ``FP_i / n_negative`` and ``TP_i / n_positive``; the value is ``log`` of the correctly rounded
    maximal ratio, so it is reproducible bit for bit from the counts.

    Examples
    --------
    >>> c = roc_counts([0.1, 0.4], [0.4, 0.8])
    >>> r = roc_epsilon_from_counts(c.false_positives, c.true_positives, c.n_negative, c.n_positive)
    >>> r.value, r.exact_corner, r.infinite_by_endpoint
    (inf, False, True)
    """
    for name, value in (("n_negative", n_negative), ("n_positive", n_positive)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ParameterError(f"{name} must be an integer >= 1; got {value!r}.")
    n0, n1 = int(n_negative), int(n_positive)
    arrays = []
    for name, counts, limit in (
        ("false_positives", false_positives, n0),
        ("true_positives", true_positives, n1),
    ):
        arr = np.asarray(counts)
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
            raise ParameterError(
                f"{name} must be a non-empty 1-D array of integers; got shape {arr.shape!r} "
                f"and dtype {arr.dtype}."
            )
        if np.any((arr < 0) | (arr > limit)):
            raise ParameterError(
                f"{name} must be counts in [0, {limit}]; got values from {int(arr.min())} "
                f"to {int(arr.max())}."
            )
        arrays.append(arr.astype(np.int64))
    fp, tp = arrays
    if fp.shape != tp.shape:
        raise ParameterError(
            f"true_positives must have the same length as false_positives ({len(fp)}); got {len(tp)}."
        )
    exact_delta = _check_delta(delta)
    fpr = fp / np.float64(n0)
    tpr = tp / np.float64(n1)
    return _eq15(
        fpr,
        tpr,
        lambda i: Fraction(int(fp[i]), n0),
        lambda i: Fraction(int(tp[i]), n1),
        exact_delta,
    )


# -------------------------------------------------------------------------- out-of-fold scores


def out_of_fold_scores(
    x_a: ArrayLike,
    x_b: ArrayLike,
    estimator: Classifier | None = None,
    folds: int = 5,
    seed: int | np.random.Generator = 0,
    response: Response | None = None,
) -> NDArray[np.float64]:
    """Cross-validated (out-of-fold) class-1 scores for two samples.

    Parameters
    ----------
    x_a : array_like, shape (n_a, d)
        Class-0 sample.
    x_b : array_like, shape (n_b, d)
        Class-1 sample, same number of columns.
    estimator : classifier or None, default None
        Any scikit-learn style classifier; cloned and fitted once per fold. ``None`` uses the
        paper's ``LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)``.
    folds : int, default 5
        Number of stratified folds, ``>= 2``.
    seed : int or numpy.random.Generator, default 0
        ``random_state`` of ``StratifiedKFold(n_splits=folds, shuffle=True)``; a Generator supplies
        one integer draw.
    response : {"predict_proba", "decision_function"} or None, default None
        Score to use; ``None`` means ``predict_proba`` when available (as in the paper).

    Returns
    -------
    ndarray of float64, shape (n_a + n_b,)
        Entry ``i`` is the score of row ``i`` of ``vstack([x_a, x_b])`` from the model fitted on the
        other folds: ``scores[:n_a]`` belong to class 0, ``scores[n_a:]`` to class 1.

    Raises
    ------
    DataError
        If the samples are not finite 2-D arrays with equal column counts, or a class has fewer
        rows than ``folds``.
    ParameterError
        If ``folds`` is not an integer ``>= 2`` or ``seed`` is invalid.
    EstimatorError
        If the estimator cannot be cloned, lacks the response, or returns non-finite scores.

    Notes
    -----
    Identical to ``sklearn.model_selection.cross_val_predict`` with the same ``StratifiedKFold``
    and ``method=response`` (class-1 column). Every score comes from a model that did not see that
    row, but five different models produce the pooled scores, so an ROC built from them is
    descriptive (Sec. 4.4). ``predict_proba`` of logistic regression rounds to exactly 1.0 for
    logits above about 36.7 (and to tiny values symmetric below), which creates ties and can
    merge operating points; ``response="decision_function"`` keeps the margin and avoids that.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> s = out_of_fold_scores(rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 2.0)
    >>> s.shape, auc(s[:20], s[20:]) > 0.9
    ((40,), True)
    """
    if isinstance(folds, bool) or not isinstance(folds, numbers.Integral) or folds < 2:
        raise ParameterError(f"folds must be an integer >= 2; got {folds!r}.")
    if isinstance(seed, np.random.Generator):
        state = int(seed.integers(2**32))
    elif isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**32:
        raise ParameterError(
            f"seed must be an integer in [0, 2**32) or a numpy.random.Generator; got {seed!r}."
        )
    else:
        state = int(seed)
    a = _as_rows_checked(x_a, "x_a", 1)
    b = _as_rows_checked(x_b, "x_b", 1)
    if a.shape[1] != b.shape[1]:
        raise DataError(
            f"x_b must have the same number of columns as x_a ({a.shape[1]}); got {b.shape[1]}. "
            "Both samples must be embeddings from the same encoder."
        )
    for name, arr in (("x_a", a), ("x_b", b)):
        if len(arr) < folds:
            raise DataError(
                f"{name} must have at least folds={int(folds)} rows for stratified "
                f"cross-validation; got {len(arr)}. Use fewer folds or more samples."
            )
    model0 = default_estimator() if estimator is None else estimator
    method = response_of(model0, response)
    X = np.vstack([a, b])
    y = np.concatenate([np.zeros(len(a), dtype=np.int64), np.ones(len(b), dtype=np.int64)])
    return out_of_fold(model0, X, y, stratified_folds(y, int(folds), state), method)
