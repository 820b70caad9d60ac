"""Audits of callable mechanisms, and the DP-testing literature's mechanisms to check them on.

:func:`audit_mechanism` certifies a lower bound on a mechanism's epsilon from calls on
neighbouring inputs: development calls choose the event, reserved calls are streamed once.
:data:`SUITE` holds the standard mechanisms of the DP-testing literature, by name, with their
claims, exact privacy losses where known and the bounds published tools report; :data:`BUGS`
holds mechanisms with known implementation bugs (floating point among them), with their claims
and exact losses.
"""

from certify.blackbox.audit import MechanismAudit, audit_mechanism, default_ledger
from certify.blackbox.bugs import BUGS, BugMechanism, curator_attack
from certify.blackbox.events import FAMILIES, VALUE_FAMILIES, Family
from certify.blackbox.suite import SUITE, PublishedBound, SuiteMechanism

__all__ = [
    "BUGS",
    "FAMILIES",
    "SUITE",
    "VALUE_FAMILIES",
    "BugMechanism",
    "Family",
    "MechanismAudit",
    "PublishedBound",
    "SuiteMechanism",
    "audit_mechanism",
    "curator_attack",
    "default_ledger",
]
