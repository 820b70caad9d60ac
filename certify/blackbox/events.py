"""Test families for mechanism outputs, and the choice of one event on development draws.

A black-box certificate bounds the probabilities of one event under two inputs (Eq. 16). Its
power is the event's: the likelihood-ratio event ``{y : p_b(y) / p_a(y) >= t}`` is the best one
(Neyman-Pearson), so every family here estimates a score that orders outputs by that ratio,
and the threshold is chosen to maximize the bound the reserved calls are expected to certify,
not fixed at a tail probability. Families, each stored as plain numbers (or, for the boosted
trees, a skops file that loads only scikit-learn types):

- ``histogram``: discrete outputs; the smoothed development log ratio of each output value;
- ``coordinate``: one output coordinate itself (a threshold on a scalar output);
- ``binned``: one continuous coordinate cut into quantile bins, scored by the bin's log ratio
  (events that are not a single tail);
- ``product``: the sum of every coordinate's binned log ratio (the exact log ratio when the
  coordinates are independent given the input: randomized bits, independent noise);
- ``laplace``: the exact log ratio of two product-Laplace laws, from medians and scales;
  ``product`` and ``laplace`` are also tried on consecutive differences of the coordinates
  (running sums add independent noise at each step);
- ``linear``: a shrinkage linear discriminant (Gaussian-like or counting outputs);
- ``logistic``: logistic regression (the paper's test, Sec. 6.5);
- ``blocks``: outputs made of blocks of coordinates that are independent of each other (two
  mechanisms side by side on independent noise): the sum of each block's log ratio, a
  histogram for a block of few discrete values, binned for one continuous coordinate, a
  logistic fit otherwise;
- ``boosted``: a histogram gradient-boosting classifier (non-linear ratios of vectors);
- ``grain`` and ``mantissa``: the representation of a continuous coordinate as a double (sign,
  exponent and trailing zero bits, or lowest mantissa bits), scored by the cell's log ratio:
  floating-point bugs (:mod:`certify.blackbox._float_fits`, docs/bugs.md).

The fits themselves are in :mod:`certify.blackbox._fits`; this module chooses among their
events.

Development draws are split in two halves: the first fits each family's score, the second
(for the linear, logistic and blocks families, cross-fitted: both, each scored by the fit on the other)
chooses the orientation and threshold (and among families and input pairs) by
:func:`~certify.protocol.criterion.robust_cut`: pessimistic development rates, required to hold
on both quarters of the development draws separately, so that a search over thousands of
thresholds does not reward a chance tail.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, Literal, TypeAlias, cast, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.blackbox._fits import (
    _FEW_VALUES,
    BinnedFits,
    FittedTrees,
    _bin_scores,
    _blocks_cross_fitted,
    _cross_fitted,
    _fitted,
    _Halves,
    _histogram,
)
from certify.blackbox._float_fits import FLOAT_FAMILIES, float_fitted
from certify.data.draws import is_discrete
from certify.errors import ParameterError
from certify.protocol.criterion import (
    FEW_CUTS,
    FEW_CUTS_LEVEL,
    best_cut,
    pessimistic_bound,
    robust_cut,
    robust_cuts,
)
from certify.protocol.scores import (
    BinnedScore,
    HistogramScore,
    ProductScore,
    ScoreModel,
    _row_hashes,
)
from certify.stats.roc import auc as roc_auc
from certify.stats.tradeoff import Target

__all__ = [
    "DEV_LEVEL",
    "FAMILIES",
    "VALUE_FAMILIES",
    "Choice",
    "Family",
    "choose_event",
    "event_errors",
    "expected_bound",
    "ranked",
    "resolve_families",
    "split_reserved",
]

Family: TypeAlias = Literal[
    "histogram", "coordinate", "binned", "product", "laplace", "linear", "logistic", "blocks",
    "boosted", "grain", "mantissa",
]
"""Names of the mechanism test families."""

FAMILIES: Final[tuple[Family, ...]] = (
    "histogram", "coordinate", "binned", "product", "laplace", "linear", "logistic", "blocks",
    "boosted", *FLOAT_FAMILIES,
)
"""Every family, in the order ties are broken (simpler first); ``tests="certify"``."""

VALUE_FAMILIES: Final[tuple[Family, ...]] = tuple(f for f in FAMILIES if f not in FLOAT_FAMILIES)
"""The families that read output values only (``tests="values"``): the law in real arithmetic."""

DEV_LEVEL: Final = 0.05
"""Level of the pessimistic development rates that rank thresholds (see ``pessimistic_bound``)."""

_SCORED_ROWS: Final = 200_000
_BOOSTED_MARGIN: Final = 0.01
_AUC_ROWS: Final = 1 << 17
"""Development scores per input that the reported AUC is computed on (a description only, no
part of any choice: to about 0.002 on this many calls, at a tenth of the sorting)."""
_BATCH_SCORES: Final = 1 << 21
"""Most development scores whose cuts one search judges together (:func:`robust_cuts`): the
scores of several coordinates searched at once cost one pass of the search's array operations
instead of one per coordinate, and at most a few dozen MB held at once."""
_WELL_COUNTED: Final = 20
_SHARES: Final = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)


@final
@attrs.frozen
class Choice:
    """One family's best event for one input pair, judged on development draws.

    Attributes
    ----------
    family : str
        The family.
    model : ScoreModel
        Its score, fitted on the first half of the development draws.
    orientation : int
        ``+1``: predict input b when ``score >= threshold``; ``-1``: when ``score <= threshold``.
    threshold : float
        The threshold, chosen on the second half.
    value : float
        The bound the reserved calls are expected to certify with pessimistic development
        rates (a ranking criterion, not a bound).
    plug_in : float
        The same with plug-in development rates, at ``threshold`` (a settled histogram: at its
        best threshold); breaks ties, as where ``value`` is 0.
    auc : float
        Area under the ROC curve of the oriented score on the second half.
    label : str
        A short description (``"coordinate[2]"``, ``"histogram (37 values)"``).
    settled : bool, default False
        Whether no other family was tried: a histogram of few values, each counted often, whose
        likelihood-ratio events every other family's event coarsens.
    """

    family: str
    model: ScoreModel
    orientation: int
    threshold: float
    value: float
    plug_in: float
    auc: float
    label: str
    settled: bool = False


def resolve_families(tests: str | Sequence[str]) -> tuple[Family, ...]:
    """The families a ``tests`` argument names.

    ``"certify"``: all; ``"values"``: those that read output values only (the mechanism's law
    in real arithmetic, blind to floating-point bugs); ``"paper"``: logistic.

    Raises
    ------
    ParameterError
        On an unknown name or an empty list.

    Examples
    --------
    >>> resolve_families("paper")
    ('logistic',)
    """
    if isinstance(tests, str):
        if tests == "certify":
            return FAMILIES
        if tests == "paper":
            return ("logistic",)
        if tests == "values":
            return VALUE_FAMILIES
        tests = [tests]
    names = tuple(tests)
    if not names:
        raise ParameterError("tests must name at least one family; got an empty list.")
    for name in names:
        if name not in FAMILIES:
            raise ParameterError(
                f"tests must be 'certify', 'values', 'paper' or family names from {FAMILIES!r}; got "
                f"{name!r}."
            )
    return cast(tuple[Family, ...], names)


def _histogram_choice(
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    reserved_a: int,
    reserved_b: int,
    alpha_per_rate: float,
    delta: float,
    target: Target | None = None,
) -> Choice:
    """The likelihood-ratio event of a discrete output with few, well-counted values.

    Every other family's event is a coarser union of output values, so the histogram alone is
    used; with few nested events to choose from (at most ``FEW_CUTS`` distinct scores) there is
    little room for a chance winner, so all development calls both order the values and pick
    the cut, at the relaxed pessimistic level for few cuts. With more, the values are ordered on
    the first half of the calls and the cut is judged on the two quarters of the second
    (``robust_cut``): ordered and cut on the same calls, a tail of values counted a few times
    each looks far apart by chance (a noisy count of ~200 values at 1e7 calls chose such a tail
    and certified 0).
    """
    fitted = _histogram(dev_a, dev_b)
    assert fitted is not None
    model, label = fitted
    s0, s1 = model.score(dev_a), model.score(dev_b)
    few = len(np.unique(np.concatenate([s0, s1]))) <= FEW_CUTS
    if not few:
        # many values: scored on the calls that order them, the rarest look far apart by chance
        # (a tail of values counted a few times each); order them on one half, cut on the other
        return _held_out_histogram(dev_a, dev_b, reserved_a, reserved_b, alpha_per_rate, delta, target)
    orientation, threshold, value = best_cut(
        s0, s1, reserved_a, reserved_b, alpha_per_rate, delta,
        dev_level=FEW_CUTS_LEVEL, target=target,
    )
    _, _, plug_in = best_cut(
        s0, s1, reserved_a, reserved_b, alpha_per_rate, delta, dev_level=0.5, target=target
    )
    auc = _development_auc(orientation, s0, s1)
    return Choice("histogram", model, orientation, threshold, value, plug_in, auc, label, settled=True)


def _held_out_histogram(
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    reserved_a: int,
    reserved_b: int,
    alpha_per_rate: float,
    delta: float,
    target: Target | None = None,
) -> Choice:
    """The histogram's event with its values ordered on one half and its cut on the other."""
    half_a, half_b = dev_a.shape[0] // 2, dev_b.shape[0] // 2
    fitted = _histogram(dev_a[:half_a], dev_b[:half_b])
    assert fitted is not None
    model, label = fitted
    s0, s1 = model.score(dev_a[half_a:]), model.score(dev_b[half_b:])
    m0, m1 = s0.size // 2, s1.size // 2
    orientation, threshold, value, plug_in = robust_cut(
        [(s0[:m0], s1[:m1]), (s0[m0:], s1[m1:])], reserved_a, reserved_b, alpha_per_rate, delta,
        dev_level=DEV_LEVEL, target=target,
    )
    auc = _development_auc(orientation, s0, s1)
    return Choice("histogram", model, orientation, threshold, value, plug_in, auc, label)


def _development_auc(orientation: int, s0: NDArray[np.float64], s1: NDArray[np.float64]) -> float:
    """The reported AUC of oriented development scores, on the first :data:`_AUC_ROWS` of each."""
    return roc_auc(orientation * s0[:_AUC_ROWS], orientation * s1[:_AUC_ROWS])


def _few_values(s0: NDArray[np.float64], s1: NDArray[np.float64]) -> bool:
    """Whether development scores take at most FEW_CUTS distinct values."""
    return bool(np.unique(np.concatenate([s0, s1])).size <= FEW_CUTS)


def _refit(model: ScoreModel, dev_a: NDArray[np.float64], dev_b: NDArray[np.float64]) -> ScoreModel | None:
    """The same partition's log ratios re-estimated from all development calls."""
    if isinstance(model, ProductScore):
        parts = []
        for c in model.components:
            scores = _bin_scores(np.asarray(c.edges), dev_a[:, c.column], dev_b[:, c.column])
            parts.append(BinnedScore(c.column, c.edges, scores, c.dimension))
        return ProductScore(tuple(parts))
    if isinstance(model, HistogramScore):
        refit = _histogram(dev_a, dev_b)
        if refit is None or not isinstance(refit[0], HistogramScore):
            return None
        # only a partition whose cells are each counted often: a histogram of values mostly
        # unseen in the first half scores few distinct values there, but refitted on every call
        # it would score each call by its own count (in-sample, perfectly separating)
        # one input at a time: the cells of both stacked would copy every development call twice
        hashes = np.concatenate([_row_hashes(refit[0].cells(x)) for x in (dev_a, dev_b)])
        _, counts = np.unique(hashes, return_counts=True)
        if counts[counts >= _WELL_COUNTED].sum() < 0.99 * counts.sum():
            return None
        return refit[0]
    return None


def _well_estimated(
    histogram: list[tuple[ScoreModel, str]], fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]
) -> bool:
    """Whether a discrete histogram holds few values, nearly all of them counted often."""
    if not histogram or not (is_discrete(fit_a) and is_discrete(fit_b)):
        return False
    model = histogram[0][0]
    if not isinstance(model, HistogramScore) or model.edges or len(model.keys) > _FEW_VALUES:
        return False
    _, counts = np.unique(np.concatenate([_row_hashes(x) for x in (fit_a, fit_b)]), return_counts=True)
    return bool(counts[counts >= _WELL_COUNTED].sum() >= 0.99 * counts.sum())


_Scored: TypeAlias = tuple[ScoreModel, str, _Halves, NDArray[np.float64], NDArray[np.float64]]
"""A score, its label, its development scores as the halves that judge its cuts, and all of them
per input."""


def _scored(
    family: Family,
    model: ScoreModel,
    label: str,
    given: _Halves | None,
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    sel_a: NDArray[np.float64],
    sel_b: NDArray[np.float64],
) -> _Scored:
    """A fitted score's development scores, as :func:`choose_event` judges its cuts."""
    if given is not None:  # cross-fitted: every call scored by the fit on the other half
        return model, label, given, np.concatenate([h[0] for h in given]), np.concatenate(
            [h[1] for h in given]
        )
    if family == "coordinate":
        # a coordinate is its own score, fitted on nothing: every development call judges its
        # cut, each half on its own
        s0, s1 = model.score(dev_a), model.score(dev_b)
        half_a, half_b = dev_a.shape[0] // 2, dev_b.shape[0] // 2
        return model, label, [(s0[:half_a], s1[:half_b]), (s0[half_a:], s1[half_b:])], s0, s1
    rows = _SCORED_ROWS if family == "boosted" else sel_a.shape[0] + sel_b.shape[0]
    s0, s1 = model.score(sel_a[:rows]), model.score(sel_b[:rows])
    if family in ("product", "histogram") and _few_values(s0, s1):
        # a coarse partition of the outputs (few distinct scores): few events to choose from, so
        # every development call can estimate the ratios; the cut is still judged on two
        # independent halves
        refit = _refit(model, dev_a, dev_b)
        if refit is not None:
            model = refit
            s0, s1 = model.score(dev_a), model.score(dev_b)
    m0, m1 = s0.size // 2, s1.size // 2
    return model, label, [(s0[:m0], s1[:m1]), (s0[m0:], s1[m1:])], s0, s1


def _batches(scored: Iterator[_Scored], size: int) -> Iterator[list[_Scored]]:
    """The scores in order, ``size`` at a time (each scored only when its batch is taken)."""
    while batch := list(itertools.islice(scored, size)):
        yield batch


def choose_event(
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    families: Sequence[Family],
    *,
    reserved_a: int,
    reserved_b: int,
    alpha_per_rate: float,
    delta: float,
    seed: int,
    target: Target | None = None,
    dev_level: float = DEV_LEVEL,
    per_family: bool = False,
    trees: FittedTrees | None = None,
) -> list[Choice]:
    """Every family's best event for one input pair, best first.

    Parameters
    ----------
    dev_a, dev_b : numpy.ndarray, shape (n, k)
        Development outputs on input a and input b (float64 rows).
    families : sequence of str
        Families to try (:data:`FAMILIES`); a family that does not apply to the outputs (a
        histogram of continuous values, say) is skipped.
    reserved_a, reserved_b : int
        Planned reserved calls per input.
    alpha_per_rate : float
        Planned Bonferroni level of each error bound.
    delta : float
        Delta of the certified statement.
    seed : int
        Seed of randomized fits (boosted trees).
    target : Target, optional
        What the choice maximizes instead of Eq. 16 at ``delta`` (a claim's certified
        parameter; :meth:`certify.GDPClaim.target`).
    dev_level : float, default DEV_LEVEL
        Level of the pessimistic development rates that rank thresholds
        (:func:`~certify.protocol.criterion.robust_cut`); 0.5 ranks by plug-in rates, still
        required to hold on both quarters.
    per_family : bool, default False
        Return only each family's best event (a family of one score per coordinate offers one
        per coordinate), the first of those :func:`ranked` would put first. The rest are still
        searched; their AUCs, each a sort of up to :data:`_AUC_ROWS` scores per input, are not
        computed.
    trees : FittedTrees, optional
        Boosted trees already fitted in the audit, reused where they were fitted on the same
        calls (those fitted here are added).

    Returns
    -------
    list of Choice
        Sorted by ``value`` (descending), ties in family order.

    Notes
    -----
    The first half of each input's development draws fits the scores, the second half picks
    orientation and threshold; nothing here sees a reserved call, so the choice, however it
    is made, leaves the certificate valid.
    """
    half_a, half_b = dev_a.shape[0] // 2, dev_b.shape[0] // 2
    fit_a, sel_a = dev_a[:half_a], dev_a[half_a:]
    fit_b, sel_b = dev_b[:half_b], dev_b[half_b:]
    choices: list[Choice] = []
    memo: BinnedFits = {}  # the binned and product families bin the coordinates alike
    fitted = {family: _fitted(family, fit_a, fit_b, seed) for family in families if family == "histogram"}
    if _well_estimated(fitted.get("histogram", []), fit_a, fit_b):
        return [
            _histogram_choice(dev_a, dev_b, reserved_a, reserved_b, alpha_per_rate, delta, target)
        ]
    for family in families:
        found_halves: list[tuple[ScoreModel, str, _Halves | None]]
        best: tuple[tuple[float, float], ScoreModel, int, float, str, NDArray[np.float64],
                    NDArray[np.float64]] | None = None
        if family == "blocks":
            blocks = _blocks_cross_fitted((fit_a, fit_b), (sel_a, sel_b), seed)
            found_halves = [] if blocks is None else [blocks]
        elif family in ("linear", "logistic"):
            crossed = (
                _cross_fitted(family, (fit_a, fit_b), (sel_a, sel_b), seed)
                if family == "logistic" or dev_a.shape[1] > 1 else None
            )
            found_halves = [] if crossed is None else [crossed]
        elif family in FLOAT_FAMILIES:
            found_halves = [(m, label, None) for m, label in float_fitted(family, fit_a, fit_b)]
        else:
            found = (
                fitted[family] if family in fitted else _fitted(family, fit_a, fit_b, seed, memo, trees)
            )
            found_halves = [(model, label, None) for model, label in found]
        scored = (
            _scored(family, model, label, given, dev_a, dev_b, sel_a, sel_b)
            for model, label, given in found_halves
        )
        # a score per coordinate: each coordinate's cuts are searched, so few cuts of one are not
        # few events
        many = len(found_halves) if family in ("coordinate", "binned", *FLOAT_FAMILIES) else 1
        # as many scores as keep their development scores under _BATCH_SCORES (or one)
        for batch in _batches(scored, max(_BATCH_SCORES // (dev_a.shape[0] + dev_b.shape[0]), 1)):
            cuts = robust_cuts(
                [halves for _, _, halves, _, _ in batch], reserved_a, reserved_b, alpha_per_rate,
                delta, dev_level=dev_level, candidates=many, target=target,
            )
            for (model, label, _, s0, s1), (orientation, threshold, value, plug_in) in zip(
                batch, cuts, strict=True
            ):
                if not math.isfinite(threshold):
                    continue
                if not per_family:
                    auc = _development_auc(orientation, s0, s1)
                    choices.append(
                        Choice(family, model, orientation, threshold, value, plug_in, auc, label)
                    )
                elif best is None or (value, plug_in) > best[0]:  # the first of the largest, as ranked
                    best = ((value, plug_in), model, orientation, threshold, label, s0, s1)
        if best is not None:
            (value, plug_in), model, orientation, threshold, label, s0, s1 = best
            auc = _development_auc(orientation, s0, s1)
            choices.append(Choice(family, model, orientation, threshold, value, plug_in, auc, label))
    return ranked(choices, families)


def ranked(choices: Iterable[Choice], families: Sequence[Family]) -> list[Choice]:
    """Choices best first, as :func:`choose_event` orders them.

    By development value, then plug-in value, then the family's place in ``families``
    (earlier first). Boosted trees score reserved calls tens of times slower than the other
    families: they must win by a margin (:data:`_BOOSTED_MARGIN`), not by development noise.
    """

    def key(choice: Choice) -> tuple[float, float, int]:
        penalty = _BOOSTED_MARGIN if choice.family == "boosted" else 0.0
        return choice.value - penalty, choice.plug_in - penalty, -families.index(choice.family)

    return sorted(choices, key=key, reverse=True)


def event_errors(choice: Choice, out_a: NDArray[np.float64], out_b: NDArray[np.float64]) -> tuple[int, int]:
    """Errors of a chosen event on outputs: calls of a inside it, calls of b outside it.

    Examples
    --------
    >>> from certify.protocol.scores import LinearScore
    >>> c = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.0, 0.0, 0.5, "coordinate[0]")
    >>> event_errors(c, np.array([[0.0], [1.0]]), np.array([[1.0], [0.0], [2.0]]))
    (1, 1)
    """
    s0 = choice.orientation * choice.model.score(out_a)
    s1 = choice.orientation * choice.model.score(out_b)
    cut = choice.orientation * choice.threshold
    return int(np.count_nonzero(s0 >= cut)), int(np.count_nonzero(s1 < cut))


def _event_value(
    errors: tuple[int, int],
    out_a: NDArray[np.float64],
    out_b: NDArray[np.float64],
    reserved: tuple[int, int],
    alpha_per_rate: float,
    delta: float,
    level: float,
    target: Target | None = None,
    zero_counts: bool = False,
) -> float:
    """:func:`pessimistic_bound` of one event's development error counts.

    ``zero_counts``: a count of zero is a rate of zero.
    """
    value = pessimistic_bound(
        np.array([errors[0]], dtype=np.float64), out_a.shape[0],
        np.array([errors[1]], dtype=np.float64), out_b.shape[0], reserved[0], reserved[1],
        alpha_per_rate, delta, dev_level=level, target=target, zero_rates=zero_counts,
    )
    return float(value[0])


def expected_bound(
    choice: Choice,
    out_a: NDArray[np.float64],
    out_b: NDArray[np.float64],
    reserved: Sequence[tuple[int, int]],
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None = None,
    dev_level: float = 0.5,
    zero_counts: bool = False,
    errors: tuple[int, int] | None = None,
) -> list[float]:
    """The bounds an event is expected to certify with each of several reserves, at its rates here.

    The error rates are the plug-in rates of ``out_a`` and ``out_b`` (level 0.5 of
    :func:`~certify.protocol.criterion.pessimistic_bound`), or their one-sided upper bounds at
    ``dev_level`` below 0.5 (an event seen a few times is then judged by what those few counts
    cannot exclude); the outputs are scored once for all reserve sizes. On calls that did not
    choose the event the value is free of the selection that made it look best where it was
    chosen. A rate counted zero times is, at level 0.5, the median rate of a zero count
    (0.69 over the rows); with ``zero_counts`` it is zero: the event is judged as never
    happening, and its bound rests on the reserve's size (a reserved count of zero).
    ``errors``: the event's error counts on these outputs (:func:`event_errors`), where the
    caller has them already; the outputs are then not scored again.

    Examples
    --------
    >>> from certify.protocol.scores import LinearScore
    >>> c = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.0, 0.0, 0.5, "coordinate[0]")
    >>> a = np.zeros((1000, 1))
    >>> b = np.where(np.arange(1000) < 500, 1.0, 0.0).reshape(-1, 1)
    >>> few, many = expected_bound(c, a, b, [(10**3, 10**3), (10**6, 10**6)],
    ...                            alpha_per_rate=0.01, delta=0.0)
    >>> bool(0 < few < many)
    True
    """
    if errors is None:
        errors = event_errors(choice, out_a, out_b)
    return [
        _event_value(errors, out_a, out_b, r, alpha_per_rate, delta, dev_level, target, zero_counts)
        for r in reserved
    ]


def split_reserved(
    choice: Choice,
    out_a: NDArray[np.float64],
    out_b: NDArray[np.float64],
    total: int,
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None = None,
) -> tuple[int, int]:
    """Reserved calls per input for a chosen event: the split its development counts favour.

    An event that input a almost never produces (its bound rests on the upper bound of a
    rate near zero) certifies more when the calls go mostly to input a, whose zero count then
    bounds a smaller rate, and the other way round. The shares of input a tried are 0.05, 0.1,
    0.2, ..., 0.9, 0.95; each is judged by the pessimistic bound (level
    :data:`DEV_LEVEL`) of the event's development counts, and an even split is kept unless
    another is strictly better. The split is fixed before any reserved call, so it affects
    power, never validity.

    Examples
    --------
    >>> from certify.protocol.scores import LinearScore
    >>> c = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.0, 0.0, 0.5, "coordinate[0]")
    >>> a = np.zeros((10000, 1))
    >>> b = np.where(np.arange(10000) < 3000, 1.0, 0.0).reshape(-1, 1)
    >>> n_a, n_b = split_reserved(c, a, b, 10**6, alpha_per_rate=0.01, delta=0.0)
    >>> n_a > n_b
    True
    """
    errors = event_errors(choice, out_a, out_b)
    shares = sorted({*_SHARES, *(1.0 - x for x in _SHARES)})
    best_value, best_split = -1.0, (total // 2, total - total // 2)
    for share in [0.5] + [x for x in shares if x != 0.5]:
        n_a = min(max(round(share * total), 1), total - 1)
        value = _event_value(
            errors, out_a, out_b, (n_a, total - n_a), alpha_per_rate, delta, DEV_LEVEL, target
        )
        if value > best_value:
            best_value, best_split = value, (n_a, total - n_a)
    return best_split
