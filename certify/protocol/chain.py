"""The ledger's hash chain: entries that each commit to the one before, and their replay.

A ledger is a sequence of entries numbered 1, 2, ...; entry 1 (``genesis``) names the ledger.
Every entry holds a kind, a JSON body, a binary payload and the hash of the entry before it; its
own hash is SHA-256 over all of these (:func:`entry_hash`), so changing, removing or reordering
any entry changes every later link. :func:`replay` checks a chain and rebuilds from it everything
the ledger knows: pre-registrations, numbered mechanism evaluations, spent reserved data with the
keys of their rows, and the outcome of each evaluation. The SQLite file
(:class:`~certify.Ledger`) and a published export (:func:`certify.verify`) are read the same way.

Kinds, bodies and payloads:

- ``genesis``: ``format``, ``version``, ``ledger_id``, ``created_at``, ``migrated_from``; no payload.
- ``preregistration``: ``record_sha256``, ``protocol_name``, ``reserved_fingerprint``,
  ``sealed_at``; payload the record's JSON text.
- ``evaluation``: a numbered evaluation of a mechanism (the fields of
  :class:`~certify.protocol.ledger.MechanismEvaluation`); no payload.
- ``spend``: ``reserved_fingerprint``, ``record_sha256``, ``protocol_name``, ``spent_at``,
  ``pid``, ``host``, ``reserved_rows``, ``development_rows``; payload the 16-byte keys of the
  reserved rows, then of the development rows, each part sorted and without repeats.
- ``complete`` and ``failure``: ``reserved_fingerprint``, ``completed_at``; payload the outcome
  (JSON text).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, Final, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.errors import LedgerError

__all__ = [
    "GENESIS_PREV",
    "KEY_BYTES",
    "ChainState",
    "Preregistered",
    "Slot",
    "Spend",
    "canonical",
    "entry_hash",
    "pack_keys",
    "replay",
]

GENESIS_PREV: Final = "0" * 64
"""The link of entry 1 (there is no entry before it)."""
KEY_BYTES: Final = 16
"""Bytes of one row key (the first 128 bits of a SHA-256)."""
_DOMAIN: Final = b"certify.ledger.entry.v1\x00"

Row = tuple[int, str, str, bytes, str, str]
"""A stored entry: ``(sequence, kind, body, payload, prev, hash)``."""


def canonical(body: Mapping[str, Any]) -> str:
    """Canonical JSON text of an entry body (sorted keys, no spaces, no NaN)."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)


def entry_hash(sequence: int, kind: str, prev: str, body: str, payload: bytes) -> str:
    """SHA-256 (hex) of one entry: its number, kind, link, body and payload."""
    text = body.encode("utf-8")
    h = hashlib.sha256(_DOMAIN)
    h.update(f"{sequence}\x00{kind}\x00{prev}\x00{len(text)}\x00".encode())
    h.update(text)
    h.update(payload)
    return h.hexdigest()


def share(k: int) -> float:
    """``6 / (pi^2 k^2)``: the share of a claim's error budget spent by its ``k``-th evaluation."""
    return 6.0 / (math.pi**2 * k * k)


def pack_keys(keys: NDArray[np.uint8]) -> bytes:
    """Row keys ``(n, 16)`` as one payload part: sorted, without repeats."""
    if keys.size == 0:
        return b""
    rows = np.ascontiguousarray(keys, dtype=np.uint8).reshape(-1, KEY_BYTES)
    unique = np.unique(rows.view(np.dtype((np.void, KEY_BYTES))).ravel())
    return unique.tobytes()


def _key_words(payload: bytes) -> NDArray[np.uint64]:
    """A payload part of keys as ``(n, 2)`` big-endian words (sorted as the bytes are)."""
    return np.frombuffer(payload, dtype=">u8").reshape(-1, 2).astype(np.uint64)


@final
@attrs.frozen
class Preregistered:
    """A pre-registration as the chain records it."""

    sequence: int
    head: str
    record_sha256: str
    protocol_name: str
    reserved_fingerprint: str
    sealed_at: str
    record_json: str


@final
@attrs.frozen
class Slot:
    """A numbered evaluation of a mechanism, as the chain records it."""

    sequence: int
    head: str
    mechanism: str
    evaluation: int
    reserved_fingerprint: str
    inputs_json: str
    seed: int
    calls: int
    confidence_level: float
    alpha_spent: float
    sealed_at: str


@final
@attrs.define
class Spend:
    """Spent reserved data as the chain records it, with the evaluation's outcome once known."""

    sequence: int
    head: str
    evaluation: int
    reserved_fingerprint: str
    record_sha256: str
    protocol_name: str
    spent_at: str
    pid: int
    host: str
    reserved_keys: NDArray[np.uint64]
    development_keys: NDArray[np.uint64]
    status: str = "started"
    completed_at: str | None = None
    outcome_json: str | None = None
    outcome_sequence: int | None = None
    outcome_head: str | None = None

    def shares_rows(self, keys: NDArray[np.uint64]) -> int:
        """How many of ``keys`` (``(n, 2)`` words) are among this spend's rows, either role."""
        hits = 0
        for own in (self.reserved_keys, self.development_keys):
            if own.shape[0] and keys.shape[0]:
                hits += int(_member(keys, own).sum())
        return hits


def _member(keys: NDArray[np.uint64], sorted_keys: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """Which rows of ``keys`` occur in ``sorted_keys`` (both ``(n, 2)``; the second sorted)."""
    high = sorted_keys[:, 0]
    at = np.searchsorted(high, keys[:, 0], side="left")
    out = np.zeros(keys.shape[0], dtype=bool)
    inside = at < high.size
    candidates = np.flatnonzero(inside)
    candidates = candidates[high[at[candidates]] == keys[candidates, 0]]
    for i in candidates.tolist():  # keys sharing their first 64 bits with a stored key (rare)
        j = int(at[i])
        while j < high.size and high[j] == keys[i, 0]:
            if sorted_keys[j, 1] == keys[i, 1]:
                out[i] = True
                break
            j += 1
    return out


_STR: Final = (str,)
_INT: Final = (int,)
_NUM: Final = (int, float)
_FIELDS: Final[dict[str, dict[str, tuple[type, ...]]]] = {
    "genesis": {"format": _STR, "version": _INT, "ledger_id": _STR, "created_at": _STR},
    "preregistration": {
        "record_sha256": _STR,
        "protocol_name": _STR,
        "reserved_fingerprint": _STR,
        "sealed_at": _STR,
    },
    "evaluation": {
        "mechanism": _STR,
        "evaluation": _INT,
        "reserved_fingerprint": _STR,
        "inputs_json": _STR,
        "seed": _INT,
        "calls": _INT,
        "confidence_level": _NUM,
        "alpha_spent": _NUM,
        "sealed_at": _STR,
    },
    "spend": {
        "reserved_fingerprint": _STR,
        "record_sha256": _STR,
        "protocol_name": _STR,
        "spent_at": _STR,
        "pid": _INT,
        "host": _STR,
        "reserved_rows": _INT,
        "development_rows": _INT,
    },
    "complete": {"reserved_fingerprint": _STR, "completed_at": _STR},
    "failure": {"reserved_fingerprint": _STR, "completed_at": _STR},
}
KINDS: Final = tuple(_FIELDS)


@final
class ChainState:
    """Everything a checked chain records (built by :func:`replay`).

    Attributes
    ----------
    ledger_id : str
        The ledger's identity, fixed by its first entry.
    created_at : str
        When the ledger (or its chain, for a migrated ledger) was created.
    migrated_from : int or None
        The version a migrated ledger had before its chain began.
    length : int
        Number of entries.
    head : str
        Hash of the last entry.
    hashes : list of str
        Hash of every entry, ``hashes[n - 1]`` for entry ``n``.
    preregistrations : dict
        Record SHA-256 -> :class:`Preregistered`.
    spends : dict
        Reserved fingerprint -> :class:`Spend`, in the order they were spent.
    slots : dict
        Reserved fingerprint of a mechanism's stream -> its :class:`Slot`.
    evaluations : dict
        Mechanism identity -> its slots, numbered 1, 2, ...
    """

    __slots__ = (
        "created_at",
        "evaluations",
        "hashes",
        "head",
        "kinds",
        "ledger_id",
        "length",
        "migrated_from",
        "preregistrations",
        "slots",
        "spends",
    )

    def __init__(self) -> None:
        self.ledger_id = ""
        self.created_at = ""
        self.migrated_from: int | None = None
        self.length = 0
        self.head = GENESIS_PREV
        self.hashes: list[str] = []
        self.kinds: list[str] = []
        self.preregistrations: dict[str, Preregistered] = {}
        self.spends: dict[str, Spend] = {}
        self.slots: dict[str, Slot] = {}
        self.evaluations: dict[str, list[Slot]] = {}

    def overlap(self, keys: NDArray[np.uint64]) -> tuple[Spend, int] | None:
        """The earliest spend sharing rows with ``keys``, and how many; None when none does."""
        for spend in self.spends.values():
            shared = spend.shares_rows(keys)
            if shared:
                return spend, shared
        return None


def key_words(keys: NDArray[np.uint8]) -> NDArray[np.uint64]:
    """Row keys ``(n, 16)`` as sorted, unique ``(n, 2)`` words (how a spend stores them)."""
    return _key_words(pack_keys(keys))


def _fail(where: str, message: str) -> LedgerError:
    """A LedgerError about a damaged chain, with what to do."""
    return LedgerError(
        f"the ledger {where} cannot be trusted: {message}. It was changed outside certify, so "
        "it is refused and nothing was read from any reserved data. Keep the file as it is for "
        "investigation; a ledger is never repaired or recreated. Reports it issued can still "
        "be checked against its published export (certify verify REPORT --ledger EXPORT)."
    )


def body_problem(kind: str, text: str) -> tuple[dict[str, Any], str]:
    """An entry body parsed, and what is wrong with it ("" when nothing is)."""
    if kind not in _FIELDS:
        return {}, f"has an unknown kind {kind!r}"
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        return {}, "has a body that is not JSON"
    if not isinstance(body, dict):
        return {}, "has a body that is not a JSON object"
    for name, types in _FIELDS[kind].items():
        value = body.get(name)
        if isinstance(value, bool) or not isinstance(value, types):
            return body, f"has a malformed field {name!r}: {value!r:.60}"
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            return body, f"has a field {name!r} beyond 64-bit integers: {value!r:.60}"
        if isinstance(value, float) and not math.isfinite(value):
            return body, f"has a non-finite field {name!r}"
    return body, ""


def replay(
    rows: Iterable[Row], where: str, *, entries: int | None = None, head: str | None = None
) -> ChainState:
    """Check a chain entry by entry and rebuild what it records.

    Parameters
    ----------
    rows : iterable of (sequence, kind, body, payload, prev, hash)
        The stored entries in order of their numbers.
    where : str
        How the ledger is named in error messages.
    entries, head : int and str, optional
        The number of entries and the last hash the ledger recorded beside its chain; a chain
        that ends earlier was cut short.

    Returns
    -------
    ChainState

    Raises
    ------
    LedgerError
        If the chain is empty, has a gap, a broken link, an entry that does not match its hash,
        a malformed body, or records something impossible (a split spent twice, evaluations of
        a mechanism not numbered 1, 2, ..., an outcome without a spend); the message names the
        entry and what is missing.
    """
    state = ChainState()
    prev = GENESIS_PREV
    expected = 1
    for sequence, kind, text, payload, link, stored in rows:
        if sequence != expected:
            if sequence > expected:
                raise _fail(
                    where,
                    f"entries {expected} to {sequence - 1} are missing (the chain jumps from entry "
                    f"{expected - 1} to entry {sequence}): they were deleted",
                )
            raise _fail(where, f"entry {sequence} appears twice")
        payload = bytes(payload)
        if link != prev:
            raise _fail(
                where,
                f"entry {sequence} does not follow entry {sequence - 1} (its link differs): "
                "entries before it were edited, removed or reordered",
            )
        if entry_hash(sequence, kind, link, text, payload) != stored:
            raise _fail(where, f"entry {sequence} ({kind}) does not match its hash: it was edited")
        body, problem = body_problem(kind, text)
        if problem:
            raise _fail(where, f"entry {sequence} ({kind}) {problem}")
        _apply(state, where, sequence, stored, kind, body, payload)
        state.hashes.append(stored)
        state.kinds.append(kind)
        prev = stored
        expected += 1
    state.length = expected - 1
    state.head = prev
    if state.length == 0:
        raise _fail(where, "its chain is empty (no genesis entry): every entry was deleted")
    if entries is not None and (entries != state.length or head != state.head):
        if entries > state.length:
            raise _fail(
                where,
                f"it recorded {entries} entries but its chain ends at entry {state.length}: "
                f"entries {state.length + 1} to {entries} were deleted",
            )
        raise _fail(
            where,
            f"its chain has {state.length} entries ending in {state.head[:12]}, but it recorded "
            f"{entries} entries ending in {str(head)[:12]}",
        )
    return state


def _apply(
    state: ChainState,
    where: str,
    sequence: int,
    head: str,
    kind: str,
    body: dict[str, Any],
    payload: bytes,
) -> None:
    """Add one checked entry to the state."""
    if (kind == "genesis") != (sequence == 1):
        raise _fail(where, f"entry {sequence} is {kind!r}; only entry 1 is the genesis entry")
    if kind == "genesis":
        if payload:
            raise _fail(where, "the genesis entry carries a payload")
        state.ledger_id = str(body["ledger_id"])
        state.created_at = str(body["created_at"])
        migrated = body.get("migrated_from")
        if migrated is not None and (isinstance(migrated, bool) or not isinstance(migrated, int)):
            raise _fail(where, f"the genesis entry has a malformed 'migrated_from': {migrated!r:.40}")
        state.migrated_from = migrated
        return
    fingerprint = str(body["reserved_fingerprint"])
    if kind == "preregistration":
        sha = str(body["record_sha256"])
        if sha in state.preregistrations:
            raise _fail(where, f"entry {sequence} pre-registers record {sha[:12]} a second time")
        try:
            record_json = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise _fail(where, f"entry {sequence} holds a record that is not UTF-8 text") from None
        state.preregistrations[sha] = Preregistered(
            sequence,
            head,
            sha,
            str(body["protocol_name"]),
            fingerprint,
            str(body["sealed_at"]),
            record_json,
        )
    elif kind == "evaluation":
        _apply_slot(state, where, sequence, head, body, payload)
    elif kind == "spend":
        if fingerprint in state.spends:
            raise _fail(where, f"entry {sequence} spends reserved data {fingerprint[:12]} a second time")
        n_reserved, n_dev = int(body["reserved_rows"]), int(body["development_rows"])
        if n_reserved < 0 or n_dev < 0 or len(payload) != KEY_BYTES * (n_reserved + n_dev):
            raise _fail(
                where,
                f"entry {sequence} holds {len(payload)} bytes of row keys for {n_reserved} + {n_dev} rows",
            )
        reserved = _key_words(payload[: KEY_BYTES * n_reserved])
        development = _key_words(payload[KEY_BYTES * n_reserved :])
        for part in (reserved, development):
            if part.shape[0] > 1 and not bool(_ascending(part).all()):
                raise _fail(where, f"entry {sequence} holds row keys out of order")
        state.spends[fingerprint] = Spend(
            sequence=sequence,
            head=head,
            evaluation=len(state.spends) + 1,
            reserved_fingerprint=fingerprint,
            record_sha256=str(body["record_sha256"]),
            protocol_name=str(body["protocol_name"]),
            spent_at=str(body["spent_at"]),
            pid=int(body["pid"]),
            host=str(body["host"]),
            reserved_keys=reserved,
            development_keys=development,
        )
    else:  # complete, failure
        spend = state.spends.get(fingerprint)
        if spend is None or spend.status != "started":
            why = "which no entry before it spent" if spend is None else "whose outcome was already recorded"
            raise _fail(
                where, f"entry {sequence} records the outcome of reserved data {fingerprint[:12]}, {why}"
            )
        try:
            outcome = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise _fail(where, f"entry {sequence} holds an outcome that is not UTF-8 text") from None
        spend.status = "completed" if kind == "complete" else "failed"
        spend.completed_at = str(body["completed_at"])
        spend.outcome_json = outcome
        spend.outcome_sequence = sequence
        spend.outcome_head = head


def _ascending(words: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """Whether each key is strictly greater than the one before it."""
    high, low = words[:, 0], words[:, 1]
    return np.asarray((high[1:] > high[:-1]) | ((high[1:] == high[:-1]) & (low[1:] > low[:-1])))


def _apply_slot(
    state: ChainState, where: str, sequence: int, head: str, body: dict[str, Any], payload: bytes
) -> None:
    """Add a numbered mechanism evaluation, checking its number and the error it spends."""
    if payload:
        raise _fail(where, f"entry {sequence} (evaluation) carries a payload")
    fingerprint = str(body["reserved_fingerprint"])
    mechanism = str(body["mechanism"])
    earlier = state.evaluations.setdefault(mechanism, [])
    k = int(body["evaluation"])
    if k != len(earlier) + 1:
        raise _fail(
            where,
            f"entry {sequence} numbers an evaluation of {mechanism!r} as {k}, but it is evaluation "
            f"{len(earlier) + 1} of the chain",
        )
    if fingerprint in state.slots:
        raise _fail(where, f"entry {sequence} numbers reserved stream {fingerprint[:12]} a second time")
    level = float(body["confidence_level"])
    alpha = float(body["alpha_spent"])
    if not 0.0 < level < 1.0 or not math.isclose(alpha, (1.0 - level) * share(k), rel_tol=1e-9):
        raise _fail(
            where,
            f"entry {sequence} states that evaluation {k} of {mechanism!r} spends {alpha!r} at "
            f"level {level!r}; the k-th evaluation spends (1 - level) * 6 / (pi^2 k^2)",
        )
    slot = Slot(
        sequence,
        head,
        mechanism,
        k,
        fingerprint,
        str(body["inputs_json"]),
        int(body["seed"]),
        int(body["calls"]),
        level,
        alpha,
        str(body["sealed_at"]),
    )
    earlier.append(slot)
    state.slots[fingerprint] = slot
