"""Score models that read the floating-point representation of an output, stored as data.

A float64 output is a sign, an 11-bit exponent and a 52-bit mantissa. Arithmetic on doubles
leaves traces there that depend on the input: ``1.0 + n`` for a noise value ``n`` in
``[-1, -0.5]`` is exact (Sterbenz), so on input 1 every output in ``(0, 0.5)`` is a multiple of
``2**-53``, while on input 0 the same outputs are the noise itself, with finer bits. A
:class:`BitsScore` maps each output to a *cell* of its representation and scores the cell by
its development log likelihood ratio, like a histogram of output values; the event it defines
is still a fixed set of outputs, so a certificate built on it is valid like any other.

Features of one coordinate ``y`` (``code`` is a non-negative integer that names the cell):

- ``"grain"``: sign, biased exponent and the number of trailing zero bits of the significand
  (capped at 53): whether ``y`` is odd in units of its last place, and the coarsest power of two
  it is a multiple of (the grid its arithmetic put it on);
- ``"mantissa"``: sign, biased exponent and the lowest :data:`LOW_BITS` bits of the mantissa.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, TypeAlias, final, get_args

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.errors import DataError, RecordError

__all__ = ["LOW_BITS", "BitsFeature", "BitsScore", "bits_cells", "bits_score_from_json"]

BitsFeature: TypeAlias = Literal["grain", "mantissa"]
"""The representation features of :class:`BitsScore`."""

LOW_BITS: Final = 4
"""Mantissa bits of the ``"mantissa"`` feature."""

_FEATURES: Final = get_args(BitsFeature)
_TZ_CAP: Final = 53
_EXP_SHIFT: Final = 6
_SIGN_SHIFT: Final = 17
_MAX_CODE: Final = 1 << 18


def _trailing_zeros(sig: NDArray[np.uint64]) -> NDArray[np.int64]:
    """Trailing zero bits of each significand (53 for 0), exactly.

    ``sig & -sig`` keeps the lowest set bit, a power of two below ``2**53`` that float64 holds
    exactly; its binary exponent is the count.
    """
    lowest = sig & (~sig + np.uint64(1))
    count = np.frexp(lowest.astype(np.float64))[1].astype(np.int64) - 1
    out: NDArray[np.int64] = np.where(sig == 0, _TZ_CAP, np.minimum(count, _TZ_CAP))
    return out


def bits_cells(y: NDArray[np.float64], feature: BitsFeature) -> NDArray[np.int64]:
    """The cell code of each value's representation (``-0.0`` counted as ``0.0``).

    Examples
    --------
    >>> bits_cells(np.array([0.375, 0.25]), "grain").tolist() == [
    ...     (1021 << 6) | 51, (1021 << 6) | 52]
    True
    """
    words = np.ascontiguousarray(y + 0.0, dtype=np.float64).view(np.uint64)
    sign = (words >> np.uint64(63)).astype(np.int64)
    exponent = ((words >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    mantissa = words & np.uint64((1 << 52) - 1)
    if feature == "grain":
        implicit = np.where(exponent > 0, np.uint64(1 << 52), np.uint64(0))
        value = _trailing_zeros(mantissa | implicit)
    else:
        value = (mantissa & np.uint64((1 << LOW_BITS) - 1)).astype(np.int64)
    out: NDArray[np.int64] = (sign << _SIGN_SHIFT) | (exponent << _EXP_SHIFT) | value
    return out


def _codes_tuple(values: Any) -> tuple[int, ...]:
    """Converter: cell codes to a tuple of ints (each checked to be a valid code)."""
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or not 0 <= int(v) < _MAX_CODE:
            raise RecordError(f"a bits score's cells must be integers in [0, {_MAX_CODE}); got {v!r}.")
        out.append(int(v))
    return tuple(out)


def _finite_floats(values: Any) -> tuple[float, ...]:
    """Converter: numbers to a tuple of finite floats."""
    out = tuple(float(x) for x in values)
    if not all(np.isfinite(out)):
        raise RecordError("a stored score model must hold finite numbers only.")
    return out


@final
@attrs.frozen
class BitsScore:
    """A score per representation cell of one output coordinate (a histogram of its bits).

    Attributes
    ----------
    column : int
        The coordinate whose representation is read.
    feature : {"grain", "mantissa"}
        Which cells (see the module docstring).
    cells : tuple of int
        Increasing cell codes seen on development calls.
    scores : tuple of float
        One score per cell (larger means class 1).
    default : float
        Score of any other cell.
    dimension : int
        Number of output coordinates.

    Raises
    ------
    RecordError
        On an unknown feature, cells that are not increasing valid codes, a score count other
        than the cell count, a non-finite number or a column outside ``[0, dimension)``.

    Examples
    --------
    >>> s = BitsScore(0, "grain", bits_cells(np.array([0.375]), "grain"), [2.0], 0.0, 1)
    >>> s.score(np.array([[0.375], [0.25], [0.3125]])).tolist()
    [2.0, 0.0, 0.0]
    """

    column: int
    feature: BitsFeature
    cells: tuple[int, ...] = attrs.field(converter=_codes_tuple)
    scores: tuple[float, ...] = attrs.field(converter=_finite_floats)
    default: float = attrs.field(converter=float)
    dimension: int

    def __attrs_post_init__(self) -> None:
        if self.feature not in _FEATURES:
            raise RecordError(f"a bits score's feature must be one of {_FEATURES!r}; got {self.feature!r}.")
        if not self.cells or len(self.cells) != len(self.scores):
            raise RecordError(
                f"a bits score needs one score per cell and at least one cell; got "
                f"{len(self.cells)} cells and {len(self.scores)} scores."
            )
        if any(b <= a for a, b in zip(self.cells, self.cells[1:], strict=False)):
            raise RecordError("the cells of a bits score must increase.")
        if not np.isfinite(self.default):
            raise RecordError(f"a bits score's default must be finite; got {self.default!r}.")
        for name in ("column", "dimension"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise RecordError(f"a bits score's {name} must be an integer; got {value!r}.")
        if not 0 <= self.column < self.dimension:
            raise RecordError(f"column must be in [0, {self.dimension}); got {self.column!r}.")

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        if X.ndim != 2 or X.shape[1] != self.dimension:
            raise DataError(
                f"rows must have dimension {self.dimension} to be scored by this test; got shape "
                f"{X.shape}."
            )
        codes = bits_cells(X[:, self.column], self.feature)
        cells = np.asarray(self.cells, dtype=np.int64)
        at = np.minimum(np.searchsorted(cells, codes), cells.size - 1)
        out = np.full(codes.shape, self.default, dtype=np.float64)
        hit = cells[at] == codes
        out[hit] = np.asarray(self.scores, dtype=np.float64)[at[hit]]
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {
            "kind": "bits",
            "column": self.column,
            "feature": self.feature,
            "cells": list(self.cells),
            "scores": list(self.scores),
            "default": self.default,
            "dimension": self.dimension,
        }


def bits_score_from_json(m: Mapping[str, Any]) -> BitsScore:
    """Rebuild a :class:`BitsScore` from its record entry (plain numbers; no code runs).

    Raises
    ------
    RecordError
        On a missing or malformed field.
    """
    try:
        cells, scores = m["cells"], m["scores"]
        if not isinstance(cells, list) or not isinstance(scores, list):
            raise RecordError("a bits score's cells and scores must be lists.")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in scores):
            raise RecordError("a bits score's scores must be numbers.")
        default = m["default"]
        if isinstance(default, bool) or not isinstance(default, int | float):
            raise RecordError(f"a bits score's default must be a number; got {default!r}.")
        return BitsScore(m["column"], m["feature"], cells, scores, default, m["dimension"])
    except KeyError as exc:
        raise RecordError(f"a bits score in the record lacks the field {exc.args[0]!r}.") from exc
