# expect: truthy-bool
"""A result is not a truth value: using it as a condition is refused."""

import certify as cf


def unknown(diagnostic: cf.Diagnostic) -> bool:
    """Try to read a diagnostic as a yes/no answer."""
    return not diagnostic
