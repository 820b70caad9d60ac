"""The exact null (paper Sec. 6.3, Table 4) and the GaussMech null floor against Eq. 22."""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import pandas as pd

from certify.benchmark._table_format import (
    _SETTING,
    DIAG,
    POP,
    _check,
    _median,
    _per_setting,
    _rows,
)

__all__ = ["PAPER_TABLE4", "eq22_floor", "null_floor_table", "table4_null", "table4_null_counts"]

PAPER_TABLE4: Final = pd.DataFrame({
    "n": [30, 100, 300],
    "AUC": [0.490, 0.499, 0.502],
    "Div.": [29.3, 24.7, 20.8],
    "MMD-TV": [0.003, 0.003, 0.001],
    "GaussMech": [28.60, 15.51, 8.96],
    "KDE-LR": [1526.0, 1210.0, 962.0],
})
"""The paper's Table 4, for side-by-side comparison."""


def eq22_floor(dimension: int, n_samples: int, delta: float = 1e-5) -> float:
    """The GaussMech null floor of paper Eq. 22: ``sqrt(2 ln(1.25/delta)) sqrt(2 d / n)``.

    Parameters
    ----------
    dimension : int
        Dimension ``d``.
    n_samples : int
        Samples per identity ``n``.
    delta : float, default 1e-5
        The delta inside GaussMech.

    Returns
    -------
    float
        The predicted null value of the GaussMech Diagnostic.

    Examples
    --------
    >>> round(eq22_floor(512, 30), 2)
    28.31
    """
    return math.sqrt(2.0 * math.log(1.25 / delta)) * math.sqrt(2.0 * dimension / n_samples)


def table4_null(df: pd.DataFrame) -> pd.DataFrame:
    """Table 4: the descriptive routes when every pairwise epsilon is exactly zero.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.

    Returns
    -------
    pandas.DataFrame
        One row per ``n``: per setting the median over pairs (or the count of infinite ROC
        conversions), then the mean over prototype sets, null families and repetitions. MMD-TV
        uses the Laplace (pure-DP) null only.
    """
    main = _rows(_check(df), "main")
    null = main[main["mechanism"] == "null"]
    if null.empty:
        return pd.DataFrame()
    roc = null[null["route"] == "roc_oof"]
    parts = [
        _per_setting(roc, "auc", lambda g: _median(g, "auc")),
        _per_setting(roc, "div", lambda g: float(np.isinf(g["value"].to_numpy(dtype=np.float64)).sum())),
        _per_setting(null[(null["route"] == "mmd_tv") & (null["noise_family"] == "laplace")], "mmd", _median),
        _per_setting(null[null["route"] == "gauss_mech"], "gm", _median),
        _per_setting(null[null["route"] == "kde_lr"], "kde", _median),
    ]
    pairs = int(null.groupby(_SETTING)["pair_index"].nunique().max())
    out = []
    for n in sorted(null["n_samples"].unique()):
        vals = [p.loc[p["n_samples"] == n, p.columns[-1]].mean() if not p.empty else math.nan for p in parts]
        out.append({
            "n": int(n),
            f"ROC-HT OOF AUC, median {POP}": vals[0],
            f"ROC-HT OOF +inf count of {pairs} pairs (Div.) {POP}": vals[1],
            f"MMD-TV median, Laplace null {POP}": vals[2],
            f"GaussMech median {DIAG}": vals[3],
            f"KDE-LR alpha=0.01 median {DIAG}": vals[4],
        })
    return pd.DataFrame(out)


def table4_null_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Counts behind Sec. 6.3: infinite ROC conversions, exact corners and positive MMD-TV values.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.

    Returns
    -------
    pandas.DataFrame
        One row per quantity with its count, total, percentage and (for MMD-TV) maximum.
    """
    main = _rows(_check(df), "main")
    null = main[main["mechanism"] == "null"]
    roc = null[null["route"] == "roc_oof"]
    mmd = null[(null["route"] == "mmd_tv") & (null["noise_family"] == "laplace")]
    rows = []
    if not roc.empty:
        inf = int(np.isinf(roc["value"].to_numpy(dtype=np.float64)).sum())
        corner = int(roc["exact_corner"].fillna(False).astype(bool).sum())
        rows.append({"quantity": f"ROC-HT OOF conversions equal to +inf {POP}", "count": inf,
                     "of": len(roc), "percent": 100.0 * inf / len(roc), "max": math.inf if inf else math.nan})
        rows.append({"quantity": f"ROC curves containing the exact (0, 1) corner {POP}", "count": corner,
                     "of": len(roc), "percent": 100.0 * corner / len(roc), "max": math.nan})
    if not mmd.empty:
        v = mmd["value"].to_numpy(dtype=np.float64)
        pos = int((v > 0).sum())
        rows.append({"quantity": f"MMD-TV sample values above 0, Laplace null {POP}", "count": pos,
                     "of": len(mmd), "percent": 100.0 * pos / len(mmd), "max": float(v.max())})
    return pd.DataFrame(rows)


def null_floor_table(df: pd.DataFrame, delta: float = 1e-5) -> pd.DataFrame:
    """The Eq. 22 comparison: GaussMech at the exact null against its predicted floor.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.
    delta : float, default 1e-5
        The delta inside GaussMech.

    Returns
    -------
    pandas.DataFrame
        Per (d, n): the mean over settings of the median GaussMech score, the Eq. 22 value, and
        the mean and largest absolute relative error over every setting (prototype set, null
        family, repetition).
    """
    rows = _rows(_check(df), "null_floor", "gauss_mech")
    if rows.empty:
        return pd.DataFrame()
    per = _per_setting(rows, "median", _median)
    out = []
    for (d, n), g in per.groupby(["dimension", "n_samples"], sort=True):
        pred = eq22_floor(int(d), int(n), delta)
        rel = (g["median"].to_numpy(dtype=np.float64) - pred) / pred
        out.append({"d": int(d), "n": int(n), "settings": len(g),
                    f"GaussMech median, mean {DIAG}": float(g["median"].mean()),
                    f"Eq. 22 predicted floor {DIAG}": pred, "mean relative error": float(rel.mean()),
                    "max abs relative error": float(np.abs(rel).max())})
    return pd.DataFrame(out)
