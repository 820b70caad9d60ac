"""Development stages of a mechanism audit: the budget, the race among input pairs, the event.

:func:`~certify.blackbox.audit.audit_mechanism` spends its development calls in three stages,
each a function here:

1. :func:`plan_budget` divides the budget: screening rounds for the candidate input pairs, the
   chosen pair's own round, and the reserved calls.
2. :func:`race` chooses the pair by successive halving. Every pair still in the race gets fresh
   calls each round and keeps the calls of its earlier rounds. A pair is judged by one event
   chosen on its earlier calls and valued on the round's fresh calls (its first round: chosen
   on one half, valued on the other), so a pair cannot win by a chance event: the value is an
   event's plug-in bound on calls that did not choose it.
3. :func:`choose` chooses the event on all of the chosen pair's calls, after adding more of them
   while taking them from the reserve hardly costs the best event anything (:func:`extension`).

Nothing here sees a reserved call: whatever these stages choose, the certificate stays valid.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.blackbox.events import DEV_LEVEL, Choice, Family, event_errors, expected_bound
from certify.errors import ParameterError
from certify.protocol.criterion import _value
from certify.stats.tradeoff import Target

__all__ = [
    "EXTEND_COST",
    "EXTEND_MAX_SHARE",
    "MAX_DEV_VALUES",
    "MIN_DEV_CALLS",
    "SCREEN_CALLS",
    "SCREEN_MAX_SHARE",
    "Budget",
    "Candidate",
    "choose",
    "extension",
    "plan_budget",
    "race",
]

MIN_DEV_CALLS: Final = 1_000
"""Fewest development calls per input pair (when the budget allows)."""

SCREEN_CALLS: Final = 2_000
"""Fewest calls per input a pair gets in its first screening round (when the budget allows)."""

SCREEN_MAX_SHARE: Final = 0.25
"""Most of the budget the screening rounds may take to give each pair its first-round calls."""

MAX_DEV_VALUES: Final = 20_000_000
"""Most development output numbers of one pair held in memory (calls times output dimension)."""

EXTEND_COST: Final = 0.005
"""The chosen pair's round grows, on fresh calls, while taking those calls from the reserve
costs its best event less than this share of its expected bound."""

EXTEND_MAX_SHARE: Final = 0.25
"""Most of the budget that development may reach by growing the chosen pair's round."""

import os as _os

_FINAL_LEVEL = float(_os.environ.get("CERTIFY_FINAL_LEVEL", "0.05"))
_KEEP_FAMILIES: Final = 0.9
"""After the round grows, the families whose value was within this share of the best are tried again."""

Draw = Callable[[int, int, int], tuple[NDArray[np.float64], NDArray[np.float64]]]
"""``draw(pair, round, n)``: ``n`` fresh development calls on each input of a pair."""

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
@attrs.frozen
class Budget:
    """How an audit's calls are spent.

    Attributes
    ----------
    screening : tuple of int
        New calls per input of every pair still in the race, one entry per screening round
        (empty for one candidate pair).
    alive : tuple of int
        Pairs in the race in each screening round.
    final : int
        Fresh calls per input of the chosen pair in its own round (before it grows).
    reserved : int
        Reserved calls per input of an even split (the audit may split their sum unevenly).
    """

    screening: tuple[int, ...]
    alive: tuple[int, ...]
    final: int
    reserved: int

    @property
    def development_calls(self) -> int:
        """Development calls of the plan, all pairs and both inputs."""
        return 2 * (sum(a * n for a, n in zip(self.alive, self.screening, strict=True)) + self.final)

    @property
    def rounds(self) -> list[int]:
        """New calls per input of each round, the chosen pair's last."""
        return [*self.screening, self.final]


def plan_budget(calls: int, n_pairs: int, dev_fraction: float, width: int) -> Budget:
    """Development calls per round and reserved calls per input.

    One pair: its own round takes ``dev_fraction`` of the budget (at least
    :data:`MIN_DEV_CALLS`). Several pairs: as many screening rounds as halvings leave one pair,
    each spending the same number of calls (the pairs halve, so each pair's new calls double),
    together half of the development share, and the chosen pair's round the other half. Each
    pair's first round gets at least :data:`SCREEN_CALLS` calls per input, taking up to
    :data:`SCREEN_MAX_SHARE` of the budget for it: with many pairs and few calls, an equal
    share leaves a few hundred calls per pair, where a pair whose best event is worth 0.05 can
    look like one worth 0.25.

    Examples
    --------
    >>> b = plan_budget(1_000_000, 16, 0.1, 1)
    >>> b.alive, b.screening[0] >= SCREEN_CALLS, b.final
    ((16, 8, 4, 2), True, 25000)
    """
    dev_total = max(int(dev_fraction * calls), min(MIN_DEV_CALLS * n_pairs, calls // 2))
    cap = MAX_DEV_VALUES // (2 * max(width, 1))
    alive: list[int] = []
    left = n_pairs
    while left > 1:
        alive.append(left)
        left = math.ceil(left / 2)
    if not alive:
        final = max(min(dev_total // 2, cap), 4)
        return Budget((), (), final, _reserved(calls, 2 * final))
    screen_total = max(dev_total // 2, 2 * n_pairs * SCREEN_CALLS * len(alive))
    screen_total = min(screen_total, max(dev_total // 2, int(SCREEN_MAX_SHARE * calls)))
    per_round = screen_total // len(alive)
    screening = tuple(max(min(per_round // (2 * a), cap // (len(alive) + 1)), 4) for a in alive)
    final = max(min(dev_total // 4, cap), 4)
    spent = 2 * (sum(a * n for a, n in zip(alive, screening, strict=True)) + final)
    return Budget(screening, tuple(alive), final, _reserved(calls, spent))


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
        Eq. 16 (or the target) at those rates themselves: breaks ties at 0.
    """

    pair: int
    round: int
    calls: int
    choice: Choice | None
    held_out: float
    plug_in: float

    @property
    def key(self) -> tuple[float, float]:
        """The ranking key (larger is better)."""
        return (self.held_out, self.plug_in)


def _plug_in(
    choice: Choice,
    out_a: NDArray[np.float64],
    out_b: NDArray[np.float64],
    delta: float,
    target: Target | None,
) -> float:
    """Eq. 16 (or the target) at an event's smoothed rates on outputs: no width at all."""
    fp, fn = event_errors(choice, out_a, out_b)
    u0 = np.array([(fp + 0.5) / (out_a.shape[0] + 1.0)])
    u1 = np.array([(fn + 0.5) / (out_b.shape[0] + 1.0)])
    return float(_value(u0, u1, delta, target)[0])


def race(
    n_pairs: int,
    budget: Budget,
    draw: Draw,
    develop: Develop,
    families: Sequence[Family],
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
    note: Callable[[int, str], None],
) -> tuple[int, NDArray[np.float64], NDArray[np.float64], list[Candidate]]:
    """Successive halving over the candidate pairs, judged on held-out calls.

    Returns
    -------
    (int, numpy.ndarray, numpy.ndarray, list of Candidate)
        The chosen pair, all of its development calls on input a and input b (every round's),
        and every pair's showing in every round.

    Notes
    -----
    Round ``r`` gives each pair in the race ``budget.screening[r]`` fresh calls per input. The
    pair's event is chosen (``develop`` with ``families``) on its calls of the earlier rounds,
    in the first round on the first half of the new calls, and valued on the new calls that
    did not choose it; the better half of the pairs, by that value, goes on with all its calls.
    A chance event of a weak pair (a tail that looked far apart on a few hundred calls) has to
    show again on fresh calls to win, and a pair's calls grow as the race narrows.
    """
    alive = list(range(n_pairs))
    held: dict[int, tuple[list[NDArray[np.float64]], list[NDArray[np.float64]]]] = {
        p: ([], []) for p in alive
    }
    shown: list[Candidate] = []
    for r, n in enumerate(budget.screening):
        note(r + 1, f"{len(alive)} input pairs, {n} new calls per input")
        round_shown: dict[int, Candidate] = {}
        for p in alive:
            new_a, new_b = draw(p, r, n)
            old_a, old_b = held[p]
            if old_a:
                fit_a, fit_b = np.vstack(old_a), np.vstack(old_b)
                val_a, val_b = new_a, new_b
            else:
                fit_a, val_a = new_a[: n // 2], new_a[n // 2 :]
                fit_b, val_b = new_b[: n // 2], new_b[n // 2 :]
            # the event is chosen for, and valued at, a reserve the size of the held-out calls:
            # the bound those calls would certify, not an extrapolation of their rare counts
            size = int(val_a.shape[0])
            found = develop(fit_a, fit_b, families, size, SCREEN_LEVEL, 0.5)
            best = found[0] if found else None
            if best is None:
                held_out, plug_in = -1.0, -math.inf
            else:
                held_out = expected_bound(
                    best, val_a, val_b, [(size, size)],
                    alpha_per_rate=SCREEN_LEVEL, delta=delta, target=target,
                )[0]
                plug_in = _plug_in(best, val_a, val_b, delta, target)
            round_shown[p] = Candidate(p, r, fit_a.shape[0], best, held_out, plug_in)
            del fit_a, fit_b, val_a, val_b
            old_a.append(new_a)
            old_b.append(new_b)
        shown.extend(round_shown.values())
        ranked = sorted(alive, key=lambda q: round_shown[q].key, reverse=True)
        alive = ranked[: math.ceil(len(alive) / 2)]
        for p in ranked[len(alive) :]:
            del held[p]
    chosen = alive[0]
    parts_a, parts_b = held[chosen]
    if not parts_a:
        empty = np.empty((0, 0), dtype=np.float64)
        return chosen, empty, empty, shown
    return chosen, np.vstack(parts_a), np.vstack(parts_b), shown


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
) -> int:
    """Fresh calls per input to add to the chosen pair's round, taken from the reserve.

    The round doubles (``final``, then ``2 final``, ``4 final`` more, ...) while taking all
    those calls from the reserve costs ``choice`` less than :data:`EXTEND_COST` of its expected
    bound at the planned reserve, judged on the half of the development calls that chose its
    threshold; development may reach :data:`EXTEND_MAX_SHARE` of the budget, and one pair's
    outputs :data:`MAX_DEV_VALUES` numbers. Where the bound is set by the event (rare windows,
    small effects spread over many coordinates) rather than by the width of the reserved
    confidence bounds, development calls buy more than reserved ones.
    """
    half_a, half_b = dev_a.shape[0] // 2, dev_b.shape[0] // 2
    held = max(dev_a.shape[0], dev_b.shape[0])
    room = MAX_DEV_VALUES // (2 * max(width, 1)) - held
    extra, step, spent = 0, budget.final, budget.development_calls
    sizes = []
    while step <= room - extra and spent + 2 * (extra + step) <= EXTEND_MAX_SHARE * calls:
        if budget.reserved - extra - step < 1:
            break
        extra += step
        sizes.append(extra)
        step *= 2
    if not sizes:
        return 0
    values = expected_bound(
        choice, dev_a[half_a:], dev_b[half_b:],
        [(budget.reserved, budget.reserved)] + [(budget.reserved - e, budget.reserved - e) for e in sizes],
        alpha_per_rate=alpha_per_rate, delta=delta, target=target,
    )
    at_plan, after = values[0], values[1:]
    if not at_plan > 0.0:
        return 0
    cheap = [e for e, v in zip(sizes, after, strict=True) if at_plan - v <= EXTEND_COST * at_plan]
    return max(cheap, default=0)


def choose(
    dev_a: NDArray[np.float64],
    dev_b: NDArray[np.float64],
    families: Sequence[Family],
    develop: Develop,
    more: Callable[[int], tuple[NDArray[np.float64], NDArray[np.float64]]],
    budget: Budget,
    calls: int,
    *,
    alpha_per_rate: float,
    delta: float,
    target: Target | None,
) -> tuple[list[Choice], NDArray[np.float64], NDArray[np.float64], int]:
    """The chosen pair's event: every family on its calls, after the round grows.

    Returns
    -------
    (list of Choice, numpy.ndarray, numpy.ndarray, int)
        Every family's best event (best first), the development calls they were chosen on (the
        second half of each chose the threshold), and the fresh calls per input added by
        :func:`extension` (``more(n)`` draws them).

    Raises
    ------
    ParameterError
        If no family applies to the outputs.
    """
    width = dev_a.shape[1]
    found = develop(dev_a, dev_b, families, budget.reserved, alpha_per_rate, _FINAL_LEVEL)
    if not found:
        raise ParameterError(
            f"no test family in {tuple(families)!r} applies to these outputs; use tests='certify'."
        )
    extra = extension(
        found[0], dev_a, dev_b, budget, calls, width,
        alpha_per_rate=alpha_per_rate, delta=delta, target=target,
    )
    if extra:
        more_a, more_b = more(extra)
        dev_a, dev_b = np.vstack([dev_a, more_a]), np.vstack([dev_b, more_b])
        del more_a, more_b
        best = found[0].value
        again = [f for f in families if any(
            c.family == f and c.value >= _KEEP_FAMILIES * best for c in found
        )]
        found = develop(dev_a, dev_b, again, budget.reserved - extra, alpha_per_rate, _FINAL_LEVEL) or found
    return found, dev_a, dev_b, extra
