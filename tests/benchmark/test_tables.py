"""Tests for certify.benchmark.tables: validity counts, Table 4, Eq. 22, power, report files."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from certify.benchmark import tables
from certify.benchmark.grid import Setting, read_results, run_grid
from certify.stats.binomial import clopper_pearson_upper


def cert_rows(values: list[float], exact: list[float], ceiling: list[float], **extra: object) -> pd.DataFrame:
    """A hand-made table of certificate rows."""
    n = len(values)
    frame = pd.DataFrame({
        "experiment": ["main"] * n, "prototypes": ["dispersed"] * n, "noise_family": ["gaussian"] * n,
        "epsilon_g": [16.0] * n, "n_samples": [30] * n, "repetition": [0] * n,
        "route": ["certificate_learned"] * n, "status": ["Certificate"] * n,
        "value": values, "exact_epsilon": exact, "zero_error_ceiling": ceiling,
    })
    for k, v in extra.items():
        frame[k] = v
    return frame


def test_validity_counts_failures_and_possible_failures() -> None:
    """Exceedances and numerically possible failures are counted per row, with the CP bound."""
    frame = cert_rows(
        values=[0.0, 0.3, 0.5, 0.0, 2.0],
        exact=[0.0, 1.0, 0.4, 5.0, 3.0],
        ceiling=[0.45, 0.45, 0.45, 0.45, 2.06],
    )
    row = tables.validity_table(frame).iloc[0]
    # Row 3 (0.5 > 0.4) exceeds; rows 1, 3 have ceilings above their exact value.
    assert (row["certificates"], row["exceeding exact"], row["failure possible"]) == (5, 1, 2)
    assert row[tables.FAILURE_UPPER] == pytest.approx(
        clopper_pearson_upper(1, 2, 0.05), rel=1e-12)


def test_validity_zero_failures_matches_paper_bound() -> None:
    """With 0 failures among 3,525 possible rows the bound is the paper's 8.5e-4."""
    m = 3_525
    frame = cert_rows([0.0] * m, [0.1] * m, [0.45] * m)
    bound = tables.validity_table(frame).iloc[0][tables.FAILURE_UPPER]
    assert bound == pytest.approx(1 - 0.05 ** (1 / m), rel=1e-9)
    assert round(bound, 5) == 0.00085


def test_validity_without_possible_failures_reports_nan() -> None:
    """If no row could fail, there is no bound on a failure rate (NaN, printed n/a)."""
    frame = cert_rows([0.2, 0.0], [50.0, 60.0], [2.0, 2.0])
    row = tables.validity_table(frame).iloc[0]
    assert row["failure possible"] == 0 and math.isnan(row[tables.FAILURE_UPPER])


def null_rows() -> pd.DataFrame:
    """Hand-made null rows: two settings (repetitions) of 3 pairs at n = 30."""
    rows = []
    for rep, shift in ((0, 0.0), (1, 2.0)):
        for k, (gm, auc, roc) in enumerate(((10.0, 0.4, math.inf), (12.0, 0.5, 1.0), (20.0, 0.6, math.inf))):
            common = {"experiment": "main", "prototypes": "dispersed", "mechanism": "null",
                      "noise_family": "laplace", "epsilon_g": 0.0, "n_samples": 30, "repetition": rep,
                      "dimension": 512, "pair_index": k, "exact_epsilon": 0.0}
            rows.append({**common, "route": "gauss_mech", "status": "Diagnostic", "value": gm + shift})
            rows.append({**common, "route": "roc_oof", "status": "PopulationEstimate", "value": roc,
                         "auc": auc, "exact_corner": False})
            rows.append({**common, "route": "mmd_tv", "status": "PopulationEstimate", "value": 0.01 * k})
    return pd.DataFrame(rows)


def test_table4_medians_then_means() -> None:
    """Table 4 takes the median over pairs per setting, then the mean over settings."""
    t4 = tables.table4_null(null_rows()).iloc[0]
    assert t4["n"] == 30
    assert t4[f"GaussMech median {tables.DIAG}"] == pytest.approx((12.0 + 14.0) / 2)
    assert t4[f"ROC-HT OOF AUC, median {tables.POP}"] == pytest.approx(0.5)
    assert t4[f"ROC-HT OOF +inf count of 3 pairs (Div.) {tables.POP}"] == pytest.approx(2.0)
    assert t4[f"MMD-TV median, Laplace null {tables.POP}"] == pytest.approx(0.01)
    counts = tables.table4_null_counts(null_rows()).set_index("quantity")["count"]
    assert counts.iloc[0] == 4 and counts.iloc[1] == 0 and counts.iloc[2] == 4


def test_eq22_floor_and_null_floor_table() -> None:
    """Eq. 22 gives 28.30 at d = 512, n = 30; the table reports the relative error of the medians."""
    assert tables.eq22_floor(512, 30) == pytest.approx(28.30, abs=0.01)
    frame = null_rows().assign(experiment="null_floor")
    out = tables.null_floor_table(frame).iloc[0]
    pred = tables.eq22_floor(512, 30)
    assert out[f"Eq. 22 predicted floor {tables.DIAG}"] == pytest.approx(pred)
    # Medians are 12 and 14; the farther from the prediction is 12.
    assert out["max abs relative error"] == pytest.approx(abs(12.0 - pred) / pred)


def test_power_table_proportion_and_interval() -> None:
    """The power table counts positive bounds over pairs x repetitions with an exact 95% interval."""
    frame = cert_rows([0.0, 0.2, 0.3, 0.0], [16.0] * 4, [1.0] * 4).assign(experiment="power")
    row = tables.power_table(frame).iloc[0]
    assert row[f"positive {tables.CERT}"] == 2 and row["replications"] == 4
    assert row[f"P(positive) {tables.CERT}"] == 0.5
    assert row["95% CI of P, low"] < 0.5 < row["95% CI of P, high"]
    assert row["failure possible"] == 0


def test_markdown_keeps_infinities() -> None:
    """Infinite values are written as +inf in Markdown tables."""
    text = tables.markdown_table(pd.DataFrame({"v [PopulationEstimate]": [math.inf, 0.5, math.nan]}))
    assert "+inf" in text and "0.500" in text and "n/a" in text


@pytest.fixture(scope="module")
def small_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny grid with main-grid rows at n = 100 and every appendix experiment."""
    settings = [
        Setting("main", "dispersed", fam, eps, 100, 0, ("gauss_mech", "mmd_tv", "roc_oof"),
                certificates=True, pair_count=4, dimension=16, reference_draws=300)
        for fam in ("laplace", "gaussian") for eps in (0.0, 64.0)
    ]
    settings += [Setting(exp, "clustered", exp, 8.0, 20, 0, ("mmd_tv", "roc_oof"), certificates=True,
                         pair_count=4, dimension=16) for exp in ("randomized_response", "anisotropic")]
    settings.append(Setting("power", "dispersed", "laplace", 64.0, 20, 0, (), certificates=True,
                            pair_set="power", pair_count=5, family_size=40, dimension=16))
    settings.append(Setting("null_floor", "dispersed", "gaussian", 0.0, 20, 0, ("gauss_mech",), dimension=16))
    return run_grid(settings, tmp_path_factory.mktemp("grid"), workers=1, progress=False)


@pytest.mark.slow
def test_write_tables_writes_every_section(small_results: Path, tmp_path: Path) -> None:
    """The report folder holds CSV and Markdown tables, PNG figures and report.md/.html."""
    paths = tables.write_tables(small_results, tmp_path)
    names = {p.name for p in paths}
    for stem in ("table4_null", "figure2_data", "certificates_main", "validity", "power",
                 "randomized_response", "table6_anisotropic", "null_floor"):
        assert f"{stem}.csv" in names and f"{stem}.md" in names
    assert (tmp_path / "figure2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "figure3.png").exists()
    report = (tmp_path / "report.md").read_text()
    assert "[Diagnostic]" in report and "[Certificate]" in report
    assert "data:image/png;base64," in (tmp_path / "report.html").read_text()
    validity = pd.read_csv(tmp_path / "validity.csv")
    assert (validity["exceeding exact"] == 0).all()


def test_every_table_column_names_a_status(small_results: Path) -> None:
    """Each numeric table column that holds a route's number says its status in brackets."""
    df = read_results(small_results)
    for frame in (tables.table4_null(df), tables.certificate_summary(df), tables.anisotropic_table(df)):
        value_cols = [c for c in frame.columns if c not in ("n", "prototypes", "family", "epsilon_g", "test")]
        assert value_cols and all(c.endswith("]") for c in value_cols), value_cols


@pytest.mark.slow
def test_report_cli_returns_zero(small_results: Path, tmp_path: Path) -> None:
    """`certify report RESULTS --out DIR` writes the report and exits 0."""
    said: list[str] = []
    args = argparse.Namespace(results=str(small_results.with_suffix(".csv")), out=str(tmp_path / "r"))
    assert tables.report_cli(args, said.append) == 0
    assert (tmp_path / "r" / "report.html").exists() and said


def test_figure2_data_uses_auc_for_roc(small_results: Path) -> None:
    """Figure 2's ROC panel plots the AUC and its population-optimal reference, not the epsilon."""
    data = tables.figure2_data(read_results(small_results))
    roc = data[data["route"] == "roc_oof"]
    vals = roc["mean of medians (status in label)"].to_numpy(dtype=np.float64)
    assert ((vals >= 0) & (vals <= 1)).all()
    assert roc[f"reference AUC {tables.REF}"].between(0.5, 1.0).all()
