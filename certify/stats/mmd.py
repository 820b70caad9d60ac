"""Maximum mean discrepancy with an RBF kernel: Eq. 7, the MMD-TV (Eq. 12) and hockey-stick maps.

Everything here is plain numerics on two samples ``x_a`` (class 0) and ``x_b`` (class 1), each a
2-D float array with one row per sample. The kernel is ``k(u, v) = exp(-||u - v||^2 / (2 s^2))``;
``s`` defaults to the median pairwise distance of the pooled sample (the median heuristic).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from typing import Final

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify.errors import DataError, ParameterError
from certify.stats._checks import as_pair as _as_pair
from certify.stats._checks import as_rows as _as_rows

__all__ = [
    "MMDLowerBound",
    "clipped_mmd",
    "hockey_stick_epsilon",
    "median_bandwidth",
    "mmd2_unbiased",
    "mmd2_unbiased_with_bandwidth",
    "mmd_biased",
    "mmd_lower_confidence_bound",
    "mmd_pure_dp_epsilon_lower",
    "mmd_permutation_pvalue",
    "mmd_tv_epsilon",
    "rbf_kernel_matrix",
]

#: Squared distances below this fraction of ``||u||^2 + ||v||^2`` (after centring) are recomputed
#: from the explicit difference, where the Gram form would lose too many digits to cancellation.
_REFINE_FRACTION: Final = 2.0**-10
#: Largest number of float64 elements a temporary block may hold (about 16 MB).
_BLOCK_ELEMENTS: Final = 2_000_000
#: Angle step of the ``cos`` weights whose dot products with the rows key the search for equal rows.
_KEY_STEP: Final = 0.6180339887498949
#: Up to this many rows, ties among row norms are looked for with a Python set instead of a sort.
_SET_CHECK_ROWS: Final = 128
#: Rows (and columns) per block when mirroring a symmetric distance matrix.
_MIRROR_BLOCK: Final = 128
#: Float64 elements per block of permutation label vectors (about 2 MB, cache friendly).
_PERMUTATION_BLOCK_ELEMENTS: Final = 2**18
#: Permuted statistics within this absolute distance below the observed one count as ``>=``.
_TIE_TOLERANCE: Final = 1e-11
_SQRT2: Final = math.sqrt(2.0)


# ----------------------------------------------------------------------------------- validation






def _check_bandwidth(bandwidth: float) -> float:
    """Validate a kernel bandwidth: a finite number > 0."""
    if (
        isinstance(bandwidth, bool)
        or not isinstance(bandwidth, numbers.Real)
        or not math.isfinite(bandwidth)
        or bandwidth <= 0.0
    ):
        raise ParameterError(
            f"bandwidth must be a finite number > 0; got {bandwidth!r}. "
            "Pass None to use the median pairwise distance of the pooled sample."
        )
    return float(bandwidth)


def _check_mmd(mmd: float) -> float:
    """Validate an MMD value for a kernel bounded by 1: a number in [0, 2]."""
    if isinstance(mmd, bool) or not isinstance(mmd, numbers.Real) or not 0.0 <= mmd <= 2.0:
        raise ParameterError(
            f"mmd must be a number in [0, 2] (the MMD of a kernel with k(x, x) <= 1); got {mmd!r}. "
            "Pass the clipped square root clipped_mmd(mmd2), not the squared statistic."
        )
    return float(mmd)


# ------------------------------------------------------------------------------------ distances


def _row_chunks(rows: int, width: int) -> Iterator[slice]:
    """Slices of ``rows`` so that each chunk times ``width`` stays within the block budget."""
    step = max(1, _BLOCK_ELEMENTS // max(width, 1))
    for start in range(0, rows, step):
        yield slice(start, min(start + step, rows))


def _centred(
    z: NDArray[np.float64], center: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rows of ``z`` minus ``center``, and their squared norms."""
    zc = z - center
    return zc, np.einsum("ij,ij->i", zc, zc)


def _repeated_rows(
    z: NDArray[np.float64], norms: NDArray[np.float64]
) -> tuple[NDArray[np.intp], NDArray[np.intp]] | None:
    """Group exactly equal rows: the first row of each group (in order) and each row's group index.

    ``norms`` are the squared norms of the centred rows: copies of a row get equal norms, so without a
    tie among them nothing is grouped. Returns ``None`` when no two rows are bit-for-bit equal, or
    when so few rows repeat that refining their distances costs less than grouping and expanding.
    A copy that is missed (not grouped) costs only time: its distances are computed and refined.
    """
    n, width = z.shape
    if n <= _SET_CHECK_ROWS:  # a set of Python floats is the cheaper test for a few rows
        if len(set(norms.tolist())) == n:
            return None
    else:
        ordered_norms = np.sort(norms)
        if not (ordered_norms[1:] == ordered_norms[:-1]).any():
            return None
    # Rows with equal keys are candidate copies. Copies may get different keys (the rounding of the
    # product can depend on the row's position); they then stay ungrouped, which costs only time.
    keys = z @ np.cos(np.arange(1, width + 1) * _KEY_STEP)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    sizes = np.diff(np.append(np.flatnonzero(starts), n))
    # Costs in units of one refined column (a few ns): refining a pair of copies costs about
    # width + 10, an entry of the Gram pass about 4, expanding an entry or checking an element 1/3.
    saved = int(sizes @ (sizes - 1)) // 2 * (width + 10) + 4 * (n * n - len(sizes) ** 2)
    if 3 * saved < n * n + n * width:
        return None
    heads = order[starts]  # the sort is stable: the first row of each group
    by_position = np.argsort(heads)
    rank = np.empty(len(heads), dtype=np.intp)
    rank[by_position] = np.arange(len(heads))
    inverse = np.empty(n, dtype=np.intp)
    inverse[order] = rank[np.cumsum(starts) - 1]
    heads = heads[by_position]
    bits = np.ascontiguousarray(z).view(np.uint64)
    if not np.array_equal(bits[heads][inverse], bits):  # equal keys but different rows
        return None
    return heads, inverse


def _mirror_upper(d2: NDArray[np.float64]) -> None:
    """Copy the strict upper triangle of a square matrix onto the lower one and zero the diagonal.

    Equal to ``triu(d2, 1) + triu(d2, 1).T`` bit for bit when ``d2`` holds no ``-0.0``.
    """
    n = d2.shape[0]
    for start in range(0, n, _MIRROR_BLOCK):
        stop = min(start + _MIRROR_BLOCK, n)
        block = d2[start:stop, start:stop]
        upper = np.triu(block, k=1)
        np.add(upper, upper.T, out=block)
        d2[stop:, start:stop] = d2[start:stop, stop:].T


def _gram_sq_distances(
    xc: NDArray[np.float64],
    nx: NDArray[np.float64],
    other: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> NDArray[np.float64]:
    """Squared distances between centred rows ``xc`` (squared norms ``nx``) and ``other`` (rows, norms).

    ``other=None`` pairs ``xc`` with itself and returns an exactly symmetric matrix, zero diagonal.
    """
    same = other is None
    yc, ny = (xc, nx) if other is None else other
    d2: NDArray[np.float64] = xc @ yc.T
    d2 *= -2.0  # exact, so adding the scale rounds exactly like scale - 2 (xc @ yc.T)
    scale = nx[:, None] + ny[None, :]
    d2 += scale
    scale *= _REFINE_FRACTION
    # Entries that lost digits to cancellation (near-duplicates) are recomputed; for xc with itself
    # only the strict upper triangle, which is then mirrored.
    flat = np.flatnonzero(d2 <= scale)
    if flat.size:
        rows, cols = np.divmod(flat, d2.shape[1])
        if same:
            upper = rows < cols
            rows, cols = rows[upper], cols[upper]
        for part in _row_chunks(len(rows), xc.shape[1]):
            diff = xc[rows[part]] - yc[cols[part]]
            d2[rows[part], cols[part]] = np.einsum("ij,ij->i", diff, diff)
    np.maximum(d2, 0.0, out=d2)
    if same:
        _mirror_upper(d2)
    return d2


def _sq_distances(x: NDArray[np.float64], y: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Squared Euclidean distances between rows of ``x`` and ``y`` (``None``: ``x`` with itself).

    The Gram form is evaluated on rows centred at the pooled mean, and entries with
    ``d2 <= 2**-10 (||u||^2 + ||v||^2)`` are recomputed from the explicit difference. When exactly
    equal rows repeat often (discrete data), distances are computed between distinct rows only and
    expanded; copies of one row are exactly 0 apart either way. With ``y=None`` the result is exactly
    symmetric with a zero diagonal.
    """
    if y is None:
        xc, nx = _centred(x, x.mean(axis=0))
        groups = _repeated_rows(x, nx)
        if groups is None:
            return _gram_sq_distances(xc, nx)
        heads, inverse = groups
        return _gram_sq_distances(xc[heads], nx[heads]).take(inverse, axis=0).take(inverse, axis=1)
    center = np.vstack([x, y]).mean(axis=0)
    xc, nx = _centred(x, center)
    yc, ny = _centred(y, center)
    groups_x, groups_y = _repeated_rows(x, nx), _repeated_rows(y, ny)
    if groups_x is not None:
        xc, nx = xc[groups_x[0]], nx[groups_x[0]]
    if groups_y is not None:
        yc, ny = yc[groups_y[0]], ny[groups_y[0]]
    d2 = _gram_sq_distances(xc, nx, (yc, ny))
    if groups_x is not None:
        d2 = d2.take(groups_x[1], axis=0)
    if groups_y is not None:
        d2 = d2.take(groups_y[1], axis=1)
    return d2


def _median_from_sq(d2: NDArray[np.float64]) -> float:
    """Median of the off-diagonal (i < j) distances given the pooled squared-distance matrix."""
    iu = np.triu_indices(d2.shape[0], k=1)
    med = float(np.median(np.sqrt(d2[iu])))
    if med <= 0.0:
        pairs = len(iu[0])
        zeros = int(np.count_nonzero(d2[iu] == 0.0))
        raise DataError(
            "the median pairwise distance of the pooled sample must be > 0; got 0.0 "
            f"({zeros} of {pairs} pairs are exact duplicates). Remove duplicate rows "
            "(see EmbeddingTable.cleaning) or pass an explicit bandwidth."
        )
    return med


def _kernel_from_sq(d2: NDArray[np.float64], bandwidth: float) -> NDArray[np.float64]:
    """RBF kernel values from squared distances."""
    kernel: NDArray[np.float64] = np.exp(d2 * (-0.5 / (bandwidth * bandwidth)))
    return kernel


def _pooled_kernel(
    a: NDArray[np.float64], b: NDArray[np.float64], bandwidth: float | None
) -> tuple[NDArray[np.float64], float]:
    """Pooled kernel matrix with a zero diagonal, and the bandwidth used."""
    d2 = _sq_distances(np.vstack([a, b]))
    bw = _median_from_sq(d2) if bandwidth is None else _check_bandwidth(bandwidth)
    k0 = _kernel_from_sq(d2, bw)
    np.fill_diagonal(k0, 0.0)
    return k0, bw


def _mmd2_from_pooled(k0: NDArray[np.float64], n: int) -> float:
    """Eq. 7 from the pooled kernel matrix with zero diagonal; the first ``n`` rows are class 0."""
    m = int(k0.shape[0]) - n
    s_aa = float(k0[:n, :n].sum())
    s_bb = float(k0[n:, n:].sum())
    s_ab = float(k0[:n, n:].sum())
    return s_aa / (n * (n - 1)) + s_bb / (m * (m - 1)) - 2.0 * s_ab / (n * m)


# ------------------------------------------------------------------------------------ public API


def median_bandwidth(pooled: ArrayLike) -> float:
    """Median heuristic bandwidth: the median Euclidean distance between distinct rows.

    Parameters
    ----------
    pooled : array_like, shape (n_samples, n_features)
        The pooled sample (both identities of a pair stacked), ``n_samples >= 2``.

    Returns
    -------
    float
        The median of ``||z_i - z_j||`` over all ``i < j`` (``n(n-1)/2`` values; the mean of the two
        middle values when their number is even). Always ``> 0``.

    Raises
    ------
    DataError
        If ``pooled`` is not a finite 2-D array with at least 2 rows, or if the median distance is 0
        (more than half of the pairs are exact duplicates).

    Notes
    -----
    This is the bandwidth the paper uses for MMD-TV (Sec. 4.3, App. D), chosen separately from each
    pair's pooled sample. Distances use the Gram form ``||u||^2 + ||v||^2 - 2 u.v`` on data centred
    at the pooled mean; entries smaller than ``2**-10 (||u||^2 + ||v||^2)``, where that form loses
    digits to cancellation, are recomputed from the explicit difference, so exact duplicates give
    exactly 0 and the relative error of every squared distance stays near ``1e-12``.

    Examples
    --------
    >>> median_bandwidth([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]])
    5.0
    """
    z = _as_rows(pooled, "pooled")
    return _median_from_sq(_sq_distances(z))


def rbf_kernel_matrix(x: ArrayLike, y: ArrayLike, bandwidth: float) -> NDArray[np.float64]:
    """RBF kernel matrix ``K[i, j] = exp(-||x_i - y_j||^2 / (2 bandwidth^2))``.

    Parameters
    ----------
    x : array_like, shape (n, d)
        First set of rows (at least 1).
    y : array_like, shape (m, d)
        Second set of rows (at least 1), same number of columns as ``x``.
    bandwidth : float
        Kernel bandwidth ``sigma > 0``.

    Returns
    -------
    ndarray of float64, shape (n, m)
        Kernel values in ``(0, 1]``; exactly 1 for identical rows.

    Raises
    ------
    DataError
        If ``x`` or ``y`` is not a finite 2-D array, or their column counts differ.
    ParameterError
        If ``bandwidth`` is not a finite number > 0.

    Notes
    -----
    The RBF kernel is characteristic and satisfies ``0 <= k <= 1`` with ``k(x, x) = 1``, the
    conditions both Eq. 12 and the hockey-stick formula need. Squared distances are computed as
    in :func:`median_bandwidth`.

    Examples
    --------
    >>> K = rbf_kernel_matrix([[0.0], [1.0]], [[0.0]], bandwidth=1.0)
    >>> K.ravel().round(4).tolist()
    [1.0, 0.6065]
    """
    bw = _check_bandwidth(bandwidth)
    a = _as_rows(x, "x", 1)
    b = _as_rows(y, "y", 1)
    if a.shape[1] != b.shape[1]:
        raise DataError(f"y must have the same number of columns as x ({a.shape[1]}); got {b.shape[1]}.")
    return _kernel_from_sq(_sq_distances(a, b), bw)


def mmd2_unbiased(x_a: ArrayLike, x_b: ArrayLike, bandwidth: float | None = None) -> float:
    """Unbiased estimate of squared MMD with an RBF kernel (paper Eq. 7).

    Parameters
    ----------
    x_a : array_like, shape (n, d)
        Sample from the first distribution, ``n >= 2``.
    x_b : array_like, shape (m, d)
        Sample from the second distribution, ``m >= 2``.
    bandwidth : float or None, default None
        RBF bandwidth ``sigma > 0``. ``None`` uses :func:`median_bandwidth` of the pooled sample.

    Returns
    -------
    float
        ``MMD^2_u``; may be negative (the estimator is unbiased, not clipped).

    Raises
    ------
    DataError
        If a sample is not a finite 2-D array with at least 2 rows, the column counts differ, or the
        median bandwidth is 0.
    ParameterError
        If ``bandwidth`` is given and is not a finite number > 0.

    Notes
    -----
    ``MMD^2_u = sum_{i != i'} k(x_i, x_i') / (n(n-1)) + sum_{j != j'} k(y_j, y_j') / (m(m-1))
    - 2 sum_{i,j} k(x_i, y_j) / (nm)`` (Gretton et al. [1]_). For a fixed bandwidth it is unbiased
    for the population ``MMD^2``; with the data-dependent median bandwidth it is not exactly
    unbiased. It is a point estimate with no confidence treatment.

    References
    ----------
    .. [1] A. Gretton, K. M. Borgwardt, M. J. Rasch, B. Schoelkopf and A. Smola, "A kernel
       two-sample test", JMLR 13, 2012.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(50, 3))
    >>> abs(mmd2_unbiased(x[:25], x[25:])) < 0.05
    True
    >>> mmd2_unbiased(x[:25], x[25:] + 5.0) > 0.5
    True
    """
    a, b = _as_pair(x_a, x_b)
    k0, _ = _pooled_kernel(a, b, bandwidth)
    return _mmd2_from_pooled(k0, len(a))


def mmd2_unbiased_with_bandwidth(
    x_a: ArrayLike, x_b: ArrayLike, bandwidth: float | None = None
) -> tuple[float, float]:
    """:func:`mmd2_unbiased` and the bandwidth it used, from one pooled distance matrix.

    Parameters
    ----------
    x_a, x_b, bandwidth
        As in :func:`mmd2_unbiased`.

    Returns
    -------
    (float, float)
        ``MMD^2_u`` and the bandwidth (:func:`median_bandwidth` of the pooled sample when
        ``bandwidth`` is None). Identical to calling :func:`median_bandwidth` and then
        :func:`mmd2_unbiased` with it, at half the cost.

    Raises
    ------
    DataError, ParameterError
        As in :func:`mmd2_unbiased`.

    Examples
    --------
    >>> mmd2, bw = mmd2_unbiased_with_bandwidth([[0.0], [1.0]], [[3.0], [4.0]])
    >>> round(bw, 6) == round(median_bandwidth([[0.0], [1.0], [3.0], [4.0]]), 6)
    True
    """
    a, b = _as_pair(x_a, x_b)
    k0, bw = _pooled_kernel(a, b, bandwidth)
    return _mmd2_from_pooled(k0, len(a)), bw


def clipped_mmd(mmd2: float) -> float:
    """Return the MMD estimate the paper reports: ``sqrt(max(mmd2, 0))``.

    Parameters
    ----------
    mmd2 : float
        A squared-MMD estimate such as :func:`mmd2_unbiased` (may be negative).

    Returns
    -------
    float
        ``sqrt(max(mmd2, 0))``.

    Raises
    ------
    ParameterError
        If ``mmd2`` is not a finite real number.

    Notes
    -----
    Sec. 4.3: clipping and the square root make the statistic biased; it is a point estimate, not
    a lower confidence bound.

    Examples
    --------
    >>> clipped_mmd(0.25), clipped_mmd(-0.01)
    (0.5, 0.0)
    """
    if isinstance(mmd2, bool) or not isinstance(mmd2, numbers.Real) or not math.isfinite(mmd2):
        raise ParameterError(f"mmd2 must be a finite real number; got {mmd2!r}.")
    return math.sqrt(max(float(mmd2), 0.0))


def mmd_tv_epsilon(mmd: float) -> float:
    """MMD-TV pure-DP epsilon: ``ln((1 + mmd/2) / (1 - mmd/2))`` (paper Eq. 12/14).

    Parameters
    ----------
    mmd : float
        An MMD value in ``[0, 2]`` for a kernel with ``k(x, x) <= 1`` (e.g. :func:`clipped_mmd`).

    Returns
    -------
    float
        ``2 artanh(mmd / 2)``; ``+inf`` at ``mmd == 2``.

    Raises
    ------
    ParameterError
        If ``mmd`` is not a number in ``[0, 2]``.

    Notes
    -----
    For population distributions and a positive-definite kernel with ``k(x, x) <= 1``,
    ``MMD <= 2 d_TV`` (Lemma 4.1) and pure epsilon-DP gives ``d_TV <= tanh(epsilon / 2)``, so
    every pure epsilon-DP mechanism has ``epsilon >= `` this value (Theorem 4.2). Evaluated at a
    sample MMD it is a plug-in point estimate, not a lower confidence bound.

    Examples
    --------
    >>> round(mmd_tv_epsilon(0.5), 6)
    0.510826
    >>> mmd_tv_epsilon(2.0)
    inf
    """
    m = _check_mmd(mmd)
    if m == 2.0:
        return math.inf
    return 2.0 * math.atanh(m / 2.0)


def hockey_stick_epsilon(mmd: float) -> float:
    """Tighter pure-DP epsilon from the hockey-stick bound: ``2 artanh(mmd / sqrt 2)`` (Sec. 4.3).

    Parameters
    ----------
    mmd : float
        An MMD value in ``[0, 2]`` for a kernel with ``0 <= k(x, y) <= 1``.

    Returns
    -------
    float
        ``2 artanh(mmd / sqrt(2))``; ``+inf`` when ``mmd >= sqrt(2)``.

    Raises
    ------
    ParameterError
        If ``mmd`` is not a number in ``[0, 2]``.

    Notes
    -----
    González et al. show ``MMD <= sqrt(2) (1 - 2(1 - delta) / (1 + e^epsilon))`` for kernels with
    ``0 <= k(x, y) <= 1``; at ``delta = 0`` this inverts to the returned value, which is at least
    :func:`mmd_tv_epsilon` for every ``mmd``. It needs a nonnegative kernel (the RBF kernel is one);
    Eq. 12 needs only ``k(x, x) <= 1``. At a sample MMD it is a plug-in point estimate.

    References
    ----------
    .. [1] G. González et al., sequential MMD auditing, 2025 (see the paper's bibliography).

    Examples
    --------
    >>> round(hockey_stick_epsilon(0.5), 6)
    0.738998
    >>> hockey_stick_epsilon(1.5)
    inf
    """
    m = _check_mmd(mmd)
    if m >= _SQRT2:
        return math.inf
    return 2.0 * math.atanh(m / _SQRT2)


def _relabel(keys: NDArray[np.float64], n: int, out: NDArray[np.float64]) -> NDArray[np.float64]:
    """Write 0/1 labels into ``out``: 1 on the ``n`` smallest keys of each row (stable on ties)."""
    kth = np.partition(keys, n - 1, axis=1)[:, n - 1 : n]
    np.less_equal(keys, kth, out=out, casting="unsafe")
    tied = np.flatnonzero(out.sum(axis=1) != n)
    for row in tied.tolist():  # equal keys have probability ~N^2 / 2^53: resolve like argsort
        out[row] = 0.0
        out[row, np.argsort(keys[row], kind="stable")[:n]] = 1.0
    return out


def _stats_from_labels(
    k0: NDArray[np.float64], row_sums: NDArray[np.float64], labels: NDArray[np.float64], n: int
) -> NDArray[np.float64]:
    """Eq. 7 for each row of a 0/1 label matrix (1 = relabelled class 0), vectorized."""
    m = int(k0.shape[0]) - n
    grand = float(row_sums.sum())
    # q = l' K0 l (ordered pairs inside class 0), s = l' K0 1; all three block sums follow.
    q = np.einsum("pi,pi->p", labels, labels @ k0)
    s = labels @ row_sums
    s_aa, s_ab, s_bb = q, s - q, grand - 2.0 * s + q
    result: NDArray[np.float64] = s_aa / (n * (n - 1)) + s_bb / (m * (m - 1)) - 2.0 * s_ab / (n * m)
    return result


def _permutation_stats(k0: NDArray[np.float64], n: int, keys: NDArray[np.float64]) -> NDArray[np.float64]:
    """Eq. 7 for the relabelling given by each row of random ``keys`` (see the p-value function)."""
    labels = _relabel(keys, n, np.empty_like(keys))
    return _stats_from_labels(k0, k0.sum(axis=1), labels, n)


def mmd_permutation_pvalue(
    x_a: ArrayLike,
    x_b: ArrayLike,
    permutations: int = 10_000,
    seed: int | np.random.Generator = 0,
    bandwidth: float | None = None,
) -> tuple[float, float, int]:
    """Permutation test of equal distributions with the Eq. 7 statistic (Phipson-Smyth p-value).

    Parameters
    ----------
    x_a : array_like, shape (n, d)
        Sample from the first distribution, ``n >= 2``.
    x_b : array_like, shape (m, d)
        Sample from the second distribution, ``m >= 2``.
    permutations : int, default 10_000
        Number ``B >= 1`` of random relabellings.
    seed : int or numpy.random.Generator, default 0
        Source of the relabellings: ``numpy.random.default_rng(seed)``, or the given generator
        (whose state advances). Relabelling ``j`` draws ``n + m`` uniform keys (row ``j`` of
        ``rng.random((B, n + m))``, identical to ``B`` successive ``rng.random(n + m)`` calls);
        the ``n`` pooled rows with the smallest keys (ties, of probability ~1e-12, broken by a
        stable argsort) form the relabelled class 0. Each relabelling is a uniformly random
        split, and the result does not depend on the internal block size.
    bandwidth : float or None, default None
        RBF bandwidth; ``None`` uses the pooled median distance. The pooled sample, hence the
        median bandwidth, is the same under every relabelling.

    Returns
    -------
    statistic : float
        The observed ``MMD^2_u`` (equal to :func:`mmd2_unbiased`).
    p_value : float
        ``(b + 1) / (B + 1)``, in ``[1 / (B + 1), 1]``.
    b : int
        Number of permuted statistics ``>=`` the observed one.

    Raises
    ------
    DataError
        On invalid samples (see :func:`mmd2_unbiased`).
    ParameterError
        If ``permutations`` is not an integer ``>= 1``, ``seed`` is neither a nonnegative
        integer nor a Generator, or ``bandwidth`` is invalid.

    Notes
    -----
    Under ``H0: P_A = P_B`` with iid rows the pooled sample is exchangeable, so with the
    Phipson-Smyth correction [1]_ ``P(p <= alpha) <= alpha`` for every ``alpha``: the test is
    exact and slightly conservative (random relabellings drawn with replacement). A small p-value
    is evidence that the distributions differ; it is a diagnostic, not an epsilon bound.

    The pooled kernel matrix ``K0`` (zero diagonal) is computed once. For a block of label vectors
    ``l`` (1 on relabelled class 0), ``q = l' K0 l`` and ``s = l' K0 1`` give all three block
    sums (``S_aa = q``, ``S_ab = s - q``, ``S_bb = 1' K0 1 - 2 s + q``) with one matrix product
    per block; there is no Python loop per permutation. Permuted statistics within ``1e-11``
    below the observed one count as ties (``>=``), so rounding can only make the p-value more
    conservative.

    References
    ----------
    .. [1] B. Phipson and G. K. Smyth, "Permutation p-values should never be zero", Statistical
       Applications in Genetics and Molecular Biology 9(1), 2010.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x_a, x_b = rng.normal(size=(20, 4)), rng.normal(size=(20, 4)) + 3.0
    >>> stat, p, b = mmd_permutation_pvalue(x_a, x_b, permutations=99, seed=0)
    >>> p, b
    (0.01, 0)
    """
    if isinstance(permutations, bool) or not isinstance(permutations, numbers.Integral) or permutations < 1:
        raise ParameterError(f"permutations must be an integer >= 1; got {permutations!r}.")
    rng = _generator(seed)
    a, b = _as_pair(x_a, x_b)
    n = len(a)
    total = n + len(b)
    k0, _ = _pooled_kernel(a, b, bandwidth)
    row_sums = k0.sum(axis=1)
    statistic = _mmd2_from_pooled(k0, n)
    identity = np.zeros((1, total))
    identity[0, :n] = 1.0
    observed = float(_stats_from_labels(k0, row_sums, identity, n)[0])
    threshold = min(statistic, observed) - _TIE_TOLERANCE
    count = int(permutations)
    block = max(1, min(count, _PERMUTATION_BLOCK_ELEMENTS // total))
    buffer = np.empty((block, total))
    exceed = 0
    for start in range(0, count, block):
        size = min(block, count - start)
        labels = _relabel(rng.random((size, total)), n, buffer[:size])
        stats = _stats_from_labels(k0, row_sums, labels, n)
        exceed += int(np.count_nonzero(stats >= threshold))
    return statistic, (exceed + 1) / (count + 1), exceed


def _generator(seed: int | np.random.Generator) -> np.random.Generator:
    """Return a Generator for an integer seed, or the given Generator itself."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterError(f"seed must be a nonnegative integer or a numpy.random.Generator; got {seed!r}.")
    return np.random.default_rng(int(seed))


@attrs.frozen
class MMDLowerBound:
    """A one-sided lower confidence bound on the population MMD (plain numbers)."""

    mmd_biased: float
    """The biased statistic ``||mean phi(x) - mean phi(y)||`` (V-statistic square root)."""
    slack: float
    """What is subtracted: ``2 (sqrt(1/m) + sqrt(1/n)) + sqrt(2 (m + n) ln(1/alpha) / (m n))``."""
    lower: float
    """``max(0, mmd_biased - slack)``: the population MMD is at least this with probability ``1 - alpha``."""
    alpha: float
    """The one-sided error probability."""


def mmd_biased(x_a: ArrayLike, x_b: ArrayLike, bandwidth: float) -> float:
    """The biased MMD statistic (the RKHS distance between the two empirical mean embeddings).

    Parameters
    ----------
    x_a, x_b : array_like, shape (m, d) and (n, d)
        The two samples, at least one row each.
    bandwidth : float
        Fixed RBF bandwidth ``sigma > 0``.

    Returns
    -------
    float
        ``sqrt(sum k(x, x') / m^2 + sum k(y, y') / n^2 - 2 sum k(x, y) / (m n))``, diagonals included.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = 0.01 * rng.normal(size=(20, 2)), 0.01 * rng.normal(size=(20, 2)) + 9.0
    >>> round(mmd_biased(x, y, 1.0), 3)  # two far-apart tight clusters: sqrt(1 + 1 - 0)
    1.414
    """
    a, b = _as_pair(x_a, x_b, 1)
    bw = _check_bandwidth(bandwidth)
    k = _kernel_from_sq(_sq_distances(np.vstack([a, b])), bw)
    m, n = len(a), len(b)
    value = k[:m, :m].sum() / m**2 + k[m:, m:].sum() / n**2 - 2.0 * k[:m, m:].sum() / (m * n)
    return math.sqrt(max(float(value), 0.0))


def mmd_lower_confidence_bound(
    x_a: ArrayLike, x_b: ArrayLike, bandwidth: float, alpha: float
) -> MMDLowerBound:
    """One-sided finite-sample lower confidence bound on the population MMD for a fixed kernel.

    Parameters
    ----------
    x_a, x_b : array_like, shape (m, d) and (n, d)
        Independent iid samples of the two distributions.
    bandwidth : float
        RBF bandwidth fixed *before* these samples were seen (e.g. on development data).
    alpha : float
        One-sided error probability in (0, 1).

    Returns
    -------
    MMDLowerBound
        With probability at least ``1 - alpha``, ``MMD(P, Q) >= lower``.

    Raises
    ------
    DataError
        On malformed samples.
    ParameterError
        On a bad bandwidth or ``alpha``.

    Notes
    -----
    Gretton et al. (2012), Theorem 7, for a kernel with ``0 <= k <= K`` (here ``K = 1``):
    ``MMD_b - MMD <= sup_f |(E_P f - E_Q f) - (mean_x f - mean_y f)| =: D`` and
    ``E[D] <= 2 (sqrt(K/m) + sqrt(K/n))`` (Rademacher bound); changing one of the ``m + n`` rows
    moves ``D`` by at most ``2 sqrt(K)/m`` or ``2 sqrt(K)/n``, so McDiarmid's inequality gives the
    one-sided ``P(D - E[D] > eps) <= exp(-eps^2 m n / (2 K (m + n)))``. Hence
    ``MMD >= MMD_b - 2 (sqrt(1/m) + sqrt(1/n)) - sqrt(2 (m + n) ln(1/alpha) / (m n))`` with
    probability at least ``1 - alpha``. Valid for any pair of distributions, conservative (both
    steps are worst-case); it needs a kernel fixed independently of the samples, so a
    data-chosen bandwidth must come from other (development) data.

    References
    ----------
    .. [1] A. Gretton, K. M. Borgwardt, M. J. Rasch, B. Schoelkopf and A. Smola, "A kernel
       two-sample test", JMLR 13, 2012, Theorem 7.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = 0.01 * rng.normal(size=(400, 2)), 0.01 * rng.normal(size=(400, 2)) + 9.0
    >>> b = mmd_lower_confidence_bound(x, y, 1.0, 0.01)
    >>> round(b.mmd_biased, 3), round(b.slack, 3), round(b.lower, 3)
    (1.414, 0.415, 0.999)
    """
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 < alpha < 1.0:
        raise ParameterError(f"alpha must be a number in (0, 1); got {alpha!r}.")
    a, b = _as_pair(x_a, x_b, 1)
    stat = mmd_biased(a, b, bandwidth)
    m, n = len(a), len(b)
    slack = 2.0 * (math.sqrt(1.0 / m) + math.sqrt(1.0 / n)) + math.sqrt(
        2.0 * (m + n) * math.log(1.0 / float(alpha)) / (m * n)
    )
    return MMDLowerBound(mmd_biased=stat, slack=slack, lower=max(0.0, stat - slack), alpha=float(alpha))


def mmd_pure_dp_epsilon_lower(mmd_lower: float, delta: float = 0.0) -> float:
    """Epsilon implied by a lower bound on the population MMD (kernel in [0, 1]).

    Parameters
    ----------
    mmd_lower : float
        A value the population MMD is known to exceed, in [0, sqrt 2].
    delta : float, default 0.0
        In [0, 1).

    Returns
    -------
    float
        At ``delta = 0`` the larger of Eq. 14, ``ln((1 + L/2) / (1 - L/2))``, and the tighter
        hockey-stick form ``2 artanh(L / sqrt 2)``; for ``delta > 0`` the hockey-stick form
        ``ln(2 (1 - delta) / (1 - L / sqrt 2) - 1)`` (Gonzalez et al., 2025), clipped at 0.

    Notes
    -----
    Both population inequalities hold for every (epsilon, delta)-DP mechanism (Eq. 14 for pure
    DP and ``k(x, x) <= 1``; the hockey-stick bound for ``0 <= k <= 1``); they are monotone in the
    MMD, so a lower confidence bound on the MMD gives a lower confidence bound on epsilon at the
    same level.

    Examples
    --------
    >>> round(mmd_pure_dp_epsilon_lower(0.5), 4) == round(hockey_stick_epsilon(0.5), 4)
    True
    """
    if not (isinstance(mmd_lower, numbers.Real) and mmd_lower >= 0.0):
        raise ParameterError(f"mmd_lower must be a number >= 0; got {mmd_lower!r}.")
    if not (isinstance(delta, numbers.Real) and 0.0 <= delta < 1.0):
        raise ParameterError(f"delta must be a number in [0, 1); got {delta!r}.")
    lower = float(mmd_lower)
    if lower >= math.sqrt(2.0):
        return math.inf
    hockey = math.log(max(2.0 * (1.0 - float(delta)) / (1.0 - lower / math.sqrt(2.0)) - 1.0, 1.0))
    if delta == 0.0:
        return max(mmd_tv_epsilon(min(lower, 2.0)), hockey)
    return hockey
