"""The JSON pre-registration record of a sealed protocol: content, hash, layout checks."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from importlib import metadata
from typing import Any, Final, final

import attrs

from certify.errors import RecordError

__all__ = ["RECORD_FORMAT", "RECORD_VERSION", "PreregistrationRecord"]

RECORD_FORMAT: Final = "certify.preregistration"
RECORD_VERSION: Final = 1




def _canonical(content: Mapping[str, Any]) -> str:
    """Canonical JSON text (sorted keys, no NaN) used for hashing."""
    return json.dumps(content, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _versions() -> dict[str, str]:
    """Versions of certify and its numerical dependencies (read once per process)."""
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """Installed versions; distributions cannot change under a running interpreter."""
    out: list[tuple[str, str]] = []
    for dist in ("certify", "numpy", "scipy", "scikit-learn", "attrs", "skops"):
        try:
            out.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            out.append((dist, "unknown"))
    return tuple(out)


@final
@attrs.frozen
class PreregistrationRecord:
    """The JSON pre-registration record of a sealed protocol, with its own SHA-256.

    Attributes
    ----------
    content : Mapping
        Everything needed to evaluate later in another process: protocol settings, alpha
        allocation, data fingerprints and split parameters, fitted tests as data, library
        versions and the sealing time.
    sha256 : str
        SHA-256 of the canonical JSON of ``content``; checked on load.
    """

    content: Mapping[str, Any] = attrs.field(eq=False)
    sha256: str

    @classmethod
    def _create(cls, content: dict[str, Any]) -> PreregistrationRecord:
        """Hash and freeze new content."""
        text = _canonical(content)
        return cls(json.loads(text), hashlib.sha256(text.encode()).hexdigest())

    def to_json(self) -> str:
        """The record as JSON text (``content`` plus ``sha256``)."""
        return json.dumps({**self.content, "sha256": self.sha256}, indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> PreregistrationRecord:
        """Load a record and check its hash.

        Raises
        ------
        RecordError
            If the text is not a record, or was edited after sealing (hash mismatch).
        """
        try:
            data = json.loads(text)
        except (ValueError, TypeError, RecursionError) as exc:
            # ValueError covers JSONDecodeError and over-long integers; deep nesting recurses.
            raise RecordError(f"the record is not valid JSON ({exc}).") from exc
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            raise RecordError(
                f"this is not a certify pre-registration record (missing format {RECORD_FORMAT!r})."
            )
        if data.get("version") != RECORD_VERSION:
            raise RecordError(
                f"record version must be {RECORD_VERSION}; got {data.get('version')!r}."
            )
        claimed = data.pop("sha256", None)
        try:
            actual = hashlib.sha256(_canonical(data).encode()).hexdigest()
        except ValueError as exc:
            raise RecordError(f"the record contains invalid numbers ({exc}).") from exc
        if claimed != actual:
            raise RecordError(
                "the record's SHA-256 does not match its content: it was edited after sealing "
                f"(stated {str(claimed)[:12]}, computed {actual[:12]}). Use the original record."
            )
        _check_record_layout(data)
        return cls(data, actual)

    @property
    def protocol_name(self) -> str:
        """The protocol's name."""
        return str(self.content["protocol"]["name"])


_RECORD_LAYOUT: Final[dict[str, dict[str, type | tuple[type, ...]]]] = {
    "protocol": {
        "name": str,
        "confidence_level": (int, float),
        "delta": (int, float),
        "n_tests": int,
        "family_size": int,
        "alpha_per_rate": (int, float),
    },
    "data": {
        "table_fingerprint": str,
        "development_fingerprint": str,
        "reserved_fingerprint": str,
        "dev_fraction": (int, float),
        "seed": int,
        "reserved_counts": dict,
    },
}

_MECHANISM_LAYOUT: Final[dict[str, dict[str, type | tuple[type, ...]]]] = {
    "protocol": {
        **_RECORD_LAYOUT["protocol"],
        "evaluation": int,
        "level_used": (int, float),
    },
    "data": {
        "kind": str,
        "mechanism": str,
        "inputs": dict,
        "seed": int,
        "calls": int,
        "development_fingerprint": str,
        "reserved_fingerprint": str,
        "reserved_counts": dict,
    },
}


def _check_record_layout(data: Mapping[str, Any]) -> None:
    """Raise RecordError unless a hashed record has the sections and field types evaluation reads."""
    section_data = data.get("data")
    mechanism = isinstance(section_data, dict) and section_data.get("kind") == "mechanism"
    for section, fields in (_MECHANISM_LAYOUT if mechanism else _RECORD_LAYOUT).items():
        part = data.get(section)
        if not isinstance(part, dict):
            raise RecordError(f"record section {section!r} must be an object; got {part!r:.60}.")
        for key, kind in fields.items():
            value = part.get(key)
            if isinstance(value, bool) or not isinstance(value, kind):
                raise RecordError(
                    f"record field {section}.{key} is missing or of the wrong type; got {value!r:.60}."
                )
    tests = data.get("tests")
    if not isinstance(tests, list) or not tests or not all(isinstance(t, dict) for t in tests):
        raise RecordError(f"record field tests must be a non-empty list of objects; got {tests!r:.60}.")
    if not isinstance(data.get("annotations", {}), dict):
        raise RecordError("record field annotations must be an object.")
    ledger = data.get("ledger")
    if ledger is not None:  # the ledger's head at sealing (records sealed before the chain lack it)
        entries = ledger.get("entries") if isinstance(ledger, dict) else None
        if (
            not isinstance(ledger, dict)
            or not isinstance(ledger.get("ledger_id"), str)
            or not isinstance(ledger.get("head"), str)
            or isinstance(entries, bool)
            or not isinstance(entries, int)
            or entries < 1
        ):
            raise RecordError(
                "record field ledger must be an object with ledger_id, entries (>= 1) and head; "
                f"got {ledger!r:.80}."
            )
