"""Validation of sample matrices shared by the numerics (one message per problem, one place)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify.errors import DataError

__all__ = ["as_pair", "as_rows"]


def as_rows(x: ArrayLike, name: str, min_rows: int = 2) -> NDArray[np.float64]:
    """Validate a finite, real, 2-D sample matrix with at least ``min_rows`` rows; return float64."""
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} must be a 2-D array of real numbers ({exc}).") from exc
    if arr.dtype.kind not in "fiu":
        raise DataError(
            f"{name} must be a real numeric array; got dtype {arr.dtype.name!r}. "
            "Convert it with np.asarray(x, dtype=float)."
        )
    if arr.ndim != 2:
        raise DataError(
            f"{name} must be a 2-D array (one row per sample); got shape {arr.shape!r}. "
            "Reshape your data with x.reshape(-1, 1) for one coordinate or x.reshape(1, -1) "
            "for one sample."
        )
    if arr.shape[0] < min_rows:
        raise DataError(
            f"{name} must have at least {min_rows} rows; got shape {arr.shape!r}. "
            "Collect more samples for this identity."
        )
    if arr.shape[1] < 1:
        raise DataError(f"{name} must have at least 1 column; got shape {arr.shape!r}.")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(out)
    if not finite.all():
        bad = int(np.flatnonzero(~finite.all(axis=1))[0])
        raise DataError(
            f"{name} must contain only finite values; got a NaN or infinity in row {bad!r}. "
            "Drop or impute rows with missing values first (EmbeddingTable does this when loading)."
        )
    return out


def as_pair(
    x_a: ArrayLike, x_b: ArrayLike, min_rows: int = 2
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Validate two samples with the same number of columns."""
    a = as_rows(x_a, "x_a", min_rows)
    b = as_rows(x_b, "x_b", min_rows)
    if a.shape[1] != b.shape[1]:
        raise DataError(
            f"x_b must have the same number of columns as x_a ({a.shape[1]}); got {b.shape[1]}. "
            "Both samples must be embeddings from the same encoder."
        )
    return a, b
