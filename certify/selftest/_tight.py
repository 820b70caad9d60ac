"""Tight coverage cases: known-epsilon pairs whose certified bound is tight, and injectable bugs.

A certificate family fails when one of its certificates exceeds the exact epsilon. On the tight
cases a correct implementation fails with probability close to (not far below) the nominal 0.05,
so an anti-conservative implementation shows up as a failure probability above 0.05. The
probability is computed exactly, by summing binomial probabilities over the error counts, through
certify's public statistics (:func:`certify.stats.binomial.clopper_pearson_upper`,
:func:`certify.stats.binomial.epsilon_lower_from_error_bounds`,
:func:`certify.plan.alpha_per_rate`); the one bug whose law is not a binomial sum (a threshold
chosen on the counted rows) is simulated. A few families also run through the sealed path
(``FixedTest`` -> ``Protocol.seal`` -> ``evaluate``), and each issued certificate is re-derived
from its error counts, so the exact probability is that of the certificates certify issues.
"""

from __future__ import annotations

import math
import numbers
import tempfile
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, final, get_args

import attrs
import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom

from certify._core import check_int, first_true
from certify.errors import ParameterError
from certify.plan import alpha_per_rate
from certify.stats.binomial import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_from_error_bounds,
)

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

    from certify.protocol import FixedTest
    from certify.results import Certificate

__all__ = [
    "CONFIDENCE_LEVEL",
    "INJECTIONS",
    "SELECTION_THRESHOLDS",
    "TIGHT_CASES",
    "Injection",
    "MechanismName",
    "TightCase",
    "TightCoverage",
    "check_injection",
    "power_to_flag",
    "run_tight_cases",
]

Injection: TypeAlias = Literal[
    "none", "normal_approximation", "no_bonferroni", "reused_rows", "mechanism_level", "no_evaluation_share"
]
"""A known bug substituted into the tight cases (``"none"``: certify as it is). The last two are
bugs of the mechanism route (:mod:`certify.selftest._mechanism`); the table cases ignore them."""
MECHANISM_BUGS: Final[tuple[Injection, ...]] = ("mechanism_level", "no_evaluation_share")
"""Injections that only the mechanism route's tight cases are affected by."""
INJECTIONS: Final[tuple[Injection, ...]] = get_args(Injection)
"""Every value of :data:`Injection`, ``"none"`` first."""
MechanismName: TypeAlias = Literal["randomized_response", "laplace"]
"""The mechanisms of the tight cases."""
Method: TypeAlias = Literal["exact", "simulated"]
CONFIDENCE_LEVEL: Final = 0.95
"""Simultaneous confidence level of every tight-case family."""
NOMINAL: Final = 1.0 - CONFIDENCE_LEVEL
SELECTION_THRESHOLDS: Final[tuple[float, ...]] = tuple(round(-1.0 + 0.01 * j, 2) for j in range(301))
"""Candidate thresholds ``-1, -0.99, ..., 2`` of the ``"reused_rows"`` bug on the Laplace case."""
_TAIL: Final = 1e-17
"""Binomial tail mass left out of an exact sum on either side (the lower tail counted as failing)."""
_CHUNK: Final = 500
"""Simulated families drawn at once."""
_FLAG_ALPHA: Final = 0.05
"""One-sided error of the Clopper-Pearson lower bound that flags a simulated failure rate."""


def _check_mechanism(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a known mechanism name."""
    if value not in get_args(MechanismName):
        raise ParameterError(
            f"TightCase.mechanism must be 'randomized_response' or 'laplace'; got {value!r}."
        )


def _check_epsilon(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a finite epsilon > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 < float(value) < math.inf:
        raise ParameterError(f"TightCase.epsilon must be a finite number > 0; got {value!r}.")


def _check_count(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be an integer >= 1; got {value!r}."
        )


def _check_tally(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: an integer >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be an integer >= 0; got {value!r}."
        )


def _check_probability(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
        raise ParameterError(
            f"{type(instance).__name__}.{attribute.name} must be a number in [0, 1]; got {value!r}."
        )


def _laplace_above(epsilon: float, t: NDArray[np.float64]) -> NDArray[np.float64]:
    """``P(Y >= t)`` for ``Y`` Laplace with location 0 and scale ``1 / epsilon``."""
    out: NDArray[np.float64] = np.where(
        t >= 0.0, 0.5 * np.exp(-epsilon * np.abs(t)), 1.0 - 0.5 * np.exp(-epsilon * np.abs(t))
    )
    return out


@final
@attrs.frozen
class TightCase:
    """A known-epsilon pair family whose optimal event makes the certified bound tight.

    Parameters
    ----------
    mechanism : {"randomized_response", "laplace"}
        ``"randomized_response"``: a bit reported truthfully with probability
        ``e^epsilon / (1 + e^epsilon)``, inputs 0 (class 0) and 1 (class 1), event
        ``{output = 1}``. ``"laplace"``: ``y = x + Laplace(1 / epsilon)``, inputs 0 and 1
        (sensitivity 1), event ``{y >= 1}``.
    epsilon : float
        The exact epsilon of every pair (delta = 0), > 0.
    pairs : int
        Independent pairs (disjoint inputs, fresh rows) in one certificate family.
    n_class0, n_class1 : int
        Reserved rows of each pair's class-0 and class-1 input.

    Raises
    ------
    ParameterError
        If a field is out of range.

    Notes
    -----
    Both events are optimal: they attain the mechanism's epsilon exactly, so the certified bound
    of Eq. 16 is tight. For randomized response both error rates equal ``1 / (1 + e^epsilon)``
    and both DP inequalities ``FPR + e^epsilon FNR >= 1`` and ``FNR + e^epsilon FPR >= 1`` hold
    with equality: a certificate fails when either rate's bound falls short, so a family can fail
    at nearly the full nominal level. For the Laplace pair every event ``{y >= t}`` with ``t >=
    1`` lies where the privacy loss equals ``-epsilon`` and attains epsilon; ``t = 1`` has the
    most events of these, so it maximises the certified bound. Its error rates are ``FPR =
    e^-epsilon / 2`` and ``FNR = 1 / 2`` in closed form. Only ``FNR + e^epsilon FPR >= 1`` is
    tight, and with many class-1 rows a failure needs the class-0 bound to fall short: a correct
    family then fails with probability close to ``pairs * alpha_per_rate``, about half the
    nominal level, and no correct implementation can do much more on such a pair.

    Examples
    --------
    >>> case = TightCase("laplace", 3.0, 4, 960, 100_000)
    >>> round(case.fpr, 5), case.fnr, case.event
    (0.02489, 0.5, 'y >= 1')
    """

    mechanism: MechanismName = attrs.field(validator=_check_mechanism)
    epsilon: float = attrs.field(validator=_check_epsilon)
    pairs: int = attrs.field(validator=_check_count)
    n_class0: int = attrs.field(validator=_check_count)
    n_class1: int = attrs.field(validator=_check_count)

    @property
    def threshold(self) -> float:
        """Threshold on the output: the test predicts class 1 when ``output >= threshold``."""
        return 0.5 if self.mechanism == "randomized_response" else 1.0

    @property
    def event(self) -> str:
        """The optimal event, in words."""
        return "output = 1" if self.mechanism == "randomized_response" else "y >= 1"

    @property
    def fpr(self) -> float:
        """Exact false-positive rate: the event's probability under input 0."""
        if self.mechanism == "randomized_response":
            return _flip(self.epsilon)
        return 0.5 * math.exp(-self.epsilon)

    @property
    def fnr(self) -> float:
        """Exact false-negative rate: the complement's probability under input 1."""
        if self.mechanism == "randomized_response":
            return _flip(self.epsilon)
        return 0.5

    def describe(self) -> str:
        """One line: mechanism, epsilon, event, pairs and rows."""
        return (
            f"{self.mechanism} epsilon={self.epsilon:g}, event {{{self.event}}}, {self.pairs} pairs, "
            f"{self.n_class0}/{self.n_class1} reserved rows"
        )


def _flip(epsilon: float) -> float:
    """Randomized response's flip probability ``1 / (1 + e^epsilon)``."""
    return math.exp(-epsilon) / (1.0 + math.exp(-epsilon))


TIGHT_CASES: Final[tuple[TightCase, ...]] = (
    TightCase("randomized_response", 5.0, 4, 5700, 5700),
    TightCase("laplace", 3.0, 4, 960, 100_000),
)
"""The self-test's tight cases (sizes where the binomial lattice keeps the bound least conservative)."""


def _check_method(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: 'exact' or 'simulated'."""
    if value not in ("exact", "simulated"):
        raise ParameterError(f"TightCoverage.method must be 'exact' or 'simulated'; got {value!r}.")


def _check_injection_field(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a known injection."""
    check_injection(value)


@final
@attrs.frozen
class TightCoverage:
    """Family-wise failure probability of one tight case, with or without an injected bug.

    Attributes
    ----------
    case : TightCase
        The case.
    inject : str
        The injected bug (``"none"``: certify as it is).
    method : {"exact", "simulated"}
        ``"exact"``: a sum over every binomial outcome; ``"simulated"``: seeded Monte Carlo.
    rate : float
        The exact failure probability, or the observed fraction of failed families.
    families : int
        Simulated families (0 when exact).
    failures : int
        Simulated families with a certificate above the exact epsilon (0 when exact).
    ci_low : float
        Lower end of the one-sided 95% Clopper-Pearson interval of the failure probability; the
        exact probability itself when exact.
    nominal : float
        The nominal failure probability ``1 - confidence_level`` (0.05).
    sealed_certificates : int
        Certificates issued by the sealed path and re-derived from their error counts.
    sealed_mismatches : int
        Of those, certificates that differ from the derivation (0 for a correct certify).
    evaluation : int
        0 for a table protocol's case; ``k`` for the ``k``-th evaluation of a mechanism audit
        (:func:`certify.selftest.run_mechanism_cases`), whose nominal level is its share of the
        error budget, ``0.05 * 6 / (pi^2 k^2)``.
    """

    case: TightCase = attrs.field(validator=attrs.validators.instance_of(TightCase))
    inject: Injection = attrs.field(validator=_check_injection_field)
    method: Method = attrs.field(validator=_check_method)
    rate: float = attrs.field(validator=_check_probability)
    families: int = attrs.field(validator=_check_tally)
    failures: int = attrs.field(validator=_check_tally)
    ci_low: float = attrs.field(validator=_check_probability)
    nominal: float = attrs.field(validator=_check_probability)
    sealed_certificates: int = attrs.field(default=0, validator=_check_tally)
    sealed_mismatches: int = attrs.field(default=0, validator=_check_tally)
    evaluation: int = attrs.field(default=0, validator=_check_tally)

    @property
    def route(self) -> str:
        """``"table"`` (a sealed table protocol) or ``"mechanism"`` (evaluation ``k`` of an audit)."""
        return "table" if self.evaluation == 0 else "mechanism"

    @property
    def label(self) -> str:
        """The case's mechanism, with the route and evaluation number for the mechanism route."""
        if self.evaluation == 0:
            return self.case.mechanism
        return f"{self.case.mechanism} (mechanism route, evaluation {self.evaluation})"

    @property
    def flagged(self) -> bool:
        """True when the failure probability is significantly above nominal (``ci_low > nominal``)."""
        return self.ci_low > self.nominal

    @property
    def consistent(self) -> bool:
        """True when not flagged and every sealed certificate matched its derivation."""
        return not self.flagged and self.sealed_mismatches == 0


def check_injection(inject: object) -> Injection:
    """Validate an injection name.

    Parameters
    ----------
    inject : str
        One of :data:`INJECTIONS`.

    Returns
    -------
    str
        ``inject``, typed as :data:`Injection`.

    Raises
    ------
    ParameterError
        If ``inject`` is not a known injection.

    Examples
    --------
    >>> check_injection("no_bonferroni")
    'no_bonferroni'
    """
    for name in INJECTIONS:
        if inject == name and isinstance(inject, str):
            return name
    raise ParameterError(
        f"inject must be one of {', '.join(repr(i) for i in INJECTIONS)}; got {inject!r}. Use "
        "'none' to test certify as it is."
    )


# -- the certificate of one test, with an injected bug -----------------------------------------


def _rate_alpha(case: TightCase, inject: Injection) -> float:
    """Level of each one-sided error bound; the ``no_bonferroni`` bug spends the whole level on each."""
    if inject == "no_bonferroni":
        return 1.0 - CONFIDENCE_LEVEL
    return alpha_per_rate(case.pairs, CONFIDENCE_LEVEL)


def _upper_function(
    n: int, alpha: float, inject: Injection, mechanism: MechanismName
) -> Callable[[int], float]:
    """Memoized upper bound on an error rate from ``k`` errors among ``n`` rows, bug included."""
    memo: dict[int, float] = {}

    def clopper_pearson(k: int) -> float:
        return clopper_pearson_upper(k, n, alpha)

    def counted_twice(k: int) -> float:
        return clopper_pearson_upper(2 * k, 2 * n, alpha)

    z = NormalDist().inv_cdf(1.0 - alpha)

    def normal(k: int) -> float:
        p = k / n
        return min(1.0, p + z * math.sqrt(p * (1.0 - p) / n))

    compute = clopper_pearson
    if inject == "normal_approximation":
        compute = normal
    elif inject == "reused_rows" and mechanism == "randomized_response":
        compute = counted_twice

    def upper(k: int) -> float:
        value = memo.get(k)
        if value is None:
            value = memo[k] = compute(k)
        return value

    return upper


def _largest_failing(u0: float, upper1: Callable[[int], float], epsilon: float, start: int) -> int:
    """Largest class-1 count in ``[-1, start]`` whose certificate exceeds ``epsilon`` (-1: none).

    Eq. 16 is non-increasing in the class-1 bound, and the bound non-decreasing in the count, so
    the failing counts form a prefix; the search gallops down from ``start``, then bisects.
    """

    def fails(k1: int) -> bool:
        return epsilon_lower_from_error_bounds(u0, upper1(k1), 0.0) > epsilon

    if start < 0 or fails(start):
        return start
    high, step = start, 1  # fails(high) is False
    low = high - step
    while low >= 0 and not fails(low):
        high, step = low, 2 * step
        low = high - step
    low = max(low, -1)  # fails(low) is True, or low == -1
    return first_true(lambda k1: not fails(k1), low, high) - 1


def _frontier(
    upper0: Callable[[int], float],
    upper1: Callable[[int], float],
    n_class1: int,
    epsilon: float,
    counts0: Iterable[int],
) -> NDArray[np.int64]:
    """For each class-0 count (ascending), the largest failing class-1 count (-1: none)."""
    out: list[int] = []
    start = n_class1
    for k0 in counts0:
        start = _largest_failing(upper0(int(k0)), upper1, epsilon, start)
        out.append(start)
    return np.asarray(out, dtype=np.int64)


def _exact_family_failure(case: TightCase, inject: Injection, alpha: float | None = None) -> float:
    """Exact probability that a family of ``case.pairs`` independent tests has a failed certificate.

    Each rate is bounded at ``alpha`` (default: the table route's level, or the injected bug's).
    """
    alpha = _rate_alpha(case, inject) if alpha is None else alpha
    upper0 = _upper_function(case.n_class0, alpha, inject, case.mechanism)
    upper1 = _upper_function(case.n_class1, alpha, inject, case.mechanism)
    n0, p0 = case.n_class0, case.fpr
    low = int(binom.ppf(_TAIL, n0, p0))
    high = int(binom.isf(_TAIL, n0, p0))
    counts = np.arange(low, high + 1)
    frontier = _frontier(upper0, upper1, case.n_class1, case.epsilon, counts)
    pmf = binom.pmf(counts, n0, p0)
    cdf = np.where(frontier >= 0, binom.cdf(frontier, case.n_class1, case.fnr), 0.0)
    # below the window every outcome is counted as a failure (mass < 1e-17)
    test = min(1.0, float(pmf @ cdf) + float(binom.cdf(low - 1, n0, p0)))
    if test >= 1.0:
        return 1.0
    return float(-math.expm1(case.pairs * math.log1p(-test)))


def _simulated_selection_failures(case: TightCase, families: int, rng: np.random.Generator) -> int:
    """Simulated families whose Laplace thresholds were chosen on the counted rows; failures."""
    alpha = alpha_per_rate(case.pairs, CONFIDENCE_LEVEL)
    upper0 = _upper_function(case.n_class0, alpha, "none", case.mechanism)
    upper1 = _upper_function(case.n_class1, alpha, "none", case.mechanism)
    t = np.asarray(SELECTION_THRESHOLDS, dtype=np.float64)
    above0 = _laplace_above(case.epsilon, t)  # P(y >= t | input 0)
    below1 = 1.0 - _laplace_above(case.epsilon, t - 1.0)  # P(y < t | input 1)
    # bins (-inf, t_0), [t_0, t_1), ..., [t_last, inf)
    probs0 = np.clip(-np.diff(np.concatenate(([1.0], above0, [0.0]))), 0.0, 1.0)
    probs1 = np.clip(np.diff(np.concatenate(([0.0], below1, [1.0]))), 0.0, 1.0)
    frontier = _frontier(upper0, upper1, case.n_class1, case.epsilon, range(case.n_class0 + 1))
    failures = 0
    done = 0
    while done < families:
        size = min(_CHUNK, families - done)
        c0 = rng.multinomial(case.n_class0, probs0 / probs0.sum(), size=(size, case.pairs))
        c1 = rng.multinomial(case.n_class1, probs1 / probs1.sum(), size=(size, case.pairs))
        k0 = c0[..., ::-1].cumsum(axis=-1)[..., ::-1][..., 1:]  # rows at or above each threshold
        k1 = c1.cumsum(axis=-1)[..., :-1]  # rows below each threshold
        # the chosen threshold's certificate is the largest; it fails if any threshold's does
        failures += int((k1 <= frontier[k0]).any(axis=(1, 2)).sum())
        done += size
    return failures


# -- public entry points --------------------------------------------------------------------------


def run_tight_cases(
    inject: Injection = "none",
    *,
    cases: Sequence[TightCase] = TIGHT_CASES,
    families: int = 2000,
    sealed_families: int = 1,
    seed: int = 0,
) -> tuple[TightCoverage, ...]:
    """Family-wise failure probability of each tight case, with an optional injected bug.

    Parameters
    ----------
    inject : {"none", "normal_approximation", "no_bonferroni", "reused_rows"}, default "none"
        A known bug substituted into the certificate computation: ``"normal_approximation"``
        bounds each error rate by the normal (Wald) approximation instead of Clopper-Pearson;
        ``"no_bonferroni"`` bounds each rate at the whole level ``1 - confidence_level``,
        ignoring the family size and the two rates of a test; ``"reused_rows"`` reuses reserved
        rows (randomized response: every reserved row is counted twice; Laplace: the threshold is
        chosen, among :data:`SELECTION_THRESHOLDS`, as the one whose certificate is largest on
        the very rows then counted). ``"none"`` runs certify as it is.
    cases : sequence of TightCase, default TIGHT_CASES
        The cases.
    families : int, default 2000
        Families simulated where no exact sum exists (the Laplace ``"reused_rows"`` bug).
    sealed_families : int, default 1
        Families per case run through the sealed path when ``inject == "none"``; 0 skips it.
    seed : int, default 0
        Seed of the simulated families and sealed-path data (one child seed per case).

    Returns
    -------
    tuple of TightCoverage
        One entry per case, in order; ``flagged`` marks a failure probability significantly
        above the nominal 0.05.

    Raises
    ------
    ParameterError
        If ``inject`` is unknown, a case is not a :class:`TightCase`, or a count is out of range.

    Notes
    -----
    A certificate fails when its ``epsilon_lower`` exceeds the exact epsilon; a family fails
    when any of its ``pairs`` certificates does. The pairs are independent, so the family fails
    with probability ``1 - (1 - f)^pairs`` for a test's failure probability ``f``. With
    ``FPR`` and ``FNR`` counts ``K0 ~ Binomial(n_class0, fpr)`` and ``K1 ~ Binomial(n_class1,
    fnr)``, Eq. 16 is non-increasing in both bounds, so for each ``k0`` the failing ``k1`` form a
    prefix ``{k1 <= m(k0)}`` and ``f = sum_k0 P(K0 = k0) P(K1 <= m(k0))`` exactly; the frontier
    ``m`` is found by bisection with :func:`~certify.stats.binomial.clopper_pearson_upper` and
    :func:`~certify.stats.binomial.epsilon_lower_from_error_bounds` at the level
    :func:`certify.plan.alpha_per_rate` ``(pairs, 0.95)`` (or the injected bug's bound). Class-0
    counts in either tail of mass below 1e-17 are left out of the sum (the lower tail counted as
    failing), so the value is exact to within 1e-16. An exact probability is flagged when it
    exceeds 0.05 (no sampling error); a simulated one when the lower end of its one-sided 95%
    Clopper-Pearson interval does (:func:`power_to_flag`).

    With ``inject == "none"`` each case also runs ``sealed_families`` families through
    ``FixedTest.from_score`` -> ``Protocol.seal`` -> ``evaluate`` on fresh mechanism outputs,
    and every issued certificate is compared with Eq. 16 of the Clopper-Pearson bounds of its
    own error counts at ``alpha_per_rate(pairs, 0.95)``; a mismatch makes the case inconsistent.

    Examples
    --------
    >>> [round(c.rate, 4) for c in run_tight_cases(sealed_families=0)]
    [0.0442, 0.0205]
    >>> [c.flagged for c in run_tight_cases("no_bonferroni")]
    [True, True]
    """
    injection = check_injection(inject)
    chosen = tuple(cases)
    if not chosen or not all(isinstance(c, TightCase) for c in chosen):
        raise ParameterError(
            f"cases must be a non-empty sequence of TightCase; got {cases!r}. Use TIGHT_CASES or "
            "build TightCase(mechanism, epsilon, pairs, n_class0, n_class1)."
        )
    n_families = check_int(families, "families", 1)
    n_sealed = check_int(sealed_families, "sealed_families", 0)
    root = np.random.SeedSequence(check_int(seed, "seed", 0))
    out: list[TightCoverage] = []
    for case, child in zip(chosen, root.spawn(len(chosen)), strict=True):
        simulation_seed, sealed_seed = child.spawn(2)
        if injection == "reused_rows" and case.mechanism == "laplace":
            failures = _simulated_selection_failures(case, n_families, np.random.default_rng(simulation_seed))
            low = clopper_pearson_lower(failures, n_families, _FLAG_ALPHA)
            out.append(TightCoverage(case, injection, "simulated", failures / n_families, n_families,
                                     failures, low, NOMINAL))
            continue
        probability = _exact_family_failure(case, injection)
        sealed = (0, 0)
        if injection == "none" and n_sealed > 0:
            sealed = sealed_check(case, n_sealed, sealed_seed)
        out.append(TightCoverage(case, injection, "exact", probability, 0, 0, probability, NOMINAL,
                                 *sealed))
    return tuple(out)


def power_to_flag(failure_probability: float, families: int, nominal: float = NOMINAL) -> float:
    """Probability that a simulated check of ``families`` families flags a failure probability.

    Parameters
    ----------
    failure_probability : float
        The true family-wise failure probability, in [0, 1].
    families : int
        Simulated families, >= 1.
    nominal : float, default 0.05
        The level a flag must exceed.

    Returns
    -------
    float
        ``P(X >= r)`` for ``X ~ Binomial(families, failure_probability)``, where ``r`` is the
        fewest failures whose one-sided 95% Clopper-Pearson lower bound exceeds ``nominal``.

    Raises
    ------
    ParameterError
        If an argument is out of range.

    Notes
    -----
    Exact. At a failure probability at most ``nominal`` this is the false-alarm probability, at
    most 0.05 by the coverage of the Clopper-Pearson bound; above it, the power.

    Examples
    --------
    >>> round(power_to_flag(0.08, 2000), 3), round(power_to_flag(0.05, 2000), 3)
    (1.0, 0.048)
    """
    for name, value in (("failure_probability", failure_probability), ("nominal", nominal)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
            raise ParameterError(f"{name} must be a number in [0, 1]; got {value!r}.")
    n = check_int(families, "families", 1)
    if clopper_pearson_lower(n, n, _FLAG_ALPHA) <= nominal:
        return 0.0
    low, high = 0, n  # the lower bound exceeds nominal at ``high``, not at ``low``
    while high - low > 1:
        mid = (low + high) // 2
        if clopper_pearson_lower(mid, n, _FLAG_ALPHA) > nominal:
            high = mid
        else:
            low = mid
    return float(binom.sf(high - 1, n, float(failure_probability)))


# -- the sealed path on the tight cases: issued certificates must be Eq. 16 of their own counts --

_DEV_FRACTION: Final = 0.02
"""Development share of the sealed-path tables (development rows only fix the orientation)."""


def _rows_for_reserved(n: int) -> int:
    """Rows whose split at :data:`_DEV_FRACTION` leaves exactly ``n`` reserved rows."""
    total = n
    while total - math.floor(_DEV_FRACTION * total) < n:
        total += 1
    return total


def _draw_outputs(case: TightCase, x: int, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``size`` outputs of the case's mechanism on input ``x``."""
    if case.mechanism == "randomized_response":
        flipped = rng.random(size) < _flip(case.epsilon)
        out: NDArray[np.float64] = np.where(flipped, 1 - x, x).astype(np.float64)
        return out
    return float(x) + rng.laplace(0.0, 1.0 / case.epsilon, size)


def _output(rows: NDArray[np.float64]) -> NDArray[np.float64]:
    """The mechanism output stored in the second column (the first is a constant 1)."""
    out: NDArray[np.float64] = np.ascontiguousarray(rows[:, 1], dtype=np.float64)
    return out


def _matches(case: TightCase, alpha: float, test: FixedTest, certificate: Certificate) -> bool:
    """Whether an issued certificate is Eq. 16 of Clopper-Pearson bounds of its own error counts."""
    from certify.results import ErrorRateEvidence

    evidence = certificate.evidence
    if not isinstance(evidence, ErrorRateEvidence) or test.orientation != 1 or certificate.pair != test.pair:
        return False
    if (evidence.n_class0, evidence.n_class1) != (case.n_class0, case.n_class1):
        return False
    if not math.isclose(certificate.alpha_per_rate, alpha, rel_tol=1e-12):
        return False
    expected = epsilon_lower_from_error_bounds(
        clopper_pearson_upper(evidence.false_positives, case.n_class0, alpha),
        clopper_pearson_upper(evidence.false_negatives, case.n_class1, alpha),
        0.0,
    )
    return expected == certificate.epsilon_lower or math.isclose(
        expected, certificate.epsilon_lower, rel_tol=1e-12
    )


def sealed_check(case: TightCase, families: int, seed: np.random.SeedSequence) -> tuple[int, int]:
    """Run families through ``FixedTest`` -> ``seal`` -> ``evaluate``: (certificates, mismatches)."""
    from certify._core import Pair
    from certify.data import EmbeddingTable
    from certify.protocol import FixedTest, Protocol
    from certify.protocol.ledger import Ledger

    alpha = alpha_per_rate(case.pairs, CONFIDENCE_LEVEL)
    certificates = mismatches = 0
    # A fresh run id in the labels makes every run a new experiment for the reserved-split guard
    # (which remembers spent data for the whole process); no number depends on it.
    run = uuid.uuid4().hex[:12]
    with tempfile.TemporaryDirectory(prefix="certify-selftest-") as folder:
        ledger = Ledger(Path(folder) / "selftest.ledger")
        for index, child in enumerate(seed.spawn(families)):
            rng = np.random.default_rng(child)
            labels: list[str] = []
            outputs: list[NDArray[np.float64]] = []
            for i in range(case.pairs):
                for name, x, n in ((f"{run}-a{i}", 0, case.n_class0), (f"{run}-b{i}", 1, case.n_class1)):
                    size = _rows_for_reserved(n)
                    labels.extend([name] * size)
                    outputs.append(_draw_outputs(case, x, size, rng))
            y = np.concatenate(outputs)
            table = EmbeddingTable.from_arrays(labels, np.column_stack([np.ones_like(y), y]))
            split = table.split(_DEV_FRACTION, seed=index)
            protocol = Protocol(f"selftest-{case.mechanism}-{index}", confidence_level=CONFIDENCE_LEVEL)
            tests = [
                FixedTest.from_score(
                    _output, split.development, Pair(f"{run}-a{i}", f"{run}-b{i}"), name="optimal_event",
                    threshold=case.threshold,
                )
                for i in range(case.pairs)
            ]
            for test in tests:
                protocol.register(test)
            family = protocol.seal(split.reserved, ledger=ledger).evaluate()
            for test, certificate in zip(tests, family.certificates, strict=True):
                certificates += 1
                mismatches += int(not _matches(case, alpha, test, certificate))
    return certificates, mismatches
