"""The families that read the floating-point representation of outputs: cells, scores, audits."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

import certify as cf
from certify.blackbox._float_fits import float_fitted
from certify.blackbox.events import FAMILIES, VALUE_FAMILIES, choose_event, resolve_families
from certify.errors import DataError, RecordError
from certify.plan import rate_level
from certify.protocol.float_scores import BitsScore, bits_cells
from certify.protocol.scores import score_model_from_json


def textbook(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Laplace noise of scale 10 added to the input on doubles (numpy's inverse-CDF sampler)."""
    return x[0] + rng.laplace(0.0, 10.0, size=n)


def snapped(x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """The same noise rounded to the grid 2**-32: adding it to an integer is exact."""
    return x[0] + np.round(rng.laplace(0.0, 10.0, size=n) * 2.0**32) / 2.0**32


def test_grain_cells_count_the_trailing_zeros_of_the_significand() -> None:
    """0.375 = 1.1b x 2^-2 has 51 trailing zeros, 1.0 has 52, 0 gets 53; sign and exponent apart."""
    y = np.array([0.375, 1.0, 0.0, -0.0, -0.375, 1.0 + 2.0**-52, 5e-324])
    cells = bits_cells(y, "grain")
    sign, exponent, low = cells >> 17, (cells >> 6) & 0x7FF, cells & 63
    assert low.tolist() == [51, 52, 53, 53, 51, 0, 0]
    assert exponent.tolist() == [1021, 1023, 0, 0, 1021, 1023, 0]
    assert sign.tolist() == [0, 0, 0, 0, 1, 0, 0]


def test_mantissa_cells_hold_the_lowest_four_bits() -> None:
    """1 + 2^-52 ends in 0001, 1 + 15 * 2^-52 in 1111, 1 + 16 * 2^-52 in 0000."""
    y = 1.0 + np.array([1.0, 15.0, 16.0]) * 2.0**-52
    assert (bits_cells(y, "mantissa") & 63).tolist() == [1, 15, 0]


def test_bits_score_round_trips_and_survives_pickle() -> None:
    """A bits score rebuilds from its JSON (and a pickle) to an equal model with equal scores."""
    rows = np.array([[1.0, 0.375], [2.0, 0.25], [3.0, 0.3125]])
    cells = sorted(set(bits_cells(rows[:, 1], "grain").tolist()))
    model = BitsScore(1, "grain", cells, [1.0, -2.0, 0.5], 0.0, 2)
    rebuilt = score_model_from_json(model.to_json())
    assert rebuilt == model
    assert np.array_equal(rebuilt.score(rows), model.score(rows))
    assert pickle.loads(pickle.dumps(model)) == model
    assert model.score(np.array([[0.0, 7.0]])).tolist() == [0.0]  # an unseen cell: the default
    with pytest.raises(DataError, match="dimension 2"):
        model.score(rows[:, :1])


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"feature": "exponent"}, "feature must be one of"),
        ({"cells": [5, 3, 9]}, "must increase"),
        ({"cells": [True, 3, 9]}, "integers"),
        ({"cells": [1, 2, 1 << 18]}, "integers"),
        ({"scores": [1.0, float("nan"), 0.0]}, "finite"),
        ({"scores": [1.0, 2.0]}, "one score per cell"),
        ({"scores": [1.0, "x", 2.0]}, "numbers"),
        ({"column": 2}, "column must be in"),
        ({"column": 1.0}, "integer"),
        ({"default": True}, "default must be a number"),
        ({"cells": "1,2,3"}, "lists"),
    ],
)
def test_malformed_bits_records_are_record_errors(change: dict[str, Any], fragment: str) -> None:
    """Every malformed field of a stored bits score is a RecordError naming the problem."""
    entry = {**BitsScore(0, "grain", [1, 2, 3], [0.0, 1.0, 2.0], 0.0, 2).to_json(), **change}
    with pytest.raises(RecordError, match=fragment):
        score_model_from_json(entry)


def test_a_bits_record_lacking_a_field_is_a_record_error() -> None:
    """A stored bits score without its cells names the missing field."""
    entry = BitsScore(0, "grain", [1], [0.0], 0.0, 1).to_json()
    del entry["cells"]
    with pytest.raises(RecordError, match="'cells'"):
        score_model_from_json(entry)


def test_float_families_skip_integer_low_cardinality_and_identical_outputs() -> None:
    """No score for integers, for few distinct values, or for two draws of one law."""
    rng = np.random.default_rng(5)
    integers = rng.integers(0, 1000, size=(50_000, 1)).astype(np.float64)
    assert float_fitted("grain", integers, integers + 1.0) == []
    few = rng.choice([0.5, 1.25, 2.75], size=(50_000, 1))
    assert float_fitted("grain", few, few[::-1]) == []
    same_a, same_b = snapped(np.zeros(1), 50_000, rng), snapped(np.zeros(1), 50_000, rng)
    assert float_fitted("grain", same_a.reshape(-1, 1), same_b.reshape(-1, 1)) == []


def test_the_grain_family_scores_the_textbook_leak_apart() -> None:
    """On textbook Laplace, 0 vs 1, the chosen grain event has a development value above 4."""
    rng = np.random.default_rng(6)
    dev_a = textbook(np.zeros(1), 200_000, rng).reshape(-1, 1)
    dev_b = textbook(np.ones(1), 200_000, rng).reshape(-1, 1)
    (choice,) = choose_event(
        dev_a, dev_b, ["grain"], reserved_a=10**6, reserved_b=10**6,
        alpha_per_rate=rate_level(0.03), delta=0.0, seed=0,
    )
    assert isinstance(choice.model, BitsScore) and choice.label.startswith("grain[0]")
    assert choice.value > 4.0


def test_values_leaves_out_the_representation_families() -> None:
    """tests='values' names every family but grain and mantissa; 'certify' names them all."""
    assert resolve_families("certify") == FAMILIES
    assert resolve_families("values") == VALUE_FAMILIES
    assert set(FAMILIES) - set(VALUE_FAMILIES) == {"grain", "mantissa"}


def test_textbook_laplace_is_refuted_and_its_record_loads_the_bits_score(
    ledger: cf.Ledger, seed: int
) -> None:
    """End to end at 200,000 calls: the textbook mechanism is refuted at 0.1 by a stored bits event."""
    audit = cf.audit_mechanism(textbook, 0.0, 1.0, calls=200_000, ledger=ledger, seed=seed,
                               progress=False)
    assert audit.chosen.startswith(("grain", "mantissa"))
    assert audit.certificate.epsilon_lower > 3.0
    assert isinstance(cf.refute(cf.Claim(epsilon=0.1), audit.family), cf.Refuted)
    rebuilt = cf.FixedTest.from_json(audit.record.content["tests"][0])
    assert isinstance(rebuilt.model, BitsScore)


def test_snapped_laplace_stays_below_its_epsilon_with_every_family(
    ledger: cf.Ledger, seed: int
) -> None:
    """Noise on the grid 2**-32 leaves no trace in the bits: the bound stays at most 0.1."""
    audit = cf.audit_mechanism(snapped, 0.0, 1.0, calls=200_000, ledger=ledger, seed=seed,
                               progress=False)
    assert audit.certificate.epsilon_lower <= 0.1
