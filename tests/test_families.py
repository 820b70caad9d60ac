"""Tests of the candidate test families, the expected-bound criterion and FixedTest.select."""

from __future__ import annotations

import numpy as np
import pytest
from typeguard import suppress_type_checks

from certify import EmbeddingTable, Ledger, Pair, Protocol
from certify.errors import ParameterError
from certify.plan import ceiling
from certify.protocol import FixedTest, LinearScore
from certify.protocol.families import (
    BoundPlan,
    LinearDiscriminant,
    candidate_estimator,
    expected_bound,
    max_bound_cut,
    pooled_variances,
)


def _table(seed: int, n: int = 60, d: int = 20, shift: float = 1.5) -> EmbeddingTable:
    """Three identities in d dimensions; b and c differ from a by ``shift`` along axis 0."""
    rng = np.random.default_rng(seed)
    rows = [rng.standard_normal((n, d)) for _ in range(3)]
    rows[1][:, 0] += shift
    rows[2][:, 1] += shift
    labels = ["a"] * n + ["b"] * n + ["c"] * n
    return EmbeddingTable.from_arrays(labels, np.vstack(rows), normalize=False)


def test_expected_bound_prefers_fewer_errors_and_stays_below_ceiling() -> None:
    """The expected bound falls with development errors and never exceeds the zero-error ceiling."""
    e = expected_bound(np.array([0.0, 2.0, 10.0]), 50, np.array([0.0, 2.0, 10.0]), 50, 50, 50, 0.000625)
    assert e[0] > e[1] > e[2] >= 0.0
    assert e[0] <= ceiling(50, 40, 0.95) + 1e-12


def test_expected_bound_is_zero_for_chance_errors() -> None:
    """Half errors in both classes give (almost) no expected bound."""
    e = expected_bound(25.0, 50, 25.0, 50, 50, 50, 0.000625)
    # Only the posterior tail near p = 0.15 (Beta(25.5, 25.5)) can give a positive bound:
    # its weight is ~1e-5 here (measured 2.5e-5), so 1e-3 is far above it and far below e(0 errors).
    assert float(e[0]) < 1e-3


def test_expected_bound_rejects_bad_alpha() -> None:
    """An alpha_per_rate outside (0, 1) raises ParameterError naming the fix."""
    with pytest.raises(ParameterError, match="alpha_per_rate must be a number in"):
        expected_bound(0.0, 10, 0.0, 10, 10, 10, 1.5)


def test_max_bound_cut_separates_separable_scores() -> None:
    """On separable scores the cut lies between the classes."""
    cut, value = max_bound_cut(np.arange(10.0), np.arange(20.0, 30.0), 30, 30, 0.01)
    assert 9.0 < cut <= 20.0 and value > 0.0


def test_linear_discriminant_identity_matches_sklearn_mean_difference() -> None:
    """The identity covariance gives sklearn LDA(lsqr, shrinkage=1.0)'s direction."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 30)) * np.linspace(0.5, 2.0, 30)
    y = np.r_[np.zeros(40), np.ones(40)]
    X[y == 1] += 0.4
    a = LinearDiscriminant("identity").fit(X, y).coef_.ravel()
    b = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=1.0).fit(X, y).coef_.ravel()
    cos = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert cos > 1 - 1e-9  # same direction up to rounding


def test_linear_discriminant_ledoit_wolf_matches_sklearn_auto() -> None:
    """The Ledoit-Wolf option points where sklearn LDA(lsqr, shrinkage='auto') points."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    rng = np.random.default_rng(4)
    X = rng.standard_normal((100, 60)) * np.linspace(0.3, 3.0, 60)
    y = np.r_[np.zeros(50), np.ones(50)]
    X[y == 1] += 0.3
    a = LinearDiscriminant("ledoit_wolf").fit(X, y).coef_.ravel()
    b = LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(X, y).coef_.ravel()
    # sklearn shrinks each class separately and pools; ours pools first: close, not equal.
    assert a @ b / np.linalg.norm(a) / np.linalg.norm(b) > 0.99


def test_pooled_variances_exclude_pair() -> None:
    """Pooled variances use only the identities not excluded."""
    t = EmbeddingTable.from_arrays(["a", "a", "b", "b"], np.array([[1.0], [3.0], [1.0], [11.0]]),
                                   normalize=False)
    assert pooled_variances(t, exclude=("b",)).tolist() == [2.0]


def test_unknown_family_raises() -> None:
    """An unknown family name raises ParameterError listing the names."""
    with suppress_type_checks(), pytest.raises(ParameterError, match="name must be one of"):
        candidate_estimator("forest")  # type: ignore[arg-type]


def test_select_stores_linear_and_certifies_through_protocol(tmp_path: object) -> None:
    """Selection picks a family on development data; the test stores as coefficients and certifies."""
    table = _table(0)
    split = table.split(0.5, seed=1)
    pair = Pair("a", "b")
    plan = BoundPlan.for_pair(split.reserved, pair, family_size=1)
    test = FixedTest.select("certify", split.development, pair, plan=plan)
    assert isinstance(test.model, LinearScore)
    assert test.name.startswith("certify:")
    protocol = Protocol("families", confidence_level=0.95)
    protocol.register(test)
    family = protocol.seal(split.reserved, ledger=Ledger(f"{tmp_path}/l.ledger")).evaluate()
    # shift 1.5 along one axis, 30 reserved rows per class: power is high but not 1.
    assert family.certificates[0].epsilon_lower >= 0.0


def test_max_bound_threshold_requires_plan() -> None:
    """threshold='max_bound' without a plan raises ParameterError pointing to BoundPlan."""
    split = _table(1).split(0.5, seed=0)
    with pytest.raises(ParameterError, match="plan must be a BoundPlan"):
        FixedTest.fit(None, split.development, Pair("a", "b"), threshold="max_bound")


def test_max_bound_threshold_with_plan_fits() -> None:
    """threshold='max_bound' with a plan gives a finite threshold."""
    split = _table(2).split(0.5, seed=0)
    plan = BoundPlan(30, 30, 0.025)
    test = FixedTest.fit(candidate_estimator("mean_difference"), split.development, Pair("a", "b"),
                         threshold="max_bound", plan=plan)
    assert np.isfinite(test.threshold)


def test_select_prefers_informative_family_over_paper_on_anisotropic_noise() -> None:
    """With strongly unequal noise across coordinates a variance-aware family is chosen."""
    rng = np.random.default_rng(5)
    d, n = 40, 80
    scale = np.where(np.arange(d) < 20, 0.1, 3.0)
    blocks = [rng.standard_normal((n, d)) * scale for _ in range(3)]
    blocks[1][:, :20] += 0.08
    table = EmbeddingTable.from_arrays(["a"] * n + ["b"] * n + ["c"] * n, np.vstack(blocks),
                                       normalize=False)
    split = table.split(0.5, seed=0)
    plan = BoundPlan.for_pair(split.reserved, Pair("a", "b"), family_size=1)
    test = FixedTest.select(["mean_difference", "pooled_diagonal_lda"], split.development,
                            Pair("a", "b"), plan=plan)
    assert test.name == "certify:pooled_diagonal_lda"


def test_bound_plan_rejects_zero_rows() -> None:
    """A plan with zero reserved rows raises ParameterError."""
    with pytest.raises(ParameterError, match="reserved n of class 0 must be an integer >= 1"):
        BoundPlan(0, 5, 0.01)
