"""Tables and figures of the known-epsilon benchmark from a results table (paper Sec. 6, App. B-C).

Every function takes the tidy table written by :func:`certify.benchmark.grid.run_grid` (read it
with :func:`certify.benchmark.grid.read_results`) and returns a :class:`pandas.DataFrame` whose
column names carry the status of their numbers: ``[Diagnostic]``, ``[PopulationEstimate]``,
``[Certificate]`` or ``[known reference]`` (an exact value of the benchmark mechanism).
:func:`write_tables` writes all of them as CSV and Markdown, the figures as PNG, and one
``report.md`` / ``report.html``. Sections whose experiment is absent from the table are skipped.
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd

from certify.errors import DataError

__all__ = [
    "anisotropic_table",
    "certificate_summary",
    "cluster_table",
    "eq22_floor",
    "figure2",
    "figure2_data",
    "figure3",
    "first_informative",
    "null_floor_table",
    "power_table",
    "randomized_response_table",
    "report_cli",
    "table4_null",
    "table4_null_counts",
    "tracking_summary",
    "validity_table",
    "write_tables",
]

DIAG: Final = "[Diagnostic]"
POP: Final = "[PopulationEstimate]"
CERT: Final = "[Certificate]"
REF: Final = "[known reference]"
CERT_ROUTES: Final = {"certificate_learned": "learned", "certificate_oracle": "oracle",
                      "certificate_default": "certify default", "certificate_mmd": "certified MMD"}
_SETTING: Final = ["experiment", "prototypes", "mechanism", "noise_family", "epsilon_g", "n_samples",
                   "repetition", "dimension"]
PAPER_TABLE4: Final = pd.DataFrame({
    "n": [30, 100, 300],
    "AUC": [0.490, 0.499, 0.502],
    "Div.": [29.3, 24.7, 20.8],
    "MMD-TV": [0.003, 0.003, 0.001],
    "GaussMech": [28.60, 15.51, 8.96],
    "KDE-LR": [1526.0, 1210.0, 962.0],
})
"""The paper's Table 4, for side-by-side comparison."""


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


# -- Sec. 6.3: the exact null ------------------------------------------------------------------


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


# -- Sec. 6.4: tracking known epsilon -----------------------------------------------------------

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


def _figure_png(fig: Any) -> bytes:
    """PNG bytes of a matplotlib Figure (no pyplot state)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


_MEAN: Final = "mean of medians (status in label)"
_COLORS: Final = {"laplace": "#c0392b", "gaussian": "#2e6da4", 30: "#1b9e77", 100: "#d95f02", 300: "#7570b3"}


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


# -- Sec. 6.5: certificates -------------------------------------------------------------------


def certificate_summary(df: pd.DataFrame, experiment: str = "main") -> pd.DataFrame:
    """Per setting cell: fraction of positive certificates and median lower bound, both tests.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.
    experiment : str, default "main"
        Which experiment.

    Returns
    -------
    pandas.DataFrame
        One row per prototype set, family, epsilon_g, n and test; fractions and medians are
        means over repetitions of per-setting values; the exact column is the median pairwise
        epsilon.
    """
    rows = _rows(_check(df), experiment, list(CERT_ROUTES))
    if rows.empty:
        return pd.DataFrame()
    per = rows.groupby(["prototypes", "noise_family", "epsilon_g", "n_samples", "route", "repetition"])
    s = per.apply(lambda g: pd.Series({"frac": _frac_positive(g), "median": _median(g),
                                       "exact": _median(g, "exact_epsilon")}), include_groups=False)
    s = s.reset_index().groupby(["prototypes", "noise_family", "epsilon_g", "n_samples", "route"],
                                sort=True)[["frac", "median", "exact"]].mean().reset_index()
    s["route"] = s["route"].map(CERT_ROUTES)
    return s.rename(columns={
        "noise_family": "family", "n_samples": "n", "route": "test",
        "frac": f"fraction positive {CERT}", "median": f"median epsilon_lower {CERT}",
        "exact": f"median exact epsilon {REF}",
    })


def first_informative(df: pd.DataFrame, experiment: str = "main") -> pd.DataFrame:
    """The first tested epsilon_g at which at least half the pairs get a positive bound.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.
    experiment : str, default "main"
        Which experiment.

    Returns
    -------
    pandas.DataFrame
        Per prototype set, family, test and n: the smallest epsilon_g whose fraction of positive
        certificates (mean over repetitions) is at least 0.5, or NaN if none (Sec. 6.5).
    """
    s = certificate_summary(df, experiment)
    if s.empty:
        return s
    frac = f"fraction positive {CERT}"
    out = []
    for (ps, fam, test, n), g in s.groupby(["prototypes", "family", "test", "n"], sort=True):
        ok = g[g[frac] >= 0.5]["epsilon_g"]
        out.append({"prototypes": ps, "family": fam, "test": test, "n": int(n),
                    f"first epsilon_g with >= half positive {CERT}": float(ok.min()) if len(ok) else math.nan,
                    })
    return pd.DataFrame(out)


def figure3(df: pd.DataFrame, prototypes: str = "dispersed") -> bytes | None:
    """Figure 3 as PNG bytes: fraction of positive bounds and median bound, learned vs oracle.

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.
    prototypes : str, default "dispersed"
        The prototype set shown.

    Returns
    -------
    bytes or None
        PNG bytes, or None without main-grid certificates for that set.
    """
    from matplotlib.figure import Figure

    s = certificate_summary(df, "main")
    if s.empty:
        return None
    s = s[s["prototypes"] == prototypes]
    if s.empty:
        return None
    fig = Figure(figsize=(11, 7.5), layout="constrained")
    axes = fig.subplots(2, 2, squeeze=False)
    xcol = f"median exact epsilon {REF}"
    for col, fam in enumerate(("gaussian", "laplace")):
        for row, ycol in enumerate((f"fraction positive {CERT}", f"median epsilon_lower {CERT}")):
            ax = axes[row][col]
            for n in sorted(s["n"].unique()):
                for test, style in (("learned", "-"), ("oracle", "--")):
                    d = s[(s["family"] == fam) & (s["n"] == n) & (s["test"] == test)].sort_values(xcol)
                    if not d.empty:
                        ax.plot(d[xcol], d[ycol], style, marker="o", markersize=3,
                                color=_COLORS.get(int(n), "#333"), label=f"n={int(n)} {test}")
            ax.set_xscale("symlog", linthresh=0.1)
            ax.set_xlabel(f"exact median pairwise epsilon {REF}")
            ax.set_ylabel(ycol)
            ax.set_title(f"{fam}", fontsize=10)
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    fig.suptitle(
        f"Certificates on reserved data, {prototypes} prototypes (solid: logistic; dashed: exact LR)"
    )
    return _figure_png(fig)


def cluster_table(df: pd.DataFrame, epsilon_g: float = 16.0, n_samples: int = 100) -> pd.DataFrame:
    """App. B, nearby identities: within- vs between-cluster pairs of the clustered set (Gaussian).

    Parameters
    ----------
    df : pandas.DataFrame
        A results table.
    epsilon_g : float, default 16
        Requested global epsilon.
    n_samples : int, default 100
        Sample size.

    Returns
    -------
    pandas.DataFrame
        Per pair group: number of pairs, median exact epsilon, median learned and oracle bounds
        (pooled over repetitions).
    """
    rows = _rows(_check(df), "main", list(CERT_ROUTES))
    rows = rows[(rows["prototypes"] == "clustered") & (rows["mechanism"] == "gaussian")
                & (rows["epsilon_g"] == epsilon_g) & (rows["n_samples"] == n_samples)]
    out = []
    for within, g in rows.groupby(rows["within_cluster"].astype(bool)):
        lrn = g[g["route"] == "certificate_learned"]
        orc = g[g["route"] == "certificate_oracle"]
        out.append({"pairs": "within a cluster" if within else "between clusters",
                    "pairs per setting": int(lrn.groupby("repetition").size().max()),
                    f"median exact epsilon {REF}": _median(lrn, "exact_epsilon"),
                    f"median learned epsilon_lower {CERT}": _median(lrn),
                    f"median oracle epsilon_lower {CERT}": _median(orc)})
    return pd.DataFrame(out)


def validity_table(df: pd.DataFrame) -> pd.DataFrame:
    """The validity check: certificates above their exact pairwise epsilon (must be 0).

    Parameters
    ----------
    df : pandas.DataFrame
        A results table (certificate rows need ``zero_error_ceiling``).

    Returns
    -------
    pandas.DataFrame
        Per experiment, prototype set (and ``all``) and test: number of certificates, how many
        exceed the exact epsilon, in how many a failure was numerically possible (the zero-error
        ceiling of the row exceeds its exact reference), and the one-sided 95% Clopper-Pearson
        upper bound on the failure rate among those.

    Notes
    -----
    This checks the implementation; the statistical guarantee comes from evaluating fixed
    tests on unused data, not from observing zero failures (paper Sec. 6.5).

    Examples
    --------
    >>> rows = pd.DataFrame({"experiment": ["main"] * 3, "prototypes": ["dispersed"] * 3,
    ...     "route": ["certificate_learned"] * 3, "status": ["Certificate"] * 3,
    ...     "value": [0.0, 0.2, 0.0], "exact_epsilon": [0.0, 1.0, 5.0],
    ...     "zero_error_ceiling": [0.45, 0.45, 0.45]})
    >>> row = validity_table(rows).iloc[0]
    >>> [int(row[c]) for c in ("certificates", "exceeding exact", "failure possible")]
    [3, 0, 1]
    """
    from certify.stats.binomial import clopper_pearson_upper

    cert = _check(df)[df["route"].isin(list(CERT_ROUTES))]
    out = []
    for (exp, test), g in cert.groupby(["experiment", "route"], sort=True):
        parts = [("all", g)] + [(str(p), h) for p, h in g.groupby("prototypes", sort=True)]
        if g["prototypes"].nunique() < 2:
            parts = parts[:1]
        for ps, h in parts:
            value = h["value"].to_numpy(dtype=np.float64)
            exact = h["exact_epsilon"].to_numpy(dtype=np.float64)
            ceiling = h["zero_error_ceiling"].to_numpy(dtype=np.float64)
            exceed = int((value > exact).sum())
            possible = int((ceiling > exact).sum())
            upper = clopper_pearson_upper(exceed, possible, 0.05) if possible > 0 else math.nan
            out.append({"experiment": exp, "prototypes": ps, "test": CERT_ROUTES[str(test)],
                        "certificates": len(h), "exceeding exact": exceed, "failure possible": possible,
                        f"95% upper bound on failure rate {CERT}": upper})
    return pd.DataFrame(out)


# -- App. B, App. C and the power experiment ----------------------------------------------------


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


# -- writing -----------------------------------------------------------------------------------


def write_tables(
    results: pd.DataFrame | str | os.PathLike[str], out_dir: str | os.PathLike[str]
) -> list[Path]:
    """Write every table (CSV + Markdown), the figures (PNG) and ``report.md``/``report.html``.

    Parameters
    ----------
    results : pandas.DataFrame or path
        A results table or the path of ``results.parquet`` / ``results.csv``.
    out_dir : str or path-like
        Output folder (created).

    Returns
    -------
    list of pathlib.Path
        The files written.

    Raises
    ------
    DataError
        If the results cannot be read.
    """
    from certify.benchmark.grid import read_results
    from certify.report._render import markdown_to_html, write_atomic

    df = results if isinstance(results, pd.DataFrame) else read_results(results)
    _check(df)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    md: list[str] = [
        "# Known-epsilon benchmark", "",
        "Every column names the status of its numbers. **[Diagnostic]**: a modelling score with no "
        "DP meaning. **[PopulationEstimate]**: a sample value in a population inequality, no "
        "confidence, may exceed the truth. **[Certificate]**: a lower confidence bound from a "
        "fixed test on reserved data. **[known reference]**: the exact value of the benchmark "
        "mechanism.", "",
        f"Rows: {len(df)}; experiments: {', '.join(sorted(df['experiment'].unique()))}.", "",
    ]
    images: dict[str, bytes] = {}

    def table(name: str, title: str, frame: pd.DataFrame, note: str = "") -> None:
        if frame.empty:
            return
        path = out / f"{name}.csv"
        write_atomic(path, frame.to_csv(index=False))
        text = markdown_table(frame)
        write_atomic(out / f"{name}.md", f"## {title}\n\n{text}\n")
        written.extend([path, out / f"{name}.md"])
        md.extend([f"## {title}", "", *([note, ""] if note else []), text, ""])

    def figure(name: str, caption: str, data: bytes | None) -> None:
        if data is None:
            return
        write_atomic(out / name, data)
        images[name] = data
        written.append(out / name)
        md.extend([f"![{caption}]({name})", ""])

    table("table4_null", "Table 4: the exact null (Sec. 6.3)", table4_null(df),
          "Median over pairs per setting (or count of infinite ROC conversions), mean over prototype "
          "sets, null families and repetitions.")
    if not table4_null(df).empty:
        md.extend(["Paper's Table 4 for comparison:", "", markdown_table(PAPER_TABLE4), ""])
    table("table4_null_counts", "Counts at the exact null (Sec. 6.3)", table4_null_counts(df))
    table("figure2_data", "Figure 2 data: outputs versus known epsilon at n = 100 (Sec. 6.4)",
          figure2_data(df))
    figure("figure2.png", "Figure 2: route outputs versus exact median pairwise epsilon, n = 100",
           figure2(df))
    table("tracking_summary", "MMD-TV against the exact epsilon (Sec. 6.4)", tracking_summary(df))
    table("certificates_main", "Certificates, main grid (Sec. 6.5)", certificate_summary(df, "main"))
    table("first_informative", "First epsilon with at least half positive bounds (Sec. 6.5)",
          first_informative(df, "main"))
    figure("figure3.png", "Figure 3: certificates, dispersed prototypes", figure3(df, "dispersed"))
    table("cluster_pairs", "Nearby identities: clustered set, Gaussian, epsilon 16, n = 100 (App. B)",
          cluster_table(df))
    table("validity", "Validity: certificates above their exact epsilon", validity_table(df),
          "Failure possible: the zero-error ceiling of the row exceeds its exact reference. The "
          "upper bound is the one-sided 95% Clopper-Pearson bound on the failure rate among those rows.")
    table("power", "Power experiment (Sec. 6.5)", power_table(df))
    table("randomized_response", "Randomized response (App. B)", randomized_response_table(df))
    table("randomized_response_null", "Randomized response at the null (App. B)",
          _null_descriptive(df, "randomized_response"))
    table("table6_anisotropic", "Table 6: anisotropic Gaussian (App. C)", anisotropic_table(df))
    table("anisotropic_null", "Anisotropic Gaussian at the null (App. C)",
          _null_descriptive(df, "anisotropic"))
    table("null_floor", "GaussMech null floor against Eq. 22", null_floor_table(df))
    text = "\n".join(md)
    write_atomic(out / "report.md", text)
    write_atomic(out / "report.html", markdown_to_html(text, images, "Known-epsilon benchmark"))
    written.extend([out / "report.md", out / "report.html"])
    return written


def report_cli(args: Any, say: Callable[[str], None]) -> int:
    """The ``certify report RESULTS --out DIR`` command.

    Parameters
    ----------
    args : argparse.Namespace
        ``results`` (a results file) and ``out`` (the output folder).
    say : callable
        Prints one line for the user.

    Returns
    -------
    int
        Exit code 0.
    """
    paths = write_tables(args.results, args.out)
    say(f"wrote {len(paths)} files to {args.out}; open {Path(args.out) / 'report.html'}")
    return 0
