"""The sealed pre-registration protocol (paper Sec. 5.3, 6.5): choose on development, test once.

Lifecycle (a typestate): a draft :class:`Protocol` collects :class:`FixedTest` objects, each fitted
on development data only; :meth:`Protocol.seal` checks them against the reserved split, fixes the
Bonferroni allocation and writes a JSON pre-registration record to the :class:`~certify.Ledger`;
:meth:`SealedProtocol.evaluate` marks the reserved split spent in the ledger, then reads its rows
once and issues a :class:`~certify.CertificateFamily`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import functools
import hashlib
import json
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify import _sklearn
from certify._core import Pair, check_confidence_level, check_delta, check_int, check_text
from certify._token import ISSUER
from certify.data import DevTestSplit, EmbeddingTable, ReservedSplit
from certify.errors import (
    DataError,
    EstimatorError,
    ParameterError,
    ProtocolError,
    ProtocolSealedError,
    RecordError,
    ReservedSplitReusedError,
)
from certify.ledger import Ledger
from certify.mmd_test import MMD_ASSUMPTIONS, MMDTest
from certify.results import Certificate, CertificateFamily, ErrorRateEvidence, MMDEvidence
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds
from certify.stats.mmd import mmd_lower_confidence_bound

__all__ = [
    "FixedTest",
    "RegisteredTest",
    "FunctionScore",
    "LinearScore",
    "PreregistrationRecord",
    "Protocol",
    "ScoreFunction",
    "SealedProtocol",
    "SkopsScore",
    "ThresholdRule",
]

RECORD_FORMAT: Final = "certify.preregistration"
RECORD_VERSION: Final = 1

ScoreFunction: TypeAlias = Callable[[NDArray[np.float64]], NDArray[np.float64]]
"""A fixed score function: rows in, one score per row out (larger = more like class 1)."""

ThresholdRule: TypeAlias = float | Literal["youden", "max_bound"]
"""A fixed threshold, or a rule applied to development scores."""

if TYPE_CHECKING:
    from certify.families import BoundPlan

CERTIFICATE_ASSUMPTIONS: Final = (
    "the reserved rows of each identity are iid draws from that identity's output distribution",
    "the reserved rows were used for no choice: pairs, classifier, orientation and threshold "
    "were fixed on development data and recorded before evaluation",
    "the two error rates of every test are bounded simultaneously by a union (Bonferroni) bound",
)

_SPENT_IN_PROCESS: set[str] = set()


# -- score models: how a fixed test turns rows into scores ----------------------------------


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


# -- fixed tests -----------------------------------------------------------------------------


def _choose_threshold(
    scores_0: NDArray[np.float64],
    scores_1: NDArray[np.float64],
    rule: ThresholdRule,
    plan: BoundPlan | None = None,
) -> tuple[int, float]:
    """Orientation (+1: high scores mean class 1) and threshold from development scores."""
    n0, n1 = len(scores_0), len(scores_1)
    # Mann-Whitney AUC decides the orientation.
    pooled = np.concatenate([scores_0, scores_1])
    from scipy.stats import rankdata

    ranks = rankdata(pooled)
    auc = (ranks[n0:].sum() - n1 * (n1 + 1) / 2) / (n0 * n1)
    orientation = 1 if auc >= 0.5 else -1
    if not isinstance(rule, str):
        return orientation, float(rule)
    s0, s1 = orientation * scores_0, orientation * scores_1
    if rule == "max_bound":
        from certify.families import max_bound_cut, require_plan

        plan = require_plan(plan)
        cut, _ = max_bound_cut(s0, s1, plan.n_class0, plan.n_class1, plan.alpha_per_rate, plan.delta)
        return orientation, float(orientation * cut)
    if rule != "youden":
        raise ParameterError(
            f"threshold must be a number, 'youden' or 'max_bound'; got {rule!r}."
        )
    cuts = np.unique(np.concatenate([s0, s1]))
    # predict class 1 when oriented score >= cut
    tpr = 1.0 - np.searchsorted(np.sort(s1), cuts, side="left") / n1
    fpr = 1.0 - np.searchsorted(np.sort(s0), cuts, side="left") / n0
    best = int(np.argmax(tpr - fpr))
    lower = cuts[best - 1] if best > 0 else cuts[best] - 1.0
    oriented = 0.5 * (cuts[best] + lower)
    return orientation, float(orientation * oriented)


@final
@attrs.frozen
class FixedTest:
    """A decision rule fixed on development data: score, orientation and threshold.

    The test predicts class 1 (``pair.b``) for a row when ``orientation * score >=
    orientation * threshold``. On reserved data its false-positive rate is measured on rows of
    ``pair.a`` and its false-negative rate on rows of ``pair.b``.

    Build one with :meth:`fit` (a scikit-learn classifier) or :meth:`from_score` (a fixed score
    function such as an exact likelihood-ratio oracle).

    Attributes
    ----------
    pair : Pair
        The identity pair.
    model : LinearScore or SkopsScore or FunctionScore
        How rows become scores.
    threshold : float
        Threshold in score units.
    orientation : int
        ``+1`` if high scores indicate ``pair.b``, ``-1`` otherwise.
    development_fingerprint : str
        Fingerprint of the development table the test was chosen on.
    name : str
        A label for reports (e.g. ``"logistic"``).
    development_auc : float
        Out-of-fold AUC on development data (oriented), for reports.
    """

    pair: Pair = attrs.field(validator=attrs.validators.instance_of(Pair))
    model: ScoreModel
    threshold: float = attrs.field(converter=float)
    orientation: int
    development_fingerprint: str
    name: str
    development_auc: float = attrs.field(converter=float)

    def __attrs_post_init__(self) -> None:
        if not math.isfinite(self.threshold):
            raise ParameterError(f"threshold must be a finite number; got {self.threshold!r}.")
        if self.orientation not in (1, -1):
            raise ParameterError(f"orientation must be +1 or -1; got {self.orientation!r}.")

    @classmethod
    def fit(
        cls,
        estimator: object | None,
        development: EmbeddingTable,
        pair: Pair,
        *,
        threshold: ThresholdRule = "youden",
        folds: int = 5,
        seed: int = 0,
        response: _sklearn.Response | None = None,
        name: str | None = None,
        plan: BoundPlan | None = None,
    ) -> FixedTest:
        """Fit a classifier on development data and fix its orientation and threshold.

        Parameters
        ----------
        estimator : scikit-learn classifier or None
            Any classifier with ``predict_proba`` or ``decision_function``; None means the
            paper's ``LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000)``.
        development : EmbeddingTable
            The development part of a split (``split.development``).
        pair : Pair
            ``pair.a`` is class 0, ``pair.b`` class 1.
        threshold : float or "youden" or "max_bound", default "youden"
            A fixed threshold, or ``"youden"``: the cut that maximizes TPR - FPR on
            out-of-fold development scores (midpoint to the next lower score), or
            ``"max_bound"``: the cut that maximizes the expected certified bound (Eq. 16) at the
            planned reserved sizes and ``alpha_per_rate`` of ``plan``
            (:func:`certify.families.expected_bound`).
        folds : int, default 5
            Stratified folds for the out-of-fold development scores.
        seed : int, default 0
            Seed of the fold assignment.
        response : "predict_proba" or "decision_function", optional
            Score to threshold; linear classifiers always use their decision function (a
            monotone transform of the probability that does not saturate).
        name : str, optional
            Label for reports; default the estimator's class name.
        plan : BoundPlan, optional
            Planned reserved rows per class, ``alpha_per_rate`` and delta; required by
            ``threshold="max_bound"`` and ignored otherwise.

        Returns
        -------
        FixedTest

        Raises
        ------
        EstimatorError
            If the estimator cannot produce scores.
        DataError
            If the pair's identities are missing or have fewer rows than ``folds``.

        Notes
        -----
        Orientation and threshold come from out-of-fold scores on development data; the final
        model is then refitted on all development rows of the pair (paper Sec. 5.3). Reserved
        data are never touched.
        """
        if not isinstance(development, EmbeddingTable):
            raise DataError(
                f"development must be an EmbeddingTable; got {type(development).__name__}. "
                "Pass split.development."
            )
        if not isinstance(pair, Pair):
            raise ParameterError(f"pair must be a Pair; got {pair!r}.")
        est = _sklearn.default_estimator() if estimator is None else estimator
        resp = _sklearn.response_of(est, response)
        x_a, x_b = development.rows(pair.a), development.rows(pair.b)
        linear = _is_linear(est)
        score_resp: _sklearn.Response = "decision_function" if linear else resp
        oof = _out_of_fold(cast(_sklearn.Classifier, est), x_a, x_b, folds, seed, score_resp)
        orientation, thr = _choose_threshold(oof[: len(x_a)], oof[len(x_a) :], threshold, plan)
        auc = _oriented_auc(oof[: len(x_a)], oof[len(x_a) :], orientation)
        model = _sklearn.fit_binary(cast(_sklearn.Classifier, est), x_a, x_b)
        score_model: ScoreModel
        if linear:
            fitted: Any = model
            coef = np.asarray(fitted.coef_, dtype=np.float64).reshape(-1)
            intercept = float(np.asarray(fitted.intercept_).reshape(-1)[0])
            score_model = LinearScore(tuple(coef.tolist()), intercept)
        else:
            score_model = SkopsScore.from_estimator(model, score_resp)
        return cls(
            pair=pair,
            model=score_model,
            threshold=thr,
            orientation=orientation,
            development_fingerprint=development.fingerprint,
            name=name or type(est).__name__,
            development_auc=auc,
        )

    @classmethod
    def from_score(
        cls,
        score: ScoreFunction,
        development: EmbeddingTable,
        pair: Pair,
        *,
        name: str,
        threshold: ThresholdRule = "youden",
        plan: BoundPlan | None = None,
    ) -> FixedTest:
        """Fix a given score function's orientation and threshold on development data.

        Parameters
        ----------
        score : callable
            Rows in, one finite score per row out. Nothing is fitted.
        development : EmbeddingTable
            The development part of a split.
        pair : Pair
            ``pair.a`` is class 0, ``pair.b`` class 1.
        name : str
            Name recorded for the function; a loaded record needs it passed again under it.
        threshold : float or "youden" or "max_bound", default "youden"
            As in :meth:`fit`, applied to the development scores directly.
        plan : BoundPlan, optional
            As in :meth:`fit`.

        Returns
        -------
        FixedTest
        """
        if not callable(score):
            raise EstimatorError(f"score must be callable; got {type(score).__name__}.")
        if not isinstance(development, EmbeddingTable):
            raise DataError("development must be an EmbeddingTable; pass split.development.")
        model = FunctionScore(name, score)
        s0 = model.score(development.rows(pair.a))
        s1 = model.score(development.rows(pair.b))
        orientation, thr = _choose_threshold(s0, s1, threshold, plan)
        return cls(
            pair=pair,
            model=model,
            threshold=thr,
            orientation=orientation,
            development_fingerprint=development.fingerprint,
            name=name,
            development_auc=_oriented_auc(s0, s1, orientation),
        )

    @classmethod
    def select(
        cls,
        candidates: str | Sequence[str],
        development: EmbeddingTable,
        pair: Pair,
        *,
        plan: BoundPlan,
        threshold: ThresholdRule = "youden",
        folds: int = 5,
        seed: int = 0,
        name: str | None = None,
    ) -> FixedTest:
        """Choose among candidate test families on development data, then fit the chosen one.

        Parameters
        ----------
        candidates : str or sequence of str
            ``"certify"`` (the default families, :data:`certify.families.CERTIFY_CANDIDATES`),
            ``"paper"`` (logistic regression, Sec. 6.5), or family names from
            :data:`certify.families.FAMILY_NAMES`.
        development : EmbeddingTable
            The development part of a split; identities other than the pair may inform a
            family (pooled noise variances) but reserved rows are never touched.
        pair : Pair
            ``pair.a`` is class 0, ``pair.b`` class 1.
        plan : BoundPlan
            Planned reserved rows per class, ``alpha_per_rate`` and delta of the criterion.
        threshold : float or "youden" or "max_bound", default "youden"
            Threshold rule of the chosen family (as in :meth:`fit`).
        folds : int, default 5
            Stratified folds of the out-of-fold development scores (the same for every family).
        seed : int, default 0
            Seed of the folds.
        name : str, optional
            Label for reports; default ``"certify:<family>"``.

        Returns
        -------
        FixedTest
            The chosen family, fitted on all development rows of the pair.

        Raises
        ------
        ParameterError
            On an unknown family or an invalid plan.
        DataError
            If the pair's identities are missing or have fewer rows than ``folds``.

        Notes
        -----
        Each family gets the best expected certified bound over thresholds,
        :func:`certify.families.max_bound_cut`, computed from its out-of-fold development
        scores only; the family with the largest value wins (ties: the higher out-of-fold AUC,
        then the earlier candidate). Every choice is made on development data, so the reserved
        split is still used once and the certificate's guarantee is unchanged; selecting the
        maximum of noisy estimates can only cost power, never validity.
        """
        from certify.families import estimator_for, require_plan, resolve_candidates

        plan = require_plan(plan)
        names = resolve_candidates(candidates)
        if not isinstance(development, EmbeddingTable):
            raise DataError(
                f"development must be an EmbeddingTable; got {type(development).__name__}. "
                "Pass split.development."
            )
        if not isinstance(pair, Pair):
            raise ParameterError(f"pair must be a Pair; got {pair!r}.")
        x_a, x_b = development.rows(pair.a), development.rows(pair.b)
        from certify.families import max_bound_cut

        best: tuple[float, float, int] | None = None
        chosen: tuple[str, object] | None = None  # (family name, unfitted estimator)
        for k, fam in enumerate(names):
            est = estimator_for(fam, development, pair, seed=seed)
            oof = _out_of_fold(cast(_sklearn.Classifier, est), x_a, x_b, folds, seed, "decision_function")
            s0, s1 = oof[: len(x_a)], oof[len(x_a) :]
            orientation, _ = _choose_threshold(s0, s1, "youden")
            _, value = max_bound_cut(
                orientation * s0, orientation * s1, plan.n_class0, plan.n_class1,
                plan.alpha_per_rate, plan.delta,
            )
            key = (value, _oriented_auc(s0, s1, orientation), -k)
            if best is None or key > best:
                best, chosen = key, (fam, est)
        if chosen is None:  # pragma: no cover - resolve_candidates never returns ()
            raise ParameterError("candidates must name at least one family.")
        return cls.fit(chosen[1], development, pair, threshold=threshold, folds=folds, seed=seed,
                       name=name or f"certify:{chosen[0]}", plan=plan)

    def predict(self, X: NDArray[np.float64]) -> NDArray[np.bool_]:
        """True where the test predicts class 1 (``pair.b``)."""
        s = self.model.score(np.asarray(X, dtype=np.float64))
        out: NDArray[np.bool_] = self.orientation * s >= self.orientation * self.threshold
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description for the pre-registration record."""
        return {
            "name": self.name,
            "pair": [self.pair.a, self.pair.b],
            "model": self.model.to_json(),
            "threshold": self.threshold,
            "orientation": self.orientation,
            "development_fingerprint": self.development_fingerprint,
            "development_auc": self.development_auc,
        }

    @classmethod
    def from_json(
        cls, data: Mapping[str, Any], score_functions: Mapping[str, ScoreFunction] | None = None
    ) -> FixedTest:
        """Rebuild a test from its record entry (never runs code from the record)."""
        try:
            m = data["model"]
            kind = m["kind"]
            model: ScoreModel
            if kind == "linear":
                model = LinearScore(tuple(m["coef"]), m["intercept"])
            elif kind == "skops":
                model = SkopsScore.from_blob(
                    base64.b64decode(m["data_base64"], validate=True), m["response"], m["sha256"]
                )
            elif kind == "function":
                fn = (score_functions or {}).get(m["name"])
                if fn is None:
                    raise RecordError(
                        f"the record's test uses score function {m['name']!r}; pass it as "
                        f"score_functions={{{m['name']!r}: fn}}."
                    )
                model = FunctionScore(m["name"], fn)
            else:
                raise RecordError(f"unknown model kind {kind!r} in the record.")
            a, b = data["pair"]
            return cls(
                pair=Pair(str(a), str(b)),
                model=model,
                threshold=data["threshold"],
                orientation=data["orientation"],
                development_fingerprint=data["development_fingerprint"],
                name=data["name"],
                development_auc=data["development_auc"],
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, RecordError):
                raise
            raise RecordError(f"a test entry of the record is malformed ({exc!r}).") from exc


RegisteredTest: TypeAlias = FixedTest | MMDTest
"""Anything a protocol can register: a fixed decision rule or an MMD statistic with a fixed kernel."""


def _is_linear(estimator: object) -> bool:
    """Whether the estimator is a scikit-learn linear classifier (stored as coefficients)."""
    from sklearn.linear_model._base import LinearClassifierMixin

    return isinstance(estimator, LinearClassifierMixin)


def _out_of_fold(
    estimator: _sklearn.Classifier,
    x_a: NDArray[np.float64],
    x_b: NDArray[np.float64],
    folds: int,
    seed: int,
    response: _sklearn.Response,
) -> NDArray[np.float64]:
    """Out-of-fold scores for class 1 on development rows (class 0 rows first)."""
    folds = check_int(folds, "folds", 2)
    if min(len(x_a), len(x_b)) < folds:
        raise DataError(
            f"each identity needs at least folds={folds} development rows; got {len(x_a)} and "
            f"{len(x_b)}. Lower folds or use more data."
        )
    X = np.vstack([x_a, x_b])
    y = np.concatenate([np.zeros(len(x_a), np.int64), np.ones(len(x_b), np.int64)])
    return _sklearn.out_of_fold(estimator, X, y, _sklearn.stratified_folds(y, folds, seed), response)


def _oriented_auc(s0: NDArray[np.float64], s1: NDArray[np.float64], orientation: int) -> float:
    """AUC of oriented scores (ties count one half)."""
    from scipy.stats import rankdata

    pooled = orientation * np.concatenate([s0, s1])
    ranks = rankdata(pooled)
    n0, n1 = len(s0), len(s1)
    return float((ranks[n0:].sum() - n1 * (n1 + 1) / 2) / (n0 * n1))


# -- the record ------------------------------------------------------------------------------


def _canonical(content: Mapping[str, Any]) -> str:
    """Canonical JSON text (sorted keys, no NaN) used for hashing."""
    return json.dumps(content, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _versions() -> dict[str, str]:
    """Versions of certify and its numerical dependencies (read once per process)."""
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """Installed versions; distributions cannot change under a running interpreter."""
    out: list[tuple[str, str]] = []
    for dist in ("certify", "numpy", "scipy", "scikit-learn", "attrs", "skops"):
        try:
            out.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append((dist, "unknown"))
    return tuple(out)


@final
@attrs.frozen
class PreregistrationRecord:
    """The JSON pre-registration record of a sealed protocol, with its own SHA-256.

    Attributes
    ----------
    content : Mapping
        Everything needed to evaluate later in another process: protocol settings, alpha
        allocation, data fingerprints and split parameters, fitted tests as data, library
        versions and the sealing time.
    sha256 : str
        SHA-256 of the canonical JSON of ``content``; checked on load.
    """

    content: Mapping[str, Any] = attrs.field(eq=False)
    sha256: str

    @classmethod
    def _create(cls, content: dict[str, Any]) -> PreregistrationRecord:
        """Hash and freeze new content."""
        text = _canonical(content)
        return cls(json.loads(text), hashlib.sha256(text.encode()).hexdigest())

    def to_json(self) -> str:
        """The record as JSON text (``content`` plus ``sha256``)."""
        return json.dumps({**self.content, "sha256": self.sha256}, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PreregistrationRecord:
        """Load a record and check its hash.

        Raises
        ------
        RecordError
            If the text is not a record, or was edited after sealing (hash mismatch).
        """
        try:
            data = json.loads(text)
        except (ValueError, TypeError, RecursionError) as exc:
            # ValueError covers JSONDecodeError and over-long integers; deep nesting recurses.
            raise RecordError(f"the record is not valid JSON ({exc}).") from exc
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            raise RecordError(
                f"this is not a certify pre-registration record (missing format {RECORD_FORMAT!r})."
            )
        if data.get("version") != RECORD_VERSION:
            raise RecordError(
                f"record version must be {RECORD_VERSION}; got {data.get('version')!r}."
            )
        claimed = data.pop("sha256", None)
        try:
            actual = hashlib.sha256(_canonical(data).encode()).hexdigest()
        except ValueError as exc:
            raise RecordError(f"the record contains invalid numbers ({exc}).") from exc
        if claimed != actual:
            raise RecordError(
                "the record's SHA-256 does not match its content: it was edited after sealing "
                f"(stated {str(claimed)[:12]}, computed {actual[:12]}). Use the original record."
            )
        _check_record_layout(data)
        return cls(data, actual)

    @property
    def protocol_name(self) -> str:
        """The protocol's name."""
        return str(self.content["protocol"]["name"])


_RECORD_LAYOUT: Final[dict[str, dict[str, type | tuple[type, ...]]]] = {
    "protocol": {
        "name": str,
        "confidence_level": (int, float),
        "delta": (int, float),
        "n_tests": int,
        "family_size": int,
        "alpha_per_rate": (int, float),
    },
    "data": {
        "table_fingerprint": str,
        "development_fingerprint": str,
        "reserved_fingerprint": str,
        "dev_fraction": (int, float),
        "seed": int,
        "reserved_counts": dict,
    },
}


def _check_record_layout(data: Mapping[str, Any]) -> None:
    """Raise RecordError unless a hashed record has the sections and field types evaluation reads."""
    for section, fields in _RECORD_LAYOUT.items():
        part = data.get(section)
        if not isinstance(part, dict):
            raise RecordError(f"record section {section!r} must be an object; got {part!r:.60}.")
        for key, kind in fields.items():
            value = part.get(key)
            if isinstance(value, bool) or not isinstance(value, kind):
                raise RecordError(
                    f"record field {section}.{key} is missing or of the wrong type; got {value!r:.60}."
                )
    tests = data.get("tests")
    if not isinstance(tests, list) or not tests or not all(isinstance(t, dict) for t in tests):
        raise RecordError(f"record field tests must be a non-empty list of objects; got {tests!r:.60}.")
    if not isinstance(data.get("annotations", {}), dict):
        raise RecordError("record field annotations must be an object.")


# -- protocol states ---------------------------------------------------------------------------


@final
class Protocol:
    """A draft pre-registration: register fixed tests, then seal against a reserved split.

    Parameters
    ----------
    name : str
        A name for records and reports.
    confidence_level : float, default 0.95
        Simultaneous confidence level of the whole family of certificates.
    delta : float, default 0.0
        The delta at which certificates state ``epsilon_lower``.
    family_size : int, optional
        Number of tests the Bonferroni correction covers; default (and minimum) the number of
        registered tests. Use it when this protocol is one of several in a stated family
        (paper Sec. 5.3 corrects over 8 conditions x 5 pairs).
    annotations : Mapping, optional
        JSON-serializable facts to keep in the record (e.g. candidate pairs, the protocol file).

    Raises
    ------
    ParameterError
        If a setting is out of range.

    Notes
    -----
    ``alpha_per_rate = (1 - confidence_level) / (2 * family_size)``: each test has two error
    rates, each bounded one-sided at that level, so by the union bound all bounds hold together
    with probability at least ``confidence_level`` under the iid model.

    Examples
    --------
    >>> p = Protocol(name="audit", confidence_level=0.95, delta=0.0)
    >>> p.tests
    ()
    """

    __slots__ = ("_sealed", "_tests", "annotations", "confidence_level", "delta", "family_size", "name")

    def __init__(
        self,
        name: str,
        confidence_level: float = 0.95,
        delta: float = 0.0,
        family_size: int | None = None,
        annotations: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = check_text(name, "name")
        try:
            self.annotations: dict[str, Any] = json.loads(
                json.dumps(dict(annotations or {}), allow_nan=False)
            )
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"annotations must be JSON-serializable, finite data ({exc}).") from exc
        self.confidence_level = check_confidence_level(confidence_level)
        self.delta = check_delta(delta)
        self.family_size = None if family_size is None else check_int(family_size, "family_size", 1)
        self._tests: list[RegisteredTest] = []
        self._sealed = False

    @property
    def tests(self) -> tuple[RegisteredTest, ...]:
        """The registered tests, in order."""
        return tuple(self._tests)

    def register(self, test: RegisteredTest) -> None:
        """Add a fixed test (a decision rule, or an MMD statistic with a fixed kernel).

        Raises
        ------
        ProtocolSealedError
            If the protocol was sealed.
        ProtocolError
            If ``test`` is not a FixedTest or MMDTest, or the same pair and test name is already
            registered.
        """
        if self._sealed:
            raise ProtocolSealedError(
                f"protocol {self.name!r} is sealed; it can no longer change. Start a new Protocol "
                "for new tests (and reserve fresh data for them)."
            )
        if not isinstance(test, FixedTest | MMDTest):
            raise ProtocolError(
                f"only a FixedTest or MMDTest can be registered; got {type(test).__name__}. Build "
                "one with FixedTest.fit(estimator, split.development, pair)."
            )
        for t in self._tests:
            if t.pair == test.pair and t.name == test.name:
                raise ProtocolError(
                    f"a test named {test.name!r} for pair {test.pair} is already registered."
                )
        self._tests.append(test)

    def seal(self, reserved: ReservedSplit, ledger: Ledger) -> SealedProtocol:
        """Check the tests against the reserved split, fix the alpha allocation, record, seal.

        Parameters
        ----------
        reserved : ReservedSplit
            The reserved part of the split whose development part the tests were fitted on.
        ledger : Ledger
            Where the pre-registration is recorded and the split will be marked spent.

        Returns
        -------
        SealedProtocol

        Raises
        ------
        ProtocolError
            If no test is registered, a test was fitted on other data, or a pair's identity has
            no reserved rows.
        ReservedSplitReusedError
            If the reserved split was already spent.
        ProtocolSealedError
            If this draft was sealed before.
        """
        if self._sealed:
            raise ProtocolSealedError(f"protocol {self.name!r} is already sealed.")
        if isinstance(reserved, DevTestSplit):
            raise ProtocolError("pass split.reserved to seal, not the whole split.")
        if not isinstance(reserved, ReservedSplit):
            raise ProtocolError(f"reserved must be a ReservedSplit; got {type(reserved).__name__}.")
        if not isinstance(ledger, Ledger):
            raise ProtocolError(f"ledger must be a Ledger; got {type(ledger).__name__}.")
        if not self._tests:
            raise ProtocolError("register at least one FixedTest before sealing.")
        for t in self._tests:
            if t.development_fingerprint != reserved.development_fingerprint:
                raise ProtocolError(
                    f"the test for pair {t.pair} was fitted on other data (development "
                    f"fingerprint {t.development_fingerprint[:12]}, but this reserved split's "
                    f"development sibling is {reserved.development_fingerprint[:12]}). Fit the "
                    "test on split.development of this very split."
                )
            for ident in t.pair.as_tuple():
                if ident not in reserved.counts:
                    raise ProtocolError(f"identity {ident!r} has no rows in the reserved split.")
        _check_unspent(reserved, ledger)
        n_tests = len(self._tests)
        family = n_tests if self.family_size is None else max(n_tests, self.family_size)
        alpha_per_rate = (1.0 - self.confidence_level) / (2 * family)
        content: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "protocol": {
                "name": self.name,
                "confidence_level": self.confidence_level,
                "delta": self.delta,
                "n_tests": n_tests,
                "family_size": family,
                "alpha_per_rate": alpha_per_rate,
            },
            "data": {
                "table_fingerprint": reserved.table_fingerprint,
                "development_fingerprint": reserved.development_fingerprint,
                "reserved_fingerprint": reserved.fingerprint,
                "dev_fraction": reserved.dev_fraction,
                "seed": reserved.seed,
                "reserved_counts": {
                    k: reserved.counts[k]
                    for k in sorted({i for t in self._tests for i in t.pair.as_tuple()})
                },
            },
            "tests": [t.to_json() for t in self._tests],
            "annotations": self.annotations,
            "library": _versions(),
            "sealed_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "nonce": uuid.uuid4().hex,
        }
        record = PreregistrationRecord._create(content)
        ledger.record_preregistration(
            record.sha256, self.name, reserved.fingerprint, record.to_json()
        )
        self._sealed = True
        return SealedProtocol._create(record, tuple(self._tests), reserved, ledger)

    def __repr__(self) -> str:
        state = "sealed" if self._sealed else "draft"
        return f"Protocol({self.name!r}, {len(self._tests)} tests, {state})"


def _check_unspent(reserved: ReservedSplit, ledger: Ledger) -> None:
    """Raise ReservedSplitReusedError if the split is known to be spent."""
    entry = ledger.entry(reserved.fingerprint)
    if entry is not None:
        from certify.ledger import _reuse_message

        raise ReservedSplitReusedError(_reuse_message(reserved.fingerprint, entry))
    earlier = ledger.overlap(reserved._row_keys())
    if earlier is not None:
        from certify.ledger import _overlap_message

        raise ReservedSplitReusedError(_overlap_message(earlier))
    if reserved.spent or reserved.fingerprint in _SPENT_IN_PROCESS:
        raise ReservedSplitReusedError(
            f"reserved split {reserved.fingerprint[:12]} was already evaluated in this process "
            "(with another ledger). A reserved split can be evaluated once, ever."
        )


@final
class SealedProtocol:
    """A sealed protocol: its record is fixed; :meth:`evaluate` may run once.

    Obtain one from :meth:`Protocol.seal` or, in another process, from :meth:`from_record`.
    It cannot be pickled (a copy would be a second chance); ``copy.copy`` returns itself.

    Attributes
    ----------
    record : PreregistrationRecord
        The pre-registration record written at sealing.
    tests : tuple of FixedTest
        The registered tests.
    ledger : Ledger
        The ledger that recorded the seal.
    """

    __slots__ = ("_evaluated", "_reserved", "ledger", "record", "tests")

    record: PreregistrationRecord
    tests: tuple[RegisteredTest, ...]
    ledger: Ledger
    _reserved: ReservedSplit
    _evaluated: bool

    def __init__(self) -> None:
        raise ProtocolError(
            "a SealedProtocol comes from Protocol.seal(...) or SealedProtocol.from_record(...)."
        )

    @classmethod
    def _create(
        cls,
        record: PreregistrationRecord,
        tests: tuple[RegisteredTest, ...],
        reserved: ReservedSplit,
        ledger: Ledger,
    ) -> SealedProtocol:
        """Internal constructor."""
        self = object.__new__(cls)
        self.record = record
        self.tests = tests
        self.ledger = ledger
        self._reserved = reserved
        self._evaluated = False
        return self

    @classmethod
    def from_record(
        cls,
        record: PreregistrationRecord | str,
        table: EmbeddingTable,
        ledger: Ledger,
        *,
        score_functions: Mapping[str, ScoreFunction] | None = None,
    ) -> SealedProtocol:
        """Rebuild a sealed protocol from its record, the full table and the sealing ledger.

        Parameters
        ----------
        record : PreregistrationRecord or str
            The record, or its JSON text (its hash is checked).
        table : EmbeddingTable
            The same table the split was made from; the split is rebuilt from the recorded
            ``dev_fraction`` and ``seed`` and its fingerprints are checked.
        ledger : Ledger
            The ledger that recorded the seal.
        score_functions : Mapping[str, callable], optional
            Score functions for tests recorded as ``"function"``.

        Returns
        -------
        SealedProtocol

        Raises
        ------
        RecordError
            If the record was edited, belongs to another table, or was not sealed in ``ledger``.
        """
        rec = (
            record
            if isinstance(record, PreregistrationRecord)
            else PreregistrationRecord.from_json(record)
        )
        data = rec.content["data"]
        if table.fingerprint != data["table_fingerprint"]:
            raise RecordError(
                f"this record belongs to another table (record {data['table_fingerprint'][:12]}, "
                f"given {table.fingerprint[:12]}). Pass the table the protocol was sealed on."
            )
        split = table.split(data["dev_fraction"], data["seed"])
        if (
            split.reserved.fingerprint != data["reserved_fingerprint"]
            or split.reserved.development_fingerprint != data["development_fingerprint"]
        ):
            raise RecordError(
                "rebuilding the split from the record does not reproduce its fingerprints; the "
                "table or the library's split changed."
            )
        if ledger.preregistration(rec.sha256) is None:
            raise RecordError(
                f"record {rec.sha256[:12]} was not sealed in the ledger {str(ledger.path)!r}. "
                "Evaluate with the ledger that recorded the seal."
            )
        tests = tuple(
            MMDTest.from_json(t) if t.get("kind") == "mmd" else FixedTest.from_json(t, score_functions)
            for t in rec.content["tests"]
        )
        return cls._create(rec, tests, split.reserved, ledger)

    @property
    def reserved_fingerprint(self) -> str:
        """Fingerprint of the reserved split this protocol evaluates."""
        return self._reserved.fingerprint

    def evaluate(self) -> CertificateFamily:
        """Spend the reserved split and evaluate every fixed test on it, once.

        Returns
        -------
        CertificateFamily
            One certificate per registered test, holding simultaneously at the protocol's
            confidence level.

        Raises
        ------
        ReservedSplitReusedError
            If this reserved split was evaluated before, by this or any protocol, in this or any
            process using the same ledger. The message names who spent it and when.
        LedgerError
            If the ledger cannot be written; no reserved row has been read then.
        RecordError
            If ``record.content`` was changed after sealing; nothing is read or spent then.

        Notes
        -----
        The split is marked spent in a committed ledger transaction before any row is read, so a
        crash during evaluation leaves it spent. For each test, rows of ``pair.a`` give the
        false-positive count and rows of ``pair.b`` the false-negative count; each rate gets a
        one-sided Clopper-Pearson upper bound at ``alpha_per_rate`` and Eq. 16 turns the two
        bounds into ``epsilon_lower``.
        """
        if self._evaluated:
            raise ReservedSplitReusedError(
                f"this sealed protocol ({self.record.protocol_name!r}) was already evaluated; a "
                "reserved split can be evaluated once, ever."
            )
        if hashlib.sha256(_canonical(self.record.content).encode()).hexdigest() != self.record.sha256:
            raise RecordError(
                "the pre-registration record was changed after sealing (its SHA-256 no longer "
                "matches its content); nothing was read from the reserved split."
            )
        _check_unspent(self._reserved, self.ledger)
        name = self.record.protocol_name
        self.ledger.spend(
            self._reserved.fingerprint, self.record.sha256, name, self._reserved._row_keys()
        )
        self._evaluated = True
        self._reserved._mark_spent()
        _SPENT_IN_PROCESS.add(self._reserved.fingerprint)

        proto = self.record.content["protocol"]
        level = float(proto["confidence_level"])
        delta = float(proto["delta"])
        alpha = float(proto["alpha_per_rate"])
        family_id = f"{name}-{self.record.sha256[:12]}"
        certs: list[Certificate] = []
        for test in self.tests:
            rows_a = self._reserved._take(test.pair.a)
            rows_b = self._reserved._take(test.pair.b)
            if isinstance(test, MMDTest):
                bound = mmd_lower_confidence_bound(rows_a, rows_b, test.bandwidth, 2.0 * alpha)
                evidence = MMDEvidence(
                    mmd_biased=bound.mmd_biased,
                    slack=bound.slack,
                    mmd_lower=bound.lower,
                    bandwidth=test.bandwidth,
                    n_class0=len(rows_a),
                    n_class1=len(rows_b),
                    alpha=2.0 * alpha,
                )
                certs.append(
                    Certificate(
                        method="mmd_reserved",
                        test_name=test.name,
                        pair=test.pair,
                        delta=delta,
                        epsilon_lower=evidence.epsilon_lower_at(delta),
                        confidence_level=level,
                        family_id=family_id,
                        alpha_per_rate=alpha,
                        evidence=evidence,
                        protocol_fingerprint=self.record.sha256,
                        data_fingerprint=self._reserved.fingerprint,
                        assumptions=MMD_ASSUMPTIONS,
                        equation="Eq. 14 and Sec. 4.3 (Gretton et al. 2012, Thm 7)",
                        _issuer=ISSUER,
                    )
                )
                continue
            fp = int(test.predict(rows_a).sum())
            fn = int((~test.predict(rows_b)).sum())
            u_fpr = clopper_pearson_upper(fp, len(rows_a), alpha)
            u_fnr = clopper_pearson_upper(fn, len(rows_b), alpha)
            certs.append(
                Certificate(
                    method="roc_reserved",
                    test_name=test.name,
                    pair=test.pair,
                    delta=delta,
                    epsilon_lower=epsilon_lower_from_error_bounds(u_fpr, u_fnr, delta),
                    confidence_level=level,
                    family_id=family_id,
                    alpha_per_rate=alpha,
                    evidence=ErrorRateEvidence(
                        false_positives=fp,
                        n_class0=len(rows_a),
                        false_negatives=fn,
                        n_class1=len(rows_b),
                        u_fpr=u_fpr,
                        u_fnr=u_fnr,
                    ),
                    protocol_fingerprint=self.record.sha256,
                    data_fingerprint=self._reserved.fingerprint,
                    assumptions=CERTIFICATE_ASSUMPTIONS,
                    _issuer=ISSUER,
                )
            )
        family = CertificateFamily(
            certificates=(*certs,),
            confidence_level=level,
            family_id=family_id,
            sources=(self.record.sha256,),
            protocol_name=name,
            _issuer=ISSUER,
        )
        self.ledger.complete(self._reserved.fingerprint, _outcome_json(family))
        return family

    def __reduce__(self) -> tuple[object, ...]:
        raise ProtocolError(
            "a SealedProtocol cannot be pickled: a copy would be a second chance to evaluate. "
            "Save sealed.record.to_json() and rebuild with SealedProtocol.from_record(...)."
        )

    def __copy__(self) -> SealedProtocol:
        return self

    def __deepcopy__(self, memo: object) -> SealedProtocol:
        return self

    def __repr__(self) -> str:
        state = "evaluated" if self._evaluated else "sealed"
        return f"SealedProtocol({self.record.protocol_name!r}, {len(self.tests)} tests, {state})"


def _outcome_json(family: CertificateFamily) -> str:
    """A compact JSON summary of an evaluation for the ledger."""
    return json.dumps(
        {
            "confidence_level": family.confidence_level,
            "certificates": [
                {
                    "pair": [c.pair.a, c.pair.b],
                    "test": c.test_name,
                    "method": c.method,
                    "evidence": attrs.asdict(c.evidence),
                    "epsilon_lower": c.epsilon_lower,
                }
                for c in family.certificates
            ],
        },
        sort_keys=True,
    )

