# expect: operator
"""A modelling score cannot be compared with a certified lower bound."""

import certify as cf


def report(diagnostic: cf.Diagnostic, family: cf.CertificateFamily) -> None:
    """Try to compare a score with a certified bound."""
    print("stronger" if diagnostic < family.certificates[0] else "weaker")
