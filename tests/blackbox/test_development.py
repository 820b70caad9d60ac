"""The development stages of a mechanism audit, each on its own: budget, race, extension."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import pytest
from numpy.typing import NDArray

from certify.blackbox._development import (
    CLEAR_LEVEL,
    FINALISTS,
    NOT_RACED,
    NOT_SCREENED,
    ONE_ROUND_CALLS,
    RACE_PRODUCT_CALLS,
    ROUND_FINALISTS,
    SCREEN_ALSO,
    SCREEN_FAMILIES,
    SUBSAMPLE_CALLS,
    SUBSAMPLE_FROM,
    SUBSAMPLE_HOLDS,
    Budget,
    Candidate,
    Race,
    Rows,
    _cross_fitted_showing,
    _directed_counts,
    _value_interval,
    all_settled,
    checked_first,
    choose,
    develop,
    draw_calls,
    extension,
    final_round,
    held_out_first,
    one_round_clear_level,
    pick_finalists,
    plan_budget,
    race,
    raced_families,
    unordered,
    worth_fitting,
)
from certify.blackbox.events import VALUE_FAMILIES, Choice, Family, choose_event
from certify.protocol.scores import LinearScore
from certify.stats.binomial import clopper_pearson_lower, clopper_pearson_upper
from certify.stats.tradeoff import Target, gdp_mu_lower


def _coin(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """One biased bit per call: 1 with probability x[0]."""
    return (rng.random(n) < x[0]).astype(np.int64)


def _choose_event(seed: int) -> Any:
    """The event choice at the audit's settings (delta 0): ``develop(a, b, families, ...)``."""

    def develop(
        a: NDArray[np.float64], b: NDArray[np.float64], fams: Any, reserved: int, alpha: float,
        level: float,
    ) -> list[Choice]:
        return choose_event(a, b, fams, reserved_a=reserved, reserved_b=reserved, alpha_per_rate=alpha,
                            delta=0.0, seed=seed, dev_level=level)

    return develop


def _race(probabilities: list[tuple[float, float]], budget: Budget, seed: int) -> tuple[int, Any]:
    """Race pairs of biased bits (the inputs are the probabilities) on the cheap families."""
    raced = _raced(probabilities, budget, seed)
    return raced.finalists[0], raced.shown


def _raced(probabilities: list[tuple[float, float]], budget: Budget, seed: int) -> Race:
    """:func:`_race`'s whole :class:`Race`."""
    inputs = sorted({p for pair in probabilities for p in pair})
    index = [(inputs.index(a), inputs.index(b)) for a, b in probabilities]

    def draw(i: int, r: int, n: int, into: Rows) -> None:
        seq = np.random.SeedSequence(seed, spawn_key=(1, i, r))
        draw_calls(_coin, np.array([inputs[i]]), n, seq, "coin", str(inputs[i]), into)

    develop = _choose_event(seed)

    cheap: tuple[Family, ...] = tuple(f for f in VALUE_FAMILIES if f not in NOT_RACED)
    raced = race(
        index, budget, draw, develop, cheap, alpha_per_rate=0.0152, delta=0.0, target=None,
        note=lambda r, what: None, width=1, capacity=1_000,
    )
    assert raced.spent <= sum(budget.screening)
    for p in raced.finalists:
        for i in index[p]:
            assert raced.held[i].rows.shape[0] == sum(raced.per_input)
    return raced


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_race_keeps_the_pair_whose_rates_lie_furthest_apart(seed: int) -> None:
    """Bits at 0.5 against 0.55, 0.6 and 0.7 (log ratios up to 0.51): the widest pair wins."""
    pairs = [(0.5, 0.55), (0.5, 0.6), (0.5, 0.7), (0.5, 0.52)]
    budget = plan_budget(400_000, len(pairs), 5, 0.1, 1)
    won, shown = _race(pairs, budget, seed)
    assert won == 2
    assert {c.pair for c in shown if c.round == 0} == set(range(len(pairs)))


def test_race_stops_when_one_pair_is_left() -> None:
    """A pair far ahead of the others ends the race early; its unspent calls stay unspent."""
    pairs = [(0.5, 0.95), (0.5, 0.51), (0.5, 0.505)]
    budget = plan_budget(2_000_000, len(pairs), 4, 0.1, 1)
    won, shown = _race(pairs, budget, 0)
    assert won == 0
    assert max(c.round for c in shown) < len(budget.screening) - 1 or len(budget.screening) == 1


def test_a_race_of_one_round_puts_a_pair_out_only_at_the_level_its_values_share() -> None:
    """Bits at 0.6 and 0.58 against 0.5: two standard deviations apart, not at the shared level.

    A race of one round compares the values of every family of every pair at once; a pair goes
    out only where the gap holds at CLEAR_LEVEL shared by them all (one_round_clear_level).
    """
    assert one_round_clear_level(8) == pytest.approx(
        CLEAR_LEVEL / (8 * (SCREEN_FAMILIES + len(SCREEN_ALSO)))
    )
    pairs = [(0.5, 0.6), (0.5, 0.58)]
    budget = plan_budget(3_000_000, len(pairs), 3, 0.1, 1)
    assert budget.one_round
    raced = _raced(pairs, budget, 0)
    lead, other = sorted(raced.shown, key=lambda c: c.pair)
    assert other.clear[1] < lead.clear[0]  # out at two standard deviations
    assert other.sure is not None and lead.sure is not None
    assert other.sure[1] >= lead.sure[0]  # not where the round's values share the level
    assert raced.finalists == [0, 1]
    # halving's rounds keep two standard deviations: no shared level is computed
    halving = plan_budget(400_000, len(pairs), 3, 0.1, 1)
    assert not halving.one_round
    assert all(c.sure is None for c in _raced(pairs, halving, 0).shown)


def test_held_out_counts_follow_the_direction_the_event_was_chosen_for() -> None:
    """A set rare under input a counts as P_b(S) / P_a(S); one whose complement is rare under b, reversed."""
    rare_under_a = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.0, 0.0, 0.5, "coordinate[0]")
    fit_a = np.array([[0.0]] * 90 + [[1.0]] * 10)
    fit_b = np.array([[0.0]] * 50 + [[1.0]] * 50)
    val_a = np.array([[0.0]] * 80 + [[1.0]] * 20)
    val_b = np.array([[0.0]] * 40 + [[1.0]] * 60)
    assert _directed_counts(rare_under_a, fit_a, fit_b, val_a, val_b) == (20, 100, 60, 100)
    # the inputs swapped and the outputs flipped: S = {1} is now common under both, and its
    # complement {0} is the set rare under b (the same calls, counted the other way round)
    assert _directed_counts(rare_under_a, 1 - fit_b, 1 - fit_a, 1 - val_b, 1 - val_a) == (20, 100, 60, 100)


def _bits(n: int, second: float, rng: np.random.Generator) -> NDArray[np.float64]:
    """Two bits per call: a fair one, and one that is 1 with probability ``second``."""
    out: NDArray[np.float64] = np.column_stack([rng.random(n) < 0.5, rng.random(n) < second]).astype(
        np.float64
    )
    return out


def test_a_showing_keeps_the_event_that_holds_on_its_own_held_out_calls() -> None:
    """Of the events a showing counts, the one whose own held-out counts are worth most is kept.

    The first bit is fair under both inputs, the second 0.2 against 0.6: an event on the first
    bit is worth nothing held out, whatever development value it showed.
    """
    rng = np.random.default_rng(0)
    calls_a, calls_b = _bits(4_000, 0.2, rng), _bits(4_000, 0.6, rng)
    signal = Choice("binned", LinearScore([0.0, 1.0], 0.0), 1, 0.5, 0.2, 0.2, 0.5, "binned[1]")
    noise = Choice("histogram", LinearScore([1.0, 0.0], 0.0), 1, 0.5, 2.0, 2.0, 0.5, "histogram")

    def develop(
        a: NDArray[np.float64], b: NDArray[np.float64], fams: Any, reserved: int, alpha: float,
        level: float,
    ) -> list[Choice]:
        return [noise, signal]

    shown = _cross_fitted_showing(
        0, 0, calls_a, calls_b, 100_000, develop, ("histogram", "binned"), alpha_per_rate=0.0152,
        delta=0.0, target=None,
    )
    assert shown.held_event is signal
    assert 0.9 < shown.held_value < math.log(3.0)  # log 3 = 1.10 less the margins
    only_noise = _cross_fitted_showing(
        0, 0, calls_a, calls_b, 100_000, lambda *args: [noise], ("histogram",),
        alpha_per_rate=0.0152, delta=0.0, target=None,
    )
    assert only_noise.held_event is None and only_noise.held_value == 0.0


def test_a_showing_counts_the_linear_event_even_below_three_better_looking_families() -> None:
    """Three families' events on the fair bit look best on their half; the linear one still counts.

    The first bit is fair under both inputs, the second 0.2 against 0.6: only the linear event
    (on the second bit), ranked last by development value, holds on held-out calls.
    """
    rng = np.random.default_rng(1)
    calls_a, calls_b = _bits(4_000, 0.2, rng), _bits(4_000, 0.6, rng)
    fair = LinearScore([1.0, 0.0], 0.0)
    noise = [Choice(f, fair, 1, 0.5, v, v, 0.5, f) for f, v in
             (("histogram", 3.0), ("coordinate", 2.5), ("binned", 2.0))]
    signal = Choice("linear", LinearScore([0.0, 1.0], 0.0), 1, 0.5, 0.1, 0.1, 0.5, "linear")

    def develop(
        a: NDArray[np.float64], b: NDArray[np.float64], fams: Any, reserved: int, alpha: float,
        level: float,
    ) -> list[Choice]:
        return [*noise, signal]

    families: tuple[Family, ...] = ("histogram", "coordinate", "binned", "linear")
    shown = _cross_fitted_showing(
        0, 0, calls_a, calls_b, 100_000, develop, families, alpha_per_rate=0.0152, delta=0.0,
        target=None,
    )
    assert "linear" in SCREEN_ALSO and len(noise) == SCREEN_FAMILIES
    assert shown.choice is signal and shown.held_event is signal
    assert shown.clear[0] > 0.5  # log 3 = 1.10, two standard deviations low


def test_a_showing_chooses_product_scores_only_on_halves_of_enough_calls() -> None:
    """Below RACE_PRODUCT_CALLS calls per input in a half, no product score is fitted."""
    families: tuple[Family, ...] = ("coordinate", "product", "linear")
    asked: list[tuple[int, tuple[Family, ...]]] = []

    def develop(
        a: NDArray[np.float64], b: NDArray[np.float64], fams: Any, reserved: int, alpha: float,
        level: float,
    ) -> list[Choice]:
        asked.append((a.shape[0], tuple(fams)))
        return []

    rng = np.random.default_rng(0)
    for n in (2 * RACE_PRODUCT_CALLS - 2, 2 * RACE_PRODUCT_CALLS):
        calls_a, calls_b = _bits(n, 0.2, rng), _bits(n, 0.6, rng)
        _cross_fitted_showing(
            0, 0, calls_a, calls_b, 100_000, develop, families, alpha_per_rate=0.0152,
            delta=0.0, target=None,
        )
    assert asked == [
        (RACE_PRODUCT_CALLS - 1, ("coordinate", "linear")),
        (RACE_PRODUCT_CALLS - 1, ("coordinate", "linear")),
        (RACE_PRODUCT_CALLS, families),
        (RACE_PRODUCT_CALLS, families),
    ]


def test_the_race_event_leads_where_it_is_worth_more_on_its_held_out_calls() -> None:
    """held_out_first: the last showing's event leads with its value where that is larger."""
    final = [Choice("boosted", LinearScore([1.0], 0.0), 1, 0.5, 0.03, 0.5, 0.5, "boosted")]
    race_event = Choice("linear", LinearScore([2.0], 0.0), 1, 1.3, 0.4, 0.6, 0.5, "linear")

    def showing(event: Choice | None, value: float) -> Candidate:
        return Candidate(0, 1, 100, race_event, 0.2, 0.1, held_event=event, held_value=value)

    first = held_out_first(final, [showing(None, 0.0), showing(race_event, 0.12)])
    assert [c.label for c in first] == ["linear", "boosted"]
    assert first[0].value == 0.12 and first[0].threshold == race_event.threshold
    assert held_out_first(final, [showing(race_event, 0.02)]) == final  # worth less: kept as chosen
    # only the last showing counts: an earlier round's event is older evidence
    assert held_out_first(final, [showing(race_event, 0.12), showing(None, 0.0)]) == final
    assert held_out_first(final, []) == final  # one candidate pair: no race


def test_finalists_beyond_the_leader_are_those_whose_last_showing_could_be_best() -> None:
    """pick_finalists: the race's leader, then the last showings' high ends (or held-out values)."""
    event = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.05, 0.5, 0.5, "coordinate[0]")

    def showing(pair: int, round_: int, held_out: float, upper: float) -> Candidate:
        return Candidate(pair, round_, 100, event, held_out, 0.0, upper)

    alive = [5, 2, 7, 1]  # the race's order, best first
    shown = [showing(1, 0, 0.30, 0.1), showing(7, 0, 0.50, 0.9)]  # an earlier round: older evidence
    shown += [showing(5, 1, 0.02, 0.05), showing(2, 1, 0.15, 0.20), showing(7, 1, 0.10, 0.25)]
    shown += [showing(1, 1, 0.12, 0.40)]
    assert FINALISTS == 3
    # by the high end: 1, then 7 (the leader stays, worth least or not); by held-out value where
    # the final round adds fewer calls than the race gave: 2, then 1; neither is as raced (2, 7)
    assert pick_finalists(alive, shown, optimistic=True) == [5, 1, 7]
    assert pick_finalists(alive, shown, optimistic=False) == [5, 2, 1]
    for optimistic in (True, False):
        assert pick_finalists(alive[:3], shown, optimistic=optimistic) == [5, 2, 7]  # as raced
        tie = [showing(p, 1, 0.05, 0.1) for p in alive]
        assert pick_finalists(alive, tie, optimistic=optimistic) == [5, 2, 7]  # ties: as raced


def test_after_a_race_of_one_round_four_finalists_go_on() -> None:
    """pick_finalists(one_round=True): the leader and three others, by the same values."""
    event = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.05, 0.5, 0.5, "coordinate[0]")
    alive = [5, 2, 7, 1, 3, 0]  # the race's order, best first
    held_out = {5: 0.01, 2: 0.02, 7: 0.30, 1: 0.10, 3: 0.25, 0: 0.05}
    high = {5: 0.5, 2: 0.9, 7: 0.35, 1: 0.8, 3: 0.3, 0: 0.95}
    low = {5: 0.0, 2: 0.0, 7: 0.25, 1: 0.05, 3: 0.2, 0: 0.0}
    shown = [Candidate(p, 0, 80_000, event, held_out[p], low[p], high[p]) for p in alive]
    assert ROUND_FINALISTS == 4 > FINALISTS
    # by the high end, each capped at held-out + 2 (held-out - low): 2 and 0, tails with
    # nothing at the low end, fall to 0.06 and 0.15, and 1 to 0.2 (0.10 + 2 x 0.05); 7 and 3
    # keep their high ends
    assert pick_finalists(alive, shown, optimistic=True, one_round=True) == [5, 7, 3, 1]
    # after halving, by the high end alone
    assert pick_finalists(alive, shown, optimistic=True) == [5, 0, 2]
    assert pick_finalists(alive, shown, optimistic=False, one_round=True) == [5, 7, 3, 1]
    assert pick_finalists(alive[:4], shown, optimistic=True, one_round=True) == alive[:4]
    # where the cap ranks them alike, the race's order breaks the tie
    flat = [Candidate(p, 0, 80_000, event, 0.1, 0.05, 0.9) for p in alive]
    assert pick_finalists(alive, flat, optimistic=True, one_round=True) == [5, 2, 7, 1]


def test_the_race_is_one_round_where_halving_would_give_each_input_fewer_calls() -> None:
    """plan_budget: one round of ONE_ROUND_CALLS per input where the development share allows it."""
    one = plan_budget(10_000_000, 8, 10, 0.1, 10)
    assert one.one_round and one.alive == (8,) and one.screening == (10 * ONE_ROUND_CALLS,)
    assert one.final == 250_000 and one.reserved == (10_000_000 - 800_000 - 500_000) // 2
    # halving's rounds give each input as much already (4e7), or one round would take more
    # than the development share (1e6, 3e6 for ten inputs)
    for calls in (1_000_000, 3_000_000, 40_000_000):
        plan = plan_budget(calls, 8, 10, 0.1, 10)
        assert not plan.one_round and len(plan.screening) == 3
    assert plan_budget(3_000_000, 2, 3, 0.1, 1).screening == (3 * ONE_ROUND_CALLS,)
    # nor where one pair's outputs of that many calls would not fit the memory cap
    assert not plan_budget(10_000_000, 8, 10, 0.1, 100).one_round


def test_a_ready_final_round_holds_the_best_and_the_coming_finalists_outputs_only() -> None:
    """final_round(ready=...): the same winner and values as with every finalist's outputs held."""
    inputs = [0.5, 0.52, 0.6, 0.55]
    index = [(0, 1), (0, 2), (0, 3)]

    def draw(i: int, into: Rows) -> None:
        seq = np.random.SeedSequence(7, spawn_key=(i,))
        draw_calls(_coin, np.array([inputs[i]]), 40_000, seq, "coin", str(i), into)

    develop = _choose_event(0)

    every = {i: Rows(1, 40_000) for i in range(4)}
    for i, rows in every.items():
        draw(i, rows)
    expected = final_round([0, 1, 2], index, every, VALUE_FAMILIES, develop, 400_000, 0.0152)
    held = {i: Rows(1, 40_000) for i in range(4)}
    asked: list[tuple[int, set[int], set[int]]] = []

    def ready(p: int, keep: set[int]) -> None:
        for i in index[p]:
            if held[i].rows.shape[0] == 0:
                draw(i, held[i])
        for i in [i for i in held if held[i].rows.shape[0] and i not in keep | set(index[p])]:
            del held[i]
        asked.append((p, keep, set(held)))

    got = final_round([0, 1, 2], index, held, VALUE_FAMILIES, develop, 400_000, 0.0152, (), ready)
    assert got[0] == expected[0] == 1  # 0.5 against 0.6
    assert [(p, c.value, n) for p, c, n in got[2]] == [(p, c.value, n) for p, c, n in expected[2]]
    # before finalist 0: every input kept (all to come); before 1: the leader's and 2's; before
    # 2: 1's (now best) and its own; then the winner's alone
    assert [(p, keep) for p, keep, _ in asked] == [(0, {0, 1, 2, 3}), (1, {0, 1, 3}), (2, {0, 2}),
                                                   (1, set())]
    assert asked[-1][2] == {0, 2}


def test_the_final_round_compares_the_linear_family_beside_the_showings_families() -> None:
    """raced_families: the last showings' families, and SCREEN_ALSO, in the families' order."""
    tail = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.05, 0.5, 0.5, "coordinate[0]")
    held = attrs.evolve(tail, family="product", label="product")
    families: tuple[Family, ...] = ("linear", "coordinate", "product", "logistic")
    shown = [
        Candidate(0, 0, 100, attrs.evolve(tail, family="logistic"), 0.1, 0.0),  # earlier round
        Candidate(0, 1, 100, tail, 0.1, 0.0, held_event=held, held_value=0.1),
        Candidate(1, 1, 100, tail, 0.1, 0.0),
        Candidate(2, 1, 100, attrs.evolve(tail, family="logistic"), 0.1, 0.0),  # not a finalist
    ]
    assert SCREEN_ALSO == ("linear",)
    assert raced_families([0, 1], shown, families) == ("linear", "coordinate", "product")
    assert raced_families([0, 1], shown, families[1:]) == ("coordinate", "product")
    # no showing counted an event: nothing raced (final_round compares all but boosted trees)
    empty = [Candidate(0, 1, 100, None, 0.0, 0.0), Candidate(1, 1, 100, None, 0.0, 0.0)]
    assert raced_families([0, 1], empty, families) == ()


def test_fresh_calls_put_the_event_that_holds_before_a_chance_tail() -> None:
    """checked_first: a leading tail cut of noise falls behind an event that holds.

    Whatever its development value, the cut of a null coordinate shows nothing on calls that
    did not choose it (ties keep development order); a leader that holds keeps its place.
    """
    rng = np.random.default_rng(5)

    def outputs(shift: float, n: int) -> NDArray[np.float64]:  # coordinate 0 moves, 1 is noise
        return np.column_stack([rng.normal(shift, 1.0, n), rng.normal(0.0, 1.0, n)])

    tail = Choice("coordinate", LinearScore([0.0, 1.0], 0.0), 1, 1.5, 0.3, 0.6, 0.5, "coordinate[1]")
    real = Choice("coordinate", LinearScore([1.0, 0.0], 0.0), 1, 0.0, 0.05, 0.1, 0.5, "coordinate[0]")
    null = Choice("coordinate", LinearScore([0.0, 1.0], 0.0), 1, 0.0, 0.01, 0.02, 0.5, "coordinate[1]")
    sel_a, sel_b = outputs(0.0, 20_000), outputs(0.2, 20_000)
    fresh = [(0, outputs(0.0, 30_000)), (1, outputs(0.2, 30_000)), (0, outputs(0.0, 30_000)),
             (1, outputs(0.2, 30_000))]
    kwargs: dict[str, Any] = {"alpha_per_rate": 0.0128, "delta": 0.0, "target": None}
    found, values = checked_first([tail, real, null], sel_a, sel_b, iter(fresh), 1_000_000, **kwargs)
    assert found == [real, tail, null]  # the two that show nothing keep their development order
    assert values[0] > 0.1 and values[1] == values[2] == 0.0
    assert [c.value for c in found] == [0.05, 0.3, 0.01]  # development values, unchanged
    held, held_values = checked_first([real, tail, null], sel_a, sel_b, iter(fresh), 1_000_000, **kwargs)
    assert held == [real, tail, null] and held_values == values  # the leader holds: kept
    shown = checked_first([null, real, tail], sel_a, sel_b, iter(fresh), 1_000_000, **kwargs)
    assert shown[0] == [real, null, tail] and shown[1][1:] == [0.0, 0.0]
    # only the first CHECKED are counted; the rest follow in development order
    five = [tail, tail, tail, tail, real]
    assert checked_first(five, sel_a, sel_b, iter(fresh), 1_000_000, **kwargs)[0] == five
    # no fresh calls of one input: nothing is valued, nothing moves
    assert checked_first([tail, real], sel_a, sel_b, iter(fresh[:1]), 1_000_000, **kwargs) == (
        [tail, real], [0.0, 0.0]
    )


def test_a_pair_and_its_reverse_race_once() -> None:
    """The first of a pair and its reverse is kept; other pairs keep their order."""
    x, y, z = (("a", np.zeros(1)), ("b", np.ones(1)), ("c", np.full(1, 2.0)))
    assert unordered([(x, y), (y, x), (x, z), (z, x), (y, z)]) == [0, 2, 4]


def _jittered_coin(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """A biased bit plus a little uniform jitter, and a uniform: continuous outputs, a coin's law."""
    return np.column_stack([(rng.random(n) < x[0]) + 1e-3 * rng.random(n), rng.random(n)])


def _coin_finalists() -> tuple[dict[int, Rows], list[tuple[int, tuple[str, ...]]], Any]:
    """Three coins' calls (0.5, 0.52, 0.6) and an event choice that records what it was asked.

    Each record is ``(first b output scaled, families)``: the input b it was asked on and with
    which families.
    """
    inputs = [0.5, 0.52, 0.6]
    held = {i: Rows(2, 20_000) for i in range(3)}
    for i, rows in held.items():
        draw_calls(_jittered_coin, np.array([inputs[i]]), 20_000, np.random.SeedSequence(i), "coin",
                   "x", rows)
    asked: list[tuple[int, tuple[str, ...]]] = []

    def develop(
        a: NDArray[np.float64], b: NDArray[np.float64], fams: Any, reserved: int, alpha: float,
        level: float,
    ) -> list[Choice]:
        asked.append((int(b[0, 0] * 1e6), tuple(fams)))
        return choose_event(a, b, fams, reserved_a=reserved, reserved_b=reserved, alpha_per_rate=alpha,
                            delta=0.0, seed=0, dev_level=level)

    return held, asked, develop


def test_final_round_fits_boosted_trees_for_the_winner_alone() -> None:
    """Finalists are compared on every family but boosted trees; the winner then gets them too."""
    held, asked, develop = _coin_finalists()
    index = [(0, 1), (0, 2)]
    won, found, shown, pending = final_round(
        [0, 1], index, held, VALUE_FAMILIES, develop, 200_000, 0.0152
    )
    assert won == 1 and found is not None and not found[0].settled
    assert [p for p, _, _ in shown] == [1, 0] and shown[0][1].family != "boosted"
    compared = [fams for _, fams in asked]
    assert all("boosted" not in fams and len(fams) == len(VALUE_FAMILIES) - 1 for fams in compared)
    assert len(asked) == 2 and pending == ["boosted"]  # left for the winner
    # choose fits them on the winner's calls (its input b is 0.6's), and ranks them in
    more_asked: list[int] = []
    budget = plan_budget(10_000_000, 2, 3, 0.1, 2)
    found, _, _, extra = choose(
        held[0], held[2], VALUE_FAMILIES, develop, more_asked.append, budget, 10_000_000,
        alpha_per_rate=0.0152, delta=0.0, target=None, found=found, pending=pending,
    )
    assert asked[2][0] == int(held[2].rows[0, 0] * 1e6)
    assert ("boosted" in asked[2][1]) and "boosted" in {c.family for c in found}
    assert (extra > 0) == bool(more_asked)
    values = [c.value - (0.01 if c.family == "boosted" else 0.0) for c in found]
    assert values == sorted(values, reverse=True)


def test_final_round_compares_finalists_with_the_families_they_raced_with() -> None:
    """Given the race's families, the finalists are compared with those alone; the winner gets the rest."""
    held, asked, develop = _coin_finalists()
    index = [(0, 1), (0, 2)]
    won, found, shown, pending = final_round(
        [0, 1], index, held, VALUE_FAMILIES, develop, 200_000, 0.0152, ("linear", "coordinate")
    )
    assert won == 1 and found is not None
    # in family order, whatever order the race's families came in
    assert [fams for _, fams in asked] == [("coordinate", "linear")] * 2
    assert all(c.family in ("coordinate", "linear") for _, c, _ in shown)
    assert {c.family for c in found} <= {"coordinate", "linear"}
    assert pending == [f for f in VALUE_FAMILIES if f not in ("coordinate", "linear")]


def test_a_lone_finalist_of_a_race_is_developed_with_its_showings_families_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One finalist with raced families: those chosen on its calls, the rest left to worth_fitting.

    Where its inputs hold the calls worth_fitting judges families on (here 10,000 instead of
    SUBSAMPLE_FROM, so that the coins stay small).
    """
    import certify.blackbox._development as development

    monkeypatch.setattr(development, "SUBSAMPLE_FROM", 10_000)
    held, asked, develop = _coin_finalists()
    index = [(0, 1), (0, 2)]
    won, found, shown, pending = final_round(
        [1], index, held, VALUE_FAMILIES, develop, 200_000, 0.0152, ("linear", "coordinate")
    )
    assert won == 1 and found is not None and shown == []  # nothing compared: no finalists shown
    assert asked == [(int(held[2].rows[0, 0] * 1e6), ("coordinate", "linear"))]
    assert {c.family for c in found} <= {"coordinate", "linear"}
    assert pending == [f for f in VALUE_FAMILIES if f not in ("coordinate", "linear")]
    # without raced families (no race: one candidate pair) it is left to choose, every family
    assert final_round([1], index, held, VALUE_FAMILIES, develop, 200_000, 0.0152) == (1, None, [], [])
    # and so with fewer calls than worth_fitting judges families on
    few = {i: Rows(2, 20_000) for i in range(3)}
    for i in few:
        few[i].append(held[i].rows[:1_000])
    assert final_round([1], index, few, VALUE_FAMILIES, develop, 200_000, 0.0152, ("linear",)) == (
        1, None, [], []
    )
    assert len(asked) == 1


def test_extension_grows_where_the_reserve_hardly_notices() -> None:
    """Rates 0.5 against 0.3 with 9e5 reserved calls: cheap to grow; 0.01 against 0.002 at 2e4: not."""
    event = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.0, 0.0, 0.5, "coordinate[0]")
    rng = np.random.default_rng(0)
    for (pa, pb), calls, grows in (((0.3, 0.5), 2_000_000, True), ((0.002, 0.01), 40_000, False)):
        budget = plan_budget(calls, 1, 2, 0.1, 1)
        dev_a = (rng.random((2 * budget.final, 1)) < pa).astype(np.float64)
        dev_b = (rng.random((2 * budget.final, 1)) < pb).astype(np.float64)
        extra = extension(event, dev_a, dev_b, budget, calls, 1, alpha_per_rate=0.0152, delta=0.0,
                          target=None)
        assert (extra > 0) is grows
        assert budget.development_calls + 2 * extra <= 0.25 * calls


def test_extension_judges_a_value_one_input_never_produced_by_its_reserve() -> None:
    """Input a never outputs 1, input b half the time: the bound rests on a's reserve size.

    The event is a histogram of two values, each counted often (settled). At its plug-in rate
    (a zero count read as 0.69 over the development rows) taking calls from the reserve seems
    nearly free, and the same event, not settled, is grown; settled, the zero count is read as
    zero, and what growth remains costs at most EXTEND_COST of the expected bound.
    """
    import certify.blackbox._development as development
    from certify.blackbox.events import expected_bound

    rng = np.random.default_rng(2)
    calls = 2_000_000
    budget = plan_budget(calls, 1, 2, 0.1, 1)
    dev_a = np.zeros((2 * budget.final, 1))
    dev_b = (rng.random((2 * budget.final, 1)) < 0.5).astype(np.float64)
    event = choose_event(dev_a, dev_b, VALUE_FAMILIES, reserved_a=budget.reserved,
                         reserved_b=budget.reserved, alpha_per_rate=0.0152, delta=0.0, seed=0)[0]
    assert event.settled

    def grown(choice: Choice) -> int:
        return extension(choice, dev_a, dev_b, budget, calls, 1, alpha_per_rate=0.0152, delta=0.0,
                         target=None)

    judged = grown(event)
    assert grown(attrs.evolve(event, settled=False)) > judged
    half = budget.final
    at_plan, after = expected_bound(
        event, dev_a[half:], dev_b[half:],
        [(budget.reserved, budget.reserved), (budget.reserved - judged, budget.reserved - judged)],
        alpha_per_rate=0.0152, delta=0.0, zero_counts=True,
    )
    assert at_plan - after <= development.EXTEND_COST * at_plan


def test_rows_hold_every_round_in_order_and_grow_past_their_capacity() -> None:
    """Calls added in three parts read back as one array in order, past the first allocation."""
    rng = np.random.default_rng(0)
    parts = [rng.random((n, 3)) for n in (5, 7, 20)]
    rows = Rows(3, 8)
    first = None
    for part in parts:
        rows.append(part)
        first = rows.rows if first is None else first
    np.testing.assert_array_equal(rows.rows, np.vstack(parts))
    np.testing.assert_array_equal(first, parts[0])  # a view taken earlier keeps its calls


def test_draw_calls_are_the_same_whatever_the_chunks_they_are_held_in() -> None:
    """The same seed gives the same calls in a small buffer (grown) and a large one."""
    small, large = Rows(1, 10), Rows(1, 200_000)
    for rows in (small, large):
        draw_calls(_coin, np.array([0.3]), 150_000, np.random.SeedSequence(5), "coin", "0.3", rows)
    np.testing.assert_array_equal(small.rows, large.rows)
    assert small.rows.shape == (150_000, 1)


def test_final_round_takes_the_finalist_whose_event_is_best_on_all_its_calls() -> None:
    """The race's leader (bits 0.5 against 0.52) loses the final round to 0.5 against 0.6."""
    inputs = [0.5, 0.52, 0.6]
    held = {i: Rows(1, 40_000) for i in range(3)}
    for i, rows in held.items():
        draw_calls(_coin, np.array([inputs[i]]), 40_000, np.random.SeedSequence(i), "coin", "x", rows)

    develop = _choose_event(0)

    index = [(0, 1), (0, 2)]
    won, found, shown, _ = final_round([0, 1], index, held, VALUE_FAMILIES, develop, 400_000, 0.0152)
    assert won == 1 and found is not None
    assert [p for p, _, _ in shown] == [1, 0]
    assert shown[0][1].value == found[0].value > shown[1][1].value
    assert all(n == 40_000 for _, _, n in shown)
    # one finalist: nothing to compare, its events are chosen later
    assert final_round([0], index, held, VALUE_FAMILIES, develop, 400_000, 0.0152) == (0, None, [], [])


def _showing(pair: int, r: int, settled: bool | None) -> Candidate:
    """A pair's showing in round ``r``: a settled histogram, another event, or none."""
    choice = None if settled is None else Choice(
        "histogram" if settled else "coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.1, 0.1, 0.5,
        "event", settled=settled,
    )
    return Candidate(pair, r, 1_000, choice, 0.1, 0.1)


def test_the_final_round_is_skipped_only_where_every_finalist_last_showed_a_settled_histogram() -> None:
    """Each finalist's latest showing counts; one finalist has no final round to skip."""
    shown = [_showing(0, 0, False), _showing(1, 0, False), _showing(2, 0, True),
             _showing(0, 1, True), _showing(1, 1, True)]
    assert all_settled([0, 1], shown)
    assert not all_settled([0], shown)
    assert not all_settled([0, 2], [*shown, _showing(2, 1, False)])
    assert not all_settled([0, 1], [*shown, _showing(1, 2, None)])
    assert not all_settled([0, 3], shown)


@pytest.mark.parametrize("jitter", [False, True])
def test_mirror_pairs_of_a_discrete_output_are_not_sent_to_a_final_round(jitter: bool) -> None:
    """Bits at 0.5 against 0.6 and 0.4: one pair goes on; with jittered bits, both do."""
    mechanism = _jittered_coin if jitter else _coin
    x, up, down = (("0.5", np.array([0.5])), ("0.6", np.array([0.6])), ("0.4", np.array([0.4])))
    out = develop(
        mechanism, [(x, up), (x, down)], calls=400_000, seed=0, width=2 if jitter else 1,
        name="coin", families=VALUE_FAMILIES, dev_fraction=0.1, alpha_per_rate=0.0152, delta=0.0,
        target=None, note=lambda r, rounds, what: None,
    )
    last = {c.pair: c for c in out.shown}
    assert all(c.choice is not None and c.choice.settled != jitter for c in last.values())
    assert len(out.finalists) == (2 if jitter else 0)


def test_after_a_race_of_one_round_settled_finalists_still_get_a_final_round() -> None:
    """The same mirror bits at 3e6 calls: the race is one round, and both pairs are compared."""
    x, up, down = (("0.5", np.array([0.5])), ("0.6", np.array([0.6])), ("0.4", np.array([0.4])))
    calls = 3_000_000
    assert plan_budget(calls, 2, 3, 0.1, 1).one_round
    out = develop(
        _coin, [(x, up), (x, down)], calls=calls, seed=0, width=1, name="coin",
        families=VALUE_FAMILIES, dev_fraction=0.1, alpha_per_rate=0.0152, delta=0.0,
        target=None, note=lambda r, rounds, what: None,
    )
    last = {c.pair: c for c in out.shown}
    assert len(last) == 2 and all(c.choice is not None and c.choice.settled for c in last.values())
    assert {p for p, _, _ in out.finalists} == {0, 1}


def test_growth_counts_every_development_call_already_spent() -> None:
    """A final round's loser spends development calls the plan did not count: growth leaves them.

    Rates 0.5 against 0.3 at 2e6 calls are cheap to grow to the share; with a loser's round of
    ``budget.final`` calls spent besides the plan, development still ends within its share.
    """
    import certify.blackbox._development as development

    event = Choice("coordinate", LinearScore([1.0], 0.0), 1, 0.5, 0.0, 0.0, 0.5, "coordinate[0]")
    rng = np.random.default_rng(0)
    calls = 2_000_000
    budget = plan_budget(calls, 1, 2, 0.1, 1)
    dev_a = (rng.random((2 * budget.final, 1)) < 0.3).astype(np.float64)
    dev_b = (rng.random((2 * budget.final, 1)) < 0.5).astype(np.float64)
    for spent in (budget.development_calls, budget.development_calls + budget.final):
        extra = extension(event, dev_a, dev_b, budget, calls, 1, alpha_per_rate=0.0152, delta=0.0,
                          target=None, spent=spent)
        assert spent + 2 * extra == int(development.EXTEND_MAX_SHARE * calls)  # grown to the share


def _sharp_laplace(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``x[0]`` plus Laplace noise of scale 0.1: neighbours 1 apart are 10-DP, their tails far apart."""
    return x[0] + rng.laplace(0.0, 0.1, n)


def test_development_with_the_final_rounds_loser_stays_within_its_share() -> None:
    """Mirror pairs of a sharp Laplace law both go to the final round; the chosen one grows.

    The loser's final round is development too: counted, development stays within
    EXTEND_MAX_SHARE of the budget before the leading events are counted on CHECK_SHARE of
    the reserve left.
    """
    import certify.blackbox._development as development

    x, up, down = (("1", np.array([1.0])), ("2", np.array([2.0])), ("0", np.array([0.0])))
    calls = 1_000_000
    out = develop(
        _sharp_laplace, [(x, up), (x, down)], calls=calls, seed=0, width=1, name="sharp",
        families=VALUE_FAMILIES, dev_fraction=0.1, alpha_per_rate=0.0152, delta=0.0,
        target=None, note=lambda r, rounds, what: None,
    )
    assert len(out.finalists) == 2
    assert out.per_round[-1] > plan_budget(calls, 2, 3, 0.1, 1).final  # grown
    grown = out.development_calls - 2 * out.check_calls
    assert grown <= development.EXTEND_MAX_SHARE * calls
    assert out.check_calls == int(development.CHECK_SHARE * ((calls - grown) // 2)) > 0


def test_showings_are_ranked_in_the_unit_of_a_curve_target() -> None:
    """A tail cut has the larger log ratio, a middle cut the larger mu: a mu target ranks by mu.

    Rates 0.001 against 0.99 (log ratio log 10 = 2.30, mu 0.76) and 0.3 against 0.3 (log ratio
    0.85, mu 1.05), each counted on 100,000 calls per input.
    """
    tail, middle = (100, 100_000, 99_000, 100_000), (30_000, 100_000, 30_000, 100_000)
    plain = [_value_interval(*c, 0.0, 0.023, None) for c in (tail, middle)]
    assert plain[0][0] > plain[1][1]  # by log ratio, the tail is clearly ahead
    mu = [_value_interval(*c, 0.0, 0.023, Target("mu")) for c in (tail, middle)]
    assert mu[1][0] > mu[0][1]  # by mu, the middle is
    fp, n0, fn, n1 = middle
    for value, rate in zip(mu[1], (clopper_pearson_upper, clopper_pearson_lower), strict=True):
        expected = gdp_mu_lower(np.array([rate(fp, n0, 0.023)]), np.array([rate(fn, n1, 0.023)]))
        assert value == pytest.approx(float(expected[0]), rel=1e-12)
    # where no rate pair is certifiable, the log ratio (not floored) still ranks
    assert _value_interval(6_000, 10_000, 6_000, 10_000, 0.0, 0.023, Target("mu")) == (
        _value_interval(6_000, 10_000, 6_000, 10_000, 0.0, 0.023, None)
    )


def _sharp_plane(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``x`` plus Laplace noise of scale 0.1 on each of two coordinates."""
    return np.column_stack([x[0] + rng.laplace(0.0, 0.1, n), x[1] + rng.laplace(0.0, 0.1, n)])


def test_three_pairs_the_race_cannot_tell_apart_each_get_a_final_round() -> None:
    """Four neighbours one step away along each axis: alike, so three finalists are compared.

    Every finalist's round counts as development: the reserve is what the budget leaves.
    """
    import certify.blackbox._development as development

    base = ("[0,0]", np.array([0.0, 0.0]))
    steps = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]
    pairs = [(base, (f"[{a:g},{b:g}]", np.array([a, b]))) for a, b in steps]
    calls = 400_000
    out = develop(
        _sharp_plane, pairs, calls=calls, seed=0, width=2, name="plane", families=VALUE_FAMILIES,
        dev_fraction=0.1, alpha_per_rate=0.0152, delta=0.0, target=None,
        note=lambda r, rounds, what: None,
    )
    assert development.FINALISTS == 3 and len(out.finalists) == 3
    assert out.pair == out.finalists[0][0] and out.pair in {p for p, _, _ in out.finalists}
    budget = plan_budget(calls, 4, 5, 0.1, 2)
    assert out.per_round[:-1] == [n // 5 for n in budget.screening]  # five inputs every round
    # the finalists' four inputs each got the final round; the winner's two their growth
    grown = out.per_round[-1] - budget.final
    assert out.development_calls == (
        sum(budget.screening) + 4 * budget.final + 2 * grown + 2 * out.check_calls
    )
    assert sum(out.reserved) == 2 * ((calls - out.development_calls) // 2)
    assert out.found[0].value > 5.0  # 10-DP along the chosen axis
    # the race never counted a family it leaves out, nor product scores on its few calls (they
    # showed here when they raced); the chosen pair still gets every family
    raced = {c.choice.family for c in out.shown if c.choice is not None}
    assert not raced & {"product", *NOT_RACED}
    assert {"product", "logistic"} <= {c.family for c in out.found}


def test_after_a_race_of_one_round_the_finalists_get_the_leaders_grown_round() -> None:
    """Three inputs at 3e6 calls: one round of ONE_ROUND_CALLS each, then both alike pairs compared.

    Each finalist's inputs get the same final round, at least the plan's; every call drawn
    counts as development, the reserve is what the budget leaves.
    """
    base = ("[0,0]", np.array([0.0, 0.0]))
    pairs = [(base, ("[0.5,0]", np.array([0.5, 0.0]))), (base, ("[0,0.5]", np.array([0.0, 0.5])))]
    calls = 3_000_000
    plan = plan_budget(calls, 2, 3, 0.1, 2)
    assert plan.one_round
    out = develop(
        _sharp_plane, pairs, calls=calls, seed=0, width=2, name="plane", families=VALUE_FAMILIES,
        dev_fraction=0.1, alpha_per_rate=0.0152, delta=0.0, target=None,
        note=lambda r, rounds, what: None,
    )
    assert out.per_round[0] == ONE_ROUND_CALLS
    assert {p for p, _, _ in out.finalists} == {0, 1}  # alike: both compared
    assert out.pair == out.finalists[0][0] and out.finalists[0][2] == out.finalists[1][2]
    final = out.finalists[0][2] - ONE_ROUND_CALLS
    assert final >= plan.final
    grown = out.per_round[-1] - final
    assert out.development_calls == (
        3 * ONE_ROUND_CALLS + 3 * final + 2 * grown + 2 * out.check_calls
    )
    assert sum(out.reserved) == 2 * ((calls - out.development_calls) // 2)


_Asked = list[tuple[NDArray[np.float64], NDArray[np.float64], tuple[str, ...]]]


def _valued(values: dict[str, float], asked: _Asked) -> Any:
    """An event choice that records its calls and families and values each family as ``values``."""

    def develop(
        a: NDArray[np.float64], b: NDArray[np.float64], fams: Any, reserved: int, alpha: float,
        level: float,
    ) -> list[Choice]:
        asked.append((a, b, tuple(fams)))
        found = [Choice(f, LinearScore([1.0], 0.0), 1, 0.0, values[f], values[f], 0.5, f) for f in fams]
        return sorted(found, key=lambda c: -c.value)

    return develop


def _numbered(n: int, offset: float) -> NDArray[np.float64]:
    """``n`` one-coordinate calls numbered ``offset``, ``offset + 1``, ...: rows say where they were taken."""
    return (offset + np.arange(n, dtype=np.float64)).reshape(-1, 1)


def test_finalists_are_picked_by_their_high_ends_only_where_the_final_round_doubles_their_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plane's four alike pairs: at 4e5 calls the final round adds fewer calls than the race."""
    import certify.blackbox._development as development

    base = ("[0,0]", np.array([0.0, 0.0]))
    steps = [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]
    pairs = [(base, (f"[{a:g},{b:g}]", np.array([a, b]))) for a, b in steps]
    asked: list[bool] = []

    def recorded(
        alive: Sequence[int], shown: Sequence[Candidate], *, optimistic: bool, one_round: bool = False
    ) -> list[int]:
        assert not one_round
        asked.append(optimistic)
        return pick_finalists(alive, shown, optimistic=optimistic)

    monkeypatch.setattr(development, "pick_finalists", recorded)
    for calls, optimistic in ((400_000, False), (1_000_000, True)):
        asked.clear()
        out = develop(
            _sharp_plane, pairs, calls=calls, seed=0, width=2, name="plane",
            families=VALUE_FAMILIES, dev_fraction=0.1, alpha_per_rate=0.0152, delta=0.0,
            target=None, note=lambda r, rounds, what: None,
        )
        race_calls = sum(out.per_round[:-1])  # each finalist input's calls before the final round
        assert asked == [optimistic] == [plan_budget(calls, 4, 5, 0.1, 2).final > race_calls]


def test_pending_families_are_fitted_on_all_calls_only_where_a_subsample_shows_them_worth_it() -> None:
    """On SUBSAMPLE_CALLS calls per input, the first of each half, pending families face the leader's."""
    values = {"linear": 0.50, "logistic": 0.55, "boosted": 0.49, "binned": 0.0, "product": 0.1}
    asked: _Asked = []
    n = SUBSAMPLE_FROM
    dev_a, dev_b = _numbered(n, 0.0), _numbered(n + 10, 1e7)

    def leader(family: str, value: float) -> Choice:
        return Choice(family, LinearScore([1.0], 0.0), 1, 0.0, value, value, 0.5, family)

    pending: list[Family] = ["logistic", "boosted", "binned", "product"]
    develop_ = _valued(values, asked)
    # linear keeps 0.50 of 0.8 (over SUBSAMPLE_HOLDS) there: a fair judge; product is not judged
    assert worth_fitting(dev_a, dev_b, pending, leader("linear", 0.8), develop_, 200_000,
                         0.0152) == ["logistic", "product"]
    (a, b, fams), = asked
    assert fams == ("logistic", "boosted", "binned", "linear") and "product" in NOT_SCREENED
    m = SUBSAMPLE_CALLS // 2
    assert a[:, 0].tolist() == [*range(m), *range(n // 2, n // 2 + m)]
    assert (b[:, 0] - 1e7).tolist() == [*range(m), *range((n + 10) // 2, (n + 10) // 2 + m)]
    # a leader that loses over half its value on the subsample, or shows nothing there, tells
    # nothing: every pending family is fitted but boosted trees, fitted only where it says so
    assert SUBSAMPLE_HOLDS * 1.2 > values["linear"] >= SUBSAMPLE_HOLDS * 0.8
    for worse in (leader("linear", 1.2), leader("binned", 0.3)):
        assert worth_fitting(dev_a, dev_b, pending, worse, develop_, 200_000, 0.0152) == [
            "logistic", "binned", "product"
        ]
    # no leader, or one input short of SUBSAMPLE_FROM calls: no subsample at all
    asked.clear()
    assert worth_fitting(dev_a, dev_b, pending, None, develop_, 200_000, 0.0152) == pending
    assert worth_fitting(dev_a[:-2], dev_b, pending, leader("linear", 0.8), develop_, 200_000,
                         0.0152) == pending
    assert not asked


def test_the_chosen_pair_fits_only_pending_families_a_subsample_finds_worth_it() -> None:
    """The chosen pair's pending families face its best family but product scores."""
    values = {"product": 0.9, "linear": 0.50, "logistic": 0.55, "boosted": 0.49}
    asked: _Asked = []
    n, calls = SUBSAMPLE_FROM, 10_000_000
    rows_a, rows_b = Rows(1, n), Rows(1, n)
    rows_a.append(_numbered(n, 0.0))
    rows_b.append(_numbered(n, 1e7))
    develop_ = _valued(values, asked)
    found = develop_(rows_a.rows, rows_b.rows, ["product", "linear"], 0, 0.0, 0.0)
    budget = plan_budget(calls, 1, 2, 0.1, 1)
    found, _, _, extra = choose(
        rows_a, rows_b, ("linear", "logistic", "boosted", "product"), develop_, lambda k: None,
        budget, calls, alpha_per_rate=0.0152, delta=0.0, target=None, found=found,
        spent=calls // 4, pending=["logistic", "boosted"],
    )
    assert extra == 0  # development already holds its share: the round does not grow
    # the subsample's bar is linear's: product scores are no judge (NOT_SCREENED)
    assert [fams for _, _, fams in asked[1:]] == [("logistic", "boosted", "linear"), ("logistic",)]
    assert asked[2][0].shape[0] == n
    assert [c.family for c in found] == ["product", "logistic", "linear"]


def test_boosted_trees_are_not_fitted_where_the_coordinates_look_independent() -> None:
    """Independent coordinates or steps: the product family has the log ratio's form, trees are out."""
    values = {"linear": 0.50, "logistic": 0.55, "boosted": 0.60, "blocks": 0.7, "product": 0.1}
    rng = np.random.default_rng(0)
    n = SUBSAMPLE_FROM
    independent = [rng.normal(size=(n, 2)) for _ in range(2)]
    common = rng.normal(size=(n, 1))
    dependent = [common + 0.1 * rng.normal(size=(n, 2)) for _ in range(2)]
    # running sums of independent noise: dependent coordinates, independent differences
    sums = [np.cumsum(rng.laplace(size=(n, 3)), axis=1) + shift for shift in (0.0, 0.3)]
    leader = Choice("linear", LinearScore([1.0, 0.0], 0.0), 1, 0.0, 0.8, 0.8, 0.5, "linear")
    pending: list[Family] = ["logistic", "boosted", "blocks", "product"]
    every: tuple[Family, ...] = ("linear", "logistic", "boosted", "blocks", "product")
    for (dev_a, dev_b), families, judged in (
        (independent, every, {"logistic"}),
        (independent, every[:-1], {"logistic", "boosted", "blocks"}),  # no product score
        (dependent, every, {"logistic", "boosted", "blocks"}),
        # blocks of the coordinates are still judged: they are dependent
        (sums, every, {"logistic", "blocks"}),
        (sums, every[:-1], {"logistic", "boosted", "blocks"}),
    ):
        asked: _Asked = []
        kept = worth_fitting(
            dev_a, dev_b, pending, leader, _valued(values, asked), 200_000, 0.0152, families
        )
        (_, _, fams), = asked
        assert set(fams) - {"linear"} == judged  # and the leader's family
        assert kept == [f for f in pending if f in judged or f == "product"]


def test_a_family_that_finds_nothing_in_the_first_round_is_not_fitted_again_in_the_race() -> None:
    """Biased bits: families that do not apply to one binary coordinate are asked once."""
    pairs = [(0.5, 0.52), (0.5, 0.51), (0.5, 0.53), (0.5, 0.515)]
    inputs = sorted({p for pair in pairs for p in pair})
    index = [(inputs.index(a), inputs.index(b)) for a, b in pairs]
    budget = plan_budget(400_000, len(pairs), 5, 0.1, 1)

    def draw(i: int, r: int, n: int, into: Rows) -> None:
        seq = np.random.SeedSequence(0, spawn_key=(1, i, r))
        draw_calls(_coin, np.array([inputs[i]]), n, seq, "coin", str(inputs[i]), into)

    asked: list[tuple[tuple[str, ...], set[str]]] = []

    def develop(
        a: NDArray[np.float64], b: NDArray[np.float64], fams: Any, reserved: int, alpha: float,
        level: float,
    ) -> list[Choice]:
        found = choose_event(a, b, fams, reserved_a=reserved, reserved_b=reserved,
                             alpha_per_rate=alpha, delta=0.0, seed=0, dev_level=level)
        asked.append((tuple(fams), {c.family for c in found}))
        return found

    cheap: tuple[Family, ...] = tuple(f for f in VALUE_FAMILIES if f not in NOT_RACED)
    raced = race(
        index, budget, draw, develop, cheap, alpha_per_rate=0.0152, delta=0.0, target=None,
        note=lambda r, what: None, width=1, capacity=1_000,
    )
    first = 2 * len(pairs)  # two halves of each pair's showing
    assert len(raced.per_input) >= 2 and len(asked) > first
    tried = {f for fams, _ in asked[:first] for f in fams}
    found = {f for _, got in asked[:first] for f in got}
    barren = tried - found
    assert barren  # some families find nothing on one binary coordinate (binned, linear, ...)
    assert all(set(fams) == tried for fams, _ in asked[:first])
    assert all(not barren & set(fams) and set(fams) & found for fams, _ in asked[first:])
