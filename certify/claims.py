"""Testing a stated privacy claim against certified evidence (paper Sec. 2, "How to test a privacy claim").

A claim is a point, :class:`Claim` ``(epsilon, delta)``, or a curve: :class:`GDPClaim` (``mu``-GDP),
:class:`ZCDPClaim` (``rho``-zCDP) or :class:`ProfileClaim` (a privacy profile
``epsilon -> delta(epsilon)``, for example from an accountant). Every certificate bounds the two
error rates of a fixed test, and each claim type forbids some pairs of error rates; a claim is
refuted when the certified pair is one it forbids (the argument is in ``docs/claims.md``).

There are exactly two verdicts: :class:`Refuted` and :class:`Inconclusive`. Nothing in certify
says "private".
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, final

import attrs
import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq, minimize_scalar
from typeguard import typeguard_ignore

from certify._core import check_delta, check_text, forbid_numeric_use, lower_bound_text
from certify.errors import ParameterError, StatusError
from certify.results import Certificate, CertificateFamily, ErrorRateEvidence
from certify.stats.tradeoff import (
    Target,
    epsilon_lower_values,
    gaussian_tradeoff,
    gdp_delta,
    profile_grid,
    zcdp_delta,
)

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = [
    "AnyClaim",
    "Claim",
    "GDPClaim",
    "Inconclusive",
    "ProfileClaim",
    "Refuted",
    "ZCDPClaim",
    "forbids",
    "refute",
    "tradeoff_curve",
]


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

    def target(self) -> Target:
        """What a development choice maximizes to test this claim: Eq. 16 at ``delta``."""
        return Target("epsilon", delta=self.delta)

    def describe(self) -> str:
        """The claim in words, e.g. ``"(epsilon, delta) = (1, 1e-05)"``."""
        return f"(epsilon, delta) = ({self.epsilon:g}, {self.delta:g})"


def _check_parameter(instance: object, attribute: Attribute[float], value: float) -> None:
    """Validator: a curve's parameter is a finite number > 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a finite number > 0; got {value!r}."
        )


def _epsilon_at(delta_of_epsilon: Callable[[float], float], delta: float, upper: float = 200.0) -> float:
    """The smallest epsilon at which a nonincreasing profile reaches ``delta`` (bisection)."""
    check_delta(delta)
    if delta_of_epsilon(0.0) <= delta:
        return 0.0
    if delta_of_epsilon(upper) > delta:
        raise ParameterError(
            f"the profile stays above delta = {delta:g} up to epsilon = {upper:g}; no point to state."
        )
    return float(brentq(lambda e: delta_of_epsilon(e) - delta, 0.0, upper, xtol=1e-12))


@final
@attrs.frozen(order=False)
class GDPClaim:
    """A stated Gaussian-DP guarantee: the mechanism is ``mu``-GDP.

    ``mu``-GDP (Dong, Roth and Su, 2022) means that no test between the outputs on two
    neighbouring inputs has error rates below the Gaussian trade-off curve
    ``beta = Phi(Phi^-1(1 - alpha) - mu)``; the Gaussian mechanism with sensitivity ``s`` and
    noise ``sigma`` is exactly ``(s / sigma)``-GDP.

    Parameters
    ----------
    mu : float
        Claimed ``mu``, finite and > 0.

    Raises
    ------
    ParameterError
        If ``mu`` is not a finite number > 0.

    Examples
    --------
    >>> GDPClaim(1.0)
    GDPClaim(mu=1.0)
    >>> GDPClaim(1.0).implied_point(1e-6).epsilon > 4.8
    True
    """

    mu: float = attrs.field(converter=_to_float, validator=_check_parameter)

    def target(self) -> Target:
        """What a development choice maximizes to test this claim: the certified ``mu``."""
        return Target("mu")

    def delta_of_epsilon(self, epsilon: float) -> float:
        """The claim's privacy profile: ``mu``-GDP is ``(epsilon, delta(epsilon))``-DP for all epsilon."""
        return float(gdp_delta(epsilon, self.mu))

    def implied_point(self, delta: float) -> Claim:
        """The ``(epsilon, delta)`` point claim this curve implies at ``delta`` (the smallest epsilon)."""
        return Claim(_epsilon_at(self.delta_of_epsilon, delta), delta)

    def describe(self) -> str:
        """The claim in words."""
        return f"mu-GDP with mu = {self.mu:g}"


@final
@attrs.frozen(order=False)
class ZCDPClaim:
    """A stated zero-concentrated DP guarantee: the mechanism is ``rho``-zCDP.

    ``rho``-zCDP (Bun and Steinke, 2016) means ``D_lambda(P || Q) <= rho lambda`` for every Renyi
    order ``lambda > 1``, for the output laws on any two neighbouring inputs, both ways; OpenDP's
    Gaussian measurements state their guarantee this way. The Gaussian mechanism with
    sensitivity ``s`` and noise ``sigma`` is exactly ``s^2 / (2 sigma^2)``-zCDP.

    Parameters
    ----------
    rho : float
        Claimed ``rho``, finite and > 0.

    Raises
    ------
    ParameterError
        If ``rho`` is not a finite number > 0.

    Examples
    --------
    >>> ZCDPClaim(0.5)
    ZCDPClaim(rho=0.5)
    """

    rho: float = attrs.field(converter=_to_float, validator=_check_parameter)

    def target(self) -> Target:
        """What a development choice maximizes to test this claim: the certified ``rho``."""
        return Target("rho")

    def delta_of_epsilon(self, epsilon: float) -> float:
        """A delta at which the claim implies ``(epsilon, delta)``-DP (the tight conversion)."""
        return float(zcdp_delta(epsilon, self.rho))

    def implied_point(self, delta: float) -> Claim:
        """The ``(epsilon, delta)`` point claim this curve implies at ``delta``."""
        return Claim(_epsilon_at(self.delta_of_epsilon, delta), delta)

    def describe(self) -> str:
        """The claim in words."""
        return f"rho-zCDP with rho = {self.rho:g}"


def _check_profile(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a privacy profile is callable."""
    if not callable(value):
        raise ParameterError(
            f"ProfileClaim.delta_of_epsilon must be a callable epsilon -> delta; got {value!r:.80}. "
            "Use ProfileClaim.from_pld(pld) for a dp_accounting privacy loss distribution."
        )


def _check_epsilon_max(instance: object, attribute: Attribute[float], value: object) -> None:
    """Validator: the profile's grid ends at a finite epsilon > 0."""
    if not (isinstance(value, float) and math.isfinite(value) and value > 0):
        raise ParameterError(f"ProfileClaim.epsilon_max must be a finite number > 0; got {value!r}.")


@final
@attrs.frozen(order=False, eq=False)
class ProfileClaim:
    """A stated privacy profile: the mechanism is ``(epsilon, delta(epsilon))``-DP for every epsilon.

    DP-SGD accountants (privacy loss distributions, PRV, RDP) state their guarantee this way.

    Parameters
    ----------
    delta_of_epsilon : callable
        ``epsilon -> delta``, a number in [0, 1] for every epsilon >= 0 (nonincreasing for a
        genuine profile).
    name : str, default "privacy profile"
        A readable name for reports.
    epsilon_max : float, default 30.0
        The largest epsilon examined (the profile is tabulated on a grid of ``[0, epsilon_max]``).

    Raises
    ------
    ParameterError
        If the profile is not callable, or returns anything but a number in [0, 1].

    Notes
    -----
    The profile is evaluated at construction on a fixed grid of epsilons (dense near 0,
    geometric above); development choices rank tests by that table, and :func:`refute`
    searches it and then refines near its best point. Every point examined is a genuine point
    of the claim, so a refutation found this way is valid; a coarse grid can only miss one.

    Examples
    --------
    >>> claim = ProfileClaim(GDPClaim(1.0).delta_of_epsilon, name="1-GDP")
    >>> claim.name, len(claim.epsilons) > 100
    ('1-GDP', True)
    """

    delta_of_epsilon: Callable[[float], float] = attrs.field(validator=_check_profile)
    name: str = attrs.field(default="privacy profile", validator=lambda i, a, v: check_text(v, "name"))
    epsilon_max: float = attrs.field(default=30.0, converter=_to_float, validator=_check_epsilon_max)
    epsilons: tuple[float, ...] = attrs.field(init=False, repr=False)
    deltas: tuple[float, ...] = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        corners = (
            [e for e, _ in self.delta_of_epsilon.points]
            if isinstance(self.delta_of_epsilon, _StepProfile) else []
        )
        eps, deltas = profile_grid(self.delta_of_epsilon, self.epsilon_max, corners)
        object.__setattr__(self, "epsilons", tuple(float(e) for e in eps))
        object.__setattr__(self, "deltas", tuple(float(d) for d in deltas))

    @classmethod
    def from_pld(cls, pld: Any, name: str | None = None, epsilon_max: float = 30.0) -> ProfileClaim:
        """The profile of a ``dp_accounting`` privacy loss distribution.

        Parameters
        ----------
        pld : dp_accounting.pld.PrivacyLossDistribution
            Anything with ``get_delta_for_epsilon(epsilon)``; ``dp_accounting``'s pessimistic
            estimates (its default) state deltas at least the true ones, as a claim should.
        name : str, optional
            Default ``"dp_accounting privacy loss distribution"``.
        epsilon_max : float, default 30.0
            As in the class.

        Raises
        ------
        ParameterError
            If ``pld`` has no ``get_delta_for_epsilon``.
        """
        method = getattr(pld, "get_delta_for_epsilon", None)
        if not callable(method):
            raise ParameterError(
                f"pld must have get_delta_for_epsilon (a dp_accounting PrivacyLossDistribution); "
                f"got {type(pld).__name__}."
            )

        def delta_of_epsilon(epsilon: float) -> float:
            return float(method(float(epsilon)))

        return cls(delta_of_epsilon, name or "dp_accounting privacy loss distribution", epsilon_max)

    @classmethod
    def from_points(
        cls, points: Sequence[tuple[float, float]], name: str | None = None
    ) -> ProfileClaim:
        """A profile stated at finitely many points ``(epsilon_i, delta_i)``.

        Being ``(epsilon_i, delta_i)``-DP implies ``(epsilon, delta_i)``-DP for every
        ``epsilon >= epsilon_i``, so between its points the profile is the step
        ``delta(epsilon) = min{delta_i : epsilon_i <= epsilon}`` (1 below the smallest
        ``epsilon_i``): nothing is claimed that the points do not imply.

        Raises
        ------
        ParameterError
            If there are no points, or a point is not a finite epsilon >= 0 with a delta in
            [0, 1].

        Examples
        --------
        >>> claim = ProfileClaim.from_points([(1.0, 1e-3), (2.0, 1e-6)])
        >>> claim.delta_of_epsilon(1.5), claim.delta_of_epsilon(0.5)
        (0.001, 1.0)
        """
        table: list[tuple[float, float]] = []
        for k, point in enumerate(points):
            try:
                e, d = (float(v) for v in point)
            except (TypeError, ValueError) as exc:
                raise ParameterError(
                    f"profile point {k} must be a pair (epsilon, delta); got {point!r}."
                ) from exc
            if not (math.isfinite(e) and e >= 0.0 and 0.0 <= d <= 1.0):
                raise ParameterError(
                    f"profile point {k} must have a finite epsilon >= 0 and a delta in [0, 1]; "
                    f"got ({e!r}, {d!r})."
                )
            table.append((e, d))
        if not table:
            raise ParameterError("a profile needs at least one point (epsilon, delta).")
        steps = tuple(sorted(table))
        top = max(2.0 * steps[-1][0], 30.0)
        return cls(_StepProfile(steps), name or f"{len(steps)}-point profile", top)

    def target(self) -> Target:
        """What a development choice maximizes to test this claim: the profile ratio.

        Ranked on every eighth point of the table (and the corners of a stepwise profile): a
        ranking criterion needs no more, and :func:`refute` reads the whole table.
        """
        keep = sorted({*range(0, len(self.epsilons), 8), len(self.epsilons) - 1})
        corners = (
            {e for e, _ in self.delta_of_epsilon.points}
            if isinstance(self.delta_of_epsilon, _StepProfile) else set()
        )
        keep = sorted({*keep, *(i for i, e in enumerate(self.epsilons) if e in corners)})
        return Target(
            "profile",
            epsilons=tuple(self.epsilons[i] for i in keep),
            deltas=tuple(self.deltas[i] for i in keep),
        )

    def implied_point(self, delta: float) -> Claim:
        """The ``(epsilon, delta)`` point claim this profile states at ``delta``."""
        return Claim(_epsilon_at(self.delta_of_epsilon, delta, self.epsilon_max), delta)

    def describe(self) -> str:
        """The claim in words."""
        return f"the privacy profile {self.name!r}"

    def excess(self, certificate: Certificate) -> tuple[float, float, float]:
        """Where a certificate comes closest to contradicting the profile.

        Returns
        -------
        (float, float, float)
            ``(margin, epsilon, delta)``: the largest ``l(delta(e)) - e`` over the epsilons
            examined, and the point ``(e, delta(e))`` where it is reached. ``l(delta)`` is the
            certificate's bound on epsilon at ``delta``, before flooring at 0 for a
            decision-rule certificate (the larger of Eq. 16's two log ratios), so a negative
            margin says how far short the certificate falls. A positive margin refutes that
            point of the profile.
        """
        evidence = certificate.evidence
        top = math.nextafter(1.0, 0.0)

        def margins(eps: NDArray[np.float64], deltas: NDArray[np.float64]) -> NDArray[np.float64]:
            if isinstance(evidence, ErrorRateEvidence):
                ell = epsilon_lower_values(evidence.u_fpr, evidence.u_fnr, deltas, floor=False)
            else:
                ell = np.array([certificate.epsilon_lower_at(min(float(d), top)) for d in deltas])
            out: NDArray[np.float64] = ell - eps
            return out

        values = margins(np.asarray(self.epsilons), np.asarray(self.deltas))
        i = int(np.argmax(values))
        best = (float(values[i]), self.epsilons[i], self.deltas[i])
        lo = self.epsilons[max(i - 1, 0)]
        hi = self.epsilons[min(i + 1, len(self.epsilons) - 1)]
        if hi > lo and math.isfinite(best[0]):
            def loss(e: float) -> float:
                d = np.array([float(self.delta_of_epsilon(e))])
                value = float(margins(np.array([e]), d)[0])
                return -value if math.isfinite(value) else 1e300

            found = minimize_scalar(loss, bounds=(lo, hi), method="bounded", options={"xatol": 1e-9})
            if -float(found.fun) > best[0]:
                e = float(found.x)
                best = (-float(found.fun), e, float(self.delta_of_epsilon(e)))
        return best


@final
@attrs.frozen
class _StepProfile:
    """``delta(epsilon) = min{delta_i : epsilon_i <= epsilon}`` over sorted points (picklable)."""

    points: tuple[tuple[float, float], ...]

    def __call__(self, epsilon: float) -> float:
        return min((d for e, d in self.points if e <= epsilon), default=1.0)


AnyClaim: TypeAlias = Claim | GDPClaim | ZCDPClaim | ProfileClaim
"""Every claim type :func:`refute` tests."""


def forbids(claim: AnyClaim, u_fpr: NDArray[np.float64], u_fnr: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether the claim forbids a test with these error rates (elementwise).

    The claim's target value at the rates compared with its parameter: Eq. 16 at ``delta``
    against ``epsilon``, the certified ``mu`` or ``rho`` against the claimed one, the profile
    ratio against 1. Forbidden sets are down-closed: smaller rates stay forbidden.
    """
    values = claim.target().values(np.asarray(u_fpr, np.float64), np.asarray(u_fnr, np.float64))
    out: NDArray[np.bool_] = np.asarray(values > _limit(claim))
    return out


def _limit(claim: AnyClaim) -> float:
    """The target value above which the claim is contradicted (the profile ratio's is 1)."""
    value = claim_parameter(claim)[1]
    return 1.0 if value is None else value


def tradeoff_curve(claim: AnyClaim, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
    """The smallest false-negative rate the claim allows at each false-positive rate ``alpha``.

    The claim's trade-off function: exact for point claims (``max(0, 1 - delta - e^eps alpha,
    e^-eps (1 - delta - alpha))``) and GDP claims (``Phi(Phi^-1(1 - alpha) - mu)``), by
    bisection on :func:`forbids` otherwise (to 1e-12).

    Examples
    --------
    >>> round(float(tradeoff_curve(GDPClaim(1.0), np.array([0.5]))[0]), 4)
    0.1587
    """
    a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    match claim:
        case Claim():
            e, d = math.exp(claim.epsilon), claim.delta
            out: NDArray[np.float64] = np.maximum.reduce(
                [np.zeros_like(a), 1.0 - d - e * a, (1.0 - d - a) / e]
            )
            return out
        case GDPClaim():
            return gaussian_tradeoff(a, claim.mu)
    lo, hi = np.zeros_like(a), 1.0 - a  # forbidden at lo (or lo is 0), allowed at 1 - alpha
    allowed_at_zero = ~forbids(claim, a, lo)
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        bad = forbids(claim, a, mid)
        lo = np.where(bad, mid, lo)
        hi = np.where(bad, hi, mid)
    result: NDArray[np.float64] = np.where(allowed_at_zero, 0.0, hi)
    return result


def claim_parameter(claim: AnyClaim) -> tuple[str, float | None]:
    """The claim's parameter name and value (``("epsilon", 1.0)``; a profile has none)."""
    match claim:
        case Claim():
            return "epsilon", claim.epsilon
        case GDPClaim():
            return "mu", claim.mu
        case ZCDPClaim():
            return "rho", claim.rho
        case ProfileClaim():
            return "profile", None


def _level_text(level: float) -> str:
    """A confidence level as a percentage, rounded down (never stated higher than it is)."""
    hundredths = math.floor(level * 10_000 + 1e-9) / 100
    return f"{hundredths:g}%"


def _floor_text(value: float) -> str:
    """A lower bound with 3 decimals, rounded down (never stated higher than it is)."""
    return lower_bound_text(value)


def _ceil_text(value: float) -> str:
    """A shortfall with 3 decimals, rounded up (never stated smaller than it is)."""
    if math.isinf(value):
        return "inf"
    return f"{math.ceil(value * 1000 - 1e-9) / 1000:.3f}"


@final
@attrs.frozen(order=False)
class Refuted:
    """The claim is false under the stated sampling model, at the family's confidence level.

    Attributes
    ----------
    claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim
        The claim tested.
    certificates : tuple of Certificate
        Every certificate that contradicts the claim.
    values : tuple of float
        What each of them certifies, in the claim's terms: the bound on epsilon at
        ``claim.delta`` (point claims), ``mu_lower`` (GDP), ``rho_lower`` (zCDP), or the margin
        by which a point of the profile is exceeded (profiles; see
        :meth:`ProfileClaim.excess`). Each exceeds the claim.
    confidence_level : float
        The simultaneous confidence level of the evidence.
    """

    claim: AnyClaim
    certificates: tuple[Certificate, ...]
    values: tuple[float, ...]
    confidence_level: float

    @property
    def epsilon_lower(self) -> tuple[float, ...]:
        """The certified bounds on epsilon at ``claim.delta`` (point claims only)."""
        if not isinstance(self.claim, Claim):
            raise StatusError(
                f"a refuted {type(self.claim).__name__} holds {_quantity(self.claim)} values, not "
                "epsilon bounds; read verdict.values."
            )
        return self.values

    def __str__(self) -> str:
        best = max(self.values)
        cert = self.certificates[self.values.index(best)]
        head = f"Refuted: with at least {_level_text(self.confidence_level)} confidence, "
        tail = f" for pair {cert.pair}, under the iid model."
        match self.claim:
            case Claim():
                return (
                    f"{head}epsilon is at least {_floor_text(best)} > {self.claim.epsilon:g} at "
                    f"delta = {self.claim.delta:g}{tail}"
                )
            case GDPClaim():
                return (
                    f"{head}the mechanism is not mu-GDP for any mu below {_floor_text(best)} "
                    f"(claimed mu = {self.claim.mu:g}){tail}"
                )
            case ZCDPClaim():
                return (
                    f"{head}the mechanism is not rho-zCDP for any rho below {_floor_text(best)} "
                    f"(claimed rho = {self.claim.rho:g}){tail}"
                )
            case ProfileClaim():
                _, e, d = self.claim.excess(cert)
                return (
                    f"{head}{self.claim.describe()} fails at epsilon = {e:.4g}: at its delta = {d:.3g} "
                    f"epsilon is at least {_floor_text(cert.epsilon_lower_at(d))}{tail}"
                )


def _quantity(claim: AnyClaim) -> str:
    """What a verdict's values are for this claim type."""
    match claim:
        case Claim():
            return "epsilon_lower"
        case GDPClaim():
            return "mu_lower"
        case ZCDPClaim():
            return "rho_lower"
        case ProfileClaim():
            return "profile margin"


@final
@attrs.frozen(order=False)
class Inconclusive:
    """No certificate contradicts the claim. This is not evidence that the claim holds.

    Attributes
    ----------
    claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim
        The claim tested.
    best_value : float
        The largest certified value in the claim's terms (as :attr:`Refuted.values`; 0 when no
        certificate is positive; for a profile, the largest margin, at most 0).
    n_certificates : int
        How many certificates were examined.
    confidence_level : float
        The simultaneous confidence level of the evidence.
    """

    claim: AnyClaim
    best_value: float
    n_certificates: int
    confidence_level: float

    @property
    def best_epsilon_lower(self) -> float:
        """The largest certified bound on epsilon at ``claim.delta`` (point claims only)."""
        if not isinstance(self.claim, Claim):
            raise StatusError(
                f"an inconclusive {type(self.claim).__name__} verdict holds a {_quantity(self.claim)} "
                "value, not an epsilon bound; read verdict.best_value."
            )
        return self.best_value

    def __str__(self) -> str:
        n = f"over {self.n_certificates} certificates"
        tail = " The audit has not shown the mechanism private."
        match self.claim:
            case Claim():
                return (
                    f"Inconclusive: no certified bound exceeds epsilon = {self.claim.epsilon:g} at "
                    f"delta = {self.claim.delta:g} (largest {_floor_text(self.best_value)} {n}).{tail}"
                )
            case GDPClaim():
                return (
                    f"Inconclusive: no certified mu_lower exceeds mu = {self.claim.mu:g} (largest "
                    f"{_floor_text(self.best_value)} {n}).{tail}"
                )
            case ZCDPClaim():
                return (
                    f"Inconclusive: no certified rho_lower exceeds rho = {self.claim.rho:g} (largest "
                    f"{_floor_text(self.best_value)} {n}).{tail}"
                )
            case ProfileClaim():
                return (
                    f"Inconclusive: no certificate contradicts {self.claim.describe()} (the "
                    f"closest falls {_ceil_text(-self.best_value)} short in epsilon, {n}).{tail}"
                )


for _cls in (Refuted, Inconclusive):
    forbid_numeric_use(_cls, "claim")


def _certified(claim: AnyClaim, certificate: Certificate) -> float:
    """What a certificate certifies in the claim's terms, and whether it exceeds the claim."""
    match claim:
        case Claim():
            return certificate.epsilon_lower_at(claim.delta)
        case GDPClaim():
            return certificate.mu_lower
        case ZCDPClaim():
            return certificate.rho_lower
        case ProfileClaim():
            return claim.excess(certificate)[0]


def _exceeds(claim: AnyClaim, value: float) -> bool:
    """Whether a certified value (:func:`_certified`) contradicts the claim."""
    return value > (0.0 if isinstance(claim, ProfileClaim) else _limit(claim))


@typeguard_ignore  # the body refuses other evidence with StatusError and the fix
def refute(claim: AnyClaim, evidence: Certificate | CertificateFamily) -> Refuted | Inconclusive:
    """Test a privacy claim, a point or a curve, against certified evidence.

    Parameters
    ----------
    claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim
        The guarantee under test.
    evidence : Certificate or CertificateFamily
        Certified lower bounds. Diagnostics and population estimates are refused: they carry no
        confidence statement.

    Returns
    -------
    Refuted or Inconclusive
        ``Refuted`` if some certificate contradicts the claim:

        - ``Claim(epsilon, delta)``: its Eq. 16 bound recomputed at ``delta`` exceeds ``epsilon``;
        - ``GDPClaim(mu)``: its ``mu_lower`` exceeds ``mu``;
        - ``ZCDPClaim(rho)``: its ``rho_lower`` exceeds ``rho``;
        - ``ProfileClaim``: at some epsilon examined, its bound at ``delta(epsilon)`` exceeds
          epsilon.

        Otherwise ``Inconclusive``.

    Raises
    ------
    StatusError
        If ``claim`` is not a claim, or ``evidence`` not a Certificate or CertificateFamily.

    Notes
    -----
    A certificate's two error bounds hold simultaneously with probability at least its
    family's level, and so do every family member's. Each claim type forbids the error rates of
    some tests: ``(epsilon, delta)``-DP those below Eq. 2's lines, ``mu``-GDP those below the
    Gaussian trade-off curve, ``rho``-zCDP those whose two Bernoulli laws are further apart in
    Renyi divergence than ``rho lambda``, a profile those below any of its points' lines. All
    four sets are "down-closed": if the true rates are forbidden, so are any smaller ones, and
    the certified bounds sit above the true rates. So when the certified corner is forbidden,
    the true rates are too, and refuting on any member keeps the family's level (paper Sec. 2;
    ``docs/claims.md``). An inconclusive verdict never shows the claim true.

    Examples
    --------
    Evidence comes only from a sealed protocol's evaluation; see :class:`certify.Protocol`.
    """
    if not isinstance(claim, Claim | GDPClaim | ZCDPClaim | ProfileClaim):
        raise StatusError(
            f"claim must be a Claim, GDPClaim, ZCDPClaim or ProfileClaim; got {type(claim).__name__}."
        )
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
    values = [_certified(claim, c) for c in certs]
    hits = [(c, v) for c, v in zip(certs, values, strict=True) if _exceeds(claim, v)]
    if hits:
        return Refuted(
            claim=claim,
            certificates=tuple(c for c, _ in hits),
            values=tuple(v for _, v in hits),
            confidence_level=level,
        )
    floor = -math.inf if isinstance(claim, ProfileClaim) else 0.0
    return Inconclusive(
        claim=claim,
        best_value=max(values, default=floor) if values else 0.0,
        n_certificates=len(certs),
        confidence_level=level,
    )
