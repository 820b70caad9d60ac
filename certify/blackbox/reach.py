"""The smallest event probability a mechanism audit could have found at its budget.

A violation can hide in an event that is rare under both inputs: with probability ``p`` the
mechanism leaks, otherwise it is private (the curator attack). No audit sees such an event
unless its calls see it, so every report states, for its own budget, the smallest ``p`` of an
event that is impossible under one input and has probability ``p`` under the other that the
audit would refute at the stated claim with its calls at their expected counts. Events rarer
than that are out of reach: an Inconclusive verdict says nothing about them.
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np

from certify.blackbox.audit import MechanismAudit
from certify.protocol.criterion import pessimistic_bound
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds

__all__ = ["smallest_event_probability"]

_DEV_LEVEL: Final = 0.05
_STEPS: Final = 60


def _reserved_value(p: float, n_zero: int, n_event: int, alpha: float, delta: float) -> float:
    """The bound the reserved calls give an event of probability 0 and ``p``, at expected counts."""
    k = math.floor(p * n_event)
    u_zero = clopper_pearson_upper(0, n_zero, alpha)
    u_miss = clopper_pearson_upper(n_event - k, n_event, alpha)
    return epsilon_lower_from_error_bounds(u_zero, u_miss, delta)


def _development_value(
    p: float, calls: int, n_zero: int, n_event: int, alpha: float, delta: float
) -> float:
    """The development criterion of the same event on ``calls`` development calls per input."""
    k = float(math.floor(p * calls))
    value = pessimistic_bound(
        np.array([0.0]), calls, np.array([calls - k]), calls, n_zero, n_event, alpha, delta,
        dev_level=_DEV_LEVEL,
    )
    return float(value[0])


def smallest_event_probability(audit: MechanismAudit, claim_epsilon: float = 0.0) -> float:
    """The smallest probability of an event this audit could have refuted ``claim_epsilon`` on.

    Parameters
    ----------
    audit : MechanismAudit
        A finished audit (its budget, development calls, reserved split and level).
    claim_epsilon : float, default 0.0
        The claimed epsilon (0: any positive bound).

    Returns
    -------
    float
        The smallest ``p`` (on a grid of ratio about 1.3) such that an event of probability 0
        under one input and ``p`` under the other, with every count at its expected value,
        clears ``claim_epsilon`` both in development (the pessimistic criterion on all of the
        chosen pair's development calls, as the histogram family judges its cuts; the other
        families judge on halves and quarters, so for them the reach is up to four times coarser) and
        on the reserved calls (the certificate's Clopper-Pearson bounds at its delta); 1.0 if
        none.

    Notes
    -----
    This is a design statement, not a bound: a real event of that probability is found about
    half of the time (its counts fall below their expectation about as often as above) and
    only if a family scores it apart from the rest. It answers "how rare a violation could this
    audit have seen?", so an Inconclusive verdict is read with its reach. The zero side takes
    the reserved calls of the input with more of them (the most favourable split); the
    development side takes the chosen pair's calls per input in the last round.

    Examples
    --------
    >>> import tempfile, os, numpy as np
    >>> from certify.protocol.ledger import Ledger
    >>> from certify.blackbox.audit import audit_mechanism
    >>> def coin(x, n, rng):
    ...     return (rng.random(n) < 0.5 + 0.1 * x[0]).astype(np.int64)
    >>> ledger = Ledger(os.path.join(tempfile.mkdtemp(), "m.ledger"))
    >>> audit = audit_mechanism(coin, 0, 1, calls=100_000, ledger=ledger, progress=False)
    >>> 1e-3 < smallest_event_probability(audit) < 1e-2
    True
    """
    cert = audit.certificate
    alpha, delta = cert.alpha_per_rate, cert.delta
    rounds = audit.record.content["annotations"].get("development_calls_per_input_by_round")
    per_input = int(rounds[-1]) if rounds else audit.development_calls // 2
    per_input = max(per_input, 1)
    n_zero, n_event = max(cert.n_class0, cert.n_class1), min(cert.n_class0, cert.n_class1)
    for p in np.geomspace(1e-12, 1.0, _STEPS * 2)[1:]:
        p = float(p)
        if (_development_value(p, per_input, n_zero, n_event, alpha, delta) > claim_epsilon
                and _reserved_value(p, n_zero, n_event, alpha, delta) > claim_epsilon):
            return p
    return 1.0
