"""The ten doors of issue 23, each attacked as a user wanting a second look would.

Each test performs one attack and checks that certify refuses it with a specific error (closed
locally), or, where no local file can tell (a whole ledger put back or replaced), that
``certify verify`` detects it from the reports. docs/trust.md says which is which.
"""

from __future__ import annotations

import csv
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

import certify as cf
from certify.blackbox.suite import SUITE
from certify.cli import main

from ..test_cli import PROTOCOL, write_table

LAPLACE = SUITE["LaplaceMechanism"]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """Run the command line; its exit code, standard output and standard error."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def preregister(
    capsys: pytest.CaptureFixture[str], folder: Path, table: str, protocol: str, ledger: str, record: str
) -> int:
    """``certify preregister``; its exit code."""
    return cli(
        capsys,
        "preregister",
        str(folder / protocol),
        "--data",
        str(folder / table),
        "--ledger",
        str(folder / ledger),
        "--out",
        str(folder / record),
    )[0]


def evaluate(
    capsys: pytest.CaptureFixture[str], folder: Path, record: str, table: str, ledger: str, out: str
) -> tuple[int, str, str]:
    """``certify evaluate``."""
    return cli(
        capsys,
        "evaluate",
        str(folder / record),
        "--data",
        str(folder / table),
        "--ledger",
        str(folder / ledger),
        "--out",
        str(folder / out),
    )


@pytest.fixture
def workdir(tmp_path: Path, seed: int) -> Path:
    """A table of 4 identities and the protocol of the CLI tests."""
    write_table(tmp_path / "table.csv", seed=seed)
    (tmp_path / "protocol.toml").write_text(PROTOCOL)
    return tmp_path


def evaluated(capsys: pytest.CaptureFixture[str], folder: Path) -> None:
    """Preregister and evaluate once on table.csv with audit.ledger; the report goes to first/."""
    assert preregister(capsys, folder, "table.csv", "protocol.toml", "audit.ledger", "rec.json") == 0
    assert evaluate(capsys, folder, "rec.json", "table.csv", "audit.ledger", "first")[0] == 0


def new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what this process spent, as a new process would (the ledger is then all that counts)."""
    import certify.protocol.lifecycle as lifecycle

    monkeypatch.setattr(lifecycle, "_SPENT_IN_PROCESS", set())


def test_door_1_an_emptied_ledger_is_refused_never_recreated(
    workdir: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    """Door 1: ``: > audit.ledger`` then rerun is refused; the empty file is left as it is."""
    evaluated(capsys, workdir)
    (workdir / "audit.ledger").write_bytes(b"")
    code, _, err = evaluate(capsys, workdir, "rec.json", "table.csv", "audit.ledger", "again")
    assert code == 2 and "empty file" in err and "never recreated" in err
    assert (workdir / "audit.ledger").read_bytes() == b""
    # the mechanism route: an emptied ledger does not restart the count at evaluation 1
    path = workdir / "m.ledger"
    cf.audit_mechanism(LAPLACE, 0.0, 1.0, calls=20_000, seed=seed, ledger=cf.Ledger(path), progress=False)
    path.write_bytes(b"")
    with pytest.raises(cf.LedgerError, match="empty file"):
        cf.audit_mechanism(LAPLACE, 0.0, 1.0, calls=20_000, seed=seed, ledger=cf.Ledger(path), progress=False)
    assert path.read_bytes() == b""


def _sql(path: Path, *statements: str) -> None:
    """Run SQL on the ledger file, as a user with the sqlite3 shell would."""
    con = sqlite3.connect(path)
    for statement in statements:
        con.execute(statement)
    con.commit()
    con.close()


def test_door_2_deleted_evaluations_are_refused_or_detected(
    tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Door 2: deleting evaluations, spends or pre-registrations is refused; a full rewrite is detected.

    The rows of the former ``mechanism_evaluations``, ``spent`` and ``preregistrations`` tables
    are entries of the chain: deleting them breaks its links, deleting its tail leaves fewer
    entries than the ledger recorded, emptying it leaves no genesis entry. A rewrite that also
    fixes the recorded count is a valid shorter ledger; the report of the dropped evaluation
    then fails ``certify verify``.
    """
    path = tmp_path / "m.ledger"
    ledger = cf.Ledger(path)
    cf.audit_mechanism(LAPLACE, 0.0, 1.0, calls=20_000, seed=seed, ledger=ledger, progress=False)
    second = cf.audit_mechanism(LAPLACE, 0.0, 1.0, calls=20_000, seed=seed + 1, ledger=ledger, progress=False)
    assert second.evaluation == 2 and second.level_used == pytest.approx(1 - 0.05 * 6 / (4 * np.pi**2))
    pristine = path.read_bytes()
    attacks = {
        "DELETE FROM chain WHERE kind = 'evaluation'": "missing",
        "DELETE FROM chain WHERE kind IN ('spend', 'preregistration')": "missing",
        "DELETE FROM chain": "chain is empty",
        "DELETE FROM chain WHERE seq > 5": "entries 6 to 9 were deleted",  # the second audit's
        "UPDATE chain SET body = replace(body, '\"evaluation\":2', '\"evaluation\":1')": "edited",
    }
    for statement, message in attacks.items():
        path.write_bytes(pristine)
        _sql(path, statement)
        with pytest.raises(cf.LedgerError, match=message) as info:
            cf.audit_mechanism(
                LAPLACE, 0.0, 1.0, calls=20_000, seed=seed + 2, ledger=cf.Ledger(path), progress=False
            )
        assert "cannot be trusted" in str(info.value) and "backup" not in str(info.value)
    # a consistent rewrite: the tail dropped and the recorded count fixed too
    path.write_bytes(pristine)
    con = sqlite3.connect(path)
    head = con.execute("SELECT hash FROM chain WHERE seq = 5").fetchone()[0]
    con.close()
    _sql(
        path,
        "DELETE FROM chain WHERE seq > 5",
        "UPDATE meta SET value = '5' WHERE key = 'entries'",
        f"UPDATE meta SET value = '{head}' WHERE key = 'head'",
    )
    new_process(monkeypatch)
    again = cf.audit_mechanism(
        LAPLACE, 0.0, 1.0, calls=20_000, seed=seed + 1, ledger=cf.Ledger(path), progress=False
    )
    assert again.evaluation == 2  # locally a valid ledger: no file can tell
    outcome = cf.verify(second, path)
    assert not outcome.verified
    assert any("rolled back" in p for p in outcome.problems), outcome.problems


def test_door_3_a_ledger_copied_back_is_detected_by_verify(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Door 3: copy the ledger, evaluate, copy it back, evaluate again: ``certify verify`` shows it.

    A copy put back is a valid earlier state of the same ledger, so the second evaluation runs
    (no local file can tell). Its report claims the same ledger entry as the first with another
    hash: checked against the ledger, the first report's entry is gone; checked together, the
    two reports evaluated the same reserved data.
    """
    assert preregister(capsys, workdir, "table.csv", "protocol.toml", "audit.ledger", "rec.json") == 0
    shutil.copy(workdir / "audit.ledger", workdir / "copy.ledger")
    assert evaluate(capsys, workdir, "rec.json", "table.csv", "audit.ledger", "first")[0] == 0
    code, _, err = evaluate(capsys, workdir, "rec.json", "table.csv", "audit.ledger", "refused")
    assert code == 3 and "backup" not in err
    shutil.copy(workdir / "copy.ledger", workdir / "audit.ledger")
    new_process(monkeypatch)
    assert evaluate(capsys, workdir, "rec.json", "table.csv", "audit.ledger", "second")[0] == 0
    code, out, _ = cli(capsys, "verify", str(workdir / "second"), "--ledger", str(workdir / "audit.ledger"))
    assert code == 0 and out.rstrip().endswith("verified")
    code, out, _ = cli(capsys, "verify", str(workdir / "first"), "--ledger", str(workdir / "audit.ledger"))
    assert code == 1 and "rolled back" in out and "NOT VERIFIED" in out
    code, out, _ = cli(
        capsys,
        "verify",
        str(workdir / "first"),
        str(workdir / "second"),
        "--ledger",
        str(workdir / "audit.ledger"),
    )
    assert code == 1 and "a second look at the same reserved data" in out
    # the auditor publishes the export: a reader holding it sees the same
    code, _, _ = cli(
        capsys, "verify", "--ledger", str(workdir / "audit.ledger"), "--export", str(workdir / "export.json")
    )
    assert code == 0
    code, out, _ = cli(capsys, "verify", str(workdir / "first"), "--ledger", str(workdir / "export.json"))
    assert code == 1 and "rolled back" in out


def _relabelled(source: Path, target: Path, prefix: str, extra: int = 0, seed: int = 0) -> None:
    """A copy of a CSV with every label prefixed, and ``extra`` rows of a new identity."""
    with open(source, newline="") as fh:
        rows = list(csv.reader(fh))
    rng = np.random.default_rng(seed)
    with open(target, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(rows[0])
        for row in rows[1:]:
            w.writerow([prefix + row[0], *row[1:]])
        for _ in range(extra):
            w.writerow(["newcomer", *rng.standard_normal(len(rows[0]) - 1).tolist()])


def test_door_4_prefixed_labels_are_refused_as_spent(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Door 4: every label prefixed with ``p_``, preregistered on the same ledger: refused as spent."""
    evaluated(capsys, workdir)
    _relabelled(workdir / "table.csv", workdir / "renamed.csv", "p_")
    code, _, err = cli(
        capsys,
        "preregister",
        str(workdir / "protocol.toml"),
        "--data",
        str(workdir / "renamed.csv"),
        "--ledger",
        str(workdir / "audit.ledger"),
        "--out",
        str(workdir / "rec2.json"),
    )
    assert code == 3 and "already used in an evaluation by protocol 'cli-test'" in err
    assert not (workdir / "rec2.json").exists()


def discrete_table(
    rng: np.random.Generator, identities: int = 3, n: int = 60
) -> tuple[list[str], NDArray[np.float64]]:
    """Identities of 0/1 rows (two bits each), identity ``i`` favouring ``(i % 2, 1)``."""
    labels, rows = [], []
    for i in range(identities):
        bits = np.column_stack([rng.random(n) < (0.9 if i % 2 else 0.1), rng.random(n) < 0.5])
        rows.append(bits.astype(np.float64))
        labels += [f"id{i}"] * n
    return labels, np.vstack(rows)


def test_door_5_a_discrete_table_with_one_more_identity_is_refused(
    rng: np.random.Generator, tmp_path: Path
) -> None:
    """Door 5: 0/1 rows, one unrelated identity added, preregistered again: the spent pair is refused.

    Repeated vectors are keyed by their identity's own rows, not by the table, so another
    identity changes nothing; fresh draws of the same values are still new data.
    """
    ledger = cf.Ledger(tmp_path / "audit.ledger")
    labels, rows = discrete_table(rng)
    pair = cf.Pair("id0", "id1")
    table = cf.EmbeddingTable.from_arrays(labels, rows)
    split = table.split(0.5, seed=0)
    protocol = cf.Protocol(name="bits")
    protocol.register(cf.FixedTest.fit(None, split.development, pair, folds=3))
    protocol.seal(split.reserved, ledger=ledger).evaluate()
    extra = np.column_stack([rng.random(40) < 0.5, rng.random(40) < 0.5]).astype(np.float64)
    for new_labels, new_rows in (
        ([*labels, *["other"] * 40], np.vstack([rows, extra])),  # one identity added
        ([f"x_{x}" for x in labels], rows),  # labels renamed
    ):
        bigger = cf.EmbeddingTable.from_arrays(new_labels, new_rows)
        again = bigger.split(0.5, seed=0)
        draft = cf.Protocol(name="bits-again")
        names = cf.Pair(*(n for n in bigger.identities if n.endswith(("id0", "id1"))))
        draft.register(cf.FixedTest.fit(None, again.development, names, folds=3))
        with pytest.raises(
            cf.ReservedSplitReusedError, match="already used in an evaluation by protocol 'bits'"
        ):
            draft.seal(again.reserved, ledger=ledger)
    fresh_labels, fresh_rows = discrete_table(rng)  # fresh draws repeat the same values
    fresh = cf.EmbeddingTable.from_arrays(fresh_labels, fresh_rows).split(0.5, seed=0)
    draft = cf.Protocol(name="fresh-bits")
    draft.register(cf.FixedTest.fit(None, fresh.development, pair, folds=3))
    assert len(draft.seal(fresh.reserved, ledger=ledger).evaluate().certificates) == 1


NORMALIZED = PROTOCOL.replace("normalize = false", "normalize = true")


def test_door_6_normalize_false_on_the_same_rows_is_refused(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Door 6: a new protocol with ``normalize = false`` on the same table and split: refused as spent.

    Rows are keyed by their raw content, before cleaning and normalization, so no protocol
    option makes them fresh: neither normalization nor another split seed.
    """
    (workdir / "normalized.toml").write_text(NORMALIZED)
    assert preregister(capsys, workdir, "table.csv", "normalized.toml", "audit.ledger", "rec.json") == 0
    assert evaluate(capsys, workdir, "rec.json", "table.csv", "audit.ledger", "first")[0] == 0
    for name, text in (
        ("raw.toml", PROTOCOL.replace('name = "cli-test"', 'name = "raw"')),
        ("reseeded.toml", NORMALIZED.replace("split_seed = 0", "split_seed = 5")),
    ):
        (workdir / name).write_text(text)
        code, _, err = cli(
            capsys,
            "preregister",
            str(workdir / name),
            "--data",
            str(workdir / "table.csv"),
            "--ledger",
            str(workdir / "audit.ledger"),
            "--out",
            str(workdir / "rec2.json"),
        )
        assert code == 3 and "already used in an evaluation" in err, err


def _forge(record_path: Path, edit: dict[str, float]) -> tuple[str, str]:
    """The record with protocol fields edited and its SHA-256 recomputed: (JSON text, hash)."""
    from certify.protocol.record import _canonical

    data = json.loads(record_path.read_text())
    data.pop("sha256")
    data["protocol"].update(edit)
    import hashlib

    digest = hashlib.sha256(_canonical(data).encode()).hexdigest()
    return json.dumps({**data, "sha256": digest}), digest


def test_door_7_derived_levels_are_recomputed(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Door 7: alpha_per_rate edited to 0.45 (hash recomputed, record stored in the ledger): RecordError.

    Writing the forged record into the file with sqlite3 breaks the chain; storing it through
    the ledger's own API keeps the chain valid, and then evaluation recomputes alpha_per_rate
    from confidence_level and family_size and refuses the mismatch, before anything is spent.
    A record with confidence_level 0.5 and the original alpha is refused the same way.
    """
    assert preregister(capsys, workdir, "table.csv", "protocol.toml", "audit.ledger", "rec.json") == 0
    ledger = cf.Ledger(workdir / "audit.ledger")
    fingerprint = json.loads((workdir / "rec.json").read_text())["data"]["reserved_fingerprint"]
    for edit in ({"alpha_per_rate": 0.45}, {"confidence_level": 0.5}):
        text, digest = _forge(workdir / "rec.json", edit)
        (workdir / "forged.json").write_text(text)
        copy = workdir / "forged.ledger"
        shutil.copy(workdir / "audit.ledger", copy)
        _sql(copy, f"INSERT INTO chain VALUES (99, 'preregistration', '{{}}', x'', '', '{digest}')")
        code, _, err = evaluate(capsys, workdir, "forged.json", "table.csv", "forged.ledger", "out")
        assert code == 2 and "cannot be trusted" in err
        ledger.record_preregistration(digest, "forged", fingerprint, text)
        code, _, err = evaluate(capsys, workdir, "forged.json", "table.csv", "audit.ledger", "out")
        assert code == 2 and "recomputed, never trusted" in err and "alpha_per_rate" in err
        assert ledger.entry(fingerprint) is None  # nothing was spent
    assert evaluate(capsys, workdir, "rec.json", "table.csv", "audit.ledger", "out")[0] == 0


def test_door_8_selftest_flags_a_seal_that_spends_ten_times_its_share(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Door 8: ``rate_level(10 * alpha)`` in the seal branch fails ``certify selftest --tight-only``."""
    import certify.protocol.lifecycle as lifecycle

    real = lifecycle.rate_level
    monkeypatch.setattr(lifecycle, "rate_level", lambda alpha: real(10 * alpha))
    code, out, _ = cli(capsys, "selftest", "--tight-only", "--quick")
    assert code == 1 and "mechanism route, evaluation 1" in out and "SEALED PATH DIFFERS" in out
    monkeypatch.setattr(lifecycle, "rate_level", real)
    code, out, _ = cli(capsys, "selftest", "--tight-only", "--quick", "--inject", "mechanism_level")
    assert code == 1 and out.count("FLAGGED") == 2


def reseeding(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """A Laplace mechanism that ignores rng and reseeds itself."""
    own = np.random.default_rng(0)
    out: NDArray[np.float64] = x[0] + own.laplace(0.0, 1.0, size=n)
    return out


def one_draw(x: NDArray[np.float64], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """A Laplace mechanism that draws one noise value per invocation for all n calls."""
    out: NDArray[np.float64] = np.full(n, x[0] + rng.laplace(0.0, 1.0))
    return out


def test_door_9_a_mechanism_that_reseeds_itself_is_refused(tmp_path: Path) -> None:
    """Door 9: a mechanism ignoring rng (reseeding itself) is refused before anything is sealed."""
    ledger = cf.Ledger(tmp_path / "m.ledger")
    with pytest.raises(cf.MechanismError, match=r"does not draw its randomness from the rng it is given"):
        cf.audit_mechanism(reseeding, 0.0, 1.0, calls=20_000, ledger=ledger, progress=False)
    with pytest.raises(cf.MechanismError, match=r"one random value per invocation"):
        cf.audit_mechanism(one_draw, 0.0, 1.0, calls=20_000, ledger=ledger, progress=False)
    assert ledger.length == 1 and ledger.entries() == []  # nothing numbered, sealed or spent


MODULE = """
import numpy as np

def huge(x, n, rng):
    return (2**53 + (rng.random(n) < 0.5)).astype(np.int64) + int(x[0])

def laplace(x, n, rng):
    return x[0] + rng.laplace(0.0, 1.0, size=n)
"""


@pytest.mark.parametrize(
    "attack",
    [
        "huge seed",
        "edited evaluation number",
        "64-bit evaluation number",
        "version-1 row 'abc'",
        "non-UTF-8 record",
        "non-UTF-8 results",
        "integers beyond 2**53",
        "equal-valued inputs",
        "claim delta alone",
    ],
)
def test_door_10_each_raw_traceback_is_a_specific_error(
    attack: str, workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Door 10: inputs that used to end in a raw traceback (exit 1) exit 2 with a specific error."""
    (workdir / "door_mechanisms.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(workdir))
    sys.modules.pop("door_mechanisms", None)
    ledger = str(workdir / "m.ledger")
    audit = ["audit-mechanism", "door_mechanisms:laplace", "--calls", "20000", "--ledger", ledger, "--json"]
    pair = ["--input-a", "0", "--input-b", "1", "--seed", str(seed % 2**31)]
    if attack == "huge seed":
        code, _, err = cli(capsys, *audit, *pair[:4], "--seed", "9223372036854775808")
        assert "seed must be an integer in [0, 2**63 - 1]" in err
    elif attack in ("edited evaluation number", "64-bit evaluation number"):
        assert cli(capsys, *audit, *pair)[0] == 0
        value = '"abc"' if attack == "edited evaluation number" else str(2**63 - 1)
        _sql(
            Path(ledger),
            f"UPDATE chain SET body = replace(body, '\"evaluation\":1', '\"evaluation\":{value}')",
        )
        code, _, err = cli(capsys, *audit, *pair[:4], "--seed", str(seed % 2**31 + 1))
        assert "cannot be trusted" in err and "edited" in err
    elif attack == "version-1 row 'abc'":
        _version_1_ledger(Path(ledger), "abc")
        code, _, err = cli(capsys, *audit, *pair)
        assert "cannot be migrated" in err and "'abc'" in err
    elif attack == "non-UTF-8 record":
        (workdir / "bad.json").write_bytes(b"\xff\xfe not text")
        code, _, err = evaluate(capsys, workdir, "bad.json", "table.csv", "audit.ledger", "out")
        assert "is not UTF-8 text" in err
    elif attack == "non-UTF-8 results":
        (workdir / "results.csv").write_bytes(b"\xff\xfe not text")
        code, _, err = cli(capsys, "report", str(workdir / "results.csv"), "--out", str(workdir / "rep"))
        assert "is not UTF-8 text" in err
    elif attack == "integers beyond 2**53":
        code, _, err = cli(
            capsys, "audit-mechanism", "door_mechanisms:huge", "--calls", "20000", "--ledger", ledger, *pair
        )
        assert "beyond 2**53" in err and "would merge" in err
    elif attack == "equal-valued inputs":
        code, _, err = cli(capsys, *audit, "--input-a", "[1, 1, 1]", "--input-b", "[1.0, 1.0, 1.0]")
        assert "hold the same values" in err
    else:
        code, _, err = cli(capsys, *audit, *pair, "--claim-delta", "0.001")
        assert "--claim-delta belongs to a point claim: give --claim-epsilon with it" in err
        assert cf.Ledger(ledger).entries() == []  # refused before any call
    assert code == 2, err


def _version_1_ledger(path: Path, evaluation: object) -> None:
    """A version-1 ledger file (before the chain) holding one mechanism evaluation numbered ``evaluation``."""
    con = sqlite3.connect(path)
    con.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE preregistrations (record_sha256 TEXT PRIMARY KEY, protocol_name TEXT NOT NULL,
            reserved_fingerprint TEXT NOT NULL, sealed_at TEXT NOT NULL, record_json TEXT NOT NULL);
        CREATE TABLE spent (reserved_fingerprint TEXT PRIMARY KEY, record_sha256 TEXT NOT NULL,
            protocol_name TEXT NOT NULL, spent_at TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
            status TEXT NOT NULL, completed_at TEXT, outcome_json TEXT);
        CREATE TABLE spent_rows (row_key TEXT PRIMARY KEY, reserved_fingerprint TEXT NOT NULL);
        CREATE TABLE mechanism_evaluations (mechanism TEXT NOT NULL, evaluation INTEGER NOT NULL,
            reserved_fingerprint TEXT NOT NULL, inputs_json TEXT NOT NULL, seed INTEGER NOT NULL,
            calls INTEGER NOT NULL, confidence_level REAL NOT NULL, alpha_spent REAL NOT NULL,
            sealed_at TEXT NOT NULL, PRIMARY KEY (mechanism, evaluation));
        INSERT INTO meta VALUES ('format', 'certify-ledger'), ('version', '1');
        """
    )
    con.execute(
        "INSERT INTO mechanism_evaluations VALUES ('m', ?, 'fp', '[]', 0, 100, 0.95, ?, '2026-01-01')",
        (evaluation, 0.05 * 6 / np.pi**2),
    )
    con.commit()
    con.close()
