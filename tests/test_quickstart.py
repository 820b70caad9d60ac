"""The quickstart's commands on a 10-identity table (scikit-learn's digits).

One rule for the number of candidate pairs; a route that cannot run on a pair is reported for it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from certify.cli import main
from tests.test_docs_examples import digits_csv

ROOT = Path(__file__).resolve().parents[1]


def test_protocol_candidates_above_the_pairs_score_all_and_the_record_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """protocols/face-audit.toml (candidates = 100) on 10 identities scores the 45 pairs.

    The record states the number requested, the number scored and the rule, as sample_pairs applies it.
    """
    import certify as cf

    rng = np.random.default_rng(27)
    with open(tmp_path / "ten.csv", "w", encoding="utf-8") as fh:
        fh.write("identity," + ",".join(f"x{j}" for j in range(6)) + "\n")
        for i in range(10):
            centre = np.zeros(6)
            centre[i % 6] = 3.0 * (1 + i // 6)
            for row in centre + rng.standard_normal((20, 6)):
                fh.write(f"id{i}," + ",".join(f"{v:.6f}" for v in row) + "\n")
    code = main(["preregister", str(ROOT / "protocols" / "face-audit.toml"),
                 "--data", str(tmp_path / "ten.csv"), "--ledger", str(tmp_path / "a.ledger"),
                 "--out", str(tmp_path / "record.json")])
    assert code == 0
    err = capsys.readouterr().err
    rule = "all 45 pairs of 10 identities (100 requested; candidates are at most the pairs there are)"
    assert f"scoring {rule} on development data" in err
    annotations = json.loads((tmp_path / "record.json").read_text())["annotations"]
    assert annotations["candidates"] == {"requested": 100, "scored": 45, "rule": rule}
    assert len(annotations["candidate_pairs"]) == 45
    ids = [f"id{i}" for i in range(10)]
    assert [tuple(p) for p in annotations["candidate_pairs"]] == [
        p.as_tuple() for p in cf.sample_pairs(ids, count=100, seed=0)
    ]


def test_describe_on_digits_reports_kde_lr_per_pair_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`certify describe` on the digits names the pairs KDE-LR cannot score, and why, and goes on."""
    digits_csv(tmp_path / "digits.csv")
    code = main(["describe", str(tmp_path / "digits.csv"), "--pairs", "4", "--methods",
                 "gauss_mech,kde_lr,mmd_tv", "--out", str(tmp_path / "d")])
    assert code == 0
    out = capsys.readouterr().out
    assert "mmd_tv           [PopulationEstimate] median epsilon_estimate" in out
    assert "gauss_mech       [Diagnostic]" in out
    assert "kde_lr not run on" in out and "where KDE-LR has no bandwidth" in out
    md = (tmp_path / "d" / "describe.md").read_text()
    assert "Not run (the data of these pairs cannot support the method):" in md


def test_a_missing_label_column_names_the_command_line_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the command line a missing identity column names --label-column and data.label_column."""
    (tmp_path / "t.csv").write_text("person,x0,x1\na,1,2\nb,3,4\n")
    assert main(["inspect", str(tmp_path / "t.csv")]) == 2
    err = capsys.readouterr().err
    assert "'identity' is not among ['person', 'x0', 'x1']" in err
    assert "--label-column NAME on the command line" in err and "data.label_column in a protocol file" in err
    assert main(["inspect", str(tmp_path / "t.csv"), "--label-column", "person"]) == 0
