"""The one small typed door to scikit-learn: default estimator, cloning, fitting, scoring."""

from __future__ import annotations

from typing import Any, Literal, Protocol, cast, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from certify.errors import EstimatorError

__all__ = [
    "Classifier",
    "Response",
    "clone_estimator",
    "default_estimator",
    "fit_binary",
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


def fit_binary(
    estimator: Classifier, x_a: NDArray[np.float64], x_b: NDArray[np.float64]
) -> Classifier:
    """Fit a fresh clone on class 0 = ``x_a`` and class 1 = ``x_b``; return it."""
    model = clone_estimator(estimator)
    X = np.vstack([x_a, x_b])
    y = np.concatenate([np.zeros(len(x_a), dtype=np.int64), np.ones(len(x_b), dtype=np.int64)])
    model.fit(X, y)
    return model


def score_binary(
    model: Classifier, X: NDArray[np.float64], response: Response
) -> NDArray[np.float64]:
    """Scores for class 1 from a fitted binary model: larger means more like class 1."""
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
