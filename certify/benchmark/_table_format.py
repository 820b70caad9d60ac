"""Shared parts of the benchmark's tables: status labels, row selection, number and table formatting."""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from certify.errors import DataError

__all__ = ["CERT", "CERT_ROUTES", "DIAG", "FAILURE_UPPER", "POP", "REF", "markdown_table"]

DIAG: Final = "[Diagnostic]"
POP: Final = "[PopulationEstimate]"
CERT: Final = "[Certificate]"
REF: Final = "[known reference]"
FAILURE_UPPER: Final = "95% upper bound on failure rate (Clopper-Pearson; a rate, not an epsilon)"
"""The validity table's bound on how often certificates exceed the truth: no epsilon, no status."""
CERT_ROUTES: Final = {"certificate_learned": "learned", "certificate_oracle": "oracle",
                      "certificate_default": "certify default", "certificate_mmd": "certified MMD"}
_SETTING: Final = ["experiment", "prototypes", "mechanism", "noise_family", "epsilon_g", "n_samples",
                   "repetition", "dimension"]


# -- helpers -----------------------------------------------------------------------------------


def _check(df: pd.DataFrame) -> pd.DataFrame:
    """Check the argument looks like a results table."""
    if not isinstance(df, pd.DataFrame):
        raise DataError(
            f"results must be a pandas DataFrame; got {type(df).__name__}. Use read_results(path)."
        )
    missing = [c for c in ("experiment", "route", "status", "value", "exact_epsilon") if c not in df.columns]
    if missing:
        raise DataError(f"results must have the columns {missing!r}; read it with read_results(path).")
    return df


def _rows(df: pd.DataFrame, experiment: str, route: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Rows of one experiment (and route or routes)."""
    out = df[df["experiment"] == experiment]
    if route is not None:
        routes = [route] if isinstance(route, str) else list(route)
        out = out[out["route"].isin(routes)]
    return out


def _per_setting(rows: pd.DataFrame, name: str, fn: Callable[[pd.DataFrame], float],
                 keys: Sequence[str] = tuple(_SETTING)) -> pd.DataFrame:
    """Apply ``fn`` to the rows of each setting; one row per setting."""
    if rows.empty:
        return pd.DataFrame(columns=[*keys, name])
    out = [dict(zip(keys, k, strict=True), **{name: fn(g)})
           for k, g in rows.groupby(list(keys), sort=True, dropna=False)]
    return pd.DataFrame(out)


def _median(g: pd.DataFrame, col: str = "value") -> float:
    """Median of a column (inf kept)."""
    return float(np.median(g[col].to_numpy(dtype=np.float64)))


def _frac_positive(g: pd.DataFrame) -> float:
    """Fraction of rows with a value above zero."""
    return float((g["value"].to_numpy(dtype=np.float64) > 0).mean())


def _fmt(x: object) -> str:
    """A cell for Markdown: infinities spelled out, about three significant digits."""
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    if isinstance(x, float | np.floating):
        v = float(x)
        if math.isnan(v):
            return "n/a"
        if math.isinf(v):
            return "+inf" if v > 0 else "-inf"
        if v == 0:
            return "0"
        if v.is_integer() and abs(v) < 1e6:
            return f"{v:.0f}" if abs(v) >= 100 else f"{v:g}"
        if abs(v) >= 1000:
            return f"{v:.0f}"
        if abs(v) >= 10:
            return f"{v:.2f}"
        if abs(v) >= 0.01:
            return f"{v:.3f}"
        return f"{v:.2e}"
    if x is None or x is pd.NA:
        return "n/a"
    return str(x)


def markdown_table(frame: pd.DataFrame) -> str:
    """A DataFrame as a Markdown table (pipes escaped, numbers formatted by :func:`_fmt`)."""
    cols = [str(c).replace("|", "/") for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v).replace("|", "/") for v in row) + " |")
    return "\n".join(lines)


def _figure_png(fig: Any) -> bytes:
    """PNG bytes of a matplotlib Figure (no pyplot state)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


_MEAN: Final = "mean of medians (status in label)"
_COLORS: Final = {"laplace": "#c0392b", "gaussian": "#2e6da4", 30: "#1b9e77", 100: "#d95f02", 300: "#7570b3"}
