"""Testing a stated privacy claim against certified evidence (paper Sec. 2, "How to test a privacy claim").

There are exactly two verdicts: :class:`Refuted` (some certified lower bound exceeds the claimed
epsilon at the claim's delta) and :class:`Inconclusive`. Nothing in certify says "private".
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, final

import attrs
from typeguard import typeguard_ignore

from certify._core import check_delta, forbid_numeric_use, lower_bound_text
from certify.errors import ParameterError, StatusError
from certify.results import Certificate, CertificateFamily

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = ["Claim", "Inconclusive", "Refuted", "refute"]


def _to_float(value: object) -> object:
    """Converter: real numbers (not bools) to float; anything else is left for the validator."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return value


def _check_epsilon(instance: Claim, attribute: Attribute[float], value: float) -> None:
    """Validator: a claimed epsilon is a finite number >= 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ParameterError(f"Claim.epsilon must be a finite number >= 0; got {value!r}.")


def _check_claim_delta(instance: Claim, attribute: Attribute[float], value: float) -> None:
    """Validator: a claimed delta in [0, 1)."""
    check_delta(value, "Claim.delta")


@final
@attrs.frozen(order=False)
class Claim:
    """A stated single-release guarantee: the mechanism is (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        Claimed epsilon, finite and >= 0.
    delta : float
        Claimed delta in [0, 1).

    Raises
    ------
    ParameterError
        If either value is out of range.

    Examples
    --------
    >>> Claim(epsilon=1.0, delta=1e-5)
    Claim(epsilon=1.0, delta=1e-05)
    """

    epsilon: float = attrs.field(converter=_to_float, validator=_check_epsilon)
    delta: float = attrs.field(default=0.0, converter=_to_float, validator=_check_claim_delta)


@final
@attrs.frozen(order=False)
class Refuted:
    """The claim is false under the stated sampling model, at the family's confidence level.

    Attributes
    ----------
    claim : Claim
        The claim tested.
    certificates : tuple of Certificate
        Every certificate whose bound at ``claim.delta`` exceeds ``claim.epsilon``.
    epsilon_lower : tuple of float
        Those certificates' bounds at ``claim.delta``, in the same order.
    confidence_level : float
        The simultaneous confidence level of the evidence.
    """

    claim: Claim
    certificates: tuple[Certificate, ...]
    epsilon_lower: tuple[float, ...]
    confidence_level: float

    def __str__(self) -> str:
        best = max(self.epsilon_lower)
        return (
            f"Refuted: with at least {_level_text(self.confidence_level)} confidence, epsilon is at "
            f"least {_floor_text(best)} > {self.claim.epsilon:g} at delta = {self.claim.delta:g} for pair "
            f"{self.certificates[self.epsilon_lower.index(best)].pair}, under the iid model."
        )


def _level_text(level: float) -> str:
    """A confidence level as a percentage, rounded down (never stated higher than it is)."""
    hundredths = math.floor(level * 10_000 + 1e-9) / 100
    return f"{hundredths:g}%"


def _floor_text(value: float) -> str:
    """A lower bound with 3 decimals, rounded down (never stated higher than it is)."""
    return lower_bound_text(value)


@final
@attrs.frozen(order=False)
class Inconclusive:
    """No certified lower bound exceeds the claim. This is not evidence that the claim holds.

    Attributes
    ----------
    claim : Claim
        The claim tested.
    best_epsilon_lower : float
        The largest certified bound at ``claim.delta`` (0 when none is positive).
    n_certificates : int
        How many certificates were examined.
    confidence_level : float
        The simultaneous confidence level of the evidence.
    """

    claim: Claim
    best_epsilon_lower: float
    n_certificates: int
    confidence_level: float

    def __str__(self) -> str:
        return (
            f"Inconclusive: no certified bound exceeds epsilon = {self.claim.epsilon:g} at "
            f"delta = {self.claim.delta:g} (largest {_floor_text(self.best_epsilon_lower)} over "
            f"{self.n_certificates} certificates). The audit has not shown the mechanism private."
        )


for _cls in (Refuted, Inconclusive):
    forbid_numeric_use(_cls, "claim")


@typeguard_ignore  # the body refuses other evidence with StatusError and the fix
def refute(claim: Claim, evidence: Certificate | CertificateFamily) -> Refuted | Inconclusive:
    """Test a privacy claim against certified evidence.

    Parameters
    ----------
    claim : Claim
        The (epsilon, delta) guarantee under test.
    evidence : Certificate or CertificateFamily
        Certified lower bounds. Diagnostics and population estimates are refused: they carry no
        confidence statement.

    Returns
    -------
    Refuted or Inconclusive
        ``Refuted`` if some certificate's Eq. 16 bound recomputed at ``claim.delta`` exceeds
        ``claim.epsilon``; otherwise ``Inconclusive``.

    Raises
    ------
    StatusError
        If ``evidence`` is not a Certificate or CertificateFamily.

    Notes
    -----
    The family's error bounds hold simultaneously with probability at least its confidence
    level, so reading every member at the claim's delta and refuting on any one keeps that level
    (paper Sec. 2). An inconclusive verdict never shows the claim true.

    Examples
    --------
    Evidence comes only from a sealed protocol's evaluation; see :class:`certify.Protocol`.
    """
    if not isinstance(claim, Claim):
        raise StatusError(f"claim must be a Claim; got {type(claim).__name__}.")
    if isinstance(evidence, CertificateFamily):
        certs, level = evidence.certificates, evidence.confidence_level
    elif isinstance(evidence, Certificate):
        certs, level = (evidence,), evidence.confidence_level
    else:
        raise StatusError(
            f"evidence must be a Certificate or CertificateFamily; got {type(evidence).__name__}. "
            "Diagnostics and population estimates carry no confidence statement and cannot refute "
            "a claim; evaluate a sealed protocol to obtain certificates."
        )
    bounds = [c.epsilon_lower_at(claim.delta) for c in certs]
    hits = [(c, b) for c, b in zip(certs, bounds, strict=True) if b > claim.epsilon]
    if hits:
        return Refuted(
            claim=claim,
            certificates=tuple(c for c, _ in hits),
            epsilon_lower=tuple(b for _, b in hits),
            confidence_level=level,
        )
    return Inconclusive(
        claim=claim,
        best_epsilon_lower=max(bounds, default=0.0),
        n_certificates=len(certs),
        confidence_level=level,
    )
