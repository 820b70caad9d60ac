"""Tests for the SQLite spent-split ledger."""

from __future__ import annotations

import os
import pickle
import sqlite3
import stat
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

import certify as cf
from certify.errors import LedgerError, ReservedSplitReusedError

from .conftest import TableFactory

FP = "f" * 64


def test_new_ledger_is_created_with_its_folder(tmp_path: Path) -> None:
    """A missing ledger file (and folder) is created and starts empty."""
    ledger = cf.Ledger(tmp_path / "deep" / "er" / "audit.ledger")
    assert ledger.path.exists() and ledger.entries() == [] and ledger.entry(FP) is None
    assert cf.Ledger(ledger.path).entries() == []


def test_spend_once_then_refuse(ledger: cf.Ledger) -> None:
    """The first spend succeeds; the second raises ReservedSplitReusedError naming who and when."""
    entry = ledger.spend(FP, "a" * 64, "first-audit")
    assert (entry.status, entry.pid, entry.protocol_name) == ("started", os.getpid(), "first-audit")
    with pytest.raises(ReservedSplitReusedError) as info:
        ledger.spend(FP, "b" * 64, "second-audit")
    message = str(info.value)
    assert "'first-audit'" in message and entry.spent_at in message and "started" in message
    assert ledger.entry(FP) == entry


def test_complete_records_the_outcome(ledger: cf.Ledger) -> None:
    """complete() marks the entry completed with its outcome; the split stays spent."""
    ledger.spend(FP, "a" * 64, "audit")
    ledger.complete(FP, '{"ok": true}')
    entry = ledger.entry(FP)
    assert entry is not None and entry.status == "completed"
    assert entry.outcome_json == '{"ok": true}' and entry.completed_at is not None
    with pytest.raises(ReservedSplitReusedError, match="completed"):
        ledger.spend(FP, "c" * 64, "again")


def test_preregistrations_are_stored_idempotently(ledger: cf.Ledger) -> None:
    """A record is stored once by hash and read back verbatim."""
    ledger.record_preregistration("r" * 64, "audit", FP, '{"x": 1}')
    ledger.record_preregistration("r" * 64, "audit", FP, '{"x": 1}')
    assert ledger.preregistration("r" * 64) == '{"x": 1}'
    assert ledger.preregistration("s" * 64) is None


def test_entries_survive_reopening(tmp_path: Path) -> None:
    """Spent splits are on disk: a new Ledger object on the same file sees them."""
    path = tmp_path / "audit.ledger"
    cf.Ledger(path).spend(FP, "a" * 64, "audit")
    assert [e.reserved_fingerprint for e in cf.Ledger(path).entries()] == [FP]


def test_ledger_pickles_by_path(ledger: cf.Ledger) -> None:
    """A pickled ledger points at the same file with the same timeout."""
    ledger.spend(FP, "a" * 64, "audit")
    back = pickle.loads(pickle.dumps(ledger))
    assert back.path == ledger.path and back.timeout == ledger.timeout
    assert back.entry(FP) is not None


def test_corrupted_file_is_refused_and_untouched(tmp_path: Path) -> None:
    """A corrupted ledger raises LedgerError and is neither modified nor recreated."""
    path = tmp_path / "audit.ledger"
    garbage = b"this is not an SQLite database, it is garbage\x00" * 200
    path.write_bytes(garbage)
    before = path.stat()
    with pytest.raises(LedgerError, match="not a database"):
        cf.Ledger(path)
    after = path.stat()
    assert path.read_bytes() == garbage
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.ledger"]


def test_truncated_ledger_is_refused(tmp_path: Path) -> None:
    """A real ledger cut short (a damaged copy) raises LedgerError and is not recreated."""
    path = tmp_path / "audit.ledger"
    cf.Ledger(path).spend(FP, "a" * 64, "audit")
    data = path.read_bytes()
    path.write_bytes(data[:100] + b"\x00" * (len(data) - 100))
    damaged = path.read_bytes()
    with pytest.raises(LedgerError):
        cf.Ledger(path).entries()
    assert path.read_bytes() == damaged


def test_non_ledger_sqlite_file_is_refused(tmp_path: Path) -> None:
    """An SQLite database that is not a certify ledger raises LedgerError."""
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE people (name TEXT)")
    con.close()
    with pytest.raises(LedgerError, match="not a readable certify ledger"):
        cf.Ledger(path)


def test_wrong_format_marker_is_refused(tmp_path: Path) -> None:
    """A database with the ledger's tables but another format marker raises LedgerError."""
    path = tmp_path / "audit.ledger"
    cf.Ledger(path)
    with sqlite3.connect(path) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'version'")
    con.close()
    with pytest.raises(LedgerError, match=r"not a certify ledger of version 2 \(or 1, which is migrated\)"):
        cf.Ledger(path)


def test_folder_path_is_refused(tmp_path: Path) -> None:
    """A folder is not a ledger file."""
    with pytest.raises(LedgerError, match="is a folder"):
        cf.Ledger(tmp_path)


def chmod_is_effective(tmp_path: Path) -> bool:
    """Whether removing write permission actually stops this process (it does not for root)."""
    probe = tmp_path / "probe"
    probe.mkdir()
    probe.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        return not os.access(probe, os.W_OK)
    finally:
        probe.chmod(stat.S_IRWXU)


def test_unwritable_location_is_refused(tmp_path: Path) -> None:
    """A ledger that cannot be created raises LedgerError (read-only folder, or a path under a file)."""
    if chmod_is_effective(tmp_path):
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            with pytest.raises(LedgerError):
                cf.Ledger(folder / "audit.ledger")
        finally:
            folder.chmod(stat.S_IRWXU)
    else:  # running as root: permissions do not stop us, but nothing can live under a file
        blocker = tmp_path / "a-file"
        blocker.write_text("x")
        with pytest.raises(LedgerError, match="cannot create the ledger folder"):
            cf.Ledger(blocker / "sub" / "audit.ledger")
        with pytest.raises(LedgerError):
            cf.Ledger("/dev/null/audit.ledger")


def sealed_with_counter(
    table: cf.EmbeddingTable, ledger: cf.Ledger, calls: list[int]
) -> cf.SealedProtocol:
    """A sealed one-test protocol whose score function records every call after sealing."""

    def score(x: NDArray[np.float64]) -> NDArray[np.float64]:
        calls.append(len(x))
        out: NDArray[np.float64] = x[:, 1] - x[:, 0]
        return out

    split = table.split(0.5, seed=0)
    protocol = cf.Protocol(name="counted")
    protocol.register(cf.FixedTest.from_score(score, split.development, cf.Pair("id0", "id1"), name="diff"))
    sealed = protocol.seal(split.reserved, ledger=ledger)
    calls.clear()
    return sealed


def test_unusable_ledger_fails_before_any_reserved_row_is_read(
    tmp_path: Path, make_table: TableFactory
) -> None:
    """If the ledger cannot be written at evaluation, LedgerError is raised and no row was scored."""
    calls: list[int] = []
    path = tmp_path / "audit.ledger"
    ledger = cf.Ledger(path, timeout=0.2)
    sealed = sealed_with_counter(make_table((20, 20)), ledger, calls)
    if chmod_is_effective(tmp_path):
        path.chmod(stat.S_IRUSR)
        tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            with pytest.raises(LedgerError):
                sealed.evaluate()
        finally:
            tmp_path.chmod(stat.S_IRWXU)
            path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    else:  # running as root: another connection holds the write lock past the timeout
        blocker = sqlite3.connect(path, isolation_level=None)
        try:
            blocker.execute("BEGIN EXCLUSIVE")
            with pytest.raises(LedgerError, match="cannot be used"):
                sealed.evaluate()
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
    assert calls == []
    assert ledger.entry(sealed.reserved_fingerprint) is None


# -- the hash chain --------------------------------------------------------------------------------


def test_every_write_is_a_linked_entry(ledger: cf.Ledger) -> None:
    """Pre-registration, spend and outcome each append one entry linked to the one before."""
    assert ledger.length == 1 and ledger.head()["entries"] == 1
    ledger.record_preregistration("r" * 64, "audit", FP, '{"x": 1}')
    spent = ledger.spend(FP, "r" * 64, "audit", ["k1", "k2"], ["k3"])
    done = ledger.complete(FP, '{"ok": true}')
    state = ledger._read()
    assert state.kinds == ["genesis", "preregistration", "spend", "complete"]
    assert (spent.sequence, spent.head, spent.evaluation) == (3, state.hashes[2], 1)
    assert (done.outcome_sequence, done.outcome_head) == (4, state.hashes[3])
    assert spent.ledger_id == ledger.ledger_id == state.ledger_id
    assert ledger.head() == {"ledger_id": ledger.ledger_id, "entries": 4, "head": state.hashes[3]}
    with pytest.raises(LedgerError, match="already have an outcome"):
        ledger.fail(FP, "late")


def test_development_rows_of_an_evaluation_cannot_be_reserved_later(ledger: cf.Ledger) -> None:
    """Keys of rows a spent protocol chose on are refused as reserved rows, and also as data spent twice."""
    ledger.spend(FP, "r" * 64, "first", ["a", "b"], ["c", "d"])
    with pytest.raises(ReservedSplitReusedError, match=r"1 reserved row\(s\) were already used"):
        ledger.spend("e" * 64, "s" * 64, "second", ["c", "z"])
    assert ledger.overlap(["d"]) is not None and ledger.overlap(["y"]) is None
    ledger.spend("e" * 64, "s" * 64, "second", ["z"], ["a"])  # development rows may be reused


def test_a_value_the_chain_could_not_replay_is_never_written(ledger: cf.Ledger) -> None:
    """A seed beyond 64 bits is refused at the write, so the ledger never holds an entry it would refuse."""
    with pytest.raises(cf.ParameterError, match="beyond 64-bit integers"):
        ledger.reserve_evaluation("m", FP, "[]", 2**64, 10, 0.95)
    assert ledger.length == 1 and ledger.evaluations("m") == []


def test_export_replays_and_verifies(ledger: cf.Ledger, tmp_path: Path) -> None:
    """The export holds the whole chain: it replays to the same head, and an edited export is refused."""
    import json

    ledger.record_preregistration("r" * 64, "audit", FP, '{"x": 1}')
    ledger.spend(FP, "r" * 64, "audit", ["k1"])
    text = ledger.export()
    data = json.loads(text)
    assert data["format"] == "certify-ledger-export" and len(data["entries"]) == 3
    (tmp_path / "export.json").write_text(text)
    outcome = cf.verify([], tmp_path / "export.json")
    assert outcome.verified and outcome.entries == 3 and outcome.ledger_id == ledger.ledger_id
    data["entries"][1]["body"]["protocol_name"] = "someone else"
    (tmp_path / "edited.json").write_text(json.dumps(data))
    edited = cf.verify([], tmp_path / "edited.json")
    assert not edited.verified and "entry 2 (preregistration) does not match its hash" in edited.problems[0]


def test_concurrent_creation_gives_one_ledger(tmp_path: Path) -> None:
    """Processes creating the same new ledger at once all open the one that was linked into place."""
    import multiprocessing as mp

    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    path = tmp_path / "new" / "audit.ledger"
    with ctx.Pool(6) as pool:
        ids = pool.map(_ledger_id, [str(path)] * 12)
    assert len(set(ids)) == 1 and cf.Ledger(path).ledger_id == ids[0]
    assert sorted(p.name for p in path.parent.iterdir()) == ["audit.ledger"]  # no leftovers


def _ledger_id(path: str) -> str:
    """Open (or create) a ledger; its identity."""
    return cf.Ledger(path).ledger_id


def _v1_ledger(path: Path) -> None:
    """A version-1 ledger file (the schema before the chain) with two evaluations, a spend and keys."""
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
        INSERT INTO preregistrations VALUES ('r1', 'old', 'fp1', '2026-01-01T00:00:01', '{}');
        INSERT INTO spent VALUES ('fp1', 'r1', 'old', '2026-01-01T00:00:02', 7, 'h', 'completed',
            '2026-01-01T00:00:03', '{"certificates": []}');
        INSERT INTO spent_rows VALUES ('00112233445566778899aabbccddeeff', 'fp1');
        """
    )
    for k in (1, 2):
        con.execute(
            "INSERT INTO mechanism_evaluations VALUES ('m', ?, ?, '[]', 0, 100, 0.95, ?, ?)",
            (k, f"stream{k}", 0.05 * 6 / (np.pi**2 * k * k), f"2026-01-02T00:00:0{k}"),
        )
    con.commit()
    con.close()


def test_version_1_ledger_is_migrated_with_its_history(tmp_path: Path) -> None:
    """A version-1 ledger becomes a chain on first open: spends, keys and evaluation counts carry over."""
    path = tmp_path / "old.ledger"
    _v1_ledger(path)
    ledger = cf.Ledger(path)
    state = ledger._read()
    assert state.migrated_from == 1 and state.length == 6  # genesis, 2 evaluations, record, spend, outcome
    assert [e.evaluation for e in ledger.evaluations("m")] == [1, 2]
    with pytest.raises(ReservedSplitReusedError, match="seed 0 was already evaluated"):
        ledger.reserve_evaluation("m", "stream3", "[]", 0, 100, 0.95)  # the seeds carry over too
    slot = ledger.reserve_evaluation("m", "stream3", "[]", 1, 100, 0.95)
    assert slot.evaluation == 3  # the count goes on, it does not restart
    entry = ledger.entry("fp1")
    assert entry is not None and entry.status == "completed" and entry.pid == 7
    with pytest.raises(ReservedSplitReusedError):
        ledger.spend("fp1", "r2", "again")
    keys = np.frombuffer(bytes.fromhex("00112233445566778899aabbccddeeff"), dtype=np.uint8).reshape(1, 16)
    with pytest.raises(ReservedSplitReusedError, match="already used"):
        ledger.spend("fp2", "r2", "again", keys)
    con = sqlite3.connect(path)
    tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    con.close()
    assert tables == {"meta", "chain"}


def test_version_1_ledger_with_edited_rows_is_not_migrated(tmp_path: Path) -> None:
    """Evaluations numbered 1, 3 or a row key that is not hex: the version-1 file is refused unchanged."""
    for statement, message in (
        ("UPDATE mechanism_evaluations SET evaluation = 3 WHERE evaluation = 2", r"numbered \[1, 3\]"),
        ("UPDATE spent_rows SET row_key = 'zz'", "not hex digits"),
        ("DELETE FROM spent", "that spent does not list"),
    ):
        path = tmp_path / "old.ledger"
        path.unlink(missing_ok=True)
        _v1_ledger(path)
        con = sqlite3.connect(path)
        con.execute(statement)
        con.commit()
        con.close()
        before = path.read_bytes()
        with pytest.raises(LedgerError, match=message):
            cf.Ledger(path)
        assert path.read_bytes() == before


def test_verify_reads_a_ledger_file_without_writing(tmp_path: Path) -> None:
    """verify() on a ledger path never creates, migrates or modifies it."""
    with pytest.raises(cf.DataError, match="no ledger or ledger export"):
        cf.verify([], tmp_path / "missing.ledger")
    assert not (tmp_path / "missing.ledger").exists()
    path = tmp_path / "old.ledger"
    _v1_ledger(path)
    before = path.read_bytes()
    outcome = cf.verify([], path)
    assert not outcome.verified and "version-1 ledger" in outcome.problems[0]
    assert path.read_bytes() == before
