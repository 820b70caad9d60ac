# expect: misc
"""Results are frozen: a certified bound cannot be overwritten."""

import certify as cf


def inflate(family: cf.CertificateFamily) -> None:
    """Try to raise a certified bound after issue."""
    cert = family.certificates[0]
    cert.epsilon_lower = 10.0
