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
- ``boosted``: a histogram gradient-boosting classifier (non-linear ratios of vectors).

Development draws are split in two halves: the first fits each family's score, the second
(for the linear, logistic and blocks families, cross-fitted: both, each scored by the fit on the other)
chooses the orientation and threshold (and among families and input pairs) by
:func:`~certify.protocol.criterion.robust_cut`: pessimistic development rates, required to hold
on both quarters of the development draws separately, so that a search over thousands of
thresholds does not reward a chance tail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias, cast, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.data.draws import is_discrete
from certify.errors import ParameterError
from certify.protocol.criterion import (
    FEW_CUTS,
    FEW_CUTS_LEVEL,
    best_cut,
    pessimistic_bound,
    robust_cut,
)
from certify.protocol.scores import (
    BinnedScore,
    BlockScore,
    DifferenceScore,
    HistogramScore,
    LaplaceScore,
    LinearScore,
    ProductScore,
    ScoreModel,
    SkopsScore,
    _row_hashes,
)
from certify.stats.roc import auc as roc_auc

__all__ = [
    "DEV_LEVEL",
    "FAMILIES",
    "Choice",
    "Family",
    "choose_event",
    "event_errors",
    "expected_bound",
    "resolve_families",
    "split_reserved",
]

Family: TypeAlias = Literal[
    "histogram", "coordinate", "binned", "product", "laplace", "linear", "logistic", "blocks",
    "boosted",
]
"""Names of the mechanism test families."""

FAMILIES: Final[tuple[Family, ...]] = (
    "histogram", "coordinate", "binned", "product", "laplace", "linear", "logistic", "blocks",
    "boosted",
)
"""Every family, in the order ties are broken (simpler first)."""

_Halves: TypeAlias = list[tuple[NDArray[np.float64], NDArray[np.float64]]]
"""Development scores of input a and input b on two independent halves of the calls."""

DEV_LEVEL: Final = 0.05
"""Level of the pessimistic development rates that rank thresholds (see ``pessimistic_bound``)."""

_MAX_KEYS: Final = 20_000
_MAX_COORDINATES: Final = 64
_BINS: Final = 128
_CELL_BINS: Final = 32
_PRODUCT_P: Final = 1e-3
_FIT_ROWS: Final = 1_000_000
_BOOSTED_FIT_ROWS: Final = 100_000
_SCORED_ROWS: Final = 200_000
_BOOSTED_MARGIN: Final = 0.01
_FEW_VALUES: Final = 4096
_WELL_COUNTED: Final = 20
_SHARES: Final = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95)
_DEPENDENCE_SDS: Final = 5.0
_DEPENDENCE_ROWS: Final = 200_000
_ATOM_SHARE: Final = 0.01


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
        The same with plug-in development rates (breaks ties when ``value`` is 0).
    auc : float
        Area under the ROC curve of the oriented score on the second half.
    label : str
        A short description (``"coordinate[2]"``, ``"histogram (37 values)"``).
    """

    family: str
    model: ScoreModel
    orientation: int
    threshold: float
    value: float
    plug_in: float
    auc: float
    label: str


def resolve_families(tests: str | Sequence[str]) -> tuple[Family, ...]:
    """The families a ``tests`` argument names (``"certify"``: all; ``"paper"``: logistic).

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
        tests = [tests]
    names = tuple(tests)
    if not names:
        raise ParameterError("tests must name at least one family; got an empty list.")
    for name in names:
        if name not in FAMILIES:
            raise ParameterError(
                f"tests must be 'certify', 'paper' or family names from {FAMILIES!r}; got {name!r}."
            )
    return cast(tuple[Family, ...], names)


def _log_ratio(
    count_b: NDArray[np.float64], n_b: int, count_a: NDArray[np.float64], n_a: int
) -> NDArray[np.float64]:
    """Smoothed log ``p_b / p_a`` of cells from their counts (half a count added to each cell)."""
    out: NDArray[np.float64] = np.log((count_b + 0.5) / (n_b + 0.5)) - np.log(
        (count_a + 0.5) / (n_a + 0.5)
    )
    return out


def _histogram(fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]) -> tuple[ScoreModel, str] | None:
    """The development log ratio of each output value; continuous coordinates binned first.

    Continuous coordinates of mixed outputs (released noisy values beside flags, say) are cut
    at pooled quantiles into at most :data:`_CELL_BINS` bins. The most frequent values are kept
    when there are very many.
    """
    edges: list[tuple[int, list[float]]] = []
    for j in range(fit_a.shape[1]):
        column = np.concatenate([fit_a[:, j], fit_b[:, j]])
        if not is_discrete(column.reshape(-1, 1)):
            edges.append((j, _edges(column, _CELL_BINS).tolist()))
    if len(edges) == fit_a.shape[1] and fit_a.shape[1] == 1:
        return None  # a single continuous coordinate: the binned family covers it
    probe = HistogramScore([[0.0] * fit_a.shape[1]], [0.0], 0.0, edges)
    both = probe.cells(np.vstack([fit_a, fit_b])) + 0.0
    # distinct rows by their 64-bit hash (a 1-D sort, not a row sort); rows sharing a hash by
    # chance would share a key, and the stored key still scores only its own value exactly
    _, first, inverse, counts = np.unique(
        _row_hashes(both), return_index=True, return_inverse=True, return_counts=True
    )
    keys = both[first]
    inverse = inverse.reshape(-1)
    if keys.shape[0] > _MAX_KEYS:
        if edges:
            return None  # too many cells of binned coordinates: too sparse to estimate ratios
        keep = np.sort(np.argsort(-counts, kind="stable")[:_MAX_KEYS])
    else:
        keep = np.arange(keys.shape[0])
    ca = np.bincount(inverse[: fit_a.shape[0]], minlength=keys.shape[0]).astype(np.float64)
    cb = np.bincount(inverse[fit_a.shape[0] :], minlength=keys.shape[0]).astype(np.float64)
    scores = _log_ratio(cb, fit_b.shape[0], ca, fit_a.shape[0])
    label = f"histogram ({keep.size} values{', binned' if edges else ''})"
    return HistogramScore(keys[keep].tolist(), scores[keep].tolist(), 0.0, edges), label


def _edges(column: NDArray[np.float64], bins: int) -> NDArray[np.float64]:
    """Inner bin edges of one coordinate: a bin per value, or quantile bins with atoms apart.

    A coordinate with few distinct values gets one bin per value. Otherwise the values that are
    not atoms are cut at quantiles, and each atom (a value held by 1% of rows or more, such as
    a placeholder 0 beside released noisy values) gets a bin of its own.
    """
    if column.size == 0:
        return np.empty(0)
    ordered = np.sort(column)  # sorted once: the distinct values, then faster quantiles
    starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
    values = ordered[starts]
    counts = np.diff(np.append(starts, ordered.size))
    if values.size <= bins or (is_discrete(column.reshape(-1, 1)) and values.size <= 4 * bins):
        return 0.5 * (values[1:] + values[:-1])  # one bin per value
    atoms = values[counts >= 0.01 * column.size]
    rest = ordered[~np.isin(ordered, atoms)] if atoms.size else ordered
    inner = np.quantile(rest, np.linspace(0, 1, bins + 1)[1:-1]) if rest.size else np.empty(0)
    around = np.concatenate([atoms, np.nextafter(atoms, np.inf)])
    return np.unique(np.concatenate([inner, around]))


def _bin_counts(
    edges: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Counts of one coordinate's values of each input in the bins cut at ``edges``."""
    ca = np.bincount(np.searchsorted(edges, a, side="right"), minlength=edges.size + 1)
    cb = np.bincount(np.searchsorted(edges, b, side="right"), minlength=edges.size + 1)
    return ca.astype(np.float64), cb.astype(np.float64)


def _bin_scores(edges: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64]) -> list[float]:
    """The smoothed log ratio of every bin of one coordinate."""
    ca, cb = _bin_counts(edges, a, b)
    out: list[float] = _log_ratio(cb, b.size, ca, a.size).tolist()
    return out


def _binned(fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], j: int) -> tuple[ScoreModel, str] | None:
    """Quantile bins of coordinate ``j`` scored by their development log ratio."""
    pooled = np.concatenate([fit_a[:, j], fit_b[:, j]])
    edges = _edges(pooled, _BINS)
    if edges.size < 1:
        return None
    scores = _bin_scores(edges, fit_a[:, j], fit_b[:, j])
    return BinnedScore(j, edges.tolist(), scores, fit_a.shape[1]), f"binned[{j}]"


def _product(fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]) -> tuple[ScoreModel, str] | None:
    """The sum of the binned log ratios of the coordinates whose law differs between the inputs.

    A coordinate whose binned counts under the two inputs are consistent with one law
    (chi-square homogeneity p-value above :data:`_PRODUCT_P`) is left out: its estimated ratios
    are noise, and leaving it out keeps the score's ties exact (few distinct values when few
    coordinates carry the difference).
    """
    from scipy.stats import chi2_contingency

    kept: list[tuple[float, BinnedScore]] = []
    for j in range(fit_a.shape[1]):
        part = _binned(fit_a, fit_b, j)
        if part is None:
            continue
        model = cast(BinnedScore, part[0])
        edges = np.asarray(model.edges)
        ca, cb = _bin_counts(edges, fit_a[:, j], fit_b[:, j])
        used = (ca + cb) > 0
        if used.sum() < 2:
            continue
        p_value = float(chi2_contingency(np.vstack([ca[used], cb[used]]))[1])
        kept.append((p_value, model))
    if not kept:
        return None
    strong = [m for p, m in kept if p < _PRODUCT_P] or [min(kept, key=lambda pm: pm[0])[1]]
    return ProductScore(tuple(strong)), f"product ({len(strong)} of {fit_a.shape[1]} coordinates)"


def _laplace(fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]) -> tuple[ScoreModel, str] | None:
    """The product-Laplace log ratio with medians and pooled mean absolute deviations."""
    ma, mb = np.median(fit_a, axis=0), np.median(fit_b, axis=0)
    scale = np.concatenate([np.abs(fit_a - ma), np.abs(fit_b - mb)]).mean(axis=0)
    floor = 1e-9 * max(float(np.abs(np.concatenate([ma, mb])).max()), 1.0)
    if not np.all(scale > floor):
        scale = np.maximum(scale, floor)
    return LaplaceScore(ma.tolist(), mb.tolist(), scale.tolist()), "laplace"


def _subsample(x: NDArray[np.float64], rows: int) -> NDArray[np.float64]:
    """The first ``rows`` rows (draws are iid, so any fixed subset is a random one)."""
    return x[:rows]


def _sklearn_model(
    family: Family, fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], seed: int
) -> tuple[ScoreModel, str] | None:
    """A fitted linear, logistic or boosted-trees score.

    Linear scores are fitted on up to :data:`_FIT_ROWS` calls per input (a rare output pattern,
    such as a late answer of a sparse vector, needs hundreds of thousands of calls before its
    coefficient is estimated; a linear fit of a million rows takes seconds); boosted trees, tens
    of times slower, on :data:`_BOOSTED_FIT_ROWS`.
    """
    from certify.protocol.families import LinearDiscriminant

    rows = _BOOSTED_FIT_ROWS if family == "boosted" else _FIT_ROWS
    xa, xb = _subsample(fit_a, rows), _subsample(fit_b, rows)
    if family == "linear":
        est: Any = LinearDiscriminant("ledoit_wolf")
    elif family == "logistic":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        est = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=1000))
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier

        est = HistGradientBoostingClassifier(
            max_iter=30, learning_rate=0.2, max_leaf_nodes=31, early_stopping=False,
            random_state=seed,
        )
    X = np.vstack([xa, xb])
    y = np.concatenate([np.zeros(xa.shape[0], np.int64), np.ones(xb.shape[0], np.int64)])
    est.fit(X, y)
    if family == "linear":
        coef = np.asarray(est.coef_, dtype=np.float64).reshape(-1)
        return LinearScore(coef.tolist(), float(np.asarray(est.intercept_).reshape(-1)[0])), "linear"
    if family == "logistic":
        scaler, logistic = est[0], est[1]
        coef = np.asarray(logistic.coef_, dtype=np.float64).reshape(-1) / scaler.scale_
        intercept = float(logistic.intercept_[0]) - float(coef @ scaler.mean_)
        return LinearScore(coef.tolist(), intercept), "logistic"
    return SkopsScore.from_estimator(est, "decision_function"), "boosted"


def _cross_fitted(
    family: Family,
    fit: tuple[NDArray[np.float64], NDArray[np.float64]],
    sel: tuple[NDArray[np.float64], NDArray[np.float64]],
    seed: int,
) -> tuple[LinearScore, str, _Halves] | None:
    """A linear or logistic score cross-fitted on the two halves of the development calls.

    Each half is scored by the fit on the other half, so every development call has an
    out-of-sample score and the cut is judged on all of them (twice the counts of a rare event
    that a fit on one half and a cut on the other would see) without the flattery of scoring
    the calls a score was fitted on. The stored score averages the two fits' coefficients.

    Returns
    -------
    (LinearScore, str, list) or None
        The averaged score, its label and the two halves' out-of-sample scores
        ``[(first half a, first half b), (second half a, second half b)]``.
    """
    first = _sklearn_model(family, fit[0], fit[1], seed)
    second = _sklearn_model(family, sel[0], sel[1], seed)
    if first is None or second is None:
        return None
    one, two = cast(LinearScore, first[0]), cast(LinearScore, second[0])
    halves = [(two.score(fit[0]), two.score(fit[1])), (one.score(sel[0]), one.score(sel[1]))]
    model = LinearScore(
        [(a + b) / 2 for a, b in zip(one.coef, two.coef, strict=True)],
        (one.intercept + two.intercept) / 2,
    )
    return model, first[1], halves


def _dependence_features(X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Per-coordinate transforms whose correlations reveal dependence, and their coordinates.

    Each coordinate gives its value, its distance from its median (dependence in spread) and,
    when one value holds at least 1% of the rows, the indicator of that value (a released value
    that is 0 unless a flag is set is uncorrelated with the flag, yet its zeros are not).
    Constant transforms are left out.
    """
    columns: list[NDArray[np.float64]] = []
    owner: list[int] = []
    for j in range(X.shape[1]):
        x = X[:, j]
        parts = [x, np.abs(x - np.median(x))]
        values, counts = np.unique(x, return_counts=True)
        if counts.max() >= _ATOM_SHARE * x.size and values.size > 1:
            parts.append((x == values[np.argmax(counts)]).astype(np.float64))
        for f in parts:
            if f.std() > 0:
                columns.append(f)
                owner.append(j)
    return np.column_stack(columns) if columns else np.empty((X.shape[0], 0)), np.asarray(owner, np.intp)


def _independent_blocks(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]
) -> list[NDArray[np.intp]]:
    """Blocks of coordinates that look independent of each other under both inputs.

    Two coordinates are linked when, under either input, a pair of their transforms
    (:func:`_dependence_features`) correlates beyond :data:`_DEPENDENCE_SDS` standard errors of
    a correlation of independent variables (``1 / sqrt(n)``); the blocks are the connected
    components, found on up to :data:`_DEPENDENCE_ROWS` calls per input (the transforms of a
    million calls of a 30-coordinate output would take 700 MB). A dependence too weak to see
    merges nothing, so a block score then misses it: its events are judged on development calls
    like any other, so this costs power, never validity. A coordinate with one value on every
    call of both inputs belongs to no block (it scores nothing).
    """
    from scipy.sparse.csgraph import connected_components

    width = fit_a.shape[1]
    linked = np.zeros((width, width), dtype=bool)
    pooled = np.vstack([fit_a[:1], fit_b[:1]])
    # a coordinate constant within each input but not between them separates them perfectly
    varies = np.any(pooled != pooled[:1], axis=0)
    for X in (_subsample(fit_a, _DEPENDENCE_ROWS), _subsample(fit_b, _DEPENDENCE_ROWS)):
        if X.shape[0] < 2:
            continue
        features, owner = _dependence_features(X)
        varies[owner] = True
        if owner.size < 2:
            continue
        r = np.corrcoef(features, rowvar=False)
        strong = np.abs(r) > _DEPENDENCE_SDS / math.sqrt(X.shape[0])
        i, j = np.nonzero(strong)
        linked[owner[i], owner[j]] = True
    n_blocks, label = connected_components(linked, directed=False)
    blocks = [np.flatnonzero(label == k) for k in range(n_blocks)]
    return [b for b in blocks if varies[b].any()]


def _block_model(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], seed: int
) -> LinearScore | HistogramScore | BinnedScore | None:
    """One block's log-ratio score: a histogram of few discrete values, else binned or logistic."""
    if is_discrete(fit_a) and is_discrete(fit_b):
        values = np.unique(_row_hashes(np.vstack([fit_a, fit_b]))).size
        if values <= _FEW_VALUES:
            found = _histogram(fit_a, fit_b)
            if found is not None:
                return cast(HistogramScore, found[0])
    if fit_a.shape[1] == 1:
        binned = _binned(fit_a, fit_b, 0)
        return None if binned is None else cast(BinnedScore, binned[0])
    logistic = _sklearn_model("logistic", fit_a, fit_b, seed)
    return None if logistic is None else cast(LinearScore, logistic[0])


def _blocks_cross_fitted(
    fit: tuple[NDArray[np.float64], NDArray[np.float64]],
    sel: tuple[NDArray[np.float64], NDArray[np.float64]],
    seed: int,
) -> tuple[BlockScore, str, _Halves] | None:
    """The sum of independent blocks' log ratios, cross-fitted on the two development halves.

    Applies when the outputs split into at least two blocks (:func:`_independent_blocks`, on
    the first half) and some block has two coordinates or more (otherwise the product family
    is the same score). Each half is scored by the blocks fitted on the other half, as in
    :func:`_cross_fitted`; the stored score is the average of the two fits (each block twice,
    weight one half).
    """
    if fit[0].shape[1] < 3:
        return None  # two blocks, one of two coordinates, need three
    blocks = _independent_blocks(fit[0], fit[1])
    if len(blocks) < 2 or max(b.size for b in blocks) < 2:
        return None
    width = fit[0].shape[1]
    fits: list[list[LinearScore | HistogramScore | BinnedScore]] = []
    for xa, xb in (fit, sel):
        models = [_block_model(xa[:, b], xb[:, b], seed) for b in blocks]
        if any(m is None for m in models):
            return None
        fits.append([m for m in models if m is not None])
    columns = [b.tolist() for b in blocks]
    one = BlockScore(columns, [1.0] * len(blocks), fits[0], width)
    two = BlockScore(columns, [1.0] * len(blocks), fits[1], width)
    halves = [(two.score(fit[0]), two.score(fit[1])), (one.score(sel[0]), one.score(sel[1]))]
    model = BlockScore(columns * 2, [0.5] * (2 * len(blocks)), fits[0] + fits[1], width)
    kinds = {LinearScore: "logistic", HistogramScore: "histogram", BinnedScore: "binned"}
    parts = ", ".join(f"{len(b)} {kinds[type(m)]}" for b, m in zip(columns, fits[0], strict=True))
    return model, f"blocks ({parts})", halves


def _fitted(
    family: Family, fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], seed: int
) -> list[tuple[ScoreModel, str]]:
    """The fitted scores of one family (several for per-coordinate families)."""
    width = fit_a.shape[1]
    discrete = is_discrete(fit_a) and is_discrete(fit_b)
    out: list[tuple[ScoreModel, str] | None] = []
    if family == "histogram":
        out.append(_histogram(fit_a, fit_b))
    elif family == "coordinate":
        for j in range(min(width, _MAX_COORDINATES)):
            coef = [0.0] * width
            coef[j] = 1.0
            out.append((LinearScore(coef, 0.0), f"coordinate[{j}]"))
    elif family == "binned":
        for j in range(min(width, _MAX_COORDINATES)):
            if not (is_discrete(fit_a[:, j : j + 1]) and is_discrete(fit_b[:, j : j + 1])):
                out.append(_binned(fit_a, fit_b, j))
    elif family == "product":
        if width > 1:
            out.append(_product(fit_a, fit_b))
            steps = _product(DifferenceScore.steps(fit_a), DifferenceScore.steps(fit_b))
            if steps is not None:
                inner = cast(ProductScore, steps[0])
                out.append((DifferenceScore(inner), f"{steps[1]} of differences"))
    elif family == "laplace":
        if not discrete:
            out.append(_laplace(fit_a, fit_b))
            if width > 1:
                steps = _laplace(DifferenceScore.steps(fit_a), DifferenceScore.steps(fit_b))
                if steps is not None:
                    inner_l = cast(LaplaceScore, steps[0])
                    out.append((DifferenceScore(inner_l), "laplace of differences"))
    elif family == "linear":
        if width > 1:
            out.append(_sklearn_model(family, fit_a, fit_b, seed))
    elif family == "logistic" or width > 1:  # also on one coordinate, so tests="paper" applies to any output
        out.append(_sklearn_model(family, fit_a, fit_b, seed))
    return [o for o in out if o is not None]


def _histogram_choice(
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    reserved_a: int,
    reserved_b: int,
    alpha_per_rate: float,
    delta: float,
) -> Choice:
    """The likelihood-ratio event of a discrete output with few, well-counted values.

    Every other family's event is a coarser union of output values, so the histogram alone is
    used; with few nested events to choose from (the values in the order of their ratio) there
    is little room for a chance winner, so all development calls both order the values and pick
    the cut, at the relaxed pessimistic level for few cuts.
    """
    fitted = _histogram(dev_a, dev_b)
    assert fitted is not None
    model, label = fitted
    s0, s1 = model.score(dev_a), model.score(dev_b)
    few = len(np.unique(np.concatenate([s0, s1]))) <= FEW_CUTS
    orientation, threshold, value = best_cut(
        s0, s1, reserved_a, reserved_b, alpha_per_rate, delta,
        dev_level=FEW_CUTS_LEVEL if few else DEV_LEVEL,
    )
    _, _, plug_in = best_cut(s0, s1, reserved_a, reserved_b, alpha_per_rate, delta, dev_level=0.5)
    auc = roc_auc(orientation * s0, orientation * s1)
    return Choice("histogram", model, orientation, threshold, value, plug_in, auc, label)


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
        cells = refit[0].cells(np.vstack([dev_a, dev_b])) + 0.0
        _, counts = np.unique(_row_hashes(cells), return_counts=True)
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
    _, counts = np.unique(_row_hashes(np.vstack([fit_a, fit_b])), return_counts=True)
    return bool(counts[counts >= _WELL_COUNTED].sum() >= 0.99 * counts.sum())


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
    choices: list[tuple[float, float, int, Choice]] = []
    fitted = {family: _fitted(family, fit_a, fit_b, seed) for family in families if family == "histogram"}
    if _well_estimated(fitted.get("histogram", []), fit_a, fit_b):
        return [_histogram_choice(dev_a, dev_b, reserved_a, reserved_b, alpha_per_rate, delta)]
    for rank, family in enumerate(families):
        found_halves: list[tuple[ScoreModel, str, _Halves | None]]
        if family == "blocks":
            blocks = _blocks_cross_fitted((fit_a, fit_b), (sel_a, sel_b), seed)
            found_halves = [] if blocks is None else [blocks]
        elif family in ("linear", "logistic"):
            crossed = (
                _cross_fitted(family, (fit_a, fit_b), (sel_a, sel_b), seed)
                if family == "logistic" or dev_a.shape[1] > 1 else None
            )
            found_halves = [] if crossed is None else [crossed]
        else:
            found = fitted[family] if family in fitted else _fitted(family, fit_a, fit_b, seed)
            found_halves = [(model, label, None) for model, label in found]
        for model, label, given in found_halves:
            if given is not None:
                halves = given
                s0 = np.concatenate([h[0] for h in halves])
                s1 = np.concatenate([h[1] for h in halves])
            else:
                rows = _SCORED_ROWS if family == "boosted" else sel_a.shape[0] + sel_b.shape[0]
                s0, s1 = model.score(sel_a[:rows]), model.score(sel_b[:rows])
                if family in ("product", "histogram") and _few_values(s0, s1):
                    # a coarse partition of the outputs (few distinct scores): few events to
                    # choose from, so every development call can estimate the ratios; the cut
                    # is still judged on two independent halves
                    refit = _refit(model, dev_a, dev_b)
                    if refit is not None:
                        model = refit
                        s0, s1 = model.score(dev_a), model.score(dev_b)
                m0, m1 = s0.size // 2, s1.size // 2
                halves = [(s0[:m0], s1[:m1]), (s0[m0:], s1[m1:])]
            # a score per coordinate: each coordinate's cuts are searched, so few cuts of one
            # are not few events
            orientation, threshold, value, plug_in = robust_cut(
                halves, reserved_a, reserved_b, alpha_per_rate, delta, dev_level=DEV_LEVEL,
                candidates=len(found_halves) if family in ("coordinate", "binned") else 1,
            )
            if not math.isfinite(threshold):
                continue
            auc = roc_auc(orientation * s0, orientation * s1)
            choice = Choice(family, model, orientation, threshold, value, plug_in, auc, label)
            # boosted trees score reserved calls tens of times slower than the other families:
            # they must win by a margin, not by development noise
            penalty = _BOOSTED_MARGIN if family == "boosted" else 0.0
            choices.append((value - penalty, plug_in - penalty, -rank, choice))
    choices.sort(key=lambda c: (c[0], c[1], c[2]), reverse=True)
    return [c[3] for c in choices]


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
) -> float:
    """:func:`pessimistic_bound` of one event's development error counts."""
    value = pessimistic_bound(
        np.array([errors[0]], dtype=np.float64), out_a.shape[0],
        np.array([errors[1]], dtype=np.float64), out_b.shape[0], reserved[0], reserved[1],
        alpha_per_rate, delta, dev_level=level,
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
) -> list[float]:
    """The bounds an event is expected to certify with each of several reserves, at its rates here.

    The error rates are the plug-in rates of ``out_a`` and ``out_b`` (level 0.5 of
    :func:`~certify.protocol.criterion.pessimistic_bound`); the outputs are scored once for
    all reserve sizes. On calls that did not choose the event the value is free of the
    selection that made it look best where it was chosen.

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
    errors = event_errors(choice, out_a, out_b)
    return [_event_value(errors, out_a, out_b, r, alpha_per_rate, delta, 0.5) for r in reserved]


def split_reserved(
    choice: Choice,
    out_a: NDArray[np.float64],
    out_b: NDArray[np.float64],
    total: int,
    *,
    alpha_per_rate: float,
    delta: float,
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
            errors, out_a, out_b, (n_a, total - n_a), alpha_per_rate, delta, DEV_LEVEL
        )
        if value > best_value:
            best_value, best_split = value, (n_a, total - n_a)
    return best_split
