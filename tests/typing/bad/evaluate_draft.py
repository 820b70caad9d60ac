# expect: attr-defined
"""A draft protocol cannot be evaluated: evaluate exists only after sealing."""

import certify as cf


def run(protocol: cf.Protocol) -> None:
    """Try to evaluate before sealing."""
    print(protocol.evaluate())
