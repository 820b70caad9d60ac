"""Tables and figures of the known-epsilon benchmark from a results table (paper Sec. 6, App. B-C).

Every function takes the tidy table written by :func:`certify.benchmark.grid.run_grid` (read it
with :func:`certify.benchmark.grid.read_results`) and returns a :class:`pandas.DataFrame` whose
column names carry the status of their numbers: ``[Diagnostic]``, ``[PopulationEstimate]``,
``[Certificate]`` or ``[known reference]`` (an exact value of the benchmark mechanism).
:func:`write_tables` writes all of them as CSV and Markdown, the figures as PNG, and one
``report.md`` / ``report.html``. Sections whose experiment is absent from the table are skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from certify.benchmark._appendix_tables import (
    _null_descriptive,
    anisotropic_table,
    power_table,
    randomized_response_table,
)
from certify.benchmark._certificate_tables import (
    certificate_summary,
    cluster_table,
    figure3,
    first_informative,
    validity_table,
)
from certify.benchmark._null_tables import (
    PAPER_TABLE4,
    eq22_floor,
    null_floor_table,
    table4_null,
    table4_null_counts,
)
from certify.benchmark._table_format import (
    CERT,
    CERT_ROUTES,
    DIAG,
    FAILURE_UPPER,
    POP,
    REF,
    _check,
    markdown_table,
)
from certify.benchmark._tracking_tables import figure2, figure2_data, tracking_summary

__all__ = [
    "CERT",
    "CERT_ROUTES",
    "DIAG",
    "FAILURE_UPPER",
    "PAPER_TABLE4",
    "POP",
    "REF",
    "anisotropic_table",
    "certificate_summary",
    "cluster_table",
    "eq22_floor",
    "figure2",
    "figure2_data",
    "figure3",
    "first_informative",
    "markdown_table",
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
