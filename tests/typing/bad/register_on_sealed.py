# expect: attr-defined
"""A sealed protocol can no longer take tests: register exists only on the draft."""

import certify as cf


def add_after_sealing(sealed: cf.SealedProtocol, test: cf.FixedTest) -> None:
    """Try to add a test after sealing."""
    sealed.register(test)
