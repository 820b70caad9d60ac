"""Tracking the known epsilon (paper Sec. 6.4): Figure 2 and MMD-TV against the exact epsilon."""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import pandas as pd

from certify.benchmark._table_format import (
    _COLORS,
    _MEAN,
    DIAG,
    POP,
    REF,
    _check,
    _figure_png,
    _rows,
)

__all__ = ["figure2", "figure2_data", "tracking_summary"]

_FIG2_ROUTES: Final = (
    ("gauss_mech", f"GaussMech {DIAG}"),
    ("kde_lr", f"KDE-LR alpha=0.01 {DIAG}"),
    ("mmd_tv", f"MMD-TV sample value {POP}"),
    ("roc_oof", f"ROC-HT OOF AUC {POP}"),
)


def figure2_data(df: pd.DataFrame, n_samples: int = 100) -> pd.DataFrame:
    """The data of Figure 2: route outputs against the exact median pairwise epsilon.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.
    n_samples : int, default 100
        The sample size shown.

    Returns
    -------
    pandas.DataFrame
        Per family, epsilon_g and route: the exact median pairwise epsilon (mean over prototype
        sets), the mean of per-setting medians and its min/max over prototype sets and
        repetitions (the band); for ``roc_oof`` the value is the AUC and ``reference`` the
        median population-optimal AUC.
    """
    main = _rows(_check(df), "main")
    main = main[main["n_samples"] == n_samples]
    out = []
    for (fam, eps), g in main.groupby(["noise_family", "epsilon_g"], sort=True):
        exact = g.groupby(["prototypes"])["exact_epsilon"].median().mean()
        for route, label in (*_FIG2_ROUTES, ("mmd_tv_hockey_stick", f"MMD hockey-stick {POP}")):
            r = g[g["route"] == route]
            if r.empty:
                continue
            col = "auc" if route == "roc_oof" else "value"
            med = r.groupby(["prototypes", "repetition"])[col].median()
            ref = math.nan
            if route == "roc_oof":
                ref = r.groupby(["prototypes"])["reference_auc"].median().mean()
            out.append({"family": fam, "epsilon_g": float(eps), "route": route, "label": label,
                        f"exact median pairwise epsilon {REF}": float(exact),
                        _MEAN: float(med.mean()), "band low": float(med.min()),
                        "band high": float(med.max()), f"reference AUC {REF}": float(ref)})
    return pd.DataFrame(out)


def figure2(df: pd.DataFrame, n_samples: int = 100) -> bytes | None:
    """Figure 2 as PNG bytes: four panels of route outputs versus exact median epsilon.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.
    n_samples : int, default 100
        The sample size shown.

    Returns
    -------
    bytes or None
        PNG bytes, or None if the table has no main-grid rows at that ``n``.
    """
    from matplotlib.figure import Figure

    data = figure2_data(df, n_samples)
    if data.empty:
        return None
    fig = Figure(figsize=(11, 8), layout="constrained")
    axes = fig.subplots(2, 2)
    xcol = f"exact median pairwise epsilon {REF}"
    for ax, (route, label) in zip(axes.ravel(), _FIG2_ROUTES, strict=True):
        for fam in ("gaussian", "laplace"):
            if route == "mmd_tv" and fam != "laplace":
                continue
            d = data[(data["route"] == route) & (data["family"] == fam)].sort_values(xcol)
            if d.empty:
                continue
            x = d[xcol].to_numpy(dtype=np.float64)
            ax.plot(x, d[_MEAN], "o-", color=_COLORS[fam], label=fam, markersize=3)
            ax.fill_between(x, d["band low"], d["band high"], color=_COLORS[fam], alpha=0.2)
            if route == "roc_oof":
                ax.plot(x, d[f"reference AUC {REF}"], "--", color=_COLORS[fam], label=f"{fam} optimal AUC")
            if route == "mmd_tv":
                hs = data[(data["route"] == "mmd_tv_hockey_stick") & (data["family"] == fam)]
                hs = hs.sort_values(xcol)
                ax.plot(hs[xcol], hs[_MEAN], ":", color="#555", label="hockey-stick formula")
        ax.set_xscale("symlog", linthresh=0.1)
        if route == "kde_lr":
            ax.set_yscale("log")
        elif route == "mmd_tv":
            ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_xlabel(f"exact median pairwise epsilon {REF}")
        ax.set_ylabel(label)
        ax.set_title(label, fontsize=10)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(f"Route outputs versus known epsilon at n = {n_samples} (lines: means; bands: min-max)")
    return _figure_png(fig)


def tracking_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Sec. 6.4 numbers: how far MMD-TV sample values sit from the exact epsilon (Laplace).

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.

    Returns
    -------
    pandas.DataFrame
        Median ratio of MMD-TV (and of the hockey-stick formula) to the exact pairwise epsilon
        over nonzero Laplace rows; among rows with exact epsilon <= 1, how often the sample value
        exceeds the exact value and by how much at most.
    """
    main = _rows(_check(df), "main")
    lap = main[(main["mechanism"] == "laplace") & (main["exact_epsilon"] > 0)]
    out = []
    for route, name in (("mmd_tv", "MMD-TV"), ("mmd_tv_hockey_stick", "MMD hockey-stick")):
        r = lap[lap["route"] == route]
        if r.empty:
            continue
        ratio = r["value"].to_numpy(dtype=np.float64) / r["exact_epsilon"].to_numpy(dtype=np.float64)
        small = r[r["exact_epsilon"] <= 1.0]
        sr = small["value"].to_numpy(dtype=np.float64) / small["exact_epsilon"].to_numpy(dtype=np.float64)
        out.append({
            "route": f"{name} {POP}",
            "nonzero Laplace rows": len(r),
            "median value / exact epsilon": float(np.median(ratio)),
            "rows with exact epsilon <= 1": len(small),
            "of which value > exact": int((sr > 1).sum()),
            "max value / exact there": float(sr.max()) if sr.size else math.nan,
        })
    return pd.DataFrame(out)
