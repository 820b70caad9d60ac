# expect: arg-type
"""A result is not a number: float() of it is refused."""

import certify as cf


def best_bound(family: cf.CertificateFamily) -> float:
    """Try to turn certificates into plain numbers."""
    return max(float(c) for c in family.certificates)
