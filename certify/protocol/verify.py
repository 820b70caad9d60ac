"""Checking reports and records against the ledger that issued them (docs/trust.md).

A report states where its evaluation sits in its ledger: the ledger's identity, the entry that
spent the reserved data with its hash, the entry that recorded the outcome with its hash, and
the evaluation's number. A record states the ledger's head when it was sealed. :func:`verify`
replays the ledger's chain (from the SQLite file or from a published export) and checks every
statement: that the ledger is the one that issued the report, that its history up to the report
is the history the report saw (nothing dropped, rolled back or rewritten), that the outcome it
recorded is the report's, and that no two of the given reports looked at the same reserved data.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, final

import attrs

from certify.errors import CertifyError, DataError, LedgerError, RecordError
from certify.protocol.chain import ChainState, replay
from certify.protocol.ledger import EXPORT_FORMAT, Ledger
from certify.protocol.record import RECORD_FORMAT, PreregistrationRecord
from certify.results import Certificate, CertificateFamily

__all__ = ["Verification", "verify"]

_REPORT_FILES: Final = ("certificates.json", "summary.json", "record.json")


@final
@attrs.frozen
class Verification:
    """The outcome of :func:`verify`.

    Attributes
    ----------
    ledger : str
        Where the ledger was read from (a file or an export).
    ledger_id : str
        The ledger's identity ("" if its chain could not be read).
    entries : int
        Entries in its chain.
    problems : tuple of str
        Everything that does not check out; empty when all does.
    checked : tuple of str
        What was checked and found in order, one sentence each.
    """

    ledger: str
    ledger_id: str
    entries: int
    problems: tuple[str, ...]
    checked: tuple[str, ...]

    @property
    def verified(self) -> bool:
        """True when nothing failed to check out."""
        return not self.problems

    def to_text(self) -> str:
        """The outcome as lines of text (``certify verify`` prints it)."""
        head = f"ledger {self.ledger}: {self.entries} entries" + (
            f", identity {self.ledger_id}" if self.ledger_id else ""
        )
        lines = [head]
        lines += [f"  ok: {c}" for c in self.checked]
        lines += [f"  PROBLEM: {p}" for p in self.problems]
        lines.append("verified" if self.verified else f"NOT VERIFIED: {len(self.problems)} problem(s)")
        return "\n".join(lines)


@attrs.frozen
class _Claim:
    """What one report or record states about its ledger."""

    name: str
    record: PreregistrationRecord | None
    record_sha256: str | None
    reserved_fingerprint: str | None
    stamp: Mapping[str, Any] | None
    numbers: tuple[tuple[str, str, float], ...]


# -- reading what reports state ---------------------------------------------------------------


def _read_json(path: Path) -> Any:
    """A JSON file, or RecordError naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"{str(path)!r} is not UTF-8 text ({exc.reason}); give a certify report or record."
        ) from exc
    except OSError as exc:
        raise DataError(f"cannot read {str(path)!r}: {exc.strerror or exc}.") from exc
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RecordError(
            f"{str(path)!r} is not valid JSON ({exc}); give a certify report or record."
        ) from exc


def _numbers(certificates: Iterable[Mapping[str, Any]]) -> tuple[tuple[str, str, float], ...]:
    """``(pair a, pair b, epsilon_lower)`` of stated certificates, sorted."""
    out = []
    for c in certificates:
        pair = c.get("pair")
        if not (isinstance(pair, list) and len(pair) == 2):
            raise RecordError(f"a certificate in the report has no pair ({c!r:.60}).")
        out.append((str(pair[0]), str(pair[1]), float(c["epsilon_lower"])))
    return tuple(sorted(out))


def _stamp_of(entry: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The ledger position a report's manifest states (None when it states none)."""
    if not isinstance(entry, Mapping) or not entry.get("head"):
        return None
    return {
        k: entry.get(k)
        for k in ("ledger_id", "sequence", "head", "evaluation", "outcome_sequence", "outcome_head")
    }


def _claim_from_json(name: str, data: Any, record: PreregistrationRecord | None) -> _Claim:
    """The claim of a report file (``certificates.json`` or ``summary.json``) or a record."""
    if isinstance(data, dict) and data.get("format") == RECORD_FORMAT:
        rec = PreregistrationRecord.from_json(json.dumps(data))
        return _claim_from_record(name, rec)
    if isinstance(data, dict) and isinstance(data.get("certificates"), list) and "manifest" in data:
        manifest = data["manifest"] if isinstance(data["manifest"], dict) else {}
        entry = manifest.get("ledger_entry")
        return _Claim(
            name,
            record,
            manifest.get("record_sha256") or (record.sha256 if record else None),
            (entry or {}).get("reserved_fingerprint") if isinstance(entry, dict) else None,
            _stamp_of(entry),
            _numbers(data["certificates"]),
        )
    if isinstance(data, dict) and "mechanism" in data and "epsilon_lower" in data:
        ledger = data.get("ledger")
        return _Claim(
            name,
            record,
            data.get("record_sha256") or (record.sha256 if record else None),
            data.get("reserved_fingerprint"),
            _stamp_of(ledger if isinstance(ledger, dict) else None),
            _numbers([data]),
        )
    raise RecordError(
        f"{name} is neither a certify report (certificates.json, summary.json) nor a pre-registration record."
    )


def _claim_from_record(name: str, record: PreregistrationRecord) -> _Claim:
    """What a record alone states."""
    return _Claim(name, record, record.sha256, str(record.content["data"]["reserved_fingerprint"]), None, ())


def _claim_from_certificates(
    name: str, certificates: Sequence[Certificate], record: PreregistrationRecord | None
) -> _Claim:
    """What issued certificates state."""
    first = certificates[0]
    stamp = {
        "ledger_id": first.ledger.ledger_id,
        "sequence": first.ledger.sequence,
        "head": first.ledger.head,
        "evaluation": first.ledger.evaluation,
        "outcome_sequence": None,
        "outcome_head": None,
    }
    numbers = tuple(sorted((c.pair.a, c.pair.b, float(c.epsilon_lower)) for c in certificates))
    return _Claim(name, record, first.protocol_fingerprint, first.data_fingerprint, stamp, numbers)


def _claims(source: object, index: int) -> _Claim:
    """The claim of one source given to :func:`verify`."""
    from certify.blackbox.audit import MechanismAudit

    if isinstance(source, PreregistrationRecord):
        return _claim_from_record(f"record {source.sha256[:12]}", source)
    if isinstance(source, CertificateFamily):
        return _claim_from_certificates(f"family {source.family_id}", source.certificates, None)
    if isinstance(source, Certificate):
        return _claim_from_certificates(f"certificate for {source.pair}", (source,), None)
    if isinstance(source, MechanismAudit):
        return _claim_from_certificates(
            f"audit of {source.mechanism}", source.family.certificates, source.record
        )
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if path.is_dir():
            found = [path / n for n in _REPORT_FILES if (path / n).is_file()]
            if not found:
                raise DataError(
                    f"{str(path)!r} holds no certify report: expected certificates.json, summary.json "
                    "or record.json (the folder given to certify evaluate --out or audit-mechanism --out)."
                )
            record = None
            if (path / "record.json").is_file():
                record = _claim_from_json(
                    str(path / "record.json"), _read_json(path / "record.json"), None
                ).record
            report = [f for f in found if f.name != "record.json"]
            if not report:
                return _claim_from_record(str(path / "record.json"), record) if record else _fail_source(path)
            return _claim_from_json(str(report[0]), _read_json(report[0]), record)
        if not path.exists():
            raise DataError(f"no report or record at {str(path)!r}.")
        return _claim_from_json(str(path), _read_json(path), None)
    raise DataError(
        f"verify takes report folders or files, records, certificate families, certificates or "
        f"mechanism audits; got {type(source).__name__} (argument {index + 1})."
    )


def _fail_source(path: Path) -> _Claim:
    """Unreachable guard for a folder whose record could not be read."""
    raise DataError(f"{str(path)!r} holds no readable report.")


# -- reading the ledger -----------------------------------------------------------------------


def _export_rows(data: Any, where: str) -> list[tuple[int, str, str, bytes, str, str]]:
    """The chain rows of a ledger export."""
    from certify.protocol.chain import canonical

    if (
        not isinstance(data, dict)
        or data.get("format") != EXPORT_FORMAT
        or not isinstance(data.get("entries"), list)
    ):
        raise LedgerError(f"{where} is not a certify ledger export (format {EXPORT_FORMAT!r}).")
    rows = []
    for e in data["entries"]:
        try:
            rows.append(
                (
                    int(e["sequence"]),
                    str(e["kind"]),
                    canonical(e["body"]),
                    base64.b64decode(e["payload"], validate=True),
                    str(e["prev"]),
                    str(e["hash"]),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise LedgerError(f"{where} holds a malformed entry ({exc!r:.80}).") from exc
    return rows


def _ledger_state(ledger: Ledger | str | os.PathLike[str]) -> tuple[str, ChainState]:
    """Where the ledger was read from, and its checked chain (LedgerError if it does not check out)."""
    if isinstance(ledger, Ledger):
        return str(ledger.path), ledger._read()
    path = Path(ledger)
    if not path.is_file():
        raise DataError(f"no ledger or ledger export at {str(path)!r}.")
    with path.open("rb") as handle:
        magic = handle.read(16)
    if magic.startswith(b"SQLite format 3"):
        return str(path), Ledger._inspect(path)
    where = repr(str(path))
    data = _read_json(path)
    rows = _export_rows(data, where)
    state = replay(rows, where)
    if data.get("ledger_id") != state.ledger_id:
        raise LedgerError(
            f"the export {where} names ledger {data.get('ledger_id')!r:.40}, but its chain belongs "
            f"to {state.ledger_id}."
        )
    return str(path), state


# -- the checks -------------------------------------------------------------------------------


def verify(report_or_record: object, ledger: Ledger | str | os.PathLike[str]) -> Verification:
    """Check reports or records against a ledger (its SQLite file or its published export).

    Parameters
    ----------
    report_or_record : report, record, family, certificate, audit, or a sequence of them
        A report folder (``certify evaluate --out`` or ``audit-mechanism --out``), a report
        file (``certificates.json``, ``summary.json``), a record JSON file, or the objects
        themselves (:class:`~certify.PreregistrationRecord`, :class:`~certify.CertificateFamily`,
        :class:`~certify.Certificate`, :class:`~certify.MechanismAudit`). Several are also
        checked against each other.
    ledger : Ledger, or path of a ledger file or of its export (:meth:`Ledger.export`)
        The ledger that is said to have issued them.

    Returns
    -------
    Verification
        ``verified`` when every statement checks out; otherwise ``problems`` says what does not:
        a chain that was edited or cut short; a report issued by another ledger (the ledger was
        replaced); a report's entry missing (the ledger ends before it: entries were dropped) or
        different (the ledger was rolled back and rewritten, e.g. an earlier copy put back);
        an outcome that differs from the report's numbers; reserved data evaluated by two of the
        given reports, or sharing rows with another evaluation.

    Raises
    ------
    DataError, RecordError
        If a report, record or ledger cannot be read at all (missing, not UTF-8, not JSON, not
        a certify file).

    Notes
    -----
    What this can and cannot prove is in docs/trust.md: a ledger (or export) replaced as a
    whole is a valid ledger of its own, so a report verifies only against the ledger the
    auditor published with it; a record's hash published before the evaluation pins what was
    pre-registered; the export lets anyone replay the chain without certify's file.

    Examples
    --------
    >>> import tempfile, os
    >>> ledger = Ledger(os.path.join(tempfile.mkdtemp(), "audit.ledger"))
    >>> verify([], ledger).verified
    True
    """
    sources = list(report_or_record) if isinstance(report_or_record, list | tuple) else [report_or_record]
    claims = [_claims(s, i) for i, s in enumerate(sources)]
    try:
        where, state = _ledger_state(ledger)
    except LedgerError as exc:
        where = str(ledger.path) if isinstance(ledger, Ledger) else os.fspath(ledger)
        return Verification(where, "", 0, (str(exc),), ())
    problems: list[str] = []
    checked = [
        f"the chain replays: {state.length} entries, each linked to the one before and matching its "
        f"hash; {len(state.spends)} evaluation(s), {len(state.preregistrations)} pre-registration(s)"
        + (f"; it begins with a migration from version {state.migrated_from}" if state.migrated_from else "")
    ]
    for claim in claims:
        _check_claim(claim, state, problems, checked)
    _cross_check(claims, problems)
    return Verification(where, state.ledger_id, state.length, tuple(problems), tuple(checked))


def _check_claim(claim: _Claim, state: ChainState, problems: list[str], checked: list[str]) -> None:
    """Check one report or record against the chain."""
    name = claim.name
    stamp = claim.stamp
    if stamp is not None and stamp.get("ledger_id") and stamp["ledger_id"] != state.ledger_id:
        problems.append(
            f"{name} was issued by ledger {stamp['ledger_id']}, not by this one ({state.ledger_id}): "
            "the ledger was replaced, or this is another ledger"
        )
        return
    record = claim.record
    if record is not None:
        _check_sealing(name, record, state, problems, checked)
    sha = claim.record_sha256
    if sha is not None:
        pre = state.preregistrations.get(sha)
        if pre is None:
            problems.append(f"{name}: record {sha[:12]} was never pre-registered in this ledger")
        else:
            checked.append(f"{name}: record {sha[:12]} was pre-registered at entry {pre.sequence}")
    fp = claim.reserved_fingerprint
    spend = None if fp is None else state.spends.get(fp)
    if stamp is None:
        if spend is None:
            checked.append(f"{name}: its reserved data are not spent yet (sealed, not evaluated)")
        else:
            checked.append(
                f"{name}: its reserved data were spent at entry {spend.sequence} (evaluation "
                f"{spend.evaluation}, {spend.status})"
            )
            if sha is not None and spend.record_sha256 != sha:
                problems.append(
                    f"{name}: its reserved data were spent by another record ({spend.record_sha256[:12]})"
                )
        return
    _check_stamp(name, claim, stamp, state, problems, checked)


def _check_sealing(
    name: str, record: PreregistrationRecord, state: ChainState, problems: list[str], checked: list[str]
) -> None:
    """The ledger state a record was sealed on must be a prefix of this chain."""
    sealed = record.content.get("ledger")
    if not isinstance(sealed, dict):
        checked.append(f"{name}: the record states no ledger head (sealed before the chain existed)")
        return
    n, head = sealed.get("entries"), sealed.get("head")
    if sealed.get("ledger_id") != state.ledger_id:
        problems.append(
            f"{name}: the record was sealed in ledger {sealed.get('ledger_id')}, not in this one "
            f"({state.ledger_id}): the ledger was replaced, or this is another ledger"
        )
    elif not isinstance(n, int) or n < 1 or n > state.length or state.hashes[n - 1] != head:
        problems.append(
            f"{name}: the record was sealed on {n} entries ending in {str(head)[:12]}, which this "
            "ledger does not hold: it was rolled back and rewritten, or replaced, since"
        )
    else:
        checked.append(f"{name}: sealed on entries 1 to {n} of this ledger (hash {head[:12]})")
    data = record.content["data"]
    if data.get("kind") == "mechanism":
        slot = state.slots.get(str(data["reserved_fingerprint"]))
        k = record.content["protocol"].get("evaluation")
        if slot is None or slot.evaluation != k:
            problems.append(
                f"{name}: the record states evaluation {k!r} of {data['mechanism']!r}; the ledger "
                + ("never numbered it" if slot is None else f"numbered it {slot.evaluation}")
            )
        else:
            total = len(state.evaluations.get(slot.mechanism, ()))
            checked.append(
                f"{name}: evaluation {k} of {slot.mechanism!r}; the ledger holds {total} evaluation(s) "
                "of it, all covered by the claim's confidence level"
            )


def _check_stamp(
    name: str,
    claim: _Claim,
    stamp: Mapping[str, Any],
    state: ChainState,
    problems: list[str],
    checked: list[str],
) -> None:
    """A report's spend and outcome entries must be in the chain, with the report's hashes and numbers."""
    for label, seq_key, head_key in (
        ("evaluation", "sequence", "head"),
        ("outcome", "outcome_sequence", "outcome_head"),
    ):
        seq, head = stamp.get(seq_key), stamp.get(head_key)
        if seq is None:
            continue
        if not isinstance(seq, int) or seq < 1:
            problems.append(f"{name}: the report states a malformed ledger entry {seq!r:.40}")
            return
        if seq > state.length:
            problems.append(
                f"{name}: its {label} is entry {seq}, but this ledger ends at entry {state.length}: "
                f"entries {state.length + 1} to {seq} (at least) were dropped (the ledger was cut "
                "short or an earlier copy was put back)"
            )
            return
        if state.hashes[seq - 1] != head:
            problems.append(
                f"{name}: entry {seq} of this ledger is not the report's {label} (hash "
                f"{state.hashes[seq - 1][:12]}, report {str(head)[:12]}): the ledger was rolled back "
                "and rewritten (an earlier copy put back and used again) or replaced at or before it"
            )
            return
    spend = None if claim.reserved_fingerprint is None else state.spends.get(claim.reserved_fingerprint)
    seq = stamp.get("sequence")
    if spend is None or spend.sequence != seq:
        problems.append(f"{name}: entry {seq} of this ledger does not spend the report's reserved data")
        return
    later = state.length - seq
    follow = "1 entry follows" if later == 1 else f"{later} entries follow"
    checked.append(
        f"{name}: evaluation {spend.evaluation} of this ledger, entry {seq} (hash {spend.head[:12]}); "
        f"its history up to the report is intact and {follow} it"
    )
    if claim.record_sha256 is not None and spend.record_sha256 != claim.record_sha256:
        problems.append(
            f"{name}: entry {seq} spent the data for record {spend.record_sha256[:12]}, not the report's"
        )
    if spend.outcome_json is not None and claim.numbers:
        try:
            outcome = json.loads(spend.outcome_json)
            recorded = _numbers(outcome.get("certificates", []))
        except (ValueError, AttributeError, KeyError, TypeError, CertifyError):
            recorded = ()
        if recorded != claim.numbers:
            problems.append(
                f"{name}: its certified bounds {list(claim.numbers)!r:.120} differ from those the ledger "
                f"recorded at entry {spend.outcome_sequence}: {list(recorded)!r:.120}"
            )
        else:
            checked.append(
                f"{name}: its bounds are those the ledger recorded at entry {spend.outcome_sequence}"
            )
    for other in state.spends.values():
        if other is spend:
            continue
        shared = other.shares_rows(spend.reserved_keys)
        if shared:
            problems.append(
                f"{name}: {shared} of its reserved rows were also used by evaluation {other.evaluation} "
                f"(entry {other.sequence}, protocol {other.protocol_name!r}): a second look at the same rows"
            )


def _cross_check(claims: Sequence[_Claim], problems: list[str]) -> None:
    """Reports that evaluated the same reserved data, or forks of one ledger."""
    for i, a in enumerate(claims):
        for b in claims[i + 1 :]:
            if (
                a.stamp
                and b.stamp
                and a.stamp.get("ledger_id") == b.stamp.get("ledger_id")
                and (
                    a.stamp.get("sequence") == b.stamp.get("sequence")
                    and a.stamp.get("head") != b.stamp.get("head")
                )
            ):
                problems.append(
                    f"{a.name} and {b.name} both claim entry {a.stamp.get('sequence')} of ledger "
                    f"{a.stamp.get('ledger_id')} with different hashes: the ledger was rolled back "
                    "between them (an earlier copy put back)"
                )
            if (
                a.stamp
                and b.stamp
                and a.reserved_fingerprint
                and a.reserved_fingerprint == b.reserved_fingerprint
            ):
                problems.append(
                    f"{a.name} and {b.name} both evaluated reserved data {a.reserved_fingerprint[:12]}: "
                    "a second look at the same reserved data"
                )
                continue
            shared = _sketch_overlap(a, b) if a.stamp and b.stamp else 0
            if shared:
                problems.append(
                    f"{a.name} and {b.name} share reserved rows ({shared} of the rows their records "
                    "sample): the same rows were evaluated twice"
                )


def _sketch_overlap(a: _Claim, b: _Claim) -> int:
    """Keys the reserved sketch of one record shares with the row sketch of the other."""
    if a.record is None or b.record is None:
        return 0
    da, db = a.record.content["data"], b.record.content["data"]

    def keys(data: Mapping[str, Any], name: str) -> set[str]:
        value = data.get(name)
        return {str(k) for k in value} if isinstance(value, list) else set()

    return max(
        len(keys(da, "reserved_sketch") & keys(db, "rows_sketch")),
        len(keys(db, "reserved_sketch") & keys(da, "rows_sketch")),
    )
