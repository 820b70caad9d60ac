"""Creating a ledger file in one step, and migrating a version-1 ledger to the hash chain."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from certify.errors import LedgerError
from certify.protocol.chain import KEY_BYTES, canonical, entry_hash

__all__ = ["create_ledger_file", "migrate_v1"]

Row = tuple[int, str, str, bytes, str, str]


def create_ledger_file(path: Path, schema: Sequence[str], genesis: Row, fmt: str, version: str) -> None:
    """Write a complete new ledger beside ``path`` and hard-link it into place.

    The file appears at ``path`` whole or not at all, so no process ever sees a half-made
    ledger (an empty file is refused, never taken for a new ledger). If another process
    creates ``path`` first, its ledger is kept and this one discarded. Where the file system
    has no hard links, the bytes are copied into a file created exclusively.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LedgerError(
            f"cannot create the ledger folder {str(path.parent)!r}: {exc.strerror or exc}."
        ) from exc
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.new")
    try:
        try:
            con = sqlite3.connect(tmp, isolation_level=None)
            try:
                con.execute("PRAGMA synchronous = FULL")
                con.execute("BEGIN IMMEDIATE")
                for statement in schema:
                    con.execute(statement)
                con.execute("INSERT INTO chain VALUES (?, ?, ?, ?, ?, ?)", genesis)
                ledger_id = json.loads(genesis[2])["ledger_id"]
                con.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [
                        ("format", fmt),
                        ("version", version),
                        ("ledger_id", ledger_id),
                        ("entries", "1"),
                        ("head", genesis[5]),
                    ],
                )
                con.execute("COMMIT")
            finally:
                con.close()
        except (sqlite3.Error, OSError) as exc:
            raise LedgerError(
                f"cannot create the ledger {str(path)!r} ({exc}). Check that the folder is writable."
            ) from exc
        try:
            os.link(tmp, path)
        except FileExistsError:
            return  # another process created the ledger first: that one is used
        except OSError:
            _copy_exclusive(tmp, path)
        _sync_folder(path.parent)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-journal")):
            try:
                leftover.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                pass


def _copy_exclusive(source: Path, target: Path) -> None:
    """Copy a finished ledger into a new file that must not exist yet (no hard links here)."""
    data = source.read_bytes()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return
    except OSError as exc:
        raise LedgerError(f"cannot create the ledger {str(target)!r}: {exc.strerror or exc}.") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _sync_folder(folder: Path) -> None:
    """Make a new name in ``folder`` durable (where the platform allows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- version 1 -> 2 ------------------------------------------------------------------------------

_ORDER = {"evaluation": 0, "preregistration": 1, "spend": 2, "complete": 3, "failure": 3}


def _refuse(where: str, what: str) -> LedgerError:
    """A LedgerError for a version-1 ledger that cannot be migrated."""
    return LedgerError(
        f"the version-1 ledger {where} cannot be migrated to the hash chain: {what}. Rows were "
        "changed outside certify, so it is refused as it is (nothing was changed in the file)."
    )


def _text(where: str, table: str, name: str, value: object) -> str:
    """A text column, or refusal."""
    if not isinstance(value, str):
        raise _refuse(where, f"{table}.{name} holds {value!r:.40}, not text")
    return value


def _integer(where: str, table: str, name: str, value: object) -> int:
    """An integer column within 64 bits, or refusal."""
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
        raise _refuse(where, f"{table}.{name} holds {value!r:.40}, not a 64-bit integer")
    return value


def _number(where: str, table: str, name: str, value: object) -> float:
    """A real column, or refusal."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(where, f"{table}.{name} holds {value!r:.40}, not a number")
    return float(value)


def migrate_v1(
    con: sqlite3.Connection, where: str, schema: Sequence[str], genesis: Row, version: str
) -> None:
    """Turn the rows of a version-1 ledger into a hash chain (inside the caller's transaction).

    Each pre-registration, numbered mechanism evaluation, spent split and recorded outcome
    becomes one entry, in the order of their times; the genesis entry states that the chain
    begins with a migration. The version-1 tables are dropped. Rows of impossible types
    (an evaluation numbered ``'abc'``, a number beyond 64 bits) or evaluations of a mechanism
    not numbered 1, 2, ... are refused, as is a row key that is not 32 hex digits.
    """
    tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    events: list[tuple[str, int, int, str, dict[str, Any], bytes]] = []
    for sha, name, fp, sealed_at, text in con.execute(
        "SELECT record_sha256, protocol_name, reserved_fingerprint, sealed_at, record_json "
        "FROM preregistrations"
    ):
        t = "preregistrations"
        body: dict[str, Any] = {
            "record_sha256": _text(where, t, "record_sha256", sha),
            "protocol_name": _text(where, t, "protocol_name", name),
            "reserved_fingerprint": _text(where, t, "reserved_fingerprint", fp),
            "sealed_at": _text(where, t, "sealed_at", sealed_at),
        }
        events.append(
            (
                body["sealed_at"],
                _ORDER["preregistration"],
                0,
                "preregistration",
                body,
                _text(where, t, "record_json", text).encode("utf-8"),
            )
        )
    if "mechanism_evaluations" in tables:
        numbers: dict[str, list[int]] = {}
        for row in con.execute("SELECT * FROM mechanism_evaluations ORDER BY mechanism, evaluation"):
            t = "mechanism_evaluations"
            mechanism, k, fp, inputs, seed, calls, level, alpha, sealed_at = row
            body = {
                "mechanism": _text(where, t, "mechanism", mechanism),
                "evaluation": _integer(where, t, "evaluation", k),
                "reserved_fingerprint": _text(where, t, "reserved_fingerprint", fp),
                "inputs_json": _text(where, t, "inputs_json", inputs),
                "seed": _integer(where, t, "seed", seed),
                "calls": _integer(where, t, "calls", calls),
                "confidence_level": _number(where, t, "confidence_level", level),
                "alpha_spent": _number(where, t, "alpha_spent", alpha),
                "sealed_at": _text(where, t, "sealed_at", sealed_at),
            }
            numbers.setdefault(body["mechanism"], []).append(body["evaluation"])
            events.append(
                (body["sealed_at"], _ORDER["evaluation"], body["evaluation"], "evaluation", body, b"")
            )
        for mechanism, ks in numbers.items():
            if ks != list(range(1, len(ks) + 1)):
                raise _refuse(where, f"the evaluations of {mechanism!r} are numbered {ks[:8]}, not 1, 2, ...")
    keys: dict[str, list[bytes]] = {}
    for key, fp in con.execute("SELECT row_key, reserved_fingerprint FROM spent_rows ORDER BY rowid"):
        try:
            raw = bytes.fromhex(_text(where, "spent_rows", "row_key", key))
        except ValueError:
            raise _refuse(where, f"spent_rows holds the row key {key!r:.40}, not hex digits") from None
        if len(raw) != KEY_BYTES:
            raise _refuse(where, f"spent_rows holds the row key {key!r:.40} of the wrong length")
        keys.setdefault(_text(where, "spent_rows", "reserved_fingerprint", fp), []).append(raw)
    spent = con.execute(
        "SELECT reserved_fingerprint, record_sha256, protocol_name, spent_at, pid, host, status, "
        "completed_at, outcome_json FROM spent"
    ).fetchall()
    for fp, sha, name, spent_at, pid, host, status, completed_at, outcome in spent:
        t = "spent"
        own = sorted(set(keys.pop(_text(where, t, "reserved_fingerprint", fp), [])))
        body = {
            "reserved_fingerprint": fp,
            "record_sha256": _text(where, t, "record_sha256", sha),
            "protocol_name": _text(where, t, "protocol_name", name),
            "spent_at": _text(where, t, "spent_at", spent_at),
            "pid": _integer(where, t, "pid", pid),
            "host": _text(where, t, "host", host),
            "reserved_rows": len(own),
            "development_rows": 0,
        }
        events.append((spent_at, _ORDER["spend"], 0, "spend", body, b"".join(own)))
        if status in ("completed", "failed"):
            done = _text(where, t, "completed_at", completed_at)
            text = "" if outcome is None else _text(where, t, "outcome_json", outcome)
            kind = "complete" if status == "completed" else "failure"
            events.append(
                (
                    max(done, spent_at),
                    _ORDER[kind],
                    0,
                    kind,
                    {"reserved_fingerprint": fp, "completed_at": done},
                    text.encode("utf-8"),
                )
            )
        elif status != "started":
            raise _refuse(where, f"spent.status holds {status!r:.40}")
    if keys:
        raise _refuse(where, f"spent_rows holds keys of {len(keys)} split(s) that spent does not list")
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    for table in ("preregistrations", "spent", "spent_rows", "mechanism_evaluations"):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute(schema[1])
    con.execute("INSERT INTO chain VALUES (?, ?, ?, ?, ?, ?)", genesis)
    prev, sequence = genesis[5], 1
    for _, _, _, kind, body, payload in events:
        sequence += 1
        text = canonical(body)
        digest = entry_hash(sequence, kind, prev, text, payload)
        con.execute(
            "INSERT INTO chain VALUES (?, ?, ?, ?, ?, ?)", (sequence, kind, text, payload, prev, digest)
        )
        prev = digest
    ledger_id = json.loads(genesis[2])["ledger_id"]
    con.executemany(
        "INSERT OR REPLACE INTO meta VALUES (?, ?)",
        [("version", version), ("ledger_id", ledger_id), ("entries", str(sequence)), ("head", prev)],
    )
