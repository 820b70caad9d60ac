"""certify.verify: reports, records and results checked against the ledger that issued them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import certify as cf
from certify.blackbox.suite import SUITE
from certify.cli import main

from .conftest import TableFactory, seal_tests

PAIR = cf.Pair("id0", "id1")


def test_results_and_records_verify_against_their_ledger(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A family, its certificates and its record verify; the stamp names the spend entry and its hash."""
    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,))
    before = cf.verify(sealed.record, ledger)
    assert before.verified and any("not spent yet" in c for c in before.checked)
    family = sealed.evaluate()
    stamp = family.certificates[0].ledger
    entry = ledger.entry(sealed.reserved_fingerprint)
    assert entry is not None
    assert (stamp.ledger_id, stamp.sequence, stamp.head, stamp.evaluation) == (
        ledger.ledger_id,
        entry.sequence,
        entry.head,
        1,
    )
    for source in (family, family.certificates[0], sealed.record, [family, sealed.record]):
        outcome = cf.verify(source, ledger)
        assert outcome.verified, outcome.problems
    assert any("sealed on entries 1 to 1" in c for c in cf.verify(sealed.record, ledger).checked)


def test_a_mechanism_audit_verifies_with_its_evaluation_number(tmp_path: Path, seed: int) -> None:
    """An audit verifies; its record's evaluation number is the ledger's; later evaluations are counted."""
    ledger = cf.Ledger(tmp_path / "m.ledger")
    first = cf.audit_mechanism(
        SUITE["LaplaceMechanism"], 0.0, 1.0, calls=20_000, seed=seed, ledger=ledger, progress=False
    )
    cf.audit_mechanism(
        SUITE["LaplaceMechanism"], 0.0, 1.0, calls=20_000, seed=seed + 1, ledger=ledger, progress=False
    )
    outcome = cf.verify(first, ledger)
    assert outcome.verified, outcome.problems
    text = outcome.to_text()
    assert "evaluation 1 of 'suite:LaplaceMechanism'; the ledger holds 2 evaluation(s)" in text
    assert "5 entries follow it" in text  # its outcome, then the 4 entries of the second audit


def test_another_ledger_is_named_as_such(make_table: TableFactory, ledger: cf.Ledger, tmp_path: Path) -> None:
    """A report checked against a ledger that did not issue it says the ledger was replaced or is another."""
    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,))
    family = sealed.evaluate()
    other = cf.Ledger(tmp_path / "other.ledger")
    for source in (family, sealed.record):
        outcome = cf.verify(source, other)
        assert (
            not outcome.verified
            and "the ledger was replaced, or this is another ledger" in outcome.problems[0]
        )


def test_a_tampered_ledger_is_a_problem_not_an_exception(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Verify reports a chain that does not check out instead of raising."""
    import sqlite3

    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,))
    family = sealed.evaluate()
    con = sqlite3.connect(ledger.path)
    con.execute("DELETE FROM chain WHERE kind = 'complete'")
    con.commit()
    con.close()
    outcome = cf.verify(family, ledger)
    assert not outcome.verified and outcome.entries == 0 and "deleted" in outcome.problems[0]


@pytest.fixture
def evaluated_report(tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]) -> Path:
    """A folder holding a CLI evaluation report (report/), its table, record and ledger."""
    from .test_cli import PROTOCOL, write_table

    write_table(tmp_path / "table.csv", seed=seed)
    (tmp_path / "protocol.toml").write_text(PROTOCOL)
    args = ["--data", str(tmp_path / "table.csv"), "--ledger", str(tmp_path / "audit.ledger")]
    assert (
        main(["preregister", str(tmp_path / "protocol.toml"), *args, "--out", str(tmp_path / "rec.json")])
        == 0
    )
    assert main(["evaluate", str(tmp_path / "rec.json"), *args, "--out", str(tmp_path / "report")]) == 0
    capsys.readouterr()
    return tmp_path


def test_edited_numbers_in_a_report_are_found(evaluated_report: Path) -> None:
    """A certificates.json whose bound was raised no longer matches the outcome the ledger recorded."""
    report = evaluated_report / "report"
    assert cf.verify(report, evaluated_report / "audit.ledger").verified
    data = json.loads((report / "certificates.json").read_text())
    data["certificates"][0]["epsilon_lower"] += 1.0
    (report / "certificates.json").write_text(json.dumps(data))
    outcome = cf.verify(report, evaluated_report / "audit.ledger")
    assert not outcome.verified and "differ from those the ledger recorded" in outcome.problems[0]


def test_reports_from_two_ledgers_sharing_rows_are_found(
    evaluated_report: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same rows renamed and evaluated in a new ledger: the two reports' records show shared rows.

    A new ledger knows nothing of the first; the records' sketches (their smallest row keys)
    show that the second evaluation's reserved rows were rows of the first.
    """
    import csv

    folder = evaluated_report
    with open(folder / "table.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    with open(folder / "renamed.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(rows[0])
        w.writerows([[f"q_{r[0]}", *r[1:]] for r in rows[1:]])
    args = ["--data", str(folder / "renamed.csv"), "--ledger", str(folder / "new.ledger")]
    assert (
        main(["preregister", str(folder / "protocol.toml"), *args, "--out", str(folder / "rec2.json")]) == 0
    )
    assert main(["evaluate", str(folder / "rec2.json"), *args, "--out", str(folder / "report2")]) == 0
    capsys.readouterr()
    outcome = cf.verify([folder / "report", folder / "report2"], folder / "new.ledger")
    assert not outcome.verified
    assert any("share reserved rows" in p for p in outcome.problems), outcome.problems
    assert any("issued by ledger" in p for p in outcome.problems)  # the first report is another ledger's


def test_cli_verify_exit_codes_and_export(evaluated_report: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """0 when verified, 1 when not, 2 for unreadable input; --export writes an export that verifies."""
    folder = evaluated_report
    ledger = str(folder / "audit.ledger")
    assert (
        main(["verify", str(folder / "report"), "--ledger", ledger, "--export", str(folder / "e.json")]) == 0
    )
    assert "verified" in capsys.readouterr().out
    assert (
        main(["verify", str(folder / "report"), str(folder / "rec.json"), "--ledger", str(folder / "e.json")])
        == 0
    )
    capsys.readouterr()
    shutil.copy(folder / "e.json", folder / "short.json")
    data = json.loads((folder / "short.json").read_text())
    data["entries"] = data["entries"][:2]
    (folder / "short.json").write_text(json.dumps(data))
    assert main(["verify", str(folder / "report"), "--ledger", str(folder / "short.json")]) == 1
    assert "ends at entry 2" in capsys.readouterr().out
    (folder / "junk.json").write_bytes(b"\xff\xfe")
    assert main(["verify", str(folder / "junk.json"), "--ledger", ledger]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err
    (folder / "empty").mkdir()
    assert main(["verify", str(folder / "empty"), "--ledger", ledger]) == 2
    assert "holds no certify report" in capsys.readouterr().err
    assert main(["verify", "--ledger", str(folder / "nothing.ledger")]) == 2
    assert not (folder / "nothing.ledger").exists()


def test_verification_is_typed_and_pickles(ledger: cf.Ledger) -> None:
    """A Verification is a frozen value that survives pickling."""
    import pickle

    outcome = cf.verify([], ledger)
    assert pickle.loads(pickle.dumps(outcome)) == outcome and outcome.verified
    assert outcome.to_text().endswith("verified")
    with pytest.raises(cf.DataError, match="verify takes report folders"):
        cf.verify(np.zeros(3), ledger)
