"""The four audit routes on two samples, each returning its status type (paper Sec. 4, App. D)."""

from __future__ import annotations

import math
from typing import Final, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify import _sklearn
from certify._core import Pair, check_delta, check_int
from certify.errors import ParameterError
from certify.results import Diagnostic, PopulationEstimate
from certify.stats import gaussmech as _gm
from certify.stats import kde as _kde
from certify.stats import mmd as _mmd
from certify.stats import roc as _roc
from certify.stats._checks import as_pair

__all__ = [
    "ASSUMPTIONS",
    "gauss_mech",
    "kde_lr",
    "mmd_permutation_test",
    "mmd_tv",
    "roc_oof",
    "two_samples",
]

ASSUMPTIONS: Final[dict[str, tuple[str, ...]]] = {
    "gauss_mech": (
        "additive, input-independent isotropic Gaussian noise",
        "relates to DP only with a known sensitivity and noise scale; here both are replaced by "
        "sample values, so the score has no DP meaning",
    ),
    "kde_lr": (
        "coordinates treated as independent (product factorization); the sum of marginal log "
        "ratios is not a DP bound for the joint release",
        "Gaussian kernels with Silverman bandwidths on a finite grid; smoothing choices drive the value",
    ),
    "mmd_tv": (
        "pure DP (delta = 0); kernel with k(x, x) <= 1 (Eq. 14), 0 <= k <= 1 for the hockey-stick form",
        "sample MMD plugged into a valid population inequality: no confidence, may exceed the truth",
        "bandwidth chosen from the same data (median heuristic)",
    ),
    "roc_oof": (
        "a learned, cross-validated test; the maximizing threshold is chosen on the same scores",
        "empirical rates plugged into the hypothesis-testing inequalities (Eq. 15): no confidence; "
        "+inf arises from a zero-denominator endpoint, not proven perfect separation",
    ),
    "mmd_permutation": (
        "tests equality of the two distributions; a p-value, not an epsilon",
        "rows exchangeable under the null",
    ),
}


def two_samples(
    x_a: ArrayLike, x_b: ArrayLike, *, min_rows: int = 2
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate two samples: 2-D, finite, same dimension, at least ``min_rows`` rows each."""
    return as_pair(x_a, x_b, min_rows)


def gauss_mech(
    x_a: ArrayLike, x_b: ArrayLike, delta: float = 1e-5, *, pair: Pair | None = None
) -> Diagnostic:
    """GaussMech signal-to-noise score (paper Eq. 9): a Diagnostic, not an epsilon.

    Parameters
    ----------
    x_a, x_b : array_like, shape (n, d)
        Samples of the two identities.
    delta : float, default 1e-5
        The delta in ``sqrt(2 ln(1.25 / delta))``; in (0, 1).
    pair : Pair, optional
        The pair the samples belong to, recorded on the result.

    Returns
    -------
    Diagnostic
        ``score = ||mean_a - mean_b|| sqrt(2 ln(1.25/delta)) / max(sigma_a, sigma_b)`` with
        sigma the RMS per-coordinate residual.

    Raises
    ------
    DataError
        On malformed samples.
    ParameterError
        If ``delta`` is not in (0, 1).

    Notes
    -----
    Inverts the textbook Gaussian-mechanism calibration with sample values in place of the
    known sensitivity and noise (Sec. 4.1). It has no DP meaning; at an exact null it stays near
    ``sqrt(2 ln(1.25/delta)) sqrt(2d/n)`` (Eq. 22).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> gauss_mech(rng.normal(size=(50, 8)), rng.normal(size=(50, 8))).status
    'Diagnostic'
    """
    a, b = two_samples(x_a, x_b)
    d = check_delta(delta)
    if d == 0.0:
        raise ParameterError("delta must be in (0, 1) for GaussMech; got 0.0.")
    score = _gm.gauss_mech_score(a, b, delta=d)
    return Diagnostic(
        method="gauss_mech",
        score=score,
        pair=pair,
        delta=d,
        assumptions=ASSUMPTIONS["gauss_mech"],
        equation="Eq. 9",
        n_samples=(len(a), len(b)),
        parameters={"delta": d, "dimension": a.shape[1]},
    )


def kde_lr(x_a: ArrayLike, x_b: ArrayLike, alpha: float = 0.01, *, pair: Pair | None = None) -> Diagnostic:
    """KDE-LR sum of coordinatewise marginal log density ratios (paper Eq. 10-11): a Diagnostic.

    Parameters
    ----------
    x_a, x_b : array_like, shape (n, d)
        Samples of the two identities.
    alpha : float, default 0.01
        Weight of the uniform density mixed into each KDE, in [0, 1].
    pair : Pair, optional
        Recorded on the result.

    Returns
    -------
    Diagnostic
        The sum over coordinates of the maximum absolute log ratio on a 201-point grid.

    Raises
    ------
    DataError
        On malformed samples.
    ParameterError
        If ``alpha`` is outside [0, 1].

    Notes
    -----
    Coordinates are treated as separate mechanisms, which they are not: the sum describes the
    marginals only and is no DP bound for the full vector (Sec. 4.2). Values in the thousands
    at an exact null are expected (Table 4).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> kde_lr(rng.normal(size=(40, 4)), rng.normal(size=(40, 4))).method
    'kde_lr'
    """
    a, b = two_samples(x_a, x_b)
    alpha_value: object = alpha
    if isinstance(alpha_value, bool) or not (
        isinstance(alpha_value, int | float) and 0.0 <= alpha_value <= 1.0
    ):
        raise ParameterError(f"alpha must be a number in [0, 1]; got {alpha!r}.")
    score = _kde.kde_lr_score(a, b, alpha=float(alpha))
    return Diagnostic(
        method="kde_lr",
        score=score,
        pair=pair,
        assumptions=ASSUMPTIONS["kde_lr"],
        equation="Eq. 10-11",
        n_samples=(len(a), len(b)),
        parameters={"alpha": float(alpha), "grid_points": 201, "floor": 1e-12},
    )


def mmd_tv(
    x_a: ArrayLike, x_b: ArrayLike, bandwidth: float | None = None, *, pair: Pair | None = None
) -> PopulationEstimate:
    """MMD-TV plug-in value (paper Eq. 7, 12) with the tighter hockey-stick variant (Sec. 4.3).

    Parameters
    ----------
    x_a, x_b : array_like, shape (n, d)
        Samples of the two identities.
    bandwidth : float, optional
        RBF bandwidth sigma; default the median pooled pairwise distance of this pair.
    pair : Pair, optional
        Recorded on the result.

    Returns
    -------
    PopulationEstimate
        ``epsilon_estimate = ln((1 + m/2)/(1 - m/2))`` with ``m`` the clipped square root of the
        unbiased MMD^2; ``details`` carries ``mmd``, ``mmd2`` and ``epsilon_hockey_stick``.

    Raises
    ------
    DataError
        On malformed samples.

    Notes
    -----
    Theorem 4.2 bounds the population epsilon of a pure-DP mechanism from below by a function of
    the population MMD. Inserting the sample MMD gives a point estimate: it carries no
    confidence and can exceed the true epsilon.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> est = mmd_tv(rng.normal(size=(30, 4)), rng.normal(size=(30, 4)) + 3)
    >>> est.status, est.epsilon_estimate > 0
    ('PopulationEstimate', True)
    """
    a, b = two_samples(x_a, x_b)
    if bandwidth is not None and not (math.isfinite(float(bandwidth)) and float(bandwidth) > 0):
        raise ParameterError(f"bandwidth must be a positive finite number; got {bandwidth!r}.")
    mmd2, sigma = _mmd.mmd2_unbiased_with_bandwidth(a, b, None if bandwidth is None else float(bandwidth))
    m = math.sqrt(max(mmd2, 0.0))
    return PopulationEstimate(
        method="mmd_tv",
        epsilon_estimate=_mmd.mmd_tv_epsilon(m),
        pair=pair,
        delta=0.0,
        assumptions=ASSUMPTIONS["mmd_tv"],
        equation="Eq. 12",
        n_samples=(len(a), len(b)),
        parameters={"bandwidth": sigma, "bandwidth_rule": "median" if bandwidth is None else "fixed"},
        details={
            "mmd2": mmd2,
            "mmd": m,
            "epsilon_hockey_stick": _mmd.hockey_stick_epsilon(m),
        },
    )


def roc_oof(
    x_a: ArrayLike,
    x_b: ArrayLike,
    estimator: object | None = None,
    folds: int = 5,
    delta: float = 0.0,
    seed: int = 0,
    *,
    response: _sklearn.Response | None = None,
    pair: Pair | None = None,
) -> PopulationEstimate:
    """ROC-HT out of fold: Eq. 15 on the empirical ROC of cross-validated scores.

    Parameters
    ----------
    x_a, x_b : array_like, shape (n, d)
        Samples; ``x_a`` is class 0 (its error is the FPR), ``x_b`` class 1.
    estimator : scikit-learn classifier, optional
        Default ``LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)`` (App. D).
    folds : int, default 5
        StratifiedKFold splits (shuffled with ``seed``).
    delta : float, default 0.0
        The delta in Eq. 15.
    seed : int, default 0
        Fold seed.
    response : "predict_proba" or "decision_function", optional
        Default ``predict_proba`` as the paper; it saturates to exactly 1.0 for logits above about
        36.7, tying the top scores. ``"decision_function"`` avoids those ties.
    pair : Pair, optional
        Recorded on the result.

    Returns
    -------
    PopulationEstimate
        ``epsilon_estimate`` (possibly ``inf``); ``details``: ``auc``, ``exact_corner``,
        ``infinite_by_endpoint``, ``fpr``/``tpr`` at the maximizing operating point.

    Raises
    ------
    DataError
        On malformed samples or fewer rows per class than ``folds``.
    EstimatorError
        If the estimator gives no scores.

    Notes
    -----
    The inequalities of Eq. 2 hold for any fixed population test; here the classifier and the
    maximizing threshold are chosen on the same data, so the value is descriptive (Sec. 4.4).
    A positive numerator over a zero denominator gives ``+inf`` even when the AUC is near 0.5:
    ``exact_corner`` tells whether perfect separation (0, 1) was actually observed.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> est = roc_oof(rng.normal(size=(30, 4)), rng.normal(size=(30, 4)) + 2)
    >>> est.auc > 0.9
    True
    """
    a, b = two_samples(x_a, x_b)
    folds = check_int(folds, "folds", 2)
    d = check_delta(delta)
    est = _sklearn.default_estimator() if estimator is None else estimator
    resp = _sklearn.response_of(est, response)
    scores = _roc.out_of_fold_scores(
        a, b, cast(_sklearn.Classifier, est), folds=folds, seed=seed, response=resp
    )
    s0, s1 = scores[: len(a)], scores[len(a) :]
    counts = _roc.roc_counts(s0, s1)
    conv = _roc.roc_epsilon_from_counts(
        counts.false_positives, counts.true_positives, counts.n_negative, counts.n_positive, delta=d
    )
    return PopulationEstimate(
        method="roc_oof",
        epsilon_estimate=conv.value,
        pair=pair,
        delta=d,
        assumptions=ASSUMPTIONS["roc_oof"],
        equation="Eq. 15",
        n_samples=(len(a), len(b)),
        parameters={
            "estimator": type(est).__name__,
            "folds": folds,
            "seed": seed,
            "response": resp,
        },
        details={
            "auc": _roc.auc(s0, s1),
            "exact_corner": bool(conv.exact_corner),
            "infinite_by_endpoint": bool(conv.infinite_by_endpoint),
            "fpr": conv.fpr,
            "tpr": conv.tpr,
        },
    )


def mmd_permutation_test(
    x_a: ArrayLike,
    x_b: ArrayLike,
    permutations: int = 10_000,
    seed: int = 0,
    *,
    bandwidth: float | None = None,
    pair: Pair | None = None,
) -> Diagnostic:
    """MMD permutation test of equal distributions: a Diagnostic carrying a p-value.

    Parameters
    ----------
    x_a, x_b : array_like, shape (n, d)
        Samples of the two identities.
    permutations : int, default 10000
        Number of random relabellings B.
    seed : int, default 0
        Seed of the permutations.
    bandwidth : float, optional
        RBF bandwidth; default the median heuristic on the pooled sample.
    pair : Pair, optional
        Recorded on the result.

    Returns
    -------
    Diagnostic
        ``score`` is the unbiased MMD^2; ``p_value = (b + 1) / (B + 1)`` (Phipson and Smyth, 2010).

    Raises
    ------
    DataError
        On malformed samples.

    Notes
    -----
    Under exchangeability the p-value is valid for the hypothesis of equal distributions; a
    rejection says the two identities differ, not by how much epsilon.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> d = mmd_permutation_test(rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 3, 99)
    >>> d.p_value
    0.01
    """
    a, b = two_samples(x_a, x_b)
    permutations = check_int(permutations, "permutations", 1)
    stat, p_value, exceed = _mmd.mmd_permutation_pvalue(
        a, b, permutations=permutations, seed=seed, bandwidth=bandwidth
    )
    return Diagnostic(
        method="mmd_permutation",
        score=stat,
        pair=pair,
        assumptions=ASSUMPTIONS["mmd_permutation"],
        equation="Eq. 7",
        n_samples=(len(a), len(b)),
        parameters={"permutations": permutations, "seed": seed},
        details={"p_value": float(p_value), "exceedances": int(exceed)},
    )
