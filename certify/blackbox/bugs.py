"""Mechanisms with a known violation of their claim, as vectorized black boxes.

``BUGS`` maps names to :class:`BugMechanism` objects, called like the suite's mechanisms as
``mech(x, n, rng)``. Each records its claim ``(epsilon, delta)``, the neighbouring inputs on
which the violation shows, the exact privacy loss of the code (as it runs on doubles) with its
derivation, its source, and the bounds other tools published.

=============================== ============== ==============================================
name                            claim          the bug
=============================== ============== ==============================================
TextbookLaplace                 (0.1, 0)       ``x + Lap(10)`` by inverse CDF on doubles [1]_
InversionLaplace                (0.1, 0)       inverse-CDF Laplace on a 32-bit uniform [2]_
BoxMullerGaussian               (1, 1e-6)      Box-Muller on 32-bit uniforms [2]_
PolarGaussian                   (1, 1e-6)      Marsaglia's polar method on 32-bit uniforms [2]_
ZigguratGaussian                (1, 1e-6)      the 256-layer ziggurat on 32-bit uniforms [2]_
UnclampedBounds                 (0.1, 0)       rows declared in [0, 1], never clamped
DataDependentSensitivity        (0.1, 0)       noise scaled by the data's largest row
NaNThroughClip                  (0.1, 0)       a missing (NaN) row passes ``np.clip``
CuratorAttack                   (0.1, 0)       a leak of probability 1e-4 [3]_
=============================== ============== ==============================================

The five floating-point mechanisms add noise to the input on doubles. On input 1 an output in
``(0, 1/2)`` is ``1 + n`` for a noise value ``n`` in ``(-1, -1/2)``, an exact subtraction
(Sterbenz's lemma): every such output is a multiple of ``2**-53``. On input 0 the same outputs
are the noise values themselves, whose low bits are set. The event "output in (0, 1/2) and not
a multiple of ``2**-53``" has probability zero on input 1 and a positive one on input 0, so the
code is not ``(epsilon, delta)``-DP for any epsilon when delta is below that probability: its
exact loss is infinite, whatever the sampler. The families ``grain`` and ``mantissa``
(:mod:`certify.blackbox._float_fits`) see this; the value families do not.

:func:`curator_attack` builds the curator mechanism at any leak probability ``p``; ``BUGS``
holds it at ``p = 1e-4``: a budget of ``1e7`` calls reaches events of probability about
``1.4e-5`` (:func:`~certify.blackbox.reach.smallest_event_probability`), not ``1e-5``.

References
----------
.. [1] I. Mironov, "On Significance of the Least Significant Bits for Differential Privacy",
   ACM CCS 2012.
.. [2] F. Lokna, A. Paradis, D. I. Dimitrov and M. Vechev, "Group and Attack: Auditing
   Differential Privacy", ACM CCS 2023 (Delta-Siege; github eth-sri/Delta-Siege).
.. [3] X. Wang et al., "Curator Attack: When Blackbox Differential Privacy Auditing Loses Its
   Power", arXiv:2411.16516, 2024.

Examples
--------
>>> import numpy as np
>>> from certify.blackbox import BUGS
>>> bug = BUGS["TextbookLaplace"]
>>> bug.claimed_epsilon, bug.input_pairs[0], bug.true_epsilon
(0.1, ((0.0,), (1.0,)), inf)
>>> bug(np.array([0.0]), 3, np.random.default_rng(0)).shape
(3,)
"""

from __future__ import annotations

import math
import numbers
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.blackbox import _bug_samplers as s
from certify.blackbox._published import PublishedBound, _fail, _nonempty_str

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = ["BUGS", "BugMechanism", "curator_attack"]

_Sampler = Callable[[NDArray[np.float64], int, np.random.Generator], Any]


def _check_epsilon(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a finite float > 0."""
    if not isinstance(value, float) or not math.isfinite(value) or value <= 0.0:
        raise _fail(attribute.name, "a finite float > 0", value)


def _check_delta(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a float in [0, 1)."""
    if not isinstance(value, float) or not 0.0 <= value < 1.0:
        raise _fail(attribute.name, "a float in [0, 1)", value)


def _check_true(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a float in [0, inf]."""
    if not isinstance(value, float) or math.isnan(value) or value < 0.0:
        raise _fail(attribute.name, "a float in [0, inf]", value)


def _check_pairs(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a non-empty tuple of pairs of equal-length tuples of finite floats."""
    ok = isinstance(value, tuple) and len(value) > 0
    for pair in value if isinstance(value, tuple) else ():
        ok = ok and isinstance(pair, tuple) and len(pair) == 2 and len(pair[0]) == len(pair[1]) > 0
        ok = ok and all(isinstance(v, float) and math.isfinite(v) for v in (*pair[0], *pair[1]))
    if not ok:
        raise _fail(attribute.name, "a non-empty tuple of (input_a, input_b) float tuples", value)


def _check_published(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: a tuple of PublishedBound."""
    if not isinstance(value, tuple) or not all(isinstance(b, PublishedBound) for b in value):
        raise _fail(attribute.name, "a tuple of PublishedBound", value)


def _check_dim(_: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: an integer >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(attribute.name, "an integer >= 1", value)


@final
@attrs.frozen
class BugMechanism:
    """A mechanism with a known violation: a vectorized black box with its claim and exact loss.

    Attributes
    ----------
    name : str
        The key in ``BUGS``.
    claimed_epsilon, claimed_delta : float
        The claim the mechanism violates.
    input_pairs : tuple of (tuple of float, tuple of float)
        Neighbouring inputs on which the violation shows.
    true_epsilon : float
        The exact privacy loss at ``claimed_delta`` of the code as it runs (may be ``inf``).
    true_epsilon_note : str
        How ``true_epsilon`` is known.
    source : str
        Where the bug comes from.
    published : tuple of PublishedBound
        Lower bounds other tools published for this bug.
    output_dim : int
        ``k`` for outputs of shape ``(n, k)``; 1 for shape ``(n,)``.

    Notes
    -----
    ``true_epsilon > claimed_epsilon`` for every entry (construction refuses one where not).
    """

    name: str = attrs.field(validator=_nonempty_str)
    claimed_epsilon: float = attrs.field(validator=_check_epsilon)
    claimed_delta: float = attrs.field(validator=_check_delta)
    input_pairs: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = attrs.field(
        validator=_check_pairs
    )
    true_epsilon: float = attrs.field(validator=_check_true)
    true_epsilon_note: str = attrs.field(validator=_nonempty_str)
    source: str = attrs.field(validator=_nonempty_str)
    published: tuple[PublishedBound, ...] = attrs.field(validator=_check_published)
    output_dim: int = attrs.field(validator=_check_dim)
    _sampler: _Sampler = attrs.field(repr=False)

    def __attrs_post_init__(self) -> None:
        if not self.true_epsilon > self.claimed_epsilon:
            raise _fail("true_epsilon", f"above the claim {self.claimed_epsilon!r}", self.true_epsilon)
        if not callable(self._sampler):
            raise _fail("sampler", "callable", self._sampler)

    @property
    def suite_name(self) -> str:
        """The name under which audits count this mechanism's evaluations."""
        return self.name

    def best_published(self) -> PublishedBound | None:
        """The published bound with the highest ``epsilon_lower``; None if none."""
        return max(self.published, key=lambda b: b.epsilon_lower, default=None)

    def __call__(self, x: NDArray[Any], n: int, rng: np.random.Generator) -> Any:
        """Draw ``n`` independent outputs on input ``x`` (a 1-D array of the pairs' length).

        Raises
        ------
        ParameterError
            If ``x`` is not a finite 1-D numeric array of the right length, ``n`` not an
            integer ``>= 1`` or ``rng`` not a numpy Generator.
        """
        return self._sampler(self._check_x(x), _check_n(n), _check_rng(rng))

    def _check_x(self, x: object) -> NDArray[np.float64]:
        """Validate an input and return it as a float64 vector."""
        length = len(self.input_pairs[0][0])
        if not isinstance(x, np.ndarray) or x.ndim != 1 or x.shape[0] != length or x.dtype.kind not in "iuf":
            raise _fail("x", f"a 1-D numeric numpy array of length {length} for {self.name}", x)
        values: NDArray[np.float64] = x.astype(np.float64)
        if not np.all(np.isfinite(values)):
            raise _fail("x", "finite", x)
        return values


def _check_n(n: object) -> int:
    """Validate a number of calls."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise _fail("n", "an integer >= 1", n)
    return int(n)


def _check_rng(rng: object) -> np.random.Generator:
    """Validate a generator."""
    if not isinstance(rng, np.random.Generator):
        raise _fail("rng", "a numpy.random.Generator", rng)
    return rng


def _check_p(p: object) -> float:
    """Validate a leak probability."""
    if isinstance(p, bool) or not isinstance(p, float | int) or not 0.0 < float(p) < 1.0:
        raise _fail("p", "a number in (0, 1)", p)
    return float(p)


_LOKNA: Final = (
    "Lokna, Paradis, Dimitrov and Vechev, 'Group and Attack: Auditing Differential Privacy', ACM CCS"
    " 2023 (Delta-Siege), sampler as described in eth-sri/Delta-Siege deltasiege/mechanism/"
)
_STERBENZ: Final = (
    "On input 1 every output in (0, 1/2) is 1 + n with n in (-1, -1/2), an exact subtraction"
    " (Sterbenz), hence a multiple of 2**-53; on input 0 such outputs are the noise itself and"
    " most are not. The event 'output in (0, 1/2), not a multiple of 2**-53' has probability 0 on"
    " input 1 and about {mass} on input 0, so for any delta below that the loss is infinite."
)
_DPSNIPER_FLOAT: Final = PublishedBound(
    tool="DP-Sniper (bit patterns)",
    epsilon_lower=0.2432,
    confidence_level=0.9,
    calls=None,
    input_a=(0.0,),
    input_b=(1.0,),
    reference=(
        "Bichsel et al., 'DP-Sniper', IEEE S&P 2021, floating-point experiment: the Laplace mechanism"
        " of scale 10 on doubles with a classifier on the outputs' bit patterns, about 4e8 calls"
    ),
)


def curator_attack(p: float, name: str | None = None) -> BugMechanism:
    """The curator mechanism: a noisy count that leaks its input with probability ``p``.

    Parameters
    ----------
    p : float
        Leak probability, in (0, 1).
    name : str, optional
        Its name (default ``"CuratorAttack(p=...)"``).

    Returns
    -------
    BugMechanism
        Claim ``(0.1, 0)`` on inputs 0 and 1; with probability ``1 - p`` the output is the
        count plus two-sided geometric noise of scale 10 (exactly 0.1-DP), with probability
        ``p`` it is the count plus ``10**6``.

    Raises
    ------
    ParameterError
        If ``p`` is not in (0, 1).

    Notes
    -----
    The output ``10**6`` has probability at least ``p`` on input 0 and ``q (1 - p)`` on input
    1, ``q = (1 - a) / (1 + a) a^(10**6 - 1)`` with ``a = e^-0.1``: the exact loss is the log
    of their ratio, about 99,990 for every ``p`` above ``1e-300``. An audit sees it only when
    its calls see the leak: development needs a few leaks on input 0 to choose the event, so
    the calls needed grow as ``1 / p`` (benchmarks/bench_bugs.py measures the constant).

    Examples
    --------
    >>> bug = curator_attack(0.5)
    >>> int(bug(np.array([0.0]), 1000, np.random.default_rng(0)).max())
    1000000
    """
    p = _check_p(p)
    a = math.exp(-s.COUNT_EPSILON)
    log_q = math.log((1.0 - a) / (1.0 + a)) - s.COUNT_EPSILON * (s.CURATOR_JUMP - 1)
    true = math.log(p + (1.0 - p) * math.exp(log_q - s.COUNT_EPSILON)) - math.log1p(-p) - log_q
    return BugMechanism(
        name=name or f"CuratorAttack(p={p:g})",
        claimed_epsilon=s.COUNT_EPSILON,
        claimed_delta=0.0,
        input_pairs=(((0.0,), (1.0,)),),
        true_epsilon=true,
        true_epsilon_note=(
            f"With probability p = {p:g} the output is the input plus 10**6, which the noise of"
            " the other input reaches with probability q ~ e^(-0.1 (10**6 - 1)): the loss is"
            f" ln(p / ((1 - p) q)) = {true:.1f}."
        ),
        source=(
            "Wang et al., 'Curator Attack: When Blackbox Differential Privacy Auditing Loses Its"
            " Power', arXiv:2411.16516 (a violation hidden in an event of small probability)"
        ),
        published=(),
        output_dim=1,
        sampler=s.curator(p),
    )


_INF: Final = math.inf
_GAUSS_CLAIM: Final = (s.GAUSS_EPSILON, s.GAUSS_DELTA)
_FLOAT_PAIR: Final = (((0.0,), (1.0,)),)
_SPECS: Final[tuple[tuple[Any, ...], ...]] = (
    ("TextbookLaplace", (0.1, 0.0), _FLOAT_PAIR, _INF, _STERBENZ.format(mass="0.015"),
     "Mironov, 'On Significance of the Least Significant Bits for Differential Privacy', ACM CCS"
     " 2012: x + Lap(10) with numpy's inverse-CDF sampler on 53-bit doubles",
     (_DPSNIPER_FLOAT,), 1, s.textbook_laplace),
    ("InversionLaplace", (0.1, 0.0), _FLOAT_PAIR, _INF, _STERBENZ.format(mass="0.015"),
     f"{_LOKNA}laplace_inversion.py (epsilon 0.1, sensitivity 1)", (), 1, s.inversion_laplace),
    ("BoxMullerGaussian", _GAUSS_CLAIM, _FLOAT_PAIR, _INF, _STERBENZ.format(mass="0.025"),
     f"{_LOKNA}gauss_box_muller.py (classic sigma at (1, 1e-6))", (), 1, s.box_muller),
    ("PolarGaussian", _GAUSS_CLAIM, _FLOAT_PAIR, _INF, _STERBENZ.format(mass="0.025"),
     f"{_LOKNA}gauss_polar.py (classic sigma at (1, 1e-6))", (), 1, s.polar),
    ("ZigguratGaussian", _GAUSS_CLAIM, _FLOAT_PAIR, _INF, _STERBENZ.format(mass="0.025"),
     f"{_LOKNA}gauss_ziggurat.py (classic sigma at (1, 1e-6))", (), 1, s.ziggurat),
    ("UnclampedBounds", (0.1, 0.0), (((1.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 6.0)),), 0.6,
     "Rows are declared in [0, 1], so the sum has sensitivity 1 and two-sided geometric noise of"
     " scale 10 makes it 0.1-DP; without clamping, the neighbour whose last row is 6 moves the sum"
     " by 6, and the noise's likelihood ratio e^(0.1 |k - k'|) reaches e^0.6 beyond both sums:"
     " exactly 0.6.",
     "a declared input bound that is not enforced (clamping forgotten): the sensitivity the noise"
     " is calibrated to holds only for inputs inside the bounds", (), 1, s.unclamped_count),
    ("DataDependentSensitivity", (0.1, 0.0), (((1.0, 1.0, 1.0, 1.0), (1.0, 1.0, 1.0, 11.0)),), _INF,
     "The noise scale is max|x_i| / 0.1, 10 on the first input and 110 on the neighbour with one"
     " outlier; geometric laws of different scales have likelihood ratios that grow without bound"
     " in the tails: infinite loss.",
     "a sensitivity computed from the data instead of from the declared domain (local"
     " sensitivity used as global)", (), 1, s.data_sensitivity),
    ("NaNThroughClip", (0.1, 0.0), (((1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
                                     (1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)),), _INF,
     "np.clip(nan, 0, 1) is nan, so one missing row makes the noisy sum NaN with probability 1,"
     " and never otherwise: infinite loss. Inputs are four row values then four missing flags;"
     " outputs are (is NaN, value or 0).",
     "NaN passed through np.clip (a clamp that is the identity on NaN), as in Casacuberta et al.,"
     " 'Widespread Underestimation of Sensitivity in Differentially Private Libraries', ACM CCS"
     " 2022", (), 2, s.nan_clip),
)


def _build() -> Mapping[str, BugMechanism]:
    """Assemble the read-only mapping."""
    out: dict[str, BugMechanism] = {}
    for name, (eps, delta), pairs, true, note, source, published, dim, sampler in _SPECS:
        out[name] = BugMechanism(
            name=name, claimed_epsilon=float(eps), claimed_delta=float(delta), input_pairs=pairs,
            true_epsilon=float(true), true_epsilon_note=note, source=source, published=published,
            output_dim=dim, sampler=sampler,
        )
    out["CuratorAttack"] = curator_attack(1e-4, name="CuratorAttack")
    return types.MappingProxyType(out)


BUGS: Final[Mapping[str, BugMechanism]] = _build()
"""The known-bug mechanisms, read-only."""
