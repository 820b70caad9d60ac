"""Tests of the blocks family: scores of independent blocks of output coordinates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

import certify as cf
from certify.blackbox._fits import _independent_blocks, independent_coordinates
from certify.blackbox.events import choose_event
from certify.errors import DataError, RecordError
from certify.plan import rate_level
from certify.protocol.scores import BlockScore, HistogramScore, LinearScore, score_model_from_json


def _flag_and_value(rng: np.random.Generator, n: int, p: float) -> NDArray[np.float64]:
    """A flag set with probability ``p`` and a symmetric noisy value released only when it is set.

    The value is uncorrelated with the flag (its mean is 0 either way), yet depends on it: it
    is exactly 0 whenever the flag is not set.
    """
    flag = rng.random(n) < p
    value = np.where(flag, rng.laplace(0.0, 1.0, n), 0.0)
    return np.column_stack([flag.astype(np.float64), value])


def _side_by_side(rng: np.random.Generator, n: int, shift: float) -> NDArray[np.float64]:
    """A flag-and-value block, a constant, and two dependent bits: three mechanisms side by side."""
    first = _flag_and_value(rng, n, 0.3 + shift)
    u = rng.random(n) < 0.5 + shift
    v = np.where(rng.random(n) < 0.8, u, ~u)  # v copies u four times in five
    return np.column_stack([first, np.full(n, 7.0), u, v]).astype(np.float64)


def test_blocks_are_the_dependent_coordinates_and_a_constant_belongs_to_none() -> None:
    """A value that is 0 unless its flag is set is linked to the flag, though uncorrelated with it.

    Its correlation with the flag is 0 in expectation, so a raw-value correlation would split
    them; the indicator of its atom at 0 links them. The two copied bits correlate at 0.6; the
    two blocks are independent (their correlations are about 1 / sqrt(n) = 0.007, under the
    5-standard-error threshold of 0.035 at 20,000 calls).
    """
    rng = np.random.default_rng(0)
    a, b = _side_by_side(rng, 20_000, 0.0), _side_by_side(rng, 20_000, 0.1)
    assert [c.tolist() for c in _independent_blocks(a, b)] == [[0, 1], [3, 4]]
    # a coordinate constant within each input but not between them is a block of its own
    a = np.column_stack([a, np.zeros(a.shape[0])])
    b = np.column_stack([b, np.ones(b.shape[0])])
    assert [c.tolist() for c in _independent_blocks(a, b)] == [[0, 1], [3, 4], [5]]


def test_independent_coordinates_leave_the_blocks_family_out() -> None:
    """Every coordinate its own block: the product family's score, so no blocks event."""
    rng = np.random.default_rng(1)
    a = rng.laplace(0.0, 1.0, (4000, 4))
    b = rng.laplace(0.0, 1.0, (4000, 4)) + 0.5
    assert choose_event(
        a, b, ["blocks"], reserved_a=40_000, reserved_b=40_000,
        alpha_per_rate=rate_level(0.03), delta=0.0, seed=0,
    ) == []


def test_independent_coordinates_is_every_block_of_one_coordinate() -> None:
    """The early-stopping test agrees with the blocks it summarizes, a link under either input."""
    rng = np.random.default_rng(2)
    n = 3000
    free = rng.laplace(size=(n, 3))
    linked = free.copy()
    linked[:, 2] = linked[:, 0] + 0.3 * rng.laplace(size=n)
    spread = free.copy()  # dependent in spread only: the second's scale is the first's size
    spread[:, 1] = np.abs(spread[:, 0]) * rng.normal(size=n)
    constant = np.hstack([free[:, :1], np.ones((n, 1))])
    cases = [
        (free, free + 0.5, True), (free, linked, False), (linked, free, False),
        (free, spread, False), (constant, constant + 1.0, True), (free[:, :1], free[:, :1], False),
    ]
    for a, b, expected in cases:
        blocks = _independent_blocks(a, b)
        assert independent_coordinates(a, b) == expected
        assert expected == (a.shape[1] >= 2 and all(block.size == 1 for block in blocks))


def _two_block_law(shift: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Cells and probabilities of one block: two coordinates in {0..3}, the second near the first."""
    first = np.arange(4.0)
    p_first = np.exp(shift * first)
    p_first /= p_first.sum()
    cells = np.array([(i, j) for i in range(4) for j in range(4)], dtype=np.float64)
    p_second = np.where(cells[:, 0] == cells[:, 1], 0.7, 0.1)
    return cells, p_first[cells[:, 0].astype(int)] * p_second


def _draw_blocks(rng: np.random.Generator, n: int, shift: float) -> NDArray[np.float64]:
    """Two independent blocks of the law above (the second with twice the shift)."""
    parts = []
    for s in (shift, 2 * shift):
        cells, p = _two_block_law(s)
        parts.append(cells[rng.choice(16, size=n, p=p)])
    return np.hstack(parts)


def _exact_log_ratio(rows: NDArray[np.float64], shift: float) -> NDArray[np.float64]:
    """The log ratio log p_b(y) / p_a(y) of the two-block law (input a: no shift; input b: ``shift``)."""
    out = np.zeros(rows.shape[0])
    for k, s in enumerate((shift, 2 * shift)):
        _, p_b = _two_block_law(s)
        _, p_a = _two_block_law(0.0)
        index = (rows[:, 2 * k] * 4 + rows[:, 2 * k + 1]).astype(int)
        out += np.log(p_b[index] / p_a[index])
    return out


def test_the_block_score_is_the_sum_of_the_blocks_log_ratios() -> None:
    """Each block's histogram estimates its log ratio; the stored score adds them.

    The two coordinates of a block are strongly dependent, so a product of per-coordinate
    ratios is wrong by up to 0.36 and 0.64 in the two blocks here; the block score must match
    the exact log ratio of all 256 outputs. The rarest of a block's 16 cells (probability about
    0.025) gets about 1,000 calls per input in each fitted half, so its log ratio has a
    standard error near
    sqrt(2 / 1000) = 0.045, 0.032 averaged over the two fits, and a sum of two blocks' about
    0.045 at most: the mean absolute error over 256 outputs is under 0.035 in expectation, and
    0.2 is over four standard errors of the largest.
    """
    rng = np.random.default_rng(2)
    shift = 0.4
    dev_a, dev_b = _draw_blocks(rng, 80_000, 0.0), _draw_blocks(rng, 80_000, shift)
    (choice,) = choose_event(
        dev_a, dev_b, ["blocks"], reserved_a=100_000, reserved_b=100_000,
        alpha_per_rate=rate_level(0.03), delta=0.0, seed=0,
    )
    assert choice.label == "blocks (2 histogram, 2 histogram)"
    model = choice.model
    assert isinstance(model, BlockScore)
    grid = np.array(np.meshgrid(*[np.arange(4.0)] * 4, indexing="ij")).reshape(4, -1).T
    error = model.score(grid) - _exact_log_ratio(grid, shift)
    assert np.mean(np.abs(error)) < 0.06
    assert np.max(np.abs(error)) < 0.2
    assert choice.value > 0.0


def test_block_scores_round_trip_and_refuse_malformed_records() -> None:
    """A block score rebuilds from its JSON to the same scores; bad entries get RecordError."""
    hist = HistogramScore([[0.0], [1.0]], [-0.5, 0.5], 0.0)
    model = BlockScore([[0, 2], [1]], [0.5, 2.0], [LinearScore([1.0, -1.0], 0.25), hist], 3)
    rows = np.array([[1.0, 1.0, 3.0], [0.0, 0.0, 0.0], [2.0, 5.0, -1.0]])
    expected = 0.5 * (rows[:, 0] - rows[:, 2] + 0.25) + 2.0 * np.where(rows[:, 1] == 1.0, 0.5, 0.0)
    expected[1] += 2.0 * -0.5
    assert np.allclose(model.score(rows), expected)
    rebuilt = score_model_from_json(model.to_json())
    assert rebuilt == model
    assert np.array_equal(rebuilt.score(rows), model.score(rows))
    with pytest.raises(DataError, match="dimension 3"):
        model.score(rows[:, :2])
    bad: list[dict[str, Any]] = [
        {**model.to_json(), "columns": [[0, 0], [1]]},
        {**model.to_json(), "columns": [[0, 3], [1]]},
        {**model.to_json(), "columns": [[0, 2], []]},
        {**model.to_json(), "columns": [[0, 2], [True]]},
        {**model.to_json(), "columns": [[0], [1]]},
        {**model.to_json(), "weights": [0.5]},
        {**model.to_json(), "weights": [0.5, float("nan")]},
        {**model.to_json(), "models": [{"kind": "laplace", "center_a": [0.0], "center_b": [1.0],
                                        "scale": [1.0]}, hist.to_json()]},
    ]
    for entry in bad:
        with pytest.raises(RecordError):
            score_model_from_json(entry)


def side_by_side(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Two mechanisms on independent noise: a noisy flag-and-value pair and two copied bits."""
    return _side_by_side(rng, n, 0.1 * float(x[0]))


def test_an_audit_with_the_blocks_family_stores_and_certifies_its_block_score(
    ledger: cf.Ledger, seed: int
) -> None:
    """End to end: the blocks event is chosen, sealed as data, and certifies a valid bound.

    The inputs shift the flag's rate from 0.3 to 0.4 and the first bit's from 0.5 to 0.6;
    the copy adds nothing given the bit, so the exact epsilon of the pair is the largest log
    ratio, ln(0.4 / 0.3) + ln(0.6 / 0.5) = 0.470 (an event can only certify less).
    """
    audit = cf.audit_mechanism(
        side_by_side, 0.0, 1.0, calls=200_000, tests=["blocks"], ledger=ledger, seed=seed,
        progress=False,
    )
    assert audit.chosen.startswith("blocks (")
    rebuilt = cf.FixedTest.from_json(audit.record.content["tests"][0])
    assert isinstance(rebuilt.model, BlockScore)
    assert 0.0 < audit.certificate.epsilon_lower < 0.5
