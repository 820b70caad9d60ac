"""Reports agree with themselves: one rounding rule for lower bounds, and the registered family."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import certify as cf
from certify._core import lower_bound_text


@pytest.fixture
def one_test_family(tmp_path: Path) -> cf.CertificateFamily:
    """A zero-error test on 21 reserved rows per class: its bound is 1.65386, which rounds up to 1.654."""
    rng = np.random.default_rng(21)
    x = np.vstack([rng.normal(size=(42, 3)) * 0.01, 5.0 + rng.normal(size=(42, 3)) * 0.01])
    table = cf.EmbeddingTable.from_arrays(np.repeat(["a", "b"], 42), x, normalize=False)
    split = table.split(dev_fraction=0.5, seed=0)
    protocol = cf.Protocol(name="rounding", confidence_level=0.95, delta=0.0)
    protocol.register(cf.FixedTest.fit(None, split.development, cf.Pair("a", "b"), folds=3))
    family = protocol.seal(split.reserved, ledger=cf.Ledger(tmp_path / "r.ledger")).evaluate()
    assert math.isclose(family.certificates[0].epsilon_lower, cf.plan.ceiling(21, 1, 0.95, 0.0))
    return family


def test_lower_bound_text_rounds_down() -> None:
    """A bound is printed rounded down, never above its value; exact decimals stay as they are."""
    assert lower_bound_text(1.6538559) == "1.653"
    assert lower_bound_text(1.645) == "1.645"
    assert lower_bound_text(1.93857, 4) == "1.9385"
    assert lower_bound_text(math.inf) == "+inf"


def test_table_sentence_verdict_and_figure_state_one_value(
    one_test_family: cf.CertificateFamily, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report's table, its sentence and the verdict all print 1.653, never 1.654."""
    from certify.report import evaluation_markdown

    claim = cf.Claim(epsilon=1.0, delta=0.0)
    md = evaluation_markdown(one_test_family, claim=claim)
    assert "**1.653** |" in md
    assert "epsilon is at least 1.653 for pair a~b" in md
    assert "epsilon is at least 1.653 > 1" in md
    assert "1.654" not in md
    inconclusive = str(cf.refute(cf.Claim(epsilon=2.0, delta=0.0), one_test_family))
    assert "(largest 1.653 over 1 certificates)" in inconclusive


def test_report_names_the_registered_family(family: cf.CertificateFamily) -> None:
    """A family registered as 40 tests of which 2 were evaluated says so beside the per-rate level."""
    from certify.report import evaluation_markdown

    md = evaluation_markdown(family)
    assert (
        "over 2 tests evaluated of a registered family of 40 (Bonferroni over 40: each test's share "
        "of the error budget is 0.05/40 = 0.00125, each of its two error rates bounded one-sided at "
        f"{family.certificates[0].alpha_per_rate:.3g})"
    ) in md


def test_every_number_column_names_its_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A suite mechanism's report shows its exact epsilon beside the certificate.

    Its U_FPR, U_FNR, plug-in and AUC columns each carry a status.
    """
    from certify.blackbox import SUITE
    from certify.cli import main

    code = main(["audit-mechanism", "LaplaceMechanism", "--calls", "20000", "--ledger",
                 str(tmp_path / "m.ledger"), "--out", str(tmp_path / "rep")])
    assert code == 0
    md = (tmp_path / "rep" / "mechanism.md").read_text()
    exact = SUITE["LaplaceMechanism"]
    assert "Exact epsilon of this mechanism: **0.100** [known reference]" in md
    assert exact.true_epsilon_note in md
    for column in ("U_FPR (Certificate: upper bound)", "U_FNR (Certificate: upper bound)",
                   "plug-in epsilon (PopulationEstimate)", "AUC (Diagnostic)"):
        assert f"| {column} |" in md
    assert "| U_FPR |" not in md and "| plug-in |" not in md and "| AUC |" not in md


def test_validity_table_does_not_label_a_failure_rate_as_a_certificate() -> None:
    """The self-test's bound on the failure rate is a rate, not a certified epsilon."""
    import pandas as pd

    from certify.benchmark import tables

    rows = pd.DataFrame({"experiment": ["main"] * 2, "prototypes": ["dispersed"] * 2,
                         "route": ["certificate_learned"] * 2, "status": ["Certificate"] * 2,
                         "value": [0.0, 0.2], "exact_epsilon": [0.0, 1.0], "zero_error_ceiling": [0.45] * 2})
    columns = list(tables.validity_table(rows).columns)
    assert tables.FAILURE_UPPER in columns
    assert not any("failure" in c and "[Certificate]" in c for c in columns)


def test_a_bits_certificate_beside_a_real_arithmetic_epsilon_says_why_they_differ(tmp_path: Path) -> None:
    """A suite mechanism refuted through its doubles' bits: the report says the two numbers differ in kind."""
    from certify.blackbox import SUITE
    from certify.cli import main

    out = tmp_path / "rep"
    code = main(["audit-mechanism", "LaplaceMechanism", "--calls", "200000", "--ledger",
                 str(tmp_path / "m.ledger"), "--out", str(out), "--seed", "3"])
    assert code == 0
    md = (out / "mechanism.md").read_text()
    record = json.loads(next(out.glob("*record*.json")).read_text())
    reads_bits = record["tests"][0]["model"]["kind"] == "bits"
    assert reads_bits, "the textbook Laplace on doubles is expected to be certified through its bits"
    assert f"**{SUITE['LaplaceMechanism'].true_epsilon:.3f}** [known reference]" in md
    assert "reads the outputs' floating-point representation" in md
