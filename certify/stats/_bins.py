"""The bin of every value among sorted edges: ``np.searchsorted(edges, values, side="right")``.

A binary search costs about 50 ns a value at a few hundred edges, and binned scores search
every development call's coordinates many times in an audit (a tenth of its CPU at 1e7 calls).
:func:`bin_index` gives the same numbers from a lookup table on an even grid: about 11 ns a
value (``benchmarks/bench_bins.py``).
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["bin_index"]

_GRID_PER_EDGE: Final = (16, 64)
"""Grid cells per edge, the finer grid where a cell of the first holds two edges or more: at
quantile edges of Laplace or Gaussian values, one edge or none in a cell; with a placeholder
value far from the others (a sparse vector's), a few in the crowded cells, each one more
comparison of every value."""

_MAX_PER_CELL: Final = 8
"""Most edges in one grid cell for the table to be used (heavy tails put many edges in the cells
near the centre; a binary search is as fast then)."""

_MIN_VALUES_PER_EDGE: Final = 64
"""Fewest values per edge for the table to be worth building."""

_MIN_VALUES: Final = 8_192
"""Fewest values for the table to be worth building: below, building it can take longer than
the search (4,166 values of a sparse vector's outputs, most of them one placeholder, are
searched in 0.03 ms, and placed by the table in 0.05 to 0.2 ms). Above, it pays: at 32,768,
PrefixSum's audits at 1e7 calls spent 0.3 to 0.7 s more CPU."""


def bin_index(edges: NDArray[np.float64], values: NDArray[np.float64]) -> NDArray[np.intp]:
    """``np.searchsorted(edges, values, side="right")``, the same numbers, faster for many values.

    Parameters
    ----------
    edges : numpy.ndarray, shape (k,)
        Finite, strictly increasing edges.
    values : numpy.ndarray, shape (n,)
        Values to place, compared as float64 (any, NaN included: those fall back to the binary
        search).

    Returns
    -------
    numpy.ndarray of intp, shape (n,)
        For each value, the number of edges at or below it.

    Notes
    -----
    The grid's cell of ``x`` is ``trunc(clip((x - edges[0]) * scale, 0, cells - 1))``. Every
    step is a non-decreasing function of ``x`` in floating point (a correctly rounded
    subtraction of a constant, a product with a positive constant, a clip, a truncation of a
    non-negative number), so an edge whose cell lies before ``x``'s cell is below ``x`` and one
    whose cell lies after it is above. The count is then the edges of the earlier cells plus
    those of ``x``'s own cell at or below ``x``: a few comparisons, whatever the rounding.
    """
    # in float64, as the search compares them (the cells of float32 values computed in float32
    # would not be the same function of the value as the edges' cells); a column of a matrix of
    # outputs copied once: every pass below reads it, and strided reads of 600,000 values of a
    # ten-coordinate output took 15 ms a search against 4 ms, plus 2 ms for the copy
    values = np.ascontiguousarray(values, dtype=np.float64)
    k = edges.size
    small = values.size < max(_MIN_VALUES_PER_EDGE * k, _MIN_VALUES)
    if k < 2 or small or not np.isfinite(values).all():
        return np.searchsorted(edges, values, side="right")
    low = float(edges[0])
    grids = [(per_edge * k, per_edge * k / (float(edges[-1]) - low)) for per_edge in _GRID_PER_EDGE]
    if not all(np.isfinite(scale) and scale > 0.0 for _, scale in grids):
        return np.searchsorted(edges, values, side="right")
    cells, scale = grids[0]
    per_cell = np.bincount(_cell(edges, low, scale, cells), minlength=cells)
    for cells, scale in grids[1:] if per_cell.max() > 1 else ():
        per_cell = np.bincount(_cell(edges, low, scale, cells), minlength=cells)
    most = int(per_cell.max())
    if most > _MAX_PER_CELL:
        return np.searchsorted(edges, values, side="right")
    before = np.zeros(cells, dtype=np.intp)
    np.cumsum(per_cell[:-1], out=before[1:])
    out = before[_cell(values, low, scale, cells)]
    padded = np.append(edges, np.inf)
    for _ in range(most):
        out += padded[out] <= values
    return out


def _cell(x: NDArray[np.float64], low: float, scale: float, cells: int) -> NDArray[np.intp]:
    """The grid cell of every value (a non-decreasing function of the value)."""
    at = x - low
    at *= scale
    np.clip(at, 0.0, cells - 1, out=at)
    return at.astype(np.intp)
