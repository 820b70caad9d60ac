"""Audits of callable mechanisms, and the DP-testing literature's mechanisms to check them on.

:func:`audit_mechanism` certifies a lower bound on a mechanism's epsilon from calls on
neighbouring inputs: development calls choose the event, reserved calls are streamed once.
:data:`SUITE` holds the standard mechanisms of the DP-testing literature, by name, with their
claims, exact privacy losses where known and the bounds published tools report.
"""

from certify.blackbox.audit import MechanismAudit, audit_mechanism, default_ledger
from certify.blackbox.events import FAMILIES, Family
from certify.blackbox.suite import SUITE, PublishedBound, SuiteMechanism

__all__ = [
    "FAMILIES",
    "SUITE",
    "Family",
    "MechanismAudit",
    "PublishedBound",
    "SuiteMechanism",
    "audit_mechanism",
    "default_ledger",
]
