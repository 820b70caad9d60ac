"""Fixed tests: a score, an orientation and a threshold, all chosen on development data."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify import _sklearn
from certify._core import Pair, check_int
from certify.data import EmbeddingTable
from certify.errors import DataError, EstimatorError, ParameterError, RecordError
from certify.protocol.scores import (
    FunctionScore,
    LinearScore,
    ScoreFunction,
    ScoreModel,
    SkopsScore,
    score_model_from_json,
)
from certify.stats.roc import auc as roc_auc

if TYPE_CHECKING:
    from certify.claims import AnyClaim
    from certify.protocol.families import BoundPlan

__all__ = ["AUTO_FOLDS_ROWS", "MAX_BOUND_LEVEL", "FixedTest", "ThresholdRule"]

ThresholdRule: TypeAlias = float | Literal["youden", "max_bound"]
"""A fixed threshold, or a rule applied to development scores."""

AUTO_FOLDS_ROWS: Final = 10_000
"""With at least this many development rows in each class, ``folds="auto"`` means 2 folds, else 5."""

MAX_BOUND_LEVEL: Final = 0.05
"""One-sided level of the pessimistic development error rates ``threshold="max_bound"`` ranks cuts by."""


def _choose_threshold(
    scores_0: NDArray[np.float64],
    scores_1: NDArray[np.float64],
    rule: ThresholdRule,
    plan: BoundPlan | None = None,
) -> tuple[int, float]:
    """Orientation (+1: high scores mean class 1) and threshold from development scores."""
    n0, n1 = len(scores_0), len(scores_1)
    # Mann-Whitney AUC decides the orientation.
    orientation = 1 if _oriented_auc(scores_0, scores_1, 1) >= 0.5 else -1
    if not isinstance(rule, str):
        return orientation, float(rule)
    s0, s1 = orientation * scores_0, orientation * scores_1
    if rule == "max_bound":
        from certify.protocol.families import require_plan

        plan = require_plan(plan)
        if plan.target is not None:
            found, thr, _ = _targeted_cut(scores_0, scores_1, plan)
            return found, thr
        found, thr, _ = _max_bound_choice(scores_0, scores_1, plan)
        return found, thr
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


def _max_bound_choice(
    scores_0: NDArray[np.float64], scores_1: NDArray[np.float64], plan: BoundPlan
) -> tuple[int, float, float]:
    """Orientation, threshold and value of ``threshold="max_bound"`` (Eq. 16 at the plan's delta).

    Cuts are ranked by the bound they would certify if their development error rates were as
    high as plausible (one-sided Clopper-Pearson at :data:`MAX_BOUND_LEVEL`,
    :func:`certify.protocol.criterion.best_cut` with ``dev_level``): a search over thousands of
    cuts by the expected bound picks, by chance, tail cuts whose few development counts look
    far apart (a winner's curse), which the reserved rows then do not confirm.
    """
    from certify.protocol.criterion import best_cut

    return best_cut(scores_0, scores_1, plan.n_class0, plan.n_class1, plan.alpha_per_rate, plan.delta,
                    dev_level=MAX_BOUND_LEVEL)


def _targeted_cut(
    scores_0: NDArray[np.float64], scores_1: NDArray[np.float64], plan: BoundPlan
) -> tuple[int, float, float]:
    """Orientation, threshold and value of the cut a claim's target prefers (robust to flukes).

    A curve's certified parameter is nearly flat across the thresholds of a likelihood-ratio
    score (the Gaussian trade-off curve is traced by all of them), so the largest value of a
    plug-in criterion over thousands of cuts is set by sampling noise in the sparse tails. The
    cut is chosen as the black-box audit chooses it: pessimistic development rates, required
    to hold on both halves of each class's out-of-fold scores
    (:func:`certify.protocol.criterion.robust_cut`).
    """
    from certify.protocol.criterion import robust_cut

    halves = [(scores_0[k::2], scores_1[k::2]) for k in (0, 1)]
    orientation, threshold, value, _ = robust_cut(
        halves, plan.n_class0, plan.n_class1, plan.alpha_per_rate, plan.delta, target=plan.target
    )
    return orientation, threshold, value


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
        claim: AnyClaim | None = None,
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
            ``"max_bound"``: the cut (either orientation) that maximizes the bound (Eq. 16) it
            would certify at the planned reserved sizes and ``alpha_per_rate`` of ``plan`` if
            its development error rates were as high as plausible (one-sided Clopper-Pearson
            at :data:`MAX_BOUND_LEVEL`; :func:`certify.protocol.criterion.best_cut` with
            ``dev_level``). A search of thousands of cuts by the expected bound
            (:func:`certify.protocol.families.expected_bound`) picks tail cuts whose few
            development counts look far apart by chance, and the reserved rows do not confirm
            them: on 25,000 development rows per class of a product-Laplace pair the expected
            bound's cut certified 0.73 on average with the exact likelihood ratio (once 0),
            the pessimistic cut 0.94; on one-dimensional pairs of 30 to 30,000 rows the two
            agree within noise (``benchmarks/bench_thresholds.py``).
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
        claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim, optional
            With ``threshold="max_bound"``, the cut maximizes what the certificate would
            certify in this claim's terms (``mu_lower`` for a GDP claim, and so on) instead of
            Eq. 16 at the plan's delta, with pessimistic development rates required to hold on
            both halves of the out-of-fold scores (the flat curve criteria would otherwise
            reward noise in sparse tails); orientation and threshold both come from that search.

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
        plan = _targeted(plan, claim)
        est = _sklearn.default_estimator() if estimator is None else estimator
        resp = _sklearn.response_of(est, response)
        return _fitted_test(cls, est, development, pair, threshold=threshold, folds=folds, seed=seed,
                            response=resp, name=name, plan=plan)

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
        folds: int | Literal["auto"] = "auto",
        seed: int = 0,
        name: str | None = None,
        claim: AnyClaim | None = None,
    ) -> FixedTest:
        """Choose among candidate test families on development data, then fit the chosen one.

        Parameters
        ----------
        candidates : str or sequence of str
            ``"certify"`` (the default families, :data:`certify.protocol.families.CERTIFY_CANDIDATES`),
            ``"paper"`` (logistic regression, Sec. 6.5), or family names from
            :data:`certify.protocol.families.FAMILY_NAMES`.
        development : EmbeddingTable
            The development part of a split; identities other than the pair may inform a
            family (pooled noise variances) but reserved rows are never touched.
        pair : Pair
            ``pair.a`` is class 0, ``pair.b`` class 1.
        plan : BoundPlan
            Planned reserved rows per class, ``alpha_per_rate`` and delta of the criterion.
        threshold : float or "youden" or "max_bound", default "youden"
            Threshold rule of the chosen family (as in :meth:`fit`).
        folds : int or "auto", default "auto"
            Stratified folds of the out-of-fold development scores (the same for every family);
            ``"auto"`` means 5, or 2 when each class has at least :data:`AUTO_FOLDS_ROWS`
            development rows (a quarter of the fitting of 5 folds, and as powerful there: see
            Notes).
        seed : int, default 0
            Seed of the folds.
        name : str, optional
            Label for reports; default ``"certify:<family>"``.
        claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim, optional
            The claim under test: families (and a ``"max_bound"`` threshold) are judged by what
            they are expected to certify in its terms (``mu_lower`` for a GDP claim,
            ``rho_lower`` for zCDP, the margin over a profile) instead of Eq. 16 at the plan's
            delta.

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
        :func:`certify.protocol.families.max_bound_cut`, computed from its out-of-fold development
        scores only (with ``threshold="max_bound"``, the value of that rule's cut: the bound at
        pessimistic development error rates, as in :meth:`fit`); the family with the largest
        value wins (ties: the higher out-of-fold AUC, then the earlier candidate). The chosen
        family's threshold is fixed on the same out-of-fold scores, and its model refitted on
        all development rows of the pair. Every choice is made on development data, so the
        reserved split is still used once and the certificate's guarantee is unchanged;
        selecting the maximum of noisy estimates can only cost power, never validity.

        Fewer folds where rows are many: with 2 folds each out-of-fold model is fitted on half
        the development rows instead of four fifths. On 25,000 development rows per class of a
        product-Laplace pair in 512 dimensions (``benchmarks/bench_embedding_pair.py``) the
        thresholds chosen on 2-fold and 5-fold scores certified the same on average, and the
        selection took a quarter of the fitting.
        """
        from certify.protocol.families import estimator_for, require_plan, resolve_candidates

        plan = require_plan(_targeted(plan, claim))
        names = resolve_candidates(candidates)
        if not isinstance(development, EmbeddingTable):
            raise DataError(
                f"development must be an EmbeddingTable; got {type(development).__name__}. "
                "Pass split.development."
            )
        if not isinstance(pair, Pair):
            raise ParameterError(f"pair must be a Pair; got {pair!r}.")
        x_a, x_b = development.rows(pair.a), development.rows(pair.b)
        if isinstance(folds, str) and folds == "auto":
            n_folds = 2 if min(len(x_a), len(x_b)) >= AUTO_FOLDS_ROWS else 5
        else:
            n_folds = check_int(folds, "folds", 2)
        from certify.protocol.families import max_bound_cut

        design = _design(x_a, x_b, n_folds, seed)  # stacked once for every family
        best: tuple[float, float, int] | None = None
        # (family name, unfitted estimator, its out-of-fold scores)
        chosen: tuple[str, object, NDArray[np.float64]] | None = None
        for k, fam in enumerate(names):
            est = estimator_for(fam, development, pair, seed=seed)
            oof = _out_of_fold(cast(_sklearn.Classifier, est), x_a, x_b, n_folds, seed,
                               "decision_function", design)
            s0, s1 = oof[: len(x_a)], oof[len(x_a) :]
            orientation, _ = _choose_threshold(s0, s1, "youden")
            if plan.target is not None:
                _, _, value = _targeted_cut(s0, s1, plan)
            elif threshold == "max_bound":  # judged by the criterion that will fix its cut
                _, _, value = _max_bound_choice(s0, s1, plan)
            else:
                _, value = max_bound_cut(
                    orientation * s0, orientation * s1, plan.n_class0, plan.n_class1,
                    plan.alpha_per_rate, plan.delta,
                )
            key = (value, _oriented_auc(s0, s1, orientation), -k)
            if best is None or key > best:
                best, chosen = key, (fam, est, oof)
        if chosen is None:  # pragma: no cover - resolve_candidates never returns ()
            raise ParameterError("candidates must name at least one family.")
        # the chosen family's out-of-fold scores are those FixedTest.fit would compute again
        return _fitted_test(cls, chosen[1], development, pair, threshold=threshold, folds=n_folds,
                            seed=seed, response="decision_function",
                            name=name or f"certify:{chosen[0]}", plan=plan, oof=chosen[2])

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
            model = score_model_from_json(data["model"], score_functions)
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


def _fitted_test(
    cls: type[FixedTest],
    est: object,
    development: EmbeddingTable,
    pair: Pair,
    *,
    threshold: ThresholdRule,
    folds: int,
    seed: int,
    response: _sklearn.Response,
    name: str | None,
    plan: BoundPlan | None,
    oof: NDArray[np.float64] | None = None,
) -> FixedTest:
    """:meth:`FixedTest.fit` after its checks; ``oof`` are the scores ``_out_of_fold`` would give."""
    x_a, x_b = development.rows(pair.a), development.rows(pair.b)
    linear = _is_linear(est)
    stored = _stores_score(est)
    score_resp: _sklearn.Response = "decision_function" if linear or stored else response
    if oof is None or score_resp != "decision_function":
        oof = _out_of_fold(cast(_sklearn.Classifier, est), x_a, x_b, folds, seed, score_resp)
    orientation, thr = _choose_threshold(oof[: len(x_a)], oof[len(x_a) :], threshold, plan)
    auc = _oriented_auc(oof[: len(x_a)], oof[len(x_a) :], orientation)
    model = _sklearn.fit_binary(cast(_sklearn.Classifier, est), x_a, x_b)
    score_model: ScoreModel
    if linear:
        fitted: Any = model
        if not (hasattr(fitted, "coef_") and hasattr(fitted, "intercept_")):
            raise EstimatorError(
                f"the fitted {type(est).__name__} has no coef_ and intercept_; a linear "
                "classifier must expose both to be stored as coefficients."
            )
        coef = np.asarray(fitted.coef_, dtype=np.float64).reshape(-1)
        intercept = float(np.asarray(fitted.intercept_).reshape(-1)[0])
        score_model = LinearScore(tuple(coef.tolist()), intercept)
    elif stored:
        score_model = cast(Any, model).score_model()
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


def _targeted(plan: BoundPlan | None, claim: AnyClaim | None) -> BoundPlan | None:
    """The plan with the claim's target (unchanged without a claim; a claim needs a plan)."""
    if claim is None:
        return plan
    from certify.claims import Claim, GDPClaim, ProfileClaim, ZCDPClaim

    if not isinstance(claim, Claim | GDPClaim | ZCDPClaim | ProfileClaim):
        raise ParameterError(
            f"claim must be a Claim, GDPClaim, ZCDPClaim or ProfileClaim; got {type(claim).__name__}."
        )
    if plan is None:
        raise ParameterError(
            "claim= steers the threshold rule 'max_bound', which needs plan=BoundPlan(...); pass "
            "plan=BoundPlan.for_pair(split.reserved, pair, family_size)."
        )
    return attrs.evolve(plan, target=claim.target())


def _is_linear(estimator: object) -> bool:
    """Whether the estimator is a linear two-class classifier stored as coefficients.

    scikit-learn's linear classifiers (``sklearn.linear_model``) and certify's own linear
    families qualify; the check uses only public names (module and methods), never a private
    base class. After fitting, :meth:`FixedTest.fit` also requires ``coef_`` and ``intercept_``.
    """
    from certify.protocol.families import _LinearScoreMixin

    if isinstance(estimator, _LinearScoreMixin):
        return True
    module = type(estimator).__module__
    return module.startswith("sklearn.linear_model") and callable(
        getattr(estimator, "decision_function", None)
    )


def _stores_score(estimator: object) -> bool:
    """Whether the estimator is a certify family whose fitted score is a stored score model."""
    from certify.protocol.families import _StoredScoreMixin

    return isinstance(estimator, _StoredScoreMixin)


_Design: TypeAlias = tuple[
    NDArray[np.float64], NDArray[np.int64], list[tuple[NDArray[np.intp], NDArray[np.intp]]]
]


def _design(x_a: NDArray[np.float64], x_b: NDArray[np.float64], folds: int, seed: int) -> _Design:
    """Stacked rows (class 0 first), 0/1 labels and stratified folds, checked."""
    folds = check_int(folds, "folds", 2)
    if min(len(x_a), len(x_b)) < folds:
        raise DataError(
            f"each identity needs at least folds={folds} development rows; got {len(x_a)} and "
            f"{len(x_b)}. Lower folds or use more data."
        )
    X = np.vstack([x_a, x_b])
    y = np.concatenate([np.zeros(len(x_a), np.int64), np.ones(len(x_b), np.int64)])
    return X, y, _sklearn.stratified_folds(y, folds, seed)


def _out_of_fold(
    estimator: _sklearn.Classifier,
    x_a: NDArray[np.float64],
    x_b: NDArray[np.float64],
    folds: int,
    seed: int,
    response: _sklearn.Response,
    design: _Design | None = None,
) -> NDArray[np.float64]:
    """Out-of-fold scores for class 1 on development rows (class 0 rows first).

    ``design`` is ``_design(x_a, x_b, folds, seed)`` when the caller scores several estimators.
    """
    X, y, index = _design(x_a, x_b, folds, seed) if design is None else design
    return _sklearn.out_of_fold(estimator, X, y, index, response)


def _oriented_auc(s0: NDArray[np.float64], s1: NDArray[np.float64], orientation: int) -> float:
    """AUC of oriented scores (ties count one half)."""
    return roc_auc(orientation * np.asarray(s0), orientation * np.asarray(s1))
