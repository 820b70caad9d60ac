"""A user script testing curve claims (GDP, zCDP, a privacy profile): every value keeps its status."""

from __future__ import annotations

import tempfile
from typing import Any

import numpy as np
from numpy.typing import NDArray

import certify as cf


def gaussian(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """The Gaussian mechanism with sigma 1 on the first entry (1-GDP, 0.5-zCDP).

    The noise is rounded to a multiple of 2**-32 so that adding it is exact: in plain doubles
    the sum leaks the input through its bits (docs/claims.md).
    """
    noise = np.round(rng.normal(0.0, 1.0, size=n) * 2.0**32) / 2.0**32
    out: NDArray[np.float64] = float(x[0]) + noise
    return out


def profile(epsilon: float) -> float:
    """A stated privacy profile: here the exact profile of 1-GDP."""
    return cf.GDPClaim(1.0).delta_of_epsilon(epsilon)


ledger = cf.Ledger(tempfile.mkdtemp() + "/m.ledger")
claim: cf.AnyClaim = cf.GDPClaim(mu=1.0)
audit: cf.MechanismAudit = cf.audit_mechanism(
    gaussian, 0.0, 1.0, calls=20_000, ledger=ledger, progress=False, claim=claim
)
mu: float = audit.certificate.mu_lower
rho: float = audit.certificate.rho_lower
claims: list[cf.AnyClaim] = [claim, cf.ZCDPClaim(rho=0.5), cf.ProfileClaim(profile, name="1-GDP")]
for c in claims:
    verdict: cf.Refuted | cf.Inconclusive = cf.refute(c, audit.family)
    match verdict:
        case cf.Refuted():
            print(f"{c.describe()}: refuted, certified {max(verdict.values):.3f}")
        case cf.Inconclusive():
            print(f"{c.describe()}: inconclusive, best {verdict.best_value:.3f}")
print(f"mu_lower = {mu:.3f}, rho_lower = {rho:.3f} [Certificate, {audit.level_used:.4f}]")
