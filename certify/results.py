"""The three result statuses: Diagnostic, PopulationEstimate, Certificate (paper Sec. 2, Table 1).

An epsilon-like number means nothing without its status. The three classes share no numeric
base, cannot be converted to numbers, ordered, added or truth-tested, and compare equal only to
an instance of the same class. Code that accepts any result takes :data:`Result` and dispatches
with ``match``.

The statuses, their evidence and their guards (no numeric base, validated construction,
reissue from records) stay in one module on purpose: the invariants that keep the three apart
are checked in one place.
"""

from __future__ import annotations

import math
import numbers
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias, final

import attrs
import numpy as np

from certify._core import FrozenMap, Pair, Scalar, check_delta, forbid_numeric_use, freeze_map
from certify._token import ISSUER, IssueToken
from certify.errors import ParameterError, StatusError
from certify.plan import alpha_of_test
from certify.stats._mmd_bounds import theorem7_slack
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds
from certify.stats.mmd import mmd_pure_dp_epsilon_lower
from certify.stats.tradeoff import gdp_mu_lower, tv_mu_lower, tv_rho_lower, zcdp_rho_lower

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = [
    "Certificate",
    "CertificateFamily",
    "Diagnostic",
    "ErrorRateEvidence",
    "Evidence",
    "LedgerStamp",
    "MMDEvidence",
    "PopulationEstimate",
    "Result",
    "StatusName",
    "Summary",
    "summarize",
]

StatusName: TypeAlias = Literal["Diagnostic", "PopulationEstimate", "Certificate"]


def _not_nan(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: a real number that is not NaN."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a real number (not NaN); got {value!r}."
        )


def _nonnegative(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: a real number >= 0 (may be +inf), never NaN."""
    _not_nan(instance, attribute, value)
    if value < 0:
        raise ParameterError(f"{type(instance).__name__}.{attribute.name} must be >= 0; got {value!r}.")


def _probability(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: a number in [0, 1]."""
    _not_nan(instance, attribute, value)
    if not 0.0 <= value <= 1.0:
        raise ParameterError(f"{type(instance).__name__}.{attribute.name} must be in [0, 1]; got {value!r}.")


def _open_unit(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: a number in (0, 1)."""
    _not_nan(instance, attribute, value)
    if not 0.0 < value < 1.0:
        raise ParameterError(f"{type(instance).__name__}.{attribute.name} must be in (0, 1); got {value!r}.")


def _optional_delta(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: None or a delta in [0, 1)."""
    if value is not None:
        check_delta(value, f"{type(instance).__name__}.{attribute.name}")


def _count(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: a non-negative integer."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a non-negative integer; got {value!r}."
        )


def _strings(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: a tuple of strings."""
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a tuple of strings; got {value!r}."
        )


def _sizes(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: a tuple of non-negative integers."""
    if not isinstance(value, tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a tuple of non-negative "
            f"integers; got {value!r}."
        )


def _optional_pair(instance: object, attribute: Attribute[Any], value: Any) -> None:
    """Validator: None or a Pair."""
    if value is not None and not isinstance(value, Pair):
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a Pair or None; got {value!r}."
        )


def _str_tuple(value: Sequence[str]) -> tuple[str, ...]:
    """Converter: any sequence of strings to a tuple."""
    return tuple(value)


def _int_tuple(value: Sequence[Any]) -> tuple[Any, ...]:
    """Converter: any sequence of integers to a tuple of Python ints (others left to the validator)."""
    return tuple(int(v) if isinstance(v, np.integer) else v for v in value)


def _as_float(value: Any) -> Any:
    """Converter: numpy scalars to Python floats (other values are left for the validator)."""
    if isinstance(value, np.floating | np.integer) and not isinstance(value, bool):
        return float(value)
    return value


def _detail_float(details: Mapping[str, Scalar], key: str) -> float | None:
    """A float detail or None."""
    value = details.get(key)
    return None if value is None or isinstance(value, bool | str) else float(value)


def _detail_bool(details: Mapping[str, Scalar], key: str) -> bool | None:
    """A bool detail or None."""
    value = details.get(key)
    return value if isinstance(value, bool) else None


@final
@attrs.frozen(order=False)
class Diagnostic:
    """A modelling score with no differential-privacy meaning (paper Table 1).

    Produced by GaussMech (Eq. 9), KDE-LR (Eq. 10-11) and the MMD permutation test. The number is
    ``score``; it is not an epsilon, not a bound and not an estimate of one.

    Parameters
    ----------
    method : str
        The method that produced the score, e.g. ``"gauss_mech"``.
    score : float
        The diagnostic value (never NaN).
    pair : Pair or None
        The identity pair the score is about, when there is one.
    delta : float or None
        A delta the formula uses (GaussMech), else None.
    assumptions : tuple of str
        The modelling assumptions the score rests on, in words.
    equation : str
        The paper equation implemented, e.g. ``"Eq. 9"``.
    n_samples : tuple of int
        Sizes of the inputs, e.g. ``(n_a, n_b)``.
    parameters : Mapping[str, Scalar]
        The method's parameters.
    details : Mapping[str, Scalar]
        Further numbers the method reports (e.g. ``p_value``).

    Examples
    --------
    >>> d = Diagnostic(method="gauss_mech", score=12.5, equation="Eq. 9")
    >>> d.status
    'Diagnostic'
    """

    status: ClassVar[StatusName] = "Diagnostic"

    method: str
    score: float = attrs.field(converter=_as_float, validator=_not_nan)
    pair: Pair | None = attrs.field(default=None, validator=_optional_pair)
    delta: float | None = attrs.field(default=None, converter=_as_float, validator=_optional_delta)
    assumptions: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple, validator=_strings)
    equation: str = ""
    n_samples: tuple[int, ...] = attrs.field(default=(), converter=_int_tuple, validator=_sizes)
    parameters: FrozenMap = attrs.field(factory=FrozenMap, converter=freeze_map)
    details: FrozenMap = attrs.field(factory=FrozenMap, converter=freeze_map)

    @property
    def p_value(self) -> float | None:
        """The p-value of a hypothesis test that produced this diagnostic, if any."""
        return _detail_float(self.details, "p_value")


@final
@attrs.frozen(order=False)
class PopulationEstimate:
    """A sample value inserted into a valid population inequality; it carries no confidence.

    Produced by MMD-TV (Eq. 12, with the hockey-stick variant of Sec. 4.3) and ROC-HT out-of-fold
    (Eq. 15). ``epsilon_estimate`` may be ``+inf`` (an empirical ROC endpoint); it is a plug-in
    value, not a lower confidence bound, and may exceed the true epsilon.

    Parameters
    ----------
    method : str
        The method, e.g. ``"mmd_tv"`` or ``"roc_oof"``.
    epsilon_estimate : float
        The plug-in value, >= 0, possibly ``inf``.
    pair, delta, assumptions, equation, n_samples, parameters, details
        As for :class:`Diagnostic`.

    Examples
    --------
    >>> e = PopulationEstimate(method="roc_oof", epsilon_estimate=float("inf"),
    ...                        details={"auc": 0.51, "exact_corner": False})
    >>> e.auc, e.exact_corner
    (0.51, False)
    """

    status: ClassVar[StatusName] = "PopulationEstimate"

    method: str
    epsilon_estimate: float = attrs.field(converter=_as_float, validator=_nonnegative)
    pair: Pair | None = attrs.field(default=None, validator=_optional_pair)
    delta: float | None = attrs.field(default=None, converter=_as_float, validator=_optional_delta)
    assumptions: tuple[str, ...] = attrs.field(default=(), converter=_str_tuple, validator=_strings)
    equation: str = ""
    n_samples: tuple[int, ...] = attrs.field(default=(), converter=_int_tuple, validator=_sizes)
    parameters: FrozenMap = attrs.field(factory=FrozenMap, converter=freeze_map)
    details: FrozenMap = attrs.field(factory=FrozenMap, converter=freeze_map)

    @property
    def auc(self) -> float | None:
        """Area under the empirical ROC curve (ROC-HT), else None."""
        return _detail_float(self.details, "auc")

    @property
    def exact_corner(self) -> bool | None:
        """Whether the empirical ROC contains the exact (0, 1) corner (ROC-HT), else None."""
        return _detail_bool(self.details, "exact_corner")

    @property
    def infinite_by_endpoint(self) -> bool | None:
        """Whether an infinite value comes from a zero-denominator endpoint (ROC-HT), else None."""
        return _detail_bool(self.details, "infinite_by_endpoint")

    @property
    def epsilon_hockey_stick(self) -> float | None:
        """The tighter hockey-stick plug-in value 2 artanh(MMD / sqrt 2) (MMD-TV), else None."""
        return _detail_float(self.details, "epsilon_hockey_stick")


def _issued(instance: object, attribute: Attribute[IssueToken], value: IssueToken) -> None:
    """Validator: the certificate was issued by the library."""
    if value is not ISSUER:
        raise StatusError(
            f"{type(instance).__name__} objects are issued only by SealedProtocol.evaluate(); "
            "they cannot be constructed directly."
        )


@final
@attrs.frozen(order=False)
class ErrorRateEvidence:
    """What a fixed decision rule did on reserved rows: error counts and their upper bounds.

    Attributes
    ----------
    false_positives, n_class0 : int
        Errors on, and number of, reserved rows of ``pair.a`` (class 0).
    false_negatives, n_class1 : int
        Errors on, and number of, reserved rows of ``pair.b`` (class 1).
    u_fpr, u_fnr : float
        One-sided Clopper-Pearson upper bounds on the two error rates at ``alpha_per_rate``.
    """

    false_positives: int = attrs.field(validator=_count)
    n_class0: int = attrs.field(validator=_count)
    false_negatives: int = attrs.field(validator=_count)
    n_class1: int = attrs.field(validator=_count)
    u_fpr: float = attrs.field(converter=_as_float, validator=_probability)
    u_fnr: float = attrs.field(converter=_as_float, validator=_probability)

    def check(self, alpha_per_rate: float) -> None:
        """Raise unless the bounds are the Clopper-Pearson bounds of the counts."""
        if self.false_positives > self.n_class0 or self.false_negatives > self.n_class1:
            raise ParameterError("Certificate error counts must not exceed their sample sizes.")
        for name, k, n, u in (
            ("u_fpr", self.false_positives, self.n_class0, self.u_fpr),
            ("u_fnr", self.false_negatives, self.n_class1, self.u_fnr),
        ):
            bound = clopper_pearson_upper(k, n, alpha_per_rate)
            if not math.isclose(bound, u, rel_tol=1e-12, abs_tol=1e-15):
                raise ParameterError(
                    f"Certificate.{name} must be the Clopper-Pearson bound of its counts at "
                    f"alpha_per_rate ({bound!r}); got {u!r}."
                )

    def epsilon_lower_at(self, delta: float) -> float:
        """Eq. 16 from the two error bounds at ``delta``."""
        return epsilon_lower_from_error_bounds(self.u_fpr, self.u_fnr, check_delta(delta))

    def mu_lower(self) -> float:
        """Smallest ``mu`` of Gaussian DP compatible with the two error bounds."""
        return float(gdp_mu_lower(self.u_fpr, self.u_fnr))

    def rho_lower(self) -> float:
        """Smallest ``rho`` of zCDP compatible with the two error bounds (every Renyi order)."""
        return float(zcdp_rho_lower(self.u_fpr, self.u_fnr, refine=True))


@final
@attrs.frozen(order=False)
class MMDEvidence:
    """A one-sided lower confidence bound on the population MMD from reserved rows.

    Attributes
    ----------
    mmd_biased : float
        The biased MMD statistic on the reserved rows (kernel fixed on development data).
    slack : float
        The finite-sample deduction of Gretton et al. (2012), Theorem 7, at level ``alpha``.
    mmd_lower : float
        ``max(0, mmd_biased - slack)``.
    bandwidth : float
        The RBF bandwidth, fixed on development data.
    n_class0, n_class1 : int
        Reserved rows of ``pair.a`` and ``pair.b``.
    alpha : float
        The one-sided error probability of the MMD bound: the whole share of its test,
        ``1 - (1 - alpha_per_rate)^2`` (:func:`certify.plan.alpha_of_test`).
    """

    mmd_biased: float = attrs.field(converter=_as_float, validator=_nonnegative)
    slack: float = attrs.field(converter=_as_float, validator=_nonnegative)
    mmd_lower: float = attrs.field(converter=_as_float, validator=_nonnegative)
    bandwidth: float = attrs.field(converter=_as_float, validator=_nonnegative)
    n_class0: int = attrs.field(validator=_count)
    n_class1: int = attrs.field(validator=_count)
    alpha: float = attrs.field(converter=_as_float, validator=_open_unit)

    def check(self, alpha_per_rate: float) -> None:
        """Raise unless the bound is the Theorem 7 bound of the statistic at its test's level."""
        m, n = self.n_class0, self.n_class1
        if m < 1 or n < 1 or not math.isclose(self.alpha, alpha_of_test(alpha_per_rate), rel_tol=1e-12):
            raise ParameterError(
                "an MMD certificate spends its test's whole level, 1 - (1 - alpha_per_rate)^2."
            )
        slack = theorem7_slack(m, n, self.alpha)
        lower = max(0.0, self.mmd_biased - slack)
        if not (
            math.isclose(slack, self.slack, rel_tol=1e-12)
            and math.isclose(lower, self.mmd_lower, abs_tol=1e-15, rel_tol=1e-12)
        ):
            raise ParameterError("MMDEvidence.mmd_lower must be the Theorem 7 bound of its statistic.")

    def epsilon_lower_at(self, delta: float) -> float:
        """Epsilon implied by ``mmd_lower`` at ``delta`` (Eq. 14 and the hockey-stick bound)."""
        return mmd_pure_dp_epsilon_lower(self.mmd_lower, check_delta(delta))

    @property
    def tv_lower(self) -> float:
        """The lower bound on the total variation distance, ``mmd_lower / sqrt 2`` (kernel in [0, 1])."""
        return min(self.mmd_lower / math.sqrt(2.0), 1.0)

    def mu_lower(self) -> float:
        """Smallest ``mu`` of Gaussian DP compatible with ``tv_lower``."""
        return tv_mu_lower(self.tv_lower)

    def rho_lower(self) -> float:
        """Smallest ``rho`` of zCDP compatible with ``tv_lower`` (Pinsker)."""
        return tv_rho_lower(self.tv_lower)


Evidence: TypeAlias = ErrorRateEvidence | MMDEvidence
"""What a certificate was computed from."""


def _evidence(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: evidence of a known kind."""
    if not isinstance(value, ErrorRateEvidence | MMDEvidence):
        raise StatusError(f"Certificate.evidence must be ErrorRateEvidence or MMDEvidence; got {value!r}.")


def _text(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a string."""
    if not isinstance(value, str):
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a string; got {value!r:.60}."
        )


def _position(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be an integer >= 1; got {value!r}."
        )


@final
@attrs.frozen
class LedgerStamp:
    """Where an evaluation sits in the ledger that spent its reserved data.

    Attributes
    ----------
    ledger_id : str
        The ledger's identity (fixed when it was created; a copy of the file shares it).
    sequence : int
        The ledger entry that marked the reserved data spent.
    head : str
        That entry's SHA-256: it commits to the ledger's whole history up to the spend, so a
        ledger that was rolled back, rewritten or replaced no longer holds it there.
    evaluation : int
        The number of this evaluation among the ledger's evaluations (1, 2, ...).

    Notes
    -----
    :func:`certify.verify` checks a stamp against a ledger or its export (docs/trust.md).
    """

    ledger_id: str = attrs.field(validator=_text)
    sequence: int = attrs.field(validator=_position)
    head: str = attrs.field(validator=_text)
    evaluation: int = attrs.field(validator=_position)


@final
@attrs.frozen(order=False)
class Certificate:
    """A finite-sample lower confidence bound on epsilon for one identity pair.

    Issued only by :meth:`certify.SealedProtocol.evaluate`, as a member of a
    :class:`CertificateFamily` whose bounds hold simultaneously at ``confidence_level``.

    Attributes
    ----------
    method : str
        ``"roc_reserved"`` (a fixed decision rule; Eq. 16) or ``"mmd_reserved"`` (a lower
        confidence bound on the population MMD with a kernel fixed on development data;
        Eq. 14 and the hockey-stick bound).
    test_name : str
        Which registered test produced it (e.g. ``"logistic"``, ``"oracle"`` or ``"mmd"``).
    pair : Pair
        The pair; rows of ``pair.a`` are class 0, rows of ``pair.b`` class 1.
    delta : float
        The delta at which ``epsilon_lower`` is stated.
    epsilon_lower : float
        With at least ``confidence_level`` confidence, simultaneously for the whole family,
        epsilon is at least this, under the iid model.
    confidence_level : float
        The family's simultaneous confidence level.
    family_id : str
        Identifier of the family this certificate belongs to.
    alpha_per_rate : float
        The level of each of the test's two one-sided error bounds. The two rates are counted on
        disjoint reserved rows, so both bounds hold with probability ``(1 - alpha_per_rate)^2``;
        the test's share of the family's budget is ``1 - (1 - alpha_per_rate)^2``
        (:func:`certify.plan.alpha_of_test`), and the shares of a family add up (union bound).
    evidence : ErrorRateEvidence or MMDEvidence
        What the bound was computed from; ``epsilon_lower_at`` recomputes it at any delta.
    protocol_fingerprint : str
        SHA-256 of the pre-registration record.
    data_fingerprint : str
        Fingerprint of the reserved split that was evaluated.
    assumptions : tuple of str
        The sampling model the bound rests on.
    ledger : LedgerStamp
        The ledger entry that spent the reserved data: the ledger's identity, the entry's
        number and hash, and the evaluation's number in that ledger.
    """

    status: ClassVar[StatusName] = "Certificate"

    method: str
    test_name: str
    pair: Pair = attrs.field(validator=attrs.validators.instance_of(Pair))
    delta: float = attrs.field(converter=_as_float)
    epsilon_lower: float = attrs.field(converter=_as_float, validator=_nonnegative)
    confidence_level: float = attrs.field(converter=_as_float, validator=_open_unit)
    family_id: str
    alpha_per_rate: float = attrs.field(converter=_as_float, validator=_open_unit)
    evidence: Evidence = attrs.field(validator=_evidence)
    protocol_fingerprint: str
    data_fingerprint: str
    assumptions: tuple[str, ...] = attrs.field(converter=_str_tuple, validator=_strings)
    equation: str = "Eq. 16"
    ledger: LedgerStamp = attrs.field(kw_only=True, validator=attrs.validators.instance_of(LedgerStamp))
    _issuer: IssueToken = attrs.field(kw_only=True, alias="_issuer", repr=False, eq=False, validator=_issued)

    def __attrs_post_init__(self) -> None:
        check_delta(self.delta, "Certificate.delta")
        self.evidence.check(self.alpha_per_rate)
        expected = self.evidence.epsilon_lower_at(self.delta)
        if not math.isclose(expected, self.epsilon_lower, rel_tol=1e-12, abs_tol=1e-15):
            raise ParameterError(
                f"Certificate.epsilon_lower must follow from its evidence ({expected!r}); "
                f"got {self.epsilon_lower!r}."
            )

    def epsilon_lower_at(self, delta: float) -> float:
        """The bound recomputed from the same evidence at another ``delta``.

        Parameters
        ----------
        delta : float
            In [0, 1).

        Returns
        -------
        float
            The lower confidence bound on epsilon at that delta; the confidence statement is the
            family's, since the evidence is the same.

        Raises
        ------
        ParameterError
            If ``delta`` is outside [0, 1).
        """
        return self.evidence.epsilon_lower_at(delta)

    @property
    def mu_lower(self) -> float:
        """Certified: the mechanism is not ``mu``-GDP for any ``mu`` below this.

        With at least ``confidence_level`` confidence (the family's, simultaneously), under
        the iid model. A decision-rule certificate gives
        ``Phi^-1(1 - u_fpr) + Phi^-1(1 - u_fnr)`` (:func:`certify.stats.tradeoff.gdp_mu_lower`):
        ``mu``-GDP forbids a test whose two error rates lie below the Gaussian trade-off curve,
        and the true rates lie below their bounds. An MMD certificate gives
        ``2 Phi^-1((1 + TV) / 2)`` from its lower bound on the total variation distance.
        """
        return self.evidence.mu_lower()

    @property
    def rho_lower(self) -> float:
        """Certified: the mechanism is not ``rho``-zCDP for any ``rho`` below this.

        With at least ``confidence_level`` confidence (the family's, simultaneously), under
        the iid model. A decision-rule certificate gives the largest, over Renyi orders
        ``lambda > 1`` and both orders of the inputs, of the Bernoulli divergence of the
        event's two probabilities at their bounds divided by ``lambda``
        (:func:`certify.stats.tradeoff.zcdp_rho_lower`); an MMD certificate gives ``2 TV^2``
        (Pinsker) from its lower bound on the total variation distance.
        """
        return self.evidence.rho_lower()

    def _rates(self) -> ErrorRateEvidence:
        """The error-rate evidence, or a StatusError naming what this certificate carries instead."""
        if isinstance(self.evidence, ErrorRateEvidence):
            return self.evidence
        raise StatusError(
            f"this {self.method} certificate has no error counts; it rests on an MMD bound "
            "(read certificate.evidence)."
        )

    @property
    def n_class0(self) -> int:
        """Reserved rows of ``pair.a``."""
        return self.evidence.n_class0

    @property
    def n_class1(self) -> int:
        """Reserved rows of ``pair.b``."""
        return self.evidence.n_class1

    @property
    def false_positives(self) -> int:
        """Errors on the reserved rows of ``pair.a`` (decision-rule certificates)."""
        return self._rates().false_positives

    @property
    def false_negatives(self) -> int:
        """Errors on the reserved rows of ``pair.b`` (decision-rule certificates)."""
        return self._rates().false_negatives

    @property
    def u_fpr(self) -> float:
        """Upper confidence bound on the false-positive rate (decision-rule certificates)."""
        return self._rates().u_fpr

    @property
    def u_fnr(self) -> float:
        """Upper confidence bound on the false-negative rate (decision-rule certificates)."""
        return self._rates().u_fnr

    @property
    def fpr(self) -> float:
        """Observed false-positive rate on the reserved rows of ``pair.a``."""
        return self.false_positives / self.n_class0

    @property
    def fnr(self) -> float:
        """Observed false-negative rate on the reserved rows of ``pair.b``."""
        return self.false_negatives / self.n_class1

    @property
    def zero_errors(self) -> bool:
        """Whether the test made no error at all (the bound is then at its sample-size ceiling)."""
        return self.false_positives == 0 and self.false_negatives == 0


def _check_family(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a non-empty tuple of certificates at the family's level."""
    if not isinstance(value, tuple) or not all(isinstance(c, Certificate) for c in value):
        raise StatusError(f"CertificateFamily.certificates must be a tuple of Certificate; got {value!r}.")


@final
@attrs.frozen(order=False)
class CertificateFamily:
    """Certificates that hold simultaneously at one confidence level (union bound).

    Attributes
    ----------
    certificates : tuple of Certificate
        The members, in registration order.
    confidence_level : float
        With at least this probability, every member's bound holds at once.
    family_id : str
        Identifier shared by the members.
    sources : tuple of str
        SHA-256 of the pre-registration record(s) the members come from.
    protocol_name : str
        Name of the protocol (``"a + b"`` after a merge).
    """

    certificates: tuple[Certificate, ...] = attrs.field(validator=_check_family)
    confidence_level: float = attrs.field(converter=_as_float, validator=_open_unit)
    family_id: str
    sources: tuple[str, ...] = attrs.field(converter=_str_tuple, validator=_strings)
    protocol_name: str
    _issuer: IssueToken = attrs.field(kw_only=True, alias="_issuer", repr=False, eq=False, validator=_issued)

    def __attrs_post_init__(self) -> None:
        for cert in self.certificates:
            if cert.family_id != self.family_id or not math.isclose(
                cert.confidence_level, self.confidence_level, rel_tol=1e-12
            ):
                raise StatusError(
                    "every certificate in a family must carry the family's id and confidence level."
                )

    def __iter__(self) -> Iterator[Certificate]:
        return iter(self.certificates)

    def __len__(self) -> int:
        return len(self.certificates)

    @property
    def alpha_total(self) -> float:
        """Sum of the tests' error levels ``1 - (1 - alpha_per_rate)^2`` (at most 1 - confidence_level)."""
        return math.fsum(alpha_of_test(c.alpha_per_rate) for c in self.certificates)

    @property
    def n_positive(self) -> int:
        """How many members certify an epsilon above zero."""
        return sum(1 for c in self.certificates if c.epsilon_lower > 0.0)

    def merge(self, other: CertificateFamily) -> CertificateFamily:
        """Join two families into one whose members hold simultaneously.

        Parameters
        ----------
        other : CertificateFamily
            Another family, from a different evaluation.

        Returns
        -------
        CertificateFamily
            Members of both, at confidence ``1 - (alpha_1 + alpha_2)`` where ``alpha_i = 1 -
            confidence_level_i`` (union bound); never the original level.

        Raises
        ------
        StatusError
            If ``other`` is not a CertificateFamily, the families share a source, or the merged
            confidence would not be positive.
        """
        if not isinstance(other, CertificateFamily):
            raise StatusError(
                f"only a CertificateFamily can be merged into a family; got {type(other).__name__}."
            )
        if set(self.sources) & set(other.sources):
            raise StatusError("these families share a pre-registration record; merging would count it twice.")
        alpha = (1.0 - self.confidence_level) + (1.0 - other.confidence_level)
        if alpha >= 1.0:
            raise StatusError(f"merging gives confidence 1 - {alpha:.6g} <= 0; nothing could be claimed.")
        level = 1.0 - alpha
        family_id = f"merged-{uuid.uuid4().hex[:12]}"
        certs = tuple(
            attrs.evolve(c, confidence_level=level, family_id=family_id, _issuer=ISSUER)
            for c in (*self.certificates, *other.certificates)
        )
        return CertificateFamily(
            certificates=certs,
            confidence_level=level,
            family_id=family_id,
            sources=(*self.sources, *other.sources),
            protocol_name=f"{self.protocol_name} + {other.protocol_name}",
            _issuer=ISSUER,
        )


Result: TypeAlias = Diagnostic | PopulationEstimate | Certificate
"""Any result: a Diagnostic, a PopulationEstimate or a Certificate."""

for _cls, _field in (
    (Diagnostic, "score"),
    (PopulationEstimate, "epsilon_estimate"),
    (Certificate, "epsilon_lower"),
    (CertificateFamily, "certificates"),
):
    forbid_numeric_use(_cls, _field)


def _guard_init(cls: type[Any]) -> None:
    """Wrap the generated ``__init__`` so a missing issuer raises StatusError, not TypeError."""
    generated = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("_issuer") is not ISSUER:
            raise StatusError(
                f"{cls.__name__} objects are issued only by SealedProtocol.evaluate(); "
                "they cannot be constructed directly."
            )
        generated(self, *args, **kwargs)

    __init__.__doc__ = generated.__doc__
    cls.__init__ = __init__


_guard_init(Certificate)
_guard_init(CertificateFamily)


def _reissue(cls: type[Any], fields: dict[str, Any]) -> Any:
    """Rebuild a pickled certificate or family through its validating constructor."""
    return cls(**fields, _issuer=ISSUER)


def _reduce_issued(self: Any) -> tuple[Any, ...]:
    """Pickle as a call of the validating constructor, so loading re-checks every field.

    A state-copying unpickle would restore whatever the bytes hold; this way a loaded
    certificate passes the same checks as an issued one (its bound follows from its evidence,
    the evidence's bounds from its counts, a family's members share its level), or loading
    raises.
    """
    fields = {a.name: getattr(self, a.name) for a in attrs.fields(type(self)) if a.name != "_issuer"}
    return (_reissue, (type(self), fields))


Certificate.__reduce__ = _reduce_issued  # type: ignore[method-assign]
CertificateFamily.__reduce__ = _reduce_issued  # type: ignore[method-assign]


@final
@attrs.frozen(order=False)
class Summary:
    """Median and counts of results that share one status and one method.

    Attributes
    ----------
    status : str
        ``"Diagnostic"``, ``"PopulationEstimate"`` or ``"Certificate"``.
    method : str
        The method all summarized results share.
    value_name : str
        Which field was summarized: ``score``, ``epsilon_estimate`` or ``epsilon_lower``.
    count : int
        Number of results.
    median : float
        Median of the field (``inf`` when more than half are infinite).
    n_infinite : int
        How many values are ``+inf``.
    n_positive : int
        How many values are above zero.
    """

    status: StatusName
    method: str
    value_name: str
    count: int
    median: float
    n_infinite: int
    n_positive: int


def _value(result: Result) -> tuple[str, float]:
    """The number a result carries, with its field name."""
    match result:
        case Diagnostic():
            return "score", result.score
        case PopulationEstimate():
            return "epsilon_estimate", result.epsilon_estimate
        case Certificate():
            return "epsilon_lower", result.epsilon_lower
    raise StatusError(f"expected a Diagnostic, PopulationEstimate or Certificate; got {result!r}.")


def summarize(results: Sequence[Result]) -> Summary:
    """Summarize results of one status and one method: median, infinities, positives.

    Parameters
    ----------
    results : sequence of Diagnostic, PopulationEstimate or Certificate
        Non-empty, all of the same class and the same method.

    Returns
    -------
    Summary
        The median of the status's own field, with counts.

    Raises
    ------
    StatusError
        If the results mix statuses or methods; their numbers do not measure the same thing.
    ParameterError
        If ``results`` is empty.

    Notes
    -----
    A median of certificates is descriptive: the family's simultaneous confidence statement is
    about each member, not about the median.

    Examples
    --------
    >>> s = summarize([Diagnostic(method="m", score=1.0), Diagnostic(method="m", score=3.0)])
    >>> s.median, s.status
    (2.0, 'Diagnostic')
    """
    if len(results) == 0:
        raise ParameterError("results must be a non-empty sequence of results; got an empty one.")
    first = results[0]
    for r in results:
        if type(r) is not type(first):
            raise StatusError(
                f"cannot aggregate a {type(r).__name__} with a {type(first).__name__}: their "
                "numbers have different statuses. Summarize each status separately."
            )
        if r.method != first.method:
            raise StatusError(
                f"cannot aggregate {r.method!r} with {first.method!r}: different methods give "
                "numbers on different scales. Summarize each method separately."
            )
    name, _ = _value(first)
    values = np.array([_value(r)[1] for r in results], dtype=np.float64)
    return Summary(
        status=first.status,
        method=first.method,
        value_name=name,
        count=len(values),
        median=float(np.median(values)),
        n_infinite=int(np.isinf(values).sum()),
        n_positive=int((values > 0).sum()),
    )
