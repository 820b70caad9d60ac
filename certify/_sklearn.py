"""The one small typed door to scikit-learn: default estimator, cloning, fitting, scoring."""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Iterable
from typing import Any, Final, Literal, Protocol, cast, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from certify.errors import EstimatorError

__all__ = [
    "Classifier",
    "Response",
    "clone_estimator",
    "default_estimator",
    "fit_binary",
    "fit_labeled",
    "fit_logistic_l2",
    "out_of_fold",
    "stratified_folds",
    "is_classifier_like",
    "response_of",
    "score_binary",
]

Response = Literal["predict_proba", "decision_function"]


@runtime_checkable
class Classifier(Protocol):
    """What certify needs of a scikit-learn style classifier."""

    def fit(self, X: Any, y: Any) -> Any:
        """Fit to a design matrix and labels."""
        ...  # pragma: no cover


def default_estimator() -> Classifier:
    """The paper's classifier: ``LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)``."""
    from sklearn.linear_model import LogisticRegression

    return cast(Classifier, LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000))


def is_classifier_like(estimator: object) -> bool:
    """Whether ``estimator`` has ``fit`` and a usable response method."""
    return callable(getattr(estimator, "fit", None)) and (
        callable(getattr(estimator, "predict_proba", None))
        or callable(getattr(estimator, "decision_function", None))
    )


def response_of(estimator: object, response: Response | None = None) -> Response:
    """The response method to use: the requested one, else ``predict_proba`` when present."""
    if not callable(getattr(estimator, "fit", None)):
        raise EstimatorError(
            f"estimator must have a fit method; got {type(estimator).__name__}. "
            "Pass a scikit-learn classifier such as LogisticRegression()."
        )
    if response is not None:
        if response not in ("predict_proba", "decision_function"):
            raise EstimatorError(
                "response must be 'predict_proba' or 'decision_function'; "
                f"got {response!r}."
            )
        if not callable(getattr(estimator, response, None)):
            raise EstimatorError(
                f"estimator {type(estimator).__name__} has no {response} method. "
                "Choose the other response or another classifier."
            )
        return response
    if callable(getattr(estimator, "predict_proba", None)):
        return "predict_proba"
    if callable(getattr(estimator, "decision_function", None)):
        return "decision_function"
    raise EstimatorError(
        f"estimator {type(estimator).__name__} has neither predict_proba nor "
        "decision_function, so it gives no score to threshold. Use a probabilistic or "
        "margin classifier (for example LogisticRegression or SVC)."
    )


def clone_estimator(estimator: Classifier) -> Classifier:
    """An unfitted copy with the same parameters (``sklearn.base.clone``)."""
    from sklearn.base import clone

    try:
        return cast(Classifier, clone(estimator))
    except TypeError as exc:  # not a scikit-learn estimator
        raise EstimatorError(
            f"estimator {type(estimator).__name__} cannot be cloned by scikit-learn ({exc}). "
            "Pass an estimator that implements get_params/set_params."
        ) from exc


def _l2_logistic_settings(estimator: object) -> tuple[float, float, int] | None:
    """``(C, tol, max_iter)`` when ``estimator`` is a plain L2 lbfgs ``LogisticRegression``, else None.

    Plain means: the class itself (not a subclass), lbfgs, an L2 penalty with finite ``C > 0``,
    an intercept, no class or sample weights, no warm start. Those are the estimators
    :func:`fit_logistic_l2` reproduces.
    """
    from sklearn.linear_model import LogisticRegression

    if type(estimator) is not LogisticRegression:
        return None
    p = cast(Any, estimator).get_params()
    penalty, l1_ratio = p.get("penalty"), p.get("l1_ratio")
    l2 = penalty == "l2" or (penalty in ("deprecated", None) and l1_ratio in (0, 0.0) and penalty is not None)
    C, tol, max_iter = p.get("C"), p.get("tol"), p.get("max_iter")
    if not (
        l2
        and p.get("solver") == "lbfgs"
        and p.get("fit_intercept") is True
        and p.get("class_weight") is None
        and not p.get("warm_start")
        and not p.get("dual")
        and isinstance(C, int | float) and not isinstance(C, bool) and math.isfinite(C) and C > 0
        and isinstance(tol, int | float) and not isinstance(tol, bool) and math.isfinite(tol) and tol >= 0
        and isinstance(max_iter, int) and not isinstance(max_iter, bool) and max_iter >= 1
    ):
        return None
    return float(C), float(tol), int(max_iter)


def fit_logistic_l2(
    X: NDArray[np.float64], y: NDArray[np.int64], C: float, tol: float, max_iter: int
) -> tuple[NDArray[np.float64], float, int]:
    """Binary L2 logistic regression by L-BFGS-B, as scikit-learn's ``lbfgs`` solver runs it.

    Minimizes ``mean_i [log(1 + exp(z_i)) - y_i z_i] + ||w||^2 / (2 C n)`` with ``z = X w + b``
    (intercept not penalized) from ``w = 0, b = 0`` by L-BFGS-B with the options scikit-learn
    passes to ``scipy.optimize.minimize`` (``gtol = tol``, ``ftol = 64 eps``, ``maxls = 50``;
    through :func:`certify._lbfgsb.minimize_lbfgsb`), so it takes the same
    iterations to the same optimum (coefficients agree to ~1e-15 relative; tested) without
    scikit-learn's per-call input validation, which dominates the cost at audit sizes.

    Returns
    -------
    (coef, intercept, n_iter)
    """
    from scipy.special import expit, log_expit

    from certify._lbfgsb import minimize_lbfgsb

    n, d = X.shape
    sign = 2.0 * y.astype(np.float64) - 1.0
    target = y.astype(np.float64)
    l2 = 1.0 / (C * n)
    XT = X.T
    z = np.empty(n)
    t = np.empty(n)

    def loss_grad(wb: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        # The arithmetic of ``z = X w + b; loss = -sum(log_expit(sign z)) / n + l2 w.w / 2;
        # g = (expit(z) - y) / n; grad = [X^T g + l2 w, sum g]``, written into buffers.
        w = wb[:d]
        np.matmul(X, w, out=z)
        np.add(z, wb[d], out=z)
        np.multiply(sign, z, out=t)
        loss = -float(log_expit(t, out=t).sum()) / n + 0.5 * l2 * float(w @ w)
        g = expit(z, out=t)
        g -= target
        g /= n
        grad = np.empty(d + 1)
        np.matmul(XT, g, out=grad[:d])
        grad[:d] += l2 * w
        grad[d] = g.sum()
        return loss, grad

    x, nit, converged, message = minimize_lbfgsb(
        loss_grad, np.zeros(d + 1), max_iter, tol, 64 * np.finfo(float).eps, 50
    )
    if not converged:
        from sklearn.exceptions import ConvergenceWarning

        warnings.warn(
            f"lbfgs failed to converge after {nit} iterations ({message}). "
            "Increase max_iter or scale the data.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return x[:d].copy(), float(x[d]), nit


def fit_labeled(estimator: Classifier, X: NDArray[np.float64], y: NDArray[np.int64]) -> Classifier:
    """Fit a fresh clone on rows ``X`` with 0/1 labels ``y``; return it.

    A plain L2 lbfgs ``LogisticRegression`` (the default) is fitted by :func:`fit_logistic_l2`,
    the same iterations without scikit-learn's per-call overhead; the clone gets the usual fitted
    attributes (``coef_``, ``intercept_``, ``classes_``, ``n_features_in_``, ``n_iter_``).
    """
    model = clone_estimator(estimator)
    settings = _l2_logistic_settings(model)
    labels = np.asarray(y)
    binary = bool(np.any(labels == 0) and np.any(labels == 1) and np.all((labels == 0) | (labels == 1)))
    if settings is None or not binary:
        model.fit(X, y)
        return model
    X = np.asarray(X, dtype=np.float64)
    coef, intercept, n_iter = fit_logistic_l2(X, labels.astype(np.int64), *settings)
    fitted: Any = model
    fitted.coef_ = coef.reshape(1, -1)
    fitted.intercept_ = np.array([intercept])
    fitted.classes_ = np.array([0, 1])
    fitted.n_features_in_ = X.shape[1]
    fitted.n_iter_ = np.array([n_iter], dtype=np.int32)
    return model


_FOLD_CACHE: dict[tuple[bytes, str, int, int], list[tuple[NDArray[np.intp], NDArray[np.intp]]]] = {}
_FOLD_CACHE_SIZE: Final = 64
_fold_lock = threading.Lock()


def stratified_folds(
    y: NDArray[np.int64], folds: int, seed: int
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """``list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y))``, lean.

    The same fold assignment as scikit-learn (classes encoded in order of first appearance,
    folds allocated round-robin over the sorted labels, each class's fold labels shuffled by
    ``RandomState(seed)``), without its per-call target validation; callers have checked that
    every class has at least ``folds`` rows. Tested against scikit-learn.

    The folds depend only on the labels, ``folds`` and ``seed``, and audits ask for the same
    few label vectors again and again (every pair with the same class sizes), so the last few
    answers are kept; the index arrays are read-only.
    """
    labels = np.asarray(y)
    key = (labels.tobytes(), labels.dtype.str, int(folds), int(seed))
    with _fold_lock:
        cached = _FOLD_CACHE.get(key)
    if cached is not None:
        return list(cached)
    out = _stratified_folds(labels, folds, seed)
    for train, test in out:
        train.setflags(write=False)
        test.setflags(write=False)
    with _fold_lock:
        if len(_FOLD_CACHE) >= _FOLD_CACHE_SIZE:
            del _FOLD_CACHE[next(iter(_FOLD_CACHE))]
        _FOLD_CACHE[key] = out
    return list(out)


def _stratified_folds(
    y: NDArray[np.int64], folds: int, seed: int
) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
    """The fold assignment of :func:`stratified_folds`, computed."""
    rng = np.random.RandomState(seed)
    labels = np.asarray(y)
    _, y_idx, y_inv = np.unique(labels, return_index=True, return_inverse=True)
    _, class_perm = np.unique(y_idx, return_inverse=True)
    y_encoded = class_perm[y_inv.reshape(-1)]
    n_classes = len(y_idx)
    y_order = np.sort(y_encoded)
    allocation = np.asarray([np.bincount(y_order[i::folds], minlength=n_classes) for i in range(folds)])
    test_folds = np.empty(len(labels), dtype="i")
    for k in range(n_classes):
        folds_for_class = np.arange(folds).repeat(allocation[:, k])
        rng.shuffle(folds_for_class)
        test_folds[y_encoded == k] = folds_for_class
    indices = np.arange(len(labels))
    return [(indices[test_folds != i], indices[test_folds == i]) for i in range(folds)]


def out_of_fold(
    estimator: Classifier,
    X: NDArray[np.float64],
    y: NDArray[np.int64],
    folds: Iterable[tuple[NDArray[np.intp], NDArray[np.intp]]],
    response: Response,
) -> NDArray[np.float64]:
    """Scores of each ``test`` fold from a fresh model fitted on its ``train`` rows (0/1 labels).

    Entry ``i`` of the result is the class-1 score of row ``i`` from the fold that held it out;
    every row must be in exactly one test fold.
    """
    settings = _l2_logistic_settings(estimator)
    scores = np.empty(len(y), dtype=np.float64)
    for train, test in folds:
        y_train = y[train]
        if settings is not None and np.any(y_train == 0) and np.any(y_train == 1):
            coef, intercept, _ = fit_logistic_l2(X[train], y_train, *settings)
            scores[test] = _linear_scores(X[test], coef.reshape(1, -1), np.array([intercept]), response,
                                          "LogisticRegression")
        else:
            model = fit_labeled(estimator, X[train], y_train)
            scores[test] = score_binary(model, X[test], response)
    return scores


def _linear_scores(
    X: NDArray[np.float64], coef: NDArray[np.float64], intercept: NDArray[np.float64], response: Response,
    name: str,
) -> NDArray[np.float64]:
    """Class-1 scores of a binary linear model, by scikit-learn's own formulas."""
    from scipy.special import expit

    z = (X @ coef.T + intercept).reshape(-1)
    out = expit(z) if response == "predict_proba" else z
    if not np.all(np.isfinite(out)):
        raise EstimatorError(
            f"estimator {name}.{response} returned non-finite scores. "
            "Check the input for extreme values or choose another classifier."
        )
    return np.ascontiguousarray(out, dtype=np.float64)


def fit_binary(
    estimator: Classifier, x_a: NDArray[np.float64], x_b: NDArray[np.float64]
) -> Classifier:
    """Fit a fresh clone on class 0 = ``x_a`` and class 1 = ``x_b``; return it (see :func:`fit_labeled`)."""
    X = np.vstack([x_a, x_b])
    y = np.concatenate([np.zeros(len(x_a), dtype=np.int64), np.ones(len(x_b), dtype=np.int64)])
    return fit_labeled(estimator, X, y)


def score_binary(
    model: Classifier, X: NDArray[np.float64], response: Response
) -> NDArray[np.float64]:
    """Scores for class 1 from a fitted binary model: larger means more like class 1.

    A binary ``LogisticRegression`` is scored by its own formulas (``X @ coef_.T + intercept_``,
    and its logistic for ``predict_proba``) without the per-call validation.
    """
    from sklearn.linear_model import LogisticRegression

    fitted: Any = model
    if (
        type(model) is LogisticRegression
        and getattr(fitted, "coef_", None) is not None
        and len(getattr(fitted, "classes_", ())) == 2
        and list(fitted.classes_) == [0, 1]
    ):
        return _linear_scores(X, fitted.coef_, fitted.intercept_, response, type(model).__name__)
    method = getattr(model, response)
    raw = np.asarray(method(X), dtype=np.float64)
    if response == "predict_proba":
        classes = list(getattr(model, "classes_", [0, 1]))
        column = classes.index(1) if 1 in classes else raw.shape[1] - 1
        out = raw[:, column]
    else:
        out = raw.reshape(len(X), -1)[:, -1] if raw.ndim > 1 else raw
    if not np.all(np.isfinite(out)):
        raise EstimatorError(
            f"estimator {type(model).__name__}.{response} returned non-finite scores. "
            "Check the input for extreme values or choose another classifier."
        )
    return np.ascontiguousarray(out, dtype=np.float64)
