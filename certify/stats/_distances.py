"""Squared Euclidean distances and RBF kernel matrices of samples, exact where rows repeat.

Distances come from the Gram form ``||u||^2 + ||v||^2 - 2 u.v`` after centring, with entries
that lose too many digits to cancellation recomputed from the explicit difference; exactly
repeated rows (randomized response) are grouped first, so their distances are exactly 0.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from typing import Final

import numpy as np
from numpy.typing import NDArray

from certify.errors import DataError, ParameterError

__all__: list[str] = []

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
