"""The ledger: an SQLite file holding an append-only hash chain of everything that was sealed and spent.

Every pre-registration, numbered mechanism evaluation, spent reserved split (with the keys of its
rows) and evaluation outcome is one entry of a hash chain (:mod:`certify.protocol.chain`). Each
write replays and checks the whole chain inside the same ``IMMEDIATE`` transaction that appends
to it, so a ledger whose entries were deleted, edited, reordered or cut short is refused before
anything is read from reserved data, and what a ledger refuses it refuses to every process.

The module is one class, :class:`Ledger`, with its entry types and messages: every write
path must replay the chain in the same transaction, which is easiest to keep true in one file.
"""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import json
import math
import os
import socket
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.errors import LedgerError, ParameterError, ReservedSplitReusedError
from certify.protocol.chain import (
    GENESIS_PREV,
    KEY_BYTES,
    ChainState,
    Slot,
    Spend,
    body_problem,
    canonical,
    entry_hash,
    key_words,
    pack_keys,
    replay,
)

__all__ = ["EXPORT_FORMAT", "Ledger", "LedgerEntry", "MechanismEvaluation", "evaluation_share"]

_FORMAT: Final = "certify-ledger"
_VERSION: Final = "2"
EXPORT_FORMAT: Final = "certify-ledger-export"
"""The ``format`` of a ledger export (:meth:`Ledger.export`)."""
_SCHEMA: Final = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE chain (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, body TEXT NOT NULL,"
    " payload BLOB NOT NULL, prev TEXT NOT NULL, hash TEXT NOT NULL)",
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
    sequence : int
        The ledger entry that numbered it.
    head : str
        That entry's hash.
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
    sequence: int = 0
    head: str = ""


def _now() -> str:
    """Current UTC time, ISO 8601 with microseconds."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


@final
@attrs.frozen
class LedgerEntry:
    """Who spent reserved data, when, and where that sits in the ledger's chain.

    Attributes
    ----------
    reserved_fingerprint : str
        The spent split (or mechanism stream).
    record_sha256 : str
        The pre-registration record whose evaluation spent it.
    protocol_name : str
        That protocol's name.
    spent_at : str
        UTC time the data were marked spent (before any reserved row was read).
    pid, host : int, str
        The evaluating process.
    status : str
        ``"started"`` until the evaluation finished, then ``"completed"``; ``"failed"`` when it
        stopped on an error (a mechanism that raised, say); a crash leaves ``"started"``. The
        data stay spent in every case.
    completed_at : str or None
        UTC time the evaluation finished.
    outcome_json : str or None
        The evaluation's outcome as JSON.
    ledger_id : str
        The ledger's identity (fixed when it was created).
    sequence : int
        The chain entry that spent the data.
    head : str
        That entry's hash: it commits to the ledger's whole history up to the spend.
    evaluation : int
        The number of this evaluation among the ledger's evaluations (1, 2, ...).
    outcome_sequence, outcome_head : int or None, str or None
        The entry that recorded the outcome, and its hash.
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
    ledger_id: str = ""
    sequence: int = 0
    head: str = ""
    evaluation: int = 0
    outcome_sequence: int | None = None
    outcome_head: str | None = None


def _entry(state: ChainState, spend: Spend) -> LedgerEntry:
    """The public view of a spend."""
    return LedgerEntry(
        reserved_fingerprint=spend.reserved_fingerprint,
        record_sha256=spend.record_sha256,
        protocol_name=spend.protocol_name,
        spent_at=spend.spent_at,
        pid=spend.pid,
        host=spend.host,
        status=spend.status,
        completed_at=spend.completed_at,
        outcome_json=spend.outcome_json,
        ledger_id=state.ledger_id,
        sequence=spend.sequence,
        head=spend.head,
        evaluation=spend.evaluation,
        outcome_sequence=spend.outcome_sequence,
        outcome_head=spend.outcome_head,
    )


def _evaluation(slot: Slot) -> MechanismEvaluation:
    """The public view of a numbered mechanism evaluation."""
    return MechanismEvaluation(
        mechanism=slot.mechanism,
        evaluation=slot.evaluation,
        reserved_fingerprint=slot.reserved_fingerprint,
        inputs_json=slot.inputs_json,
        seed=slot.seed,
        calls=slot.calls,
        confidence_level=slot.confidence_level,
        alpha_spent=slot.alpha_spent,
        sealed_at=slot.sealed_at,
        sequence=slot.sequence,
        head=slot.head,
    )


def as_row_keys(keys: Sequence[str] | NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Row keys as an ``(n, 16)`` byte array; keys given as text are hashed (SHA-256, 16 bytes)."""
    if isinstance(keys, np.ndarray):
        if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != KEY_BYTES:
            raise LedgerError(
                f"row keys must be an (n, {KEY_BYTES}) uint8 array; got {keys.dtype} {keys.shape}."
            )
        return keys
    out = np.empty((len(keys), KEY_BYTES), dtype=np.uint8)
    for i, key in enumerate(keys):
        out[i] = np.frombuffer(hashlib.sha256(str(key).encode("utf-8")).digest()[:KEY_BYTES], dtype=np.uint8)
    return out


@final
class Ledger:
    """An SQLite file holding the hash chain of pre-registrations, evaluations and spent data.

    Parameters
    ----------
    path : str or PathLike
        The ledger file. A missing file is created (with its folder), complete, in one step;
        an existing file must be a certify ledger whose chain checks out, and is never
        recreated, emptied or repaired.
    timeout : float, default 60.0
        Seconds to wait for another process holding the write lock.

    Raises
    ------
    LedgerError
        If the file exists but is empty, not a certify ledger, damaged, or its chain does not
        check out (entries deleted, edited, reordered or cut short); or if it cannot be created.

    Notes
    -----
    Each write (a seal, a spend, an outcome) is one ``IMMEDIATE`` transaction that replays the
    whole chain, checks it, and appends one entry linked to the last. Reserved data are marked
    spent by such an entry before any reserved row is read: among processes racing on the same
    data exactly one spend succeeds, and a crash after it leaves the data spent.

    What a local file cannot prove: a ledger replaced as a whole (deleted and started anew, or
    an earlier copy put back) is a valid ledger of its own. Every report therefore carries the
    ledger's identity and the entry and hash of its evaluation, and :func:`certify.verify`
    checks a report against a ledger (or its published :meth:`export`); see docs/trust.md.

    A version-1 ledger (before the chain) is migrated on first open: its rows become the first
    entries of a chain whose genesis entry says so; what happened to the file before cannot be
    checked.

    Examples
    --------
    >>> import tempfile, os
    >>> ledger = Ledger(os.path.join(tempfile.mkdtemp(), "audit.ledger"))
    >>> ledger.entry("0" * 64) is None, ledger.length
    (True, 1)
    """

    __slots__ = ("_ledger_id", "path", "timeout")

    path: Path
    timeout: float
    _ledger_id: str

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.timeout = float(timeout)
        self._ledger_id = ""
        if self.path.is_dir():
            raise LedgerError(f"ledger path {str(self.path)!r} is a folder; give a file path.")
        if not self.path.exists():
            self._create()
        elif self.path.stat().st_size == 0:
            raise LedgerError(
                f"the ledger {str(self.path)!r} is an empty file. An existing ledger is never "
                "recreated: an emptied ledger would forget every spent split. If this file never "
                "held a ledger, delete it or give another path; if it did, its history is gone "
                "from this file (reports it issued still verify against its published export)."
            )
        self._ledger_id = self._open().ledger_id

    def __reduce__(self) -> tuple[object, ...]:
        return (Ledger, (str(self.path),), {"timeout": self.timeout})

    def __setstate__(self, state: dict[str, float]) -> None:
        self.timeout = state["timeout"]

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    @property
    def ledger_id(self) -> str:
        """The ledger's identity, fixed by its first entry (a copy of the file shares it)."""
        return self._ledger_id

    @property
    def length(self) -> int:
        """Number of entries in the chain (checked)."""
        return self._read().length

    # -- files and connections --------------------------------------------------------------

    def _create(self) -> None:
        """Create a complete new ledger at a temporary name and link it into place atomically."""
        from certify.protocol._ledger_files import create_ledger_file

        create_ledger_file(self.path, _SCHEMA, _genesis_row(), _FORMAT, _VERSION)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection in autocommit mode with a busy timeout; rolled back on error, closed."""
        try:
            con = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open the ledger {str(self.path)!r}: {exc}.") from exc
        try:
            con.execute("PRAGMA synchronous = FULL")
            yield con
        except BaseException as exc:
            if con.in_transaction:
                try:
                    con.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if isinstance(exc, sqlite3.DatabaseError):
                raise LedgerError(
                    f"the ledger {str(self.path)!r} cannot be used ({exc}). Nothing was read from "
                    "any reserved split. Check that the location is writable and that no other "
                    "program holds the file; a damaged ledger is never recreated."
                ) from exc
            raise
        finally:
            con.close()

    def _open(self) -> ChainState:
        """Check the file's format (migrating a version-1 ledger) and its chain."""
        with self._connect() as con:
            version = self._version(con)
            if version == "1":
                from certify.protocol._ledger_files import migrate_v1

                con.execute("BEGIN IMMEDIATE")
                if self._version(con) == "1":
                    migrate_v1(con, str(self.path), _SCHEMA, _genesis_row(migrated_from=1), _VERSION)
                con.execute("COMMIT")
            con.execute("BEGIN")
            state = self._replay(con)
            con.execute("COMMIT")
        return state

    def _version(self, con: sqlite3.Connection) -> str:
        """The format version of the open database, or LedgerError if it is not a ledger."""
        try:
            rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise LedgerError(
                f"{str(self.path)!r} is not a readable certify ledger ({exc}). It is never "
                "recreated: give the path of a certify ledger, or a new path."
            ) from exc
        version = rows.get("version")
        if rows.get("format") != _FORMAT or version not in ("1", _VERSION):
            raise LedgerError(
                f"{str(self.path)!r} is not a certify ledger of version {_VERSION} (or 1, which "
                f"is migrated) (found {rows.get('format')!r}, version {version!r})."
            )
        return str(version)

    def _replay(self, con: sqlite3.Connection) -> ChainState:
        """Replay and check the chain of the open database (inside a transaction)."""
        where = repr(str(self.path))
        try:
            meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("format") != _FORMAT or meta.get("version") != _VERSION:
                raise LedgerError(
                    f"{where} is no longer a certify ledger of version {_VERSION} (found "
                    f"{meta.get('format')!r}, version {meta.get('version')!r}): the file was replaced."
                )
            try:
                entries = int(meta["entries"])
            except (KeyError, ValueError):
                raise LedgerError(
                    f"the ledger {where} cannot be trusted: its record of how many entries it holds "
                    f"is missing or malformed ({meta.get('entries')!r:.40}). It is refused."
                ) from None
            rows = con.execute("SELECT seq, kind, body, payload, prev, hash FROM chain ORDER BY seq")
            try:
                state = replay(rows, where, entries=entries, head=meta.get("head"))
            finally:  # an unfinished statement would keep the file locked while an error is held
                rows.close()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(
                f"{where} is not a readable certify ledger ({exc}). It is never recreated: give "
                "the path of a certify ledger, or a new path."
            ) from exc
        except (TypeError, ValueError) as exc:  # a column of the wrong type
            raise LedgerError(
                f"the ledger {where} cannot be trusted: a stored entry has a value of the wrong "
                f"type ({exc}). It was changed outside certify and is refused."
            ) from exc
        if meta.get("ledger_id") != state.ledger_id:
            raise LedgerError(
                f"the ledger {where} cannot be trusted: its identity {meta.get('ledger_id')!r:.40} "
                f"differs from its first entry's ({state.ledger_id[:12]}). It is refused."
            )
        if self._ledger_id and state.ledger_id != self._ledger_id:
            raise LedgerError(
                f"the ledger {where} was replaced by another ledger since it was opened (identity "
                f"{self._ledger_id[:12]}, now {state.ledger_id[:12]}). Nothing was read or spent."
            )
        return state

    @classmethod
    def _inspect(cls, path: str | os.PathLike[str]) -> ChainState:
        """Replay the chain of a ledger file read-only: nothing is created, migrated or written."""
        self = object.__new__(cls)
        self.path, self.timeout, self._ledger_id = Path(path), 5.0, ""
        try:
            con = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=self.timeout)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open the ledger {str(self.path)!r}: {exc}.") from exc
        try:
            if self._version(con) == "1":
                raise LedgerError(
                    f"{str(self.path)!r} is a version-1 ledger, from before the hash chain: it has no "
                    "chain to check. Open it once with certify.Ledger (which migrates it) and publish "
                    "its export from then on."
                )
            con.execute("BEGIN")
            state = self._replay(con)
            con.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"the ledger {str(self.path)!r} cannot be read ({exc}).") from exc
        finally:
            con.close()
        return state

    def _read(self) -> ChainState:
        """The checked chain, read in one transaction (a consistent snapshot)."""
        with self._connect() as con:
            con.execute("BEGIN")
            state = self._replay(con)
            con.execute("COMMIT")
        return state

    @contextmanager
    def _write(self) -> Iterator[tuple[sqlite3.Connection, ChainState]]:
        """An ``IMMEDIATE`` transaction with the checked chain; committed when the block ends."""
        with self._connect() as con:
            con.execute("BEGIN IMMEDIATE")
            state = self._replay(con)
            yield con, state
            con.execute("COMMIT")

    @staticmethod
    def _append(
        con: sqlite3.Connection, state: ChainState, kind: str, body: dict[str, Any], payload: bytes = b""
    ) -> tuple[int, str]:
        """Append one entry after the checked head; its number and hash."""
        sequence = state.length + 1
        try:
            text = canonical(body)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"cannot record this {kind} in the ledger ({exc}).") from exc
        problem = body_problem(kind, text)[1]  # never write what a replay would refuse
        if problem:
            raise ParameterError(f"cannot record this {kind} in the ledger: it {problem}.")
        digest = entry_hash(sequence, kind, state.head, text, payload)
        con.execute(
            "INSERT INTO chain VALUES (?, ?, ?, ?, ?, ?)", (sequence, kind, text, payload, state.head, digest)
        )
        con.execute(
            "INSERT OR REPLACE INTO meta VALUES ('entries', ?), ('head', ?)", (str(sequence), digest)
        )
        state.length, state.head = sequence, digest
        return sequence, digest

    # -- writes ---------------------------------------------------------------------------------

    def record_preregistration(
        self, record_sha256: str, protocol_name: str, reserved_fingerprint: str, record_json: str
    ) -> None:
        """Append a sealed protocol's pre-registration record (idempotent for the same record).

        Raises
        ------
        LedgerError
            If the ledger cannot be written or its chain does not check out.
        """
        with self._write() as (con, state):
            if record_sha256 in state.preregistrations:
                return
            body = {
                "record_sha256": record_sha256,
                "protocol_name": protocol_name,
                "reserved_fingerprint": reserved_fingerprint,
                "sealed_at": _now(),
            }
            self._append(con, state, "preregistration", body, record_json.encode("utf-8"))

    def spend(
        self,
        reserved_fingerprint: str,
        record_sha256: str,
        protocol_name: str,
        row_keys: Sequence[str] | NDArray[np.uint8] = (),
        development_keys: Sequence[str] | NDArray[np.uint8] = (),
    ) -> LedgerEntry:
        """Mark reserved data spent, with the keys of its rows, atomically; one caller ever succeeds.

        Parameters
        ----------
        reserved_fingerprint : str
            The reserved split or stream.
        record_sha256, protocol_name : str
            The record and protocol whose evaluation spends it.
        row_keys : (n, 16) uint8 array or sequence of str
            Content keys of the reserved rows (text keys are hashed). Data sharing any row with
            earlier spent data (reserved or development rows) is refused.
        development_keys : (n, 16) uint8 array or sequence of str
            Content keys of the development rows the tests were chosen on: recorded so that
            these rows can never be reserved later.

        Returns
        -------
        LedgerEntry
            The new entry, committed to disk before this returns.

        Raises
        ------
        ReservedSplitReusedError
            If the data were spent before, or share rows with data used by an earlier
            evaluation; the message names who spent it and when.
        LedgerError
            If the ledger cannot be written or its chain does not check out (nothing was read
            from the reserved data then).
        """
        reserved = pack_keys(as_row_keys(row_keys))
        development = pack_keys(as_row_keys(development_keys))
        with self._write() as (con, state):
            _refuse_spent(state, reserved_fingerprint, _words(reserved))
            body: dict[str, Any] = {
                "reserved_fingerprint": reserved_fingerprint,
                "record_sha256": record_sha256,
                "protocol_name": protocol_name,
                "spent_at": _now(),
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "reserved_rows": len(reserved) // KEY_BYTES,
                "development_rows": len(development) // KEY_BYTES,
            }
            sequence, head = self._append(con, state, "spend", body, reserved + development)
        return LedgerEntry(
            reserved_fingerprint=reserved_fingerprint,
            record_sha256=record_sha256,
            protocol_name=protocol_name,
            spent_at=body["spent_at"],
            pid=body["pid"],
            host=body["host"],
            status="started",
            completed_at=None,
            outcome_json=None,
            ledger_id=state.ledger_id,
            sequence=sequence,
            head=head,
            evaluation=len(state.spends) + 1,
        )

    def check_unspent(
        self, reserved_fingerprint: str, row_keys: Sequence[str] | NDArray[np.uint8] = ()
    ) -> None:
        """Raise ReservedSplitReusedError if the data were spent or share rows with used data.

        The same check :meth:`spend` makes atomically; sealing makes it early, so that no test
        is fitted for data that can no longer be evaluated.

        Raises
        ------
        ReservedSplitReusedError
            Naming the earlier evaluation (protocol, record, ledger entry, time).
        LedgerError
            If the chain does not check out.
        """
        state = self._read()
        _refuse_spent(state, reserved_fingerprint, key_words(as_row_keys(row_keys)))

    def complete(self, reserved_fingerprint: str, outcome_json: str) -> LedgerEntry:
        """Record the outcome of the evaluation that spent ``reserved_fingerprint``; its entry."""
        return self._outcome("complete", reserved_fingerprint, outcome_json)

    def fail(self, reserved_fingerprint: str, message: str) -> LedgerEntry:
        """Record that the evaluation of ``reserved_fingerprint`` failed (it stays spent); its entry."""
        return self._outcome("failure", reserved_fingerprint, json.dumps({"error": message}))

    def _outcome(self, kind: str, reserved_fingerprint: str, outcome_json: str) -> LedgerEntry:
        """Append the outcome of a started evaluation."""
        with self._write() as (con, state):
            spend = state.spends.get(reserved_fingerprint)
            if spend is None or spend.status != "started":
                why = "were never spent" if spend is None else f"already have an outcome ({spend.status})"
                raise LedgerError(
                    f"reserved data {reserved_fingerprint[:12]} {why}; an outcome is recorded once, "
                    "after the spend."
                )
            completed_at = _now()
            body = {"reserved_fingerprint": reserved_fingerprint, "completed_at": completed_at}
            sequence, head = self._append(con, state, kind, body, outcome_json.encode("utf-8"))
            spend.status = "completed" if kind == "complete" else "failed"
            spend.completed_at, spend.outcome_json = completed_at, outcome_json
            spend.outcome_sequence, spend.outcome_head = sequence, head
        return _entry(state, spend)

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

        The count comes from the checked chain and the new entry is appended in the same
        ``IMMEDIATE`` transaction, so concurrent audits of one mechanism get distinct numbers
        and deleting earlier evaluations is refused rather than counted from 1 again. The slot
        is taken at sealing, before any reserved call: an evaluation that is sealed but never
        run still counts (conservative).

        Returns
        -------
        MechanismEvaluation
            With ``evaluation = k`` (1 + earlier evaluations of the identity) and
            ``alpha_spent = (1 - confidence_level) * evaluation_share(k)``.

        Raises
        ------
        ReservedSplitReusedError
            If this reserved stream already has a slot, or an earlier evaluation of
            ``mechanism`` used ``seed`` (a rerun repeats its development calls and its choices).
        LedgerError
            If the ledger cannot be written or its chain does not check out.
        """
        with self._write() as (con, state):
            taken = state.slots.get(reserved_fingerprint)
            if taken is not None:
                raise ReservedSplitReusedError(
                    f"reserved stream {reserved_fingerprint[:12]} was already sealed as evaluation "
                    f"{taken.evaluation} of {taken.mechanism!r}; the same reserved calls are "
                    "evaluated once, ever. Use another seed for fresh calls."
                )
            same_seed = _same_seed(state, mechanism, seed)
            if same_seed is not None:
                raise ReservedSplitReusedError(_same_seed_message(same_seed))
            k = len(state.evaluations.get(mechanism, ())) + 1
            body: dict[str, Any] = {
                "mechanism": mechanism,
                "evaluation": k,
                "reserved_fingerprint": reserved_fingerprint,
                "inputs_json": inputs_json,
                "seed": int(seed),
                "calls": int(calls),
                "confidence_level": float(confidence_level),
                "alpha_spent": (1.0 - float(confidence_level)) * evaluation_share(k),
                "sealed_at": _now(),
            }
            sequence, head = self._append(con, state, "evaluation", body)
        return MechanismEvaluation(**body, sequence=sequence, head=head)

    # -- reads -----------------------------------------------------------------------------------

    def evaluations(self, mechanism: str) -> list[MechanismEvaluation]:
        """Every numbered evaluation of a mechanism identity, oldest first."""
        return [_evaluation(s) for s in self._read().evaluations.get(mechanism, ())]

    def check_new_seed(self, mechanism: str, seed: int) -> None:
        """Refuse a seed that an earlier evaluation of ``mechanism`` in this ledger used.

        Called before an audit's development calls, so that a rerun is refused before it costs
        anything; :meth:`reserve_evaluation` checks again atomically when the slot is taken.

        Raises
        ------
        ReservedSplitReusedError
            If an evaluation of ``mechanism`` with ``seed`` is in the ledger.
        """
        same_seed = _same_seed(self._read(), mechanism, seed)
        if same_seed is not None:
            raise ReservedSplitReusedError(_same_seed_message(same_seed))

    def evaluation_of(self, reserved_fingerprint: str) -> MechanismEvaluation | None:
        """The numbered evaluation that sealed a mechanism's reserved stream, or None."""
        slot = self._read().slots.get(reserved_fingerprint)
        return None if slot is None else _evaluation(slot)

    def entry(self, reserved_fingerprint: str) -> LedgerEntry | None:
        """The entry that spent ``reserved_fingerprint``, or None if it is unspent."""
        state = self._read()
        spend = state.spends.get(reserved_fingerprint)
        return None if spend is None else _entry(state, spend)

    def entries(self) -> list[LedgerEntry]:
        """Every spend, oldest first."""
        state = self._read()
        return [_entry(state, s) for s in state.spends.values()]

    def overlap(self, row_keys: Sequence[str] | NDArray[np.uint8]) -> LedgerEntry | None:
        """The entry of earlier spent data sharing a row (reserved or development) with ``row_keys``."""
        state = self._read()
        shared = state.overlap(key_words(as_row_keys(row_keys)))
        return None if shared is None else _entry(state, shared[0])

    def preregistration(self, record_sha256: str) -> str | None:
        """The stored JSON of a pre-registration record, or None."""
        found = self._read().preregistrations.get(record_sha256)
        return None if found is None else found.record_json

    def head(self) -> dict[str, Any]:
        """The checked chain's head: ``{"ledger_id", "entries", "head"}`` (what a record states)."""
        state = self._read()
        return {"ledger_id": state.ledger_id, "entries": state.length, "head": state.head}

    def export(self) -> str:
        """The whole chain as JSON text, for publication beside the reports it issued.

        Returns
        -------
        str
            ``{"format": "certify-ledger-export", "version": 2, "ledger_id": ..., "entries":
            [{"sequence", "kind", "prev", "hash", "body", "payload"}, ...]}`` with each body as a
            JSON object and each payload in base64. :func:`certify.verify` accepts it in place of
            the ledger file; it carries nothing but what the chain holds (records, row keys and
            outcomes).

        Raises
        ------
        LedgerError
            If the chain does not check out.
        """
        with self._connect() as con:
            con.execute("BEGIN")
            state = self._replay(con)
            rows = con.execute(
                "SELECT seq, kind, body, payload, prev, hash FROM chain ORDER BY seq"
            ).fetchall()
            con.execute("COMMIT")
        return json.dumps(
            {
                "format": EXPORT_FORMAT,
                "version": int(_VERSION),
                "ledger_id": state.ledger_id,
                "entries": [
                    {
                        "sequence": seq,
                        "kind": kind,
                        "prev": prev,
                        "hash": digest,
                        "body": json.loads(body),
                        "payload": base64.b64encode(bytes(payload)).decode("ascii"),
                    }
                    for seq, kind, body, payload, prev, digest in rows
                ],
            },
            indent=1,
            sort_keys=True,
        )



def _same_seed(state: ChainState, mechanism: str, seed: int) -> Slot | None:
    """The earliest evaluation of ``mechanism`` that used ``seed``, or None."""
    return next((s for s in state.evaluations.get(mechanism, ()) if s.seed == int(seed)), None)


def _same_seed_message(slot: Slot) -> str:
    """Why a rerun with an evaluated seed is refused, and what to do instead."""
    return (
        f"reserved split of {slot.mechanism!r} with seed {slot.seed} was already evaluated: "
        f"evaluation {slot.evaluation} (ledger entry {slot.sequence}, sealed {slot.sealed_at}). "
        "A rerun with the same seed repeats the same calls and choices and is refused; an audit "
        "with another seed is the next evaluation of this mechanism, certified at a higher level."
    )


def _refuse_spent(state: ChainState, fingerprint: str, words: NDArray[np.uint64]) -> None:
    """Raise ReservedSplitReusedError if ``fingerprint`` was spent or ``words`` share used rows."""
    previous = state.spends.get(fingerprint)
    if previous is not None:
        raise ReservedSplitReusedError(_reuse_message(fingerprint, _entry(state, previous)))
    shared = state.overlap(words)
    if shared is not None:
        raise ReservedSplitReusedError(_overlap_message(_entry(state, shared[0]), shared[1]))


def _words(packed: bytes) -> NDArray[np.uint64]:
    """Packed row keys as ``(n, 2)`` words."""
    return np.frombuffer(packed, dtype=">u8").reshape(-1, 2).astype(np.uint64)


def _genesis_row(migrated_from: int | None = None) -> tuple[int, str, str, bytes, str, str]:
    """A new ledger's first entry."""
    body = canonical(
        {
            "format": _FORMAT,
            "version": int(_VERSION),
            "ledger_id": uuid.uuid4().hex,
            "created_at": _now(),
            "migrated_from": migrated_from,
        }
    )
    return (1, "genesis", body, b"", GENESIS_PREV, entry_hash(1, "genesis", GENESIS_PREV, body, b""))


def _overlap_message(previous: LedgerEntry, shared: int) -> str:
    """The message of a ReservedSplitReusedError for rows used by an earlier evaluation."""
    return (
        f"{shared} reserved row(s) were already used in an evaluation by protocol "
        f"{previous.protocol_name!r} (record {previous.record_sha256[:12]}, ledger entry "
        f"{previous.sequence}) at {previous.spent_at}, in another split of the same data. Rows are "
        "recognized by their content, whatever their labels, the other identities, the split seed "
        "or the protocol's options: re-splitting, renaming or re-cleaning does not make them "
        "fresh. Reserve new data for a new test."
    )


def _reuse_message(fingerprint: str, previous: LedgerEntry | None) -> str:
    """The message of a ReservedSplitReusedError."""
    if previous is None:
        return f"reserved split {fingerprint[:12]} was already spent."
    return (
        f"reserved split {fingerprint[:12]} was already evaluated by protocol "
        f"{previous.protocol_name!r} (record {previous.record_sha256[:12]}) at "
        f"{previous.spent_at} (pid {previous.pid} on {previous.host}, {previous.status}; ledger "
        f"entry {previous.sequence}). A reserved split can be evaluated once, ever: reserve fresh "
        "data for a new test."
    )
