"""A small known-epsilon benchmark for ``certify demo``: runs in well under a minute on 2 cores."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import numpy as np
import pandas as pd

from certify.benchmark.grid import ALL_ROUTES, Setting, read_results, run_grid

__all__ = ["SMALL_EPSILONS", "run_small_benchmark", "small_settings"]

SMALL_EPSILONS: Final = (0.0, 16.0, 128.0)
"""Requested global epsilons of the small benchmark."""


def small_settings() -> tuple[Setting, ...]:
    """The small benchmark: dispersed prototypes, Laplace and Gaussian, n = 100, 10 pairs.

    Returns
    -------
    tuple of Setting
        Six settings (two families x epsilon in {0, 16, 128}), one repetition, the four
        descriptive routes and both certificate families (Bonferroni over the 10 pairs).
    """
    return tuple(
        Setting("main", "dispersed", fam, eps, 100, 0, ALL_ROUTES, certificates=True, pair_count=10,
                reference_draws=4_000)
        for fam in ("laplace", "gaussian")
        for eps in SMALL_EPSILONS
    )


def _summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per setting: the exact reference and each route's summary, status-labelled."""
    out = []
    for (fam, eps), g in df.groupby(["noise_family", "epsilon_g"], sort=True):
        def med(route: str, g: pd.DataFrame = g) -> float:
            return float(np.median(g.loc[g["route"] == route, "value"].to_numpy(dtype=np.float64)))

        roc = g[g["route"] == "roc_oof"]["value"].to_numpy(dtype=np.float64)
        learned = g[g["route"] == "certificate_learned"]
        oracle = g[g["route"] == "certificate_oracle"]
        pairs = len(learned)
        out.append({
            "family": fam,
            "epsilon_g": float(eps),
            "median exact epsilon [known reference]": float(np.median(learned["exact_epsilon"])),
            "GaussMech median [Diagnostic]": med("gauss_mech"),
            "KDE-LR median [Diagnostic]": med("kde_lr"),
            "MMD-TV median [PopulationEstimate]": med("mmd_tv"),
            "ROC-HT OOF +inf count [PopulationEstimate]": f"{int(np.isinf(roc).sum())}/{roc.size}",
            "learned positive [Certificate]": f"{int((learned['value'] > 0).sum())}/{pairs}",
            "learned max epsilon_lower [Certificate]": float(learned["value"].max()),
            "oracle positive [Certificate]": f"{int((oracle['value'] > 0).sum())}/{pairs}",
            "oracle max epsilon_lower [Certificate]": float(oracle["value"].max()),
        })
    return pd.DataFrame(out)


def run_small_benchmark(out_dir: str | os.PathLike[str], say: Callable[[str], None] = print) -> Path:
    """Run the small benchmark and write ``benchmark.md`` / ``benchmark.html`` beside its results.

    Parameters
    ----------
    out_dir : str or path-like
        Output folder (results, settings, tables and the report).
    say : callable, default print
        Prints one line for the user.

    Returns
    -------
    pathlib.Path
        Path of ``benchmark.html``.

    Notes
    -----
    Six settings of :func:`small_settings` run on 2 workers (about 20-40 s on 2 cores, most of
    it compiling the KDE kernel and starting workers). Every printed number carries its status;
    the validity line counts certificates above their exact pairwise epsilon, which must be 0.
    """
    from certify.benchmark.tables import markdown_table, validity_table, write_tables
    from certify.report._render import markdown_to_html, write_atomic

    out = Path(out_dir)
    start = time.perf_counter()
    say(f"small benchmark: {len(small_settings())} settings (dispersed prototypes, n = 100, 10 pairs)")
    path = run_grid(small_settings(), out, workers=2, progress=False)
    df = read_results(path)
    tables_dir = out / "tables"
    write_tables(df, tables_dir)
    summary = _summary(df)
    validity = validity_table(df)
    exceeded = int(validity[validity["prototypes"] == "all"]["exceeding exact"].sum())
    for row in summary.itertuples(index=False):
        fam, eps, exact = row[0], row[1], row[2]
        say(f"  {fam:8s} epsilon_g={eps:<5g} exact median epsilon = {exact:.3f} [known reference]; "
            f"GaussMech {row[3]:.2f} [Diagnostic]; KDE-LR {row[4]:.0f} [Diagnostic]; "
            f"MMD-TV {row[5]:.4f} [PopulationEstimate]; ROC +inf {row[6]} [PopulationEstimate]; "
            f"learned positive {row[7]} (max {_num(row[8])}) [Certificate]; "
            f"oracle positive {row[9]} (max {_num(row[10])}) [Certificate]")
    say(f"  validity: {exceeded} of {int((df['status'] == 'Certificate').sum())} certificates exceed "
        "their exact pairwise epsilon (must be 0)")
    md = "\n".join([
        "# Small known-epsilon benchmark", "",
        "Dispersed prototypes, Laplace and Gaussian mechanisms, n = 100 samples per identity, 10 "
        "predeclared pairs, one repetition. The certificates of each setting hold together at 95% "
        "(Bonferroni over 10 pairs x 2 error rates).", "",
        "## Summary", "", markdown_table(summary), "",
        "## Validity", "", markdown_table(validity), "",
        f"Full tables and figures: `{tables_dir / 'report.html'}`.", "",
        "![Figure 2: route outputs versus exact median pairwise epsilon, n = 100](figure2.png)", "",
    ])
    images = {}
    fig = tables_dir / "figure2.png"
    if fig.exists():
        images["figure2.png"] = fig.read_bytes()
        write_atomic(out / "figure2.png", images["figure2.png"])
    write_atomic(out / "benchmark.md", md)
    html_path = out / "benchmark.html"
    write_atomic(html_path, markdown_to_html(md, images, "Small known-epsilon benchmark"))
    say(f"  benchmark finished in {time.perf_counter() - start:.1f} s; report {html_path}")
    return html_path


def _num(x: float) -> str:
    """A bound for printing."""
    return "+inf" if math.isinf(x) else f"{x:.3f}"
