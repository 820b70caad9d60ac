"""A complete pre-registered audit on data with a known answer.

A Laplace mechanism with exact pairwise epsilon produces the table; the audit chooses pairs and
tests on development rows, seals, evaluates once, and checks every certificate against the truth.
Run: python docs/examples/preregistered_audit.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import certify as cf
from certify.benchmark.mechanisms import Laplace
from certify.benchmark.prototypes import sensitivities


def main() -> None:
    rng = np.random.default_rng(7)
    raw = rng.standard_normal((12, 16))
    prototypes = sensitivities(raw / np.linalg.norm(raw, axis=1, keepdims=True), name="example")
    mechanism = Laplace(prototypes, epsilon_g=64.0)
    names = [f"id{i}" for i in range(12)]
    rows = np.vstack([mechanism.sample(i, 80, rng) for i in range(12)])
    table = cf.EmbeddingTable.from_arrays(np.repeat(names, 80), rows, normalize=False)

    split = table.split(dev_fraction=0.5, seed=0)
    candidates = cf.sample_pairs(split.development.identities, count=20, seed=0)
    chosen = cf.select_pairs(split.development, candidates, k=3, disjoint=True)
    protocol = cf.Protocol(name="example-audit", confidence_level=0.95, delta=0.0)
    for pair in chosen:
        protocol.register(cf.FixedTest.fit(None, split.development, pair))
    with tempfile.TemporaryDirectory() as folder:
        sealed = protocol.seal(split.reserved, ledger=cf.Ledger(Path(folder) / "audit.ledger"))
        family = sealed.evaluate()

    for cert in family.certificates:
        i, j = names.index(cert.pair.a), names.index(cert.pair.b)
        exact = mechanism.exact_epsilon(i, j)
        print(
            f"{cert.pair}: epsilon_lower = {cert.epsilon_lower:.3f} [Certificate, "
            f"{family.confidence_level:g} simultaneous]; exact epsilon = {exact:.3f} [known]"
        )
        assert cert.epsilon_lower <= exact, "a valid lower bound never exceeds the truth here"
    verdict = cf.refute(cf.Claim(epsilon=0.5, delta=0.0), family)
    match verdict:
        case cf.Refuted():
            print(verdict)
        case cf.Inconclusive():
            print(verdict)


if __name__ == "__main__":
    main()
