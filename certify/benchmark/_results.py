"""The benchmark's tidy results table: its schema, building it from rows, reading and writing it."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from certify.errors import DataError

__all__ = ["COLUMNS", "read_results"]

COLUMNS: Final[dict[str, str]] = {
    "experiment": "str",
    "prototypes": "str",
    "mechanism": "str",
    "noise_family": "str",
    "epsilon_g": "float64",
    "n_samples": "int64",
    "repetition": "int64",
    "dimension": "int64",
    "pair_index": "int64",
    "pair_a": "int64",
    "pair_b": "int64",
    "within_cluster": "boolean",
    "exact_epsilon": "float64",
    "exact_delta": "float64",
    "reference_auc": "float64",
    "route": "str",
    "status": "str",
    "value_name": "str",
    "value": "float64",
    "auc": "float64",
    "exact_corner": "boolean",
    "infinite_by_endpoint": "boolean",
    "mmd": "float64",
    "mmd_lower": "float64",
    "development_auc": "float64",
    "false_positives": "Int64",
    "n_class0": "Int64",
    "false_negatives": "Int64",
    "n_class1": "Int64",
    "alpha_per_rate": "float64",
    "certificate_delta": "float64",
    "u_fpr": "float64",
    "u_fnr": "float64",
    "zero_error_ceiling": "float64",
    "failure_possible": "boolean",
    "exceeds_exact": "boolean",
}
"""Columns of the results table and their pandas dtypes (``value`` keeps infinities)."""


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows to a DataFrame with exactly the :data:`COLUMNS` schema (as :func:`_coerce` gives).

    Built column by column from the row dicts, which costs a fraction of coercing a generic
    frame (a setting's rows are written once per setting, thousands of times per preset).
    """
    data: dict[str, Any] = {}
    for col, dtype in COLUMNS.items():
        values: list[Any] = [r.get(col) for r in rows]
        if dtype == "float64":
            data[col] = np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
        elif dtype == "int64":
            data[col] = np.array([int(v) for v in values], dtype=np.int64)
        elif dtype == "Int64":
            data[col] = pd.array([None if v is None else int(v) for v in values], dtype="Int64")
        elif dtype == "boolean":
            data[col] = pd.array([_to_bool(v) for v in values], dtype="boolean")
        else:
            data[col] = pd.Series(values, dtype=object).astype("str")
    return pd.DataFrame(data, index=pd.RangeIndex(len(rows)))


def _coerce(frame: pd.DataFrame) -> pd.DataFrame:
    """Apply the column dtypes of :data:`COLUMNS` (missing columns are added empty)."""
    out = frame.copy()
    for col, dtype in COLUMNS.items():
        if col not in out.columns:
            out[col] = pd.NA if dtype in ("boolean", "Int64", "str") else math.nan
        if dtype == "boolean":
            out[col] = out[col].map(_to_bool).astype("boolean")
        elif dtype == "Int64":
            out[col] = pd.to_numeric(out[col]).astype("Int64")
        elif dtype == "float64":
            out[col] = pd.to_numeric(out[col]).astype("float64")
        elif dtype == "int64":
            out[col] = pd.to_numeric(out[col]).astype("int64")
        else:
            out[col] = out[col].astype("str")
    return out[list(COLUMNS)].reset_index(drop=True)


def _to_bool(value: object) -> object:
    """Parse booleans written by CSV ("True"/"False") and keep missing values missing."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return pd.NA
    if isinstance(value, str):
        if value.strip().lower() in ("true", "1"):
            return True
        if value.strip().lower() in ("false", "0"):
            return False
        return pd.NA
    return bool(value)


def _write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Write through a temporary file in the same folder, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_arrow(table: Any, path: Path) -> None:
    """Atomic Parquet write of a pyarrow table."""
    import pyarrow.parquet as pq

    _write_atomic(path, lambda p: pq.write_table(table, p))


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Atomic Parquet write."""
    _write_atomic(path, lambda p: frame.to_parquet(p, index=False, engine="pyarrow"))


def _write_text(text: str, path: Path) -> None:
    """Atomic text write."""
    def write(p: Path) -> None:
        p.write_text(text, encoding="utf-8")

    _write_atomic(path, write)


def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a results table written by :func:`run_grid` (Parquet or CSV) with its dtypes.

    Parameters
    ----------
    path : str or path-like
        ``results.parquet`` or ``results.csv`` (or a folder holding them).

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`COLUMNS`; ``inf`` values are kept as ``inf``.

    Raises
    ------
    DataError
        If the file does not exist or lacks a column.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "results.parquet" if (p / "results.parquet").exists() else p / "results.csv"
    if not p.exists():
        raise DataError(f"results must be an existing results.parquet or results.csv; got {str(p)!r}.")
    try:
        if p.suffix == ".csv":
            # Only empty cells are missing: "null" is a mechanism name, not a missing value.
            frame = pd.read_csv(p, keep_default_na=False, na_values=[""])
        else:
            frame = pd.read_parquet(p, engine="pyarrow")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"results {str(p)!r} is not UTF-8 text ({exc.reason}); give the results.csv or "
            "results.parquet that certify benchmark wrote."
        ) from exc
    except (ValueError, OSError) as exc:  # pandas' parser errors and pyarrow's are ValueErrors
        raise DataError(
            f"results {str(p)!r} cannot be read as a benchmark table ({type(exc).__name__}: "
            f"{str(exc)[:120]}); give the results.csv or results.parquet that certify benchmark wrote."
        ) from exc
    missing = [c for c in ("experiment", "route", "status", "value") if c not in frame.columns]
    if missing:
        raise DataError(f"results must have the columns {missing!r}; is {str(p)!r} a benchmark table?")
    return _coerce(frame)
