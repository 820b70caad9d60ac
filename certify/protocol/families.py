"""Candidate test families for reserved-split certificates, and the expected-bound criterion.

A certificate's power depends on two choices made on development data: the score (which
direction separates the pair) and the threshold (which pair of error rates to bound). The paper
fixes both to logistic regression and the Youden cut (Sec. 6.5). This module offers linear
families that learn the likelihood-ratio direction from fewer rows, ranked by the criterion
:func:`~certify.protocol.criterion.expected_bound` (re-exported here), the certified bound
they are expected to give on the reserved rows (Eq. 16) from development counts only.

Every family here is a scikit-learn linear classifier, so a fitted test stores as coefficients
(a :class:`~certify.protocol.scores.LinearScore`) and its record holds no executable model.
The module is long because each family carries its own estimator and its memory-bounded
statistics (pooled spreads, blockwise scatter and shrinkage); they are one idea, the
candidates :func:`resolve_candidates` offers, and share those helpers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias, final

import attrs
import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassifierMixin

from certify._core import Pair
from certify.errors import DataError, ParameterError
from certify.protocol.criterion import _check_plan, expected_bound, max_bound_cut
from certify.protocol.scores import ClippedScore, LaplaceScore
from certify.stats._medians import column_medians
from certify.stats.tradeoff import Target

__all__ = [
    "CERTIFY_CANDIDATES",
    "BoundPlan",
    "ClippedLR",
    "FAMILY_NAMES",
    "FamilyName",
    "GaussianLR",
    "HUBER_CLIP",
    "LaplaceLR",
    "LinearDiscriminant",
    "MedianCentroid",
    "candidate_estimator",
    "estimator_for",
    "expected_bound",
    "max_bound_cut",
    "pooled_deviations",
    "pooled_variances",
    "require_plan",
    "resolve_candidates",
]

FamilyName: TypeAlias = Literal[
    "paper",
    "shrinkage_lda",
    "mean_difference",
    "diagonal_lda",
    "pooled_diagonal_lda",
    "logistic_cv",
    "median_centroid",
    "gaussian_lr",
    "laplace_lr",
    "clipped_lr",
]
"""Names of the candidate test families."""

FAMILY_NAMES: Final[tuple[FamilyName, ...]] = (
    "paper",
    "shrinkage_lda",
    "mean_difference",
    "diagonal_lda",
    "pooled_diagonal_lda",
    "logistic_cv",
    "median_centroid",
    "gaussian_lr",
    "laplace_lr",
    "clipped_lr",
)
"""Every family name, in a fixed order."""

CERTIFY_CANDIDATES: Final[tuple[FamilyName, ...]] = (
    "shrinkage_lda",
    "mean_difference",
    "pooled_diagonal_lda",
    "median_centroid",
    "gaussian_lr",
    "laplace_lr",
)
"""The families the ``"certify"`` default selects among on development data.

``"clipped_lr"`` is left out: on the power benchmark's cells (paired, same development and
reserved rows) the default without it certified as many pairs or more in every cell; it stays
available by name.
"""

_LOGISTIC_CS: Final = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
_MIN_SHRINKAGE: Final = 1e-9


class _LinearScoreMixin(ClassifierMixin):  # type: ignore[misc]
    """Decision function, labels and probabilities of a fitted two-class linear score.

    Subclasses set ``coef_`` (shape ``(1, d)``), ``intercept_`` (shape ``(1,)``) and
    ``classes_`` in ``fit``; the score is ``X @ coef_[0] + intercept_[0]``, positive for
    ``classes_[1]``, as for scikit-learn's linear classifiers.
    """

    def decision_function(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X`` (larger means ``classes_[1]``)."""
        x = np.asarray(X, dtype=np.float64)
        coef = np.asarray(self.coef_, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != coef.shape[1]:
            raise DataError(
                f"X must be a 2-D array with {coef.shape[1]} columns; got shape {x.shape}."
            )
        # (n, d) @ (d, 1) then the intercept, as scikit-learn's linear classifiers compute it
        out: NDArray[np.float64] = (x @ coef.T + np.asarray(self.intercept_)).reshape(-1)
        return out

    def predict(self, X: NDArray[np.float64]) -> NDArray[Any]:
        """The class of each row (``classes_[1]`` where the score is positive)."""
        out: NDArray[Any] = np.asarray(self.classes_)[(self.decision_function(X) > 0).astype(np.intp)]
        return out

    def predict_proba(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Logistic of the score, as two columns (the score is not a calibrated log-odds)."""
        from scipy.special import expit

        p1 = expit(self.decision_function(X))
        out: NDArray[np.float64] = np.column_stack([1.0 - p1, p1])
        return out


class LinearDiscriminant(_LinearScoreMixin, BaseEstimator):  # type: ignore[misc]
    """Two-class linear discriminant ``w = Sigma^-1 (mu_1 - mu_0)`` with a regularized ``Sigma``.

    Parameters
    ----------
    covariance : {"ledoit_wolf", "diagonal", "identity"}, default "ledoit_wolf"
        ``"ledoit_wolf"``: coordinates are scaled to unit pooled within-class variance, the
        scaled covariance is shrunk toward the identity with the Ledoit-Wolf intensity, and the
        scaling is undone (as ``LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")``
        does per class). ``"diagonal"``: the pooled within-class variances (shrinkage 1 in
        scikit-learn's convention). ``"identity"``: the mean difference.

    Notes
    -----
    Under Gaussian noise with a shared covariance the likelihood-ratio score is linear with
    direction ``Sigma^-1 (mu_1 - mu_0)``; this class plugs in a covariance that can be estimated
    from fewer rows than dimensions. The Ledoit-Wolf system is solved in the row space
    (Woodbury identity) when there are fewer rows than coordinates, so a fit costs
    ``O(min(n, d)^2 max(n, d))``.
    """

    def __init__(self, covariance: str = "ledoit_wolf", variances: Any = None) -> None:
        self.covariance = covariance
        self.variances = variances

    def fit(self, X: NDArray[np.float64], y: NDArray[Any]) -> LinearDiscriminant:
        """Fit on rows ``X`` and binary labels ``y``."""
        x0, x1, classes = _two_classes(X, y)
        return self.fit_classes(x0, x1, classes)

    def fit_classes(
        self, x0: NDArray[np.float64], x1: NDArray[np.float64], classes: NDArray[Any] | None = None
    ) -> LinearDiscriminant:
        """Fit on the rows of class 0 and of class 1 (no stacked copy of them is made)."""
        from sklearn.covariance import ledoit_wolf_shrinkage

        if self.covariance not in ("ledoit_wolf", "diagonal", "identity", "fixed_diagonal"):
            raise ParameterError(
                "covariance must be 'ledoit_wolf', 'diagonal', 'identity' or 'fixed_diagonal'; "
                f"got {self.covariance!r}."
            )
        self.classes_ = np.array([0, 1]) if classes is None else classes
        mu0, mu1 = x0.mean(axis=0), x1.mean(axis=0)
        centered = np.empty((x0.shape[0] + x1.shape[0], x0.shape[1]), dtype=np.float64)
        np.subtract(x0, mu0, out=centered[: x0.shape[0]])
        np.subtract(x1, mu1, out=centered[x0.shape[0] :])
        var = np.einsum("ij,ij->j", centered, centered) / centered.shape[0]
        # no within-class spread at all: any scale will do, the direction is the mean difference
        floor = 1e-12 * float(var.mean()) if var.any() else 1.0
        diff = mu1 - mu0
        if self.covariance == "identity":
            w = diff / max(float(var.mean()), floor)
            spread = float(w @ w) * max(float(var.mean()), floor)
        elif self.covariance in ("diagonal", "fixed_diagonal"):
            if self.covariance == "fixed_diagonal":
                var = np.asarray(self.variances, dtype=np.float64).reshape(-1)
                if var.shape != diff.shape or not np.all(np.isfinite(var)) or np.any(var <= 0):
                    raise ParameterError(
                        f"variances must hold {diff.shape[0]} positive finite numbers."
                    )
            w = diff / np.maximum(var, floor)
            spread = float((w * w) @ np.maximum(var, floor))
        else:
            scale = np.sqrt(np.maximum(var, floor))
            z = centered
            z /= scale  # in place: the centred rows are not used again
            # the floor keeps both systems regular where the estimate is 0 (rank-one within-class
            # scatter, a constant coordinate): a direction without within-class spread then gets
            # a weight of b / floor, the limit of a separating direction, instead of a crash
            rows, b = z.shape[0], diff / scale
            if rows <= z.shape[1]:
                s = max(float(ledoit_wolf_shrinkage(z, assume_centered=True)), _MIN_SHRINKAGE)
                scatter = None
            else:
                scatter, s = _scatter_and_shrinkage(z)
                s = max(s, _MIN_SHRINKAGE)
            if s >= 1.0:
                v = b
            elif scatter is None:
                # ((1 - s) Z'Z / rows + s I)^-1 b by the Woodbury identity (fewer rows than
                # coordinates: a rows x rows system).
                gram = z @ z.T + s * rows / (1.0 - s) * np.eye(rows)
                v = (b - z.T @ np.linalg.solve(gram, z @ b)) / s
            else:
                v = np.linalg.solve((1.0 - s) * scatter / rows + s * np.eye(z.shape[1]), b)
            w = v / scale
            zv = z @ v
            spread = (1.0 - s) * float(zv @ zv) / rows + s * float(v @ v)
        # Unit within-class spread under the fitted covariance: scores of models fitted on
        # different rows (folds, the final fit) share one scale, so a development threshold
        # chosen on out-of-fold scores keeps its meaning for the final model.
        w = w / math.sqrt(max(spread, 1e-300))
        self.coef_ = w.reshape(1, -1)
        self.intercept_ = np.array([-float(w @ (0.5 * (mu0 + mu1)))])
        self.n_features_in_ = x0.shape[1]
        return self


_SCATTER_ROWS: Final = 1 << 16
"""Rows per block of :func:`_scatter_and_shrinkage` (its temporaries stay a few MB)."""


def _scatter_and_shrinkage(z: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
    """``Z'Z`` and the Ledoit-Wolf shrinkage of centred rows ``Z``, in blocks of rows.

    The same shrinkage as ``sklearn.covariance.ledoit_wolf_shrinkage(z, assume_centered=True)``
    (Ledoit and Wolf 2004, in scikit-learn's form: ``beta / delta`` from the sums of the entries
    of ``(Z*Z)'(Z*Z)`` and of the squared entries of ``Z'Z``), which squares the whole of
    ``Z`` at once; here the two ``d x d`` products are summed over blocks of rows, so a fit on a
    million rows holds no second copy of them.
    """
    rows, d = z.shape
    scatter = np.zeros((d, d))
    fourth = np.zeros((d, d))
    for start in range(0, rows, _SCATTER_ROWS):
        block = z[start : start + _SCATTER_ROWS]
        scatter += np.dot(block.T, block)  # np.dot: matmul of a transposed view is slower here
        squared = block * block
        fourth += np.dot(squared.T, squared)
    trace = np.diag(scatter) / rows
    mu = float(trace.sum()) / d
    delta_ = float(np.sum(scatter**2)) / rows**2
    beta = (float(fourth.sum()) / rows - delta_) / (d * rows)
    delta = (delta_ - 2.0 * mu * float(trace.sum()) + d * mu**2) / d
    beta = min(beta, delta)
    return scatter, 0.0 if beta == 0 else beta / delta


def _two_classes(
    X: NDArray[np.float64], y: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    """Rows of class 0 and class 1 (sorted labels) and the labels."""
    x = np.asarray(X, dtype=np.float64)
    labels = np.asarray(y)
    classes = np.unique(labels)
    if classes.shape[0] != 2:
        raise DataError(f"y must hold exactly two classes; got {classes.shape[0]}.")
    first = labels == classes[0]
    n0 = int(np.count_nonzero(first))
    if bool(np.all(first[:n0])):  # class 0 first: views, no copies of the rows
        return x[:n0], x[n0:], classes
    return x[first], x[~first], classes


class MedianCentroid(_LinearScoreMixin, BaseEstimator):  # type: ignore[misc]
    """Linear score along the difference of coordinatewise medians.

    The score is ``(x - (m_0 + m_1) / 2) . (m_1 - m_0) / s`` with class medians ``m_0, m_1`` and
    ``s`` the pooled median absolute deviation per coordinate (squared), so coordinates with
    heavy noise count less.

    Notes
    -----
    The median is the efficient location estimate under Laplace noise (its variance is half the
    mean's), so the direction is learned from fewer rows when the noise has heavy tails.
    """

    def __init__(self, scale: bool = True) -> None:
        self.scale = scale

    def fit(self, X: NDArray[np.float64], y: NDArray[Any]) -> MedianCentroid:
        """Fit on rows ``X`` and binary labels ``y``."""
        x0, x1, self.classes_ = _two_classes(X, y)
        m0, m1 = column_medians(x0), column_medians(x1)
        w = m1 - m0
        if self.scale:
            mad = (np.abs(x0 - m0).sum(axis=0) + np.abs(x1 - m1).sum(axis=0)) / (x0.shape[0] + x1.shape[0])
            mad = np.maximum(mad, 1e-12 * max(float(mad.mean()), 1e-300))
            w = w / mad
        self.coef_ = w.reshape(1, -1)
        self.intercept_ = np.array([-float(w @ (0.5 * (m0 + m1)))])
        self.n_features_in_ = x0.shape[1]
        return self


def _within_spread(
    x0: NDArray[np.float64],
    x1: NDArray[np.float64],
    kind: Literal["variance", "deviation"],
    centres: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> tuple[NDArray[np.float64], int]:
    """Per-coordinate within-class spread of two classes and its degrees of freedom.

    ``"variance"``: squared deviations from each class mean; ``"deviation"``: mean absolute
    deviation from each class median (the maximum-likelihood Laplace scale). ``centres`` are
    the class medians of ``"deviation"`` when the caller has them already.
    """
    if kind == "variance":
        total = ((x0 - x0.mean(axis=0)) ** 2).sum(axis=0) + ((x1 - x1.mean(axis=0)) ** 2).sum(axis=0)
    else:
        m0, m1 = (column_medians(x0), column_medians(x1)) if centres is None else centres
        total = np.abs(x0 - m0).sum(axis=0) + np.abs(x1 - m1).sum(axis=0)
    dof = max(x0.shape[0] + x1.shape[0] - 2, 1)
    out: NDArray[np.float64] = total / dof
    return out, dof


def _combined_spread(
    own: NDArray[np.float64], own_dof: int, pooled: Any, pooled_dof: int, rel_var: float
) -> NDArray[np.float64]:
    """The pair's spread pooled with other identities', shrunk across coordinates.

    The two estimates are averaged by degrees of freedom; the result is shrunk on the log
    scale toward its geometric mean by the empirical-Bayes weight ``t / (t + r / dof)``, where
    ``r / dof`` is the sampling variance of a log estimate (``rel_var = 2`` for variances, 1 for
    mean absolute deviations) and ``t`` the variance across coordinates left after removing it.
    Equal true spreads are pooled over all coordinates; very unequal ones are kept apart.
    """
    total = float(own_dof)
    spread = own * own_dof
    if pooled is not None and pooled_dof > 0:
        p = np.asarray(pooled, dtype=np.float64).reshape(-1)
        if p.shape != own.shape or not np.all(np.isfinite(p)) or np.any(p <= 0):
            raise ParameterError(f"pooled spreads must hold {own.shape[0]} positive finite numbers.")
        spread = spread + p * pooled_dof
        total += pooled_dof
    spread = spread / total
    if not spread.any():
        # no spread at all: any scale will do (a floor of 1e-300 would overflow the weights)
        return np.ones_like(spread)
    floor = 1e-12 * float(spread.mean())
    logs = np.log(np.maximum(spread, floor))
    noise = rel_var / total
    between = max(float(logs.var()) - noise, 0.0)
    weight = between / (between + noise)
    out: NDArray[np.float64] = np.exp(logs.mean() + weight * (logs - logs.mean()))
    return out


def _shrink_factor(diff: NDArray[np.float64], noise: NDArray[np.float64]) -> NDArray[np.float64]:
    """Empirical-Bayes factors ``tau^2 / (tau^2 + noise_j)`` for a difference of class centres.

    ``tau^2`` is the mean over coordinates of ``diff_j^2 - noise_j`` (method of moments for a
    common prior variance of the true differences), floored at a thousandth of the mean noise
    so the direction never vanishes.
    """
    tau2 = max(float(np.mean(diff * diff - noise)), 1e-3 * float(np.mean(noise)), 1e-300)
    out: NDArray[np.float64] = tau2 / (tau2 + noise)
    return out


class GaussianLR(_LinearScoreMixin, BaseEstimator):  # type: ignore[misc]
    """Plug-in Gaussian likelihood ratio: diagonal pooled covariance, shrunk mean difference.

    The score is ``w . (x - (mu_0 + mu_1) / 2)`` with ``w_j = f_j (mu_1j - mu_0j) / v_j``:
    ``v_j`` the within-class variance of coordinate ``j`` (the pair's own rows pooled with
    ``variances`` from other identities, then shrunk across coordinates on the log scale) and
    ``f_j = tau^2 / (tau^2 + v_j (1/m_0 + 1/m_1))`` the empirical-Bayes factor of the noisy
    mean difference (:func:`_shrink_factor`).

    Parameters
    ----------
    variances : array_like, optional
        Per-coordinate within-identity variances pooled over other identities
        (:func:`pooled_variances`); None uses the pair's own rows only.
    dof : int, default 0
        Degrees of freedom of ``variances``.

    Notes
    -----
    Under Gaussian noise with a shared diagonal covariance the log likelihood ratio is exactly
    this linear score with ``f_j = 1``. With few rows the estimated difference is mostly noise
    in coordinates with large variance; shrinking each coordinate toward zero by its own
    signal-to-noise ratio (a Wiener filter with the prior variance estimated from the data)
    keeps the direction closer to the true one. When all variances are equal the factors are
    equal and the direction is the mean difference.
    """

    def __init__(self, variances: Any = None, dof: int = 0) -> None:
        self.variances = variances
        self.dof = dof

    def fit(self, X: NDArray[np.float64], y: NDArray[Any]) -> GaussianLR:
        """Fit on rows ``X`` and binary labels ``y``."""
        x0, x1, self.classes_ = _two_classes(X, y)
        mu0, mu1 = x0.mean(axis=0), x1.mean(axis=0)
        own, own_dof = _within_spread(x0, x1, "variance")
        v = _combined_spread(own, own_dof, self.variances, int(self.dof), 2.0)
        diff = mu1 - mu0
        noise = v * (1.0 / x0.shape[0] + 1.0 / x1.shape[0])
        w = _shrink_factor(diff, noise) * diff / v
        # unit within-class spread under the fitted variances (as LinearDiscriminant)
        w = w / math.sqrt(max(float((w * w) @ v), 1e-300))
        self.coef_ = w.reshape(1, -1)
        self.intercept_ = np.array([-float(w @ (0.5 * (mu0 + mu1)))])
        self.n_features_in_ = x0.shape[1]
        return self


class _StoredScoreMixin(ClassifierMixin):  # type: ignore[misc]
    """Decision function of a fitted family whose score is a stored score model (``model_``)."""

    def decision_function(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X`` (larger means ``classes_[1]``)."""
        x = np.asarray(X, dtype=np.float64)
        if x.ndim != 2:
            raise DataError(f"X must be a 2-D array; got shape {x.shape}.")
        out: NDArray[np.float64] = self.model_.score(x)
        return out

    def predict(self, X: NDArray[np.float64]) -> NDArray[Any]:
        """The class of each row (``classes_[1]`` where the score is positive)."""
        out: NDArray[Any] = np.asarray(self.classes_)[(self.decision_function(X) > 0).astype(np.intp)]
        return out

    def score_model(self) -> LaplaceScore | ClippedScore:
        """The fitted score as data, for the pre-registration record."""
        out: LaplaceScore | ClippedScore = self.model_
        return out


def _unit_spread(s0: NDArray[np.float64], s1: NDArray[np.float64]) -> float:
    """Pooled within-class standard deviation of two classes' scores (1 when degenerate)."""
    sd = math.sqrt(
        (float(((s0 - s0.mean()) ** 2).sum()) + float(((s1 - s1.mean()) ** 2).sum()))
        / max(s0.size + s1.size - 2, 1)
    )
    return sd if sd > 0 and math.isfinite(sd) else 1.0


class LaplaceLR(_StoredScoreMixin, BaseEstimator):  # type: ignore[misc]
    """Plug-in product-Laplace likelihood ratio from medians and shrunk scales.

    The score is ``sum_j (|x_j - a_j| - |x_j - b_j|) / s_j`` (:class:`LaplaceScore`): ``a_j,
    b_j`` the class medians, moved toward their midpoint by the empirical-Bayes factor of their
    noisy difference (:func:`_shrink_factor`, with the Laplace median's variance ``s_j^2 / m``),
    and ``s_j`` the mean absolute deviation from the class medians (the Laplace scale), pooled
    with ``deviations`` from other identities and shrunk across coordinates.

    Parameters
    ----------
    deviations : array_like, optional
        Per-coordinate mean absolute deviations from identity medians, pooled over other
        identities (:func:`pooled_deviations`); None uses the pair's own rows only.
    dof : int, default 0
        Degrees of freedom of ``deviations``.

    Notes
    -----
    Under product-Laplace noise the log likelihood ratio is a sum of clipped per-coordinate
    terms, not a linear function: when the centres of a coordinate differ by less than its
    scale, the term is essentially the sign of ``x_j`` relative to the midpoint, which a linear
    score weighs by the (heavy-tailed) value instead. The fitted score is stored as plain arrays
    (centres and scales), scaled to unit within-class spread on the fitting rows so that
    thresholds keep their meaning between folds and the final fit.
    """

    def __init__(self, deviations: Any = None, dof: int = 0) -> None:
        self.deviations = deviations
        self.dof = dof

    def fit(self, X: NDArray[np.float64], y: NDArray[Any]) -> LaplaceLR:
        """Fit on rows ``X`` and binary labels ``y``."""
        x0, x1, self.classes_ = _two_classes(X, y)
        m0, m1 = column_medians(x0), column_medians(x1)
        own, own_dof = _within_spread(x0, x1, "deviation", (m0, m1))
        scale = _combined_spread(own, own_dof, self.deviations, int(self.dof), 1.0)
        diff = m1 - m0
        half = 0.5 * _shrink_factor(diff, scale**2 * (1.0 / x0.shape[0] + 1.0 / x1.shape[0])) * diff
        mid = 0.5 * (m0 + m1)
        raw = LaplaceScore(mid - half, mid + half, scale)
        sd = _unit_spread(raw.score(x0), raw.score(x1))
        self.model_ = LaplaceScore(raw.center_a, raw.center_b, scale * sd)
        self.n_features_in_ = x0.shape[1]
        return self


HUBER_CLIP: Final = 1.345
"""Clipping point of :class:`ClippedLR` in standard deviations (Huber's 95%-efficiency constant)."""


class ClippedLR(_StoredScoreMixin, BaseEstimator):  # type: ignore[misc]
    """Clipped per-coordinate likelihood ratio for heavy-tailed noise.

    The score is ``sum_j w_j clip(x_j - c_j, -k s_j, k s_j)`` (:class:`ClippedScore`): ``c_j``
    the midpoint of the class medians, ``s_j`` a robust standard deviation (the mean absolute
    deviation from the medians times ``sqrt(pi / 2)``, pooled with other identities and shrunk
    across coordinates), ``w_j = f_j (m_1j - m_0j) / s_j^2`` with the empirical-Bayes factor
    ``f_j`` of the noisy median difference, and ``k = clip``.

    Parameters
    ----------
    deviations : array_like, optional
        As in :class:`LaplaceLR`.
    dof : int, default 0
        Degrees of freedom of ``deviations``.
    clip : float, default 1.345
        Clipping point in robust standard deviations.

    Notes
    -----
    Each term is the location score of Huber's least-favourable law (Gaussian within ``k s_j``
    of the centre, exponential tails beyond), the minimax choice when the noise is Gaussian up
    to a fraction of gross outliers: linear where a Gaussian ratio is, bounded where a single
    heavy-tailed coordinate would otherwise swamp the sum.
    """

    def __init__(self, deviations: Any = None, dof: int = 0, clip: float = HUBER_CLIP) -> None:
        self.deviations = deviations
        self.dof = dof
        self.clip = clip

    def fit(self, X: NDArray[np.float64], y: NDArray[Any]) -> ClippedLR:
        """Fit on rows ``X`` and binary labels ``y``."""
        clip: object = self.clip
        if not (isinstance(clip, int | float) and math.isfinite(clip) and clip > 0):
            raise ParameterError(f"clip must be a positive finite number; got {self.clip!r}.")
        x0, x1, self.classes_ = _two_classes(X, y)
        m0, m1 = column_medians(x0), column_medians(x1)
        own, own_dof = _within_spread(x0, x1, "deviation", (m0, m1))
        sd = math.sqrt(math.pi / 2.0) * _combined_spread(own, own_dof, self.deviations, int(self.dof), 1.0)
        diff = m1 - m0
        noise = (math.pi / 2.0) * sd**2 * (1.0 / x0.shape[0] + 1.0 / x1.shape[0])
        weight = _shrink_factor(diff, noise) * diff / sd**2
        raw = ClippedScore(0.5 * (m0 + m1), weight, float(self.clip) * sd)
        spread = _unit_spread(raw.score(x0), raw.score(x1))
        self.model_ = ClippedScore(raw.center, weight / spread, raw.half_width)
        self.n_features_in_ = x0.shape[1]
        return self


def candidate_estimator(
    name: FamilyName,
    *,
    seed: int = 0,
    variances: NDArray[np.float64] | None = None,
    deviations: NDArray[np.float64] | None = None,
    dof: int = 0,
) -> Any:
    """An unfitted scikit-learn classifier of the named family.

    Parameters
    ----------
    name : str
        ``"paper"`` (``LogisticRegression(C=1)``, Sec. 6.5), ``"shrinkage_lda"`` (Ledoit-Wolf
        shrinkage LDA), ``"mean_difference"`` (LDA with identity covariance: the mean
        difference), ``"diagonal_lda"`` (LDA with a shrunk diagonal covariance),
        ``"pooled_diagonal_lda"`` (LDA with variances pooled from other identities),
        ``"logistic_cv"`` (logistic regression with ``C`` chosen by inner 3-fold
        cross-validation on development rows), ``"median_centroid"``, or one of the plug-in
        likelihood ratios ``"gaussian_lr"`` (:class:`GaussianLR`), ``"laplace_lr"``
        (:class:`LaplaceLR`) and ``"clipped_lr"`` (:class:`ClippedLR`).
    seed : int, default 0
        Seed of the inner folds of ``"logistic_cv"``.
    variances : numpy.ndarray, optional
        Pooled per-coordinate noise variances (:func:`pooled_variances`); required by
        ``"pooled_diagonal_lda"``, optional for ``"gaussian_lr"``.
    deviations : numpy.ndarray, optional
        Pooled per-coordinate mean absolute deviations (:func:`pooled_deviations`), optional
        for ``"laplace_lr"`` and ``"clipped_lr"``.
    dof : int, default 0
        Degrees of freedom of the pooled variances or deviations (they are weighed against
        the pair's own rows by it).

    Returns
    -------
    estimator
        A classifier whose fitted score is stored as data in a record: coefficients (linear
        families) or arrays of centres and scales (the Laplace and clipped ratios).

    Raises
    ------
    ParameterError
        On an unknown name.

    Examples
    --------
    >>> type(candidate_estimator("shrinkage_lda")).__name__
    'LinearDiscriminant'
    """
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold

    if name == "paper":
        return LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)
    if name == "shrinkage_lda":
        return LinearDiscriminant("ledoit_wolf")
    if name == "mean_difference":
        return LinearDiscriminant("identity")
    if name == "diagonal_lda":
        return LinearDiscriminant("diagonal")
    if name == "pooled_diagonal_lda":
        if variances is None:
            raise ParameterError(
                "pooled_diagonal_lda needs variances pooled from other identities; use "
                "FixedTest.select, which computes them on the development table."
            )
        return LinearDiscriminant("fixed_diagonal", np.asarray(variances, dtype=np.float64))
    if name == "logistic_cv":
        return LogisticRegressionCV(
            Cs=list(_LOGISTIC_CS), cv=StratifiedKFold(3, shuffle=True, random_state=seed),
            solver="lbfgs", max_iter=1000, scoring="roc_auc",
        )
    if name == "median_centroid":
        return MedianCentroid()
    if name == "gaussian_lr":
        return GaussianLR(variances, dof if variances is not None else 0)
    if name == "laplace_lr":
        return LaplaceLR(deviations, dof if deviations is not None else 0)
    if name == "clipped_lr":
        return ClippedLR(deviations, dof if deviations is not None else 0)
    raise ParameterError(f"name must be one of {FAMILY_NAMES!r}; got {name!r}.")


def _as_name(name: object) -> FamilyName:
    """Check and narrow a family name."""
    if not isinstance(name, str) or name not in FAMILY_NAMES:
        raise ParameterError(
            f"candidate must be one of {FAMILY_NAMES!r} (or 'certify'); got {name!r}."
        )
    return name


def resolve_candidates(candidates: str | Sequence[str]) -> tuple[FamilyName, ...]:
    """Family names of a candidate specification (``"certify"``, ``"paper"``, a name or names)."""
    if isinstance(candidates, str):
        if candidates == "certify":
            return CERTIFY_CANDIDATES
        return (_as_name(candidates),)
    names = tuple(_as_name(c) for c in candidates)
    if not names:
        raise ParameterError("candidates must name at least one family; got an empty sequence.")
    return names


def estimator_for(name: FamilyName, development: Any, pair: Pair, *, seed: int = 0) -> Any:
    """The unfitted estimator of a family for one pair (pooled families read other identities).

    Pooled families (``"pooled_diagonal_lda"``, ``"gaussian_lr"``, ``"laplace_lr"``,
    ``"clipped_lr"``) take their noise spread from the development rows of the other
    identities; when the table holds no other identity with two rows or more they fall back to
    the pair's own (training) rows: ``"pooled_diagonal_lda"`` becomes ``"diagonal_lda"``.
    """
    exclude = (pair.a, pair.b)
    if name in ("pooled_diagonal_lda", "gaussian_lr"):
        found = _pooled(development, exclude, "variance")
        if found is None:
            return candidate_estimator("diagonal_lda" if name == "pooled_diagonal_lda" else name, seed=seed)
        return candidate_estimator(name, seed=seed, variances=found[0], dof=found[1])
    if name in ("laplace_lr", "clipped_lr"):
        found = _pooled(development, exclude, "deviation")
        if found is None:
            return candidate_estimator(name, seed=seed)
        return candidate_estimator(name, seed=seed, deviations=found[0], dof=found[1])
    return candidate_estimator(name, seed=seed)


@final
@attrs.frozen
class BoundPlan:
    """The planned reserved evaluation a threshold or family is chosen for.

    Parameters
    ----------
    n_class0, n_class1 : int
        Planned reserved rows of ``pair.a`` and ``pair.b`` (``split.reserved.counts``).
    alpha_per_rate : float
        Level of each one-sided error bound; ``certify.plan.alpha_per_rate(family_size,
        confidence_level)`` for the protocol the test will be registered in.
    delta : float, default 0.0
        Delta of the certified statement.
    target : Target, optional
        What a choice maximizes instead of Eq. 16 at ``delta`` (a claim's ``target()``, e.g.
        :meth:`certify.GDPClaim.target`); :meth:`certify.FixedTest.select` sets it from its
        ``claim``.

    Raises
    ------
    ParameterError
        On a size below 1, ``alpha_per_rate`` outside (0, 1) or ``delta`` outside [0, 1).

    Notes
    -----
    The plan only steers choices made on development data. If the reserved counts or the
    family size turn out different at sealing, certificates remain valid (the protocol uses the
    actual counts and allocation); only the choice may be less powerful than it could be.

    Examples
    --------
    >>> BoundPlan(50, 50, 0.000625).n_class0
    50
    """

    n_class0: int
    n_class1: int
    alpha_per_rate: float
    delta: float = 0.0
    target: Target | None = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self) -> None:
        _check_plan(self.n_class0, self.n_class1, self.alpha_per_rate, self.delta)
        if self.target is not None and not isinstance(self.target, Target):
            raise ParameterError(
                f"BoundPlan.target must be a Target (claim.target()); got {self.target!r:.80}."
            )

    @classmethod
    def for_pair(
        cls, reserved: Any, pair: Pair, family_size: int, confidence_level: float = 0.95,
        delta: float = 0.0,
    ) -> BoundPlan:
        """The plan of a pair from a reserved split's counts and the protocol's family size.

        Examples
        --------
        >>> from certify.data import EmbeddingTable
        >>> t = EmbeddingTable.from_arrays(["a"] * 4 + ["b"] * 4, np.arange(8.0).reshape(8, 1))
        >>> plan = BoundPlan.for_pair(t.split(0.5, seed=0).reserved, Pair("a", "b"), 40)
        >>> plan.n_class0, round(plan.alpha_per_rate, 6)
        (2, 0.000625)
        """
        from certify.plan import alpha_per_rate

        counts = reserved.counts
        for ident in (pair.a, pair.b):
            if ident not in counts:
                raise ParameterError(f"identity {ident!r} has no rows in the reserved split.")
        return cls(int(counts[pair.a]), int(counts[pair.b]),
                   alpha_per_rate(family_size, confidence_level), delta)


def require_plan(plan: object) -> BoundPlan:
    """Return ``plan`` if it is a BoundPlan; raise ParameterError with the fix otherwise."""
    if not isinstance(plan, BoundPlan):
        raise ParameterError(
            f"plan must be a BoundPlan (planned reserved rows per class and alpha_per_rate); got "
            f"{plan!r}. Build one with BoundPlan.for_pair(split.reserved, pair, family_size)."
        )
    return plan


def _pooled(
    development: Any, exclude: tuple[str, ...], kind: Literal["variance", "deviation"]
) -> tuple[NDArray[np.float64], int] | None:
    """Per-coordinate within-identity spread pooled over identities, with its dof; None if none.

    ``"variance"``: squared deviations from each identity's mean; ``"deviation"``: absolute
    deviations from each identity's median. Degrees of freedom: rows minus identities.
    """
    total: NDArray[np.float64] | None = None
    dof = 0
    for ident in development.identities:
        if ident in exclude:
            continue
        rows = np.asarray(development.rows(ident), dtype=np.float64)
        if rows.shape[0] < 2:
            continue
        if kind == "variance":
            ss = ((rows - rows.mean(axis=0)) ** 2).sum(axis=0)
        else:
            ss = np.abs(rows - column_medians(rows)).sum(axis=0)
        total = ss if total is None else total + ss
        dof += rows.shape[0] - 1
    if total is None or dof == 0:
        return None
    return total / dof, dof


def pooled_variances(development: Any, exclude: tuple[str, ...] = ()) -> NDArray[np.float64]:
    """Per-coordinate within-identity variances pooled over a development table's identities.

    Parameters
    ----------
    development : EmbeddingTable
        The development table.
    exclude : tuple of str, default ()
        Identities left out (the pair under test, so its own rows shape only its mean).

    Returns
    -------
    numpy.ndarray
        Pooled variances, one per coordinate (degrees of freedom: rows minus identities).

    Raises
    ------
    DataError
        If fewer than two rows remain in every identity (nothing to pool).

    Examples
    --------
    >>> from certify.data import EmbeddingTable
    >>> t = EmbeddingTable.from_arrays(["a", "a", "b", "b"], np.array([[1.0], [3.0], [2.0], [4.0]]))
    >>> pooled_variances(t).tolist()
    [2.0]
    """
    found = _pooled(development, exclude, "variance")
    if found is None:
        raise DataError(
            "development must hold at least one identity with two or more rows besides the pair "
            "to pool variances; got none."
        )
    return found[0]


def pooled_deviations(development: Any, exclude: tuple[str, ...] = ()) -> NDArray[np.float64]:
    """Per-coordinate mean absolute deviations from identity medians, pooled over identities.

    Parameters
    ----------
    development : EmbeddingTable
        The development table.
    exclude : tuple of str, default ()
        Identities left out (the pair under test).

    Returns
    -------
    numpy.ndarray
        One value per coordinate: the sum of absolute deviations from each identity's median
        divided by rows minus identities (for Laplace noise an estimate of its scale).

    Raises
    ------
    DataError
        If fewer than two rows remain in every identity (nothing to pool).

    Examples
    --------
    >>> from certify.data import EmbeddingTable
    >>> t = EmbeddingTable.from_arrays(["a", "a", "b", "b"], np.array([[1.0], [3.0], [2.0], [4.0]]))
    >>> pooled_deviations(t).tolist()
    [2.0]
    """
    found = _pooled(development, exclude, "deviation")
    if found is None:
        raise DataError(
            "development must hold at least one identity with two or more rows besides the pair "
            "to pool deviations; got none."
        )
    return found[0]
