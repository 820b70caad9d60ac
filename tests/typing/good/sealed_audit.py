"""Pre-register fixed tests on development data, evaluate them once, and test a privacy claim."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import assert_never

import numpy as np
from numpy.typing import NDArray
from sklearn.linear_model import LogisticRegression

import certify as cf


def synthetic_outputs(seed: int) -> tuple[list[str], NDArray[np.float64]]:
    """Six identities, 60 outputs each, around nearby centres."""
    rng = np.random.default_rng(seed)
    labels: list[str] = []
    blocks: list[NDArray[np.float64]] = []
    for i in range(6):
        centre = np.zeros(8)
        centre[i] = 4.0
        blocks.append(centre + rng.standard_normal((60, 8)))
        labels += [f"person{i}"] * 60
    return labels, np.vstack(blocks)


def audit(folder: Path, seed: int) -> cf.Refuted | cf.Inconclusive:
    """Choose everything on development data, seal, evaluate once, refute or not."""
    labels, vectors = synthetic_outputs(seed)
    table = cf.EmbeddingTable.from_arrays(labels, vectors, normalize=True)
    print("\n".join(table.cleaning.lines()))
    split: cf.DevTestSplit = table.split(dev_fraction=0.5, seed=seed)
    reserved: cf.ReservedSplit = split.reserved
    print(f"reserved rows per identity: {dict(reserved.counts)}")

    pairs: list[cf.Pair] = cf.sample_pairs(table.identities, count=3, seed=seed)
    protocol = cf.Protocol(name="synthetic-audit", confidence_level=0.95, delta=1e-5)
    for pair in pairs:
        estimator = LogisticRegression(C=1.0, max_iter=1000)
        protocol.register(cf.FixedTest.fit(estimator, split.development, pair))
    sealed: cf.SealedProtocol = protocol.seal(reserved, ledger=cf.Ledger(folder / "audit.ledger"))
    (folder / "record.json").write_text(sealed.record.to_json(), encoding="utf-8")

    family: cf.CertificateFamily = sealed.evaluate()
    for cert in family.certificates:
        print(
            f"{cert.pair}: epsilon >= {cert.epsilon_lower:.3f} at delta {cert.delta:g} "
            f"(at delta 0: {cert.epsilon_lower_at(0.0):.3f}; errors "
            f"{cert.false_positives}/{cert.n_class0} and {cert.false_negatives}/{cert.n_class1})"
        )
    summary: cf.Summary = cf.summarize(list(family.certificates))
    print(f"median certified bound {summary.median:.3f} at {family.confidence_level:.0%}")
    return cf.refute(cf.Claim(epsilon=0.5, delta=1e-5), family)


def main() -> None:
    """Run the audit in a temporary folder and print the verdict."""
    with tempfile.TemporaryDirectory() as folder:
        verdict = audit(Path(folder), seed=2026)
    match verdict:
        case cf.Refuted():
            print(f"refuted by {len(verdict.certificates)} pair(s): {verdict}")
        case cf.Inconclusive():
            print(f"inconclusive (best {verdict.best_epsilon_lower:.3f}): {verdict}")
        case _:
            assert_never(verdict)


if __name__ == "__main__":
    main()
