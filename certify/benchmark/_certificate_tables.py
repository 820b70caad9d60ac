"""Certificates in the benchmark (paper Sec. 6.5): summaries, Figure 3, nearby pairs, validity."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from certify.benchmark._table_format import (
    _COLORS,
    CERT,
    CERT_ROUTES,
    FAILURE_UPPER,
    REF,
    _check,
    _figure_png,
    _frac_positive,
    _median,
    _rows,
)

__all__ = ["certificate_summary", "cluster_table", "figure3", "first_informative", "validity_table"]


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
                        FAILURE_UPPER: upper})
    return pd.DataFrame(out)
