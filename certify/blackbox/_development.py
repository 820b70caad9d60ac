"""Development stages of a mechanism audit: the budget, the race among input pairs, the event.

:func:`~certify.blackbox.audit.audit_mechanism` spends its development calls in stages, each
a function here:

1. :func:`plan_budget` divides the budget: screening rounds for the candidate input pairs, the
   chosen pair's own round, and the reserved calls.
2. :func:`race` narrows the pairs by successive halving. Every pair still in the race gets
   fresh calls each round and keeps the calls of its earlier rounds. A pair is judged
   cross-fitted: events chosen on each half of its calls are counted on the other half, so a
   pair cannot win by a chance event: the value is a plug-in bound on calls that did not
   choose the event. Where the development share can give every input
   :data:`ONE_ROUND_CALLS` at once but halving's rounds would give them fewer, the race is
   that one round.
3. :func:`final_round`: where the race could not tell its last pairs apart, up to
   :data:`FINALISTS` of them (the leader and those whose value could be best, :func:`pick_finalists`;
   :data:`ROUND_FINALISTS` after a race of one round) each get the chosen pair's round, and the
   one whose best event (chosen as in 4) is better wins (not where each showed a settled
   histogram, :func:`all_settled`: the leader goes on). After a race of one round, that round
   is as large as the leader's would grow to (:func:`extension`), and only the outputs of the
   best finalist so far, of the one being compared and of inputs still to come are held.
4. :func:`choose` chooses the event on all of the chosen pair's calls, after adding more of them
   while taking them from the reserve hardly costs the best event anything (:func:`extension`).
   A family the final round left pending is fitted on all those calls where a subsample shows
   it can reach the leading family (:func:`worth_fitting`).
5. :func:`checked_first`: the best few events are counted on :data:`CHECK_SHARE` of the
   reserve, fresh calls; a leader that shows nothing there gives way to the one that holds.

Each input's calls are held in one :class:`Rows` buffer, filled in place as rounds arrive.

Nothing here sees a reserved call: whatever these stages choose, the certificate stays valid.

The module stays over 800 lines (about 1,600) because it holds one idea, how development calls are
spent. The stages share the budget's constants, and each stage's cost is judged against the
others (the race's share, the final round's, the growth's). Each stage is a function with its
own tests in ``tests/blackbox/test_development.py``; splitting the race into a module of its own
would put those constants and the plan they tie together in two places.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.blackbox._fits import FittedTrees, independent_terms
from certify.blackbox.events import (
    DEV_LEVEL,
    FAMILIES,
    Choice,
    Family,
    choose_event,
    event_errors,
    expected_bound,
    ranked,
    split_reserved,
)
from certify.data.draws import Mechanism, call_mechanism
from certify.data.stream import CHUNK_CALLS
from certify.errors import ParameterError
from certify.protocol.criterion import pessimistic_bound
from certify.stats.binomial import clopper_pearson_lower, clopper_pearson_upper
from certify.stats.tradeoff import Target

__all__ = [
    "CHECKED",
    "CHECK_SHARE",
    "EXTEND_COST",
    "EXTEND_MAX_SHARE",
    "FINALISTS",
    "DEV_VALUES_FROM",
    "DEV_VALUES_PER_CALL",
    "MAX_DEV_VALUES",
    "MIN_DEV_CALLS",
    "NOT_RACED",
    "NOT_SCREENED",
    "ONE_ROUND_CALLS",
    "RACE_FIT_CALLS",
    "RACE_FIT_SHARE",
    "RACE_PRODUCT_CALLS",
    "ROUND_FINALISTS",
    "SCREEN_CALLS",
    "SCREEN_ALSO",
    "SCREEN_DEV_LEVEL",
    "SCREEN_MAX_SHARE",
    "SUBSAMPLE_CALLS",
    "SUBSAMPLE_FROM",
    "SUBSAMPLE_HOLDS",
    "Budget",
    "Candidate",
    "Development",
    "Race",
    "Rows",
    "all_settled",
    "call_chunks",
    "checked_first",
    "choose",
    "dev_values",
    "develop",
    "extension",
    "final_round",
    "held_out_first",
    "pick_finalists",
    "plan_budget",
    "race",
    "raced_families",
    "worth_fitting",
]

MIN_DEV_CALLS: Final = 1_000
"""Fewest development calls per input pair (when the budget allows)."""

SCREEN_CALLS: Final = 10_000
"""Fewest calls per input a pair gets in its first screening round (when the budget allows)."""

ONE_ROUND_CALLS: Final = 80_000
"""Calls per input of a race of one round: where the development share can give every input
this many but halving's rounds would give them fewer in all (:func:`plan_budget`).

Every pair of SparseVectorTechnique3 at 1e7 calls (DP-Sniper's code and sixteen pairs, seeds 200
to 259) valued as a screening round values it, with no pair put out: one of the two best pairs
(about 0.12) was among the four best by the high end of its showing (:attr:`Candidate.upper`,
which :func:`pick_finalists` ranks by) at 51 of 60 seeds on 16,663 calls per input, at 57 on
40,000 and at 60 of 60 on 80,000. Halving's rounds (16,663, then about 18,500 and 23,800 new
calls per input) left both out of the final round at 6 of 52 seeds (100 to 125 and 140 to
165)."""

ROUND_FINALISTS: Final = 4
"""Most pairs the final round compares after a race of one round (:data:`ONE_ROUND_CALLS`): the
leader and three others (:func:`pick_finalists`). The round leaves more pairs than halving's
last round does, and on 80,000 calls per input one of SparseVectorTechnique3's two best pairs
was among the four best by the high end of its showing at 60 of 60 seeds (among the three best
at 55)."""

SCREEN_MAX_SHARE: Final = 0.3
"""Most of the budget the screening rounds may take to give each pair its first-round calls."""

MAX_DEV_VALUES: Final = 12_000_000
"""Most development output numbers of one pair held in memory (calls times output dimension)
for budgets up to :data:`DEV_VALUES_FROM` calls (96 MB of outputs, a pair's outputs of 20
coordinates at 300,000 calls per input)."""

DEV_VALUES_FROM: Final = 10_000_000
"""Budget above which development may hold :data:`DEV_VALUES_PER_CALL` more numbers per call."""

DEV_VALUES_PER_CALL: Final = 2.3
"""Development output numbers held per call of the budget above :data:`DEV_VALUES_FROM`:
8.1e7 numbers (648 MB) at 4e7 calls, 4e6 calls per input of 10-coordinate outputs. At 1.2 per
call (2.4e6 calls), SparseVectorTechnique6's best pair certified 0.2725 at seed 0, against
0.3118 on 5e6 calls per input."""

EXTEND_COST: Final = 0.005
"""The chosen pair's round grows, on fresh calls, while taking those calls from the reserve
costs its best event less than this share of its expected bound."""

EXTEND_MAX_SHARE: Final = 0.25
"""Most of the budget that development may reach by growing the chosen pair's round."""

SCREEN_DEV_LEVEL: Final = 0.25
"""Level of the pessimistic development rates that choose a pair's events in a screening round:
the relaxed level of few cuts, since held-out calls value the events (at the strict level, on a
few thousand calls per input, the events of every pair of ReportNoisyMax3 were nothing, and the
race drew lots).

The chosen pair's event is chosen at :data:`~certify.blackbox.events.DEV_LEVEL`: at 0.15 on the
right pair of ReportNoisyMax3 at 1e6 calls, one seed of eight certified 0.03 (0.18 at 0.05)."""

RACE_FIT_CALLS: Final = 65_536
"""Most calls per input of one half that choose a pair's event in a screening round, or
:data:`RACE_FIT_SHARE` of the planned reserve where that is more; the other half's calls, all
of them, value it."""

RACE_FIT_SHARE: Final = 0.01
"""Share of the planned reserved calls per input that may choose a pair's event in a screening
round (above about 1.4e7 calls it exceeds :data:`RACE_FIT_CALLS`). With 65,536 calls at 4e7,
the events of SparseVectorTechnique1's eight pairs were too rough to tell them apart: six were
still in the race after its three rounds and a pair certifying 0.018 won over one certifying
0.08."""

CLEAR_LEVEL: Final = 0.023
"""One-sided level of two standard deviations: a pair whose showing lies below the best one's
by this much on each side is out of the race whatever the number of pairs."""

SCREEN_FAMILIES: Final = 3
"""A screening round values the best events of this many families on held-out calls and keeps
the best of them: an event chosen on one half can fit that half's noise (a cut deep in a
linear score of many noisy coordinates), and held-out calls tell which family's events hold."""

SCREEN_ALSO: Final[tuple[Family, ...]] = ("linear",)
"""Families whose best event a screening round values on held-out calls even when it is not
among the :data:`SCREEN_FAMILIES` best. A linear score sees an effect spread thinly over many
coordinates, whose development value on one half is modest, where a tail of one coordinate
seen a few times can look best there (SparseVectorTechnique3's best pairs at 1e7 calls: their
linear events held, but three families' chance tails ranked above them, and the race kept
pairs worth at most 0.05). Valuing it costs one scoring of the held-out half."""


def one_round_clear_level(pairs: int) -> float:
    """The level a race of one round puts pairs out at: :data:`CLEAR_LEVEL` shared by its values.

    Each of ``pairs`` showings is the best of up to ``SCREEN_FAMILIES + len(SCREEN_ALSO)``
    events valued on held-out calls, and the best showing's low end decides which pairs are
    out. Among the thirty-odd values a round of eight pairs compares, one chance tail lies two
    standard deviations high often enough to put every other pair out before any final round:
    SparseVectorTechnique3 at 1e7 calls (DP-Sniper's code), seed 734, a tail of coordinate 3
    counted 17 against 48 times on 80,000 calls per input (log ratio 1.04, 0.25 two standard
    deviations low) of a pair whose events are worth about 0.05 was left the only finalist,
    and the audit certified 0.047. A pair now goes only where the gap holds for all the values
    compared at once (Bonferroni): 0.120 there. On seeds 702 to 753, mean 0.1166 and 4 seeds
    below 0.8 of it, against 0.1154 and 5; of four other seeds that move, two go down (by 0.009
    and 0.012). The pairs that stay have final rounds, taken from the reserve: at 1e7 calls the
    suite's ReportNoisyMax4 certified 0.9271 against 0.9547 (seeds 0 to 3; seed 0's tail event,
    the same, on a smaller reserve) and its PrefixSum 0.8089 against 0.8331 (seed 1 took another
    pair), its SparseVectorTechnique6 0.2829 against 0.2794; ReportNoisyMax3 on DP-Sniper's
    code 0.2297 against 0.2299 (seeds 0 to 11).
    """
    return CLEAR_LEVEL / max(pairs * (SCREEN_FAMILIES + len(SCREEN_ALSO)), 1)


FINALISTS: Final = 3
"""Most pairs the final round compares where the screening rounds could not tell them apart.

With two, SparseVectorTechnique3 at 1e7 calls (DP-Sniper's sixteen pairs) certified below 0.8
of its mean at 6 of 28 seeds (0.047 to 0.083): the race's last round, about 53,000 calls per
input, ranked a pair worth about 0.08 or 0.05 first and one of the best pairs (about 0.12)
below the runner-up. With three: 3 of 28 (mean 0.1158 against 0.1140), at 1e6 calls no seed of
four at 0 (mean 0.0453 against 0.0189); ReportNoisyMax3 0.1991 against 0.1944 at 1e6 calls,
PrefixSum 0.7254 against 0.7325 (seeds 0 to 3). At 4e7 calls ten of thirteen suite mechanisms
with eight pairs certify the same seed for seed; SparseVectorTechnique3 0.1938 against 0.1897,
SVT34Parallel 0.2732 against 0.2694, PrefixSum 0.9462 against 0.9512, NumericalSVT 0.0290
against 0.0299 (seeds 0 to 2). Each further finalist's round is taken from the reserve."""

CHECK_SHARE: Final = 0.05
"""Share of the reserved calls per input that count the chosen pair's leading events before one
is registered (:func:`checked_first`); a reserve 5% smaller widens its confidence bounds by
about 2.5%."""

CHECKED: Final = 4
"""Most of the chosen pair's events, best development values first, counted on fresh calls."""

CHECK_LEVEL: Final = 0.16
"""One-sided level of the rates that value the checked events on fresh calls (one standard
deviation). Measured on the six side-by-side mechanisms at 1e6 and 1e7 calls (6 seeds;
SparseVectorTechnique3 also at 3e6, 12 seeds, and 1e7, 16 seeds), each candidate event's
bound on an independent reserve-sized draw: keeping a leader that holds at this level and
otherwise taking the best on fresh calls lost nothing in any cell and raised
SparseVectorTechnique3 at 1e6 from 0.014 to 0.039 and at 3e6 from 0.049 to 0.064; ranking
every event by its fresh value at 0.3 gained as much there but lost 9% on ReportNoisyMax3
at 1e6 calls.
"""

NOT_RACED: Final[tuple[Family, ...]] = ("logistic", "boosted")
"""Families the screening rounds leave out, the slow fits: fitted for the chosen pair only."""

RACE_PRODUCT_CALLS: Final = 32_768
"""Fewest calls per input of the half that chooses a screening showing's events for the product
family to be among them.

A product score sums binned log ratios over the coordinates it keeps. Fitted on a few thousand
calls per input, its development value is the best of many coarse cells: on pairs worth about
0.1 it ranked among the three families a showing counts and left the pair's key to chance. Left
out of the showings below this size, at 1e6 calls over seeds 0 to 3 (DP-Sniper's pairs; the
suite's implementations): OneTimeRappor 0.4666 to 0.4979, SparseVectorTechnique6 0.1622 to
0.1992, PrefixSum 0.6966 to 0.7045, SparseVectorTechnique3 0.0667 to 0.0673, NoisyHist1 0.0932
to 0.0944, the other fourteen the same seed for seed (on DP-Sniper's own code, OneTimeRappor
0.4737 to 0.5166, SparseVectorTechnique3 0.0453 to 0.0553). On hundreds of thousands of calls it
tells pairs apart: left out of every showing, at 4e7 calls Rappor took its weaker pair at seed 1
(0.2424 against 0.2910) and NoisyHist2 fell from 9.9248 to 9.8883 (seeds 0 to 2). At 4e7 calls
every showing's half holds more than this; at 1e7 calls the two-pair mechanisms' do (65,536),
the eight-pair mechanisms' mostly not (about 8,000 to 32,000)."""

SUBSAMPLE_CALLS: Final = 65_536
"""Calls per input on which the chosen pair's pending families face its leading family
(:func:`worth_fitting`): half from the start of each half of its development calls."""

SUBSAMPLE_HOLDS: Final = 0.5
"""Least share of its value the leading family's event keeps on the subsample for
:func:`worth_fitting` to judge other families there."""

NOT_SCREENED: Final[tuple[Family, ...]] = ("product",)
"""Families :func:`worth_fitting` always fits: their values on a subsample say little of their
values on all calls, in either direction. A product score's binned log ratios sharpen with
every call: PrefixSum at 4e7 calls, seed 0, ``product (10 of 10 coordinates) of differences``
was worth 0.36 on 65,536 calls per input against the Laplace score's 0.62, and 0.818 against
0.817 on all 3.4 million (it certified 0.934, the Laplace score 0.914); NoisyHist2 at 1e7
calls, seed 1, the other way (9.00 against the logistic score's 8.92 on the subsample, 9.07
against 9.48 on all calls)."""

SUBSAMPLE_FROM: Final = 262_144
"""Fewest development calls per input of the chosen pair for :func:`worth_fitting` to screen
its pending families; below, every one is fitted on all calls. Development grows to about
:data:`EXTEND_MAX_SHARE` of the budget at most, so audits of less than about 2.1e6 calls are not
screened (at 1e6 calls, none of the twenty suite mechanisms' audits was, seeds 0 to 3)."""

_KEEP_FAMILIES: Final = 0.9
"""After the round grows, the families whose value was within this share of the best are tried again."""

Draw = Callable[[int, int, int, "Rows"], None]
"""``draw(input, round, n, rows)``: ``n`` fresh development calls on one of the distinct inputs,
appended to ``rows``."""

Develop = Callable[
    [NDArray[np.float64], NDArray[np.float64], Sequence[Family], int, float, float], list[Choice]
]
"""``develop(dev_a, dev_b, families, reserved, alpha_per_rate, dev_level)``: every family's best
event for ``reserved`` calls per input at that level, best first."""

SCREEN_LEVEL: Final = 0.16
"""Level of each error rate's bound when a screening round values a pair (one standard
deviation): the pair's event is judged by what the round's held-out calls show with a modest
margin, since no screening round can certify at the audit's level what its reserve will."""


@final
class Rows:
    """One input's development calls, every round's, in one buffer that is filled in place.

    The buffer is allocated once for the most calls the plan can give the input (its pages are
    touched only as calls arrive), so adding a round copies only the new calls: stacking the
    rounds again each time held the input's calls twice at the moment of the copy and, at
    ten million calls, took a second of CPU.

    Parameters
    ----------
    width : int
        Output coordinates per call.
    capacity : int
        Calls the buffer holds before it must grow (it doubles then).
    """

    def __init__(self, width: int, capacity: int) -> None:
        self._data: NDArray[np.float64] = np.empty((max(capacity, 1), width), dtype=np.float64)
        self._size = 0

    def reserve(self, calls: int) -> None:
        """Make room for ``calls`` calls in all (one copy of those held, if it must grow)."""
        if calls > self._data.shape[0]:
            grown = np.empty((calls, self._data.shape[1]), dtype=np.float64)
            grown[: self._size] = self._data[: self._size]
            self._data = grown

    def append(self, part: NDArray[np.float64]) -> None:
        """Add calls after the ones held."""
        end = self._size + part.shape[0]
        if part.shape[1] != self._data.shape[1]:
            raise ValueError(f"calls of width {part.shape[1]} added to width {self._data.shape[1]}")
        if end > self._data.shape[0]:
            self.reserve(max(end, 2 * self._data.shape[0]))
        self._data[self._size : end] = part
        self._size = end

    @property
    def rows(self) -> NDArray[np.float64]:
        """The calls held, in the order they were added (a view: later calls do not change it)."""
        return self._data[: self._size]


@final
@attrs.frozen
class Budget:
    """How an audit's calls are spent.

    Attributes
    ----------
    screening : tuple of int
        Calls of each screening round, all inputs of the pairs still in the race together
        (empty for one candidate pair); an input shared by several pairs is called once for all.
    alive : tuple of int
        Pairs in the race in each screening round.
    final : int
        Fresh calls per input of the chosen pair in its own round (before it grows).
    reserved : int
        Reserved calls per input of an even split (the audit may split their sum unevenly).
    one_round : bool
        The race is one round of :data:`ONE_ROUND_CALLS` calls per input (:func:`plan_budget`):
        its finalists' round is as large as the leader's would grow to (:func:`develop`).
    """

    screening: tuple[int, ...]
    alive: tuple[int, ...]
    final: int
    reserved: int
    one_round: bool = False

    @property
    def development_calls(self) -> int:
        """Development calls of the plan, all pairs and both inputs."""
        return sum(self.screening) + 2 * self.final


def dev_values(calls: int) -> int:
    """Most development output numbers of one pair held in memory at a budget of ``calls``."""
    return MAX_DEV_VALUES + int(DEV_VALUES_PER_CALL * max(calls - DEV_VALUES_FROM, 0))


def plan_budget(calls: int, n_pairs: int, n_inputs: int, dev_fraction: float, width: int) -> Budget:
    """Development calls per round and reserved calls per input.

    One pair: its own round takes ``dev_fraction`` of the budget (at least
    :data:`MIN_DEV_CALLS`). Several pairs: as many screening rounds as halvings leave one pair,
    each spending the same number of calls (the pairs halve, so each input's new calls about
    double), together half of the development share, and the chosen pair's round the other
    half. Each of the ``n_inputs`` distinct inputs gets at least :data:`SCREEN_CALLS` calls in
    the first round, taking up to :data:`SCREEN_MAX_SHARE` of the budget for it: with many
    pairs and few calls, an equal share leaves a few hundred calls per pair, where a pair whose
    best event is worth 0.05 can look like one worth 0.25.

    Where the development share can give every input :data:`ONE_ROUND_CALLS` calls but half of
    it (the screening rounds' share) cannot, the race is one round of that size
    (``one_round``): halving's first round would give each input a fraction of it, and at a
    fraction a pair's best event does not show yet (:data:`ONE_ROUND_CALLS`). The chosen
    pair's round is planned as for halving. At 1e7 calls (a tenth of it for development) that is
    the case of seven to twelve distinct inputs (DP-Sniper's eight-pair mechanisms: ten), at 3e6
    calls of three; at 1e6 and 4e7 calls of none of the suite's mechanisms.

    Examples
    --------
    >>> b = plan_budget(1_000_000, 8, 10, 0.1, 1)
    >>> b.alive, b.screening[0] // 10 >= SCREEN_CALLS, b.final
    ((8, 4, 2), True, 25000)
    >>> b = plan_budget(10_000_000, 8, 10, 0.1, 10)
    >>> b.screening, b.alive, b.final, b.one_round
    ((800000,), (8,), 250000, True)
    """
    dev_total = max(int(dev_fraction * calls), min(MIN_DEV_CALLS * n_pairs, calls // 2))
    cap = dev_values(calls) // (2 * max(width, 1))
    alive: list[int] = []
    left = n_pairs
    while left > 1:
        alive.append(left)
        left = math.ceil(left / 2)
    if not alive:
        final = max(min(dev_total // 2, cap), 4)
        return Budget((), (), final, _reserved(calls, 2 * final))
    one = n_inputs * ONE_ROUND_CALLS
    if dev_total // 2 < one <= dev_total and cap >= 2 * ONE_ROUND_CALLS:
        final = max(min(dev_total // 4, cap // 2), 4)
        return Budget((one,), (n_pairs,), final, _reserved(calls, one + 2 * final), True)
    screen_total = max(dev_total // 2, n_inputs * SCREEN_CALLS * len(alive))
    screen_total = min(screen_total, max(dev_total // 2, int(SCREEN_MAX_SHARE * calls)))
    per_round = min(screen_total // len(alive), n_inputs * (cap // (2 * len(alive))))
    screening = tuple(max(per_round, 8 * n_inputs) for _ in alive)
    final = max(min(dev_total // 4, cap // 2), 4)
    return Budget(screening, tuple(alive), final, _reserved(calls, sum(screening) + 2 * final))


def _reserved(calls: int, spent: int) -> int:
    """Reserved calls per input after ``spent`` development calls; ParameterError if none."""
    reserved = (calls - spent) // 2
    if reserved < 1:
        raise ParameterError(
            f"calls={calls} leaves no reserved calls after {spent} development calls; give a "
            "larger budget (at least a few thousand calls)."
        )
    return reserved


@final
@attrs.frozen
class Candidate:
    """A pair's showing in a screening round.

    Attributes
    ----------
    pair : int
        Index of the pair among the candidates.
    round : int
        Screening round (0 first).
    calls : int
        Calls per input the event was chosen on.
    choice : Choice or None
        The event chosen on those calls (None: no family applied).
    held_out : float
        Its expected certified bound at the planned reserve, from its plug-in rates on the
        round's fresh calls (calls that did not choose it).
    plug_in : float
        Eq. 16's log ratio at those rates, each one standard deviation high, not floored at 0:
        breaks ties at 0 (:func:`_value_interval`: in the unit of a curve target).
    upper : float
        The same with both rates one standard deviation low.
    clear : (float, float)
        The log ratio (or the target's value) with both rates two standard deviations high,
        and low (:data:`CLEAR_LEVEL`).
    held_event : Choice or None
        Of the events the showing counted (one per family valued, per half), the one whose own
        held-out counts (on the half that did not choose it) have the largest development value
        (:data:`~certify.blackbox.events.DEV_LEVEL`, at the planned reserve); None where none
        is above 0.
    held_value : float
        That value (0 where ``held_event`` is None): comparable with a chosen pair's events'
        values, and free of the selection that chose the event.
    sure : (float, float) or None
        As ``clear``, at the level a race of one round puts pairs out at
        (:func:`one_round_clear_level`); None where that is ``clear``'s level.
    """

    pair: int
    round: int
    calls: int
    choice: Choice | None
    held_out: float
    plug_in: float
    upper: float = math.inf
    clear: tuple[float, float] = (-math.inf, math.inf)
    held_event: Choice | None = None
    held_value: float = 0.0
    sure: tuple[float, float] | None = None

    @property
    def key(self) -> tuple[float, float]:
        """The ranking key (larger is better): the held-out log ratio two standard deviations low.

        In the unit of a curve target where the audit has one (:func:`_value_interval`).

        A tail event seen a few dozen times on held-out calls can show a log ratio far above its
        pair's epsilon by chance (22 against 44 calls, 0.57, on a pair worth at most 0.05); at
        two standard deviations it no longer outranks a well-counted event of a better pair.
        """
        return (self.clear[0], self.held_out)


def _log_ratio(numerator: float, denominator: float) -> float:
    """``log(numerator / denominator)``, -inf for a numerator at or below 0, +inf over 0."""
    if numerator <= 0.0:
        return -math.inf
    return math.inf if denominator <= 0.0 else math.log(numerator / denominator)


def _value_interval(
    fp: int, n0: int, fn: int, n1: int, delta: float, level: float, target: Target | None
) -> tuple[float, float]:
    """Eq. 16's log ratio with both error rates high, and both low, at one-sided ``level``.

    Not floored at 0: where no pair's event is certifiable yet on a round's calls, pairs are
    still ranked by how far their events' rates lie apart, a chance event seen a few times
    paying for its width; the pair whose high end lies below another's low end is behind.

    With a curve ``target`` (mu, rho, a profile), a positive log ratio is replaced by the
    target's value at the same rates, so pairs are ranked in the unit their events were chosen
    for: an event chosen for ``mu`` sits near the middle of the two laws, and its log ratio
    says little of its ``mu``. The planted Gaussian mean of the case studies at 2e6 calls: the
    pair whose event showed mu 1.02 on held-out calls was put out of the race by one showing
    0.99, whose cut nearer the tail had the larger log ratio; the audit certified mu 0.981 on
    it (1.196 on the other pair now). ``benchmarks/bench_claims.py --part pairs``: refuted 20
    of 20 seeds instead of 18. A positive log ratio means the rates sum below ``1 - delta``,
    where mu and rho are positive too (a profile's value is positive everywhere), so a showing
    whose value is positive still ranks above every showing whose value is not.
    """
    bounds = []
    for rate in (clopper_pearson_upper, clopper_pearson_lower):
        u0, u1 = rate(fp, n0, level), rate(fn, n1, level)
        value = max(_log_ratio(1.0 - delta - u, v) for u, v in ((u1, u0), (u0, u1)))
        if target is not None and target.kind != "epsilon" and value > 0.0:
            value = float(target.values(np.array([u0]), np.array([u1]))[0])
        bounds.append(value)
    return bounds[0], bounds[1]


def _cross_fitted_showing(
    pair: int,
    r: int,
    calls_a: NDArray[np.float64],
    calls_b: NDArray[np.float64],
    reserved: int,
    develop: Develop,
    families: Sequence[Family],
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
    clear_level: float = CLEAR_LEVEL,
) -> Candidate:
    """A pair's showing on all its calls: events chosen on one half, counted on the other.

    The calls are cut in two halves (alternate rows); an event is chosen on each half and its
    errors are counted on the other, and the counts of both are pooled. Every count comes from
    an event that did not see it, so the value is free of the selection that made an event
    look best, and it rests on all the pair's calls. Product scores are left out where a half
    holds fewer than :data:`RACE_PRODUCT_CALLS` calls per input to choose them on.
    """
    halves = [(calls_a[k::2], calls_b[k::2]) for k in (0, 1)]
    fit_calls = max(RACE_FIT_CALLS, int(RACE_FIT_SHARE * reserved))
    if min(fit_calls, calls_a.shape[0] // 2, calls_b.shape[0] // 2) < RACE_PRODUCT_CALLS:
        families = [f for f in families if f != "product"] or families
    # per family, pooled in the direction each event was chosen for: the calls inside a set rare
    # under one input (``rare``, of ``n_rare``) against the same set's calls under the other
    pooled: dict[str, list[int]] = {}
    chosen: dict[str, Choice] = {}
    held: tuple[Choice | None, float] = (None, 0.0)  # the single event best on its own held-out calls
    for k in (0, 1):
        fit_a, fit_b = halves[k][0][:fit_calls], halves[k][1][:fit_calls]
        val_a, val_b = halves[1 - k]
        found = develop(fit_a, fit_b, families, reserved, alpha_per_rate, SCREEN_DEV_LEVEL)
        tried: set[str] = set()
        for choice in found:
            if choice.family in tried or (
                len(tried) >= SCREEN_FAMILIES and choice.family not in SCREEN_ALSO
            ):
                continue
            tried.add(choice.family)
            counts = _directed_counts(choice, fit_a, fit_b, val_a, val_b)
            if counts[1] and counts[3]:
                own = _held_out_value(counts, reserved, alpha_per_rate, delta, DEV_LEVEL, target)
                if own > held[1]:
                    held = (choice, own)
            total = pooled.setdefault(choice.family, [0, 0, 0, 0])
            for i, c in enumerate(counts):
                total[i] += c
            if choice.family not in chosen or choice.value > chosen[choice.family].value:
                chosen[choice.family] = choice
    shown = []
    for family, (rare, n_rare, hits, n_hits) in pooled.items():
        if n_rare == 0 or n_hits == 0:
            continue
        held_out = _held_out_value(
            (rare, n_rare, hits, n_hits), reserved, alpha_per_rate, delta, 0.5, target
        )
        low, high = _value_interval(rare, n_rare, n_hits - hits, n_hits, delta, SCREEN_LEVEL, target)
        far = _value_interval(rare, n_rare, n_hits - hits, n_hits, delta, CLEAR_LEVEL, target)
        sure = None if clear_level == CLEAR_LEVEL else _value_interval(
            rare, n_rare, n_hits - hits, n_hits, delta, clear_level, target
        )
        shown.append(Candidate(
            pair, r, calls_a.shape[0], chosen[family], held_out, low, high, far, *held, sure=sure
        ))
    if not shown:
        return Candidate(pair, r, calls_a.shape[0], None, -1.0, -math.inf, -math.inf)
    return max(shown, key=lambda c: c.key)


def _held_out_value(
    counts: Sequence[int], reserved: int, alpha_per_rate: float, delta: float, level: float,
    target: Target | None,
) -> float:
    """The expected bound at ``reserved`` calls per input of held-out counts.

    ``counts`` is ``(rare, n_rare, hits, n_hits)`` (:func:`_directed_counts`); the rates are
    bounded at one-sided ``level`` (0.5: plug-in).
    """
    rare, n_rare, hits, n_hits = counts
    return float(pessimistic_bound(
        np.array([rare], dtype=np.float64), n_rare, np.array([n_hits - hits], dtype=np.float64),
        n_hits, reserved, reserved, alpha_per_rate, delta, level, target=target,
    )[0])


def _directed_counts(
    choice: Choice,
    fit_a: NDArray[np.float64],
    fit_b: NDArray[np.float64],
    val_a: NDArray[np.float64],
    val_b: NDArray[np.float64],
) -> tuple[int, int, int, int]:
    """An event's held-out counts in the direction it was chosen for.

    ``(rare, n_rare, hits, n_hits)``: the held-out calls inside the set that is rare under one
    input (on the calls that chose it), and the same set's calls under the other input, so that
    the log ratio is ``log((hits / n_hits) / (rare / n_rare))``: ``S`` rare under a gives
    ``P_b(S) / P_a(S)``, its complement rare under b gives ``P_a(not S) / P_b(not S)``.
    """
    e0, e1 = event_errors(choice, val_a, val_b)
    return _directed(choice, fit_a, fit_b, (e0, val_a.shape[0], e1, val_b.shape[0]))


def _directed(
    choice: Choice,
    fit_a: NDArray[np.float64],
    fit_b: NDArray[np.float64],
    errors: tuple[int, int, int, int],
) -> tuple[int, int, int, int]:
    """Held-out errors as ``(rare, n_rare, hits, n_hits)`` (:func:`_directed_counts`).

    ``errors`` is ``(e0, m0, e1, m1)``: :func:`event_errors` on ``m0`` and ``m1`` held-out
    calls, directed as the calls ``fit_a``, ``fit_b`` that chose ``choice`` favour.
    """
    e0, m0, e1, m1 = errors
    fp, fn = event_errors(choice, fit_a, fit_b)
    if (fit_b.shape[0] - fn + 0.5) * (fit_a.shape[0] + 1.0) / (fp + 0.5) >= (
        (fit_a.shape[0] - fp + 0.5) * (fit_b.shape[0] + 1.0) / (fn + 0.5)
    ):
        return e0, m0, m1 - e1, m1
    return e1, m1, m0 - e0, m0


@final
@attrs.frozen
class Race:
    """What the screening rounds leave.

    Attributes
    ----------
    finalists : list of int
        The pairs still in the race after its last round, best first: one, unless no round
        could tell the last ones apart (none clearly behind the best).
    held : dict of int to Rows
        Every development call of the finalists' inputs, by input.
    shown : list of Candidate
        Every pair's showing in every round.
    per_input : list of int
        New calls per input of each round.
    spent : int
        Calls spent, all inputs.
    """

    finalists: list[int]
    held: dict[int, Rows]
    shown: list[Candidate]
    per_input: list[int]
    spent: int


def race(
    pairs: Sequence[tuple[int, int]],
    budget: Budget,
    draw: Draw,
    develop: Develop,
    families: Sequence[Family],
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
    note: Callable[[int, str], None],
    width: int,
    capacity: int,
) -> Race:
    """Successive halving over the candidate pairs, judged on held-out calls.

    Parameters
    ----------
    pairs : sequence of (int, int)
        Each candidate pair as the indices of its two inputs among the distinct inputs.
    budget : Budget
        The plan (:func:`plan_budget`).
    draw, develop : callable
        Fresh development calls of one input; the event choice.
    families : sequence of str
        The families the race tries.
    alpha_per_rate, delta, target
        As the audit will certify.
    note : callable
        ``note(round, text)``: progress.
    width, capacity : int
        Output coordinates per call; calls each input's :class:`Rows` is allocated for.

    Returns
    -------
    Race
        The pairs still in the race after its last round, the calls of their inputs, every
        showing, the new calls per input of each round and the calls spent.

    Notes
    -----
    Round ``r`` spends ``budget.screening[r]`` fresh calls, shared equally by the distinct
    inputs of the pairs still in the race: an input of several pairs (a base database and its
    neighbours) is called once for all of them, and the pairs are compared on the same calls.
    A pair's event is chosen (``develop`` with ``families``) on its inputs' calls of the earlier
    rounds, in the first round on the first half of the new calls, and valued on the new calls
    that did not choose it; the better half of the pairs, by that value, goes on with all their
    calls. A chance event of a weak pair (a tail that looked far apart on a few hundred calls)
    has to show again on fresh calls to win, and the calls grow as the race narrows.

    A family that the first round asked and that gave no event on any pair's calls (one that
    does not apply to the outputs: a histogram of many continuous coordinates, blocks of
    coordinates that all depend on each other) is not fitted again in later rounds: on
    PrefixSum at 1e7 calls (seed 0) the later rounds' fits of those two families took about
    0.6 s and found nothing. The chosen pair still has it fitted, as every family the final
    round did not compare (:func:`choose`).
    """
    alive = list(range(len(pairs)))
    held: dict[int, Rows] = {}
    shown: list[Candidate] = []
    per_input: list[int] = []
    spent = 0
    tried: set[Family] = set()  # the families the first round asked, and those that found events
    found: set[str] = set()

    def first_round(
        dev_a: NDArray[np.float64], dev_b: NDArray[np.float64], fams: Sequence[Family],
        reserved: int, alpha: float, level: float,
    ) -> list[Choice]:
        out = develop(dev_a, dev_b, fams, reserved, alpha, level)
        tried.update(fams)
        found.update(c.family for c in out)
        return out

    for r, total in enumerate(budget.screening):
        if r == 1:  # a family no pair's calls gave an event in the first round is not fitted again
            families = [f for f in families if f in found or f not in tried] or families
        inputs = sorted({i for p in alive for i in pairs[p]})
        n = max(total // len(inputs), 4)
        per_input.append(n)
        spent += n * len(inputs)
        note(r + 1, f"{len(alive)} input pairs, {n} new calls on each of {len(inputs)} inputs")
        for i in inputs:
            draw(i, r, n, held.setdefault(i, Rows(width, capacity)))
        round_shown: dict[int, Candidate] = {}
        level = one_round_clear_level(len(alive)) if budget.one_round else CLEAR_LEVEL
        for p in alive:
            a, b = pairs[p]
            round_shown[p] = _cross_fitted_showing(
                p, r, held[a].rows, held[b].rows, budget.reserved, first_round if r == 0 else develop,
                families,
                alpha_per_rate=alpha_per_rate, delta=delta, target=target, clear_level=level,
            )
        shown.extend(round_shown.values())
        # out: every pair clearly behind the best (two standard deviations on each side, after a
        # race of one round at that level shared by all the round's values), and,
        # up to half of the pairs, those behind by one standard deviation on each side (not
        # after the last round: the pairs it leaves go to the final round, :func:`final_round`)
        ranked = sorted(alive, key=lambda q: round_shown[q].key, reverse=True)
        floor = max(round_shown[q].plug_in for q in alive)
        gap = {q: round_shown[q].sure or round_shown[q].clear for q in alive}
        clear_floor = max(gap[q][0] for q in alive)
        out = {q for q in ranked if gap[q][1] < clear_floor}
        if r < len(budget.screening) - 1:  # after the last round, the final round decides
            behind = [q for q in ranked[::-1] if round_shown[q].upper < floor and q not in out]
            out |= set(behind[: max(len(alive) // 2 - len(out), 0)])
        alive = [ranked[0]] + [q for q in ranked[1:] if q not in out]
        for i in set(held) - {i for p in alive for i in pairs[p]}:
            del held[i]
        if len(alive) == 1:  # decided: the rest of the screening calls stay in the reserve
            break
    return Race(alive, held, shown, per_input, spent)


def all_settled(finalists: Sequence[int], shown: Sequence[Candidate]) -> bool:
    """Whether the race's finalists are several and each last showed a settled histogram.

    A settled histogram (:attr:`~certify.blackbox.events.Choice.settled`) has few values, each
    counted often: the race's held-out counts already measure its event well, and more calls
    would not give it other events to choose from (its few values make few nested events, and
    every other family's event coarsens them). The final round would only choose again between
    events the race has measured, at its usual price: the runner-up's calls come from the
    reserve, and such a histogram's bound rests on the reserve's size (a value one input never
    produces is counted zero times however many calls it gets, and the fewer the calls, the
    higher the bound on its rate).
    SparseVectorTechnique5 at 4e7 calls, whose pairs show histograms of three values of the
    same worth: 12.801 with the final round, 12.836 without it (means of three seeds).

    Not after a race of one round (:func:`develop`): its leader's showing is one measurement,
    the best of all the pairs', where halving's leader had to lead again on fresh calls in
    every round. SparseVectorTechnique1 at 1e7 calls (seeds 0 to 3), every finalist's last
    showing a settled histogram of eleven values, the finalists at one pair's full memory cap
    (:func:`_finalists_round`), the leader alone: mean 0.0377, and 0 at seed 0 (a pair worth
    about 0 led the round); compared in a final round: 0.0747 (SparseVectorTechnique2 0.0394
    and 0.0675, SparseVectorTechnique5 11.46 and 11.35).

    ``shown`` is every showing in round order (:attr:`Race.shown`); a finalist's last showing
    is its latest.
    """
    if len(finalists) < 2:
        return False
    last = _last_showings(shown)
    return all(
        p in last and (choice := last[p].choice) is not None and choice.settled for p in finalists
    )


def _last_showings(shown: Sequence[Candidate]) -> dict[int, Candidate]:
    """Each pair's latest showing; ``shown`` is every showing in round order (:attr:`Race.shown`)."""
    return {c.pair: c for c in shown}


def extension(
    choice: Choice,
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    budget: Budget,
    calls: int,
    width: int,
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
    spent: int | None = None,
) -> int:
    """Fresh calls per input to add to the chosen pair's round, taken from the reserve.

    The round doubles (``final``, then ``2 final``, ``4 final`` more, ...) while taking all
    those calls from the reserve costs ``choice`` less than :data:`EXTEND_COST` of its expected
    bound at the reserve left, judged on the half of the development calls that chose its
    threshold; development may reach :data:`EXTEND_MAX_SHARE` of the budget, and one pair's
    outputs :func:`dev_values` numbers (the last doubling is cut to what these leave).
    ``spent``: every development call already made, all inputs (default: the plan's,
    ``budget.development_calls``); the race may stop early, and a final round's loser spends
    calls the plan does not count (at 4e7 calls, NoisyHist2's development reached 27.5% of
    the budget when they were left out, and its reserve was 1e6 calls smaller). Where
    the bound is set by the event (rare windows, small effects spread over many coordinates)
    rather than by the width of the reserved confidence bounds, development calls buy more
    than reserved ones. The cost is judged at the plug-in rates; for a histogram of few
    values, each counted often (``choice.settled``), again with a rate counted zero times taken
    as zero, and the growth must be cheap both ways.
    """
    half_a, half_b = dev_a.shape[0] // 2, dev_b.shape[0] // 2
    held = max(dev_a.shape[0], dev_b.shape[0])
    room = dev_values(calls) // (2 * max(width, 1)) - held
    spent = budget.development_calls if spent is None else spent
    share = int(EXTEND_MAX_SHARE * calls - spent) // 2
    reserved = (calls - spent) // 2
    limit = min(room, share, reserved - 1)
    extra, step = 0, budget.final
    sizes = []
    # doublings, the last cut to what memory, the share and the reserve leave (the step it
    # would have taken can exceed the room by a few calls and leave the round as it was)
    while extra < limit:
        extra = min(extra + step, limit)
        sizes.append(extra)
        step *= 2
    if not sizes:
        return 0
    reserves = [(reserved - e, reserved - e) for e in (0, *sizes)]
    errors = event_errors(choice, dev_a[half_a:], dev_b[half_b:])  # scored once for both readings
    cheap = set(sizes)
    # a settled histogram's values are each counted often, so a value one input never produced
    # is one it (nearly) never produces: its bound rests on the reserve's size, which every call
    # taken from it lowers, where at the plug-in rate of a zero count (0.69 over the development
    # rows) it would seem to rest on a count and hardly lose. Not for other events: a tail cut
    # counted zero times on a few development calls is one the reserve will count (NoisyHist2
    # at 1e7 calls lost 0.11 over eight seeds when their growth was judged so)
    for zero_counts in (False, True) if choice.settled else (False,):
        values = expected_bound(
            choice, dev_a[half_a:], dev_b[half_b:], reserves,
            alpha_per_rate=alpha_per_rate, delta=delta, target=target, zero_counts=zero_counts,
            errors=errors,
        )
        at_plan, after = values[0], values[1:]
        if not at_plan > 0.0:
            return 0
        cheap &= {e for e, v in zip(sizes, after, strict=True) if at_plan - v <= EXTEND_COST * at_plan}
    return max(cheap, default=0)


def choose(
    rows_a: Rows,
    rows_b: Rows,
    families: Sequence[Family],
    develop: Develop,
    more: Callable[[int], None],
    budget: Budget,
    calls: int,
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
    found: list[Choice] | None = None,
    spent: int | None = None,
    pending: Sequence[Family] = (),
) -> tuple[list[Choice], NDArray[np.float64], NDArray[np.float64], int]:
    """The chosen pair's event: every family on its calls, after the round grows.

    ``found``: the best events on the calls held of every family but ``pending``, where the
    final round already chose them (:func:`final_round`); the round's growth is judged on
    the best of them, and ``pending`` are fitted on the calls the choice ends with (once:
    after the growth where there is one), those of them :func:`worth_fitting` keeps, judged
    against the family of the best event but those :data:`NOT_SCREENED`. ``spent``: every
    development call already made (:func:`extension`).

    Returns
    -------
    (list of Choice, numpy.ndarray, numpy.ndarray, int)
        Every family's best event (best first), the development calls they were chosen on (the
        second half of each chose the threshold), and the fresh calls per input added by
        :func:`extension` (``more(n)`` adds them to ``rows_a`` and ``rows_b``).

    Raises
    ------
    ParameterError
        If no family applies to the outputs.
    """
    dev_a, dev_b = rows_a.rows, rows_b.rows
    width = dev_a.shape[1]
    if found is None:
        found = develop(dev_a, dev_b, families, budget.reserved, alpha_per_rate, DEV_LEVEL)
    if not found:
        raise ParameterError(
            f"no test family in {tuple(families)!r} applies to these outputs; use tests='certify'."
        )
    extra = extension(
        found[0], dev_a, dev_b, budget, calls, width,
        alpha_per_rate=alpha_per_rate, delta=delta, target=target, spent=spent,
    )
    reserved = budget.reserved - extra
    if extra:
        more(extra)
        dev_a, dev_b = rows_a.rows, rows_b.rows
    leader = next((c for c in found if c.family not in NOT_SCREENED), None)
    pending = worth_fitting(
        dev_a, dev_b, pending, leader, develop, reserved, alpha_per_rate, families
    )
    if extra:
        best = found[0].value
        again = [f for f in families if f in pending or any(
            c.family == f and c.value >= _KEEP_FAMILIES * best for c in found
        )]
        found = develop(dev_a, dev_b, again, reserved, alpha_per_rate, DEV_LEVEL) or found
    elif pending:
        found = ranked(
            [*found, *develop(dev_a, dev_b, pending, reserved, alpha_per_rate, DEV_LEVEL)],
            families,
        )
    return found, dev_a, dev_b, extra


def worth_fitting(
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    pending: Sequence[Family],
    leader: Choice | None,
    develop: Develop,
    reserved: int,
    alpha_per_rate: float,
    families: Sequence[Family] = FAMILIES,
) -> list[Family]:
    """The pending families worth fitting on all of the chosen pair's calls.

    ``leader``: the best event found so far of a family not in :data:`NOT_SCREENED` (None:
    none, and every pending family is fitted). Where each input holds at least
    :data:`SUBSAMPLE_FROM` calls, every pending family but those of :data:`NOT_SCREENED`, and
    the leader's family, choose their events on :data:`SUBSAMPLE_CALLS` of them (the first calls
    of each half, so that the halves still choose and value as on all calls); a pending family
    whose best event there is worth less than the leader's family's is not fitted on all calls.
    Where the leader's family keeps less than :data:`SUBSAMPLE_HOLDS` of its value there (its
    events need more calls to show), the subsample tells nothing, and every pending family is
    fitted but boosted trees, which are fitted on all calls only where the subsample finds them
    worth it. Theirs is the costliest fit of the pending families (fitting and scoring them on
    the chosen pair's calls took about 1.3 s of SparseVectorTechnique3's audit at 1e7 calls,
    seed 1, under a profiler), and where the subsample could not judge them they had never
    given the registered event: DP-Sniper's six side-by-side mechanisms at 1e7 calls (seeds 0
    to 11; in 8 of the 72 audits, six of SparseVectorTechnique3's and two of
    ReportNoisyMax3's, the subsample could not judge) and the suite at 4e7 calls (seeds 0
    to 2) certify the same bounds without them, and those six SparseVectorTechnique3 audits
    took 12.03 CPU s instead of 12.57.

    Boosted trees are not fitted at all where ``families`` (the audit's) hold product scores and
    the outputs have two coordinates or more that look independent under both inputs (on the
    subsample's first halves, :func:`~certify.blackbox._fits.independent_terms`), or whose
    consecutive differences do (running sums of independent noise, PrefixSum's): the log
    likelihood ratio is then a sum of one term per coordinate (or per difference), the score a
    product of binned coordinates (or of binned differences) estimates, which the product family
    fits for the chosen pair whatever the subsample shows (:data:`NOT_SCREENED`); trees fit the
    same ratio with many more parameters, and fitting them on the subsample took 0.23 s of
    NoisyHist2's audit at 1e7 calls, 0.47 s of OneTimeRappor's (twenty independent bits) and
    0.35 s of PrefixSum's. Where the coordinates themselves look independent, nor is the blocks
    family judged: it splits the same rows by the same test and finds no block of two
    coordinates, so it has no score.
    """
    m = SUBSAMPLE_CALLS // 2
    half_a, half_b = dev_a.shape[0] // 2, dev_b.shape[0] // 2
    screened = [f for f in pending if f not in NOT_SCREENED]
    if leader is None or not screened or min(half_a, half_b) < SUBSAMPLE_FROM // 2:
        return list(pending)
    terms = (
        independent_terms(dev_a[:m], dev_b[:m])
        if "boosted" in screened and "product" in families else None
    )
    if terms is not None:  # the log ratio is a sum of one term each: the product score's form,
        # fitted below; blocks of one coordinate each are no block score either (the same test,
        # the same rows)
        out = ("boosted", "blocks") if terms == "coordinates" else ("boosted",)
        pending = [f for f in pending if f not in out]
        screened = [f for f in screened if f not in out]
        if not screened:
            return list(pending)
    sub_a = np.concatenate([dev_a[:m], dev_a[half_a : half_a + m]])
    sub_b = np.concatenate([dev_b[:m], dev_b[half_b : half_b + m]])
    tried = [*screened, *(f for f in FAMILIES if f == leader.family and f not in screened)]
    values: dict[str, float] = {}
    for choice in develop(sub_a, sub_b, tried, reserved, alpha_per_rate, DEV_LEVEL):
        values.setdefault(choice.family, choice.value)
    bar = values.get(leader.family, 0.0)
    if not bar > 0.0 or bar < SUBSAMPLE_HOLDS * leader.value:
        return [f for f in pending if f != "boosted"]  # the subsample cannot judge: trees left out
    return [f for f in pending if f not in screened or values.get(f, -math.inf) >= bar]


def pick_finalists(
    alive: Sequence[int], shown: Sequence[Candidate], *, optimistic: bool, one_round: bool = False
) -> list[int]:
    """The pairs the final round compares: the race's leader, then those that could be best.

    ``alive`` is what the race left, best first (:attr:`Race.finalists`); ``shown`` is every
    showing in round order (:attr:`Race.shown`). Beyond :data:`FINALISTS` pairs, the leader
    stays and the others are taken by the high end of their last showing's value
    (:attr:`Candidate.upper`: its held-out log ratio, or the target's value, with both rates
    one standard deviation low) where the final round will give each finalist more new calls
    than the race gave it (``optimistic``), and by its held-out value
    (:attr:`Candidate.held_out`, the expected bound of its event on calls that did not choose
    it) otherwise.

    The race left these pairs because it could not tell them apart. A final round that more
    than doubles their calls measures them anew, and a pair whose event the race measured
    poorly is the one it can still find best: SparseVectorTechnique3 at 1e7 calls, seed 9
    (250,000 new calls per input against the race's 61,099), the five-and-five pair (about
    0.12) showed 0.026 held out after 0.339 the round before and was left out for pairs worth
    0.08 by its held-out value (0.079 certified; 0.132 by the high end). Over seeds 0 to 27 there:
    mean 0.1186 by the high end; 0.1170 by held-out value (seeds 9 and 22 below 0.8 of the
    mean); 0.1133 by the race's ranking key, the log ratio two standard deviations low, which
    ranks by the count of the event's rarer side as much as by its log ratio (4 seeds below);
    0.1176 by the two-standard-deviation high end (14 and 22). PrefixSum at 1e7 calls, seed 5:
    0.8395 against 0.7754. A final round with fewer new calls than the race's adds little to
    what the race measured, and a poorly measured finalist wins it by a fluke of its
    development value as often as it is the better pair: by the high end at 1e6 calls (25,000
    new calls per input), SVT34Parallel fell from 0.1275 to 0.0767 (seeds 0 to 3).

    After a race of one round (``one_round``, :data:`ONE_ROUND_CALLS` calls per input), up to
    :data:`ROUND_FINALISTS` pairs go on, taken the same way but for one cap: a showing's high
    end counts for no more than its held-out value plus twice the distance from its low end
    (:attr:`Candidate.plug_in`) up to it. A log ratio of few counts is skewed: a tail counted a
    few times has a high end far above what its low end allows, and such showings took the
    best pairs' places. SparseVectorTechnique3 at 1e7 calls (DP-Sniper's code), seeds 650 to
    701, whose showings the cap was not written from (seeds 600 to 649's were): mean 0.1180 and
    no seed below 0.8 of it, against 0.1158 and three (676, 682, 699; at 676 the three places
    had gone to showings of nothing one standard deviation low, with high ends 0.61, 0.47 and
    0.32). Before the cap, SparseVectorTechnique3 at 1e7 calls
    (DP-Sniper's code, the finalists at one pair's full memory cap), the others taken by the
    high end: mean 0.1183 at seeds 0 to 11, none below 0.8 of it; by the one-deviation low end
    (:attr:`Candidate.plug_in`), 0.1122 and two below (a pair of the 0.08 group won the final
    round at seeds 3 and 8).
    """
    most = ROUND_FINALISTS if one_round else FINALISTS
    if len(alive) <= most:
        return list(alive)
    last = _last_showings(shown)

    def value(p: int) -> float:
        showing = last[p]
        if not optimistic:
            return showing.held_out
        if not one_round:
            return showing.upper
        # the high end, no further above the held-out value than twice the low end is below it
        spread = max(showing.held_out - showing.plug_in, 0.0)
        return min(showing.upper, showing.held_out + 2.0 * spread)

    rest = sorted(alive[1:], key=value, reverse=True)  # stable: ties by rank
    return [alive[0], *rest[: most - 1]]


def raced_families(
    finalists: Sequence[int], shown: Sequence[Candidate], families: Sequence[Family]
) -> tuple[Family, ...]:
    """The families the final round compares the finalists with, in ``families``' order.

    Those of the events the finalists' last showings counted (chosen, or best on held-out
    calls), and :data:`SCREEN_ALSO`, whose event every showing values: a finalist whose linear
    event held lost to one with a chance tail where the final round compared tails alone
    (SparseVectorTechnique3 at 1e7 calls, seed 23: 0.047 against 0.131). Empty where no showing
    counted any event: :func:`final_round` then compares every family but boosted trees.
    """
    last = _last_showings(shown)
    counted = {
        e.family for p in finalists if p in last for e in (last[p].choice, last[p].held_event)
        if e is not None
    }
    if counted:
        counted.update(SCREEN_ALSO)
    return tuple(f for f in families if f in counted)


def final_round(
    finalists: Sequence[int],
    index: Sequence[tuple[int, int]],
    held: dict[int, Rows],
    families: Sequence[Family],
    develop: Develop,
    reserved: int,
    alpha_per_rate: float,
    raced: Sequence[Family] = (),
    ready: Callable[[int, set[int]], None] | None = None,
) -> tuple[int, list[Choice] | None, list[tuple[int, Choice, int]], list[Family]]:
    """The chosen pair: the one finalist, or the finalist whose best event is best.

    Where the screening rounds could not tell the last pairs apart, each finalist's events are
    chosen as the chosen pair's are (at :data:`DEV_LEVEL`, on all of its calls with the final
    round's), and the pair whose best event has the best development value wins: the
    comparison the race could not make on part of its calls, made on the calls that will
    choose the registered event. The finalists are compared with ``raced``, the families of
    the events their last screening showings counted (every family but boosted trees where
    that is empty); the other families are left for the winner alone (:func:`choose` fits
    them, after the round grows if it does). Fitting every family for every finalist took
    PrefixSum's final round at 1e7 calls 7.7 s under a profiler for pairs the race had already
    found alike (0.5 s now; its development went from 17.6 to 17.0 s only, as the winner's
    other families are now fitted on its grown calls). The final round of a finalist that loses is
    taken from the reserve (one input's share where the finalists share an input).

    A race's one finalist whose inputs hold :data:`SUBSAMPLE_FROM` calls each is developed the
    same way, with the families its last showing counted, the others left to :func:`choose`,
    where :func:`worth_fitting` judges them on a subsample; with fewer calls (which
    :func:`worth_fitting` could not judge them on), or with no ``raced`` families (no race: one
    candidate pair), it is left to :func:`choose` to fit every family. Fitting every family on
    all of a lone finalist's calls before its round grows, then the best of them again after,
    took PrefixSum's choice at 1e7 calls (seed 3) 3.8 s, of which boosted trees 0.8 s, a
    family the product score's form had ruled out (1.8 s now, 0.3 s of it this round's, as for
    its other seeds; the 72 audits of the six mechanisms at 1e7 calls, seeds 0 to 11, certify
    the same bounds).
    Deferred on fewer calls, the families are fitted after the growth instead, on more calls:
    OneTimeRappor at 1e6 calls (seed 2) took 2.9 CPU s instead of 1.9.

    ``ready(p, keep)``, where given, is called before finalist ``p`` is developed and once more
    for the winner (``keep`` empty): it brings ``p``'s inputs in ``held`` to their final round's
    calls and may free the other inputs of ``held`` but those in ``keep``, the inputs of the
    finalists still to come and of the best one so far (the leader until another is better).
    The outputs of two or three finalists are then held at a time, not those of all of them.

    Returns
    -------
    (int, list of Choice or None, list of (int, Choice, int), list of str)
        The chosen pair, its events (None: one finalist left to :func:`choose`), every finalist's
        best event of the families compared with its calls per input, the winner first (empty
        for one finalist), and the families still to fit for the winner (empty where its best
        event is a settled histogram: no other family's event can beat it).
    """
    if len(finalists) == 1:
        if ready is not None:
            ready(finalists[0], set())
        calls = min(held[i].rows.shape[0] for i in index[finalists[0]])
        if not raced or calls < SUBSAMPLE_FROM:  # choose fits every family
            return finalists[0], None, [], []
    compared: tuple[Family, ...] = (
        tuple(f for f in families if f in raced)
        or tuple(f for f in families if f != "boosted") or tuple(families)
    )
    found: dict[int, list[Choice]] = {}
    calls_of: dict[int, int] = {}
    best = finalists[0]  # the race's order breaks ties: the leader wins unless another is better
    for k, p in enumerate(finalists):
        if ready is not None:
            ready(p, {i for q in [*finalists[k + 1 :], best] for i in index[q]})
        found[p] = develop(held[index[p][0]].rows, held[index[p][1]].rows, compared, reserved,
                           alpha_per_rate, DEV_LEVEL)
        calls_of[p] = int(held[index[p][0]].rows.shape[0])
        if found[p] and (not found[best] or found[p][0].value > found[best][0].value):
            best = p
    if ready is not None:
        ready(best, set())  # the winner's outputs alone stay
    won = best
    order = sorted(finalists, key=lambda p: found[p][0].value if found[p] else -math.inf,
                   reverse=True)  # stable: won first
    shown = [(p, found[p][0], calls_of[p]) for p in order if found[p]] if len(finalists) > 1 else []
    events = found[won]
    pending = [f for f in families if f not in compared] if events and not events[0].settled else []
    return won, events or None, shown, pending


def _finalists_round(
    leader: int,
    shown: Sequence[Candidate],
    index: Sequence[tuple[int, int]],
    held: dict[int, Rows],
    budget: Budget,
    calls: int,
    width: int,
    spent: int,
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
) -> int:
    """New calls per input of each finalist after a race of one round (``budget.one_round``).

    As many as the leader's round would grow to: the plan's (``budget.final``) and what
    :func:`extension` would add to it, judged on the event of the leader's race showing and its
    race calls. The final round holds two finalists' outputs at a time (the best so far and the
    one it is compared with, :func:`final_round`), so both together stay within the memory cap
    of one pair's outputs (:func:`dev_values`); the winner may grow further in :func:`choose`.
    Where more calls buy the leader's event little (its bound rests on the reserve), the
    finalists stay at the plan's round and the reserve keeps the rest: ReportNoisyMax3 at 1e7
    calls (DP-Sniper's code, seeds 0 to 11), each finalist given the 1.25 million calls per input
    the growth may reach at most, certified 0.2282 against 0.2348 with halving.

    SparseVectorTechnique3 at 1e7 calls (DP-Sniper's code), seeds 300 to 351: with halving, 13
    seeds below 0.8 of the mean (0.1097); each finalist at 600,000 calls per input (one pair's
    cap for each), 1 (mean 0.1196), but with two finalists' outputs held at once PrefixSum's
    peak reached 511 MB and its CPU 15% more than halving's; at this cap (300,000), 5 of 52
    (mean 0.1158), for 0.97 of halving's CPU (1.04 on PrefixSum) and a peak of about 400 MB.
    On seeds 400 to 451 the full cap did worse (0.1166, 2 below) than this cap (0.1211, 1), and
    a third of the cap (400,000) no better (0.1192, 1).
    """
    choice = _last_showings(shown)[leader].choice
    rows_a, rows_b = (held[i].rows for i in index[leader])
    if choice is None:
        return budget.final
    grow = extension(
        choice, rows_a, rows_b, budget, calls, width, alpha_per_rate=alpha_per_rate, delta=delta,
        target=target, spent=spent + 2 * budget.final,
    )
    room = dev_values(calls) // (4 * max(width, 1)) - int(max(rows_a.shape[0], rows_b.shape[0]))
    return max(min(budget.final + grow, room), 4)


def held_out_first(found: list[Choice], shown: Sequence[Candidate]) -> list[Choice]:
    """The chosen pair's events, led by its race event where that one is worth more.

    ``shown``: the chosen pair's showings, in round order. Where its last showing's
    :attr:`~Candidate.held_event` has a larger development value on its own held-out calls
    than the best event chosen on all the pair's calls has on its selection half
    (:attr:`~certify.blackbox.events.Choice.value`, both at
    :data:`~certify.blackbox.events.DEV_LEVEL` and at the planned reserve), that event leads,
    with that value. Both are pessimistic values of a development choice, but the race event's
    counts did not choose it, where the chosen pair's best event is the best of thousands of
    cuts on its selection half and its value pays for that search. Where a pair's events need
    more calls to show than its development has (SparseVectorTechnique6 at 1e6 calls, seed 9:
    every family's event of value 0 on the final round's 72,500 calls per input but boosted
    trees', 0.031, and a linear event of the race worth 0.121 on its held-out calls), the
    event that held is the better one to register (it certified 0.162, the other 0.074).
    Either is a development choice, so either leaves the certificate valid.
    """
    event = shown[-1].held_event if shown else None
    if event is None or not found or shown[-1].held_value <= found[0].value:
        return found
    return [attrs.evolve(event, value=shown[-1].held_value), *found]


def checked_first(
    found: list[Choice],
    sel_a: NDArray[np.float64],
    sel_b: NDArray[np.float64],
    fresh: Iterable[tuple[int, NDArray[np.float64]]],
    reserved: int,
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
) -> tuple[list[Choice], list[float]]:
    """The chosen pair's events, led by one that holds on fresh calls.

    The first :data:`CHECKED` events of ``found`` (best development value first) are counted
    on ``fresh`` calls, chunks ``(input, outputs)`` with input 0 or 1 that chose nothing, in
    the direction the calls ``sel_a``, ``sel_b`` that chose their thresholds favour, and each
    is valued at ``reserved`` calls per input with its rates one standard deviation pessimistic
    (:data:`CHECK_LEVEL`). Where the leader's value there is nothing and another's is more,
    the checked events lead in the order of those values (ties in development order);
    otherwise ``found`` is kept as it is.

    A development value is the best of thousands of cuts, each judged on a few development
    calls: a cut deep in a tail, counted a hundred times, can win that search by chance and
    certify nothing (SparseVectorTechnique3 at 3e6 calls, seed 1: ``product (1 of 10
    coordinates)`` of development value 0.27, 0 on the reserve, where the linear event of
    value 0.03 certified 0.04). On calls that did not choose it such a cut shows what it is.
    A leader that holds keeps its place: ranking every event by its value on a few fresh calls
    would favour the well-counted ones over a real tail event (ReportNoisyMax3 at 1e6 calls
    lost 7% so).

    Returns
    -------
    (list of Choice, list of float)
        ``found``, reordered where the leader failed (values unchanged), and the checked
        events' values on the fresh calls, in the returned order.
    """
    checked = found[:CHECKED]
    errors = np.zeros((len(checked), 2), dtype=np.int64)
    calls = [0, 0]
    for side, out in fresh:
        calls[side] += out.shape[0]
        for k, choice in enumerate(checked):  # as event_errors counts: a inside, b outside
            inside = choice.orientation * choice.model.score(out) >= choice.orientation * choice.threshold
            errors[k, side] += int(np.count_nonzero(inside if side == 0 else ~inside))
    values = [
        _held_out_value(
            _directed(choice, sel_a, sel_b, (int(e0), calls[0], int(e1), calls[1])),
            reserved, alpha_per_rate, delta, CHECK_LEVEL, target,
        ) if calls[0] and calls[1] else 0.0
        for choice, (e0, e1) in zip(checked, errors, strict=True)
    ]
    if not values or values[0] > 0.0 or max(values) <= 0.0:
        return found, values
    order = sorted(range(len(checked)), key=lambda k: -values[k])
    return [checked[k] for k in order] + found[CHECKED:], [values[k] for k in order]


Pairs = Sequence[tuple[tuple[str, NDArray[Any]], tuple[str, NDArray[Any]]]]
"""Labelled candidate pairs: ``((label_a, input_a), (label_b, input_b))``."""


@final
@attrs.frozen
class Development:
    """What development chose, and what it cost.

    Attributes
    ----------
    pair : int
        The chosen pair's index among the candidates.
    found : list of Choice
        Every family's best event for it, best first (the first is registered).
    raced : list of int
        The candidates that raced (the first of each pair and its reverse).
    shown : list of Candidate
        Every raced pair's showing in every screening round (``Candidate.pair`` indexes
        ``raced``).
    per_round : list of int
        New calls per input of each round, the chosen pair's round (grown) last.
    development_calls : int
        All development calls.
    chosen_calls : int
        Development calls per input of the chosen pair, every round's.
    reserved : (int, int)
        Reserved calls on its first and second input.
    finalists : list of (int, Choice, int)
        Where the screening rounds left more than one pair: each finalist (index among the
        candidates), the best event of its final round and the calls per input it was chosen
        on, the winner first; else empty.
    checked : list of (Choice, float)
        The events :func:`checked_first` counted on fresh calls and their values there, in
        the order it left them (empty where it did not run: one event, or a settled one).
    check_calls : int
        Fresh calls per input they were counted on (0 where none).
    """

    pair: int
    found: list[Choice]
    raced: list[int]
    shown: list[Candidate]
    per_round: list[int]
    development_calls: int
    chosen_calls: int
    reserved: tuple[int, int]
    finalists: list[tuple[int, Choice, int]] = attrs.field(factory=list)
    checked: list[tuple[Choice, float]] = attrs.field(factory=list)
    check_calls: int = 0


def draw_calls(
    mechanism: Mechanism,
    x: NDArray[Any],
    n: int,
    seq: np.random.SeedSequence,
    name: str,
    label: str,
    into: Rows,
) -> None:
    """Add ``n`` development calls to ``into``, in the reserved stream's chunks.

    The outputs must have ``into``'s width.
    """
    for chunk in call_chunks(mechanism, x, n, seq, name, label, into.rows.shape[1]):
        into.append(chunk)


def call_chunks(
    mechanism: Mechanism,
    x: NDArray[Any],
    n: int,
    seq: np.random.SeedSequence,
    name: str,
    label: str,
    width: int,
) -> Iterator[NDArray[np.float64]]:
    """``n`` development calls in the reserved stream's chunks, drawn as they are taken."""
    rng = np.random.Generator(np.random.PCG64(seq))
    done = 0
    while done < n:
        size = min(CHUNK_CALLS, n - done)
        yield call_mechanism(mechanism, x, size, rng, name=name, label=label, width=width)
        done += size


def unordered(pairs: Pairs) -> list[int]:
    """Indices of the pairs to race: the first of each pair and its reverse.

    Eq. 16 bounds both directions of one event, so a pair and its reverse are one audit.
    """
    seen: set[frozenset[str]] = set()
    keep = []
    for p, ((la, _), (lb, _)) in enumerate(pairs):
        if frozenset((la, lb)) not in seen:
            seen.add(frozenset((la, lb)))
            keep.append(p)
    return keep


def develop(
    mechanism: Mechanism,
    pairs: Pairs,
    *,
    calls: int,
    seed: int,
    width: int,
    name: str,
    families: Sequence[Family],
    dev_fraction: float,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
    note: Callable[[int, int, str], None],
) -> Development:
    """Every development stage of an audit: budget, race, event, reserved split.

    The calls of distinct input ``i`` in round ``r`` come from ``SeedSequence(seed,
    spawn_key=(1, i, r))``, so they are the same whatever else the audit draws. The race tries
    every family but :data:`NOT_RACED` (and product scores on few calls,
    :data:`RACE_PRODUCT_CALLS`); the chosen pair, every family.
    The reserved calls are split between its inputs as the chosen event's development counts
    favour (judged on the half of its development calls that chose the threshold).
    """
    labels = list(dict.fromkeys(label for pair in pairs for label, _ in pair))
    inputs = {label: x for pair in pairs for label, x in pair}
    raced = unordered(pairs)
    index = [(labels.index(pairs[p][0][0]), labels.index(pairs[p][1][0])) for p in raced]
    budget = plan_budget(calls, len(raced), len({i for pair in index for i in pair}), dev_fraction, width)
    rounds = len(budget.screening) + 1

    def draw(i: int, r: int, n: int, into: Rows) -> None:
        seq = np.random.SeedSequence(seed, spawn_key=(1, i, r))
        draw_calls(mechanism, inputs[labels[i]], n, seq, name, labels[i], into)

    trees = FittedTrees()  # the growth keeps the calls boosted trees are fitted on

    def choose_for(
        dev_a: NDArray[np.float64], dev_b: NDArray[np.float64], fams: Sequence[Family],
        reserved: int, alpha: float, dev_level: float, per_family: bool = False,
    ) -> list[Choice]:
        return choose_event(
            dev_a, dev_b, fams, reserved_a=reserved, reserved_b=reserved, alpha_per_rate=alpha,
            delta=delta, seed=seed, target=target, dev_level=dev_level, per_family=per_family,
            trees=trees,
        )

    cheap = tuple(f for f in families if f not in NOT_RACED) or tuple(families)
    # every input's buffer is allocated for the most calls it can get (pages are touched only
    # as calls arrive): its share of every screening round (each round's calls are shared by
    # two inputs or more), the chosen pair's round and the most the round can grow. Allocated
    # stage by stage instead, the race's buffers, freed into the heap when the final round's
    # larger ones replaced them, raised OneTimeRappor's peak at 1e7 calls from 484 to 514 MB.
    capacity = sum(budget.screening) // 2 + max(budget.final, dev_values(calls) // (2 * width))
    # a screening round values each family's best event alone (the SCREEN_FAMILIES best, and SCREEN_ALSO)
    raced_out = race(
        index, budget, draw, functools.partial(choose_for, per_family=True), cheap,
        alpha_per_rate=alpha_per_rate, delta=delta, target=target,
        note=lambda r, what: note(r, rounds, what), width=width, capacity=capacity,
    )
    shown, per_input, spent = raced_out.shown, raced_out.per_input, raced_out.spent
    # the final round measures the finalists anew where it more than doubles their calls
    finalists = pick_finalists(
        raced_out.finalists, shown, optimistic=budget.final > sum(per_input),
        one_round=budget.one_round,
    )
    if all_settled(finalists, shown) and not budget.one_round:
        finalists = finalists[:1]  # settled histograms: the race's counts measure them
    # the last finalists go while their rounds would take over an eighth of the reserve (not
    # after a race of one round, whose finalists' rounds are priced below)
    while not budget.one_round and (
        budget.final * (len({i for p in finalists for i in index[p]}) - 2) > budget.reserved // 4
    ):
        finalists = finalists[:-1]
    held: dict[int, Rows] = {}
    for i in (i for p in finalists for i in index[p] if i not in held):
        held[i] = raced_out.held[i] if i in raced_out.held else Rows(width, capacity)
    del raced_out
    final = budget.final
    if budget.one_round and len(finalists) > 1:
        final = _finalists_round(finalists[0], shown, index, held, budget, calls, width, spent,
                                 alpha_per_rate=alpha_per_rate, delta=delta, target=target)
    elif len(held) > 2:  # the memory cap holds for all the finalists' inputs (the winner may grow)
        held_calls = max(rows.rows.shape[0] for rows in held.values())
        final = min(final, max(dev_values(calls) // (len(held) * width) - held_calls, 4))
    what = (
        "the chosen pair, every test family" if len(finalists) == 1
        else f"the {len(finalists)} pairs left, the test families of their last showings"
    )
    note(rounds, rounds, f"{what}, {final} new calls per input")
    drawn: set[int] = set()

    def ready(p: int, keep: set[int]) -> None:
        for i in index[p]:
            if i not in drawn:
                draw(i, rounds - 1, final, held[i])
                drawn.add(i)
        for i in [i for i in held if i in drawn and i not in keep and i not in index[p]]:
            del held[i]  # its calls are spent, and no finalist to come needs them

    if not budget.one_round:  # every finalist's round at once, within the memory cap
        for p in finalists:
            ready(p, set(held))
    won, found, shown_final, pending = final_round(
        finalists, index, held, families, choose_for, budget.reserved, alpha_per_rate,
        raced_families(finalists, shown, families), ready if budget.one_round else None,
    )
    ia, ib = index[won]
    rows_a, rows_b = held[ia], held[ib]
    final_calls = final * len(drawn)
    held.clear()  # the losers' outputs go (the winner's stay in rows_a and rows_b)

    def more(n: int) -> None:
        draw(ia, rounds, n, rows_a)
        draw(ib, rounds, n, rows_b)

    found, dev_a, dev_b, extra = choose(
        rows_a, rows_b, families, choose_for, more,
        budget, calls, alpha_per_rate=alpha_per_rate, delta=delta, target=target, found=found,
        spent=spent + final_calls, pending=pending,
    )
    found = held_out_first(found, [c for c in shown if c.pair == won])
    development_calls = spent + final_calls + 2 * extra
    half_a, half_b = dev_a.shape[0] // 2, dev_b.shape[0] // 2
    check_calls = int(CHECK_SHARE * ((calls - development_calls) // 2))
    checked: list[tuple[Choice, float]] = []
    if len(found) > 1 and not found[0].settled and check_calls > 0:
        development_calls += 2 * check_calls
        note(rounds, rounds, f"the chosen pair's {min(len(found), CHECKED)} best events counted on "
             f"{check_calls} fresh calls per input")
        fresh = (
            (side, chunk)
            for side, i in enumerate((ia, ib))
            for chunk in call_chunks(
                mechanism, inputs[labels[i]], check_calls,
                np.random.SeedSequence(seed, spawn_key=(1, i, rounds + 1)), name, labels[i], width,
            )
        )
        found, values = checked_first(
            found, dev_a[half_a:], dev_b[half_b:], fresh, (calls - development_calls) // 2,
            alpha_per_rate=alpha_per_rate, delta=delta, target=target,
        )
        checked = list(zip(found[: len(values)], values, strict=True))
    else:
        check_calls = 0
    reserved = split_reserved(
        found[0], dev_a[half_a:], dev_b[half_b:], 2 * ((calls - development_calls) // 2),
        alpha_per_rate=alpha_per_rate, delta=delta, target=target,
    )
    return Development(
        pair=raced[won],
        found=found,
        raced=raced,
        shown=shown,
        per_round=[*per_input, final + extra],
        development_calls=development_calls,
        chosen_calls=int(dev_a.shape[0]),
        reserved=reserved,
        finalists=[(raced[p], c, n) for p, c, n in shown_final],
        checked=checked,
        check_calls=check_calls,
    )
