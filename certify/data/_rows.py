"""Row-level helpers of embedding tables: fingerprints, norms and repeated-vector detection."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Final

import numpy as np
from numpy.typing import NDArray

NORM_FLOOR: Final = 1e-6
"""Rows with Euclidean norm at or below this are dropped (paper Sec. 5.1)."""


def _fingerprint(parts: Iterable[tuple[str, NDArray[np.float64]]], domain: str) -> str:
    """SHA-256 over labels, shapes and little-endian float64 bytes, in the given order."""
    h = hashlib.sha256(domain.encode())
    for label, rows in parts:
        encoded = label.encode("utf-8")
        h.update(len(encoded).to_bytes(8, "little"))
        h.update(encoded)
        h.update(np.int64(rows.shape[0]).tobytes() + np.int64(rows.shape[1]).tobytes())
        # hashed from the array's buffer: the same bytes as ``tobytes()``, without the copy
        h.update(np.ascontiguousarray(rows, dtype="<f8").data)
    return h.hexdigest()


def normalize_rows(
    stack: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """L2-normalized rows and the two factors divided by: ``(rows, max |x|, norm of x / max |x|)``.

    Row by row, so the bits match normalizing the rows in any order; scaling by the largest
    coordinate first keeps norms near ``1e308`` from overflowing. All-zero rows (never in a
    cleaned table) give zeros and factors 0.
    """
    peak = np.max(np.abs(stack), axis=1) if stack.shape[1] else np.zeros(stack.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        scaled = stack / peak[:, None]
        norm = np.hypot.reduce(scaled, axis=1)
        out = np.ascontiguousarray(scaled / norm[:, None])
    zero = peak == 0.0
    if zero.any():
        out[zero] = 0.0
        norm = np.where(zero, 0.0, norm)
    return out, np.asarray(peak, dtype=np.float64), np.asarray(norm, dtype=np.float64)


def _readonly(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """A read-only C-contiguous float64 copy."""
    out = np.array(a, dtype=np.float64, order="C", copy=True)
    out.setflags(write=False)
    return out


def _squared_norms(array: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per row, the sum of squares in one pass; NaN exactly for rows holding a NaN.

    Squares are non-negative, so a row's sum is NaN if and only if one of its coordinates is
    NaN (``inf + inf`` is ``inf``, never ``inf - inf``). The sum may overflow to ``inf`` or
    lose underflowing squares; :func:`_at_or_below_floor` explains why that is harmless.
    """
    return np.asarray(np.einsum("ij,ij->i", array, array), dtype=np.float64)


def _at_or_below_floor(array: NDArray[np.float64], squares: NDArray[np.float64]) -> NDArray[np.bool_]:
    """``hypot.reduce(row) <= NORM_FLOOR`` for every row without a NaN, decided from ``squares``.

    The Euclidean norm decides only whether a row is dropped, so it need not be computed in
    full: ``squares`` (from :func:`_squared_norms`) settles every row but those within a narrow
    band around the floor, whose norms are recomputed with the chained ``np.hypot.reduce``
    that defines the decision, so every decision is the one ``hypot.reduce`` gives.

    Why the band is wide enough, with unit roundoff ``u = 2**-53`` and ``d`` columns: the
    computed sum of squares is within a relative ``(d + 1) u`` (to first order) of the exact
    sum ``S`` (rounded products, then a sum of non-negative terms in any order); squares that
    underflow add an absolute error below ``d * 2**-1074``, negligible next to ``NORM_FLOOR**2
    = 1e-12``. The chained hypot is within a relative ``2 d u`` of ``sqrt(S)`` (each step is
    within one ulp and propagates earlier errors with a factor at most 1). The band
    ``NORM_FLOOR**2 * (1 -+ 16 (d + 2) u)`` exceeds the sum of both errors several times over,
    so outside it both computations fall on the same side of the floor. Far from the band:
    a sum that overflows to ``inf`` means a norm above ``1e154`` (kept, as ``hypot`` gives a
    finite huge norm or ``inf``, both above the floor); a sum of ``0`` (all-zero rows, or
    coordinates so small that every square underflows, e.g. ``1e-300``) means a norm far below
    the floor (dropped). Rows holding a NaN (sum NaN) give ``False``; they are dropped as
    missing before this matters.
    """
    d = array.shape[1]
    delta = 16.0 * (d + 2) * 2.0**-53
    floor2 = NORM_FLOOR * NORM_FLOOR
    low, high = floor2 * (1.0 - delta), floor2 * (1.0 + delta)
    out = np.asarray(squares < low, dtype=bool)
    band = np.flatnonzero((squares >= low) & (squares <= high))
    if band.size:
        out[band] = np.hypot.reduce(array[band], axis=1) <= NORM_FLOOR
    return out


def _multipliers(d: int) -> NDArray[np.uint64]:
    """Fixed odd 64-bit multipliers for :func:`_row_hash` (same values in every process)."""
    draws = np.random.default_rng(0x5EED_CE27).integers(0, 2**63, size=d, dtype=np.uint64)
    return (draws << np.uint64(1)) | np.uint64(1)


def _row_hash(words: NDArray[np.uint64], multipliers: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """A 64-bit hash per row of 64-bit words: equal rows get equal hashes (unequal ones rarely do).

    Folding the high half of each word into the low half first lets words that differ only in
    their high bits (sign, exponent and leading mantissa bits of small integers stored as
    float64) still change many bits of the wrapping product sum.
    """
    folded = words >> np.uint64(32)
    folded ^= words
    return np.asarray(folded @ multipliers, dtype=np.uint64)


def _shared_keys(keys: NDArray[np.uint64]) -> NDArray[np.intp]:
    """Ascending indices of the entries whose key occurs more than once."""
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    same = ordered[1:] == ordered[:-1]
    shared = np.zeros(keys.size, dtype=bool)
    shared[1:] |= same
    shared[:-1] |= same
    return np.sort(order[shared])


def _first_copies(array: NDArray[np.float64]) -> NDArray[np.intp]:
    """Per row, the index of the first row with the same bytes (the row itself when unique).

    Rows are equal when their float64 bytes are equal, as in ``row.tobytes()`` comparisons (so
    ``0.0`` and ``-0.0`` differ). A hash of a few columns rules out most rows at once (all of
    them for continuous data); rows that share it get a hash of the whole row, and every row
    grouped by that hash is checked word for word against its group's first row. Should the
    check ever fail (a hash collision), those rows are grouped by sorting their bytes instead,
    so the result never depends on the hash.
    """
    n = array.shape[0]
    first = np.arange(n, dtype=np.intp)
    if n < 2:
        return first
    words = np.ascontiguousarray(array, dtype=np.float64).reshape(n, -1).view(np.uint64)
    d = words.shape[1]
    multipliers = _multipliers(d)
    columns = np.unique(np.linspace(0, d - 1, num=min(d, 8)).astype(np.intp))
    candidates = _shared_keys(_row_hash(words[:, columns], multipliers[: columns.size]))
    if candidates.size == 0:
        return first
    sub = words if candidates.size == n else words[candidates]
    keys = _row_hash(sub, multipliers)
    order = np.argsort(keys, kind="stable")  # stable: each run starts with its smallest index
    ordered = keys[order]
    starts = np.ones(order.size, dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    # rows in one run of equal hashes are all equal if each equals the row before it
    grouped = sub[order]
    if bool((grouped[1:] == grouped[:-1]).all(axis=1)[~starts[1:]].all()):
        run_first = order[np.flatnonzero(starts)[np.cumsum(starts) - 1]]
        first[candidates[order]] = candidates[run_first]
        return first
    whole = np.ascontiguousarray(sub).view(np.dtype((np.void, 8 * d))).ravel()
    _, index, inverse = np.unique(whole, return_index=True, return_inverse=True)
    first[candidates] = candidates[index[inverse.ravel()]]
    return first


def _repeat_flags(array: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per row, whether its vector occurs more than once among the rows of ``array``."""
    first = _first_copies(array)
    return np.asarray(np.bincount(first, minlength=first.size)[first] > 1, dtype=bool)
