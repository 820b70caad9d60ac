"""Score models of fixed tests: how a registered test turns rows into scores, stored as data."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from typing import Any, TypeAlias, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify import _sklearn
from certify.errors import DataError, EstimatorError, RecordError

__all__ = ["FunctionScore", "LinearScore", "ScoreFunction", "ScoreModel", "SkopsScore"]

ScoreFunction: TypeAlias = Callable[[NDArray[np.float64]], NDArray[np.float64]]
"""A fixed score function: rows in, one score per row out (larger = more like class 1)."""



def _float_tuple(values: Any) -> tuple[float, ...]:
    """Converter: an iterable of numbers to a tuple of floats."""
    return tuple(float(x) for x in values)


@final
@attrs.frozen
class LinearScore:
    """A linear score ``X @ coef + intercept`` (a fitted linear classifier's decision function).

    Attributes
    ----------
    coef : tuple of float
        One coefficient per coordinate.
    intercept : float
        The intercept.
    """

    coef: tuple[float, ...] = attrs.field(converter=_float_tuple)
    intercept: float = attrs.field(converter=float)

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        coef: NDArray[np.float64] = np.asarray(self.coef, dtype=np.float64)
        if X.shape[1] != coef.shape[0]:
            raise DataError(
                f"rows must have dimension {coef.shape[0]} to be scored by this test; got "
                f"{X.shape[1]}."
            )
        out: NDArray[np.float64] = X @ coef + self.intercept
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"kind": "linear", "coef": list(self.coef), "intercept": self.intercept}


def _is_sklearn_class(name: str) -> bool:
    """Whether a dotted name from a skops file is a class defined in scikit-learn."""
    import importlib

    module, _, attr = name.rpartition(".")
    if not module.startswith("sklearn.") or not attr.isidentifier():
        return False
    try:
        found = getattr(importlib.import_module(module), attr, None)
    except Exception:
        return False
    return isinstance(found, type) and str(getattr(found, "__module__", "")).startswith("sklearn.")


@final
@attrs.frozen
class SkopsScore:
    """A fitted scikit-learn estimator stored with ``skops.io`` (loads only trusted types).

    Attributes
    ----------
    blob : bytes
        The ``skops.io.dumps`` bytes.
    response : str
        ``"predict_proba"`` or ``"decision_function"``.
    sha256 : str
        SHA-256 of ``blob``.
    """

    blob: bytes = attrs.field(repr=False)
    response: _sklearn.Response
    sha256: str
    _model: Any = attrs.field(default=None, eq=False, repr=False, alias="_model")

    @classmethod
    def from_estimator(cls, model: object, response: _sklearn.Response) -> SkopsScore:
        """Serialize a fitted estimator."""
        import skops.io as sio

        try:
            blob = sio.dumps(model)
        except Exception as exc:
            raise EstimatorError(
                f"the fitted {type(model).__name__} cannot be stored with skops.io ({exc}); use a "
                "linear classifier or a scikit-learn estimator skops supports."
            ) from exc
        return cls(blob, response, hashlib.sha256(blob).hexdigest(), _model=model)

    @classmethod
    def from_blob(cls, blob: bytes, response: _sklearn.Response, sha256: str) -> SkopsScore:
        """Load from bytes, refusing any type outside scikit-learn, numpy and builtins."""
        import skops.io as sio

        if hashlib.sha256(blob).hexdigest() != sha256:
            raise RecordError("the stored model's bytes do not match its SHA-256.")
        try:
            untrusted = sio.get_untrusted_types(data=blob)
        except Exception as exc:
            raise RecordError(f"the stored model is not a valid skops file ({exc}).") from exc
        # A name is called by skops on load (with arguments from the file), so a prefix rule is
        # not enough: "builtins.eval" or "numpy.load" would run code. Beyond skops' own safe
        # defaults only scikit-learn classes are accepted.
        refused = [t for t in untrusted if not _is_sklearn_class(t)]
        if refused:
            raise RecordError(
                f"the stored model contains types that are not trusted: {refused[:5]!r}. Only "
                "scikit-learn classes (beyond skops' safe defaults) are loaded from records."
            )
        try:
            model = sio.loads(blob, trusted=untrusted)
        except Exception as exc:
            raise RecordError(f"the stored model could not be loaded ({exc}).") from exc
        return cls(blob, response, sha256, _model=model)

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        return _sklearn.score_binary(self._model, X, self.response)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description (the model bytes in base64)."""
        return {
            "kind": "skops",
            "response": self.response,
            "sha256": self.sha256,
            "data_base64": base64.b64encode(self.blob).decode("ascii"),
        }


@final
@attrs.frozen
class FunctionScore:
    """A score function supplied by the caller (e.g. an exact likelihood-ratio oracle).

    Only its name is recorded; evaluating a loaded record needs the same function passed again
    under that name.
    """

    name: str
    function: ScoreFunction = attrs.field(eq=False, repr=False)

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        out = np.asarray(self.function(X), dtype=np.float64).reshape(-1)
        if out.shape[0] != X.shape[0] or not np.all(np.isfinite(out)):
            raise EstimatorError(
                f"score function {self.name!r} must return one finite score per row; got shape "
                f"{out.shape} for {X.shape[0]} rows."
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"kind": "function", "name": self.name}


ScoreModel: TypeAlias = LinearScore | SkopsScore | FunctionScore
