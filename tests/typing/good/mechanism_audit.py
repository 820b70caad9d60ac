"""A user script auditing a callable mechanism: every field keeps its status type."""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np
from numpy.typing import NDArray

import certify as cf


def mechanism(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Laplace noise of scale 1 on the first entry."""
    out: NDArray[np.float64] = float(x[0]) + rng.laplace(0.0, 1.0, size=n)
    return out


ledger = cf.Ledger(tempfile.mkdtemp() + "/m.ledger")
audit: cf.MechanismAudit = cf.audit_mechanism(
    mechanism, 0.0, 1.0, calls=20_000, ledger=ledger, progress=False
)
certificate: cf.Certificate = audit.certificate
family: cf.CertificateFamily = audit.family
bound: float = certificate.epsilon_lower
scores: list[float] = [d.score for d in audit.development]
verdict: cf.Refuted | cf.Inconclusive = cf.refute(cf.Claim(epsilon=0.5), audit.family)
print(f"epsilon_lower = {bound:.3f} [Certificate]; {len(scores)} candidates [Diagnostic]; {verdict}")
