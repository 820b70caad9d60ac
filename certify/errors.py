"""The error tree of certify.

Every error certify raises on purpose derives from :class:`CertifyError` and from the built-in
exception a caller would expect for that kind of problem, so ``except ValueError`` still works.
Messages name the problem, the constraint and the value, then the fix when one is known.
"""

from __future__ import annotations

from attrs.exceptions import FrozenInstanceError

__all__ = [
    "CertifyError",
    "DataError",
    "EstimatorError",
    "ImmutableResultError",
    "LedgerError",
    "MechanismError",
    "ParameterError",
    "ProtocolError",
    "ProtocolSealedError",
    "RecordError",
    "ReservedSplitReusedError",
    "StatusError",
]


class CertifyError(Exception):
    """Root of every error certify raises on purpose."""


class ParameterError(ValueError, CertifyError):
    """A parameter is outside its allowed range or of the wrong kind."""


class DataError(ValueError, CertifyError):
    """Input data cannot be used as given (bad file, bad values, too few rows, unknown identity)."""


class EstimatorError(TypeError, CertifyError):
    """An estimator or score function cannot be used as a fixed test."""


class StatusError(TypeError, CertifyError):
    """Results of different statuses (or methods) were combined, or a result was used as a number."""


class ImmutableResultError(FrozenInstanceError, CertifyError):
    """A field of a result, claim or record was assigned to; results never change once issued."""

    # attrs' FrozenError pins ``args`` to a class-level constant (attrs 23) or takes no
    # message at all (attrs 26); restore the per-instance arguments so ``e.args``, pickling
    # and logging see the real message, whichever attrs is installed.
    args = BaseException.args

    def __init__(self, message: str = "can't set attribute") -> None:
        AttributeError.__init__(self, message)
        self.msg = message


class ProtocolError(RuntimeError, CertifyError):
    """The pre-registration protocol was used out of order or does not fit its data."""


class ProtocolSealedError(ProtocolError):
    """A sealed protocol was asked to change (register a test, change a setting)."""


class ReservedSplitReusedError(ProtocolError):
    """A reserved split was evaluated before; it can be evaluated once, ever."""


class RecordError(ValueError, CertifyError):
    """A pre-registration record is malformed, was edited after sealing, or belongs to other data."""


class LedgerError(RuntimeError, CertifyError):
    """The ledger file is unreadable, corrupted, not a ledger, or cannot be written."""


class MechanismError(ValueError, CertifyError):
    """A mechanism under audit raised, or returned outputs that cannot be audited.

    The message names the mechanism, the input and the problem (an exception, NaN, a wrong
    shape, a different number of outputs than requested, non-numeric values).
    """
