# expect: arg-type
"""A curve claim is not a number: passing a GDPClaim where a mu is expected is refused."""

import certify as cf


def certified_margin(certificate: cf.Certificate, claimed_mu: float) -> float:
    """How far the certified mu exceeds a claimed one."""
    return certificate.mu_lower - claimed_mu


def check(certificate: cf.Certificate) -> float:
    """Pass the claim object instead of its parameter."""
    return certified_margin(certificate, cf.GDPClaim(1.0))
