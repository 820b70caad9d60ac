"""Audit a callable mechanism as a black box: your own function, then a suite mechanism.

Development calls choose the input pair and the event; reserved calls, made once after sealing,
certify a lower bound on epsilon. Every evaluation of a mechanism is numbered in the ledger, so
reruns with new seeds spend a shrinking share of the error budget.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import certify as cf
from certify.blackbox import SUITE


def noisy_count(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """A count released with Laplace noise of scale 2: claimed 1-DP, 0.5-DP in real arithmetic.

    On doubles ``count + noise`` also leaks the count through its low bits; the default families
    see that too (docs/bugs.md), ``tests="values"`` reads the values only.
    """
    out: NDArray[np.float64] = float(x.sum()) + rng.laplace(0.0, 2.0, size=n)
    return out


with tempfile.TemporaryDirectory() as folder:
    ledger = cf.Ledger(Path(folder) / "mechanisms.ledger")

    # your own mechanism, on two neighbouring databases (one record more)
    audit = cf.audit_mechanism(
        noisy_count, [1, 0, 1, 1], [1, 1, 1, 1], calls=300_000, ledger=ledger, progress=False
    )
    cert = audit.certificate
    print(
        f"{audit.mechanism}: epsilon_lower = {cert.epsilon_lower:.3f} [Certificate, level "
        f"{audit.level_used:.4f}, evaluation {audit.evaluation}] with {audit.chosen}"
    )
    print(cf.refute(cf.Claim(epsilon=0.1), audit.family))  # the bound exceeds 0.1: Refuted

    # a suite mechanism known to violate its claim (noise of scale epsilon instead of 1/epsilon)
    hist = SUITE["NoisyHist2"]
    audit = cf.audit_mechanism(
        hist, inputs=list(hist.input_pairs[:2]), calls=200_000, ledger=ledger, progress=False
    )
    claim = cf.Claim(epsilon=hist.claimed_epsilon)
    print(
        f"{audit.mechanism}: epsilon_lower = {audit.certificate.epsilon_lower:.3f} [Certificate]; "
        f"claimed {hist.claimed_epsilon:g} -> {type(cf.refute(claim, audit.family)).__name__}"
    )
    for candidate in audit.development[:3]:
        print(
            f"  development: {candidate.parameters['test']} on {candidate.pair}: "
            f"predicted bound {candidate.score:.3f} [Diagnostic]"
        )
