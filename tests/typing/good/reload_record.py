"""Seal in one session, evaluate later from the saved record, and handle a spent split."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

import certify as cf


def direction(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """A fixed score: projection on the first coordinate."""
    out: NDArray[np.float64] = x[:, 0]
    return out


def seal(table: cf.EmbeddingTable, ledger: cf.Ledger) -> str:
    """Fix a score function's threshold on development data and seal; return the record JSON."""
    split = table.split(dev_fraction=0.6, seed=11)
    protocol = cf.Protocol(name="reloaded", confidence_level=0.9, family_size=4)
    protocol.register(
        cf.FixedTest.from_score(direction, split.development, cf.Pair("left", "right"), name="x0")
    )
    sealed = protocol.seal(split.reserved, ledger=ledger)
    return sealed.record.to_json()


def evaluate_later(record_json: str, table: cf.EmbeddingTable, ledger: cf.Ledger) -> float | None:
    """Rebuild the sealed protocol from its record; a second attempt is refused."""
    record = cf.PreregistrationRecord.from_json(record_json)
    sealed = cf.SealedProtocol.from_record(record, table, ledger, score_functions={"x0": direction})
    try:
        family = sealed.evaluate()
    except cf.ReservedSplitReusedError as exc:
        print(f"not evaluated: {exc}")
        return None
    entry: cf.LedgerEntry | None = ledger.entry(sealed.reserved_fingerprint)
    if entry is not None:
        print(f"spent at {entry.spent_at} by {entry.protocol_name} ({entry.status})")
    return family.certificates[0].epsilon_lower


def main() -> None:
    """Seal, evaluate once from the record, then show the refusal of a second evaluation."""
    rng = np.random.default_rng(7)
    vectors = np.vstack([rng.normal(-3.0, 1.0, (50, 2)), rng.normal(3.0, 1.0, (50, 2))])
    table = cf.EmbeddingTable.from_arrays(["left"] * 50 + ["right"] * 50, vectors)
    with tempfile.TemporaryDirectory() as folder:
        ledger = cf.Ledger(Path(folder) / "audit.ledger")
        record_json = seal(table, ledger)
        first = evaluate_later(record_json, table, ledger)
        second = evaluate_later(record_json, table, ledger)
    print(first, second)


if __name__ == "__main__":
    main()
