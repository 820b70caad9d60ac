"""How each mechanism test family fits its score on development calls.

The families are described in :mod:`certify.blackbox.events`, which chooses among their events;
this module holds the fits: the scores of the histogram, coordinate, binned, product, Laplace,
linear, logistic, blocks and boosted families, each from the first half of the development
calls (the linear, logistic and blocks families cross-fitted on both halves), returned as
stored score models with a short label.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any, Final, Literal, TypeAlias, cast, final

import numpy as np
from numpy.typing import NDArray

from certify.data.draws import is_discrete
from certify.protocol.scores import (
    _HASH_ROWS,
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
from certify.stats._bins import bin_index
from certify.stats._medians import column_medians

_Halves: TypeAlias = list[tuple[NDArray[np.float64], NDArray[np.float64]]]
"""Development scores of input a and input b on two independent halves of the calls."""

_MAX_KEYS: Final = 20_000
_MIN_CELL_CALLS: Final = 4
"""Fewest calls per cell, on average, of a histogram of binned coordinates, and the count a
discrete value needs to be counted often (values counted so must hold half of the calls): with
fewer, most cells are seen once or twice and their ratios are noise (the cells of ten continuous
coordinates are nearly all distinct, as are twenty randomized bits). Four is the
:data:`_MAX_KEYS` cells of the first ``2 * _MAX_KEYS`` calls of each input."""
_MAX_COORDINATES: Final = 64
_BINS: Final = 128
_CELL_BINS: Final = 32
_PRODUCT_P: Final = 1e-3
_FIT_ROWS: Final = 1_000_000
_BOOSTED_FIT_ROWS: Final = 100_000
_FEW_VALUES: Final = 4096
_DEPENDENCE_SDS: Final = 5.0
_DEPENDENCE_ROWS: Final = 200_000
_DEPENDENCE_CHUNK: Final = 1 << 15
_ATOM_SHARE: Final = 0.01
_SQUARES_CHUNK: Final = 1 << 16


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
    when there are very many. None where the values are too sparse to estimate ratios: binned
    cells counted fewer than :data:`_MIN_CELL_CALLS` times each on average, or discrete values
    of which those counted that often hold less than half of the calls (twenty randomized bits
    take a value per call; a few frequent values beside a tail of rare ones are kept).
    """
    edges: list[tuple[int, list[float]]] = []
    for j in range(fit_a.shape[1]):
        column = np.concatenate([fit_a[:, j], fit_b[:, j]])
        if not is_discrete(column.reshape(-1, 1)):
            edges.append((j, _edges(column, _CELL_BINS).tolist()))
    if len(edges) == fit_a.shape[1] and fit_a.shape[1] == 1:
        return None  # a single continuous coordinate: the binned family covers it
    probe = HistogramScore([[0.0] * fit_a.shape[1]], [0.0], 0.0, edges)
    if edges:  # binned cells counted fewer than _MIN_CELL_CALLS times each on a few rows: too sparse
        head = np.concatenate([_row_hashes(probe.cells(x[: 2 * _MAX_KEYS])) for x in (fit_a, fit_b)])
        if np.unique(head).size > min(_MAX_KEYS, head.size // _MIN_CELL_CALLS):
            return None
    # distinct rows by their 64-bit hash (a 1-D sort, not a row sort); rows sharing a hash by
    # chance would share a key, and the stored key still scores only its own value exactly
    _, first, inverse, counts = np.unique(
        np.concatenate([_cell_hashes(probe, fit_a), _cell_hashes(probe, fit_b)]),
        return_index=True, return_inverse=True, return_counts=True,
    )
    inverse = inverse.reshape(-1)
    if not edges and counts[counts >= _MIN_CELL_CALLS].sum() < 0.5 * counts.sum():
        return None  # most calls hold a value seen fewer than _MIN_CELL_CALLS times: noise
    if first.size > _MAX_KEYS:
        if edges:
            return None  # too many cells of binned coordinates: too sparse to estimate ratios
        keep = np.sort(np.argsort(-counts, kind="stable")[:_MAX_KEYS])
    else:
        keep = np.arange(first.size)
    # the kept values' rows only: outputs of many coordinates with a distinct value per call
    # would otherwise copy every development call once more
    at = first[keep]
    from_a = at < fit_a.shape[0]
    keys = np.empty((keep.size, fit_a.shape[1]), dtype=np.float64)
    keys[from_a] = probe.cells(fit_a[at[from_a]])
    keys[~from_a] = probe.cells(fit_b[at[~from_a] - fit_a.shape[0]])
    keys += 0.0  # -0.0 as 0.0, as the hashes count it
    ca = np.bincount(inverse[: fit_a.shape[0]], minlength=first.size).astype(np.float64)
    cb = np.bincount(inverse[fit_a.shape[0] :], minlength=first.size).astype(np.float64)
    scores = _log_ratio(cb, fit_b.shape[0], ca, fit_a.shape[0])
    label = f"histogram ({keep.size} values{', binned' if edges else ''})"
    return HistogramScore(keys, scores[keep], 0.0, edges), label


def _cell_hashes(probe: HistogramScore, x: NDArray[np.float64]) -> NDArray[np.uint64]:
    """:func:`_row_hashes` of ``probe``'s cells of the rows of ``x``, binned a block at a time.

    A binned copy of all the rows, made twice, was the largest temporary of a final round's fits.
    """
    return np.concatenate([
        _row_hashes(probe.cells(x[start : start + _HASH_ROWS]))
        for start in range(0, x.shape[0], _HASH_ROWS)
    ] or [np.empty(0, dtype=np.uint64)])


def _edges(
    column: NDArray[np.float64], bins: int, ordered: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Inner bin edges of one coordinate: a bin per value, or quantile bins with atoms apart.

    A coordinate with few distinct values gets one bin per value. Otherwise the values that are
    not atoms are cut at quantiles, and each atom (a value held by 1% of rows or more, such as
    a placeholder 0 beside released noisy values) gets a bin of its own. ``ordered``: the
    column already sorted, where the caller has it.
    """
    if column.size == 0:
        return np.empty(0)
    if ordered is None:
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
    ca = np.bincount(bin_index(edges, a), minlength=edges.size + 1)
    cb = np.bincount(bin_index(edges, b), minlength=edges.size + 1)
    return ca.astype(np.float64), cb.astype(np.float64)


def _bin_scores(edges: NDArray[np.float64], a: NDArray[np.float64], b: NDArray[np.float64]) -> list[float]:
    """The smoothed log ratio of every bin of one coordinate."""
    ca, cb = _bin_counts(edges, a, b)
    out: list[float] = _log_ratio(cb, b.size, ca, a.size).tolist()
    return out


def _binned_counts(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], j: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Quantile bin edges of coordinate ``j`` and each input's counts in the bins.

    Each input's values are sorted once: the pooled order is a merge of the two, and a bin's
    count is a difference of two positions (the same counts as :func:`_bin_counts`, without
    searching every value among the edges).
    """
    sa, sb = np.sort(fit_a[:, j]), np.sort(fit_b[:, j])
    pooled = np.concatenate([sa, sb])
    pooled.sort(kind="stable")  # in place (a merge of the two runs): the quantiles need no order
    edges = _edges(pooled, _BINS, ordered=pooled)
    del pooled
    ca = np.diff(np.searchsorted(sa, edges, side="left"), prepend=0, append=sa.size)
    cb = np.diff(np.searchsorted(sb, edges, side="left"), prepend=0, append=sb.size)
    return edges, ca.astype(np.float64), cb.astype(np.float64)


def _binned(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], j: int, memo: BinnedFits | None = None
) -> tuple[ScoreModel, str] | None:
    """Quantile bins of coordinate ``j`` scored by their development log ratio."""
    model = _binned_model(fit_a, fit_b, j, memo)
    return None if model is None else (model[0], f"binned[{j}]")


BinnedFits: TypeAlias = dict[int, "tuple[BinnedScore, NDArray[np.float64], NDArray[np.float64]] | None"]
"""Each coordinate's binned score and counts, kept while several families fit the same calls
(the binned and product families bin every coordinate alike)."""


def _binned_model(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], j: int, memo: BinnedFits | None = None
) -> tuple[BinnedScore, NDArray[np.float64], NDArray[np.float64]] | None:
    """:func:`_binned`'s score with the bins' counts under each input (None: a single bin).

    ``memo``: the models already fitted on these calls, by coordinate (this one is added).
    """
    if memo is not None:
        if j not in memo:
            memo[j] = _binned_model(fit_a, fit_b, j)
        return memo[j]
    edges, ca, cb = _binned_counts(fit_a, fit_b, j)
    if edges.size < 1:
        return None
    scores: list[float] = _log_ratio(cb, fit_b.shape[0], ca, fit_a.shape[0]).tolist()
    return BinnedScore(j, edges.tolist(), scores, fit_a.shape[1]), ca, cb


def _product(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], memo: BinnedFits | None = None
) -> tuple[ScoreModel, str] | None:
    """The sum of the binned log ratios of the coordinates whose law differs between the inputs.

    A coordinate whose binned counts under the two inputs are consistent with one law
    (chi-square homogeneity p-value above :data:`_PRODUCT_P`) is left out: its estimated ratios
    are noise, and leaving it out keeps the score's ties exact (few distinct values when few
    coordinates carry the difference).
    """
    from scipy.stats import chi2_contingency

    kept: list[tuple[float, BinnedScore]] = []
    for j in range(fit_a.shape[1]):
        part = _binned_model(fit_a, fit_b, j, memo)
        if part is None:
            continue
        model, ca, cb = part
        used = (ca + cb) > 0
        if used.sum() < 2:
            continue
        p_value = float(chi2_contingency(np.vstack([ca[used], cb[used]]))[1])
        kept.append((p_value, model))
    if not kept:
        return None
    strong = [m for p, m in kept if p < _PRODUCT_P] or [min(kept, key=lambda pm: pm[0])[1]]
    return ProductScore(tuple(strong)), f"product ({len(strong)} of {fit_a.shape[1]} coordinates)"


def _laplace(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], *, differences: bool = False
) -> tuple[ScoreModel, str] | None:
    """The product-Laplace log ratio with medians and pooled mean absolute deviations.

    ``differences``: fitted to the steps of the rows (:meth:`DifferenceScore.steps`), each step
    column computed when it is fitted. The steps of all calls at once took 48 MB at 300,000
    fitting calls per input of ten coordinates; the columns are the same numbers, so the fit is
    the same to the last bit. PrefixSum at 1e7 calls (DP-Sniper's code), seed 5: peak 378 to
    361 MB, the same bound; seeds 0 to 3 peak at a linear fit, whose centred rows are as large
    (374 to 379 MB, unchanged).
    """

    def column(x: NDArray[np.float64], j: int) -> NDArray[np.float64]:
        return x[:, j] - x[:, j - 1] if differences and j > 0 else x[:, j]

    width = fit_a.shape[1]
    # column by column: the temporaries are one column long, not copies of the calls
    ma, mb = (
        np.array([column_medians(column(x, j)[:, None])[0] for j in range(width)]) for x in (fit_a, fit_b)
    )
    scale = np.array([
        (np.abs(column(fit_a, j) - ma[j]).sum() + np.abs(column(fit_b, j) - mb[j]).sum())
        / (fit_a.shape[0] + fit_b.shape[0])
        for j in range(width)
    ])
    floor = 1e-9 * max(float(np.abs(np.concatenate([ma, mb])).max()), 1.0)
    if not np.all(scale > floor):
        scale = np.maximum(scale, floor)
    return LaplaceScore(ma.tolist(), mb.tolist(), scale.tolist()), "laplace"


def _subsample(x: NDArray[np.float64], rows: int) -> NDArray[np.float64]:
    """The first ``rows`` rows (draws are iid, so any fixed subset is a random one)."""
    return x[:rows]


def _standardize(X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Centre and scale the columns of ``X`` in place; their means and scales.

    The statistics and the scaled rows are scikit-learn's ``StandardScaler`` ones, bit for bit
    on finite rows: the corrected two-pass variance, and a scale of 1 for a column it cannot
    tell from a constant (checked against scikit-learn 1.9). They are computed without its
    temporaries of the whole matrix (a mask of missing values, a centred copy), whose fresh
    pages cost more than the arithmetic: 0.87 s against 0.10 s of CPU on two million rows of
    five coordinates, each in a fresh process.
    """
    n, k = X.shape
    count = np.full(k, float(n))
    total = X.sum(axis=0)
    mean = (np.zeros(k) + total) / count
    X -= mean
    correction = X.sum(axis=0)
    variance = (_square_sums(X) - correction**2 / count) / count
    eps = np.finfo(np.float64).eps
    constant = variance <= n * eps * variance + (n * mean * eps) ** 2
    scale = np.sqrt(variance)
    scale[constant] = 1.0
    X /= scale
    return mean, scale


def _square_sums(X: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.square(X).sum(axis=0)`` to the last bit, squaring a chunk of rows at a time.

    numpy sums the rows of a C-ordered matrix of two columns or more one after the other, so the
    running sum is carried as the first row of each chunk; one column is summed pairwise, whole.
    """
    n, k = X.shape
    if k == 1 or n <= _SQUARES_CHUNK:
        out: NDArray[np.float64] = np.square(X).sum(axis=0)
        return out
    X = np.ascontiguousarray(X)
    buffer = np.empty((_SQUARES_CHUNK + 1, k))
    np.square(X[:_SQUARES_CHUNK], out=buffer[:_SQUARES_CHUNK])
    total: NDArray[np.float64] = buffer[:_SQUARES_CHUNK].sum(axis=0)
    for start in range(_SQUARES_CHUNK, n, _SQUARES_CHUNK):
        part = X[start : start + _SQUARES_CHUNK]
        buffer[0] = total
        np.square(part, out=buffer[1 : part.shape[0] + 1])
        total = buffer[: part.shape[0] + 1].sum(axis=0)
    return total


_TreesKey: TypeAlias = tuple[int, tuple[int, ...], tuple[int, ...], bytes]
"""The seed, the shapes of both inputs' calls and a digest of their bytes."""


@final
class FittedTrees:
    """Boosted trees fitted in one audit, by the calls they were fitted on.

    Boosted trees are fitted on the first :data:`_BOOSTED_FIT_ROWS` calls of each input. When
    the chosen pair's round grows, those calls are unchanged (calls are only ever added after
    them), and so is the fit: the trees fitted before are used again, not fitted a second time
    (0.9 s of CPU in one OneTimeRappor audit at 1e7 calls). Calls are recognized by a BLAKE2
    digest of their bytes, so trees are reused only on the very same numbers.
    """

    def __init__(self) -> None:
        self._fitted: dict[_TreesKey, tuple[ScoreModel, str] | None] = {}

    def get(
        self, xa: NDArray[np.float64], xb: NDArray[np.float64], seed: int,
        fit: Callable[[], tuple[ScoreModel, str] | None],
    ) -> tuple[ScoreModel, str] | None:
        """The trees fitted on ``xa`` and ``xb`` with ``seed``: ``fit()`` the first time."""
        digest = hashlib.blake2b(digest_size=32)
        for x in (xa, xb):
            digest.update(np.ascontiguousarray(x).data)
        key = (seed, xa.shape, xb.shape, digest.digest())
        if key not in self._fitted:
            self._fitted[key] = fit()
        return self._fitted[key]


def _sklearn_model(
    family: str, fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], seed: int,
    trees: FittedTrees | None = None,
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
    if family == "boosted" and trees is not None:
        return trees.get(xa, xb, seed, lambda: _sklearn_model(family, xa, xb, seed))
    if family == "linear":
        est: Any = LinearDiscriminant("ledoit_wolf")
    elif family == "logistic":
        from sklearn.linear_model import LogisticRegression

        est = LogisticRegression(C=1.0, max_iter=1000)
    else:
        from sklearn.ensemble import HistGradientBoostingClassifier

        est = HistGradientBoostingClassifier(
            max_iter=30, learning_rate=0.2, max_leaf_nodes=31, early_stopping=False,
            random_state=seed,
        )
    if family == "linear":  # fitted on the two classes' rows as they are, no stacked copy
        est.fit_classes(xa, xb)
        coef = np.asarray(est.coef_, dtype=np.float64).reshape(-1)
        return LinearScore(coef.tolist(), float(np.asarray(est.intercept_).reshape(-1)[0])), "linear"
    X = np.vstack([xa, xb])
    y = np.concatenate([np.zeros(xa.shape[0], np.int64), np.ones(xb.shape[0], np.int64)])
    if family == "logistic":  # standardized in place: the stacked rows are this fit's own copy
        mean, scale = _standardize(X)
        est.fit(X, y)
        del X
        coef = np.asarray(est.coef_, dtype=np.float64).reshape(-1) / scale
        intercept = float(est.intercept_[0]) - float(coef @ mean)
        return LinearScore(coef.tolist(), intercept), "logistic"
    est.fit(X, y)
    del X
    return SkopsScore.from_estimator(est, "decision_function", deferred=True), "boosted"


def _cross_fitted(
    family: str,
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


def _dependence_correlations(X: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """Correlations of per-coordinate transforms that reveal dependence, and their coordinates.

    Each coordinate gives its value, its distance from its median (dependence in spread) and,
    when one value holds at least 1% of the rows, the indicator of that value (a released value
    that is 0 unless a flag is set is uncorrelated with the flag, yet its zeros are not).
    Constant transforms are left out. The transforms are standardized (mean 0, variance 1) and
    their correlation matrix ``F.T @ F / n`` is summed over blocks of :data:`_DEPENDENCE_CHUNK`
    rows, so that no more than one block of them is held (all rows of a 20-coordinate output's
    transforms took 96 MB at once).
    """
    specs: list[tuple[int, float | None, float | None, float, float]] = []
    centres = column_medians(X)
    for j in range(X.shape[1]):
        x = X[:, j]
        values, counts = np.unique(x, return_counts=True)
        transforms: list[tuple[float | None, float | None]] = [(None, None), (float(centres[j]), None)]
        if counts.max() >= _ATOM_SHARE * x.size and values.size > 1:
            transforms.append((None, float(values[np.argmax(counts)])))
        for centre, atom in transforms:
            f = _dependence_transform(x, centre, atom)
            sd = float(f.std())
            if sd > 0:
                specs.append((j, centre, atom, float(f.mean()), sd))
    owner = np.asarray([spec[0] for spec in specs], np.intp)
    gram: NDArray[np.float64] = np.zeros((len(specs), len(specs)))
    for start in range(0, X.shape[0], _DEPENDENCE_CHUNK):
        part = X[start : start + _DEPENDENCE_CHUNK]
        block = np.empty((part.shape[0], len(specs)), dtype=np.float64, order="F")
        for k, (j, centre, atom, mean, sd) in enumerate(specs):
            column = block[:, k]
            np.subtract(_dependence_transform(part[:, j], centre, atom), mean, out=column)
            column /= sd
        gram += block.T @ block
    gram /= max(X.shape[0], 1)
    return gram, owner


def _dependence_transform(
    x: NDArray[np.float64], centre: float | None, atom: float | None
) -> NDArray[np.float64]:
    """A coordinate's value, its distance from ``centre``, or the indicator of ``atom``."""
    if atom is not None:
        return np.asarray(x == atom, dtype=np.float64)
    return x if centre is None else np.abs(x - centre)


def _independent_blocks(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]
) -> list[NDArray[np.intp]]:
    """Blocks of coordinates that look independent of each other under both inputs.

    Two coordinates are linked when, under either input, a pair of their transforms
    (:func:`_dependence_correlations`) correlates beyond :data:`_DEPENDENCE_SDS` standard errors of
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
        owner, first, second = _links(X)
        varies[owner] = True
        if owner.size < 2:
            continue
        linked[first, second] = True
    n_blocks, label = connected_components(linked, directed=False)
    blocks = [np.flatnonzero(label == k) for k in range(n_blocks)]
    return [b for b in blocks if varies[b].any()]


def independent_coordinates(fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]) -> bool:
    """Whether the outputs have two coordinates or more and look independent under both inputs.

    Every coordinate is a block of its own (:func:`_independent_blocks`): the log likelihood
    ratio of the outputs is then a sum of one term per coordinate, the form of a product score.
    """
    if fit_a.shape[1] < 2:
        return False
    # as :func:`_independent_blocks` links them, stopping at the first link between two
    # coordinates (the second input's correlations are not computed where the first links some)
    for X in (_subsample(fit_a, _DEPENDENCE_ROWS), _subsample(fit_b, _DEPENDENCE_ROWS)):
        if X.shape[0] < 2:
            continue
        _, first, second = _links(X)
        if np.any(first != second):
            return False
    return True


def _links(X: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """The coordinates of ``X``'s transforms, and each linked pair's two coordinates.

    Two transforms (:func:`_dependence_correlations`) are linked when they correlate beyond
    :data:`_DEPENDENCE_SDS` standard errors of a correlation of independent variables.
    """
    r, owner = _dependence_correlations(X)
    i, j = np.nonzero(np.abs(r) > _DEPENDENCE_SDS / math.sqrt(X.shape[0]))
    return owner, owner[i], owner[j]


def independent_terms(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64]
) -> Literal["coordinates", "differences"] | None:
    """What the outputs' log likelihood ratio looks like a sum over, one term each, if anything.

    ``"coordinates"`` where :func:`independent_coordinates` holds; ``"differences"`` where it
    holds of the consecutive differences instead (:meth:`DifferenceScore.steps`, an invertible
    linear map of the outputs: running sums of independent noise, whose log ratio is the sum of
    one term per step); None where neither looks independent. Either sum is the form of a
    product score (the product family fits one of the coordinates and one of the differences).
    """
    if independent_coordinates(fit_a, fit_b):
        return "coordinates"
    if fit_a.shape[1] >= 2 and independent_coordinates(
        DifferenceScore.steps(fit_a), DifferenceScore.steps(fit_b)
    ):
        return "differences"
    return None


def _block_model(
    fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], seed: int
) -> LinearScore | HistogramScore | BinnedScore | None:
    """One block's log-ratio score: a histogram of few discrete values, else binned or logistic."""
    if is_discrete(fit_a) and is_discrete(fit_b):
        found = _histogram(fit_a, fit_b)  # keys: every distinct row (the first _MAX_KEYS of them)
        if found is not None and len(cast(HistogramScore, found[0]).keys) <= _FEW_VALUES:
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
    family: str, fit_a: NDArray[np.float64], fit_b: NDArray[np.float64], seed: int,
    memo: BinnedFits | None = None, trees: FittedTrees | None = None,
) -> list[tuple[ScoreModel, str]]:
    """The fitted scores of one family (several for per-coordinate families).

    ``memo``: binned coordinates already fitted on these calls by another family (those fitted
    here are added). ``trees``: boosted trees already fitted in the audit.
    """
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
                out.append(_binned(fit_a, fit_b, j, memo))
    elif family == "product":
        if width > 1:
            out.append(_product(fit_a, fit_b, memo))
            steps = _product(DifferenceScore.steps(fit_a), DifferenceScore.steps(fit_b))
            if steps is not None:
                inner = cast(ProductScore, steps[0])
                out.append((DifferenceScore(inner), f"{steps[1]} of differences"))
    elif family == "laplace":
        if not discrete:
            out.append(_laplace(fit_a, fit_b))
            if width > 1:
                steps = _laplace(fit_a, fit_b, differences=True)
                if steps is not None:
                    inner_l = cast(LaplaceScore, steps[0])
                    out.append((DifferenceScore(inner_l), "laplace of differences"))
    elif family == "linear":
        if width > 1:
            out.append(_sklearn_model(family, fit_a, fit_b, seed))
    elif family == "logistic" or width > 1:  # also on one coordinate, so tests="paper" applies to any output
        out.append(_sklearn_model(family, fit_a, fit_b, seed, trees))
    return [o for o in out if o is not None]
