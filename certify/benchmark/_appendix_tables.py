"""The appendix experiments (randomized response, anisotropic Gaussian) and the power experiment."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from certify.benchmark._table_format import (
    CERT,
    CERT_ROUTES,
    POP,
    REF,
    _check,
    _frac_positive,
    _median,
    _rows,
)

__all__ = ["anisotropic_table", "power_table", "randomized_response_table"]


def _fraction_grid(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """Fraction of positive bounds, rows test x n, columns epsilon_g (mean over sets and reps)."""
    rows = _rows(_check(df), experiment, list(CERT_ROUTES))
    if rows.empty:
        return pd.DataFrame()
    per = rows.groupby(["route", "n_samples", "epsilon_g", "prototypes", "repetition"]).apply(
        _frac_positive, include_groups=False)
    grid = per.groupby(["route", "n_samples", "epsilon_g"]).mean().unstack("epsilon_g")
    grid.columns = [f"eps={c:g} {CERT}" for c in grid.columns]
    grid = grid.reset_index()
    names = {"certificate_oracle": "exact", "certificate_learned": "learned",
             "certificate_default": "certify default", "certificate_mmd": "certified MMD"}
    grid.insert(0, "test", grid.pop("route").map(names))
    grid = grid.rename(columns={"n_samples": "n"})
    return grid.sort_values(["test", "n"]).reset_index(drop=True)


def anisotropic_table(df: pd.DataFrame) -> pd.DataFrame:
    """Table 6: fraction of anisotropic-Gaussian pairs with a positive bound (App. C).

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.

    Returns
    -------
    pandas.DataFrame
        Rows (test, n), columns requested epsilon; means over prototype sets and repetitions.
    """
    return _fraction_grid(df, "anisotropic")


def _null_descriptive(df: pd.DataFrame, experiment: str) -> pd.DataFrame:
    """At the exact null of an appendix experiment: positive MMD-TV values, infinite ROC values."""
    rows = _rows(_check(df), experiment)
    null = rows[rows["exact_epsilon"] <= 1e-12]
    out = []
    mmd = null[null["route"] == "mmd_tv"]["value"].to_numpy(dtype=np.float64)
    roc = null[null["route"] == "roc_oof"]["value"].to_numpy(dtype=np.float64)
    cert = null[null["route"].isin(list(CERT_ROUTES))]["value"].to_numpy(dtype=np.float64)
    if mmd.size:
        out.append({"quantity": f"MMD-TV sample values above 0 {POP}", "count": int((mmd > 0).sum()),
                    "of": int(mmd.size)})
    if roc.size:
        out.append({"quantity": f"ROC-HT OOF conversions equal to +inf {POP}",
                    "count": int(np.isinf(roc).sum()), "of": int(roc.size)})
    if cert.size:
        out.append({"quantity": f"positive lower bounds {CERT}", "count": int((cert > 0).sum()),
                    "of": int(cert.size)})
    return pd.DataFrame(out)


def randomized_response_table(df: pd.DataFrame) -> pd.DataFrame:
    """App. B randomized response: fraction positive per test, n and epsilon, plus MMD-TV medians.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.

    Returns
    -------
    pandas.DataFrame
        The fraction grid (rows test x n, columns requested epsilon), followed by a row of the
        realized epsilon (the exact reference of the integer threshold) and a row of median
        MMD-TV sample values.
    """
    grid = _fraction_grid(df, "randomized_response")
    if grid.empty:
        return grid
    rows = _rows(df, "randomized_response")
    extra = []
    for label, route, col in ((f"realized epsilon {REF}", None, "exact_epsilon"),
                              (f"MMD-TV median {POP}", "mmd_tv", "value")):
        rec: dict[str, Any] = {"test": label, "n": math.nan}
        for eps, g in rows.groupby("epsilon_g"):
            h = g if route is None else g[g["route"] == route]
            rec[f"eps={float(eps):g} {CERT}"] = _median(h, col) if len(h) else math.nan
        extra.append(rec)
    return pd.concat([grid, pd.DataFrame(extra)], ignore_index=True)


def power_table(df: pd.DataFrame) -> pd.DataFrame:
    """The Sec. 6.5 power experiment: probability of a positive bound with exact 95% intervals.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.

    Returns
    -------
    pandas.DataFrame
        Per family, epsilon_g, n and test: positives among all pair replications, the
        proportion, its two-sided 95% Clopper-Pearson interval and the validity counts.
    """
    from certify.stats.binomial import clopper_pearson_lower, clopper_pearson_upper

    rows = _rows(_check(df), "power", list(CERT_ROUTES))
    out = []
    keys = ["noise_family", "epsilon_g", "n_samples", "route"]
    for (fam, eps, n, route), g in rows.groupby(keys, sort=True):
        v = g["value"].to_numpy(dtype=np.float64)
        k, total = int((v > 0).sum()), int(v.size)
        out.append({
            "family": fam, "epsilon_g": float(eps), "n": int(n), "test": CERT_ROUTES[str(route)],
            "replications": total, "repetitions": int(g["repetition"].nunique()),
            f"positive {CERT}": k, f"P(positive) {CERT}": k / total,
            "95% CI of P, low": clopper_pearson_lower(k, total, 0.025) if k > 0 else 0.0,
            "95% CI of P, high": clopper_pearson_upper(k, total, 0.025),
            "exceeding exact": int((v > g["exact_epsilon"].to_numpy(dtype=np.float64)).sum()),
            "failure possible": int((g["zero_error_ceiling"] > g["exact_epsilon"]).sum()),
        })
    return pd.DataFrame(out)
