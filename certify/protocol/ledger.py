"""The spent-split ledger: an SQLite file that lets each reserved split be evaluated once, ever."""

from __future__ import annotations

import datetime as _dt
import math
import os
import socket
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, final

import attrs

from certify.errors import LedgerError, ReservedSplitReusedError

__all__ = ["Ledger", "LedgerEntry", "MechanismEvaluation", "evaluation_share"]

_FORMAT: Final = "certify-ledger"
_VERSION: Final = "1"
_SCHEMA: Final = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS preregistrations ("
    " record_sha256 TEXT PRIMARY KEY, protocol_name TEXT NOT NULL,"
    " reserved_fingerprint TEXT NOT NULL, sealed_at TEXT NOT NULL, record_json TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS spent ("
    " reserved_fingerprint TEXT PRIMARY KEY, record_sha256 TEXT NOT NULL,"
    " protocol_name TEXT NOT NULL, spent_at TEXT NOT NULL, pid INTEGER NOT NULL,"
    " host TEXT NOT NULL, status TEXT NOT NULL, completed_at TEXT, outcome_json TEXT)",
    "CREATE TABLE IF NOT EXISTS spent_rows ("
    " row_key TEXT PRIMARY KEY, reserved_fingerprint TEXT NOT NULL)",
)


_EVALUATIONS: Final = (
    "CREATE TABLE IF NOT EXISTS mechanism_evaluations ("
    " mechanism TEXT NOT NULL, evaluation INTEGER NOT NULL, reserved_fingerprint TEXT NOT NULL,"
    " inputs_json TEXT NOT NULL, seed INTEGER NOT NULL, calls INTEGER NOT NULL,"
    " confidence_level REAL NOT NULL, alpha_spent REAL NOT NULL, sealed_at TEXT NOT NULL,"
    " PRIMARY KEY (mechanism, evaluation))"
)


def evaluation_share(k: int) -> float:
    """Share of a claim's error budget spent by its ``k``-th evaluation: ``6 / (pi^2 k^2)``.

    The shares sum to 1 over ``k = 1, 2, ...``, so evaluations that each hold at level
    ``1 - share(k) * alpha`` all hold together at level ``1 - alpha`` (union bound).

    Examples
    --------
    >>> round(evaluation_share(1), 4), round(evaluation_share(2), 4)
    (0.6079, 0.152)
    """
    if k < 1:
        raise LedgerError(f"evaluations are numbered from 1; got {k!r}.")
    return 6.0 / (math.pi**2 * k * k)


@final
@attrs.frozen
class MechanismEvaluation:
    """One reserved evaluation of a mechanism, as the ledger counts it.

    Attributes
    ----------
    mechanism : str
        The mechanism identity (suite name, or ``module:qualname`` with a source hash).
    evaluation : int
        Its number among all evaluations of that identity in this ledger (1, 2, ...).
    reserved_fingerprint : str
        The reserved stream it spent.
    inputs_json : str
        The candidate input pairs, as JSON.
    seed, calls : int
        The audit's seed and budget.
    confidence_level : float
        The level stated for the claim (all evaluations of it together).
    alpha_spent : float
        The error probability this evaluation spends: ``(1 - confidence_level) * share(k)``.
    sealed_at : str
        UTC time of sealing.
    """

    mechanism: str
    evaluation: int
    reserved_fingerprint: str
    inputs_json: str
    seed: int
    calls: int
    confidence_level: float
    alpha_spent: float
    sealed_at: str


def _now() -> str:
    """Current UTC time, ISO 8601 with microseconds."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


@final
@attrs.frozen
class LedgerEntry:
    """Who spent a reserved split, and when.

    Attributes
    ----------
    reserved_fingerprint : str
        The spent split.
    record_sha256 : str
        The pre-registration record whose evaluation spent it.
    protocol_name : str
        That protocol's name.
    spent_at : str
        UTC time the split was marked spent (before any reserved row was read).
    pid, host : int, str
        The evaluating process.
    status : str
        ``"started"`` until the evaluation finished, then ``"completed"``; ``"failed"`` when it
        stopped on an error (a mechanism that raised, say); a crash leaves ``"started"``. The
        split stays spent in every case.
    completed_at : str or None
        UTC time the evaluation finished.
    outcome_json : str or None
        The evaluation's outcome as JSON.
    """

    reserved_fingerprint: str
    record_sha256: str
    protocol_name: str
    spent_at: str
    pid: int
    host: str
    status: str
    completed_at: str | None
    outcome_json: str | None


@final
class Ledger:
    """An SQLite file recording pre-registrations and spent reserved splits.

    Parameters
    ----------
    path : str or PathLike
        The ledger file. A missing file is created (with its folder); an existing file must be a
        certify ledger and is never silently recreated.
    timeout : float, default 60.0
        Seconds to wait for another process holding the write lock.

    Raises
    ------
    LedgerError
        If the file exists but is not a readable certify ledger, or cannot be created.

    Notes
    -----
    Marking a split spent is one committed ``INSERT`` on a primary key inside an ``IMMEDIATE``
    transaction, done before any reserved row is read: among processes racing on one split,
    exactly one insert succeeds; a crash after it leaves the split spent. The guarantee covers
    evaluations that use the same ledger file: keep one ledger per audit and do not delete it.

    Examples
    --------
    >>> import tempfile, os
    >>> ledger = Ledger(os.path.join(tempfile.mkdtemp(), "audit.ledger"))
    >>> ledger.entry("0" * 64) is None
    True
    """

    __slots__ = ("path", "timeout")

    path: Path
    timeout: float

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.timeout = float(timeout)
        if self.path.is_dir():
            raise LedgerError(f"ledger path {str(self.path)!r} is a folder; give a file path.")
        existed = self.path.exists() and self.path.stat().st_size > 0
        if not existed:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LedgerError(
                    f"cannot create the ledger folder {str(self.path.parent)!r}: {exc.strerror}."
                ) from exc
        with self._connect() as con:
            if existed:
                self._check_format(con)
            else:
                con.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA:
                    con.execute(statement)
                con.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('format', ?), ('version', ?)",
                    (_FORMAT, _VERSION),
                )
                con.execute("COMMIT")
                self._check_format(con)

    def __reduce__(self) -> tuple[object, ...]:
        return (Ledger, (str(self.path),), {"timeout": self.timeout})

    def __setstate__(self, state: dict[str, float]) -> None:
        self.timeout = state["timeout"]

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode with a busy timeout; closed afterwards."""
        try:
            con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open the ledger {str(self.path)!r}: {exc}.") from exc
        try:
            con.execute("PRAGMA synchronous = FULL")
            yield con
        except sqlite3.DatabaseError as exc:
            if con.in_transaction:
                try:
                    con.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if isinstance(exc, sqlite3.IntegrityError):
                raise
            raise LedgerError(
                f"the ledger {str(self.path)!r} cannot be used ({exc}). Nothing was read from "
                "any reserved split. Check that the location is writable; a corrupted ledger is "
                "never recreated automatically: restore it from a backup or investigate."
            ) from exc
        finally:
            con.close()

    def _check_format(self, con: sqlite3.Connection) -> None:
        """Raise LedgerError unless the open database is a certify ledger of a known version."""
        try:
            rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
            con.execute("SELECT count(*) FROM spent").fetchone()
            con.execute("SELECT count(*) FROM preregistrations").fetchone()
            con.execute("SELECT count(*) FROM spent_rows").fetchone()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(
                f"{str(self.path)!r} is not a readable certify ledger ({exc}). It is not "
                "recreated automatically: restore it from a backup or use another path."
            ) from exc
        if rows.get("format") != _FORMAT or rows.get("version") != _VERSION:
            raise LedgerError(
                f"{str(self.path)!r} is not a certify ledger of version {_VERSION} "
                f"(found {rows!r})."
            )

    def record_preregistration(
        self, record_sha256: str, protocol_name: str, reserved_fingerprint: str, record_json: str
    ) -> None:
        """Store a sealed protocol's pre-registration record (idempotent for the same record).

        Raises
        ------
        LedgerError
            If the ledger cannot be written.
        """
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            con.execute(
                "INSERT OR IGNORE INTO preregistrations VALUES (?, ?, ?, ?, ?)",
                (record_sha256, protocol_name, reserved_fingerprint, _now(), record_json),
            )
            con.execute("COMMIT")

    def spend(
        self,
        reserved_fingerprint: str,
        record_sha256: str,
        protocol_name: str,
        row_keys: Sequence[str] = (),
    ) -> LedgerEntry:
        """Mark a reserved split (and each of its rows) spent, atomically; one caller ever succeeds.

        ``row_keys`` identify the split's rows by content; a split that shares any row with an
        earlier spent split (for example another split of the same table) is refused too.

        Returns
        -------
        LedgerEntry
            The new entry, committed to disk before this returns.

        Raises
        ------
        ReservedSplitReusedError
            If the split was spent before; the message names who spent it and when.
        LedgerError
            If the ledger cannot be written (nothing was read from the reserved split).
        """
        entry = LedgerEntry(
            reserved_fingerprint=reserved_fingerprint,
            record_sha256=record_sha256,
            protocol_name=protocol_name,
            spent_at=_now(),
            pid=os.getpid(),
            host=socket.gethostname(),
            status="started",
            completed_at=None,
            outcome_json=None,
        )
        try:
            with self._connect() as con:
                con.execute("BEGIN IMMEDIATE")
                con.execute(
                    "INSERT INTO spent VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                    (
                        entry.reserved_fingerprint,
                        entry.record_sha256,
                        entry.protocol_name,
                        entry.spent_at,
                        entry.pid,
                        entry.host,
                        entry.status,
                    ),
                )
                con.executemany(
                    "INSERT INTO spent_rows VALUES (?, ?)",
                    ((key, reserved_fingerprint) for key in row_keys),
                )
                con.execute("COMMIT")
        except sqlite3.IntegrityError:
            previous = self.entry(reserved_fingerprint)
            if previous is None:
                previous = self.overlap(row_keys)
                raise ReservedSplitReusedError(_overlap_message(previous)) from None
            raise ReservedSplitReusedError(_reuse_message(reserved_fingerprint, previous)) from None
        return entry

    def overlap(self, row_keys: Sequence[str]) -> LedgerEntry | None:
        """The entry of an earlier spent split sharing a row with ``row_keys``, or None."""
        with self._connect() as con:
            for start in range(0, len(row_keys), 500):
                chunk = list(row_keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                row = con.execute(
                    f"SELECT reserved_fingerprint FROM spent_rows WHERE row_key IN ({marks}) LIMIT 1",
                    chunk,
                ).fetchone()
                if row is not None:
                    hit = con.execute(
                        "SELECT * FROM spent WHERE reserved_fingerprint = ?", (row[0],)
                    ).fetchone()
                    return None if hit is None else LedgerEntry(*hit)
        return None

    def complete(self, reserved_fingerprint: str, outcome_json: str) -> None:
        """Record the outcome of an evaluation that spent ``reserved_fingerprint``."""
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            con.execute(
                "UPDATE spent SET status = 'completed', completed_at = ?, outcome_json = ? "
                "WHERE reserved_fingerprint = ?",
                (_now(), outcome_json, reserved_fingerprint),
            )
            con.execute("COMMIT")

    def fail(self, reserved_fingerprint: str, message: str) -> None:
        """Mark the evaluation that spent ``reserved_fingerprint`` as failed (it stays spent)."""
        import json

        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            con.execute(
                "UPDATE spent SET status = 'failed', completed_at = ?, outcome_json = ? "
                "WHERE reserved_fingerprint = ?",
                (_now(), json.dumps({"error": message}), reserved_fingerprint),
            )
            con.execute("COMMIT")

    def reserve_evaluation(
        self,
        mechanism: str,
        reserved_fingerprint: str,
        inputs_json: str,
        seed: int,
        calls: int,
        confidence_level: float,
    ) -> MechanismEvaluation:
        """Number a new reserved evaluation of ``mechanism`` and fix the error it may spend.

        The count and the insert happen in one ``IMMEDIATE`` transaction, so concurrent audits of
        one mechanism get distinct numbers. The slot is taken at sealing, before any reserved
        call: an evaluation that is sealed but never run still counts (conservative).

        Returns
        -------
        MechanismEvaluation
            With ``evaluation = k`` (1 + earlier evaluations of the identity) and
            ``alpha_spent = (1 - confidence_level) * evaluation_share(k)``.

        Raises
        ------
        ReservedSplitReusedError
            If this reserved stream already has a slot.
        LedgerError
            If the ledger cannot be written.
        """
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            con.execute(_EVALUATIONS)
            taken = con.execute(
                "SELECT mechanism, evaluation FROM mechanism_evaluations WHERE reserved_fingerprint = ?",
                (reserved_fingerprint,),
            ).fetchone()
            if taken is not None:
                con.execute("ROLLBACK")
                raise ReservedSplitReusedError(
                    f"reserved stream {reserved_fingerprint[:12]} was already sealed as evaluation "
                    f"{taken[1]} of {taken[0]!r}; the same reserved calls are evaluated once, ever. "
                    "Use another seed or budget for fresh calls."
                )
            (last,) = con.execute(
                "SELECT COALESCE(MAX(evaluation), 0) FROM mechanism_evaluations WHERE mechanism = ?",
                (mechanism,),
            ).fetchone()
            k = int(last) + 1
            slot = MechanismEvaluation(
                mechanism=mechanism,
                evaluation=k,
                reserved_fingerprint=reserved_fingerprint,
                inputs_json=inputs_json,
                seed=int(seed),
                calls=int(calls),
                confidence_level=float(confidence_level),
                alpha_spent=(1.0 - float(confidence_level)) * evaluation_share(k),
                sealed_at=_now(),
            )
            con.execute(
                "INSERT INTO mechanism_evaluations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                attrs.astuple(slot),
            )
            con.execute("COMMIT")
        return slot

    def evaluations(self, mechanism: str) -> list[MechanismEvaluation]:
        """Every numbered evaluation of a mechanism identity, oldest first."""
        with self._connect() as con:
            exists = con.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mechanism_evaluations'"
            ).fetchone()
            if exists is None:
                return []
            rows = con.execute(
                "SELECT * FROM mechanism_evaluations WHERE mechanism = ? ORDER BY evaluation",
                (mechanism,),
            ).fetchall()
        return [MechanismEvaluation(*r) for r in rows]

    def entry(self, reserved_fingerprint: str) -> LedgerEntry | None:
        """The entry that spent ``reserved_fingerprint``, or None if it is unspent."""
        with self._connect() as con:
            row = con.execute(
                "SELECT * FROM spent WHERE reserved_fingerprint = ?", (reserved_fingerprint,)
            ).fetchone()
        return None if row is None else LedgerEntry(*row)

    def entries(self) -> list[LedgerEntry]:
        """Every spent split, oldest first."""
        with self._connect() as con:
            rows = con.execute("SELECT * FROM spent ORDER BY spent_at").fetchall()
        return [LedgerEntry(*r) for r in rows]

    def preregistration(self, record_sha256: str) -> str | None:
        """The stored JSON of a pre-registration record, or None."""
        with self._connect() as con:
            row = con.execute(
                "SELECT record_json FROM preregistrations WHERE record_sha256 = ?",
                (record_sha256,),
            ).fetchone()
        return None if row is None else str(row[0])


def _overlap_message(previous: LedgerEntry | None) -> str:
    """The message of a ReservedSplitReusedError for rows shared with an earlier split."""
    who = (
        ""
        if previous is None
        else f" by protocol {previous.protocol_name!r} (record {previous.record_sha256[:12]}) at "
        f"{previous.spent_at}"
    )
    return (
        f"some reserved rows were already evaluated{who}, in another split of the same data. "
        "Re-splitting data does not make them fresh: reserve new data for a new test."
    )


def _reuse_message(fingerprint: str, previous: LedgerEntry | None) -> str:
    """The message of a ReservedSplitReusedError."""
    if previous is None:
        return f"reserved split {fingerprint[:12]} was already spent."
    return (
        f"reserved split {fingerprint[:12]} was already evaluated by protocol "
        f"{previous.protocol_name!r} (record {previous.record_sha256[:12]}) at "
        f"{previous.spent_at} (pid {previous.pid} on {previous.host}, {previous.status}). "
        "A reserved split can be evaluated once, ever: reserve fresh data for a new test."
    )
