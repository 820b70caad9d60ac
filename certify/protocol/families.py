"""Candidate test families for reserved-split certificates, and the expected-bound criterion.

A certificate's power depends on two choices made on development data: the score (which
direction separates the pair) and the threshold (which pair of error rates to bound). The paper
fixes both to logistic regression and the Youden cut (Sec. 6.5). This module offers linear
families that learn the likelihood-ratio direction from fewer rows, and the criterion
:func:`expected_bound` that ranks thresholds and families by the certified bound they are
expected to give on the reserved rows (Eq. 16), computed from development counts only.

Every family here is a scikit-learn linear classifier, so a fitted test stores as coefficients
(a :class:`~certify.protocol.scores.LinearScore`) and its record holds no executable model.
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

__all__ = [
    "CERTIFY_CANDIDATES",
    "BoundPlan",
    "FAMILY_NAMES",
    "FamilyName",
    "LinearDiscriminant",
    "MedianCentroid",
    "candidate_estimator",
    "estimator_for",
    "expected_bound",
    "max_bound_cut",
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
)
"""Every family name, in a fixed order."""

CERTIFY_CANDIDATES: Final[tuple[FamilyName, ...]] = (
    "shrinkage_lda",
    "mean_difference",
    "pooled_diagonal_lda",
    "median_centroid",
)
"""The families the ``"certify"`` default selects among on development data."""

_LOGISTIC_CS: Final = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)


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
        from sklearn.covariance import ledoit_wolf_shrinkage

        if self.covariance not in ("ledoit_wolf", "diagonal", "identity", "fixed_diagonal"):
            raise ParameterError(
                "covariance must be 'ledoit_wolf', 'diagonal', 'identity' or 'fixed_diagonal'; "
                f"got {self.covariance!r}."
            )
        x0, x1, classes = _two_classes(X, y)
        self.classes_ = classes
        mu0, mu1 = x0.mean(axis=0), x1.mean(axis=0)
        centered = np.vstack([x0 - mu0, x1 - mu1])
        var = centered.var(axis=0)
        floor = 1e-12 * max(float(var.mean()), 1e-300)
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
            z = centered / scale
            s = float(ledoit_wolf_shrinkage(z, assume_centered=True))
            rows = z.shape[0]
            if s >= 1.0:
                v = diff / scale
                spread = float(v @ v)
            elif rows <= z.shape[1]:
                # ((1 - s) Z'Z / rows + s I)^-1 b by the Woodbury identity (fewer rows than
                # coordinates: a rows x rows system).
                b = diff / scale
                c = s * rows / (1.0 - s)
                gram = z @ z.T + c * np.eye(rows)
                v = (b - z.T @ np.linalg.solve(gram, z @ b)) / s
            else:
                # more rows than coordinates: the d x d system directly
                b = diff / scale
                sigma = (1.0 - s) * (z.T @ z) / rows + s * np.eye(z.shape[1])
                v = np.linalg.solve(sigma, b)
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


def _two_classes(
    X: NDArray[np.float64], y: NDArray[Any]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[Any]]:
    """Rows of class 0 and class 1 (sorted labels) and the labels."""
    x = np.asarray(X, dtype=np.float64)
    labels = np.asarray(y)
    classes = np.unique(labels)
    if classes.shape[0] != 2:
        raise DataError(f"y must hold exactly two classes; got {classes.shape[0]}.")
    return x[labels == classes[0]], x[labels == classes[1]], classes


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
        m0, m1 = np.median(x0, axis=0), np.median(x1, axis=0)
        w = m1 - m0
        if self.scale:
            mad = np.concatenate([np.abs(x0 - m0), np.abs(x1 - m1)]).mean(axis=0)
            mad = np.maximum(mad, 1e-12 * max(float(mad.mean()), 1e-300))
            w = w / mad
        self.coef_ = w.reshape(1, -1)
        self.intercept_ = np.array([-float(w @ (0.5 * (m0 + m1)))])
        self.n_features_in_ = x0.shape[1]
        return self


def candidate_estimator(
    name: FamilyName, *, seed: int = 0, variances: NDArray[np.float64] | None = None
) -> Any:
    """An unfitted scikit-learn classifier of the named family.

    Parameters
    ----------
    name : str
        ``"paper"`` (``LogisticRegression(C=1)``, Sec. 6.5), ``"shrinkage_lda"`` (Ledoit-Wolf
        shrinkage LDA), ``"mean_difference"`` (LDA with identity covariance: the mean
        difference), ``"diagonal_lda"`` (LDA with a shrunk diagonal covariance),
        ``"logistic_cv"`` (logistic regression with ``C`` chosen by inner 3-fold
        cross-validation on development rows) or ``"median_centroid"``.
    seed : int, default 0
        Seed of the inner folds of ``"logistic_cv"``.
    variances : numpy.ndarray, optional
        Pooled per-coordinate noise variances, required by ``"pooled_diagonal_lda"``
        (:func:`pooled_variances`).

    Returns
    -------
    estimator
        A linear classifier (stored as coefficients in a record).

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
    """The unfitted estimator of a family for one pair (pooled families read other identities)."""
    variances = None
    if name == "pooled_diagonal_lda":
        variances = pooled_variances(development, exclude=(pair.a, pair.b))
    return candidate_estimator(name, seed=seed, variances=variances)


@final
@attrs.frozen
class BoundPlan:
    """The planned reserved evaluation a threshold or family is chosen for.

    Parameters
    ----------
    n_class0, n_class1 : int
        Planned reserved rows of ``pair.a`` and ``pair.b`` (``split.reserved.counts``).
    alpha_per_rate : float
        Bonferroni level of each error bound; ``certify.plan.alpha_per_rate(family_size,
        confidence_level)`` for the protocol the test will be registered in.
    delta : float, default 0.0
        Delta of the certified statement.

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

    def __attrs_post_init__(self) -> None:
        _check_plan(self.n_class0, self.n_class1, self.alpha_per_rate, self.delta)

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
    total: NDArray[np.float64] | None = None
    dof = 0
    for ident in development.identities:
        if ident in exclude:
            continue
        rows = np.asarray(development.rows(ident), dtype=np.float64)
        if rows.shape[0] < 2:
            continue
        ss = ((rows - rows.mean(axis=0)) ** 2).sum(axis=0)
        total = ss if total is None else total + ss
        dof += rows.shape[0] - 1
    if total is None or dof == 0:
        raise DataError(
            "development must hold at least one identity with two or more rows besides the pair "
            "to pool variances; got none."
        )
    out: NDArray[np.float64] = total / dof
    return out
