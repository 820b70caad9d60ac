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
    with pytest.raises(LedgerError, match="not a certify ledger of version 1"):
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
